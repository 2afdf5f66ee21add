"""The store's transactions (storage/store.py): a busy timeout set for a block and put back, a transaction rolled
back by an error, nested ones as savepoints, and the events they logged read back by kind and study (CONTRIBUTING.md,
"Mutation testing")."""
from __future__ import annotations

import pytest

from storage.db import BUSY_TIMEOUT_MS


def test_store_busy_timeout_and_transactions(store):
    assert BUSY_TIMEOUT_MS == 10_000
    with store.busy_timeout(0) as s:
        assert s is store and store.db.execute("PRAGMA busy_timeout").fetchone()[0] == 0
    assert store.db.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.log_event("a")
            raise RuntimeError("undo")
    assert store.events() == []  # rolled back
    with store.transaction():
        store.log_event("b", None, None, x=1)
        with store.transaction():  # nested: a savepoint
            store.log_event("c", "s1")
    events = store.events()
    assert [(e.kind, e.study_id, e.payload) for e in events] == [("b", None, {"x": 1}), ("c", "s1", {})]
    assert [e.kind for e in store.events("c")] == ["c"] and [e.kind for e in store.events(study_id="s1")] == ["c"]
    assert store.events("c", "other") == []
