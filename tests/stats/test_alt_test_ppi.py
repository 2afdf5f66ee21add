"""The alternative annotator test and prediction-powered inference: hand-worked cases and cross-checks against
independent implementations (scipy.stats.ttest_1samp, statsmodels' fdr_by, a hand-written PPI mean)."""
import math

import numpy as np
import pytest
from scipy import stats

from reports.stats.alt_test import alt_test, benjamini_yekutieli, one_sided_paired_t
from reports.stats.ppi import classical_mean, ppi_mean

# three annotators, four instances (binary labels), and an LLM; worked out in the comments below
H = {"h1": {1: 1, 2: 1, 3: 0, 4: 0}, "h2": {1: 1, 2: 0, 3: 0, 4: 1}, "h3": {1: 1, 2: 1, 3: 0, 4: 1}}
LLM = {1: 1, 2: 1, 3: 0, 4: 1}


def test_hand_worked_case():
    # h1 left out (others h2, h3): instance 4 -> others (1, 1): LLM 1 scores 1, h1 0 scores 0; the rest tie.
    #   d = W^h - W^f = [0, 0, 0, -1]: mean -0.25, sd 0.5, t = (-0.25 - 0.2) / (0.5 / 2) = -1.8, 3 df
    # h2 left out: the same with instance 2 -> d = [0, -1, 0, 0], t = -1.8
    # h3 left out: every instance ties, d = [0, 0, 0, 0]: sd 0 and mean 0 < 0.2 -> p = 0
    # BY, m = 3, c(3) = 11/6: thresholds k * 0.05 / 5.5; p sorted (0, 0.085, 0.085) -> only h3 rejected
    res = alt_test(H, LLM, epsilon=0.2, min_instances=4)
    by = {c.annotator: c for c in res.comparisons}
    p18 = stats.t.cdf(-1.8, 3)
    assert by["h1"].t_stat == pytest.approx(-1.8) and by["h1"].p_value == pytest.approx(p18)
    assert by["h2"].t_stat == pytest.approx(-1.8)
    assert by["h3"].t_stat is None and by["h3"].p_value == 0.0
    assert (by["h1"].rho_llm, by["h1"].rho_human) == (1.0, 0.75)
    assert by["h3"].rho_human == 1.0
    assert [by[h].rejected for h in ("h1", "h2", "h3")] == [False, False, True]
    assert res.winning_rate == pytest.approx(1 / 3) and res.passed is False
    assert res.advantage_probability == 1.0 and res.n_humans_tested == 3 and res.n_instances == 4
    # a larger margin: t = (-0.25 - 0.9) / 0.25 = -4.6, p = 0.0097 <= 3 * 0.05 / 5.5 -> all rejected, passes
    res = alt_test(H, LLM, epsilon=0.9, min_instances=4)
    assert res.winning_rate == 1.0 and res.passed is True
    assert {c.annotator: c.t_stat for c in res.comparisons}["h1"] == pytest.approx(-4.6)


def test_t_test_matches_scipy():
    rng = np.random.default_rng(0)
    for _ in range(5):
        d = rng.integers(-1, 2, 40).astype(float)
        t, p = one_sided_paired_t(d, 0.15)
        ref = stats.ttest_1samp(d, 0.15, alternative="less")
        assert t == pytest.approx(ref.statistic) and p == pytest.approx(ref.pvalue)


