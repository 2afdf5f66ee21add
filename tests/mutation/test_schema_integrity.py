"""The integrity the data model relies on (docs/data-model.md), checked on a fresh database: unique keys, required
columns, foreign keys, append-only tables, the derived views, open slots kept by triggers, and the partial indexes
the claim and status queries are planned with (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import sqlite3

import pytest

from storage.models import AnnotationIn, ItemIn

UNIQUE = {  # table -> the column sets that must be unique
    "datasets": [("name",)], "items": [("dataset_id", "external_id")], "studies": [("name",)],
    "annotators": [("name",)], "assignments": [("study_id", "unit_id", "annotator_id")],
    "gen_rows": [("pipeline", "stage", "row_key")],
}
NOT_NULL = {
    "datasets": {"name", "format"}, "items": {"dataset_id", "external_id", "kind", "payload"},
    "studies": {"name", "task_type"}, "annotators": {"name"},
    "annotations": {"study_id", "unit_id", "annotator_id", "status", "submitted_at"}, "events": {"at", "kind"},
    "adjudications": {"study_id", "unit_id", "adjudicator_id", "kind", "submitted_at"},
    "runs": {"kind", "started_at", "status"},
    "llm_calls": {"model", "template", "request", "reply_text", "created_at", "key_version"},
    "llm_claims": {"owner", "lease_until"}, "llm_budget_shares": {"spent_usd", "ended", "lease_until"},
    "gen_rows": {"pipeline", "stage", "row_key", "status"}, "sources": {"text"},
}
FOREIGN = {
    "imports": {("dataset_id", "datasets")}, "contexts": {("dataset_id", "datasets")},
    "context_messages": {("context_id", "contexts")}, "items": {("dataset_id", "datasets"), ("context_id", "contexts")},
    "study_items": {("study_id", "studies"), ("item_id", "items"), ("item_b_id", "items")},
    "assignments": {("study_id", "studies"), ("unit_id", "study_items"), ("annotator_id", "annotators")},
    "annotations": {("study_id", "studies"), ("unit_id", "study_items"), ("item_id", "items"),
                    ("annotator_id", "annotators"), ("assignment_id", "assignments")},
    "adjudications": {("study_id", "studies"), ("unit_id", "study_items"), ("adjudicator_id", "annotators")},
    "llm_calls": {("run_id", "runs")},
}


def _unique_sets(con, table):
    out = set()
    for _, name, unique, *_ in con.execute(f"PRAGMA index_list([{table}])"):
        if unique:
            out.add(tuple(r[2] for r in con.execute(f"PRAGMA index_info([{name}])")))
    return out


def test_keys_required_columns_and_foreign_keys(store):
    con = store.db.conn
    for table, sets in UNIQUE.items():
        assert set(sets) <= _unique_sets(con, table), table
    for table, cols in NOT_NULL.items():
        got = {r[1] for r in con.execute(f"PRAGMA table_info([{table}])") if r[3] and not r[5]}
        assert got == cols, table
    for table, fks in FOREIGN.items():
        got = {(r[3], r[2]) for r in con.execute(f"PRAGMA foreign_key_list([{table}])")}
        assert got == fks, table
    assert con.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def _study(store, n=2, quota=2):
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"i{k}", kind="persona_record", payload={"text": str(k)})
                                       for k in range(n)])
    ids = [r[0] for r in store.db.execute("SELECT id FROM items ORDER BY external_id")]
    st = store.create_study("s", "persona_filter", {"annotators_per_item": quota}, 1, [(i, None, {}) for i in ids])
    return st, store.units(st.id)


def test_append_only_tables_and_current_views(store):
    st, (u0, _) = _study(store)
    ann = store.ensure_annotator("ann")

    def add(status, answer, at):
        store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u0.id, item_id=u0.item_id, annotator_id=ann.id,
                                          status=status, answer=answer), submitted_at=at)

    add("answered", {"decision": "keep"}, "2026-01-01T00:00:01")
    add("partial", {"decision": "drop"}, "2026-01-01T00:00:02")
    add("note", None, "2026-01-01T00:00:03")
    con = store.db.conn
    for sql in ("UPDATE annotations SET status = 'skipped'", "DELETE FROM annotations"):
        with pytest.raises(sqlite3.IntegrityError, match="annotations are append-only"):
            con.execute(sql)
    # current_annotations: the latest answered/skipped/partial row; current_answers: the latest answered one
    assert con.execute("SELECT status FROM current_annotations").fetchall() == [("partial",)]
    assert con.execute("SELECT status FROM current_answers").fetchall() == [("answered",)]
    hist = con.execute("SELECT status, superseded_by IS NOT NULL FROM annotation_history ORDER BY submitted_at")
    assert hist.fetchall() == [("answered", 1), ("partial", 0)]


def test_open_slots_follow_human_assignments(store):
    st, (u0, u1) = _study(store)
    con = store.db.conn

    def slots():
        return dict(con.execute("SELECT item_id, open_slots FROM study_items WHERE study_id = ?", [st.id]).fetchall())

    assert set(slots().values()) == {2}
    ann, judge = store.ensure_annotator("ann"), store.ensure_annotator("judge", kind="llm")
    store.add_assignments(st.id, [(u0.id, ann.id, 0, 0), (u0.id, judge.id, 0, 0)])
    assert slots() == {u0.item_id: 1, u1.item_id: 2}  # the judge fills no slot
    store.release_assignments(st.id, ann.id)
    assert slots()[u0.item_id] == 2
    store.add_assignments(st.id, [(u0.id, ann.id, 3, 0)])  # back from release
    assert slots()[u0.item_id] == 1


def test_claims_and_status_use_their_partial_indexes(store):
    st, _ = _study(store)
    con = store.db.conn
    plan = " ".join(r[3] for r in con.execute(
        "EXPLAIN QUERY PLAN SELECT id FROM study_items WHERE study_id = ? AND open_slots > 0 ORDER BY position",
        [st.id]))
    assert "idx_study_items_open" in plan
    plan = " ".join(r[3] for r in con.execute(
        "EXPLAIN QUERY PLAN SELECT annotator_id, COUNT(*) FROM assignments WHERE study_id = ? "
        "AND released_at IS NOT NULL GROUP BY annotator_id", [st.id]))
    assert "idx_assignments_released" in plan
    plan = " ".join(r[3] for r in con.execute(
        "EXPLAIN QUERY PLAN SELECT MAX(submitted_at) FROM annotations WHERE study_id = ?", [st.id]))
    assert "idx_annotations_activity" in plan


# the plain (not unique) indexes that reads of a study's units, queue, log and events go through
INDEXED = {
    "study_items": {("study_id", "position")},
    "assignments": {("study_id", "annotator_id", "position")},
    "annotations": {("study_id", "annotator_id"), ("assignment_id", "submitted_at"), ("study_id", "submitted_at"),
                    ("study_id", "status", "annotator_id", "unit_id")},
    "adjudications": {("study_id", "unit_id", "submitted_at")},
    "events": {("at",)}, "runs": {("kind", "started_at")}, "llm_calls": {("run_id",)},
}


def test_indexes_are_on_real_columns(store):
    con = store.db.conn
    for table, wanted in INDEXED.items():
        got = set()
        for _, name, *_ in con.execute(f"PRAGMA index_list([{table}])"):
            cols = [r[2] for r in con.execute(f"PRAGMA index_xinfo([{name}])") if r[5]]  # key columns only
            got.add(tuple(cols))
        assert wanted <= got, (table, wanted - got)
