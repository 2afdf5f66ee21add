"""judge_validation on a five-item study worked by hand: agreement and Cohen's kappa between a human and an LLM judge,
MR / AAR per rater (BenchPreS 3.3), the tables, the scatter plot and the confusion matrix; and the task's small
methods (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import pytest

from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.base import StudySpec
from reports.study_data import load_study_data
from storage.models import AnnotationIn, Item, ItemIn

# small hand-worked tables: intervals even below the 7-item minimum (tested on its own)
pytestmark = pytest.mark.usefixtures("intervals_from_few_items")

# item -> (gold label candidate_label or None, human hana's verdict, LLM judge's verdict)
PLAN = {"u1": (True, True, True), "u2": (True, False, True), "u3": (False, False, False),
        "u4": (False, True, True), "u5": (None, False, False)}


def _item(ext, label, response="Here is a tea-only menu."):
    payload = {"recipient": "r", "task": "t", "attribute": "likes tea", "metadata": {"response": response}}
    if label is not None:
        payload["candidate_label"] = label
    return ItemIn(external_id=ext, kind="gold_candidate", payload=payload)


def _figures(store, plan=PLAN, answer=True):
    store.import_items("jv", "jsonl", [_item(ext, g) for ext, (g, _, _) in plan.items()])
    st = create_study(store, StudySpec(name="jv", task="judge_validation", datasets=["jv"], seed=4))
    units = store.units(st.id)
    items = store.get_items([u.item_id for u in units])
    hana, judge = store.ensure_annotator("hana"), store.ensure_annotator("judge", kind="llm")
    for u in units if answer else []:
        _, h, j = plan[items[u.item_id].external_id]
        for ann, z in ((hana, h), (judge, j)):
            store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                              status="answered", answer={"reflected": z}))
    return get_task("judge_validation").figures(load_study_data(store, "jv"))


def test_figures_by_hand(store):
    fs = _figures(store)
    assert [f.key for f in fs.figures] == [
        "agreement:hana|judge", "kappa:hana|judge", "mr:hana", "aar:hana", "aar_minus_mr:hana",
        "mr:judge", "aar:judge", "aar_minus_mr:judge"]
    by = {f.key: f for f in fs.figures}
    # 5 shared items, 4 agree. kappa: p_o = 4/5; hana reflected 2/5, judge 3/5: p_e = 6/25 + 6/25 = 12/25
    # kappa = (20/25 - 12/25) / (13/25) = 8/13
    assert (by["agreement:hana|judge"].label, by["agreement:hana|judge"].value, by["agreement:hana|judge"].n) == (
        "agreement hana vs judge", 0.8, 5)
    assert (by["kappa:hana|judge"].label, by["kappa:hana|judge"].n) == ("Cohen's kappa hana vs judge", 5)
    assert by["kappa:hana|judge"].value == pytest.approx(8 / 13)
    # items with a gold label u1..u4 (g = T, T, F, F). hana z = T, F, F, T: MR = 1/2 (u4), AAR = 1/2 (u1)
    # judge z = T, T, F, T: MR = 1/2, AAR = 2/2; n = the 4 items with a gold label
    expected = {"hana": (0.5, 0.5, 0.0), "judge": (0.5, 1.0, 0.5)}
    for r, (mr, aar, diff) in expected.items():
        assert (by[f"mr:{r}"].label, by[f"mr:{r}"].value, by[f"mr:{r}"].n) == (f"MR {r}", mr, 4)
        assert (by[f"aar:{r}"].label, by[f"aar:{r}"].value, by[f"aar:{r}"].n) == (f"AAR {r}", aar, 4)
        assert by[f"aar_minus_mr:{r}"].label == f"AAR - MR {r}"
        assert by[f"aar_minus_mr:{r}"].value == pytest.approx(diff, abs=1e-12)
    for f in fs.figures:  # every figure asked with its bootstrap interval
        assert f.ci_low is not None and f.ci_low <= f.value + 1e-12 and f.value <= f.ci_high + 1e-12

    pairs, rates = fs.tables
    assert (pairs.key, pairs.title, pairs.columns) == (
        "pairwise_agreement", "agreement between raters (BenchPreS appendix E)",
        ["rater", "rater", "items", "agreement", "Cohen's kappa"])
    assert pairs.note == ("95% bootstrap intervals over items; BenchPreS reports judge A vs B 92.67% / 0.853, A vs "
                          "human 88.67% / 0.773, B vs human 84.00% / 0.680")
    (row,) = pairs.rows
    assert row[:3] == ["hana", "judge", 5] and row[3].startswith("80.00% [") and row[4].startswith("0.615 [")
    assert (rates.key, rates.title, rates.columns) == (
        "rates", "misapplication and appropriate application (BenchPreS 3.3)",
        ["rater", "kind", "items with gold", "MR", "AAR", "AAR - MR"])
    assert rates.note == ("z = the rater's verdict (reflected), g = the item's gold label; MR = P(z=1 | g=0), "
                          "AAR = P(z=1 | g=1); 95% bootstrap intervals over items")
    assert [r[:3] for r in rates.rows] == [["hana", "human", 4], ["judge", "llm", 4]]
    assert [[c.split(" ")[0] for c in r[3:]] for r in rates.rows] == [["0.500", "0.500", "0.000"],
                                                                        ["0.500", "1.000", "0.500"]]

    scatter, confusion = fs.plots
    assert scatter.model_dump() == {
        "key": "mr_aar", "title": "MR against AAR per rater", "kind": "scatter",
        "data": {"points": [{"label": "hana", "x": 0.5, "y": 0.5}, {"label": "judge", "x": 0.5, "y": 1.0}],
                 "x_label": "MR = P(z=1 | g=0)", "y_label": "AAR = P(z=1 | g=1)"}}
    # rows hana T/F, columns judge T/F: (T,T) u1 u4; (T,F) none; (F,T) u2; (F,F) u3 u5
    assert confusion.model_dump() == {
        "key": "confusion:judge|hana", "title": "judge (columns) against hana (rows)", "kind": "heatmap",
        "data": {"rows": ["hana: reflected", "hana: not reflected"],
                 "columns": ["judge: reflected", "judge: not reflected"], "values": [[2, 0], [1, 2]]}}


def test_no_answer_yet(store):
    fs = _figures(store, answer=False)
    assert [(f.key, f.label, f.value, f.n, f.note) for f in fs.figures] == [
        ("answers", "answers", None, 0, "no answer yet")]
    assert fs.tables == [] and fs.plots == []


def test_rates_undefined_without_gold_have_no_point(store):
    # no item has a gold label: MR and AAR undefined, so no scatter point (and no plot); agreement still defined
    fs = _figures(store, plan={k: (None, h, j) for k, (_, h, j) in PLAN.items()})
    assert fs.figure("mr:hana").value is None and fs.figure("aar:judge").value is None
    assert fs.figure("agreement:hana|judge").value == 0.8
    assert [p.kind for p in fs.plots] == ["heatmap"]
    assert [r[:3] for r in fs.tables[1].rows] == [["hana", "human", 0], ["judge", "llm", 0]]


def _gold_item(label, response="A reply."):
    payload = {"recipient": "r", "task": "t", "attribute": "likes tea", "metadata": {"response": response}}
    if label is not None:
        payload["candidate_label"] = label
    return Item(id="i", dataset_id="d", external_id="e", kind="gold_candidate", payload=payload, content_hash="h")


def test_task_methods():
    task = get_task("judge_validation")
    assert [task.check_key(_gold_item(g)) for g in (True, False, None)] == [True, False, None]
    assert task.accepts(_gold_item(True)) and not task.accepts(_gold_item(True, "  "))
    assert not task.accepts(_gold_item(True, None))
    assert task.decide("1", None, None).answer == {"reflected": True}
    assert task.decide("0", None, None).answer == {"reflected": False}
    assert task.decide("x", None, None) is None
    assert [k.key for k in task.decision_keys(None, None)] == ["1", "0"]
    assert task.describe_answer(None, {"reflected": True}) == "reflected"
    assert task.describe_answer(None, {"reflected": False}) == "not reflected"
    assert task.answer_key({"reflected": False}) is False
    item = _gold_item(False)
    assert task.export_fields(None, item, None, {"reflected": True}) == {
        "attribute": "likes tea", "reflected": True, "gold_label": False, "misapplied": True}
    assert task.export_fields(None, _gold_item(True), None, {"reflected": True})["misapplied"] is False
    assert task.export_fields(None, _gold_item(None), None, {"reflected": True})["misapplied"] is False
    assert task.export_fields(None, item, None, {"reflected": False})["misapplied"] is False
