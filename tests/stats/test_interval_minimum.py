"""A bootstrap interval needs at least 7 resampled items (reports.stats.bootstrap.MIN_ITEMS_INTERVAL).

m items allow C(2m-1, m) distinct resamples: 2 items give 3, so a "95% interval" from 1,000 resamples of
2 items has its ends among 3 values (the newcomer check's `Fleiss' kappa: -0.907 [-5.347, 1.000] (n=2)`).
"""
from fractions import Fraction

import pytest

from reports.stats import fleiss_kappa, gwet_ac1, pearson
from reports.stats.bootstrap import MIN_ITEMS_INTERVAL, distinct_resamples


def test_distinct_resamples_by_hand():
    # multisets of size m from m items: C(2m-1, m)
    assert [distinct_resamples(m) for m in (0, 1, 2, 3, 6, 7)] == [0, 1, 3, 10, 462, 1716]
    assert MIN_ITEMS_INTERVAL == 7


def _complete(n_items):
    # 3 raters, one disagreement every other item: kappa defined for any n_items >= 2
    return [["a", "a", "b"] if i % 2 else ["b", "b", "b"] if i % 3 else ["a", "a", "a"] for i in range(n_items)]


@pytest.mark.parametrize("stat", [fleiss_kappa, gwet_ac1])
def test_six_items_no_interval_seven_items_one(stat):
    six = stat(_complete(6), ci=True)
    assert six.value is not None and six.ci_low is None and six.ci_high is None
    assert "6 items resampled allow only 462 distinct" in six.note
    seven = stat(_complete(7), ci=True)
    assert seven.ci_low is not None and seven.ci_low <= seven.value <= seven.ci_high


def test_the_count_is_of_resampled_items_not_pairable_ones():
    # Fleiss with missing ratings resamples every item with a rating: 2 rated twice + 5 rated once = 7
    rows = [["a", "b"], ["a", "a"]] + [["a", None]] * 4 + [["b", None]]
    r = fleiss_kappa(rows, ci=True)
    assert r.n_items == 2 and r.ci_low is not None and r.ci_high is not None
    r6 = fleiss_kappa(rows[:-1], ci=True)
    assert r6.ci_low is None and "6 items resampled" in r6.note


def test_pairs_count_for_correlations():
    x6, y6 = [1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5]
    assert pearson(x6, y6, ci=True).ci_low is None
    r = pearson(x6 + [7], y6 + [8], ci=True)
    assert r.ci_low is not None and r.ci_low <= r.value <= r.ci_high


def test_no_interval_asked_adds_no_note():
    assert "no interval" not in fleiss_kappa(_complete(3)).note


def test_fleiss_below_minus_one_with_missing_ratings_by_hand():
    """With complete data Fleiss' kappa >= -1/(r-1); with items rated once (they enter the category shares only,
    Gwet 2014 ch. 2 / irrCAC) it has no floor. By hand: p_a = mean(0, 1/3) = 1/6; shares over 5 items
    a: (1/2 + 1/3 + 1 + 1 + 1)/5 = 23/30, b: 7/30; p_e = (529 + 49)/900 = 289/450;
    kappa = (1/6 - 289/450) / (1 - 289/450) = -214/161."""
    rows = [["a", "b", None], ["a", "b", "b"], ["a", None, None], ["a", None, None], ["a", None, None]]
    r = fleiss_kappa(rows, ci=True)
    assert r.value == pytest.approx(float(Fraction(-214, 161)))
    assert r.value < -1
    assert r.ci_low is None and "5 items resampled allow only 126 distinct" in r.note
