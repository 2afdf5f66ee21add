"""judge_validation --from-study GOLD: gold labels taken from a gold_label study by external id, and each refusal
with its exact message (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import pytest

from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from storage.errors import PrefvalError
from storage.models import AnnotationIn, ItemIn


def _gold_study(store, votes):
    """A gold_label study over items x0.. with the given labels of three annotators per item."""
    store.import_items("g", "jsonl", [ItemIn(external_id=f"x{i}", kind="gold_candidate", payload={
        "recipient": "r", "task": "t", "attribute": f"a{i}"}) for i in range(len(votes))])
    st = create_study(store, StudySpec(name="gold", task="gold_label", datasets=["g"], options={"context_threshold": 0}))
    for u in store.units(st.id):
        i = int(store.get_item(u.item_id).external_id[1:])
        for who, label in zip(("a", "b", "c"), votes[i]):
            store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, status="answered",
                                              annotator_id=store.ensure_annotator(who).id, answer={"label": label}))


def _judged(store, ids, name="jv"):
    store.import_items(name, "jsonl", [ItemIn(external_id=e, kind="gold_candidate", payload={
        "recipient": "r", "task": "t", "attribute": "a", "metadata": {"response": "resp"}}) for e in ids])


def _err(store, spec) -> str:
    with pytest.raises(PrefvalError) as info:
        create_study(store, spec)
    return str(info.value)


def test_gold_labels_by_external_id(store):
    _gold_study(store, [(1, 1, 1), (0, 0, 0), (1, 0, 1)])  # x0 gold 1, x1 gold 0, x2 no gold
    _judged(store, ["x0", "x1", "x2", "y9"])
    st = create_study(store, StudySpec(name="j", task="judge_validation", datasets=["jv"], from_study="gold"))
    assert st.settings["from_study"] == "gold"
    extra = {store.get_item(u.item_id).external_id: u.extra for u in store.units(st.id)}
    assert extra == {"x0": {"gold": 1}, "x1": {"gold": 0}, "x2": {"gold": None}, "y9": {"gold": None}}
    plain = create_study(store, StudySpec(name="p", task="judge_validation", datasets=["jv"]))
    assert [u.extra for u in store.units(plain.id)] == [{}] * 4 and plain.settings["from_study"] is None


def test_refusals(store):
    _judged(store, ["x0"])
    store.import_items("m", "jsonl", [ItemIn(external_id="m", kind="mcq", payload={"question": "q",
                                                                                  "options": ["a", "b"]})])
    create_study(store, StudySpec(name="mc", task="mcq", datasets=["m"]))
    assert _err(store, StudySpec(name="j", task="judge_validation", datasets=["jv"], from_study="mc")) == \
        "--from-study 'mc' is not a gold_label study"
    _gold_study(store, [(1, 1, 1), (0, 1, 1)])
    _judged(store, ["z1", "z2"], name="other")
    assert _err(store, StudySpec(name="j", task="judge_validation", datasets=["other"], from_study="gold")) == (
        "--from-study 'gold': none of the 2 items of other has the external id of one of the 1 gold-labelled items "
        "of 'gold' (e.g. 'x0'); import the judged items with the same ids as the gold_label study's items, or leave "
        "out --from-study")


def test_a_gold_study_without_gold_labels_is_refused(store):
    _gold_study(store, [(1, 0, 1)])  # its only item is not unanimous: no gold label
    _judged(store, ["x0"])
    assert _err(store, StudySpec(name="j", task="judge_validation", datasets=["jv"], from_study="gold")) == (
        "--from-study 'gold': 'gold' has no gold label yet (no unanimous or adjudicated item); import the judged "
        "items with the same ids as the gold_label study's items, or leave out --from-study")


def test_rates_use_the_gold_study_labels_not_the_candidate_labels(store):
    from annotator.tasks import get_task
    from reports.study_data import load_study_data

    _gold_study(store, [(1, 1, 1), (0, 0, 0)])  # x0 gold 1, x1 gold 0
    # the judged items carry the opposite candidate labels: only the gold study's labels give these rates
    store.import_items("jv", "jsonl", [ItemIn(external_id=e, kind="gold_candidate", payload={
        "recipient": "r", "task": "t", "attribute": "a", "candidate_label": cand, "metadata": {"response": "resp"}})
        for e, cand in (("x0", False), ("x1", True))])
    st = create_study(store, StudySpec(name="j", task="judge_validation", datasets=["jv"], from_study="gold"))
    hana = store.ensure_annotator("hana")
    for u in store.units(st.id):  # hana: reflected on x0, not on x1
        z = store.get_item(u.item_id).external_id == "x0"
        store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, status="answered",
                                          annotator_id=hana.id, answer={"reflected": z}))
    fs = get_task("judge_validation").figures(load_study_data(store, "j"))
    # g from the study: x0 g=1 z=1, x1 g=0 z=0: MR = 0/1, AAR = 1/1 (the candidate labels would give 1 and 0)
    assert (fs.figure("mr:hana").value, fs.figure("aar:hana").value, fs.figure("mr:hana").n) == (0.0, 1.0, 2)
