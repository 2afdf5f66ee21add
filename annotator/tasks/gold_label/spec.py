"""The gold_label task's declaration (storage.task_specs.TaskSpec): the answer {label: 1 apply / 0 suppress}, a
record's `label`, the label itself. Plain data and functions: no Textual."""
from __future__ import annotations

from typing import Any

from storage.task_specs import AnswerRecord, Labeler, TaskSpec, as_float, one_label


def label_from_record(rec: AnswerRecord, item: Any, item_b: Any, settings: dict) -> dict:
    """`label` = 1 (apply) / 0 (suppress), or true/false -> {label: 1 or 0}. Raises InputError at `label`."""
    label = rec.boolean("label")
    if label is None:
        raise rec.error("label", "missing (1 apply, 0 suppress)")
    return {"label": int(label)}


SPEC = TaskSpec(
    name="gold_label", task_class="annotator.tasks.gold_label.task:GoldLabelTask", answer_shape="label",
    answer_fields=("label",), answer_field="label", from_record=label_from_record,
    labeler=Labeler(one_label("label"), as_float, False, "share labelled apply"),
    option_help=(("non_unanimous=exclude|adjudicate", "items without a unanimous label: removed (BenchPreS, the "
                                                      "default) or sent to adjudication"),
                 ("context_threshold=X", "a context is kept when at least this share of its items are unanimous "
                                         "(default 0.9)"),
                 ("sample_unit=item|context", "--sample draws N items, or N whole contexts"),
                 ("gold_table_max=N", "rows of the report's gold-label table (default 200)")))
