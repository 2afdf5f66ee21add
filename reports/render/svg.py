"""Inline SVG drawings of Plots (no JavaScript, no external assets): grouped bars, heatmaps, scatter plots.

Each function takes a Plot's data dict (shapes in reports.figures.Plot) and returns one <svg> element as text.
Missing values (None) are left out (bars, points) or drawn grey with "—" (heatmap cells).
"""
from __future__ import annotations

from html import escape

from reports.render.cells import number

PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"]


def _num(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _text(x, y, s, anchor="middle", size=11, extra="") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" {extra}>'
            f"{escape(str(s))}</text>")


def _ticks(hi: float) -> list[float]:
    if hi <= 1.0:
        return [0, 0.25, 0.5, 0.75, 1.0]
    step = max(1, round(hi / 4))
    return [step * i for i in range(int(hi // step) + 2) if step * i <= hi * 1.0001 + step]


def bars_svg(data: dict) -> str:
    """Grouped bars: one group per category, one bar per series, a legend and a y axis from 0."""
    cats = [str(c) for c in data.get("categories", [])]
    series = {str(k): list(v) for k, v in data.get("series", {}).items()}
    vals = [v for s in series.values() for v in map(_num, s) if v is not None]
    hi = max(vals + [0.0]) or 1.0
    ticks = _ticks(hi)
    hi = max(ticks[-1], hi)
    left, top, ph = 50, 30, 200
    group_w = max(40, 18 * max(1, len(series)) + 16)
    width = left + group_w * max(1, len(cats)) + 20
    height = top + ph + 60
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img">']
    for i, (name, _) in enumerate(series.items()):
        x = left + i * 120
        out.append(f'<rect x="{x}" y="8" width="10" height="10" fill="{PALETTE[i % len(PALETTE)]}"/>')
        out.append(_text(x + 14, 17, name, "start"))
    for t in ticks:
        y = top + ph - ph * t / hi
        out.append(f'<line x1="{left}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(_text(left - 6, y + 4, number(t, 2) if hi <= 1 else int(t), "end", 10))
    bw = (group_w - 16) / max(1, len(series))
    for ci, c in enumerate(cats):
        gx = left + ci * group_w + 8
        for si, (name, vs) in enumerate(series.items()):
            v = _num(vs[ci]) if ci < len(vs) else None
            if v is None:
                continue
            h = ph * v / hi
            out.append(f'<rect x="{gx + si * bw:.1f}" y="{top + ph - h:.1f}" width="{bw - 2:.1f}" height="{h:.1f}" '
                       f'fill="{PALETTE[si % len(PALETTE)]}"><title>{escape(name)} / {escape(c)}: '
                       f'{escape(number(v))}</title></rect>')
        out.append(_text(gx + (group_w - 16) / 2, top + ph + 16, c, size=10))
    out.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + ph}" stroke="#333"/>')
    out.append(f'<line x1="{left}" x2="{width - 10}" y1="{top + ph}" y2="{top + ph}" stroke="#333"/>')
    out.append("</svg>")
    return "\n".join(out)


def heatmap_svg(data: dict) -> str:
    """A grid of cells shaded by value (darker = larger) with the value written in each cell."""
    rows = [str(r) for r in data.get("rows", [])]
    cols = [str(c) for c in data.get("columns", [])]
    values = data.get("values", [])
    nums = [_num(v) for r in values for v in r]
    finite = [v for v in nums if v is not None]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
    span = (hi - lo) or 1.0
    cw, chh = 70, 34
    left = 20 + 7 * max([len(r) for r in rows] + [4])
    top = 40
    width, height = left + cw * len(cols) + 10, top + chh * len(rows) + 26
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img">']
    for j, c in enumerate(cols):
        out.append(_text(left + j * cw + cw / 2, top - 8, c, size=11))
    for i, r in enumerate(rows):
        out.append(_text(left - 6, top + i * chh + chh / 2 + 4, r, "end"))
        for j in range(len(cols)):
            v = _num(values[i][j]) if i < len(values) and j < len(values[i]) else None
            if v is None:
                fill, label, ink = "#eeeeee", "—", "#333"
            else:
                t = (v - lo) / span
                fill = f"rgb({int(235 - 190 * t)},{int(242 - 140 * t)},{int(250 - 80 * t)})"
                label, ink = number(v) if isinstance(values[i][j], float) else str(values[i][j]), \
                    "#fff" if t > 0.6 else "#111"
            x, y = left + j * cw, top + i * chh
            out.append(f'<rect x="{x}" y="{y}" width="{cw - 2}" height="{chh - 2}" fill="{fill}"/>')
            out.append(_text(x + cw / 2 - 1, y + chh / 2 + 4, label, extra=f'fill="{ink}"'))
    out.append("</svg>")
    return "\n".join(out)


def scatter_svg(data: dict) -> str:
    """Labelled points on x/y axes; both axes span [0, 1] when every value lies there (rates), else the data."""
    pts = [(str(p.get("label", "")), _num(p.get("x")), _num(p.get("y"))) for p in data.get("points", [])]
    pts = [p for p in pts if p[1] is not None and p[2] is not None]
    xs, ys = [p[1] for p in pts], [p[2] for p in pts]
    unit = all(0 <= v <= 1 for v in xs + ys)
    x0, x1 = (0.0, 1.0) if unit or not xs else (min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1)
    y0, y1 = (0.0, 1.0) if unit or not ys else (min(ys), max(ys) if max(ys) > min(ys) else min(ys) + 1)
    left, top, pw, ph = 60, 20, 320, 260
    width, height = left + pw + 120, top + ph + 50
    sx = lambda v: left + pw * (v - x0) / (x1 - x0)  # noqa: E731
    sy = lambda v: top + ph - ph * (v - y0) / (y1 - y0)  # noqa: E731
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img">',
           f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>']
    for k in range(5):
        fx, fy = x0 + (x1 - x0) * k / 4, y0 + (y1 - y0) * k / 4
        out.append(f'<line x1="{sx(fx):.1f}" x2="{sx(fx):.1f}" y1="{top}" y2="{top + ph}" stroke="#eee"/>')
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{sy(fy):.1f}" y2="{sy(fy):.1f}" stroke="#eee"/>')
        out.append(_text(sx(fx), top + ph + 14, number(fx, 2), size=10))
        out.append(_text(left - 6, sy(fy) + 4, number(fy, 2), "end", 10))
    if unit:
        out.append(f'<line x1="{sx(0):.1f}" y1="{sy(0):.1f}" x2="{sx(1):.1f}" y2="{sy(1):.1f}" '
                   'stroke="#bbb" stroke-dasharray="4 3"/>')
    out.append(_text(left + pw / 2, top + ph + 34, data.get("x_label", "x")))
    out.append(_text(14, top + ph / 2, data.get("y_label", "y"), extra=f'transform="rotate(-90 14 {top + ph / 2})"'))
    for i, (label, x, y) in enumerate(pts):
        color = PALETTE[i % len(PALETTE)]
        out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="5" fill="{color}">'
                   f"<title>{escape(label)}: ({number(x)}, {number(y)})</title></circle>")
        out.append(_text(sx(x) + 8, sy(y) + 4, label, "start", 10))
    out.append("</svg>")
    return "\n".join(out)


DRAW = {"bars": bars_svg, "heatmap": heatmap_svg, "scatter": scatter_svg}


def plot_svg(kind: str, data: dict) -> str | None:
    """The SVG for a plot kind, or None for a kind this module does not draw."""
    fn = DRAW.get(kind)
    return fn(data) if fn else None
