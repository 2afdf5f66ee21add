"""Correlations (against scipy) and the rate helpers: votes, accuracy vs chance, win/loss/tie, MR/AAR; and, written
against mutants that survived a mutmut run (CONTRIBUTING.md, "Mutation testing"), every field of their results
checked against values worked out by hand, so that a changed name, note, count, default or boundary shows."""
import numpy as np
import pytest
from scipy import stats as sps

from reports.stats import (aar_minus_mr, accuracy_vs_chance, appropriate_application_rate,
                           at_least_one_correct, kendall, majority_vote, misapplication_rate, pearson,
                           spearman, strict_majority, win_loss_tie)
from reports.stats import rates
from reports.stats.result import StatResult


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


# ---- at_least_one_correct (HorizonBench 5.3) ---------------------------------------------------------------
def test_at_least_one_correct_every_field_by_hand():
    # item 0: (1, 0, -) -> hit; item 1: (0, 0, 0) -> miss; item 2: nothing rated -> ignored; item 3: (0, 1) -> hit
    r = rates.at_least_one_correct([[1, 0, None], [0, 0, 0], [None, None, None], [False, True]])
    assert r == StatResult("at_least_one_correct", 2 / 3, None, None, 3, 3,
                           "share of rated items with at least one correct rating", extra={"n_any_correct": 2})


def test_at_least_one_correct_empty_and_bad_cells():
    assert rates.at_least_one_correct([[None, None]]) == StatResult(
        "at_least_one_correct", None, None, None, 0, 2, "undefined: no rated item")
    assert rates.at_least_one_correct([]) == StatResult(
        "at_least_one_correct", None, None, None, 0, 0, "undefined: no rated item")
    with pytest.raises(ValueError, match=r"^item 1: expected True/False \(or 1/0\), got 2$"):
        rates.at_least_one_correct([[1], [2]])


@pytest.mark.usefixtures("intervals_from_few_items")
def test_at_least_one_correct_interval_defaults():
    data = [[1, 0], [0, 0], [1, 1], [0, 1], [0, 0]]
    plain = rates.at_least_one_correct(data)
    assert plain.ci_low is None and plain.ci_high is None  # ci is off by default
    boot = rates.at_least_one_correct(data, ci=True)
    assert boot == rates.at_least_one_correct(data, ci=True, n_boot=1000, seed=0)  # documented defaults
    assert boot != rates.at_least_one_correct(data, ci=True, n_boot=1000, seed=1)
    assert 0 <= boot.ci_low < 3 / 5 < boot.ci_high <= 1
    every = rates.at_least_one_correct([[1], [True]], ci=True)
    assert (every.ci_low, every.ci_high) == (1.0, 1.0)  # every resample is all hits


# ---- accuracy_vs_chance (RealPref G.2) -------------------------------------------------------------------
def test_accuracy_vs_chance_every_field_by_hand():
    # 3 of 4 answered correct (None dropped), chance 1/4:
    # P(X >= 3) = C(4,3) (1/4)^3 (3/4) + (1/4)^4 = 12/256 + 1/256 = 13/256
    # two-sided (scipy's rule: outcomes no more likely than P(X=3) = 12/256): P(3) + P(4) = 13/256, since
    # P(0) = 81/256, P(1) = 108/256, P(2) = 54/256 are all more likely
    r = rates.accuracy_vs_chance([1, True, None, 0, 1], 0.25)
    assert r.metric == "accuracy_vs_chance" and r.value == 0.75
    assert (r.n_items, r.n_raters, r.ci_low, r.ci_high) == (4, 1, None, None)
    assert r.note == "accuracy over 4 items; exact binomial test against chance 0.25 (two-sided p)"
    assert r.extra == {"chance": 0.25, "n_correct": 3, "p_value_greater": pytest.approx(13 / 256)}
    assert r.p_value == pytest.approx(13 / 256)


def test_accuracy_vs_chance_two_sided_differs_from_one_sided():
    # 0 of 4 at chance 1/2: one-sided (greater) p = 1; two-sided p = P(0) + P(4) = 2/16
    r = rates.accuracy_vs_chance([0, 0, 0, 0], 0.5)
    assert r.value == 0.0 and r.extra["p_value_greater"] == 1.0 and r.p_value == pytest.approx(2 / 16)


@pytest.mark.usefixtures("intervals_from_few_items")
def test_accuracy_vs_chance_edges():
    assert rates.accuracy_vs_chance([None], 0.5) == StatResult(
        "accuracy_vs_chance", None, None, None, 0, 1, "undefined: no answered item",
        extra={"chance": 0.5, "n_correct": 0})
    for bad in (0, 1, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"^chance must be strictly between 0 and 1, got "):
            rates.accuracy_vs_chance([1], bad)
    with pytest.raises(ValueError, match=r"^item 2: expected True/False"):
        rates.accuracy_vs_chance([1, 0, "yes"], 0.5)
    data = [1, 0, 1, 1, 0, 1]
    assert rates.accuracy_vs_chance(data, 0.5).ci_low is None
    boot = rates.accuracy_vs_chance(data, 0.5, ci=True)
    assert boot == rates.accuracy_vs_chance(data, 0.5, ci=True, n_boot=1000, seed=0)
    assert boot.ci_low < 4 / 6 < boot.ci_high


