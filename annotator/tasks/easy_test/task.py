"""Easy test (RealPref appendix G.2): can the preference be inferred from the conversation that expresses it?

The annotator reads the preference-expression snippet (payload.snippet, shown inline with ContextView) and answers
the item's MCQ (options shuffled per annotator, keys a..d / 1..4) or T/F question (never shuffled, t/1 True,
f/2 False); x is "can't tell". Only mcq items that carry a snippet are used (the realpref importer attaches
one to each query's MCQ and T/F items). The preference text, its type, the key and the source stay hidden.

Figures: accuracy overall, for MCQ and for T/F, and per expression type (RealPref table 8, humans: 0.980 for
type 3, 0.960 for type 4); tables of accuracy per expression type and per preference type, each split into
all / MCQ / T/F; every accuracy is correct answers / answers (can't tell counts as wrong) with a 95% percentile
bootstrap interval over items (seeded with the study seed). A last table lists the items most annotators miss
(more than half of the item's answers not correct) as "not inferable".

Generalized preferences (RealPref G.1): given a dataset of generalized preference records instead of MCQ items,
the study is made over easy-test items derived from them (annotator/tasks/easy_test/generalized.py): the snippet
shows the user's original preferences, the options the generalized one among other people's preferences.
"""
from __future__ import annotations

from typing import Any

from annotator.tasks.base import UnitView
from annotator.tasks.mcq.task import McqTask
from storage.errors import PrefvalError
from storage.models import Item
from storage.payloads import McqPayload


class EasyTestTask(McqTask):
    name = "easy_test"
    title = "Easy test: infer the preference from its conversation"
    default_annotators_per_item = 3
    max_datasets = None  # a dataset of generalized preferences, then the originals' (prepare_spec); else one
    default_guidelines = (
        "# Easy test\n\n"
        "Each screen shows a short conversation in which a user reveals something about what they like or "
        "dislike, sometimes only indirectly. Read it, then answer the question below it as that user would "
        "want.\n\n- `a`..`d` or `1`..`4`: choose an option (saved at once)\n"
        "- True/False questions: `t` or `1` True, `f` or `2` False\n"
        "- `x`: can't tell (the conversation gives no basis for any answer)\n"
        "- `s`: skip, `u`: back to the previous item, `n`: note, `q`: quit\n"
    )

    def prepare_spec(self, store, spec):
        """A dataset of generalized preference records (RealPref G.1: the generator's `generalized` stage) and no
        item an easy test can use: its records become easy-test items first (annotator/tasks/easy_test/
        generalized.py; the originals from a second --dataset, else found through the records' sources) and the
        study is made over them. Raises PrefvalError as that module."""
        from annotator.tasks.easy_test.generalized import derive, is_generalized

        self._generalized_from = None
        if not spec.datasets or spec.from_study:
            return spec
        items = store.items(spec.datasets[0])
        usable = any(it.kind in self.item_kinds and self.accepts(it) for it in items)
        if usable or not any(map(is_generalized, items)):
            return spec
        name, _ = derive(store, spec)
        self._generalized_from = list(spec.datasets)
        return spec.model_copy(update={"datasets": [name]})

    def check_datasets(self, given: list[str], prepared: list[str] | None = None) -> None:
        """More than one --dataset only for a first dataset of generalized preferences, the others holding their
        originals (prepare_spec then makes the study over one derived dataset): when prepare_spec kept several
        datasets as given (the first holds easy-test items, or no generalized preferences, or --from-study was
        given), the others would be ignored, so they are refused in one line. Raises PrefvalError."""
        if prepared is None or len(prepared) <= 1:
            return
        named = ", ".join(f"'{d}'" for d in given)
        raise PrefvalError(f"task {self.name} takes one --dataset; {len(given)} given ({named}): a second --dataset "
                           f"holds the originals when the first holds generalized preferences and no easy-test "
                           f"items, which '{given[0]}' does not; nothing was created")

    def study_settings(self, spec) -> dict[str, Any]:
        """McqTask's, plus generalized_from: the datasets of generalized preferences (and originals) the items were
        made from, when prepare_spec made them."""
        settings = super().study_settings(spec)
        if getattr(self, "_generalized_from", None):
            settings["generalized_from"] = self._generalized_from
        return settings

    def accepts(self, item: Item) -> bool:
        """Only items with a non-empty preference-expression snippet."""
        return bool(item.payload.get("snippet"))

    def screen_context(self, view: UnitView, payload: McqPayload) -> dict[str, Any]:
        """The snippet's messages, inline; never the stored long context."""
        return {"snippet": list(payload.snippet or [])}

    #: the screen shows the snippet (accepts requires one), never the stored conversation
    needs_conversation = False

    def conversation_key(self, item: Item) -> Any:
        """The snippet, the conversation this screen shows (as canonical JSON)."""
        from annotator.tasks.screens import canonical

        return canonical(item.payload.get("snippet") or [])

    def vote_outcome(self, answers, item, settings):
        """An item passes the easy test when more than half of its people's answers pick the key (RealPref G.2:
        the item can be answered with the conversation) and fails when fewer than half do; exactly half is a tie
        that needs adjudication; undecided without a key."""
        from annotator.tasks.outcome import failed, needs_adjudication, passed, undecided

        key = item.payload.get("correct_index") if item is not None else None
        if key is None:
            return undecided("no key")
        right = sum(a.get("choice") == key for a in answers)
        words = f"easy test: {right} of {len(answers)} correct"
        if 2 * right > len(answers):
            return passed(words)
        if 2 * right == len(answers):
            return needs_adjudication(f"{words}, a tie")
        return failed(words)

    def adjudicated_outcome(self, answer, item, settings):
        """The adjudicator's answer passes the item when it is the key (the item can be answered with the
        conversation), fails it otherwise."""
        from annotator.tasks.outcome import failed, passed, undecided

        key = item.payload.get("correct_index") if item is not None else None
        if key is None:
            return undecided("no key")
        return passed("easy test: the adjudicated answer is the key") if answer.get("choice") == key else \
            failed("easy test: the adjudicated answer is not the key")

    def model_section(self, data, answers, fs) -> None:
        """McqTask's, then RealPref Table 8 with people, each model and the paper's rows."""
        super().model_section(data, answers, fs)
        from annotator.tasks.easy_test.figures import table8_models

        table8_models(data, answers, fs)

    def figures(self, data):
        """See annotator/tasks/easy_test/figures.py (loaded here, so the TUI start-up stays light)."""
        from annotator.tasks.easy_test.figures import easy_test_figures
        from annotator.tasks.mcq.task import with_screen_copies

        return with_screen_copies(easy_test_figures(data), data.study.settings)
