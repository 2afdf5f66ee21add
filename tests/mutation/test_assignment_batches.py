"""A big named assignment (storage/studies.py add_assignments) is written in batches of BATCH_ROWS rows, each its own
transaction, and every batch keeps the study, positions and seeds of its rows; existing rows are found however
many there are; released rows are not held (CONTRIBUTING.md, "Mutation testing"). In the `st` fixture BATCH_ROWS is set to
2, so that five rows make three batches (2 + 2 + 1)."""
from __future__ import annotations

import sqlite3

import pytest

import storage.studies
from storage.models import ItemIn


@pytest.fixture
def st(store, monkeypatch):
    monkeypatch.setattr(storage.studies, "BATCH_ROWS", 2)
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"i{k}", kind="persona_record", payload={"text": str(k)})
                                       for k in range(5)])
    ids = [r[0] for r in store.db.execute("SELECT id FROM items ORDER BY external_id")]
    study = store.create_study("s", "persona_filter", {"annotators_per_item": 2}, 1, [(i, None, {}) for i in ids])
    other = store.create_study("t", "persona_filter", {"annotators_per_item": 2}, 1, [(ids[0], None, {})])
    return store, study, other, store.units(study.id)


def _rows(store, study_id):
    return store.db.execute("SELECT study_id, unit_id, annotator_id, position, shuffle_seed FROM assignments "
                            "WHERE study_id = ? ORDER BY position", [study_id]).fetchall()


def test_five_rows_in_three_batches_keep_their_study(st):
    store, study, other, units = st
    ann = store.ensure_annotator("ann")
    rows = [(u.id, ann.id, 10 + k, 100 + k) for k, u in enumerate(units)]
    assert store.add_assignments(study.id, rows) == 5
    assert _rows(store, study.id) == [(study.id, u.id, ann.id, 10 + k, 100 + k) for k, u in enumerate(units)]
    assert store.db.execute("SELECT COUNT(*) FROM assignments").fetchone()[0] == 5  # none without a study
    assert _rows(store, other.id) == []
    assert [a.unit_id for a in store.assignments(study.id, ann.id)] == [u.id for u in units]
    # again, with two new annotators' rows in between: only the new ones are added, batch by batch
    bo = store.ensure_annotator("bo")
    again = rows[:2] + [(units[0].id, bo.id, 0, 7), (units[1].id, bo.id, 1, 7)] + rows[2:]
    assert store.add_assignments(study.id, again) == 2
    assert [(a.unit_id, a.position) for a in store.assignments(study.id, bo.id)] == [(units[0].id, 0),
                                                                                     (units[1].id, 1)]


def test_each_batch_commits_on_its_own(st):
    store, study, _other, units = st
    ann = store.ensure_annotator("ann")
    # the fifth row names no unit of the database: its batch (the third) fails on the foreign key, the first two
    # batches (four rows) stay committed
    rows = [(u.id, ann.id, k, 1) for k, u in enumerate(units[:4])] + [("no-such-unit", ann.id, 4, 1)]
    with pytest.raises(sqlite3.IntegrityError):
        store.add_assignments(study.id, rows)
    assert [r[1] for r in _rows(store, study.id)] == [u.id for u in units[:4]]


def test_inside_a_callers_transaction_nothing_is_split(st):
    from storage.db import write_transaction

    store, study, _other, units = st
    ann = store.ensure_annotator("ann")
    rows = [(u.id, ann.id, k, 1) for k, u in enumerate(units[:4])] + [("no-such-unit", ann.id, 4, 1)]
    with pytest.raises(sqlite3.IntegrityError):
        with write_transaction(store.db):
            store.add_assignments(study.id, rows)
    assert _rows(store, study.id) == []  # one transaction: all or nothing


def test_ids_past_the_first_thousand_are_looked_up_too(store):
    # 11 units x 100 annotators = 1100 rows in one batch (under BATCH_ROWS): the existing ids are looked up 500 at a
    # time (0-499, 500-999, 1000-1099), so a second call finds all 1100 and adds none
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"i{k:02d}", kind="persona_record", payload={"text": str(k)})
                                       for k in range(11)])
    ids = [r[0] for r in store.db.execute("SELECT id FROM items ORDER BY external_id")]
    study = store.create_study("s", "persona_filter", {"annotators_per_item": 100}, 1, [(i, None, {}) for i in ids])
    units = store.units(study.id)
    people = [store.ensure_annotator(f"a{k:03d}") for k in range(100)]
    rows = [(u.id, a.id, pos, 1) for a in people for pos, u in enumerate(units)]
    assert len(rows) == 1100
    assert store.add_assignments(study.id, rows) == 1100
    assert store.add_assignments(study.id, rows) == 0
    assert store.db.execute("SELECT COUNT(*) FROM assignments").fetchone()[0] == 1100


def test_an_annotator_whose_units_were_all_released_holds_none(st):
    store, study, _other, units = st
    ann, bo = store.ensure_annotator("ann"), store.ensure_annotator("bo")
    store.add_assignments(study.id, [(units[0].id, ann.id, 0, 1), (units[1].id, bo.id, 0, 1),
                                     (units[2].id, bo.id, 1, 1)])
    assert store.release_assignments(study.id, ann.id) == 1
    assert store.assignment_count(study.id) == 2
    assert [(p["annotator"], p["assigned"]) for p in store.annotator_progress(study.id)] == [("bo", 2)]
