"""Renderers of study reports: a FigureSet per study (from its task) plus a per-annotator table, written as
Markdown, HTML (one self-contained file with inline SVG plots), LaTeX (booktabs) or JSON.

Renderers only read the models of reports.figures, so a new task type's figures render with no change here.

    text = render(reports, "md")      # reports: list[StudyReport]
"""
from __future__ import annotations

from dataclasses import dataclass, field

from reports.figures import FigureSet, Table

FORMATS = ("md", "html", "latex", "json")


@dataclass
class StudyReport:
    """One study's section: its task's FigureSet and the per-annotator table (None to leave it out).

    header: short facts shown under the study title, e.g. {"task": "mcq", "items": 40, "answers": 120}.
    """

    figures: FigureSet
    per_annotator: Table | None = None
    header: dict = field(default_factory=dict)


def render(reports: list[StudyReport], fmt: str, title: str = "prefval report") -> str:
    """The whole report as text in one of FORMATS. Raises ValueError for an unknown format.

    No control character from data (a name holding a terminal escape sequence) leaves here raw, whether the text
    goes to a terminal, a pipe or --out: JSON writes DEL/C1 as \\u escapes (C0 is already escaped by json),
    LaTeX makes them visible inside latex_escape (so the backslash is escaped too), and every other format is
    passed through storage.visible_text.visible (newline and tab kept)."""
    if fmt == "md":
        from reports.render.markdown import render_markdown as fn
    elif fmt == "html":
        from reports.render.html import render_html as fn
    elif fmt == "latex":
        from reports.render.latex import render_latex as fn
    elif fmt == "json":
        from reports.render.json_out import render_json as fn
    else:
        raise ValueError(f"unknown report format {fmt!r} (choose one of {', '.join(FORMATS)})")
    from storage.visible_text import json_safe, visible

    text = fn(reports, title)
    return json_safe(text) if fmt == "json" else visible(text)
