"""Saving a screen's decisions and quitting, without widgets: one controller that the annotation screen
(annotator/screens/annotate.py) and the adjudication screen (annotator/screens/adjudicate.py) both use.

SaveController holds the whole path of a decision from its key to the file: the write tried at once (waiting at most
FIRST_TRY_MS for another annotator's write), else kept and retried off the event loop by a background writer while
the screen says "saving… database busy" and a copy of it is kept in a rescue file until it is written; and the whole quit (`q`, SIGHUP, SIGTERM): no decision is ever dropped,
the quit waits for the one being saved, then writes the session's closing events (the visit to the item on screen,
"session_end"), at most QUIT_SAVE_LIMIT seconds, and all along a copy of what is unwritten sits in a rescue file
(annotator/rescue.py), removed once it is written; what is still unwritten when the wait ends stays there, and the
note kept says where (the app prints it on stderr, exit code 1). SessionSaver below it keeps the files (background
writer, closing events, rescue file).

The screens keep the widgets, the keys and the messages: the controller tells them what happened through the
methods of SaveHost (saved, released, not_saved, "saving…"), and reaches the app (exit, a notice, the unsaved note)
only through them. No Textual here.

The session a controller saves for is annotator.session.Session or annotator.adjudication.AdjudicationSession:
both have `store`, `write(store, pending)` (retry-safe; raises DatabaseBusy, AssignmentReleased or PrefvalError),
`apply(pending)` (after the write; returns True when another window had changed the unit meanwhile),
`closing_events()` and `visit_decided()`; pending: PendingDecision or PendingAdjudication (`unwritten()` gives
what a rescue file must keep of it).
"""
from __future__ import annotations

import asyncio
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable, Coroutine, Iterable, Protocol

from annotator.writer import FIRST_TRY_MS
from storage.errors import AssignmentReleased, DatabaseBusy, PrefvalError
from storage.models import Event

__all__ = ["QUIT_SAVE_LIMIT", "SaveController", "SaveHost", "SessionSaver", "log_or_rescue"]

# how long a quit (q, SIGHUP, SIGTERM) waits for a database whose write lock another program holds, in seconds: far
# beyond any realistic lock (big imports commit every 5,000 rows, a few seconds); what is still unwritten then is
# kept in a rescue file (annotator/rescue.py), as it is all along the wait
QUIT_SAVE_LIMIT = 1800.0


def _unwritten(pendings: Iterable) -> tuple[list, list]:
    """What a rescue file keeps of the decisions among pendings not in the file yet: (annotation rows as (row, id,
    decided_at), adjudication rows as dicts), from each pending's unwritten() ("annotations" or "adjudications",
    the row)."""
    rows, adjudications = [], []
    for p in pendings:
        kept = p.unwritten()
        if kept is not None:
            (rows if kept[0] == "annotations" else adjudications).append(kept[1])
    return rows, adjudications


def _kept_in(path) -> str:
    """The end of a NOT-saved note: where the rows went and the command that puts them back."""
    return f"kept in {path}; put back with: prefval recover {path}"


def _count(rows: list, adjudications: list) -> str:
    n = len(rows) + len(adjudications)
    return f"{n} decision" + ("s" if n != 1 else "") if n else ""


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
            kept = _kept_in(write_rescue(store.path, [], events))
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

        rows, adjudications = _unwritten(pendings)
        old, self.rescue = self.rescue, None
        if rows or adjudications or events:
            try:
                self.rescue = write_rescue(self.path, rows, list(events), adjudications)
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

        rows, adjudications = _unwritten(pendings)
        old, self.rescue = self.rescue, None
        decisions = _count(rows, adjudications)
        what = " and ".join(x for x in (decisions, "the session's end" if events else "") if x)
        try:
            path = write_rescue(self.path, rows, list(events), adjudications)
        except OSError as exc:
            return (f"NOT saved in {self.path}: {what} ({why}); no file could be written to keep "
                    f"{'them' if decisions and events else 'it'} either ({exc})")
        if old is not None and old != path:
            old.unlink(missing_ok=True)
        return f"NOT saved in {self.path}: {what} ({why}); {_kept_in(path)}"

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


