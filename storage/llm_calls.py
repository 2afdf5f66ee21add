"""The LLM call cache (table llm_calls) and the runs of the generator and the evaluator (table runs).

A cached call is a *valid* reply (the client validated it before writing); the key is
``generator.llm_types.LLMRequest.cache_key()``. Nothing here ever holds an API key: run configs go through
``storage.secrets.scrub_config`` and request JSON through a check that no credential-named field is present.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Callable

from storage.db import now_iso, write_transaction
from storage.errors import PrefvalError
from storage.models import Model, new_id
from storage.secrets import is_secret_field, scrub_config, scrub_text, secret_values

RUN_KINDS = ("generate", "evaluate")
RUN_STATUSES = ("running", "done", "failed", "budget", "interrupted", "stopped")


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
    #: 2: the key holds the normalised api_base (LLMRequest.cache_key); 1: written before its migration, whose
    #: key left api_base out (LLMRequest.legacy_cache_key)
    key_version: int = 2


@dataclass(frozen=True)
class ClaimOwner:
    """Who claims requests: one LLM client. token: unique per client (host:pid:random); host and pid: where it
    runs, so another process on the same host can tell that it died; run_id: its run (for people reading the
    table)."""

    token: str
    host: str
    pid: int
    run_id: str | None = None


@dataclass(frozen=True)
class ClaimHolder:
    """The holder of a claim (or of a budget share) as stored: token, host, pid and lease end (unix seconds)."""

    token: str
    host: str | None
    pid: int | None
    lease_until: float


#: ``alive(holder, now) -> bool``: whether the holder of a claim or share still runs (the caller's test; the
#: client's is generator.client.holder_alive).
AliveFn = Callable[[ClaimHolder, float], bool]

CLAIMED, CACHED, BUSY = "claimed", "cached", "busy"


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
                 "attempts", "created_at", "key_version")
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


def _call_values(call: LLMCall, secrets: list[str] | None = None) -> tuple:
    _no_secret_fields(call.request, f"llm call {call.key[:12]}")
    request_json = scrub_text(json.dumps(call.request, ensure_ascii=False, sort_keys=True), secrets)
    return (call.key, call.run_id, call.model, call.api_base, call.template, request_json, call.reply_text,
            json.dumps(call.parsed, ensure_ascii=False) if call.parsed is not None else None,
            call.finish_reason, call.prompt_tokens, call.completion_tokens, int(call.usage_known),
            call.cost_usd, call.seconds, call.attempts, call.created_at or now_iso(), call.key_version)


def _call_from_row(row: tuple) -> LLMCall:
    d = dict(zip(_CALL_COLUMNS, row))
    d["request"] = json.loads(d["request"])
    d["parsed"] = json.loads(d["parsed"]) if d["parsed"] is not None else None
    d["usage_known"] = bool(d["usage_known"])
    return LLMCall(**d)


#: statuses of a batch as prefval records it: "submitting" (recorded, not yet accepted by the provider: its input
#: file may be uploaded), then the provider's (validating, in_progress, finalizing, completed, expired, failed,
#: cancelling, cancelled), then "done" once its results were taken into the cache (or handed on to be retried)
BATCH_OPEN = ("submitting", "validating", "in_progress", "finalizing", "cancelling")
BATCH_ENDED = ("completed", "expired", "failed", "cancelled")
_BATCH_COLUMNS = ("id", "scope", "run_id", "provider", "api_base", "model", "provider_batch_id", "input_file_id",
                  "output_file_id", "error_file_id", "status", "n_lines", "n_completed", "n_failed", "price_factor",
                  "error", "created_at", "updated_at", "finished_at")


class LLMBatch(Model):
    """One provider batch: its lines are requests of ``model`` to ``api_base`` (None: the provider's endpoint),
    each named by custom_id and standing for one cache key. price_factor: the share of the online price it is paid
    at (0.5: half). status: see BATCH_OPEN / BATCH_ENDED, and "done"."""

    id: str
    scope: str
    run_id: str | None = None
    provider: str
    api_base: str | None = None
    model: str
    provider_batch_id: str | None = None
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    status: str
    n_lines: int
    n_completed: int = 0
    n_failed: int = 0
    price_factor: float = 1.0
    error: str | None = None
    created_at: str = ""
    updated_at: str = ""
    finished_at: str | None = None


class LLMBatchesMixin:
    db: Any

    def add_llm_batch(self, batch: LLMBatch, lines: list[tuple[str, str]]) -> None:
        """Record a batch about to be submitted, with its lines (custom_id, cache key), in one transaction."""
        stamp = now_iso()
        values = batch.model_dump()
        values.update(created_at=batch.created_at or stamp, updated_at=stamp, error=scrub_text(batch.error or "")
                      or None)
        with write_transaction(self.db):
            self.db.execute(f"INSERT INTO llm_batches ({', '.join(_BATCH_COLUMNS)}) VALUES "
                            f"({', '.join('?' for _ in _BATCH_COLUMNS)})", [values[c] for c in _BATCH_COLUMNS])
            self.db.conn.executemany("INSERT INTO llm_batch_lines (batch_id, custom_id, key, status) VALUES "
                                     "(?, ?, ?, 'pending')", [(batch.id, cid, key) for cid, key in lines])

    def update_llm_batch(self, batch_id: str, **fields: Any) -> None:
        """Set some fields of a batch (status, provider_batch_id, file ids, counts, error, finished_at)."""
        unknown = set(fields) - set(_BATCH_COLUMNS) - {"id"}
        if unknown or "id" in fields:
            raise PrefvalError(f"llm batch: cannot set {', '.join(sorted(unknown or {'id'}))}")
        if "error" in fields and fields["error"]:
            fields["error"] = scrub_text(str(fields["error"]))
        fields["updated_at"] = now_iso()
        with write_transaction(self.db):
            self.db.execute(f"UPDATE llm_batches SET {', '.join(f'{k} = ?' for k in fields)} WHERE id = ?",
                            [*fields.values(), batch_id])

    def set_llm_batch_lines(self, batch_id: str, statuses: dict[str, str]) -> None:
        """Set the status of lines of a batch (custom_id -> done, failed, expired, retried)."""
        with write_transaction(self.db):
            self.db.conn.executemany("UPDATE llm_batch_lines SET status = ? WHERE batch_id = ? AND custom_id = ?",
                                     [(st, batch_id, cid) for cid, st in statuses.items()])

    def llm_batch(self, batch_id: str) -> LLMBatch:
        row = self.db.execute(f"SELECT {', '.join(_BATCH_COLUMNS)} FROM llm_batches WHERE id = ?",
                              [batch_id]).fetchone()
        if row is None:
            raise PrefvalError(f"no llm batch with id '{batch_id}'")
        return LLMBatch(**dict(zip(_BATCH_COLUMNS, row)))

    def llm_batches(self, scope: str | None = None, open_only: bool = False) -> list[LLMBatch]:
        """Batches in the order they were created, optionally of one scope, optionally those not done yet."""
        sql = f"SELECT {', '.join(_BATCH_COLUMNS)} FROM llm_batches"
        where, params = [], []
        if scope is not None:
            where.append("scope = ?")
            params.append(scope)
        if open_only:
            where.append("status != 'done'")
        if where:
            sql += " WHERE " + " AND ".join(where)
        return [LLMBatch(**dict(zip(_BATCH_COLUMNS, r)))
                for r in self.db.execute(sql + " ORDER BY created_at, id", params).fetchall()]

    def llm_batch_lines(self, batch_id: str) -> list[tuple[str, str, str]]:
        """(custom_id, key, status) of a batch's lines, in custom_id order."""
        return [tuple(r) for r in self.db.execute(
            "SELECT custom_id, key, status FROM llm_batch_lines WHERE batch_id = ? ORDER BY custom_id",
            [batch_id]).fetchall()]

    def pending_llm_batch_keys(self, scope: str) -> dict[str, tuple[str, str]]:
        """{cache key: (batch id, custom_id)} of the lines still pending in batches of ``scope`` that are not done:
        requests already submitted (or about to be), whose results a resumed run takes instead of asking again."""
        return {r[0]: (r[1], r[2]) for r in self.db.execute(
            "SELECT l.key, l.batch_id, l.custom_id FROM llm_batch_lines l JOIN llm_batches b ON b.id = l.batch_id "
            "WHERE b.scope = ? AND b.status != 'done' AND l.status = 'pending' ORDER BY b.created_at",
            [scope]).fetchall()}


class LLMCallsMixin(LLMBatchesMixin):
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
        secrets = secret_values()  # read once for the batch, at the time of writing
        rows = [_call_values(call, secrets) for call in calls]
        with write_transaction(self.db):
            self.db.conn.executemany(_INSERT_CALL, rows)
            # a key answered is no longer claimed (whoever claimed it)
            self.db.conn.executemany("DELETE FROM llm_claims WHERE key = ?", [(call.key,) for call in calls])

    # ---- claims: one request per key across processes ------------------------------------------------------------
    def claim_llm_calls(self, keys: list[str], owner: ClaimOwner, lease_seconds: float, alive: AliveFn,
                        force: frozenset[str] = frozenset()) -> dict[str, str]:
        """Claim requests about to be sent, in one BEGIN IMMEDIATE transaction. Per key: CACHED when the cache
        already holds its reply (unless the key is in ``force``: a reply the caller cannot use); else CLAIMED when
        no one holds it, ``owner`` holds it already (its lease is renewed), or its holder is no longer ``alive``
        (taken over); else BUSY (a live holder is sending it: wait for its reply). Leases run ``lease_seconds``
        from now."""
        now, stamp = time.time(), now_iso()
        out: dict[str, str] = {}
        conn = self.db.conn
        with write_transaction(self.db):
            for key in keys:
                if key not in force and conn.execute("SELECT 1 FROM llm_calls WHERE key = ?", (key,)).fetchone():
                    out[key] = CACHED
                    continue
                row = conn.execute("SELECT owner, host, pid, lease_until FROM llm_claims WHERE key = ?",
                                   (key,)).fetchone()
                if row is not None and row[0] != owner.token and alive(ClaimHolder(*row), now):
                    out[key] = BUSY
                    continue
                conn.execute(
                    "INSERT OR REPLACE INTO llm_claims (key, owner, host, pid, run_id, claimed_at, lease_until) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (key, owner.token, owner.host, owner.pid, owner.run_id, stamp, now + lease_seconds))
                out[key] = CLAIMED
        return out

    def release_llm_claims(self, keys: list[str], owner_token: str) -> None:
        """Give back claims of ``owner_token`` (a request that failed or was cancelled: someone may try it again)."""
        with write_transaction(self.db):
            self.db.conn.executemany("DELETE FROM llm_claims WHERE key = ? AND owner = ?",
                                     [(key, owner_token) for key in keys])

    def llm_claim_holder(self, key: str) -> ClaimHolder | None:
        """Who holds the claim of ``key`` now, or None."""
        row = self.db.execute("SELECT owner, host, pid, lease_until FROM llm_claims WHERE key = ?", [key]).fetchone()
        return ClaimHolder(*row) if row else None

    def llm_claims(self) -> list[tuple[str, ClaimHolder]]:
        """(key, holder) of every claim held now."""
        return [(r[0], ClaimHolder(*r[1:])) for r in self.db.execute(
            "SELECT key, owner, host, pid, lease_until FROM llm_claims ORDER BY claimed_at").fetchall()]

    # ---- budget shares: one budget across the concurrent runs of a scope -----------------------------------------
    def share_budget(self, scope: str, owner: ClaimOwner, spent_usd: float, lease_seconds: float, alive: AliveFn,
                     join: bool = False, ended: bool = False) -> float:
        """Record what ``owner`` has spent (USD) in budget ``scope`` and return what the others sharing it have
        spent. ``join``: first call of a client; when no other holder of the scope still runs, the scope's old
        shares are cleared (a new run starts with a fresh budget, as a resumed run does); else they stay, so the
        runs that overlap in time share one budget. ``ended``: the client is done (its spend still counts for the
        runs that overlapped it). A holder that is not ``alive`` and has not ended counts what it recorded."""
        now = time.time()
        with write_transaction(self.db):
            rows = self.db.execute("SELECT owner, host, pid, lease_until, spent_usd, ended FROM llm_budget_shares "
                                   "WHERE scope = ? AND owner != ?", [scope, owner.token]).fetchall()
            if join and not any(not r[5] and alive(ClaimHolder(*r[:4]), now) for r in rows):
                self.db.execute("DELETE FROM llm_budget_shares WHERE scope = ?", [scope])
                rows = []
            self.db.execute(
                "INSERT OR REPLACE INTO llm_budget_shares (scope, owner, host, pid, spent_usd, ended, lease_until, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [scope, owner.token, owner.host, owner.pid, float(spent_usd), int(ended), now + lease_seconds,
                 now_iso()])
        return float(sum(r[4] or 0.0 for r in rows))

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

    def llm_calls_keyed_without_api_base(self) -> list[tuple[str, str]]:
        """(key, api_base as stored) of the cached calls of key version 1 that were sent to an api_base: their key
        leaves the api_base out (see LLMCall.key_version)."""
        return [(r[0], r[1]) for r in self.db.execute(
            "SELECT key, api_base FROM llm_calls WHERE key_version = 1 AND api_base IS NOT NULL").fetchall()]

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
        """Mark a run ended with status (done, failed, budget, interrupted, stopped: its server failed) and its
        totals; commit.
        Raises PrefvalError for an unknown run or status."""
        if status not in RUN_STATUSES or status == "running":
            raise PrefvalError(f"run status '{status}' is not one of done, failed, budget, interrupted, stopped")
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
