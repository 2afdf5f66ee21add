"""gold_label: three blind annotators by key presses, unanimity gold, context dropping, figures, `prefval adjudicate`
on a 3-annotator study by key presses (gold labels and figures counted by hand), the old adjudication round refused."""
from __future__ import annotations

from pathlib import Path

import pytest

from annotator.app import AnnotateApp
from annotator.screens.summary import SummaryScreen
from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.gold_label.figures import gold_labels, study_gold_labels
from annotator.tasks.base import StudySpec
from reports.study_data import load_study_data
from storage.errors import PrefvalError
from storage.models import AnnotationIn, ItemIn
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


@pytest.mark.slow
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


def test_the_old_adjudication_round_is_refused_and_the_database_unchanged(gl_db, capsys):
    from annotator.cli import main

    before = Path(gl_db).read_bytes()
    for extra in (["--from-study", "gl", "--option", "adjudication=1"], ["--from-study", "gl"],
                  ["--dataset", "secretsource", "--option", "adjudication=1"]):
        capsys.readouterr()
        assert main(["study", "create", "adj", "--task", "gold_label", *extra, "--db", gl_db]) != 0
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "prefval adjudicate" in err and "--annotator WHO" in err, err
        assert ("prefval adjudicate gl " in err) == ("gl" in extra), err
    assert Path(gl_db).read_bytes() == before
    with Store.open(gl_db, mode="ro") as s:
        assert [st.name for st in s.studies(include_archived=True)] == ["gl"]


# A 3-annotator study for `prefval adjudicate`: (id, context, labels of ana/bo/cy). context_threshold 0.5:
# A (6 complete, unanimous a1 a2 a5 a6: 4/6 = 0.67) kept; B (b1 b3 unanimous: 2/4 = 0.5) kept; C (0/2) dropped;
# d1 has two labels only (incomplete). To adjudicate: the complete non-unanimous items of kept contexts, in
# study order: a3, a4, b2, b4 (c1, c2 are not: their context is dropped; d1 is not complete).
ADJ_ROWS = [("a1", "A", "111"), ("a2", "A", "000"), ("a3", "A", "110"), ("a4", "A", "001"), ("a5", "A", "111"),
            ("a6", "A", "000"), ("b1", "B", "111"), ("b2", "B", "011"), ("b3", "B", "000"), ("b4", "B", "100"),
            ("c1", "C", "101"), ("c2", "C", "010"), ("d1", "D", "10-")]


@pytest.fixture
def three_db(db_file):
    with Store.open(db_file, mode="create") as s:
        s.import_items("cands", "jsonl", [
            ItemIn(external_id=e, kind="gold_candidate",
                   payload={"recipient": f"recipient {c}", "task": f"task {c}", "attribute": f"attribute {e}",
                            "candidate_label": True})
            for e, c, _ in ADJ_ROWS])
        create_study(s, StudySpec(name="g3", task="gold_label", datasets=["cands"], seed=2, annotators=list(WHO),
                                  options={"context_threshold": "0.5", "non_unanimous": "adjudicate"}))
        st = s.get_study("g3")
        units = {u.id: u for u in s.units(st.id)}
        ext = {u.id: s.get_item(u.item_id).external_id for u in units.values()}
        labels = {e: lab for e, _, lab in ADJ_ROWS}
        for j, who in enumerate(WHO):
            ann = s.ensure_annotator(who)
            for a in s.assignments(st.id, ann.id):
                lab = labels[ext[a.unit_id]][j]
                if lab == "-":
                    continue
                row = dict(study_id=st.id, unit_id=a.unit_id, item_id=units[a.unit_id].item_id,
                           annotator_id=ann.id, assignment_id=a.id)
                s.add_annotation(AnnotationIn(**row, status="answered", answer={"label": int(lab)}))
                if ext[a.unit_id] == "a3" and who == "cy":
                    s.add_annotation(AnnotationIn(**row, status="note", note="[b]not[/b] for a tax agent"))
    return db_file


