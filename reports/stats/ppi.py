"""Prediction-powered inference (PPI) of a mean: many LLM-judge labels plus a few human labels.

Two estimators, by name (TUNINGS):

- "none" (prefval's default, what `prefval report`'s judge-validation section uses): PPI with lambda = 1, i.e.
  the original estimator without power tuning. Angelopoulos, Bates, Fannjiang, Jordan and Zrnic,
  "Prediction-powered inference", Science 382 (2023), section "Mean estimation" (and Materials and Methods,
  algorithm for the mean).
- "power": PPI++, lambda chosen from the data. Angelopoulos, Duchi and Zrnic, "PPI++: Efficient
  Prediction-Powered Inference" (arXiv:2311.01453, 2023), section 2 (mean estimation, the power-tuned estimator
  and its optimal lambda); ``ppi_py``'s default (``lam=None``). It is never wider than the human-only interval
  (lambda = 0 is the classical mean) and about as narrow as PPI when the judge is good.

With n items labelled by people (Y) and the judge (Yhat), and N more items labelled only by the judge
(Yhat_u), for a lambda in [0, 1]:
theta_lambda = lambda mean(Yhat_u) + mean(Y - lambda Yhat), the judge's mean corrected by its measured bias (the
"rectifier" mean(Y - lambda Yhat)); the (1 - alpha) interval is theta_lambda +- z_{1-alpha/2}
sqrt(lambda^2 var(Yhat_u) / N + var(Y - lambda Yhat) / n) (population variances, ddof 0, as ppi_py computes them).
lambda = 1 is PPI; PPI++ takes lambda = Cov(Y, Yhat) / ((1 + n/N) Var(Yhat)) (PPI++ section 2: the lambda that
minimises the estimator's variance), clipped to [0, 1] as ppi_py does, with Cov the population covariance over
the n labelled items and Var the sample variance (ddof 1) of the judge's labels on all n + N items (ppi_py's
``_calc_lam_glm`` for the mean; its gradients Y - theta and Yhat - theta differ from Y and Yhat by a constant).
Both stay valid however biased the judge is.

Beside them: the human-only estimate (mean of Y, classical CLT interval) and the judge-only estimate (mean of the
judge's labels on all n + N items, classical interval, which is NOT valid when the judge is biased).

Computed here in closed form (numpy, and scipy's normal quantile z_{1-alpha/2}): the formulas above are all
there is to the mean. The ``ppi_py`` package (ppi-python 0.2.3) computes the same; its values on fixed inputs are
recorded in tests/stats/reference/ppi.json (make_ppi_reference.py) and the tests compare against them, since the
package would bring numba and llvmlite (about 208 MB) for these two formulas.
"""
from __future__ import annotations

import numpy as np
from scipy.stats import norm

from .result import StatResult

__all__ = ["ppi_mean", "classical_mean", "power_tuned_lambda", "TUNINGS"]

#: the PPI estimators by name: "none" (lambda = 1, PPI: the default) and "power" (PPI++, lambda from the data)
TUNINGS = ("none", "power")


