"""Quotas and answers under concurrency (issue 11): several processes claiming at once, the same annotator in two
windows, another program holding the write lock while the screen answers, and lazy claims in batches (issue 12)."""
from __future__ import annotations

import multiprocessing
import sqlite3
from collections import Counter

import pytest

from annotator.session import Session
from annotator.study_setup import CLAIM_BATCH, claim_assignments, create_study
from annotator.tasks.base import Decision, StudySpec
from storage.errors import PrefvalError
from storage.store import Store
from tests.conftest import make_mcq_items
from tests.screen import wait_for


def _study(path: str, n: int, quota: int, name: str = "st") -> None:
    items, contexts = make_mcq_items(n, with_context=False)
    with Store.open(path, mode="create") as s:
        s.import_items("ds", "jsonl", items, contexts=contexts)
        create_study(s, StudySpec(name=name, task="mcq", datasets=["ds"], seed=3, annotators_per_item=quota))


def _answer(choice: int) -> Decision:
    return Decision({"choice": choice, "letter": "ABCD"[choice], "shown": "A", "cant_tell": False})


def _per_unit(path: str, study: str = "st") -> Counter:
    with Store.open(path, mode="create") as s:
        return Counter(a.unit_id for a in s.assignments(s.get_study(study).id))


# ---- claims: counting and claiming are one transaction ------------------------------------------------------
def _claim_until_empty(path: str, who: str, barrier) -> int:
    """A child process: wait for the others, then claim batch after batch until nothing is left."""
    store = Store.open(path, mode="create")
    study = store.get_study("st")
    annotator = store.ensure_annotator(who)
    barrier.wait()
    total = 0
    while True:
        n = claim_assignments(store, study, annotator)
        if not n:
            break
        total += n
    store.close()
    return total


@pytest.mark.parametrize("quota", [1, 3])
@pytest.mark.slow
def test_four_processes_claiming_together_never_overfill_a_unit(db_file, quota):
    n_units = 150
    _study(db_file, n_units, quota)
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Manager().Barrier(4)
    with ctx.Pool(4) as pool:
        got = pool.starmap(_claim_until_empty, [(db_file, f"ann{i}", barrier) for i in range(4)])
    per_unit = _per_unit(db_file)
    assert len(per_unit) == n_units
    assert set(per_unit.values()) == {quota}  # every unit claimed exactly quota times, none over
    assert sum(got) == n_units * quota
    if quota == 3:  # nobody can hold more than every unit once
        assert max(got) <= n_units


def _open_session(path: str, who: str, barrier) -> list[str]:
    store = Store.open(path, mode="create")
    barrier.wait()
    try:
        return [a.unit_id for a in Session(store, "st", who).queue]
    except PrefvalError:
        return []
    finally:
        store.close()


@pytest.mark.slow
def test_annotators_opening_a_study_together_share_it(db_file):
    # 4 annotators open a 50-unit study at the same moment: each gets one batch of its own, and two are refused
    # only when nothing is left; no unit is in two queues.
    _study(db_file, 50, 1)
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Manager().Barrier(4)
    with ctx.Pool(4) as pool:
        queues = pool.starmap(_open_session, [(db_file, f"ann{i}", barrier) for i in range(4)])
    sizes = sorted(len(q) for q in queues)
    assert sizes == [0, 10, 20, 20]  # 50 = 20 + 20 + 10, then nothing left for the fourth
    claimed = [u for q in queues for u in q]
    assert len(claimed) == len(set(claimed)) == 50


def test_an_annotator_beyond_the_quota_is_refused(db_file):
    _study(db_file, 3, 2)
    with Store.open(db_file, mode="create") as s:
        assert len(Session(s, "st", "ana").queue) == 3
        assert len(Session(s, "st", "bo").queue) == 3
        with pytest.raises(PrefvalError, match="every item already has its annotators"):
            Session(s, "st", "cy")
        assert set(_per_unit(db_file).values()) == {2}
        # an LLM judge does not take a human's place
        judge = s.ensure_annotator("judge", kind="llm")
        study = s.get_study("st")
        s.add_assignments(study.id, [(u.id, judge.id, i, 0) for i, u in enumerate(s.units(study.id))])
        assert s.claimable_count(study.id, s.ensure_annotator("dee").id) == 0


