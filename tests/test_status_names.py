"""`prefval status` never shows two studies under the same name (issue 12, newcomer check: at 80 columns
`personas-r1` and `personas-r2` were both cut to `persona…`), and keeps one line per study down to 60 columns (the
date column used to wrap): long names keep the end that tells them apart, columns narrow in a stated order
(annotator.commands.status.PLANS), widths are counted in terminal cells (a CJK character takes two)."""
from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

import pytest

from annotator.cli import main
from annotator.commands.status import cells, distinct_names, fit_names, study_lines
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from storage.store import Store
from tests.conftest import make_mcq_items


def _study(name: str, task: str = "persona_filter", items: int = 18, n: int = 2, answered: int = 3,
           needed: int = 36, last: str | None = "2026-12-01T10:32:10.5+00:00", llm: int = 0) -> dict:
    return {"name": name, "task": task, "items": items, "n_annotators": n, "llm_judges": llm, "answered": answered,
            "needed": needed, "progress": answered / needed, "last_activity": last}


ROUNDS = [_study("personas-r1"), _study("personas-r2", items=9, answered=0, needed=18, last=None, llm=1),
          _study("pm-blind", "mcq", 40, 3, 6, 120)]


def test_common_prefix_at_80_columns_keeps_the_distinguishing_end():
    # by hand: whole names need 83 columns with short headers (2+11+2+14+2+5+2+8+2+17+2+16); the other columns take
    # 70, so names get 80-2-70 = 8 cells:
    # "persona…" twice -> the end kept, widened to the last part "-r1": "pers" + "…" + "-r1"; "pm-blind" fits whole
    # bars of 6: round(6*3/36) = round(0.5) = 0 and round(6*6/120) = 0 filled
    assert study_lines(ROUNDS, 80) == [
        "  study     task            items  ann.      progress           last (UTC)",
        "  pers…-r1  persona_filter     18  2         ░░░░░░ 3/36    8%  2026-12-01 10:32",
        "  pers…-r2  persona_filter      9  2 +1 LLM  ░░░░░░ 0/18    0%  -",
        "  pm-blind  mcq                40  3         ░░░░░░ 6/120   5%  2026-12-01 10:32",
    ]


def test_at_60_columns_each_study_is_one_line():
    # by hand, after the steps of PLANS: bar 3 (77), the date without its year (72), no bar (68: the progress column
    # is "3/36     8%", 10 wide), task names cut to 6 cells ("perso…", 60)
    lines = study_lines(ROUNDS, 60)
    assert lines == [
        "  study     task    items  ann.      progress    last (UTC)",
        "  pers…-r1  perso…     18  2         3/36    8%  12-01 10:32",
        "  pers…-r2  perso…      9  2 +1 LLM  0/18    0%  -",
        "  pm-blind  mcq        40  3         6/120   5%  12-01 10:32",
    ]
    assert max(map(len, lines)) == 60


def test_at_120_columns_everything_is_whole():
    # round(12*3/36) = 1, round(12*0/18) = 0, round(12*6/120) = round(0.6) = 1 filled of 12
    assert study_lines(ROUNDS, 120) == [
        "  study        task            items  annotators  progress                 last activity (UTC)",
        "  personas-r1  persona_filter     18  2           █░░░░░░░░░░░ 3/36    8%  2026-12-01 10:32",
        "  personas-r2  persona_filter      9  2 +1 LLM    ░░░░░░░░░░░░ 0/18    0%  -",
        "  pm-blind     mcq                40  3           █░░░░░░░░░░░ 6/120   5%  2026-12-01 10:32",
    ]


def test_between_60_and_80_columns_the_steps_come_in_their_order():
    # 77: the bar narrows to 3 before the date loses its year; 72: the year goes before the bar
    at77 = study_lines(ROUNDS, 77)
    assert at77[1] == "  pers…-r1  persona_filter     18  2         ░░░ 3/36    8%  2026-12-01 10:32"
    at72 = study_lines(ROUNDS, 72)
    assert at72[1] == "  pers…-r1  persona_filter     18  2         ░░░ 3/36    8%  12-01 10:32"
    at68 = study_lines(ROUNDS, 68)  # the bar goes before task names are cut
    assert at68[1] == "  pers…-r1  persona_filter     18  2         3/36    8%  12-01 10:32"
    assert [max(map(len, x)) for x in (at77, at72, at68)] == [77, 72, 68]


def test_name_sets_shortened_apart():
    # common suffix: the starts differ, so the plain cut tells them apart
    assert distinct_names(["alpha-study-2026", "beta-study-2026"], 8) == ["alpha-s…", "beta-st…"]
    # common prefix: the ends are kept, widened to the last part
    assert distinct_names(["personas-r1", "personas-r2", "personas-r10"], 8) == ["pers…-r1", "pers…-r2", "per…-r10"]
    # one very long name among short ones: only it is cut
    assert distinct_names(["pm", "a-very-long-study-name", "gold"], 8) == ["pm", "a-very-…", "gold"]
    # a cut name never looks like another whole name: "abcdefg…" is taken, so the cut keeps one end cell
    assert distinct_names(["abcdefg…", "abcdefghij"], 8) == ["abcdefg…", "abcdef…j"]
    # names that differ only in the middle cannot be told apart in 8 cells with 3 of the start: a wider column
    # ("stu" + "…" + "x-zzzz" = 10 cells)
    assert distinct_names(["study-aaaa-x-zzzz", "study-aaaa-y-zzzz"], 8) is None
    assert fit_names(["study-aaaa-x-zzzz", "study-aaaa-y-zzzz"], 8) == (["stu…x-zzzz", "stu…y-zzzz"], 10)


