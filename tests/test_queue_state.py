"""Reopening a study counts and searches the annotator's queue in SQL (storage/queue_state.py), never reading their
answers into Python: each storage query against a small study worked out by hand, the query plans, and Pilot tests
that a reopened study lands where it did before (the first open item; the summary when every item is closed)."""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from annotator.screens.item_list import ItemListScreen
from annotator.screens.summary import SummaryScreen
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from storage.models import AnnotationIn
from storage.store import Store
from tests.conftest import make_mcq_items

ANSWER = {"choice": 0, "letter": "A", "shown": "A", "cant_tell": False}


def _at(n: int) -> str:
    """The n-th timestamp of the hand-written log (one second apart)."""
    return f"2026-01-01T00:00:{n:02d}.000000+00:00"


def _study(db_file: str, n: int = 7) -> None:
    """Study "st" of n MCQ items, assigned by name to ana and bo (both hold every item)."""
    items, contexts = make_mcq_items(n, with_context=False)
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", items, contexts=contexts)
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=3, annotators=["ana", "bo"],
                                  annotators_per_item=2))


def _log(s: Store, who: str, rows: list[tuple[int, str, int, float | None]]) -> list[str]:
    """Append (queue position of `who`, status, time n, seconds) rows for `who`; returns the appended row ids."""
    study = s.get_study("st")
    ann = s.find_annotator(who)
    queue = s.assignments(study.id, ann.id)
    units = {u.id: u for u in s.units(study.id)}
    ids = []
    for pos, status, t, secs in rows:
        a = queue[pos]
        ids.append(s.add_annotation(AnnotationIn(
            study_id=study.id, unit_id=a.unit_id, item_id=units[a.unit_id].item_id, annotator_id=ann.id,
            assignment_id=a.id, status=status, answer=ANSWER if status in ("answered", "partial") else None,
            note="look again" if status == "note" else None, seconds=secs), submitted_at=_at(t)).id)
    return ids


# ana's log, by queue position (7 units: 0..6), worked out by hand:
#   0: skipped                                 -> skipped
#   1: answered (1 s), answered again (10 s)   -> answered (the first answer superseded)
#   2: skipped, then a partial re-scoring      -> partial (unanswered: the first open item)
#   3: skipped, then answered (4 s)            -> answered
#   4: answered (7 s), then partial            -> answered (a re-scoring does not retract the answer)
#   5: flag, note                              -> open, flagged, noted
#   6: flag, unflag                            -> open, not flagged
# and bo answers positions 0..3 of bo's queue (100 s each): none of it is ana's.
ANA = [(1, "answered", 1, 1.0), (3, "skipped", 2, 2.0), (2, "skipped", 3, 1.0), (3, "answered", 4, 4.0),
       (4, "answered", 5, 7.0), (0, "skipped", 6, 2.0), (1, "answered", 7, 10.0), (2, "partial", 8, None),
       (4, "partial", 9, None), (5, "flag", 10, None), (5, "note", 11, None), (6, "flag", 12, None),
       (6, "unflag", 13, None)]


@pytest.fixture
def worked(db_file):
    _study(db_file)
    with Store.open(db_file, mode="rw") as s:
        ids = _log(s, "ana", ANA)
        _log(s, "bo", [(i, "answered", 20 + i, 100.0) for i in range(4)])
    return db_file, ids


def _ids(s: Store):
    study = s.get_study("st")
    ana = s.find_annotator("ana")
    return study.id, ana.id, [a.unit_id for a in s.assignments(study.id, ana.id)]


def test_queue_counts_worked_by_hand(worked):
    db, _ = worked
    with Store.open(db, mode="ro") as s:
        sid, aid, _ = _ids(s)
        assert s.queue_counts(sid, aid) == {"total": 7, "answered": 3, "skipped": 1, "partial": 1, "open": 2,
                                            "flagged": 1, "noted": 1}
        assert s.queue_counts(sid, aid, marks=False) == {"total": 7, "answered": 3, "skipped": 1, "partial": 1,
                                                         "open": 2}
        bo = s.find_annotator("bo").id
        assert s.queue_counts(sid, bo) == {"total": 7, "answered": 4, "skipped": 0, "partial": 0, "open": 3,
                                           "flagged": 0, "noted": 0}


def test_released_units_leave_the_counts(worked):
    """Releasing ana's unanswered units (0, 2, 5, 6: no answered row) leaves the three answered ones."""
    db, _ = worked
    with Store.open(db, mode="rw") as s:
        sid, aid, _ = _ids(s)
        assert s.release_assignments(sid, aid) == 4
        assert s.queue_counts(sid, aid) == {"total": 3, "answered": 3, "skipped": 0, "partial": 0, "open": 0,
                                            "flagged": 0, "noted": 0}
        assert s.queue_first(sid, aid, "open") is None


