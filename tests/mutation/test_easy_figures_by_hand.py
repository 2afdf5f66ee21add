"""Easy-test figures (RealPref G.2, table 8) of a small study worked by hand: accuracy overall, MCQ, T/F and per
expression type with the published human values, the group tables and the not-inferable items
(CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import pytest

from annotator.tasks import get_task
from tests.mutation.mcq_plan import mcq_study

# small hand-worked tables: intervals even below the 7-item minimum (tested on its own)
pytestmark = pytest.mark.usefixtures("intervals_from_few_items")

PLAN = {"e1": (0, [0, 0, 1]),       # MCQ, 2 of 3
        "e2": (0, [1, "x"]),        # T/F, 0 of 2 (can't tell counts as a miss)
        "e3": (2, [2]),             # MCQ, 1 of 1
        "e4": (None, [0])}          # no key: left out
META = {"e1": {"expression_type": 3, "preference_type": "Positive"}, "e2": {"expression_type": 3, "Type": "Negative"},
        "e3": {"expression_type": 4}}
BOOT = "; 95% percentile bootstrap over items, 1000 resamples, seed 1"


def test_every_figure_and_table_by_hand(store):
    data, _ = mcq_study(store, "easy_test", PLAN, metadata=META, tf=frozenset({"e2"}), per_item=1)
    fs = get_task("easy_test").figures(data)
    assert [f.key for f in fs.figures] == ["accuracy", "accuracy_mcq", "accuracy_tf", "accuracy_expression_3",
                                           "accuracy_expression_4"]
    f = {x.key: x for x in fs.figures}
    for key, label, value, n, what in (
            # n counts answers (can't tell included, as in every accuracy): all 6 over 3 items, MCQ 4 over 2, T/F 2
            ("accuracy", "accuracy, all items", 3 / 6, 6, "6 answers over 3 items; correct answers / answers, all items"),
            ("accuracy_mcq", "accuracy, MCQ", 3 / 4, 4, "4 answers over 2 items; correct answers / answers, MCQ"),
            ("accuracy_tf", "accuracy, T/F", 0.0, 2, "2 answers over 1 items; correct answers / answers, T/F")):
        assert (f[key].label, f[key].value, f[key].n, f[key].n_of) == (
            label + " (can't tell counts as wrong)", pytest.approx(value), n, "answers")
        assert f[key].note == what + BOOT
    e3, e4 = f["accuracy_expression_3"], f["accuracy_expression_4"]
    assert (e3.label, e3.value, e3.n) == ("accuracy, expression type 3 (can't tell counts as wrong)",
                                          pytest.approx(2 / 5), 5)
    assert e3.note == ("5 answers over 2 items; correct answers / answers, expression type 3 (MCQ and T/F; split in "
                       "the table below)" + BOOT)
    assert "published_human" not in e3.extra and e4.value == 1.0  # Table 8's humans took MCQ only: not this row

    t8, by_type, by_pref, hard = fs.tables
    # RealPref Table 8's layout: MCQ (Type 3) e1 2/3, T/F (Type 3) e2 0/2, MCQ (Type 4) e3 1/1, no T/F item of type 4
    assert t8.columns == ["tester", "MCQ (Type 3)", "T/F (Type 3)", "MCQ (Type 4)", "T/F (Type 4)"]
    assert [None if c is None else c.value for c in t8.rows[0][1:]] == [pytest.approx(2 / 3), 0.0, 1.0, None]
    assert t8.rows[1] == ["Human (RealPref Table 8, published)", 0.98, None, 0.96, None]
    assert (by_type.key, by_type.title) == ("accuracy_by_expression_type", "accuracy by expression type")
    assert by_type.columns == ["format", "expression type", "items", "answers", "accuracy (can't tell counts as wrong)",
                               "ci_low", "ci_high",
                               "published (humans, MCQ, RealPref Table 8)"]
    assert by_type.note == "answers include can't tell; can't tell counts as wrong; 95% bootstrap intervals over items"
    assert [r[:5] + r[7:] for r in by_type.rows] == [
        ["all items", "3", 2, 5, pytest.approx(0.4), None], ["all items", "4", 1, 1, 1.0, None],
        ["MCQ", "3", 1, 3, pytest.approx(2 / 3), 0.98], ["MCQ", "4", 1, 1, 1.0, 0.96],
        ["T/F", "3", 1, 2, 0.0, None]]
    assert (by_pref.key, by_pref.title) == ("accuracy_by_preference_type", "accuracy by preference type")
    assert by_pref.columns == ["format", "preference type", "items", "answers", "accuracy (can't tell counts as wrong)",
                               "ci_low", "ci_high"]
    assert [r[:5] for r in by_pref.rows] == [
        ["all items", "Negative", 1, 2, 0.0], ["all items", "Positive", 1, 3, pytest.approx(2 / 3)],
        ["all items", "n/a", 1, 1, 1.0], ["MCQ", "Positive", 1, 3, pytest.approx(2 / 3)], ["MCQ", "n/a", 1, 1, 1.0],
        ["T/F", "Negative", 1, 2, 0.0]]
    assert hard.model_dump() == {
        "key": "not_inferable", "title": "not inferable: items most annotators miss",
        "columns": ["item", "format", "expression type", "preference type", "answers", "correct", "question"],
        "rows": [["e2", "tf", "3", "Negative", 2, 0, "question e2?"]],
        "note": "the items the easy test fails: more than half of the item's answers are not correct (can't tell "
                "counts as a miss), once it has its quota of answers; an item decided by adjudication follows the "
                "adjudicated answer"}


def test_exactly_half_missed_is_inferable(store):
    data, _ = mcq_study(store, "easy_test", {"h": (0, [0, 1])}, per_item=1)
    (_, _, _, hard) = get_task("easy_test").figures(data).tables
    assert hard.rows == []  # a tie: undecided until adjudicated, not failed
    assert get_task("easy_test").outcomes(data)[data.units[0].id].state == "needs_adjudication"
