"""Label aggregation and simple rates: majority votes, at-least-one-correct, accuracy against
chance, win/loss/tie shares, and BenchPreS's misapplication / appropriate-application rates."""
from __future__ import annotations

from collections import Counter

import numpy as np

from ._common import safe_ratio
from ._prep import is_missing
from .bootstrap import finish
from .result import StatResult

__all__ = ["majority_vote", "majority_vote_first_non_discard", "TIE_RULES", "strict_majority",
           "at_least_one_correct", "accuracy_vs_chance",
           "win_loss_tie", "misapplication_rate", "appropriate_application_rate", "aar_minus_mr"]


def _present(labels):
    return [x for x in labels if not is_missing(x)]


def majority_vote(labels):
    """Plurality label of one item's ratings, or None.

    labels: the ratings of one item (a sequence), None/NaN/"" for missing (ignored). Returns the
    most frequent label; a tie for first place, or no rating at all, gives None.
    """
    best = _tied_top(labels)
    if best is None:
        return None
    return best[0] if len(best) == 1 else None


def _tied_top(labels) -> list | None:
    """The labels tied for the most ratings among one item's ratings (missing ones ignored), in the order they
    first occur; None when there is no rating."""
    counts: dict = {}
    for x in labels:
        if not is_missing(x):
            counts[x] = counts.get(x, 0) + 1
    if not counts:
        return None
    top = max(counts.values())
    return [x for x, k in counts.items() if k == top]


def majority_vote_first_non_discard(labels, discard=None):
    """Plurality label of one item's ratings, a tie for first place going to the first rating, in the order given,
    that is among the tied labels and is not ``discard``; None for no rating.

    HorizonBench's agreement script (stellalisy/HorizonBench, scripts/compute_annotator_agreement.py,
    compute_majority_vote; the human annotation of section 5.3): ratings in annotator order (annotator_1,
    annotator_2, annotator_3), an empty answer read as the category "DISCARD"; a tie is settled by the first tied
    option that is not DISCARD (``Counter`` keeps the order in which labels first occur), so with three annotators
    and three different answers it is the first annotator's answer unless that is a discard. Only when every tied
    label is ``discard`` (impossible for a tie of two or more distinct labels) is the result ``discard``.
    labels: one item's ratings in annotator order, None/NaN/"" for missing (ignored).
    """
    best = _tied_top(labels)
    if best is None:
        return None
    if len(best) == 1:
        return best[0]
    kept = [x for x in best if x != discard]
    return kept[0] if kept else discard


#: how a majority vote settles a tie for first place, by name: "no-label" (prefval's default: the item gets no
#: label, majority_vote) and "first-annotator" (HorizonBench's agreement script:
#: majority_vote_first_non_discard)
TIE_RULES = ("no-label", "first-annotator")


def strict_majority(labels):
    """The label given by more than half of an item's (non-missing) ratings, or None.

    labels: the ratings of one item, None/NaN/"" for missing (ignored, so 2 of 3 present ratings
    is a majority). No label above one half, or no rating, gives None.
    """
    present = _present(labels)
    if not present:
        return None
    lab, k = Counter(present).most_common(1)[0]
    return lab if 2 * k > len(present) else None


def _bool(x, where: str) -> bool:
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer, float, np.floating)) and x in (0, 1):
        return bool(x)
    raise ValueError(f"{where}: expected True/False (or 1/0), got {x!r}")


def at_least_one_correct(correct, *, ci: bool = False, n_boot: int = 1000, seed: int = 0) -> StatResult:
    """Share of items on which at least one rater answered correctly (HorizonBench, section 5.3).

    correct: items x raters of True/False (1/0), None/NaN for missing (or a 2-D float numpy array of 1.0/0.0 and
    NaN, read without a Python object per cell). Items without any rating are ignored. No rated item -> None with the reason. Raises ValueError for non-boolean cells.
    ``ci=True``: 95% percentile bootstrap over items.
    """
    if isinstance(correct, np.ndarray) and correct.ndim == 2 and correct.dtype.kind == "f":
        return _at_least_one_correct_array(correct, ci, n_boot, seed)
    hits, n_r = [], 0
    for i, row in enumerate(correct):
        row = list(row)
        n_r = max(n_r, len(row))
        vals = [_bool(x, f"item {i}") for x in row if not is_missing(x)]
        if vals:
            hits.append(float(any(vals)))
    n = len(hits)
    if n == 0:
        return StatResult("at_least_one_correct", None, None, None, 0, n_r, "undefined: no rated item")
    h = np.array(hits)
    return finish("at_least_one_correct", float(h.mean()),
                  "share of rated items with at least one correct rating", n_items=n, n_raters=n_r,
                  ci=ci, n_boot=n_boot, seed=seed, features=np.column_stack([np.ones(n), h]),
                  stat_fn=lambda s: safe_ratio(s[:, 1], s[:, 0]), extra={"n_any_correct": int(h.sum())})