class SaveHost(Protocol):
    """What a screen does for its SaveController: the messages, the widgets and the app. Every method is called
    on the event loop (show_saving too: the controller hops from the writer's thread)."""

    def show_saving(self, attempt: int) -> None:
        """Say "saving… database busy" (attempt: 0 on the first busy try, then each retry of the writer)."""

    def saving_ended(self) -> None:
        """The background write ended without saving (released, or refused): take the "saving…" line back."""

    async def saved(self, pending: Any, conflict: bool) -> None:
        """pending is committed and applied to the session (conflict: another window had changed the unit
        meanwhile): draw what follows."""

    async def released(self, pending: Any) -> None:
        """A study command released pending's item meanwhile: nothing was saved; go on."""

    def not_saved(self, pending: Any, exc: PrefvalError) -> None:
        """pending was NOT saved, for a reason that retrying cannot fix (a full disk, the study archived): say so
        on the screen, which stays where it is."""

    def warn(self, text: str) -> None:
        """A notice that the quit waits for the database."""

    def start(self, work: Coroutine) -> None:
        """Run work on the event loop, tied to the screen (a Textual worker)."""

    def from_thread(self, fn: Callable[..., None], *args: Any) -> None:
        """Call fn(*args) on the event loop from another thread (raises when the app is closing)."""

    def quitting(self) -> bool:
        """Whether the app has begun quitting."""

    def begin_quit(self) -> None:
        """From now on no key acts (annotator.crash.QuitGuard)."""

    def exit(self, return_code: int = 0) -> None:
        """End the app (App.exit)."""

    def keep_note(self, note: str) -> None:
        """What could not be written and where it is kept: the app prints it on stderr as it ends (exit code 1)."""


