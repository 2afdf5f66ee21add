"""What the annotation and adjudication screens share to save through a SaveController (annotator/saving.py):
the SaveHost methods that reach the app (exit, a notice, a background worker, the unsaved note), and the quit
both screens and both apps run (`q`, SIGHUP, SIGTERM). Each screen adds the SaveHost methods that draw
(show_saving, saving_ended, saved, released, not_saved) and owns `saves`, its SaveController.

SavingApp is the app's side: a signal quits through the screen's controller, Textual's input thread ending
after SIGHUP does not count as a crash, and the app finishes what the screen left waiting as it ends.
"""
from __future__ import annotations

from typing import Any, Callable, Coroutine

from annotator.saving import SaveController

__all__ = ["SavingApp", "SavingScreen"]


class SavingScreen:
    """Mixin for a textual Screen (listed before Screen) that saves through `self.saves` (a SaveController)."""

    saves: SaveController

    # ---- SaveHost: the app ----------------------------------------------------------------------------------
    def warn(self, text: str) -> None:
        self.notify(text, severity="warning", timeout=6, markup=False)

    def start(self, work: Coroutine) -> None:
        self.run_worker(work, group="save", exit_on_error=False)

    def from_thread(self, fn: Callable[..., None], *args: Any) -> None:
        self.app.call_from_thread(fn, *args)

    def quitting(self) -> bool:
        return bool(getattr(self.app, "quit_begun", False))

    def begin_quit(self) -> None:
        """Quitting has begun: no key acts from now on (annotator.crash.QuitGuard drops them)."""
        begin = getattr(self.app, "begin_quit", None)
        if begin is not None:
            begin()

    def exit(self, return_code: int = 0) -> None:
        self.app.exit(return_code=return_code) if return_code else self.app.exit()

    def keep_note(self, note: str) -> None:
        self.app.unsaved = note

    # ---- the screen's side of quitting ------------------------------------------------------------------------
    def _shut(self) -> bool:
        """Whether the app is quitting or this screen is no longer mounted: nothing may be drawn or written."""
        return self.quitting() or not self.is_attached

    def quit_when_saved(self, signal_name: str | None = None) -> None:
        """Quit (`q`, or a signal's name): SaveController.quit."""
        self.saves.quit(signal_name)

    async def finish_after_exit(self) -> None:
        """As the app ends: what a signal left waiting (SaveController.finish_after_exit)."""
        await self.saves.finish_after_exit()


class SavingApp:
    """Mixin for a prefval App (listed before QuitGuard) whose screen, `saving_screen`, saves through a
    SaveController: SIGHUP and SIGTERM quit exactly as `q` does on it (a decision waiting for a busy database is
    written first), and on_unmount should await finish_saves()."""

    saving_screen: SavingScreen | None = None

    def quit_on_signal(self, name: str) -> None:
        screen = self.saving_screen
        if screen is not None and screen.is_attached:
            screen.quit_when_saved(name)
        else:
            super().quit_on_signal(name)

    def panic(self, *renderables) -> None:
        # Textual's input thread ends the app (panic) when reading the keys fails: a closed terminal (EIO) after
        # SIGHUP. The quit that the signal began ends the app (and writes what waits: finish_after_exit).
        screen = self.saving_screen
        if self.quit_begun and screen is not None and screen.saves.hung_up is not None:
            return
        super().panic(*renderables)

    async def finish_saves(self) -> None:
        """As the app ends: after a signal, the decision waiting for the database and the closing events
        (SaveController.finish_after_exit); then the closing events no quit wrote (close_at_end). What could not be
        written is in a rescue file, and `unsaved` says where (run_checked prints it, exit code 1)."""
        screen = self.saving_screen
        if screen is None:
            return
        await screen.finish_after_exit()
        note = screen.saves.close_at_end()
        if note is not None:
            self.unsaved = (self.unsaved + "; " if self.unsaved else "") + note
