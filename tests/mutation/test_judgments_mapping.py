"""LLM-judge verdicts: each task's answer mapping on good and bad records (exact answers and one-line errors), and
the import's record checks (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

from pathlib import Path

import pytest

from storage.errors import InputError, PrefvalError
from storage import task_specs
from storage.importers import judgments as j
from storage.models import Item
from tests.mutation.mcq_plan import mcq_study

MCQ = Item(id="i", dataset_id="d", external_id="q1", kind="mcq", content_hash="h",
           payload={"question": "q", "options": ["red", "green", "blue"]})
TF = Item(id="t", dataset_id="d", external_id="t1", kind="mcq", content_hash="h",
          payload={"question": "q", "options": ["False", "True"], "fmt": "tf"})


def mapping(task: str):
    """The task's declared mapping of a record to its answer (storage.task_specs.TaskSpec.from_record)."""
    return task_specs.get(task).from_record


def rec(data: dict, is_csv: bool = False) -> j._Rec:
    return j._Rec(Path("judged.jsonl"), "line 3", data, is_csv)


def err(fn, *args) -> str:
    with pytest.raises(InputError) as info:
        fn(*args)
    return str(info.value)


def test_boolean_cells():
    for v, want in ((True, True), (False, False), (1, True), (0, False), (1.0, True), (" Yes", True), ("t", True),
                    ("Y", True), ("1", True), ("no", False), ("F", False), ("0", False), ("n", False), ("", None),
                    (None, None)):
        assert rec({"x": v}).boolean("x") is want, v
    for bad in (2, "maybe", 0.5):
        assert err(rec({"x": bad}).boolean, "x") == f"judged.jsonl: line 3: field 'x': expected true or false, got {bad!r}"


def test_mcq_mapping():
    assert mapping("mcq")(rec({"choice": "b"}), MCQ, None, {}) == {"choice": 1, "letter": "B", "shown": "B", "cant_tell": False}
    assert mapping("mcq")(rec({"choice": 2}), MCQ, None, {}) == {"choice": 2, "letter": "C", "shown": "C", "cant_tell": False}
    assert mapping("mcq")(rec({"choice": "red"}), MCQ, None, {})["choice"] == 0
    assert mapping("mcq")(rec({"choice": "b", "cant_tell": "yes"}), MCQ, None, {}) == {
        "choice": None, "letter": None, "shown": None, "cant_tell": True}
    # T/F items: t/true/f/false name the option by its text; the shown letter is the text's first letter
    assert mapping("mcq")(rec({"choice": "T"}), TF, None, {}) == {"choice": 1, "letter": "B", "shown": "T", "cant_tell": False}
    assert mapping("mcq")(rec({"choice": " false "}), TF, None, {})["choice"] == 0
    assert mapping("mcq")(rec({"choice": True}), TF, None, {})["choice"] == 1
    assert mapping("mcq")(rec({"choice": "a"}), TF, None, {}) == {"choice": 0, "letter": "A", "shown": "F", "cant_tell": False}
    assert err(mapping("mcq"), rec({"choice": " "}), MCQ, None, {}) == (
        "judged.jsonl: line 3: field 'choice': missing (give a letter, a 0-based index or the option text, or "
        "cant_tell)")
    assert err(mapping("mcq"), rec({"choice": "d"}), MCQ, None, {}) == (
        "judged.jsonl: line 3: field 'choice': 'd' is not one of the item's 3 options")
    assert err(mapping("mcq"), rec({"choice": 3}), MCQ, None, {}).endswith("3 is not one of the item's 3 options")
    assert err(mapping("mcq"), rec({"choice": -1}), MCQ, None, {}).endswith("-1 is not one of the item's 3 options")
    no_true = Item(id="t", dataset_id="d", external_id="t2", kind="mcq", content_hash="h",
                   payload={"question": "q", "options": ["yes", "no"], "fmt": "tf"})
    assert err(mapping("mcq"), rec({"choice": "true"}), no_true, None, {}).endswith("'true' is not one of the item's 2 options")


def test_pairwise_mapping():
    for raw, w, pressed in (("a", "A", "left"), (" B ", "B", "right"), ("TIE", "tie", "tie")):
        assert mapping("pairwise")(rec({"winner": raw}), MCQ, MCQ, {}) == {"winner": w, "shown_left": "A", "pressed": pressed}
    assert err(mapping("pairwise"), rec({"winner": "C"}), MCQ, MCQ, {}) == (
        "judged.jsonl: line 3: field 'winner': expected A, B or tie, got 'C'")
    assert err(mapping("pairwise"), rec({}), MCQ, MCQ, {}).endswith("field 'winner': expected A, B or tie, got None")


