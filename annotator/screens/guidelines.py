"""The study's guidelines as a modal screen (`?` opens it, escape or `?` closes it)."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown


class GuidelinesScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    GuidelinesScreen { align: center middle; }
    GuidelinesScreen > VerticalScroll { width: 80%; height: 80%; border: thick $accent; background: $surface;
                                        padding: 0 1; }
    """
    BINDINGS = [Binding("escape", "close", "close"), Binding("question_mark", "close", "close"),
                Binding("q", "close", "close", show=False)]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text or "_This study has no guidelines._"

    def compose(self) -> ComposeResult:
        with VerticalScroll() as v:
            v.border_title = "Guidelines (escape to close)"
            yield Markdown(self.text)

    def action_close(self) -> None:
        self.dismiss(None)
