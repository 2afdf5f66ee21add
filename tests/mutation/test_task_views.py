"""What each task's item panel shows, written out by hand: which parts are there, in which order, which one is
highlighted as the annotator's current answer, what the "scroll to see ..." hint calls each part, and that nothing
else (no answer key) is drawn. Composed without running an app (tests/mutation/shown.py), so these run with the
mutation tests (CONTRIBUTING.md, "Mutation testing"); the Pilot tests check the same screens while running."""
from __future__ import annotations

from annotator.tasks.gold_label.view import GoldCandidateView
from annotator.tasks.item_quality.view import ItemQualityView
from annotator.tasks.mcq.view import McqView
from annotator.tasks.pairwise.view import PairView, side_title, stacked_at
from annotator.tasks.persona_filter.shown import RECORD_SHOWN, ShownPart, ShownRecord
from annotator.tasks.persona_filter.view import PersonaRecordView
from annotator.tasks.rubric.schema import Rubric
from annotator.tasks.rubric.view import RubricView
from storage.models import Message
from tests.mutation.shown import outline


# ---- mcq ---------------------------------------------------------------------------------------------------------
def test_mcq_with_a_stored_conversation_and_the_third_option_chosen():
    view = McqView("Which city?", ["Paris", "Rome", "Oslo"], 2, context=("ctx1", 4))
    assert not view.has_class("no-context")
    assert outline(view) == [
        "ContextView#context !the end of the conversation (context ctx1 to 4) end-rule",
        "QuestionPane#qa <Question>",
        "  PagedText.question !the question: Which city?",
        "  PagedText#opt-0.option !option A: A  Paris",
        "  PagedText#opt-1.option !option B: B  Rome",
        "  PagedText#opt-2.chosen.option !option C: C  Oslo",
        "  Static.cant-tell: x  can't tell",
    ]


def test_tf_with_a_snippet_and_cant_tell_chosen():
    view = McqView("Ann likes tea.", ["True", "False"], "x", snippet=[Message(role="user", content="hi")], tf=True,
                   question_label="Statement", keys=["t", "f"])
    assert not view.has_class("no-context")
    assert outline(view) == [
        "ContextView#context !the conversation snippet (1 inline messages, 'Conversation snippet')",
        "QuestionPane#qa <Statement>",
        "  PagedText.question !the question: Ann likes tea.",
        "  PagedText#opt-0.option !True: t  True",
        "  PagedText#opt-1.option !False: f  False",
        "  Static.cant-tell.chosen: x  can't tell",
    ]
    assert [view.option_label(i) for i in (0, 1)] == ["True", "False"]


def test_mcq_without_context_nothing_chosen_and_not_updatable_before_mounting():
    view = McqView("Q", ["a", "b"], None)
    assert view.has_class("no-context")
    assert outline(view) == [
        "QuestionPane#qa <Question>",
        "  PagedText.question !the question: Q",
        "  PagedText#opt-0.option !option A: A  a",
        "  PagedText#opt-1.option !option B: B  b",
        "  Static.cant-tell: x  can't tell",
    ]
    # a view not on screen cannot take another item in place: the caller mounts the new one
    assert view.update_from(McqView("Q2", ["c", "d"], 0)) is False
    assert (view.question, view.options, view.chosen) == ("Q", ["a", "b"], None)


def test_mcq_same_layout_only_with_the_same_panes_options_keys_and_label():
    snippet = [Message(role="user", content="hi")]
    base = McqView("Q", ["a", "b"], None, context=("c1", 3))
    assert base.same_layout(McqView("Q2", ["c", "d"], 1, context=("c9", 1)))  # another item, same shape
    assert not base.same_layout(McqView("Q", ["a", "b"], None))  # the conversation pane would go
    assert not base.same_layout(McqView("Q", ["a", "b"], None, context=("c1", 3), snippet=snippet))
    assert not base.same_layout(McqView("Q", ["a", "b", "c"], None, context=("c1", 3)))
    assert not base.same_layout(McqView("Q", ["a", "b"], None, context=("c1", 3), question_label="Statement"))
    assert not base.same_layout(McqView("Q", ["a", "b"], None, context=("c1", 3), keys=["t", "f"]))
    bare = McqView("Q", ["a"], None)
    assert bare.same_layout(McqView("R", ["b"], 0)) and not bare.same_layout(McqView("R", ["b"], 0, snippet=snippet))
    with_snippet = McqView("Q", ["a"], None, snippet=snippet)
    assert with_snippet.same_layout(McqView("R", ["b"], None, snippet=[]))
    assert not with_snippet.same_layout(McqView("R", ["b"], None, context=("c", 1), snippet=snippet))


