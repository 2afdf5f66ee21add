"""Krippendorff's alpha for nominal, ordinal, interval and ratio data, with missing ratings."""
from __future__ import annotations

import warnings

import numpy as np

from ._common import MIN_ITEMS_CHANCE, cats_text, overlap_reason, raters_used
from ._prep import Prepared, prepare
from .bootstrap import finish
from .result import StatResult

__all__ = ["krippendorff_alpha", "coincidence_features", "coincidence_total", "alpha_from_coincidences", "LEVELS"]

LEVELS = ("nominal", "ordinal", "interval", "ratio")
_DENSE_LIMIT = 20_000_000  # items x q^2 cells above which the per-unit features go sparse


def coincidence_features(prep: Prepared):
    """Per-unit coincidence contributions, units x q^2 (Krippendorff 2011, section C).

    Unit u with m_u >= 2 values adds n_uc (n_uk - [c == k]) / (m_u - 1) to cell (c, k); units with
    one value are unpairable and add nothing. Returns (features, mask of pairable units) with only
    pairable units as rows; dense when small, scipy.sparse CSR otherwise.
    """
    counts = prep.counts
    m = counts.sum(axis=1)
    keep = m >= 2
    q = max(prep.q, 1)
    c, mk = counts[keep], m[keep]
    n = len(mk)
    if n * q * q <= _DENSE_LIMIT:
        o = c[:, :, None] * c[:, None, :]
        o[:, np.arange(q), np.arange(q)] -= c
        return (o / (mk - 1)[:, None, None]).reshape(n, q * q), keep
    from scipy import sparse
    codes = prep.codes[keep]
    rows, cols, vals = [], [], []
    inv = 1.0 / (mk - 1)
    r = codes.shape[1]
    for a in range(r):
        for b in range(r):
            if a == b:
                continue
            ok = (codes[:, a] >= 0) & (codes[:, b] >= 0)
            idx = np.flatnonzero(ok)
            rows.append(idx)
            cols.append(codes[idx, a] * q + codes[idx, b])
            vals.append(inv[idx])
    f = sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                          shape=(n, q * q))
    return f, keep


def coincidence_total(prep: Prepared) -> tuple[np.ndarray, np.ndarray]:
    """The summed coincidence matrix (1 x q^2) and the mask of pairable units, without per-unit rows.

    o_ck = sum_u n_uc (n_uk - [c == k]) / (m_u - 1) over units with m_u >= 2 (Krippendorff 2011,
    section C): one q x q matrix product over the units x categories counts.
    """
    counts = prep.counts
    m = counts.sum(axis=1)
    keep = m >= 2
    c = counts[keep]
    cw = c / (m[keep] - 1)[:, None]
    o = cw.T @ c
    o[np.diag_indices_from(o)] -= cw.sum(axis=0)
    return o.reshape(1, -1), keep


def _delta(level: str, values: np.ndarray | None, n_v: np.ndarray) -> np.ndarray:
    """Squared distances delta^2_ck (Krippendorff 2011, the difference functions); B x q x q."""
    b, q = n_v.shape
    if level == "nominal":
        return np.broadcast_to(1.0 - np.eye(q), (b, q, q))
    if level == "ordinal":
        mid = np.cumsum(n_v, axis=1) - n_v / 2  # sum_{g<=c} n_g - n_c/2
        return (mid[:, :, None] - mid[:, None, :]) ** 2
    v = values
    if level == "interval":
        d = (v[:, None] - v[None, :]) ** 2
    else:  # ratio
        s = v[:, None] + v[None, :]
        d = np.divide((v[:, None] - v[None, :]) ** 2, s**2, out=np.zeros((q, q)), where=s != 0)
    return np.broadcast_to(d, (b, q, q))


def alpha_from_coincidences(sums: np.ndarray, q: int, level: str,
                            values: np.ndarray | None = None) -> np.ndarray:
    """Alpha for each of B flattened coincidence matrices (B x q^2).

    alpha = 1 - (n.. - 1) * sum_ck o_ck delta_ck / sum_ck n_c n_k delta_ck (Krippendorff 2011,
    "Computing Krippendorff's Alpha-Reliability", section C, with e_ck = n_c (n_k - [c=k])/(n..-1)).
    NaN when fewer than 2 pairable values or no expected disagreement (one value only).
    """
    o = np.asarray(sums, dtype=np.float64).reshape(-1, q, q)
    n_v = o.sum(axis=2)
    n = n_v.sum(axis=1)
    d = _delta(level, values, n_v)
    do = (o * d).sum(axis=(1, 2))
    de = np.einsum("bc,bck,bk->b", n_v, d, n_v)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = 1 - (n - 1) * do / de
    scale = n**2 * d.max(axis=(1, 2))
    a[(n < 2) | (scale <= 0) | (de <= 1e-12 * scale)] = np.nan
    return a


