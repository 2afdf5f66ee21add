"""The LLM call cache written from a thread of its own (LLMCallWriter): a Store of its own on the database file.

Apart from storage/llm_calls.py (the table's functions, mixed into Store) so that the import graph has no circle:
storage.store imports storage.llm_calls, and this module imports storage.store.
"""
from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Callable

from storage.db import write_transaction
from storage.errors import PrefvalError
from storage.llm_calls import AliveFn, ClaimOwner, LLMCall

__all__ = ["LLMCallWriter"]


@dataclass(frozen=True)
class _Claim:
    key: str
    force: bool = False


@dataclass(frozen=True)
class _Release:
    key: str


class LLMCallWriter:
    """Writes the call cache from a thread of its own, with its own connection to the database file, so that an
    event loop never waits for a disk sync. What arrives while a write is under way is written together in the next
    transaction (group commit: one sync for many replies).

    ``submit(call)`` returns a concurrent.futures.Future that is done once the call is committed (its exception is
    set when the write failed: PrefvalError for a credential in the request). ``submit_claim(key, force)`` claims
    a request for ``claimer`` = (ClaimOwner, lease seconds, AliveFn) (Future: CLAIMED, CACHED or BUSY) and
    ``submit_release(key)`` gives a claim back; the claims and releases of one transaction are made together.
    ``submit_op(fn)`` runs ``fn(store)`` in the next transaction; its Future holds what ``fn`` returned. ``on_batch(store)``, when set,
    runs at the end of every transaction (a budget share update). A transaction without a cached call (claims and
    releases only, which lose nothing worth keeping in a power cut) commits with ``synchronous = NORMAL``; one with
    a call with ``FULL``. ``close()`` writes what is pending and stops the thread. For a ":memory:" database (no
    second connection can see it) use put_llm_call instead.
    """

    MAX_BATCH = 256

    def __init__(self, path: str, on_batch: Callable[[Any], None] | None = None,
                 claimer: tuple[ClaimOwner, float, AliveFn] | None = None):
        if str(path) == ":memory:":
            raise PrefvalError("a writer thread needs a database file, not :memory:")
        self.path = str(path)
        self.on_batch = on_batch
        self.claimer = claimer
        self._queue: queue.Queue = queue.Queue()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="prefval-llm-cache-writer", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error

    def submit(self, call: LLMCall) -> Future:
        future: Future = Future()
        self._queue.put((call, future))
        return future

    def submit_claim(self, key: str, force: bool = False) -> Future:
        future: Future = Future()
        self._queue.put((_Claim(key, force), future))
        return future

    def submit_release(self, key: str) -> Future:
        future: Future = Future()
        self._queue.put((_Release(key), future))
        return future

    def submit_op(self, fn: Callable[[Any], Any]) -> Future:
        future: Future = Future()
        self._queue.put((fn, future))
        return future

    def close(self) -> None:
        """Commit everything submitted, then stop the thread (idempotent)."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()

    def _run(self) -> None:
        from storage.store import Store  # in the thread: the import is the caller's (already loaded)

        try:
            store = Store.open(self.path, mode="rw")  # the client's own database, already open
        except BaseException as exc:  # reported by __init__
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        self._sync = "FULL"
        try:
            stop = False
            while not stop:
                first = self._queue.get()
                batch = []
                if first is None:
                    stop = True
                else:
                    batch.append(first)
                while len(batch) < self.MAX_BATCH:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if item is None:
                        stop = True
                        continue
                    batch.append(item)
                if batch:
                    self._write(store, batch)
        finally:
            store.close()

    def _synchronous(self, store: Any, level: str) -> None:
        if level != self._sync:
            store.db.execute(f"PRAGMA synchronous = {level}")
            self._sync = level

    def _write(self, store: Any, batch: list[tuple[Any, Future]]) -> None:
        calls = [item for item, _ in batch if isinstance(item, LLMCall)]
        releases = [item.key for item, _ in batch if isinstance(item, _Release)]
        claims = [item for item, _ in batch if isinstance(item, _Claim)]
        results: list[Any] = []
        try:
            self._synchronous(store, "FULL" if calls else "NORMAL")
            with write_transaction(store.db):
                if calls:
                    store.put_llm_calls(calls)
                if releases:
                    store.release_llm_claims(releases, self.claimer[0].token)
                claimed = self._claim(store, claims) if claims else {}
                for item, _ in batch:
                    if isinstance(item, _Claim):
                        results.append(claimed[item.key])
                    elif isinstance(item, (LLMCall, _Release)):
                        results.append(None)
                    else:
                        results.append(item(store))
                if self.on_batch is not None:
                    self.on_batch(store)
        except BaseException:
            self._write_one_by_one(store, batch)
            return
        for (_, future), result in zip(batch, results):
            future.set_result(result)

    def _claim(self, store: Any, claims: list["_Claim"]) -> dict[str, str]:
        owner, lease, alive = self.claimer  # type: ignore[misc]
        return store.claim_llm_calls([c.key for c in claims], owner, lease, alive,
                                     force=frozenset(c.key for c in claims if c.force))

    def _write_one_by_one(self, store: Any, batch: list[tuple[Any, Future]]) -> None:
        """One bad call must not fail the others: each item in a transaction of its own."""
        self._synchronous(store, "FULL")
        for item, future in batch:
            try:
                if isinstance(item, LLMCall):
                    store.put_llm_call(item)
                    result = None
                elif isinstance(item, _Claim):
                    result = self._claim(store, [item])[item.key]
                elif isinstance(item, _Release):
                    result = store.release_llm_claims([item.key], self.claimer[0].token)
                else:
                    with write_transaction(store.db):
                        result = item(store)
            except PrefvalError as exc:
                future.set_exception(exc)
            except Exception as exc:  # sqlite errors: disk full, locked past the busy timeout ...
                future.set_exception(PrefvalError(f"{store.path}: the LLM call cache could not be written "
                                                  f"({type(exc).__name__}: {exc})"))
            else:
                future.set_result(result)
