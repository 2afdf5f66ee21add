"""The adjudication screen shows each annotator's "needs review" flag beside their answer (issue 12: it showed their
notes but not their flags); adjudication is not blind. A flag taken back is not shown; a flag on an item the
annotator did not answer is shown with "no answer", and such a row never counts as an answer."""
from __future__ import annotations

import pytest

from annotator.adjudication import AdjudicationSession
from annotator.screens.adjudicate import AdjudicateApp
from storage.models import AnnotationIn
from storage.store import Store
from tests.test_adjudication import mcq3  # noqa: F401  (fixture: q1 and q2 disagree among ana, bo, cy)
from tests.tui_helpers import decide


def _mark(s: Store, ext: str, who: str, status: str) -> None:
    """`who` appends a flag or unflag row on item `ext` of study st (as the screen's `m` does)."""
    study = s.get_study("st")
    ann = s.find_annotator(who)
    for a in s.assignments(study.id, ann.id):
        u = next(u for u in s.units(study.id) if u.id == a.unit_id)
        if s.get_items([u.item_id])[u.item_id].external_id == ext:
            s.add_annotation(AnnotationIn(study_id=study.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                          assignment_id=a.id, status=status))
            return
    raise AssertionError(f"{who} does not hold {ext}")


def _answer_lines(app) -> list[str]:
    return str(app.screen.query_one("#answer-list").render()).splitlines()


@pytest.mark.slow
async def test_the_flag_is_beside_the_flagging_annotators_answer_only(mcq3):  # noqa: F811
    with Store.open(mcq3, mode="rw") as s:
        _mark(s, "q1", "ana", "flag")      # q1: ana flagged it
        _mark(s, "q2", "cy", "flag")       # q2: cy flagged it, then took the flag back
        _mark(s, "q2", "cy", "unflag")
        flags_before = s.flagged(s.get_study("st").id)
    app = AdjudicateApp(mcq3, "st", "judy")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        # q1: ana 0 (A), bo 0 (A, with a note), cy 1 (B)
        lines = _answer_lines(app)
        assert [line for line in lines if "⚑" in line] == ["ana: option A  ⚑ needs review"]
        assert "bo: option A" in lines and "cy: option B" in lines
        await decide(pilot, "b")  # the final answer of q1; on to q2
        await pilot.pause()
        assert app.session.index == 1
        lines = _answer_lines(app)
        assert not any("⚑" in line for line in lines) and len([x for x in lines if ": " in x]) == 3
    with Store.open(mcq3, mode="rw") as s:
        study = s.get_study("st")
        (adj,) = s.adjudication_log(study.id)
        assert adj.kind == "final" and adj.answer["choice"] == 1
        assert s.flagged(study.id) == flags_before  # adjudicating leaves the annotators' flags as they were


@pytest.mark.slow
def test_a_flag_without_an_answer_is_shown_and_not_counted(mcq3):  # noqa: F811
    with Store.open(mcq3, mode="rw") as s:
        study = s.get_study("st")
        ana = s.find_annotator("ana")
        q1 = next(u for u in s.units(study.id) if s.get_items([u.item_id])[u.item_id].external_id == "q1")
        dee = s.ensure_annotator("dee")  # flagged q1 without answering it (e.g. an assignment later released)
        s.add_annotation(AnnotationIn(study_id=study.id, unit_id=q1.id, item_id=q1.item_id, annotator_id=dee.id,
                                      status="flag"))
        session = AdjudicationSession(s, "st", "judy")
        rows = session.answers[q1.id]
        assert [(r.annotator, r.answer is None, r.flagged) for r in rows] == [
            ("ana", False, False), ("bo", False, False), ("cy", False, False), ("dee", True, True)]
        assert ana is not None
        # still the same two disagreements: a flag is not an answer
        assert [session.items[u.item_id].external_id for u in session.units] == ["q1", "q2"]
