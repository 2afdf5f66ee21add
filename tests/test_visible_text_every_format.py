"""One rule for text made visible (storage.visible_text.visible), in every output: bidi controls written as
``\\u202e`` (never the malformed ``\\x202e`` reports/render once printed), zero-width-joiner emoji sequences, CJK
and combining marks kept whole, Rich markup shown as text, any value (a number, a list, None) turned into text.
Formats: the rule itself, `prefval status` (text and JSON), reports (md, html, latex, json), their SVG plots, exports
(CSV and JSONL to a terminal) and a TUI screen."""
from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET

import pytest

from annotator.cli import main
from reports.figures import Figure, FigureSet, Table
from reports.render import FORMATS, StudyReport, render
from reports.render.cells import plain
from reports.render.svg import plot_svg
from storage.visible_text import visible

RLO, PDF, LRI, PDI = "\u202e", "\u202c", "\u2066", "\u2069"
CODER = "\U0001f469\u200d\U0001f4bb"            # woman technologist: woman, ZWJ, laptop
FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
CJK = "日本語の評価"
COMBINING = "Cafe\u0301 n\u0303"                  # e + COMBINING ACUTE, n + COMBINING TILDE (not precomposed)
MARKUP = "[b]bold[/b] [link=https://evil.example]x[/link]"
TEXT = f"a{RLO}evil{PDF} {LRI}iso{PDI} {CODER} {FAMILY} {CJK} {COMBINING} {MARKUP}"
# by hand: each bidi control as \u + 4 hex digits, everything else as it is
SHOWN = f"a\\u202eevil\\u202c \\u2066iso\\u2069 {CODER} {FAMILY} {CJK} {COMBINING} {MARKUP}"


def test_the_rule_in_each_layout():
    assert visible(TEXT) == SHOWN
    assert visible(TEXT, layout=False) == SHOWN
    assert visible(TEXT, layout="spaces") == SHOWN
    assert visible("a\nb\tc\rd") == "a\nb\tc\\rd"
    assert visible("a\nb\tc\rd", layout=False) == "a\\nb\\tc\\rd"
    assert visible("a\nb\tc\rd\x1b", layout="spaces") == "a b c d\\x1b"
    assert visible("\u200e\u200f\x85\x7f") == "\\u200e\\u200f\\x85\\x7f"
    with pytest.raises(ValueError, match="layout must be True, False or 'spaces', got 'wide'"):
        visible("x", layout="wide")


def test_visible_turns_any_value_into_text():
    assert visible(7) == "7"
    assert visible(["a\x1b"]) == "['a\\x1b']"  # str() of a list holds the escape char itself, which is shown
    assert visible(None) == ""


def test_no_malformed_escape_in_plain_text_cells():
    # reports.render.cells.plain printed U+202E as "\x202e" and split the emoji at its joiner ("\x200d")
    assert plain(TEXT + "\nnext") == SHOWN + " next"
    assert "\\x202e" not in plain(TEXT) and "\\x200d" not in plain(TEXT)


def _reports() -> list[StudyReport]:
    table = Table(key="per_annotator", title=f"annotators {TEXT}", columns=["annotator", "answered"],
                  rows=[[TEXT, 3]], note=f"note {TEXT}")
    fs = FigureSet(study="st", task="mcq", figures=[Figure(key="acc", label=f"accuracy {TEXT}", value=0.5, n=4,
                                                           note=TEXT)], tables=[table])
    return [StudyReport(figures=fs, per_annotator=table, header={"annotator": TEXT})]


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f not in ("json", "latex")])
def test_reports_show_the_text_escaped_and_whole(fmt):
    out = render(_reports(), fmt, title="t")
    assert RLO not in out and LRI not in out and "\\x202e" not in out
    # the escape is made after each format's own escaping ("\\u" renders as itself in CommonMark and HTML)
    for whole in ("a\\u202eevil\\u202c", CODER, FAMILY, CJK, COMBINING):
        assert whole in out, (fmt, whole)