@pytest.mark.parametrize("walk", [2000, 2, 1], ids=["probed", "walk-2", "walk-1"])
def test_first_open_and_first_skipped_worked_by_hand(worked, walk, monkeypatch):
    """The same answers whether the item is found among the entries probed one by one (WALK) or after them."""
    import storage.queue_state as q

    monkeypatch.setattr(q, "WALK", walk)
    db, _ = worked
    with Store.open(db, mode="ro") as s:
        sid, aid, _ = _ids(s)
        entries = [(a.position, a.id) for a in s.assignments(sid, aid)]
        assert s.queue_first(sid, aid, "open") == 2  # 0 skipped, 1 answered, 2 partial (open)
        assert s.queue_first(sid, aid) == 2  # "open" unless told otherwise
        assert s.queue_first(sid, aid, "open", after=entries[2]) == 5
        assert s.queue_first(sid, aid, "open", after=entries[0], after_rank=0) == 2
        assert s.queue_first(sid, aid, "open", after=entries[3], after_rank=3) == 5
        assert s.queue_first(sid, aid, "open", after=entries[5]) == 6
        assert s.queue_first(sid, aid, "open", after=entries[6]) is None
        assert s.queue_first(sid, aid, "skipped") == 0
        assert s.queue_first(sid, aid, "skipped", after=entries[0]) is None
        bo = s.find_annotator("bo").id
        assert s.queue_first(sid, bo, "open") == 4 and s.queue_first(sid, bo, "skipped") is None


def test_unit_states_and_item_pages_worked_by_hand(worked):
    db, ids = worked
    with Store.open(db, mode="ro") as s:
        sid, aid, queue = _ids(s)
        states = s.unit_states(sid, aid, queue)
        assert [states[u].status for u in queue] == ["skipped", "answered", "partial", "answered", "answered",
                                                     "open", "open"]
        assert states[queue[1]].latest.id == ids[6]  # the second answer (10 s), not the first
        assert states[queue[4]].latest.status == "partial" and states[queue[4]].answered
        assert [states[u].flagged for u in queue] == [False] * 5 + [True, False]
        assert [states[u].noted for u in queue] == [False] * 5 + [True, False]

        for sparse in (False, True):  # probed per entry, or read as lists: the same pages
            def page(which, offset=0, limit=10):
                return [r.position for r in s.queue_items(sid, aid, which, offset, limit, sparse=sparse)]

            assert page("all") == list(range(7))
            assert page("all", 2, 3) == [2, 3, 4]
            assert page("unanswered") == [2, 5, 6] and page("unanswered", 1, 1) == [5]
            assert page("skipped") == [0]
            assert page("flagged") == [5] and page("noted") == [5]
            assert page("answered") == [1, 3, 4] and page("answered", 1, 1) == [3]
            assert page("unanswered", 3) == []
        assert [r.unit_id for r in s.queue_items(sid, aid, "answered")] == [queue[1], queue[3], queue[4]]
        with pytest.raises(ValueError, match="unknown item filter"):
            s.queue_items(sid, aid, "done")


def test_median_answer_seconds_worked_by_hand(worked):
    """ana's current answers took 10 s (position 1, its second answer), 4 s (3) and 7 s (4): median 7 s (with the
    superseded 1 s it would be 5.5 s, with bo's 100 s answers more). bo: four answers of 100 s. Nobody else: None."""
    db, _ = worked
    with Store.open(db, mode="rw") as s:
        sid, aid, _ = _ids(s)
        assert s.median_answer_seconds(sid, aid) == 7.0
        assert s.median_answer_seconds(sid, s.find_annotator("bo").id) == 100.0
        assert s.median_answer_seconds(sid, s.ensure_annotator("cy").id) is None
        _log(s, "ana", [(0, "answered", 30, 5.0)])  # 4, 5, 7, 10 s: the mean of the two middle ones
        assert s.median_answer_seconds(sid, aid) == 6.0


def test_the_queue_queries_read_indexes_not_tables(worked):
    """Every query of storage/queue_state.py searches an index (the annotator's rows of one status, the live queue
    in order or by unit); none scans the annotations or assignments table."""
    import storage.queue_state as q

    db, _ = worked
    with Store.open(db, mode="ro") as s:
        sid, aid, _ = _ids(s)

        def plan(sql: str, extra=()) -> str:
            return "\n".join(r[3] for r in s.db.execute("EXPLAIN QUERY PLAN " + sql, [sid, aid, *extra]))

        for name, sql in [*q._FILTER_SQL.items(), *q._PAGE_SQL.items()]:
            p = plan(f"SELECT q.unit_id {q._QUEUE} AND {sql} ORDER BY q.position, q.id LIMIT 1")
            assert "USING COVERING INDEX idx_assignments_queue " in p, (name, p)
            assert "SCAN" not in p.replace("SCAN d", ""), (name, p)
        for near in (q._NEAR_OPEN, q._NEAR_SKIPPED):
            p = plan(f"SELECT q.unit_id {q._QUEUE} AND {near} LIMIT 1")
            assert "COVERING INDEX idx_assignments_queue " in p and "INDEX idx_annotations_progress" in p, p
            assert "SCAN" not in p, p
        p = plan(f"SELECT COUNT(*) FROM ({q._FLAGGED} GROUP BY 1) d WHERE {q._IN_QUEUE.format(u='d.unit_id')}")
        assert "INDEX idx_annotations_progress" in p and "COVERING INDEX idx_assignments_queue_unit" in p
        assert "SCAN annotations" not in p and "SCAN assignments" not in p
        # the answered units of the queue: a merge of the two indexes in unit order, no sort and no probe per unit
        p = plan(f"SELECT COUNT(*) FROM ({q._QUEUE_UNITS} INTERSECT {q._ANSWERED} ORDER BY 1)")
        assert "MERGE (INTERSECT)" in p and "TEMP B-TREE" not in p, p
        assert "COVERING INDEX idx_annotations_progress" in p and "COVERING INDEX idx_assignments_queue_unit" in p


