"""Saving an annotation session's last writes, without widgets: the background writer of decisions that met a busy
database, the session-closing events (the visit to the item on screen, "session_end"), and the rescue file that
keeps what is not written yet (annotator/rescue.py). The annotation screen (annotator/screens/annotate.py) and the
app (annotator/app.py) call it; they keep the keys, the messages and the timers, and this keeps the files.

The rules it holds (README, "Quitting"): no decision is ever dropped; while a quit waits for the database a copy
of what is unwritten sits in a rescue file, removed once it is written; what is still unwritten when the wait
ends stays there, and the note returned says where (the app prints it on stderr, exit code 1). No Textual here.
"""
from __future__ import annotations

import asyncio
from concurrent.futures import Future
from pathlib import Path
from typing import Callable, Iterable

from storage.errors import AssignmentReleased, DatabaseBusy, PrefvalError
from storage.models import Event

__all__ = ["SessionSaver", "log_or_rescue"]


def _unwritten(pendings: Iterable) -> list:
    """(row, id) of the decisions among pendings (annotator.session.PendingDecision) whose row is not in the file."""
    return [(p.row, p.row_id) for p in pendings if p.row is not None and p.committed is None]


def log_or_rescue(store, events: list[Event]) -> str | None:
    """Write the session's closing events now (Store.log_events); when the database refuses them (PrefvalError:
    busy past its timeout, a full disk, a read-only file), keep them in a rescue file and return the note that
    says so ("NOT saved in <db>: the session's end (<why>); kept in <path>"); None when they were written."""
    from annotator.rescue import write_rescue
    from annotator.safe_text import visible

    try:
        store.log_events(events)
    except PrefvalError as exc:
        try:
            kept = f"kept in {write_rescue(store.path, [], events)}"
        except OSError as err:
            kept = f"no file could be written to keep it either ({err})"
        return f"NOT saved in {store.path}: the session's end ({visible(exc, layout=False)}); {kept}"
    return None


