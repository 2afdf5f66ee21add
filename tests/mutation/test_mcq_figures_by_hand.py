"""MCQ figures (HorizonBench 5.3) of a four-item study worked by hand: pooled accuracy, can't-tell rate, majority
vote with a tie, Fleiss' kappa over letters + can't tell, at least one correct, the distractor share against its
uniform baseline, and the per-annotator table (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import pytest

from annotator.tasks import get_task
from tests.mutation.mcq_plan import mcq_study

# small hand-worked tables: intervals even below the 7-item minimum (tested on its own)
pytestmark = pytest.mark.usefixtures("intervals_from_few_items")

BOOT = "; 95% percentile bootstrap over items, 1000 resamples, seed 1"
# item: (key, answers of a0, a1, a2); 4 options A-D
PLAN = {"m1": (0, [0, 0, 1]),        # A A B: 2 of 3 correct, plurality A = key
        "m2": (2, [3, "x", 1]),      # D, can't tell, B: none correct, a three-way tie
        "m3": (1, [1]),              # one answer: not in the several-annotator figures
        "m4": (None, [0, 0])}        # no key
DISTRACTORS = {"m1": 1, "m2": 3}


def test_every_figure_by_hand(store):
    data, _ = mcq_study(store, "mcq", PLAN, distractors=DISTRACTORS)
    fs = get_task("mcq").figures(data)
    assert [f.key for f in fs.figures] == [
        "accuracy", "cant_tell_rate", "majority_vote_accuracy", "fleiss_kappa", "at_least_one_correct",
        "distractor_share", "distractor_baseline", "distractor_ratio"]
    f = {x.key: x for x in fs.figures}
    # pooled over keyed items: m1 2/3, m2 0/3, m3 1/1 -> 3/7
    acc = f["accuracy"]
    # n counts the 7 answers (m2's can't tell among them, as in the per-annotator table's "answered": 3 + 2 + 2)
    assert (acc.label, acc.value, acc.n, acc.n_of) == ("accuracy (all answers; can't tell counts as wrong)",
                                                       pytest.approx(3 / 7), 7, "answers")
    assert acc.note == "7 answers over 3 items; correct answers / answers over keyed items" + BOOT
    assert acc.extra == {"numerator": 3.0, "denominator": 7.0}
    ct = f["cant_tell_rate"]
    assert (ct.label, ct.value, ct.n, ct.n_of, ct.note) == (
        "can't tell answers", pytest.approx(1 / 9), 9, "answers", "9 answers over 4 items")
    mv = f["majority_vote_accuracy"]
    assert (mv.label, mv.value, mv.n, mv.extra) == (
        "majority-vote accuracy (annotators' votes; a tie: no label; adjudications not used)", 0.5, 2,
        {"numerator": 1.0, "denominator": 2.0, "ties": 1, "tie_rule": "no-label"})
    assert mv.note == ("share of items whose plurality answer is the key, over 2 keyed items with at least 2 answers; "
                       "tie rule no-label (prefval's default): a tie for first place gives no label and counts as not "
                       "correct (1 tied items); the annotators' own answers, adjudicated final answers not used"
                       + BOOT)
    # Fleiss over m1 (A A B) and m2 (D, can't tell, B), categories A B C D can't tell:
    # p_a = (2/6 + 0) / 2 = 1/6; shares A 1/3, B 1/3, C 0, D 1/6, can't tell 1/6: p_e = 10/36 = 5/18
    # kappa = (1/6 - 5/18) / (13/18) = -2/13
    fk = f["fleiss_kappa"]
    assert (fk.label, fk.n) == ("Fleiss' kappa (letters + can't tell)", 2)
    assert fk.value == pytest.approx(-2 / 13)
    assert "5 declared categories ['A', 'B', 'C', 'D', \"can't tell\"]" in fk.note
    alo = f["at_least_one_correct"]
    assert (alo.label, alo.value, alo.n) == ("items with at least one annotator correct", 0.5, 2)
    # wrong answers: m1 [B] (the distractor), m2 [D, B] (D the distractor): 2 of 3;
    # baseline: every wrong answer has chance 1/(4-1): 1/3; ratio 2
    sh, base, ratio = f["distractor_share"], f["distractor_baseline"], f["distractor_ratio"]
    what = "among wrong answers (options other than the key; can't tell left out) on items with a distractor"
    assert (sh.label, sh.value, sh.n) == ("wrong answers on the pre-evolution distractor", pytest.approx(2 / 3), 2)
    assert sh.note == (f"share choosing the distractor {what}" + BOOT + "; exact one-sided binomial test, share above "
                       "uniform 1/(k-1) (HorizonBench 6.2), wrong answers taken as independent trials")
    # P(X >= 2) for X ~ Binomial(3, 1/3): 3 (1/3)^2 (2/3) + (1/3)^3 = 7/27
    assert (sh.p_value, sh.p_label) == (pytest.approx(7 / 27), "one-sided binomial test, share above uniform 1/(k-1)")
    assert (base.label, base.value) == ("uniform baseline 1/(k-1)", pytest.approx(1 / 3))
    assert base.note == f"uniform chance 1/(k-1) of picking it {what}" + BOOT
    assert (ratio.label, ratio.value) == ("distractor share / baseline", pytest.approx(2.0))
    assert ratio.note == "distractor share / uniform baseline (HorizonBench: 1.5x for models)" + BOOT

    (table,) = fs.tables
    assert table.model_dump() == {
        "key": "accuracy_by_annotator", "title": "accuracy by annotator",
        "columns": ["annotator", "answered", "correct", "can't tell", "accuracy (can't tell counts as wrong)"],
        "rows": [["a0", 3, 2, 0, pytest.approx(2 / 3)], ["a1", 2, 1, 1, 0.5], ["a2", 2, 0, 0, 0.0]],
        "note": "answered includes can't tell; can't tell counts as wrong, as in the accuracy figure"}
    # one rule in both places: the table's answers and correct answers add up to the figure's n and numerator
    assert sum(r[1] for r in table.rows) == acc.n == 7 and sum(r[2] for r in table.rows) == acc.extra["numerator"]


def test_no_answer_and_no_distractor(store):
    data, _ = mcq_study(store, "mcq", {"m1": (0, []), "m2": (None, [])})
    fs = get_task("mcq").figures(data)
    assert [f.key for f in fs.figures] == ["accuracy", "cant_tell_rate", "majority_vote_accuracy", "fleiss_kappa",
                                           "at_least_one_correct"]
    f = {x.key: x for x in fs.figures}
    assert (f["accuracy"].value, f["accuracy"].n) == (None, 0)
    assert f["accuracy"].note == "no item yet to compute it (correct answers / answers over keyed items)"
    assert (f["cant_tell_rate"].value, f["cant_tell_rate"].n, f["cant_tell_rate"].note) == (None, 0, "no answer yet")
    why = "over 0 keyed items with at least 2 answers"
    assert f["fleiss_kappa"].note == f"no item yet to compute it ({why})"
    assert f["at_least_one_correct"].note == f"no item yet to compute it ({why})"
    assert fs.tables == []


def test_distractor_undefined_without_wrong_answers(store):
    # a distractor item answered only correctly: no wrong answer, so the shares have no item
    data, _ = mcq_study(store, "mcq", {"m1": (0, [0, 0])}, distractors={"m1": 2})
    f = {x.key: x for x in get_task("mcq").figures(data).figures}
    assert f["majority_vote_accuracy"].value == 1.0 and f["at_least_one_correct"].value == 1.0
    for key in ("distractor_share", "distractor_baseline", "distractor_ratio"):
        assert f[key].value is None and f[key].n == 0 and f[key].note.startswith("no item yet to compute it (")


def test_fleiss_kappa_carries_its_interval(store):
    data, _ = mcq_study(store, "mcq", PLAN, distractors=DISTRACTORS)
    fk = get_task("mcq").figures(data).figure("fleiss_kappa")
    assert fk.ci_low is not None and -1 <= fk.ci_low <= fk.value <= fk.ci_high <= 1
