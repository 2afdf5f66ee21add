"""The LLM call cache (table llm_calls) and the runs of the generator and the evaluator (table runs).

A cached call is a *valid* reply (the client validated it before writing); the key is
``generator.llm_types.LLMRequest.cache_key()``. Nothing here ever holds an API key: run configs go through
``storage.secrets.scrub_config`` and request JSON through a check that no credential-named field is present.
"""
from __future__ import annotations

import json
import queue
import threading
from concurrent.futures import Future
from typing import Any

from storage.db import now_iso, write_transaction
from storage.errors import PrefvalError
from storage.models import Model, new_id
from storage.secrets import is_secret_field, scrub_config, scrub_text

RUN_KINDS = ("generate", "evaluate")
RUN_STATUSES = ("running", "done", "failed", "budget", "interrupted")


class LLMCall(Model):
    """One cached call. request: {"messages", "params", "schema", "schema_name", "sample_index"} as sent.
    parsed: the validated JSON value (None for free text). Tokens are None when the server sent no usage;
    cost_usd None when the price is unknown; seconds: wall time of the successful attempt; attempts: requests sent."""

    key: str
    run_id: str | None = None
    model: str
    api_base: str | None = None
    template: str
    request: dict[str, Any]
    reply_text: str
    parsed: Any = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    usage_known: bool = False
    cost_usd: float | None = None
    seconds: float = 0.0
    attempts: int = 1
    created_at: str = ""


class Run(Model):
    """One generator or evaluator run. config: the settings it ran with (secrets removed); totals: counts, tokens
    and USD when it finished (keys of the caller's choosing, e.g. calls, cached, failed, prompt_tokens, cost_usd)."""

    id: str
    kind: str
    name: str | None = None
    config: dict[str, Any]
    started_at: str
    ended_at: str | None = None
    status: str
    totals: dict[str, Any] = {}


_CALL_COLUMNS = ("key", "run_id", "model", "api_base", "template", "request", "reply_text", "parsed",
                 "finish_reason", "prompt_tokens", "completion_tokens", "usage_known", "cost_usd", "seconds",
                 "attempts", "created_at")
_INSERT_CALL = (f"INSERT OR REPLACE INTO llm_calls ({', '.join(_CALL_COLUMNS)}) "
                f"VALUES ({', '.join('?' for _ in _CALL_COLUMNS)})")


def _no_secret_fields(value: Any, where: str) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            if is_secret_field(str(k)):
                raise PrefvalError(f"{where}: field '{k}' holds a credential; keys come from the environment only")
            _no_secret_fields(v, where)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _no_secret_fields(v, where)


def _call_values(call: LLMCall) -> tuple:
    _no_secret_fields(call.request, f"llm call {call.key[:12]}")
    request_json = scrub_text(json.dumps(call.request, ensure_ascii=False, sort_keys=True))
    return (call.key, call.run_id, call.model, call.api_base, call.template, request_json, call.reply_text,
            json.dumps(call.parsed, ensure_ascii=False) if call.parsed is not None else None,
            call.finish_reason, call.prompt_tokens, call.completion_tokens, int(call.usage_known),
            call.cost_usd, call.seconds, call.attempts, call.created_at or now_iso())


def _call_from_row(row: tuple) -> LLMCall:
    d = dict(zip(_CALL_COLUMNS, row))
    d["request"] = json.loads(d["request"])
    d["parsed"] = json.loads(d["parsed"]) if d["parsed"] is not None else None
    d["usage_known"] = bool(d["usage_known"])
    return LLMCall(**d)


