"""May this judge replace the people on this study? (issue 21, part 3; reports.stats.replacement)

The answer opens the judge-validation section of `prefval report` (every format) and shows in `prefval status
STUDY`: yes / no / cannot tell yet, with why. Each case is built by hand and its values worked out by hand in the
comments: people at chance (the floor refuses a winning rate of 1), two people (the alt-test needs three), a
clear yes and a clear no, a judge that a chance judge would match (the control refuses a yes), validators never
among the people, and a study mixing T/F and MCQ items split into one confusion table and kappa per format.
"""
from __future__ import annotations

import json
import math

import pytest
from scipy import stats

from annotator.cli import main
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from reports.judge_vs_human import TF_DIM, MCQ_DIM, judge_validation, study_answer, verdict_sentence
from reports.stats.alt_test import alt_test
from reports.stats.replacement import (CANNOT_TELL, NO, YES, chance_judge_gaps, people_counts,
                                       replacement_verdict)
from storage.importers.judgments import add_judgment_records
from storage.models import AnnotationIn, ItemIn
from storage.store import Store
from reports.study_data import StudyData
from tests.test_judge_vs_human import make_data as _make_data, table


def make_data(task, answers, kinds, settings=None, payloads=None) -> StudyData:
    """tests.test_judge_vs_human.make_data with the models' answers in StudyData.model_answers and only the
    people's in StudyData.answers, as reports.study_data.load_study_data reads them."""
    d = _make_data(task, answers, kinds, settings, payloads)
    people = [a for a in d.answers if d.annotators[a.annotator_id].is_person]
    models = [a for a in d.answers if not d.annotators[a.annotator_id].is_person]
    return StudyData(d.study, d.units, d.items, d.annotators, people, model_answers=models)

PEOPLE3 = {"h1": "human", "h2": "human", "h3": "human", "judge": "llm"}


# ---- 1. three people at chance, a judge at 0.275 accuracy -------------------------------------------------------
def _chance_rows() -> list[list[int]]:
    """40 four-option items (labels 0..3 = A..D) as 10 blocks of 4: in a block, pattern (h1, h2, h3, judge) shifted
    by t = 0..3 (mod 4), so each person and the judge use every label 10 times: shares 1/4 each, p_e = 1/4.
    Blocks: 1 where the people agree (judge with them), 6 where two agree and the judge takes the odd one's label
    (each person odd in 2), 3 where all three differ and the judge a fourth label."""
    blocks = ([((0, 0, 0), 0)] + [((0, 0, 1), 1), ((0, 1, 0), 1), ((1, 0, 0), 1)] * 2 + [((0, 1, 2), 3)] * 3)
    return [[(o + t) % 4 for o in pattern] + [(judge + t) % 4] for pattern, judge in blocks for t in range(4)]


def _chance_data():
    rows = _chance_rows()
    answers = {n: [{"choice": r[k], "cant_tell": False} for r in rows] for k, n in enumerate(PEOPLE3)}
    # the key: the judge's label on the first 11 items, another one on the other 29 -> judge accuracy 11/40
    payloads = [{"question": f"q{i}", "options": ["a", "b", "c", "d"],
                 "correct_index": r[3] if i < 11 else (r[3] + 1) % 4} for i, r in enumerate(rows)]
    return make_data("mcq", answers, PEOPLE3, payloads=payloads)


