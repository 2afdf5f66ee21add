"""Gwet's AC1 (nominal) and AC2 (weighted) agreement coefficients for any number of raters."""
from __future__ import annotations

import numpy as np

from ._chance import fleiss_features, split_sums
from ._common import MIN_ITEMS_CHANCE, TOL, cats_text, overlap_reason, raters_used
from ._prep import agreement_weights, prepare, weights_basis
from .bootstrap import finish
from .result import StatResult

__all__ = ["gwet_ac1", "gwet_ac2"]


def _ac_fn(w: np.ndarray):
    q = w.shape[0]
    tw = float(w.sum())

    def fn(s: np.ndarray) -> np.ndarray:
        pa, pi = split_sums(s)
        pe = tw / (q * (q - 1)) * (pi * (1 - pi)).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            v = (pa - pe) / (1 - pe)
        v[~(1 - pe >= TOL) | ~np.isfinite(pa)] = np.nan
        return v

    return fn


def _gwet(metric, ratings, kind, categories, ci, n_boot, seed) -> StatResult:
    prep = prepare(ratings, categories)
    if isinstance(kind, str):
        prep.require_order(f"Gwet's AC2 ({kind} weights)")
    q = prep.q
    w = agreement_weights(max(q, 1), kind, prep.values)
    feats, n2, n1 = fleiss_features(prep, w)
    nr = raters_used(prep.codes)
    extra = {"n_items_single_rating": n1}
    reason = overlap_reason(prep, n2, MIN_ITEMS_CHANCE)
    if reason:
        return StatResult(metric, None, None, None, n2, nr, reason, extra=extra)
    src = ("Gwet 2008 AC1" if kind is None else
           f"Gwet 2014 (Handbook, 4th ed., ch. 3) AC2 with {weights_basis(prep, kind)}")
    note = f"{src} over {cats_text(prep)}"
    if n1 or (prep.codes < 0).any():
        note += ("; missing ratings: p_a over items with >=2 ratings, category shares over items with "
                 ">=1 rating (Gwet 2014 / irrCAC)")
    if q < 2:
        # one category in use and none other declared: every pair agrees, p_e's formula has
        # q(q-1) = 0 in its denominator; irrCAC takes p_e -> 1 from below, giving exactly 1.
        extra.update(p_a=1.0, p_e=None)
        note += ("; only one category in use and no other declared: chance agreement is undefined "
                 "(q=1), the coefficient is taken as its limit 1 (irrCAC convention)")
        return finish(metric, 1.0, note, n_items=n2, n_raters=nr, ci=False, n_boot=0, seed=seed,
                      extra=extra)
    fn = _ac_fn(w)
    s = feats.sum(axis=0)[None]
    pa, pi = split_sums(s)
    extra.update(p_a=float(pa[0]),
                 p_e=float(w.sum() / (q * (q - 1)) * (pi * (1 - pi)).sum()))
    value = float(fn(s)[0])
    if np.isnan(value):
        return StatResult(metric, None, None, None, n2, nr,
                          "undefined: chance agreement is 1, coefficient is 0/0", extra=extra)
    return finish(metric, value, note, n_items=n2, n_raters=nr, ci=ci, n_boot=n_boot, seed=seed,
                  features=feats, stat_fn=fn, extra=extra)


def gwet_ac1(ratings, categories=None, *, ci: bool = False, n_boot: int = 1000,
             seed: int = 0) -> StatResult:
    """Gwet's AC1, the paradox-resistant nominal agreement coefficient.

    ratings: items x raters, None (or NaN, or "") for missing. Formula (Gwet 2008, Br. J. Math.
    Stat. Psychol. 61, 29-48; Gwet 2014, Handbook 4th ed., ch. 2, with missing ratings):
    p_a = mean over items with r_i >= 2 of sum_k r_ik (r_ik - 1) / (r_i (r_i - 1));
    pi_k = mean over items with r_i >= 1 of r_ik / r_i; p_e = sum_k pi_k (1 - pi_k) / (q - 1);
    AC1 = (p_a - p_e) / (1 - p_e). Matches irrCAC ``CAC(df).gwet()`` with identity weights.

    ``categories`` declares the scale: q counts declared unused categories, which lowers p_e.
    All ratings in one category: AC1 = 1 (p_e = 0 when q >= 2; the limit 1 when only that one
    category exists). No items / one rater / no overlap / fewer than 2 items rated twice (MIN_ITEMS_CHANCE) ->
    None with the reason. Raises ValueError
    for ratings outside declared categories. ``ci=True``: 95% percentile bootstrap over items.
    """
    return _gwet("gwet_ac1", ratings, None, categories, ci, n_boot, seed)


def gwet_ac2(ratings, weights="linear", categories=None, *, ci: bool = False,
             n_boot: int = 1000, seed: int = 0) -> StatResult:
    """Gwet's AC2, AC1 with agreement weights for ordered scales.

    ratings: items x raters, None (or NaN, or "") for missing. ``weights``: "linear" or
    "quadratic" (Gwet 2014, Handbook 4th ed., ch. 3): distances between the values of numeric
    labels (as irrCAC), between category positions for ordered text labels; or a q x q matrix of
    agreement weights in the order of ``categories`` (result named ``gwet_ac2_weighted``). With
    weights w_kl: p_a = mean over items with r_i >= 2 of sum_k r_ik (r*_ik - 1)/(r_i (r_i - 1)),
    r*_ik = sum_l w_kl r_il; p_e = T_w / (q (q - 1)) * sum_k pi_k (1 - pi_k), T_w = sum of all
    weights; AC2 = (p_a - p_e) / (1 - p_e), as irrCAC ``CAC(df, weights=...).gwet()``.

    ``categories`` (needed for text labels) fixes the order and q; an unused declared category
    changes both the weights and p_e. Edge cases as for ``gwet_ac1``. Raises ValueError for text
    labels without declared categories and for an unknown ``weights``.
    """
    if not isinstance(weights, str):
        return _gwet("gwet_ac2_weighted", ratings, weights, categories, ci, n_boot, seed)
    if weights not in ("linear", "quadratic"):
        raise ValueError(f"weights must be 'linear' or 'quadratic', got {weights!r}")
    return _gwet(f"gwet_ac2_{weights}", ratings, weights, categories, ci, n_boot, seed)
