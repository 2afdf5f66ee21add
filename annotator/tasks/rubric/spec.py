"""The rubric task's declaration (storage.task_specs.TaskSpec): the answer {scores: {dimension: 1..5}}, a
record's `scores`, each dimension's score as a label, the options --rubric, --dimensions, --calibration and
--shared. Plain data and functions: no Textual."""
from __future__ import annotations

from typing import Any

from storage.task_specs import AnswerRecord, Labeler, StudyOption, TaskSpec, as_float, many_labels, per_dimension


def scores_from_record(rec: AnswerRecord, item: Any, item_b: Any, settings: dict) -> dict:
    """`scores` = {dimension: 1..5} for every dimension of the study (CSV: a JSON cell, or one column per
    dimension) -> {scores: {...}}. Raises InputError naming the dimension."""
    def score(v: Any, where: str) -> int:
        if isinstance(v, bool) or str(v).strip() not in ("1", "2", "3", "4", "5"):
            raise rec.error(where, f"expected a score 1..5, got {v!r}")
        return int(str(v).strip())
    return {"scores": per_dimension(rec, "scores", settings, score)}


SPEC = TaskSpec(
    name="rubric", task_class="annotator.tasks.rubric.task:RubricTask", answer_shape="scores",
    answer_fields=("scores",), answer_field="scores", from_record=scores_from_record,
    labeler=Labeler(many_labels("scores"), as_float, True, "mean score"),
    study_options=(StudyOption("rubric", "path", None, "rubric file, YAML or JSON (default: the built-in one)"),
                   StudyOption("dimensions", "list", [], "comma-separated dimensions"),
                   StudyOption("calibration", "int", 0, "number of calibration items"),
                   StudyOption("shared", "int", None, "items every annotator gets; the rest go to one each")),
    option_help=(("adjudication_threshold=X", "scores of one dimension more than X apart go to adjudication "
                                              "(default 1)"),))