def test_people_at_chance_cannot_tell_even_with_a_winning_rate_of_one():
    data = _chance_data()
    from reports.llm_answers import llm_answers_section

    acc = next(f for f in llm_answers_section(data).figures if f.key == "llm_accuracy:judge")
    assert acc.value == pytest.approx(11 / 40) == pytest.approx(0.275)
    section = judge_validation(data)
    v = section.verdicts["judge"]["choice"]
    # Fleiss' kappa by hand: 4 items all agree (1), 24 two agree (1/3 each), 12 all differ (0):
    # p_a = (4 + 8) / 40 = 0.3, p_e = 4 x (1/4)^2 = 0.25, kappa = 0.05 / 0.75 = 1/15
    assert v.agreement.value == pytest.approx(1 / 15)
    assert v.agreement.ci_low <= 0 < v.agreement.ci_high  # not beyond chance
    # the alt-test by hand: the judge ties each left-out person on every item (both match none of the two others,
    # both match one, or the judge matches both with the people), so d = W^h - W^f = 0 everywhere: sd 0, mean
    # 0 < epsilon -> p = 0 for each person, all three rejected: winning rate 1 (the old "passes")
    assert v.alt.winning_rate == 1.0 and v.alt.passed and v.alt.advantage_probability == 1.0
    assert v.answer == CANNOT_TELL and v.reason == "agreement"
    sentence = section.sentences[0]
    assert sentence.startswith("May judge replace the people on this study? Cannot tell yet: the people do not "
                               "agree beyond chance: Fleiss' kappa is 0.067 with a 95% interval of ")
    assert "the floor is a lower bound above 0, the value of agreement by chance (Fleiss 1971)" in sentence
    assert "winning rate 1.000 (3 of 3 people) at epsilon 0.2 is no evidence either way" in sentence
    assert table(section.figures, "alt_test").rows[0][6] == "cannot tell yet"


# ---- 2. two people, 32 items each -------------------------------------------------------------------------------
def test_two_people_cannot_tell_the_test_needs_three():
    n = 32
    answers = {"ana": [{"reflected": i % 2 == 0} for i in range(n)],
               "bo": [{"reflected": i % 2 == 0} for i in range(n)],
               "judge": [{"reflected": i % 2 == 0} for i in range(n)]}
    section = judge_validation(make_data("judge_validation", answers, {"ana": "human", "bo": "human",
                                                                       "judge": "llm"}))
    v = section.verdicts["judge"]["reflected"]
    assert v.answer == CANNOT_TELL and v.reason == "people" and v.need_people == 1
    assert v.alt.winning_rate is None  # the alt-test itself is undefined with two people
    assert section.sentences == [
        "May judge replace the people on this study? Cannot tell yet: the alternative annotator test needs at "
        "least 3 people, each with at least 30 items that the judge and another person also labelled (Calderon, "
        "Reichart and Dror 2025, FAQ: three or more annotators for a consensus signal, 30 or more items each for "
        "its t-test); 2 of the 2 people who labelled these items have them (ana 32, bo 32); 1 more person is "
        "needed."]


def test_short_people_are_named_with_what_they_miss():
    # ana labels 40 items, bo 40, cy 12 of them; the judge labels the first 35: ana and bo share 35 each with the
    # judge and another person; cy 12 (all of cy's items are judged and also labelled by ana and bo)
    lab = [{"reflected": i % 2 == 0} for i in range(40)]
    answers = {"ana": lab, "bo": lab, "cy": lab[:12] + [None] * 28, "judge": lab[:35] + [None] * 5}
    v = judge_validation(make_data("judge_validation", answers, {"ana": "human", "bo": "human", "cy": "human",
                                                                 "judge": "llm"})).verdicts["judge"]["reflected"]
    assert v.answer == CANNOT_TELL and v.need_items == {"cy": 18} and v.need_people == 0
    assert ("2 of the 3 people who labelled these items have them (ana 35, bo 35); cy has 12 (18 more needed)"
            in v.why)
    # the judge labelled only 20 of a person's 40 items: the shortfall says where the items are missing
    counts = people_counts({"ana": {i: 1 for i in range(40)}, "bo": {i: 1 for i in range(40)}},
                           {i: 1 for i in range(20)})
    assert [(c.name, c.labelled, c.with_judge, c.instances) for c in counts] == [("ana", 40, 20, 20),
                                                                              ("bo", 40, 20, 20)]


