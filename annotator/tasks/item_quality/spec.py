"""The item_quality task's declaration (storage.task_specs.TaskSpec): the answer {labels: {dimension: bool}}, a
record's `labels`, each dimension as a label, the --dimensions option. Plain data and functions: no Textual."""
from __future__ import annotations

from typing import Any

from annotator.tasks.mcq.spec import MISSING_CONTEXT, SCREEN_OPTIONS
from storage.task_specs import (AnswerRecord, Labeler, StudyOption, TaskSpec, as_float, many_labels, per_dimension,
                                text_bool)


def labels_from_record(rec: AnswerRecord, item: Any, item_b: Any, settings: dict) -> dict:
    """`labels` = {dimension: true/false} for every dimension of the study (CSV: a JSON cell, or one column per
    dimension) -> {labels: {...}}. Raises InputError naming the dimension."""
    return {"labels": per_dimension(rec, "labels", settings, lambda v, where: text_bool(rec, v, where))}


SPEC = TaskSpec(
    name="item_quality", task_class="annotator.tasks.item_quality.task:ItemQualityTask", answer_shape="labels",
    answer_fields=("labels",), answer_field="labels", from_record=labels_from_record,
    labeler=Labeler(many_labels("labels"), as_float, False, "share judged true"),
    study_options=(StudyOption("dimensions", "list", [], "comma-separated dimensions"),),
    option_help=SCREEN_OPTIONS + MISSING_CONTEXT)
