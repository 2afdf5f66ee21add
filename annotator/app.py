"""The annotation TUI: `prefval annotate STUDY --annotator WHO` runs AnnotateApp.

Start-up path imports only Textual, pydantic, sqlite-utils and prefval's own storage/annotator modules
(never litellm or scikit-learn; tests/test_tui_start_up_imports.py checks this).
"""
from __future__ import annotations

import time
from typing import Callable

from annotator import collector

with collector.paused_while_loading():
    from textual import events
    from textual.app import App

    from annotator.crash import OneLineCrash, QuitGuard
    from annotator.screens.annotate import AnnotateScreen
    from annotator.screens.saving_host import SavingApp
    from annotator.session import Session
    from annotator.widgets.notices import NOTICES_CSS
    from storage.store import Store

# input that shows the annotator is at the screen (time on item: annotator.session.Session.touch)
INPUT = (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)


class AnnotateApp(SavingApp, QuitGuard, OneLineCrash, App[None]):
    """Annotate one study as one annotator.

    db: path of the SQLite file (or an open Store); clock: monotonic seconds (tests pass a fixed one);
    show_timer=False hides the per-item timer (snapshot tests). Raises PrefvalError on start for an unknown
    study or an annotator with nothing to do.
    """

    TITLE = "prefval"
    CSS = NOTICES_CSS
    what = "the annotation screen"

    def __init__(self, db: str | Store, study: str, annotator: str,
                 clock: Callable[[], float] = time.monotonic, show_timer: bool = True) -> None:
        super().__init__()
        from annotator.widgets.paste_guard import install

        install()  # a paste reaches the text fields whole, ESC included (annotator/widgets/paste_guard.py)
        self.store = db if isinstance(db, Store) else Store.open(db, mode="rw")
        self.owns_store = not isinstance(db, Store)  # run_checked closes what it opened
        self.session = Session(self.store, study, annotator, clock=clock)
        self.show_timer = show_timer

    def on_mount(self) -> None:
        collector.freeze_startup_objects()  # before the screen: item views stay collectable (annotator/collector.py)
        self.install_quit_signals()  # SIGHUP / SIGTERM quit like `q`, the visit to the item on screen recorded
        self.annotate_screen = self.saving_screen = AnnotateScreen(self.session, show_timer=self.show_timer)
        self.push_screen(self.annotate_screen)

    async def on_event(self, event) -> None:
        if isinstance(event, INPUT) and not event.is_forwarded:  # the annotator is there: time on item counts on
            self.session.touch()
        await super().on_event(event)

    def on_hang_up(self, name: str) -> None:
        self.session.close()

    async def on_unmount(self) -> None:
        collector.resume()
        self.remove_quit_signals()
        await self.finish_saves()  # what a quit left unwritten: the decision, the session's closing events
