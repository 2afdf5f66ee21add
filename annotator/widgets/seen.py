"""Never judge what you cannot see: which parts of an item have been on screen.

A task's item widget marks the parts a decision is about with `must_see(widget, label)` (the question, every
option, each side of a pair, the rubric's query and answer ...). The annotation screen keeps a SeenTracker per
item: after every redraw and every scroll it records which rows of each part are visible (inside every clipping
container and the screen, not cut off at the side). A part counts as seen once each of its rows has been visible
(shown whole at once, or scrolled through); a decision key is accepted only when every part is seen.

A part may be a scrollable pane: then its rows are the pane's virtual content, and it counts as seen when its
content has been scrolled through to the end. A conversation pane (annotator/widgets/context.py) draws only what
is in its viewport and keeps count of the lines it drew: it is seen when it has drawn every line (`fully_seen`).
"""
from __future__ import annotations

from textual.containers import ScrollableContainer
from textual.scroll_view import ScrollView
from textual.widget import Widget

MUST_SEE = "must-see"


def must_see(widget: Widget, label: str) -> Widget:
    """Mark widget as a part the decision is about; label names it in "scroll to see ..." ("option C")."""
    widget.add_class(MUST_SEE)
    widget.seen_label = label  # type: ignore[attr-defined]
    if hasattr(widget, "fully_seen"):  # a virtual conversation pane keeps track of the lines it drew
        widget.track_seen = True  # type: ignore[attr-defined]
    return widget


class SeenTracker:
    """Rows seen so far of each marked part under one root widget (one item on screen)."""

    def __init__(self) -> None:
        self.parts: list[Widget] = []
        self.rows: dict[int, set[int]] = {}
        self.known: set[str] = set()
        self.known_keys: set = set()
        self.unit: str | None = None  # the unit the parts belong to; None while a new item is being drawn

    def forget(self) -> None:
        """A new item is about to be drawn: nothing is tracked (and nothing counts as seen) until reset()."""
        self.parts, self.rows, self.unit, self.known, self.known_keys = [], {}, None, set(), set()

    def reset(self, root: Widget, unit: str, known: set[str] | None = None, known_keys: set | None = None) -> None:
        """Collect the marked parts under root for a newly drawn unit. known: labels of parts of this unit the
        annotator has already seen whole (an earlier visit, or an earlier step of a multi-step decision);
        known_keys: `seen_key`s of parts seen on any unit in this session (a stored conversation up to one
        message, shared by the items of its context). Both need no scrolling again. Every other part starts
        unseen."""
        self.parts = [w for w in root.query(f".{MUST_SEE}")]
        self.rows = {id(w): set() for w in self.parts}
        self.unit = unit
        self.known = set(known or ())
        self.known_keys = set(known_keys or ())

    def seen_keys(self) -> set:
        """`seen_key`s of the parts seen whole (to remember for this session)."""
        unseen = {id(w) for w in self.unseen()}
        return {w.seen_key for w in self.parts if getattr(w, "seen_key", None) is not None and id(w) not in unseen}

    def seen_labels(self) -> set[str]:
        """Labels all of whose parts have been seen (to remember for this unit)."""
        labels = {getattr(w, "seen_label", "the item") for w in self.parts}
        return labels - set(self.unseen_labels())

    def scroll_containers(self, root: Widget) -> list[Widget]:
        """Every scrollable widget that can move a part (the part itself when it scrolls, and its ancestors up
        to root): the screen watches their scroll offsets."""
        out: dict[int, Widget] = {}
        for part in self.parts:
            node: Widget | None = part
            while node is not None and node is not root.parent:
                if isinstance(node, Widget) and (_is_pane(node) or node.styles.overflow_y in ("auto", "scroll")):
                    out[id(node)] = node
                node = node.parent if isinstance(node.parent, Widget) else None
        return list(out.values())

    def observe(self) -> None:
        """Record the rows of every part that are visible now."""
        for part in self.parts:
            if not part.is_attached or not part.display:
                continue
            try:
                geo = part.screen.find_widget(part)
            except Exception:  # not laid out (yet)
                continue
            region, clip = geo.region, geo.clip.intersection(part.screen.region)
            visible = region.intersection(clip)
            if visible.height <= 0 or visible.width < region.width:  # cut off at a side: not seen
                continue
            seen = self.rows[id(part)]
            if _is_pane(part):
                inner = part.scrollable_content_region.intersection(clip)
                if inner.height <= 0 or inner.width < part.scrollable_content_region.width:
                    continue
                top = int(part.scroll_y) + (inner.y - part.scrollable_content_region.y)
                seen.update(range(top, top + inner.height))
            else:
                first = visible.y - region.y
                seen.update(range(first, first + visible.height))

    def unseen(self) -> list[Widget]:
        """The parts not yet seen whole, in screen order."""
        out = []
        for part in self.parts:
            if not part.is_attached or getattr(part, "seen_label", None) in self.known:
                continue
            if getattr(part, "seen_key", None) is not None and part.seen_key in self.known_keys:
                continue
            seen = self.rows.get(id(part), set())
            if hasattr(part, "fully_seen"):
                if not part.fully_seen():
                    out.append(part)
                continue
            if _is_pane(part):
                height = part.virtual_size.height
            else:
                height = part.size.height
            if height <= 0 or not part.display:
                if not part.display:
                    out.append(part)
                continue
            if len(seen.intersection(range(height))) < height:
                out.append(part)
        return out

    def unseen_labels(self) -> list[str]:
        return [getattr(w, "seen_label", "the item") for w in self.unseen()]


def unseen_hint(unseen: list[Widget]) -> str:
    """The state line's "▼ scroll to see option C, option D (↓ PgDn scroll, tab: next pane)" for the parts not
    seen yet (SeenTracker.unseen()), "" when every part was seen. Plain text: labels come from the data, so a
    caller that shows it as markup escapes it."""
    from annotator.safe_text import visible

    labels = list(dict.fromkeys(getattr(w, "seen_label", "the item") for w in unseen))
    if not labels:
        return ""
    keys = "End: the end, ↓ PgDn scroll" if any(getattr(w, "seen_rule", "") == "end" for w in unseen) else \
        "↓ PgDn scroll"
    return f"▼ scroll to see {visible(', '.join(labels), layout=False)} ({keys}, tab: next pane)"


def refusal(unseen_labels: list[str]) -> str:
    """The notice for a decision key pressed while parts are unseen: "Not saved: first scroll to see option C."."""
    from annotator.safe_text import visible

    return f"Not saved: first scroll to see {visible(', '.join(dict.fromkeys(unseen_labels)), layout=False)}."


def reveal_first_unseen(screen, unseen: list[Widget]) -> None:
    """Focus the pane holding the first unseen part (so that ↓ / PgDn scroll it), unless a text field has focus."""
    from textual.widgets import Input

    if not unseen or isinstance(screen.focused, Input):
        return
    node = unseen[0]
    while node is not None and not (node.focusable and node.can_focus):
        node = node.parent if node.parent is not screen else None
    if node is not None:
        screen.set_focus(node)


def _is_pane(widget: Widget) -> bool:
    """A part that scrolls its own content (a conversation pane) rather than being moved by its containers."""
    return isinstance(widget, (ScrollableContainer, ScrollView))
