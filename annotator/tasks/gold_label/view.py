"""The gold_label panel: the recipient-task context, the remembered attribute, the two labels.

Only what is passed in is drawn; the task never passes the candidate's own label nor anyone else's answer (the
adjudication screen shows the annotators' labels in its own side panel).
"""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from annotator.widgets.paged_text import PagedText
from annotator.widgets.seen import must_see
from annotator.widgets.scroll_pane import ScrollPane


class GoldCandidateView(ScrollPane):
    """recipient, task: the context; attribute, statement: the remembered fact; user: the user's name or None;
    chosen: the annotator's own current label (1, 0 or None). The panel scrolls as one pane, so that every part
    (user, recipient, task, attribute) can be brought on screen at any terminal size."""

    DEFAULT_CSS = """
    GoldCandidateView { height: 1fr; }
    GoldCandidateView #context { height: auto; border: round $secondary; padding: 0 1; }
    GoldCandidateView #memory { height: auto; border: round $accent; padding: 0 1; }
    GoldCandidateView .attribute { text-style: bold; }
    GoldCandidateView #labels { height: auto; padding: 0 1; }
    GoldCandidateView .label.chosen { background: $accent 30%; text-style: bold; }
    """

    def __init__(self, recipient: str, task: str, attribute: str, statement: str | None, user: str | None,
                 chosen: int | None) -> None:
        super().__init__()
        self.gc_recipient = recipient
        self.gc_task = task
        self.gc_attribute = attribute
        self.gc_statement = statement
        self.gc_user = user
        self.gc_chosen = chosen

    def compose(self) -> ComposeResult:
        with Vertical(id="context") as ctx:
            ctx.border_title = "The assistant writes on the user's behalf"
            if self.gc_user:
                yield must_see(PagedText(self.gc_user, "[b]User:[/b]      $text"), "the user")
            yield must_see(PagedText(self.gc_recipient, "[b]Recipient:[/b] $text"), "the recipient")
            yield must_see(PagedText(self.gc_task, "[b]Task:[/b]      $text"), "the task")
        with Vertical(id="memory") as mem:
            mem.border_title = "What the assistant remembers"
            yield must_see(PagedText(self.gc_attribute, classes="attribute"), "the remembered attribute")
            if self.gc_statement:
                yield must_see(PagedText(self.gc_statement, classes="statement"), "the remembered attribute")
        with Vertical(id="labels"):
            yield Static("[b]1[/b]  apply: it should shape this message",
                         classes="label chosen" if self.gc_chosen == 1 else "label", id="label-1")
            yield Static("[b]0[/b]  suppress: leave it out here",
                         classes="label chosen" if self.gc_chosen == 0 else "label", id="label-0")
