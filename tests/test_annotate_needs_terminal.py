"""`prefval annotate` without a terminal (trial 6: `prefval annotate pool --annotator X </dev/null | cat` wrote escape
codes into the pipe and claimed 20 items for X): refused with one line before anything is claimed or written."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from annotator.cli import main
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from storage.store import Store
from tests.conftest import make_mcq_items

ROOT = Path(__file__).resolve().parents[1]


def _pool(path: str) -> None:
    items, _ = make_mcq_items(30, with_context=False)
    with Store.open(path, mode="create") as s:
        s.import_items("ds", "jsonl", items)
        create_study(s, StudySpec(name="pool", task="mcq", datasets=["ds"], seed=3, annotators_per_item=1))


def _contents(path: str) -> dict[str, int]:
    with Store.open(path, mode="ro") as s:
        return {t: s.db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                for t in ("annotators", "assignments", "annotations", "events")}


@pytest.mark.slow
def test_annotate_into_a_pipe_is_refused_before_claiming(db_file):
    _pool(db_file)
    before = _contents(db_file)
    assert before["assignments"] == 0 and before["annotators"] == 0
    done = subprocess.run([sys.executable, "-m", "annotator.cli", "annotate", "pool", "--annotator", "x",
                           "--db", db_file], stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert done.returncode == 1
    assert done.stdout == ""  # no escape codes into the pipe
    err = done.stderr.strip()
    assert "\n" not in err and "\x1b" not in err
    assert err == ("prefval: error: prefval annotate needs a terminal: stdin, stdout and stderr are not a terminal "
                   "(run it in a terminal, e.g. over ssh -t; nothing was claimed or written)")
    assert _contents(db_file) == before  # no annotator x, no claim, no event


class _Stream:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize("ttys, what", [((False, True, True), "stdin is"), ((True, False, True), "stdout is"),
                                        ((True, True, False), "stderr is"),
                                        ((True, False, False), "stdout and stderr are"), ((True, True, True), None)])
def test_each_stream_not_a_terminal_is_named(monkeypatch, ttys, what):
    from annotator.commands.annotate import terminal_problem

    for name, tty in zip(("stdin", "stdout", "stderr"), ttys):
        monkeypatch.setattr(f"sys.{name}", _Stream(tty))
    got = terminal_problem()
    assert got == (f"{what} not a terminal" if what else None)


@pytest.mark.slow
def test_annotate_with_the_screen_redirected_claims_nothing(db_file, capsys, monkeypatch):
    _pool(db_file)
    before = _contents(db_file)
    monkeypatch.setattr("sys.stdin", _Stream(True))  # keys from a terminal, but stdout and stderr captured
    assert main(["annotate", "pool", "--annotator", "x", "--db", db_file]) == 1
    assert "needs a terminal: stdout and stderr are not a terminal" in capsys.readouterr().err
    assert _contents(db_file) == before
