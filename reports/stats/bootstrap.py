"""Vectorised percentile bootstrap over items.

Every statistic here is a function of per-item *features* summed over items (counts, agreement
shares, coincidence-matrix contributions). A bootstrap replicate resamples the items with
replacement, which is the same as summing the features with multiplicity weights w_i (how often
item i was drawn). So: draw the weights for a block of replicates with ``numpy.random.default_rng``
and ``np.bincount``, multiply (replicates x items) @ (items x features) once per block, and evaluate
the statistic on all replicate sums at once. Efron & Tibshirani (1993), ch. 13 (percentile interval).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .result import StatResult

__all__ = ["replicate_sums", "percentile_interval", "finish", "BLOCK_CELLS"]

BLOCK_CELLS = 4_000_000  # replicates x items per block (memory bound ~32 MB of float64)


def _weight_blocks(n_items: int, n_boot: int, seed: int):
    rng = np.random.default_rng(seed)
    block = max(1, min(n_boot, BLOCK_CELLS // max(n_items, 1)))
    done = 0
    while done < n_boot:
        c = min(block, n_boot - done)
        idx = rng.integers(0, n_items, size=(c, n_items))
        idx += (np.arange(c, dtype=idx.dtype) * n_items)[:, None]
        w = np.bincount(idx.ravel(), minlength=c * n_items).reshape(c, n_items)
        yield w.astype(np.float64)
        done += c


def replicate_sums(features, n_boot: int, seed: int) -> np.ndarray:
    """Feature sums for ``n_boot`` item resamples: returns an n_boot x n_features array.

    ``features`` is items x features, a numpy array or a scipy.sparse matrix.
    """
    n_items = features.shape[0]
    out = []
    for w in _weight_blocks(n_items, n_boot, seed):
        s = features.T @ w.T  # features x block (dense for both dense and sparse inputs)
        out.append(np.asarray(s).T)
    return np.vstack(out) if out else np.zeros((0, features.shape[1]))


def percentile_interval(reps: np.ndarray, level: float = 0.95):
    """(low, high, n_used) of the finite replicates; (None, None, 0) when none is finite."""
    reps = np.asarray(reps, dtype=np.float64)
    ok = reps[np.isfinite(reps)]
    if ok.size == 0:
        return None, None, 0
    a = (1 - level) / 2
    lo, hi = np.percentile(ok, [100 * a, 100 * (1 - a)])
    return float(lo), float(hi), int(ok.size)


def finish(
    metric: str,
    value,
    note: str,
    *,
    n_items: int,
    n_raters: int,
    ci: bool,
    n_boot: int,
    seed: int,
    features=None,
    stat_fn: Callable[[np.ndarray], np.ndarray] | None = None,
    replicates: Callable[[], np.ndarray] | None = None,
    extra: dict | None = None,
    p_value=None,
) -> StatResult:
    """Build the StatResult, adding the bootstrap interval when ``ci`` is true and the value is defined.

    Replicates come from ``stat_fn(replicate_sums(features, ...))`` or from ``replicates()``;
    non-finite replicates (the statistic undefined on that resample) are dropped and counted in
    the note.
    """
    lo = hi = None
    if value is not None and ci and n_boot > 0 and n_items > 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            if replicates is not None:
                reps = replicates()
            else:
                reps = stat_fn(replicate_sums(features, n_boot, seed))
        lo, hi, used = percentile_interval(reps)
        dropped = n_boot - used
        note += f"; 95% percentile bootstrap over items, {n_boot} resamples, seed {seed}"
        if dropped:
            note += f", {dropped} resamples undefined and dropped"
        if used == 0:
            note += "; no defined resample, so no interval"
    return StatResult(
        metric=metric, value=value, ci_low=lo, ci_high=hi, n_items=n_items, n_raters=n_raters,
        note=note, p_value=p_value, extra=dict(extra or {}),
    )
