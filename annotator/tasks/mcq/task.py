"""MCQ answering (HorizonBench section 5.3; PersonaMem-style four-option items; T/F items too).

The annotator sees the question, the options in their own seeded order, and the conversation context when the
item has one; keys a..e or 1..5 choose, x answers "can't tell" (stored as its own category). T/F items
(fmt "tf") are never shuffled: t or 1 answers True, f or 2 answers False. The key is never shown. Answers are
stored in the ORIGINAL option order: {"choice": original index or None, "letter": original letter, "shown": the
letter (T/F: "T"/"F") the annotator pressed, "cant_tell": bool}.

easy_test and blind_test reuse this class and only change what the screen shows and the figures.
"""
from __future__ import annotations

from typing import Any

from annotator.tasks.base import Decision, KeyChoice, TaskType, UnitView, unknown_fields
from storage.models import Item, Unit
from storage.payloads import McqPayload, letter

CHOICE_KEYS = "abcdefghij"
DIGIT_KEYS = "1234567890"
CANT_TELL = {"choice": None, "letter": None, "shown": None, "cant_tell": True}


def is_tf(item: Item) -> bool:
    """Whether an mcq item is a True/False question (payload fmt "tf")."""
    return item.payload.get("fmt") == "tf"


def tf_indices(options: list[str]) -> tuple[int, int]:
    """(index of the "True" option, index of the "False" option); (0, 1) when the texts say otherwise."""
    low = [o.strip().lower() for o in options]
    if len(low) == 2 and set(low) == {"true", "false"}:
        return low.index("true"), low.index("false")
    return 0, 1


def tf_value(options: list[str], index: int) -> bool | str:
    """The value of option `index` of a T/F item: True or False when the options read true/false (any case),
    else the option's own text."""
    text = options[index].strip()
    return {"true": True, "false": False}.get(text.lower(), text)


def display_order(view: UnitView) -> list[int]:
    """Display position -> original option index (the identity for unshuffled T/F items)."""
    return view.order or list(range(len(view.item.payload["options"])))