# ---- gold_label ----------------------------------------------------------------------------------------------------
def test_gold_candidate_with_user_and_statement_suppress_chosen():
    view = GoldCandidateView("Dr. Lee", "Write a note", "allergy", "is allergic to nuts", "Ann", 0)
    assert outline(view) == [
        "Vertical#context <The assistant writes on the user's behalf>",
        "  PagedText !the user: User:      Ann",
        "  PagedText !the recipient: Recipient: Dr. Lee",
        "  PagedText !the task: Task:      Write a note",
        "Vertical#memory <What the assistant remembers>",
        "  PagedText.attribute !the remembered attribute: allergy",
        "  PagedText.statement !the remembered attribute: is allergic to nuts",
        "Vertical#labels",
        "  Static#label-1.label: 1  apply: it should shape this message",
        "  Static#label-0.chosen.label: 0  suppress: leave it out here",
    ]


def test_gold_candidate_without_user_or_statement_apply_chosen():
    view = GoldCandidateView("a colleague", "Decline a meeting", "diet", None, None, 1)
    assert outline(view) == [
        "Vertical#context <The assistant writes on the user's behalf>",
        "  PagedText !the recipient: Recipient: a colleague",
        "  PagedText !the task: Task:      Decline a meeting",
        "Vertical#memory <What the assistant remembers>",
        "  PagedText.attribute !the remembered attribute: diet",
        "Vertical#labels",
        "  Static#label-1.chosen.label: 1  apply: it should shape this message",
        "  Static#label-0.label: 0  suppress: leave it out here",
    ]


# ---- persona_filter ------------------------------------------------------------------------------------------------
REASONS = ["too vague", "unsafe", "duplicate"]


def test_persona_event_with_profile_dropped_for_two_reasons():
    shown = ShownRecord("event", "Life event", "Moved to Lyon", "A chef, 40",
                        [ShownPart("Date", "2019/04/01", "the date")], ["the duration"])
    view = PersonaRecordView(shown, REASONS, "drop", ["unsafe", "duplicate"])
    assert outline(view) == [
        "Vertical#profile <The person's profile>",
        "  PagedText.profile-text !the profile: A chef, 40",
        "Vertical#record.dropped <Life event>",
        "  PagedText.record-text !the record: Moved to Lyon",
        "  PagedText#field-0.record-field !the date: Date: 2019/04/01",
        "  Static#lacking.lacking !what the record lacks: Not in the record: the duration",
        "Vertical#reasons <Drop reasons>",
        "  Static#reason-0.reason !the drop reasons: 1  [ ] too vague",
        "  Static#reason-1.chosen.reason !the drop reasons: 2  [x] unsafe",
        "  Static#reason-2.chosen.reason !the drop reasons: 3  [x] duplicate",
    ]


def test_persona_kept_undecided_and_record_titles():
    kept = PersonaRecordView(ShownRecord("preference", "Preference", "Likes jazz", None), REASONS[:1], "keep", [])
    assert outline(kept) == [
        "Vertical#record.kept <Preference>",
        "  PagedText.record-text !the record: Likes jazz",
        "Vertical#reasons <Drop reasons>",
        "  Static#reason-0.reason !the drop reasons: 1  [ ] too vague",
    ]
    titles = {t: outline(PersonaRecordView(ShownRecord(t, RECORD_SHOWN[t].title, "x", None), [], None, []))[0]
              for t in ("persona", "profile", "generalized")}
    assert titles == {"persona": "Vertical#record <Persona sentence>", "profile": "Vertical#record <Profile>",
                      "generalized": "Vertical#record <Generalized preference>"}


# ---- pairwise ------------------------------------------------------------------------------------------------------
SIDES = [("likes brevity", [Message(role="user", content="a"), Message(role="assistant", content="b")]),
         ("likes detail", [Message(role="user", content="c")])]


def test_pair_with_the_right_side_chosen():
    assert outline(PairView(SIDES, 1)) == [
        "Vertical#side-0.side <Left  1 · 2 messages>",
        "  PreferenceBox.pref-box",
        "    PagedText.pref !the left preference: Preference: likes brevity",
        "  ContextView#ctx-0 !the left conversation (2 inline messages, 'Conversation')",
        "Vertical#side-1.chosen.side <Right  2 · 1 messages> <<your choice>>",
        "  PreferenceBox.pref-box",
        "    PagedText.pref !the right preference: Preference: likes detail",
        "  ContextView#ctx-1 !the right conversation (1 inline messages, 'Conversation')",
    ]


