"""What each task type puts on screen for one item (compose_item), written out by hand: the options in the annotator's
shuffled order with their keys, the annotator's own answer highlighted, the conversation pane when the task shows
one, and nothing of the answer key, the source or the metadata a blind screen must not show. Composed without
running an app (tests/mutation/shown.py) so these run with the mutation tests (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

from annotator.tasks import get_task
from annotator.tasks.base import UnitView
from annotator.tasks.rubric.schema import load_rubric
from storage.models import Annotation, Item, Message, Unit
from tests.mutation.shown import outline

KEY_TEXT = "KEY-7f3a"  # in every answer key and source field: any leak shows in the outline


def _item(kind, payload, ext="e1", context=None, iid="i1"):
    ctx_id, end = context or (None, None)
    return Item(id=iid, dataset_id="d", external_id=ext, kind=kind, payload=payload, content_hash="h",
                context_id=ctx_id, context_end=end)


def _view(item, order=(), answer=None, status="answered", settings=None, extra=None, item_b=None):
    current = None
    if answer is not None or status != "answered":
        current = Annotation(id="a1", submitted_at="t", study_id="s", unit_id="u1", item_id=item.id,
                             annotator_id="ann", status=status, answer=answer)
    unit = Unit(id="u1", study_id="s", item_id=item.id, position=0, extra=extra or {})
    return UnitView(unit=unit, item=item, item_b=item_b, assignment=None, order=list(order), current=current,
                    settings=settings or {})


def _text(lines):
    return "\n".join(lines)


MCQ = {"question": "Which dish for Ann?", "options": ["soup", "steak", "salad", "tofu"], "correct_index": 2,
       "distractor_index": 1, "metadata": {"preference": KEY_TEXT, "source": KEY_TEXT}, "topic": KEY_TEXT,
       "snippet": [{"role": "user", "content": "I never eat meat."}]}
TF = {"question": "Ann eats meat.", "options": ["False", "True"], "correct_index": 0, "fmt": "tf",
      "metadata": {"source": KEY_TEXT}}


# ---- mcq, blind_test, easy_test ---------------------------------------------------------------------------------
def test_mcq_shuffled_with_its_stored_conversation_and_the_answer_highlighted():
    item = _item("mcq", MCQ, context=("ctx9", 5))
    # shown A=tofu B=soup C=salad D=steak; the stored choice is original option 2 (salad), shown third
    lines = outline(get_task("mcq").compose_item(_view(item, [3, 0, 2, 1], {"choice": 2}), None, None))
    assert lines == [
        "ContextView#context !the end of the conversation (context ctx9 to 5) end-rule",
        "QuestionPane#qa <Question>",
        "  PagedText.question !the question: Which dish for Ann?",
        "  PagedText#opt-0.option !option A: A  tofu",
        "  PagedText#opt-1.option !option B: B  soup",
        "  PagedText#opt-2.chosen.option !option C: C  salad",
        "  PagedText#opt-3.option !option D: D  steak",
        "  Static.cant-tell: x  can't tell",
    ]


def test_blind_test_shows_neither_conversation_nor_snippet_nor_key():
    item = _item("mcq", MCQ, context=("ctx9", 5))
    view = get_task("blind_test").compose_item(_view(item, [1, 3, 0, 2], {"cant_tell": True}), None, None)
    lines = outline(view)
    assert lines == [
        "QuestionPane#qa <Question>",
        "  PagedText.question !the question: Which dish for Ann?",
        "  PagedText#opt-0.option !option A: A  steak",
        "  PagedText#opt-1.option !option B: B  tofu",
        "  PagedText#opt-2.option !option C: C  soup",
        "  PagedText#opt-3.option !option D: D  salad",
        "  Static.cant-tell.chosen: x  can't tell",
    ]
    assert view.has_class("no-context") and KEY_TEXT not in _text(lines)


def test_easy_test_shows_the_snippet_inline_and_never_the_stored_conversation():
    item = _item("mcq", MCQ, context=("ctx9", 5))
    view = get_task("easy_test").compose_item(_view(item, [0, 1, 2, 3]), None, None)
    lines = outline(view)
    assert lines[0] == "ContextView#context !the conversation snippet (1 inline messages, 'Conversation snippet')"
    assert [m.content for m in view.snippet] == ["I never eat meat."] and view.context is None
    assert lines[3:7] == ["  PagedText#opt-0.option !option A: A  soup", "  PagedText#opt-1.option !option B: B  steak",
                          "  PagedText#opt-2.option !option C: C  salad", "  PagedText#opt-3.option !option D: D  tofu"]
    assert "chosen" not in _text(lines)


def test_tf_keys_follow_the_option_texts_not_their_positions():
    # options stored as [False, True]: key t goes with "True" (original 1), f with "False", never shuffled
    item = _item("mcq", TF)
    view = get_task("blind_test").compose_item(_view(item, [], {"choice": 1}), None, None)
    assert outline(view) == [
        "QuestionPane#qa <Question>",
        "  PagedText.question !the question: Ann eats meat.",
        "  PagedText#opt-0.option !False: f  False",
        "  PagedText#opt-1.chosen.option !True: t  True",
        "  Static.cant-tell: x  can't tell",
    ]
    skipped = get_task("mcq").compose_item(_view(item, [], None, status="skipped"), None, None)
    assert skipped.chosen is None and skipped.keys == ["f", "t"]


# ---- judge_validation --------------------------------------------------------------------------------------------
JUDGE = {"recipient": "r", "task": "t", "attribute": "likes tea", "candidate_label": True,
         "metadata": {"response": "Here is a tea-only menu.", "source": KEY_TEXT}}
JV_HEAD = [
    "ScrollPane#jv-preference-box <Preference>",
    "  PagedText#jv-preference !the preference: likes tea",
    "ScrollPane#jv-response <Response>",
    "  PagedText#jv-response-text !the response: Here is a tea-only menu.",
]


def test_judge_validation_shows_preference_response_and_the_current_verdict():
    task = get_task("judge_validation")
    item = _item("gold_candidate", JUDGE)
    ask = "Static#jv-question: Is the preference reflected in the response?  1 reflected   0 not reflected"
    assert outline(task.compose_item(_view(item), None, None)) == [*JV_HEAD, ask]
    assert outline(task.compose_item(_view(item, answer={"reflected": True}), None, None)) == [
        *JV_HEAD, ask + "   (now: reflected)"]
    lines = outline(task.compose_item(_view(item, answer={"reflected": False}), None, None))
    assert lines == [*JV_HEAD, ask + "   (now: not reflected)"]
    assert KEY_TEXT not in _text(lines)


# ---- gold_label --------------------------------------------------------------------------------------------------
def test_gold_label_panel_never_shows_the_candidate_label():
    payload = {"recipient": "a landlord", "task": "Ask for a repair", "attribute": "pets",
               "statement": "has two cats", "profile_name": "Ann", "candidate_label": False,
               "metadata": {"source": KEY_TEXT}}
    view = get_task("gold_label").compose_item(_view(_item("gold_candidate", payload), answer={"label": 1}), None,
                                               None)
    lines = outline(view)
    assert lines == [
        "Vertical#context <The assistant writes on the user's behalf>",
        "  PagedText !the user: User:      Ann",
        "  PagedText !the recipient: Recipient: a landlord",
        "  PagedText !the task: Task:      Ask for a repair",
        "Vertical#memory <What the assistant remembers>",
        "  PagedText.attribute !the remembered attribute: pets",
        "  PagedText.statement !the remembered attribute: has two cats",
        "Vertical#labels",
        "  Static#label-1.chosen.label: 1  apply: it should shape this message",
        "  Static#label-0.label: 0  suppress: leave it out here",
    ]
    bare = {"recipient": "x", "task": "y", "attribute": "z"}
    assert get_task("gold_label").compose_item(_view(_item("gold_candidate", bare)), None, None).gc_chosen is None


# ---- pairwise ----------------------------------------------------------------------------------------------------
def _record(pref, n, iid):
    msgs = [{"role": "user", "content": f"m{k}"} for k in range(n)]
    return _item("conversation_record", {"preference": pref, "messages": msgs, "metadata": {"source": KEY_TEXT}},
                 iid=iid)


def test_pairwise_sides_in_the_annotators_order_with_the_winner_marked():
    a, b = _record("likes brevity", 2, "ia"), _record("likes detail", 3, "ib")
    task = get_task("pairwise")
    # order [1, 0]: B on the left, A on the right; the stored winner A is the right side
    lines = outline(task.compose_item(_view(a, [1, 0], {"winner": "A"}, item_b=b), None, None))
    assert lines == [
        "Vertical#side-0.side <Left  1 · 3 messages>",
        "  PreferenceBox.pref-box",
        "    PagedText.pref !the left preference: Preference: likes detail",
        "  ContextView#ctx-0 !the left conversation (3 inline messages, 'Conversation')",
        "Vertical#side-1.chosen.side <Right  2 · 2 messages> <<your choice>>",
        "  PreferenceBox.pref-box",
        "    PagedText.pref !the right preference: Preference: likes brevity",
        "  ContextView#ctx-1 !the right conversation (2 inline messages, 'Conversation')",
    ]
    assert KEY_TEXT not in _text(lines)
    assert task.compose_item(_view(a, [1, 0], {"winner": "B"}, item_b=b), None, None).chosen == 0
    assert task.compose_item(_view(a, [0, 1], {"winner": "B"}, item_b=b), None, None).chosen == 1
    assert task.compose_item(_view(a, [0, 1], {"winner": "tie"}, item_b=b), None, None).chosen == "tie"
    assert task.compose_item(_view(a, [0, 1], item_b=b), None, None).chosen is None


# ---- persona_filter ----------------------------------------------------------------------------------------------
def _drawn(task, view, partial, store):
    """What the screen draws: the task's screen_input read from `store` before drawing, then compose_item on it
    (never on the store)."""
    shown = task.screen_input(view, store)
    return task.compose_item(shown.view, partial, shown)


class _Parents:
    """The one store read persona_filter's panel makes: the parent persona of an extracted record."""

    def __init__(self, *items):
        self.items = {i.id: i for i in items}

    def get_item(self, iid):
        return self.items[iid]