def test_a_test_run_under_thirty_items_gives_no_answer():
    # three people and a judge in full agreement on 10 items: with --alt-test-min-items 5 the test runs and
    # passes (every d = 0), but the answer needs 30 items per person
    answers = {n: [{"reflected": i % 2 == 0} for i in range(10)] for n in PEOPLE3}
    v = judge_validation(make_data("judge_validation", answers, PEOPLE3),
                         min_instances=5).verdicts["judge"]["reflected"]
    assert v.alt.passed and v.answer == CANNOT_TELL and v.reason == "items"
    assert v.need_items == {"h1": 20, "h2": 20, "h3": 20} and v.need_people == 0
    assert ("0 of the 3 people who labelled these items have them; h1, h2 and h3 have 10 each (20 more needed "
            "each)") in v.why
    assert "the test ran with at least 5 items per person, under the 30 its t-test needs" in v.why


# ---- 3. a clear yes and a clear no ----------------------------------------------------------------------------
T, F = True, False
#: six items where one person differs from the other two (each person twice)
ODD = [(F, T, T), (T, F, F), (T, F, T), (F, T, F), (T, T, F), (F, F, T)]


def _agreeing_people(judge_flips: int = 0):
    """40 items: 17 all True, 17 all False, then the six ODD items. The judge gives the majority label, except on
    the first `judge_flips` items where it gives the other one.
    Fleiss' kappa by hand: p_a = (34 + 6/3) / 40 = 0.9; True is 17*3 + 3*2 + 3*1 = 60 of 120 labels: p_e = 0.5;
    kappa = 0.4 / 0.5 = 0.8."""
    people = [(T, T, T)] * 17 + [(F, F, F)] * 17 + ODD
    judge = [sum(p) >= 2 for p in people]
    judge = [not j if i < judge_flips else j for i, j in enumerate(judge)]
    answers = {h: [{"reflected": p[k]} for p in people] for k, h in enumerate(("h1", "h2", "h3"))}
    answers["judge"] = [{"reflected": j} for j in judge]
    return make_data("judge_validation", answers, PEOPLE3)


def test_clear_yes_hand_worked():
    section = judge_validation(_agreeing_people())
    v = section.verdicts["judge"]["reflected"]
    # left-out person h: on the 34 agreed items judge and h both match the two others (d = 0); on the 4 items where
    # another person is odd, both match one of the two (d = 0); on h's own 2 odd items the judge matches both
    # others and h none (d = -1). mean d = -2/40 = -0.05, sd = sqrt((2 (0.95)^2 + 38 (0.05)^2) / 39) = sqrt(1.9/39)
    mean, sd = -0.05, math.sqrt(1.9 / 39)
    t = (mean - 0.2) / (sd / math.sqrt(40))
    assert t == pytest.approx(-7.1635, abs=1e-4)
    p = stats.t.cdf(t, 39)
    for c in v.alt.comparisons:
        assert c.t_stat == pytest.approx(t) and c.p_value == pytest.approx(p)
        # Benjamini-Yekutieli, three equal p-values: adjusted = 3 c(3) p / 3 with c(3) = 1 + 1/2 + 1/3 = 11/6
        assert c.p_adjusted == pytest.approx(11 / 6 * p) and c.rejected
        assert c.rho_llm == 1.0 and c.rho_human == pytest.approx(38 / 40)
    assert v.alt.winning_rate == 1.0 and v.alt.advantage_probability == 1.0
    assert v.agreement.value == pytest.approx(0.8) and v.agreement.ci_low > 0
    # chance judge (True with p 1/2): on an agreed item E[d] = 1/2 (h matches both others, the chance label half
    # the time); on h's odd items -1/2; where another is odd 0 -> gap (17 - 1) / 40 = 0.4 >= 0.2 for everyone
    gaps = chance_judge_gaps(*_flat(_agreeing_people()), ["h1", "h2", "h3"])
    assert gaps == pytest.approx({"h1": 0.4, "h2": 0.4, "h3": 0.4})
    assert v.answer == YES and v.chance_wins == 0
    assert section.sentences[0].startswith(
        "May judge replace the people on this study? Yes: it passes the alternative annotator test (Calderon, "
        "Reichart and Dror 2025): winning rate 1.000, it wins against 3 of 3 people (at least half needed) at "
        "epsilon 0.2 on 40 items, advantage probability 1.000; the people agree beyond chance (Fleiss' kappa is "
        "0.800 with a 95% interval of ")
    assert section.sentences[0].endswith(
        "on 40 items, the floor being a lower bound above 0); and a judge answering at random would be expected "
        "to win against 0 of 3 people.")


