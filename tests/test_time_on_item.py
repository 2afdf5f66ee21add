"""Time on item sums the visits (each visit kept in the history), and `status` and the report give one median."""
from __future__ import annotations

import json

import pytest

from annotator.cli import main
from annotator.session import Session
from annotator.tasks.base import Decision
from reports.per_annotator import per_annotator_table
from reports.study_data import load_study_data
from storage.store import Store


class Clock:
    def __init__(self, t: float = 0.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def _answer(choice: int) -> Decision:
    return Decision({"choice": choice, "letter": "ABCD"[choice], "shown": "A", "cant_tell": False})


def test_read_quit_reopen_answer_sums_the_visits(mcq_study):
    clock = Clock(100.0)
    with Store.open(mcq_study, mode="create") as s:
        w = Session(s, "st", "ana", clock=clock)
        first_unit = w.queue[0].unit_id
        clock.t = 108.0  # read for 8 s, then quit
        w.close()
        clock.t = 500.0
        w2 = Session(s, "st", "ana", clock=clock)
        assert w2.index == 0
        clock.t = 500.6  # answer 0.6 s after reopening
        row = w2.decide(_answer(1))
        assert row.seconds == 8.6  # not 0.6
        visits = [e.payload for e in s.events("visit", w2.study.id)]
        assert visits == [{"unit_id": first_unit, "seconds": 8.0, "started_at": visits[0]["started_at"]}]
        # the next item: back and forth without answering, then answered
        clock.t = 510.0
        w2.back()  # 9.4 s on item 2, unanswered: a visit
        clock.t = 511.0
        w2.go(1)  # 1 s looking at the answered item 1: a visit, carried into a later change of item 1
        clock.t = 513.0
        second = w2.decide(_answer(2))
        assert second.seconds == 9.4 + 2.0
        data = load_study_data(s, "st")
        table = per_annotator_table(data)
    row = table.rows[0]
    assert row[table.columns.index("too fast")] == 0  # 8.6 s is not too fast
    assert row[table.columns.index("median s/item")] == round((8.6 + 11.4) / 2, 1)


def test_status_and_report_give_one_median(mcq_study, capsys):
    clock = Clock(0.0)
    with Store.open(mcq_study, mode="create") as s:
        w = Session(s, "st", "ana", clock=clock)
        clock.t = 4.0
        w.decide(_answer(0))  # item 1 in 4 s
        clock.t = 10.0
        w.decide(_answer(1))  # item 2 in 6 s
        clock.t = 11.0
        w.back()
        w.back()  # back to item 1 (1 s on item 3, a visit)
        clock.t = 31.0
        w.decide(_answer(2))  # item 1 changed after 20 s: its time per item stays the first answer's 4 s
    assert main(["status", "st", "--db", mcq_study, "--format", "json"]) == 0
    ana = json.loads(capsys.readouterr().out)["studies"][0]["annotators"][0]
    assert ana["median_seconds"] == 5.0  # median of 4 and 6
    assert main(["report", "st", "--db", mcq_study, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    per = doc["studies"][0]["per_annotator"]
    assert per["rows"][0][per["columns"].index("median s/item")] == 5.0


def test_median_is_not_rounded_before_the_table_formats_it(mcq_study, capsys):
    """Items in 1.523, 1.542 and 1.601 s: the median is 1.542 (the middle one), printed with the same 3 decimals
    as the fastest, 1.523; it used to be rounded to 1.5 first and printed as 1.500."""
    clock = Clock(0.0)
    with Store.open(mcq_study, mode="create") as s:
        w = Session(s, "st", "ana", clock=clock)
        for i, t in enumerate((1.523, 1.523 + 1.542, 1.523 + 1.542 + 1.601)):
            clock.t = t
            w.decide(_answer(i))
        table = per_annotator_table(load_study_data(s, "st"))
    row = table.rows[0]
    assert row[table.columns.index("median s/item")] == pytest.approx(1.542)
    assert row[table.columns.index("fastest s/item")] == pytest.approx(1.523)
    assert main(["report", "st", "--db", mcq_study, "--too-fast", "1", "--format", "md"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("| ana ") and "1.523" in x)
    assert "| 1.542 |" in line and "| 1.523 |" in line and "1.500" not in line
