"""Blind-test figures (RealPref G.2) of a small study worked by hand: accuracy against chance with its exact
one-sided binomial p, can't-tell rate, guessable share, the odd-one-out polarity figure and the per-item table
(CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import pytest

from annotator.tasks import get_task
from annotator.tasks.blind_test.figures import polarity
from annotator.tasks.mcq.stats import ItemAnswers
from storage.models import Item
from tests.mutation.mcq_plan import mcq_study

PLAN = {"b1": (0, [0, 0]),          # 2 of 2 correct: p = (1/4)^2 = 1/16; guessable (all correct)
        "b2": (1, [0, "x", 2]),     # 0 of 2 (one can't tell): p = 1; not guessable
        "b3": (2, ["x"]),           # no option answer: not judged
        "b4": (3, [3, 0, 3]),       # 2 of 3: p = 3 (1/16)(3/4) + 1/64 = 10/64; not guessable
        "b5": (None, [0, 1])}       # no key: left out of everything
META = {"b1": {"polarity": "Negative"}, "b2": {"preference_type": "Negative Preference"},
        "b3": {"Type": "Positive Preference"}}


def test_every_figure_and_the_item_table_by_hand(store):
    # two annotators per item: b3's one answer leaves it short of its quota (undecided, not judged)
    data, _ = mcq_study(store, "blind_test", PLAN, metadata=META, per_item=2)
    fs = get_task("blind_test").figures(data)
    assert [f.key for f in fs.figures] == ["accuracy_vs_chance_mcq", "cant_tell_rate_mcq", "guessable_share_mcq",
                                           "guessable_negative_share"]
    acc, ct, gs, odd = fs.figures
    # option answers: b1 T T, b2 F F, b4 T F T -> 4 of 7 at chance 1/4;
    # P(X >= 4 | 7, 1/4) = (35*27 + 21*9 + 7*3 + 1) / 4^7 = 1156 / 16384
    assert (acc.label, acc.value, acc.n, acc.n_of) == ("blind accuracy, MCQ (4 options), chance 0.25",
                                                       pytest.approx(4 / 7), 7, "answers")
    assert acc.p_value == pytest.approx(1156 / 16384)
    assert acc.p_label == "one-sided binomial test, above chance"
    assert acc.note == ("7 answers over 3 items; exact binomial test against chance 0.25, one-sided (above chance); "
                        "can't tell answers left out; answers taken as independent trials")
    assert "published_llm" not in acc.extra and acc.ci_low < 4 / 7 < acc.ci_high
    assert (ct.label, ct.value, ct.n, ct.n_of, ct.note) == ("can't tell answers, MCQ (4 options)",
                                                            pytest.approx(2 / 9), 9, "answers", "9 answers over 4 items")
    assert (gs.label, gs.value, gs.n) == ("guessable items, MCQ (4 options)", pytest.approx(1 / 3), 3)
    assert gs.note.startswith("share of items flagged guessable among the items the study has decided (their quota "
                              "of answers, at least 2 option answers): the items `prefval release` leaves out; ")
    # polarity known for b1 (negative), b2 (negative), b3 (other); guessable among them: b1 only -> 1 of 1
    assert (odd.label, odd.value, odd.n) == ("guessable MCQ items with a negative preference", 1.0, 1)
    assert odd.extra["negative_share_all_mcq"] == pytest.approx(2 / 3)
    assert (odd.extra["items_known_polarity"], odd.extra["items_unknown_polarity"]) == (3, 1)

    (table,) = fs.tables
    assert (table.key, table.title) == ("items", "blind answers per item")
    assert table.columns == ["item", "format", "options", "answers", "correct", "can't tell", "accuracy", "chance",
                             "p (one-sided)", "guessable", "outcome"]
    assert table.note == ("guessable: at least 2 option answers and all correct, or one-sided binomial p < 0.05 at "
                          "chance, once the item has its quota of answers (blank until then); can't tell is not an "
                          "option answer; outcome: the item's decision, as `prefval release` applies it")
    assert sorted(table.rows, key=lambda r: r[0]) == [
        ["b1", "mcq", 4, 2, 2, 0, 1.0, 0.25, pytest.approx(1 / 16), True,
         "failed: guessable without the history (flagged)"],
        ["b2", "mcq", 4, 2, 0, 1, 0.0, 0.25, pytest.approx(1.0), False, "passed: not guessable"],
        ["b3", "mcq", 4, 0, 0, 1, None, 0.25, None, None, "undecided: too few answers (1 of 2)"],
        ["b4", "mcq", 4, 3, 2, 0, pytest.approx(2 / 3), 0.25, pytest.approx(10 / 64), False,
         "passed: not guessable"]]


def test_no_polarity_and_no_answer(store):
    data, _ = mcq_study(store, "blind_test", {"b1": (0, [])})
    f = {x.key: x for x in get_task("blind_test").figures(data).figures}
    odd = f["guessable_negative_share"]
    assert (odd.value, odd.note) == (None, "not available: the items carry no polarity or preference type")
    assert (f["cant_tell_rate_mcq"].value, f["cant_tell_rate_mcq"].note) == (None, "no answer yet")
    assert f["accuracy_vs_chance_mcq"].value is None
    assert f["accuracy_vs_chance_mcq"].note == "undefined: no answered item"  # not the note of a computed test


@pytest.mark.parametrize("meta, expected", [
    ({"polarity": "Neg"}, "negative"), ({"polarity": " negative "}, "negative"), ({"polarity": "pos"}, "other"),
    ({"polarity": "pos", "Type": "Negative"}, "other"),  # polarity first
    ({"preference_type": "Negative Preference"}, "negative"), ({"Type": "negative"}, "negative"),
    ({"preference_type": "Positive", "Type": "Negative"}, "other"), ({"Type": "Positive"}, "other"), ({}, None),
])
def test_polarity_sources(meta, expected):
    item = Item(id="i", dataset_id="d", external_id="e", kind="mcq",
                payload={"question": "q", "options": ["a", "b"], "metadata": meta}, content_hash="h")
    assert polarity(ItemAnswers("u", item)) == expected


def test_true_false_and_mcq_groups_by_hand(store):
    # t1, t2 T/F (key 0): answers 0, 0, 1 -> 2 of 3 at chance 1/2; m1 MCQ (4 options): 1 answer, correct
    data, _ = mcq_study(store, "blind_test", {"t1": (0, [0, 0]), "t2": (0, [1]), "m1": (2, [2])},
                        tf=frozenset({"t1", "t2"}))
    fs = get_task("blind_test").figures(data)
    f = {x.key: x for x in fs.figures}
    assert [x.key for x in fs.figures] == [
        "accuracy_vs_chance_tf", "cant_tell_rate_tf", "guessable_share_tf",
        "accuracy_vs_chance_mcq", "cant_tell_rate_mcq", "guessable_share_mcq", "guessable_negative_share"]
    tf = f["accuracy_vs_chance_tf"]
    assert (tf.label, tf.value, tf.n) == ("blind accuracy, T/F, chance 0.5", pytest.approx(2 / 3), 3)
    assert "published_llm" not in tf.extra
    assert f["cant_tell_rate_tf"].label == "can't tell answers, T/F"
    assert f["guessable_share_tf"].label == "guessable items, T/F"
