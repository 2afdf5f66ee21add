"""Storage: schema, migrations, append-only annotations, derived current answers, atomic imports."""
from __future__ import annotations

import json
import sqlite3
import threading
import time

import pytest

from storage.db import SCHEMA_VERSION, migrate
from storage.errors import PrefvalError
from storage.models import AnnotationIn, ItemIn
from storage.store import Store
from tests.conftest import make_mcq_items


def test_file_database_uses_wal_foreign_keys_and_busy_timeout(db_file):
    with Store.open(db_file, mode="create") as s:
        assert s.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert s.db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert s.db.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
        assert s.db.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0] == SCHEMA_VERSION


def test_migrate_is_idempotent(store):
    assert migrate(store.db) == SCHEMA_VERSION
    assert migrate(store.db) == SCHEMA_VERSION
    assert store.db.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == SCHEMA_VERSION


def test_not_a_database_is_a_one_line_error(tmp_path):
    bad = tmp_path / "x.db"
    bad.write_text("this is not sqlite" * 100)
    with pytest.raises(PrefvalError, match="not a prefval database"):
        Store.open(bad, mode="create")


def test_import_twice_does_not_duplicate_and_ids_are_stable(store, tmp_path):
    items, ctx = make_mcq_items()
    r1 = store.import_items("ds", "jsonl", items, contexts=ctx)
    r2 = store.import_items("ds", "jsonl", items, contexts=ctx)
    assert (r1.n_added, r1.n_unchanged, r1.n_contexts) == (6, 0, 1)
    assert (r2.n_added, r2.n_unchanged, r2.n_contexts) == (0, 6, 0)
    other = Store.open(tmp_path / "other.db", mode="create")
    other.import_items("ds", "jsonl", items, contexts=ctx)
    assert [i.id for i in other.items("ds")] == [i.id for i in store.items("ds")]


def test_changed_content_is_refused_and_nothing_is_written(store):
    items, ctx = make_mcq_items()
    store.import_items("ds", "jsonl", items, contexts=ctx)
    changed = [ItemIn(external_id="new1", kind="mcq", payload={"question": "x", "options": ["a", "b"]}),
               items[0].model_copy(update={"payload": {**items[0].payload, "question": "edited"}})]
    before = store.db.execute("SELECT COUNT(*) FROM items").fetchone()[0]
    with pytest.raises(PrefvalError, match="other content"):
        store.import_items("ds", "jsonl", changed)
    assert store.db.execute("SELECT COUNT(*) FROM items").fetchone()[0] == before
    assert store.db.execute("SELECT COUNT(*) FROM items WHERE external_id = 'new1'").fetchone()[0] == 0


def test_items_see_only_their_slice_of_the_context(store):
    items, ctx = make_mcq_items()
    store.import_items("ds", "jsonl", items, contexts=ctx)
    it = store.items("ds")[2]
    assert it.context_end == 12
    assert store.context_length(it.context_id, it.context_end) == 12
    msgs = store.context_messages(it.context_id, 0, store.context_length(it.context_id, it.context_end))
    assert len(msgs) == 12 and msgs[-1].content.startswith("turn 11")


def _one_unit(store):
    items, ctx = make_mcq_items(1)
    store.import_items("ds", "jsonl", items, contexts=ctx)
    item = store.items("ds")[0]
    study = store.create_study("st", "mcq", {}, 1, [(item.id, None, {})])
    unit = store.units(study.id)[0]
    ann = store.ensure_annotator("ana")
    return study, unit, item, ann


