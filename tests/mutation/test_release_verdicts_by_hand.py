"""Release verdicts of the mcq-family task types on answers worked by hand, at each boundary of their rules
(CONTRIBUTING.md, "Mutation testing"): blind test (guessable rule), easy test (more than half correct), plain mcq."""
from __future__ import annotations

import pytest

from annotator.tasks import get_task
from tests.mutation.mcq_plan import mcq_study


def _verdicts(store, task: str, plan: dict, llm_answers: dict | None = None) -> dict:
    data, ext = mcq_study(store, task, plan, llm_answers, per_item=1)  # one answer meets an item's quota
    out = get_task(task).outcomes(data)
    return {ext[uid]: (o.state, o.reason, o.fields) for uid, o in out.items()}


def test_blind_test_guessable_rule(store):
    # chance 1/4. one-sided binomial P(X >= k | n, 1/4):
    # 1 of 2: 1 - (3/4)^2 = 0.4375; 3 of 4: 4 (1/4)^3 (3/4) + (1/4)^4 = 13/256 = 0.0508 (just above 0.05);
    # 4 of 5: 5 (1/4)^4 (3/4) + (1/4)^5 = 16/1024 = 0.0156 (below 0.05)
    plan = {
        "all2": (1, [1, 1]),                 # 2 answers, all correct: guessable (the minimum number of answers)
        "half": (1, [1, 0]),                 # p 0.4375: not guessable
        "one": (1, [1, "x"]),                # one option answer (can't tell left out): too few
        "none": (1, []),                     # no answer: too few (0)
        "p0508": (2, [2, 2, 2, 0]),          # p 13/256 >= 0.05: not guessable
        "p0156": (3, [3, 3, 3, 3, 0]),       # p 16/1024 < 0.05: guessable though not all correct
        "nokey": (None, [0, 0]),
    }
    # an LLM judge's answers are not human answers: they cannot make "one" judgeable
    got = _verdicts(store, "blind_test", plan, llm_answers={"one": {"judge": 1}, "none": {"judge": 1}})
    flagged = "guessable without the history (flagged)"
    assert got == {
        "all2": ("failed", flagged, {}), "half": ("passed", "not guessable", {}),
        "one": ("undecided", "too few option answers to judge (1)", {}), "none": ("open", "no answer yet", {}),
        "p0508": ("passed", "not guessable", {}), "p0156": ("failed", flagged, {}), "nokey": ("undecided", "no key", {}),
    }


def test_easy_test_more_than_half_correct(store):
    plan = {
        "2of3": (0, [0, 0, 1]),
        "1of2": (0, [0, 1]),       # exactly half: a tie, undecided until adjudicated
        "1of1": (2, [None, 2]),
        "cant": (0, ["x", "x", 0]),  # can't tell counts as not correct
        "unanswered": (0, []),
        "nokey": (None, [0]),
    }
    got = _verdicts(store, "easy_test", plan, llm_answers={"1of2": {"judge": 0}, "unanswered": {"judge": 0}})
    assert got == {
        "2of3": ("passed", "easy test: 2 of 3 correct", {}),
        "1of2": ("needs_adjudication", "easy test: 1 of 2 correct, a tie", {}),
        "1of1": ("passed", "easy test: 1 of 1 correct", {}), "cant": ("failed", "easy test: 1 of 3 correct", {}),
        "unanswered": ("open", "no answer yet", {}), "nokey": ("undecided", "no key", {}),
    }


def test_plain_mcq_passes_once_a_human_answered(store):
    got = _verdicts(store, "mcq", {"a": (0, [1]), "b": (0, [])}, llm_answers={"b": {"judge": 0}})
    assert got == {"a": ("passed", "annotated", {}), "b": ("open", "no answer yet", {})}


@pytest.mark.parametrize("fmt, n_options, expected", [("tf", 2, 0.5), ("mcq", 4, 0.25), ("mcq", 5, 0.2)])
def test_blind_chance_per_format(fmt, n_options, expected):
    from annotator.tasks.blind_test.figures import chance
    from annotator.tasks.mcq.stats import ItemAnswers
    from storage.models import Item

    payload = {"question": "q", "options": [str(i) for i in range(n_options)], "fmt": fmt}
    it = ItemAnswers("u", Item(id="i", dataset_id="d", external_id="e", kind="mcq", payload=payload,
                               content_hash="h"))
    assert chance(it) == expected