REASONS = {"reasons": ["vague", "unsafe", "duplicate"]}


def test_persona_record_under_its_parent_persona_with_the_stored_drop():
    parent = _item("persona_record", {"text": "A retired nurse in Leeds", "record_type": "persona"}, ext="p1",
                   iid="ip")
    rec = _item("persona_record", {"text": "Adopted a dog", "record_type": "event", "profile": "p1"})
    view = _view(rec, answer={"decision": "drop", "reasons": ["duplicate"]}, settings=REASONS,
                 extra={"parent_item": "ip"})
    assert outline(_drawn(get_task("persona_filter"), view, None, _Parents(parent))) == [
        "Vertical#profile <The person's profile>",
        "  PagedText.profile-text !the profile: A retired nurse in Leeds",
        "Vertical#record.dropped <Life event>",
        "  PagedText.record-text !the record: Adopted a dog",
        "  Static#lacking.lacking !what the record lacks: Not in the record: the date, the duration",
        "Vertical#reasons <Drop reasons>",
        "  Static#reason-0.reason !the drop reasons: 1  [ ] vague",
        "  Static#reason-1.reason !the drop reasons: 2  [ ] unsafe",
        "  Static#reason-2.chosen.reason !the drop reasons: 3  [x] duplicate",
    ]


def test_persona_record_marks_in_progress_replace_the_stored_answer():
    parent = _item("persona_record", {"text": "parent text"}, ext="p1", iid="ip")
    # its own profile text is shown rather than the parent's; a partial answer (reasons being marked) is shown
    # undecided with its marks
    rec = _item("persona_record", {"text": "Likes chess", "record_type": "preference", "profile": "Own profile",
                                   "metadata": {"topic": "Games"}})
    view = _view(rec, answer={"decision": "keep", "reasons": []}, settings=REASONS, extra={"parent_item": "ip"})
    task = get_task("persona_filter")
    lines = outline(_drawn(task, view, {"reasons": ["vague"]}, _Parents(parent)))
    assert lines[:6] == ["Vertical#profile <The person's profile>",
                         "  PagedText.profile-text !the profile: Own profile", "Vertical#record <Preference>",
                         "  PagedText.record-text !the record: Likes chess",
                         "  PagedText#field-0.record-field !the topic: Topic: Games",
                         "  Static#lacking.lacking !what the record lacks: Not in the record: the preference type, "
                         "the date, the originating event, the reason"]
    assert lines[7] == "  Static#reason-0.chosen.reason !the drop reasons: 1  [x] vague"
    kept = outline(_drawn(task, view, None, _Parents(parent)))
    assert kept[2] == "Vertical#record.kept <Preference>" and "[x]" not in _text(kept)
    # a record without a parent and without a type: a persona sentence, no profile pane, nothing lacking
    lone = outline(task.compose_item(_view(_item("persona_record", {"text": "Solo"})), None, None))
    assert lone[:3] == ["Vertical#record <Persona sentence>", "  PagedText.record-text !the record: Solo",
                        "Vertical#reasons <Drop reasons>"]


