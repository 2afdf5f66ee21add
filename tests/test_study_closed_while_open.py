"""A study archived or deleted in another shell while a screen is open on it (issue 12, trial F): the open
annotation screen went on writing answers into a study `study archive` had just made read-only. Now every write
of a screen opened before (answer, skip, note, flag, adjudication, a claim of more items) checks, in its write
transaction, that the study is still open; refused, nothing is written, and the screen says why and how to
undo it. A note refused (or released) is not lost: `n` opens it again on the item, and a release says it whole."""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from annotator.session import Session
from storage.errors import StudyClosed
from storage.store import Store
from tests.test_session_released import _pool, _rows, _shell, _shown
from tests.tui_helpers import decide, see_all


def _hint(app) -> str:
    return _shown(app.screen, "#hint")


@pytest.mark.slow
async def test_an_answer_after_archive_elsewhere_is_refused_then_saved_after_unarchive(db_file):
    _pool(db_file, n=6)
    app = AnnotateApp(db_file, "pool", "p1", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await decide(pilot, "a")
        _shell("study", "archive", "pool", "--db", db_file)
        await see_all(pilot)
        await pilot.press("b")
        await pilot.pause()
        assert app.session.index == 1  # still on the second item
        said = _hint(app)
        assert "NOT saved" in said and "archived" in said and "prefval study unarchive pool" in said
        assert [r.status for r in _rows(db_file, "p1")] == ["answered"]  # the first answer only
        _shell("study", "unarchive", "pool", "--db", db_file)
        await pilot.press("b")
        await pilot.pause()
        assert app.session.index == 2
        await pilot.press("q")
    rows = _rows(db_file, "p1")
    assert [(r.status, r.answer["shown"]) for r in rows] == [("answered", "A"), ("answered", "B")]


@pytest.mark.slow
async def test_a_skip_note_and_flag_after_delete_elsewhere_are_refused_and_the_note_kept(db_file):
    _pool(db_file, n=6)
    app = AnnotateApp(db_file, "pool", "p1", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        _shell("study", "delete", "pool", "--db", db_file)  # no answer yet: allowed
        await pilot.press("n", *"see item 3", "enter")
        await pilot.pause()
        assert "NOT saved" in _hint(app) and "deleted" in _hint(app)
        await pilot.press("n")  # the note field opens with the text typed, to copy or keep
        await pilot.pause()
        assert app.screen.query_one("#note").value == "see item 3"
        await pilot.press("escape", "m", "s")
        await pilot.pause()
        assert app.session.index == 0 and not app.session.is_flagged()
        await pilot.press("q")
    with Store.open(db_file, mode="ro") as s:
        assert s.studies(include_archived=True) == []
        assert s.db.execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == 0
        assert s.db.execute("SELECT COUNT(*) FROM assignments").fetchone()[0] == 0  # nothing claimed again


def test_a_claim_on_a_study_archived_meanwhile_claims_nothing(db_file):
    from annotator.study_setup import claim_assignments

    _pool(db_file, n=30)  # 30 items, 1 annotator each, claimed in batches of 20
    with Store.open(db_file, mode="rw") as s:
        assert len(Session(s, "pool", "p1").queue) == 20
        study, p1 = s.get_study("pool"), s.find_annotator("p1")
        s.set_study_archived("pool")  # as another process would, after the session read the study
        assert claim_assignments(s, study, p1) == 0
        assert s.queue_length(study.id, p1.id) == 20
        s.set_study_archived("pool", False)
        assert claim_assignments(s, study, p1) == 10  # the 10 left, once open again
        assert s.queue_length(study.id, p1.id) == 30


@pytest.mark.slow
async def test_an_adjudication_after_archive_elsewhere_is_refused(db_file):
    from annotator.screens.adjudicate import AdjudicateApp
    from tests.test_adjudication import _adjudications, answered_mcq_study

    answered_mcq_study(db_file).close()
    app = AdjudicateApp(db_file, "st", "judy")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        _shell("study", "archive", "st", "--db", db_file)
        await see_all(pilot)
        await pilot.press("a")
        await pilot.pause()
        said = _hint(app)
        assert "NOT saved" in said and "prefval study unarchive st" in said
        await pilot.press("q")
    assert _adjudications(db_file, "st") == []


def test_the_store_refuses_an_annotation_on_a_deleted_study(db_file):
    _pool(db_file, n=4)
    with Store.open(db_file, mode="rw") as s:
        p1 = Session(s, "pool", "p1")
        pending = p1.prepare("answered", answer={"shown": "A", "index": 0})
        s.delete_study("pool")
        with pytest.raises(StudyClosed, match="deleted"):
            p1.write(s, pending)
        assert s.db.execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == 0


@pytest.mark.slow
async def test_a_note_refused_by_a_release_is_said_whole(db_file):
    from annotator.screens.summary import SummaryScreen

    _pool(db_file, n=6)
    app = AnnotateApp(db_file, "pool", "p1", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await decide(pilot, "a")
        # typed before the release, entered after it
        await pilot.press("n", *"ask Bo whether option B means the same as A")
        _shell("study", "release", "pool", "--annotator", "p1", "--db", db_file)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, SummaryScreen)  # the answered item stays p1's; nothing open is left
        said = _shown(app.screen, "#summary")
        assert 'NOT saved: your note "ask Bo whether option B means the same as A" on the item that was #2' in said
    assert [r.status for r in _rows(db_file, "p1")] == ["answered"]


@pytest.mark.slow
def test_prefval_annotate_lists_what_was_refused_as_it_ends(db_file):
    """End to end on a pseudo-terminal: the note refused on an archived study, still unsaved at q, is printed with
    its text when `prefval annotate` ends (exit 1); the answer refused, then given again after unarchive, is not."""
    from tests.test_quit_saves import _Terminal, _study

    _study(db_file)
    term = _Terminal(db_file)
    try:
        assert term.read_until(b"item 1/4"), term.out[-2000:]
        _shell("study", "archive", "st", "--db", db_file)
        term.send(b"n")
        assert term.read_until(b"enter saves"), term.out[-2000:]
        term.send(b"check the 2nd option\r")
        assert term.read_until(b"NOT saved"), term.out[-2000:]
        term.out = b""
        term.send(b"b")
        assert term.read_until(b"answer"), term.out[-2000:]  # the refusal's line, now naming the answer
        _shell("study", "unarchive", "st", "--db", db_file)
        term.send(b"b")
        assert term.read_until(b"item 2/4"), term.out[-2000:]
        term.out = b""
        term.send(b"q")
        assert term.proc.wait(timeout=60) == 1
        assert term.read_until(b"NOT saved: your note \"check the 2nd option\" on item #1: study 'st' was archived "
                               b"after this screen opened"), term.out[-3000:]
        assert b"NOT saved: your answer" not in term.out  # given again after unarchive: saved
    finally:
        term.close()
    with Store.open(db_file, mode="ro") as s:
        assert [(r.status, r.answer["shown"]) for r in s.annotations(s.get_study("st").id)] == [("answered", "B")]


@pytest.mark.slow
def test_an_annotator_released_from_a_study_claims_again(db_file):
    """Newcomer check: after `study release --annotator cy` gave all of cy's untouched items back, cy could never
    claim in the study again ("every item already has its annotators", though every item had open slots)."""
    _pool(db_file, n=6)  # 6 items, 1 annotator each
    with Store.open(db_file, mode="rw") as s:
        first = Session(s, "pool", "cy")
        assert len(first.queue) == 6
        seeds = {a.unit_id: a.shuffle_seed for a in first.queue}
    _shell("study", "release", "pool", "--annotator", "cy", "--db", db_file)
    with Store.open(db_file, mode="rw") as s:
        study = s.get_study("pool")
        assert s.queue_length(study.id, s.find_annotator("cy").id) == 0
        again = Session(s, "pool", "cy")
        assert len(again.queue) == 6  # the same 6 items, claimed again, in the same option order
        assert {a.unit_id: a.shuffle_seed for a in again.queue} == seeds
        assert s.queue_length(study.id, s.find_annotator("cy").id) == 6
        assert s.db.execute("SELECT SUM(open_slots) FROM study_items WHERE study_id = ?", [study.id]).fetchone()[0] == 0


@pytest.mark.parametrize("command", ["archive", "delete"])
@pytest.mark.slow
async def test_no_session_event_is_written_after_archive_or_delete_elsewhere(db_file, command):
    """Second newcomer check: the refused keys wrote nothing, but the visit and session_end events of the quit did
    (with a deleted study's id: rows of no study), and an archived item's visit then added to its answer."""
    _pool(db_file, n=6)
    app = AnnotateApp(db_file, "pool", "p1", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        with Store.open(db_file, mode="ro") as s:
            before = s.db.execute("SELECT COUNT(*) FROM events").fetchone()[0]  # session_start, study created
        _shell("study", command, "pool", "--db", db_file)
        await pilot.press("right_square_bracket", "u", "q")  # two visits ended, then the session's end
        await pilot.pause()
    with Store.open(db_file, mode="ro") as s:
        kinds = [r[0] for r in s.db.execute("SELECT kind FROM events ORDER BY at, rowid")]
    assert len(kinds) == before + 1 and kinds[-1] == f"study_{command}d"  # only the command's own event


@pytest.mark.slow
async def test_the_refusal_keeps_to_two_rows_at_80x24(db_file):
    """Second newcomer check: the refusal began with the database's path and took 3 rows at 80x24, where the hint
    line keeps to 2 (below 40 rows); the screen is on that file, so the line leaves the path out."""
    _pool(db_file, n=6)
    app = AnnotateApp(db_file, "pool", "p1", show_timer=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await see_all(pilot)
        _shell("study", "archive", "pool", "--db", db_file)
        await pilot.press("n", *"a note", "enter")
        await pilot.pause()
        hint = app.screen.query_one("#hint")
        assert _hint(app).startswith("the note was NOT saved: study 'pool' was archived")
        assert db_file not in _hint(app) and hint.size.height <= 2