# ---- win_loss_tie (RealPref G.1) -------------------------------------------------------------------------
def test_win_loss_tie_every_field_by_hand():
    out = rates.win_loss_tie(["win", " WIN ", "loss", None, "Tie", "win"], ci=False)
    assert list(out) == ["win", "loss", "tie"]
    assert out["win"] == StatResult("win", 3 / 5, None, None, 5, 1, "share of 'win' among 5 comparisons",
                                    extra={"count": 3})
    assert out["loss"] == StatResult("loss", 1 / 5, None, None, 5, 1, "share of 'loss' among 5 comparisons",
                                     extra={"count": 1})
    assert out["tie"] == StatResult("tie", 1 / 5, None, None, 5, 1, "share of 'tie' among 5 comparisons",
                                    extra={"count": 1})


@pytest.mark.usefixtures("intervals_from_few_items")
def test_win_loss_tie_defaults_and_edges():
    data = ["win", "loss", "win", "tie", "win", "loss"]
    boot = rates.win_loss_tie(data)  # the interval is on by default
    assert boot == rates.win_loss_tie(data, ci=True, n_boot=1000, seed=0)
    assert all(boot[k].ci_low is not None and boot[k].ci_low <= boot[k].value <= boot[k].ci_high for k in boot)
    assert rates.win_loss_tie([None]) == {k: StatResult(k, None, None, None, 0, 1, "undefined: no outcome")
                                          for k in ("win", "loss", "tie")}
    with pytest.raises(ValueError, match=r"^outcome 1: 'draw' is not one of 'win', 'loss', 'tie'$"):
        rates.win_loss_tie(["win", "draw"])


# ---- MR, AAR, AAR - MR (BenchPreS 3.3) -------------------------------------------------------------------
JUDGE = [1, 0, 1, 1, None, 0, 1]
GOLD = [0, 0, 1, 1, 1, 1, None]
# pairs kept: (1,0) (0,0) (1,1) (1,1) (0,1); g=0: 2 items, applied 1 -> MR 1/2; g=1: 3 items, applied 2 -> AAR 2/3
COUNTS = {"n_gold_0": 2, "n_gold_1": 3, "n_applied_gold_0": 1, "n_applied_gold_1": 2}


def test_rates_every_field_by_hand():
    assert rates.misapplication_rate(JUDGE, GOLD) == StatResult(
        "misapplication_rate", 1 / 2, None, None, 5, 1, "MR = P(z=1 | g=0)", extra=COUNTS)
    assert rates.appropriate_application_rate(JUDGE, GOLD) == StatResult(
        "appropriate_application_rate", 2 / 3, None, None, 5, 1, "AAR = P(z=1 | g=1)", extra=COUNTS)
    d = rates.aar_minus_mr(JUDGE, GOLD)
    assert d.metric == "aar_minus_mr" and d.value == pytest.approx(2 / 3 - 1 / 2) and d.note == "AAR - MR"
    assert (d.n_items, d.n_raters, d.extra) == (5, 1, COUNTS)


def test_rates_undefined_without_the_needed_gold_label():
    only1 = ([1, 0], [1, 1])
    counts = {"n_gold_0": 0, "n_gold_1": 2, "n_applied_gold_0": 0, "n_applied_gold_1": 1}
    assert rates.misapplication_rate(*only1) == StatResult(
        "misapplication_rate", None, None, None, 2, 1, "undefined: no item with gold label g=0", extra=counts)
    assert rates.appropriate_application_rate(*only1).value == 0.5
    assert rates.aar_minus_mr(*only1).note == "undefined: no item with gold label g=0"
    only0 = ([1, 0, 0], [0, 0, 0])
    assert rates.appropriate_application_rate(*only0).note == "undefined: no item with gold label g=1"
    assert rates.misapplication_rate(*only0).value == pytest.approx(1 / 3)
    assert rates.aar_minus_mr(*only0).note == "undefined: no item with gold label g=1"
    assert rates.aar_minus_mr([], []).note == "undefined: no item with gold label g=0 or g=1"
    assert rates.aar_minus_mr([], []).n_items == 0


