"""One line, exit code 1, when an unexpected exception ends a Textual app of prefval (annotate, adjudicate).

Textual's default prints a traceback with local variables (item text among them, control characters and all) and
the command would then exit 0. An app that mixes in OneLineCrash keeps the first exception instead, and
`run_checked()` turns it into a PrefvalError (the CLI prints it as one line and exits 1). PREFVAL_DEBUG=1 keeps
Textual's traceback.
"""
from __future__ import annotations

import os

from storage.errors import PrefvalError


class OneLineCrash:
    """Mixin for a textual.app.App subclass (listed before App) that has a `store` (storage.store.Store).

    crash: the first unexpected exception, which ended the app, or None. what: how the message names the app.
    """

    crash: BaseException | None = None
    what = "the screen"
    unsaved: str | None = None  # set when decisions could not be written before the app ended (said by run_checked)

    def run_checked(self, **run_kwargs) -> None:
        """Run the app (App.run's keyword arguments); raise PrefvalError, one line naming the exception (or the
        read-only file or folder behind it), when an unexpected exception ended it (every decision given before
        was already committed), or the app's `unsaved` line when decisions could not reach the database before it
        ended (kept in a rescue file it names: annotator/rescue.py)."""
        try:
            self.run(**run_kwargs)
        finally:
            # the database file alone holds every answer once the screen is gone: closing the last connection
            # writes the write-ahead log back into it (before, an answer was in prefval.db-wal only, lost by
            # copying prefval.db alone)
            store = getattr(self, "store", None)
            if store is not None and getattr(self, "owns_store", False):
                try:
                    store.close()
                except Exception:  # already closed, or the file is gone: nothing left to write back
                    pass
        if self.unsaved:
            raise PrefvalError(self.unsaved)
        if self.crash is None and not self.return_code:
            return
        from annotator.safe_text import visible
        from storage.db import database_error_message

        exc = self.crash
        store = getattr(self, "store", None)
        known = database_error_message(store.path, exc) if exc is not None and store is not None else None
        what = known or (f"unexpected {type(exc).__name__}: {visible(exc, layout=False)}" if exc is not None
                         else f"exit code {self.return_code}")
        raise PrefvalError(f"{self.what} stopped: {what}; every decision given before is saved "
                           "(PREFVAL_DEBUG=1 shows the traceback)")

    def _handle_exception(self, error: Exception) -> None:
        # Textual's hook for an unhandled exception (it then exits the app with return code 1).
        if self.crash is None:
            self.crash = error
        super()._handle_exception(error)

    def _fatal_error(self) -> None:
        # Textual's would print a traceback with local variables to the terminal; run_checked prints one line.
        if os.environ.get("PREFVAL_DEBUG"):
            super()._fatal_error()
        else:
            self._close_messages_no_wait()


