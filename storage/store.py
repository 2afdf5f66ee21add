"""Store: the one object through which prefval reads and writes its SQLite file.

    store = Store.open("prefval.db", mode="rw")   # "ro", "rw" or "create"; Store.open(":memory:") in tests
    store.import_items(...); store.create_study(...); store.add_annotation(...)

Every write method runs in one transaction and has committed when it returns.
"""
from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from storage.db import sqlite_utils, write_transaction

from storage.adjudications import AdjudicationsMixin
from storage.annotations import AnnotationsMixin
from storage.bundles import BundlesMixin
from storage.datasets import DatasetsMixin
from storage.generation import GenerationMixin
from storage.db import BUSY_TIMEOUT_MS, now_iso, open_database
from storage.llm_calls import LLMCallsMixin
from storage.models import Event, new_id
from storage.queue_state import QueueStateMixin
from storage.studies import StudiesMixin, study_closed


class Store(DatasetsMixin, StudiesMixin, AnnotationsMixin, QueueStateMixin, BundlesMixin, AdjudicationsMixin, LLMCallsMixin, GenerationMixin):
    """Access to one prefval database. Not thread-safe: use one Store per thread."""

    def __init__(self, db: sqlite_utils.Database, path: str = ":memory:"):
        self.db = db
        self.path = path

    @classmethod
    def open(cls, path: str | Path = ":memory:", mode: str | None = None) -> "Store":
        """Open the database at path (":memory:" for a throwaway one, always created and migrated).

        mode, required for a file: "ro" (read-only commands: nothing is created, migrated or changed), "rw" (an
        existing prefval database, migrated when older) or "create" (also makes a new database from a missing or
        empty file); see storage.db.open_database. Raises PrefvalError for a missing file (ro, rw), a file that is
        not a prefval database (never touched), or a database that cannot be written (rw, create).
        """
        return cls(open_database(path, mode), str(path))

    def close(self) -> None:
        self.db.close()

    def make_single_file(self) -> None:
        """Write every page of the write-ahead log into the database file and leave WAL mode (journal_mode
        DELETE), so that the file alone is the whole database: a bundle handed to an annotator (annotator/bundles.py)
        needs no -wal or -shm file beside it. Raises sqlite3.OperationalError while another connection reads."""
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.db.execute("PRAGMA journal_mode = DELETE")

    def dataset_imports(self, dataset_id: str) -> list[tuple[str | None, str, str | None]]:
        """(path, imported_at, file_hash) of every import of a dataset, oldest first (table imports); paths and
        hashes as recorded (None where the import had none)."""
        return [tuple(r) for r in self.db.execute(
            "SELECT path, imported_at, file_hash FROM imports WHERE dataset_id = ? ORDER BY imported_at, id",
            [dataset_id]).fetchall()]

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def busy_timeout(self, ms: int):
        """Inside the block, a write waits at most `ms` milliseconds for another process's write lock before
        raising DatabaseBusy (0: never waits; the annotation screen writes so, and hands a busy write to a
        background thread instead of freezing). The default timeout (storage.db.BUSY_TIMEOUT_MS) comes back after."""
        self.db.execute(f"PRAGMA busy_timeout = {int(ms)}")
        try:
            yield self
        finally:
            self.db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")

    def transaction(self):
        """A context manager making everything inside it one transaction (nested calls become savepoints):
        all of it is committed at the end, or none of it when an exception leaves the block."""
        return write_transaction(self.db)

    # ---- event log -------------------------------------------------------------------------
    def log_event(self, kind: str, study_id: str | None = None, annotator_id: str | None = None,
                  **payload: Any) -> None:
        """Append one event (import, study_created, session_start, session_end, ...) and commit."""
        with write_transaction(self.db):
            self._insert_event(kind, study_id, annotator_id, payload)

    def log_events(self, events: list[Event]) -> None:
        """Append events built beforehand (their ids and times as given: an event written late, after waiting for a
        busy file, keeps the time it happened) in one transaction, and commit. Retried after DatabaseBusy, it
        writes them once (nothing is written by a transaction that could not start). These are a session's events
        (visit, session_end): those of a study archived or deleted since the session opened are not written
        (storage.studies.study_closed, read in the transaction), as nothing else of the session is. Raises
        DatabaseBusy when another process held the write lock beyond the busy timeout (nothing written),
        PrefvalError for any other write failure."""
        import sqlite3

        from storage.errors import DatabaseBusy, PrefvalError, is_busy

        try:
            with write_transaction(self.db):
                closed = {sid for sid in {e.study_id for e in events if e.study_id}
                          if study_closed(self.db, self.path, sid) is not None}
                for e in events:
                    if e.study_id not in closed:
                        self._insert_event(e.kind, e.study_id, e.annotator_id, e.payload, at=e.at, event_id=e.id)
        except sqlite3.OperationalError as exc:
            if is_busy(exc):
                raise DatabaseBusy(f"{self.path}: the session's events were NOT saved (the database is busy: "
                                   "another program is writing to it); try again") from None
            raise PrefvalError(f"{self.path}: the session's events were NOT saved ({exc})") from None

    def _insert_event(self, kind: str, study_id: str | None, annotator_id: str | None,
                      payload: dict[str, Any], at: str | None = None, event_id: str | None = None) -> None:
        self.db["events"].insert({
            "id": event_id or new_id(), "at": at or now_iso(), "kind": kind, "study_id": study_id,
            "annotator_id": annotator_id, "payload": json.dumps(payload, ensure_ascii=False, default=str),
        })

    def events(self, kind: str | None = None, study_id: str | None = None,
               annotator_id: str | None = None) -> list[Event]:
        """Events in time order, optionally of one kind, one study and/or one annotator."""
        where, params = [], []
        if kind:
            where.append("kind = ?"); params.append(kind)
        if study_id:
            where.append("study_id = ?"); params.append(study_id)
        if annotator_id:
            where.append("annotator_id = ?"); params.append(annotator_id)
        rows = self.db["events"].rows_where(" AND ".join(where) or None, params, order_by="at")
        return [Event(**{**r, "payload": json.loads(r["payload"] or "{}")}) for r in rows]
