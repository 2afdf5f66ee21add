"""Report plots (matplotlib's SVG backend): no two texts overlap, nothing is cut off, data text stays text.

Overlap is measured the way matplotlib lays the figure out: the bounding box of every visible text from the
renderer, for every plot kind on crowded, long-labelled data and on the plots of real reports.
"""
from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET

import pytest

pytest.importorskip("matplotlib")

from reports.render.svg import RC, plot_figure, plot_svg, text_boxes  # noqa: E402

LONG = "a rather long category label"

CASES = {
    "bars, many long categories and 3 series with intervals": ("bars", {
        "categories": [f"{LONG} {i}" for i in range(9)],
        "series": {"human annotators": [0.1 * i for i in range(9)], "judge-a (gpt)": [0.5] * 9,
                   "judge-b": [None, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]},
        "intervals": {"human annotators": [[0.05 * i, 0.1 * i + 0.05] for i in range(9)]}}),
    "bars, score histogram": ("bars", {"categories": ["1", "2", "3", "4", "5"],
                                       "series": {"human": [3, 5, 2, 0, 1], "llm judge": [1, None, 4, 2, 2]}}),
    "bars, win/tie/loss": ("bars", {"categories": ["A wins", "tie", "B wins"],
                                    "series": {"share": [0.5, 0.25, 0.25]},
                                    "intervals": {"share": [[0.3, 0.7], [0.1, 0.45], [0.1, 0.45]]}}),
    "heatmap, long column headers": ("heatmap", {
        "rows": ["reflected", "not reflected", "can't tell"],
        "columns": ["judge-a: reflected", "judge-a: not reflected", "judge-a: can't tell"],
        "values": [[12, 3, 0], [2, 9, None], [0.125, 1, 4]]}),
    "heatmap, 8 x 8": ("heatmap", {"rows": [f"category {i}" for i in range(8)],
                                   "columns": [f"category {i}" for i in range(8)],
                                   "values": [[(i * 7 + j * 3) % 11 for j in range(8)] for i in range(8)]}),
    "scatter, raters on the same point": ("scatter", {
        "points": [{"label": "ana", "x": 0.1, "y": 0.9}, {"label": "bo", "x": 0.1, "y": 0.9},
                   {"label": "judge-a", "x": 0.12, "y": 0.88}, {"label": "judge-b", "x": 0.5, "y": 0.5},
                   {"label": "cy", "x": 0.0, "y": 1.0}],
        "x_label": "MR (misapplication rate)", "y_label": "AAR (appropriate application rate)"}),
}


def _assert_readable(fig) -> None:
    boxes = text_boxes(fig)
    page = fig.bbox
    for text, b in boxes:
        assert b.x0 >= page.x0 - 0.5 and b.x1 <= page.x1 + 0.5 and b.y0 >= page.y0 - 0.5 and b.y1 <= page.y1 + 0.5, \
            f"{text!r} is cut off"
    for (ta, a), (tb, b) in itertools.combinations(boxes, 2):
        assert not (min(a.x1, b.x1) - max(a.x0, b.x0) > 0.5 and min(a.y1, b.y1) - max(a.y0, b.y0) > 0.5), \
            f"{ta!r} overlaps {tb!r}"


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.slow
def test_no_two_texts_overlap_and_none_is_cut(name):
    import matplotlib

    kind, data = CASES[name]
    with matplotlib.rc_context(RC):
        fig = plot_figure(kind, data)
        assert len(text_boxes(fig)) >= 4
        _assert_readable(fig)


def test_raters_on_one_point_share_a_legend_entry():
    import matplotlib

    kind, data = CASES["scatter, raters on the same point"]
    with matplotlib.rc_context(RC):
        fig = plot_figure(kind, data)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "ana, bo (0.100, 0.900)" in legend  # neither hides the other
    assert len(legend) == 4


def test_bars_have_intervals_and_skip_missing_values():
    import matplotlib

    kind, data = CASES["bars, score histogram"]
    with matplotlib.rc_context(RC):
        fig = plot_figure(kind, data)
    assert len(fig.axes[0].patches) == 9  # 10 values, one None
    kind, data = CASES["bars, win/tie/loss"]
    with matplotlib.rc_context(RC):
        fig = plot_figure(kind, data)
    ax = fig.axes[0]
    from matplotlib.container import ErrorbarContainer

    err = next(c for c in ax.containers if isinstance(c, ErrorbarContainer))
    segs = err.lines[2][0].get_segments()
    assert [tuple(s[:, 1]) for s in segs] == [pytest.approx((0.3, 0.7)), pytest.approx((0.1, 0.45)),
                                              pytest.approx((0.1, 0.45))]


def test_svg_is_self_contained_and_text_stays_text():
    svg = plot_svg("bars", {"categories": ["<b>x</b>", "$\\alpha$ & co"], "series": {"a\x1b[31m": [1, 2]}})
    root = ET.fromstring(svg)
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "<b>x</b>" in texts and "$\\alpha$ & co" in texts  # not markup, not TeX
    assert "<script" not in svg and "href=\"http" not in svg and "<metadata" not in svg
    assert "\x1b" not in svg and "a\\x1b[31m" in texts
    assert plot_svg("bars", {"categories": ["1"], "series": {"a": [1]}}) == \
        plot_svg("bars", {"categories": ["1"], "series": {"a": [1]}})  # deterministic


def test_plots_of_real_reports_are_readable(db_file):
    """The plots of judge_validation (scatter, confusion heatmaps) and pairwise (bars with intervals) reports."""
    import matplotlib

    from annotator.commands.report import build_reports
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec
    from storage.models import AnnotationIn
    from storage.store import Store
    from tests.test_importers_samples import S
    from tests.test_reports import _store_study

    _store_study(db_file)
    from storage.importers import generic
    with Store.open(db_file, mode="create") as s:
        for name in ("dataset_a", "dataset_b"):
            parsed = generic.read([S / f"pairwise/{name}.jsonl"], {"format": "jsonl", "kind": "conversation_record"})
            s.import_items(name, "jsonl", parsed.items)
        st = create_study(s, StudySpec(name="pw", task="pairwise", datasets=["dataset_a", "dataset_b"], seed=3,
                                       annotators_per_item=2, annotators=["ana", "bo"]))
        for k, u in enumerate(s.units(st.id)):
            for who, winner in (("ana", "AB"[k % 2]), ("bo", ["A", "tie", "B"][k % 3])):
                ann = s.ensure_annotator(who)
                s.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                              status="answered", answer={"winner": winner}))
        reports = build_reports(s, ["jvs", "pw"])
    plots = [(r.figures.study, p) for r in reports for p in r.figures.plots]
    assert {p.kind for _, p in plots} == {"scatter", "heatmap", "bars"}
    for study, p in plots:
        with matplotlib.rc_context(RC):
            fig = plot_figure(p.kind, p.data)
            _assert_readable(fig)
    bars = next(p for _, p in plots if p.kind == "bars")
    assert all(iv is not None for iv in bars.data["intervals"]["all judgments"])  # pairwise bars have intervals
