"""A Plot's data as a plain table (columns, rows), for formats without pictures (Markdown) and for checks."""
from __future__ import annotations

from reports.figures import Plot


def plot_table(plot: Plot) -> tuple[list[str], list[list]]:
    """bars -> category x series; heatmap -> rows x columns; scatter -> label, x, y. Unknown kinds: key, value."""
    d = plot.data
    if plot.kind == "bars":
        series = d.get("series", {})
        cols = [""] + list(series)
        rows = [[c] + [(vals[i] if i < len(vals) else None) for vals in series.values()]
                for i, c in enumerate(d.get("categories", []))]
        return cols, rows
    if plot.kind == "heatmap":
        values = d.get("values", [])
        return [""] + list(d.get("columns", [])), [[r] + list(values[i]) for i, r in enumerate(d.get("rows", []))]
    if plot.kind == "scatter":
        return (["", d.get("x_label", "x"), d.get("y_label", "y")],
                [[p.get("label", ""), p.get("x"), p.get("y")] for p in d.get("points", [])])
    return ["field", "value"], [[k, str(v)] for k, v in d.items()]
