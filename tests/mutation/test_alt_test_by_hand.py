"""The alternative annotator test (Calderon et al. 2025) on three instances worked by hand, the Benjamini-Yekutieli
step-up at its boundary, the paired t-test's degenerate cases, and every undefined case and error
(CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import math

import pytest

from reports.stats.alt_test import AnnotatorComparison, alt_test, benjamini_yekutieli, one_sided_paired_t

HUMANS = {"h1": {1: "a", 2: "a", 3: "b"}, "h2": {1: "a", 2: "b", 3: "b"}, "h3": {1: "a", 2: "b", 3: "b", 4: "a"}}
LLM = {1: "a", 2: "b", 3: "a", 5: "b", 6: None}


def t2_cdf(t):
    """Student t with 2 degrees of freedom: F(t) = 1/2 + t / (2 sqrt(t^2 + 2))."""
    return 0.5 + t / (2 * math.sqrt(t * t + 2))


def test_three_instances_by_hand():
    # leave out h1: others (h2, h3) give a,a / b,b / b,b; S_f = 1, 1, 0 and S_h1 = 1, 0, 1 -> d = 0, -1, 1:
    #   mean 0, sd 1, t = (0 - 0.2) / (1 / sqrt 3); rho_llm = rho_h = 2/3
    # leave out h2 (and h3 alike): others a,a / a,b / b,b: S_f = 1, 1/2, 0; S_h = 1, 1/2, 1 -> d = 0, 0, 1:
    #   mean 1/3, sd sqrt(1/3), t = (1/3 - 0.2) / (sqrt(1/3) / sqrt 3) = 0.4; rho_llm 2/3, rho_h 1
    r = alt_test(HUMANS, LLM, judge="J", min_instances=2)
    t1 = -0.2 * math.sqrt(3)
    expect = [("h1", t1, 2 / 3), ("h2", 0.4, 1.0), ("h3", 0.4, 1.0)]
    assert [c.annotator for c in r.comparisons] == ["h1", "h2", "h3"]
    for c, (name, t, rho_h) in zip(r.comparisons, expect):
        assert (c.n_instances, c.rho_llm, c.rho_human, c.note) == (3, pytest.approx(2 / 3), pytest.approx(rho_h), "")
        assert c.t_stat == pytest.approx(t) and c.p_value == pytest.approx(t2_cdf(t))
        assert c.p_adjusted == 1.0 and c.rejected is False  # m c(m) p / k > 1 for all three
    assert (r.judge, r.winning_rate, r.passed, r.n_humans_tested, r.n_instances) == ("J", 0.0, False, 3, 3)
    assert r.advantage_probability == pytest.approx(2 / 3)
    assert (r.epsilon, r.q, r.scoring) == (0.2, 0.05, "accuracy")
    assert r.note == ("alt-test (Calderon et al. 2025): accuracy alignment, epsilon 0.2, one-sided paired t-tests, "
                      "Benjamini-Yekutieli at q 0.05; passes when the winning rate is >= 0.5")


def test_undefined_cases_and_errors():
    two = alt_test({"h1": HUMANS["h1"], "h2": HUMANS["h2"]}, LLM, min_instances=2)
    assert (two.winning_rate, two.passed, two.advantage_probability, two.n_humans_tested, two.n_instances) == (
        None, None, None, 0, 3)
    assert two.note == ("undefined: 2 human annotators share instances with the LLM and another annotator; the "
                        "alt-test needs at least 3")
    assert alt_test({"h1": HUMANS["h1"], "h2": HUMANS["h2"]}, LLM, min_instances=2, min_humans=2).n_humans_tested == 2
    few = alt_test(HUMANS, LLM)
    assert few.winning_rate is None and few.note == ("undefined: no annotator has 30 or more instances shared with "
                                                     "the LLM and another annotator")
    assert few.comparisons[0] == AnnotatorComparison("h1", 3, None, None, None, None,
                                                     note="left out: 3 instances, fewer than 30")
    assert alt_test(HUMANS, LLM, min_instances=0).comparisons[0].n_instances == 3  # at least 2 all the same
    part = alt_test({**HUMANS, "h4": {1: "a"}}, LLM, min_instances=2)
    assert part.n_humans_tested == 3 and part.note.endswith("; 1 annotators with fewer than 2 instances left out")
    assert part.comparisons[-1].note == "left out: 1 instances, fewer than 2"
    with pytest.raises(ValueError, match=r"^unknown alignment scoring 'f1' \(choose one of accuracy, neg_rmse\)$"):
        alt_test(HUMANS, LLM, scoring="f1")
    for eps in (1, -0.1):
        with pytest.raises(ValueError, match=rf"^epsilon must be in \[0, 1\), got {eps}$"):
            alt_test(HUMANS, LLM, epsilon=eps)


def test_neg_rmse_scoring_by_hand():
    humans = {"a": {1: 1, 2: 4}, "b": {1: 3, 2: 4}, "c": {1: 2, 2: 5}}
    r = alt_test(humans, {1: 2, 2: 4}, scoring="neg_rmse", min_instances=2)
    # leave out a: others (3, 2) / (4, 5): LLM 2 -> -sqrt((1 + 0)/2), a 1 -> -sqrt((4 + 1)/2): LLM closer;
    # item 2: LLM 4 -> -sqrt((0 + 1)/2), a 4 the same: a tie counts for both -> W_f = 1, 1; W_h = 0, 1
    assert r.comparisons[0].rho_llm == 1.0 and r.comparisons[0].rho_human == 0.5
    assert r.scoring == "neg_rmse" and "neg_rmse alignment" in r.note


def test_paired_t_degenerate_and_errors():
    assert one_sided_paired_t([0, 0, 0], 0.2) == (None, 0.0)
    assert one_sided_paired_t([1, 1], 0.2) == (None, 1.0)
    assert one_sided_paired_t([0.2, 0.2], 0.2) == (None, 1.0)  # mean = epsilon: H0 kept
    t, p = one_sided_paired_t([0, 1], 0.0)
    assert t == pytest.approx(0.5 / (math.sqrt(0.5) / math.sqrt(2))) and p == pytest.approx(0.5 + math.atan(t) / math.pi)
    with pytest.raises(ValueError, match=r"^a paired t-test needs at least 2 instances, got 1$"):
        one_sided_paired_t([1], 0.2)


def test_benjamini_yekutieli_step_up():
    # m = 4, c(m) = 25/12, thresholds k q / (m c) = k * 0.006: 0.006, 0.012, 0.018, 0.024
    rej, adj = benjamini_yekutieli([0.02, 0.001, 0.5, 0.01])
    assert rej == [False, True, False, True]
    # adjusted m c p_(k) / k, then the running minimum from the largest: 1/120, 1/24, 1/18, 1
    assert adj == pytest.approx([0.02 * 25 / 9, 0.001 * 25 / 3, 1.0, 0.01 * 25 / 6])
    # step-up: p_(2) under its threshold rejects p_(1) too even though p_(1) is above its own
    rej, _ = benjamini_yekutieli([0.03, 0.02], q=0.05)  # m 2, c 1.5: thresholds 1/60, 1/30
    assert rej == [True, True]
    rej, _ = benjamini_yekutieli([0.02, 0.04], q=0.05)
    assert rej == [False, False]
    assert benjamini_yekutieli([]) == ([], [])
    assert benjamini_yekutieli([0.006], q=0.006) == ([True], [pytest.approx(0.006)])  # m = 1: p itself
    assert benjamini_yekutieli([0.0061], q=0.006)[0] == [False]