#: the generator's profile of u001 (sample-profiles), as `prefval generate` writes it
GEN_PROFILE = {"text": "Wren maps flood plains by kayak and keeps early nights.", "record_type": "profile",
               "profile": "Name: Wren A; Birth: 1991; Gender: Female", "parent_external_id": "u001:persona",
               "metadata": {"user_id": "u001", "original_persona": "a river scientist",
                            "demographics": {"Birth": "1991", "Gender": "Female", "Name": "Wren A"},
                            "provenance": {"pipeline": KEY_TEXT, "model": KEY_TEXT}, "expected_decision": "drop"}}
PROV = {"pipeline": KEY_TEXT, "model": KEY_TEXT, "stage": KEY_TEXT}


def test_generated_event_shows_its_date_duration_and_the_persons_profile_never_its_key_or_source():
    """A generated life event: the profile it belongs to (demographics, then the extended persona), the event,
    its date and duration; metadata.expected_decision (a planted check's key), the provenance and any other
    metadata (an LLM's verdict) are never drawn."""
    profile = _item("persona_record", GEN_PROFILE, ext="u001:profile", iid="iprof")
    event = _item("persona_record", {
        "text": "Life event 2: moved to a houseboat", "record_type": "event", "parent_external_id": "u001:profile",
        "metadata": {"user_id": "u001", "event_id": "e02", "date": "2016/05/02", "duration_type": "months",
                     "provenance": PROV, "expected_decision": KEY_TEXT, "llm_verdict": KEY_TEXT}})
    view = _view(event, settings=REASONS, extra={"parent_item": "iprof"})
    lines = outline(_drawn(get_task("persona_filter"), view, None, _Parents(profile)))
    assert lines[:6] == [
        "Vertical#profile <The person's profile>",
        "  PagedText.profile-text !the profile: Name: Wren A; Birth: 1991; Gender: Female\n"
        "Wren maps flood plains by kayak and keeps early nights.",
        "Vertical#record <Life event>",
        "  PagedText.record-text !the record: Life event 2: moved to a houseboat",
        "  PagedText#field-0.record-field !the date: Date: 2016/05/02",
        "  PagedText#field-1.record-field !the duration: Duration: months",
    ]
    assert lines[6] == "Vertical#reasons <Drop reasons>"
    assert KEY_TEXT not in _text(lines) and "drop" not in _text(lines[:6])


