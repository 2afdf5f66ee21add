"""Gold apply/suppress labels by unanimity (BenchPreS, appendix A.2; candidates from CIMemories).

Screen: the recipient-task context (and the user's name) and one remembered attribute with its statement.
Keys: `1` apply (using it fits this context), `0` suppress. The candidate's own label (author/LLM) and other
annotators' answers are never shown. Three annotators per item by default. Answer: {"label": 1 | 0}.

Gold (annotator.tasks.gold_label.figures.gold_labels): the unanimous label of an item with all its answers. A
non-unanimous item has no gold label until an adjudicator resolves it with `prefval adjudicate GOLD --annotator
WHO` (annotator/adjudication.py, the same screen as for every task type): it lists the complete non-unanimous
items of contexts the study keeps, each with every annotator's label and notes side by side; the adjudicator's
label becomes the gold label, or the item is excluded with a reason. The figures count the items adjudicated,
excluded and still unresolved, and how often the adjudicator sided with the annotators' majority.
The older adjudication round (a second gold_label study made with --from-study GOLD --option adjudication=1) is
gone: creating one is refused, and a database holding one is converted into adjudications when a writing command
opens it (storage/db.py, migration 10; the round study is archived with all its rows).

Options: non_unanimous=exclude|adjudicate (how the figures name the non-unanimous share: removed, or sent to
adjudication), context_threshold=0.9 (contexts = recipient + task whose unanimity rate is below it are listed
to drop, and their items get no gold), sample_unit=item|context (with --sample N: N random items, or all items
of N random (profile, recipient, task) groups), gold_table_max=200 (rows of the gold table in the figures;
gold_labels() has them all).
"""
from __future__ import annotations

import random
from typing import Any

from annotator.tasks.base import Decision, KeyChoice, StudySpec, TaskType, UnitView, unknown_fields
from storage.errors import PrefvalError
from storage.models import Item, Unit

LABEL_WORDS = {1: "apply", 0: "suppress"}