def _arr(x, name: str) -> np.ndarray:
    try:
        a = np.asarray([float(v) for v in x], dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: every value must be a number") from None
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: values must be finite")
    return a


def _z(alpha: float) -> float:
    """z_{1-alpha/2}, the standard normal quantile of a two-sided 1 - alpha interval. Raises ValueError unless
    0 < alpha < 1."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    return float(norm.ppf(1 - alpha / 2))


def classical_mean(values, *, alpha: float = 0.05, metric: str = "mean") -> StatResult:
    """Mean with its classical (CLT, normal) 1 - alpha interval: mean +- z sd / sqrt(n), sd with ddof 0
    (the CLT interval PPI is compared with: Angelopoulos et al., Science 2023, "classical" baseline; ppi_py's
    classical_mean_ci). values: numbers (e.g. 1/0 labels or 1..5 scores). Undefined with fewer than 2 values.
    Raises ValueError for non-numeric values or alpha outside (0, 1)."""
    y = _arr(values, "values")
    n = y.size
    if n < 2:
        return StatResult(metric, None, None, None, n, 1, f"undefined: {n} values; an interval needs at least 2")
    mean, half = float(y.mean()), _z(alpha) * float(y.std()) / np.sqrt(n)
    return StatResult(metric, mean, mean - half, mean + half, n, 1,
                      f"mean with a {100 * (1 - alpha):g}% normal (CLT) interval over {n} items")


def power_tuned_lambda(y, yhat, yhat_unlabeled) -> float:
    """PPI++'s lambda for the mean (Angelopoulos, Duchi and Zrnic 2023, section 2): Cov(Y, Yhat) / ((1 + n/N)
    Var(Yhat)) clipped to [0, 1]; Cov over the n labelled items (ddof 0), Var over all n + N judge labels (ddof 1),
    as ppi_py computes it. 0 when the judge's labels do not vary (it carries no information). Needs n >= 1, N >= 1
    and n + N >= 2."""
    y_l, yh_l, yh_u = (np.asarray(v, dtype=np.float64) for v in (y, yhat, yhat_unlabeled))
    n, big_n = y_l.size, yh_u.size
    cov = float(np.mean((y_l - y_l.mean()) * (yh_l - yh_l.mean())))
    var = float(np.var(np.concatenate([yh_l, yh_u]), ddof=1))
    if var == 0:
        return 0.0
    return float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0))


def ppi_mean(y, yhat, yhat_unlabeled, *, alpha: float = 0.05, tuning: str = "none") -> StatResult:
    """The prediction-powered estimate of a mean with its 1 - alpha interval (module doc).

    y: human labels on the n labelled items; yhat: the judge's labels on the same items (same order);
    yhat_unlabeled: the judge's labels on the N items people did not label. Numbers (1/0 labels, 1..5 scores,
    shares). tuning: "none" (PPI, lambda = 1) or "power" (PPI++, lambda from the data); the note names the one
    used and its source. Undefined (value None with the reason) when n < 2 or N < 2. Raises ValueError when y and
    yhat differ in length or hold non-numbers, for an unknown tuning, or alpha outside (0, 1). extra: n_labeled,
    n_unlabeled, tuning, lambda, rectifier (mean(Y - lambda Yhat), the judge's bias correction).
    """
    if tuning not in TUNINGS:
        raise ValueError(f"tuning must be one of {', '.join(TUNINGS)}, got {tuning!r}")
    y_l, yh_l, yh_u = _arr(y, "y"), _arr(yhat, "yhat"), _arr(yhat_unlabeled, "yhat_unlabeled")
    if y_l.size != yh_l.size:
        raise ValueError(f"y and yhat must have the same length, got {y_l.size} and {yh_l.size}")
    n, big_n = y_l.size, yh_u.size
    extra = {"n_labeled": n, "n_unlabeled": big_n, "tuning": tuning}
    if n < 2:
        return StatResult("ppi_mean", None, None, None, n, 2,
                          f"undefined: {n} items with both human and judge labels; PPI needs at least 2", extra=extra)
    if big_n < 2:
        return StatResult("ppi_mean", None, None, None, n + big_n, 2,
                          f"undefined: {big_n} items labelled by the judge alone; PPI needs at least 2",
                          extra=extra)
    z = _z(alpha)
    lam = 1.0 if tuning == "none" else power_tuned_lambda(y_l, yh_l, yh_u)
    # Science 2023, "Mean estimation": theta = lambda mean(Yhat_u) + mean(Y - lambda Yhat) (lambda = 1 there);
    # PPI++ section 2 for a general lambda; variances ddof 0 (module doc)
    residual = y_l - lam * yh_l
    rectifier = float(residual.mean())
    theta = lam * float(yh_u.mean()) + rectifier
    se = float(np.sqrt((lam * yh_u).var() / big_n + residual.var() / n))
    lo, hi = theta - z * se, theta + z * se
    extra["lambda"] = lam
    extra["rectifier"] = rectifier
    rule = ("PPI with lambda = 1, no power tuning (Angelopoulos et al., Science 2023; ppi_py lam=1)"
            if tuning == "none" else
            f"PPI++ with lambda = {lam:.3f} chosen from the data (power tuning; Angelopoulos, Duchi and Zrnic 2023, "
            "PPI++, section 2; ppi_py's default)")
    note = (f"prediction-powered mean, {rule}: {n} items with human and judge labels, {big_n} with judge labels "
            f"only; {100 * (1 - alpha):g}% interval")
    return StatResult("ppi_mean", theta, lo, hi, n + big_n, 2, note,
                      extra=extra)
