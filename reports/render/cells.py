"""Text of figure values and table cells, shared by every renderer (3 decimals, 95% interval, n)."""
from __future__ import annotations

from typing import Any

# the figures' own text lives with the model (reports/figures.py), re-exported here for the renderers
from reports.figures import (DIGITS, Figure, PValue, figure_parts, figure_text, number, p_text,  # noqa: F401
                             undefined_text)
from storage.visible_text import visible

MISSING = "—"


def plain(s) -> str:
    """Text for a terminal or a plain-text format: line breaks and tabs as spaces, other control characters and
    bidi or zero-width controls as visible escapes (``\\x1b``, ``\\u202e``), so nothing from data or a user acts
    on the terminal; letters, emoji sequences and combining marks kept (storage.visible_text.visible, "spaces")."""
    return visible(s, layout="spaces")


def cell(v: Any) -> str:
    """A table cell as text: None -> "—", floats with 3 decimals, a Figure (or its dict) as figure_text."""
    if v is None:
        return MISSING
    if isinstance(v, Figure):
        return figure_text(v)
    if isinstance(v, dict) and "value" in v and "key" in v:
        try:
            return figure_text(Figure(**v))
        except Exception:  # not a figure after all: fall through to str
            pass
    if isinstance(v, PValue):
        return p_text(v)
    if isinstance(v, (int, float)):
        return number(v)
    if isinstance(v, (list, tuple)):
        return ", ".join(cell(x) for x in v)
    return str(v)


def header_text(header: dict) -> str:
    """{"task": "mcq", "items": 40} -> "task: mcq · items: 40"."""
    return " · ".join(f"{k}: {cell(v)}" for k, v in header.items())