def test_generated_preference_and_generalized_preference_show_every_field_they_depend_on():
    profile = _item("persona_record", GEN_PROFILE, ext="u001:profile", iid="iprof")
    p01 = _item("persona_record", {"text": "Prefers trains to planes", "record_type": "preference"},
                ext="u001:p01:preference", iid="ip01")
    pref = _item("persona_record", {
        "text": "Prefers trains to planes", "record_type": "preference", "parent_external_id": "u001:profile",
        "metadata": {"Reason": "a bad flight in 2015", "date": "2015/08/01", "event": "A flight diverted at night",
                     "pref_id": "p01", "preference_type": "Relative Preference", "topic": "Travel: Transport",
                     "user_id": "u001", "provenance": PROV, "expected_decision": KEY_TEXT}})
    lines = outline(_drawn(get_task("persona_filter"), 
        _view(pref, settings=REASONS, extra={"parent_item": "iprof"}), None, _Parents(profile)))
    assert lines[2:9] == [
        "Vertical#record <Preference>",
        "  PagedText.record-text !the record: Prefers trains to planes",
        "  PagedText#field-0.record-field !the topic: Topic: Travel: Transport",
        "  PagedText#field-1.record-field !the preference type: Type: Relative Preference",
        "  PagedText#field-2.record-field !the date: Date: 2015/08/01",
        "  PagedText#field-3.record-field !the originating event: Originating event: A flight diverted at night",
        "  PagedText#field-4.record-field !the reason: Reason: a bad flight in 2015",
    ]
    assert lines[9] == "Vertical#reasons <Drop reasons>" and KEY_TEXT not in _text(lines)
    gen = _item("persona_record", {
        "text": "Likes slow travel", "record_type": "preference", "parent_external_id": "u001:profile",
        "metadata": {"Generalized_From": ["p01", "p09"], "Inference_Reason": "trains and walks are both slow",
                     "topic": "Travel", "preference_type": "Positive Preference", "user_id": "u001",
                     "provenance": PROV}})
    lines = outline(_drawn(get_task("persona_filter"), 
        _view(gen, settings=REASONS, extra={"parent_item": "iprof", "source_items": ["ip01", None]}), None,
        _Parents(profile, p01)))
    assert lines[2:8] == [
        "Vertical#record <Generalized preference>",
        "  PagedText.record-text !the record: Likes slow travel",
        "  PagedText#field-0.record-field !the topic: Topic: Travel",
        "  PagedText#field-1.record-field !the preference type: Type: Positive Preference",
        "  PagedText#field-2.record-field !the preferences it generalizes: Generalized from: "
        "\n- p01: Prefers trains to planes\n- p09 (not in the database)",
        "  PagedText#field-3.record-field !the inference reason: Why it follows from them: "
        "trains and walks are both slow",
    ]
    assert KEY_TEXT not in _text(lines)