@pytest.mark.slow
async def test_adjudicate_a_three_annotator_gold_study_in_the_tui(three_db, capsys):
    from annotator.cli import main
    from annotator.screens.adjudicate import AdjudicateApp

    app = AdjudicateApp(three_db, "g3", "judy")
    async with app.run_test(size=(120, 36)) as pilot:
        s = app.session
        assert [s.items[u.item_id].external_id for u in s.units] == ["a3", "a4", "b2", "b4"]
        text = _screen_text(app)
        # each annotator's label and note side by side with the item; never the candidate label
        assert "ana: apply" in text and "ben: apply" in text and "cy: suppress" in text, text
        assert "note: [b]not[/b] for a tax agent" in text and "attribute a3" in text
        assert "true" not in text.lower() and "candidate" not in text.lower()
        await pilot.press("0")  # a3: suppress, against the majority (apply)
        await pilot.pause()
        assert "attribute a4" in _screen_text(app)
        await pilot.press("s")  # a4 left unresolved
        await pilot.press("1")  # b2: apply, with the majority
        await pilot.pause()
        assert "attribute b4" in _screen_text(app)
        await pilot.press("E")
        for ch in "vague":
            await pilot.press(ch)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("q")
    with Store.open(three_db, mode="ro") as s:
        data = load_study_data(s, "g3")
        log = s.adjudication_log(data.study.id)
        assert [(a.kind, (a.answer or {}).get("label"), a.reason) for a in log] == [
            ("final", 0, None), ("final", 1, None), ("exclude", None, "vague")]
        assert study_gold_labels(s, "g3") == {
            "a1": 1, "a2": 0, "a3": 0, "a4": None, "a5": 1, "a6": 0, "b1": 1, "b2": 1, "b3": 0, "b4": None,
            "c1": None, "c2": None, "d1": None}
    fs = get_task("gold_label").figures(data)
    assert fs.figure("complete").value == 12 and fs.figure("complete").n == 13
    assert fs.figure("unanimous").value == 6 and fs.figure("unanimous").n == 12
    assert fs.figure("unanimity").value == pytest.approx(6 / 12)
    for key, value in (("adjudicated", 2), ("adjudication_excluded", 1), ("unresolved", 1)):
        assert fs.figure(key).value == value and fs.figure(key).n == 4, key
    # a3: majority apply, adjudicated suppress; b2: majority apply, adjudicated apply -> 1 of 2
    assert fs.figure("with_majority").value == pytest.approx(1 / 2) and fs.figure("with_majority").n == 2
    assert fs.figure("contexts_kept").value == 2 and fs.figure("contexts_kept").n == 3
    table = {r[0]: (r[-2], r[-1]) for r in next(t for t in fs.tables if t.key == "gold").rows}
    assert table["a3"] == ("adjudicated", 0) and table["b4"] == ("excluded by adjudication", None)
    assert table["a4"] == ("not unanimous, not adjudicated", None) and table["c1"] == ("context dropped", None)
    assert table["a1"] == ("unanimous", 1) and table["d1"] == ("incomplete", None)
    # the same figures in `prefval status g3 --format json` and `prefval report g3`
    capsys.readouterr()
    assert main(["status", "g3", "--format", "json", "--db", three_db]) == 0
    import json

    figs = {f["key"]: f["value"] for f in json.loads(capsys.readouterr().out)["studies"][0]["figures"]}
    assert (figs["adjudicated"], figs["adjudication_excluded"], figs["unresolved"]) == (2, 1, 1)
    assert main(["report", "g3", "--db", three_db]) == 0
    report = capsys.readouterr().out
    assert "items adjudicated (final label set)" in report and "Adjudicated items" in report
    # released: the 6 unanimous items and the 2 adjudicated ones, with their gold labels
    from annotator.release import build_release

    with Store.open(three_db, mode="ro") as s:
        released, sheet = build_release(s, ["g3"])
    assert {r["external_id"]: r["release"]["gold_label"] for r in released["cands"]} == {
        "a1": 1, "a2": 0, "a3": 0, "a5": 1, "a6": 0, "b1": 1, "b2": 1, "b3": 0}
    reasons = {e["item"]: e["reason"] for e in sheet["exclusions"]}
    assert reasons["b4"] == "excluded by adjudication: vague" and set(reasons) == {"a4", "b4", "c1", "c2", "d1"}


def test_adjudicate_says_when_every_disagreement_is_in_a_dropped_context(gl_db):
    from annotator.adjudication import AdjudicationSession

    with Store.open(gl_db, mode="create") as s:
        st = s.get_study("gl")
        for j, who in enumerate(WHO):
            ann = s.ensure_annotator(who)
            for u in s.units(st.id):
                lab = next(labs for e, *_, labs in ROWS if e == s.get_item(u.item_id).external_id)[j]
                s.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id,
                                              annotator_id=ann.id, status="answered", answer={"label": lab}))
        n_annotators = len(s.annotators())
        # g4 (1, 0, 1) is the only non-unanimous item; its context (2/3 unanimous) is below 0.9
        with pytest.raises(PrefvalError, match=r"no disagreements .*; 1 item\(s\) not unanimous are in contexts "
                                               r"dropped .* context_threshold 0.9"):
            AdjudicationSession(s, "gl", "judy")
        assert len(s.annotators()) == n_annotators  # judy was not written


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
                      ({"sample_unit": "profile"}, "sample_unit"), ({"adjudication": "1"}, "prefval adjudicate")):
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
@pytest.mark.slow
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


def test_adjudication_screen_snapshot(three_db, snap_compare):
    from annotator.screens.adjudicate import AdjudicateApp

    app = AdjudicateApp(three_db, "g3", "judy")
    assert snap_compare(app, terminal_size=(110, 34))
