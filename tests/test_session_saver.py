"""annotator/saving.py without a screen: the closing events written at once, or, while another program holds the
write lock, kept in a rescue file and written by the background writer once it is free (the rescue file then
goes); the note of what is kept when the database refuses them."""
from __future__ import annotations

import sqlite3

from annotator.rescue import RESCUE_INFIX, read_rescue
from annotator.saving import SessionSaver, log_or_rescue
from annotator.session import Session
from storage.store import Store


class _Clock:
    """A monotonic clock the test moves by hand (Session's clock)."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _rescues(db_file) -> list:
    from pathlib import Path

    p = Path(db_file)
    return sorted(p.parent.glob(f"{p.name}{RESCUE_INFIX}*"))


def _kinds(db_file) -> list[str]:
    con = sqlite3.connect(db_file)
    try:
        return [k for (k,) in con.execute("SELECT kind FROM events ORDER BY at, rowid")]
    finally:
        con.close()


def test_closing_events_written_at_once_when_the_file_is_free(mcq_study):
    with Store.open(mcq_study, mode="rw") as s:
        saver = SessionSaver(Session(s, "st", "ana", clock=_Clock()))
        assert saver.close_now(first_try_ms=50) is True
        assert [e.kind for e in saver.closing_events] == ["session_end"]  # no time on the item: no visit
        assert saver.close_now(first_try_ms=50) is True and saver.closing_events == []  # once only
    assert _kinds(mcq_study)[-1] == "session_end" and _kinds(mcq_study).count("session_end") == 1
    assert _rescues(mcq_study) == []


async def test_a_busy_file_keeps_them_in_a_rescue_file_until_the_writer_gets_through(mcq_study):
    with Store.open(mcq_study, mode="rw") as s:
        clock = _Clock()
        saver = SessionSaver(Session(s, "st", "ana", clock=clock))
        clock.t += 4.5  # reading the first item
        lock = sqlite3.connect(mcq_study, isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")
        try:
            assert saver.close_now(first_try_ms=20) is False
            (kept,) = _rescues(mcq_study)
            kept_events = read_rescue(kept)[1]
            assert [e.kind for e in kept_events] == ["visit", "session_end"]
            assert kept_events[0].payload["seconds"] == 4.5
            assert "session_end" not in _kinds(mcq_study)[-1:]
        finally:
            lock.execute("ROLLBACK")
            lock.close()
        await saver.close_in_background()
        saver.close_writer()
    assert _kinds(mcq_study)[-2:] == ["visit", "session_end"] and _kinds(mcq_study).count("session_end") == 1
    assert _rescues(mcq_study) == []  # written: the copy went


def test_log_or_rescue_says_where_the_refused_events_are(mcq_study):
    with Store.open(mcq_study, mode="rw") as s:
        events = Session(s, "st", "ana", clock=_Clock()).closing_events()
        lock = sqlite3.connect(mcq_study, isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")
        try:
            with s.busy_timeout(0):
                note = log_or_rescue(s, events)
        finally:
            lock.execute("ROLLBACK")
            lock.close()
        (kept,) = _rescues(mcq_study)
        assert note.startswith(f"NOT saved in {mcq_study}: the session's end (") and note.endswith(f"; kept in {kept}; put back with: prefval recover {kept}")
        assert [e.id for e in read_rescue(kept)[1]] == [e.id for e in events]
        assert log_or_rescue(s, []) is None


def test_a_decision_written_as_the_screen_closes_is_counted(mcq_study):
    """ctrl+q while "saving…": the writer's last attempt made it as it closed; the command's summary then said one
    answer fewer than the file held (a newcomer's "2/5 answered" with 3 in the database). The controller counts it
    in the session when the screen goes."""
    from annotator.saving import SaveController

    class Host:  # a screen that has gone: nothing to draw, nothing to note
        def keep_note(self, note):
            raise AssertionError(note)

    with Store.open(mcq_study, mode="rw") as s:
        session = Session(s, "st", "ana", clock=_Clock())
        before = session.progress()[0]
        pending = session.prepare("answered", {"choice": 0, "letter": "A", "shown": "A", "cant_tell": False},
                                  advance=True)
        saves = SaveController(session, Host())
        saves.saving = pending  # kept while the file was busy ...
        session.write(s, pending)  # ... and written by the writer's last attempt as it closed
        saves.screen_gone(already_noted=False)
        assert saves.saving is None and session.progress()[0] == before + 1