def test_profile_record_shows_its_demographics_and_the_persona_it_was_built_from():
    persona = _item("persona_record", {"text": "a river scientist who kayaks", "record_type": "persona"},
                    ext="u001:persona", iid="ipers")
    no_sentence = {**GEN_PROFILE, "metadata": {"user_id": "u001", "expected_decision": KEY_TEXT}}
    lines = outline(_drawn(get_task("persona_filter"), 
        _view(_item("persona_record", no_sentence), settings=REASONS, extra={"parent_item": "ipers"}), None,
        _Parents(persona)))
    assert lines[:4] == [
        "Vertical#record <Profile>",
        "  PagedText.record-text !the record: Wren maps flood plains by kayak and keeps early nights.",
        "  PagedText#field-0.record-field !the demographics: Demographics: Name: Wren A; Birth: 1991; Gender: Female",
        "  PagedText#field-1.record-field !the persona sentence: Built from the persona: a river scientist who kayaks",
    ]
    assert KEY_TEXT not in _text(lines)


# ---- rubric ------------------------------------------------------------------------------------------------------
def _rubric_settings():
    rubric = load_rubric().model_dump()
    return {"rubric": rubric, "dimensions": [d["name"] for d in rubric["dimensions"]]}


def _rubric_item(reference=None):
    payload = {"preference": "vegan", "query": "dinner?", "answer": "lentil stew", "metadata": {"source": KEY_TEXT}}
    if reference is not None:
        payload["reference_scores"] = reference
    return _item("rubric_item", payload)


def test_rubric_calibration_reference_only_once_scored_or_when_revisiting_the_answer():
    task = get_task("rubric")
    settings = _rubric_settings()
    names = [d["name"] for d in settings["rubric"]["dimensions"]]
    ref = {n: 3 for n in names}
    item = _rubric_item(ref)
    fresh = task.compose_item(_view(item, settings=settings, extra={"calibration": True}), None, None)
    assert (fresh.calibration, fresh.reference, fresh.previous, fresh.scores) == (True, None, None, {})
    half = {names[0]: 4}
    mid = task.compose_item(_view(item, settings=settings, extra={"calibration": True}), {"scores": half}, None)
    assert (mid.reference, mid.scores) == (None, half)
    full = {n: 5 for n in names}
    done = task.compose_item(_view(item, settings=settings, extra={"calibration": True}), {"scores": full}, None)
    assert done.reference == ref and done.scores == full
    stored = {n: 2 for n in names}
    again = task.compose_item(_view(item, answer={"scores": stored}, settings=settings, extra={"calibration": True}),
                              None, None)
    assert (again.reference, again.previous, again.scores) == (ref, stored, {})
    # the same item outside calibration: never a reference; the stored scores shown as "stored" while rescoring
    plain = task.compose_item(_view(item, answer={"scores": stored}, settings=settings), None, None)
    assert (plain.calibration, plain.reference, plain.previous) == (False, None, stored)
    rescoring = task.compose_item(_view(item, answer={"scores": stored}, settings=settings), {"scores": half}, None)
    assert (rescoring.previous, rescoring.scores) == (None, half)
    no_ref = task.compose_item(_view(_rubric_item(), settings=settings, extra={"calibration": True}),
                               {"scores": full}, None)
    assert no_ref.reference == {}
    lines = outline(plain)
    assert lines[:4] == ["ScrollPane#rb-item <Item>", "  PagedText.pref !the preference: User preference  vegan",
                         "  PagedText.query !the query: User query  dinner?",
                         "  PagedText.answer !the answer: Answer  lentil stew"]
    assert KEY_TEXT not in _text(lines)


