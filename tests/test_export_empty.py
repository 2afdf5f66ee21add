"""`prefval export STUDY --format csv` of a study with no answers writes the header row a non-empty export has
(issue 12: it wrote a lone line break, which pandas.read_csv refuses with EmptyDataError), for every task type, of
the current answers and of the history."""
from __future__ import annotations

import csv
import io

import pandas as pd
import pytest

from annotator.cli import main
from annotator.session import Session
from storage.store import Store
from tests.test_screen_sizes import TASKS, sizes_db  # noqa: F401  (the fixture: one study a task, bundled samples)


def _csv(db: str, tmp_path, study: str, name: str, history: bool = False) -> str:
    out = str(tmp_path / name)
    argv = ["export", study, "--format", "csv", "--out", out, "--db", db] + (["--history"] if history else [])
    assert main(argv) == 0
    with open(out, encoding="utf-8", newline="") as f:
        return f.read()


def _answer_first_item(db: str, study: str, who: str) -> None:
    """`who` answers the first item of their queue completely, as the screen's decision keys would: the first key
    that completes the answer, else the first one that adds to it (a rubric's next dimension), in turn."""
    with Store.open(db, mode="rw") as s:
        session = Session(s, study, who)
        view, partial = session.view(), None
        for _ in range(20):
            decisions = [session.task.decide(k.key, view, partial)
                         for k in session.task.decision_keys(view, partial)]
            decisions = [d for d in decisions if d is not None]
            done = [d for d in decisions if d.complete]
            if done:
                session.decide(done[0])
                return
            partial = decisions[0].answer
        raise AssertionError(f"{study}: no complete answer in 20 keys")


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.slow
def test_empty_csv_export_has_the_header_of_a_one_answer_export(sizes_db, task, tmp_path):  # noqa: F811
    study = f"s-{task}"
    empty = _csv(sizes_db, tmp_path, study, "empty.csv")
    empty_history = _csv(sizes_db, tmp_path, study, "empty-history.csv", history=True)
    for text in (empty, empty_history):
        assert text.count("\n") == 1 and text.startswith("study,item,item_b,annotator,annotator_kind,status,answer,")
        frame = pd.read_csv(io.StringIO(text))  # no EmptyDataError
        assert len(frame) == 0 and list(frame.columns) == next(csv.reader(io.StringIO(text)))
    _answer_first_item(sizes_db, study, "ana")
    one = _csv(sizes_db, tmp_path, study, "one.csv")
    one_history = _csv(sizes_db, tmp_path, study, "one-history.csv", history=True)
    rows = list(csv.reader(io.StringIO(one)))
    assert len(rows) == 2 and rows[1][5] == "answered"  # the header and the one answer
    assert rows[0] == next(csv.reader(io.StringIO(empty)))
    assert next(csv.reader(io.StringIO(one_history))) == next(csv.reader(io.StringIO(empty_history)))
    # the task's own columns are there (the ones that exist only with an answer before this fix)
    assert len(rows[0]) > 7 + 8
    assert rows[0][-8:] == ["note", "flagged", "submitted_at", "seconds", "attention_check", "check_correct",
                            "annotator_excluded", "excluded_reason"]


def test_empty_jsonl_export_is_empty(sizes_db, tmp_path, capsys):  # noqa: F811
    assert main(["study", "create", "fresh", "--task", "rubric", "--dataset", "ans", "--db", sizes_db]) == 0
    capsys.readouterr()
    assert main(["export", "fresh", "--format", "jsonl", "--db", sizes_db]) == 0
    assert capsys.readouterr().out == ""  # no line at all: a JSONL file of zero records
