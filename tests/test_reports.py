"""`prefval report`: every format, for an MCQ study answered through the TUI and for studies built with Store
calls; LaTeX escaping, HTML plots as inline SVG, the per-annotator section, unknown study."""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from annotator.app import AnnotateApp
from annotator.cli import main
from reports.figures import Figure, FigureSet, Plot, Table
from reports.render import StudyReport, render
from reports.render.latex import latex_escape
from storage.store import Store
from tests.tui_helpers import decide


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


async def _answer_all(db, annotator, seconds, key="a"):
    clock = Clock()
    app = AnnotateApp(db, "st", annotator, clock=clock, show_timer=False)
    async with app.run_test(size=(110, 34)) as pilot:
        for _ in range(6):
            clock.t += seconds
            await decide(pilot, key)  # the item's conversation scrolled to its end first


@pytest.fixture
async def answered_mcq(mcq_study):
    """The conftest MCQ study answered by ana (1 s per item, key a) and ben (10 s per item, key b)."""
    await _answer_all(mcq_study, "ana", 1.0, "a")
    await _answer_all(mcq_study, "ben", 10.0, "b")
    return mcq_study


def _report(capsys, *args):
    capsys.readouterr()
    code = main(["report", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.slow
async def test_markdown_report_of_a_tui_study_has_figures_and_per_annotator_section(answered_mcq, capsys):
    code, out, _ = _report(capsys, "st", "--db", answered_mcq)
    assert code == 0
    assert out.startswith("# prefval report: st")
    assert "## Study st (mcq)" in out
    with Store.open(answered_mcq, mode="create") as s:
        from annotator.tasks import get_task
        from reports.study_data import load_study_data
        fs = get_task("mcq").figures(load_study_data(s, "st"))
        study = s.get_study("st")
        cur = s.current_annotations(study.id)
        names = {a.id: a.name for a in s.annotators()}
    for f in fs.figures:  # every figure of the task, with its value text, is in the report
        assert f.label in out
    acc = fs.figure("accuracy")
    assert f"{acc.value:.3f}" in out
    # per annotator: items done, median seconds, too fast (threshold max(2, 0.1 * 5.5) = 2 s: all of ana's)
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[1:-1]]
            for line in out.splitlines() if line.startswith("| ana ") or line.startswith("| ben ")}
    assert rows["ana"][:6] == ["ana", "human", "6", "0", "1.000", "6"]
    assert rows["ben"][:6] == ["ben", "human", "6", "0", "10.000", "0"]
    # agreement of ana with the majority of the others (= ben's answer): computed here from the stored choices
    by_unit: dict[str, dict[str, int]] = {}
    for a in cur:
        by_unit.setdefault(a.unit_id, {})[names[a.annotator_id]] = a.answer["choice"]
    same = sum(v["ana"] == v["ben"] for v in by_unit.values())
    assert rows["ana"][6] == f"{same / 6:.3f}" and rows["ana"][7] == "6"
    assert "too fast = answered in under 2.0 s" in out


@pytest.mark.slow
async def test_every_format_for_a_tui_study(answered_mcq, capsys, tmp_path):
    code, out, _ = _report(capsys, "st", "--format", "json", "--db", answered_mcq)
    assert code == 0
    doc = json.loads(out)
    fs = FigureSet(**doc["studies"][0]["figure_set"])
    assert fs.study == "st" and fs.task == "mcq" and fs.figure("accuracy").n is not None
    assert [r[0] for r in doc["studies"][0]["per_annotator"]["rows"]] == ["ana", "ben"]
    code, out, _ = _report(capsys, "st", "--format", "latex", "--db", answered_mcq)
    assert code == 0 and out.count(r"\begin{tabular}") == 2 + len(fs.tables)
    target = tmp_path / "r.html"
    code, _, err = _report(capsys, "st", "--format", "html", "--out", str(target), "--db", answered_mcq)
    assert code == 0 and "written to" in err
    html = target.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<style>" in html
    assert "accuracy (all answers; can&#x27;t tell counts as wrong)" in html and "per annotator" in html


