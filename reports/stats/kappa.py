"""Cohen's kappa for two raters, unweighted (Cohen 1960) and weighted (Cohen 1968)."""
from __future__ import annotations

import numpy as np

from ._common import TOL, cats_text
from ._prep import agreement_weights, prepare, weights_basis
from .bootstrap import finish
from .result import StatResult

__all__ = ["cohen_kappa", "kappa_from_tables"]


def kappa_from_tables(tables: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Kappa for each of B contingency tables (B x q x q counts) under agreement weights ``w``.

    p_o = sum_kl w_kl p_kl, p_e = sum_kl w_kl p_k. p_.l, kappa = (p_o - p_e) / (1 - p_e)
    (Cohen 1968, written with agreement weights w = 1 - disagreement weight). NaN where fewer than 2 items or p_e == 1.
    """
    t = np.asarray(tables, dtype=np.float64)
    n = t.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = t / n[:, None, None]
        rows, cols = p.sum(axis=2), p.sum(axis=1)
        po = (p * w).sum(axis=(1, 2))
        pe = np.einsum("bk,kl,bl->b", rows, w, cols)
        k = (po - pe) / (1 - pe)
    k[(n < 2) | (1 - pe < TOL)] = np.nan
    return k


def cohen_kappa(ratings, weights=None, categories=None, *, ci: bool = False,
                n_boot: int = 1000, seed: int = 0) -> StatResult:
    """Cohen's kappa between exactly two raters.

    ratings: items x 2 raters, None (or NaN, or "") for missing. Items missing either rating are
    dropped (the count is stated in ``note`` and ``extra``). ``weights``: None (Cohen 1960,
    "A coefficient of agreement for nominal scales"), "linear" or "quadratic" (Cohen 1968,
    "Weighted kappa", with agreement weights 1-|x_k-x_l|/(x_max-x_min) resp. its square, where x
    are the values of numeric labels (Gwet 2014, ch. 3; irrCAC) and the category positions for
    ordered text labels), or a q x q matrix of agreement weights in category order (Cohen 1968's
    worked example; result named ``cohen_kappa_weighted``). ``categories`` declares the ordered
    scale: it sets the order and the number q of categories, which changes weighted kappa when a
    declared category is unused (for text labels the same as scikit-learn's
    ``cohen_kappa_score(labels=...)``).

    Value None with the reason when: a rater column is empty (only one rater), fewer than 2 items
    are rated by both, or chance agreement is 1 (every rating in one and the same category).
    Raises ValueError when the table does not have exactly 2 rater columns, when weights are
    requested for undeclared text labels, or for ratings outside declared categories.
    ``ci=True``: 95% percentile bootstrap over the paired items.
    """
    metric = ("cohen_kappa" if weights is None else
              f"cohen_kappa_{weights}" if isinstance(weights, str) else "cohen_kappa_weighted")
    w_kind = weights
    prep = prepare(ratings, categories)
    if prep.n_items and prep.n_raters != 2:
        if prep.n_raters < 2:
            return StatResult(metric, None, None, None, 0, prep.n_raters,
                              "undefined: only one rater; Cohen's kappa needs two")
        raise ValueError(f"Cohen's kappa needs exactly 2 rater columns, got {prep.n_raters}; "
                         "use fleiss_kappa, krippendorff_alpha or gwet_ac1 for more raters")
    if isinstance(weights, str):
        prep.require_order(f"weighted kappa ({weights})")
    q = prep.q
    w = agreement_weights(q, w_kind, prep.values)
    codes = prep.codes if prep.n_items else np.zeros((0, 2), dtype=np.int64)
    a, b = codes[:, 0], codes[:, 1]
    both = (a >= 0) & (b >= 0)
    n = int(both.sum())
    dropped = prep.n_items - n
    extra = {"n_items_total": prep.n_items, "n_items_dropped_missing": dropped}
    raters = int((a >= 0).any()) + int((b >= 0).any())
    if raters < 2:
        return StatResult(metric, None, None, None, n, raters,
                          "undefined: only one rater gave ratings; Cohen's kappa needs two", extra=extra)
    if n < 2:
        why = "no item was rated by both raters (no overlap)" if n == 0 else \
            "fewer than 2 items were rated by both raters"
        return StatResult(metric, None, None, None, n, 2, f"undefined: {why}", extra=extra)
    cell = a[both] * q + b[both]
    table = np.bincount(cell, minlength=q * q).reshape(q, q)
    extra["table"] = table.tolist()
    extra["categories"] = list(prep.categories)
    value = float(kappa_from_tables(table[None], w)[0])
    if np.isnan(value):
        return StatResult(metric, None, None, None, n, 2,
                          "undefined: chance agreement is 1 (both raters put every item in the "
                          f"same single category {prep.categories[int(np.argmax(table.sum(1)))]!r}), "
                          "so kappa is 0/0", extra=extra)
    src = "Cohen 1960" if weights is None else f"Cohen 1968, {weights_basis(prep, weights)}"
    note = f"Cohen's kappa ({src}) over {cats_text(prep)}"
    if dropped:
        note += f"; {dropped} items missing a rating dropped"
    if q * q <= 400:
        feats = np.zeros((n, q * q))
        feats[np.arange(n), cell] = 1.0
    else:
        from scipy import sparse
        feats = sparse.csr_matrix((np.ones(n), (np.arange(n), cell)), shape=(n, q * q))
    return finish(metric, value, note, n_items=n, n_raters=2, ci=ci, n_boot=n_boot, seed=seed,
                  features=feats, stat_fn=lambda s: kappa_from_tables(s.reshape(-1, q, q), w),
                  extra=extra)
