"""Claiming units against their quota (one claim, one creation time), attention checks spread over a queue, releasing
(logged with its annotator), the plan given each unit (a check first in study order, both items of a pair), and the
progress counts of storage/studies.py (checks, per-unit quotas, an empty study, the median time per item of an odd
and an even number of items), on small studies worked by hand (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import datetime as dt

import pytest

from storage.models import AnnotationIn, ItemIn
from tests.mutation.persona_study import _add, _study


def plan(units, nxt):
    """Study order, positions from nxt, seed 9."""
    return [(u.id, nxt + i, 9) for i, u in enumerate(units)]


@pytest.fixture
def st(store):
    """units: u0 quota 2 (the study's), u1 quota 1 (its own), u2 quota 2, c3 an attention check (quota 2)."""
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"i{k}", kind="persona_record", payload={"text": str(k)})
                                       for k in range(4)])
    ids = [r[0] for r in store.db.execute("SELECT id FROM items ORDER BY external_id")]
    study = store.create_study("s", "persona_filter", {"annotators_per_item": 2}, 1,
                               [(ids[0], None, {}), (ids[1], None, {"annotators": 1}), (ids[2], None, {}),
                                (ids[3], None, {"check": True})])
    return store, study, store.units(study.id)


def _answer(store, study, unit, ann, status="answered", seconds=None, at=None):
    store.add_annotation(AnnotationIn(study_id=study.id, unit_id=unit.id, item_id=unit.item_id, annotator_id=ann.id,
                                      status=status, answer={"decision": "keep"} if status == "answered" else None,
                                      seconds=seconds), submitted_at=at)


def test_claims_respect_each_units_quota(st):
    store, study, (u0, u1, u2, c3) = st
    ann, bo, cy = (store.ensure_annotator(n) for n in ("ann", "bo", "cy"))
    assert store.claimable_count(study.id, ann.id) == 4
    assert store.claim_units(study.id, ann.id, 2, plan) == 2  # the limit, in study order
    mine = store.assignments(study.id, ann.id)
    assert [(a.unit_id, a.position, a.shuffle_seed) for a in mine] == [(u0.id, 0, 9), (u1.id, 1, 9)]
    assert store.claim_units(study.id, ann.id, 10, plan) == 2  # the rest, positions continue
    assert [a.position for a in store.assignments(study.id, ann.id)] == [0, 1, 2, 3]
    assert store.claimable_count(study.id, ann.id) == 0
    assert store.claim_units(study.id, ann.id, 10, plan) == 0
    # u1 (quota 1) is full: bo gets u0, u2 and the check
    assert store.claimable_count(study.id, bo.id) == 3
    assert store.claim_units(study.id, bo.id, 10, plan) == 3
    assert [a.unit_id for a in store.assignments(study.id, bo.id)] == [u0.id, u2.id, c3.id]
    assert store.claim_units(study.id, cy.id, 10, plan) == 0 and store.claimable_count(study.id, cy.id) == 0
    assert store.assignment_counts(study.id) == {u0.id: 2, u1.id: 1, u2.id: 2, c3.id: 2}
    assert store.holder_names(study.id) == ["ann", "bo"] and store.holder_names(study.id, "llm") == []
    # bo answers u0 and skips u2; releasing gives back u2 and the check, not the answered unit
    _answer(store, study, u0, bo)
    _answer(store, study, u2, bo, status="skipped")
    assert store.release_assignments(study.id, bo.id, keep_skipped=True) == 1  # only the check
    assert store.release_assignments(study.id, bo.id) == 1  # now the skipped one too
    assert store.release_assignments(study.id, bo.id) == 0
    assert [a.unit_id for a in store.assignments(study.id, bo.id)] == [u0.id]
    assert [e.payload for e in store.events("assignments_released", study.id)] == [
        {"released": 1, "keep_skipped": True}, {"released": 1, "keep_skipped": False}]
    assert store.claim_units(study.id, cy.id, 10, plan) == 2  # u2 and the check are free again
    # bo claims back: the released rows come back at their new positions
    assert store.claim_units(study.id, bo.id, 10, plan) == 0  # quota full again
    assert store.add_assignments(study.id, [(u2.id, bo.id, 7, 1)]) == 1
    assert [(a.unit_id, a.position) for a in store.assignments(study.id, bo.id)] == [(u0.id, 0), (u2.id, 7)]
    assert store.add_assignments(study.id, [(u2.id, bo.id, 8, 1)]) == 0  # held already: kept as it is


