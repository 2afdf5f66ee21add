"""The judge_validation task's declaration (storage.task_specs.TaskSpec): the answer {reflected: bool}, a record's
`reflected` or `label`, the verdict as a label. Plain data and functions: no Textual."""
from __future__ import annotations

from typing import Any

from storage.task_specs import AnswerRecord, Labeler, TaskSpec, as_float, one_label


def reflected_from_record(rec: AnswerRecord, item: Any, item_b: Any, settings: dict) -> dict:
    """`reflected` = true/false, or `label` = 1/0 -> {reflected: bool}. Raises InputError naming the field."""
    reflected = rec.boolean("reflected")
    if reflected is None:
        label = rec.get("label")
        if label is None:
            raise rec.error("reflected", "missing (give reflected: true/false or label: 1/0)")
        if isinstance(label, bool) or str(label).strip() not in ("0", "1"):
            raise rec.error("label", f"expected 1 (reflected) or 0 (not reflected), got {label!r}")
        reflected = str(label).strip() == "1"
    return {"reflected": reflected}


SPEC = TaskSpec(
    name="judge_validation", task_class="annotator.tasks.judge_validation.task:JudgeValidationTask",
    answer_shape="reflected", answer_fields=("reflected", "label"), answer_field="label",
    from_record=reflected_from_record, labeler=Labeler(one_label("reflected"), as_float, False, "share reflected"))
