"""May this LLM judge replace the people? One answer, yes / no / cannot tell yet, with why.

The answer rests on the alternative annotator test (reports.stats.alt_test; Calderon, Reichart and Dror, "The
Alternative Annotator Test for LLM-as-a-Judge", ACL 2025, arXiv 2501.10970, section 3) and is given only when
what the test rests on holds. The rule, checked in this order (the first that fails gives the answer):

1. The test's own conditions (the paper's FAQ, also in the README of github.com/nitaytech/AltTest): at least
   MIN_PEOPLE = 3 people ("with only two, the procedure simply checks whether the LLM aligns more with one
   annotator than the other, lacking a consensus signal"), each with at least MIN_ITEMS = 30 instances, i.e.
   items that the judge, the person and at least one other person labelled ("to ensure the normality assumption
   of the t-test holds, you should have at least 30 instances"; with fewer the paper says to use a Wilcoxon
   signed-rank test, which reports.stats.alt_test does not run). Every person the test ran on must have 30 (a
   run with ``--alt-test-min-items`` below 30 gives its winning rate, never an answer). When they do not hold:
   CANNOT TELL, naming how many people have enough items, each short person's count and how many more items
   they need (people who labelled too few items, whose items the judge did not label, or that no other person
   labelled), and how many more people are needed.

2. The people agree beyond chance (the FLOOR). The FAQ asks to "report a measure of reliability for the human
   annotators ... to ensure that the annotators are sufficiently reliable": the alt-test asks whether the judge
   represents the people's consensus, and people who agree no better than chance have none. Their agreement is
   measured on the test's instances by a chance-corrected coefficient with a 95% percentile bootstrap interval
   over items (reports.stats.bootstrap, seed = the study's): Fleiss' kappa for labels (Fleiss 1971, Psychol.
   Bull. 76(5); missing ratings as in Gwet 2014, reports.stats.fleiss) and Krippendorff's alpha with the
   interval metric for 1..5 scores (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"; squared
   differences, as the quadratic-weighted kappa of the pair table and the alt-test's -RMSE alignment). Both are
   0 at chance agreement (Fleiss 1971: kappa = 0 when the observed agreement is the one expected by chance;
   Krippendorff 2011: alpha = 0 is the absence of reliability), so the floor is: the interval's lower bound must
   be above 0 (FLOOR = 0.0), i.e. agreement beyond chance at the 95% level, not just observed. At or below
   it, or undefined: CANNOT TELL, whatever the winning rate (winning or losing against people who agree at
   chance says nothing about the judge).
   Why not a published size threshold: Krippendorff's alpha >= 0.667 (Krippendorff 2004, "Content Analysis",
   2nd ed., ch. 11, p. 241) is the level for drawing tentative conclusions from the data themselves; the
   alt-test's authors run their test on people below it (their simulation's default inter-annotator agreement is
   0.48) and the people of the papers prefval serves are too (HorizonBench section 5.3: Fleiss' kappa
   0.37-0.51), so it would refuse every study those papers ran.
   Landis and Koch's (1977) bands are descriptive ("slight", "fair", ...) and not tied to the test. What size of
   agreement is enough depends on the number of labels and on epsilon, which the next check measures directly.

3. A judge answering at chance would not pass (the CONTROL; a "yes" only). Beyond chance is not enough: the
   t-test of annotator h_j rejects, for many items, whenever the mean of d_ij = W^h_ij - W^f_ij is below epsilon,
   and when the people agree little a judge that labels at random comes close enough. Simulated (3 people each
   right with probability q, else a uniform label; a uniform random judge; 3000 items; epsilon 0.2), the random
   judge passes binary labels up to a people's Fleiss' kappa of about 0.37 and 4-option labels up to about 0.17.
   So the test is also run, in expectation, for a chance judge: one that draws each item's label independently
   of the item from the people's own label shares p_k on the instances (the chance model of Fleiss' kappa).
   d_ij = sign(S(h_j, i) - S(f, i)) (1, 0 on a tie, -1), so E[d_ij] = sum_k p_k sign(S(h_j, i) - S(k, i)), with
   S(k, i) the alignment of label k with the remaining people (the alt-test's own scoring). The chance judge is
   expected to win against h_j when the mean of E[d_ij] over h_j's instances is below epsilon (the large-sample
   limit of the one-sided t-test: conservative, as with few items the t-test needs a clearer margin), and to pass
   when it wins against at least half of the people tested (the test's winning-rate rule). If it would: CANNOT
   TELL (the test cannot tell this judge from chance on these people; more agreement among them, or a smaller
   epsilon, which the FAQ advises when agreement is low). A judge that fails stays a "no": it lost where even a
   chance judge would be expected to win.

4. Otherwise the test decides: YES when the winning rate is at least 0.5, else NO.

By the authors' small-sample rule (reports.stats.alt_test, rule "small-sample": their FAQ, in the paper and in the
README of github.com/nitaytech/AltTest: "a non-parametric test, such as the Wilcoxon signed-rank test, should be
used instead" below 30 instances; "While our procedure can be used with two annotators, we believe it is less
reliable"), check 1 asks for SMALL_SAMPLE_MIN_HUMANS = 2 people, each with at least 1 instance, and every answer
says, first, that it rests on that rule (Verdict.rule; "by the authors' small-sample rule ..."), how many people
had the Wilcoxon test and, with two people, that there is no consensus to stand in for. Checks 2-4 are the same;
the control of check 3 stays the large-sample expectation (mean E[d_ij] below epsilon), which with the few items
of this rule is only a rough guide.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable, Mapping

from .alt_test import (DEFAULT_MIN_HUMANS, DEFAULT_MIN_INSTANCES, SCORING, SMALL_SAMPLE, SMALL_SAMPLE_MIN_HUMANS,
                       AltTestResult)
from .result import StatResult

__all__ = ["YES", "NO", "CANNOT_TELL", "MIN_PEOPLE", "MIN_ITEMS", "FLOOR", "PersonCount", "Verdict",
           "people_counts", "chance_judge_gaps", "people_agreement", "replacement_verdict", "PAPER"]

YES, NO, CANNOT_TELL = "yes", "no", "cannot tell yet"
MIN_PEOPLE = DEFAULT_MIN_HUMANS      # the paper's FAQ: at least three human annotators
MIN_ITEMS = DEFAULT_MIN_INSTANCES    # the paper's FAQ: at least 30 instances per annotator for the t-test
FLOOR = 0.0                          # the people's agreement interval's lower bound must be above chance (0)
PAPER = "Calderon, Reichart and Dror 2025"


@dataclass(frozen=True)
class PersonCount:
    """One person's items on a dimension: labelled (theirs), with_judge (of those, labelled by the judge too),
    instances (of those, labelled by at least one other person too: the alt-test's instances)."""

    name: str
    labelled: int
    with_judge: int
    instances: int


@dataclass(frozen=True)
class Verdict:
    """May the judge replace the people on one dimension.

    answer: YES, NO or CANNOT_TELL; reason: "people" (fewer than MIN_PEOPLE people labelled these items),
    "items" (enough people, but too few of them have MIN_ITEMS items, or one the test ran on has fewer),
    "agreement" (the people do not agree beyond chance), "chance" (a judge answering at chance would pass) or
    "test" (the alt-test decided); why: the reason in a sentence (plain text; names from data as they are);
    agreement: the people's coefficient (None when the conditions failed first); chance_wins: against how many of
    the people tested a chance judge is expected to win (None when not reached); counts: every person's items;
    need_items (person -> items still missing), need_people (people still missing): what "cannot tell" waits for.
    """

    judge: str
    answer: str
    reason: str
    why: str
    alt: AltTestResult
    agreement: StatResult | None = None
    chance_wins: int | None = None
    counts: list[PersonCount] = field(default_factory=list)
    need_items: dict[str, int] = field(default_factory=dict)
    need_people: int = 0
    rule: str = "paper"


def people_counts(humans: Mapping[str, Mapping[Hashable, Any]], llm: Mapping[Hashable, Any]) -> list[PersonCount]:
    """Per person (sorted by name): items labelled, of those labelled by the judge, of those labelled by another
    person too (the alt-test's instances, reports.stats.alt_test: the LLM and at least two people). None labels
    count as absent."""
    judged = {i for i, v in llm.items() if v is not None}
    own = {h: {i for i, v in anns.items() if v is not None} for h, anns in humans.items()}
    by_item: dict[Hashable, int] = {}
    for items in own.values():
        for i in items & judged:
            by_item[i] = by_item.get(i, 0) + 1
    out = []
    for h in sorted(own):
        shared = own[h] & judged
        out.append(PersonCount(h, len(own[h]), len(shared), sum(1 for i in shared if by_item[i] >= 2)))
    return [c for c in out if c.labelled]


def _instances(humans, llm) -> list[Hashable]:
    judged = {i for i, v in llm.items() if v is not None}
    seen: dict[Hashable, int] = {}
    for anns in humans.values():
        for i, v in anns.items():
            if v is not None and i in judged:
                seen[i] = seen.get(i, 0) + 1
    return [i for i, n in seen.items() if n >= 2]


def people_agreement(humans: Mapping[str, Mapping[Hashable, Any]], llm: Mapping[Hashable, Any], *,
                     ordinal: bool, seed: int = 0, n_boot: int = 1000) -> StatResult:
    """The people's chance-corrected agreement on the alt-test's instances (module doc, step 2): Fleiss' kappa
    for labels, Krippendorff's alpha (interval metric) for 1..5 scores (ordinal=True), each with a 95% percentile
    bootstrap interval over items."""
    from . import fleiss_kappa, krippendorff_alpha

    names = sorted(humans)
    rows = [[humans[h].get(i) for h in names] for i in _instances(humans, llm)]
    if ordinal:
        return krippendorff_alpha(rows, level="interval", ci=True, n_boot=n_boot, seed=seed)
    return fleiss_kappa(rows, ci=True, n_boot=n_boot, seed=seed)


def chance_judge_gaps(humans: Mapping[str, Mapping[Hashable, Any]], llm: Mapping[Hashable, Any],
                      annotators: list[str], scoring: str = "accuracy") -> dict[str, float]:
    """Per annotator h_j (of ``annotators``): the mean over h_j's instances of E[d_ij] = sum_k p_k sign(S(h_j, i)
    - S(k, i)) for a judge drawing labels at chance from the people's label shares p_k on the instances (module
    doc, step 3). A gap below epsilon: such a judge is expected to win against h_j."""
    score = SCORING[scoring]
    inst = set(_instances(humans, llm))
    pooled: dict[Any, int] = {}
    for anns in humans.values():
        for i, v in anns.items():
            if i in inst and v is not None:
                pooled[v] = pooled.get(v, 0) + 1
    total = sum(pooled.values())
    shares = {k: n / total for k, n in pooled.items()} if total else {}
    out = {}
    memo: dict[tuple, float] = {}  # (h's label, the others' labels sorted) -> E[d]: few patterns on many items
    for h in annotators:
        mine = [i for i in humans[h] if i in inst and humans[h][i] is not None]
        total_gap = 0.0
        for i in mine:
            others = sorted((humans[o][i] for o in humans if o != h and humans[o].get(i) is not None), key=repr)
            key = (humans[h][i], tuple(others))
            if key not in memo:
                s_h = score(humans[h][i], others)
                memo[key] = sum(p * ((s_h > (s := score(k, others))) - (s > s_h)) for k, p in shares.items())
            total_gap += memo[key]
        if mine:
            out[h] = total_gap / len(mine)
    return out


def _num(v: float | None) -> str:
    from reports.render.cells import number

    return "undefined" if v is None else number(float(v))


def agreement_text(a: StatResult) -> str:
    """"Fleiss' kappa is 0.067 with a 95% interval of -0.061 to 0.196 on 40 items" (or "... is undefined
    (reason)"); no brackets or parentheses inside, so it reads the same as plain text and Markdown, within a
    sentence's parentheses."""
    name = "Krippendorff's alpha (interval metric)" if a.metric.startswith("krippendorff") else "Fleiss' kappa"
    if a.value is None:
        return f"{name} is undefined: {a.note.removeprefix('undefined: ')}"
    ci = f" with a 95% interval of {_num(a.ci_low)} to {_num(a.ci_high)}" if a.ci_low is not None else \
        " (no interval)"
    return f"{name} is {_num(a.value)}{ci} on {a.n_items} items"


def agreement_source(a: StatResult) -> str:
    """Where the coefficient's chance point (0) is defined."""
    return "Krippendorff 2011" if a.metric.startswith("krippendorff") else "Fleiss 1971"


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _short(group: list[PersonCount], need: int) -> str:
    """What the people of a group (the same counts) miss: "cy has 12 (18 more needed)", "ana, bo and cy have 4
    each (26 more needed each)", with where the items are missing when it is not their own number of items."""
    c = group[0]
    more = need - c.instances
    who = _names([g.name for g in group])
    text = (f"{who} has {c.instances} ({more} more needed" if len(group) == 1 else
            f"{who} have {c.instances} each ({more} more needed each")
    if c.instances == c.labelled:
        return text + ")"
    whose = f"{c.name}'s {c.labelled} items" if len(group) == 1 else f"the {c.labelled} items of each"
    path = f"of {whose} the judge labelled {c.with_judge}"
    if c.with_judge != c.instances:
        path += f", and another person {c.instances} of those"
    return f"{text}: {path})"


def _short_groups(short: list[PersonCount], need: int) -> list[str]:
    groups: dict[tuple[int, int, int], list[PersonCount]] = {}
    for c in short:
        groups.setdefault((c.labelled, c.with_judge, c.instances), []).append(c)
    return [_short(g, need) for g in groups.values()]


def _small_label(alt: AltTestResult) -> str:
    """The words that open an answer resting on the small-sample rule: which tests ran, and the two-people case."""
    tested = [c for c in alt.comparisons if c.p_value is not None]
    n_w = sum(1 for c in tested if c.test == "wilcoxon")
    text = (f"by the authors' small-sample rule, not the paper's main procedure ({PAPER}, FAQ): {n_w} of "
            f"{len(tested)} people with fewer than {MIN_ITEMS} items tested by a one-sided Wilcoxon signed-rank test "
            "instead of the t-test")
    if len(tested) < MIN_PEOPLE:
        text += (f", and {len(tested)} people, fewer than the {MIN_PEOPLE} the paper recommends, so each is compared "
                 "with the other alone, without a consensus (usable, the FAQ says, but less reliable)")
    return text + ": "


def replacement_verdict(alt: AltTestResult, humans: Mapping[str, Mapping[Hashable, Any]],
                        llm: Mapping[Hashable, Any], *, ordinal: bool = False, seed: int = 0,
                        min_instances: int = MIN_ITEMS, n_boot: int = 1000) -> Verdict:
    """The answer for one judge on one dimension (module doc): alt is reports.stats.alt_test.alt_test(humans,
    llm, ...) as reported, min_instances the ``min_instances`` it ran with (the verdict needs
    max(min_instances, MIN_ITEMS) per person)."""
    small = alt.rule == SMALL_SAMPLE
    need = 1 if small else max(min_instances, MIN_ITEMS)
    need_people = SMALL_SAMPLE_MIN_HUMANS if small else MIN_PEOPLE
    counts = people_counts(humans, llm)
    tested = [c.annotator for c in alt.comparisons if c.p_value is not None]
    enough = [c for c in counts if c.instances >= need]
    short_tested = [c for c in counts if c.name in tested and c.instances < need]
    base = dict(judge=alt.judge, alt=alt, counts=counts, rule=alt.rule)
    if small:
        cond = (f"by the authors' small-sample rule the alternative annotator test needs at least {need_people} "
                f"people, each with at least 1 item that the judge and another person also labelled ({PAPER}, "
                "FAQ: two annotators usable, less reliable; a Wilcoxon signed-rank test below 30 items)")
    else:
        cond = (f"the alternative annotator test needs at least {MIN_PEOPLE} people, each with at least {need} "
                f"items that the judge and another person also labelled ({PAPER}, FAQ: three or more annotators "
                f"for a consensus signal, 30 or more items each for its t-test)")
    if len(enough) < need_people or short_tested:
        short = [c for c in counts if c.instances < need]
        need_items = {c.name: need - c.instances for c in short}
        missing_people = max(0, need_people - len(counts))
        have = f"{len(enough)} of the {len(counts)} people who labelled these items have them"
        if enough:
            have += " (" + ", ".join(f"{c.name} {c.instances}" for c in enough) + ")"
        why = f"{cond}; {have}"
        if short:
            why += "; " + "; ".join(_short_groups(short, need))
        if short_tested:
            why += (f"; the test ran with at least {min_instances} items per person, under the {need} its t-test "
                    "needs")
        if missing_people:
            why += f"; {missing_people} more {'person is' if missing_people == 1 else 'people are'} needed"
        return Verdict(answer=CANNOT_TELL, reason="people" if missing_people else "items", why=why,
                       need_items=need_items, need_people=missing_people, **base)
    label = _small_label(alt) if small else ""
    agreement = people_agreement(humans, llm, ordinal=ordinal, seed=seed, n_boot=n_boot)
    agree = agreement_text(agreement)
    beyond = agreement.value is not None and agreement.ci_low is not None and agreement.ci_low > FLOOR
    wins = sum(1 for c in alt.comparisons if c.rejected)
    rate = f"winning rate {_num(alt.winning_rate)} ({wins} of {alt.n_humans_tested} people)"
    if not beyond:
        why = (f"the people do not agree beyond chance: {agree}, and the floor is a lower bound above {FLOOR:g}, "
               f"the value of agreement by chance ({agreement_source(agreement)}); so there is no consensus for a "
               f"judge to stand in for, and the alternative annotator test's {rate} at epsilon "
               f"{alt.epsilon:g} is no evidence either way")
        return Verdict(answer=CANNOT_TELL, reason="agreement", why=label + why, agreement=agreement, **base)
    gaps = chance_judge_gaps(humans, llm, tested, alt.scoring)
    chance_wins = sum(1 for g in gaps.values() if g < alt.epsilon)
    chance_passes = bool(gaps) and chance_wins >= 0.5 * len(gaps)
    test = (f"the alternative annotator test ({PAPER}): winning rate {_num(alt.winning_rate)}, it wins against "
            f"{wins} of {alt.n_humans_tested} people (at least half needed) at epsilon {alt.epsilon:g} on "
            f"{alt.n_instances} items, advantage probability {_num(alt.advantage_probability)}")
    people = f"the people agree beyond chance ({agree}, the floor being a lower bound above {FLOOR:g})"
    chance = f"a judge answering at random would be expected to win against {chance_wins} of {len(gaps)} people"
    if alt.passed and chance_passes:
        why = (f"{people}, but too little for the alternative annotator test to tell a judge from chance: "
               f"{chance} (labels drawn from the people's own label shares) at epsilon {alt.epsilon:g}, so this "
               f"judge's {rate} is no evidence; it needs more agreement among the people, or a smaller epsilon "
               f"({PAPER}, FAQ: smaller when agreement is low)")
        return Verdict(answer=CANNOT_TELL, reason="chance", why=label + why, agreement=agreement,
                       chance_wins=chance_wins, **base)
    if alt.passed:
        why = f"it passes {test}; {people}; and {chance}"
        return Verdict(answer=YES, reason="test", why=label + why, agreement=agreement, chance_wins=chance_wins,
                       **base)
    why = f"it fails {test}; {people}"
    if chance_passes:
        why += f"; and {chance}, which this judge does not"
    return Verdict(answer=NO, reason="test", why=label + why, agreement=agreement, chance_wins=chance_wins, **base)