def _at_least_one_correct_array(correct: np.ndarray, ci: bool, n_boot: int, seed: int) -> StatResult:
    """at_least_one_correct of an items x raters float array: 1.0 / 0.0, NaN for missing (the same result as the
    rows as lists, without a Python object per cell)."""
    present = ~np.isnan(correct)
    bad = present & (correct != 0) & (correct != 1)
    if bad.any():
        i = int(np.flatnonzero(bad.any(axis=1))[0])
        raise ValueError(f"item {i}: expected True/False (or 1/0), got {correct[i][bad[i]][0]!r}")
    rated = present.any(axis=1)
    h = ((correct == 1) & present).any(axis=1)[rated].astype(np.float64)
    n, n_r = len(h), correct.shape[1] if len(correct) else 0
    if n == 0:
        return StatResult("at_least_one_correct", None, None, None, 0, n_r, "undefined: no rated item")
    return finish("at_least_one_correct", float(h.mean()),
                  "share of rated items with at least one correct rating", n_items=n, n_raters=n_r,
                  ci=ci, n_boot=n_boot, seed=seed, features=np.column_stack([np.ones(n), h]),
                  stat_fn=lambda s: safe_ratio(s[:, 1], s[:, 0]), extra={"n_any_correct": int(h.sum())})


def accuracy_vs_chance(correct, chance: float, *, ci: bool = False, n_boot: int = 1000,
                       seed: int = 0, alternative: str = "two-sided", unit: str = "items") -> StatResult:
    """Accuracy with an exact binomial test against a chance rate (e.g. 0.25 for 4 options).

    correct: a sequence of True/False (1/0), None for missing (dropped). value = accuracy;
    p_value = two-sided ``scipy.stats.binomtest(k, n, chance)``; ``extra`` holds "chance",
    "n_correct" and "p_value_greater" (one-sided, accuracy above chance). Used for RealPref's
    blind test (appendix G.2). No answered item -> None. Raises ValueError when chance is not in
    (0, 1) or a value is not boolean. ``ci=True``: 95% percentile bootstrap over items.
    alternative: "two-sided" (default) or "greater" (accuracy above chance): the one test whose p is
    ``p_value`` and which the note names; unit: what one entry of ``correct`` is, for the note ("items",
    "answers").
    """
    from scipy.stats import binomtest

    if not 0 < chance < 1:
        raise ValueError(f"chance must be strictly between 0 and 1, got {chance!r}")
    vals = np.array([_bool(x, f"item {i}") for i, x in enumerate(correct) if not is_missing(x)],
                    dtype=np.float64)
    n = len(vals)
    if n == 0:
        return StatResult("accuracy_vs_chance", None, None, None, 0, 1, "undefined: no answered item",
                          extra={"chance": chance, "n_correct": 0})
    k = int(vals.sum())
    extra = {"chance": chance, "n_correct": k,
             "p_value_greater": float(binomtest(k, n, chance, alternative="greater").pvalue)}
    if alternative not in ("two-sided", "greater"):
        raise ValueError(f"alternative must be 'two-sided' or 'greater', got {alternative!r}")
    side = "two-sided p" if alternative == "two-sided" else "one-sided p, above chance"
    return finish("accuracy_vs_chance", k / n,
                  f"accuracy over {n} {unit}; exact binomial test against chance {chance} ({side})",
                  n_items=n, n_raters=1, ci=ci, n_boot=n_boot, seed=seed,
                  features=np.column_stack([np.ones(n), vals]),
                  stat_fn=lambda s: safe_ratio(s[:, 1], s[:, 0]), extra=extra,
                  p_value=float(binomtest(k, n, chance, alternative=alternative).pvalue))


def win_loss_tie(outcomes, *, ci: bool = True, n_boot: int = 1000, seed: int = 0) -> dict[str, StatResult]:
    """Shares of "win", "loss" and "tie" among pairwise comparisons (RealPref, appendix G.1).

    outcomes: a sequence of "win" | "loss" | "tie" (case-insensitive), None for missing (dropped).
    Returns {"win": ..., "loss": ..., "tie": ...} StatResults, each with a 95% percentile bootstrap
    interval over comparisons (the same resamples for all three) unless ``ci=False``.
    No outcome -> three None results. Raises ValueError naming any other value.
    """
    names = ("win", "loss", "tie")
    idx = []
    for i, o in enumerate(outcomes):
        if is_missing(o):
            continue
        key = str(o).strip().lower()
        if key not in names:
            raise ValueError(f"outcome {i}: {o!r} is not one of 'win', 'loss', 'tie'")
        idx.append(names.index(key))
    n = len(idx)
    if n == 0:
        return {k: StatResult(k, None, None, None, 0, 1, "undefined: no outcome") for k in names}
    onehot = np.zeros((n, 3))
    onehot[np.arange(n), idx] = 1
    feats = np.column_stack([np.ones(n), onehot])
    out = {}
    for j, k in enumerate(names):
        out[k] = finish(k, float(onehot[:, j].mean()), f"share of '{k}' among {n} comparisons",
                        n_items=n, n_raters=1, ci=ci, n_boot=n_boot, seed=seed, features=feats,
                        stat_fn=lambda s, j=j: safe_ratio(s[:, 1 + j], s[:, 0]),
                        extra={"count": int(onehot[:, j].sum())})
    return out


