"""The annotation TUI: `prefval annotate STUDY --annotator WHO` runs AnnotateApp.

Start-up path imports only Textual, pydantic, sqlite-utils and prefval's own storage/annotator modules
(never litellm or scikit-learn; tests/test_import_hygiene.py checks this).
"""
from __future__ import annotations

import os
import time
from typing import Callable

from textual.app import App

from annotator.screens.annotate import AnnotateScreen
from annotator.session import Session
from storage.errors import PrefvalError
from storage.store import Store


class AnnotateApp(App[None]):
    """Annotate one study as one annotator.

    db: path of the SQLite file (or an open Store); clock: monotonic seconds (tests pass a fixed one);
    show_timer=False hides the per-item timer (snapshot tests). Raises PrefvalError on start for an unknown
    study or an annotator with nothing to do.
    """

    TITLE = "prefval"

    def __init__(self, db: str | Store, study: str, annotator: str,
                 clock: Callable[[], float] = time.monotonic, show_timer: bool = True) -> None:
        super().__init__()
        self.store = db if isinstance(db, Store) else Store.open(db, mode="rw")
        self.session = Session(self.store, study, annotator, clock=clock)
        self.show_timer = show_timer
        self.crash: BaseException | None = None  # the first unexpected exception, which ended the app

    def run_checked(self) -> None:
        """Run the app; raise PrefvalError (one line, so the command exits 1) when an unexpected exception ended it.
        Every answer given before the exception is already committed."""
        self.run()
        if self.crash is None and not self.return_code:
            return
        from annotator.safe_text import visible
        from storage.db import database_error_message

        exc = self.crash
        known = database_error_message(self.store.path, exc) if exc is not None else None
        what = known or (f"unexpected {type(exc).__name__}: {visible(exc, layout=False)}" if exc is not None
                         else f"exit code {self.return_code}")
        raise PrefvalError(f"the annotation screen stopped: {what}; every answer given before is saved "
                           "(PREFVAL_DEBUG=1 shows the traceback)")

    def _handle_exception(self, error: Exception) -> None:
        # Textual's hook for an unhandled exception (it then exits the app with return code 1).
        if self.crash is None:
            self.crash = error
        super()._handle_exception(error)

    def _fatal_error(self) -> None:
        # Textual would print a traceback with local variables (item text among them, control characters and
        # all) to the terminal; run_checked prints one line instead, unless PREFVAL_DEBUG asks for the traceback.
        if os.environ.get("PREFVAL_DEBUG"):
            super()._fatal_error()
        else:
            self._close_messages_no_wait()

    def on_mount(self) -> None:
        self.push_screen(AnnotateScreen(self.session, show_timer=self.show_timer))

    def on_unmount(self) -> None:
        self.session.close()
