"""Rubric task: rubric files, calibration and shared subset, one committed keypress per dimension (partial rows,
resume, back, note, backspace), and kappa / histogram / Pearson figures checked against hand computations."""
from __future__ import annotations

import json
import math

import pytest

from annotator.app import AnnotateApp
from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.rubric.schema import load_rubric
from annotator.tasks.base import StudySpec
from reports.study_data import load_study_data
from storage.errors import PrefvalError
from storage.models import AnnotationIn, ItemIn
from storage.store import Store
from tests.tui_helpers import decide

DIMS = ["awareness", "alignment", "quality"]
REF0 = {"awareness": 5, "alignment": 5, "quality": 4}


def _items(n: int = 5) -> list[ItemIn]:
    out = []
    for i in range(n):
        p = {"preference": f"Likes topic {i}", "query": f"Question {i}?", "answer": f"Answer text {i}."}
        if i == 0:
            p["reference_scores"] = REF0
        if i == 1:
            p["reference_scores"] = {"awareness": 2, "alignment": 1, "quality": 3}
        out.append(ItemIn(external_id=f"r{i}", kind="rubric_item", payload=p))
    return out


@pytest.fixture
def rb_study(db_file):
    with Store.open(db_file, mode="create") as s:
        s.import_items("ans", "jsonl", _items())
        create_study(s, StudySpec(name="rb", task="rubric", datasets=["ans"], seed=4, calibration=1, shared=2,
                                  annotators=["ana", "bob"]))
    return db_file


def screen_text(app) -> str:
    return " ".join(str(w.render()) for w in app.screen.query("Static"))


# ---- rubric files ---------------------------------------------------------------------------------------------
def test_default_rubric_has_the_three_realpref_dimensions():
    r = load_rubric()
    assert r.names == DIMS
    assert all(list(d.levels) == [1, 2, 3, 4, 5] and d.description for d in r.dimensions)


def test_rubric_file_json_is_stored_in_the_study(store, tmp_path):
    store.import_items("ans", "jsonl", _items())
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"dimensions": [{"name": "tone", "description": "Is the tone right?",
                                                "levels": {str(k): f"tone level {k}" for k in range(1, 6)}}]}))
    st = create_study(store, StudySpec(name="j", task="rubric", datasets=["ans"], rubric=str(path)))
    assert st.settings["dimensions"] == ["tone"]
    assert st.settings["rubric"]["dimensions"][0]["levels"]["3"] == "tone level 3"
    path.unlink()  # the study keeps its rubric: its screen still reads the levels from the settings
    from annotator.tasks.rubric.task import study_rubric
    assert study_rubric(st.settings).dimension("tone").levels[5] == "tone level 5"


@pytest.mark.parametrize("text,field", [
    ("dimensions:\n  - name: a\n    description: d\n    levels: {1: x, 2: x, 3: x, 4: x}\n", "dimensions.0.levels"),
    ("dimensions:\n  - name: a\n    levels: {1: x, 2: x, 3: x, 4: x, 5: x}\n", "dimensions.0.description"),
    ("dimensions: []\n", "dimensions"),
    ("dimensions:\n  - {name: a, description: d, levels: {1: x, 2: x, 3: x, 4: x, 5: x}}\n"
     "  - {name: a, description: e, levels: {1: x, 2: x, 3: x, 4: x, 5: x}}\n", "dimensions"),
    ("dimensions: [unclosed\n", None),
])
def test_bad_rubric_file_is_one_line_naming_file_and_field(store, tmp_path, text, field):
    store.import_items("ans", "jsonl", _items())
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(PrefvalError) as err:
        create_study(store, StudySpec(name="b", task="rubric", datasets=["ans"], rubric=str(path)))
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(str(path))
    assert (f"field '{field}'" in msg) if field else "not valid YAML" in msg
    assert store.studies() == []


def test_dimensions_option_and_shared_checks(store):
    store.import_items("ans", "jsonl", _items())
    st = create_study(store, StudySpec(name="d", task="rubric", datasets=["ans"], dimensions=["quality"]))
    assert st.settings["dimensions"] == ["quality"]
    with pytest.raises(PrefvalError, match="'tone' is not a dimension"):
        create_study(store, StudySpec(name="e", task="rubric", datasets=["ans"], dimensions=["tone"]))
    with pytest.raises(PrefvalError, match="at least two annotators"):
        create_study(store, StudySpec(name="f", task="rubric", datasets=["ans"], shared=2))
    with pytest.raises(PrefvalError, match="need 7 items"):
        create_study(store, StudySpec(name="g", task="rubric", datasets=["ans"], shared=5, calibration=2,
                                      annotators=["a", "b"]))


