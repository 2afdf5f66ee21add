"""Text of figure values and table cells, shared by every renderer (3 decimals, 95% interval, n)."""
from __future__ import annotations

from typing import Any

from reports.figures import Figure, PValue

DIGITS = 3
MISSING = "—"


def undefined_text(note: str) -> str:
    """"undefined: <reason>" without doubling a reason that already starts with "undefined"."""
    note = (note or "").strip()
    if note.lower().startswith("undefined"):
        note = note[len("undefined"):].lstrip(" :")
    return f"undefined: {note}" if note else "undefined"


def plain(s) -> str:
    """Text for a terminal or a plain-text format: line breaks as spaces, other control characters (escape
    sequences, NUL ...) as visible \\xNN, so nothing from data or a user acts on the terminal."""
    return "".join(c if c.isprintable() else " " if c in "\n\r\t" else f"\\x{ord(c):02x}" for c in str(s))


def number(v: float | int, digits: int = DIGITS) -> str:
    """An int as is, a float with `digits` decimals; never "-0.000" (a value that rounds to zero is "0.000")."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    text = f"{v:.{digits}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def p_text(p: float) -> str:
    """A p-value with 3 significant digits ("0.00312", "1.2e-07")."""
    return f"{p:.3g}"


def figure_parts(f: Figure, digits: int = DIGITS) -> tuple[str, str, str]:
    """(value, "[low, high]" or "", n) of a figure. value is "undefined: reason" when f.value is None, and carries
    the p-value when the figure has one ("0.650, p = 0.0031 (one-sided binomial test)"); n names what it counts
    when that is not items ("19 answers")."""
    n = "" if f.n is None else (str(f.n) if f.n_of == "items" else f"{f.n} {f.n_of}")
    if f.value is None:
        return undefined_text(f.note), "", n
    ci = ""
    if f.ci_low is not None and f.ci_high is not None:
        ci = f"[{number(f.ci_low, digits)}, {number(f.ci_high, digits)}]"
    v = number(f.value, digits)
    if f.p_value is not None:
        v += f", p = {p_text(f.p_value)}" + (f" ({f.p_label})" if f.p_label else "")
    return v, ci, n


def figure_text(f: Figure, digits: int = DIGITS) -> str:
    """One line: "0.812 [0.700, 0.900] (n=40)" or "undefined: reason"."""
    v, ci, n = figure_parts(f, digits)
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