def test_judge_validation_mapping():
    assert mapping("judge_validation")(rec({"reflected": "yes"}), MCQ, None, {}) == {"reflected": True}
    assert mapping("judge_validation")(rec({"reflected": False, "label": 1}), MCQ, None, {}) == {"reflected": False}
    assert mapping("judge_validation")(rec({"label": " 1"}), MCQ, None, {}) == {"reflected": True}
    assert mapping("judge_validation")(rec({"label": 0}), MCQ, None, {}) == {"reflected": False}
    assert err(mapping("judge_validation"), rec({}), MCQ, None, {}) == (
        "judged.jsonl: line 3: field 'reflected': missing (give reflected: true/false or label: 1/0)")
    for bad in (True, "2", "yes"):
        assert err(mapping("judge_validation"), rec({"label": bad}), MCQ, None, {}) == (
            f"judged.jsonl: line 3: field 'label': expected 1 (reflected) or 0 (not reflected), got {bad!r}")


def test_gold_label_mapping():
    assert mapping("gold_label")(rec({"label": "1"}), MCQ, None, {}) == {"label": 1}
    assert mapping("gold_label")(rec({"label": False}), MCQ, None, {}) == {"label": 0}
    assert err(mapping("gold_label"), rec({"label": ""}), MCQ, None, {}) == (
        "judged.jsonl: line 3: field 'label': missing (1 apply, 0 suppress)")


DIMS = {"dimensions": ["clarity", "fit"]}


def test_rubric_mapping():
    assert mapping("rubric")(rec({"scores": {"fit": "2", "clarity": 5}}), MCQ, None, DIMS) == {
        "scores": {"clarity": 5, "fit": 2}}
    assert mapping("rubric")(rec({"scores": '{"clarity": 1, "fit": 3}'}, True), MCQ, None, DIMS) == {
        "scores": {"clarity": 1, "fit": 3}}
    assert mapping("rubric")(rec({"clarity": "4", "fit": " 1 "}, True), MCQ, None, DIMS) == {"scores": {"clarity": 4, "fit": 1}}
    cases = [
        ({"clarity": "4", "fit": ""}, True, "scores", "expected an object with one value per dimension (clarity, fit)"),
        ({"clarity": "4", "fit": "1"}, False, "scores",
         "expected an object with one value per dimension (clarity, fit)"),
        ({"scores": "{"}, True, "scores", "not a JSON object"),
        ({"scores": {"clarity": 1, "fit": 2, "tone": 3}}, False, "scores.tone",
         "not a dimension of this study (clarity, fit)"),
        ({"scores": {"clarity": 1}}, False, "scores.fit", "missing"),
        ({"scores": {"clarity": 6, "fit": 2}}, False, "scores.clarity", "expected a score 1..5, got 6"),
        ({"scores": {"clarity": 1, "fit": True}}, False, "scores.fit", "expected a score 1..5, got True"),
        ({"scores": {"clarity": 0, "fit": 2}}, False, "scores.clarity", "expected a score 1..5, got 0"),
    ]
    for data, is_csv, field, problem in cases:
        assert err(mapping("rubric"), rec(data, is_csv), MCQ, None, DIMS) == f"judged.jsonl: line 3: field '{field}': {problem}"


def test_item_quality_mapping():
    assert mapping("item_quality")(rec({"labels": {"clarity": "Yes", "fit": False}}), MCQ, None, DIMS) == {
        "labels": {"clarity": True, "fit": False}}
    assert mapping("item_quality")(rec({"clarity": "0", "fit": "t"}, True), MCQ, None, DIMS) == {
        "labels": {"clarity": False, "fit": True}}
    assert err(mapping("item_quality"), rec({"labels": {"clarity": "maybe", "fit": 1}}), MCQ, None, DIMS) == (
        "judged.jsonl: line 3: field 'labels.clarity': expected true or false, got 'maybe'")


REASONS = {"reasons": ["unnatural", "couple"]}


