"""`prefval status` fits the terminal (new-user trial 6: at 80 columns each study wrapped to two lines, rows were
130 characters of mostly padding): one line per study, columns as wide as their values, a narrower bar and cut
names when the terminal is narrow, every field of issue 12 (task, items, annotators, bar, last activity)."""
from __future__ import annotations

from annotator.cli import main
from annotator.commands.status import study_lines

STUDIES = [
    {"name": "pm-v1", "task": "mcq", "items": 40, "n_annotators": 3, "answered": 6, "needed": 120,
     "progress": 0.05, "last_activity": "2026-12-01T10:32:10.5+00:00"},
    {"name": "a-very-long-study-name", "task": "persona_filter", "items": 18, "n_annotators": 1, "llm_judges": 1,
     "answered": 2, "needed": 18, "progress": 2 / 18, "last_activity": None},
]


def test_at_80_columns_the_bar_narrows_and_long_names_are_cut():
    # by hand: name cut to 8 ("a-very-" + "…"), bar 6 (round(6*6/120)=0 and round(6*2/18)=1 filled),
    # columns task 14, items 5, "ann." 8 ("1 +1 LLM"), answers 5 ("6/120"), share 4, then the date
    assert study_lines(STUDIES, 80) == [
        "  study     task            items  ann.      progress           last (UTC)",
        "  pm-v1     mcq                40  3         ░░░░░░ 6/120   5%  2026-12-01 10:32",
        "  a-very-…  persona_filter     18  1 +1 LLM  █░░░░░ 2/18   11%  -",
    ]
    assert max(len(line) for line in study_lines(STUDIES, 80)) == 80  # 2+8+2+14+2+5+2+8+2+17+2+16


def test_wide_terminal_shows_whole_names_and_the_full_bar():
    # round(12*6/120)=1 and round(12*2/18)=1 filled of 12
    assert study_lines(STUDIES, 200) == [
        "  study                   task            items  annotators  progress                 last activity (UTC)",
        "  pm-v1                   mcq                40  3           █░░░░░░░░░░░ 6/120   5%  2026-12-01 10:32",
        "  a-very-long-study-name  persona_filter     18  1 +1 LLM    █░░░░░░░░░░░ 2/18   11%  -",
    ]


def test_status_command_at_80_columns_one_line_per_study(mcq_study, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["status", "--db", mcq_study]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("  study"))
    assert all(len(line) <= 80 for line in lines)
    assert lines[head + 1].split()[:4] == ["st", "mcq", "6", "0"] and lines[head + 1].endswith("-")
    assert lines[head + 2:] in ([], [""])  # the one study is one line
