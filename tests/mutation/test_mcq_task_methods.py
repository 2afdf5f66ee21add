"""The mcq task's keys, decisions, descriptions and export columns for shuffled MCQ and T/F items, worked by hand
(CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import pytest

from annotator.tasks import get_task
from annotator.tasks.base import UnitView
from annotator.tasks.mcq.task import display_order, is_tf, tf_indices, tf_value
from storage.models import Item

TASK = get_task("mcq")


def _item(options, fmt="mcq", key=None, distractor=None):
    payload = {"question": "q?", "options": options, "fmt": fmt}
    if key is not None:
        payload["correct_index"] = key
    if distractor is not None:
        payload["distractor_index"] = distractor
    return Item(id="i", dataset_id="d", external_id="e", kind="mcq", payload=payload, content_hash="h")


def _view(item, order):
    return UnitView(unit=None, item=item, item_b=None, assignment=None, order=order, current=None, settings={})


MCQ = _item(["red", "green", "blue", "grey"], key=2, distractor=0)
SHUFFLED = _view(MCQ, [3, 0, 2, 1])  # shown A=grey, B=red, C=blue, D=green
TF = _item(["False", "True"], fmt="tf", key=1)


def test_helpers():
    assert is_tf(TF) and not is_tf(MCQ)
    assert tf_indices(["False", "True"]) == (1, 0) and tf_indices([" TRUE ", "false"]) == (0, 1)
    assert tf_indices(["Yes", "No"]) == (0, 1) and tf_indices(["True", "False", "Maybe"]) == (0, 1)
    assert tf_value(["True", " FALSE "], 1) is False and tf_value(["True", "x"], 0) is True
    assert tf_value(["Yes", "No"], 1) == "No"
    assert display_order(SHUFFLED) == [3, 0, 2, 1] and display_order(_view(MCQ, [])) == [0, 1, 2, 3]
    assert TASK.shuffle_size(None, MCQ, None) == 4 and TASK.shuffle_size(None, TF, None) == 0


def test_keys_and_decisions_of_a_shuffled_item():
    keys = TASK.decision_keys(SHUFFLED, None)
    assert [(k.key, k.label, k.shown) for k in keys] == [
        ("a", "option A", "a/1"), ("b", "option B", "b/2"), ("c", "option C", "c/3"), ("d", "option D", "d/4"),
        ("x", "can't tell", "x")]
    # pressing the shown letter stores the ORIGINAL index and letter, and the shown one
    assert TASK.decide("b", SHUFFLED, None).answer == {"choice": 0, "letter": "A", "shown": "B", "cant_tell": False}
    assert TASK.decide("4", SHUFFLED, None).answer == {"choice": 1, "letter": "B", "shown": "D", "cant_tell": False}
    assert TASK.decide("a", SHUFFLED, None).answer["choice"] == 3
    assert TASK.decide("x", SHUFFLED, None).answer == {"choice": None, "letter": None, "shown": None, "cant_tell": True}
    for bad in ("e", "5", "0", "t", "q"):
        assert TASK.decide(bad, SHUFFLED, None) is None
    assert TASK.describe_answer(SHUFFLED, {"choice": 0, "cant_tell": False}) == "option B"
    assert TASK.describe_answer(SHUFFLED, {"choice": None, "cant_tell": True}) == "can't tell"


def test_true_false_items_are_never_shuffled():
    view = _view(TF, [])
    assert [(k.key, k.label, k.shown) for k in TASK.decision_keys(view, None)] == [
        ("t", "True", "t/1"), ("f", "False", "f/2"), ("x", "can't tell", "x")]
    # True is the second option here
    assert TASK.decide("t", view, None).answer == {"choice": 1, "letter": "B", "shown": "T", "cant_tell": False}
    assert TASK.decide("1", view, None).answer["choice"] == 1
    assert TASK.decide("f", view, None).answer == {"choice": 0, "letter": "A", "shown": "F", "cant_tell": False}
    assert TASK.decide("2", view, None).answer["choice"] == 0
    assert TASK.decide("a", view, None) is None and TASK.decide("3", view, None) is None
    assert TASK.describe_answer(view, {"choice": 1}) == "True"


def test_export_fields_in_original_terms():
    assert TASK.export_fields(None, MCQ, None, {"choice": 2, "cant_tell": False}) == {
        "choice_letter": "C", "choice_text": "blue", "cant_tell": False, "correct_letter": "C", "is_correct": True,
        "format": "mcq", "distractor_letter": "A", "picked_distractor": False}
    assert TASK.export_fields(None, MCQ, None, {"choice": 0}) == {
        "choice_letter": "A", "choice_text": "red", "cant_tell": False, "correct_letter": "C", "is_correct": False,
        "format": "mcq", "distractor_letter": "A", "picked_distractor": True}
    assert TASK.export_fields(None, MCQ, None, {"choice": None, "cant_tell": True}) == {
        "choice_letter": None, "choice_text": None, "cant_tell": True, "correct_letter": "C", "is_correct": False,
        "format": "mcq", "distractor_letter": "A", "picked_distractor": None}
    nokey = _item(["a", "b"])
    assert TASK.export_fields(None, nokey, None, {"choice": 1}) == {
        "choice_letter": "B", "choice_text": "b", "cant_tell": False, "correct_letter": None, "is_correct": None,
        "format": "mcq"}
    assert TASK.export_fields(None, TF, None, {"choice": 0}) == {
        "choice": False, "choice_text": "False", "cant_tell": False, "correct": True, "is_correct": False,
        "format": "tf"}
    worded = _item(["Yes", "No"], fmt="tf")
    assert TASK.export_fields(None, worded, None, {"choice": None, "cant_tell": True}) == {
        "choice": None, "choice_text": None, "cant_tell": True, "correct": None, "is_correct": None, "format": "tf"}
    assert TASK.export_fields(None, worded, None, {"choice": 1})["choice"] == "No"


def test_keys_of_an_answer():
    assert TASK.check_key(MCQ) == 2 and TASK.check_key(_item(["a", "b"])) is None
    assert TASK.answer_key({"choice": 3, "cant_tell": False}) == 3
    assert TASK.answer_key({"choice": None, "cant_tell": True}) == "cant_tell"
    assert TASK.bundle_needs_context() is True
    assert get_task("blind_test").bundle_needs_context() is False
