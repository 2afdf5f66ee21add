"""Ids, canonical JSON, text files and StatResult normalisation worked by hand (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import hashlib
import math
import uuid

import numpy as np

from reports.stats.result import StatResult, clean_float
from storage.models import PREFVAL_NAMESPACE, canonical_json, content_hash, derived_id, new_id
from storage.payloads import letter
from storage.textfile import csv_rows, read_text


def test_ids_and_canonical_json():
    assert derived_id("item", "ds", "q1") == str(uuid.uuid5(PREFVAL_NAMESPACE, "item\x1fds\x1fq1"))
    assert derived_id("a", "bc") != derived_id("ab", "c")
    assert new_id() != new_id() and uuid.UUID(new_id()).version == 4
    assert canonical_json({"b": [1, "é"], "a": None}) == '{"a":null,"b":[1,"é"]}'
    assert content_hash({"b": 1, "a": 2}) == hashlib.sha256(b'{"a":2,"b":1}').hexdigest()
    assert [letter(i) for i in (0, 1, 4, 25)] == ["A", "B", "E", "Z"]


def test_text_files_read_alike(tmp_path):
    p = tmp_path / "t.csv"
    p.write_bytes(b'\xef\xbb\xbfa,b\r\n"x\r\ny",2\r\n')
    assert read_text(p) == 'a,b\n"x\ny",2\n'
    assert csv_rows(p) == [["a", "b"], ["x\ny", "2"]]
    mac = tmp_path / "m.csv"
    mac.write_bytes(b"a,b\r1,2\r")
    assert csv_rows(mac) == [["a", "b"], ["1", "2"]]


def test_stat_result_normalises_and_serialises():
    r = StatResult("m", np.float64(0.5), float("nan"), math.inf, np.int64(3), 2.0, "n", p_value=np.float32(0.25))
    assert (r.value, r.ci_low, r.ci_high, r.n_items, r.n_raters, r.p_value) == (0.5, None, None, 3, 2, 0.25)
    assert type(r.value) is float and type(r.n_items) is int and r.defined
    assert r.to_json_dict() == {"metric": "m", "value": 0.5, "ci_low": None, "ci_high": None, "n_items": 3,
                                "n_raters": 2, "note": "n", "p_value": 0.25}
    bare = StatResult("m", None, None, None, 0, 0)
    assert not bare.defined and "p_value" not in bare.to_json_dict() and bare.note == "" and bare.extra == {}
    assert [clean_float(x) for x in (None, "1.5", -math.inf, 2)] == [None, 1.5, None, 2.0]
