"""MCQ answering (HorizonBench section 5.3; PersonaMem-style four-option items; T/F items too).

The annotator sees the question, the options in their own seeded order, and the conversation context when the
item has one; keys a..e or 1..5 choose, x answers "can't tell" (stored as its own category). The key is never
shown. Answers are stored in the ORIGINAL option order: {"choice": original index or None, "letter": original
letter, "shown": the letter the annotator pressed, "cant_tell": bool}.
"""
from __future__ import annotations

from typing import Any

from annotator.tasks.base import Decision, KeyChoice, TaskType, UnitView
from storage.models import Item, Unit
from storage.payloads import McqPayload, letter

CHOICE_KEYS = "abcdefghij"
DIGIT_KEYS = "1234567890"


class McqTask(TaskType):
    name = "mcq"
    title = "Multiple choice answering"
    item_kinds = ("mcq",)
    default_annotators_per_item = 3
    show_context = True
    default_guidelines = (
        "# Answer each question\n\n"
        "Read the conversation (when there is one) and the question, then pick the option that fits the user "
        "best.\n\n- `a`..`e` or `1`..`5`: choose an option (saved at once)\n- `x`: can't tell\n"
        "- `s`: skip, `u`: back to the previous item, `n`: note, `q`: quit\n"
    )

    def shuffle_size(self, unit: Unit, item: Item, item_b: Item | None) -> int:
        return len(item.payload["options"])

    def decision_keys(self, view: UnitView, partial: dict[str, Any] | None) -> list[KeyChoice]:
        n = len(view.order)
        keys = [KeyChoice(CHOICE_KEYS[i], f"option {letter(i)}", f"{CHOICE_KEYS[i]}/{DIGIT_KEYS[i]}")
                for i in range(n)]
        keys.append(KeyChoice("x", "can't tell"))
        return keys

    def decide(self, key: str, view: UnitView, partial: dict[str, Any] | None) -> Decision | None:
        n = len(view.order)
        if key == "x":
            return Decision({"choice": None, "letter": None, "shown": None, "cant_tell": True})
        pos = CHOICE_KEYS.find(key) if key in CHOICE_KEYS else DIGIT_KEYS.find(key) if key in DIGIT_KEYS else -1
        if not 0 <= pos < n:
            return None
        original = view.order[pos]
        return Decision({"choice": original, "letter": letter(original), "shown": letter(pos), "cant_tell": False})

    def describe_answer(self, view: UnitView, answer: dict[str, Any]) -> str:
        if answer.get("cant_tell"):
            return "can't tell"
        return f"option {letter(view.order.index(answer['choice']))}"

    def compose_item(self, view: UnitView, partial: dict[str, Any] | None, store) -> Any:
        from annotator.widgets.mcq_view import McqView

        payload = McqPayload.model_validate(view.item.payload)
        context = None
        if self.show_context and view.item.context_id:
            context = (view.item.context_id, view.item.context_end)
        chosen = None
        ans = view.answer
        if ans is not None:
            chosen = "x" if ans.get("cant_tell") else view.order.index(ans["choice"])
        return McqView(
            question=payload.question,
            options=[payload.options[i] for i in view.order],
            chosen=chosen,
            store=store,
            context=context,
            snippet=None,
            tf=payload.fmt == "tf",
        )

    def export_fields(self, unit: Unit, item: Item, item_b: Item | None, answer: dict[str, Any]) -> dict[str, Any]:
        p = McqPayload.model_validate(item.payload)
        choice = answer.get("choice")
        return {
            "choice_letter": None if choice is None else letter(choice),
            "choice_text": None if choice is None else p.options[choice],
            "cant_tell": bool(answer.get("cant_tell")),
            "correct_letter": None if p.correct_index is None else letter(p.correct_index),
            "is_correct": None if p.correct_index is None else choice == p.correct_index,
        }

    def figures(self, data):
        from annotator.tasks.mcq_figures import mcq_figures

        return mcq_figures(data)