def test_persona_filter_mapping():
    assert mapping("persona_filter")(rec({"decision": " KEEP"}), MCQ, None, REASONS) == {"decision": "keep", "reasons": []}
    # reasons in the study's order, from a list or a comma-separated cell
    assert mapping("persona_filter")(rec({"decision": "drop", "reasons": "couple, unnatural"}), MCQ, None, REASONS) == {
        "decision": "drop", "reasons": ["unnatural", "couple"]}
    assert mapping("persona_filter")(rec({"decision": "drop", "reasons": ["couple"]}), MCQ, None, REASONS) == {
        "decision": "drop", "reasons": ["couple"]}
    assert err(mapping("persona_filter"), rec({"decision": "maybe"}), MCQ, None, REASONS) == (
        "judged.jsonl: line 3: field 'decision': expected keep or drop, got 'maybe'")
    assert err(mapping("persona_filter"), rec({}), MCQ, None, REASONS).endswith("expected keep or drop, got None")
    assert err(mapping("persona_filter"), rec({"decision": "drop", "reasons": ["rude"]}), MCQ, None, REASONS) == (
        "judged.jsonl: line 3: field 'reasons': 'rude' is not a reason of this study (unnatural, couple)")
    assert err(mapping("persona_filter"), rec({"decision": "keep", "reasons": ["couple"]}), MCQ, None, REASONS) == (
        "judged.jsonl: line 3: field 'reasons': a kept record has no drop reasons")


def test_every_task_with_answers_has_a_mapping():
    assert task_specs.names(lambda s: s.from_record is not None) == [
        "blind_test", "easy_test", "gold_label", "item_quality", "judge_validation", "mcq", "pairwise",
        "persona_filter", "rubric"]
    assert mapping("easy_test") is mapping("mcq") and mapping("blind_test") is mapping("mcq")


# ---- the import's record checks -------------------------------------------------------------------------------
def test_records_checked_before_anything_is_written(store):
    mcq_study(store, "mcq", {"q1": (0, []), "q2": (1, [])})
    add = j.add_judgment_records
    cases = [
        ([{"choice": "a"}], "record 1", "item", "missing (the external id of the judged item)"),
        ([{"item": "q1", "choice": "a"}, {"item": "q9", "choice": "a"}], "record 2", "item",
         "'q9' is not an item of study 'st'"),
        ([{"item": "q1", "item_b": "x", "choice": "a"}], "record 1", "item_b", "'q1' / 'x' is not an item of study 'st'"),
        ([{"item": "q1", "choice": "a"}, {"item": "q2", "choice": "b"}, {"item": "q1", "choice": "b"}], "record 3",
         "item", "'q1' is judged twice (first at record 1)"),
    ]
    for records, record, field, problem in cases:
        with pytest.raises(InputError) as info:
            add(store, records, "st", "judge")
        assert str(info.value) == f"evaluate: {record}: field '{field}': {problem}"
    with pytest.raises(PrefvalError, match=r"^evaluate: no records found$"):
        add(store, [], "st", "judge")
    store.ensure_annotator("hana")
    with pytest.raises(PrefvalError, match=r"^annotator 'hana' is a human annotator; choose another --judge name$"):
        add(store, [{"item": "q1", "choice": "a"}], "st", "hana")
    assert not any(a.kind == "llm" for a in store.annotators())  # nothing written
    done = add(store, [{"item": "q2", "choice": "b"}, {"item": "q1", "choice": 0}], "st", "judge", model="m-1")
    assert (done.study, done.judge, done.n_added, done.n_present, done.n_assigned) == ("st", "judge", 2, 0, 2)
    again = add(store, [{"item": "q1", "choice": 0}], "st", "judge")
    assert (again.n_added, again.n_present, again.n_assigned) == (0, 1, 0)
    judge = next(a for a in store.annotators() if a.name == "judge")
    assert (judge.kind, judge.model) == ("llm", "m-1")
    study = store.get_study("st")
    logged = [(e.study_id, e.annotator_id, e.payload) for e in store.events("judgments_imported")]
    assert logged == [(study.id, judge.id, {"file": "evaluate", "added": 2, "present": 0}),
                      (study.id, judge.id, {"file": "evaluate", "added": 0, "present": 1})]


def test_mcq_choice_that_is_no_index_letter_or_text_names_the_file():
    # "purple" is no digit, no letter form and no option's text: parse_index's error, with this record's file
    assert err(mapping("mcq"), rec({"choice": "purple"}), MCQ, None, {}) == (
        "judged.jsonl: line 3: field 'choice': expected a 0-based index, a letter or an option's text, got 'purple'")
    assert err(mapping("mcq"), rec({"choice": True}), MCQ, None, {}) == (  # a boolean names no option of a 3-option item
        "judged.jsonl: line 3: field 'choice': expected an index or a letter, got True")
