"""Fleiss' kappa for many raters, allowing a different number of ratings per item."""
from __future__ import annotations

import numpy as np

from ._chance import fleiss_features, split_sums
from ._common import MIN_ITEMS_CHANCE, TOL, cats_text, overlap_reason, raters_used
from ._prep import prepare
from .bootstrap import finish
from .result import StatResult

__all__ = ["fleiss_kappa"]


def _kappa(s: np.ndarray) -> np.ndarray:
    pa, pi = split_sums(s)
    pe = (pi**2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = (pa - pe) / (1 - pe)
    k[~(1 - pe >= TOL) | ~np.isfinite(pa)] = np.nan
    return k


def fleiss_kappa(ratings, categories=None, *, ci: bool = False, n_boot: int = 1000,
                 seed: int = 0) -> StatResult:
    """Fleiss' kappa (Fleiss 1971, "Measuring nominal scale agreement among many raters",
    Psychol. Bull. 76(5), 378-382).

    ratings: items x raters, None (or NaN, or "") for missing; raters need not be the same people
    across items, and items may have different numbers of ratings n_i.

    With missing ratings the generalisation of Gwet (2014, Handbook of Inter-Rater Reliability,
    4th ed., ch. 2) is used, as implemented by irrCAC's ``CAC.fleiss``:
    p_a = mean over items with n_i >= 2 of sum_k n_ik (n_ik - 1) / (n_i (n_i - 1)),
    p_k = mean over items with n_i >= 1 of n_ik / n_i, p_e = sum_k p_k^2,
    kappa = (p_a - p_e) / (1 - p_e). Items rated once contribute to p_k only (irrCAC convention);
    with complete data this is exactly Fleiss 1971. Declared unused categories add nothing here.

    Value None with the reason for: no items, one rater, fewer than 2 items with 2 ratings (MIN_ITEMS_CHANCE:
    with one item p_e comes from that item alone, e.g. ratings a/b give -1), or p_e = 1
    (all ratings in one category). Raises ValueError for ratings outside declared categories or
    ragged rows. ``ci=True``: 95% percentile bootstrap over items.
    """
    prep = prepare(ratings, categories)
    feats, n2, n1 = fleiss_features(prep, None)
    nr = raters_used(prep.codes)
    extra = {"n_items_single_rating": n1}
    reason = overlap_reason(prep, n2, MIN_ITEMS_CHANCE)
    if reason:
        return StatResult("fleiss_kappa", None, None, None, n2, nr, reason, extra=extra)
    s = feats.sum(axis=0)[None]
    pa, pi = split_sums(s)
    extra.update(p_a=float(pa[0]), p_e=float((pi**2).sum()))
    value = float(_kappa(s)[0])
    if np.isnan(value):
        only = prep.categories[int(np.argmax(pi[0]))]
        return StatResult("fleiss_kappa", None, None, None, n2, nr,
                          f"undefined: every rating is {only!r}, so chance agreement is 1 and "
                          "kappa is 0/0", extra=extra)
    note = f"Fleiss 1971 kappa over {cats_text(prep)}"
    if n1 or (prep.codes < 0).any():
        note += ("; missing ratings: p_a over items with >=2 ratings, category shares averaged over "
                 f"items with >=1 rating (Gwet 2014 / irrCAC); {n1} items with one rating")
    return finish("fleiss_kappa", value, note, n_items=n2, n_raters=nr, ci=ci, n_boot=n_boot,
                  seed=seed, features=feats, stat_fn=_kappa, extra=extra)
