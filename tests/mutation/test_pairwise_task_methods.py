"""The pairwise task: study options (exact refusals), pairing by id / at random / from a file, and the keys that
store the winner in the pair's own terms whatever side it was shown on (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import pytest

from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.base import StudySpec, UnitView
from annotator.tasks.pairwise.task import outcome_for_a, pairing
from storage.errors import PrefvalError
from storage.models import Item, ItemIn

TASK = get_task("pairwise")


def _records(store, name, ids):
    store.import_items(name, "jsonl", [ItemIn(external_id=i, kind="conversation_record",
                                              payload={"preference": f"{name} {i}"})
                                       for i in ids])


def _pairs(store, st):
    units = store.units(st.id)
    items = store.get_items([u.item_id for u in units] + [u.item_b_id for u in units])
    return [(items[u.item_id].external_id, items[u.item_b_id].external_id, u.extra["paired_by"]) for u in units]


def test_pairing_by_shared_ids_random_and_sample(store):
    _records(store, "A", ["x", "y", "z", "w"])
    _records(store, "B", ["y", "x", "q"])
    st = create_study(store, StudySpec(name="byid", task="pairwise", datasets=["A", "B"]))
    assert st.settings["options"]["pairing"] == "id"
    assert (st.settings["dataset_a"], st.settings["dataset_b"], st.settings["pairs_file"]) == ("A", "B", None)
    assert _pairs(store, st) == [("x", "x", "id"), ("y", "y", "id")]  # A's order; unshared ids left out
    rnd = create_study(store, StudySpec(name="rnd", task="pairwise", datasets=["A", "B"], seed=3,
                                        options={"pairing": " Random "}))
    got = _pairs(store, rnd)
    assert len(got) == 3 and {p[2] for p in got} == {"random"}  # min(4, 3) pairs
    assert len({a for a, _, _ in got}) == 3 and sorted(b for _, b, _ in got) == ["q", "x", "y"]
    again = create_study(store, StudySpec(name="rnd2", task="pairwise", datasets=["A", "B"], seed=3,
                                          options={"pairing": "random"}))
    assert _pairs(store, again) == got
    two = create_study(store, StudySpec(name="s", task="pairwise", datasets=["A", "B"], sample=1))
    assert _pairs(store, two) in ([("x", "x", "id")], [("y", "y", "id")])
    assert pairing(StudySpec(name="n", task="pairwise", datasets=["A", "B"])) == "random"


@pytest.mark.parametrize("spec, message", [
    (dict(datasets=["A"]), "task pairwise needs two datasets (--dataset A --dataset B), got 1"),
    (dict(datasets=["A", "A"]), "task pairwise needs two different datasets"),
    (dict(options={"pairing": "Best"}), "--option pairing=best: expected id or random"),
    (dict(datasets=["A", "C"], options={"pairing": "id"}), "--option pairing=id: datasets 'A' and 'C' share no ids"),
    (dict(datasets=["A", "P"]), "dataset 'P' has no conversation_record items for a pairwise study"),
    (dict(sample=0), "--sample must be positive"),
])
def test_refused_options(store, spec, message):
    _records(store, "A", ["x", "y"])
    _records(store, "B", ["x"])
    _records(store, "C", ["k"])
    store.import_items("P", "jsonl", [ItemIn(external_id="x", kind="persona_record", payload={"text": "t"})])
    with pytest.raises(PrefvalError) as info:
        create_study(store, StudySpec(**{"name": "pw", "task": "pairwise", "datasets": ["A", "B"], **spec}))
    assert str(info.value) == message


def _view(order):
    return UnitView(unit=None, item=None, item_b=None, assignment=None, order=order, current=None, settings={})


def test_keys_store_the_winner_in_the_pairs_terms():
    assert [(k.key, k.label) for k in TASK.decision_keys(_view([0, 1]), None)] == [
        ("1", "left is better"), ("2", "right is better"), ("t", "tie")]
    assert TASK.shuffle_size(None, None, None) == 2
    # B shown on the left
    swapped = _view([1, 0])
    assert TASK.decide("1", swapped, None).answer == {"winner": "B", "shown_left": "B", "pressed": "left"}
    assert TASK.decide("2", swapped, None).answer == {"winner": "A", "shown_left": "B", "pressed": "right"}
    assert TASK.decide("t", swapped, None).answer == {"winner": "tie", "shown_left": "B", "pressed": "tie"}
    straight = _view([0, 1])
    assert TASK.decide("1", straight, None).answer == {"winner": "A", "shown_left": "A", "pressed": "left"}
    assert TASK.decide("x", straight, None) is None and TASK.decide("3", straight, None) is None
    assert TASK.describe_answer(swapped, {"winner": "A"}) == "right is better"
    assert TASK.describe_answer(straight, {"winner": "A"}) == "left is better"
    assert TASK.describe_answer(straight, {"winner": "tie"}) == "tie"
    assert TASK.answer_key({"winner": "B", "pressed": "left"}) == "B"


def test_export_and_outcome():
    assert [outcome_for_a(w) for w in ("A", "B", "tie", None, "x")] == ["win", "loss", "tie", None, None]
    a = Item(id="a", dataset_id="d", dataset_name="DA", external_id="a1", kind="conversation_record",
             payload={"preference": "p"}, content_hash="h")
    b = Item(id="b", dataset_id="e", dataset_name="DB", external_id="b1", kind="conversation_record",
             payload={"preference": "p"}, content_hash="h")
    assert TASK.export_fields(None, a, b, {"winner": "B"}) == {
        "a_external_id": "a1", "a_dataset": "DA", "b_external_id": "b1", "b_dataset": "DB", "outcome_for_a": "loss"}
    assert TASK.export_fields(None, a, None, {}) == {
        "a_external_id": "a1", "a_dataset": "DA", "b_external_id": None, "b_dataset": None, "outcome_for_a": None}
