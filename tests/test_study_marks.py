"""Items an annotator marked without answering them under `study release|unassign|rename-annotator` (issue 12,
newcomer check: `study release` counted an item that was only flagged "needs review" as untouched, so it went back to
the pool, and to the next annotator, while the flag stayed on it under the first).

The rule, for every mark an annotator can leave without an answer (a skip, a partial answer, a flag not taken back,
a note): `release` keeps such items with their annotator and counts them by kind; `--include-marked` releases them
too and says so; `unassign` and `rename-annotator` take them with the other unanswered items and say how many were
marked; a mark is never moved or deleted (it stays in the log under the annotator who left it)."""
from __future__ import annotations

import json

import pytest

from annotator.cli import main
from annotator.session import Session
from annotator.study_setup import create_study
from annotator.tasks.base import Decision, StudySpec
from storage.store import Store
from tests.conftest import make_mcq_items

ANSWER = {"choice": 0, "letter": "A", "shown": "A", "cant_tell": False}
MARKS = "1 skipped, 1 partly answered, 1 flagged 'needs review', 1 with a note"


@pytest.fixture
def marked(db_file) -> dict[str, str]:
    """Study st: 7 MCQ items, one annotator per item, all held by cyy, who (in their queue order) answers the
    first (and flags it), skips the 2nd, flags the 3rd, writes a note on the 4th, flags and unflags the 5th (no mark
    left), leaves a partial answer on the 6th and never opens the 7th. Returns queue position -> unit id, as
    "p0".."p6"."""
    items, _ = make_mcq_items(7, with_context=False)
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", items)
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=3, annotators_per_item=1,
                                  annotators=["cyy"]))
        sess = Session(s, "st", "cyy")
        units = {f"p{i}": sess.queue.unit_id(i) for i in range(7)}
        sess.decide(Decision(dict(ANSWER)))  # p0 answered, then on p1
        sess.back()
        sess.flag()  # p0 answered and flagged: answered, so never released anyway
        sess.go(1)
        sess.skip()  # p1 skipped -> p2
        sess.flag()  # p2 flagged only
        sess.go(3)
        sess.note("the options repeat each other")  # p3 noted only
        sess.go(4)
        sess.flag()
        sess.flag()  # p4 flagged, then the flag taken back: no mark
        sess.go(5)
        sess.decide(Decision(dict(ANSWER), complete=False))  # p5 partial
        sess.close()
    return units


def _live(db: str, who: str) -> set[str]:
    with Store.open(db, mode="ro") as s:
        a = s.find_annotator(who)
        return {x.unit_id for x in s.assignments(s.get_study("st").id, a.id)} if a else set()


def _rows(db: str) -> list[tuple[str, str, str]]:
    """Every annotation row as (annotator, unit, status), in log order."""
    with Store.open(db, mode="ro") as s:
        names = {a.id: a.name for a in s.annotators()}
        return [(names[a.annotator_id], a.unit_id, a.status) for a in s.annotations(s.get_study("st").id)]


