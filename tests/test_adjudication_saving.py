"""The adjudication screen saves as the annotation screen does (annotator/saving.py SaveController): a decision met
by another program's write lock is kept and retried in the background while the screen says so, refuses a second
decision and a move meanwhile, and shows the next unit once it is committed; a quit waits for it, keeping a copy in
a rescue file all along, and what is still unwritten when the wait's limit passes stays in that file."""
from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import threading
from pathlib import Path

import pytest

from annotator.adjudication import AdjudicationSession
from annotator.rescue import RESCUE_INFIX, read_rescued_adjudications
from annotator.screens.adjudicate import AdjudicateApp
from annotator.tasks.base import Decision
from storage.errors import DatabaseBusy
from storage.store import Store
from tests.screen import wait_for
from tests.test_adjudication import answered_mcq_study
from tests.tui_helpers import see_all


def _units(db: str) -> dict[str, str]:
    """external id of the item -> unit id, for the units of study "st"."""
    with Store.open(db, mode="ro") as s:
        study = s.get_study("st")
        units = s.units(study.id)
        items = s.get_items([u.item_id for u in units])
        return {items[u.item_id].external_id: u.id for u in units}


def _log(db: str) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT id, unit_id, kind, answer, reason FROM adjudications ORDER BY submitted_at").fetchall()


def _rescue_files(db: str) -> list[Path]:
    p = Path(db)
    return sorted(p.parent.glob(p.name + RESCUE_INFIX + "*"))


@pytest.fixture
def study(db_file):
    answered_mcq_study(db_file).close()  # disagreements on q1 (0, 0, 1) and q2 (2, can't tell, 2)
    return db_file


def _lock(db: str) -> sqlite3.Connection:
    return sqlite3.connect(db, isolation_level=None, check_same_thread=False)


@contextlib.asynccontextmanager
async def _screen(db: str):
    """judy's adjudication screen on study "st" at 120x36, and a second connection to hold the write lock (closed,
    and so rolled back, at the end): (app, pilot, lock)."""
    app = AdjudicateApp(db, "st", "judy")
    lock = _lock(db)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            yield app, pilot, lock
    finally:
        lock.close()


async def _decide_while_locked(app, pilot, lock) -> None:
    await see_all(pilot)
    lock.execute("BEGIN IMMEDIATE")  # another program holds the write lock
    await pilot.press("b")  # option B of q1, in the item's original order: choice 1
    await wait_for(pilot, lambda: app.screen.saves.saving is not None
                   and "database busy" in str(app.screen.query_one("#state").render()),
                   what="the screen saying the database is busy")


def test_the_store_says_busy_and_a_retried_write_appends_once(study):
    with Store.open(study, mode="rw") as s:
        session = AdjudicationSession(s, "st", "judy")
        pending = session.prepare(Decision({"choice": 1, "letter": "B", "shown": "B", "cant_tell": False}))
        lock = _lock(study)
        lock.execute("BEGIN IMMEDIATE")
        try:
            with s.busy_timeout(0), pytest.raises(DatabaseBusy):
                session.write(s, pending)
        finally:
            lock.execute("ROLLBACK")
            lock.close()
        assert pending.committed is None and _log(study) == []
        session.write(s, pending)
        session.write(s, pending)  # a retry after the commit appends nothing
        assert [(r[0], r[2]) for r in _log(study)] == [(pending.row_id, "final")]
        assert session.apply(pending) is False and session.index == 1  # no other row in force: no conflict


@pytest.mark.slow
async def test_a_busy_database_keeps_the_decision_and_refuses_the_next_until_saved(study):
    units = _units(study)
    async with _screen(study) as (app, pilot, lock):
        await _decide_while_locked(app, pilot, lock)
        assert app.session.index == 0  # the next unit shows only once the decision is committed
        kept = _rescue_files(study)  # a copy from the moment it waits: a kill -9 meanwhile loses nothing
        assert len(kept) == 1 and [a["unit_id"] for a in read_rescued_adjudications(kept[0])] == [units["q1"]]
        await pilot.press("c")  # a second decision on q1: refused, said on the hint line
        await pilot.press("s")  # and no move to another unit meanwhile
        hint = str(app.screen.query_one("#hint").render())
        assert "still saving your last decision" in hint and app.session.index == 0
        assert _log(study) == []
        lock.execute("ROLLBACK")
        await wait_for(pilot, lambda: app.session.index == 1, what="the next unit once the decision is saved")
        assert app.screen.saves.saving is None
    log = _log(study)
    assert [(u, k, r) for _, u, k, _, r in log] == [(units["q1"], "final", None)]
    assert '"choice": 1' in log[0][3]  # option B: choice 1, the `c` typed meanwhile never saved
    assert _rescue_files(study) == []


