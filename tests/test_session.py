"""Session rules that no single screen shows: several windows of one annotator, re-scoring, skip on an answer."""
from __future__ import annotations

from annotator.session import Session
from annotator.tasks.base import Decision
from storage.store import Store


def _answer(choice: int) -> Decision:
    return Decision({"choice": choice, "letter": "ABCD"[choice], "shown": "A", "cant_tell": False})


def test_two_windows_of_one_annotator_never_lose_an_answer(mcq_study):
    s1, s2 = Store.open(mcq_study, mode="create"), Store.open(mcq_study, mode="create")
    w1, w2 = Session(s1, "st", "ana"), Session(s2, "st", "ana")
    assert w1.index == w2.index == 0
    first = w1.decide(_answer(0))
    second = w2.decide(_answer(1))  # w2 still showed item 1 as open
    assert second.supersedes == first.id and w2.conflicts == 1 and w1.conflicts == 0
    w1.sync()
    assert w1.progress() == (1, 6)
    rows = s1.annotations(w1.study.id)
    assert [r.answer["choice"] for r in rows] == [0, 1]
    assert [c.answer["choice"] for c in s1.current_annotations(w1.study.id)] == [1]
    s1.close()
    s2.close()


def test_a_partial_rescoring_does_not_retract_the_answer(mcq_study):
    s = Store.open(mcq_study, mode="create")
    w = Session(s, "st", "ana")
    done = w.decide(_answer(2))
    w.back()
    w.decide(Decision({"choice": 3, "letter": "D", "shown": "B", "cant_tell": False}, complete=False))
    current = s.current_annotations(w.study.id)
    assert [c.id for c in current] == [done.id]  # the figures still count the complete answer
    latest = s.current_annotations(w.study.id, status=("answered", "skipped", "partial"))
    assert [c.status for c in latest] == ["partial"]  # the screen restores the re-scoring in progress
    assert w.progress() == (1, 6)
    reopened = Session(s, "st", "ana")
    assert reopened.resume_index() == 1
    s.close()


def test_skip_on_an_answered_item_only_moves_on(mcq_study):
    s = Store.open(mcq_study, mode="create")
    w = Session(s, "st", "ana")
    w.decide(_answer(0))
    w.back()
    assert w.skip() is None and w.index == 1
    assert [r.status for r in s.annotations(w.study.id)] == ["answered"]
    assert w.skip() is not None
    assert [r.status for r in s.annotations(w.study.id)] == ["answered", "skipped"]
    s.close()


def test_progress_counts_and_history_on_reopening(mcq_study):
    """Reopening counts from the rows of this annotator alone (not by walking the queue): 1 answered, 1 skipped,
    1 partial (open) and 3 untouched of 6; resumes at the partial one; the history names queue positions 2 and 1
    (1-based: the skip, then the answer), newest first."""
    s = Store.open(mcq_study, mode="create")
    w = Session(s, "st", "ana")
    w.decide(_answer(0))
    w.skip()
    w.decide(Decision({"choice": 1, "letter": "B", "shown": "B", "cant_tell": False}, complete=False))
    again = Session(s, "st", "ana")
    assert again.progress() == (1, 6)
    assert again.counts() == {"answered": 1, "skipped": 1, "open": 4}
    assert again.index == 2
    assert [i for i, _ in again.recent_lines()] == [1, 0]
    assert again.position_of(again.queue[5].unit_id) == 5
    assert again.position_of("not-a-unit") is None
    s.close()


def test_a_start_reads_an_annotators_history_and_visits_through_their_own_indexes(mcq_study):
    """The queries run at every start of the annotation screen find one annotator's latest decisions and the
    study's visit events through an index of their own, not by walking the study's whole log."""
    s = Store.open(mcq_study, mode="create")
    con = s.db.conn

    def plan(sql: str) -> str:
        return " ".join(r[3] for r in con.execute("EXPLAIN QUERY PLAN " + sql, ["s", "a", 5][:sql.count("?")]))

    assert "idx_annotations_annotator_time" in plan(
        "SELECT * FROM annotations WHERE study_id = ? AND annotator_id = ? AND status IN ('answered', 'skipped') "
        "ORDER BY submitted_at DESC, id DESC LIMIT ?")
    assert "idx_events_study_kind" in plan("SELECT * FROM events WHERE kind = 'visit' AND study_id = ? ORDER BY at")
    s.close()


def test_queue_length_and_pages_follow_claims_releases_and_reclaims(mcq_study):
    """The queue length kept by triggers (migration 17) and the queue read a page at a time, against hand-worked
    values: 6 units claimed, 2 answered, the 4 others released (2 left), one released unit claimed back at
    position 10 (3); pages and ranks in (position, id) order."""
    s = Store.open(mcq_study, mode="create")
    w = Session(s, "st", "ana")
    sid, aid = w.study.id, w.annotator.id
    assert len(w.queue) == 6 == s.queue_length(sid, aid)
    first, second = w.queue[0].unit_id, w.queue[1].unit_id
    w.decide(_answer(0))
    w.decide(_answer(1))
    released = [w.queue[i].unit_id for i in range(2, 6)]
    assert s.release_assignments(sid, aid) == 4
    assert s.queue_length(sid, aid) == 2
    s.add_assignments(sid, [(released[1], aid, 10, 0)])
    assert s.queue_length(sid, aid) == 3
    page = s.queue_page(sid, aid, 0, 2)
    assert [r[1] for r in page] == [first, second]
    assert [r[1] for r in s.queue_page(sid, aid, 2, 2, after=(page[-1][2], page[-1][0]))] == [released[1]]
    assert [r[1] for r in s.queue_page(sid, aid, 2, 2)] == [released[1]]
    assert [s.queue_rank(sid, aid, u) for u in (first, second, released[1], released[0])] == [0, 1, 2, None]
    assert s.queue_members(sid, aid, [first, released[0], released[1]]) == {first, released[1]}
    again = Session(s, "st", "ana")
    assert len(again.queue) == 3 and again.index == 2 and again.queue[2].unit_id == released[1]
    assert again.counts() == {"answered": 2, "skipped": 0, "open": 1}
    s.close()


def test_a_queue_read_in_pages_of_two_gives_the_same_items_in_the_same_order(mcq_study, monkeypatch):
    """With pages of 2 entries, the 6 units are read in 3 pages (the 2nd and 3rd from the last entry of the page
    before); every position gives the unit the one-query read gives, answers land on the unit shown, and going
    back across a page boundary finds the answered unit."""
    import annotator.session as session_module

    s = Store.open(mcq_study, mode="create")
    whole = Session(s, "st", "ana")
    expected = [whole.queue[i].unit_id for i in range(6)]
    monkeypatch.setattr(session_module, "QUEUE_PAGE", 2)
    w = Session(s, "st", "ana")
    assert [w.queue.unit_id(i) for i in (5, 0, 3)] == [expected[5], expected[0], expected[3]]  # pages 3, 1, 2
    assert [a.unit_id for a in w.queue] == expected and len(w.queue._pages) == 3
    for i in range(3):
        assert w.index == i
        w.decide(_answer(i))
    w.back()
    assert w.index == 2 and w.status_of(w.queue[2].unit_id) == "answered"
    assert [r.unit_id for r in s.annotations(w.study.id)] == expected[:3]
    fresh = Session(s, "st", "ana")
    assert fresh.index == 3 and fresh.position_of(expected[4]) == 4 and fresh.progress() == (3, 6)
    s.close()