def test_annotations_are_append_only_and_current_is_derived(store):
    study, unit, item, ann = _one_unit(store)
    base = dict(study_id=study.id, unit_id=unit.id, item_id=item.id, annotator_id=ann.id)
    first = store.add_annotation(AnnotationIn(**base, status="answered", answer={"choice": 0}))
    store.add_annotation(AnnotationIn(**base, status="note", note="hmm"))
    second = store.add_annotation(AnnotationIn(**base, status="answered", answer={"choice": 2}, supersedes=first.id))
    current = store.current_annotations(study.id)
    assert [c.answer for c in current] == [{"choice": 2}]
    hist = {r["id"]: r["superseded_by"] for r in store.db.query("SELECT id, superseded_by FROM annotation_history")}
    assert hist == {first.id: second.id, second.id: None}
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        store.db.execute("UPDATE annotations SET status = 'skipped'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        store.db.execute("DELETE FROM annotations")
    assert store.db.execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == 3


def test_annotation_is_committed_when_add_returns(db_file):
    s = Store.open(db_file, mode="create")
    study, unit, item, ann = _one_unit(s)
    s.add_annotation(AnnotationIn(study_id=study.id, unit_id=unit.id, item_id=item.id, annotator_id=ann.id,
                                  status="answered", answer={"choice": 1}))
    # A second connection (another process) sees it at once.
    other = sqlite3.connect(db_file)
    assert other.execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == 1
    other.close()
    s.close()


def test_unknown_names_raise_with_known_ones(store):
    store.import_items("ds", "jsonl", make_mcq_items(1)[0])
    with pytest.raises(PrefvalError, match=r"no dataset named 'nope' \(known: ds\)"):
        store.get_dataset("nope")
    with pytest.raises(PrefvalError, match="no study named"):
        store.get_study("nope")


def test_a_second_writer_waits_instead_of_failing(db_file):
    """Another connection (another annotator's process) holds the write lock while an answer is written: the write
    waits for the lock (the busy timeout) instead of failing, and is saved once the lock is released."""
    a = Store.open(db_file, mode="create")
    study, unit, item, ann = _one_unit(a)
    a.close()
    holder = sqlite3.connect(db_file, timeout=0)
    holder.execute("BEGIN IMMEDIATE")  # the other writer, mid-transaction
    outcome: list[object] = []
    started = threading.Event()

    def write() -> None:  # a Store per thread, as in real use
        with Store.open(db_file, mode="create") as b:
            started.set()
            try:
                outcome.append(b.add_annotation(AnnotationIn(study_id=study.id, unit_id=unit.id, item_id=item.id,
                                                             annotator_id=ann.id, status="answered",
                                                             answer={"choice": 2})))
            except Exception as exc:  # a busy timeout of 0 fails here at once
                outcome.append(exc)

    t = threading.Thread(target=write)
    t.start()
    started.wait()
    time.sleep(0.3)
    assert outcome == [] and t.is_alive()  # still waiting for the lock, not failed
    holder.commit()
    holder.close()
    t.join(timeout=30)
    assert len(outcome) == 1 and not isinstance(outcome[0], Exception), outcome
    with Store.open(db_file, mode="create") as s:
        assert [r.answer for r in s.annotations(study.id)] == [{"choice": 2}]


def test_a_failed_write_is_one_line_and_stores_nothing(db_file):
    s = Store.open(db_file, mode="create")
    study, unit, item, ann = _one_unit(s)
    other = sqlite3.connect(db_file, timeout=0)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    s.db.execute("PRAGMA busy_timeout = 50")
    with pytest.raises(PrefvalError) as info:
        s.add_annotation(AnnotationIn(study_id=study.id, unit_id=unit.id, item_id=item.id, annotator_id=ann.id,
                                      status="answered", answer={"choice": 1}))
    assert str(info.value) == (f"{db_file}: the answer was NOT saved (the database is busy: another program is "
                               "writing to it); try again")
    other.rollback()
    other.close()
    assert s.db.execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == 0
    s.close()


# ---- contexts.message_sizes (migration 12): a conversation is sized from its own row, not by reading its text ----
def test_message_sizes_are_written_at_import_and_by_the_migration(db_file, monkeypatch):
    import storage.db
    from storage.models import ContextIn, Message

    # lengths in characters, not bytes: "héllo wörld" is 11 characters (13 bytes in UTF-8)
    messages = [("system", "hello"), ("user", "héllo wörld"), ("assistant", ""), ("user", "x" * 70_000)]
    by_hand = [("system", 5), ("user", 11), ("assistant", 0), ("user", 70_000)]
    # a database written before migration 12: its contexts have no message_sizes
    monkeypatch.setattr(storage.db, "MIGRATIONS", [m for m in storage.db.MIGRATIONS if m[0] <= 11])
    with Store.open(db_file, mode="create") as s:
        s.import_items("old", "jsonl", [ItemIn(external_id="q", kind="mcq", context_external_id="c1",
                                               payload={"question": "?", "options": ["a", "b"]})],
                       contexts=[])
        ds = s.db.execute("SELECT id FROM datasets WHERE name = 'old'").fetchone()[0]
        s.db["contexts"].insert({"id": "ctx-old", "dataset_id": ds, "external_id": "c1", "n_messages": 4,
                                 "n_chars": 70_016})
        s.db["context_messages"].insert_all([{"context_id": "ctx-old", "idx": i, "role": r, "content": c}
                                             for i, (r, c) in enumerate(messages)])
        assert "message_sizes" not in s.db["contexts"].columns_dict
    monkeypatch.undo()
    with Store.open(db_file, mode="rw") as s:  # a writing open migrates
        stored = s.db.execute("SELECT message_sizes FROM contexts WHERE id = 'ctx-old'").fetchone()[0]
        assert [tuple(x) for x in json.loads(stored)] == by_hand
        assert s.context_sizes("ctx-old") == by_hand
        # a new import writes them itself
        s.import_items("new", "jsonl", [ItemIn(external_id="q", kind="mcq", context_external_id="c2",
                                               payload={"question": "?", "options": ["a", "b"]})],
                       contexts=[ContextIn(external_id="c2", messages=[Message(role=r, content=c)
                                                                       for r, c in messages])])
        cid = s.db.execute("SELECT c.id FROM contexts c JOIN datasets d ON d.id = c.dataset_id WHERE d.name = 'new'"
                           ).fetchone()[0]
        assert s.context_sizes(cid) == by_hand
        # a context without them (written by other means) is measured message by message
        s.db.execute("UPDATE contexts SET message_sizes = NULL WHERE id = ?", [cid])
        assert s.context_sizes(cid) == by_hand
        assert s.context_sizes("no-such-context") == []
