"""The judge-validation section of reports (reports.judge_vs_human): hand-worked values on constructed studies,
cross-checks against scikit-learn / scipy, and `prefval report` in every format."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from annotator.cli import main
from reports.judge_vs_human import judge_validation_section
from reports.stats.alt_test import alt_test
from reports.study_data import StudyData
from storage.models import Annotation, AnnotationIn, Annotator, Item, Study, Unit
from storage.store import Store


def make_data(task: str, answers: dict[str, list], kinds: dict[str, str], settings: dict | None = None,
              payloads: list[dict] | None = None) -> StudyData:
    """A StudyData in memory: answers = rater -> one answer dict (or None) per unit u0, u1, ..."""
    n = max(len(v) for v in answers.values())
    study = Study(id="s", name="st", task_type=task, settings=settings or {}, seed=1, created_at="now")
    units = [Unit(id=f"u{i}", study_id="s", item_id=f"i{i}", position=i) for i in range(n)]
    items = {f"i{i}": Item(id=f"i{i}", dataset_id="d", external_id=f"e{i}", kind="x",
                           payload=(payloads[i] if payloads else {}), content_hash="h") for i in range(n)}
    annotators = {name: Annotator(id=name, name=name, kind=kinds[name]) for name in answers}
    rows = [Annotation(id=f"{name}{i}", submitted_at="now", study_id="s", unit_id=f"u{i}", item_id=f"i{i}",
                       annotator_id=name, status="answered", answer=a, source=kinds[name])
            for name, per in answers.items() for i, a in enumerate(per) if a is not None]
    return StudyData(study, units, items, annotators, rows)


def table(fs, key):
    return next(t for t in fs.tables if t.key == key)


T, F = True, False
REFLECTED = {"h1": [T, T, F, F], "h2": [T, F, F, F], "h3": [T, T, F, T], "judge": [T, T, T, F, T, T, F, T]}


def reflected_data():
    answers = {k: [{"reflected": v} for v in vals] for k, vals in REFLECTED.items()}
    return make_data("judge_validation", answers, {"h1": "human", "h2": "human", "h3": "human", "judge": "llm"})


def test_binary_judge_against_three_people_hand_worked():
    fs = judge_validation_section(reflected_data(), min_instances=2)
    pairs = {(r[0], r[1]): r for r in table(fs, "judge_pairs").rows}
    # h1 vs judge on u0..u3: agree on 3 of 4; p(h1=T) = 1/2, p(judge=T) = 3/4 -> pe = 1/2, kappa = 0.25 / 0.5
    row = pairs[("h1", "judge")]
    assert row[2] == "human-LLM" and row[4] == 4
    assert row[5].value == pytest.approx(0.75) and row[6].value == pytest.approx(0.5)
    assert pairs[("h1", "h2")][2] == "human-human (ceiling)"
    # ceiling: human pairs agree 3/4, 3/4, 2/4; the judge agrees with h1, h2, h3 on 3/4, 2/4, 2/4
    ceiling = {r[1]: r for r in table(fs, "judge_ceiling").rows}
    assert ceiling["human-human (ceiling)"][3] == pytest.approx(2 / 3)
    assert ceiling["judge vs humans"][3] == pytest.approx((0.75 + 0.5 + 0.5) / 3)
    # majority: u0 T, u1 T, u2 F, u3 F; judge T T T F -> accuracy 3/4; True: precision 2/3, recall 1
    maj = {r[4]: r for r in table(fs, "judge_vs_majority").rows}
    assert maj["True"][3] == pytest.approx(0.75)
    assert maj["True"][5:9] == pytest.approx([2 / 3, 1.0, 0.8, 2])
    assert maj["False"][5:9] == pytest.approx([1.0, 0.5, 2 / 3, 2])
    assert fs.figure("judge_majority_accuracy:judge:reflected").value == pytest.approx(0.75)
    cm = next(p for p in fs.plots if p.key == "judge_confusion:judge:reflected")
    assert cm.data["values"] == [[1, 1], [0, 2]]  # rows humans False, True; columns judge False, True
    # PPI: human means per unit Y = 1, 2/3, 0, 1/3; judge on them 1, 1, 1, 0; judge alone on u4..u7: 1, 1, 0, 1
    # theta = 3/4 + mean(Y - Yhat) = 3/4 - 1/4 = 1/2
    ppi = fs.figure("ppi:judge:reflected")
    assert ppi.value == pytest.approx(0.5) and ppi.n == 8
    se = math.sqrt((3 / 16) / 4 + np.var([0, -1 / 3, -1, 1 / 3]) / 4)
    assert ppi.ci_high - ppi.value == pytest.approx(1.959963984540054 * se)
    ppi_row = table(fs, "ppi").rows[0]
    assert ppi_row[2].value == pytest.approx(0.5) and ppi_row[3].value == pytest.approx(0.75)
    # the alt-test figure is the alt-test of these labels
    ref = alt_test({h: {(f"u{i}", "reflected"): {"reflected": v}["reflected"] for i, v in enumerate(REFLECTED[h])}
                    for h in ("h1", "h2", "h3")},
                   {(f"u{i}", "reflected"): v for i, v in enumerate(REFLECTED["judge"])}, min_instances=2)
    alt = fs.figure("alt_test:judge:reflected")
    assert alt.value == ref.winning_rate and alt.extra["advantage_probability"] == ref.advantage_probability
    # 4 items per person: the test runs (min_instances=2), but the answer waits for the 30 its t-test needs
    assert table(fs, "alt_test").rows[0][6] == "cannot tell yet"
    assert alt.extra["answer"] == "cannot tell yet" and "26 more needed" in alt.extra["why"]


def test_alt_test_needs_thirty_items_by_default():
    fs = judge_validation_section(reflected_data())
    assert fs.figure("alt_test:judge:reflected").value is None
    assert table(fs, "alt_test").rows[0][6] == "cannot tell yet"
    assert all("left out" in r[-1] for r in table(fs, "alt_test_annotators").rows)


@pytest.mark.slow
def test_rubric_scores_cross_checked_with_sklearn_and_scipy():
    from scipy import stats
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(4)
    n = 12
    base = {d: rng.integers(1, 6, n) for d in ("awareness", "quality")}
    scores = {"h1": base, "h2": {d: np.clip(v + rng.integers(-1, 2, n), 1, 5) for d, v in base.items()},
              "judge": {d: np.clip(v + rng.integers(-2, 2, n), 1, 5) for d, v in base.items()}}
    answers = {k: [{"scores": {d: int(s[d][i]) for d in s}} for i in range(n)] for k, s in scores.items()}
    data = make_data("rubric", answers, {"h1": "human", "h2": "human", "judge": "llm"},
                     settings={"dimensions": ["awareness", "quality"]})
    fs = judge_validation_section(data)
    rows = {(r[0], r[1], r[3]): r for r in table(fs, "judge_pairs").rows}
    for d in ("awareness", "quality"):
        a, b = scores["h1"][d], scores["judge"][d]
        row = rows[("h1", "judge", d)]
        assert row[6].value == pytest.approx(cohen_kappa_score(a, b, weights="quadratic", labels=[1, 2, 3, 4, 5]))
        assert row[7].value == pytest.approx(np.corrcoef(a, b)[0, 1])
        assert row[8] == pytest.approx(stats.pearsonr(a, b)[1])
        assert row[9].value == pytest.approx(stats.spearmanr(a, b)[0])
    pooled_a = np.concatenate([scores["h1"]["awareness"], scores["h1"]["quality"]])
    pooled_b = np.concatenate([scores["judge"]["awareness"], scores["judge"]["quality"]])
    overall = rows[("h1", "judge", "overall")]
    assert overall[4] == 2 * n and overall[7].value == pytest.approx(np.corrcoef(pooled_a, pooled_b)[0, 1])
    # RealPref table 10 shape: one row per pair, one column per dimension and overall
    t10 = table(fs, "judge_pearson")
    assert t10.columns == ["raters", "pair", "awareness", "quality", "overall"]
    assert [r[0] for r in t10.rows] == ["h1 / h2", "h1 / judge", "h2 / judge"]
    assert t10.rows[1][4] == pytest.approx(overall[7].value)
    # the alt-test on scores aligns by -RMSE: with two people it is undefined (needs three)
    assert "at least 3" in fs.figure("alt_test:judge:quality").note
    # PPI needs units the judge scored alone: there are none
    assert fs.figure("ppi:judge:quality").value is None


def test_pairwise_ties_counted_both_ways():
    winners = {"h1": ["A", "B", "tie", "A", "A"], "judge": ["A", "tie", "tie", "B", "A"]}
    answers = {k: [{"winner": w} for w in v] for k, v in winners.items()}
    fs = judge_validation_section(make_data("pairwise", answers, {"h1": "human", "judge": "llm"}))
    rows = {r[3]: r for r in table(fs, "judge_pairs").rows}
    # with ties: agree on 0, 2, 4 of 5; ties dropped: units 1 and 2 go, agree on 0 and 4 of 3
    assert rows["winner"][4] == 5 and rows["winner"][5].value == pytest.approx(3 / 5)
    assert rows["winner (ties dropped)"][4] == 3 and rows["winner (ties dropped)"][5].value == pytest.approx(2 / 3)
    # PPI value: A = 1, tie = 1/2, B = 0 (human-only mean over the 5 units)
    assert table(fs, "ppi").rows[0][2].value == pytest.approx((1 + 0 + 0.5 + 1 + 1) / 5)


def test_no_section_without_shared_units():
    only_people = {k: [{"reflected": v} for v in REFLECTED[k]] for k in ("h1", "h2")}
    assert judge_validation_section(make_data("judge_validation", only_people,
                                              {"h1": "human", "h2": "human"})) is None
    apart = {"h1": [{"reflected": True}, None], "judge": [None, {"reflected": True}]}
    assert judge_validation_section(make_data("judge_validation", apart, {"h1": "human", "judge": "llm"})) is None


@pytest.fixture
def judged_db(db_file, tmp_path):
    """The README's judge-validation sample (12 items, judges a and b) plus three people on the first 9 items."""
    assert main(["import", "jsonl", "sample_data/judgments/judge_items.jsonl", "--kind", "gold_candidate",
                 "--dataset", "jv", "--db", db_file]) == 0
    assert main(["study", "create", "jvs", "--task", "judge_validation", "--dataset", "jv", "--db", db_file]) == 0
    for judge, path in (("judge-a", "judge_a.jsonl"), ("judge-b", "judge_b.csv")):
        assert main(["import", "judgments", f"sample_data/judgments/{path}", "--study", "jvs", "--judge", judge,
                     "--db", db_file]) == 0
    with Store.open(db_file, mode="create") as s:
        st = s.get_study("jvs")
        units = s.units(st.id)
        for k, name in enumerate(("ana", "bo", "cy")):
            a = s.ensure_annotator(name)
            for i, u in enumerate(units[:9]):
                s.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=a.id,
                                              status="answered", answer={"reflected": (i + k) % 3 != 0}))
    return db_file