def test_clear_no_hand_worked():
    section = judge_validation(_agreeing_people(judge_flips=10))
    v = section.verdicts["judge"]["reflected"]
    # the judge flips 10 agreed items: there h matches both others and the judge none (d = +1); h's 2 odd items
    # d = -1; 28 others d = 0. mean = 8/40 = 0.2 = epsilon -> t = 0, p = 1/2 for each person; BY adjusted
    # min(1, 3 (11/6) (1/2) / 3) = 11/12 > 0.05: no rejection, winning rate 0; rho_llm = (28 + 2) / 40 = 0.75
    for c in v.alt.comparisons:
        assert c.t_stat == pytest.approx(0.0, abs=1e-12) and c.p_value == pytest.approx(0.5)
        assert c.p_adjusted == pytest.approx(11 / 12) and not c.rejected
        assert c.rho_llm == pytest.approx(0.75)
    assert v.alt.winning_rate == 0.0 and v.alt.advantage_probability == pytest.approx(0.75)
    assert v.answer == NO
    assert section.sentences[0].startswith(
        "May judge replace the people on this study? No: it fails the alternative annotator test (Calderon, "
        "Reichart and Dror 2025): winning rate 0.000, it wins against 0 of 3 people (at least half needed) at "
        "epsilon 0.2 on 40 items, advantage probability 0.750; the people agree beyond chance (Fleiss' kappa is "
        "0.800 with a 95% interval of ")


def _flat(data):
    """(people, judge) label dicts of a judge_validation StudyData, keyed by unit id."""
    people, judge = {}, {}
    for a in data.answers:
        people.setdefault(data.annotators[a.annotator_id].name, {})[a.unit_id] = a.answer["reflected"]
    for a in data.model_answers:
        judge[a.unit_id] = a.answer["reflected"]
    return people, judge


# ---- 4. people beyond chance, but a chance judge would pass: no yes ---------------------------------------------
def test_a_yes_a_chance_judge_would_also_get_is_refused():
    # 40 T/F items: on 20 the three people agree (10 True, 10 False), on 20 one person differs (ODD repeated 3
    # times and the first two again). The judge gives the majority label.
    people = [(T, T, T)] * 10 + [(F, F, F)] * 10 + (ODD * 4)[:20]
    answers = {h: [{"reflected": p[k]} for p in people] for k, h in enumerate(("h1", "h2", "h3"))}
    answers["judge"] = [{"reflected": sum(p) >= 2} for p in people]
    data = make_data("judge_validation", answers, PEOPLE3)
    v = judge_validation(data).verdicts["judge"]["reflected"]
    # (ODD*4)[:20] holds ODD[0] and ODD[1] four times (positions 0, 1, 6, 7, 12, 13, 18, 19: h1 odd on 8 items),
    # ODD[2..5] three times (h2 odd on 6 items, h3 on 6). Fleiss: p_a = (20 + 20/3) / 40 = 2/3; True labels:
    # 30 agreed + 4 x (2 + 1) + 3 x (2 + 1) x 2 = 60 of 120: p_e = 1/2; kappa = (2/3 - 1/2) / (1/2) = 1/3
    assert v.agreement.value == pytest.approx(1 / 3) and v.agreement.ci_low > 0
    # the chance judge (True with p 1/2), left-out h: E[d] = 1/2 on an agreed item, -1/2 on h's odd items, 0 where
    # another person is odd. h1: (10 - 4) / 40 = 0.15; h2 and h3: (10 - 3) / 40 = 0.175: all below epsilon 0.2,
    # so a chance judge is expected to win against all three
    gaps = chance_judge_gaps(*_flat(data), ["h1", "h2", "h3"])
    assert gaps == pytest.approx({"h1": 0.15, "h2": 0.175, "h3": 0.175})
    assert v.alt.passed  # the judge itself passes ...
    assert v.answer == CANNOT_TELL and v.reason == "chance" and v.chance_wins == 3  # ... but it proves nothing
    assert ("a judge answering at random would be expected to win against 3 of 3 people (labels drawn from the "
            "people's own label shares) at epsilon 0.2") in v.why
    # with epsilon 0.1 (crowd-workers) the chance judge loses against everyone (0.15 and 0.175 >= 0.1): the
    # test can tell, and the judge (every d <= 0, mean -8/40 or -6/40) still passes
    v = judge_validation(data, epsilon=0.1).verdicts["judge"]["reflected"]
    assert v.answer == YES and v.chance_wins == 0


