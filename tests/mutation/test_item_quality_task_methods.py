"""item_quality's keys and decisions one check at a time (partial answers, take back, the last check completes),
the answer shown when revisiting, agreement keys and export columns, worked by hand; plus the export columns of
persona_filter and what a rubric bundle carries (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

from annotator.tasks import get_task
from annotator.tasks.base import UnitView
from storage.models import Item, Unit

TASK = get_task("item_quality")
DIMS = ["appropriateness", "best_response", "relevance"]


def _view(dims=DIMS):
    return UnitView(unit=None, item=None, item_b=None, assignment=None, order=[], current=None,
                    settings={"dimensions": list(dims)})


def _keys(partial):
    return [(k.key, k.label, k.shown) for k in TASK.decision_keys(_view(), partial)]


def test_keys_name_the_check_being_answered():
    assert _keys(None) == [("t", "appropriateness: True", "t/1"), ("f", "appropriateness: False", "f/0")]
    assert _keys({"labels": {"appropriateness": False}}) == [
        ("t", "best response: True", "t/1"), ("f", "best response: False", "f/0"),
        ("backspace", "take back the last answer", "⌫")]
    assert _keys({"labels": {}}) == _keys(None)


def test_checks_answered_in_turn_the_last_one_completes():
    v = _view()
    first = TASK.decide("1", v, None)
    assert (first.answer, first.complete) == ({"labels": {"appropriateness": True}}, False)
    second = TASK.decide("f", v, first.answer)
    assert (second.answer, second.complete) == ({"labels": {"appropriateness": True, "best_response": False}}, False)
    last = TASK.decide("0", v, second.answer)
    assert (last.answer, last.complete) == (
        {"labels": {"appropriateness": True, "best_response": False, "relevance": False}}, True)
    assert TASK.decide("t", v, {"labels": {"appropriateness": False, "best_response": True}}).answer == {
        "labels": {"appropriateness": False, "best_response": True, "relevance": True}}
    # labels come back in the study's order of checks, whatever order the partial answer holds them in
    assert list(TASK.decide("t", v, {"labels": {"best_response": True}}).answer["labels"]) == [
        "appropriateness", "best_response"]
    # the partial answer passed in is not changed
    assert second.answer == {"labels": {"appropriateness": True, "best_response": False}}


def test_take_back_removes_the_last_check_in_study_order():
    v = _view()
    back = TASK.decide("backspace", v, {"labels": {"best_response": False, "appropriateness": True}})
    assert (back.answer, back.complete) == ({"labels": {"appropriateness": True}}, False)
    back = TASK.decide("backspace", v, {"labels": {"appropriateness": True}})
    assert (back.answer, back.complete) == ({"labels": {}}, False)
    assert TASK.decide("backspace", v, None) is None and TASK.decide("backspace", v, {"labels": {}}) is None


def test_keys_that_decide_nothing():
    v = _view()
    for key in ("x", "2", "T", "enter"):
        assert TASK.decide(key, v, None) is None
    full = {"labels": {d: True for d in DIMS}}
    assert TASK.decide("t", v, full) is None  # every check answered: nothing left to answer


def test_describe_answer_key_and_export():
    v = _view()
    answer = {"labels": {"relevance": False, "appropriateness": True, "best_response": True}}
    assert TASK.describe_answer(v, answer) == "appropriateness T, best response T, relevance F"
    assert TASK.describe_answer(v, {"labels": {"best_response": False}}) == "best response F"
    assert TASK.describe_answer(v, {}) == ""
    same = {"labels": {"best_response": True, "appropriateness": True, "relevance": False}}
    assert TASK.answer_key(answer) == TASK.answer_key(same) == (
        ("appropriateness", True), ("best_response", True), ("relevance", False))
    assert TASK.answer_key({}) == ()
    assert TASK.export_fields(None, None, None, answer) == {
        "label_relevance": False, "label_appropriateness": True, "label_best_response": True}
    assert TASK.export_fields(None, None, None, {"labels": None}) == {}


def _item(payload, kind="persona_record"):
    return Item(id="i", dataset_id="d", external_id="e", kind=kind, payload=payload, content_hash="h")


def test_persona_filter_export_columns():
    task = get_task("persona_filter")
    item = _item({"text": "t", "record_type": "event", "parent_external_id": "p7"})
    assert task.export_fields(None, item, None, {"decision": "drop", "reasons": ["vague", "unsafe"]}) == {
        "decision": "drop", "reasons_text": "vague; unsafe", "record_type": "event", "parent_external_id": "p7"}
    assert task.export_fields(None, _item({"text": "t"}), None, {"decision": "keep", "reasons": None}) == {
        "decision": "keep", "reasons_text": "", "record_type": None, "parent_external_id": None}


def test_rubric_bundle_carries_reference_scores_only_for_calibration_items():
    task = get_task("rubric")
    payload = {"preference": "p", "query": "q", "answer": "a", "reference_scores": {"fit": 4},
               "metadata": {"source": "s"}}
    item = _item(payload, kind="rubric_item")

    def unit(extra):
        return Unit(id="u", study_id="s", item_id="i", position=0, extra=extra)

    assert task.bundle_payload(unit({"calibration": True}), item) == {
        "preference": "p", "query": "q", "answer": "a", "reference_scores": {"fit": 4}}
    assert task.bundle_payload(unit({}), item) == {"preference": "p", "query": "q", "answer": "a"}
    no_ref = _item({**payload, "reference_scores": None}, kind="rubric_item")
    assert task.bundle_payload(unit({"calibration": True}), no_ref) == {"preference": "p", "query": "q", "answer": "a"}


def test_judge_validation_keys_and_rubric_default_error_place():
    import pytest

    from annotator.tasks.rubric.schema import rubric_from_dict
    from storage.errors import PrefvalError

    assert [(k.key, k.label) for k in get_task("judge_validation").decision_keys(None, None)] == [
        ("1", "reflected"), ("0", "not reflected")]
    with pytest.raises(PrefvalError) as info:
        rubric_from_dict({"dimensions": []})
    assert str(info.value).startswith("rubric: field 'dimensions': ")


def test_adjudication_lists_the_units_whose_answers_disagree_units_without_answers_left_out():
    from types import SimpleNamespace

    task = get_task("judge_validation")  # the default rule: at least two answers with different verdicts
    units = [Unit(id=u, study_id="s", item_id="i", position=k) for k, u in enumerate(("u1", "u2", "u3", "u4"))]
    data = SimpleNamespace(units=units, study=SimpleNamespace(settings={}))
    answers = {"u1": [{"reflected": True}, {"reflected": False}], "u2": [{"reflected": True}, {"reflected": True}],
               "u4": [{"reflected": False}, {"reflected": True}, {"reflected": False}]}
    assert [u.id for u in task.units_to_adjudicate(data, answers)] == ["u1", "u4"]


def test_gold_label_context_threshold_bounds_are_inclusive():
    import pytest

    from annotator.tasks.base import StudySpec
    from storage.errors import PrefvalError

    task = get_task("gold_label")
    for value, expected in (("1", 1.0), ("0", 0.0), ("0.5", 0.5)):
        spec = StudySpec(name="g", task="gold_label", datasets=["d"], options={"context_threshold": value})
        assert task.study_settings(spec)["context_threshold"] == expected
    with pytest.raises(PrefvalError, match=r"context_threshold must be in \[0, 1\]"):
        task.study_settings(StudySpec(name="g", task="gold_label", datasets=["d"],
                                      options={"context_threshold": "1.01"}))


def test_unknown_task_type_names_the_known_ones():
    import pytest

    from storage.errors import PrefvalError

    with pytest.raises(PrefvalError) as info:
        get_task("ranking")
    assert str(info.value) == ("unknown task type 'ranking' (known: blind_test, easy_test, gold_label, item_quality, "
                               "judge_validation, mcq, pairwise, persona_filter, rubric)")


def test_a_ratio_over_zero_items_is_undefined_with_its_reason():
    import numpy as np

    from annotator.tasks.mcq.stats import features_stat

    def ratio(sums):
        with np.errstate(invalid="ignore", divide="ignore"):
            return sums[:, 0] / sums[:, 1]

    # two items whose features sum to 0 / 0: the share is undefined, over 2 items, and says why
    r = features_stat("distractor_share", [[0.0, 0.0], [0.0, 0.0]], ratio, "share", seed=1)
    assert (r.metric, r.value, r.ci_low, r.ci_high, r.n_items, r.n_raters, r.note) == (
        "distractor_share", None, None, None, 2, 0, "share is 0/0")
