"""Annotator quality: attention checks mixed into every queue (never marked on screen, never in the figures),
each annotator's accuracy on them, flags at the study's thresholds, and excluding an annotator's answers from the
figures with a recorded reason (their rows stay)."""
from __future__ import annotations

import json
import sqlite3

import pytest

from annotator.app import AnnotateApp
from annotator.bundles import export_bundle
from annotator.cli import main
from annotator.commands.report import build_reports
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from reports.study_data import load_study_data
from storage.errors import PrefvalError
from storage.models import AnnotationIn, ItemIn
from storage.payloads import McqPayload
from storage.store import Store
from tests.conftest import make_mcq_items
from tests.tui_helpers import decide

COLS = ["annotator", "kind", "items done", "skipped", "median s/item", "too fast", "agreement with others",
        "items compared", "kappa vs others", "fastest s/item", "share too fast", "attention checks",
        "checks answered", "flags"]


def _checks() -> list[ItemIn]:
    return [ItemIn(external_id=f"c{i}", kind="mcq",
                   payload=McqPayload(question=f"Attentive readers pick option {i + 1}: which?",
                                      options=[f"pick {j + 1}" for j in range(4)], correct_index=i)
                   .model_dump(exclude_none=True)) for i in range(3)]


@pytest.fixture
def checked(db_file):
    items, contexts = make_mcq_items()
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", items, contexts=contexts)
        s.import_items("chk", "jsonl", _checks())
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=3, annotators=["ana", "bo"],
                                  annotators_per_item=2, checks="chk"))
    return db_file


def _answer_all(s: Store, who: str, right: bool, seconds: float, checks_right: bool) -> None:
    study = s.get_study("st")
    ann = s.ensure_annotator(who)
    units = {u.id: u for u in s.units(study.id)}
    items = s.get_items([u.item_id for u in units.values()])
    for a in s.assignments(study.id, ann.id):
        u = units[a.unit_id]
        key = items[u.item_id].payload["correct_index"]
        ok = checks_right if u.extra.get("check") else right
        choice = key if ok else (key + 1) % 4
        s.add_annotation(AnnotationIn(study_id=study.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                      assignment_id=a.id, status="answered", seconds=seconds,
                                      answer={"choice": choice, "letter": "ABCD"[choice], "shown": "A",
                                              "cant_tell": False}))


def test_checks_reach_every_queue_mixed_in_and_stay_out_of_the_figures(checked):
    with Store.open(checked, mode="create") as s:
        study = s.get_study("st")
        units = {u.id: u for u in s.units(study.id)}
        assert sum(1 for u in units.values() if u.extra.get("check")) == 3
        assert study.settings["checks"] == {"source": "chk", "n": 3}
        for who in ("ana", "bo"):
            queue = s.assignments(study.id, s.ensure_annotator(who).id)
            assert len(queue) == 9
            positions = [a.position for a in queue if units[a.unit_id].extra.get("check")]
            assert len(positions) == 3 and positions != [6, 7, 8]  # mixed in, not appended
        _answer_all(s, "ana", right=True, seconds=6.041, checks_right=True)
        _answer_all(s, "bo", right=True, seconds=0.5, checks_right=False)
        data = load_study_data(s, "st")
        assert len(data.units) == 6 and len(data.answers) == 12 and len(data.check_answers) == 6
        rep = build_reports(s, ["st"])[0]
    assert rep.figures.figure("accuracy").value == pytest.approx(1.0)  # bo's wrong checks are not in it
    rows = {r[0]: dict(zip(COLS, r)) for r in rep.per_annotator.rows}
    assert rows["ana"]["attention checks"] == 1.0 and rows["ana"]["checks answered"] == 3
    assert rows["ana"]["flags"] is None
    assert rows["bo"]["attention checks"] == 0.0 and rows["bo"]["share too fast"] == 1.0
    assert rows["bo"]["fastest s/item"] == 0.5
    # the fastest answer is one recorded value, given as stored (it was rounded to 6.0, shown as 6.000); the
    # median is not rounded before the table formats it either (each of ana's answers took 6.041 s)
    assert rows["ana"]["fastest s/item"] == 6.041 and rows["ana"]["median s/item"] == pytest.approx(6.041)
    assert rows["bo"]["flags"] == "attention checks 0.00 < 0.8; too fast 1.00 > 0.2"


