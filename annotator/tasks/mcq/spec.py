"""The mcq task's declaration (storage.task_specs.TaskSpec): its answer {choice, letter, shown, cant_tell}, how a
record's `choice` maps to it, how its answers read as labels. easy_test and blind_test answer the same way and
declare themselves with ``choice_spec``. Plain data and functions: no Textual."""
from __future__ import annotations

from typing import Any

from storage.task_specs import AnswerRecord, Labeler, TaskSpec


def _is_tf(payload: dict) -> bool:
    """Whether a payload is a True/False item's (fmt "tf"; annotator.tasks.mcq.task.is_tf on an Item)."""
    return payload.get("fmt") == "tf"


def choice_from_record(rec: AnswerRecord, item: Any, item_b: Any, settings: dict) -> dict:
    """`choice` = a letter, a 0-based index or the option text (T/F items also t/f/true/false), or
    `cant_tell: true` -> {choice, letter, shown (the letter as the original order shows it; T/F: "T"/"F"),
    cant_tell}. Raises InputError at `choice` for a value that names no option of the item."""
    from storage.importers.generic import parse_index

    options = item.payload.get("options", [])
    if rec.boolean("cant_tell"):
        return {"choice": None, "letter": None, "shown": None, "cant_tell": True}
    raw = rec.get("choice")
    if raw is None:
        raise rec.error("choice", "missing (give a letter, a 0-based index or the option text, or cant_tell)")
    tf = _is_tf(item.payload)
    if tf and isinstance(raw, (str, bool)) and str(raw).strip().lower() in ("t", "true", "f", "false"):
        want = "True" if str(raw).strip().lower() in ("t", "true") else "False"
        idx = options.index(want) if want in options else None
    else:
        idx = parse_index(raw, options, rec.path, rec.record, "choice")
    if idx is None or not 0 <= idx < len(options):
        raise rec.error("choice", f"{raw!r} is not one of the item's {len(options)} options")
    shown = options[idx][0] if tf else chr(ord("A") + idx)
    return {"choice": idx, "letter": chr(ord("A") + idx), "shown": shown, "cant_tell": False}


def option_label(payload: dict, index: int) -> str:
    """An option as a label: a T/F item's "True" / "False" (its option text when it reads otherwise, as
    annotator.tasks.mcq.task.tf_value), else its letter."""
    options = payload.get("options") or []
    if _is_tf(payload) and 0 <= index < len(options):
        text = str(options[index]).strip()
        return {"true": "True", "false": "False"}.get(text.lower(), text)
    return chr(ord("A") + index)


def choice_labels(answer: dict, payload: dict) -> dict[str, Any]:
    """{"choice": the chosen option's label}, {"choice": "can't tell"}, or {} for an answer without a choice."""
    if answer.get("cant_tell"):
        return {"choice": "can't tell"}
    c = answer.get("choice")
    return {"choice": option_label(payload, int(c))} if isinstance(c, int) and not isinstance(c, bool) else {}


def choice_value(label: Any, payload: dict) -> float | None:
    """1.0 when the label is the item's key (payload correct_index), 0.0 when not, None for an item without key."""
    key = payload.get("correct_index")
    if key is None:
        return None
    return 1.0 if label == option_label(payload, int(key)) else 0.0


CHOICE_LABELER = Labeler(choice_labels, choice_value, False, "share answered correctly", by_format=True)

SCREEN_OPTIONS = (
    ("identical_screens=merge|keep", "items identical on screen kept once (the default), or every copy kept"),
    ("sample_unit=query|item", "--sample draws whole RealPref queries, MCQ and T/F forms together, when the items "
                               "carry metadata.query_id (the default), or items one by one"),
)
MISSING_CONTEXT = (("missing_context=refuse|keep|drop", "items whose conversation was not imported: refused (the "
                                                        "default), kept without it, or left out"),)


def choice_spec(name: str, task_class: str, option_help=SCREEN_OPTIONS) -> TaskSpec:
    """The declaration of a task answered as an MCQ (mcq, easy_test, blind_test): answer_shape "choice"."""
    return TaskSpec(name=name, task_class=task_class, answer_shape="choice",
                    answer_fields=("choice", "cant_tell"), answer_field="choice", from_record=choice_from_record,
                    labeler=CHOICE_LABELER, option_help=option_help)


TIE_RULE = (("tie_rule=no-label|first-annotator", "majority vote's tie: no label (the default) or the first "
                                                   "annotator's answer (HorizonBench's script)"),)
SPEC = choice_spec("mcq", "annotator.tasks.mcq.task:McqTask", SCREEN_OPTIONS + MISSING_CONTEXT + TIE_RULE)
