"""The "scroll to see" hint line of the annotation and adjudication screens, fitted to the terminal.

The hint (annotator/widgets/seen.py's `unseen_hint`) is wrapped over as many rows as it needs, never cut at the
right edge. On a short terminal, where every row is needed for the item, it is held to `max_rows`: the parts that
fit are named and the rest counted ("▼ scroll to see the end of the conversation, the question and 4 more parts
(End, ↓ PgDn, tab: next pane)"); a refused decision key names them all. For one item at one width the line's
height only grows, so the hint shrinking as parts are seen never moves the item.
"""
from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from annotator.widgets.key_line import rows_needed
from annotator.widgets.seen import SeenTracker, side_keys, unseen_hint


def write_refusal(exc: BaseException, db_path: str) -> str:
    """The hint line's text for a write the database refused: the error as visible text, without the database's
    path the message starts with (the screen is on that file; the path took a row of a short terminal: an
    archived study's refusal took 3 rows at 80x24)."""
    from annotator.safe_text import visible

    text = visible(exc, layout=False)
    prefix = visible(f"{db_path}: ", layout=False)
    return text[len(prefix):] if db_path and text.startswith(prefix) else text


def rows_of(text: str, cells: int) -> int:
    """Rows `text` takes wrapped at `cells` cells (at least 1)."""
    return max(1, rows_needed(Content(text).wrap(cells), cells)) if text and cells > 0 else 1


def hint_text(tracker: SeenTracker, cells: int, max_rows: int | None = None) -> str:
    """The hint for what `tracker` has not seen yet, in at most `max_rows` rows of `cells` cells when it can: the
    whole hint when it fits, else the keys in short form and as many parts as fit, the others counted. Plain
    text ("" when everything was seen)."""
    from annotator.safe_text import visible

    whole = unseen_hint(tracker)
    if not whole or max_rows is None or rows_of(whole, cells) <= max_rows:
        return whole
    unseen = tracker.unseen()
    keys = ["↓ PgDn", "tab: next pane"] + side_keys(unseen)
    if any(getattr(w, "seen_rule", "") == "end" for w in unseen):
        keys.insert(0, "End")
    if any(tracker.pages_left(w) for w in unseen):
        keys.insert(0, "+ page")
    parts = [visible(d, layout=False) for d in tracker.unseen_descriptions()]
    return fit_parts(parts, lambda named: f"▼ scroll to see {named} ({', '.join(keys)})", cells, max_rows)


def fit_parts(parts: list[str], make, cells: int, max_rows: int | None) -> str:
    """make(named) with `named` the parts ("option C, option D"), in at most `max_rows` rows of `cells` cells when
    it can: as many parts named as fit, the others counted ("option C and 2 more parts"); None: all named."""
    text = make(", ".join(parts))
    if max_rows is None:
        return text
    for shown in range(len(parts) - 1, 0, -1):
        if rows_of(text, cells) <= max_rows:
            break
        more = len(parts) - shown
        text = make(f"{', '.join(parts[:shown])} and {more} more part{'s' if more > 1 else ''}")
    return text


def refusal_text(tracker: SeenTracker, cells: int, max_rows: int | None = None, early: str | None = None) -> str:
    """Why a decision key was not saved, for the hint line (it covers nothing of the item, unlike a notification,
    which can cover the very rows it asks to scroll to): "Not saved: first scroll to see option C, option D." (with
    "; + shows the next page" when a long field has pages left), the parts fitted as hint_text fits them. "" when
    `tracker` has nothing left to see. early: the key, when it came before the item was on screen (typed ahead,
    before its first frame): then "Not saved: a came before this item was on screen ..." with what to scroll once
    the item is tracked (tracker.unit set), or that it is all on screen now. Plain text."""
    from annotator.safe_text import visible

    lead = "Not saved: "
    if early is not None:
        lead += f"{visible(early, layout=False)} came before this item was on screen"
        if tracker.unit is None:
            return lead + "; look at it, then press the key again."
        if not tracker.unseen():
            return lead + "; it is all on screen now: press the key again."
        lead += "; first scroll to see "
    elif tracker.unit is None or not tracker.unseen():
        return ""
    else:
        lead += "first scroll to see "
    pages = "; + shows the next page" if any(tracker.pages_left(w) for w in tracker.unseen()) else ""
    parts = [visible(d, layout=False) for d in tracker.unseen_descriptions()]
    return fit_parts(parts, lambda named: f"{lead}{named}{pages}.", cells, max_rows)


def fit_hint(widget: Static, text: str, unit: object, width: int) -> None:
    """Give a hint line (a Static) the rows `text` needs at `width` cells (its whole width; padding and border
    are taken off here), wrapped and at least one. For one unit at one width the rows only grow (the first hint
    names the most parts), so the hint shrinking or going as parts are seen never moves what is above it."""
    cells = max(1, width - widget.styles.gutter.width)
    rows = rows_of(text, cells)
    key = (unit, cells)
    if getattr(widget, "_hint_for", None) == key:
        rows = max(rows, widget._hint_rows)  # type: ignore[attr-defined]
    widget._hint_for, widget._hint_rows = key, rows  # type: ignore[attr-defined]
    if widget.styles.height is None or widget.styles.height.value != rows:
        widget.styles.height = rows


SHORT_ROWS = 40  # below this terminal height the hint keeps to 2 rows (a refusal still names every part)


def fitted_hint(widget: Static, tracker: SeenTracker, screen_size, refused: str | None = None) -> str:
    """The hint for `tracker` fitted to the hint line `widget` on a screen of `screen_size` (a Size, cells): held
    to 2 rows below SHORT_ROWS rows, the line given the rows it needs (fit_hint). Returns the plain text to show
    ("" when everything was seen). refused: a decision key was refused (the key when it came before the item was
    on screen, else ""): the line shows refusal_text instead, held to 2 rows below SHORT_ROWS rows too, and gets the
    class "refused" (styled apart); None, or a refusal with nothing left to say: the hint."""
    width = widget.size.width or screen_size.width
    cells = width - widget.styles.gutter.width
    short = screen_size.height < SHORT_ROWS
    text = "" if refused is None else refusal_text(tracker, cells, 2 if short else None, early=refused or None)
    widget.set_class(bool(text), "refused")
    if not text:
        text = hint_text(tracker, cells, 2 if short else None)
    fit_hint(widget, text, tracker.unit, width)
    return text