@pytest.mark.parametrize("fmt", ["md", "html", "latex", "json"])
@pytest.mark.slow
def test_report_shows_the_judge_validation_section(judged_db, fmt, capsys):
    assert main(["report", "jvs", "--format", fmt, "--epsilon", "0.1", "--alt-test-min-items", "5",
                 "--db", judged_db]) == 0
    out = capsys.readouterr().out
    if fmt == "json":
        fs = json.loads(out)["studies"][0]["figure_set"]
        keys = {t["key"] for t in fs["tables"]}
        assert {"judge_pairs", "judge_ceiling", "judge_vs_majority", "alt_test", "ppi"} <= keys
        alt = next(f for f in fs["figures"] if f["key"] == "alt_test:judge-a:reflected")
        assert alt["extra"]["epsilon"] == 0.1 and alt["n"] == 9
    else:
        for text in ("alternative annotator test", "prediction-powered", "human-human (ceiling)"):
            assert text in out


def test_report_rejects_a_bad_epsilon(judged_db, capsys):
    with Store.open(judged_db, mode="create") as s:
        before = len(s.annotations(s.get_study("jvs").id))
    assert main(["report", "jvs", "--epsilon", "1.5", "--db", judged_db]) != 0
    err = capsys.readouterr().err.strip()
    assert "--epsilon" in err and len(err.splitlines()) == 1
    with Store.open(judged_db, mode="create") as s:
        assert len(s.annotations(s.get_study("jvs").id)) == before
