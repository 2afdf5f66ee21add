"""Item-quality checks of benchmark questions (PersonaMem, appendix A).

For each MCQ item with a key, the annotator sees the grounding — the persona (the system message that opens the
item's conversation, else the item's metadata), the conversation (lazy, scrollable), the question, the correct
response and the incorrect ones — and answers True/False on each of the study's dimensions in turn (`t`/`1` True,
`f`/`0` False). Every answer but the last is a committed partial row {"labels": {dimension: bool, ...}}, the last
the answer; backspace takes back the last label. This task is NOT blind about the key (whether the correct
response is correct is one of the questions) but never shows other annotators' answers.
"""
from __future__ import annotations

from typing import Any

from annotator.tasks.base import Decision, KeyChoice, StudySpec, TaskType, UnitView, check_labels
from storage.errors import PrefvalError
from storage.models import Item, Unit

# The four PersonaMem dimensions, described in prefval's words.
DEFAULT_DIMENSIONS: dict[str, str] = {
    "appropriateness": "The question is well formed and is the kind of question its type says it is.",
    "relevance": "The question fits the conversation and the persona it was drawn from.",
    "correctness": "The response marked correct is indeed correct and can be worked out from the conversation.",
    "best_response": "The response marked correct is better than every incorrect response.",
}
TRUE_KEYS, FALSE_KEYS = ("t", "1"), ("f", "0")


def dimension_title(name: str) -> str:
    return name.replace("_", " ")


