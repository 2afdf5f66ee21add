"""Gold apply/suppress labels by unanimity (BenchPreS, appendix A.2; candidates from CIMemories).

Screen: the recipient-task context (and the user's name) and one remembered attribute with its statement.
Keys: `1` apply (using it fits this context), `0` suppress. The candidate's own label (author/LLM) and other
annotators' answers are never shown. Three annotators per item by default. Answer: {"label": 1 | 0}.

Gold (annotator.tasks._gold_stats.gold_labels): the unanimous label of an item with all its answers; a
non-unanimous item is excluded (default) or, with `--option non_unanimous=adjudicate`, resolved by an
adjudication study: `prefval study create ADJ --task gold_label --from-study GOLD --option adjudication=1`
holds only GOLD's complete non-unanimous items, and its screen (not blind to them) shows how the annotators
split; the adjudicator's label becomes the gold label.

Options: non_unanimous=exclude|adjudicate, context_threshold=0.9 (contexts = recipient + task whose unanimity
rate is below it are listed to drop, and their items get no gold), sample_unit=item|context (with --sample N:
N random items, or all items of N random (profile, recipient, task) groups), gold_table_max=200 (rows of the
gold table in the figures; gold_labels() has them all), adjudication=1 (see above).
"""
from __future__ import annotations

import random
from typing import Any

from annotator.tasks.base import (
    Decision, KeyChoice, ReleaseVerdict, StudySpec, TaskType, UnitView, human_answers, option_flag,
)
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
    adjudication_guidelines = (
        "# Adjudication\n\n"
        "The annotators did not agree on these items. You see how they split; decide the final label.\n\n"
        "- `1` apply, `0` suppress; `s` skip, `u` back, `n` note, `q` quit\n"
    )

    def __init__(self) -> None:
        self._settings: dict[str, Any] | None = None

    # ---- study creation ---------------------------------------------------------------------------------
    def study_settings(self, spec: StudySpec) -> dict[str, Any]:
        """Adds non_unanimous, context_threshold, sample_unit, gold_table_max, adjudication, from_study.
        An adjudication study defaults to one annotator per item. Raises PrefvalError for a bad option."""
        opts = spec.options
        adjudication = option_flag(opts.get("adjudication", "0"))
        settings = super().study_settings(spec)
        if adjudication:
            if not spec.from_study:
                raise PrefvalError("--option adjudication=1 needs --from-study GOLDSTUDY")
            settings["annotators_per_item"] = spec.annotators_per_item or 1
            if not spec.guidelines:
                settings["guidelines"] = self.adjudication_guidelines
        elif spec.from_study:
            raise PrefvalError("gold_label takes --from-study only for adjudication (--option adjudication=1)")
        elif not spec.datasets:
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
                         "gold_table_max": table_max, "adjudication": adjudication,
                         "from_study": spec.from_study})
        self._settings = settings  # build_units adds the datasets of an adjudication study
        return settings

    def build_units(self, store, spec: StudySpec) -> list[tuple[str, str | None, dict[str, Any]]]:
        """Gold study: the dataset's gold_candidate items, or a seeded sample (see sample_unit).
        Adjudication study: the complete non-unanimous items of --from-study, with the split in extra["votes"]
        ({"apply": n, "suppress": m}). Raises PrefvalError when there is nothing to label."""
        settings = self._settings if self._settings is not None else self.study_settings(spec)
        if settings["adjudication"]:
            from annotator.tasks._gold_stats import non_unanimous_items

            gold = store.get_study(spec.from_study)
            if gold.task_type != self.name or gold.settings.get("adjudication"):
                raise PrefvalError(f"--from-study {spec.from_study}: not a gold_label study to adjudicate")
            settings["datasets"] = list(gold.settings.get("datasets", []))
            units = non_unanimous_items(store, gold)
            if not units:
                raise PrefvalError(f"study '{gold.name}' has no complete non-unanimous item to adjudicate")
            return units
        items = [it for it in store.items(spec.datasets[0]) if it.kind in self.item_kinds]
        if not items:
            raise PrefvalError(f"dataset '{spec.datasets[0]}' has no gold_candidate items")
        if spec.sample is not None:
            if spec.sample <= 0:
                raise PrefvalError("--sample must be positive")
            items = self._sample(items, spec.sample, spec.seed, settings["sample_unit"])
        return [(it.id, None, {}) for it in items]

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

    def describe_answer(self, view: UnitView, answer: dict[str, Any]) -> str:
        return LABEL_WORDS.get(answer.get("label"), "?")

    def compose_item(self, view: UnitView, partial: dict[str, Any] | None, store) -> Any:
        from annotator.widgets.gold_candidate_view import GoldCandidateView

        p = view.item.payload  # only the fields below reach the screen: never candidate_label
        votes = view.unit.extra.get("votes") if view.settings.get("adjudication") else None
        return GoldCandidateView(recipient=p["recipient"], task=p["task"], attribute=p["attribute"],
                                 statement=p.get("statement"), user=p.get("profile_name"),
                                 chosen=(view.answer or {}).get("label"), votes=votes)

    # ---- outputs ----------------------------------------------------------------------------------------
    def check_key(self, item: Item) -> Any:
        """A candidate whose label is known (candidate_label) can check attention: 1 apply, 0 suppress."""
        cand = item.payload.get("candidate_label")
        return None if cand is None else int(bool(cand))

    def answer_key(self, answer: dict[str, Any]) -> Any:
        return answer.get("label")

    def adjudicated_verdict(self, answer: dict[str, Any]) -> ReleaseVerdict:
        """The adjudicator's label is the gold label."""
        label = answer.get("label")
        return ReleaseVerdict(label in (0, 1), "gold label (adjudicated)", {"gold_label": label})

    def export_fields(self, unit: Unit, item: Item, item_b: Item | None, answer: dict[str, Any]) -> dict[str, Any]:
        cand = item.payload.get("candidate_label")
        label = answer.get("label")
        return {"label_text": LABEL_WORDS.get(label), "recipient": item.payload.get("recipient"),
                "task": item.payload.get("task"), "attribute": item.payload.get("attribute"),
                "category": item.payload.get("category"),
                "candidate_label": None if cand is None else int(cand),
                "agrees_with_candidate": None if cand is None or label is None else int(cand) == label}

    def release_verdicts(self, data, store) -> dict[str, ReleaseVerdict]:
        """A candidate passes with its gold label: unanimous among its complete human answers, or resolved by the
        study's adjudication round (the latest study created with --from-study THIS --option adjudication=1),
        and not in a context dropped for low unanimity (BenchPreS A.2). The label is added as gold_label."""
        from annotator.tasks._gold_stats import combined_gold, gold_labels

        if data.study.settings.get("adjudication"):
            gold = gold_labels(data)
        else:
            gold = combined_gold(store, data.study.name)
        answers = human_answers(data)
        out = {}
        for u in data.units:
            label = gold.get(data.items[u.item_id].external_id)
            labels = {a.get("label") for a in answers[u.id]}
            if label is not None:
                how = "adjudicated" if data.study.settings.get("adjudication") or len(labels) > 1 else "unanimous"
                out[u.id] = ReleaseVerdict(True, f"gold label ({how})", {"gold_label": label})
            elif not answers[u.id]:
                out[u.id] = ReleaseVerdict(None, "not annotated", {})
            else:
                out[u.id] = ReleaseVerdict(False, "no gold label (incomplete, not unanimous and not adjudicated, "
                                                  "or its context was dropped)", {})
        return out

    def figures(self, data):
        from annotator.tasks._gold_stats import gold_figures

        return gold_figures(data)
