"""gold_label: three blind annotators by key presses, unanimity gold, context dropping, adjudication, figures."""
from __future__ import annotations

from pathlib import Path

import pytest

from annotator.app import AnnotateApp
from annotator.screens.summary import SummaryScreen
from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks._gold_stats import combined_gold, gold_labels
from annotator.tasks.base import StudySpec
from reports.study_data import load_study_data
from storage.errors import PrefvalError
from storage.models import ItemIn
from storage.store import Store

from .conftest import SAMPLE_DATA, SHARED_DATASETS

# (external id, recipient, task, attribute, profile, candidate label, labels of ana/ben/cy)
ROWS = [
    ("g0", "IRS Agent", "Resolve a tax discrepancy", "bold formatting", "Priya", True, (1, 1, 1)),
    ("g1", "IRS Agent", "Resolve a tax discrepancy", "uses emoji", "Priya", False, (0, 0, 0)),
    ("g2", "IRS Agent", "Resolve a tax discrepancy", "humorous tone", "Priya", False, (0, 0, 0)),
    ("g3", "Old Friend", "Plan a reunion", "humorous tone", "Priya", True, (1, 1, 1)),
    ("g4", "Old Friend", "Plan a reunion", "mentions vegan diet", "Priya", True, (1, 0, 1)),
    ("g5", "Old Friend", "Plan a reunion", "bold formatting", "Priya", False, (1, 1, 1)),
]
WHO = ("ana", "ben", "cy")


def gold_items() -> list[ItemIn]:
    return [ItemIn(external_id=e, kind="gold_candidate",
                   payload={"recipient": r, "task": t, "attribute": a, "profile_name": p, "candidate_label": c,
                            "category": "style", "statement": f"The user likes {a}."})
            for e, r, t, a, p, c, _ in ROWS]


@pytest.fixture
def gl_db(db_file):
    with Store.open(db_file, mode="create") as s:
        s.import_items("secretsource", "jsonl", gold_items())
        create_study(s, StudySpec(name="gl", task="gold_label", datasets=["secretsource"], seed=5,
                                  options={"non_unanimous": "adjudicate"}))
    return db_file


def _screen_text(app) -> str:
    return " ".join(str(w.render()) for w in app.screen.query("Static"))


def _assert_blind(text: str) -> None:
    low = text.lower()
    for bad in ("candidate", "true", "false", "secretsource", "ana", "ben ", "style"):
        assert bad not in low, bad


async def label_all(db_file: str, study: str = "gl") -> None:
    """Each annotator labels every item with its ROWS label, checking every screen stays blind."""
    labels = {e: lab for e, *_, lab in ROWS}
    for j, who in enumerate(WHO):
        app = AnnotateApp(db_file, study, who, show_timer=False)
        async with app.run_test(size=(110, 34)) as pilot:
            for _ in ROWS:
                text = _screen_text(app)
                _assert_blind(text.replace(f"· {who} ·", ""))
                assert "your answer" not in text  # nobody's answer shown on a fresh item
                await pilot.press(str(labels[app.session.view().item.external_id][j]))
            await pilot.pause()
            assert isinstance(app.screen, SummaryScreen)
            await pilot.press("u")  # back to the last item: only the annotator's own answer is shown
            await pilot.pause()
            _assert_blind(_screen_text(app).replace(f"· {who} ·", ""))


