"""Correlations (against scipy) and the rate helpers: votes, accuracy vs chance, win/loss/tie, MR/AAR."""
import numpy as np
import pytest
from scipy import stats as sps

from reports.stats import (aar_minus_mr, accuracy_vs_chance, appropriate_application_rate,
                           at_least_one_correct, kendall, majority_vote, misapplication_rate, pearson,
                           spearman, strict_majority, win_loss_tie)


@pytest.mark.parametrize("fn,ref", [(pearson, sps.pearsonr), (spearman, sps.spearmanr),
                                    (kendall, sps.kendalltau)])
@pytest.mark.slow
def test_correlations_match_scipy_and_drop_missing(fn, ref):
    rng = np.random.default_rng(0)
    x = rng.integers(1, 6, 40).astype(float)
    y = x + rng.normal(0, 1.2, 40)
    xs, ys = list(x), list(y)
    xs[3], ys[7], ys[9] = None, float("nan"), ""
    res = fn(xs, ys, ci=True, n_boot=300)
    keep = [i for i in range(40) if i not in (3, 7, 9)]
    r, p = ref(x[keep], y[keep])
    assert res.value == pytest.approx(r, abs=1e-12)
    assert res.p_value == pytest.approx(p, rel=1e-9)
    assert res.n_items == 37 and res.extra["n_pairs_dropped_missing"] == 3
    assert res.ci_low <= res.value <= res.ci_high
    assert "p_value" in res.to_json_dict()


def test_correlation_undefined_cases():
    assert "constant" in pearson([1, 2, 3, 4], [5, 5, 5, 5]).note
    assert pearson([1, 2, 3, 4], [5, 5, 5, 5]).value is None
    assert "fewer than 3" in spearman([1, 2], [2, 1]).note
    assert kendall([1, None, 3], [1, 2, None]).value is None
    with pytest.raises(ValueError, match="same length"):
        pearson([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="not numeric"):
        pearson([1, 2, "x"], [1, 2, 3])


def test_majority_votes():
    assert majority_vote(["a", "b", "a"]) == "a"
    assert majority_vote(["a", "b"]) is None  # tie
    assert majority_vote(["a", "b", "b", "a", "c"]) is None
    assert majority_vote([None, None]) is None
    assert majority_vote(["a", "b", "c"]) is None
    assert majority_vote(["a", "b", "c", "c"]) == "c"  # plurality
    assert strict_majority(["a", "b", "c", "c"]) is None  # 2 of 4 is not more than half
    assert strict_majority(["a", "a", None]) == "a"
    assert strict_majority(["a", "a", "b"]) == "a"
    assert strict_majority([]) is None


def test_at_least_one_correct():
    res = at_least_one_correct([[True, False, False], [False, False, None], [None, None, None],
                                [0, 1, 0]])
    assert res.value == pytest.approx(2 / 3) and res.n_items == 3
    assert at_least_one_correct([[None]]).value is None
    with pytest.raises(ValueError, match="True/False"):
        at_least_one_correct([["yes"]])


def test_accuracy_vs_chance_binomtest():
    correct = [True] * 56 + [False] * 44
    res = accuracy_vs_chance(correct, 0.25, ci=True, n_boot=500)
    assert res.value == 0.56
    assert res.p_value == pytest.approx(sps.binomtest(56, 100, 0.25).pvalue)
    assert res.extra["p_value_greater"] == pytest.approx(
        sps.binomtest(56, 100, 0.25, alternative="greater").pvalue)
    assert res.extra == {**res.extra, "chance": 0.25, "n_correct": 56}
    assert res.ci_low < 0.56 < res.ci_high
    with pytest.raises(ValueError, match="chance"):
        accuracy_vs_chance(correct, 1.5)


def test_win_loss_tie_realpref_shape():
    outcomes = ["win"] * 69 + ["loss"] * 13 + ["tie"] * 18
    res = win_loss_tie(outcomes, seed=1)
    assert [res[k].value for k in ("win", "loss", "tie")] == pytest.approx([0.69, 0.13, 0.18])
    for r in res.values():
        assert r.ci_low <= r.value <= r.ci_high and 0 <= r.ci_low and r.ci_high <= 1
    assert res["win"].ci_low > 0.55  # clearly above the loss rate
    with pytest.raises(ValueError, match="'draw'"):
        win_loss_tie(["win", "draw"])


def test_misapplication_and_appropriate_application():
    gold = [0, 0, 0, 0, 1, 1, 1, None]
    judge = [1, 0, 0, 0, 1, 1, 0, 1]
    mr = misapplication_rate(judge, gold, ci=True, n_boot=300)
    aar = appropriate_application_rate(judge, gold)
    gap = aar_minus_mr(judge, gold, ci=True, n_boot=300)
    assert mr.value == pytest.approx(1 / 4) and aar.value == pytest.approx(2 / 3)
    assert gap.value == pytest.approx(2 / 3 - 1 / 4)
    assert mr.n_items == 7 and mr.extra["n_gold_0"] == 4
    assert gap.ci_low <= gap.value <= gap.ci_high
    # undefined without g=0 (resp. g=1) items
    assert misapplication_rate([1, 0], [1, 1]).value is None
    assert "g=0" in misapplication_rate([1, 0], [1, 1]).note
    assert appropriate_application_rate([1, 0], [0, 0]).value is None
    assert aar_minus_mr([1, 0], [0, 0]).value is None
