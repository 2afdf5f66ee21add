"""Pearson, Spearman and Kendall correlations with two-sided p-values (scipy.stats)."""
from __future__ import annotations

import numpy as np

from ._prep import is_missing
from .bootstrap import finish
from .result import StatResult

__all__ = ["pearson", "spearman", "kendall"]


def _pairs(x, y):
    x, y = list(x), list(y)
    if len(x) != len(y):
        raise ValueError(f"x and y must have the same length, got {len(x)} and {len(y)}")
    xs, ys, dropped = [], [], 0
    for i, (a, b) in enumerate(zip(x, y)):
        if is_missing(a) or is_missing(b):
            dropped += 1
            continue
        try:
            xs.append(float(a))
            ys.append(float(b))
        except (TypeError, ValueError):
            raise ValueError(f"pair {i}: ({a!r}, {b!r}) is not numeric") from None
    return np.array(xs), np.array(ys), dropped


def _pearson_many(s: np.ndarray) -> np.ndarray:
    n, sx, sy, sxx, syy, sxy = (s[:, i] for i in range(6))
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = sxy - sx * sy / n
        vx, vy = sxx - sx**2 / n, syy - sy**2 / n
        r = cov / np.sqrt(vx * vy)
    r[(n < 3) | ~(vx > 1e-12 * np.maximum(sxx, 1e-300)) | ~(vy > 1e-12 * np.maximum(syy, 1e-300))] = np.nan
    return np.clip(r, -1, 1)


def _corr(metric: str, method: str, x, y, ci: bool, n_boot: int, seed: int) -> StatResult:
    from scipy import stats

    xs, ys, dropped = _pairs(x, y)
    n = len(xs)
    extra = {"n_pairs_dropped_missing": dropped}
    if n < 3:
        return StatResult(metric, None, None, None, n, 2,
                          f"undefined: fewer than 3 complete pairs ({n})", extra=extra)
    if np.ptp(xs) == 0 or np.ptp(ys) == 0:
        which = "x" if np.ptp(xs) == 0 else "y"
        return StatResult(metric, None, None, None, n, 2,
                          f"undefined: {which} is constant, correlation is 0/0", extra=extra)
    fn = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[method]
    res = fn(xs, ys)
    value, p = float(res[0]), float(res[1])
    if not np.isfinite(value):
        return StatResult(metric, None, None, None, n, 2, "undefined: correlation is not finite",
                          extra=extra)
    note = {"pearson": "Pearson product-moment r", "spearman": "Spearman rank rho (ties averaged)",
            "kendall": "Kendall tau-b"}[method] + f", two-sided p from scipy.stats over {n} pairs"
    if dropped:
        note += f"; {dropped} pairs with a missing value dropped"

    def reps():
        if method == "pearson":
            from .bootstrap import replicate_sums
            f = np.column_stack([np.ones(n), xs, ys, xs**2, ys**2, xs * ys])
            return _pearson_many(replicate_sums(f, n_boot, seed))
        rng = np.random.default_rng(seed)
        out = np.full(n_boot, np.nan)
        for b in range(n_boot):
            i = rng.integers(0, n, n)
            a, c = xs[i], ys[i]
            if np.ptp(a) > 0 and np.ptp(c) > 0:
                out[b] = fn(a, c)[0]
        return out

    return finish(metric, value, note, n_items=n, n_raters=2, ci=ci, n_boot=n_boot, seed=seed,
                  replicates=reps, extra=extra, p_value=p)


def pearson(x, y, *, ci: bool = False, n_boot: int = 1000, seed: int = 0) -> StatResult:
    """Pearson's r (Pearson 1896) with the two-sided p-value of ``scipy.stats.pearsonr``.

    x, y: sequences of equal length (one value per item), None/NaN/"" for missing; pairs with a
    missing value are dropped. Undefined (value None with the reason): fewer than 3 complete
    pairs, or a constant x or y. Raises ValueError for unequal lengths or non-numeric values.
    ``ci=True``: 95% percentile bootstrap over pairs (``n_boot`` resamples, ``default_rng(seed)``).
    """
    return _corr("pearson", "pearson", x, y, ci, n_boot, seed)


def spearman(x, y, *, ci: bool = False, n_boot: int = 1000, seed: int = 0) -> StatResult:
    """Spearman's rho (Spearman 1904; Pearson r of average ranks), p from ``scipy.stats.spearmanr``.

    x, y: sequences of equal length (one value per item), None/NaN/"" for missing; pairs with a
    missing value are dropped. Undefined (value None with the reason): fewer than 3 complete
    pairs, or a constant x or y. Raises ValueError for unequal lengths or non-numeric values.
    ``ci=True``: 95% percentile bootstrap over pairs (``n_boot`` resamples, ``default_rng(seed)``).
    """
    return _corr("spearman", "spearman", x, y, ci, n_boot, seed)


def kendall(x, y, *, ci: bool = False, n_boot: int = 1000, seed: int = 0) -> StatResult:
    """Kendall's tau-b (Kendall 1938/1945, tie-corrected), p from ``scipy.stats.kendalltau``.

    x, y: sequences of equal length (one value per item), None/NaN/"" for missing; pairs with a
    missing value are dropped. Undefined (value None with the reason): fewer than 3 complete
    pairs, or a constant x or y. Raises ValueError for unequal lengths or non-numeric values.
    ``ci=True``: 95% percentile bootstrap over pairs (``n_boot`` resamples, ``default_rng(seed)``).
    """
    return _corr("kendall", "kendall", x, y, ci, n_boot, seed)