def test_checks_keep_pace_with_the_other_units(st):
    store, study, (u0, u1, u2, c3) = st
    ann = store.ensure_annotator("ann")
    # 1 check over 3 other units: with 1 unit claimed, ceil(1 * 1 / 3) = 1 check is due
    assert store.claim_units(study.id, ann.id, 1, plan, spread_checks=True) == 2
    assert [a.unit_id for a in store.assignments(study.id, ann.id)] == [u0.id, c3.id]
    assert store.claim_units(study.id, ann.id, 5, plan, spread_checks=True) == 2  # no second check exists
    bo = store.ensure_annotator("bo")
    # bo, limit 1: u0 (one slot left) and the check due with it
    assert store.claim_units(study.id, bo.id, 1, plan, spread_checks=True) == 2
    assert [a.unit_id for a in store.assignments(study.id, bo.id)] == [u0.id, c3.id]


def test_study_and_annotator_progress_by_hand(st):
    store, study, (u0, u1, u2, c3) = st
    ann, bo = store.ensure_annotator("ann"), store.ensure_annotator("bo")
    judge = store.ensure_annotator("judge", kind="llm")
    empty = store.study_progress(study.id)
    # items: 3 non-check units; needed: quotas 2 + 1 + 2 = 5
    assert empty == {"items": 3, "checks": 1, "needed": 5, "answered": 0, "assignments": 0, "annotators": 0,
                     "llm_judges": 0, "last_activity": None}
    store.claim_units(study.id, ann.id, 10, plan)
    store.claim_units(study.id, bo.id, 10, plan)
    store.add_assignments(study.id, [(u0.id, judge.id, 0, 0)])
    _answer(store, study, u0, ann, seconds=4.0, at="2026-01-01T00:00:01")
    _answer(store, study, u0, ann, seconds=9.0, at="2026-01-01T00:00:05")   # a change: the first timed answer counts
    _answer(store, study, u1, ann, seconds=2.0, at="2026-01-01T00:00:02")
    _answer(store, study, u2, ann, status="skipped", at="2026-01-01T00:00:03")
    _answer(store, study, c3, ann, seconds=100.0, at="2026-01-01T00:00:04")  # a check: not in the median
    _answer(store, study, u2, bo, status="skipped", at="2026-01-01T00:00:06")
    _answer(store, study, u2, bo, seconds=7.0, at="2026-01-01T00:00:07")    # answered after the skip
    _answer(store, study, c3, bo, at="2026-01-01T00:00:08")
    _answer(store, study, u0, judge, at="2026-01-01T00:00:09")
    p = store.study_progress(study.id)
    # answered (human, non-check unit) pairs: ann u0, ann u1, bo u2 = 3; the judge and the checks do not count
    assert p == {"items": 3, "checks": 1, "needed": 5, "answered": 3, "assignments": 8, "annotators": 2,
                 "llm_judges": 1, "last_activity": "2026-01-01T00:00:09"}
    rows = store.annotator_progress(study.id)
    # ann: answered u0 u1 c3 (3 units), skipped u2 not answered since (1); median of first timed answers 4, 2 -> 3
    # bo holds u0, u2, c3 (u1 was full); answered u2 and c3; the skip of u2 was answered since -> 0
    assert rows == [
        {"annotator": "ann", "kind": "human", "assigned": 4, "answered": 3, "skipped": 1, "median_seconds": 3.0},
        {"annotator": "bo", "kind": "human", "assigned": 3, "answered": 2, "skipped": 0, "median_seconds": 7.0},
        {"annotator": "judge", "kind": "llm", "assigned": 1, "answered": 1, "skipped": 0, "median_seconds": None},
    ]
    assert [r["median_seconds"] for r in store.annotator_progress(study.id, median=False)] == [None, None, None]
    store.release_assignments(study.id, bo.id)  # u0 (no answer) released
    assert store.study_progress(study.id)["assignments"] == 7
    assert store.assignment_count(study.id) == 7
    # an adjudication is activity too (status said the last answer's time after an adjudication session)
    adj = store.add_adjudication(study.id, u2.id, store.ensure_annotator("lead").id, "final", {"choice": 0})
    assert adj.submitted_at > "2026-01-01T00:00:09"
    assert store.study_progress(study.id)["last_activity"] == adj.submitted_at


