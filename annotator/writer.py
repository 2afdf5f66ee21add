"""Writes that must not freeze the screen: a thread with its own connection that retries while the file is busy.

The annotation screen first tries each write on its own thread, waiting at most FIRST_TRY_MS for the lock
(Store.busy_timeout): long enough for the writes of other annotators working beside it, which hold the lock for a
millisecond or two each; when another program holds the write lock longer (a long import, a study command, an SQLite
shell), the write is handed to a BackgroundWriter, which keeps it and retries until it commits, while the screen
stays responsive and says so.
No Textual here.
"""
from __future__ import annotations

import concurrent.futures
import threading
import time
from typing import Callable, TypeVar

from storage.errors import DatabaseBusy
from storage.store import Store

T = TypeVar("T")

# How long the screen's first try of a write waits for another connection's write lock (milliseconds). A decision's
# write holds the lock about 1 ms (median 0.7 ms, at most 4 ms, one writer, synchronous=FULL, this machine's disk);
# with three annotators writing 30 decisions each back to back, a first try that did not wait at all (0 ms, as before)
# found the lock taken 3-7 times in 90 writes, each then shown as "saving… database busy" with the keys after it
# refused; waiting up to 250 ms: never, in 4 runs (tests/test_save_contention.py checks three writers). A lock held
# longer than this is a real one, and the write goes to the background.
FIRST_TRY_MS = 250
RETRY_WAIT_MS = 500  # how long each attempt in the background waits for the lock (milliseconds)


class BackgroundWriter:
    """One worker thread with its own Store (SQLite connections belong to the thread that opened them).

    path: the database file. submit(fn, on_busy) runs fn(store) in the thread, retrying after DatabaseBusy
    (each attempt waits up to RETRY_WAIT_MS for the lock; on_busy(attempt) is called from the thread after each
    failed attempt) until it returns or raises another error; it returns a concurrent.futures.Future.
    close() stops retrying (a pending write then raises DatabaseBusy), finishes and closes the connection.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="prefval-writer")
        self._local = threading.local()
        self._closing = False

    def _store(self) -> Store:
        store = getattr(self._local, "store", None)
        if store is None:
            store = self._local.store = Store.open(self.path, mode="rw")
        return store

    def submit(self, fn: Callable[[Store], T], on_busy: Callable[[int], None] = lambda attempt: None
               ) -> "concurrent.futures.Future[T]":
        def run() -> T:
            attempt = 0
            while True:
                try:
                    store = self._store()
                    with store.busy_timeout(RETRY_WAIT_MS):
                        return fn(store)
                except DatabaseBusy:
                    attempt += 1
                    if self._closing:
                        raise
                    on_busy(attempt)
                    time.sleep(0.05)

        return self._pool.submit(run)

    def stop_retrying(self) -> None:
        """A write waiting for the lock gives up after its current attempt (at most RETRY_WAIT_MS): its future
        raises DatabaseBusy. Writes submitted later are tried once each."""
        self._closing = True

    def close(self) -> None:
        self._closing = True

        def shut() -> None:
            store = getattr(self._local, "store", None)
            if store is not None:
                store.close()
                self._local.store = None

        self._pool.submit(shut)
        self._pool.shutdown(wait=True)
