"""A pane of an item that scrolls what it holds when that is longer than the pane (textual VerticalScroll).

It is a focus stop (Tab, and the pane the screen focuses first) only while it has something to scroll: a pane
shown whole gives the scroll keys nothing to do, so Tab passes it by instead of stopping where ↓ / PgDn do
nothing (issue 12: every other Tab of the pairwise screen landed on a preference box shown whole). Before its
first layout it has no size and is no stop; the annotation screen focuses the item's first pane that scrolls
once the item is laid out (AnnotateScreen._track_new_item).
"""
from __future__ import annotations

from textual.containers import VerticalScroll


class ScrollPane(VerticalScroll):
    """A VerticalScroll that is a focus stop only while its content is longer than it (max_scroll_y > 0)."""

    def allow_focus(self) -> bool:
        return super().allow_focus() and self.max_scroll_y > 0