def test_latex_and_json_reports():
    latex = render(_reports(), "latex", title="t")
    assert r"a\textbackslash{}u202eevil\textbackslash{}u202c" in latex and CODER in latex and COMBINING in latex
    data = json.loads(render(_reports(), "json", title="t"))
    assert RLO not in render(_reports(), "json", title="t")
    assert data["studies"][0]["header"]["annotator"] == TEXT  # the value itself, escaped only as JSON


def test_svg_plot_labels():
    label = f"a{RLO}b {CODER} {COMBINING} 日本"  # short: a long tick label leaves the axes no room
    svg = plot_svg("bars", {"categories": [label, "b"], "series": {f"s{RLO}\n2": [1, 2]}})
    texts = [t.text for t in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")]
    assert f"a\\u202eb {CODER} {COMBINING} 日本" in texts and "s\\u202e 2" in texts
    assert RLO not in svg and "\\x202e" not in svg



def _store(db_file: str, answered: bool = True):
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec
    from storage.models import AnnotationIn, ItemIn
    from storage.payloads import McqPayload
    from storage.store import Store

    items = [ItemIn(external_id="q0", kind="mcq", payload=McqPayload(
        question="Q?", options=["plain", TEXT], correct_index=0).model_dump(exclude_none=True))]
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", items)
        create_study(s, StudySpec(name="ev", task="mcq", datasets=["ds"], seed=1, annotators_per_item=1,
                                  annotators=["ana"]))
        if not answered:
            return
        study = s.get_study("ev")
        a = s.ensure_annotator("ana")
        u = s.units(study.id)[0]
        s.add_annotation(AnnotationIn(study_id=study.id, unit_id=u.id, item_id=u.item_id, annotator_id=a.id,
                                      status="answered", answer={"choice": 1, "letter": "B", "shown": "A",
                                                                 "cant_tell": False}, seconds=2.0))
        s.add_annotation(AnnotationIn(study_id=study.id, unit_id=u.id, item_id=u.item_id, annotator_id=a.id,
                                      status="note", note=TEXT, seconds=0.0))


def test_status_text_and_json(db_file, capsys):
    _store(db_file)
    assert main(["status", "ev", "--db", db_file]) == 0
    out = capsys.readouterr().out
    assert RLO not in out and "\\x202e" not in out
    assert "a\\u202eevil\\u202c" in out and CODER in out and CJK in out and COMBINING in out
    assert main(["status", "ev", "--format", "json", "--db", db_file]) == 0
    raw = capsys.readouterr().out
    assert RLO not in raw
    data = json.loads(raw)
    notes = [n["note"] for s in data["studies"] for n in s.get("notes") or []]
    assert notes == [TEXT]  # the value, its controls written as JSON \u escapes


def test_export_csv_and_jsonl_to_a_terminal(db_file, capsys):
    _store(db_file)
    assert main(["export", "ev", "--format", "csv", "--db", db_file]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["choice_text"] for r in rows if r["status"] == "answered"] == [SHOWN]
    assert main(["export", "ev", "--db", db_file]) == 0
    raw = capsys.readouterr().out
    assert RLO not in raw
    assert [json.loads(line).get("choice_text") for line in raw.splitlines()
            if json.loads(line).get("status") == "answered"] == [TEXT]


async def test_the_annotation_screen(db_file):
    from annotator.app import AnnotateApp
    from tests.screen import screen_text, tracked, wait_for

    _store(db_file, answered=False)
    app = AnnotateApp(db_file, "ev", "ana", show_timer=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: tracked(app), what="the item tracked")
        text = screen_text(app)
    assert RLO not in text and "\\x202e" not in text
    for whole in ("a\\u202eevil\\u202c", "\\u2066iso\\u2069", CODER, FAMILY, CJK, COMBINING, MARKUP):
        assert whole in text, whole  # markup shown as the text it is
