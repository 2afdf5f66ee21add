"""HorizonBench section 5.3 from prefval: three people's answers on five-option items (imported with `prefval
import annotations`, as a team that ran its annotation elsewhere would), majority-vote accuracy under prefval's
tie rule and under the paper's (--option tie_rule=first-annotator, HorizonBench's agreement script), Fleiss' kappa
and at-least-one-correct, worked by hand; and the per-model pre-evolution distractor share with its binomial test
beside the people's."""
from __future__ import annotations

import json
from fractions import Fraction

import pytest

from annotator.cli import main

# 60 items, key A (option 0), three people in name order ann1, ann2, ann3; x = can't tell (the script's discard)
PATTERNS = ([("A", "A", "A")] * 25 + [("B", "A", "A")] * 10 + [("A", "A", "C")] * 5   # 40: plurality A
            + [("B", "B", "A")] * 5 + [("B", "B", "C")] * 3                           # 8: plurality wrong
            + [("A", "B", "C")] * 5 + [("x", "A", "B")] * 2                           # 7 ties the script settles on A
            + [("B", "A", "C")] * 4 + [("x", "C", "A")] * 1)                          # 5 ties it settles wrongly
assert len(PATTERNS) == 60


def _setup(tmp_path, option=()):
    tmp_path.mkdir(exist_ok=True)
    db = str(tmp_path / "hb.db")
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"h{i:02d}", "question": f"Which reply fits the user now? ({i})",
                                         "options": [f"reply {c} {i}" for c in "ABCDE"], "correct_index": 0})
                             + "\n" for i in range(60)))
    assert main(["import", "jsonl", str(items), "--kind", "mcq", "--dataset", "hb", "--db", db]) == 0
    assert main(["study", "create", "hb", "--task", "mcq", "--dataset", "hb", "--annotators-per-item", "3",
                 *option, "--db", db]) == 0
    f = tmp_path / "answers.csv"
    rows = ["item,annotator,answer,cant_tell"]
    for i, pat in enumerate(PATTERNS):
        for who, a in zip(("ann1", "ann2", "ann3"), pat):
            rows.append(f"h{i:02d},{who},{'' if a == 'x' else a},{'true' if a == 'x' else ''}")
    f.write_text("\n".join(rows) + "\n")
    assert main(["import", "annotations", str(f), "--study", "hb", "--db", db]) == 0
    return db


def _figures(db, capsys, command):
    capsys.readouterr()
    if command == "studydata":  # the path of a report with model answers or adjudications
        from annotator.tasks import get_task
        from reports.study_data import load_study_data
        from storage.store import Store

        with Store.open(db, mode="ro") as s:
            return {f.key: f.model_dump() for f in get_task("mcq").figures(load_study_data(s, "hb")).figures}
    if command == "report":
        assert main(["report", "hb", "--format", "json", "--db", db]) == 0
        fs = json.loads(capsys.readouterr().out)["studies"][0]["figure_set"]
        return {f["key"]: f for f in fs["figures"]}
    assert main(["status", "hb", "--format", "json", "--db", db]) == 0
    out = json.loads(capsys.readouterr().out)
    study = out["studies"][0] if "studies" in out else out
    return {f["key"]: f for f in study["figures"]}


@pytest.mark.parametrize("command", ["report", "status", "studydata"])
def test_majority_vote_under_both_tie_rules_by_hand(tmp_path, capsys, command):
    ours = _figures(_setup(tmp_path / "a"), capsys, command)
    paper = _figures(_setup(tmp_path / "b", ["--option", "tie_rule=first-annotator"]), capsys, command)
    mv, mv_paper = ours["majority_vote_accuracy"], paper["majority_vote_accuracy"]
    # prefval's rule: the 12 ties get no label: 40 / 60
    assert mv["value"] == pytest.approx(40 / 60) and round(mv["value"], 3) == 0.667
    assert mv["label"] == "majority-vote accuracy (annotators' votes; a tie: no label; adjudications not used)"
    assert "tie rule no-label (prefval's default)" in mv["note"] and "(12 tied items)" in mv["note"]
    # the paper's script: each tie goes to the first non-discard answer: 40 + 5 + 2 = 47 of 60
    assert mv_paper["value"] == pytest.approx(47 / 60) and round(mv_paper["value"], 4) == 0.7833
    assert mv_paper["label"] == ("majority-vote accuracy (annotators' votes; a tie: the first annotator's answer; "
                                 "adjudications not used)")
    assert "tie rule first-annotator (HorizonBench's agreement script, scripts/compute_annotator_agreement.py " \
           "compute_majority_vote)" in mv_paper["note"] and "(12 tied items)" in mv_paper["note"]
    assert mv["n"] == mv_paper["n"] == 60
    for figs in (ours, paper):  # the tie rule changes nothing else
        # agreement P = (25 * 1 + 23 * 1/3 + 12 * 0) / 60 = 98/180; shares A 122, B 37, C 18, can't tell 3 of 180
        p_bar = Fraction(98, 180)
        p_e = Fraction(122 ** 2 + 37 ** 2 + 18 ** 2 + 3 ** 2, 180 ** 2)
        assert figs["fleiss_kappa"]["value"] == pytest.approx(float((p_bar - p_e) / (1 - p_e)))  # 1054/15814
        assert figs["at_least_one_correct"]["value"] == pytest.approx(57 / 60)  # the 3 (B, B, C) items have no A


