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
from tests.tui_helpers import decide

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


def answered_mcq_study(path: str, notes: dict | None = None) -> Store:
    """Study "st" (mcq, 5 items with conversations, annotators ana, bo and cy) answered as PLAN; the Store, open."""
    items, contexts = make_mcq_items()
    s = Store.open(path, mode="create")
    s.import_items("ds", "jsonl", items, contexts=contexts)
    create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=3, annotators=NAMES))
    _answer_plan(s, "st", PLAN, notes=notes)
    return s


@pytest.fixture
def mcq3(db_file):
    with answered_mcq_study(db_file, notes={("q1", "bo"): "BO-NOTE: the [b]key[/b] looks wrong"}) as s:
        # a judge that disagrees everywhere must not create disagreements (only human answers count)
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


@pytest.mark.slow
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
        await decide(pilot, "b")  # option B in the item's original order: choice 1 (once the conversation was seen)
        assert app.session.index == 1
        await pilot.press("E")
        for ch in "ambiguous":
            await pilot.press(ch)
        await pilot.press("enter")
        await pilot.press("u")  # back to q1: change the final answer (seen already: no scrolling again)
        await pilot.pause()
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
    # q4 and q5 have 2 answers of their quota of 3: held back (not adjudicated); q0, q1 (adjudicated), q3 released
    assert reasons == {"q2": "excluded by adjudication: ambiguous", "q4": "too few answers (2 of 3)",
                       "q5": "too few answers (2 of 3)"}
    assert sheet["release"]["items"] == 3


@pytest.mark.slow
def test_no_disagreement_is_one_line_error(db_file):
    items, contexts = make_mcq_items(2)
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", items, contexts=contexts)
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=3, annotators=NAMES))
        with pytest.raises(PrefvalError, match="no disagreements"):
            AdjudicationSession(s, "st", "judy")


@pytest.mark.slow
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


# ---- never judge what you cannot see, and who may adjudicate ----------------------------------------------------
LONG = "a long option in the PersonaMem style that wraps over several lines of the pane " * 6


@pytest.fixture
def long_mcq3(db_file):
    """Two MCQ items with four long options (no conversation); ana, bo and cy pick options 0, 1 and 2 on both, and
    cy's long note makes the answers column longer than a small screen."""
    from storage.payloads import McqPayload

    items = [ItemIn(external_id=f"p{i}", kind="mcq", payload=McqPayload(
        question=f"Which reply suits the user best ({i})?", options=[f"{k}: {LONG}" for k in "ABCD"],
        correct_index=0).model_dump()) for i in range(2)]
    plan = {f"p{i}": [_mcq(0), _mcq(1), _mcq(2)] for i in range(2)}
    notes = {("p0", "cy"): "CY-NOTE " + "the options read alike to me, " * 60}
    with Store.open(db_file, mode="create") as s:
        s.import_items("pm", "jsonl", items)
        create_study(s, StudySpec(name="pm", task="mcq", datasets=["pm"], seed=3, annotators=NAMES))
        _answer_plan(s, "pm", plan, notes=notes)
    return db_file


def _adjudications(db_file: str, study: str) -> list:
    with Store.open(db_file, mode="ro") as s:
        return s.adjudication_log(s.get_study(study).id)


@pytest.mark.parametrize("size", [(80, 24), (120, 35)])
@pytest.mark.slow
async def test_a_decision_key_counts_only_once_every_option_and_answer_was_on_screen(long_mcq3, size):
    from tests.tui_helpers import see_all

    app = AdjudicateApp(long_mcq3, "pm", "judy")
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        hint = str(app.screen.query_one("#hint").render())
        assert "scroll to see" in hint and "option D" in hint and "the answers" in hint, hint
        await pilot.press("d")
        await pilot.pause()
        assert _adjudications(long_mcq3, "pm") == [] and app.session.index == 0
        assert "option D" in app.screen.seen.unseen_labels()
        presses = await see_all(pilot)
        assert presses >= 2  # the options and the answers each needed scrolling
        assert str(app.screen.query_one("#hint").render()).strip() == ""
        await pilot.press("d")
        await pilot.pause()
        log = _adjudications(long_mcq3, "pm")
        assert [(a.kind, a.answer["choice"]) for a in log] == [("final", 3)]
        assert app.session.index == 1
        # p1 is another item: its options must be scrolled to again before a decision counts
        await pilot.press("a")
        await pilot.pause()
        assert len(_adjudications(long_mcq3, "pm")) == 1
        # back to p0, seen in this session: a decision there counts at once
        await pilot.press("u")
        await pilot.pause()
        await pilot.pause()
        await pilot.press("b")
        await pilot.pause()
    log = _adjudications(long_mcq3, "pm")
    assert [(a.kind, a.answer["choice"]) for a in log] == [("final", 3), ("final", 1)]
    assert log[1].supersedes == log[0].id


@pytest.mark.slow
def test_an_annotator_of_the_study_adjudicates_only_with_allow_annotator(long_mcq3, capsys):
    from annotator.cli import main

    with Store.open(long_mcq3, mode="ro") as s:
        before = (len(s.annotators()), s.adjudication_log(s.get_study("pm").id))
    assert main(["adjudicate", "pm", "--annotator", "ana", "--db", long_mcq3]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'ana' is an annotator of study 'pm'" in err and "--allow-annotator" in err
    with Store.open(long_mcq3, mode="ro") as s:
        assert (len(s.annotators()), s.adjudication_log(s.get_study("pm").id)) == before == (3, [])
        with pytest.raises(PrefvalError, match="allow-annotator"):
            AdjudicationSession(s, "pm", "bo")
        # someone outside the study needs no flag; an annotator with the flag is let in
        assert AdjudicationSession(s, "pm", "ana", allow_annotator=True).adjudicator.name == "ana"
    with Store.open(long_mcq3, mode="rw") as s:
        assert AdjudicationSession(s, "pm", "judy").adjudicator.name == "judy"


@pytest.mark.slow
async def test_allow_annotator_lets_an_annotator_adjudicate_through_the_screen(long_mcq3):
    from tests.tui_helpers import decide

    app = AdjudicateApp(long_mcq3, "pm", "ana", allow_annotator=True)
    async with app.run_test(size=(120, 35)) as pilot:
        await decide(pilot, "c")
        await pilot.pause()
    with Store.open(long_mcq3, mode="ro") as s:
        names = {a.id: a.name for a in s.annotators()}
    assert [(names[a.adjudicator_id], a.answer["choice"]) for a in _adjudications(long_mcq3, "pm")] == [("ana", 2)]


@pytest.mark.slow
def test_adjudication_screen_at_80x24_says_what_to_scroll(long_mcq3, snap_compare):
    # the item with options A (cut off below), the answers column and the hint line naming what is not seen yet
    assert snap_compare(AdjudicateApp(long_mcq3, "pm", "judy"), terminal_size=(80, 24))
