"""A field from data (a question, an option, a record, a response) shown as text, one page at a time.

A field of any length draws in the time of one page: a 5 MB single-line question shows its first PAGE_CHARS
characters and a line saying which page this is; `+` shows the next page and `-` the previous one (keys of the
annotation and adjudication screens, through turn_page: of the field on screen, so that a page never turns out of
sight). The text goes through annotator.safe_text: control characters become visible escapes and nothing in it is
parsed as markup.

A field that is a part a decision is about (annotator/widgets/seen.py) counts as seen once every one of its pages
has been seen whole: the field says which page it last drew on screen (`painted_page`, with a PageShown message),
so that the rows seen are counted for the page that was really on screen.
"""
from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widgets import Static

from annotator.safe_text import markup, visible

PAGE_CHARS = 4000


class PagedText(Static):
    """text: the field (any length); template: the program's markup with ``$text`` where the page goes (e.g.
    ``"[b]$key[/b]  $text"``), with the other ``$names`` given in values; layout=False also escapes newlines
    and tabs (one-line places). page_chars: characters per page."""

    class PageShown(Message):
        """A page of the field was drawn on screen for the first time since it was turned to (bubbles up to
        the screen, which then records what is visible)."""

        def __init__(self, field: "PagedText") -> None:
            super().__init__()
            self.field = field

    def __init__(self, text: Any, template: str = "$text", page_chars: int = PAGE_CHARS, layout: bool = True,
                 values: dict[str, Any] | None = None, **kw: Any) -> None:
        self.template = template
        self.values = dict(values or {})
        self.page_chars = page_chars
        self.keep_layout = layout
        self.full = ""
        self.page = 0
        self.painted_page: int | None = None  # the page last drawn on screen (None: not drawn yet)
        super().__init__(**kw)
        self._set_text(text, values)
        super().update(self._page_content())

    # ---- what is shown -----------------------------------------------------------------------------------
    @property
    def pages(self) -> int:
        """How many pages the field has (1 for a short one)."""
        return max(1, -(-len(self.full) // self.page_chars))

    def _set_text(self, text: Any, values: dict[str, Any] | None) -> None:
        self.full = visible(text, self.keep_layout)
        if values is not None:
            self.values = dict(values)
        self.page = 0

    def _page_content(self) -> Content:
        start = self.page * self.page_chars
        body = markup(self.template, layout=self.keep_layout, **{**self.values, "text": self.full[start:start + self.page_chars]})
        if self.pages == 1:
            return body
        shown_to = min(start + self.page_chars, len(self.full))
        more = (f"\n[dim]… characters {start + 1:,}-{shown_to:,} of {len(self.full):,} (page {self.page + 1}/"
                f"{self.pages}): [b]+[/b] next page, [b]-[/b] previous[/dim]")
        return body + Content.from_markup(more)

    def show_text(self, text: Any, values: dict[str, Any] | None = None) -> None:
        """Show another text (and template values) from its first page (nothing is redrawn when that is what
        is shown already)."""
        before = (self.full, self.values, self.page)
        self._set_text(text, values)
        if (self.full, self.values, self.page) != before:
            self.update(self._page_content())

    def turn(self, step: int) -> bool:
        """Show the page step pages further (negative: back), its first line in view (the panes holding the
        field scroll to its top). Returns False when there is no such page."""
        page = self.page + step
        if not 0 <= page < self.pages:
            return False
        self.page = page
        self.update(self._page_content())
        if self.is_mounted:
            self.scroll_visible(top=True, animate=False)
        return True

    def render_lines(self, crop: Region) -> list[Strip]:
        """Draw (Textual calls this to paint what is on screen, after the layout) and note the page drawn."""
        if self.painted_page != self.page:
            self.painted_page = self.page
            self.post_message(self.PageShown(self))
        return super().render_lines(crop)


def turn_page(root: Any, step: int) -> bool | None:
    """Turn a page of a long field under root (a widget), the field the annotator is reading: of the fields with
    a page in that direction (step 1: a next page, -1: a previous one), the one on screen whose "page N/M" line
    is on screen, else the one with the most rows on screen; only when none is on screen the first such field
    (-1: the last), which turn() then scrolls into view, so a page never turns where the annotator cannot see it.
    Returns True when a page turned, False when there was none to turn, None when root has no long field."""
    fields = [w for w in root.query(PagedText) if w.pages > 1]
    turnable = [w for w in fields if 0 <= w.page + step < w.pages]
    if not turnable:
        return False if fields else None
    shown = [(w, _rows_on_screen(w)) for w in turnable]
    seen = [(w, rows) for w, rows in shown if rows is not None and rows[1] > 0]
    if seen:
        footer = [w for w, (first, height) in seen if first + height >= w.size.height]
        field = footer[0] if footer else max(seen, key=lambda pair: pair[1][1])[0]
    else:
        field = turnable[0] if step > 0 else turnable[-1]
    return field.turn(step)


def _rows_on_screen(widget: PagedText) -> tuple[int, int] | None:
    """(first row, number of rows) of widget visible on screen now, None when it is not laid out."""
    try:
        geo = widget.screen.find_widget(widget)
    except Exception:  # not on the screen's map (not displayed, not laid out)
        return None
    visible = geo.region.intersection(geo.clip).intersection(widget.screen.region)
    if visible.height <= 0 or visible.width <= 0:
        return (0, 0)
    return (visible.y - geo.region.y, visible.height)
