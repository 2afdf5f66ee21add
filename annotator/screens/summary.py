"""Shown when an annotator has answered (or skipped) every item of their queue."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from annotator.safe_text import markup
from annotator.session import Session
from annotator.widgets.key_line import KeyLine
from annotator.widgets.status_header import format_seconds


def summary_text(session: Session):
    """Counts, median seconds per item and what to do next, as a Textual Content (names shown as plain text)."""
    c = session.counts()
    secs = session.store.median_answer_seconds(session.study.id, session.annotator.id)  # in SQL, not per answer
    median = format_seconds(secs) if secs is not None else "-"
    lines = [
        "[b]All done in $study[/b], $annotator. Thank you.",
        "",
        f"answered: {c['answered']}   skipped: {c['skipped']}   open: {c['open']}",
        f"median time per answered item: {median}",
        "",
        "Every answer is saved in the database.",
    ]
    if c["skipped"]:
        lines.append("Press [b]r[/b] to go through the skipped items.")
    lines.append("Press [b]u[/b] to go back to the last item, [b]l[/b] for the list of your items, [b]q[/b] to quit.")
    return markup("\n".join(lines), layout=False, study=session.study.name, annotator=session.annotator.name)


class SummaryScreen(Screen[str]):
    """Dismisses with "back", "review", "list" or "quit"."""

    DEFAULT_CSS = """
    SummaryScreen { align: center middle; }
    SummaryScreen > VerticalScroll { width: 70; max-width: 100%; height: auto; max-height: 100%;
                                     border: round $success; padding: 1 2; }
    """
    BINDINGS = [Binding("u", "back", "back to last item"), Binding("r", "review", "review skipped"),
                Binding("l", "item_list", "list"), Binding("q", "quit_app", "quit")]

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(summary_text(self.session), id="summary")
        skipped = self.session.counts()["skipped"]  # r only when there is something to review
        yield KeyLine([b for b in self.BINDINGS if skipped or b.action != "review"])

    def action_back(self) -> None:
        self.dismiss("back")

    def action_review(self) -> None:
        if self.session.counts()["skipped"]:
            self.dismiss("review")

    def action_item_list(self) -> None:
        self.dismiss("list")

    def action_quit_app(self) -> None:
        self.dismiss("quit")