def _run(capsys, *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return capsys.readouterr().out.strip()


def test_marked_units_are_the_unanswered_ones_with_a_mark(db_file, marked):
    with Store.open(db_file, mode="ro") as s:
        got = s.marked_units(s.get_study("st").id, s.find_annotator("cyy").id)
    assert got == {"skipped": {marked["p1"]}, "partial": {marked["p5"]}, "flagged": {marked["p2"]},
                   "noted": {marked["p3"]}}


def test_release_keeps_every_marked_item_and_counts_them(db_file, marked, capsys):
    log = _rows(db_file)
    out = _run(capsys, "study", "release", "st", "--db", db_file)
    # by hand: p4 (flag taken back) and p6 (never opened) are untouched; p0 answered; p1, p2, p3, p5 marked
    assert out == (f"cyy: 2 untouched item(s) back to the pool; keeps 1 answered and 4 marked without an answer "
                   f"({MARKS}: still theirs to answer; --include-marked releases them too)")
    assert _live(db_file, "cyy") == {marked[p] for p in ("p0", "p1", "p2", "p3", "p5")}
    assert _rows(db_file) == log  # nothing written to the log
    # someone who opens the study now claims exactly the two untouched items, never a flagged or noted one
    with Store.open(db_file, mode="rw") as s:
        bo = Session(s, "st", "bo")
        assert {bo.queue.unit_id(i) for i in range(len(bo.queue))} == {marked["p4"], marked["p6"]}


def test_release_include_marked_says_the_marks_stay_in_the_log(db_file, marked, capsys):
    log = _rows(db_file)
    out = _run(capsys, "study", "release", "st", "--annotator", "cyy", "--include-marked", "--db", db_file)
    assert out == (f"cyy: 6 unanswered item(s) back to the pool (4 of them marked by 'cyy': {MARKS}; the marks stay "
                   "in the log under 'cyy'); keeps 1 answered item(s)")
    assert _live(db_file, "cyy") == {marked["p0"]}
    assert _rows(db_file) == log  # the flag on p2 and the note on p3 are still there, under cyy
    assert ("cyy", marked["p2"], "flag") in log and ("cyy", marked["p3"], "note") in log
    # and the export still lists the flag on the released item, as cyy's
    got = [json.loads(line) for line in _run(capsys, "export", "st", "--format", "jsonl", "--db", db_file).splitlines()]
    flagged = [(r["annotator"], r["status"]) for r in got if r["flagged"] and r["status"] != "answered"]
    assert flagged == [("cyy", "flagged")]


def test_unassign_takes_marked_items_and_counts_them(db_file, marked, capsys):
    log = _rows(db_file)
    out = _run(capsys, "study", "unassign", "st", "--annotator", "cyy", "--db", db_file)
    assert out == (f"cyy: 6 unanswered item(s) back to the pool (4 of them marked by 'cyy': {MARKS}; the marks stay in "
                   "the log under 'cyy'); 1 answered item(s) stay theirs (answers are never deleted)")
    assert _live(db_file, "cyy") == {marked["p0"]}
    assert _rows(db_file) == log


@pytest.mark.slow
def test_rename_annotator_moves_marked_items_and_counts_them(db_file, marked, capsys):
    with Store.open(db_file, mode="rw") as s:
        s.ensure_annotator("cy")  # cy exists: cyy's items move (cyy is not renamed)
    log = _rows(db_file)
    out = _run(capsys, "study", "rename-annotator", "st", "cyy", "cy", "--db", db_file)
    assert out == (f"6 unanswered item(s) of 'cyy' moved to 'cy' (4 of them marked by 'cyy': {MARKS}; the marks stay "
                   "in the log under 'cyy'); 'cyy' keeps 1 answered item(s) (answers are never moved or deleted)")
    assert _live(db_file, "cyy") == {marked["p0"]}
    assert _live(db_file, "cy") == {marked[f"p{i}"] for i in range(1, 7)}
    assert _rows(db_file) == log
    with Store.open(db_file, mode="ro") as s:  # cy starts them afresh: no mark of cyy's is cy's
        st, cy = s.get_study("st"), s.find_annotator("cy")
        assert s.marked_units(st.id, cy.id) == {"skipped": set(), "partial": set(), "flagged": set(), "noted": set()}
        assert s.queue_counts(st.id, cy.id) == {"total": 6, "answered": 0, "skipped": 0, "partial": 0, "open": 6,
                                                "flagged": 0, "noted": 0}


def test_release_of_items_another_holder_has_keeps_counts_per_annotator(db_file, capsys):
    # two annotators, two items each (k=1, round robin); ana flags her first item, bo notes his second
    items, _ = make_mcq_items(4, with_context=False)
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", items)
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=3, annotators_per_item=1,
                                  annotators=["ana", "bo"]))
        ana = Session(s, "st", "ana")
        ana.flag()
        bo = Session(s, "st", "bo")
        bo.go(1)
        bo.note("typo in option c")
    out = _run(capsys, "study", "release", "st", "--db", db_file).splitlines()
    assert out == ["ana: 1 untouched item(s) back to the pool; keeps 0 answered and 1 marked without an answer "
                   "(1 flagged 'needs review': still theirs to answer; --include-marked releases them too)",
                   "bo: 1 untouched item(s) back to the pool; keeps 0 answered and 1 marked without an answer "
                   "(1 with a note: still theirs to answer; --include-marked releases them too)"]
    assert len(_live(db_file, "ana")) == len(_live(db_file, "bo")) == 1
