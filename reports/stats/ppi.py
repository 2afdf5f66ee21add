"""Prediction-powered inference (PPI) of a mean: many LLM-judge labels plus a few human labels.

Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, "Prediction-powered inference", Science 382 (2023), section
"Mean estimation" (and Materials and Methods, algorithm for the mean). Computed with the ``ppi_py`` package
(ppi-python, imported on first use) with lam = 1, i.e. the original PPI estimator without power tuning.

With n items labelled by people (Y) and the judge (Yhat), and N more items labelled only by the judge
(Yhat_u): theta_PP = mean(Yhat_u) - mean(Yhat - Y), the judge's mean corrected by its measured bias (the
"rectifier"); the (1 - alpha) interval is theta_PP +- z_{1-alpha/2} sqrt(var(Yhat_u) / N + var(Yhat - Y) / n)
(population variances, ddof 0, as ppi_py computes them). It stays valid however biased the judge is; a good
judge only makes it narrower than the human-only interval.

Beside it: the human-only estimate (mean of Y, classical CLT interval) and the judge-only estimate (mean of the
judge's labels on all n + N items, classical interval, which is NOT valid when the judge is biased).
"""
from __future__ import annotations

import numpy as np

from .result import StatResult

__all__ = ["ppi_mean", "classical_mean"]


def _arr(x, name: str) -> np.ndarray:
    try:
        a = np.asarray([float(v) for v in x], dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: every value must be a number") from None
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: values must be finite")
    return a


def classical_mean(values, *, alpha: float = 0.05, metric: str = "mean") -> StatResult:
    """Mean with its classical (CLT, normal) 1 - alpha interval: mean +- z sd / sqrt(n), sd with ddof 0
    (ppi_py.classical_mean_ci). values: numbers (e.g. 1/0 labels or 1..5 scores). Undefined with fewer than 2
    values. Raises ValueError for non-numeric values."""
    y = _arr(values, "values")
    n = y.size
    if n < 2:
        return StatResult(metric, None, None, None, n, 1, f"undefined: {n} values; an interval needs at least 2")
    from ppi_py import classical_mean_ci

    lo, hi = classical_mean_ci(y, alpha=alpha)
    return StatResult(metric, float(y.mean()), float(np.ravel(lo)[0]), float(np.ravel(hi)[0]), n, 1,
                      f"mean with a {100 * (1 - alpha):g}% normal (CLT) interval over {n} items")


def ppi_mean(y, yhat, yhat_unlabeled, *, alpha: float = 0.05) -> StatResult:
    """The prediction-powered estimate of a mean with its 1 - alpha interval (module doc).

    y: human labels on the n labelled items; yhat: the judge's labels on the same items (same order);
    yhat_unlabeled: the judge's labels on the N items people did not label. Numbers (1/0 labels, 1..5 scores,
    shares). Undefined (value None with the reason) when n < 2 or N < 2. Raises ValueError when y and yhat
    differ in length or hold non-numbers. extra: n_labeled, n_unlabeled, rectifier (mean(Y - Yhat), the
    judge's bias correction).
    """
    y_l, yh_l, yh_u = _arr(y, "y"), _arr(yhat, "yhat"), _arr(yhat_unlabeled, "yhat_unlabeled")
    if y_l.size != yh_l.size:
        raise ValueError(f"y and yhat must have the same length, got {y_l.size} and {yh_l.size}")
    n, big_n = y_l.size, yh_u.size
    extra = {"n_labeled": n, "n_unlabeled": big_n}
    if n < 2:
        return StatResult("ppi_mean", None, None, None, n, 2,
                          f"undefined: {n} items with both human and judge labels; PPI needs at least 2", extra=extra)
    if big_n < 2:
        return StatResult("ppi_mean", None, None, None, n + big_n, 2,
                          f"undefined: {big_n} items labelled by the judge alone; PPI needs at least 2",
                          extra=extra)
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    theta = float(np.ravel(ppi_mean_pointestimate(y_l, yh_l, yh_u, lam=1))[0])
    lo, hi = ppi_mean_ci(y_l, yh_l, yh_u, alpha=alpha, lam=1)
    extra["rectifier"] = float(np.mean(y_l - yh_l))
    note = (f"prediction-powered mean (Angelopoulos et al. 2023, ppi_py, lam=1): {n} items with human and judge "
            f"labels, {big_n} with judge labels only; {100 * (1 - alpha):g}% interval")
    return StatResult("ppi_mean", theta, float(np.ravel(lo)[0]), float(np.ravel(hi)[0]), n + big_n, 2, note,
                      extra=extra)