def test_claims_come_in_batches_as_the_queue_is_worked(db_file):
    _study(db_file, 70, 1)
    with Store.open(db_file, mode="create") as s:
        ana = Session(s, "st", "ana")
        assert len(ana.queue) == CLAIM_BATCH == 20
        assert ana.unclaimed == 50
        bo = Session(s, "st", "bo")  # a later starter gets the next batch, not nothing
        assert len(bo.queue) == 20 and not {a.unit_id for a in ana.queue} & {a.unit_id for a in bo.queue}
        for _ in range(19):
            ana.decide(_answer(0))
        assert len(ana.queue) == 20 and ana.index == 19
        ana.skip()  # the last open item: the next batch is claimed before moving on
        assert len(ana.queue) == 40 and ana.index == 20
        assert ana.progress() == (19, 40) and ana.counts() == {"answered": 19, "skipped": 1, "open": 20}
        assert ana.unclaimed == 10
        assert not {a.unit_id for a in ana.queue} & {a.unit_id for a in bo.queue}
        # resume: the queue and its order come back as they were
        again = Session(s, "st", "ana")
        assert [a.unit_id for a in again.queue] == [a.unit_id for a in ana.queue] and again.index == 20


def test_quota_three_fills_the_units_begun_first(db_file):
    _study(db_file, 60, 3)
    with Store.open(db_file, mode="create") as s:
        queues = [{a.unit_id for a in Session(s, "st", who).queue} for who in ("ana", "bo", "cy", "dee")]
    assert queues[0] == queues[1] == queues[2]  # the first batch goes to three people: agreement right away
    assert not queues[3] & queues[0] and len(queues[3]) == 20


# ---- the same annotator in several windows: the supersedes chain -------------------------------------------
def _change_first_answer(path: str, k: int, barrier, n: int) -> None:
    store = Store.open(path, mode="create")
    w = Session(store, "st", "ana")
    barrier.wait()
    for i in range(n):
        w.go(0)
        w.decide(_answer((k + i) % 4))
    store.close()


@pytest.mark.slow
def test_concurrent_changes_of_one_answer_form_one_chain(db_file):
    _study(db_file, 4, 1)
    with Store.open(db_file, mode="create") as s:
        first = Session(s, "st", "ana").queue[0].unit_id
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Manager().Barrier(3)
    with ctx.Pool(3) as pool:
        pool.starmap(_change_first_answer, [(db_file, k, barrier, 25) for k in range(3)])
    with Store.open(db_file, mode="create") as s:
        study = s.get_study("st")
        rows = s.history(study.id, first, s.ensure_annotator("ana").id)
        assert len(rows) == 75
        assert rows[0].supersedes is None
        assert [r.supersedes for r in rows[1:]] == [r.id for r in rows[:-1]]  # each supersedes the one before
        assert s.current_annotations(study.id)[0].id == rows[-1].id


# ---- another program holds the write lock while the screen answers -----------------------------------------
@pytest.mark.slow
async def test_the_screen_stays_responsive_while_the_database_is_busy(mcq_study):
    from annotator.app import AnnotateApp
    from annotator.screens.guidelines import GuidelinesScreen
    from tests.tui_helpers import see_all

    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    blocker = sqlite3.connect(mcq_study, isolation_level=None)
    reader = sqlite3.connect(mcq_study)

    def answered() -> int:
        return reader.execute("SELECT COUNT(*) FROM annotations WHERE status = 'answered'").fetchone()[0]

    async with app.run_test(size=(100, 32)) as pilot:
        first = app.session.queue[0].unit_id
        await see_all(pilot)  # the conversation scrolled to its end, so that the key decides
        blocker.execute("BEGIN IMMEDIATE")  # e.g. a long `study create` in another process
        await pilot.press("a")
        await pilot.pause(0.3)
        state = str(app.screen.query_one("#state").render())
        assert "saving" in state and "busy" in state
        assert answered() == 0 and app.session.index == 0  # not saved yet, and the next item is not shown
        await pilot.press("b")  # a second decision on the unsaved item is refused, not queued
        await pilot.press("question_mark")  # the screen still answers keys
        await pilot.pause()
        assert isinstance(app.screen, GuidelinesScreen)
        await pilot.press("escape")
        await pilot.pause()
        blocker.execute("COMMIT")
        await wait_for(pilot, answered, what="the answer written once the lock is free")
        await pilot.pause(0.2)
        assert answered() == 1
        row = reader.execute("SELECT unit_id, answer FROM annotations").fetchone()
        assert row[0] == first and '"shown": "A"' in row[1]  # key a: the option shown first
        assert app.session.index == 1  # moved on only once committed
        assert "saving" not in str(app.screen.query_one("#state").render())
    blocker.close()
    reader.close()