async def test_three_annotators_gold_and_figures(gl_db):
    await label_all(gl_db)
    with Store.open(gl_db, mode="create") as s:
        st = s.get_study("gl")
        assert len(s.current_annotations(st.id)) == 18
        data = load_study_data(s, "gl")
    # contexts: IRS 3/3 unanimous (kept), reunion 2/3 (0.667 < 0.9, dropped)
    assert gold_labels(data) == {"g0": 1, "g1": 0, "g2": 0, "g3": None, "g4": None, "g5": None}
    assert gold_labels(data, drop_contexts=False) == {"g0": 1, "g1": 0, "g2": 0, "g3": 1, "g4": None, "g5": 1}
    fs = get_task("gold_label").figures(data)
    assert fs.figure("unanimity").value == pytest.approx(5 / 6)
    assert fs.figure("removed").value == pytest.approx(1 / 6)
    assert fs.figure("removed").label.startswith("sent to adjudication")
    # by hand: p_a = (5 + 1/3) / 6 = 16/18; p(1) = 11/18, p_e = (11/18)^2 + (7/18)^2 = 170/324
    assert fs.figure("fleiss_kappa").value == pytest.approx((16 / 18 - 170 / 324) / (1 - 170 / 324))
    # Gwet's AC1 (2 categories): p_a = 16/18 as above; p_e = 2 * (7/18) * (11/18) = 77/162 -> (144 - 77) / 85
    assert fs.figure("gwet_ac1").value == pytest.approx(67 / 85)
    assert fs.figure("contexts_kept").value == 1 and fs.figure("contexts_kept").n == 2
    drop = next(t for t in fs.tables if t.key == "contexts_to_drop")
    assert drop.rows == [["Old Friend", "Plan a reunion", 3, pytest.approx(2 / 3)]]
    # one kept (profile, context) group: IRS with 1 apply and 2 suppress
    assert fs.figure("mean_apply_per_context").value == 1 and fs.figure("mean_suppress_per_context").value == 2
    # gold vs candidate on g0 g1 g2: all agree
    assert fs.figure("candidate_agreement").value == 1.0
    cats = next(t for t in fs.tables if t.key == "categories")
    assert cats.rows == [["style", 6, 5, pytest.approx(5 / 6), 1, 2]]
    table = next(t for t in fs.tables if t.key == "gold")
    assert [r[0] for r in table.rows] == ["g0", "g1", "g2", "g3", "g4", "g5"]
    assert [r[-1] for r in table.rows] == [1, 0, 0, None, None, None]

    # candidate agreement without context dropping: threshold 0 keeps both contexts
    with Store.open(gl_db, mode="create") as s:
        study = s.get_study("gl")
    data.study = study.model_copy(update={"settings": {**study.settings, "context_threshold": 0.0}})
    fs0 = get_task("gold_label").figures(data)
    # (gold, candidate) of g0 g1 g2 g3 g5: (1,1) (0,0) (0,0) (1,1) (1,0): p_o = 4/5; gold 1 in 3/5, candidate 1 in
    # 2/5: p_e = 3/5 * 2/5 + 2/5 * 3/5 = 12/25; kappa = (20/25 - 12/25) / (13/25) = 8/13
    assert fs0.figure("candidate_agreement").value == pytest.approx(4 / 5)
    assert fs0.figure("candidate_kappa").value == pytest.approx(8 / 13)


async def test_adjudication_resolves_the_non_unanimous_item(gl_db):
    await label_all(gl_db)
    with Store.open(gl_db, mode="create") as s:
        with pytest.raises(PrefvalError, match="only for adjudication"):
            create_study(s, StudySpec(name="x", task="gold_label", datasets=[], from_study="gl"))
        create_study(s, StudySpec(name="adj", task="gold_label", datasets=[], from_study="gl",
                                  options={"adjudication": "1", "context_threshold": "0"}))
        adj = s.get_study("adj")
        units = s.units(adj.id)
        assert adj.settings["annotators_per_item"] == 1 and adj.settings["datasets"] == ["secretsource"]
        assert len(units) == 1 and units[0].extra["votes"] == {"apply": 2, "suppress": 1}
    app = AnnotateApp(gl_db, "adj", "judge", show_timer=False)
    async with app.run_test(size=(110, 34)) as pilot:
        text = _screen_text(app)
        assert "2 x apply, 1 x suppress" in text and "mentions vegan diet" in text
        assert "candidate" not in text.lower() and "true" not in text.lower()
        await pilot.press("0")
    with Store.open(gl_db, mode="create") as s:
        data = load_study_data(s, "adj")
        assert gold_labels(data) == {"g4": 0}
        fs = get_task("gold_label").figures(data)
        assert fs.figure("adjudicated").value == 1 and fs.figure("with_majority").value == 0.0
        assert combined_gold(s, "gl", drop_contexts=False) == {"g0": 1, "g1": 0, "g2": 0, "g3": 1, "g4": 0, "g5": 1}
        with pytest.raises(PrefvalError, match="not a gold_label study to adjudicate"):
            create_study(s, StudySpec(name="adj2", task="gold_label", datasets=[], from_study="adj",
                                      options={"adjudication": "1"}))