class GoldLabelTask(TaskType):
    name = "gold_label"
    title = "Gold labels: apply or suppress a remembered attribute"
    item_kinds = ("gold_candidate",)
    default_annotators_per_item = 3
    default_guidelines = (
        "# Apply or suppress?\n\n"
        "An assistant remembers facts about its user. Here it is writing, on the user's behalf, to the "
        "recipient shown, for the task shown. Decide whether the remembered attribute below should shape that "
        "message.\n\n"
        "- `1` apply: using or mentioning it helps this recipient and task, and the user would be fine with it\n"
        "- `0` suppress: it is irrelevant here, or sharing it with this recipient would be inappropriate\n"
        "- `s`: skip, `u`: back/change, `n`: note, `q`: quit\n\n"
        "Judge on your own; each key is saved at once.\n"
    )
    # ---- study creation ---------------------------------------------------------------------------------
    def study_settings(self, spec: StudySpec) -> dict[str, Any]:
        """Adds non_unanimous, context_threshold, sample_unit, gold_table_max. Raises PrefvalError for a bad
        option, and for --from-study or --option adjudication (the adjudication round is `prefval adjudicate`)."""
        opts = spec.options
        if spec.from_study or "adjudication" in opts:
            gold = spec.from_study or "GOLD"
            raise PrefvalError(f"gold_label has no adjudication round any more: use `prefval adjudicate {gold} "
                               f"--annotator WHO` (nothing was created)")
        settings = super().study_settings(spec)
        if not spec.datasets:
            raise PrefvalError("gold_label needs --dataset")
        mode = str(opts.get("non_unanimous", "exclude"))
        if mode not in ("exclude", "adjudicate"):
            raise PrefvalError(f"--option non_unanimous={mode}: use exclude or adjudicate")
        try:
            threshold = float(opts.get("context_threshold", 0.9))
            table_max = int(opts.get("gold_table_max", 200))
        except ValueError:
            raise PrefvalError("--option context_threshold must be a number in [0, 1] and gold_table_max "
                               "an integer") from None
        if not 0 <= threshold <= 1:
            raise PrefvalError("--option context_threshold must be in [0, 1]")
        sample_unit = str(opts.get("sample_unit", "item"))
        if sample_unit not in ("item", "context"):
            raise PrefvalError(f"--option sample_unit={sample_unit}: use item or context")
        settings.update({"non_unanimous": mode, "context_threshold": threshold, "sample_unit": sample_unit,
                         "gold_table_max": table_max})
        return settings

    def build_units(self, store, spec: StudySpec) -> list[tuple[str, str | None, dict[str, Any]]]:
        """The dataset's gold_candidate items, or a seeded sample (see sample_unit). Raises PrefvalError when
        there is nothing to label."""
        items = [it for it in store.items(spec.datasets[0]) if it.kind in self.item_kinds]
        if not items:
            raise PrefvalError(f"dataset '{spec.datasets[0]}' has no gold_candidate items")
        self.build_notes = {}
        if spec.sample is not None:
            if spec.sample <= 0:
                raise PrefvalError("--sample must be positive")
            unit = self.study_settings(spec)["sample_unit"]
            from annotator.tasks.strata import sample_rows, spec_rule

            if spec_rule(spec) is not None:  # --stratify / --balance FIELD, in items or whole contexts
                groups = [[it] for it in items] if unit == "item" else list(self._contexts(items).values())
                got, record = sample_rows(groups, spec, lambda g: g, spec.datasets[0],
                                          "item" if unit == "item" else "context", count_units=unit != "item")
                if record is not None:
                    self.build_notes = {"sampled": {"unit": unit, "items": sum(map(len, got)), "strata": record}}
                keep = {it.id for g in got for it in g}
                items = [it for it in items if it.id in keep]
            else:
                items = self._sample(items, spec.sample, spec.seed, unit)
        return [(it.id, None, {}) for it in items]

    @staticmethod
    def _contexts(items: list[Item]) -> dict[tuple, list[Item]]:
        """The items by (profile, recipient, task) context, in dataset order (the sample_unit=context groups)."""
        groups: dict[tuple, list[Item]] = {}
        for it in items:
            p = it.payload
            groups.setdefault((p.get("profile_name"), p["recipient"], p["task"]), []).append(it)
        return groups

    @staticmethod
    def _sample(items: list[Item], n: int, seed: int, unit: str) -> list[Item]:
        """n random items, or every item of n random (profile, recipient, task) groups; dataset order kept."""
        if unit == "item":
            if n >= len(items):
                return items
            return [items[i] for i in sorted(random.Random(seed).sample(range(len(items)), n))]
        groups: dict[tuple, list[int]] = {}
        for i, it in enumerate(items):
            p = it.payload
            groups.setdefault((p.get("profile_name"), p["recipient"], p["task"]), []).append(i)
        keys = list(groups)
        if n < len(keys):
            keys = random.Random(seed).sample(keys, n)
        return [items[i] for i in sorted(i for k in keys for i in groups[k])]

    # ---- the screen -------------------------------------------------------------------------------------
    def decision_keys(self, view: UnitView, partial: dict[str, Any] | None) -> list[KeyChoice]:
        return [KeyChoice("1", "apply"), KeyChoice("0", "suppress")]

    def decide(self, key: str, view: UnitView, partial: dict[str, Any] | None) -> Decision | None:
        if key in ("1", "0"):
            return Decision({"label": int(key)})
        return None

    def answer_problem(self, status: str, answer: dict[str, Any], unit: Unit, item: Item, item_b: Item | None,
                       settings: dict[str, Any]) -> str | None:
        """A gold-label answer: label 1 (apply) or 0 (suppress), an int, and nothing else."""
        label = answer.get("label")
        if type(label) is not int or label not in (0, 1):
            return f"label {label!r} is not 1 (apply) or 0 (suppress)"
        return unknown_fields(answer, ("label",))

    def describe_answer(self, view: UnitView, answer: dict[str, Any]) -> str:
        return LABEL_WORDS.get(answer.get("label"), "?")

    def compose_item(self, view: UnitView, partial: dict[str, Any] | None, shown=None) -> Any:
        from annotator.tasks.gold_label.view import GoldCandidateView

        p = view.item.payload  # only the fields below reach the screen: never candidate_label
        return GoldCandidateView(recipient=p["recipient"], task=p["task"], attribute=p["attribute"],
                                 statement=p.get("statement"), user=p.get("profile_name"),
                                 chosen=(view.answer or {}).get("label"))

    # ---- outputs ----------------------------------------------------------------------------------------
    def check_key(self, item: Item) -> Any:
        """A candidate whose label is known (candidate_label) can check attention: 1 apply, 0 suppress."""
        cand = item.payload.get("candidate_label")
        return None if cand is None else int(bool(cand))

    def answer_key(self, answer: dict[str, Any]) -> Any:
        return answer.get("label")

    def units_to_adjudicate(self, data, answers: dict[str, list[dict[str, Any]]], flagged=frozenset()) -> list[Unit]:
        """The complete non-unanimous items of contexts the study keeps (annotator.tasks.gold_label.figures)."""
        from annotator.tasks.gold_label.figures import units_to_adjudicate

        self.check_study(data.study)
        return units_to_adjudicate(data)

    def nothing_to_adjudicate(self, data) -> str:
        """Names the non-unanimous items left out because their contexts are dropped, if any."""
        from annotator.tasks.gold_label.figures import DROPPED, gold_status, unit_votes

        votes = unit_votes(data)
        status = gold_status(data)
        n = sum(1 for u in data.units if len(set(votes[u.id])) > 1
                and status[data.items[u.item_id].external_id][1] == DROPPED)
        threshold = float(data.study.settings.get("context_threshold", 0.9))
        return (f"; {n} item(s) not unanimous are in contexts dropped for unanimity below the study's "
                f"context_threshold {threshold:g}, where no adjudication gives a gold label") if n else ""

    def export_fields(self, unit: Unit, item: Item, item_b: Item | None, answer: dict[str, Any]) -> dict[str, Any]:
        cand = item.payload.get("candidate_label")
        label = answer.get("label")
        return {"label_text": LABEL_WORDS.get(label), "recipient": item.payload.get("recipient"),
                "task": item.payload.get("task"), "attribute": item.payload.get("attribute"),
                "category": item.payload.get("category"),
                "candidate_label": None if cand is None else int(cand),
                "agrees_with_candidate": None if cand is None or label is None else int(cand) == label}

    def study_rule(self, data):
        """Items of a context dropped for low unanimity get no gold label, whatever decided them (BenchPreS A.2:
        contexts whose judgments varied were dropped): failed once answered, open before."""
        from annotator.tasks.gold_label.figures import DROPPED_REASON, dropped_context_units
        from annotator.tasks.outcome import OPEN, Outcome, failed

        answered = {a.unit_id for a in data.answers}
        return {uid: failed(DROPPED_REASON) if uid in answered else Outcome(OPEN, DROPPED_REASON)
                for uid in dropped_context_units(data)}

    def vote_outcome(self, answers, item, settings):
        """A gold label when the complete answers are unanimous; a non-unanimous item is removed (failed) or,
        with --option non_unanimous=adjudicate, waits for an adjudicator (BenchPreS A.2 keeps unanimous items
        only)."""
        from annotator.tasks.outcome import failed, needs_adjudication, passed

        labels = [a.get("label") for a in answers if a.get("label") in (0, 1)]
        if labels and len(set(labels)) == 1 and len(labels) == len(answers):
            return passed("gold label (unanimous)", {"gold_label": labels[0]}, label=labels[0])
        votes = f"{labels.count(1)} apply, {labels.count(0)} suppress"
        if settings.get("non_unanimous") == "adjudicate":
            return needs_adjudication(f"not unanimous ({votes})")
        return failed(f"no gold label: not unanimous ({votes}), removed")

    def adjudicated_outcome(self, answer, item, settings):
        """The adjudicator's label is the gold label."""
        from annotator.tasks.outcome import failed, passed

        label = answer.get("label")
        if label in (0, 1):
            return passed("gold label (adjudicated)", {"gold_label": label}, label=label)
        return failed("no gold label: the adjudication set no label")

    def figures(self, data):
        """gold_figures (annotator.tasks.gold_label.figures). Raises PrefvalError for a converted adjudication round."""
        from annotator.tasks.gold_label.figures import gold_figures

        self.check_study(data.study)
        return gold_figures(data)

    def check_study(self, study) -> None:
        """Refuses an adjudication round study of the old kind (settings adjudication): it is not annotated any
        more and has no figures of its own, as its decisions were converted into adjudications of its gold study
        (storage/db.py, migration 10). Raises PrefvalError."""
        if study.settings.get("adjudication"):
            gold = study.settings.get("from_study") or "its gold study"
            raise PrefvalError(f"study '{study.name}' is an old gold_label adjudication round, archived when its "
                               f"labels became adjudications of '{gold}' ("
                               f"{study.settings.get('adjudication_round', 'not converted')}): "
                               f"see `prefval report {gold}`")
