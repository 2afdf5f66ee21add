"""Fleiss' kappa, Gwet's AC1/AC2 and percent agreement / unanimity on small tables worked by hand, every field of the
result checked, so that a changed formula, count, note, default or boundary fails (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from reports.stats import fleiss_kappa, gwet_ac1, gwet_ac2, percent_agreement, unanimity_rate
from reports.stats.result import StatResult
from tests.mutation.expect import check

# small hand-worked tables: intervals even below the 7-item minimum (tested on its own)
pytestmark = pytest.mark.usefixtures("intervals_from_few_items")

# 4 items x 3 raters, labels a/b. Per item the share of agreeing ordered pairs sum_k n_k (n_k - 1) / (n (n - 1)):
# (a,a,a) 1; (a,a,b) 2/6; (b,b,b) 1; (a,b,b) 2/6 -> p_a = (1 + 1/3 + 1 + 1/3) / 4 = 2/3.
# category shares: a = (1 + 2/3 + 0 + 1/3) / 4 = 1/2, b = 1/2.
COMPLETE = [["a", "a", "a"], ["a", "a", "b"], ["b", "b", "b"], ["a", "b", "b"]]
# plus an item rated once (a) and an item nobody rated: p_a stays 2/3 (items with >= 2 ratings);
# shares over the 5 items with >= 1 rating: a = (1 + 2/3 + 0 + 1/3 + 1) / 5 = 3/5, b = 2/5.
MISSING = COMPLETE + [["a", None, None], [None, "", float("nan")]]


CATS = "2 observed categories ['a', 'b']"
MISSING_NOTE = ("; missing ratings: p_a over items with >=2 ratings, category shares averaged over items with "
                ">=1 rating (Gwet 2014 / irrCAC); 1 items with one rating")


# ---- Fleiss' kappa -------------------------------------------------------------------------------------------
def test_fleiss_complete_by_hand_and_statsmodels():
    # p_e = 1/4 + 1/4 = 1/2; kappa = (2/3 - 1/2) / (1 - 1/2) = 1/3
    r = fleiss_kappa(COMPLETE)
    check(r, "fleiss_kappa", pytest.approx(1 / 3), None, None, 4, 3,
                           f"Fleiss 1971 kappa over {CATS}",
                           extra={"n_items_single_rating": 0, "p_a": pytest.approx(2 / 3), "p_e": pytest.approx(0.5)})
    assert r.value == pytest.approx(sm_fleiss(np.array([[3, 0], [2, 1], [0, 3], [1, 2]])))


def test_fleiss_with_missing_ratings_by_hand():
    # p_e = 9/25 + 4/25 = 13/25; kappa = (2/3 - 13/25) / (12/25) = (11/75) (25/12) = 11/36
    r = fleiss_kappa(MISSING)
    check(r, "fleiss_kappa", pytest.approx(11 / 36), None, None, 4, 3,
                           f"Fleiss 1971 kappa over {CATS}{MISSING_NOTE}",
                           extra={"n_items_single_rating": 1, "p_a": pytest.approx(2 / 3),
                                  "p_e": pytest.approx(13 / 25)})


def test_fleiss_missing_cell_without_single_item_still_notes_it():
    # one missing cell, every item still rated twice: (a,a,-) 1, (a,b,b) 1/3, (b,b,b) 1 -> p_a = 7/9;
    # shares a = (1 + 1/3 + 0) / 3 = 4/9, b = 5/9 -> p_e = 41/81; kappa = (63/81 - 41/81) / (40/81) = 22/40
    r = fleiss_kappa([["a", "a", None], ["a", "b", "b"], ["b", "b", "b"]])
    assert r.value == pytest.approx(22 / 40)
    assert r.note.endswith("(Gwet 2014 / irrCAC); 0 items with one rating")


def test_fleiss_undefined_cases():
    one = fleiss_kappa([["x", "x"], ["x", "x"], ["x", None]])
    assert one == StatResult("fleiss_kappa", None, None, None, 2, 2,
                             "undefined: every rating is 'x', so chance agreement is 1 and kappa is 0/0",
                             extra={"n_items_single_rating": 1, "p_a": 1.0, "p_e": 1.0})
    # the named category is the one holding the ratings, not the first declared one
    assert "every rating is 'y'" in fleiss_kappa([["y", "y"], ["y", "y"]], categories=["x", "y"]).note
    assert fleiss_kappa([]) == StatResult("fleiss_kappa", None, None, None, 0, 0, "undefined: no items",
                                          extra={"n_items_single_rating": 0})
    lone = fleiss_kappa([["a", None], ["b", None]])
    assert lone == StatResult("fleiss_kappa", None, None, None, 0, 1,
                              "undefined: only one rater gave ratings; agreement needs at least two",
                              extra={"n_items_single_rating": 2})
    apart = fleiss_kappa([["a", None], [None, "b"]])
    assert apart == StatResult("fleiss_kappa", None, None, None, 0, 2,
                               "undefined: no item was rated by two or more raters (no overlap)",
                               extra={"n_items_single_rating": 2})
    with pytest.raises(ValueError, match=r"^rating 'c' \(item 1\) is not one of the declared categories"):
        fleiss_kappa([["a", "b"], ["c", "a"]], categories=["a", "b"])


def _naive_undefined_count(n_items: int, n_boot: int, seed: int) -> int:
    """Resamples of two items that draw one item twice: the data are [[a, a], [b, b]], so such a resample has
    every rating in one category and an undefined kappa. Draws as documented in reports/stats/bootstrap.py."""
    idx = np.random.default_rng(seed).integers(0, n_items, size=(n_boot, n_items))
    return int((idx[:, 0] == idx[:, 1]).sum())


def test_fleiss_interval_defaults_and_dropped_resamples():
    data = [["a", "a"], ["b", "b"]]  # p_a = 1, p_e = 1/2, kappa = 1; resamples of one item are undefined
    plain = fleiss_kappa(data)
    assert plain.value == 1.0 and plain.ci_low is None and plain.ci_high is None
    boot = fleiss_kappa(data, ci=True)
    assert boot == fleiss_kappa(data, ci=True, n_boot=1000, seed=0)
    dropped = _naive_undefined_count(2, 1000, 0)
    assert 0 < dropped < 1000
    assert boot.note == (f"Fleiss 1971 kappa over {CATS}"
                         f"; 95% percentile bootstrap over items, 1000 resamples, seed 0, "
                         f"{dropped} resamples undefined and dropped")
    assert (boot.ci_low, boot.ci_high) == (1.0, 1.0)  # every defined resample has both items: kappa 1
    other = fleiss_kappa(data, ci=True, n_boot=200, seed=5)
    assert other.note.endswith(f"200 resamples, seed 5, {_naive_undefined_count(2, 200, 5)} resamples undefined "
                               "and dropped")


def test_fleiss_interval_brackets_the_value():
    data = COMPLETE * 3
    boot = fleiss_kappa(data, ci=True, n_boot=400, seed=3)
    assert boot.value == pytest.approx(1 / 3)
    assert boot.ci_low < 1 / 3 < boot.ci_high and -1 <= boot.ci_low and boot.ci_high <= 1


# ---- Gwet's AC1 ----------------------------------------------------------------------------------------------
def test_ac1_by_hand_with_declared_unused_category():
    # q = 3 (c declared, unused): p_e = sum_k pi_k (1 - pi_k) / (q - 1) = (1/4 + 1/4 + 0) / 2 = 1/4
    # AC1 = (2/3 - 1/4) / (3/4) = 5/9
    r = gwet_ac1(COMPLETE, categories=["a", "b", "c"])
    check(r, "gwet_ac1", pytest.approx(5 / 9), None, None, 4, 3,
                           "Gwet 2008 AC1 over 3 declared categories ['a', 'b', 'c']",
                           extra={"n_items_single_rating": 0, "p_a": pytest.approx(2 / 3),
                                  "p_e": pytest.approx(1 / 4)})


def test_ac1_with_missing_ratings_by_hand():
    # q = 2: p_e = (3/5)(2/5) + (2/5)(3/5) = 12/25; AC1 = (2/3 - 12/25) / (13/25) = (14/75)(25/13) = 14/39
    r = gwet_ac1(MISSING)
    check(r, "gwet_ac1", pytest.approx(14 / 39), None, None, 4, 3,
                           f"Gwet 2008 AC1 over {CATS}; missing ratings: p_a over items with >=2 ratings, "
                           "category shares over items with >=1 rating (Gwet 2014 / irrCAC)",
                           extra={"n_items_single_rating": 1, "p_a": pytest.approx(2 / 3),
                                  "p_e": pytest.approx(12 / 25)})


def test_ac1_one_category_is_one_and_edges():
    one = gwet_ac1([["x", "x"], ["x", "x"]], ci=True)
    assert one == StatResult(
        "gwet_ac1", 1.0, None, None, 2, 2,
        "Gwet 2008 AC1 over 1 observed categories ['x']; only one category in use and no other declared: chance "
        "agreement is undefined (q=1), the coefficient is taken as its limit 1 (irrCAC convention)",
        extra={"n_items_single_rating": 0, "p_a": 1.0, "p_e": None})
    # with a second category declared, p_e = 0 and AC1 = (1 - 0) / 1 = 1, computed (not the q=1 convention)
    two = gwet_ac1([["x", "x"], ["x", "x"]], categories=["x", "y"])
    assert two == StatResult("gwet_ac1", 1.0, None, None, 2, 2, "Gwet 2008 AC1 over 2 declared categories ['x', 'y']",
                             extra={"n_items_single_rating": 0, "p_a": 1.0, "p_e": 0.0})
    assert gwet_ac1([]).note == "undefined: no items"
    assert gwet_ac1([["a", None], [None, "b"]]) == StatResult(
        "gwet_ac1", None, None, None, 0, 2, "undefined: no item was rated by two or more raters (no overlap)",
        extra={"n_items_single_rating": 2})


def test_ac_undefined_when_chance_agreement_is_one():
    # all-ones weight matrix: T_w = 4, p_e = 4 / 2 * (1/4 + 1/4) = 1 -> 0/0
    r = gwet_ac2([[1, 2], [2, 1]], weights=np.ones((2, 2)))
    assert r == StatResult("gwet_ac2_weighted", None, None, None, 2, 2,
                           "undefined: chance agreement is 1, coefficient is 0/0",
                           extra={"n_items_single_rating": 0, "p_a": 1.0, "p_e": 1.0})


def test_ac1_interval_defaults():
    data = COMPLETE * 2
    assert gwet_ac1(data).ci_low is None
    boot = gwet_ac1(data, ci=True)
    assert boot == gwet_ac1(data, ci=True, n_boot=1000, seed=0)
    assert boot != gwet_ac1(data, ci=True, n_boot=1000, seed=1)
    assert boot.ci_low < 1 / 3 < boot.ci_high
    assert boot.note.endswith("; 95% percentile bootstrap over items, 1000 resamples, seed 0")


# ---- Gwet's AC2 ----------------------------------------------------------------------------------------------
# numbers 1..3, 3 raters: (1,1,1), (1,1,2), (3,3,3), (1,3,3)
ORDINAL = [[1, 1, 1], [1, 1, 2], [3, 3, 3], [1, 3, 3]]
# shares pi: 1 = (1 + 2/3 + 0 + 1/3)/4 = 1/2, 2 = (1/3)/4 = 1/12, 3 = (1 + 2/3)/4 = 5/12
# sum_k pi_k (1 - pi_k) = 36/144 + 11/144 + 35/144 = 41/72


def test_ac2_linear_by_hand():
    # linear weights by value (span 2): w12 = w23 = 1/2, w13 = 0; T_w = 3 + 2 (1/2 + 0 + 1/2) = 5
    # item (1,1,2): k=1: 2 (2 + 1/2 - 1) = 3, k=2: 1 (2/2 + 1 - 1) = 1 -> 4/6; (1,3,3): 0 + 2 (2 - 1) = 2 -> 2/6
    # p_a = (1 + 2/3 + 1 + 1/3) / 4 = 3/4; p_e = 5/6 * 41/72 = 205/432; AC2 = (119/432) / (227/432) = 119/227
    r = gwet_ac2(ORDINAL)
    check(r, "gwet_ac2_linear", pytest.approx(119 / 227), None, None, 4, 3,
                           "Gwet 2014 (Handbook, 4th ed., ch. 3) AC2 with linear weights by value over "
                           "3 observed categories [1, 2, 3]",
                           extra={"n_items_single_rating": 0, "p_a": pytest.approx(3 / 4),
                                  "p_e": pytest.approx(205 / 432)})
    assert gwet_ac2(ORDINAL, "linear") == r


def test_ac2_quadratic_by_hand():
    # w12 = w23 = 1 - 1/4 = 3/4, w13 = 0; T_w = 3 + 2 (3/4 + 3/4) = 6 -> factor 6/6 = 1; p_e = 41/72
    # item (1,1,2): k=1: 2 (2 + 3/4 - 1) = 7/2, k=2: 1 (3/2 + 1 - 1) = 3/2 -> 5/6; (1,3,3) 1/3
    # p_a = (1 + 5/6 + 1 + 1/3) / 4 = 19/24; AC2 = (57/72 - 41/72) / (31/72) = 16/31
    r = gwet_ac2(ORDINAL, weights="quadratic")
    assert r.metric == "gwet_ac2_quadratic" and r.value == pytest.approx(16 / 31)
    assert r.extra == {"n_items_single_rating": 0, "p_a": pytest.approx(19 / 24), "p_e": pytest.approx(41 / 72)}
    assert r.note.startswith("Gwet 2014 (Handbook, 4th ed., ch. 3) AC2 with quadratic weights by value")


def test_ac2_text_labels_by_position_and_matrix():
    # the same table as ordered text labels lo < mid < hi: positions 0, 1, 2 give the same linear weights
    text = [[{1: "lo", 2: "mid", 3: "hi"}[v] for v in row] for row in ORDINAL]
    r = gwet_ac2(text, categories=["lo", "mid", "hi"])
    assert r.value == pytest.approx(119 / 227)
    assert r.note == ("Gwet 2014 (Handbook, 4th ed., ch. 3) AC2 with linear weights by category position over "
                      "3 declared categories ['lo', 'mid', 'hi']")
    w = [[1, 0.5, 0], [0.5, 1, 0.5], [0, 0.5, 1]]
    m = gwet_ac2(ORDINAL, weights=w)
    assert m.metric == "gwet_ac2_weighted" and m.value == pytest.approx(119 / 227)
    assert "AC2 with weights from the user's matrix over" in m.note


def test_ac2_errors():
    with pytest.raises(ValueError, match=r"^weights must be 'linear' or 'quadratic', got 'cubic'$"):
        gwet_ac2(ORDINAL, weights="cubic")
    with pytest.raises(ValueError, match=r"^Gwet's AC2 \(linear weights\) needs ordered categories, but the ratings "
                                         r"are text labels; pass categories=\[\.\.\.\] in scale order$"):
        gwet_ac2([["lo", "hi"], ["hi", "hi"]])
    with pytest.raises(ValueError, match=r"^weight matrix is 2x2 but there are 3 categories$"):
        gwet_ac2(ORDINAL, weights=np.eye(2))


def test_ac2_interval_defaults():
    boot = gwet_ac2(ORDINAL * 2, ci=True)
    assert boot == gwet_ac2(ORDINAL * 2, "linear", ci=True, n_boot=1000, seed=0)
    assert boot != gwet_ac2(ORDINAL * 2, ci=True, seed=1)
    assert boot.ci_low < 119 / 227 < boot.ci_high


# ---- percent agreement and unanimity -------------------------------------------------------------------------
# (a,a,b): 1 agreeing pair of 3; (a,a,a): 3 of 3; (b,-,-): one rating, ignored; (a,b,-): 0 of 1
PAIRS = [["a", "a", "b"], ["a", "a", "a"], ["b", None, None], ["a", "b", None]]


def test_percent_agreement_every_field_by_hand():
    r = percent_agreement(PAIRS)
    check(
        r, "percent_agreement", pytest.approx((1 / 3 + 1 + 0) / 3), None, None, 3, 3,
        "mean over items with >=2 ratings of the share of agreeing rater pairs among all pairs of the item's ratings "
        "(pairwise); with 2 raters = share of items where both agree; 1 items with fewer than 2 ratings ignored",
        extra={"n_items_total": 4, "n_items_fewer_than_2": 1})
    full = percent_agreement(PAIRS[:2])
    assert full.note.endswith("with 2 raters = share of items where both agree")
    assert full.value == pytest.approx(2 / 3)


def test_unanimity_every_field_by_hand():
    r = unanimity_rate(PAIRS)
    check(r, "unanimity_rate", pytest.approx(1 / 3), None, None, 3, 3,
                           "share of items with >=2 ratings whose ratings are all the same; "
                           "1 items with fewer than 2 ratings ignored",
                           extra={"n_items_total": 4, "n_items_fewer_than_2": 1, "n_unanimous": 1})
    assert unanimity_rate(PAIRS[:2]).note == "share of items with >=2 ratings whose ratings are all the same"


@pytest.mark.parametrize("fn", [percent_agreement, unanimity_rate])
def test_pairwise_undefined_and_intervals(fn):
    name = fn.__name__
    assert fn([]) == StatResult(name, None, None, None, 0, 0, "undefined: no items",
                                extra={"n_items_total": 0, "n_items_fewer_than_2": 0})
    assert fn([["a", None], [None, "b"]]) == StatResult(
        name, None, None, None, 0, 2, "undefined: no item was rated by two or more raters (no overlap)",
        extra={"n_items_total": 2, "n_items_fewer_than_2": 2})
    data = [["a", "a"], ["a", "b"], ["b", "b"], ["a", "b"]]  # both: 2 of 4 items agree
    assert fn(data).value == 0.5 and fn(data).ci_low is None
    boot = fn(data, ci=True)
    assert boot == fn(data, ci=True, n_boot=1000, seed=0) != fn(data, ci=True, seed=1)
    assert 0 <= boot.ci_low < 0.5 < boot.ci_high <= 1
    assert boot.note.endswith("; 95% percentile bootstrap over items, 1000 resamples, seed 0")