def test_excluding_an_annotator_changes_the_figures_and_keeps_the_rows(checked, capsys):
    with Store.open(checked, mode="create") as s:
        _answer_all(s, "ana", right=True, seconds=6.0, checks_right=True)
        _answer_all(s, "bo", right=False, seconds=6.0, checks_right=False)
        before = build_reports(s, ["st"])[0].figures.figure("accuracy").value
    assert before == pytest.approx(0.5)
    assert main(["study", "exclude-annotator", "st", "bo", "--db", checked]) == 1
    assert "--reason" in capsys.readouterr().err
    assert main(["study", "exclude-annotator", "st", "bo", "--reason", "failed attention checks",
                 "--db", checked]) == 0
    with Store.open(checked, mode="create") as s:
        rep = build_reports(s, ["st"])[0]
        n_rows = len(s.annotations(s.get_study("st").id))
    assert rep.figures.figure("accuracy").value == pytest.approx(1.0)
    rows = {r[0]: dict(zip(COLS, r)) for r in rep.per_annotator.rows}
    assert "excluded: failed attention checks" in rows["bo"]["flags"]
    assert n_rows == 18  # every row stays
    assert main(["study", "exclude-annotator", "st", "bo", "--undo", "--db", checked]) == 0
    with Store.open(checked, mode="create") as s:
        assert build_reports(s, ["st"])[0].figures.figure("accuracy").value == pytest.approx(0.5)


@pytest.mark.slow
async def test_a_check_looks_like_any_other_item_on_screen(checked):
    shapes: dict[bool, set] = {True: set(), False: set()}
    app = AnnotateApp(checked, "st", "ana", show_timer=False)
    async with app.run_test(size=(110, 34)) as pilot:
        for _ in range(9):
            view = app.session.view()
            is_check = bool(view.unit.extra.get("check"))
            panel = app.screen.query_one("#item")
            shape = tuple(sorted({type(w).__name__ for w in panel.query("*")} - {"ContextView", "ContextBlock"}))
            keys = str(app.screen.query_one("#keys").render())
            shapes[is_check].add((shape, keys))
            assert "check" not in str(app.screen.query_one("#header").render()).lower()
            await decide(pilot, "a")  # the item's conversation scrolled to its end first
    assert shapes[True] and shapes[True] <= shapes[False]


def test_checks_from_the_input_dataset_and_bad_requests(db_file, tmp_path):
    items, contexts = make_mcq_items(6)
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", items, contexts=contexts)
        create_study(s, StudySpec(name="a", task="mcq", datasets=["ds"], seed=1, sample=4, checks="2",
                                  annotators=["ana"], annotators_per_item=1))
        study = s.get_study("a")
        units = s.units(study.id)
        regular = {u.item_id for u in units if not u.extra.get("check")}
        checks = {u.item_id for u in units if u.extra.get("check")}
        assert len(regular) == 4 and len(checks) == 2 and not regular & checks
        with pytest.raises(PrefvalError, match="has 2 keyed items"):
            create_study(s, StudySpec(name="b", task="mcq", datasets=["ds"], seed=1, sample=4, checks="3"))
        s.import_items("people", "jsonl", [ItemIn(external_id=f"p{i}", kind="persona_record",
                                                  payload={"text": f"Person {i}"}) for i in range(3)])
        with pytest.raises(PrefvalError, match="has 0 keyed items a persona_filter study"):
            create_study(s, StudySpec(name="c", task="persona_filter", datasets=["people"], seed=1,
                                      checks="people"))
        assert [x.name for x in s.studies()] == ["a"]
        out = str(tmp_path / "ana.bundle")
        export_bundle(s, "a", "ana", out)
    conn = sqlite3.connect(out)
    extras = [json.loads(r[0]) for r in conn.execute("SELECT extra FROM study_items")]
    conn.close()
    assert len(extras) == 6 and all("check" not in e and "annotators" not in e for e in extras)


def test_status_of_a_study_has_the_same_per_annotator_table(checked, capsys):
    with Store.open(checked, mode="create") as s:
        _answer_all(s, "ana", right=True, seconds=6.0, checks_right=True)
        _answer_all(s, "bo", right=True, seconds=0.5, checks_right=False)
    assert main(["status", "st", "--format", "json", "--db", checked]) == 0
    doc = json.loads(capsys.readouterr().out)
    table = [t for t in doc["studies"][0]["tables"] if t["key"] == "per_annotator"][0]
    assert table["columns"] == COLS
    rows = {r[0]: dict(zip(COLS, r)) for r in table["rows"]}
    assert rows["bo"]["attention checks"] == 0.0 and rows["ana"]["attention checks"] == 1.0
    assert rows["bo"]["flags"] == "attention checks 0.00 < 0.8; too fast 1.00 > 0.2"
    assert main(["status", "st", "--db", checked]) == 0
    assert "attention checks 0.00 < 0.8" in capsys.readouterr().out