# ---- item_quality ------------------------------------------------------------------------------------------------
class _Contexts:
    """The store reads of item_quality's screen input: the first (here the only) message of the item's
    conversation and the sizes of its messages."""

    def __init__(self, first):
        self.first = first

    def context_sizes(self, context_id):
        return [(m.role, len(m.content)) for m in self.first]

    def context_texts(self, context_id, start, stop):
        assert (start, stop) == (0, 1)
        return [(m.role, m.content) for m in self.first]


IQ_SETTINGS = {"dimensions": ["answerable", "single_correct"], "dimension_help": {"answerable": "the history says"}}


def test_item_quality_persona_from_the_system_message_and_responses_split_by_the_key():
    payload = {"question": "Gift?", "options": ["a ham", "a book", "a kite"], "correct_index": 1,
               "question_type": "recall", "topic": None, "metadata": {"grounding": "turn 2"}}
    item = _item("mcq", payload, context=("c3", 8))
    store = _Contexts([Message(role="system", content="Vegetarian teacher")])
    view = _view(item, answer={"labels": {"answerable": True, "single_correct": False}}, settings=IQ_SETTINGS)
    lines = outline(_drawn(get_task("item_quality"), view, None, store))
    assert lines == [
        "ContextView#iq-context !the end of the conversation (context c3 to 8) end-rule",
        "ScrollPane#iq-right",
        "  ScrollPane#iq-persona <Persona>",
        "    PagedText !the persona: Vegetarian teacher",
        "  ScrollPane#iq-item <Question and responses>",
        "    Static.details !the item's details: question type: recall",
        "    PagedText.question !the question: Gift?",
        "    PagedText.correct !the correct response: Correct  a book",
        "    PagedText.incorrect !the incorrect responses: Incorrect  a ham",
        "    PagedText.incorrect !the incorrect responses: Incorrect  a kite",
        "  Vertical#iq-dims <Checks (True / False)>",
        "    Static.current.dim !check 1 (answerable): ▶ 1. answerable — the history says  (stored: True)",
        "    Static.dim.pending:   2. single correct  (stored: False)",
    ]


def test_item_quality_without_persona_shows_the_metadata_and_labels_in_progress():
    payload = {"question": "Gift?", "options": ["a ham", "a book"], "correct_index": 0, "topic": "food",
               "metadata": {"grounding": "turn 2", "empty": "", "none": None}}
    item = _item("mcq", payload, context=("c3", 8))
    store = _Contexts([Message(role="user", content="hello")])
    view = _view(item, answer={"labels": {"answerable": False, "single_correct": False}}, settings=IQ_SETTINGS)
    lines = outline(_drawn(get_task("item_quality"), view, {"labels": {"answerable": True}}, store))
    assert lines == [
        "ContextView#iq-context !the end of the conversation (context c3 to 8) end-rule",
        "ScrollPane#iq-right",
        "  ScrollPane#iq-item <Question and responses>",
        "    Static.details !the item's details: topic: food",
        "    PagedText.question !the question: Gift?",
        "    PagedText.correct !the correct response: Correct  a ham",
        "    PagedText.incorrect !the incorrect responses: Incorrect  a book",
        "    Static.details.metadata !the item's details: grounding: turn 2",
        "  Vertical#iq-dims <Checks (True / False)>",
        "    Static.dim.done: ✓ 1. answerable: True",
        "    Static.current.dim !check 2 (single correct): ▶ 2. single correct",
    ]
    no_context = _item("mcq", payload)
    lines = outline(get_task("item_quality").compose_item(_view(no_context, settings={"dimensions": ["answerable"]}),
                                                          None, None))
    assert lines[0] == "ScrollPane#iq-right" and lines[-1] == "    Static.current.dim !check 1 (answerable): ▶ 1. answerable"