def test_calibration_first_and_shared_subset_assignment(rb_study):
    with Store.open(rb_study, mode="create") as s:
        st = s.get_study("rb")
        units = s.units(st.id)
        items = s.get_items([u.item_id for u in units])
        assert items[units[0].item_id].external_id == "r0" and units[0].extra["calibration"]
        shared = [u for u in units if u.extra.get("shared")]
        assert len(shared) == 2 and all(u.extra["annotators"] == 2 for u in shared)
        for who in ("ana", "bob"):
            q = s.assignments(st.id, s.ensure_annotator(who).id)
            assert q[0].unit_id == units[0].id  # calibration first for everyone
        counts = s.assignment_counts(st.id)
        assert sorted(counts.values()) == [1, 1, 2, 2, 2]


# ---- the screen -------------------------------------------------------------------------------------------------
def _plan(db):
    """Scores by external id per annotator: the two shared items get the hand-computed example."""
    with Store.open(db, mode="create") as s:
        st = s.get_study("rb")
        units = s.units(st.id)
        items = s.get_items([u.item_id for u in units])
        s1, s2 = [items[u.item_id].external_id for u in units if u.extra.get("shared")]
    plan = {"ana": {s1: (5, 5, 4), s2: (1, 2, 2)}, "bob": {s1: (5, 4, 4), s2: (1, 2, 3)}}
    for who in plan:
        plan[who]["r0"] = (4, 5, 3)
    return plan


async def _score_all(db, who, plan, texts):
    app = AnnotateApp(db, "rb", who, show_timer=False)
    async with app.run_test(size=(110, 34)) as pilot:
        while not app.session.finished:
            view = app.session.view()
            scores = plan[who].get(view.item.external_id, (3, 3, 3))
            for k, sc in enumerate(scores):
                texts.append((view.unit.extra.get("calibration", False), k, screen_text(app)))
                await decide(pilot, str(sc))
            if view.unit.extra.get("calibration"):
                assert app.session.view().unit.id == view.unit.id  # stays until c
                texts.append((True, 3, screen_text(app)))
                await pilot.press("c")


@pytest.mark.slow
async def test_two_judges_score_and_kappa_matches_hand_computation(rb_study):
    plan = _plan(rb_study)
    texts: list = []
    for who in ("ana", "bob"):
        await _score_all(rb_study, who, plan, texts)
    # the reference is shown only after the last score of the calibration item, never elsewhere
    for calibration, step, text in texts:
        if calibration and step == 3:
            assert "Reference scores" in text and "reference 5" in text and "yours 4" in text
        else:
            assert "Reference scores" not in text and "yours" not in text and "reference 5" not in text
    with Store.open(rb_study, mode="create") as s:
        st = s.get_study("rb")
        ana = s.ensure_annotator("ana")
        calib_unit = s.units(st.id)[0]
        hist = s.history(st.id, calib_unit.id, ana.id)
        assert [h.status for h in hist] == ["partial", "partial", "partial", "answered"]
        assert hist[0].answer == {"scores": {"awareness": 4}}
        assert hist[-1].answer == {"scores": {"awareness": 4, "alignment": 5, "quality": 3}}
        data = load_study_data(s, "rb")
    fs = get_task("rubric").figures(data)
    assert fs.figure("kappa_awareness").value == pytest.approx(1.0)
    assert fs.figure("kappa_alignment").value == pytest.approx(1 / 3)
    assert fs.figure("kappa_quality").value == pytest.approx(1 / 3)
    assert fs.figure("kappa_overall").value == pytest.approx(17 / 29)  # pooled 6 pairs, calibration left out
    assert fs.figure("kappa_overall").n == 6
    assert fs.figure("kappa_linear_alignment").value == pytest.approx(2 / 3)
    hist_a = next(p for p in fs.plots if p.key == "histogram_awareness")
    # ana: 5, 1, 3 (her own item) ; bob: 5, 1, 3 (his own item)
    assert hist_a.data["series"]["human"] == [2, 0, 2, 0, 2]
    cal = next(t for t in fs.tables if t.key == "calibration")
    assert cal.rows[0][0] == "ana" and cal.rows[0][2] == pytest.approx(2 / 3)