def test_cli_messages_show_names_and_reasons_as_text(checked, capsys, tmp_path):
    """A reason, study or annotator name holding a control sequence is printed as a visible escape, never sent raw
    to the terminal (exclude-annotator, --undo, bundle export)."""
    reason = "clears \x1b[2J the screen [/]"
    assert main(["study", "exclude-annotator", "st", "bo", "--reason", reason, "--db", checked]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert "clears \\x1b[2J the screen [/]" in out
    with sqlite3.connect(checked) as con:  # the reason itself is stored as given
        stored = [json.loads(r[0]) for r in con.execute("SELECT payload FROM events WHERE kind = 'annotator_excluded'")]
    assert [d["reason"] for d in stored] == [reason]
    # a new name holding a control sequence is refused (tests/test_names.py); a database from before that rule may
    # hold one: written into the file directly, it is still shown as text
    assert main(["study", "rename-annotator", "st", "ana", "a\x1b]52;c;eA==\x07na", "--db", checked]) == 1
    assert "\x1b" not in capsys.readouterr().err
    with sqlite3.connect(checked) as con:
        con.execute("UPDATE annotators SET name = ? WHERE name = 'ana'", ["a\x1b]52;c;eA==\x07na"])
    bundle = str(tmp_path / "a.bundle")
    assert main(["bundle", "export", "st", "--annotator", "a\x1b]52;c;eA==\x07na", "--out", bundle,
                 "--db", checked]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "a\\x1b]52;c;eA==\\x07na" in out


def _export(db: str, capsys, *extra: str) -> list[dict]:
    capsys.readouterr()
    assert main(["export", "st", "--db", db, *extra]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_export_lists_attention_checks_marked_with_their_correctness(checked, capsys):
    """ana answers her 9 units (3 checks right), bo his 6 other units only and flags one check unanswered with a
    note: 9 + 6 answer rows, 1 flagged row; 3 checks of ana's marked correct, bo's check row marked unanswered."""
    with Store.open(checked, mode="create") as s:
        _answer_all(s, "ana", right=True, seconds=6.0, checks_right=True)
        study = s.get_study("st")
        bo = s.ensure_annotator("bo")
        units = {u.id: u for u in s.units(study.id)}
        queue = s.assignments(study.id, bo.id)
        check_a = next(a for a in queue if units[a.unit_id].extra.get("check"))
        for a in queue:
            u = units[a.unit_id]
            if not u.extra.get("check"):
                s.add_annotation(AnnotationIn(study_id=study.id, unit_id=u.id, item_id=u.item_id,
                                              annotator_id=bo.id, assignment_id=a.id, status="answered",
                                              seconds=5.0, answer={"choice": 0, "letter": "A", "shown": "A",
                                                                   "cant_tell": False}))
        base = dict(study_id=study.id, unit_id=check_a.unit_id, item_id=units[check_a.unit_id].item_id,
                    annotator_id=bo.id, assignment_id=check_a.id)
        s.add_annotation(AnnotationIn(**base, status="flag"))
        s.add_annotation(AnnotationIn(**base, status="note", note="odd question"))
        check_item = s.get_items([units[check_a.unit_id].item_id])[units[check_a.unit_id].item_id].external_id
    rows = _export(checked, capsys)
    assert len(rows) == 16
    checks = [r for r in rows if r["attention_check"]]
    assert sorted((r["annotator"], r["status"], r["check_correct"]) for r in checks) == \
        [("ana", "answered", True)] * 3 + [("bo", "flagged", None)]
    flagged = next(r for r in checks if r["annotator"] == "bo")
    assert flagged["item"] == check_item and flagged["flagged"] is True and flagged["note"] == "odd question"
    assert all(r["check_correct"] is None for r in rows if not r["attention_check"])
    assert sum(not r["attention_check"] for r in rows) == 12
    history = _export(checked, capsys, "--history")
    assert len(history) == 9 + 6 + 2  # every log row: 15 answers, the flag and the note
    assert sum(r["attention_check"] for r in history) == 3 + 2
    assert sorted(r["status"] for r in history if r["annotator"] == "bo" and r["attention_check"]) == \
        ["flag", "note"]


def test_export_keeps_an_excluded_annotators_rows_marked(checked, capsys):
    """ana right everywhere, bo wrong everywhere, bo excluded: 9 + 9 rows, bo's 9 marked with the reason."""
    with Store.open(checked, mode="create") as s:
        _answer_all(s, "ana", right=True, seconds=6.0, checks_right=True)
        _answer_all(s, "bo", right=False, seconds=6.0, checks_right=False)
    assert main(["study", "exclude-annotator", "st", "bo", "--reason", "failed attention checks",
                 "--db", checked]) == 0
    rows = _export(checked, capsys)
    assert len(rows) == 18
    bo = [r for r in rows if r["annotator"] == "bo"]
    assert len(bo) == 9 and all(r["annotator_excluded"] is True for r in bo)
    assert {r["excluded_reason"] for r in bo} == {"failed attention checks"}
    assert sum(r["check_correct"] is False for r in bo) == 3
    assert all(r["annotator_excluded"] is False and r["excluded_reason"] is None
               for r in rows if r["annotator"] == "ana")
    assert main(["export", "st", "--format", "csv", "--db", checked]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 + 18 and "annotator_excluded" in lines[0] and "excluded_reason" in lines[0]
    assert len(_export(checked, capsys, "--history")) == 18


def _three_annotators_adjudicated(db: str) -> None:
    """4 MCQ items, ana/bo/cy on each; u1 adjudicated to option 2, u2 to option 0, u3 excluded.
    choices (ana, bo, cy): u0 (0, 0, 0); u1 (0, 1, 2); u2 (1, 1, 0); u3 (3, 2, 2)."""
    items, _ = make_mcq_items(n=4, with_context=False)
    choices = {"q0": (0, 0, 0), "q1": (0, 1, 2), "q2": (1, 1, 0), "q3": (3, 2, 2)}
    with Store.open(db, mode="create") as s:
        s.import_items("ds", "jsonl", items)
        create_study(s, StudySpec(name="adj", task="mcq", datasets=["ds"], seed=1, annotators=["ana", "bo", "cy"],
                                  annotators_per_item=3))
        study = s.get_study("adj")
        units = {u.id: u for u in s.units(study.id)}
        ext = {u.id: s.get_items([u.item_id])[u.item_id].external_id for u in units.values()}
        for k, who in enumerate(("ana", "bo", "cy")):
            ann = s.ensure_annotator(who)
            for a in s.assignments(study.id, ann.id):
                c = choices[ext[a.unit_id]][k]
                s.add_annotation(AnnotationIn(study_id=study.id, unit_id=a.unit_id, item_id=units[a.unit_id].item_id,
                                              annotator_id=ann.id, assignment_id=a.id, status="answered",
                                              seconds=5.0, answer={"choice": c, "letter": "ABCD"[c], "shown": "A",
                                                                   "cant_tell": False}))
        judy = s.ensure_annotator("judy")
        by_ext = {e: uid for uid, e in ext.items()}
        s.add_adjudication(study.id, by_ext["q1"], judy.id, "final", answer={"choice": 2, "letter": "C"})
        s.add_adjudication(study.id, by_ext["q2"], judy.id, "final", answer={"choice": 0, "letter": "A"})
        s.add_adjudication(study.id, by_ext["q3"], judy.id, "exclude", reason="ambiguous question")


def test_agreement_is_with_the_adjudicated_answer_where_there_is_one(db_file):
    """Against the final answer on u1, u2 and the majority of the others on u0 (u3 excluded, not counted):
    ana 0=0 yes, 0 vs 2 no, 1 vs 0 no -> 1/3; bo 1/3; cy 0=0, 2=2, 0=0 -> 3/3 (majority-only would give
    ana 1/2, cy 1/2 on other items)."""
    _three_annotators_adjudicated(db_file)
    with Store.open(db_file, mode="ro") as s:
        rep = build_reports(s, ["adj"])[0]
    rows = {r[0]: dict(zip(COLS, r)) for r in rep.per_annotator.rows}
    assert rows["ana"]["agreement with others"] == pytest.approx(1 / 3) and rows["ana"]["items compared"] == 3
    assert rows["bo"]["agreement with others"] == pytest.approx(1 / 3) and rows["bo"]["items compared"] == 3
    assert rows["cy"]["agreement with others"] == 1.0 and rows["cy"]["items compared"] == 3
    assert "adjudicated" in rep.per_annotator.note


def test_report_header_counts_final_answers_and_exclusions_apart(db_file):
    _three_annotators_adjudicated(db_file)
    with Store.open(db_file, mode="ro") as s:
        rep = build_reports(s, ["adj"])[0]
    assert rep.header["adjudicated"] == 2
    assert rep.header["excluded by adjudication"] == 1
    assert len(next(t for t in rep.figures.tables if t.key == "adjudication").rows) == 3
