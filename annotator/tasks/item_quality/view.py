"""The item-quality panel: the conversation (lazy, scrollable) on the left; on the right the persona, the item's
details, the question, the correct and incorrect responses, and the True/False checks answered so far."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from annotator.safe_text import markup, plain, visible
from annotator.widgets.context import ContextView
from annotator.widgets.paged_text import PagedText
from annotator.widgets.seen import must_see
from annotator.widgets.scroll_pane import ScrollPane
from annotator.widgets.size_layout import LayoutBySize


class ItemQualityView(LayoutBySize, Horizontal):
    """context: (context_id, end) or None; persona: text or None; details: label -> value (question type,
    topic); metadata: more label -> value shown after the responses (the grounding when there is no persona);
    labels: dimension -> bool given so far; previous: the stored answer's labels when revisiting; unit_id: the
    unit shown (a check key redraws the same unit in place: update_from)."""

    DEFAULT_CSS = """
    ItemQualityView { height: 1fr; }
    ItemQualityView #iq-context { width: 45%; }
    ItemQualityView #iq-right { width: 1fr; }
    ItemQualityView.compact { layout: vertical; }
    ItemQualityView.compact #iq-context { width: 1fr; height: 1fr; min-height: 4; }
    ItemQualityView.compact #iq-right { width: 1fr; height: 2fr; }
    ItemQualityView.compact #iq-persona, ItemQualityView.compact #iq-item { height: auto; max-height: 1000;
                                                                          overflow-y: hidden; }
    ItemQualityView #iq-persona { height: auto; max-height: 7; border: round $panel-lighten-2; padding: 0 1; }
    ItemQualityView #iq-item { height: 1fr; border: round $accent; padding: 0 1; }
    ItemQualityView .details { color: $text-muted; }
    ItemQualityView .question { text-style: bold; margin: 1 0; }
    ItemQualityView .correct { color: $success; margin-bottom: 1; }
    ItemQualityView .incorrect { color: $text; }
    ItemQualityView #iq-dims { height: auto; border: round $warning; padding: 0 1; }
    ItemQualityView .dim.current { text-style: bold; background: $accent 20%; }
    ItemQualityView .dim.pending { color: $text-muted; }
    """

    def __init__(self, conversation, context, persona: str | None, details: dict, question: str, correct: str,
                 incorrect: list[str], dimensions: list[str], help: dict[str, str], labels: dict[str, bool],
                 previous: dict[str, bool] | None = None, metadata: dict | None = None,
                 unit_id: str | None = None) -> None:
        super().__init__()
        self.unit_id = unit_id
        self.metadata = metadata or {}
        self.conversation, self.context, self.persona, self.details = conversation, context, persona, details
        self.question, self.correct, self.incorrect = question, correct, incorrect
        self.dimensions, self.help, self.labels, self.previous = dimensions, help, labels, previous

    COMPACT_BELOW = (100, 20)  # a panel narrower or lower than this: the conversation on top, the rest below it

    @classmethod
    def compact_at(cls, width: int, height: int) -> bool:
        """Whether a panel of width x height cells uses the compact layout (narrower or lower than COMPACT_BELOW)."""
        min_width, min_height = cls.COMPACT_BELOW
        return width < min_width or height < min_height

    def size_classes(self, size) -> dict[str, bool]:
        """The compact layout for a panel of `size` (set where Textual lays the panel out, so an item's first
        frame is drawn in the layout of its size: annotator/widgets/size_layout.py)."""
        return {"compact": self.compact_at(size.width, size.height)}

    def compose(self) -> ComposeResult:
        if self.context is not None:  # relevance and correctness are judged against it: seen once its end was on
            # screen, once per conversation up to the same message in a session (as an MCQ's conversation)
            pane = must_see(ContextView(self.conversation, self.context[0], self.context[1], id="iq-context"),
                            "the end of the conversation")
            pane.seen_rule = "end"
            yield pane
        with ScrollPane(id="iq-right"):  # scrolls as a whole when the compact layout cannot show it all
            if self.persona:
                with ScrollPane(id="iq-persona") as box:
                    box.border_title = "Persona"
                    yield must_see(PagedText(self.persona), "the persona")
            with ScrollPane(id="iq-item") as box:
                box.border_title = "Question and responses"
                if self.details:
                    # the question type: appropriateness asks whether the question is of its type
                    yield must_see(Static(plain(" · ".join(f"{visible(k)}: {visible(v)}"
                                                           for k, v in self.details.items())), classes="details"),
                                   "the item's details")
                yield must_see(PagedText(self.question, classes="question"), "the question")
                yield must_see(PagedText(self.correct, "[b]Correct[/b]  $text", classes="correct"), "the correct response")
                for text in self.incorrect:
                    yield must_see(PagedText(text, "[b]Incorrect[/b]  $text", classes="incorrect"),
                                   "the incorrect responses")
                if self.metadata:
                    # the grounding when there is no persona: relevance is judged against it
                    yield must_see(Static(plain("\n".join(f"{visible(k)}: {visible(v)}"
                                                           for k, v in self.metadata.items())),
                                          classes="details metadata"), "the item's details")
            with Vertical(id="iq-dims") as box:
                box.border_title = "Checks (True / False)"
                for text, cls, label in self.check_lines():
                    line = Static(text, classes=cls)
                    yield must_see(line, label) if label else line

    def check_lines(self) -> list[tuple[object, str, str | None]]:
        """(text, classes, label) of each check line, in the study's order: done ones with their answer, the
        current one with its help, the pending ones (each with the stored answer when revisiting). The current
        check is a part the decision is about, labelled with its number and name ("check 2 (relevance)"): a label
        of its own, so that the next check, drawn where it may be out of sight, is not taken for the one seen."""
        current = next((d for d in self.dimensions if d not in self.labels), None)
        out: list[tuple[object, str, str | None]] = []
        for i, d in enumerate(self.dimensions, start=1):
            title = d.replace("_", " ")
            was = ""
            if self.previous and d in self.previous:
                was = f"  (stored: {'True' if self.previous[d] else 'False'})"
            if d in self.labels:
                out.append((markup("✓ $i. $title: [b]$value[/b]", i=i, title=title,
                                   value="True" if self.labels[d] else "False"), "dim done", None))
            elif d == current:
                hint = f" — {self.help[d]}" if self.help.get(d) else ""
                out.append((plain(f"▶ {i}. {title}{hint}{was}"), "dim current", f"check {i} ({title})"))
            else:
                out.append((plain(f"  {i}. {title}{was}"), "dim pending", None))
        return out

    def update_from(self, new: "ItemQualityView") -> bool:
        """Show `new` in this mounted view when it is the same unit with other checks given (a check key): only
        the check lines change, so the conversation, the persona and the item keep where they were scrolled to
        (the annotator keeps their place). Returns False for another unit (or another layout): the caller mounts
        `new`, which starts at the top."""
        same = (self.is_mounted and new.unit_id is not None and new.unit_id == self.unit_id
                and (new.context, new.persona, new.details, new.metadata, new.question, new.correct, new.incorrect,
                     new.dimensions, new.help) == (self.context, self.persona, self.details, self.metadata,
                                                   self.question, self.correct, self.incorrect, self.dimensions,
                                                   self.help))
        lines = self.query(".dim").results(Static) if same else []
        lines = list(lines)
        if not same or len(lines) != len(self.dimensions):
            return False
        self.labels, self.previous = new.labels, new.previous
        for line, (text, cls, label) in zip(lines, self.check_lines()):
            line.update(text)
            line.set_classes(cls)
            if label:
                must_see(line, label)
        return True
