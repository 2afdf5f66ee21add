"""The last decisions of whoever works the screen, kept in sight so that a wrong key is seen at once (issue 12,
after Prodigy's history sidebar): beside the item from WIDE columns (`RecentDecisions`, a sidebar), below that on
one line above the decision keys (`LastDecisionsLine`: "last: #3 skipped · #2 tie · #1 left is better").

Both take `lines`: [(position, what was decided as that person saw it)], newest first; position is 0-based (the
item's place in the annotator's queue, or the disagreement's number on the adjudication screen) and shown from 1.
Text from data is shown as text (never markup, never a control sequence). Used by the annotation screen and the
adjudication screen.
"""
from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from annotator.safe_text import visible

WIDE = 140  # from this width on, the history shows beside the item (below it: one line)
STRIP = 3   # decisions at most in the one-line history


def last_strip(lines: list[tuple[int, str]], cells: int, most: int = STRIP) -> Text:
    """The one-line history of the last decisions for a terminal narrower than WIDE: "last: #3 skipped · #2 tie ·
    #1 left is better", newest first, from `lines`. As many of the first `most` as fit in `cells` cells whole; the
    newest one is always shown, its text shortened with "…" when even it alone does not fit. An empty Text when
    there is no decision yet."""
    from rich.cells import cell_len

    def entry(i: int, what: str) -> Text:
        out = Text(f"#{i + 1} ", style="bold")
        out.append(visible(what, layout=False))
        return out

    out = Text("last: ", style="dim")
    for n, (i, what) in enumerate(lines[:most]):
        piece = entry(i, what)
        sep = Text(" · ", style="dim") if n else Text("")
        if cell_len(out.plain) + sep.cell_len + piece.cell_len > cells:
            if n:
                break
            room = max(1, cells - cell_len(out.plain) - cell_len(f"#{i + 1} "))
            shown = visible(what, layout=False)
            while shown and cell_len(shown) + 1 > room:
                shown = shown[:-1]
            piece = Text(f"#{i + 1} ", style="bold")
            piece.append(shown.rstrip() + "…")
        out.append_text(sep)
        out.append_text(piece)
    return out if lines else Text()


def sidebar_text(lines: list[tuple[int, str]]) -> Text:
    """The sidebar's text: "Your last decisions", then one line per decision ("#3 skipped"), or "none yet"."""
    out = Text("Your last decisions\n", style="bold")
    if not lines:
        out.append("none yet", style="dim")
    for i, what in lines:
        out.append(f"#{i + 1} ", style="bold")
        out.append(visible(what, layout=False) + "\n")
    return out


class RecentDecisions(Static):
    """The sidebar of the last decisions (shown by the screen's CSS from WIDE columns). show() redraws only when
    the lines changed."""

    DEFAULT_CSS = """
    RecentDecisions { width: 30; height: auto; max-height: 100%; border: round $panel-lighten-2; padding: 0 1; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", **kwargs)
        self._lines: list | None = None

    def show(self, lines: list[tuple[int, str]], layout: bool = True) -> None:
        """Show `lines`; layout=False while the sidebar is hidden (then the screen needs no new layout for it)."""
        if lines == self._lines:
            return
        self._lines = list(lines)
        self.update(sidebar_text(lines), layout=layout)


class LastDecisionsLine(Static):
    """The one-line history (last_strip) below WIDE columns; it takes no row while there is nothing to show."""

    DEFAULT_CSS = """
    LastDecisionsLine { height: 1; padding: 0 1; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", **kwargs)
        self._shown = ""
        self.display = False

    def show(self, lines: list[tuple[int, str]], cells: int) -> None:
        """Show as many of `lines` as fit in `cells` cells; nothing (and no row) for no lines, or cells=0 (the
        sidebar shows them)."""
        strip = last_strip(lines, cells) if cells > 0 else Text()
        if strip.plain != self._shown:
            self._shown = strip.plain
            self.update(strip)
        if self.display != bool(strip.plain):
            self.display = bool(strip.plain)
