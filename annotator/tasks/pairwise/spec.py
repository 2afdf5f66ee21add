"""The pairwise task's declaration (storage.task_specs.TaskSpec): the answer {winner, shown_left, pressed}, a
record's `winner`, the winner as a label, the --pairs option. Plain data and functions: no Textual."""
from __future__ import annotations

from typing import Any

from storage.task_specs import AnswerRecord, Labeler, StudyOption, TaskSpec, one_label


def winner_from_record(rec: AnswerRecord, item: Any, item_b: Any, settings: dict) -> dict:
    """`winner` = A, B or tie (any case; A = dataset A's side) -> {winner, shown_left: "A", pressed} (the judge
    saw A on the left). Raises InputError at `winner` for anything else."""
    raw = rec.get("winner")
    w = str(raw).strip() if raw is not None else ""
    w = {"a": "A", "b": "B", "tie": "tie"}.get(w.lower())
    if w is None:
        raise rec.error("winner", f"expected A, B or tie, got {raw!r}")
    return {"winner": w, "shown_left": "A", "pressed": {"A": "left", "B": "right", "tie": "tie"}[w]}


SPEC = TaskSpec(
    name="pairwise", task_class="annotator.tasks.pairwise.task:PairwiseTask", answer_shape="winner",
    answer_fields=("winner",), answer_field="winner", from_record=winner_from_record,
    labeler=Labeler(one_label("winner"), lambda w, p: {"A": 1.0, "tie": 0.5, "B": 0.0}.get(w), False,
                    "share won by A (a tie counts 1/2)", tie="tie"),
    study_options=(StudyOption("pairs", "path", None, "pairing file (default: seeded random pairing)"),),
    option_help=(("pairing=id|random", "pair the records of the same id in the two datasets, or at random"),))
