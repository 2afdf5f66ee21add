"""The pairwise panel: two records side by side (preference on top, the conversation below, loaded lazily).

Sources are never passed in: the widget gets only what each side shows. ← / → move the focus between the two
conversations; ↑ ↓ PgUp PgDn Home End scroll the one in focus (Textual's scroll bindings). Tab stops once per pane
that scrolls: each conversation, and a preference only while it is longer than its box (PreferenceBox).
"""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical

from annotator.widgets.context import ContextView
from annotator.widgets.paged_text import PagedText
from annotator.widgets.scroll_pane import ScrollPane
from annotator.widgets.seen import must_see
from annotator.widgets.size_layout import LayoutBySize
from storage.models import Message

LABELS = ("Left  [b]1[/b]", "Right  [b]2[/b]")
STACK_BELOW = 100  # narrower than this, the sides are stacked (left on top) instead of cut to slivers


def side_title(side: int, messages: int, stacked: bool = False) -> str:
    """The border title (markup) of side 0 (left) or 1 (right) showing `messages` messages: its key, and where it
    is when the sides are stacked ("Top = Left  1 · 3 messages")."""
    label = f"{('Top', 'Bottom')[side]} = {LABELS[side]}" if stacked else LABELS[side]
    return f"{label} · {messages} messages"


def stacked_at(width: int) -> bool:
    """Whether a panel `width` cells wide stacks its sides (narrower than STACK_BELOW)."""
    return width < STACK_BELOW


#: the keys that move between the sides, for the scroll hint (annotator/widgets/seen.py: side_keys) and `?`
SIDE_KEYS = "← →: left / right side"


class PreferenceBox(ScrollPane):
    """A side's preference, scrolled when longer than its box. A Tab stop only while it has something to scroll
    (ScrollPane): a preference shown whole is no focus stop, so Tab goes from one conversation to the other
    instead of to a box where the scroll keys do nothing (and whose side's border would light as if the
    conversation were focused)."""


class PairView(LayoutBySize, Horizontal):
    """sides: [(preference, messages)] in DISPLAY order (left, right); chosen: 0 / 1 / "tie" / None."""

    DEFAULT_CSS = """
    PairView { height: 1fr; }
    PairView > .side { width: 1fr; height: 1fr; border: round $panel-lighten-2; padding: 0 1; }
    PairView > .side.chosen { border: double $accent; }
    PairView > .side .pref-box { height: auto; max-height: 6; margin-bottom: 1; }
    PairView > .side .pref { text-style: bold; }
    PairView > .side ContextView { border: none; padding: 0; }
    PairView > .side ContextView:focus { background: $boost; }
    PairView > .side:focus-within { border: round $accent; }
    PairView.stacked { layout: vertical; }
    PairView.stacked > .side { width: 1fr; height: 1fr; }
    PairView.stacked > .side .pref-box { max-height: 4; }
    PairView.stacked.low > .side .pref-box { max-height: 2; margin-bottom: 0; }
    PairView.stacked.low > .side ContextView { min-height: 2; }
    """
    LOW_BELOW = 16  # stacked in a panel lower than this: 2 lines of each preference, so each conversation has 2
    BINDINGS = [
        Binding("left", "focus_side(0)", "left side", show=False),
        Binding("right", "focus_side(1)", "right side", show=False),
    ]

    def __init__(self, sides: list[tuple[str, list[Message]]], chosen=None) -> None:
        super().__init__()
        self.sides = sides
        self.chosen = chosen

    def compose(self) -> ComposeResult:
        for i, (preference, messages) in enumerate(self.sides):
            chosen = self.chosen == i or self.chosen == "tie"
            with Vertical(classes="side chosen" if chosen else "side", id=f"side-{i}") as box:
                box.border_title = side_title(i, len(messages))
                if chosen:
                    box.border_subtitle = "tie" if self.chosen == "tie" else "your choice"
                side = ("left", "right")[i]
                with PreferenceBox(classes="pref-box"):
                    pref = must_see(PagedText(preference, "Preference: $text", classes="pref"),
                                    f"the {side} preference")
                    pref.side_keys = SIDE_KEYS
                    yield pref
                ctx = must_see(ContextView(None, None, None, messages=messages, id=f"ctx-{i}"),
                               f"the {side} conversation")
                ctx.side_keys = SIDE_KEYS
                yield ctx

    def on_mount(self) -> None:
        self.action_focus_side(0)

    def size_classes(self, size) -> dict[str, bool]:
        """Stacked sides and the low variant for a panel of `size` (set where Textual lays the panel out, so an
        item's first frame is drawn in the layout of its size: annotator/widgets/size_layout.py)."""
        return {"stacked": stacked_at(size.width), "low": size.height < self.LOW_BELOW}

    def size_classes_changed(self, size) -> None:
        stacked = self.has_class("stacked")
        for i, box in enumerate(self.query(".side")):
            box.border_title = side_title(i, len(self.sides[i][1]), stacked)

    def action_focus_side(self, side: int) -> None:
        """Give the focus (and so the scroll keys) to the conversation on that side (0 left, 1 right).
        Does nothing when the panel is already being replaced (keys pressed faster than the redraw)."""
        for ctx in self.query(f"#ctx-{side}").results(ContextView):
            ctx.focus()
