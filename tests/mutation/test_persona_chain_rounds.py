"""Chained persona_filter rounds (RealPref G.1) worked by hand: verdict rules at the tie, the funnel stages, open
records, refusals with their exact messages, and children found by parent or profile (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import pytest

from annotator.study_setup import create_study
from annotator.tasks.persona_filter.chain import chain_stages, children_of, keep_vote
from annotator.tasks.base import StudySpec
from storage.errors import PrefvalError
from storage.models import AnnotationIn, Item, ItemIn


def test_keep_vote_rules():
    def got(decisions, rule="majority"):
        o = keep_vote(decisions, rule)
        return o.state, o.reason, o.label
    assert got(["keep", "drop"]) == ("needs_adjudication", "1 keep, 1 drop: a tie (majority)", None)
    assert got(["keep", "keep", "drop", "drop"]) == ("needs_adjudication", "2 keep, 2 drop: a tie (majority)", None)
    assert got(["keep", "keep", "drop"]) == ("passed", "kept (majority: 2 keep, 1 drop)", "keep")
    assert got(["keep", "drop", "drop"]) == ("failed", "dropped (majority: 1 keep, 2 drop)", "drop")
    assert got(["keep", "keep", "drop"], "unanimous") == ("failed", "dropped (unanimous: 2 keep, 1 drop)", "drop")
    assert got(["keep", "keep"], "unanimous") == ("passed", "kept (unanimous: 2 keep, 0 drop)", "keep")
    assert got(["keep", "drop"], "unanimous") == ("failed", "dropped (unanimous: 1 keep, 1 drop)", "drop")
    assert got(["keep"])[0] == "passed" and got(["drop"])[0] == "failed"
    with pytest.raises(ValueError, match=r"^unknown keep rule 'most' \(use majority or unanimous\)$"):
        keep_vote(["keep"], "most")


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
    # quota 2: p0 kept (2 keep); p1 a tie (1 keep, 1 drop) waiting for adjudication; p2 one answer of 2; p3 none
    with pytest.raises(PrefvalError) as info:
        chain_stages(store, "r1", False)
    assert str(info.value) == ("--from-study r1: 3 of 4 records are not decided yet: 1 have no answer yet, 1 have "
                               "fewer answers than their quota, 1 wait for adjudication (`prefval adjudicate r1`) "
                               "(finish that round, or pass --option allow_open=1 to treat them as not kept)")
    stages, kept, study = chain_stages(store, "r1", True)
    assert study.name == "r1" and [k.external_id for k in kept] == ["p0"]
    assert stages == [{"study": "r1", "records": 4, "decided": 1, "kept": 1, "rule": "majority", "mode": None}]
    with pytest.raises(PrefvalError) as info:
        chain_stages(store, "none", True)
    assert str(info.value).startswith("no study named 'none'")
    r2 = create_study(store, StudySpec(name="r2", task="persona_filter", datasets=[], from_study="r1",
                                       options={"allow_open": "1"}))
    assert r2.settings["chain"] == stages and r2.settings["chain_mode"] == "same"
    _answer(store, r2, {"a": {"p0": "drop"}})
    with pytest.raises(PrefvalError) as info:
        chain_stages(store, "r2", False)
    assert str(info.value) == "--from-study r2: no record was kept (rule majority)"
    store.import_items("mc", "jsonl", [ItemIn(external_id="m", kind="mcq", payload={"question": "q",
                                                                                   "options": ["a", "b"]})])
    create_study(store, StudySpec(name="m1", task="mcq", datasets=["mc"]))
    with pytest.raises(PrefvalError) as info:
        chain_stages(store, "m1", True)
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