def test_released_items_go_back_to_the_pool_for_claims(db_file):
    from annotator.study_setup import release

    _study(db_file, 20, 1)
    with Store.open(db_file, mode="create") as s:
        ana = Session(s, "st", "ana")
        ana.decide(_answer(0))
        ana.decide(_answer(1))
        assert release(s, ana.study, "ana", keep_skipped=False) == (18, 2)
        bo = Session(s, "st", "bo")  # the 18 unanswered units are open again; the 2 answered stay with ana
        assert len(bo.queue) == 18 and bo.unclaimed == 0
        assert set(_per_unit(db_file).values()) == {1}


# ---- big writes commit in batches ----------------------------------------------------------------------------
def _commits(store: Store) -> list[str]:
    seen: list[str] = []
    store.db.conn.set_trace_callback(lambda sql: seen.append(sql) if sql.strip().upper() == "COMMIT" else None)
    return seen


@pytest.mark.slow
def test_big_imports_and_study_creations_commit_in_batches(db_file, monkeypatch):
    import storage.datasets
    import storage.studies

    monkeypatch.setattr(storage.datasets, "BATCH_ROWS", 100)
    monkeypatch.setattr(storage.studies, "BATCH_ROWS", 100)
    items, _ = make_mcq_items(1000, with_context=False)
    with Store.open(db_file, mode="create") as s:
        commits = _commits(s)
        s.import_items("ds", "jsonl", items)
        assert len(commits) >= 10  # 1,000 items in batches of 100 (plus the dataset row and the import record)
        commits.clear()
        create_study(s, StudySpec(name="big", task="mcq", datasets=["ds"], seed=1, annotators_per_item=2,
                                  annotators=["ana", "bo"]))
        assert len(commits) >= 10 + 20  # 1,000 units and 2,000 assignments, 100 rows a batch
        assert len(s.units(s.get_study("big").id)) == 1000 and set(_per_unit(db_file, "big").values()) == {2}


def test_a_study_being_created_is_hidden_and_an_abandoned_one_is_replaced(db_file):
    _study(db_file, 5, 1)
    with Store.open(db_file, mode="create") as s:
        item_ids = [it.id for it in s.items("ds")]
        half = s.create_study("half", "mcq", {"annotators_per_item": 1}, 0, [(i, None, {}) for i in item_ids],
                              in_batches=True)
        assert "half" not in [x.name for x in s.studies()]
        with pytest.raises(PrefvalError, match="still being created"):
            s.get_study("half")
        with pytest.raises(PrefvalError, match="is creating it"):  # this process is alive: not replaced
            s.create_study("half", "mcq", {}, 0, [(item_ids[0], None, {})])
        # the creating process died: its hidden study is removed by the next create of the name
        dead = {**half.settings, "creating": {"pid": 2 ** 22 + 12345, "host": half.settings["creating"]["host"]}}
        s.db["studies"].update(half.id, {"settings": __import__("json").dumps(dead)})
        again = s.create_study("half", "mcq", {}, 0, [(item_ids[0], None, {})])
        assert len(s.units(again.id)) == 1 and s.units(half.id) == []
        # a unit naming an unknown item in a late batch: nothing of the study is left
        with pytest.raises(PrefvalError, match="could not add its items"):
            create_study_units = [(i, None, {}) for i in item_ids] + [("no-such-item", None, {})]
            s.create_study("bad", "mcq", {}, 0, create_study_units, in_batches=True)
        assert "bad" not in [x.name for x in s.studies(include_archived=True)]
        assert s.db.execute("SELECT COUNT(*) FROM studies WHERE name = 'bad'").fetchone()[0] == 0
