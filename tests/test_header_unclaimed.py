"""The header's "+N to claim" (trial 6): p1 and p2 open a 100-item study with one annotator per item at the same
moment; p2 claimed first and kept showing "+80" after p1's claim made it 60, even after answering. It is counted
afresh at each decision."""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from annotator.session import Session
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from storage.store import Store
from tests.conftest import make_mcq_items
from tests.tui_helpers import decide


def _pool(path: str) -> None:
    items, _ = make_mcq_items(100, with_context=False)
    with Store.open(path, mode="create") as s:
        s.import_items("ds", "jsonl", items)
        create_study(s, StudySpec(name="pool", task="mcq", datasets=["ds"], seed=3, annotators_per_item=1))


def _header(app) -> str:
    """The header's text without its progress bar."""
    words = str(app.screen.query_one("#header").render()).split()
    return " ".join(w for w in words if set(w) - set("░█▏▎▍▌▋▊▉"))


@pytest.mark.slow
async def test_plus_to_claim_follows_the_claims_of_others(db_file):
    _pool(db_file)
    app = AnnotateApp(db_file, "pool", "p2", show_timer=False)  # p2 claims 20 first: 80 left
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        assert "0/20 done +80 to claim" in _header(app)
        with Store.open(db_file, mode="rw") as other:  # p1 opens in another window: claims the next 20
            p1 = Session(other, "pool", "p1")
            assert len(p1.queue) == 20 and p1.unclaimed == 60
        await decide(pilot, "a")
        await pilot.pause()
        assert "1/20 done +60 to claim" in _header(app)
        with Store.open(db_file, mode="rw") as other:  # p3 takes 20 more: 40 left for p2
            assert len(Session(other, "pool", "p3").queue) == 20
        await pilot.press("s")  # a skip is a decision too
        await pilot.pause()
        assert "1/20 done +40 to claim" in _header(app)
    with Store.open(db_file, mode="ro") as s:
        study = s.get_study("pool")
        per = {p["annotator"]: (p["assigned"], p["answered"], p["skipped"]) for p in s.annotator_progress(study.id)}
        assert per == {"p1": (20, 0, 0), "p2": (20, 1, 1), "p3": (20, 0, 0)}
        assert s.claimable_count(study.id, s.find_annotator("p2").id) == 40


def test_the_count_of_units_with_a_free_slot_follows_every_change(db_file):
    """study_open_units (migration 19) against a count of the units, through claims, a release, a named
    assignment, an LLM judge (takes no slot) and the study's deletion: 10 units, 2 annotators each."""
    from annotator.study_setup import claim_assignments, release

    items, _ = make_mcq_items(10, with_context=False)

    def kept(s, study_id):
        row = s.db.execute("SELECT open FROM study_open_units WHERE study_id = ?", [study_id]).fetchone()
        return row[0] if row else 0

    def counted(s, study_id):
        return s.db.execute("SELECT COUNT(*) FROM study_items WHERE study_id = ? AND open_slots > 0",
                            [study_id]).fetchone()[0]

    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", items)
        create_study(s, StudySpec(name="two", task="mcq", datasets=["ds"], seed=3, annotators_per_item=2))
        study = s.get_study("two")
        assert kept(s, study.id) == counted(s, study.id) == 10
        ana, bo = s.ensure_annotator("ana"), s.ensure_annotator("bo")
        assert claim_assignments(s, study, ana, limit=6) == 6
        assert kept(s, study.id) == 10  # each of the 6 still has a slot left
        assert claim_assignments(s, study, bo, limit=4) == 4
        assert kept(s, study.id) == counted(s, study.id) == 6  # 4 units full: the ones both hold
        judge = s.ensure_annotator("judge", kind="llm")
        s.add_assignments(study.id, [(u.id, judge.id, i, 0) for i, u in enumerate(s.units(study.id))])
        assert kept(s, study.id) == 6
        assert release(s, study, "bo", keep_skipped=False) == (4, 0)
        assert kept(s, study.id) == counted(s, study.id) == 10
        # ana holds 6 of the 10 open units; bo gave his 4 back and is not offered them again (claim_units)
        assert s.claimable_count(study.id, ana.id) == 4 and s.claimable_count(study.id, bo.id) == 6
        s.delete_study("two")  # no annotation yet: its units and assignments go
        assert counted(s, study.id) == 0 and kept(s, study.id) == 0
