"""Text of figure values and table cells, shared by every renderer (3 decimals, 95% interval, n)."""
from __future__ import annotations

from typing import Any

from reports.figures import Figure

DIGITS = 3
MISSING = "—"


def undefined_text(note: str) -> str:
    """"undefined: <reason>" without doubling a reason that already starts with "undefined"."""
    note = (note or "").strip()
    if note.lower().startswith("undefined"):
        note = note[len("undefined"):].lstrip(" :")
    return f"undefined: {note}" if note else "undefined"


def number(v: float | int, digits: int = DIGITS) -> str:
    """An int as is, a float with `digits` decimals."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    return f"{v:.{digits}f}"


def figure_parts(f: Figure) -> tuple[str, str, str]:
    """(value, "[low, high]" or "", n or "") of a figure; value is "undefined: reason" when f.value is None."""
    if f.value is None:
        return undefined_text(f.note), "", "" if f.n is None else str(f.n)
    ci = ""
    if f.ci_low is not None and f.ci_high is not None:
        ci = f"[{number(f.ci_low)}, {number(f.ci_high)}]"
    return number(f.value), ci, "" if f.n is None else str(f.n)


def figure_text(f: Figure) -> str:
    """One line: "0.812 [0.700, 0.900] (n=40)" or "undefined: reason"."""
    v, ci, n = figure_parts(f)
    if f.value is None:
        return v
    return " ".join(p for p in (v, ci, f"(n={n})" if n else "") if p)


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
    if isinstance(v, (int, float)):
        return number(v)
    if isinstance(v, (list, tuple)):
        return ", ".join(cell(x) for x in v)
    return str(v)


def header_text(header: dict) -> str:
    """{"task": "mcq", "items": 40} -> "task: mcq · items: 40"."""
    return " · ".join(f"{k}: {cell(v)}" for k, v in header.items())
