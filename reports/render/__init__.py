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
class Lead:
    """Sentences that open a part of a study's report (e.g. the judge verdict, reports.judge_vs_human), under
    their title, right before the table whose key is `before` (after the study's tables when it has none).
    Sentences are plain text: every format shows them as text, never as markup."""

    title: str
    sentences: list[str]
    before: str | None = None


@dataclass
class StudyReport:
    """One study's section: its task's FigureSet and the per-annotator table (None to leave it out).

    header: short facts shown under the study title, e.g. {"task": "mcq", "items": 40, "answers": 120}.
    leads: sentences opening a part of the report (Lead), e.g. "May judge-a replace the people on this study?".
    """

    figures: FigureSet
    per_annotator: Table | None = None
    header: dict = field(default_factory=dict)
    leads: list[Lead] = field(default_factory=list)

    def leads_before(self, key: str | None) -> list[Lead]:
        """The leads shown right before the table `key`; None: those whose table is not in the report (shown
        after the tables)."""
        keys = {t.key for t in self.figures.tables}
        if key is None:
            return [ld for ld in self.leads if ld.before is None or ld.before not in keys]
        return [ld for ld in self.leads if ld.before == key]


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
