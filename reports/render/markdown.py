"""Markdown report: per study a figures table (value, 95% interval, n), each Table, each Plot's data as a table,
and the per-annotator table."""
from __future__ import annotations

from reports.figures import Table
from reports.render.cells import cell, figure_parts, header_text
from reports.render.plotdata import plot_table


#: inline markup characters of CommonMark / GitHub Markdown: emphasis, code, links and images ([ ]: "!" and "("
#: only act after them), raw HTML and entities (< > &), tables and strikethrough (| ~), and the escape itself
_MD_SPECIAL = set("\\`*_[]<>&|~")


def md_text(text: str) -> str:
    """Text from data as a Markdown paragraph that renders as that text: inline markup characters (_MD_SPECIAL)
    backslash-escaped (CommonMark allows it for any ASCII punctuation), line breaks as spaces. Line-start markup
    (#, -, 1.) is not escaped: a lead's sentence starts with its own words ("May ...")."""
    return "".join("\\" + c if c in _MD_SPECIAL else " " if c in "\r\n" else c for c in str(text))


def _leads(leads) -> list[str]:
    lines = []
    for ld in leads:
        lines += [f"### {md_text(ld.title)}", ""]
        for sentence in ld.sentences:
            lines += [md_text(sentence), ""]
    return lines


def md_table(columns: list[str], rows: list[list]) -> list[str]:
    """A GitHub-flavoured Markdown table, None as "—". Every cell and header goes through md_text, so a reason
    typed by an annotator ("ambiguous <b>date</b>", "a | b", "*x*") renders as that text, never as HTML, emphasis
    or an extra column: the report, DATASHEET.md and the Hub card (which renders HTML) use it."""
    _esc = md_text
    out = ["| " + " | ".join(_esc(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        cells = [cell(v) for v in r] + [""] * (len(columns) - len(r))
        out.append("| " + " | ".join(_esc(c) for c in cells[:len(columns)]) + " |")
    return out


def _table(t: Table, level: str = "###") -> list[str]:
    lines = [f"{level} {md_text(t.title)}", ""] + md_table(t.columns, t.rows)
    if t.note:
        lines += ["", f"_{md_text(t.note)}_"]
    return lines + [""]


def render_markdown(reports, title: str) -> str:
    """The report as Markdown text (see module doc)."""
    lines = [f"# {title}", ""]
    for rep in reports:
        fs = rep.figures
        lines += [f"## Study {fs.study} ({fs.task})", ""]
        if rep.header:
            lines += [header_text(rep.header), ""]
        if fs.figures:
            rows = []
            for f in fs.figures:
                v, ci, n = figure_parts(f)
                rows.append([f.label, v, ci, n, f.note if f.value is not None else ""])
            lines += ["### Figures", ""] + md_table(["figure", "value", "95% CI", "n", "note"], rows) + [""]
        else:
            lines += ["_No figures yet (no answers)._", ""]
        for t in fs.tables:
            lines += _leads(rep.leads_before(t.key)) + _table(t)
        lines += _leads(rep.leads_before(None))
        for p in fs.plots:
            cols, rows = plot_table(p)
            lines += [f"### {p.title} (plot data)", ""] + md_table(cols, rows) + [""]
        if rep.per_annotator is not None:
            lines += _table(rep.per_annotator)
    return "\n".join(lines).rstrip() + "\n"
