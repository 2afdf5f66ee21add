"""Rubric figures (RealPref G.3) of a four-item study worked by hand: Cohen's kappa (plain, linear, quadratic) per
dimension and pooled, score histograms, Pearson r against an LLM judge, and the calibration table
(CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import math

import pytest

from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.base import StudySpec
from reports.study_data import load_study_data
from storage.models import AnnotationIn, ItemIn

# small hand-worked tables: intervals even below the 7-item minimum (tested on its own)
pytestmark = pytest.mark.usefixtures("intervals_from_few_items")

DIMS = ["awareness", "quality"]
# item -> annotator -> (awareness, quality); r0 is the calibration item (reference 3, 4)
SCORES = {
    "r0": {"hu": (3, 5), "ia": (1, 4)},
    "r1": {"hu": (1, 2), "ia": (1, 3), "judge": (2, 2)},
    "r2": {"hu": (4, 4), "ia": (5, 4), "judge": (5, 4)},
    "r3": {"hu": (2, 1), "judge": (1, 1)},
}


def _figures(store):
    items = []
    for i in range(4):
        p = {"preference": f"p{i}", "query": f"q{i}?", "answer": f"a{i}."}
        if i == 0:
            p["reference_scores"] = {"awareness": 3, "alignment": 2, "quality": 4}
        items.append(ItemIn(external_id=f"r{i}", kind="rubric_item", payload=p))
    store.import_items("ans", "jsonl", items)
    st = create_study(store, StudySpec(name="rb", task="rubric", datasets=["ans"], seed=4, calibration=1,
                                       dimensions=DIMS))
    units = store.units(st.id)
    ext = store.get_items([u.item_id for u in units])
    for u in units:
        for who, (aw, qu) in SCORES[ext[u.item_id].external_id].items():
            ann = store.ensure_annotator(who, kind="llm" if who == "judge" else "human")
            store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                              status="answered", answer={"scores": {"awareness": aw, "quality": qu}}))
    return get_task("rubric").figures(load_study_data(store, "rb"))


def test_kappa_figures_by_hand(store):
    fs = _figures(store)
    f = {x.key: x for x in fs.figures}
    # hu vs ia on r1, r2 (r0 is calibration, r3 has hu only). awareness (1,1) (4,5); quality (2,3) (4,4)
    # plain: p_o = 1/2, p_e = 1/4 on each dimension -> 1/3; pooled 4 pairs: p_e = 1/16 + 2/16 -> 5/13
    # linear weights 1 - |i-j|/4: awareness p_o 7/8, p_e 1/2 -> 3/4; quality p_o 7/8, p_e 3/4 -> 1/2;
    #   pooled p_o 7/8, p_e 19/32 -> 9/13
    # quadratic 1 - (i-j)^2/16: awareness 31/32, 19/32 -> 12/13; quality 31/32, 29/32 -> 2/3;
    #   pooled 31/32 (124/128), 95/128 -> 29/33
    expected = {"awareness": (1 / 3, 3 / 4, 12 / 13, 2), "quality": (1 / 3, 1 / 2, 2 / 3, 2),
                "overall": (5 / 13, 9 / 13, 29 / 33, 4)}
    for dim, (plain, lin, quad, n) in expected.items():
        for key, w, v in (("kappa", None, plain), ("kappa_linear", "linear", lin), ("kappa_quadratic", "quadratic",
                                                                                    quad)):
            fig = f[f"{key}_{dim}"]
            weights = f" ({w} weights)" if w else ""
            assert fig.label == f"Cohen's kappa{weights}, {dim}, hu vs ia (items both scored)"
            assert (fig.value, fig.n) == (pytest.approx(v), n), (key, dim)
    kappa = next(t for t in fs.tables if t.key == "kappa")
    assert (kappa.title, kappa.columns) == ("Cohen's kappa between human judges (categories 1..5)",
                                            ["judges", "dimension", "items", "kappa", "linear", "quadratic"])
    assert kappa.rows == [["hu / ia", dim, n, pytest.approx(a), pytest.approx(b), pytest.approx(c)]
                          for dim, (a, b, c, n) in expected.items()]


def test_histograms_pearson_and_calibration_by_hand(store):
    fs = _figures(store)
    # counts of scores 1..5 over r1..r3: humans (hu and ia), the judge
    assert [p.model_dump() for p in fs.plots] == [
        {"key": "histogram_awareness", "title": "scores on awareness", "kind": "bars",
         "data": {"categories": ["1", "2", "3", "4", "5"],
                  "series": {"human": [2, 1, 0, 1, 1], "LLM judge": [1, 1, 0, 0, 1]}}},
        {"key": "histogram_quality", "title": "scores on quality", "kind": "bars",
         "data": {"categories": ["1", "2", "3", "4", "5"],
                  "series": {"human": [1, 1, 1, 2, 0], "LLM judge": [1, 1, 0, 1, 0]}}},
    ]
    # x = mean human score per item, y = the judge's: awareness x (1, 4.5, 2) y (2, 5, 1): r^2 = 6.5^2 / (6.5 * 78/9)
    # quality x (2.5, 4, 1) y (2, 4, 1): r^2 = 4.5 * 9 / 42; pooled 6 points: r^2 = 11 / 13.5
    f = {x.key: x for x in fs.figures}
    for dim, r2, n in (("awareness", 0.75, 3), ("quality", 40.5 / 42, 3), ("overall", 11 / 13.5, 6)):
        fig = f[f"pearson_{dim}"]
        assert fig.label == f"Pearson r, {dim}, humans vs LLM judge judge"
        assert (fig.value, fig.n) == (pytest.approx(math.sqrt(r2)), n)
        assert 0 < fig.extra["p_value"] < 1
    pear = next(t for t in fs.tables if t.key == "pearson")
    assert (pear.title, pear.columns) == ("Pearson r between human scores (mean per item) and LLM judges",
                                          ["LLM judge", "dimension", "items", "r", "p"])
    assert [r[:3] for r in pear.rows] == [["judge", "awareness", 3], ["judge", "quality", 3], ["judge", "overall", 6]]
    assert [r[3] for r in pear.rows] == [f[f"pearson_{d}"].value for d in ("awareness", "quality", "overall")]
    # calibration r0 (reference 3, 4): hu |3-3|, |5-4| -> mean 1/2, exact 1/2; ia |1-3|, |4-4| -> 1, 1/2
    cal = next(t for t in fs.tables if t.key == "calibration")
    assert cal.model_dump() == {"key": "calibration", "title": "calibration: distance to the reference scores",
                                "columns": ["annotator", "scores", "mean |diff|", "exact share"],
                                "rows": [["hu", 2, 0.5, 0.5], ["ia", 2, 1.0, 0.5]], "note": ""}
    assert [t.key for t in fs.tables] == ["kappa", "pearson", "calibration"]


def test_pearson_figures_carry_their_bootstrap_interval(store):
    f = {x.key: x for x in _figures(store).figures}
    for dim in ("awareness", "quality", "overall"):  # r is in [-1, 1], so is every interval bound around it
        fig = f[f"pearson_{dim}"]
        assert fig.ci_low is not None and -1 <= fig.ci_low <= fig.value <= fig.ci_high <= 1


def test_kappa_of_judges_without_a_shared_item_is_undefined_over_zero_items(store):
    store.import_items("ans", "jsonl", [ItemIn(external_id=f"r{i}", kind="rubric_item", payload={
        "preference": "p", "query": "q?", "answer": f"a{i}."}) for i in range(2)])
    st = create_study(store, StudySpec(name="rb", task="rubric", datasets=["ans"], seed=4, dimensions=DIMS))
    # hu scores only the first item, ia only the second: no item scored by both
    for u, who in zip(store.units(st.id), ("hu", "ia")):
        ann = store.ensure_annotator(who)
        store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                          status="answered", answer={"scores": {"awareness": 3, "quality": 3}}))
    fs = get_task("rubric").figures(load_study_data(store, "rb"))
    kappas = [(x.key, x.value, x.n, x.note) for x in fs.figures if x.key.startswith("kappa")]
    assert len(kappas) == 9 and all(k[1:] == (None, 0, "no item scored by both") for k in kappas)