class QuitGuard:
    """Mixin for a textual.app.App subclass of prefval (listed before App): once quitting has begun, no input acts.

    A terminal delivers keys typed quickly (`qo`, `qt`) in one read, so the keys after `q` reach the app while it is
    closing: the screen's widgets are being removed (drawing the next item then failed to mount) and a decision key
    would still be saved. begin_quit() marks the start (a screen that quits once its last decision is committed calls
    it before that); App.exit() marks it too. From then on every key and mouse event is dropped before any screen
    sees it, except ctrl+c and ctrl+q (Textual's own quit, for a quit that waits on a busy database).

    Textual runs a screen's key bindings only once the key has gone through the focused widget and the screen's
    on_key and come back to the app, so a key typed after `q` is handled by on_key before `q`'s binding runs: the
    screens therefore take their quit key in on_key (quit_key), which begins quitting before the next key."""

    quitting = False
    PASS_KEYS = ("ctrl+c", "ctrl+q")

    def begin_quit(self) -> None:
        self.quitting = True

    # ---- the terminal closed (SIGHUP: tmux session killed, ssh dropped) or the process is asked to stop (SIGTERM)
    QUIT_SIGNALS = ("SIGHUP", "SIGTERM")

    def install_quit_signals(self) -> None:
        """Handle SIGHUP and SIGTERM like `q` (call from on_mount, in the main thread): quitting begins, on_hang_up()
        runs at once (the app records what it must while the file is still reachable), then the app exits.
        remove_quit_signals() (from on_unmount) restores the default handling."""
        import asyncio
        import signal

        loop = asyncio.get_running_loop()
        self._quit_signals = []
        for name in self.QUIT_SIGNALS:
            sig = getattr(signal, name, None)
            if sig is None:  # not on this platform
                continue
            try:
                loop.add_signal_handler(sig, self._quit_on_signal, name)
            except (NotImplementedError, RuntimeError, ValueError):  # no signal handling here (a thread, Windows)
                continue
            self._quit_signals.append(sig)
        self._guard_sigcont()

    def _guard_sigcont(self) -> None:
        """Textual's Linux driver resumes its terminal on every SIGCONT (its handler, set with signal.signal, runs
        in the main thread between any two bytecodes), meant for `fg` after ctrl+z. A closing terminal sends
        SIGHUP and then SIGCONT to the session: the resume then ran in the middle of the quit, starting a second
        output thread on the dead terminal, and the app hung in Textual's shutdown, waiting on a queue no thread
        read (tests/test_quit_saves.py, "close the terminal": 2 runs in 11). Here SIGCONT resumes only a driver that
        its own SIGTSTP suspended (driver._must_signal_resume); any other SIGCONT does nothing. Kept until the
        process ends: the quit that follows a hang-up is what it protects."""
        import signal

        driver = getattr(self, "_driver", None)
        resume = getattr(driver, "_sigcont_application", None)
        if resume is None or not hasattr(driver, "_must_signal_resume") or not hasattr(signal, "SIGCONT"):
            return  # another driver (headless tests, Windows): nothing to guard

        def on_sigcont(*args) -> None:
            if driver._must_signal_resume:  # suspended by ctrl+z (SIGTSTP) and now continued: `fg`
                resume(*args)

        try:
            signal.signal(signal.SIGCONT, on_sigcont)
        except ValueError:  # not the main thread
            pass

    def remove_quit_signals(self) -> None:
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        for sig in getattr(self, "_quit_signals", []):
            loop.remove_signal_handler(sig)
        self._quit_signals = []

    def _quit_on_signal(self, name: str) -> None:
        self.begin_quit()
        self.quit_on_signal(name)

    def quit_on_signal(self, name: str) -> None:
        """Quit after SIGHUP or SIGTERM (name). Here: on_hang_up(), then exit. An app that may hold a decision not yet
        written (the annotation screen, waiting for a busy database) overrides it to exit only once it is saved."""
        try:
            self.on_hang_up(name)
        finally:
            self.exit()  # type: ignore[attr-defined]

    def on_hang_up(self, name: str) -> None:
        """Override: what to record when the terminal closes or SIGTERM arrives (name: "SIGHUP" or "SIGTERM")."""

    @property
    def quit_begun(self) -> bool:
        """Whether quitting has begun (begin_quit or App.exit)."""
        return self.quitting or bool(getattr(self, "_exit", False))

    async def on_event(self, event) -> None:
        from textual import events

        if isinstance(event, events.InputEvent) and self.quit_begun and not (
                isinstance(event, events.Key) and event.key in self.PASS_KEYS):
            return
        await super().on_event(event)  # type: ignore[misc]


def quit_key(screen, event) -> bool:
    """Whether the key event is `screen`'s quit key (a binding of the screen whose action is "quit_app"); when it
    is, the event is stopped and quitting begins at once (the app's begin_quit, see QuitGuard): the caller then runs
    its quit action."""
    if not any(b.action == "quit_app" and event.key in b.key.split(",") for b in getattr(screen, "BINDINGS", [])):
        return False
    event.stop()
    begin = getattr(screen.app, "begin_quit", None)
    if begin is not None:
        begin()
    return True


async def run_binding_now(screen, event) -> None:
    """Run `screen`'s own binding of this key at once, from its on_key, so that keys act in the order they came.
    Textual runs a screen's bindings only once the key has been through the focused widget and on_key and come back
    to the app, so a key typed quickly after `]`, `u` or `s` reached on_key first: `]a` answered the item before `]`.
    Nothing happens for a key the screen does not bind; the screen's check_action still decides."""
    binding = next((b for b in getattr(screen, "BINDINGS", []) if event.key in b.key.split(",")), None)
    if binding is None:
        return
    event.stop()
    if screen.check_action(binding.action.split("(")[0], ()):
        await screen.run_action(binding.action)