def _domain(prep: Prepared, level: str) -> np.ndarray | None:
    if level == "nominal":
        return np.arange(1, prep.q + 1, dtype=np.float64)
    if level == "ordinal":
        prep.require_order("ordinal-level alpha")
        return np.arange(1, prep.q + 1, dtype=np.float64)
    if prep.values is not None:
        return prep.values
    if level == "ratio":
        raise ValueError("ratio-level alpha needs numeric ratings (the zero point matters); "
                         "the ratings are text labels")
    prep.require_order("interval-level alpha")
    return np.arange(1, prep.q + 1, dtype=np.float64)  # declared order, equal spacing


def krippendorff_alpha(ratings, level: str = "nominal", categories=None, *, ci: bool = False,
                       n_boot: int = 1000, seed: int = 0, engine: str = "own") -> StatResult:
    """Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability").

    ratings: items (units) x raters (coders), None (or NaN, or "") for missing. ``level``:
    "nominal", "ordinal", "interval" or "ratio". Text labels are mapped to integer codes through
    the declared ``categories`` order (required for ordinal/interval on text; ratio needs numbers);
    interval/ratio distances use the numeric values of numeric labels.

    Computation: ``engine="own"`` (default) builds the coincidence matrix once from the units x
    values count table (section C of the paper); per-unit contributions are built only for the
    bootstrap. ``engine="krippendorff"`` calls the ``krippendorff`` package
    (``krippendorff.alpha(value_counts=..., value_domain=..., level_of_measurement=...)``) instead;
    the tests check that both agree. Units with a single value are unpairable and ignored.

    Value None with the reason for: no items, one coder, fewer than 2 units with two values
    (MIN_ITEMS_CHANCE), or only one
    value in use (expected disagreement 0, alpha is 0/0). Raises ValueError for an unknown level,
    ordered levels on undeclared text, ratio on text, or ratings outside declared categories.
    ``ci=True``: 95% percentile bootstrap over units, coincidence contributions summed with
    resample weights.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    if engine not in ("krippendorff", "own"):
        raise ValueError(f"engine must be 'krippendorff' or 'own', got {engine!r}")
    prep = prepare(ratings, categories)
    domain = _domain(prep, level) if prep.q else None
    if ci:
        feats, keep = coincidence_features(prep)
        total = np.asarray(feats.sum(axis=0)).reshape(1, -1)
    else:
        feats = None
        total, keep = coincidence_total(prep)
    n_units = int(keep.sum())
    nr = raters_used(prep.codes)
    reason = overlap_reason(prep, n_units, MIN_ITEMS_CHANCE)
    extra = {"n_units_unpairable": int(prep.n_items - n_units), "level": level}
    if reason:
        return StatResult("krippendorff_alpha", None, None, None, n_units, nr, reason, extra=extra)
    q = prep.q
    n_pairable = float(total.sum())
    extra["n_pairable_values"] = n_pairable
    n_used = int((total.reshape(q, q).sum(axis=1) > 0).sum())
    if n_used < 2:
        only = prep.categories[int(np.argmax(total.reshape(q, q).sum(axis=1)))]
        return StatResult("krippendorff_alpha", None, None, None, n_units, nr,
                          f"undefined: every pairable value is {only!r}; with one value there is no "
                          "expected disagreement and alpha is 0/0", extra=extra)
    value = None
    used = engine
    if engine == "krippendorff":
        try:
            import krippendorff
        except ImportError:  # pragma: no cover - dependency declared in pyproject
            used = "own"
        else:
            try:
                with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
                    warnings.simplefilter("ignore")
                    value = float(krippendorff.alpha(value_counts=prep.counts[keep],
                                                     value_domain=domain,
                                                     level_of_measurement=level))
            except ValueError as exc:
                return StatResult("krippendorff_alpha", None, None, None, n_units, nr,
                                  f"undefined: {exc}", extra=extra)
            if not np.isfinite(value):
                return StatResult("krippendorff_alpha", None, None, None, n_units, nr,
                                  "undefined: expected disagreement is 0, alpha is 0/0", extra=extra)
    if used == "own":
        value = float(alpha_from_coincidences(total, q, level, domain)[0])
        if not np.isfinite(value):
            return StatResult("krippendorff_alpha", None, None, None, n_units, nr,
                              "undefined: expected disagreement is 0, alpha is 0/0", extra=extra)
    note = (f"Krippendorff's alpha, {level} level, over {cats_text(prep)}; computed with "
            f"{'the krippendorff package' if used == 'krippendorff' else 'the coincidence matrix'}"
            " (Krippendorff 2011, section C)")
    if prep.n_items - n_units:
        note += f"; {prep.n_items - n_units} units with fewer than 2 values unpairable, ignored"
    return finish("krippendorff_alpha", value, note, n_items=n_units, n_raters=nr, ci=ci,
                  n_boot=n_boot, seed=seed, features=feats,
                  stat_fn=lambda s: alpha_from_coincidences(s, q, level, domain), extra=extra)
