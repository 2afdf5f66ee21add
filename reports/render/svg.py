"""Plots as inline SVG, drawn by matplotlib's SVG backend (offline, no JavaScript, no external assets).

Each ``*_figure`` function takes a Plot's data dict (shapes in reports.figures.Plot) and returns a matplotlib
Figure laid out by matplotlib from measured text sizes (constrained layout, legends outside the axes, tick labels
rotated when they would touch); ``plot_svg`` renders it to one ``<svg>`` element. Text from data stays text:
mathtext is off (a ``$`` is a dollar sign), fonts are written as ``<text>`` (``svg.fonttype: none``) and
matplotlib escapes it for XML. Missing values (None) are left out (bars, points) or drawn grey with "—"
(heatmap cells). Output is deterministic (fixed hash salt, no date).
"""
from __future__ import annotations

import io
from typing import Any

PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
RC = {
    "text.parse_math": False,  # "$x$" in a label is text, not TeX
    "svg.fonttype": "none",  # text as <text>, not paths
    "svg.hashsalt": "prefval",  # stable element ids
    "font.size": 9,
    "font.family": "DejaVu Sans",
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def _clean(s) -> str:
    """A label as plain text on one line: control characters and bidi or zero-width controls shown as visible
    escapes (``\\x1b``, ``\\u202e``), line breaks as spaces, emoji sequences and combining marks kept
    (storage.visible_text.visible, "spaces")."""
    from storage.visible_text import visible

    return visible(s, layout="spaces")


def _num(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _label(v) -> str:
    from reports.render.cells import number

    return number(v) if isinstance(v, float) else str(v)


def _new_figure(width_in: float, height_in: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), layout="constrained")
    FigureCanvasAgg(fig)  # measures text while laying out; savefig(format="svg") writes the SVG
    return fig


def _texts(fig) -> list:
    """Every text a drawn figure shows: non-empty visible texts, tick labels only where the axis draws them."""
    from matplotlib.text import Text

    ticks, shown = set(), []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                for lab in (tick.label1, tick.label2):
                    ticks.add(id(lab))
                    if lab.get_visible() and tick.get_visible() and lo - 1e-9 <= tick.get_loc() <= hi + 1e-9:
                        shown.append(lab)
    others = [t for t in fig.findobj(Text) if id(t) not in ticks]
    return [t for t in shown + others if t.get_visible() and t.get_text().strip()]


def text_boxes(fig) -> list[tuple[str, Any]]:
    """(text, display-space bounding box) of every visible text of ``fig``, after drawing it."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return [(t.get_text(), t.get_window_extent(renderer)) for t in _texts(fig)]


def _overlap(a, b, pad: float = 0.5) -> bool:
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > pad) and (min(a.y1, b.y1) - max(a.y0, b.y0) > pad)


def _rotate_if_crowded(fig, ax, axis: str = "x") -> None:
    """Rotate tick labels 30°, then 90°, while two of them touch (measured after drawing); a figure whose
    labels were rotated grows by their height, so the plotting area keeps its size."""
    rotated = False
    for angle in (30, 90, None):
        fig.canvas.draw()
        r = fig.canvas.get_renderer()
        labels = [t for t in (ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()) if t.get_text()]
        boxes = [t.get_window_extent(r) for t in labels]
        if angle is None or not any(_overlap(boxes[i], boxes[i + 1], 0) for i in range(len(boxes) - 1)):
            break
        rotated = True
        for t in labels:
            t.set_rotation(angle)
            t.set_ha("right" if angle < 90 else "center")
            t.set_rotation_mode("anchor" if angle < 90 else "default")
    if rotated and boxes:
        extra = max(b.height for b in boxes) / fig.dpi
        w, h = fig.get_size_inches()
        fig.set_size_inches(w, h + extra)
        fig.canvas.draw()


def bars_figure(data: dict):
    """Grouped bars: one group per category, one bar per series, optional 95% intervals, legend above the axes.

    data: {"categories": [...], "series": {name: [value or None]}, "intervals": {name: [[lo, hi] or None]}
    (optional), "y_label": str (optional)}.
    """
    cats = [_clean(c) for c in data.get("categories", [])]
    series = {_clean(k): list(v) for k, v in data.get("series", {}).items()}
    intervals = {_clean(k): list(v) for k, v in (data.get("intervals") or {}).items()}
    n_s = max(1, len(series))
    fig = _new_figure(max(4.0, 0.35 * len(cats) * n_s + 1.8), 3.2)
    ax = fig.add_subplot()
    width = 0.8 / n_s
    for si, (name, vals) in enumerate(series.items()):
        xs, hs, lo, hi = [], [], [], []
        ivs = intervals.get(name, [])
        for ci in range(len(cats)):
            v = _num(vals[ci]) if ci < len(vals) else None
            if v is None:
                continue
            xs.append(ci - 0.4 + width * (si + 0.5))
            hs.append(v)
            iv = ivs[ci] if ci < len(ivs) else None
            ok = isinstance(iv, (list, tuple)) and len(iv) == 2 and None not in iv
            lo.append(v - float(iv[0]) if ok else 0.0)
            hi.append(float(iv[1]) - v if ok else 0.0)
        color = PALETTE[si % len(PALETTE)]
        yerr = [lo, hi] if any(lo) or any(hi) else None
        ax.bar(xs, hs, width=width * 0.92, color=color, label=name, yerr=yerr,
               error_kw={"ecolor": "#333", "capsize": 2, "elinewidth": 0.8})
    ax.set_xticks(range(len(cats)), cats)
    ax.set_xlim(-0.6, len(cats) - 0.4)
    if data.get("y_label"):
        ax.set_ylabel(_clean(data["y_label"]))
    ax.grid(axis="y", color="#ddd", linewidth=0.6)
    ax.set_axisbelow(True)
    if series:
        fig.legend(loc="outside upper center", ncols=min(len(series), 4), frameon=False)
    _rotate_if_crowded(fig, ax)
    return fig


def heatmap_figure(data: dict):
    """A grid of cells shaded by value (darker = larger) with the value written in each cell.

    data: {"rows": [...], "columns": [...], "values": [[...]], "x_label"/"y_label": str (optional)}.
    """
    import numpy as np

    rows = [_clean(r) for r in data.get("rows", [])]
    cols = [_clean(c) for c in data.get("columns", [])]
    values = data.get("values", [])
    grid = np.full((len(rows), len(cols)), np.nan)
    for i in range(len(rows)):
        for j in range(len(cols)):
            v = _num(values[i][j]) if i < len(values) and j < len(values[i]) else None
            if v is not None:
                grid[i, j] = v
    longest = max([len(c) for c in cols] + [1])
    cell_w = max(0.55, min(1.6, 0.075 * max(longest, 6)))
    fig = _new_figure(max(3.0, cell_w * len(cols) + 0.09 * max([len(r) for r in rows] + [4]) + 1.0),
                      max(2.0, 0.42 * len(rows) + 1.4))
    ax = fig.add_subplot()
    finite = grid[np.isfinite(grid)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    ax.imshow(np.ma.masked_invalid(grid), cmap="Blues", vmin=lo, vmax=hi if hi > lo else lo + 1, aspect="auto")
    ax.set_facecolor("#eeeeee")
    for i in range(len(rows)):
        for j in range(len(cols)):
            raw = values[i][j] if i < len(values) and j < len(values[i]) else None
            v = grid[i, j]
            if np.isnan(v):
                text, ink = "—", "#333"
            else:
                t = (v - lo) / (hi - lo) if hi > lo else 0.0
                text, ink = _clean(_label(raw)), "#fff" if t > 0.6 else "#111"
            ax.text(j, i, text, ha="center", va="center", color=ink, fontsize=8)
    ax.set_xticks(range(len(cols)), cols)
    ax.set_yticks(range(len(rows)), rows)
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    for s in ax.spines.values():
        s.set_visible(False)
    if data.get("x_label"):
        ax.set_xlabel(_clean(data["x_label"]))
    if data.get("y_label"):
        ax.set_ylabel(_clean(data["y_label"]))
    _rotate_if_crowded(fig, ax)
    return fig


def scatter_figure(data: dict):
    """Points on x/y axes named in a legend; raters on the same point share one marker and one legend entry.

    Both axes span [0, 1] (with the diagonal) when every value lies there (rates), else the data's range.
    data: {"points": [{"label", "x", "y"}], "x_label": str, "y_label": str}.
    """
    from reports.render.cells import number

    pts = [(_clean(p.get("label", "")), _num(p.get("x")), _num(p.get("y"))) for p in data.get("points", [])]
    pts = [p for p in pts if p[1] is not None and p[2] is not None]
    groups: dict[tuple[float, float], list[str]] = {}
    for label, x, y in pts:
        groups.setdefault((round(x, 9), round(y, 9)), []).append(label)
    fig = _new_figure(5.2, 3.6)
    ax = fig.add_subplot()
    xs, ys = [p[1] for p in pts], [p[2] for p in pts]
    unit = all(0 <= v <= 1 for v in xs + ys)
    if unit:
        ax.plot([0, 1], [0, 1], color="#bbb", linestyle="--", linewidth=0.8)
        ax.set_xlim(-0.04, 1.04)
        ax.set_ylim(-0.04, 1.04)
    for k, ((x, y), labels) in enumerate(groups.items()):
        name = ", ".join(labels) + f" ({number(x)}, {number(y)})"
        ax.scatter([x], [y], s=46, marker=MARKERS[k % len(MARKERS)], color=PALETTE[k % len(PALETTE)],
                   label=name, zorder=3, edgecolors="#222", linewidths=0.5)
    ax.set_xlabel(_clean(data.get("x_label", "x")))
    ax.set_ylabel(_clean(data.get("y_label", "y")))
    ax.grid(color="#eee", linewidth=0.6)
    if groups:
        fig.legend(loc="outside right upper", frameon=False, fontsize=8)
    return fig


DRAW = {"bars": bars_figure, "heatmap": heatmap_figure, "scatter": scatter_figure}


def plot_figure(kind: str, data: dict):
    """The matplotlib Figure of a plot kind (under prefval's rc settings), or None for a kind not drawn here."""
    import matplotlib

    fn = DRAW.get(kind)
    if fn is None:
        return None
    with matplotlib.rc_context(RC):
        return fn(data)


def plot_svg(kind: str, data: dict) -> str | None:
    """The SVG element for a plot kind, or None for a kind this module does not draw."""
    import matplotlib

    with matplotlib.rc_context(RC):
        fig = plot_figure(kind, data)
        if fig is None:
            return None
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    a, b = text.find("<metadata>"), text.find("</metadata>")
    if a >= 0 and b > a:  # RDF/Dublin Core block: namespace URLs only, nothing to show
        text = text[:a] + text[b + len("</metadata>"):]
    return text.strip()