def test_claimed_assignments_carry_their_creation_time(store):
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"i{k}", kind="persona_record", payload={"text": str(k)})
                                       for k in range(2)])
    ids = [r[0] for r in store.db.execute("SELECT id FROM items ORDER BY external_id")]
    study = store.create_study("s", "persona_filter", {"annotators_per_item": 1}, 1, [(i, None, {}) for i in ids])
    ann = store.ensure_annotator("ann")
    before = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=1)
    assert store.claim_units(study.id, ann.id, 5, lambda units, nxt: [(u.id, nxt + i, 3)
                                                                        for i, u in enumerate(units)]) == 2
    after = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=1)
    stamps = [r[0] for r in store.db.execute("SELECT created_at FROM assignments ORDER BY position")]
    assert len(stamps) == 2 and stamps[0] == stamps[1]  # one claim, one time
    t = dt.datetime.fromisoformat(stamps[0])
    t = t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc)
    assert before <= t <= after


def test_released_assignments_are_logged_with_their_annotator(store):
    store.import_items("ds", "jsonl", [ItemIn(external_id="i0", kind="persona_record", payload={"text": "0"})])
    (iid,) = (r[0] for r in store.db.execute("SELECT id FROM items"))
    study = store.create_study("s", "persona_filter", {"annotators_per_item": 1}, 1, [(iid, None, {})])
    ann = store.ensure_annotator("ann")
    store.add_assignments(study.id, [(store.units(study.id)[0].id, ann.id, 0, 1)])
    assert store.release_assignments(study.id, ann.id) == 1
    assert [(e.study_id, e.annotator_id) for e in store.events("assignments_released")] == [(study.id, ann.id)]


def test_attention_checks_keep_pace_with_the_units_claimed(store):
    # 10 units and 2 attention checks: each batch of 5 units brings ceil(2 * mine / 10) - checks held = 1 check
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"i{k}", kind="persona_record", payload={"text": str(k)})
                                       for k in range(12)])
    ids = [i.id for i in store.items("ds")]
    st = store.create_study("s", "persona_filter", {"annotators_per_item": 1}, 1,
                            [(i, None, {"check": {"expect": "keep"}} if k >= 10 else {}) for k, i in enumerate(ids)])
    ann = store.ensure_annotator("ann")

    def plan(units, nxt):
        return [(u.id, nxt + n, 1) for n, u in enumerate(units)]

    def held():
        units = {u.id: u for u in store.units(st.id)}
        mine = [units[a.unit_id] for a in store.assignments(st.id, ann.id)]
        return sum(1 for u in mine if not u.extra), sum(1 for u in mine if u.extra)

    assert store.claim_units(st.id, ann.id, 5, plan, spread_checks=True) == 6
    assert held() == (5, 1)
    assert store.claim_units(st.id, ann.id, 5, plan, spread_checks=True) == 6
    assert held() == (10, 2)
    assert store.claim_units(st.id, ann.id, 5, plan, spread_checks=True) == 0


def _timed(store, n):
    """ana answers items i0..i{n-1} with the seconds 9, 1, 5, 30, 2 (in that order) and 100 on a later change of
    i0, which is a revisit (the first timed answer of an item counts)."""
    st, units = _study(store, n)
    ana = store.ensure_annotator("ana")
    store.add_assignments(st.id, [(u.id, ana.id, k, 0) for k, u in enumerate(units)])
    for k, (u, secs) in enumerate(zip(units, (9.0, 1.0, 5.0, 30.0, 2.0))):
        _add(store, st, u, ana, "answered", f"2026-01-01T00:00:0{k}", {"decision": "keep"}, seconds=secs)
    _add(store, st, units[0], ana, "answered", "2026-01-01T00:00:09", {"decision": "drop"}, seconds=100.0)
    (row,) = store.annotator_progress(st.id)
    return row["median_seconds"]


