"""Lines of keys ("a/1 option A  b/2 option B ...") that are never cut off, whatever the terminal's width.

`KeyGroups` lays its groups ("key label") out over as many lines as its width needs, breaking only between
groups, so a key always stays beside its label and no group is lost past the right edge (Textual's own Footer and
a one-line Static with an ellipsis drop whatever does not fit). A shorter form can be given (the keys used most,
ending with "? all keys"): it is shown instead when the whole form would need more lines.

`KeyLine` is the bottom line of a screen (its shared keys: "s skip  u back/change ..."). Textual's Footer builds one
widget per key and rebuilds them all whenever the focus or the bindings change (about ten times while the
annotation screen opens, a tenth of a second of its start-up); these keys never change, so one widget drawn from
text says the same.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from textual.binding import Binding
from textual.content import Content
from textual.geometry import Size
from textual.widgets import Static

from annotator.safe_text import markup

# a group: (key, label) or (key, label, style of the label); keys and labels are shown as plain text
Group = tuple


def pack(pieces: Sequence[Content], width: int, gap: int = 2) -> list[Content]:
    """The pieces laid out left to right on lines of at most `width` cells, `gap` spaces apart, a new line started
    only between pieces (a piece wider than a line gets a line of its own, which the widget then folds)."""
    lines: list[list[Content]] = []
    used = 0
    for piece in pieces:
        n = piece.cell_length
        if lines and used + gap + n <= width:
            lines[-1].append(piece)
            used += gap + n
        else:
            lines.append([piece])
            used = n
    return [Content(" " * gap).join(line) for line in lines] or [Content("")]


def rows_needed(lines: Iterable[Content], width: int) -> int:
    """How many rows the lines take at `width` cells, a line wider than that folded onto more rows."""
    return sum(max(1, -(-line.cell_length // width)) if width > 0 else 1 for line in lines)


class KeyGroups(Static):
    """groups: [(key, label[, label_style])]; compact: an optional shorter list shown when the groups would need
    more lines at the widget's width. Height auto: one line, or as many as the groups need."""

    DEFAULT_CSS = """
    KeyGroups { height: auto; padding: 0 1; }
    """
    KEY_STYLE = "b"

    def __init__(self, groups: Sequence[Group] = (), compact: Sequence[Group] | None = None, **kw) -> None:
        super().__init__("", **kw)
        self._groups: tuple = ()
        self._compact: tuple | None = None
        self._pieces: list[Content] = []
        self._compact_pieces: list[Content] | None = None
        self.set_groups(groups, compact, layout=False)

    def _piece(self, group: Group) -> Content:
        key, label, *style = group
        label_part = f"[{style[0]}]$label[/]" if style and style[0] else "$label"
        return markup(f"[{self.KEY_STYLE}]$key[/] {label_part}" if key else label_part, layout=False,
                      key=key, label=label)

    def set_groups(self, groups: Sequence[Group], compact: Sequence[Group] | None = None,
                   layout: bool = True) -> None:
        """Show these groups (nothing is redrawn when they are the ones already shown)."""
        groups, compact = tuple(tuple(g) for g in groups), None if compact is None else tuple(map(tuple, compact))
        if (groups, compact) == (self._groups, self._compact):
            return
        self._groups, self._compact = groups, compact
        self._pieces = [self._piece(g) for g in groups]
        self._compact_pieces = None if compact is None else [self._piece(g) for g in compact]
        self.update(self.text(), layout=layout)

    @property
    def groups(self) -> tuple:
        return self._groups

    def text(self) -> Content:
        """Every group on one line (what the widget shows, before it is laid out over its width)."""
        return Content("  ").join(self._pieces)

    def lines(self, width: int) -> list[Content]:
        """The lines shown at `width` cells: the whole form, or the compact one when it needs fewer rows."""
        if width <= 0:
            return [self.text()]
        full = pack(self._pieces, width)
        if self._compact_pieces is not None and rows_needed(full, width) > 1:
            short = pack(self._compact_pieces, width)
            if rows_needed(short, width) < rows_needed(full, width):
                return short
        return full

    def shown_text(self) -> str:
        """The plain text of what is shown at the current width (lines joined by newlines)."""
        return "\n".join(line.plain for line in self.lines(self.content_size.width))

    def render(self) -> Content:
        return Content("\n").join(self.lines(self.content_size.width))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return rows_needed(self.lines(width), width)


class KeyLine(KeyGroups):
    """bindings: the screen's Binding list; those with show=True are listed in order as "key description".
    compact: the keys (as Binding.key) of a shorter line used when the whole one would need more lines; it ends
    with "? all keys" (the `?` screen lists every key)."""

    DEFAULT_CSS = """
    KeyLine { dock: bottom; height: auto; padding: 0 1; background: $footer-background;
              color: $footer-foreground; }
    """
    KEY_STYLE = "b $footer-key-foreground"

    def __init__(self, bindings: list[Binding], compact: Sequence[str] | None = None, **kw) -> None:
        shown = [b for b in bindings if b.show]
        groups = [(b.key_display or b.key, b.description) for b in shown]
        short = None
        if compact is not None:
            by_key = {b.key: b for b in shown}
            short = [(by_key[k].key_display or k, by_key[k].description) for k in compact if k in by_key]
            short.append(("?", "all keys"))
            short += [(by_key[k].key_display or k, by_key[k].description) for k in ("q",) if k in by_key
                      and k not in compact]
        super().__init__(groups, short, **kw)

