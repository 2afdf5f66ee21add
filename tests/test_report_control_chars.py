"""Every report format keeps control characters from data out of its output (newcomer check: an annotator named
with a window-title escape sequence came out raw in md, html and latex)."""
from __future__ import annotations

import json
import re

import pytest

from reports.figures import Figure, FigureSet, Table
from reports.render import FORMATS, StudyReport, render

NAME = "ev\x1b]0;X\x07[/]il\x9b"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what may never appear (newline and tab are layout)


def _reports() -> list[StudyReport]:
    table = Table(key="per_annotator", title=f"annotators of {NAME}", columns=["annotator", "answered"],
                  rows=[[NAME, 3], ["bo", 2]], note=f"note by {NAME}")
    fs = FigureSet(study=f"st{NAME}", task="mcq",
                   figures=[Figure(key="acc", label=f"accuracy of {NAME}", value=0.5, n=4, note=NAME)],
                   tables=[table])
    return [StudyReport(figures=fs, per_annotator=table, header={"annotator": NAME})]


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_raw_control_character_in_any_format(fmt):
    text = render(_reports(), fmt, title=f"report {NAME}")
    assert RAW.search(text) is None
    assert "X" in text  # the name is shown, not dropped


def test_latex_shows_the_escape_as_text_and_json_keeps_the_value():
    latex = render(_reports(), "latex", title="t")
    # the visible escape's backslash is itself escaped for LaTeX, so it prints as \x1b instead of being a command
    assert r"ev\textbackslash{}x1b]0;X\textbackslash{}x07[/]il\textbackslash{}x9b" in latex
    data = json.loads(render(_reports(), "json", title="t"))
    assert data["studies"][0]["header"]["annotator"] == NAME  # JSON still carries the real name, only escaped


def test_markdown_and_html_show_visible_escapes():
    assert "ev\\x1b]0;X\\x07[/]il\\x9b" in render(_reports(), "md", title="t")
    assert "ev\\x1b]0;X\\x07[/]il\\x9b" in render(_reports(), "html", title="t")