def test_rates_errors_and_interval_defaults():
    with pytest.raises(ValueError, match=r"^judge and gold must have the same length, got 2 and 1$"):
        rates.misapplication_rate([1, 0], [1])
    with pytest.raises(ValueError, match=r"^judge item 1: expected"):
        rates.misapplication_rate([1, 5], [0, 0])
    with pytest.raises(ValueError, match=r"^gold item 0: expected"):
        rates.appropriate_application_rate([1], ["x"])
    j, g = [1, 0, 1, 0, 1, 1, 0, 1], [0, 0, 1, 1, 1, 0, 1, 1]
    for fn in (rates.misapplication_rate, rates.appropriate_application_rate, rates.aar_minus_mr):
        assert fn(j, g).ci_low is None
        boot = fn(j, g, ci=True)
        assert boot == fn(j, g, ci=True, n_boot=1000, seed=0)
        assert boot.ci_low <= boot.value <= boot.ci_high


# ---- majority rules --------------------------------------------------------------------------------------
def test_majorities_by_hand():
    assert rates.strict_majority(["a", "a", "b"]) == "a"  # 2 of 3 > 1/2
    assert rates.strict_majority(["a", "a", "b", "b"]) is None  # 2 of 4 is not more than half
    assert rates.strict_majority(["a", None, "b", "a"]) == "a"  # missing ignored: 2 of 3
    assert rates.strict_majority([None, ""]) is None
    assert rates.majority_vote(["a", "b", "b", "c"]) == "b"
    assert rates.majority_vote(["a", "b"]) is None and rates.majority_vote([]) is None


# ---- correlations ----------------------------------------------------------------------------------------
X, Y = [1, 2, None, 3, 4], [1, 3, 7, 2, 4]  # the third pair is dropped


def test_correlations_every_field_by_hand():
    from reports.stats import kendall, pearson, spearman

    # deviations x (-1.5, -.5, .5, 1.5), y (-1.5, .5, -.5, 1.5): r = 4 / sqrt(5 * 5) = 0.8; t = 0.8 sqrt(2) / 0.6
    # with 2 df: two-sided p = 1 - t / sqrt(t^2 + 2) = 1 - 0.8 = 0.2
    dropped = {"n_pairs_dropped_missing": 1}
    r = pearson(X, Y)
    assert (r.metric, r.value, r.p_value) == ("pearson", pytest.approx(0.8), pytest.approx(0.2))
    assert (r.ci_low, r.ci_high, r.n_items, r.n_raters, r.extra) == (None, None, 4, 2, dropped)
    assert r.note == ("Pearson product-moment r, two-sided p from scipy.stats over 4 pairs; 1 pairs with a "
                      "missing value dropped")
    # no ties: ranks are the values, rho = 0.8 and the same t test
    rho = spearman(X, Y)
    assert (rho.metric, rho.value, rho.p_value) == ("spearman", pytest.approx(0.8), pytest.approx(0.2))
    assert rho.note.startswith("Spearman rank rho (ties averaged), two-sided p from scipy.stats over 4 pairs")
    # Kendall: 5 concordant, 1 discordant pair of 6 -> tau = 2/3; exact null over the 24 orders of 4: one
    # discordant pair or fewer, or five or more, in 1 + 3 + 3 + 1 = 8 -> p = 1/3
    tau = kendall(X, Y)
    assert (tau.metric, tau.value, tau.p_value) == ("kendall", pytest.approx(2 / 3), pytest.approx(1 / 3))
    assert tau.note.startswith("Kendall tau-b, two-sided p") and tau.extra == dropped


def test_correlations_undefined_and_errors():
    from reports.stats import kendall, pearson, spearman

    for fn, name in ((pearson, "pearson"), (spearman, "spearman"), (kendall, "kendall")):
        assert fn([1, 2, None], [1, 2, 3]) == StatResult(name, None, None, None, 2, 2,
                                                         "undefined: fewer than 3 complete pairs (2)",
                                                         extra={"n_pairs_dropped_missing": 1})
        assert fn([1, 1, 1], [1, 2, 3]).note == "undefined: x is constant, correlation is 0/0"
        assert fn([1, 2, 3], [5, 5, 5]).note == "undefined: y is constant, correlation is 0/0"
        assert fn([1, 2, 3], [3, 1, 2]).n_items == 3  # three pairs are enough
        with pytest.raises(ValueError, match=r"^x and y must have the same length, got 2 and 3$"):
            fn([1, 2], [1, 2, 3])
        with pytest.raises(ValueError, match=r"^pair 1: \(2, 'b'\) is not numeric$"):
            fn([1, 2, 3], [1, "b", 3])


@pytest.mark.slow
def test_correlation_interval_defaults():
    from reports.stats import kendall, pearson, spearman

    x = [1, 2, 3, 4, 5, 6, 7, 8]
    y = [2, 1, 4, 3, 6, 5, 8, 7]
    for fn in (pearson, spearman, kendall):
        assert fn(x, y).ci_low is None
        boot = fn(x, y, ci=True)
        assert boot == fn(x, y, ci=True, n_boot=1000, seed=0)
        assert boot != fn(x, y, ci=True, n_boot=1000, seed=3)
        assert boot.ci_low < boot.value <= boot.ci_high <= 1