def test_tie_rule_option_is_checked(tmp_path, capsys):
    db = str(tmp_path / "x.db")
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "q", "question": "Q?", "options": ["a", "b"], "correct_index": 0,
                                 "snippet": [{"role": "user", "content": "hi"}]}) + "\n")
    assert main(["import", "jsonl", str(items), "--kind", "mcq", "--dataset", "d", "--db", db]) == 0
    capsys.readouterr()
    assert main(["study", "create", "s", "--task", "mcq", "--dataset", "d", "--option", "tie_rule=coin",
                 "--db", db]) == 1
    assert "--option tie_rule=coin: use no-label or first-annotator" in capsys.readouterr().err
    assert main(["study", "create", "s", "--task", "easy_test", "--dataset", "d", "--option",
                 "tie_rule=first-annotator", "--db", db]) == 1
    assert "--option tie_rule applies to mcq studies (majority-vote accuracy), not easy_test" in \
        capsys.readouterr().err


@pytest.mark.parametrize("labels, expected", [
    (["A", "B", "C"], "A"),                 # three different answers: the first annotator's
    (["x", "B", "C"], "B"),                 # the first is a discard: the next one's
    (["B", "A", "A"], "A"),                 # no tie: the plurality, whoever came first
    (["x", "x", "A", "A"], "A"),            # a tie of discard and A: A
    (["B", "x", "A", "A", "B"], "B"),       # a tie of A and B: B comes first
    (["C", "A", "A", "B", "B"], "A"),       # C is not among the tied: the first tied one, A
    ([None, "x"], "x"),                     # one rating, a discard: it is the plurality
    ([None, None], None),
])
def test_first_non_discard_rule_as_the_script(labels, expected):
    from reports.stats import majority_vote, majority_vote_first_non_discard

    assert majority_vote_first_non_discard(labels, discard="x") == expected
    if len(set(x for x in labels if x)) == 1 or labels == ["B", "A", "A"]:
        assert majority_vote(labels) == expected  # without a tie both rules agree


# the distractor table: 8 five-option items, key A, pre-evolution distractor B (chance 1/4 among the 4 wrong options)
D_PEOPLE = [("A", "A", "A"), ("A", "A", "B"), ("B", "B", "A"), ("B", "C", "A"),
            ("C", "D", "A"), ("x", "x", "A"), ("B", "D", "E"), ("A", "A", "A")]  # wrong 10, on B 5
D_MODELS = {"m-anchor": "BBBBCDAA",     # wrong 6 (d0-d5), on B 4
            "m-uniform": "AABCDEAA"}    # wrong 4 (d2-d5), on B 1


@pytest.mark.slow
def test_distractor_share_per_model_with_its_binomial_test_beside_the_people(tmp_path, capsys):
    db = str(tmp_path / "d.db")
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"d{i}", "question": f"Which reply fits the user now? ({i})",
                                         "options": [f"reply {c} {i}" for c in "ABCDE"], "correct_index": 0,
                                         "distractor_index": 1}) + "\n" for i in range(8)))
    assert main(["import", "jsonl", str(items), "--kind", "mcq", "--dataset", "d", "--db", db]) == 0
    assert main(["study", "create", "hb", "--task", "mcq", "--dataset", "d", "--annotators-per-item", "3",
                 "--db", db]) == 0
    f = tmp_path / "people.csv"
    f.write_text("item,annotator,answer,cant_tell\n" + "".join(
        f"d{i},{who},{'' if a == 'x' else a},{'true' if a == 'x' else ''}\n"
        for i, pat in enumerate(D_PEOPLE) for who, a in zip(("ann1", "ann2", "ann3"), pat)))
    assert main(["import", "annotations", str(f), "--study", "hb", "--db", db]) == 0
    for model, picks in D_MODELS.items():
        j = tmp_path / f"{model}.jsonl"
        j.write_text("".join(json.dumps({"item": f"d{i}", "choice": c}) + "\n" for i, c in enumerate(picks)))
        assert main(["import", "judgments", str(j), "--study", "hb", "--judge", model, "--db", db]) == 0
    capsys.readouterr()
    assert main(["report", "hb", "--format", "json", "--db", db]) == 0
    fs = json.loads(capsys.readouterr().out)["studies"][0]["figure_set"]
    table = next(t for t in fs["tables"] if t["key"] == "distractor_by_model")
    assert table["columns"] == ["tester", "wrong answers", "on the distractor", "share", "uniform share 1/(k-1)",
                                "share / uniform", "p (one-sided binomial)"]
    rows = {r[0]: r for r in table["rows"]}
    assert list(rows) == ["people (this study)", "m-anchor", "m-uniform"]
    # P(X >= x) for X ~ Binomial(n, 1/4): sum_{j >= x} C(n, j) 3^(n-j) / 4^n
    from math import comb

    def tail(x, n):
        return sum(comb(n, j) * 3 ** (n - j) for j in range(x, n + 1)) / 4 ** n

    for name, wrong, on_b in (("people (this study)", 10, 5), ("m-anchor", 6, 4), ("m-uniform", 4, 1)):
        r = rows[name]
        assert (r[1], r[2], r[3]["value"], r[4]) == (wrong, on_b, pytest.approx(on_b / wrong), 0.25)
        assert r[5] == pytest.approx(on_b / wrong / 0.25) and r[6] == pytest.approx(tail(on_b, wrong))
    assert rows["m-anchor"][6] == pytest.approx(154 / 4096) and rows["m-uniform"][6] == pytest.approx(175 / 256)
    assert rows["people (this study)"][6] == pytest.approx(81922 / 1048576)
    figs = {x["key"]: x for x in fs["figures"]}
    anchor = figs["llm_distractor_share:m-anchor"]
    assert (anchor["value"], anchor["n"], anchor["n_of"]) == (pytest.approx(4 / 6), 6, "wrong answers")
    assert anchor["p_value"] == pytest.approx(154 / 4096)
    # the people's own figure carries the same test, from their answers alone
    people = figs["distractor_share"]
    assert people["value"] == pytest.approx(0.5) and people["p_value"] == pytest.approx(81922 / 1048576)
    assert people["p_label"] == "one-sided binomial test, share above uniform 1/(k-1)"


