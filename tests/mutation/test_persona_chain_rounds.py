"""Chained persona_filter rounds (RealPref G.1) worked by hand: verdict rules at the tie, the funnel stages, open
records, refusals with their exact messages, and children found by parent or profile (README, "Mutation testing")."""
from __future__ import annotations

import pytest

from annotator.study_setup import create_study
from annotator.tasks.persona_filter.chain import chain_stages, children_of, verdict
from annotator.tasks.base import StudySpec
from storage.errors import PrefvalError
from storage.models import AnnotationIn, Item, ItemIn


def test_verdict_rules():
    assert verdict([]) is None and verdict([], "unanimous") is None
    assert verdict(["keep", "drop"]) == "drop"  # a tie is not a keep
    assert verdict(["keep", "keep", "drop"]) == "keep"
    assert verdict(["keep", "keep", "drop"], "unanimous") == "drop"
    assert verdict(["keep", "keep"], "unanimous") == "keep"
    assert verdict(["keep"]) == "keep" and verdict(["drop"]) == "drop"
    with pytest.raises(ValueError, match=r"^unknown keep rule 'most' \(use majority or unanimous\)$"):
        verdict(["keep"], "most")


def _answer(store, study, plan):
    units = store.units(study.id)
    items = store.get_items([u.item_id for u in units])
    for who, decisions in plan.items():
        ann = store.ensure_annotator(who)
        for u in units:
            d = decisions.get(items[u.item_id].external_id)
            if d:
                store.add_annotation(AnnotationIn(study_id=study.id, unit_id=u.id, item_id=u.item_id,
                                                  annotator_id=ann.id, status="answered",
                                                  answer={"decision": d, "reasons": []}))


def test_stages_open_records_and_refusals(store):
    store.import_items("ps", "jsonl", [ItemIn(external_id=f"p{i}", kind="persona_record", payload={"text": str(i)})
                                       for i in range(4)])
    r1 = create_study(store, StudySpec(name="r1", task="persona_filter", datasets=["ps"], annotators_per_item=2))
    _answer(store, r1, {"a": {"p0": "keep", "p1": "keep", "p2": "drop"}, "b": {"p0": "keep", "p1": "drop"}})
    # p3 has no answer: open
    with pytest.raises(PrefvalError) as info:
        chain_stages(store, "r1", "majority", False)
    assert str(info.value) == ("--from-study r1: 1 of 4 records have no answer yet (finish that round, or pass "
                               "--option allow_open=1 to treat them as not kept)")
    stages, kept, study = chain_stages(store, "r1", "majority", True)
    assert study.name == "r1" and [k.external_id for k in kept] == ["p0"]  # p1 is a tie
    assert stages == [{"study": "r1", "records": 4, "decided": 3, "kept": 1, "rule": "majority", "mode": None}]
    with pytest.raises(PrefvalError) as info:
        chain_stages(store, "none", "majority", True)
    assert str(info.value).startswith("no study named 'none'")
    r2 = create_study(store, StudySpec(name="r2", task="persona_filter", datasets=[], from_study="r1",
                                       options={"allow_open": "1"}))
    assert r2.settings["chain"] == stages and r2.settings["chain_mode"] == "same"
    _answer(store, r2, {"a": {"p0": "drop"}})
    with pytest.raises(PrefvalError) as info:
        chain_stages(store, "r2", "majority", False)
    assert str(info.value) == "--from-study r2: no record was kept (rule majority)"
    store.import_items("mc", "jsonl", [ItemIn(external_id="m", kind="mcq", payload={"question": "q",
                                                                                   "options": ["a", "b"]})])
    create_study(store, StudySpec(name="m1", task="mcq", datasets=["mc"]))
    with pytest.raises(PrefvalError) as info:
        chain_stages(store, "m1", "majority", True)
    assert str(info.value) == "--from-study m1: a mcq study, not a persona_filter study"


def _rec(ext, **payload):
    return Item(id=ext, dataset_id="d", external_id=ext, kind="persona_record", payload={"text": "t", **payload},
                content_hash="h")


def test_children_by_parent_or_profile():
    kept = [_rec("u1:profile"), _rec("u2:profile")]
    candidates = [_rec("e1", parent_external_id="u2:profile"), _rec("e2", profile="u1:profile"),
                  _rec("e3", parent_external_id="u9:profile", profile="u1:profile"),  # the parent id decides
                  _rec("e4", parent_external_id="", profile="u2:profile"), _rec("e5")]
    assert [(c.external_id, p.external_id) for c, p in children_of(candidates, kept)] == [
        ("e1", "u2:profile"), ("e2", "u1:profile"), ("e4", "u2:profile")]