def test_pair_tie_marks_both_sides_and_nothing_chosen_marks_none():
    tie = outline(PairView(SIDES, "tie"))
    assert [tie[0], tie[4]] == ["Vertical#side-0.chosen.side <Left  1 · 2 messages> <<tie>>",
                                "Vertical#side-1.chosen.side <Right  2 · 1 messages> <<tie>>"]
    left = outline(PairView(SIDES, 0))
    assert [left[0], left[4]] == ["Vertical#side-0.chosen.side <Left  1 · 2 messages> <<your choice>>",
                                  "Vertical#side-1.side <Right  2 · 1 messages>"]
    none = outline(PairView(SIDES))
    assert [none[0], none[4]] == ["Vertical#side-0.side <Left  1 · 2 messages>",
                                  "Vertical#side-1.side <Right  2 · 1 messages>"]


def test_pair_side_titles_and_when_sides_stack():
    assert side_title(0, 2) == "Left  [b]1[/b] · 2 messages"
    assert side_title(1, 7, stacked=True) == "Bottom = Right  [b]2[/b] · 7 messages"
    assert side_title(0, 0, stacked=True) == "Top = Left  [b]1[/b] · 0 messages"
    assert (stacked_at(99), stacked_at(100), stacked_at(160)) == (True, False, False)


# ---- rubric --------------------------------------------------------------------------------------------------------
RUBRIC = Rubric.model_validate({"dimensions": [
    {"name": "fit", "title": "Fit", "description": "follows the preference",
     "levels": {1: "ignores", 2: "barely", 3: "partly", 4: "mostly", 5: "fully"}},
    {"name": "tone", "description": "register", "levels": {1: "t1", 2: "t2", 3: "t3", 4: "t4", 5: "t5"}},
    {"name": "facts", "title": "Facts", "description": "correct", "levels": {1: "f1", 2: "f2", 3: "f3", 4: "f4", 5: "f5"}},
]})
ITEM = ["RubricView", "ScrollPane#rb-item <Item>",
        "  PagedText.pref !the preference: User preference  vegan",
        "  PagedText.query !the query: User query  a dinner idea?",
        "  PagedText.answer !the answer: Answer  lentil stew"]


def _rubric(scores, **kw):
    return outline(RubricView("vegan", "a dinner idea?", "lentil stew", RUBRIC, scores, **kw))


def test_rubric_second_dimension_current_with_stored_scores():
    assert _rubric({"fit": 4}, previous={"fit": 2, "tone": 5, "facts": 1}) == ITEM[1:] + [
        "ScrollPane#rb-dims <Rubric>",
        "  Static.dim.done: ✓ 1. Fit: 4",
        "  Static.current.dim !the levels of tone: ▶ 2. tone — register  (stored: 5)",
        "  Static.level !the levels of tone: 1  t1",
        "  Static.level !the levels of tone: 2  t2",
        "  Static.level !the levels of tone: 3  t3",
        "  Static.level !the levels of tone: 4  t4",
        "  Static.level !the levels of tone: 5  t5",
        "  Static.dim.pending:   3. Facts  (stored: 1)",
    ]


def test_rubric_first_dimension_of_a_calibration_item_before_any_score():
    assert _rubric({}, calibration=True) == [
        "ScrollPane#rb-item <Calibration item>", *ITEM[2:],
        "ScrollPane#rb-dims <Rubric>",
        "  Static.banner: Calibration: the reference scores appear after your last score.",
        "  Static.current.dim !the levels of Fit: ▶ 1. Fit — follows the preference",
        "  Static.level !the levels of Fit: 1  ignores",
        "  Static.level !the levels of Fit: 2  barely",
        "  Static.level !the levels of Fit: 3  partly",
        "  Static.level !the levels of Fit: 4  mostly",
        "  Static.level !the levels of Fit: 5  fully",
        "  Static.dim.pending:   2. tone",
        "  Static.dim.pending:   3. Facts",
    ]