def test_benjamini_yekutieli_matches_statsmodels():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(1)
    for m in (1, 3, 7, 20):
        p = np.concatenate([rng.uniform(0, 0.01, m // 2), rng.uniform(0, 1, m - m // 2)]).tolist()
        rej, adj = benjamini_yekutieli(p, 0.05)
        ref_rej, ref_adj, _, _ = multipletests(p, alpha=0.05, method="fdr_by")
        assert rej == ref_rej.tolist()
        assert adj == pytest.approx(ref_adj.tolist())
    assert benjamini_yekutieli([]) == ([], [])


def _reference_alt_test(humans, llm, eps, q, neg_rmse=False):
    """An independent, loop-by-loop version of the procedure: scipy's t-test and statsmodels' BY."""
    from statsmodels.stats.multitest import multipletests

    def align(x, others):
        if neg_rmse:
            return -math.sqrt(sum((x - o) ** 2 for o in others) / len(others))
        return sum(x == o for o in others) / len(others)

    pvals, rhos = [], []
    for h in sorted(humans):
        d, wf = [], []
        for i, v in humans[h].items():
            others = [humans[o][i] for o in humans if o != h and i in humans[o]]
            if i not in llm or not others:
                continue
            sf, sh = align(llm[i], others), align(v, others)
            d.append(int(sh >= sf) - int(sf >= sh))
            wf.append(int(sf >= sh))
        pvals.append(stats.ttest_1samp(d, eps, alternative="less").pvalue)
        rhos.append(np.mean(wf))
    rej = multipletests(pvals, alpha=q, method="fdr_by")[0]
    return rej.mean(), float(np.mean(rhos))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("neg_rmse", [False, True])
def test_alt_test_matches_an_independent_implementation(seed, neg_rmse):
    rng = np.random.default_rng(seed)
    n, m = 80, 5
    truth = rng.integers(1, 6, n)
    humans = {}
    for k in range(m):
        noisy = np.where(rng.random(n) < 0.7, truth, rng.integers(1, 6, n))
        humans[f"h{k}"] = {i: int(noisy[i]) for i in range(n) if rng.random() > 0.15}
    llm = {i: int(truth[i] if rng.random() < 0.8 else rng.integers(1, 6)) for i in range(n)}
    res = alt_test(humans, llm, scoring="neg_rmse" if neg_rmse else "accuracy", epsilon=0.1)
    omega, rho = _reference_alt_test(humans, llm, 0.1, 0.05, neg_rmse)
    assert res.winning_rate == pytest.approx(omega)
    assert res.advantage_probability == pytest.approx(rho)
    assert res.passed == (omega >= 0.5)


def test_alt_test_undefined_and_left_out():
    two = {"h1": H["h1"], "h2": H["h2"]}
    res = alt_test(two, LLM, min_instances=2)
    assert res.winning_rate is None and res.passed is None and "at least 3" in res.note
    res = alt_test(H, LLM)  # 4 instances < 30
    assert res.winning_rate is None and "no annotator" in res.note
    assert all(c.p_value is None and "left out" in c.note for c in res.comparisons)
    with pytest.raises(ValueError, match="epsilon"):
        alt_test(H, LLM, epsilon=1.0)
    with pytest.raises(ValueError, match="scoring"):
        alt_test(H, LLM, scoring="f1")


def test_ppi_mean_matches_the_hand_computed_estimator_and_ppi_py():
    y = [1, 0, 1, 1]
    yhat = [1, 1, 1, 0]
    yhat_u = [1, 1, 0, 1, 1, 0]
    # theta = mean(yhat_u) - mean(yhat - y) = 2/3 - 0; var(yhat_u) = 2/9 over 6, var(y - yhat) = 1/2 over 4
    theta = 2 / 3
    se = math.sqrt((2 / 9) / 6 + 0.5 / 4)
    z = stats.norm.ppf(0.975)
    res = ppi_mean(y, yhat, yhat_u)
    assert res.value == pytest.approx(theta)
    assert res.ci_low == pytest.approx(theta - z * se) and res.ci_high == pytest.approx(theta + z * se)
    assert res.n_items == 10 and res.extra["n_labeled"] == 4 and res.extra["rectifier"] == 0


def test_ppi_corrects_a_biased_judge():
    rng = np.random.default_rng(3)
    yhat_u = rng.uniform(2, 5, 200)
    yhat = rng.uniform(2, 5, 30)
    y = yhat - 1.0  # the judge scores everything one point too high
    res = ppi_mean(y, yhat, yhat_u)
    # the rectifier has no spread: theta = mean(yhat_u) - 1, interval from the unlabelled part alone
    assert res.value == pytest.approx(yhat_u.mean() - 1)
    half = stats.norm.ppf(0.975) * yhat_u.std() / math.sqrt(200)
    assert res.ci_high - res.value == pytest.approx(half)
    judge_only = classical_mean(np.concatenate([yhat, yhat_u]))
    assert judge_only.value - res.value == pytest.approx(1.0, abs=0.2)
    assert not judge_only.ci_low <= res.value <= judge_only.ci_high


def test_ppi_undefined_without_enough_items():
    assert ppi_mean([1], [1], [0, 1]).value is None
    res = ppi_mean([1, 0], [1, 1], [])
    assert res.value is None and "judge alone" in res.note
    with pytest.raises(ValueError, match="same length"):
        ppi_mean([1, 0], [1], [0, 1])
    assert classical_mean([1]).value is None
