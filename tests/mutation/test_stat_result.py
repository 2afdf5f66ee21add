"""reports/stats/result.py: StatResult normalises numpy and non-finite values and serialises to JSON, worked by hand
(CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import math

import numpy as np

from reports.stats.result import StatResult, clean_float


def test_stat_result_normalises_and_serialises():
    r = StatResult("m", np.float64(0.5), float("nan"), math.inf, np.int64(3), 2.0, "n", p_value=np.float32(0.25))
    assert (r.value, r.ci_low, r.ci_high, r.n_items, r.n_raters, r.p_value) == (0.5, None, None, 3, 2, 0.25)
    assert type(r.value) is float and type(r.n_items) is int and r.defined
    assert r.to_json_dict() == {"metric": "m", "value": 0.5, "ci_low": None, "ci_high": None, "n_items": 3,
                                "n_raters": 2, "note": "n", "p_value": 0.25}
    bare = StatResult("m", None, None, None, 0, 0)
    assert not bare.defined and "p_value" not in bare.to_json_dict() and bare.note == "" and bare.extra == {}
    assert [clean_float(x) for x in (None, "1.5", -math.inf, 2)] == [None, 1.5, None, 2.0]