class SaveController:
    """A screen's saving and quitting: save() commits a prepared decision at once or keeps it and retries it in the
    background (`saving` is then the decision, and the screen refuses a second one meanwhile); quit() waits for
    it, writes the session's closing events and ends the app; finish_after_exit() and screen_gone() end what a
    signal, ctrl+c or a crash left waiting. session: see the module's docstring; host: the screen (SaveHost).
    Rules and limits: module docstring (QUIT_SAVE_LIMIT seconds at most; a rescue file all along)."""

    def __init__(self, session, host: SaveHost) -> None:
        self.session = session
        self.host = host
        self.files = SessionSaver(session)  # the background writer, the closing events and the rescue file
        self.saving = None  # a decision waiting for a busy database (kept, retried)
        self.quit_after_save = False  # quitting waits for the decision being saved
        self.hung_up: str | None = None  # the signal (SIGHUP, SIGTERM) that began the quit
        self._limit: asyncio.TimerHandle | None = None  # QUIT_SAVE_LIMIT's timer of a quit waiting for the database

    # ---- saving ------------------------------------------------------------------------------------------
    async def save(self, pending) -> None:
        """Commit a prepared decision, then tell the host (saved, released or not_saved). Tried at once, waiting at
        most FIRST_TRY_MS for another annotator's write (a millisecond or two each); when another program holds the
        lock longer, the decision is kept (`saving`) with a copy in a rescue file (annotator/rescue.py: a kill -9
        meanwhile loses nothing), the host says "saving…" (show_saving) and a background thread with its own
        connection retries it; the host hears of it once it is committed (and the copy goes)."""
        s = self.session
        try:
            with s.store.busy_timeout(FIRST_TRY_MS):  # other annotators' writes take a millisecond or two
                s.write(s.store, pending)
        except DatabaseBusy:
            if s.store.path == ":memory:":  # no second connection to an in-memory database: wait here
                s.write(s.store, pending)
            else:
                self.saving = pending
                self.files.keep_in_rescue([pending], [])  # from now on a kill -9 loses nothing either
                self.host.show_saving(0)
                self.host.start(self._save_in_background(pending))
                return
        except AssignmentReleased:  # a study command took the item away meanwhile: not saved, go on
            await self.host.released(pending)
            return
        except PrefvalError as exc:  # not saved: the screen stays on the item and says so
            self.host.not_saved(pending, exc)
            return
        await self.host.saved(pending, bool(s.apply(pending)))

    async def _save_in_background(self, pending) -> None:
        host = self.host

        def on_busy(attempt: int) -> None:  # (in the writer's thread) said on screen while there is one
            if self.hung_up is None and not host.quitting():
                try:
                    host.from_thread(host.show_saving, attempt)
                except Exception:  # the app is closing: nothing to draw on, the write goes on
                    pass

        # the future is kept: a quit after SIGHUP waits for it once the screen is gone (finish_after_exit)
        future = self.files.submit_decision(pending, on_busy)
        try:
            await asyncio.wrap_future(future)
        except AssignmentReleased:  # not saved, by design (the screen says so): no copy is kept
            self.saving = None
            self.files.drop_rescue()
            host.saving_ended()
            await host.released(pending)
            if self.quit_after_save:
                self._close_and_exit()
            return
        except Exception as exc:  # not saved (a full disk; or a quit that gave up waiting for the lock)
            from annotator.safe_text import visible

            unexpected = not isinstance(exc, PrefvalError)  # a bug, or the file's fault: the copy is kept
            if unexpected:
                exc = PrefvalError(f"{self.session.store.path}: NOT saved ({type(exc).__name__}: {exc})"
                                   + (f"; a copy is kept in {self.files.rescue}" if self.files.rescue else ""))
            self.saving = None
            host.saving_ended()
            if self.quit_after_save:  # its seconds are in the row kept: no visit event too
                self._give_up(self.files.give_up_decision(pending, visible(exc, layout=False)))
                return
            if unexpected:
                self.files.rescue = None  # the copy stays on its own: no later save or quit removes it
            else:
                self.files.drop_rescue()  # the screen stays on the item and says it is NOT saved
            host.not_saved(pending, exc)
            return
        self.saving = None
        if not self.quit_after_save:  # (a quit replaces the copy with the closing events, or drops it)
            self.files.drop_rescue()
        await host.saved(pending, bool(self.session.apply(pending)))
        if self.quit_after_save:
            self._close_and_exit()

    # ---- quitting: `q`, SIGHUP (the terminal closed) and SIGTERM alike, never before the last decision is saved ----
    def quit(self, signal_name: str | None = None) -> None:
        """Quit (`q`; signal_name "SIGHUP" or "SIGTERM" when the terminal closed or the process is asked to stop):
        no key acts from now on; a decision still waiting for a busy database is written first, then the session's
        closing events (retried while the file is busy), and the app exits. `q` keeps the screen, which says so,
        until then; after a signal the screen closes at once (a closed terminal cannot be drawn on) and the app
        writes them as it ends (finish_after_exit). Either way the wait lasts at most QUIT_SAVE_LIMIT seconds, and
        all along a copy of what is not written yet is kept in a rescue file (annotator/rescue.py), removed once it
        is, so that even a kill -9 loses nothing; what is still unwritten when the limit passes stays there, and
        the command says where on stderr (exit code 1)."""
        self.host.begin_quit()
        if signal_name is not None:
            self.hung_up = signal_name
        if self.quit_after_save:  # already waiting (q, then the terminal closed): a signal closes the screen now
            if signal_name is not None:
                self.host.exit()
            return
        self.quit_after_save = True
        if self.saving is not None:  # never drop a decision: quit once it is committed
            self.files.keep_in_rescue([self.saving], [])
            if signal_name is not None:
                self.host.exit()
                return
            self._start_limit()
            self.host.warn("Your last decision is still being saved (the database is busy); quitting once it is "
                           "saved.")
            return
        self._close_and_exit()

    def _start_limit(self) -> None:
        if self._limit is None:
            self._limit = asyncio.get_running_loop().call_later(QUIT_SAVE_LIMIT, self._stop_waiting)

    def _cancel_limit(self) -> None:
        if self._limit is not None:
            self._limit.cancel()
            self._limit = None

    def _close_and_exit(self) -> None:
        """Write the session's closing events and exit: at once when the file is free, else through the background
        writer, retried like a decision, then exit."""
        from annotator.safe_text import visible

        try:
            written = self.files.close_now(FIRST_TRY_MS)
        except PrefvalError as exc:  # a full disk, a read-only file: kept in the rescue file
            self._give_up(self.files.give_up([], self.files.closing_events, visible(exc, layout=False)))
            return
        if not written:  # the file is busy: kept in the rescue file meanwhile, retried in the background
            if self.hung_up:
                self.host.exit()  # finish_after_exit waits for the write
                return
            self._start_limit()
            self.host.start(self._close_in_background())
            return
        self.files.drop_rescue()
        self._cancel_limit()
        self.host.exit()

    async def _close_in_background(self) -> None:
        from annotator.safe_text import visible

        try:
            await self.files.close_in_background()
        except PrefvalError as exc:
            self._give_up(self.files.give_up([], self.files.closing_events, visible(exc, layout=False)))
            return
        self._cancel_limit()
        self.host.exit()

    def waits_after_exit(self) -> bool:
        """Whether a signal closed the screen while a write waits for the database (finish_after_exit has work)."""
        return self.hung_up is not None and (self.saving is not None or self.files.close_future is not None)

    async def finish_after_exit(self) -> str | None:
        """After a signal closed the screen while a write was waiting for a busy database (quit): the decision's
        write and the session's closing events are finished (SessionSaver.finish_after_exit), at most
        QUIT_SAVE_LIMIT seconds in all; returns the note of what could not be written and is kept in a rescue file
        (the host keeps it too), None when all was written or nothing waited. Called by the app as it ends, when no
        screen is drawn any more."""
        if not self.waits_after_exit():
            return None
        self._cancel_limit()
        limit = asyncio.get_running_loop().call_later(QUIT_SAVE_LIMIT, self._stop_waiting)
        try:
            note = await self.files.finish_after_exit(self.saving)
        finally:
            limit.cancel()
        if note is not None:
            self.host.keep_note(note)
        else:
            self.saving = None
        return note

    def close_at_end(self) -> str | None:
        """As the app ends, after finish_after_exit: the session's closing events when no quit wrote them (the
        summary's quit, ctrl+c, a crash), written at once (log_or_rescue: kept in a rescue file when the database
        refuses them). Returns the note of what is kept there, None when written or when there were none."""
        events = self.session.closing_events()
        return log_or_rescue(self.session.store, events) if events else None

    def _stop_waiting(self) -> None:
        """QUIT_SAVE_LIMIT seconds after a quit began waiting for the database: the write waiting for the lock
        gives up after its current attempt, and what it held stays in the rescue file."""
        self.files.stop_retrying()

    def _give_up(self, note: str, exit: bool = True) -> None:
        """What the quit could not write is in a rescue file (note: where, from SessionSaver.give_up): the app says
        so when it ends (on stderr, exit code 1), and exits (exit=False: it is ending already)."""
        self._cancel_limit()
        self.host.keep_note(note)
        if exit:
            self.host.exit(1)

    def screen_gone(self, already_noted: bool) -> None:
        """The screen is unmounted. After a signal with a write waiting, nothing (the app finishes it:
        finish_after_exit); otherwise (q, ctrl+c, a crash) the background writer stops, and what it had not
        written (a decision, the closing events) is kept in a rescue file and noted, unless a note is kept already
        (already_noted); with nothing unwritten, the rescue file kept meanwhile goes."""
        if self.waits_after_exit():
            return
        self._cancel_limit()
        files = self.files
        files.close_writer()  # a write waiting for the lock gives up after its current attempt
        pending, closing = self.saving, files.close_future
        if pending is not None and pending.unwritten() is None and pending.committed is not None:
            # its last attempt made it as the writer closed: counted in the session (the command's summary said
            # one answer fewer than the file held), its visit with it
            self.saving = None
            self.session.apply(pending)
            self.session.visit_decided()
        if pending is not None and pending.unwritten() is not None:  # ctrl+c, a crash
            if not already_noted:  # its seconds are in the row kept: no visit event too
                self._give_up(files.give_up_decision(pending, "the screen closed before the database was free",
                                                     with_closing_events=False), exit=False)
        elif closing is not None and closing.exception() is not None:  # (done: closed above)
            if not already_noted:
                self._give_up(files.give_up([], files.closing_events, "the screen closed before the database was "
                                            "free"), exit=False)
        else:
            files.drop_rescue()