def test_rubric_calibration_fully_scored_shows_the_reference_next_to_the_scores():
    lines = _rubric({"fit": 4, "tone": 3, "facts": 5}, calibration=True, reference={"fit": 5, "tone": 3})
    assert lines == ["ScrollPane#rb-item <Calibration item>", *ITEM[2:],
                     "ScrollPane#rb-dims <Rubric>",
                     "  Static.dim.done: ✓ 1. Fit: 4",
                     "  Static.dim.done: ✓ 2. tone: 3",
                     "  Static.dim.done: ✓ 3. Facts: 5",
                     "  Static#rb-reference.reference: Reference scores\nFit: yours 4, reference 5\n"
                     "tone: yours 3, reference 3\nFacts: yours 5, reference — (none given)\nPress c to continue."]


def test_rubric_reference_while_rescoring_compares_with_the_stored_scores():
    # revisiting a scored calibration item: one new score in, the reference compares with the stored answer
    lines = _rubric({"fit": 1}, calibration=True, previous={"fit": 2, "tone": 4}, reference={"fit": 3, "tone": 4,
                                                                                           "facts": 2})
    assert lines[-1] == ("  Static#rb-reference.reference: Reference scores\nFit: yours 2, reference 3\n"
                         "tone: yours 4, reference 4\nFacts: yours -, reference 2")
    assert "banner" not in "".join(lines)
    # no stored answer yet: nothing to compare with
    lines = _rubric({"fit": 1}, calibration=True, reference={"fit": 3, "tone": 4, "facts": 2})
    assert lines[-1] == ("  Static#rb-reference.reference: Reference scores\nFit: yours -, reference 3\n"
                         "tone: yours -, reference 4\nFacts: yours -, reference 2")


# ---- item_quality --------------------------------------------------------------------------------------------------
def _quality(**kw):
    args = dict(conversation=None, context=None, persona=None, details={}, question="Which gift?", correct="a book",
                incorrect=["a ham", "a kite"], dimensions=["answerable", "single_correct", "grounded"],
                help={"single_correct": "only one response fits"}, labels={})
    args.update(kw)
    return outline(ItemQualityView(**args))


def test_item_quality_everything_shown_second_check_current():
    lines = _quality(context=("c7", 12), persona="Vegetarian teacher", details={"type": "recall", "topic": "food"},
                     metadata={"grounding": "turn 3"}, labels={"answerable": False},
                     previous={"answerable": True, "single_correct": False, "grounded": True})
    assert lines == [
        "ContextView#iq-context !the end of the conversation (context c7 to 12) end-rule",
        "ScrollPane#iq-right",
        "  ScrollPane#iq-persona <Persona>",
        "    PagedText !the persona: Vegetarian teacher",
        "  ScrollPane#iq-item <Question and responses>",
        "    Static.details !the item's details: type: recall · topic: food",
        "    PagedText.question !the question: Which gift?",
        "    PagedText.correct !the correct response: Correct  a book",
        "    PagedText.incorrect !the incorrect responses: Incorrect  a ham",
        "    PagedText.incorrect !the incorrect responses: Incorrect  a kite",
        "    Static.details.metadata !the item's details: grounding: turn 3",
        "  Vertical#iq-dims <Checks (True / False)>",
        "    Static.dim.done: ✓ 1. answerable: False",
        "    Static.current.dim !check 2 (single correct): ▶ 2. single correct — only one response fits  (stored: False)",
        "    Static.dim.pending:   3. grounded  (stored: True)",
    ]


def test_item_quality_bare_item_first_check_current_then_all_done():
    assert _quality() == [
        "ScrollPane#iq-right",
        "  ScrollPane#iq-item <Question and responses>",
        "    PagedText.question !the question: Which gift?",
        "    PagedText.correct !the correct response: Correct  a book",
        "    PagedText.incorrect !the incorrect responses: Incorrect  a ham",
        "    PagedText.incorrect !the incorrect responses: Incorrect  a kite",
        "  Vertical#iq-dims <Checks (True / False)>",
        "    Static.current.dim !check 1 (answerable): ▶ 1. answerable",
        "    Static.dim.pending:   2. single correct",
        "    Static.dim.pending:   3. grounded",
    ]
    done = _quality(labels={"answerable": True, "single_correct": True, "grounded": False})
    assert done[-3:] == ["    Static.dim.done: ✓ 1. answerable: True", "    Static.dim.done: ✓ 2. single correct: True",
                         "    Static.dim.done: ✓ 3. grounded: False"]


def test_item_quality_compact_below_100_by_20_cells():
    compact = ItemQualityView.compact_at
    assert (compact(99, 40), compact(100, 40), compact(100, 19), compact(100, 20), compact(80, 10)) == (
        True, False, True, False, True)