def test_the_rule_checks_conditions_before_agreement_and_agreement_before_the_test():
    # the rule alone, on the chance case: a winning rate of 1 never turns into a yes
    people, judge = {}, {}
    for k, h in enumerate(("h1", "h2", "h3")):
        people[h] = {i: r[k] for i, r in enumerate(_chance_rows())}
    judge = {i: r[3] for i, r in enumerate(_chance_rows())}
    res = alt_test(people, judge, judge="j")
    assert res.passed
    v = replacement_verdict(res, people, judge)
    assert v.answer == CANNOT_TELL and v.reason == "agreement"
    assert replacement_verdict(alt_test(people, judge, judge="j", min_instances=50), people, judge,
                               min_instances=50).reason == "items"  # 40 < 50: the data first


def test_study_answer_over_dimensions():
    assert study_answer([YES, YES]) == YES
    assert study_answer([YES, NO, CANNOT_TELL]) == NO
    assert study_answer([YES, CANNOT_TELL]) == CANNOT_TELL
    assert study_answer([]) == CANNOT_TELL
    yes = judge_validation(_agreeing_people()).verdicts["judge"]["reflected"]
    no = judge_validation(_agreeing_people(judge_flips=10)).verdicts["judge"]["reflected"]
    sentence = verdict_sentence("j", [("awareness", yes), ("quality", no), ("alignment", yes)])
    assert sentence.startswith("May j replace the people on this study? No: on awareness and alignment, yes: it "
                               "passes the alternative annotator test")
    assert "; on quality, no: it fails the alternative annotator test" in sentence


# ---- 5 and 6. validators never among the people; T/F and MCQ never merged (through the database) -------------
PEOPLE = ("ana", "ben", "cy")
#: 4 T/F items (options True, False; keys True, False, True, False) then 4 MCQ items (keys A, B, C, D):
#: each person's and the model's choice (option index) per item
CHOICES = {"ana": [0, 1, 0, 1, 0, 1, 2, 3], "ben": [0, 1, 0, 0, 0, 1, 2, 0], "cy": [0, 1, 1, 1, 0, 1, 3, 3],
           "model-x": [0, 0, 0, 1, 0, 1, 2, 3]}
VALIDATORS = ("validator:v0", "validator:v1")  # both answer the second option everywhere


@pytest.fixture
def mixed_db(db_file):
    items = [ItemIn(external_id=f"t{i}", kind="mcq", payload={
        "question": f"Is statement {i} true?", "options": ["True", "False"], "correct_index": i % 2, "fmt": "tf"})
        for i in range(4)]
    items += [ItemIn(external_id=f"m{i}", kind="mcq", payload={
        "question": f"Which one ({i})?", "options": ["w", "x", "y", "z"], "correct_index": i}) for i in range(4)]
    order = [f"t{i}" for i in range(4)] + [f"m{i}" for i in range(4)]
    with Store.open(db_file, mode="create") as s:
        s.import_items("d", "jsonl", items)
        st = create_study(s, StudySpec(name="mix", task="mcq", datasets=["d"], seed=3, annotators=list(PEOPLE),
                                       annotators_per_item=3))
        units = {s.get_item(u.item_id).external_id: u for u in s.units(st.id)}
        for who in PEOPLE:
            ann = s.ensure_annotator(who)
            mine = {a.unit_id: a for a in s.assignments(st.id, ann.id)}
            for ext, c in zip(order, CHOICES[who]):
                u = units[ext]
                s.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                              assignment_id=mine[u.id].id if u.id in mine else None,
                                              status="answered", seconds=5.0,
                                              answer={"choice": c, "letter": "ABCD"[c], "shown": "ABCD"[c],
                                                      "cant_tell": False}))
        add_judgment_records(s, [{"item": e, "choice": c} for e, c in zip(order, CHOICES["model-x"])], "mix",
                             "model-x", model="openai/model-x")
        for v in VALIDATORS:
            add_judgment_records(s, [{"item": e, "choice": 1} for e in order], "mix", v, model=v)
    return db_file


