"""The alt-test's small-sample rule (Calderon, Reichart and Dror 2025, FAQ; README of github.com/nitaytech/AltTest):
fewer than 30 instances per annotator -> a one-sided Wilcoxon signed-rank test instead of the t-test; two
annotators are enough. Hand-worked values, a reference written from the authors' procedure, and the answer's label
(reports.stats.replacement, reports.judge_vs_human). Issue 25, part 2."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from reports.stats.alt_test import alt_test, one_sided_wilcoxon
from reports.stats.replacement import CANNOT_TELL, YES, replacement_verdict
from tests.test_judge_vs_human import judged_db  # noqa: F401 (a fixture)


@pytest.mark.parametrize("d, eps, w, p", [
    # x = d - eps = -1.2 five times: no positive x, W+ = 0; P(W+ <= 0) = P(all five signs negative) = 1/32
    ([-1] * 5, 0.2, 0.0, 1 / 32),
    # x = 0.8, -1.2, -1.2: ranks of |x| 1, 2.5, 2.5 (a tie); W+ = 1; the 8 sign patterns give W+ = 0, 1, 2.5,
    # 2.5, 3.5, 3.5, 5, 6, two of them <= 1
    ([1, -1, -1], 0.2, 1.0, 2 / 8),
    # x = 0.8, 0.8, -0.2: ranks 2.5, 2.5, 1; W+ = 5 of a largest 6; W+ <= 5: all but "all positive" -> 7/8
    ([1, 1, 0], 0.2, 5.0, 7 / 8),
    # epsilon 0, d all 0: every x is 0 and dropped: nothing against H0
    ([0, 0, 0], 0.0, 0.0, 1.0),
])
def test_wilcoxon_by_hand(d, eps, w, p):
    assert one_sided_wilcoxon(np.array(d), eps) == (pytest.approx(w), pytest.approx(p))


def test_wilcoxon_against_every_sign_pattern_and_scipy():
    from scipy import stats

    rng = np.random.default_rng(7)
    for n in (4, 9, 12):
        d = rng.choice([-1, 0, 1], size=n)
        x = d - 0.15
        ranks = stats.rankdata(np.abs(x))
        observed = ranks[x > 0].sum()
        hits = sum(1 for signs in itertools.product((0, 1), repeat=n) if ranks @ np.array(signs) <= observed + 1e-9)
        w, p = one_sided_wilcoxon(d, 0.15)
        assert w == pytest.approx(observed) and p == pytest.approx(hits / 2 ** n)
        ref = stats.wilcoxon(x, alternative="less", zero_method="wilcox", method=stats.PermutationMethod())
        assert p == pytest.approx(ref.pvalue)
    with pytest.raises(ValueError):
        one_sided_wilcoxon(np.array([]), 0.2)


# two annotators, six items
H1 = dict(enumerate("aaabba"))
H2 = dict(enumerate("aabbab"))
LLM = dict(enumerate("aabbaa"))


def test_two_annotators_six_items_by_hand():
    # leave out h1 (the rest: h2 alone): S_f = 1,1,1,1,1,0; S_h1 = 1,1,0,1,0,0 -> W_f all 1 (item 5 a tie),
    #   W_h = 1,1,0,1,0,1 -> d = 0,0,-1,0,-1,0: x = d - 0.2 all negative -> W+ = 0, p = 1/2^6
    r = alt_test({"h1": H1, "h2": H2}, LLM, rule="small-sample")
    c1, c2 = r.comparisons
    assert (c1.annotator, c1.n_instances, c1.test) == ("h1", 6, "wilcoxon")
    assert (c1.rho_llm, c1.rho_human) == (pytest.approx(1.0), pytest.approx(4 / 6))
    assert (c1.t_stat, c1.p_value) == (0.0, pytest.approx(1 / 64))
    # leave out h2 (the rest: h1 alone): S_f = 1,1,0,1,0,1; S_h2 = 1,1,0,1,0,0 -> d = 0,0,0,0,0,-1 -> W+ = 0, p 1/64
    assert (c2.rho_llm, c2.rho_human, c2.t_stat, c2.p_value) == (
        pytest.approx(1.0), pytest.approx(5 / 6), 0.0, pytest.approx(1 / 64))
    # Benjamini-Yekutieli, m = 2, c(2) = 1.5: thresholds 0.05 k / 3 = 0.0167, 0.0333; both p 0.015625 pass k = 2;
    # adjusted min(1, 3 p / 2) = 0.0234375 for both
    assert c1.rejected and c2.rejected
    assert c1.p_adjusted == pytest.approx(0.0234375) and c2.p_adjusted == pytest.approx(0.0234375)
    assert (r.winning_rate, r.passed, r.advantage_probability, r.n_humans_tested) == (1.0, True, 1.0, 2)
    assert r.rule == "small-sample"
    assert "small-sample rule" in r.note and "2 of 2 annotators" in r.note and "without a consensus" in r.note
    # the paper's rule: undefined with two annotators, and each is left out below 30 with three
    paper = alt_test({"h1": H1, "h2": H2}, LLM)
    assert paper.winning_rate is None and paper.rule == "paper"
    with pytest.raises(ValueError, match="rule"):
        alt_test({"h1": H1, "h2": H2}, LLM, rule="lenient")


def _reference(humans, llm, eps, q=0.05, min_instances=30):
    """The authors' procedure (their alt_test: instances with >= 2 annotators and an LLM label, leave one out,
    indicators with ties for both, BY at q, omega and rho), with the FAQ's test choice: scipy's ttest_1samp
    (alternative 'less') from min_instances instances, scipy's Wilcoxon signed-rank test (exact sign flips) below.
    Written here from the paper and the FAQ, to check reports.stats.alt_test against."""
    from scipy import stats

    per_item = {}
    for h, anns in humans.items():
        for i in anns:
            per_item.setdefault(i, []).append(h)
    keep = {i for i, hs in per_item.items() if len(hs) >= 2 and i in llm}
    pvals, rhos = {}, {}
    for h in humans:
        insts = [i for i in humans[h] if i in keep]
        wf, wh = [], []
        for i in insts:
            rest = [humans[o][i] for o in per_item[i] if o != h]
            sf = np.mean([llm[i] == a for a in rest])
            sh = np.mean([humans[h][i] == a for a in rest])
            wf.append(int(sf >= sh))
            wh.append(int(sh >= sf))
        d = np.array(wh) - np.array(wf)
        if len(insts) >= min_instances:
            pvals[h] = stats.ttest_1samp(d, eps, alternative="less").pvalue
        else:
            pvals[h] = stats.wilcoxon(d - eps, alternative="less", zero_method="wilcox",
                                      method=stats.PermutationMethod()).pvalue
        rhos[h] = np.mean(wf)
    names = list(pvals)
    p = np.array([pvals[h] for h in names])
    m = len(p)
    cm = sum(1 / k for k in range(1, m + 1))
    order = np.argsort(p)
    k = max((j + 1 for j in range(m) if p[order[j]] <= (j + 1) * q / (m * cm)), default=0)
    return k / m, float(np.mean(list(rhos.values()))), pvals


def test_small_sample_rule_matches_the_reference_on_a_mixed_case():
    rng = np.random.default_rng(3)
    truth = rng.choice(["a", "b", "c"], size=40)
    noisy = lambda p: [t if rng.random() > p else rng.choice(["a", "b", "c"]) for t in truth]  # noqa: E731
    humans = {"ann": dict(enumerate(noisy(0.2))), "bo": dict(enumerate(noisy(0.3))),
              "cy": {i: v for i, v in enumerate(noisy(0.2)) if i < 12}}  # 12 instances: Wilcoxon
    llm = dict(enumerate(noisy(0.15)))
    r = alt_test(humans, llm, epsilon=0.15, rule="small-sample")
    omega, rho, pvals = _reference(humans, llm, 0.15)
    assert {c.annotator: c.test for c in r.comparisons} == {"ann": "t", "bo": "t", "cy": "wilcoxon"}
    for c in r.comparisons:
        assert c.p_value == pytest.approx(pvals[c.annotator])
    assert r.winning_rate == pytest.approx(omega) and r.advantage_probability == pytest.approx(rho)
    assert "1 of 3 annotators" in r.note and "without a consensus" not in r.note
    # the paper's rule leaves cy out and tests ann and bo alone
    paper = alt_test(humans, llm, epsilon=0.15)
    assert [c.note for c in paper.comparisons if c.p_value is None] == ["left out: 12 instances, fewer than 30"]


def test_the_answer_says_it_rests_on_the_small_sample_rule():
    # two people agreeing on 19 of 20 items (labels alternate), the judge as the first: every d is 0 or a tie
    first = {i: "ab"[i % 2] for i in range(20)}
    second = {**first, 7: "a"}
    humans, judge = {"p1": first, "p2": second}, dict(first)
    small = alt_test(humans, judge, judge="J", rule="small-sample")
    v = replacement_verdict(small, humans, judge, seed=1, n_boot=300)
    assert (v.answer, v.reason, v.rule) == (YES, "test", "small-sample")
    assert v.why.startswith("by the authors' small-sample rule, not the paper's main procedure")
    assert "2 of 2 people with fewer than 30 items tested by a one-sided Wilcoxon signed-rank test" in v.why
    assert "without a consensus" in v.why
    # the paper's rule on the same labels: cannot tell, two people of the three it needs, 30 items each
    paper = alt_test(humans, judge, judge="J")
    v = replacement_verdict(paper, humans, judge, seed=1, n_boot=300)
    assert (v.answer, v.reason, v.need_people) == (CANNOT_TELL, "people", 1)
    assert v.need_items == {"p1": 10, "p2": 10}
    # small-sample rule, one person: still cannot tell, a person missing
    one = alt_test({"p1": first}, judge, judge="J", rule="small-sample")
    v = replacement_verdict(one, {"p1": first}, judge, seed=1, n_boot=300)
    assert (v.answer, v.reason, v.need_people) == (CANNOT_TELL, "people", 1)
    assert "by the authors' small-sample rule" in v.why


def test_report_section_labels_the_rule():
    from reports.judge_vs_human import judge_validation
    from tests.test_judge_vs_human import make_data, table

    first = [i % 2 == 0 for i in range(20)]
    second = list(first)
    second[7] = not second[7]
    answers = {"p1": [{"reflected": v} for v in first], "p2": [{"reflected": v} for v in second],
               "judge": [{"reflected": v} for v in first]}
    data = make_data("judge_validation", answers, {"p1": "human", "p2": "human", "judge": "llm"})
    sec = judge_validation(data, rule="small-sample")
    rows = table(sec.figures, "alt_test_annotators").rows
    assert [r[9] for r in rows] == ["Wilcoxon signed-rank (small-sample rule)"] * 2
    assert [r[10] for r in rows] == ["yes", "yes"]
    assert "small-sample rule" in table(sec.figures, "alt_test").note
    assert any("by the authors' small-sample rule" in s for s in sec.sentences)
    assert sec.figures.figure("alt_test:judge:reflected").extra["rule"] == "small-sample"
    default = judge_validation(data)
    assert table(default.figures, "alt_test").rows[0][6] == "cannot tell yet"
    assert not any("small-sample" in s for s in default.sentences)


def test_prefval_report_alt_test_rule(judged_db, capsys):
    import json

    from annotator.cli import main

    db = judged_db  # tests.test_judge_vs_human's: 3 people on 9 items, judges a and b
    assert main(["report", "jvs", "--format", "json", "--alt-test-rule", "small-sample", "--db", db]) == 0
    fs = json.loads(capsys.readouterr().out)["studies"][0]["figure_set"]
    alt = next(f for f in fs["figures"] if f["key"] == "alt_test:judge-a:reflected")
    assert alt["extra"]["rule"] == "small-sample" and alt["value"] is not None  # 9 < 30: Wilcoxon, not left out
    assert alt["extra"]["why"].startswith("by the authors' small-sample rule")
    rows = next(t for t in fs["tables"] if t["key"] == "alt_test_annotators")["rows"]
    assert {r[9] for r in rows} == {"Wilcoxon signed-rank (small-sample rule)"}
    assert main(["report", "jvs", "--format", "json", "--db", db]) == 0
    fs = json.loads(capsys.readouterr().out)["studies"][0]["figure_set"]
    alt = next(f for f in fs["figures"] if f["key"] == "alt_test:judge-a:reflected")
    assert alt["extra"]["rule"] == "paper" and alt["value"] is None  # every person left out below 30
