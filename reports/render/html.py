"""HTML report: one self-contained file (inline CSS, inline SVG plots, no scripts or external assets)."""
from __future__ import annotations

from html import escape

from reports.figures import Table
from reports.render.cells import cell, figure_parts, header_text
from reports.render.plotdata import plot_table
from reports.render.svg import plot_svg

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 70rem;
       color: #222; padding: 0 1rem; }
h1 { border-bottom: 2px solid #4e79a7; padding-bottom: .3rem; }
h2 { margin-top: 2.5rem; color: #2b4c6f; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .92rem; }
caption { text-align: left; font-weight: 600; padding: .3rem 0; }
th, td { padding: .25rem .7rem; text-align: left; vertical-align: top; }
thead th { border-top: 2px solid #222; border-bottom: 1px solid #222; }
tbody tr:last-child td { border-bottom: 2px solid #222; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.undefined { color: #a33; font-style: italic; }
.note { color: #555; font-size: .85rem; margin-top: -.5rem; }
.meta { color: #555; }
p.lead { font-weight: 600; max-width: 60rem; }
figure { margin: 1rem 0 2rem; }
figcaption { font-weight: 600; margin-bottom: .3rem; }
"""


def _td(v) -> str:
    text = cell(v)
    cls = ' class="num"' if isinstance(v, (int, float)) and not isinstance(v, bool) else ""
    return f"<td{cls}>{escape(text)}</td>"


def html_table(caption: str, columns: list[str], rows: list[list], note: str = "") -> str:
    """A <table> with caption, header row and escaped cells."""
    out = [f"<table><caption>{escape(caption)}</caption><thead><tr>"
           + "".join(f"<th>{escape(str(c))}</th>" for c in columns) + "</tr></thead><tbody>"]
    for r in rows:
        out.append("<tr>" + "".join(_td(v) for v in (list(r) + [""] * (len(columns) - len(r)))[:len(columns)])
                   + "</tr>")
    out.append("</tbody></table>")
    if note:
        out.append(f'<p class="note">{escape(note)}</p>')
    return "\n".join(out)


def _figures_table(figs) -> str:
    out = ['<table><caption>Figures (value, 95% bootstrap interval, n)</caption><thead><tr><th>figure</th>'
           "<th>value</th><th>95% CI</th><th>n</th><th>note</th></tr></thead><tbody>"]
    for f in figs:
        v, ci, n = figure_parts(f)
        vcls = "undefined" if f.value is None else "num"
        note = "" if f.value is None else f.note
        out.append(f'<tr><td>{escape(f.label)}</td><td class="{vcls}">{escape(v)}</td><td>{escape(ci)}</td>'
                   f'<td class="num">{escape(n)}</td><td>{escape(note)}</td></tr>')
    out.append("</tbody></table>")
    return "\n".join(out)


def _table(t: Table) -> str:
    return html_table(t.title, t.columns, t.rows, t.note)


def _leads(leads) -> list[str]:
    out = []
    for ld in leads:
        out.append(f'<h3 class="lead">{escape(ld.title)}</h3>')
        out += [f'<p class="lead">{escape(sentence)}</p>' for sentence in ld.sentences]
    return out


def render_html(reports, title: str) -> str:
    """The report as one HTML document (see module doc)."""
    body = [f"<h1>{escape(title)}</h1>"]
    for rep in reports:
        fs = rep.figures
        body.append(f'<section id="study-{escape(fs.study)}"><h2>Study {escape(fs.study)} '
                    f'<span class="meta">({escape(fs.task)})</span></h2>')
        if rep.header:
            body.append(f'<p class="meta">{escape(header_text(rep.header))}</p>')
        body.append(_figures_table(fs.figures) if fs.figures else "<p><em>No figures yet (no answers).</em></p>")
        for t in fs.tables:
            body += _leads(rep.leads_before(t.key)) + [_table(t)]
        body += _leads(rep.leads_before(None))
        for p in fs.plots:
            svg = plot_svg(p.kind, p.data)
            if svg is None:  # a kind we do not draw: show its data
                cols, rows = plot_table(p)
                body.append(html_table(p.title, cols, rows))
            else:
                body.append(f"<figure><figcaption>{escape(p.title)}</figcaption>\n{svg}\n</figure>")
        if rep.per_annotator is not None:
            body.append(_table(rep.per_annotator))
        body.append("</section>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")