class McqTask(TaskType):
    name = "mcq"
    title = "Multiple choice answering"
    item_kinds = ("mcq",)
    default_annotators_per_item = 3
    show_context = True

    def bundle_needs_context(self) -> bool:
        """Only the task variants that show the conversation carry it in a bundle."""
        return self.show_context
    default_guidelines = (
        "# Answer each question\n\n"
        "Read the conversation (when there is one) and the question, then pick the option that fits the user "
        "best.\n\n"
        "- the letter of an option (`a`, `b`, ...) or its number (`1`, `2`, ...): choose it (saved at once)\n"
        "- `x`: can't tell\n"
        "- `s`: skip, `u`: back to the previous item, `n`: note, `q`: quit\n"
    )

    def study_settings(self, spec) -> dict[str, Any]:
        """Adds tie_rule (mcq studies: how majority-vote accuracy settles a tie, `--option tie_rule=no-label` by
        default, or first-annotator, HorizonBench's agreement script: annotator/tasks/mcq/figures.py). Raises
        PrefvalError for an unknown rule, and for the option on easy and blind tests, whose items pass by more
        than half of the answers (no plurality vote)."""
        from reports.stats.rates import TIE_RULES
        from storage.errors import PrefvalError

        settings = super().study_settings(spec)
        if "tie_rule" in spec.options:
            rule = str(spec.options["tie_rule"]).strip()
            if self.name != "mcq":
                raise PrefvalError(f"--option tie_rule applies to mcq studies (majority-vote accuracy), not "
                                   f"{self.name}")
            if rule not in TIE_RULES:
                raise PrefvalError(f"--option tie_rule={rule}: use {' or '.join(TIE_RULES)}")
            settings["tie_rule"] = rule
        return settings

    def shuffle_size(self, unit: Unit, item: Item, item_b: Item | None) -> int:
        return 0 if is_tf(item) else len(item.payload["options"])

    # ---- study creation: what the screen shows (annotator.tasks.screens) ----------------------------------
    #: the mcq screen shows the item's stored conversation: an item whose conversation was not imported is a
    #: memory question without the memory (easy_test and blind_test, which never show it, set this False)
    needs_conversation = True

    def screen_key(self, store, item: Item) -> Any:
        """What compose_item draws: the format, the question, the options (as a set for MCQ items, whose order
        each annotator sees shuffled; in order for T/F) and the conversation (conversation_key)."""
        p = item.payload
        options = list(p.get("options") or [])
        shown = tuple(options) if is_tf(item) else tuple(sorted(options))
        return ("mcq", p.get("fmt"), p.get("question"), shown, self.conversation_key(item))

    def conversation_key(self, item: Item) -> Any:
        """The conversation the screen shows, in a screen key: the stored context and how much of it
        (context id, end), or None without one. Variants override (easy_test: the snippet; blind_test: none)."""
        return (item.context_id, item.context_end) if self.show_context and item.context_id else None

    def key_on_screen(self, item: Item) -> Any:
        """The texts of the key and of the pre-evolution distractor (None when the item has none): copies with
        the same option set are scored alike only when these agree."""
        p = item.payload
        options = list(p.get("options") or [])

        def text(i):
            return options[i] if isinstance(i, int) and 0 <= i < len(options) else None

        return text(p.get("correct_index")), text(p.get("distractor_index"))

    def decision_keys(self, view: UnitView, partial: dict[str, Any] | None) -> list[KeyChoice]:
        if is_tf(view.item):
            keys = [KeyChoice("t", "True", "t/1"), KeyChoice("f", "False", "f/2")]
        else:
            keys = [KeyChoice(CHOICE_KEYS[i], f"option {letter(i)}", f"{CHOICE_KEYS[i]}/{DIGIT_KEYS[i]}")
                    for i in range(len(display_order(view)))]
        keys.append(KeyChoice("x", "can't tell"))
        return keys

    def decide(self, key: str, view: UnitView, partial: dict[str, Any] | None) -> Decision | None:
        if key == "x":
            return Decision(dict(CANT_TELL))
        if is_tf(view.item):
            t_idx, f_idx = tf_indices(view.item.payload["options"])
            pick = {"t": (t_idx, "T"), "1": (t_idx, "T"), "f": (f_idx, "F"), "2": (f_idx, "F")}.get(key)
            if pick is None:
                return None
            return Decision({"choice": pick[0], "letter": letter(pick[0]), "shown": pick[1], "cant_tell": False})
        order = display_order(view)
        pos = CHOICE_KEYS.find(key) if key in CHOICE_KEYS else DIGIT_KEYS.find(key) if key in DIGIT_KEYS else -1
        if not 0 <= pos < len(order):
            return None
        original = order[pos]
        return Decision({"choice": original, "letter": letter(original), "shown": letter(pos), "cant_tell": False})

    def answer_problem(self, status: str, answer: dict[str, Any], unit: Unit, item: Item, item_b: Item | None,
                       settings: dict[str, Any]) -> str | None:
        """An MCQ or T/F answer: can't tell (cant_tell true, no choice), or the index of one of the item's options
        in its original order (an int, 0 <= choice < number of options) with cant_tell false or absent; a "letter"
        given is the choice's own letter (A for 0), none with can't tell."""
        n = len(item.payload.get("options") or [])
        extra = unknown_fields(answer, ("choice", "letter", "shown", "cant_tell"))
        if extra:
            return extra
        if answer.get("cant_tell") is True:
            if answer.get("letter") is not None:
                return f"letter {answer.get('letter')!r} with cant_tell"
            return None if answer.get("choice") is None else f"choice {answer.get('choice')!r} with cant_tell"
        if answer.get("cant_tell") not in (None, False):
            return f"cant_tell {answer.get('cant_tell')!r} is not true or false"
        choice = answer.get("choice")
        if type(choice) is not int or not 0 <= choice < n:
            return f"choice {choice!r} is not one of the item's {n} options (0..{n - 1}) nor can't tell"
        if "letter" in answer and answer["letter"] != letter(choice):
            return f"letter {answer['letter']!r} is not the letter {letter(choice)!r} of choice {choice}"
        # shown: the letter of the option's place on screen (A..); on a T/F item also the key's "T" or "F", or the
        # first letter of the option (an imported answer's)
        places = [letter(i) for i in range(n)]
        if is_tf(item):
            places = list(dict.fromkeys([*places, "T", "F", item.payload["options"][choice][:1]]))
        if answer.get("shown") is not None and answer["shown"] not in places:
            return f"shown {answer['shown']!r} is not a place the options are shown at ({', '.join(places)})"
        return None

    def describe_answer(self, view: UnitView, answer: dict[str, Any]) -> str:
        if answer.get("cant_tell"):
            return "can't tell"
        if is_tf(view.item):
            return view.item.payload["options"][answer["choice"]]
        return f"option {letter(display_order(view).index(answer['choice']))}"

    # ---- the screen: what each variant may show -------------------------------------------------------
    def screen_context(self, view: UnitView, payload: McqPayload) -> dict[str, Any]:
        """The McqView arguments for the conversation: the stored context (lazy) when the item has one."""
        if self.show_context and view.item.context_id:
            return {"context": (view.item.context_id, view.item.context_end)}
        return {}

    def screen_conversation(self, view: UnitView) -> tuple[str, int | None] | None:
        """The stored conversation the screen shows (screen_context's), read before drawing."""
        payload = McqPayload.model_validate(view.item.payload)
        return self.screen_context(view, payload).get("context")

    def compose_item(self, view: UnitView, partial: dict[str, Any] | None, shown=None) -> Any:
        """The McqView of the unit: shown.conversation (read by screen_input) when the item's conversation is
        shown."""
        from annotator.tasks.mcq.view import McqView

        payload = McqPayload.model_validate(view.item.payload)
        order = display_order(view)
        chosen = None
        ans = view.answer
        if ans is not None:
            chosen = "x" if ans.get("cant_tell") else order.index(ans["choice"])
        keys = None
        if payload.fmt == "tf":
            t_idx, _ = tf_indices(payload.options)
            keys = ["t" if i == t_idx else "f" for i in order]
        # only the question and the option texts reach the screen: never correct_index, distractor_index,
        # metadata (preference, source, type) or anything about other annotators
        return McqView(
            question=payload.question,
            options=[payload.options[i] for i in order],
            chosen=chosen,
            conversation=shown.conversation if shown is not None else None,
            tf=payload.fmt == "tf",
            keys=keys,
            **self.screen_context(view, payload),
        )

    # ---- outputs ----------------------------------------------------------------------------------------
    def check_key(self, item: Item) -> Any:
        """The key's original option index (answer_key of a correct answer)."""
        return item.payload.get("correct_index")

    def answer_key(self, answer: dict[str, Any]) -> Any:
        """The option chosen in the item's original order, or "can't tell" (never the shown letter)."""
        return "cant_tell" if answer.get("cant_tell") else answer.get("choice")

    def export_fields(self, unit: Unit, item: Item, item_b: Item | None, answer: dict[str, Any]) -> dict[str, Any]:
        """MCQ: option letters and text in the item's original order. T/F: the item's own values instead of
        letters (choice and correct as True/False; the option text when an item words them otherwise).
        Items with a pre-evolution distractor (HorizonBench) add distractor_letter and picked_distractor
        (None for can't tell)."""
        p = McqPayload.model_validate(item.payload)
        choice = answer.get("choice")
        if p.fmt == "tf":
            out = {"choice": None if choice is None else tf_value(p.options, choice),
                   "choice_text": None if choice is None else p.options[choice],
                   "cant_tell": bool(answer.get("cant_tell")),
                   "correct": None if p.correct_index is None else tf_value(p.options, p.correct_index)}
        else:
            out = {"choice_letter": None if choice is None else letter(choice),
                   "choice_text": None if choice is None else p.options[choice],
                   "cant_tell": bool(answer.get("cant_tell")),
                   "correct_letter": None if p.correct_index is None else letter(p.correct_index)}
        out.update({"is_correct": None if p.correct_index is None else choice == p.correct_index, "format": p.fmt})
        if p.distractor_index is not None:
            out["distractor_letter"] = letter(p.distractor_index)
            out["picked_distractor"] = None if choice is None else choice == p.distractor_index
        return out

    def export_columns(self, settings: dict[str, Any], unit: Unit, item: Item, item_b: Item | None) -> list[str]:
        """export_fields' keys, read from the stored payload without validating it again (called for every unit
        of an export): the T/F or MCQ columns, then the distractor's when the item has one."""
        tf = item.payload.get("fmt") == "tf"
        out = (["choice", "choice_text", "cant_tell", "correct"] if tf
               else ["choice_letter", "choice_text", "cant_tell", "correct_letter"]) + ["is_correct", "format"]
        return out + (["distractor_letter", "picked_distractor"]
                      if item.payload.get("distractor_index") is not None else [])

    def figures(self, data):
        from annotator.tasks.mcq.figures import mcq_figures

        return with_screen_copies(mcq_figures(data), data.study.settings)

    def model_section(self, data, answers, fs) -> None:
        """The tables of models beside people in the models' section (reports.llm_answers.llm_answers_section):
        HorizonBench's distractor share per model with its binomial test, when the items have a pre-evolution
        distractor. answers: model name -> unit id -> answer."""
        if any(data.items[u.item_id].payload.get("distractor_index") is not None for u in data.units):
            from annotator.tasks.mcq.figures import models_distractor_table

            models_distractor_table(data, answers, fs)

    table_values = {"key": "$.correct_index", "distractor": "$.distractor_index", "fmt": "$.fmt"}
    #: T/F and MCQ items of one study are never pooled in one kappa (issue 21, part 3): the per-annotator kappa is
    #: computed per value of the payload's "fmt" (reports.per_annotator)
    agreement_group_field = "fmt"
    table_lengths = {"n_options": "$.options"}

    def figures_from_table(self, table):
        from annotator.tasks.mcq.figures import mcq_figures_table

        return with_screen_copies(mcq_figures_table(table), table.study.settings)


def with_screen_copies(fs, settings: dict[str, Any]):
    """fs (a reports.figures.FigureSet) with the figure saying how many items identical on screen the study kept
    once (annotator.tasks.screens.screen_copies_figure) appended, when it kept any."""
    from annotator.tasks.screens import screen_copies_figure

    fig = screen_copies_figure(settings)
    if fig is not None:
        fs.figures.append(fig)
    return fs
