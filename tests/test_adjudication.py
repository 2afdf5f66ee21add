"""Adjudication for every task type: which units disagree (per task rule, boundaries included), the screen driven
with keys (final answer, exclusion with a reason, change), and the adjudications used by export, release and gold
labels."""
from __future__ import annotations

import pytest

from annotator.adjudication import AdjudicationSession
from annotator.commands.export import export_rows
from annotator.release import build_release
from annotator.screens.adjudicate import AdjudicateApp
from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.gold_label.figures import study_gold_labels
from annotator.tasks.base import StudySpec
from storage.errors import PrefvalError
from storage.models import AnnotationIn, ItemIn
from storage.store import Store
from tests.conftest import make_mcq_items
from tests.test_task_mcq import screen_text

NAMES = ["ana", "bo", "cy"]


def _mcq(choice, shown="A"):
    if choice is None:
        return {"choice": None, "letter": None, "shown": None, "cant_tell": True}
    return {"choice": choice, "letter": "ABCD"[choice], "shown": shown, "cant_tell": False}


# q0: all pick option 0 (shown under different letters: still agreement); q1: 0, 0, 1; q2: 2, can't tell, 2;
# q3: 3, 3, 3; q4 and q5 answered by two only, the same option.
PLAN = {
    "q0": [_mcq(0, "A"), _mcq(0, "C"), _mcq(0, "B")],
    "q1": [_mcq(0), _mcq(0), _mcq(1)],
    "q2": [_mcq(2), _mcq(None), _mcq(2)],
    "q3": [_mcq(3), _mcq(3, "D"), _mcq(3)],
    "q4": [_mcq(1), _mcq(1), None],
    "q5": [_mcq(2), None, _mcq(2)],
}


def _answer_plan(s: Store, study_name: str, plan: dict[str, list], notes: dict | None = None) -> None:
    study = s.get_study(study_name)
    units = {u.id: u for u in s.units(study.id)}
    items = s.get_items([u.item_id for u in units.values()])
    for i, who in enumerate(NAMES):
        ann = s.ensure_annotator(who)
        for a in s.assignments(study.id, ann.id):
            u = units[a.unit_id]
            ext = items[u.item_id].external_id
            answer = plan[ext][i]
            if answer is None:
                continue
            s.add_annotation(AnnotationIn(study_id=study.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                          assignment_id=a.id, status="answered", answer=answer))
            if notes and (ext, who) in notes:
                s.add_annotation(AnnotationIn(study_id=study.id, unit_id=u.id, item_id=u.item_id,
                                              annotator_id=ann.id, assignment_id=a.id, status="note",
                                              note=notes[(ext, who)]))


@pytest.fixture
def mcq3(db_file):
    items, contexts = make_mcq_items()
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", items, contexts=contexts)
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=3, annotators=NAMES))
        # a judge that disagrees everywhere must not create disagreements (only human answers count)
        _answer_plan(s, "st", PLAN, notes={("q1", "bo"): "BO-NOTE: the [b]key[/b] looks wrong"})
        judge = s.ensure_annotator("judge", kind="llm")
        study = s.get_study("st")
        for u in s.units(study.id):
            s.add_annotation(AnnotationIn(study_id=study.id, unit_id=u.id, item_id=u.item_id, annotator_id=judge.id,
                                          status="answered", source="llm", answer=_mcq(3)))
    return db_file


def test_disagreements_follow_each_task_rule():
    mcq = get_task("mcq")
    assert not mcq.disagrees([_mcq(0, "A"), _mcq(0, "D")], {})
    assert mcq.disagrees([_mcq(0), _mcq(None)], {})
    assert not mcq.disagrees([_mcq(0)], {})
    pf = get_task("persona_filter")
    assert not pf.disagrees([{"decision": "drop", "reasons": ["vague"]}, {"decision": "drop", "reasons": []}], {})
    assert pf.disagrees([{"decision": "drop", "reasons": []}, {"decision": "keep", "reasons": []}], {})
    pw = get_task("pairwise")
    assert not pw.disagrees([{"winner": "A", "shown_left": "A", "pressed": "left"},
                             {"winner": "A", "shown_left": "B", "pressed": "right"}], {})
    rubric = get_task("rubric")
    # threshold 1 (default): 3 vs 4 is 1 apart (agree), 2 vs 4 is 2 apart (disagree)
    assert not rubric.disagrees([{"scores": {"a": 3, "b": 5}}, {"scores": {"a": 4, "b": 5}}], {})
    assert rubric.disagrees([{"scores": {"a": 2, "b": 5}}, {"scores": {"a": 4, "b": 5}}], {})
    assert not rubric.disagrees([{"scores": {"a": 2}}, {"scores": {"a": 4}}],
                                {"options": {"adjudication_threshold": "2"}})
    gold = get_task("gold_label")
    assert gold.disagrees([{"label": 1}, {"label": 1}, {"label": 0}], {})


