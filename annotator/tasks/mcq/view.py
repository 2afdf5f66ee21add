"""The MCQ item panel: context (lazy), question, options in the annotator's order, the choice made so far."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Size
from textual.widgets import Static

from annotator.widgets.paged_text import PagedText
from annotator.widgets.seen import must_see
from annotator.widgets.scroll_pane import ScrollPane
from storage.models import Message
from storage.payloads import letter


OPTION = "[b]$key[/b]  $text"


class QuestionPane(ScrollPane):
    """The pane of the question and the options (#qa). Under a conversation pane its height is as much as its
    content needs, at most 80% of the panel and never more than what leaves the conversation pane CONTEXT_MIN
    rows (its border and three lines), and at least 3 rows. The rule is applied where Textual lays the pane out
    (get_content_height, called by every layout with the panel's size), so the first layout and every resize
    give the same height; no CSS max-height and no resize handler set it. (CSS alone cannot say "80%, but 5 rows
    less than the panel": with max-height 80% and the conversation's min-height 5 a panel lower than 25 rows
    was overfilled, the pane's last rows and border were drawn outside it, and PgDn, which moves by the pane's
    height, jumped over a row no key could bring on screen.)"""

    CONTEXT_MIN = 5

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        wanted = super().get_content_height(container, viewport, width)
        if self.parent is None or self.parent.has_class("no-context"):
            return wanted  # alone in the panel: it fills it (CSS height 1fr; this is not called then)
        gutter = self.styles.gutter.height + self.styles.margin.height
        panel = container.height + gutter  # container: the panel less this pane's border, padding and margin
        cap = max(3, min(panel * 4 // 5, panel - self.CONTEXT_MIN))
        return min(wanted, cap - gutter)


class McqView(Vertical):
    """question: str; options: texts in DISPLAY order; chosen: display index, "x" (can't tell) or None.

    context: (context_id, end) of a stored conversation, whose messages `conversation` holds (annotator.tasks.
    base.Conversation, read before drawing); snippet: inline messages (easy tests).
    keys: the key shown in front of each option (default the letters A, B, C...; T/F items pass ["t", "f"]).
    Nothing else is drawn: no answer key, no metadata, no source, so the view is safe for blind tasks.
    """

    DEFAULT_CSS = """
    McqView { height: 1fr; }
    McqView #context { height: 1fr; }
    McqView #qa { height: auto; border: round $accent; padding: 0 1; }
    McqView .question { text-style: bold; margin-bottom: 1; }
    McqView .option { margin-bottom: 1; }
    McqView .option.chosen { background: $accent 30%; text-style: bold; }
    McqView .cant-tell { color: $text-muted; }
    McqView .cant-tell.chosen { background: $accent 30%; color: $text; }
    McqView.no-context #qa { max-height: 100%; height: 1fr; }
    """
    def __init__(self, question: str, options: list[str], chosen, conversation=None,
                 context: tuple[str, int | None] | None = None, snippet: list[Message] | None = None,
                 tf: bool = False, question_label: str = "Question", keys: list[str] | None = None) -> None:
        super().__init__()
        self.question = question
        self.options = options
        self.chosen = chosen
        self.conversation = conversation
        self.context = context
        self.snippet = snippet
        self.tf = tf
        self.question_label = question_label
        self.keys = keys if keys is not None else [letter(i) for i in range(len(options))]
        if context is None and snippet is None:
            self.add_class("no-context")

    def compose(self) -> ComposeResult:
        if self.context is not None or self.snippet is not None:
            # imported here: an item without a conversation (a blind test, bare questions) starts without it
            from annotator.widgets.context import ContextView
        if self.context is not None:  # seen once its end has been on screen (annotator/widgets/seen.py)
            pane = must_see(ContextView(self.conversation, self.context[0], self.context[1], id="context"),
                            "the end of the conversation")
            pane.seen_rule = "end"
            yield pane
        elif self.snippet is not None:
            yield must_see(ContextView(None, None, None, messages=self.snippet, title="Conversation snippet",
                                       id="context"), "the conversation snippet")
        with QuestionPane(id="qa") as qa:
            qa.border_title = self.question_label
            yield must_see(PagedText(self.question, classes="question"), "the question")
            for i, text in enumerate(self.options):
                cls = "option chosen" if self.chosen == i else "option"
                yield must_see(PagedText(text, OPTION, values={"key": self.keys[i]}, classes=cls, id=f"opt-{i}"),
                               self.option_label(i))
            cls = "cant-tell chosen" if self.chosen == "x" else "cant-tell"
            yield Static("[b]x[/b]  can't tell", classes=cls)

    def option_label(self, i: int) -> str:
        """How "scroll to see ..." names option i: "option C", or "True" / "False" on a T/F item."""
        return self.options[i] if self.tf else f"option {letter(i)}"

    def same_layout(self, new: "McqView") -> bool:
        """Whether `new` has the same panes and rows as this view (so update_from can show it in place): both with
        a stored conversation, both with a snippet or both with none; as many options, the same keys and label."""
        return ((new.context is None) == (self.context is None) and (new.snippet is None) == (self.snippet is None)
                and len(new.options) == len(self.options) and new.question_label == self.question_label
                and new.keys == self.keys)

    def update_from(self, new: "McqView") -> bool:
        """Show `new`'s item in this mounted view without remounting (a decision redraws in a few ms).

        The conversation pane, if any, is kept and shows the new item's context (a stored context or an inline
        snippet) from the top. Returns False when that is not possible (a pane to add or remove, another number
        of options, another label) and the caller must mount `new` instead.
        """
        if not self.is_mounted or not self.same_layout(new):
            return False
        if new.context != self.context or new.snippet != self.snippet:
            from annotator.widgets.context import ContextView
        if new.context != self.context:  # the conversation pane is kept: only the new item's lines get laid out
            self.query_one("#context", ContextView).show(*new.context, source=new.conversation)
        elif new.snippet != self.snippet:
            self.query_one("#context", ContextView).show_messages(new.snippet)
        self.context, self.snippet, self.conversation = new.context, new.snippet, new.conversation
        self.question, self.options, self.chosen, self.tf = new.question, new.options, new.chosen, new.tf
        self.query_one(".question", PagedText).show_text(self.question)
        for i, text in enumerate(self.options):
            w = self.query_one(f"#opt-{i}", PagedText)
            w.show_text(text, values={"key": self.keys[i]})
            w.seen_label = self.option_label(i)
            w.set_class(self.chosen == i, "chosen")
        self.query_one(".cant-tell", Static).set_class(self.chosen == "x", "chosen")
        qa = self.query_one("#qa", VerticalScroll)
        if qa.scroll_y or qa.scroll_target_y:
            qa.scroll_home(animate=False)
        return True
