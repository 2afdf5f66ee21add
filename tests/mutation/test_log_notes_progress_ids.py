"""Notes carried by answers and skips in the study log, the median time per item of an odd and an even number of
items, an empty study's progress, the export time a refused `study delete` names, and annotator ids that are the
same in every database (CONTRIBUTING.md, "Mutation testing": survivors of seeds 1618 and 27182 and their kinds)."""
from __future__ import annotations

import uuid

import pytest

import storage.bundles
from storage.errors import PrefvalError
from storage.models import PREFVAL_NAMESPACE, AnnotationIn, ItemIn


def _study(store, n_items=2, settings=None):
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"i{k}", kind="persona_record", payload={"text": str(k)})
                                       for k in range(n_items)])
    ids = [r[0] for r in store.db.execute("SELECT id FROM items ORDER BY external_id")]
    st = store.create_study("s", "persona_filter", settings or {}, 1, [(i, None, {}) for i in ids])
    return st, store.units(st.id)


def _add(store, st, unit, who, status, at, answer=None, note=None, seconds=None):
    return store.add_annotation(AnnotationIn(study_id=st.id, unit_id=unit.id, item_id=unit.item_id,
                                             annotator_id=who.id, status=status, answer=answer, note=note,
                                             seconds=seconds), submitted_at=at)


def test_the_study_log_keeps_the_note_written_with_an_answer_and_with_a_skip(store):
    st, (u0, u1) = _study(store)
    ana = store.ensure_annotator("ana")
    _add(store, st, u0, ana, "answered", "2026-01-01T00:00:01", {"decision": "keep"}, note="typo in line 2")
    _add(store, st, u1, ana, "skipped", "2026-01-01T00:00:02", note="cannot tell")
    _add(store, st, u1, ana, "note", "2026-01-01T00:00:03", note="asked the lead")
    log = store.study_log(st.id, store.units(st.id))
    assert [(r.unit_id, r.status, r.answer, r.note) for r in log.answers] == [
        (u0.id, "answered", {"decision": "keep"}, "typo in line 2")]
    assert [(r.unit_id, r.status, r.note) for r in log.skipped] == [(u1.id, "skipped", "cannot tell")]
    assert [(r.unit_id, r.note, state) for r, state in log.notes] == [(u1.id, "asked the lead", "skipped")]
    # the same notes as the rows current_annotations gives
    assert [a.note for a in store.current_annotations(st.id)] == ["typo in line 2"]
    assert [a.note for a in store.current_annotations(st.id, status=("skipped",))] == ["cannot tell"]


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


def test_a_refused_delete_names_the_time_the_bundle_was_exported(store, monkeypatch):
    st, _ = _study(store)
    ana = store.ensure_annotator("ana")
    monkeypatch.setattr(storage.bundles, "now_iso", lambda: "2026-03-04T05:06:07.123456+00:00")
    store.record_bundle_export("b-1", st, ana.id, "ana.bundle", 2)
    with pytest.raises(PrefvalError) as info:
        store.delete_study("s")
    assert str(info.value) == (
        "study 's' has 1 bundle(s) out that were not merged back, the latest ana.bundle of 'ana' (exported "
        "2026-03-04 05:06 UTC); its answers could never be merged: merge it first (`prefval bundle merge`), or "
        "`prefval study archive s` to hide the study instead")


def test_an_annotators_id_is_derived_from_the_name_alone(store, tmp_path):
    """The same name gives the same id in every database and every prefval version (uuid5 of "annotator" and the
    name in prefval's namespace), so bundles and judgments of one annotator merge into any copy."""
    ana = store.ensure_annotator("ana")
    assert ana.id == str(uuid.uuid5(PREFVAL_NAMESPACE, "annotator\x1fana"))
    judge = store.ensure_annotator("gpt judge", kind="llm", model="m")
    assert (judge.id, judge.kind, judge.model) == (str(uuid.uuid5(PREFVAL_NAMESPACE, "annotator\x1fgpt judge")),
                                                   "llm", "m")


def test_a_study_made_in_batches_counts_its_units_when_finished(store):
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"i{k}", kind="persona_record", payload={"text": str(k)})
                                       for k in range(3)])
    ids = [r[0] for r in store.db.execute("SELECT id FROM items ORDER BY external_id")]
    st = store.create_study("b", "persona_filter", {}, 1, [(ids[0], None, {}), (ids[1], None, {"check": True}),
                                                           (ids[2], None, {"annotators": 3})], in_batches=True)
    done = store.finish_study(st.id)
    # 3 units, 1 a check; needed: 1 (no annotators_per_item: one annotator per item) + 3 (its own quota)
    assert done.settings["counts"] == {"units": 3, "checks": 1, "needed": 4}
    assert [e.payload["units"] for e in store.events("study_created")] == [3]
    got = store.study_progress(st.id)  # from the counts stored when the study was finished
    assert (got["items"], got["checks"], got["needed"]) == (2, 1, 4)
    empty = store.create_study("e", "persona_filter", {"annotators_per_item": 2}, 1, [], in_batches=True)
    assert store.finish_study(empty.id).settings["counts"] == {"units": 0, "checks": 0, "needed": 0}
    got = store.study_progress(empty.id)
    assert (got["items"], got["checks"], got["needed"]) == (0, 0, 0)


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
