"""Item-quality figures (PersonaMem appendix A) of a four-item study worked by hand: the majority share per
dimension (ties left out), Gwet's AC1 and Fleiss' kappa on True/False, the table and the plot
(CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import pytest

from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.base import StudySpec
from reports.study_data import load_study_data
from storage.models import AnnotationIn
from tests.mutation.mcq_plan import mcq_items

# small hand-worked tables: intervals even below the 7-item minimum (tested on its own)
pytestmark = pytest.mark.usefixtures("intervals_from_few_items")

T, F = True, False
# item -> annotator -> labels on dimensions a, b (nobody labels c)
LABELS = {
    "m0": {"h1": (T, T), "h2": (T, F), "h3": (T, T)},
    "m1": {"h1": (T, F), "h2": (F, F)},
    "m2": {"h1": (F, T), "h2": (F, T)},
    "m3": {"h1": (T, F), "h2": (T, F)},
}
BOOT = "; 95% percentile bootstrap over items, 1000 resamples, seed 1"


def test_every_figure_table_and_plot_by_hand(store):
    store.import_items("ds", "jsonl", mcq_items({k: (0, []) for k in LABELS}))
    st = create_study(store, StudySpec(name="iq", task="item_quality", datasets=["ds"], seed=1,
                                       dimensions=["a", "b", "c"]))
    units = store.units(st.id)
    ext = store.get_items([u.item_id for u in units])
    judge = store.ensure_annotator("judge", kind="llm")
    for u in units:
        for who, (a, b) in LABELS[ext[u.item_id].external_id].items():
            ann = store.ensure_annotator(who)
            store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                              status="answered", answer={"labels": {"a": a, "b": b}}))
        store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=judge.id,
                                          status="answered", answer={"labels": {"a": F, "b": F, "c": F}}))
    fs = get_task("item_quality").figures(load_study_data(store, "iq"))
    assert [f.key for f in fs.figures] == ["share_true_a", "ac1_a", "fleiss_a", "share_true_b", "ac1_b", "fleiss_b",
                                           "share_true_c", "ac1_c", "fleiss_c"]
    f = {x.key: x for x in fs.figures}
    # a: majorities m0 T, m1 tie, m2 F, m3 T -> 2 of 3, one tie left out
    #    p_a = (1 + 0 + 1 + 1)/4 = 3/4; share True = (1 + 1/2 + 0 + 1)/4 = 5/8
    #    Fleiss p_e = 25/64 + 9/64 = 17/32 -> 7/15; AC1 p_e = 2 (5/8)(3/8) = 15/32 -> 9/17
    # b: majorities T, F, T, F -> 1/2; p_a = (1/3 + 1 + 1 + 1)/4 = 5/6; share True = (2/3 + 0 + 1 + 0)/4 = 5/12
    #    Fleiss p_e = (25 + 49)/144 = 37/72 -> 23/35; AC1 p_e = 2 (5/12)(7/12) = 35/72 -> 25/37
    sa = f["share_true_a"]
    assert (sa.label, sa.value, sa.n) == ("a: share of items judged True (majority)", pytest.approx(2 / 3), 3)
    assert sa.note == "share of items whose majority label is True" + BOOT + "; 1 items without a majority left out"
    sb = f["share_true_b"]
    assert (sb.value, sb.n, sb.note) == (0.5, 4, "share of items whose majority label is True" + BOOT)
    for key, label, v in (("ac1_a", "a: Gwet's AC1", 9 / 17), ("fleiss_a", "a: Fleiss' kappa", 7 / 15),
                          ("ac1_b", "b: Gwet's AC1", 25 / 37), ("fleiss_b", "b: Fleiss' kappa", 23 / 35)):
        assert (f[key].label, f[key].value, f[key].n) == (label, pytest.approx(v), 4)
        assert f[key].ci_low is not None and "declared categories [True, False]" in f[key].note
    sc = f["share_true_c"]
    assert (sc.label, sc.value, sc.n, sc.note) == ("c: share of items judged True (majority)", None, 0,
                                                   "no item with a majority label")
    for key, label in (("ac1_c", "c: Gwet's AC1"), ("fleiss_c", "c: Fleiss' kappa")):
        assert (f[key].label, f[key].value, f[key].n, f[key].note) == (label, None, 0, "no answered item")
    (table,) = fs.tables
    assert (table.key, table.title, table.columns) == (
        "by_dimension", "item quality by dimension (majority label; AC1 vs Fleiss)",
        ["dimension", "items", "share True", "Gwet AC1", "Fleiss kappa"])
    assert table.note == ("with labels mostly True, Fleiss' kappa can be low while agreement is high (kappa paradox); "
                          "AC1 is what PersonaMem reports")
    assert table.rows == [["a", 3, pytest.approx(2 / 3), pytest.approx(9 / 17), pytest.approx(7 / 15)],
                          ["b", 4, 0.5, pytest.approx(25 / 37), pytest.approx(23 / 35)], ["c", 0, None, None, None]]
    (plot,) = fs.plots
    assert (plot.key, plot.title, plot.kind) == ("share_true", "share of items judged True", "bars")
    assert plot.data == {"categories": ["a", "b", "c"], "series": {"share True": [sa.value, 0.5, None]},
                         "intervals": {"share True": [[sa.ci_low, sa.ci_high], [sb.ci_low, sb.ci_high], [None, None]]},
                         "y_label": "share (95% bootstrap interval)"}


def test_only_ties(store):
    store.import_items("ds", "jsonl", mcq_items({"m0": (0, [])}))
    st = create_study(store, StudySpec(name="iq", task="item_quality", datasets=["ds"], dimensions=["a"]))
    (u,) = store.units(st.id)
    for who, a in (("h1", T), ("h2", F)):
        store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id,
                                          annotator_id=store.ensure_annotator(who).id, status="answered",
                                          answer={"labels": {"a": a}}))
    f = {x.key: x for x in get_task("item_quality").figures(load_study_data(store, "iq")).figures}
    assert (f["share_true_a"].value, f["share_true_a"].note) == (
        None, "no item with a majority label; 1 items without a majority left out")
