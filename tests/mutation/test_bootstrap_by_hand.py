"""The vectorised bootstrap (reports/stats/bootstrap.py): resample weights equal to drawing items, blocks, the
percentile interval and the notes finish writes (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import numpy as np
import pytest

from reports.stats import bootstrap as b

# small hand-worked tables: intervals even below the 7-item minimum (tested on its own)
pytestmark = pytest.mark.usefixtures("intervals_from_few_items")


def test_replicate_sums_equal_drawing_the_items():
    f = np.array([[1.0, 2.0], [10.0, 20.0], [100.0, 200.0]])
    sums = b.replicate_sums(f, 5, seed=4)
    idx = np.random.default_rng(4).integers(0, 3, size=(5, 3))
    assert sums.tolist() == [f[row].sum(axis=0).tolist() for row in idx]
    assert b.replicate_sums(f, 0, 1).shape == (0, 2)


def test_blocks_split_the_replicates(monkeypatch):
    monkeypatch.setattr(b, "BLOCK_CELLS", 7)  # 3 items: 2 replicates per block
    blocks = list(b._weight_blocks(3, 5, seed=0))
    assert [w.shape for w in blocks] == [(2, 3), (2, 3), (1, 3)]
    assert all(w.sum(axis=1).tolist() == [3.0] * len(w) for w in blocks)  # each replicate draws 3 items
    monkeypatch.setattr(b, "BLOCK_CELLS", 1)  # fewer cells than items: still one replicate per block
    assert [w.shape for w in b._weight_blocks(3, 2, seed=0)] == [(1, 3), (1, 3)]


def test_percentile_interval():
    reps = np.array([np.nan, 1.0, 2.0, 3.0, 4.0, 5.0, np.inf])
    lo, hi, n = b.percentile_interval(reps)
    assert (lo, hi, n) == (pytest.approx(1.1), pytest.approx(4.9), 5)
    assert b.percentile_interval(reps, level=0.5) == (pytest.approx(2.0), pytest.approx(4.0), 5)
    assert b.percentile_interval([np.nan]) == (None, None, 0)


def test_finish_notes():
    f = np.array([[1.0, 1.0], [1.0, 0.0]])

    def share(s):
        return s[:, 1] / s[:, 0]

    plain = b.finish("m", 0.5, "what", n_items=2, n_raters=3, ci=False, n_boot=10, seed=0, features=f,
                     stat_fn=share, extra={"k": 1})
    assert (plain.metric, plain.value, plain.ci_low, plain.note, plain.n_items, plain.n_raters, plain.extra) == (
        "m", 0.5, None, "what", 2, 3, {"k": 1})
    boot = b.finish("m", 0.5, "what", n_items=2, n_raters=3, ci=True, n_boot=10, seed=0, features=f, stat_fn=share)
    assert boot.note == "what; 95% percentile bootstrap over items, 10 resamples, seed 0"
    assert 0 <= boot.ci_low <= boot.ci_high <= 1

    def half_undefined(s):
        out = share(s)
        out[::2] = np.nan
        return out

    dropped = b.finish("m", 0.5, "w", n_items=2, n_raters=1, ci=True, n_boot=10, seed=0, features=f,
                       stat_fn=half_undefined)
    assert dropped.note == "w; 95% percentile bootstrap over items, 10 resamples, seed 0, 5 resamples undefined and " \
                           "dropped"
    none = b.finish("m", 0.5, "w", n_items=2, n_raters=1, ci=True, n_boot=4, seed=2,
                    replicates=lambda: np.full(4, np.nan))
    assert none.note == ("w; 95% percentile bootstrap over items, 4 resamples, seed 2, 4 resamples undefined and "
                         "dropped; no defined resample, so no interval")
    assert (none.ci_low, none.ci_high) == (None, None)
    for kw in (dict(value=None, n_boot=10, n_items=2), dict(value=0.5, n_boot=0, n_items=2),
               dict(value=0.5, n_boot=10, n_items=0)):
        r = b.finish("m", kw["value"], "w", n_items=kw["n_items"], n_raters=1, ci=True, n_boot=kw["n_boot"], seed=0,
                     replicates=lambda: np.ones(10))
        assert r.note == "w" and r.ci_low is None
    assert b.finish("m", 1.0, "w", n_items=1, n_raters=1, ci=False, n_boot=0, seed=0, p_value=0.25).p_value == 0.25
