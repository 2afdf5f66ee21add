"""The alternative annotator test (alt-test): may an LLM judge replace the human annotators?

Calderon, Reichart and Dror, "The Alternative Annotator Test for LLM-as-a-Judge: How to Statistically Justify
Replacing Human Annotators with LLMs", ACL 2025 (arXiv 2501.10970), section 3 (the procedure) and its FAQ (the
choice of epsilon, the number of instances and annotators).

The procedure, for one LLM judge f and human annotators h_1..h_m (m >= 3 recommended):

1. Leave one annotator h_j out. On every instance i that h_j annotated (and that the LLM and at least one other
   human annotated), score how well the LLM and h_j each align with the REMAINING annotators H_i[-j]:
   S(f, i, j) and S(h_j, i, j) with an alignment scoring function: ``accuracy`` (share of the remaining
   annotators giving the same label; classification) or ``neg_rmse`` (minus the root mean squared difference to
   the remaining annotators' values; scores and other numbers).
2. Indicators: W^f_ij = 1 when S(f, i, j) >= S(h_j, i, j), W^h_ij = 1 when S(h_j, i, j) >= S(f, i, j) (a tie
   counts for both). The advantage probabilities rho^f_j and rho^h_j are their means over h_j's instances.
3. Test H0_j: rho^h_j - rho^f_j >= epsilon against H1_j: rho^h_j - rho^f_j < epsilon with a one-sided paired
   t-test on d_ij = W^h_ij - W^f_ij (t = (mean d - epsilon) / (sd(d) / sqrt(n_j)), n_j - 1 degrees of freedom,
   p = P(T <= t)). epsilon is the cost-benefit margin: the human must beat the LLM by more than epsilon to stay.
   The paper's rule of thumb: 0.2 for expert annotators, 0.15 for skilled ones, 0.1 for crowd-workers.
4. Correct the m p-values with the Benjamini-Yekutieli procedure at level q (0.05), which controls the false
   discovery rate under any dependence between the tests (the tests share instances).
5. Winning rate omega = (rejected H0_j) / m. The LLM passes, i.e. may replace the annotators, when omega >= 0.5.
6. Average advantage probability rho = mean_j rho^f_j: how often the LLM aligns at least as well as a random
   annotator; it ranks several judges (higher is better) whether or not they pass.

The t-test assumes roughly normal means: the FAQ asks for at least 30 instances per annotator
(``min_instances``); annotators with fewer are left out and named in the result.

Two rules (``rule``):

- ``"paper"`` (the default): the procedure above as the paper recommends it: at least ``min_humans`` (3) human
  annotators, each tested with the t-test on ``min_instances`` (30) or more instances, the others left out.
- ``"small-sample"``: what the authors say to do with fewer, in the FAQ of the paper (appendix) and of the README of
  their code, github.com/nitaytech/AltTest. (a) "What if I have fewer than 30 annotated instances per annotator?
  ... the normality assumption of the t-test does not hold, so a non-parametric test, such as the Wilcoxon
  signed-rank test, should be used instead": an annotator with fewer than ``min_instances`` instances (and at least
  one) is tested by the one-sided Wilcoxon signed-rank test of H0: the differences d_ij are centred at epsilon or
  above, against H1: below (one_sided_wilcoxon), instead of being left out; annotators with ``min_instances`` or
  more keep the t-test, and the Benjamini-Yekutieli correction and omega run over all of them. (b) "While our
  procedure can be used with two annotators, we believe it is less reliable": two annotators suffice (their code's
  alt_test drops instances with fewer than two annotators and sets no minimum number of annotators); each is then
  compared with the other alone, without a consensus. The result says which rule ran (AltTestResult.rule, note) and
  which test each annotator had (AnnotatorComparison.test).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Mapping

import numpy as np

__all__ = ["AltTestResult", "AnnotatorComparison", "alt_test", "benjamini_yekutieli", "one_sided_paired_t",
           "one_sided_wilcoxon", "RULES", "SMALL_SAMPLE", "SMALL_SAMPLE_MIN_HUMANS", "SCORING", "DEFAULT_EPSILON",
           "DEFAULT_Q", "DEFAULT_MIN_INSTANCES", "DEFAULT_MIN_HUMANS"]

DEFAULT_EPSILON = 0.2      # the paper's recommendation for expert annotators (FAQ: 0.15 skilled, 0.1 crowd)
DEFAULT_Q = 0.05           # FDR level of the Benjamini-Yekutieli correction
DEFAULT_MIN_INSTANCES = 30  # per left-out annotator, for the t-test's normal approximation (FAQ)
DEFAULT_MIN_HUMANS = 3     # the paper recommends three or more human annotators
SMALL_SAMPLE = "small-sample"  # the authors' FAQ rule for fewer instances or annotators (module doc)
RULES = ("paper", SMALL_SAMPLE)
SMALL_SAMPLE_MIN_HUMANS = 2  # FAQ: "can be used with two annotators"; their code needs two per instance


def _accuracy(pred: Any, others: list[Any]) -> float:
    return sum(1 for o in others if o == pred) / len(others)


def _neg_rmse(pred: Any, others: list[Any]) -> float:
    return -math.sqrt(sum((float(pred) - float(o)) ** 2 for o in others) / len(others))


SCORING: dict[str, Callable[[Any, list[Any]], float]] = {"accuracy": _accuracy, "neg_rmse": _neg_rmse}


@dataclass(frozen=True)
class AnnotatorComparison:
    """The LLM against one left-out annotator.

    n_instances: instances compared; rho_llm / rho_human: advantage probabilities (shares in [0, 1]);
    t_stat / p_value: the one-sided paired t-test of H0: rho_human - rho_llm >= epsilon (p None when the annotator
    was left out); p_adjusted: the Benjamini-Yekutieli adjusted p-value; rejected: H0 rejected after the
    correction (the LLM "wins" against this annotator); note: why left out, or the degenerate-variance convention;
    test: "t" (one-sided paired t-test), "wilcoxon" (one-sided Wilcoxon signed-rank test, the small-sample rule;
    t_stat then holds W+, the sum of the ranks of the positive d - epsilon) or "" (left out).
    """

    annotator: str
    n_instances: int
    rho_llm: float | None
    rho_human: float | None
    t_stat: float | None
    p_value: float | None
    p_adjusted: float | None = None
    rejected: bool = False
    note: str = ""
    test: str = ""


@dataclass(frozen=True)
class AltTestResult:
    """Outcome of the alt-test for one LLM judge.

    winning_rate: omega in [0, 1] (None when undefined, see note); passed: omega >= 0.5 (None when undefined);
    advantage_probability: rho, the mean of rho_llm over the annotators tested; comparisons: one per human
    annotator (tested or left out); n_humans_tested; epsilon, q, scoring: the settings used; rule: "paper" or
    "small-sample" (module doc), also named in note.
    """

    judge: str
    winning_rate: float | None
    passed: bool | None
    advantage_probability: float | None
    n_humans_tested: int
    n_instances: int
    epsilon: float
    q: float
    scoring: str
    comparisons: list[AnnotatorComparison] = field(default_factory=list)
    note: str = ""
    rule: str = "paper"


def one_sided_paired_t(d: np.ndarray, epsilon: float) -> tuple[float | None, float]:
    """(t, p) of H0: mean(d) >= epsilon against H1: mean(d) < epsilon (one-sample t-test on paired differences).

    d: the paired differences W^h - W^f (n >= 2 values). t = (mean - epsilon) / (sd / sqrt(n)) with the sample
    sd (ddof 1); p = Student-t cdf(t, n - 1) (scipy.stats.t). When every d is the same (sd 0) the statistic is
    -inf (p 0) if the mean is below epsilon and +inf (p 1) otherwise; t is then returned as None.
    Raises ValueError for fewer than 2 differences.
    """
    from scipy import stats

    d = np.asarray(d, dtype=np.float64)
    n = d.size
    if n < 2:
        raise ValueError(f"a paired t-test needs at least 2 instances, got {n}")
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd <= 1e-12:
        return None, (0.0 if mean < epsilon else 1.0)
    t = (mean - epsilon) / (sd / math.sqrt(n))
    return t, float(stats.t.cdf(t, df=n - 1))


def one_sided_wilcoxon(d: np.ndarray, epsilon: float) -> tuple[float, float]:
    """(W+, p) of the one-sided Wilcoxon signed-rank test (Wilcoxon 1945, "Individual comparisons by ranking
    methods", Biometrics Bulletin 1(6)) of H0: the differences d are symmetric about a centre at epsilon or above,
    against H1: below epsilon; the alt-test's small-sample rule (module doc).

    x_i = d_i - epsilon; zeros are dropped (Wilcoxon's own treatment, scipy's zero_method="wilcox"); the |x_i| are
    ranked, ties at their mid-rank; W+ = the sum of the ranks of the positive x_i. p = P(W+ <= observed) under H0,
    exact: each x_i's sign is + or - with probability 1/2 independently given the ranks, so W+ is a sum of
    independent (rank or 0) terms, whose distribution is counted exactly over doubled mid-ranks (integers). The
    alt-test's d_ij take the values -1, 0 and 1 only, so ties are the rule: the exact count keeps them (the normal
    approximation and tie-free exact tables do not). No non-zero x_i: (0, 1.0), nothing against H0. d: 1 or more
    values. Raises ValueError for no values.
    """
    x = np.asarray(d, dtype=np.float64) - epsilon
    if x.size == 0:
        raise ValueError("a signed-rank test needs at least 1 instance")
    x = x[np.abs(x) > 1e-12]
    if x.size == 0:
        return 0.0, 1.0
    from scipy.stats import rankdata

    twice = np.rint(2 * rankdata(np.abs(x))).astype(int)  # doubled mid-ranks: integers
    observed = int(twice[x > 0].sum())
    counts = np.zeros(int(twice.sum()) + 1, dtype=object)  # exact integer counts of each doubled W+
    counts[0] = 1
    for r in twice:
        shifted = np.zeros_like(counts)
        shifted[r:] = counts[:counts.size - r]
        counts = counts + shifted
    p = float(sum(counts[:observed + 1]) / 2 ** int(x.size))
    return observed / 2, p


def benjamini_yekutieli(p_values: list[float], q: float = DEFAULT_Q) -> tuple[list[bool], list[float]]:
    """Which null hypotheses the Benjamini-Yekutieli step-up procedure rejects at FDR level q, and the adjusted
    p-values (Benjamini and Yekutieli 2001, "The control of the false discovery rate in multiple testing under
    dependency", theorem 1.3).

    With m p-values sorted p_(1) <= ... <= p_(m) and c(m) = 1 + 1/2 + ... + 1/m, reject H_(1)..H_(k) for the
    largest k with p_(k) <= k q / (m c(m)). Adjusted p_(i) = min_{k >= i} min(1, m c(m) p_(k) / k).
    Returns ([rejected], [adjusted]) in the input order. An empty list gives ([], []).
    """
    m = len(p_values)
    if m == 0:
        return [], []
    p = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    cm = float(np.sum(1.0 / np.arange(1, m + 1)))
    ranks = np.arange(1, m + 1)
    sorted_p = p[order]
    below = sorted_p <= ranks * q / (m * cm)
    k = int(np.max(np.nonzero(below)[0]) + 1) if below.any() else 0
    adj_sorted = np.minimum.accumulate((np.minimum(1.0, m * cm * sorted_p / ranks))[::-1])[::-1]
    rejected = np.zeros(m, dtype=bool)
    rejected[order[:k]] = True
    adjusted = np.empty(m)
    adjusted[order] = adj_sorted
    return rejected.tolist(), adjusted.tolist()


def alt_test(humans: Mapping[str, Mapping[Hashable, Any]], llm: Mapping[Hashable, Any], *, judge: str = "LLM",
             scoring: str = "accuracy", epsilon: float = DEFAULT_EPSILON, q: float = DEFAULT_Q,
             min_instances: int = DEFAULT_MIN_INSTANCES, min_humans: int | None = None,
             rule: str = "paper") -> AltTestResult:
    """Run the alt-test (module doc) for one LLM judge, by `rule` ("paper" or "small-sample", module doc).

    humans: annotator name -> {instance id: annotation}; llm: {instance id: annotation}. Missing annotations
    are simply absent (None values are dropped). scoring: "accuracy" (labels compared for equality) or
    "neg_rmse" (numbers). Instances count only when the LLM and at least two humans annotated them.
    Undefined (winning_rate None, reason in note): fewer than ``min_humans`` human annotators on such
    instances (default DEFAULT_MIN_HUMANS, 3; SMALL_SAMPLE_MIN_HUMANS, 2, by the small-sample rule), or no
    annotator with at least ``min_instances`` instances (by the paper's rule). By the paper's rule annotators under
    ``min_instances`` are left out of the correction and of omega and rho, and listed with the reason; by the
    small-sample rule they are tested by one_sided_wilcoxon (those with at least 1 instance).
    Raises ValueError for an unknown scoring name or rule, or epsilon outside [0, 1).
    """
    if rule not in RULES:
        raise ValueError(f"unknown alt-test rule {rule!r} (choose one of {', '.join(RULES)})")
    small = rule == SMALL_SAMPLE
    if min_humans is None:
        min_humans = SMALL_SAMPLE_MIN_HUMANS if small else DEFAULT_MIN_HUMANS
    if scoring not in SCORING:
        raise ValueError(f"unknown alignment scoring {scoring!r} (choose one of {', '.join(SCORING)})")
    if not 0 <= epsilon < 1:
        raise ValueError(f"epsilon must be in [0, 1), got {epsilon}")
    score = SCORING[scoring]
    llm = {i: v for i, v in llm.items() if v is not None}
    hum = {h: {i: v for i, v in anns.items() if v is not None and i in llm} for h, anns in humans.items()}
    by_instance: dict[Hashable, list[str]] = {}
    for h, anns in hum.items():
        for i in anns:
            by_instance.setdefault(i, []).append(h)
    usable = {i for i, hs in by_instance.items() if len(hs) >= 2}
    names = sorted(h for h, anns in hum.items() if any(i in usable for i in anns))
    n_inst = len(usable)
    base = dict(judge=judge, epsilon=epsilon, q=q, scoring=scoring, n_instances=n_inst, rule=rule)
    if len(names) < min_humans:
        return AltTestResult(winning_rate=None, passed=None, advantage_probability=None, n_humans_tested=0,
                             note=f"undefined: {len(names)} human annotators share instances with the LLM and "
                                  f"another annotator; the alt-test needs at least {min_humans}"
                                  + (" (small-sample rule)" if small else ""), **base)
    tested: list[AnnotatorComparison] = []
    skipped: list[AnnotatorComparison] = []
    for h in names:
        insts = [i for i in hum[h] if i in usable]
        w_f, w_h = [], []
        for i in insts:
            others = [hum[o][i] for o in by_instance[i] if o != h]
            s_f, s_h = score(llm[i], others), score(hum[h][i], others)
            w_f.append(1.0 if s_f >= s_h else 0.0)
            w_h.append(1.0 if s_h >= s_f else 0.0)
        d = np.array(w_h) - np.array(w_f)
        if small and 1 <= len(insts) < max(min_instances, 2):
            w, p = one_sided_wilcoxon(d, epsilon)
            tested.append(AnnotatorComparison(h, len(insts), float(np.mean(w_f)), float(np.mean(w_h)), w, p,
                                              note=f"Wilcoxon signed-rank test: {len(insts)} instances, fewer than "
                                                   f"{max(min_instances, 2)} (small-sample rule)", test="wilcoxon"))
            continue
        if len(insts) < max(min_instances, 2):
            skipped.append(AnnotatorComparison(h, len(insts), None, None, None, None,
                                               note=f"left out: {len(insts)} instances, fewer than "
                                                    f"{max(min_instances, 2)}"))
            continue
        t, p = one_sided_paired_t(d, epsilon)
        note = "" if t is not None else "all differences equal (sd 0): p set to 0 if mean < epsilon, else 1"
        tested.append(AnnotatorComparison(h, len(insts), float(np.mean(w_f)), float(np.mean(w_h)), t, p,
                                          note=note, test="t"))
    if not tested:
        return AltTestResult(winning_rate=None, passed=None, advantage_probability=None, n_humans_tested=0,
                             comparisons=skipped,
                             note=f"undefined: no annotator has {max(min_instances, 2)} or more instances shared "
                                  "with the LLM and another annotator", **base)
    rejected, adjusted = benjamini_yekutieli([c.p_value for c in tested], q)
    tested = [AnnotatorComparison(c.annotator, c.n_instances, c.rho_llm, c.rho_human, c.t_stat, c.p_value,
                                  adj, rej, c.note, c.test) for c, rej, adj in zip(tested, rejected, adjusted)]
    omega = sum(rejected) / len(tested)
    rho = float(np.mean([c.rho_llm for c in tested]))
    note = (f"alt-test (Calderon et al. 2025): {scoring} alignment, epsilon {epsilon:g}, one-sided paired t-tests, "
            f"Benjamini-Yekutieli at q {q:g}; passes when the winning rate is >= 0.5")
    if skipped:
        note += f"; {len(skipped)} annotators with fewer than {max(min_instances, 2)} instances left out"
    if small:
        n_w = sum(1 for c in tested if c.test == "wilcoxon")
        note += (f"; the authors' small-sample rule (Calderon et al. 2025, FAQ): {n_w} of {len(tested)} annotators "
                 f"with fewer than {max(min_instances, 2)} instances tested by a one-sided Wilcoxon signed-rank "
                 "test instead of the t-test")
        if len(tested) < DEFAULT_MIN_HUMANS:
            note += (f"; {len(tested)} annotators, fewer than the {DEFAULT_MIN_HUMANS} the paper recommends: each "
                     "is compared with the others alone, without a consensus (the FAQ: usable, less reliable)")
    return AltTestResult(winning_rate=omega, passed=omega >= 0.5, advantage_probability=rho,
                         n_humans_tested=len(tested), comparisons=tested + skipped, note=note, **base)
