"""Figures a task reports: single values (with interval) and small tables. Renderers read only these models."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class Figure(BaseModel):
    """One reported number. value None means undefined, with the reason in note.

    ci_low/ci_high: a 95% interval when computed; n: how many things it rests on, counted in ``n_of`` ("items" by
    default; "answers", "pairs", "judgments" when the figure pools several per item, and then the note says over
    how many items). p_value/p_label: a test's p-value and what test it is (e.g. the blind test's one-sided
    binomial test against chance); shown with the value in every format.
    """

    key: str
    label: str
    value: int | float | None  # an int is a count and prints without decimals
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    n_of: str = "items"
    p_value: float | None = None
    p_label: str = ""
    note: str = ""
    extra: dict[str, Any] = {}

    def text(self, digits: int = 3) -> str:
        """"0.812 [0.700, 0.900] (n=40)" or "undefined: <reason>": the one text every format uses
        (figure_text)."""
        return figure_text(self, digits)

    @classmethod
    def from_stat(cls, key: str, label: str, stat: Any, **fields: Any) -> "Figure":
        """A Figure from a reports.stats.StatResult (value, interval, n_items, note, p_value); ``fields``
        override or add Figure fields (n_of, p_value, p_label, ...)."""
        extra = dict(getattr(stat, "extra", {}) or {})
        if getattr(stat, "p_value", None) is not None:
            extra["p_value"] = stat.p_value
        base = dict(key=key, label=label, value=stat.value, ci_low=stat.ci_low, ci_high=stat.ci_high,
                    n=stat.n_items, note=stat.note or "", extra=extra)
        return cls(**{**base, **fields})


class Plot(BaseModel):
    """Data for a chart in the HTML report. kind:
    - "bars": data = {"categories": [...], "series": {name: [values aligned with categories]}} (e.g. score
      histograms human vs LLM judge, win/tie/loss shares); optional "intervals": {name: [[low, high] or None]}
      (drawn as error bars) and "y_label"
    - "heatmap": data = {"rows": [...], "columns": [...], "values": [[...]]} (e.g. a confusion matrix)
    - "scatter": data = {"points": [{"label": str, "x": float, "y": float}], "x_label": str, "y_label": str}
      (e.g. MR against AAR per judge)
    """

    key: str
    title: str
    kind: str
    data: dict[str, Any]


class PValue(float):
    """A p-value in a table cell: a float (JSON writes it as a number) that every renderer prints with the one
    p formatter, reports.render.cells.p_text (3 significant digits: 0.000244 stays 0.000244, never 0.000)."""


class Table(BaseModel):
    """A small table: rows are lists aligned with columns (cells: str, int, float or None)."""

    key: str
    title: str
    columns: list[str]
    rows: list[list[Any]]
    note: str = ""


class FigureSet(BaseModel):
    """Everything one study reports: its figures and tables, in display order."""

    study: str
    task: str
    figures: list[Figure] = []
    tables: list[Table] = []
    plots: list[Plot] = []

    def figure(self, key: str) -> Figure:
        """The figure with this key. Raises KeyError."""
        for f in self.figures:
            if f.key == key:
                return f
        raise KeyError(key)


# The text of a figure, the one every format uses (reports.render.cells re-exports it for the renderers).

DIGITS = 3


def undefined_text(note: str) -> str:
    """"undefined: <reason>" without doubling a reason that already starts with "undefined"."""
    note = (note or "").strip()
    if note.lower().startswith("undefined"):
        note = note[len("undefined"):].lstrip(" :")
    return f"undefined: {note}" if note else "undefined"


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