def _report(db, capsys, fmt="json"):
    capsys.readouterr()
    assert main(["report", "mix", "--format", fmt, "--db", db]) == 0
    out = capsys.readouterr().out
    return json.loads(out)["studies"][0] if fmt == "json" else out


@pytest.mark.slow
def test_validators_are_never_people(mixed_db, capsys):
    rep = _report(mixed_db, capsys)
    tables = {t["key"]: t for t in rep["figure_set"]["tables"]}
    models = {"model-x", *VALIDATORS}
    for r in tables["judge_pairs"]["rows"]:
        if r[2] == "human-human (ceiling)":
            assert {r[0], r[1]} <= set(PEOPLE)
        elif r[2] == "human-LLM":
            assert len({r[0], r[1]} & set(PEOPLE)) == 1 and len({r[0], r[1]} & models) == 1
        else:
            assert r[2] == "LLM-LLM" and {r[0], r[1]} <= models
    # the ceiling averages the 3 pairs of people per format; each model's row averages its 3 pairs with people
    ceiling = {(r[0], r[1]): r for r in tables["judge_ceiling"]["rows"]}
    assert ceiling[(TF_DIM, "human-human (ceiling)")][2] == 3
    assert ceiling[(TF_DIM, "validator:v0 vs humans")][2] == 3
    # the people tested by the alt-test are people
    assert {r[2] for r in tables["alt_test_annotators"]["rows"]} == set(PEOPLE)
    # majority of the PEOPLE: T/F True, False, True, False; MCQ A, B, C, D. validator:v0 says False / B everywhere
    acc = {(r[0], r[1]): r[3] for r in tables["judge_vs_majority"]["rows"]}
    assert acc[("validator:v0", TF_DIM)] == pytest.approx(2 / 4)
    assert acc[("validator:v0", MCQ_DIM)] == pytest.approx(1 / 4)
    assert acc[("model-x", TF_DIM)] == pytest.approx(3 / 4) and acc[("model-x", MCQ_DIM)] == 1.0
    # one sentence per model, each counting the study's 3 people only
    sentences = rep["leads"][0]["sentences"]
    assert [s.split("?")[0] for s in sentences] == [f"May {m} replace the people on this study"
                                                    for m in ("model-x", *VALIDATORS)]
    assert all("0 of the 3 people who labelled" in s for s in sentences)  # 4 items each, under 30


