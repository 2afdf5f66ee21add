"""Cohen's kappa (Cohen 1960, 1968; reports/stats/kappa.py) on small tables worked by hand: every field of the
result, weighted kappa, the undefined cases and the interval's defaults (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import pytest

from reports.stats.result import StatResult


# ---- Cohen's kappa (Cohen 1960, 1968) --------------------------------------------------------------------
def test_cohen_kappa_every_field_by_hand():
    from reports.stats import cohen_kappa

    # pairs (a,a) (a,b) (b,b) (b,b), one item dropped; table [[1,1],[0,2]]: p_o = 3/4; rater 1 a: 1/2, rater 2
    # a: 1/4 -> p_e = 1/2 * 1/4 + 1/2 * 3/4 = 1/2; kappa = (3/4 - 1/2) / (1/2) = 1/2
    r = cohen_kappa([["a", "a"], ["a", "b"], ["b", "b"], ["b", "b"], [None, "a"]])
    assert r == StatResult("cohen_kappa", 0.5, None, None, 4, 2,
                           "Cohen's kappa (Cohen 1960) over 2 observed categories ['a', 'b']; 1 items missing "
                           "a rating dropped",
                           extra={"n_items_total": 5, "n_items_dropped_missing": 1, "table": [[1, 1], [0, 2]],
                                  "categories": ["a", "b"]})


def test_weighted_kappa_by_hand():
    from reports.stats import cohen_kappa

    data = [[1, 2], [2, 2], [3, 3], [1, 1]]
    # rater 1 margins (1/2, 1/4, 1/4), rater 2 (1/4, 1/2, 1/4).
    # linear w = 1 - |k-l|/2: p_o = (1 + .5 + 1 + 1)/4 = .875, p_e = .5625 -> .3125/.4375 = 5/7
    lin = cohen_kappa(data, weights="linear")
    assert lin.metric == "cohen_kappa_linear" and lin.value == pytest.approx(5 / 7)
    assert lin.note == "Cohen's kappa (Cohen 1968, linear weights by value) over 3 observed categories [1, 2, 3]"
    assert lin.extra["table"] == [[1, 1, 0], [0, 1, 0], [0, 0, 1]] and lin.n_items == 4
    # quadratic w = 1 - (|k-l|/2)^2: p_o = .9375, p_e = .6875 -> .25/.3125 = 0.8
    quad = cohen_kappa(data, weights="quadratic")
    assert quad.metric == "cohen_kappa_quadratic" and quad.value == pytest.approx(0.8)
    # an explicit agreement-weight matrix (identity = unweighted): named cohen_kappa_weighted
    import numpy as np

    ident = cohen_kappa(data, weights=np.eye(3))
    plain = cohen_kappa(data)
    # unweighted: p_o = 3/4, p_e = 1/2*1/4 + 1/4*1/2 + 1/4*1/4 = 5/16 -> (12/16 - 5/16) / (11/16) = 7/11
    assert plain.value == pytest.approx(7 / 11) and ident.value == pytest.approx(7 / 11)
    assert ident.metric == "cohen_kappa_weighted"


def test_cohen_kappa_undefined_cases_by_hand():
    from reports.stats import cohen_kappa

    assert cohen_kappa([["a"], ["b"]]) == StatResult(
        "cohen_kappa", None, None, None, 0, 1, "undefined: only one rater; Cohen's kappa needs two")
    with pytest.raises(ValueError, match=r"^Cohen's kappa needs exactly 2 rater columns, got 3; use fleiss_kappa"):
        cohen_kappa([["a", "b", "a"]])
    one = cohen_kappa([["a", None], ["b", None]])
    assert one == StatResult("cohen_kappa", None, None, None, 0, 1,
                             "undefined: only one rater gave ratings; Cohen's kappa needs two",
                             extra={"n_items_total": 2, "n_items_dropped_missing": 2})
    apart = cohen_kappa([["a", None], [None, "b"]])
    assert (apart.value, apart.n_items, apart.n_raters) == (None, 0, 2)
    assert apart.note == "undefined: no item was rated by both raters (no overlap)"
    single = cohen_kappa([["a", "a"], ["b", None]])
    assert (single.value, single.n_items, single.note) == (
        None, 1, "undefined: fewer than 2 items were rated by both raters")
    same = cohen_kappa([["a", "a"], ["a", "a"]])
    assert same.value is None and same.n_items == 2 and same.extra["table"] == [[2]]
    assert same.note == ("undefined: chance agreement is 1 (both raters put every item in the same single "
                         "category 'a'), so kappa is 0/0")


def test_cohen_kappa_interval_defaults():
    from reports.stats import cohen_kappa

    data = [["a", "a"], ["a", "b"], ["b", "b"], ["b", "b"], ["a", "a"], ["b", "a"], ["a", "a"], ["b", "b"]]
    assert cohen_kappa(data).ci_low is None
    boot = cohen_kappa(data, ci=True)
    assert boot == cohen_kappa(data, ci=True, n_boot=1000, seed=0)
    assert boot.ci_low < boot.value < boot.ci_high