class LLMCallsMixin:
    db: Any

    # ---- the call cache ------------------------------------------------------------------------------------------
    def get_llm_call(self, key: str) -> LLMCall | None:
        """The cached call with this key, or None."""
        row = self.db.execute(f"SELECT {', '.join(_CALL_COLUMNS)} FROM llm_calls WHERE key = ?", [key]).fetchone()
        return _call_from_row(row) if row else None

    def put_llm_call(self, call: LLMCall) -> None:
        """Write (or replace) one cached call and commit. Raises PrefvalError when the request holds a
        credential-named field (api_key, authorization ...)."""
        self.put_llm_calls([call])

    def put_llm_calls(self, calls: list[LLMCall]) -> None:
        """Write (or replace) several cached calls in one transaction and commit (one disk sync for all).
        Raises PrefvalError, with nothing written, when a request holds a credential-named field."""
        rows = [_call_values(call) for call in calls]
        with write_transaction(self.db):
            self.db.conn.executemany(_INSERT_CALL, rows)

    def llm_calls(self, run_id: str | None = None) -> list[LLMCall]:
        """Cached calls in the order they were written, optionally of one run."""
        sql = f"SELECT {', '.join(_CALL_COLUMNS)} FROM llm_calls"
        params: list = []
        if run_id is not None:
            sql += " WHERE run_id = ?"
            params.append(run_id)
        return [_call_from_row(r) for r in self.db.execute(sql + " ORDER BY created_at, key", params).fetchall()]

    def llm_call_keys(self) -> set[str]:
        """Keys of every cached call."""
        return {r[0] for r in self.db.execute("SELECT key FROM llm_calls").fetchall()}

    # ---- runs ----------------------------------------------------------------------------------------------------
    def start_run(self, kind: str, config: dict[str, Any], name: str | None = None) -> str:
        """Record a run as "running" and commit; returns its id. config is stored with credential-named keys
        dropped and secret values scrubbed. Raises PrefvalError for a kind other than RUN_KINDS."""
        if kind not in RUN_KINDS:
            raise PrefvalError(f"run kind '{kind}' is not one of {', '.join(RUN_KINDS)}")
        run_id = new_id()
        with write_transaction(self.db):
            self.db.execute(
                "INSERT INTO runs (id, kind, name, config, started_at, status, totals) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [run_id, kind, name, json.dumps(scrub_config(config), ensure_ascii=False, default=str), now_iso(),
                 "running", "{}"])
        return run_id

    def finish_run(self, run_id: str, status: str, totals: dict[str, Any] | None = None) -> None:
        """Mark a run ended with status (done, failed, budget, interrupted) and its totals; commit.
        Raises PrefvalError for an unknown run or status."""
        if status not in RUN_STATUSES or status == "running":
            raise PrefvalError(f"run status '{status}' is not one of done, failed, budget, interrupted")
        with write_transaction(self.db):
            cur = self.db.execute("UPDATE runs SET ended_at = ?, status = ?, totals = ? WHERE id = ?",
                                  [now_iso(), status, json.dumps(scrub_config(totals or {}), default=str), run_id])
            if cur.rowcount != 1:
                raise PrefvalError(f"no run with id '{run_id}'")

    def get_run(self, run_id: str) -> Run:
        """The run with this id. Raises PrefvalError when there is none."""
        row = self.db.execute("SELECT id, kind, name, config, started_at, ended_at, status, totals FROM runs "
                              "WHERE id = ?", [run_id]).fetchone()
        if row is None:
            raise PrefvalError(f"no run with id '{run_id}'")
        return _run_from_row(row)

    def runs(self, kind: str | None = None) -> list[Run]:
        """Runs in the order they started, optionally of one kind."""
        sql = "SELECT id, kind, name, config, started_at, ended_at, status, totals FROM runs"
        params: list = []
        if kind:
            sql += " WHERE kind = ?"
            params.append(kind)
        return [_run_from_row(r) for r in self.db.execute(sql + " ORDER BY started_at", params).fetchall()]


def _run_from_row(row: tuple) -> Run:
    d = dict(zip(("id", "kind", "name", "config", "started_at", "ended_at", "status", "totals"), row))
    d["config"] = json.loads(d["config"] or "{}")
    d["totals"] = json.loads(d["totals"] or "{}")
    return Run(**d)


class LLMCallWriter:
    """Writes cached calls from a thread of its own, with its own connection to the database file, so that an
    event loop never waits for a disk sync. Calls that arrive while a write is under way are written together in
    the next transaction (group commit: one sync for many replies).

    ``submit(call)`` returns a concurrent.futures.Future that is done once the call is committed (its exception is
    set when the write failed: PrefvalError for a credential in the request). ``close()`` writes what is pending
    and stops the thread. For a ":memory:" database (no second connection can see it) use put_llm_call instead.
    """

    MAX_BATCH = 256

    def __init__(self, path: str):
        if str(path) == ":memory:":
            raise PrefvalError("a writer thread needs a database file, not :memory:")
        self.path = str(path)
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

    def close(self) -> None:
        """Commit everything submitted, then stop the thread (idempotent)."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()

    def _run(self) -> None:
        from storage.store import Store

        try:
            store = Store.open(self.path, mode="rw")  # the client's own database, already open
        except BaseException as exc:  # reported by __init__
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
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

    @staticmethod
    def _write(store: Any, batch: list[tuple[LLMCall, Future]]) -> None:
        try:
            store.put_llm_calls([call for call, _ in batch])
        except BaseException:
            for call, future in batch:  # one bad call must not fail the others: write them one by one
                try:
                    store.put_llm_call(call)
                except PrefvalError as exc:
                    future.set_exception(exc)
                except Exception as exc:  # sqlite errors: disk full, locked past the busy timeout ...
                    future.set_exception(PrefvalError(f"{store.path}: the LLM call cache could not be written "
                                                      f"({type(exc).__name__}: {exc})"))
                else:
                    future.set_result(None)
            return
        for _, future in batch:
            future.set_result(None)