def test_wide_characters_count_two_cells():
    # 名前の長い研究その一 is 10 characters, 20 cells; in 8 cells the plain cut is "名前の…" (2+2+2+1 = 7 cells: a
    # fourth character would make 9), the same for both; so the end stays: one cell holds no CJK character, two
    # hold "一": "名前" (4) + "…" (1) + "一" (2) = 7 cells
    names = ["名前の長い研究その一", "名前の長い研究その二"]
    assert distinct_names(names, 8) == ["名前…一", "名前…二"]
    assert [cells(n) for n in distinct_names(names, 8)] == [7, 7]
    studies = [_study(names[0]), _study(names[1]), _study("pm", "mcq")]
    # 60 columns, last step but one: the other columns take 2+6+2+5+2+4+2+9+2+11 = 45, so names get 60-2-45 = 13
    # cells: the plain cut "名前の長い研" (12) + "…" is the same for both, so "名前の長い" (10) + "…" + "一" (2)
    assert study_lines(studies, 60) == [
        "  study          task    items  ann.  progress   last (UTC)",
        "  名前の長い…一  perso…     18  2     3/36   8%  12-01 10:32",
        "  名前の長い…二  perso…     18  2     3/36   8%  12-01 10:32",
        "  pm             mcq        18  2     3/36   8%  12-01 10:32",
    ]
    # 80 columns, step 3: 2+14+2+5+2+4+2+16+2+16 = 65 for the others, 13 again for the names
    lines = study_lines(studies, 80)
    assert lines[1] == "  名前の長い…一  persona_filter     18  2     ░░░░░░ 3/36   8%  2026-12-01 10:32"
    assert [cells(line) for line in lines] == [74, 80, 80, 80]


def test_lines_too_wide_for_every_step_are_cut_not_wrapped():
    huge = [_study("st", "judge_validation", 1_000_000, 3, 2_999_999, 3_000_000, llm=2)]
    lines = study_lines(huge, 60)
    # by hand, at the last step: 2 + 5 ("study") + 2 + 6 + 2 + 9 + 2 + 8 + 2 + 24 ("2,999,999/3,000,000 100%") = 62
    # columns: cut to 59 and an ellipsis
    assert lines == ["  study  task        items  ann.      progress",  # "items" right-aligned in 9
                     "  st     judge…  1,000,000  3 +2 LLM  2,999,999/3,000,000 1…"]


NAME = st.text(alphabet=st.sampled_from("abcpr-_12名前"), min_size=1, max_size=24)


@settings(max_examples=150, deadline=None)
@given(st.lists(NAME, min_size=1, max_size=6, unique=True), st.sampled_from([60, 80, 120]))
@pytest.mark.slow
def test_any_names_stay_apart_and_each_study_is_one_line(names, width):
    studies = [_study(n, "persona_filter" if i % 2 else "gold_label") for i, n in enumerate(names)]
    lines = study_lines(studies, width)
    assert len(lines) == len(names) + 1
    assert all(cells(line) <= width for line in lines)
    shown, col = fit_names(names, 8)
    assert len(set(shown)) == len(names)
    assert all(cells(s) <= max(col, 8) for s in shown)
    # each shown name is the name, or its start, an ellipsis and possibly its end
    for name, s in zip(names, shown):
        if s != name:
            head, _, tail = s.partition("…")
            assert name.startswith(head) and name.endswith(tail) and len(head) + len(tail) < len(name)


MIDDLE = ["persona-filter-round-1-of-the-pilot", "persona-filter-round-2-of-the-pilot", "pm"]


def test_status_command_gives_names_the_room_left_and_keeps_them_apart(db_file, capsys, monkeypatch):
    # names that differ only in the middle, through the command ($COLUMNS, the database's own counts)
    items, _ = make_mcq_items(4, with_context=False)
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", items)
        for name in MIDDLE:
            create_study(s, StudySpec(name=name, task="mcq", datasets=["ds"], seed=1, annotators=["ana", "bo"],
                                      annotators_per_item=2))
    # by hand, 4 items x 2 annotators: 0/8 needed, no activity ("-"). 120: whole (88 wide). 80: step 3, the others
    # take 2+4+2+5+2+4+2+15+2+10 = 48, names 80-2-48 = 30 cells, cut at the end (the "1"/"2" is in the first 29).
    # 60: no room at steps 3-7 (the names need 18 cells to keep 3 of the start and "1-of-the-pilot"); at step 8 (no
    # date column) the others take 2+4+2+5+2+4+2+8 = 29, names 29 cells.
    for width, expect in ((120, MIDDLE),
                          (80, ["persona-filter-round-1-of-the…", "persona-filter-round-2-of-the…", "pm"]),
                          (60, ["persona-filter-round-1-of-th…", "persona-filter-round-2-of-th…", "pm"])):
        monkeypatch.setenv("COLUMNS", str(width))
        capsys.readouterr()
        assert main(["status", "--db", db_file]) == 0
        lines = capsys.readouterr().out.splitlines()
        head = next(i for i, line in enumerate(lines) if line.startswith("  study"))
        rows = [line for line in lines[head + 1:] if line]
        assert len(rows) == 3 and all(len(line) <= width for line in lines)
        shown = {re.split(r"\s{2,}", r.strip())[0] for r in rows}  # status lists the studies by name
        assert shown == set(expect)
        assert all(re.search(r"\b0/8\s+0%", r) for r in rows)
        assert all(r.endswith("-") for r in rows) == (width != 60)


def test_a_name_with_surrounding_space_from_an_older_file_is_quoted():
    # 'pm ' (allowed before names were checked) padded in its column would look exactly like pm
    lines = study_lines([_study("pm", "mcq"), _study("pm ", "mcq"), _study(" pm", "mcq")], 120)
    assert [line[2:8] for line in lines] == ["study ", "pm    ", "'pm ' ", "' pm' "]