def test_tf_and_mcq_items_are_never_merged(mixed_db, capsys):
    rep = _report(mixed_db, capsys)
    fs = rep["figure_set"]
    tables = {t["key"]: t for t in fs["tables"]}
    pairs = {(r[0], r[1], r[3]): r for r in tables["judge_pairs"]["rows"]}
    assert {r[3] for r in tables["judge_pairs"]["rows"]} == {TF_DIM, MCQ_DIM}  # no pooled "overall", no "choice"
    # ana vs ben, T/F: ana T F T F, ben T F T T: agreement 3/4; p(T) 1/2 and 3/4 -> p_e = 3/8 + 1/8 = 1/2,
    # kappa = (3/4 - 1/2) / (1/2) = 1/2
    tf = pairs[("ana", "ben", TF_DIM)]
    assert tf[4] == 4 and tf[5]["value"] == pytest.approx(0.75) and tf[6]["value"] == pytest.approx(0.5)
    # MCQ: ana A B C D, ben A B C A: agreement 3/4; p_e = 1/4 (1/2 + 1/4 + 1/4 + 0) = 1/4, kappa = 2/3
    # (merged, letters A/B of both formats pooled: agreement 6/8, p_e = 22/64, kappa 0.619: never reported)
    mcq = pairs[("ana", "ben", MCQ_DIM)]
    assert mcq[4] == 4 and mcq[6]["value"] == pytest.approx(2 / 3)
    # one confusion table per format: the model's T/F against the people's majority T F T F: T T T F
    plots = {p["key"]: p for p in fs["plots"]}
    cm = plots[f"judge_confusion:model-x:{TF_DIM}"]["data"]
    assert cm["rows"] == ["humans: False", "humans: True"] and cm["values"] == [[1, 1], [0, 2]]
    cm = plots[f"judge_confusion:model-x:{MCQ_DIM}"]["data"]
    assert cm["rows"] == [f"humans: {c}" for c in "ABCD"] and cm["values"] == [[int(i == j) for j in range(4)]
                                                                                for i in range(4)]
    assert not any(k.endswith(":choice") for k in plots)
    # the sentence answers per format
    sentence = rep["leads"][0]["sentences"][0]
    assert sentence == (
        "May model-x replace the people on this study? Cannot tell yet: on T/F items and MCQ items alike, the "
        "alternative annotator test needs at least 3 people, each with at least 30 items that the judge and another "
        "person also labelled (Calderon, Reichart and Dror 2025, FAQ: three or more annotators for a consensus "
        "signal, 30 or more items each for its t-test); 0 of the 3 people who labelled these items have them; ana, "
        "ben and cy have 4 each (26 more needed each).")


@pytest.mark.parametrize("fmt", ["md", "html", "latex", "json"])
@pytest.mark.slow
def test_the_sentence_opens_the_section_in_every_format(mixed_db, fmt, capsys):
    out = _report(mixed_db, capsys, fmt)
    if fmt == "json":
        lead = out["leads"][0]
        assert lead["before"] == "judge_pairs" and len(lead["sentences"]) == 3
        return
    start = {"md": "May model-x replace the people on this study? Cannot tell yet",
             "html": "<p class=\"lead\">May model-x replace the people on this study? Cannot tell yet",
             "latex": "May model-x replace the people on this study? Cannot tell yet"}[fmt]
    assert start in out
    # right before the section's first table
    first = {"md": "### judge validation: agreement per rater pair", "html": "<caption>judge validation: agreement",
             "latex": r"\caption{mix: judge validation: agreement"}[fmt]
    assert out.index("judge validation: may the judge replace the people on this study?") < out.index(start) \
        < out.index(first)


def test_status_shows_the_sentence(mixed_db, capsys):
    capsys.readouterr()
    assert main(["status", "mix", "--db", mixed_db]) == 0
    out = capsys.readouterr().out
    assert "judge verdict: May model-x replace the people on this study? Cannot tell yet" in out
    assert main(["status", "mix", "--format", "json", "--db", mixed_db]) == 0
    study = json.loads(capsys.readouterr().out)["studies"][0]
    assert len(study["judge_verdicts"]) == 3
    capsys.readouterr()
    assert main(["report", "mix", "--format", "json", "--db", mixed_db]) == 0
    assert json.loads(capsys.readouterr().out)["studies"][0]["leads"][0]["sentences"] == study["judge_verdicts"]


def test_names_in_the_sentence_are_never_markup():
    from reports.render import Lead, StudyReport, render
    from reports.figures import FigureSet

    name = "<img src=x onerror=alert(1)>*j_[x](y)&amp;"
    rep = StudyReport(figures=FigureSet(study="s", task="mcq"),
                      leads=[Lead("judge validation: may the judge replace the people on this study?",
                                  [f"May {name} replace the people on this study? Cannot tell yet: because."])])
    md = render([rep], "md")
    assert "<img" not in md.replace(r"\<img", "") and r"\<img src=x onerror=alert(1)\>\*j\_\[x\](y)\&amp;" in md
    html = render([rep], "html")
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;*j_[x](y)&amp;amp;" in html
    latex = render([rep], "latex")
    assert r"\textless{}img src=x onerror=alert(1)\textgreater{}*j\_[x](y)\&amp;" in latex