def _store_study(db_file):
    """A judge_validation study built with Store calls only: 4 items, human 'hu' and LLM judge 'jj'."""
    from storage.models import AnnotationIn, ItemIn

    items = [ItemIn(external_id=f"r{i}", kind="gold_candidate", payload={
        "recipient": "Clerk", "task": "Write a note", "attribute": f"pref {i}", "candidate_label": i < 2,
        "metadata": {"response": f"response text {i}"}}) for i in range(4)]
    with Store.open(db_file, mode="create") as s:
        s.import_items("jv", "jsonl", items)
        ids = {it.external_id: it.id for it in s.items("jv")}
        st = s.create_study("jvs", "judge_validation", {"annotators_per_item": 1}, 0,
                            [(ids[f"r{i}"], None, {}) for i in range(4)])
        units = s.units(st.id)
        for name, kind, verdicts in (("hu", "human", [1, 0, 1, 0]), ("jj", "llm", [1, 1, 0, 0])):
            a = s.ensure_annotator(name, kind=kind)
            s.add_assignments(st.id, [(u.id, a.id, i, 0) for i, u in enumerate(units)])
            for u, v in zip(units, verdicts):
                s.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=a.id,
                                              status="answered", answer={"reflected": bool(v)},
                                              source="llm" if kind == "llm" else "human",
                                              seconds=5.0 if kind == "human" else None))
    return db_file


def test_store_built_study_html_has_svg_plots_and_tables(db_file, capsys):
    _store_study(db_file)
    code, out, _ = _report(capsys, "jvs", "--format", "html", "--db", db_file)
    assert code == 0
    svgs = re.findall(r"<svg.*?</svg>", out, re.S)
    # the MR/AAR scatter, the confusion heatmap of jj against hu, and (judge validation) jj against the majority
    assert len(svgs) == 3
    texts = []
    for svg in svgs:
        root = ET.fromstring(svg)  # well-formed XML
        texts.append([t.text for t in root.iter("{http://www.w3.org/2000/svg}text")])
    # g = [1, 1, 0, 0]; jj says [1, 1, 0, 0]: MR 0, AAR 1; hu says [1, 0, 1, 0]: MR 1/2, AAR 1/2
    assert "jj (0.000, 1.000)" in texts[0] and "hu (0.500, 0.500)" in texts[0]  # each rater named in the legend
    assert "MR = P(z=1 | g=0)" in texts[0]
    assert sorted(t for t in texts[1] if t.isdigit()) == ["1", "1", "1", "1"]  # 2x2 confusion: one item per cell
    assert "<script" not in out and "href=\"http" not in out and "src=" not in out
    assert "agreement between raters" in out and "50.00%" in out  # hu vs jj agree on 2 of 4


def test_store_built_study_markdown_and_latex(db_file, capsys):
    _store_study(db_file)
    code, md, _ = _report(capsys, "jvs", "--db", db_file)
    assert code == 0
    assert "| hu | jj | 4 | 50.00%" in md
    # MR of the judge: g=0 items r2, r3 judged 0, 0 -> 0; AAR: r0, r1 judged 1, 1 -> 1; no interval from 4 items
    assert re.search(r"\| jj \| llm \| 4 \| 0\.000 \| 1\.000 \| 1\.000", md)
    code, tex, _ = _report(capsys, "jvs", "--format", "latex", "--db", db_file)
    assert code == 0
    # figures, pairwise agreement, rates, per annotator; and the judge-validation section: rater pairs, ceiling,
    # judge vs majority, alt-test (undefined with one person), PPI; the item outcomes
    assert tex.count(r"\toprule") == tex.count(r"\midrule") == tex.count(r"\bottomrule") == 10
    assert r"MR = P(z=1 \textbar{} g=0)" in tex  # the table note, escaped


