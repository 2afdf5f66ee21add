"""Boundaries that a one-character bug would move (issue 13): a threshold met exactly, a quota met exactly, a
queue finished exactly. Expected values are worked out by hand in the comments."""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from annotator.screens.summary import SummaryScreen
from annotator.session import Session
from annotator.study_setup import create_study
from annotator.tasks.gold_label.figures import context_unanimity, gold_labels
from annotator.tasks.base import StudySpec
from reports.study_data import load_study_data
from storage.errors import PrefvalError
from storage.store import Store

from .test_task_gold_label import ROWS, WHO, gold_items
from .test_session import _answer


def _label_by_session(db: str, study: str) -> None:
    """Every annotator of WHO answers every item of the gold study with the labels of ROWS."""
    labels = {e: votes for e, *_, votes in ROWS}
    with Store.open(db, mode="create") as s:
        for k, who in enumerate(WHO):
            w = Session(s, study, who)
            while not w.finished:
                view = w.view()
                w.decide(w.task.decide(str(labels[view.item.external_id][k]), view, None))


@pytest.mark.parametrize("threshold, old_friend_kept", [(2 / 3, True), (0.67, False)])
@pytest.mark.slow
def test_a_context_exactly_at_the_unanimity_threshold_is_kept(db_file, threshold, old_friend_kept):
    # "Old Friend / Plan a reunion" has three complete items, g3 (1,1,1), g4 (1,0,1) and g5 (1,1,1): 2 of 3
    # unanimous, rate 2/3. At a threshold of exactly 2/3 it is kept (rate >= threshold); at 0.67 it is dropped.
    with Store.open(db_file, mode="create") as s:
        s.import_items("src", "jsonl", gold_items())
        create_study(s, StudySpec(name="gl", task="gold_label", datasets=["src"], seed=5,
                                  options={"context_threshold": threshold}))
    _label_by_session(db_file, "gl")
    with Store.open(db_file, mode="create") as s:
        data = load_study_data(s, "gl")
        ctx = context_unanimity(data)
        friend = ctx[("Old Friend", "Plan a reunion")]
        assert (friend["complete"], friend["unanimous"]) == (3, 2)
        assert friend["kept"] is old_friend_kept
        assert ctx[("IRS Agent", "Resolve a tax discrepancy")]["kept"] is True  # 3 of 3
        gold = gold_labels(data)
    # g4 is not unanimous: never a gold label; g3 and g5 have one only while their context is kept
    expected_friend = {"g3": 1, "g4": None, "g5": 1} if old_friend_kept else {"g3": None, "g4": None, "g5": None}
    assert {e: gold[e] for e in ("g3", "g4", "g5")} == expected_friend
    assert {e: gold[e] for e in ("g0", "g1", "g2")} == {"g0": 1, "g1": 0, "g2": 0}


def test_the_annotator_beyond_the_quota_is_refused_and_the_last_one_within_it_is_not(db_file):
    from .conftest import make_mcq_items

    items, ctx = make_mcq_items(3)
    with Store.open(db_file, mode="create") as s:
        s.import_items("d", "jsonl", items, contexts=ctx)
        create_study(s, StudySpec(name="q", task="mcq", datasets=["d"], seed=2, annotators_per_item=2))
        # two annotators per item: ana and bo (the second, exactly at the quota) each get all 3 items
        assert len(Session(s, "q", "ana").queue) == 3
        assert len(Session(s, "q", "bo").queue) == 3
        # cy would be the third annotator of every item: refused, and nothing is assigned to cy
        with pytest.raises(PrefvalError, match="no items for annotator 'cy'"):
            Session(s, "q", "cy")
        st = s.get_study("q")
        per_unit = {}
        for a in s.assignments(st.id):
            per_unit[a.unit_id] = per_unit.get(a.unit_id, 0) + 1
        assert sorted(per_unit.values()) == [2, 2, 2]


@pytest.mark.slow
async def test_a_finished_annotator_who_reopens_lands_on_the_summary(mcq_study):
    with Store.open(mcq_study, mode="create") as s:
        w = Session(s, "st", "ana")
        for _ in range(6):
            w.decide(_answer(0))
        again = Session(s, "st", "ana")
        assert again.resume_index() == 6 and again.finished  # past the last item (6 items), not on it
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, SummaryScreen)
        await pilot.press("a")  # a decision key on the summary records nothing
        await pilot.pause()
    with Store.open(mcq_study, mode="create") as s:
        assert len(s.annotations(s.get_study("st").id)) == 6