async def test_screen_sets_final_answers_excludes_and_changes(mcq3):
    with Store.open(mcq3, mode="create") as s:
        session = AdjudicationSession(s, "st", "judy")
        items = [session.items[u.item_id].external_id for u in session.units]
    assert items == ["q1", "q2"]
    app = AdjudicateApp(mcq3, "st", "judy")
    async with app.run_test(size=(120, 36)) as pilot:
        text = screen_text(app)
        assert "ana: option A" in text and "bo: option A" in text and "cy: option B" in text
        assert "BO-NOTE: the [b]key[/b] looks wrong" in text  # a note is text, never markup
        assert "judge" not in text
        await pilot.press("b")  # option B in the item's original order: choice 1
        assert app.session.index == 1
        await pilot.press("E")
        for ch in "ambiguous":
            await pilot.press(ch)
        await pilot.press("enter")
        await pilot.press("u")  # back to q1: change the final answer
        await pilot.press("c")
        await pilot.pause()
    with Store.open(mcq3, mode="create") as s:
        study = s.get_study("st")
        log = s.adjudication_log(study.id)
        units = {u.id: u for u in s.units(study.id)}
        items = s.get_items([u.item_id for u in units.values()])
        ext = [items[units[a.unit_id].item_id].external_id for a in log]
        assert ext == ["q1", "q2", "q1"]
        assert [a.kind for a in log] == ["final", "exclude", "final"]
        assert log[0].answer["choice"] == 1 and log[2].answer["choice"] == 2
        assert log[1].reason == "ambiguous" and log[2].supersedes == log[0].id and log[0].supersedes is None
        rows = [r for r in export_rows(s, "st") if r["annotator_kind"] == "adjudicator"]
        assert sorted((r["item"], r["status"]) for r in rows) == [("q1", "adjudicated"), ("q2", "excluded")]
        assert [r["note"] for r in rows if r["item"] == "q2"] == ["ambiguous"]
        history = [r for r in export_rows(s, "st", history=True) if r["annotator_kind"] == "adjudicator"]
        assert len(history) == 3
        _, sheet = build_release(s, ["st"])
    reasons = {e["item"]: e["reason"] for e in sheet["exclusions"]}
    assert reasons == {"q2": "excluded by adjudication: ambiguous"}
    assert sheet["release"]["items"] == 5


def test_no_disagreement_is_one_line_error(db_file):
    items, contexts = make_mcq_items(2)
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", items, contexts=contexts)
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=3, annotators=NAMES))
        with pytest.raises(PrefvalError, match="no disagreements"):
            AdjudicationSession(s, "st", "judy")


def test_gold_label_adjudicated_through_the_screen_becomes_the_gold_label(db_file):
    cands = [ItemIn(external_id=g, kind="gold_candidate",
                    payload={"recipient": "r", "task": "t", "attribute": f"attr {g}"}) for g in ("g1", "g2", "g3")]
    with Store.open(db_file, mode="create") as s:
        s.import_items("c", "jsonl", cands)
        create_study(s, StudySpec(name="gold", task="gold_label", datasets=["c"], seed=1, annotators=NAMES,
                                  options={"context_threshold": "0"}))
        _answer_plan(s, "gold", {"g1": [{"label": 1}] * 3, "g2": [{"label": 1}, {"label": 0}, {"label": 0}],
                                 "g3": [{"label": 0}, {"label": 1}, {"label": 0}]})
        assert study_gold_labels(s, "gold") == {"g1": 1, "g2": None, "g3": None}
        session = AdjudicationSession(s, "gold", "judy")
        assert [session.items[u.item_id].external_id for u in session.units] == ["g2", "g3"]
        session.decide(get_task("gold_label").decide("1", session.view(), None))
        session.move(1)
        session.exclude("the attribute is unclear")
        assert study_gold_labels(s, "gold") == {"g1": 1, "g2": 1, "g3": None}
        released, _ = build_release(s, ["gold"])
    assert {r["external_id"]: r["release"]["gold_label"] for r in released["c"]} == {"g1": 1, "g2": 1}