# ---- the annotation screen, reopened -------------------------------------------------------------------------
async def test_reopening_lands_on_the_first_open_item_with_its_counts_and_history(worked):
    """ana reopens: the first open item is position 2 (1-based #3: a re-scoring in progress), the header says
    3/7 done, the history lists the last five answers and skips newest first, and the item list has the counts
    and statuses worked out by hand."""
    db, _ = worked
    app = AnnotateApp(db, "st", "ana", show_timer=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        s = app.session
        assert s.index == 2 and not s.finished
        assert s.progress() == (3, 7) and s.counts() == {"answered": 3, "skipped": 1, "open": 3}
        assert "3/7" in str(app.screen.query_one("#header").render())
        # the last answers and skips, newest first: t7 (position 1), t6 (0), t5 (4), t4 (3), t3 (2)
        assert [i for i, _ in s.recent_lines()] == [1, 0, 4, 3, 2]
        await pilot.press("l")
        screen = app.screen
        assert isinstance(screen, ItemListScreen)
        assert screen.counts == {"all": 7, "unanswered": 3, "skipped": 1, "flagged": 1, "noted": 1, "answered": 3}
        assert [(r["position"], r["status"]) for r in screen.shown()] == [
            (0, "skipped"), (1, "answered"), (2, "partial"), (3, "answered"), (4, "answered"), (5, "open"),
            (6, "open")]
        await pilot.press("escape")
        assert s.index == 2


def _all_decided_one_skipped(db_file) -> None:
    """The 7-unit study with ana's answers to every position but 3, which she skipped; position i took i + 1 s."""
    _study(db_file)
    with Store.open(db_file, mode="rw") as s:
        _log(s, "ana", [(i, "skipped" if i == 3 else "answered", i + 1, float(i + 1)) for i in range(7)])


async def test_reopening_a_finished_queue_lands_on_the_summary(db_file):
    """Every item answered (ana: seconds 1..7, median 4 s) but one skipped: reopening shows the summary with
    answered 6, skipped 1, open 0 and the median; r goes to the skipped item (position 3)."""
    _all_decided_one_skipped(db_file)
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, SummaryScreen) and app.session.finished
        text = str(app.screen.query_one("#summary").render())
        assert "answered: 6   skipped: 1   open: 0" in text
        assert "median time per answered item: 00:04" in text  # 1, 2, 3, 5, 6, 7 s (the skip has none): 4 s
        await pilot.press("r")
        await pilot.pause()
        assert app.session.index == 3 and not isinstance(app.screen, SummaryScreen)


async def test_the_item_list_pages_through_a_long_queue(db_file, monkeypatch):
    """With pages of 3 rows, the list of 7 items opens on the page of the current item (position 6 after six
    answers: rows 7..7), `[` goes back a page (4..6) and `]` forward again; the answered filter has 6 rows: two
    pages."""
    import annotator.screens.item_list as item_list

    monkeypatch.setattr(item_list, "LIST_PAGE", 3)
    _study(db_file)
    with Store.open(db_file, mode="rw") as s:
        _log(s, "ana", [(i, "answered", i + 1, 1.0) for i in range(6)])
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.session.index == 6
        await pilot.press("l")
        screen = app.screen
        assert [r["position"] for r in screen.shown()] == [6]
        await pilot.press("left_square_bracket")
        assert [r["position"] for r in screen.shown()] == [3, 4, 5]
        await pilot.press("right_square_bracket", "right_square_bracket")  # the second goes nowhere: no page 4
        assert [r["position"] for r in screen.shown()] == [6]
        await pilot.press("d")
        assert [r["position"] for r in screen.shown()] == [0, 1, 2]
        await pilot.press("right_square_bracket")
        assert [r["position"] for r in screen.shown()] == [3, 4, 5]
        assert "4-6 of 6" in str(screen.query_one("#filters").render())
        await pilot.press("down", "enter")
        assert app.session.index == 4


async def test_a_long_summary_counts_its_median_after_it_is_drawn(db_file, monkeypatch):
    """Above INLINE_MEDIAN answers (here 0) the summary is drawn at once with its counts, and its median (1..7 s
    but position 3 skipped: 4 s) follows from a worker thread with its own connection."""
    import annotator.screens.summary as summary

    monkeypatch.setattr(summary, "INLINE_MEDIAN", 0)
    _all_decided_one_skipped(db_file)
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, SummaryScreen)
        assert "answered: 6   skipped: 1   open: 0" in str(app.screen.query_one("#summary").render())
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "median time per answered item: 00:04" in str(app.screen.query_one("#summary").render())
