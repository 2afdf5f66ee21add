"""Figures a task reports: single values (with interval) and small tables. Renderers read only these models."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class Figure(BaseModel):
    """One reported number. value None means undefined, with the reason in note.

    ci_low/ci_high: a 95% interval when computed; n: the number of items it rests on.
    """

    key: str
    label: str
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    note: str = ""
    extra: dict[str, Any] = {}

    def text(self, digits: int = 3) -> str:
        """"0.812 [0.700, 0.900] (n=40)" or "undefined: <reason>"."""
        if self.value is None:
            return f"undefined: {self.note}" if self.note else "undefined"
        s = f"{self.value:.{digits}f}"
        if self.ci_low is not None and self.ci_high is not None:
            s += f" [{self.ci_low:.{digits}f}, {self.ci_high:.{digits}f}]"
        if self.n is not None:
            s += f" (n={self.n})"
        return s


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

    def figure(self, key: str) -> Figure:
        """The figure with this key. Raises KeyError."""
        for f in self.figures:
            if f.key == key:
                return f
        raise KeyError(key)
