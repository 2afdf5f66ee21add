"""Shared pieces of the MCQ-family figures (mcq, easy_test, blind_test): the answers grouped per item, answer
categories, and shares / pooled ratios with a seeded percentile bootstrap over ITEMS (answers of one item are
resampled together, since several annotators answer the same item).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from reports.stats import StatResult
from reports.stats.bootstrap import finish
from reports.study_data import StudyData
from storage.models import Item
from storage.payloads import letter

if TYPE_CHECKING:
    from reports.figures import Figure

N_BOOT = 1000
CANT_TELL_LABEL = "can't tell"
#: the one rule of every MCQ and easy-test accuracy (figures and per-annotator tables): a can't tell answer is an
#: answer, counted in the denominator, and not correct; written into every such label
CANT_TELL_RULE = "can't tell counts as wrong"


def accuracy_figure(key: str, label: str, stat: StatResult) -> "Figure":
    """A pooled accuracy (pooled_ratio over accuracy_pairs) as a Figure under CANT_TELL_RULE: the label ends
    with the rule ("accuracy (all answers; can't tell counts as wrong)"), n counts answers (n_of "answers", the
    denominator, can't tell answers included, as in the per-annotator table's "answered") and the note says over
    how many items (the interval resamples items)."""
    from reports.figures import Figure

    label = f"{label[:-1]}; {CANT_TELL_RULE})" if label.endswith(")") else f"{label} ({CANT_TELL_RULE})"
    if stat.value is None:
        return Figure.from_stat(key, label, stat)
    answers = int(stat.extra.get("denominator", 0))
    return Figure.from_stat(key, label, stat, n=answers, n_of="answers",
                            note=f"{answers} answers over {stat.n_items} items; {stat.note}")


def answer_label(answer: dict[str, Any]) -> str | None:
    """The category an answer counts as in agreement statistics: the ORIGINAL letter, or "can't tell"
    (HorizonBench's agreement script counts an empty answer as its own "discard" category). None for no answer."""
    if answer.get("cant_tell"):
        return CANT_TELL_LABEL
    choice = answer.get("choice")
    return None if choice is None else letter(choice)


@dataclass
class ItemAnswers:
    """One unit's item and its current answers. answers: annotator name -> answer dict (may be empty)."""

    unit_id: str
    item: Item
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def payload(self) -> dict[str, Any]:
        return self.item.payload

    @cached_property  # read for every answer by several figures: once per item
    def key(self) -> int | None:
        """The original index of the correct option, None when the item has no key."""
        return self.item.payload.get("correct_index")

    @cached_property
    def n_options(self) -> int:
        return len(self.item.payload["options"])

    @property
    def fmt(self) -> str:
        """"tf" for True/False items, else "mcq"."""
        return self.item.payload.get("fmt", "mcq")

    @property
    def metadata(self) -> dict[str, Any]:
        return self.item.payload.get("metadata") or {}

    def correct_flags(self) -> list[bool]:
        """One bool per answer (can't tell counts as not correct); [] when the item has no key."""
        if self.key is None:
            return []
        return [a.get("choice") == self.key for a in self.answers.values()]

    def chosen(self) -> list[dict[str, Any]]:
        """The answers that picked an option (can't tell left out)."""
        return [a for a in self.answers.values() if not a.get("cant_tell") and a.get("choice") is not None]


def collect(data: StudyData) -> list[ItemAnswers]:
    """Every unit of the study with its current answers, in unit order."""
    by_unit = data.by_unit()
    return [ItemAnswers(u.id, data.items[u.item_id], {n: a for n, a in by_unit.get(u.id, {}).items() if a})
            for u in data.units]


def _ratio(s: np.ndarray, num: int = 1, den: int = 0) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = s[:, num] / s[:, den]
    out[~np.isfinite(out)] = np.nan
    return out


def pooled_ratio(metric: str, pairs: list[tuple[float, float]], what: str, seed: int,
                 n_boot: int = N_BOOT, extra: dict | None = None) -> StatResult:
    """sum(num) / sum(den) over items, with a 95% percentile bootstrap over items (Efron & Tibshirani 1993).

    pairs: one (num, den) per item, e.g. (correct answers, answers). Items with den 0 are dropped. No item
    left -> value None with the reason. what: the definition, written into the note.
    """
    rows = [(float(a), float(b)) for a, b in pairs if b > 0]
    f = np.array([[b, a] for a, b in rows]) if rows else np.zeros((0, 2))
    return pooled_ratio_features(metric, f, what, seed, n_boot, extra)


def pooled_ratio_features(metric: str, f: np.ndarray, what: str, seed: int, n_boot: int = N_BOOT,
                          extra: dict | None = None) -> StatResult:
    """pooled_ratio from its features: f is items x 2 float64, [den, num] per item, every den > 0."""
    if not len(f):
        return StatResult(metric, None, None, None, 0, 0, f"no item yet to compute it ({what})", extra=dict(extra or {}))
    tot = f.sum(axis=0)
    ex = {"numerator": float(tot[1]), "denominator": float(tot[0]), **(extra or {})}
    return finish(metric, float(tot[1] / tot[0]), what, n_items=len(f), n_raters=0, ci=True, n_boot=n_boot,
                  seed=seed, features=f, stat_fn=_ratio, extra=ex)


def share(metric: str, flags: list[bool], what: str, seed: int, n_boot: int = N_BOOT,
          extra: dict | None = None) -> StatResult:
    """The share of True among per-item flags, with a 95% percentile bootstrap over items."""
    return pooled_ratio(metric, [(float(bool(x)), 1.0) for x in flags], what, seed, n_boot, extra)


def features_stat(metric: str, features: list[list[float]], fn: Callable[[np.ndarray], np.ndarray], what: str,
                  seed: int, n_boot: int = N_BOOT, extra: dict | None = None) -> StatResult:
    """A statistic fn(column sums) of per-item feature rows, with a 95% percentile bootstrap over items.

    fn takes replicates x features sums and returns one value per replicate (NaN when undefined).
    """
    if not len(features):
        return StatResult(metric, None, None, None, 0, 0, f"no item yet to compute it ({what})", extra=dict(extra or {}))
    f = np.array(features, dtype=np.float64)
    value = float(fn(f.sum(axis=0)[None])[0])
    if not np.isfinite(value):
        return StatResult(metric, None, None, None, len(f), 0, f"{what} is 0/0", extra=dict(extra or {}))
    return finish(metric, value, what, n_items=len(f), n_raters=0, ci=True, n_boot=n_boot, seed=seed,
                  features=f, stat_fn=fn, extra=dict(extra or {}))


def accuracy_pairs(items: list[ItemAnswers]) -> list[tuple[float, float]]:
    """(correct answers, answers) per keyed item: the input of pooled accuracy."""
    out = []
    for it in items:
        flags = it.correct_flags()
        if flags:
            out.append((float(sum(flags)), float(len(flags))))
    return out
