"""Pearson, Spearman and Kendall on small series worked by hand, every field of the result, the undefined cases and
the input errors (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import math

import pytest

from reports.stats import kendall, pearson, spearman
from tests.mutation.expect import check

# x 1..4, y 1, 3, 2, 4: Pearson r = 4/5 (Sxy = 4, Sxx = Syy = 5); Spearman = the same on ranks;
# Kendall: 6 pairs, 5 concordant, 1 discordant -> tau = 4/6
X, Y = [1, 2, 3, 4, None, 5], [1, 3, 2, 4, 7, ""]


@pytest.mark.parametrize("fn, metric, name, value", [
    (pearson, "pearson", "Pearson product-moment r", 0.8),
    (spearman, "spearman", "Spearman rank rho (ties averaged)", 0.8),
    (kendall, "kendall", "Kendall tau-b", 4 / 6),
])
def test_value_note_and_counts_by_hand(fn, metric, name, value):
    r = fn(X, Y)
    assert (r.metric, r.n_items, r.n_raters, r.ci_low, r.ci_high) == (metric, 4, 2, None, None)
    assert r.value == pytest.approx(value)
    assert r.note == f"{name}, two-sided p from scipy.stats over 4 pairs; 2 pairs with a missing value dropped"
    assert r.extra == {"n_pairs_dropped_missing": 2} and 0 < r.p_value < 1
    full = fn([1, 2, 3, 4], [1, 3, 2, 4])
    assert full.note == f"{name}, two-sided p from scipy.stats over 4 pairs" and full.value == pytest.approx(value)


def test_pearson_p_value_by_hand():
    # t = r sqrt(n-2) / sqrt(1-r^2) = 0.8 sqrt(2) / 0.6; two-sided p with 2 degrees of freedom:
    # p = 1 - t / sqrt(t^2 + 2)
    t = 0.8 * math.sqrt(2) / 0.6
    assert pearson([1, 2, 3, 4], [1, 3, 2, 4]).p_value == pytest.approx(1 - t / math.sqrt(t * t + 2))


@pytest.mark.parametrize("fn", [pearson, spearman, kendall])
def test_undefined_cases(fn):
    name = fn.__name__
    check(fn([1, 2], [2, 1]), name, None, None, None, 2, 2, "undefined: fewer than 3 complete pairs (2)",
          extra={"n_pairs_dropped_missing": 0})
    check(fn([1, 1, 1, None], [1, 2, 3, 4]), name, None, None, None, 3, 2,
          "undefined: x is constant, correlation is 0/0", extra={"n_pairs_dropped_missing": 1})
    check(fn([1, 2, 3], [5, 5, 5]), name, None, None, None, 3, 2, "undefined: y is constant, correlation is 0/0",
          extra={"n_pairs_dropped_missing": 0})
    with pytest.raises(ValueError, match=r"^x and y must have the same length, got 2 and 3$"):
        fn([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match=r"^pair 1: \('a', 2\) is not numeric$"):
        fn([1, "a", 3], [1, 2, 3])


@pytest.mark.parametrize("fn", [pearson, spearman, kendall])
@pytest.mark.slow
def test_interval_defaults(fn):
    x, y = [1, 2, 3, 4, 5, 6, 7, 8], [2, 1, 4, 3, 6, 5, 8, 7]
    boot = fn(x, y, ci=True)
    assert boot == fn(x, y, ci=True, n_boot=1000, seed=0) and boot != fn(x, y, ci=True, seed=1)
    assert boot.ci_low <= boot.value <= boot.ci_high <= 1
    assert " over 8 pairs; 95% percentile bootstrap over items, 1000 resamples, seed 0" in boot.note