def test_distractor_test_with_items_of_several_k_by_hand():
    from annotator.tasks.mcq.figures import distractor_p_value

    # a five-option item: 1 wrong answer, on the distractor (chance 1/4); a three-option item: 1 wrong answer, not
    # on it (chance 1/2): X = B(1, 1/4) + B(1, 1/2), P(X >= 1) = 1 - 3/4 * 1/2 = 5/8
    assert distractor_p_value([[1, 1, 1 / 4], [1, 0, 1 / 2]]) == pytest.approx(5 / 8)
    # two wrong answers of one item, both on it: (1/4)^2
    assert distractor_p_value([[2, 2, 2 / 4]]) == pytest.approx(1 / 16)
    assert distractor_p_value([]) is None


def test_distractor_row_counts_wrong_answers_and_prints_a_small_p(tmp_path, capsys):
    """4 items, 3 people, 6 wrong answers all on the distractor B: the share's n is the 6 wrong answers (not the 4
    items), and p = (1/4)^6 = 1/4096 = 0.000244 is printed as such (3 significant digits), never as 0.000."""
    db = str(tmp_path / "d.db")
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"d{i}", "question": f"Which reply fits? ({i})",
                                         "options": [f"reply {c} {i}" for c in "ABCDE"], "correct_index": 0,
                                         "distractor_index": 1}) + "\n" for i in range(4)))
    assert main(["import", "jsonl", str(items), "--kind", "mcq", "--dataset", "d", "--db", db]) == 0
    assert main(["study", "create", "hb", "--task", "mcq", "--dataset", "d", "--annotators-per-item", "3",
                 "--db", db]) == 0
    f = tmp_path / "people.csv"
    pats = [("B", "B", "A"), ("B", "B", "A"), ("B", "A", "A"), ("B", "A", "A")]  # wrong 2+2+1+1 = 6, all B
    f.write_text("item,annotator,answer\n" + "".join(f"d{i},{who},{a}\n" for i, pat in enumerate(pats)
                                                     for who, a in zip(("ann1", "ann2", "ann3"), pat)))
    assert main(["import", "annotations", str(f), "--study", "hb", "--db", db]) == 0
    j = tmp_path / "m.jsonl"
    j.write_text("".join(json.dumps({"item": f"d{i}", "choice": "A"}) + "\n" for i in range(4)))
    assert main(["import", "judgments", str(j), "--study", "hb", "--judge", "m", "--db", db]) == 0
    capsys.readouterr()
    assert main(["report", "hb", "--format", "json", "--db", db]) == 0
    fs = json.loads(capsys.readouterr().out)["studies"][0]["figure_set"]
    row = next(t for t in fs["tables"] if t["key"] == "distractor_by_model")["rows"][0]
    assert row[0] == "people (this study)" and (row[1], row[2]) == (6, 6)
    assert (row[3]["n"], row[3]["n_of"]) == (6, "wrong answers")
    assert row[6] == pytest.approx(1 / 4096)
    assert main(["report", "hb", "--format", "md", "--db", db]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("| people (this study) | 6 | 6 "))
    assert "(n=6 wrong answers)" in line and line.rstrip().endswith("| 0.000244 |")