def test_unknown_study_is_one_line_exit_1(db_file, capsys):
    _store_study(db_file)
    code, out, err = _report(capsys, "jvs", "nope", "--db", db_file)
    assert code == 1 and out == ""
    assert err.strip().count("\n") == 0 and "no study named 'nope'" in err


def _synthetic() -> StudyReport:
    fs = FigureSet(study="s_1", task="demo", figures=[
        Figure(key="a", label="rate of R&D 50% #1", value=0.5, ci_low=0.25, ci_high=0.75, n=40),
        Figure(key="b", label="kappa", value=None, note="undefined: every rating in one category")],
        tables=[Table(key="t", title="costs & gains_2", columns=["name_x", "share %"],
                      rows=[["a&b #3", 0.25], ["c_d", None]], note="100% of $5")],
        plots=[Plot(key="p", title="scores", kind="bars",
                    data={"categories": ["1", "2", "3"], "series": {"human": [3, 5, 2], "judge": [1, None, 4]}})])
    return StudyReport(figures=fs)


def test_latex_booktabs_and_escaping():
    tex = render([_synthetic()], "latex")
    assert tex.count(r"\begin{table}") == 2 and tex.count(r"\toprule") == 2 and tex.count(r"\bottomrule") == 2
    assert r"rate of R\&D 50\% \#1 & 0.500 & [0.250, 0.750] & 40 \\" in tex
    assert r"a\&b \#3 & 0.250 \\" in tex and r"c\_d & -- \\" in tex
    assert r"\caption{s\_1: costs \& gains\_2}" in tex and r"name\_x & share \% \\" in tex
    assert r"100\% of \$5" in tex
    assert "undefined: every rating in one category" in tex and "undefined: undefined" not in tex
    assert latex_escape(r"a\b{c}~^") == r"a\textbackslash{}b\{c\}\textasciitilde{}\textasciicircum{}"
    for line in tex.splitlines():  # no unescaped special character left in a table row
        if line.endswith(r"\\"):
            assert not re.search(r"(?<!\\)[%#_$]", line), line


def test_markdown_and_html_of_a_synthetic_figure_set():
    md = render([_synthetic()], "md")
    # every cell is text: & and the interval's brackets escaped (CommonMark renders "\\&" as "&")
    assert "| rate of R\\&D 50% #1 | 0.500 | \\[0.250, 0.750\\] | 40 |" in md
    assert "| kappa | undefined: every rating in one category |" in md
    assert "| 2 | 5 | — |" in md  # the bars plot's data as a table
    html = render([_synthetic()], "html")
    svg = re.findall(r"<svg.*?</svg>", html, re.S)
    assert len(svg) == 1
    root = ET.fromstring(svg[0])
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert {"human", "judge", "1", "2", "3"} <= set(texts)  # legend and categories
    from reports.render.svg import plot_figure
    assert len(plot_figure("bars", _synthetic().figures.plots[0].data).axes[0].patches) == 5  # None is no bar
    assert "R&amp;D" in html and "undefined: every rating in one category" in html


def test_json_round_trip():
    doc = json.loads(render([_synthetic()], "json"))
    assert FigureSet(**doc["studies"][0]["figure_set"]) == _synthetic().figures


def test_unknown_format_raises():
    with pytest.raises(ValueError):
        render([_synthetic()], "docx")


def test_no_negative_zero_in_any_format():
    from reports.render.cells import cell, number
    assert number(-0.0001) == "0.000" and number(-0.0004, 3) == "0.000" and number(-0.0006) == "-0.001"
    assert cell(-1e-9) == "0.000" and number(-0.00001, 2) == "0.00"
    f = Figure(key="k", label="kappa", value=-0.0002, ci_low=-0.31, ci_high=-0.0001, n=5)
    assert f.text() == "0.000 [-0.310, 0.000] (n=5)"
    fs = FigureSet(study="s", task="demo", figures=[f])
    for fmt in ("md", "html", "latex"):
        assert "-0.000" not in render([StudyReport(figures=fs)], fmt), fmt
