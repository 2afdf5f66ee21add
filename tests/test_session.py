"""Session rules that no single screen shows: several windows of one annotator, re-scoring, skip on an answer."""
from __future__ import annotations

from annotator.session import Session
from annotator.tasks.base import Decision
from storage.store import Store


def _answer(choice: int) -> Decision:
    return Decision({"choice": choice, "letter": "ABCD"[choice], "shown": "A", "cant_tell": False})


def test_two_windows_of_one_annotator_never_lose_an_answer(mcq_study):
    s1, s2 = Store.open(mcq_study, mode="create"), Store.open(mcq_study, mode="create")
    w1, w2 = Session(s1, "st", "ana"), Session(s2, "st", "ana")
    assert w1.index == w2.index == 0
    first = w1.decide(_answer(0))
    second = w2.decide(_answer(1))  # w2 still showed item 1 as open
    assert second.supersedes == first.id and w2.conflicts == 1 and w1.conflicts == 0
    w1.sync()
    assert w1.progress() == (1, 6)
    rows = s1.annotations(w1.study.id)
    assert [r.answer["choice"] for r in rows] == [0, 1]
    assert [c.answer["choice"] for c in s1.current_annotations(w1.study.id)] == [1]
    s1.close()
    s2.close()


def test_a_partial_rescoring_does_not_retract_the_answer(mcq_study):
    s = Store.open(mcq_study, mode="create")
    w = Session(s, "st", "ana")
    done = w.decide(_answer(2))
    w.back()
    w.decide(Decision({"choice": 3, "letter": "D", "shown": "B", "cant_tell": False}, complete=False))
    current = s.current_annotations(w.study.id)
    assert [c.id for c in current] == [done.id]  # the figures still count the complete answer
    latest = s.current_annotations(w.study.id, status=("answered", "skipped", "partial"))
    assert [c.status for c in latest] == ["partial"]  # the screen restores the re-scoring in progress
    assert w.progress() == (1, 6)
    reopened = Session(s, "st", "ana")
    assert reopened.resume_index() == 1
    s.close()


def test_skip_on_an_answered_item_only_moves_on(mcq_study):
    s = Store.open(mcq_study, mode="create")
    w = Session(s, "st", "ana")
    w.decide(_answer(0))
    w.back()
    assert w.skip() is None and w.index == 1
    assert [r.status for r in s.annotations(w.study.id)] == ["answered"]
    assert w.skip() is not None
    assert [r.status for r in s.annotations(w.study.id)] == ["answered", "skipped"]
    s.close()
