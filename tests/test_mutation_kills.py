"""Tests written against mutants that survived a mutmut run (CONTRIBUTING.md, "Mutation testing"): every field of a result
is checked against values worked out by hand, so that a changed name, note, count, default or boundary shows."""
from __future__ import annotations

import pytest

from reports.stats import rates
from reports.stats.result import StatResult


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


# ---- Cohen's kappa (Cohen 1960, 1968) --------------------------------------------------------------------
def test_cohen_kappa_every_field_by_hand():
    from reports.stats import cohen_kappa

    # pairs (a,a) (a,b) (b,b) (b,b), one item dropped; table [[1,1],[0,2]]: p_o = 3/4; rater 1 a: 1/2, rater 2
    # a: 1/4 -> p_e = 1/2 * 1/4 + 1/2 * 3/4 = 1/2; kappa = (3/4 - 1/2) / (1/2) = 1/2
    r = cohen_kappa([["a", "a"], ["a", "b"], ["b", "b"], ["b", "b"], [None, "a"]])
    assert r == StatResult("cohen_kappa", 0.5, None, None, 4, 2,
                           "Cohen's kappa (Cohen 1960) over 2 observed categories ['a', 'b']; 1 items missing "
                           "a rating dropped",
                           extra={"n_items_total": 5, "n_items_dropped_missing": 1, "table": [[1, 1], [0, 2]],
                                  "categories": ["a", "b"]})


def test_weighted_kappa_by_hand():
    from reports.stats import cohen_kappa

    data = [[1, 2], [2, 2], [3, 3], [1, 1]]
    # rater 1 margins (1/2, 1/4, 1/4), rater 2 (1/4, 1/2, 1/4).
    # linear w = 1 - |k-l|/2: p_o = (1 + .5 + 1 + 1)/4 = .875, p_e = .5625 -> .3125/.4375 = 5/7
    lin = cohen_kappa(data, weights="linear")
    assert lin.metric == "cohen_kappa_linear" and lin.value == pytest.approx(5 / 7)
    assert lin.note == "Cohen's kappa (Cohen 1968, linear weights by value) over 3 observed categories [1, 2, 3]"
    assert lin.extra["table"] == [[1, 1, 0], [0, 1, 0], [0, 0, 1]] and lin.n_items == 4
    # quadratic w = 1 - (|k-l|/2)^2: p_o = .9375, p_e = .6875 -> .25/.3125 = 0.8
    quad = cohen_kappa(data, weights="quadratic")
    assert quad.metric == "cohen_kappa_quadratic" and quad.value == pytest.approx(0.8)
    # an explicit agreement-weight matrix (identity = unweighted): named cohen_kappa_weighted
    import numpy as np

    ident = cohen_kappa(data, weights=np.eye(3))
    plain = cohen_kappa(data)
    # unweighted: p_o = 3/4, p_e = 1/2*1/4 + 1/4*1/2 + 1/4*1/4 = 5/16 -> (12/16 - 5/16) / (11/16) = 7/11
    assert plain.value == pytest.approx(7 / 11) and ident.value == pytest.approx(7 / 11)
    assert ident.metric == "cohen_kappa_weighted"


def test_cohen_kappa_undefined_cases_by_hand():
    from reports.stats import cohen_kappa

    assert cohen_kappa([["a"], ["b"]]) == StatResult(
        "cohen_kappa", None, None, None, 0, 1, "undefined: only one rater; Cohen's kappa needs two")
    with pytest.raises(ValueError, match=r"^Cohen's kappa needs exactly 2 rater columns, got 3; use fleiss_kappa"):
        cohen_kappa([["a", "b", "a"]])
    one = cohen_kappa([["a", None], ["b", None]])
    assert one == StatResult("cohen_kappa", None, None, None, 0, 1,
                             "undefined: only one rater gave ratings; Cohen's kappa needs two",
                             extra={"n_items_total": 2, "n_items_dropped_missing": 2})
    apart = cohen_kappa([["a", None], [None, "b"]])
    assert (apart.value, apart.n_items, apart.n_raters) == (None, 0, 2)
    assert apart.note == "undefined: no item was rated by both raters (no overlap)"
    single = cohen_kappa([["a", "a"], ["b", None]])
    assert (single.value, single.n_items, single.note) == (
        None, 1, "undefined: fewer than 2 items were rated by both raters")
    same = cohen_kappa([["a", "a"], ["a", "a"]])
    assert same.value is None and same.n_items == 2 and same.extra["table"] == [[2]]
    assert same.note == ("undefined: chance agreement is 1 (both raters put every item in the same single "
                         "category 'a'), so kappa is 0/0")