async def test_back_and_change_then_export(gl_db, capsys):
    import json

    from annotator.cli import main

    app = AnnotateApp(gl_db, "gl", "ana", show_timer=False)
    async with app.run_test(size=(110, 34)) as pilot:
        await pilot.press("1", "u")
        assert "your answer: apply" in _screen_text(app)
        await pilot.press("0")
    capsys.readouterr()
    assert main(["export", "gl", "--format", "jsonl", "--db", gl_db]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 1 and rows[0]["answer"] == {"label": 0} and rows[0]["label_text"] == "suppress"
    cand = {e: c for e, _, _, _, _, c, _ in ROWS}[rows[0]["item"]]
    assert rows[0]["candidate_label"] == int(cand) and rows[0]["agrees_with_candidate"] == (not cand)


def test_sample_by_context_and_bad_options(store):
    store.import_items("bp", "jsonl", gold_items())
    create_study(store, StudySpec(name="s1", task="gold_label", datasets=["bp"], sample=1,
                                  options={"sample_unit": "context"}))
    items = store.get_items([u.item_id for u in store.units(store.get_study("s1").id)])
    assert len(items) == 3 and len({(i.payload["recipient"], i.payload["task"]) for i in items.values()}) == 1
    for opts, msg in (({"non_unanimous": "vote"}, "non_unanimous"), ({"context_threshold": "2"}, "context_threshold"),
                      ({"sample_unit": "profile"}, "sample_unit"), ({"adjudication": "1"}, "needs --from-study")):
        with pytest.raises(PrefvalError, match=msg):
            create_study(store, StudySpec(name="bad", task="gold_label", datasets=["bp"], options=opts))


def test_benchpres_and_cimemories_samples_build_studies(db_file):
    for fmt, rel, name, n in (("benchpres", "benchpres/sample.jsonl", "bp", 60),
                              ("cimemories", "cimemories/sample_profiles.json", "cims", 108)):
        path = SAMPLE_DATA / rel
        if not path.exists():
            pytest.skip(f"{rel} not present")
        _import_cli(fmt, path, db_file, name)
        with Store.open(db_file, mode="create") as s:
            create_study(s, StudySpec(name=f"st_{name}", task="gold_label", datasets=[name]))
            assert len(s.units(s.get_study(f"st_{name}").id)) == n


def _import_cli(fmt: str, path: Path, db: str, name: str) -> None:
    from annotator.cli import main

    assert main(["import", fmt, str(path), "--dataset", name, "--db", db]) == 0


REAL = SHARED_DATASETS / "cimemories" / "data_openai_gpt-oss-120b.json"


@pytest.mark.skipif(not REAL.exists(), reason="CIMemories real data not present")
def test_real_cimemories_sample_30_builds_a_study(db_file):
    _import_cli("cimemories", REAL, db_file, "cim")
    with Store.open(db_file, mode="create") as s:
        n_items = s.get_dataset("cim").n_items
        assert n_items > 50_000
        units = get_task("gold_label").build_units(s, StudySpec(name="x", task="gold_label", datasets=["cim"],
                                                               sample=30, seed=1))
        assert len(units) == 30  # (its speed is a benchmark matter, not a timed test)
        create_study(s, StudySpec(name="g30", task="gold_label", datasets=["cim"], sample=30, seed=1))
        assert len(s.units(s.get_study("g30").id)) == 30


def test_gold_screen_snapshot(gl_db, snap_compare):
    app = AnnotateApp(gl_db, "gl", "ana", show_timer=False)
    assert snap_compare(app, terminal_size=(110, 34))


def test_adjudication_screen_snapshot(db_file, snap_compare):
    from storage.models import AnnotationIn

    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", gold_items())
        create_study(s, StudySpec(name="gl", task="gold_label", datasets=["ds"]))
        st = s.get_study("gl")
        for u in s.units(st.id):
            item = s.get_item(u.item_id)
            labels = next(lab for e, *_, lab in ROWS if e == item.external_id)
            for who, lab in zip(WHO, labels):
                a = s.ensure_annotator(who)
                s.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=a.id,
                                              status="answered", answer={"label": lab}))
        create_study(s, StudySpec(name="adj", task="gold_label", datasets=[], from_study="gl",
                                  options={"adjudication": "1"}))
    app = AnnotateApp(db_file, "adj", "judge", show_timer=False)
    assert snap_compare(app, terminal_size=(110, 34))