class ItemQualityTask(TaskType):
    name = "item_quality"
    title = "Item quality checks"
    item_kinds = ("mcq",)
    default_annotators_per_item = 3
    blind = False
    default_guidelines = (
        "# Check each benchmark question\n\n"
        "You see what a question was built from (the persona, the conversation and its details), the question, "
        "the response marked correct and the incorrect responses. Answer True or False on each check in turn:\n\n"
        + "".join(f"- **{dimension_title(k)}**: {v}\n" for k, v in DEFAULT_DIMENSIONS.items())
        + "\nAnswer False whenever you are not convinced the statement holds.\n\n"
        "- `t` or `1`: True, `f` or `0`: False (each saved at once)\n- `backspace`: take back the last answer\n"
        "- `↑` `↓` `PgUp` `PgDn`: scroll the conversation (click it or press tab to focus it first)\n"
        "- `s`: skip, `u`: back to the previous item, `n`: note, `q`: quit\n"
    )

    def study_settings(self, spec: StudySpec) -> dict[str, Any]:
        """Adds dimensions (--dimensions, default the four PersonaMem ones) and their descriptions."""
        dims = list(spec.arg("dimensions")) or list(DEFAULT_DIMENSIONS)
        if len(set(dims)) != len(dims):
            raise PrefvalError("--dimensions: a dimension is named twice")
        settings = super().study_settings(spec)
        settings.update(dimensions=dims, dimension_help={d: DEFAULT_DIMENSIONS.get(d, "") for d in dims})
        return settings

    def accepts(self, item: Item) -> bool:
        """Only items with a key: the correct response is part of what is checked."""
        return item.payload.get("correct_index") is not None

    #: relevance and correctness are judged against the conversation the screen shows
    needs_conversation = True

    def screen_key(self, store, item: Item) -> Any:
        """What compose_item draws: the conversation (context id and end) and the persona that opens it, the
        question type and topic, the question, the correct and the incorrect responses in their order, and the
        item's metadata when no persona message opens the conversation (the screen shows it then)."""
        from annotator.tasks.screens import canonical

        p = item.payload
        options = list(p.get("options") or [])
        key = p.get("correct_index")
        persona = False
        if item.context_id:
            first = store.context_messages(item.context_id, 0, 1)
            persona = bool(first) and first[0].role == "system"
        return ("item_quality", (item.context_id, item.context_end) if item.context_id else None,
                p.get("question_type"), p.get("topic"), p.get("question"),
                options[key] if isinstance(key, int) and 0 <= key < len(options) else None,
                tuple(o for i, o in enumerate(options) if i != key),
                None if persona else canonical({k: v for k, v in (p.get("metadata") or {}).items()
                                                if v not in (None, "")}))

    # ---- the screen -------------------------------------------------------------------------------------
    @staticmethod
    def _labels(partial: dict[str, Any] | None) -> dict[str, bool]:
        return dict((partial or {}).get("labels") or {})

    def _next_dim(self, view: UnitView, labels: dict[str, bool]) -> str | None:
        return next((d for d in view.settings["dimensions"] if d not in labels), None)

    def decision_keys(self, view: UnitView, partial: dict[str, Any] | None) -> list[KeyChoice]:
        labels = self._labels(partial)
        dim = dimension_title(self._next_dim(view, labels) or "")
        keys = [KeyChoice("t", f"{dim}: True", "t/1"), KeyChoice("f", f"{dim}: False", "f/0")]
        if labels:
            keys.append(KeyChoice("backspace", "take back the last answer", "⌫"))
        return keys

    def decide(self, key: str, view: UnitView, partial: dict[str, Any] | None) -> Decision | None:
        labels = self._labels(partial)
        dims = view.settings["dimensions"]
        if key == "backspace":
            if not labels:
                return None
            del labels[[d for d in dims if d in labels][-1]]
            return Decision({"labels": labels}, complete=False)
        if key not in TRUE_KEYS + FALSE_KEYS:
            return None
        dim = self._next_dim(view, labels)
        if dim is None:  # cannot happen: a complete answer moves on
            return None
        labels[dim] = key in TRUE_KEYS
        return Decision({"labels": {d: labels[d] for d in dims if d in labels}},
                        complete=self._next_dim(view, labels) is None)

    def answer_problem(self, status: str, answer: dict[str, Any], unit: Unit, item: Item, item_b: Item | None,
                       settings: dict[str, Any]) -> str | None:
        """An item-quality answer: labels {dimension: true/false} over the study's dimensions, all of them when
        answered."""
        return check_labels(answer, "labels", list(settings.get("dimensions") or []),
                            lambda v: isinstance(v, bool), what="true or false", complete=status == "answered")

    def describe_answer(self, view: UnitView, answer: dict[str, Any]) -> str:
        labels = answer.get("labels") or {}
        return ", ".join(f"{dimension_title(d)} {'T' if labels[d] else 'F'}"
                         for d in view.settings["dimensions"] if d in labels)

    def screen_conversation(self, view: UnitView) -> tuple[str, int | None] | None:
        """The item's stored conversation, shown beside it (relevance and correctness are judged against it)."""
        return (view.item.context_id, view.item.context_end) if view.item.context_id else None

    def compose_item(self, view: UnitView, partial: dict[str, Any] | None, shown=None) -> Any:
        """The ItemQualityView of the unit; the conversation and the persona that opens it come from
        shown.conversation (read by screen_input)."""
        from annotator.tasks.item_quality.view import ItemQualityView
        from storage.payloads import McqPayload

        p = McqPayload.model_validate(view.item.payload)
        persona = None
        ctx = None
        conversation = shown.conversation if shown is not None else None
        if view.item.context_id and conversation is not None:
            ctx = (view.item.context_id, view.item.context_end)
            first = conversation.context_messages(view.item.context_id, 0, 1) if conversation.sizes else []
            if first and first[0].role == "system":
                persona = first[0].content
        details = {k: v for k, v in {"question type": p.question_type, "topic": p.topic}.items() if v}
        # without a persona message the item's metadata is the grounding shown (after the responses)
        extra = {} if persona else {k: v for k, v in p.metadata.items() if v not in (None, "")}
        correct = p.options[p.correct_index]
        incorrect = [o for i, o in enumerate(p.options) if i != p.correct_index]
        previous = None
        if view.current is not None and view.current.status == "answered" and not self._labels(partial):
            previous = view.answer.get("labels") or {}
        return ItemQualityView(
            conversation=conversation, context=ctx, persona=persona, details=details, metadata=extra,
            question=p.question, correct=correct,
            incorrect=incorrect, dimensions=view.settings["dimensions"],
            help=view.settings.get("dimension_help") or {}, labels=self._labels(partial), previous=previous,
            unit_id=view.unit.id)

    # ---- outputs ----------------------------------------------------------------------------------------
    def answer_key(self, answer: dict[str, Any]) -> Any:
        return tuple(sorted((answer.get("labels") or {}).items()))

    def export_fields(self, unit: Unit, item: Item, item_b: Item | None, answer: dict[str, Any]) -> dict[str, Any]:
        return {f"label_{d}": v for d, v in (answer.get("labels") or {}).items()}

    def export_columns(self, settings: dict[str, Any], unit: Unit, item: Item, item_b: Item | None) -> list[str]:
        """export_fields' columns for a complete answer: a label for each of the study's checks, in order."""
        return [f"label_{d}" for d in settings.get("dimensions") or []]

    def figures(self, data):
        from annotator.tasks.item_quality.figures import item_quality_figures
        from annotator.tasks.mcq.task import with_screen_copies

        return with_screen_copies(item_quality_figures(data), data.study.settings)
