"""The persona_filter task's declaration (storage.task_specs.TaskSpec): the answer {decision, reasons}, a record's
`decision` and `reasons`, the decision as a label, the --reasons option. Plain data and functions: no Textual."""
from __future__ import annotations

from typing import Any

from storage.task_specs import AnswerRecord, Labeler, StudyOption, TaskSpec, one_label


def decision_from_record(rec: AnswerRecord, item: Any, item_b: Any, settings: dict) -> dict:
    """`decision` = keep/drop, `reasons` = [reason names] or "a,b" (drop only; among the study's reasons) ->
    {decision, reasons (in the study's order)}. Raises InputError naming the field."""
    decision = str(rec.get("decision") or "").strip().lower()
    if decision not in ("keep", "drop"):
        raise rec.error("decision", f"expected keep or drop, got {rec.get('decision')!r}")
    reasons = rec.get("reasons") or []
    if isinstance(reasons, str):
        reasons = [r.strip() for r in reasons.split(",") if r.strip()]
    known = list(settings.get("reasons") or [])
    bad = [r for r in reasons if r not in known]
    if bad:
        raise rec.error("reasons", f"{bad[0]!r} is not a reason of this study ({', '.join(known)})")
    if decision == "keep" and reasons:
        raise rec.error("reasons", "a kept record has no drop reasons")
    return {"decision": decision, "reasons": [r for r in known if r in reasons]}


SPEC = TaskSpec(
    name="persona_filter", task_class="annotator.tasks.persona_filter.task:PersonaFilterTask",
    answer_shape="decision", answer_fields=("decision", "reasons"), answer_field="decision",
    from_record=decision_from_record,
    labeler=Labeler(one_label("decision"), lambda d, p: 1.0 if d == "keep" else 0.0, False, "keep rate"),
    study_options=(StudyOption("reasons", "list", [], "comma-separated drop reasons"),),
    option_help=(("keep_rule=majority|unanimous", "how the people's answers keep a record (default majority)"),
                 ("record_types=TYPE,...", "only records of these types (persona, profile, event, preference)"),
                 ("chain=same|children", "with --from-study: the same records again, or the next records whose "
                                         "parent the earlier round kept"),
                 ("allow_open=1", "with --from-study: records the earlier round has not decided count as not "
                                  "kept")))