def test_cohen_kappa_interval_defaults():
    from reports.stats import cohen_kappa

    data = [["a", "a"], ["a", "b"], ["b", "b"], ["b", "b"], ["a", "a"], ["b", "a"], ["a", "a"], ["b", "b"]]
    assert cohen_kappa(data).ci_low is None
    boot = cohen_kappa(data, ci=True)
    assert boot == cohen_kappa(data, ci=True, n_boot=1000, seed=0)
    assert boot.ci_low < boot.value < boot.ci_high


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


# ---- compute_agreement: the dispatcher of `prefval stats agreement` --------------------------------------
@pytest.mark.usefixtures("intervals_from_few_items")
def test_compute_agreement_passes_every_argument_to_the_named_statistic():
    import reports.stats as st

    data = [[1, 2, 2], [2, 2, 3], [3, 3, 3], [1, 1, 2], [2, 3, 3], [1, 1, 1]]
    pair = [row[:2] for row in data]
    cats = [1, 2, 3, 4]  # 4 is declared but unused: it changes the weighted statistics
    kw = dict(ci=True, n_boot=200, seed=5)
    expected = {
        "percent_agreement": st.percent_agreement(data, **kw),
        "unanimity_rate": st.unanimity_rate(data, **kw),
        "fleiss_kappa": st.fleiss_kappa(data, categories=cats, **kw),
        "krippendorff_alpha": st.krippendorff_alpha(data, level="ordinal", categories=cats, **kw),
        "gwet_ac1": st.gwet_ac1(data, categories=cats, **kw),
        "gwet_ac2_linear": st.gwet_ac2(data, weights="linear", categories=cats, **kw),
        "gwet_ac2_quadratic": st.gwet_ac2(data, weights="quadratic", categories=cats, **kw),
    }
    for metric, want in expected.items():
        got = st.compute_agreement(metric, data, categories=cats, level="ordinal", **kw)
        assert got == want, metric
        assert got.ci_low is not None or got.value is None, metric
    for metric, w in (("cohen_kappa", None), ("cohen_kappa_linear", "linear"), ("cohen_kappa_quadratic", "quadratic")):
        assert st.compute_agreement(metric, pair, categories=cats, **kw) == st.cohen_kappa(
            pair, weights=w, categories=cats, **kw)
    # the level reaches alpha, and the defaults are nominal, no interval, 1000 resamples, seed 0
    assert st.compute_agreement("krippendorff_alpha", data).value != st.compute_agreement(
        "krippendorff_alpha", data, level="interval").value
    assert st.compute_agreement("krippendorff_alpha", data) == st.krippendorff_alpha(data, level="nominal")
    assert st.compute_agreement("fleiss_kappa", data).ci_low is None
    assert st.compute_agreement("fleiss_kappa", data, ci=True) == st.fleiss_kappa(data, ci=True, n_boot=1000,
                                                                                  seed=0)
    assert st.AGREEMENT_METRICS == ("percent_agreement", "cohen_kappa", "cohen_kappa_linear",
                                    "cohen_kappa_quadratic", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1",
                                    "gwet_ac2_linear", "gwet_ac2_quadratic", "unanimity_rate")
    for bad in ("cohen_kappa_cubic", "kappa", ""):
        with pytest.raises(ValueError, match=r"^unknown metric .*; choose one of percent_agreement, cohen_kappa, "):
            st.compute_agreement(bad, pair)