@pytest.mark.slow
async def test_resume_backspace_note_and_back_change(rb_study):
    app = AnnotateApp(rb_study, "rb", "ana", show_timer=False)
    async with app.run_test(size=(110, 34)) as pilot:
        await pilot.press("4", "2", "backspace", "5")
        assert app.screen.partial == {"scores": {"awareness": 4, "alignment": 5}}
        await pilot.press("n", "3", "3", "enter")  # typed into the note, not scores
        assert app.screen.partial == {"scores": {"awareness": 4, "alignment": 5}}
        await pilot.press("q")
    app = AnnotateApp(rb_study, "rb", "ana", show_timer=False)
    async with app.run_test(size=(110, 34)) as pilot:
        assert app.session.index == 0
        text = screen_text(app)
        assert "✓ 1. Preference awareness: 4" in text and "✓ 2. Preference alignment: 5" in text
        assert "▶ 3. Answer quality" in text and "Reference scores" not in text
        await pilot.press("3")
        assert "Reference scores" in screen_text(app)
        await pilot.press("backspace")  # no taking back once the reference is shown
        await pilot.press("c")
        assert app.session.index == 1
        await pilot.press("u")
        assert "your answer: awareness 4, alignment 5, quality 3" in str(app.screen.query_one("#state").render())
        assert "(stored: 5)" in screen_text(app)
        await pilot.press("1")
        assert app.screen.partial == {"scores": {"awareness": 1}}
    with Store.open(rb_study, mode="create") as s:
        st = s.get_study("rb")
        ana = s.ensure_annotator("ana")
        rows = s.history(st.id, s.units(st.id)[0].id, ana.id)
    assert [r.status for r in rows] == ["partial", "partial", "partial", "partial", "note", "partial",
                                        "answered", "partial"]
    assert rows[4].note == "33" and rows[4].answer is None
    assert rows[-1].supersedes == rows[-2].id


# ---- LLM judge --------------------------------------------------------------------------------------------------
def _pearson(x, y):
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    return sxy / math.sqrt(sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y))


def test_llm_judge_annotations_give_pearson_per_dimension(store):
    store.import_items("ans", "jsonl", _items(4))
    st = create_study(store, StudySpec(name="llm", task="rubric", datasets=["ans"], annotators=["hum"]))
    hum = store.ensure_annotator("hum")
    judge = store.ensure_annotator("sonnet", kind="llm", model="claude-sonnet-4")
    human = {"awareness": [1, 2, 3, 4], "alignment": [1, 2, 3, 4], "quality": [2, 2, 4, 4]}
    llm = {"awareness": [1, 3, 2, 4], "alignment": [2, 3, 4, 5], "quality": [1, 2, 4, 5]}
    for i, u in enumerate(store.units(st.id)):
        for who, scores, source in ((hum, human, "human"), (judge, llm, "llm")):
            store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=who.id,
                                              status="answered", source=source,
                                              answer={"scores": {d: scores[d][i] for d in DIMS}}))
    fs = get_task("rubric").figures(load_study_data(store, "llm"))
    assert fs.figure("pearson_awareness").value == pytest.approx(0.8)
    assert fs.figure("pearson_alignment").value == pytest.approx(1.0)
    assert fs.figure("pearson_quality").value == pytest.approx(6 / math.sqrt(40))
    pooled_x = sum((human[d] for d in DIMS), [])
    pooled_y = sum((llm[d] for d in DIMS), [])
    assert fs.figure("pearson_overall").value == pytest.approx(_pearson(pooled_x, pooled_y))
    assert fs.figure("pearson_overall").n == 12 and "p_value" in fs.figure("pearson_overall").extra
    hist = next(p for p in fs.plots if p.key == "histogram_quality")
    assert hist.data["series"] == {"human": [0, 2, 0, 2, 0], "LLM sonnet": [1, 1, 0, 1, 1]}
    assert not [f for f in fs.figures if f.key.startswith("kappa")]  # one human judge: no pair


# ---- snapshots --------------------------------------------------------------------------------------------------
def test_rubric_calibration_screen_snapshot(rb_study, snap_compare):
    app = AnnotateApp(rb_study, "rb", "ana", show_timer=False)
    assert snap_compare(app, press=["4"], terminal_size=(110, 34))


def test_rubric_reference_screen_snapshot(rb_study, snap_compare):
    app = AnnotateApp(rb_study, "rb", "ana", show_timer=False)
    assert snap_compare(app, press=["4", "5", "3"], terminal_size=(110, 34))
