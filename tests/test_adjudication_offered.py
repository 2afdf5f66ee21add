"""`prefval adjudicate` offers every disagreement, `prefval status` counts only the items whose votes decide nothing
as "needs adjudication" (the outcome rule, annotator/tasks/outcome.py, unchanged): the screen's head and the line
the command ends with say how many of the disagreements offered block the outcome and how many the votes already
decided, so the two figures reconcile.

The study: 6 persona records, 4 annotators each (quota 4), majority rule. p0 kept by all (no disagreement); p1
3 keep / 1 drop (kept by the votes); p2 and p4 2 / 2 (ties: need adjudication); p3 1 keep / 3 drop (dropped by the
votes); p5 1 keep / 2 drop, 3 answers of its 4 (too few answers). Offered: p1-p5 (5); 2 need adjudication, 2 decided
by the votes, 1 with too few answers.
"""
from __future__ import annotations

import json

import pytest

from annotator.adjudication import AdjudicationSession
from annotator.cli import main
from annotator.commands.adjudicate import closing_line
from annotator.screens.adjudicate import AdjudicateApp
from annotator.study_setup import create_study
from annotator.tasks.base import Decision, StudySpec
from storage.models import AnnotationIn, ItemIn
from storage.store import Store

K, D = {"decision": "keep", "reasons": []}, {"decision": "drop", "reasons": []}
PEOPLE = ("ana", "ben", "cy", "dee")
VOTES = {"p0": (K, K, K, K), "p1": (K, K, D, K), "p2": (K, D, D, K), "p3": (D, K, D, D), "p4": (D, K, K, D),
         "p5": (K, D, D, None)}


@pytest.fixture
def round_db(db_file) -> str:
    with Store.open(db_file, mode="create") as s:
        s.import_items("personas", "jsonl", [ItemIn(external_id=p, kind="persona_record",
                                                    payload={"text": f"A person ({p})."}) for p in VOTES])
        st = create_study(s, StudySpec(name="r1", task="persona_filter", datasets=["personas"], seed=1,
                                       annotators=list(PEOPLE), annotators_per_item=4))
        units = {s.get_item(u.item_id).external_id: u for u in s.units(st.id)}
        for k, who in enumerate(PEOPLE):
            ann = s.ensure_annotator(who)
            for p, votes in VOTES.items():
                if votes[k] is None:
                    continue
                u = units[p]
                s.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                              status="answered", answer=votes[k]))
    return db_file


def _status_needs_adjudication(db: str, capsys) -> int:
    capsys.readouterr()
    assert main(["status", "r1", "--format", "json", "--db", db]) == 0
    return json.loads(capsys.readouterr().out)["studies"][0]["outcomes"]["needs_adjudication"]


def test_the_closing_line_says_which_disagreements_block_the_outcome(round_db, capsys):
    assert _status_needs_adjudication(round_db, capsys) == 2
    with Store.open(round_db, mode="rw") as s:
        session = AdjudicationSession(s, "r1", "judy")
        assert sorted(session.items[u.item_id].external_id for u in session.units) == ["p1", "p2", "p3", "p4", "p5"]
        assert session.offered() == {"needs_adjudication": 2, "needs_adjudication_left": 2, "votes": 2, "too_few": 1}
        assert closing_line(session) == (
            "judy adjudicated 0 of 5 disagreements in r1: 2 need adjudication (the votes decide nothing; 2 left, "
            "which `prefval status r1` counts as needing adjudication), 2 decided by the votes (an adjudication "
            "overrides them), 1 undecided: too few answers")
        tie = next(i for i, u in enumerate(session.units) if session.items[u.item_id].external_id == "p2")
        session.index = tie
        session.decide(Decision(K))
        voted = next(i for i, u in enumerate(session.units) if session.items[u.item_id].external_id == "p1")
        session.index = voted
        session.decide(Decision(D))  # an adjudication overrides the votes' "kept"
        assert session.offered()["needs_adjudication_left"] == 1
        assert closing_line(session).startswith(
            "judy adjudicated 2 of 5 disagreements in r1: 2 need adjudication (the votes decide nothing; 1 left, "
            "which `prefval status r1` counts as needing adjudication), 2 decided by the votes")
        assert session.offered_text() == "2 need adjudication (1 left), 2 decided by the votes, " \
                                         "1 undecided: too few answers"
    assert _status_needs_adjudication(round_db, capsys) == 1  # p4, the tie left


def test_no_tie_among_the_disagreements(db_file, capsys):
    with Store.open(db_file, mode="create") as s:
        s.import_items("personas", "jsonl", [ItemIn(external_id="p1", kind="persona_record",
                                                    payload={"text": "A person."})])
        st = create_study(s, StudySpec(name="r1", task="persona_filter", datasets=["personas"], seed=1,
                                       annotators=["ana", "ben", "cy"], annotators_per_item=3))
        u = s.units(st.id)[0]
        for who, vote in zip(("ana", "ben", "cy"), (K, K, D)):
            s.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id,
                                          annotator_id=s.ensure_annotator(who).id, status="answered", answer=vote))
        session = AdjudicationSession(s, "r1", "judy")
        assert closing_line(session) == (
            "judy adjudicated 0 of 1 disagreements in r1: none needs adjudication (`prefval status r1` counts none "
            "as needing it), 1 decided by the votes (an adjudication overrides them)")
    assert _status_needs_adjudication(db_file, capsys) == 0


@pytest.mark.parametrize("width, tail", [
    (161, "· 0/5 adjudicated · disagreement 1/5 · 2 need adjudication (2 left), 2 decided by the votes, "
          "1 undecided: too few answers"),
    # the head holds width - 2 characters (padding), 74 of them before the split: 159 with the whole split, 150
    # without "(2 left)", 120 without the other states as well
    (160, "· 0/5 adjudicated · disagreement 1/5 · 2 need adjudication, 2 decided by the votes, "
          "1 undecided: too few answers"),
    (152, "· 0/5 adjudicated · disagreement 1/5 · 2 need adjudication, 2 decided by the votes, "
          "1 undecided: too few answers"),
    (151, "· 0/5 adjudicated · disagreement 1/5 · 2 need adjudication, 2 decided by the votes"),
    (122, "· 0/5 adjudicated · disagreement 1/5 · 2 need adjudication, 2 decided by the votes"),
    (121, "· 0/5 adjudicated · disagreement 1/5"),  # the split does not fit: left out, the head stays one row
])
async def test_the_head_says_it_when_it_fits(round_db, width, tail):
    app = AdjudicateApp(round_db, "r1", "judy")
    async with app.run_test(size=(width, 30)) as pilot:
        await pilot.pause()
        head = str(app.screen.query_one("#head").render())
    assert head.startswith("adjudicate r1 (persona_filter) · judy ") and head.endswith(tail)
    assert len(head) <= width - 2