@pytest.mark.parametrize("n, median", [
    (1, 9.0),    # 9
    (2, 5.0),    # 1 9 -> (1 + 9) / 2
    (3, 5.0),    # 1 5 9 -> the middle one
    (4, 7.0),    # 1 5 9 30 -> (5 + 9) / 2
    (5, 5.0),    # 1 2 5 9 30 -> the middle one
])
def test_median_seconds_per_item_of_odd_and_even_counts(store, n, median):
    assert _timed(store, n) == median


def test_an_empty_study_has_no_items_checks_or_needed_answers(store):
    st = store.create_study("empty", "persona_filter", {"annotators_per_item": 3}, 1, [])
    assert store.study_progress(st.id) == {"items": 0, "checks": 0, "needed": 0, "answered": 0, "assignments": 0,
                                           "annotators": 0, "llm_judges": 0, "last_activity": None}


def test_study_counts_checks_and_per_unit_quotas(store):
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"i{k}", kind="persona_record", payload={"text": str(k)})
                                       for k in range(4)])
    ids = [r[0] for r in store.db.execute("SELECT id FROM items ORDER BY external_id")]
    st = store.create_study("s", "persona_filter", {"annotators_per_item": 3}, 1,
                            [(ids[0], None, {}), (ids[1], None, {"annotators": 1}), (ids[2], None, {"check": True}),
                             (ids[3], None, {"annotators": 2})])
    # items: 3 (one unit is a check); needed: 3 (the study's quota) + 1 + 2 (their own); a check needs none
    got = store.study_progress(st.id)
    assert (got["items"], got["checks"], got["needed"]) == (3, 1, 6)


def test_a_study_without_a_quota_setting_needs_one_answer_per_item(store):
    st, units = _study(store, 3)
    assert len(units) == 3 and store.study_progress(st.id)["needed"] == 3


def _in_order(units, nxt):
    return [(u.id, nxt + i, 9) for i, u in enumerate(units)]


def test_a_check_first_in_study_order_is_not_counted_in_the_limit(store):
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"i{k}", kind="persona_record", payload={"text": str(k)})
                                       for k in range(6)])
    ids = [r[0] for r in store.db.execute("SELECT id FROM items ORDER BY external_id")]
    # study order: c0 (check), u1, u2, c3 (check), u4, u5
    st = store.create_study("s", "persona_filter", {}, 1,
                            [(i, None, {"check": True} if k in (0, 3) else {}) for k, i in enumerate(ids)])
    c0, u1, u2, c3, u4, u5 = store.units(st.id)
    ana = store.ensure_annotator("ana")
    # limit 2 counts u1 and u2; checks due with 2 of the 4 other units: ceil(2 checks * 2 / 4) = 1, the first (c0)
    assert store.claim_units(st.id, ana.id, 2, _in_order, spread_checks=True) == 3
    assert sorted(a.unit_id for a in store.assignments(st.id, ana.id)) == sorted([u1.id, u2.id, c0.id])


def test_the_plan_is_given_each_pair_with_both_its_items(store):
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"i{k}", kind="conversation_record",
                                              payload={"text": str(k)}) for k in range(4)])
    a, b, c, d = [r[0] for r in store.db.execute("SELECT id FROM items ORDER BY external_id")]
    st = store.create_study("p", "pairwise", {}, 1, [(a, b, {}), (c, d, {})])
    seen = []

    def plan(units, nxt):
        seen.extend((u.item_id, u.item_b_id, u.position, u.extra) for u in units)
        return _in_order(units, nxt)

    ana = store.ensure_annotator("ana")
    assert store.claim_units(st.id, ana.id, 5, plan) == 2
    assert seen == [(a, b, 0, {}), (c, d, 1, {})]
