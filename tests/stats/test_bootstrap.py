"""The vectorised bootstrap equals a plain resampling loop and behaves as a percentile interval."""
import numpy as np
import pytest

from reports.stats import fleiss_kappa, gwet_ac1, krippendorff_alpha, percent_agreement
from reports.stats.bootstrap import percentile_interval


def table(seed=0, n=30, r=3, q=3):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, q, n)
    out = np.where(rng.random((n, r)) < 0.7, t[:, None], rng.integers(0, q, (n, r))).astype(object)
    out[rng.random((n, r)) < 0.15] = None
    return out.tolist()


# Which items each statistic resamples: Fleiss/Gwet use items with >= 1 rating (single ratings
# enter the category shares), alpha and percent agreement only the pairable items (>= 2 ratings).
@pytest.mark.parametrize("fn,min_ratings", [(fleiss_kappa, 1), (gwet_ac1, 1),
                                            (krippendorff_alpha, 2), (percent_agreement, 2)])
def test_vectorised_bootstrap_equals_naive_loop(fn, min_ratings):
    rows = [r for r in table() if sum(v is not None for v in r) >= min_ratings]
    n, n_boot = len(rows), 200
    # n_boot * n is below the block size, so the engine draws exactly this one block
    idx = np.random.default_rng(5).integers(0, n, size=(n_boot, n))
    naive = []
    for i in idx:
        v = fn([rows[j] for j in i]).value
        naive.append(np.nan if v is None else v)
    lo, hi, _ = percentile_interval(np.array(naive))
    res = fn(table(), ci=True, n_boot=n_boot, seed=5)
    assert (res.ci_low, res.ci_high) == pytest.approx((lo, hi), abs=1e-12)


def test_seed_reproducible_and_changes_with_seed():
    rows = table(1, n=60)
    a = fleiss_kappa(rows, ci=True, n_boot=300, seed=3)
    b = fleiss_kappa(rows, ci=True, n_boot=300, seed=3)
    c = fleiss_kappa(rows, ci=True, n_boot=300, seed=4)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    assert (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)
    assert a.ci_low < a.value < a.ci_high
    assert "300 resamples" in a.note


def test_undefined_replicates_dropped_and_counted():
    # few items, one rare disagreement: many resamples see a single category only
    rows = [["a", "a"]] * 6 + [["a", "b"]]
    res = fleiss_kappa(rows, ci=True, n_boot=400)
    assert "undefined and dropped" in res.note
    assert res.ci_low is not None


def test_no_interval_when_ci_false_or_undefined():
    assert fleiss_kappa(table(), ci=False).ci_low is None
    res = fleiss_kappa([["a", "a"]] * 4, ci=True)
    assert res.value is None and res.ci_low is None


def test_percentile_interval_all_nan():
    assert percentile_interval(np.array([np.nan, np.nan])) == (None, None, 0)


def test_shared_resamples_give_each_statistic_its_own_interval():
    from reports.stats import at_least_one_correct
    from reports.stats.bootstrap import shared_resamples

    rows = table(2, n=80)
    full = [r for r in rows if sum(v is not None for v in r) >= 1]
    correct = [[None if v is None else v == 0 for v in r] for r in full]
    fewer = full[:50]  # another number of items: drawn on its own
    alone = [fleiss_kappa(full, ci=True, n_boot=300, seed=9), at_least_one_correct(correct, ci=True, n_boot=300, seed=9),
             gwet_ac1(fewer, ci=True, n_boot=300, seed=9), fleiss_kappa(full, ci=False)]
    with shared_resamples() as batch:
        waiting = [fleiss_kappa(full, ci=True, n_boot=300, seed=9),
                   at_least_one_correct(correct, ci=True, n_boot=300, seed=9),
                   gwet_ac1(fewer, ci=True, n_boot=300, seed=9), fleiss_kappa(full, ci=False)]
        assert waiting[0].ci_low is None  # not drawn yet inside the block
    shared = [batch.result(r) for r in waiting]
    assert shared[3] is waiting[3]  # nothing to wait for without an interval
    for a, b in zip(alone, shared):
        assert (b.value, b.note, b.n_items) == (a.value, a.note, a.n_items)
        assert (b.ci_low, b.ci_high) == pytest.approx((a.ci_low, a.ci_high), abs=1e-12)
    assert shared[0].ci_low < shared[0].value < shared[0].ci_high