class SessionSaver:
    """The writes an annotation session's screen hands off: a decision retried off the event loop while another
    program holds the write lock (submit_decision), the closing events (close_now, close_in_background), the
    rescue file kept meanwhile (keep_in_rescue, drop_rescue, give_up) and the end of all of them once the screen
    is gone (finish_after_exit). One per screen; session: annotator.session.Session (its store's path names the
    database and the rescue file)."""

    def __init__(self, session) -> None:
        self.session = session
        self.writer = None  # annotator.writer.BackgroundWriter, opened on the first busy write
        self.rescue: Path | None = None  # the rescue file keeping what a waiting quit has not written yet
        self.save_future: Future | None = None  # the decision's background write
        self.close_future: Future | None = None  # the closing events' background write
        self.closing_events: list[Event] = []

    @property
    def path(self) -> str:
        return self.session.store.path

    def background_writer(self):
        """The BackgroundWriter (its own connection, retried while the file is busy), opened on first use."""
        from annotator.writer import BackgroundWriter

        if self.writer is None:
            self.writer = BackgroundWriter(self.path)
        return self.writer

    def submit_decision(self, pending, on_busy: Callable[[int], None]) -> Future:
        """Write a prepared decision through the background writer (Session.write); on_busy(attempt) is called
        from the writer's thread at each busy retry. The Future is kept: finish_after_exit waits for it."""
        self.save_future = self.background_writer().submit(lambda store: self.session.write(store, pending), on_busy)
        return self.save_future

    def close_now(self, first_try_ms: int) -> bool:
        """Write the session's closing events at once, waiting at most first_try_ms for another writer (10 s for
        an in-memory database, which no second connection sees). True when written or when there were none; False
        when the file was busy: they are then in the rescue file and submitted to the background writer
        (close_future). Raises PrefvalError for what retrying cannot fix (give_up then keeps them)."""
        s = self.session
        events = s.closing_events()
        self.closing_events = events
        if not events:
            return True
        try:
            with s.store.busy_timeout(first_try_ms if self.path != ":memory:" else 10_000):
                s.store.log_events(events)
        except DatabaseBusy:
            self.keep_in_rescue([], events)
            self.close_future = self.background_writer().submit(lambda store: store.log_events(events))
            return False
        return True

    async def close_in_background(self) -> None:
        """Wait for the closing events' background write (close_now returned False), then drop the rescue file.
        Raises PrefvalError when it failed (the rescue file stays; give_up says where)."""
        await asyncio.wrap_future(self.close_future)
        self.close_future = None
        self.drop_rescue()

    def stop_retrying(self) -> None:
        """The write waiting for the lock gives up after its current attempt (the quit's time limit passed)."""
        if self.writer is not None:
            self.writer.stop_retrying()

    def close_writer(self) -> None:
        """Stop the background writer (a write waiting for the lock gives up after its current attempt)."""
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def keep_in_rescue(self, pendings, events) -> None:
        """Keep the rows of pending decisions and events not written yet in a rescue file (annotator/rescue.py),
        replacing the one kept before (what it held and is still unsaved is given again by the caller). When no
        file can be written, the quit still waits for the database."""
        from annotator.rescue import write_rescue

        rows = _unwritten(pendings)
        old, self.rescue = self.rescue, None
        if rows or events:
            try:
                self.rescue = write_rescue(self.path, rows, list(events))
            except OSError:
                self.rescue = None
        if old is not None:
            old.unlink(missing_ok=True)

    def drop_rescue(self) -> None:
        """Everything was written: the rescue file kept meanwhile goes."""
        if self.rescue is not None:
            self.rescue.unlink(missing_ok=True)
            self.rescue = None

    def give_up(self, pendings, events, why: str) -> str:
        """The rows of pendings and the events could not be written (the limit passed, or an error that retrying
        cannot fix): keep them in a rescue file and return the note the app prints as it ends ("NOT saved in
        <db>: 1 decision and the session's end (<why>); kept in <path>")."""
        from annotator.rescue import write_rescue

        rows = _unwritten(pendings)
        old, self.rescue = self.rescue, None
        what = " and ".join(x for x in ((f"{len(rows)} decision" + ("s" if len(rows) != 1 else "")) if rows else "",
                                        "the session's end" if events else "") if x)
        try:
            path = write_rescue(self.path, rows, list(events))
        except OSError as exc:
            return (f"NOT saved in {self.path}: {what} ({why}); no file could be written to keep "
                    f"{'them' if rows and events else 'it'} either ({exc})")
        if old is not None and old != path:
            old.unlink(missing_ok=True)
        return f"NOT saved in {self.path}: {what} ({why}); kept in {path}"

    def give_up_decision(self, pending, why: str, with_closing_events: bool = True) -> str:
        """give_up for a decision whose write failed: its seconds are in the row kept, so the closing events
        (when with_closing_events) carry no visit for it (Session.visit_decided)."""
        self.session.visit_decided()
        return self.give_up([pending], self.session.closing_events() if with_closing_events else [], why)

    async def finish_after_exit(self, pending) -> str | None:
        """After a signal closed the screen while a write was waiting for a busy database: wait for the decision's
        write (pending: the decision being saved, or None; then recorded in the session, so that its visit is not
        counted twice) and write the closing events, each retried while the file is busy; the caller bounds the
        wait (stop_retrying). Returns the note of what could not be written and is kept in a rescue file (None when
        all was written). The background writer is closed at the end."""
        from annotator.safe_text import visible

        try:
            if pending is not None and self.save_future is not None:
                try:
                    await asyncio.wrap_future(self.save_future)
                except AssignmentReleased:  # a study command took the item meanwhile: not saved, by design
                    pass
                except PrefvalError as exc:
                    return self.give_up_decision(pending, visible(exc, layout=False))
                else:
                    self.session.apply(pending)
                    self.session.visit_decided()  # the item it moved on to was never on screen: no visit
            if self.close_future is None:
                events = self.session.closing_events()
                if events:
                    self.keep_in_rescue([], events)
                    self.close_future = self.background_writer().submit(lambda store: store.log_events(events))
                    self.closing_events = events
            if self.close_future is not None:
                try:
                    await asyncio.wrap_future(self.close_future)
                except PrefvalError as exc:
                    return self.give_up([], self.closing_events, visible(exc, layout=False))
            self.drop_rescue()
            return None
        finally:
            self.close_writer()
