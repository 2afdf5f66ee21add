"""Percent agreement and unanimity rate over items rated by two or more raters."""
from __future__ import annotations

import numpy as np

from ._common import overlap_reason, raters_used, safe_ratio
from ._prep import pair_agreement, prepare
from .bootstrap import finish
from .result import StatResult

__all__ = ["percent_agreement", "unanimity_rate"]


def percent_agreement(ratings, *, ci: bool = False, n_boot: int = 1000, seed: int = 0) -> StatResult:
    """Mean pairwise percent agreement.

    ratings: items x raters, None (or NaN, or "") for missing; labels of any hashable kind,
    compared for equality only.

    Definition: for every item with n_i >= 2 ratings, the share of agreeing pairs among its
    n_i (n_i - 1) / 2 rater pairs; the value is the mean of these shares over such items
    (the observed agreement p_a of Fleiss 1971, eq. 2-3, and of Gwet 2014, ch. 2, allowing
    missing ratings). With exactly two raters it is the share of items rated by both on which
    they agree.

    Edge cases: no items, one rater, or no item with two ratings -> value None and the reason in
    ``note``. Items with fewer than two ratings are ignored (and counted in ``extra``).
    ``ci=True`` adds a 95% percentile bootstrap interval over items (``n_boot`` resamples,
    numpy ``default_rng(seed)``). Raises ValueError only for malformed input (ragged rows).
    """
    prep = prepare(ratings)
    share, n_i = pair_agreement(prep.counts)
    has2 = n_i >= 2
    n2 = int(has2.sum())
    reason = overlap_reason(prep, n2)
    extra = {"n_items_total": prep.n_items, "n_items_fewer_than_2": prep.n_items - n2}
    if reason:
        return StatResult("percent_agreement", None, None, None, n2, raters_used(prep.codes), reason, extra=extra)
    feats = np.column_stack([np.ones(n2), share[has2]])
    value = float(share[has2].mean())
    note = ("mean over items with >=2 ratings of the share of agreeing rater pairs among all pairs "
            "of the item's ratings (pairwise); with 2 raters = share of items where both agree")
    if prep.n_items - n2:
        note += f"; {prep.n_items - n2} items with fewer than 2 ratings ignored"
    return finish("percent_agreement", value, note, n_items=n2, n_raters=raters_used(prep.codes),
                  ci=ci, n_boot=n_boot, seed=seed, features=feats,
                  stat_fn=lambda s: safe_ratio(s[:, 1], s[:, 0]), extra=extra)


def unanimity_rate(ratings, *, ci: bool = False, n_boot: int = 1000, seed: int = 0) -> StatResult:
    """Share of items, among those with >= 2 ratings, on which all ratings are identical.

    ratings: items x raters, None (or NaN, or "") for missing. Used e.g. by BenchPreS (appendix
    A.2) to keep only unanimously labelled items. Items with fewer than two ratings are ignored;
    no items / one rater / no overlap -> value None with the reason. ``ci`` as in
    ``percent_agreement``.
    """
    prep = prepare(ratings)
    counts = prep.counts
    n_i = counts.sum(axis=1)
    has2 = n_i >= 2
    n2 = int(has2.sum())
    reason = overlap_reason(prep, n2)
    extra = {"n_items_total": prep.n_items, "n_items_fewer_than_2": prep.n_items - n2}
    if reason:
        return StatResult("unanimity_rate", None, None, None, n2, raters_used(prep.codes), reason, extra=extra)
    unan = (counts[has2].max(axis=1) == n_i[has2]).astype(np.float64)
    extra["n_unanimous"] = int(unan.sum())
    note = "share of items with >=2 ratings whose ratings are all the same"
    if prep.n_items - n2:
        note += f"; {prep.n_items - n2} items with fewer than 2 ratings ignored"
    return finish("unanimity_rate", float(unan.mean()), note, n_items=n2,
                  n_raters=raters_used(prep.codes), ci=ci, n_boot=n_boot, seed=seed,
                  features=np.column_stack([np.ones(n2), unan]),
                  stat_fn=lambda s: safe_ratio(s[:, 1], s[:, 0]), extra=extra)
