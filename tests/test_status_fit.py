"""`prefval status STUDY` fits the terminal (issue 12): at 60, 80 and 160 columns every line fits, each
annotator's values stay on their row (a table whose columns start at the same cell in every row, wide characters
counted as two cells, or one block per annotator), and no number or interval is split over two lines; in a pipe
the full form (the tables whole). Names with wide characters (`中文研究名称很长的名字`, `注释者甲`) keep the columns
of the study list and of the tables in line."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from rich.cells import cell_len

from annotator.cli import main
from annotator.session import Session
from annotator.study_setup import create_study
from annotator.tasks.base import Decision, StudySpec
from storage.store import Store
from tests.conftest import make_mcq_items

CJK_STUDY = "中文研究名称很长的名字"
CJK_NAME = "注释者甲"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Items q0..q7, keys A, B, C, D, A, B, C, D (make_mcq_items: key = i % 4; 8 items, enough for intervals); every
# annotator answers all eight:
#   ana always A        -> correct on q0 and q4: 2 of 8, accuracy 0.250
#   bo the key          -> 8 of 8, accuracy 1.000
#   注释者甲 always B    -> correct on q1 and q5: 2 of 8, accuracy 0.250
EXPECTED = {"ana": ("8", "2", "0.250"), "bo": ("8", "8", "1.000"), CJK_NAME: ("8", "2", "0.250")}


@pytest.fixture
def cjk_db(db_file) -> str:
    with Store.open(db_file, mode="create") as s:
        items, _ = make_mcq_items(8, with_context=False)
        s.import_items("ds", "jsonl", items)
        create_study(s, StudySpec(name=CJK_STUDY, task="mcq", datasets=["ds"], seed=3, annotators_per_item=3,
                                  annotators=["ana", "bo", CJK_NAME]))
        create_study(s, StudySpec(name="plain-study", task="mcq", datasets=["ds"], seed=3))
        for who in EXPECTED:
            sess = Session(s, CJK_STUDY, who)
            for _ in range(8):
                key = int(sess.view().item.external_id[1:]) % 4
                choice = {"ana": 0, "bo": key, CJK_NAME: 1}[who]
                sess.decide(Decision({"choice": choice, "letter": "ABCD"[choice], "shown": "A",
                                      "cant_tell": False}))
    return db_file


def _status(capsys, monkeypatch, width: int, *argv: str) -> list[str]:
    monkeypatch.setenv("COLUMNS", str(width))
    capsys.readouterr()
    assert main(["status", *argv]) == 0
    return capsys.readouterr().out.splitlines()


def _starts(line: str) -> list[int]:
    """The cell at which each field of a table line starts (fields are two or more spaces apart)."""
    out, at, prev_space, run = [], 0, True, 0
    for ch in line:
        if ch == " ":
            run += 1
        else:
            if prev_space and (run >= 2 or not out):
                out.append(at)
            run = 0
        prev_space = ch == " "
        at += cell_len(ch)
    return out


def _fields(line: str) -> list[tuple[int, int]]:
    """(first cell, cell after the end) of each field of a table line (fields are two or more spaces apart)."""
    starts = _starts(line)
    out, at = [], 0
    cellpos = []  # cell at which each character starts
    for ch in line:
        cellpos.append(at)
        at += cell_len(ch)
    cellpos.append(at)
    for k, start in enumerate(starts):
        j = len(line.rstrip()) if k == len(starts) - 1 else cellpos.index(starts[k + 1])
        out.append((start, cellpos[len(line[:j].rstrip())]))
    return out


def _section(lines: list[str], title: str) -> list[str]:
    """The lines under "    title:" (indented deeper than it), up to the next line at its indent."""
    i = lines.index(f"    {title}:")
    out = []
    for line in lines[i + 1:]:
        if not line.startswith("      "):
            break
        out.append(line)
    return out


def _rows_by_annotator(section: list[str]) -> dict[str, str]:
    """annotator -> the text of their row (table form) or of their block (block form, joined by spaces)."""
    if section[0].lstrip().startswith("annotator:"):  # blocks
        out: dict[str, list[str]] = {}
        for line in section:
            if line.startswith("      annotator: "):
                who = line.split(": ", 1)[1]
                out[who] = []
            else:
                assert line.startswith("        "), line  # a block's line, under its annotator
                out[who].append(line.strip())
        return {k: "  ".join(v) for k, v in out.items()}
    head = _starts(section[0])
    rows = {}
    for line in section[1:]:
        assert _starts(line) == head, (line, section[0])  # every column starts where its header does
        rows[line.split()[0]] = line
    return rows


@pytest.mark.parametrize("width", [60, 80, 160])
def test_named_study_fits_and_keeps_each_annotators_values_on_their_row(cjk_db, capsys, monkeypatch, width):
    lines = _status(capsys, monkeypatch, width, CJK_STUDY, "--db", cjk_db)
    assert max(cell_len(line) for line in lines) <= width
    # the annotators' lines: "8/8 answered" starts at the same cell on each (CJK name padded by cells)
    counts = [line for line in lines if "answered  0 skipped" in line]
    assert [line.split()[0] for line in counts] == ["ana", "bo", CJK_NAME]
    assert len({cell_len(line[:line.index("8/8 answered")]) for line in counts}) == 1
    acc = _rows_by_annotator(_section(lines, "accuracy by annotator"))
    assert set(acc) == set(EXPECTED)
    for who, (answered, correct, share) in EXPECTED.items():
        row = acc[who]
        if "answered:" in row:  # block form
            assert f"answered: {answered}" in row and f"correct: {correct}" in row and f"wrong): {share}" in row
        else:
            assert row.split()[1:5] == [answered, correct, "0", share]
    per = _rows_by_annotator(_section(lines, "per annotator"))
    assert set(per) == set(EXPECTED)
    for who, (answered, _, _) in EXPECTED.items():
        row = per[who]
        assert (f"items done: {answered}" in row) if "kind:" in row else (row.split()[1:3] == ["human", answered])
    # a figure's value and interval are never split over two lines: each is whole on one line
    for label in ("Fleiss' kappa", "majority-vote accuracy", "accuracy (all answers"):
        at = next(i for i, line in enumerate(lines) if line.startswith(f"    {label}"))
        text = lines[at] + (" " + lines[at + 1].strip() if lines[at + 1].startswith("      ") else "")
        value = text.split("): ")[-1].split(" (n=")[0] if "): " in text else text.split(": ")[-1].split(" (n=")[0]
        number, interval = value.split(" ", 1)
        assert interval.startswith("[") and interval.endswith("]"), value
        assert any(number in line for line in lines[at:at + 2]) and any(interval in line for line in lines[at:at + 2])
    if width == 160:  # wide enough for the small table: a table, not blocks
        assert _section(lines, "accuracy by annotator")[0].split()[0] == "annotator"


@pytest.mark.parametrize("width", [60, 80, 160])
def test_study_list_columns_start_at_the_same_cell_with_wide_names(cjk_db, capsys, monkeypatch, width):
    lines = _status(capsys, monkeypatch, width, "--db", cjk_db)
    table = lines[lines.index("") + 1:]
    table = [line for line in table if line]
    assert len(table) == 3 and max(cell_len(line) for line in table) <= width
    head = _fields(table[0])
    for row in table[1:]:
        got = _fields(row)
        # study, task, annotators, progress and last activity start where their headers do (the progress cell
        # may hold two spaces: "0/12    0%"); items (numbers, right-aligned) end where theirs does
        assert [got[i][0] for i in (0, 1, 3, 4, -1)] == [head[i][0] for i in (0, 1, 3, 4, -1)], (row, table[0])
        assert got[2][1] == head[2][1], (row, table[0])
    assert table[1].split()[0].startswith(CJK_STUDY[:2]) and table[2].split()[0].startswith("plain-")


@pytest.mark.slow
def test_a_pipe_gets_the_full_form(cjk_db):
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    got = subprocess.run([sys.executable, "-m", "annotator.cli", "status", CJK_STUDY, "--db", cjk_db],
                         capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    per = _section(lines, "per annotator")
    assert per[0].split()[:2] == ["annotator", "kind"] and len(per) == 4  # the header and one row each: a table
    rows = _rows_by_annotator(per)
    assert {who: rows[who].split()[1:3] for who in EXPECTED} == {w: ["human", a] for w, (a, _, _) in EXPECTED.items()}
    assert cell_len(per[0]) > 160  # the full table, every column