def _zg(judge, gold):
    judge, gold = list(judge), list(gold)
    if len(judge) != len(gold):
        raise ValueError(f"judge and gold must have the same length, got {len(judge)} and {len(gold)}")
    z, g = [], []
    for i, (a, b) in enumerate(zip(judge, gold)):
        if is_missing(a) or is_missing(b):
            continue
        z.append(_bool(a, f"judge item {i}"))
        g.append(_bool(b, f"gold item {i}"))
    z, g = np.array(z, dtype=np.float64), np.array(g, dtype=np.float64)
    # features: [g=0, z=1 & g=0, g=1, z=1 & g=1]
    return np.column_stack([1 - g, z * (1 - g), g, z * g]) if len(z) else np.zeros((0, 4))


def _mr(s):
    return safe_ratio(s[:, 1], s[:, 0])


def _aar(s):
    return safe_ratio(s[:, 3], s[:, 2])



def _rate(metric, judge, gold, fn, need, ci, n_boot, seed):
    f = _zg(judge, gold)
    tot = f.sum(axis=0)
    extra = {"n_gold_0": int(tot[0]), "n_gold_1": int(tot[2]), "n_applied_gold_0": int(tot[1]),
             "n_applied_gold_1": int(tot[3])}
    missing = [lab for lab, col in (("g=0", 0), ("g=1", 2)) if col in need and tot[col] == 0]
    if missing:
        return StatResult(metric, None, None, None, len(f), 1,
                          f"undefined: no item with gold label {' or '.join(missing)}", extra=extra)
    value = float(fn(tot[None])[0])
    return finish(metric, value, {"misapplication_rate": "MR = P(z=1 | g=0)",
                                  "appropriate_application_rate": "AAR = P(z=1 | g=1)",
                                  "aar_minus_mr": "AAR - MR"}[metric],
                  n_items=len(f), n_raters=1, ci=ci, n_boot=n_boot, seed=seed, features=f,
                  stat_fn=fn, extra=extra)


def misapplication_rate(judge, gold, *, ci: bool = False, n_boot: int = 1000, seed: int = 0) -> StatResult:
    """Misapplication rate MR = P(z=1 | g=0) = #(z=1, g=0) / #(g=0) (BenchPreS, section 3.3).

    judge: the judge's decisions z (True/1 = the preference was applied); gold: the gold labels g
    (True/1 = it should be applied); equal-length sequences, pairs with a missing value dropped.
    Undefined (None with the reason) when no item has g=0. Raises ValueError for unequal lengths or
    non-boolean values. ``ci=True``: 95% percentile bootstrap over items.
    """
    return _rate("misapplication_rate", judge, gold, _mr, (0,), ci, n_boot, seed)


def appropriate_application_rate(judge, gold, *, ci: bool = False, n_boot: int = 1000,
                                 seed: int = 0) -> StatResult:
    """Appropriate application rate AAR = P(z=1 | g=1) = #(z=1, g=1) / #(g=1) (BenchPreS, section 3.3).

    judge: the judge's decisions z (True/1 = the preference was applied); gold: the gold labels g
    (True/1 = it should be applied); equal-length sequences, pairs with a missing value dropped.
    Undefined (None with the reason) when no item has g=1. Raises ValueError for unequal lengths or
    non-boolean values. ``ci=True``: 95% percentile bootstrap over items.
    """
    return _rate("appropriate_application_rate", judge, gold, _aar, (2,), ci, n_boot, seed)


def aar_minus_mr(judge, gold, *, ci: bool = False, n_boot: int = 1000, seed: int = 0) -> StatResult:
    """AAR - MR, both rates taken from the same (re)sample (BenchPreS, section 3.3).

    judge: the judge's decisions z (True/1 = the preference was applied); gold: the gold labels g
    (True/1 = it should be applied); equal-length sequences, pairs with a missing value dropped.
    Undefined (None with the reason) when no item has g=0 or none has g=1. Raises ValueError
    for unequal lengths or non-boolean values. ``ci=True``: 95% percentile bootstrap over items.
    """
    return _rate("aar_minus_mr", judge, gold, lambda s: _aar(s) - _mr(s), (0, 2), ci, n_boot, seed)
