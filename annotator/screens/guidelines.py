"""The keys and the study's guidelines as a modal screen (`?` opens it, escape or `?` closes it).

The keys are always listed first, also when a study brings its own guidelines; they are drawn as plain text
(labels can come from study files, which are never read as markup). The guidelines are the study's Markdown."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

from annotator.safe_text import visible


class GuidelinesScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    GuidelinesScreen { align: center middle; }
    GuidelinesScreen > VerticalScroll { width: 80%; height: 80%; border: thick $accent; background: $surface;
                                        padding: 0 1; }
    GuidelinesScreen.small > VerticalScroll { width: 100%; height: 100%; }
    """
    BINDINGS = [Binding("escape", "close", "close"), Binding("question_mark", "close", "close"),
                Binding("q", "close", "close", show=False)]

    def __init__(self, text: str, keys: list[tuple[str, str]] | None = None) -> None:
        super().__init__()
        self.text = text or "_This study has no guidelines._"
        self.keys = keys or []

    def compose(self) -> ComposeResult:
        with VerticalScroll() as v:
            v.border_title = "Keys and guidelines (escape to close)"
            v.border_subtitle = "↑↓ PgUp PgDn scroll"
            if self.keys:
                table = Table(title=Text("Keys", style="bold"), title_justify="left", show_header=False,
                              box=None, padding=(0, 2, 0, 0))
                table.add_column(style="bold", no_wrap=True)
                table.add_column()
                for key, what in self.keys:
                    table.add_row(Text(visible(key, layout=False)), Text(visible(what, layout=False)))
                yield Static(table, id="keys-table")
            yield Markdown(self.text)

    def on_mount(self) -> None:
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """Below 100x30 the box takes the whole terminal (at 60x16 a box of 80% shows 10 rows of keys)."""
        self.set_class(self.app.size.width < 100 or self.app.size.height < 30, "small")

    def action_close(self) -> None:
        self.dismiss(None)