@pytest.mark.slow
async def test_q_while_saving_waits_for_the_decision_with_a_copy_kept(study):
    units = _units(study)
    async with _screen(study) as (app, pilot, lock):
        await _decide_while_locked(app, pilot, lock)
        await pilot.press("q")
        await pilot.pause(0.6)
        assert app.is_running  # waits for the write, and says so
        files = _rescue_files(study)
        assert len(files) == 1
        kept = read_rescued_adjudications(files[0])
        assert [(a["unit_id"], a["kind"], a["answer"]["choice"], a["reason"]) for a in kept] == [
            (units["q1"], "final", 1, None)]
        lock.execute("ROLLBACK")
        await wait_for(pilot, lambda: not app.is_running, what="the app ending once the lock is free")
    assert app.unsaved is None
    log = _log(study)
    assert [(i, u, k) for i, u, k, _, _ in log] == [(kept[0]["id"], units["q1"], "final")]  # the id kept
    assert _rescue_files(study) == []


@pytest.mark.slow
async def test_a_lock_past_the_limit_leaves_the_decision_in_the_rescue_file(study, monkeypatch):
    import annotator.saving as saving

    monkeypatch.setattr(saving, "QUIT_SAVE_LIMIT", 0.5)
    units = _units(study)
    async with _screen(study) as (app, pilot, lock):
        await _decide_while_locked(app, pilot, lock)
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running, timeout=10, what="the quit giving up after its limit")
    assert _log(study) == []
    files = _rescue_files(study)
    assert len(files) == 1
    assert app.unsaved == (f"NOT saved in {study}: 1 decision ({study}: the adjudication was NOT saved (the "
                           f"database is busy: another program is writing to it); try again); kept in {files[0]}; "
                           f"put back with: prefval recover {files[0]}")
    kept = read_rescued_adjudications(files[0])
    assert [(a["unit_id"], a["kind"], a["answer"]["choice"]) for a in kept] == [(units["q1"], "final", 1)]


@pytest.mark.slow
async def test_sigterm_while_saving_writes_the_decision_once_the_lock_goes(study):
    units = _units(study)
    async with _screen(study) as (app, pilot, lock):
        await _decide_while_locked(app, pilot, lock)
        screen = app.screen
        threading.Timer(0.8, lambda: lock.execute("ROLLBACK")).start()  # the other program is done in 0.8 s
        os.kill(os.getpid(), signal.SIGTERM)
        await wait_for(pilot, lambda: screen.saves.hung_up == "SIGTERM", what="SIGTERM taken by the screen")
    assert app.unsaved is None
    assert [(u, k) for _, u, k, _, _ in _log(study)] == [(units["q1"], "final")]
    assert _rescue_files(study) == []


@pytest.mark.slow
async def test_an_exclusion_keeps_its_reason_in_the_field_until_saved(study):
    units = _units(study)
    async with _screen(study) as (app, pilot, lock):
        await see_all(pilot)
        await pilot.press("E")
        for ch in "vague":
            await pilot.press(ch)
        lock.execute("BEGIN IMMEDIATE")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen.saves.saving is not None, what="the exclusion waiting")
        assert app.screen.query_one("#reason").value == "vague"  # not saved yet: the reason is still there
        lock.execute("ROLLBACK")
        await wait_for(pilot, lambda: app.session.index == 1, what="the next unit once the exclusion is saved")
        assert app.screen.query_one("#reason").value == ""
    assert [(u, k, r) for _, u, k, _, r in _log(study)] == [(units["q1"], "exclude", "vague")]


def test_a_decision_over_another_adjudicators_meanwhile_counts_as_a_conflict(study):
    with Store.open(study, mode="rw") as s:
        judy = AdjudicationSession(s, "st", "judy")
        kim = AdjudicationSession(s, "st", "kim")  # both opened before either decided q1
        b = Decision({"choice": 1, "letter": "B", "shown": "B", "cant_tell": False})
        first = kim.prepare(b)
        kim.write(s, first)
        assert kim.apply(first) is False  # nothing was in force on q1
        mine = judy.prepare(Decision({"choice": 0, "letter": "A", "shown": "A", "cant_tell": False}))
        judy.write(s, mine)
        assert mine.committed.supersedes == first.row_id  # kim's row, which judy's session never read
        assert judy.apply(mine) is True
        judy.index = 0  # back to q1 (apply moved on)
        again = judy.prepare_exclude("  still unclear ")
        judy.write(s, again)
        assert again.committed.supersedes == mine.row_id and again.committed.reason == "still unclear"
        assert judy.apply(again) is False  # her own row was in force: no conflict
