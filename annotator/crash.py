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

    def run_checked(self, **run_kwargs) -> None:
        """Run the app (App.run's keyword arguments); raise PrefvalError, one line naming the exception (or the
        read-only file or folder behind it), when an unexpected exception ended it. Every decision given before
        was already committed."""
        self.run(**run_kwargs)
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
