"""Provider batch APIs, the way big runs are paid for (`prefval generate --batch`, `prefval evaluate ... --batch`).

:class:`BatchClient` stands in for the LLM client (``complete(request, output_model, check)``): a request already in
the call cache is answered from it; every other one waits to go out in a batch. Once no new request has come for a
moment (all rows of a stage are waiting), the waiting requests are written as a JSONL file, uploaded
(``litellm.acreate_file``, purpose batch) and submitted (``litellm.acreate_batch``, the OpenAI batch format that
litellm maps to OpenAI, Azure, Vertex, Bedrock and OpenAI-compatible servers); the batch is recorded in the
database before it is submitted and its provider id as soon as it is known (storage ``llm_batches``, one
``llm_batch_lines`` row per request), so a run killed after submitting (kill -9) and started again re-attaches to
its batch instead of paying twice. The batch is polled (``aretrieve_batch``) until it ends; its output is read
(``afile_content``) and every line goes through the same reading, scrubbing, validation, stage checks and cache as an
online reply (``LLMClient.take_reply``), priced at the batch price (``price_factor`` of the online price, 0.5 by
default: half). A line the provider failed or left when the batch expired, or a whole batch that failed, is retried
online through the client (its retries, limits, breaker and budget); an invalid line gets its repair online.

The budget: before a batch goes out, the most it can cost (prompt tokens counted offline plus max_tokens, at the
batch price) must fit in what is left; requests beyond that are refused with BudgetExhausted, like online ones.
"""
from __future__ import annotations

import asyncio
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from generator.client import LLMClient, error_reason, fault_kind, import_litellm, unreachable_message
from generator.llm_types import BudgetExhausted, LLMCallFailed, LLMReply, LLMRequest, ServerUnreachable

#: providers whose batches litellm 1.110.2 creates (acreate_batch's custom_llm_provider)
BATCH_PROVIDERS = ("openai", "azure", "vertex_ai", "bedrock", "hosted_vllm", "litellm_proxy", "mistral", "xai")
ENDED = ("completed", "expired", "failed", "cancelled")


@dataclass(frozen=True)
class BatchOptions:
    """poll_every: seconds between looks at a batch in progress. price_factor: the share of the online price a
    batch line costs. max_lines: lines per batch at most (OpenAI: 50,000). settle: seconds without a new request
    before the waiting ones are sent. timeout: seconds per request to the batch endpoints."""

    poll_every: float = 60.0
    price_factor: float = 0.5
    max_lines: int = 50_000
    settle: float = 0.3
    timeout: float = 120.0


@dataclass
class _Line:
    request: LLMRequest
    output_model: Any
    check: Callable[[Any], None] | None
    future: asyncio.Future
    batch_id: str | None = None


@dataclass
class _Outcome:
    """What became of a batch line: a reply (valid, cached), or what to do online: "online" (ask again) or
    "repair" (the line's reply was invalid: send its repair)."""

    reply: LLMReply | None = None
    action: str = ""
    text: str = ""
    reason: str = ""
    error: BaseException | None = None


@dataclass
class BatchStats:
    batches: int = 0
    lines: int = 0
    reattached: int = 0
    online: int = 0
    events: list[str] = field(default_factory=list)


def provider_of(model: str, api_base: str | None) -> tuple[str, str]:
    """(provider, the model's name at the provider) of a litellm model string, e.g. ("openai", "gpt-4o-mini")."""
    litellm = import_litellm()
    name, provider, _, _ = litellm.get_llm_provider(model=model, api_base=api_base)
    return provider, name


class BatchClient:
    """``complete`` like LLMClient's, through provider batches (see the module docstring).

    client: the LLMClient whose cache, prices, budget, retries and stats are used (its listeners see batch
    replies as done calls). store: the database of the cache and the batch records. scope: the name under which
    batches are recorded and found again (e.g. ``generate:PIPELINE``). on_event(text): one line per batch event
    (submitted, re-attached, status, ended). api: the litellm module (tests may pass a stand-in).
    """

    def __init__(self, client: LLMClient, store: Any, scope: str, options: BatchOptions = BatchOptions(),
                 on_event: Callable[[str], None] | None = None, api: Any = None, run_id: str | None = None):
        self.client = client
        self.store = store
        self.scope = scope
        self.options = options
        self.on_event = on_event
        self.run_id = run_id if run_id is not None else client.run_id
        self.stats = client.stats
        self.listeners = client.listeners
        self.batch_stats = BatchStats()
        self._api = api
        self._lines: dict[str, _Line] = {}
        self._queue: dict[str, _Line] = {}
        self._raw: dict[str, _Outcome | dict] = {}  # key -> a result line waiting for its caller
        self._pollers: dict[str, asyncio.Task] = {}
        self._flusher: asyncio.Task | None = None
        self._last_enqueue = 0.0
        self._pending = store.pending_llm_batch_keys(scope) if store is not None else {}
        self._submitted: set[str] = set()  # batches this client submitted (the others are re-attached)

    # ---- the caller's side ---------------------------------------------------------------------------------------
    @property
    def api(self) -> Any:
        if self._api is None:
            self._api = import_litellm()
            self.client._used_litellm = True
        return self._api

    async def complete(self, request: LLMRequest, output_model: Any = None,
                       check: Callable[[Any], None] | None = None) -> LLMReply:
        """The reply to ``request``: from the cache, else from a batch (re-attached to an earlier run's when it
        holds the request), else online when the batch could not answer it. Raises what LLMClient.complete
        raises."""
        client = self.client
        client.check_request(request)
        if client._fault is not None:
            client.stats.stopped += 1
            raise client._fault_copy()
        key = request.cache_key()
        cached = client._from_cache(key, request, output_model, check)
        if cached is not None:
            client.stats.cached += 1
            client._notify()
            return cached
        line = self._lines.get(key)
        if line is None:
            line = _Line(request, output_model, check, asyncio.get_running_loop().create_future())
            self._lines[key] = line
            if key in self._raw:  # its batch ended before this caller came
                self._resolve(key)
            elif key in self._pending:  # submitted by an earlier run of the scope: re-attach
                batch_id, _ = self._pending[key]
                line.batch_id = batch_id
                self._attach(batch_id)
            else:
                self._queue[key] = line
                self._last_enqueue = time.monotonic()
                if self._flusher is None or self._flusher.done():
                    self._flusher = asyncio.ensure_future(self._flush_when_quiet())
        outcome: _Outcome = await asyncio.shield(line.future)
        if outcome.error is not None:  # shared by the callers of one key: each raises its own copy
            raise type(outcome.error)(*outcome.error.args)
        if outcome.reply is not None:
            return outcome.reply
        self.batch_stats.online += 1
        if outcome.action == "repair":
            return await client.complete_repair(request, output_model, check, outcome.text, outcome.reason)
        return await client.complete(request, output_model, check)

    async def aclose(self) -> None:
        for task in list(self._pollers.values()) + ([self._flusher] if self._flusher else []):
            task.cancel()
        await asyncio.gather(*self._pollers.values(), *([self._flusher] if self._flusher else []),
                             return_exceptions=True)

    async def __aenter__(self) -> "BatchClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _event(self, text: str) -> None:
        self.batch_stats.events.append(text)
        if self.on_event is not None:
            try:
                self.on_event(text)
            except Exception:  # a display must never break a run
                pass

    def _settle(self, key: str, outcome: _Outcome) -> None:
        line = self._lines.get(key)
        if line is not None and not line.future.done():
            line.future.set_result(outcome)

    def _fail_all(self, keys: list[str], error: BaseException) -> None:
        for key in keys:
            self._settle(key, _Outcome(error=error))

    # ---- sending ---------------------------------------------------------------------------------------------------
    async def _flush_when_quiet(self) -> None:
        while True:
            await asyncio.sleep(self.options.settle)
            if time.monotonic() - self._last_enqueue >= self.options.settle:
                break
        waiting, self._queue = self._queue, {}
        groups: dict[tuple[str, str | None], list[tuple[str, _Line]]] = {}
        for key, line in waiting.items():
            groups.setdefault((line.request.model, line.request.api_base), []).append((key, line))
        await asyncio.gather(*(self._submit_group(model, base, lines) for (model, base), lines in groups.items()))
        if self._queue:  # more came meanwhile
            self._flusher = asyncio.ensure_future(self._flush_when_quiet())

    def _fit_budget(self, lines: list[tuple[str, _Line]]) -> tuple[list[tuple[str, _Line]], list[str]]:
        """The lines whose most cost fits in the budget left (in order), and the keys refused."""
        client = self.client
        if client.budget_usd is not None:
            self.api  # noqa: B018  (litellm counts the prompt tokens of the bound)
        try:
            client._check_budget()
        except BudgetExhausted:
            return [], [k for k, _ in lines]
        left = client.budget_left()
        if left is None:
            return lines, []
        fits, refused, total = [], [], 0.0
        for key, line in lines:
            r = line.request
            max_out = r.params.get("max_tokens") or r.params.get("max_completion_tokens")
            prompt = client.count_tokens(r.model, messages=list(r.messages))
            bound = client.cost_of(r.model, prompt, int(max_out or 0))
            if bound is None and client.budget_unknown_price is not None:
                bound = client.budget_unknown_price.cost(prompt, int(max_out or 0))
            bound = (bound or 0.0) * self.options.price_factor
            if total + bound > left and fits:
                refused.append(key)
                continue
            total += bound
            fits.append((key, line))
        return fits, refused

    async def _submit_group(self, model: str, api_base: str | None, lines: list[tuple[str, _Line]]) -> None:
        fits, refused = self._fit_budget(lines)
        if refused:
            self._fail_all(refused, BudgetExhausted(
                f"budget of {self.client.budget_usd:g} USD: {len(refused)} requests do not fit in what is left at "
                "their most (prompt + max_tokens at the batch price); not sent"))
        for start in range(0, len(fits), self.options.max_lines):
            await self._submit(model, api_base, fits[start:start + self.options.max_lines])

    async def _submit(self, model: str, api_base: str | None, lines: list[tuple[str, _Line]]) -> None:
        from storage.llm_calls import LLMBatch

        keys = [k for k, _ in lines]
        try:
            provider, provider_model = provider_of(model, api_base)
        except Exception as exc:
            self._fail_all(keys, LLMCallFailed(f"--batch: {error_reason(exc)}"))
            return
        if provider not in BATCH_PROVIDERS:
            self._fail_all(keys, LLMCallFailed(f"--batch: litellm has no batch API for provider {provider} "
                                               f"({model}); run without --batch"))
            return
        batch_id = f"pb-{uuid.uuid4().hex[:16]}"
        body_lines = []
        for key, line in lines:
            body = self.client.request_body(line.request)
            body["model"] = provider_model
            body_lines.append({"custom_id": key, "method": "POST", "url": "/v1/chat/completions", "body": body})
            line.batch_id = batch_id
        record = LLMBatch(id=batch_id, scope=self.scope, run_id=self.run_id, provider=provider, api_base=api_base,
                          model=model, status="submitting", n_lines=len(lines), price_factor=self.options.price_factor)
        self.store.add_llm_batch(record, [(k, k) for k in keys])  # before anything is sent: a kill loses nothing
        self._submitted.add(batch_id)
        data = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in body_lines).encode("utf-8")
        try:
            file = await self._ctl(self.api.acreate_file, model, api_base, file=(f"{batch_id}.jsonl", data),
                                   purpose="batch", custom_llm_provider=provider)
            self.store.update_llm_batch(batch_id, input_file_id=file.id)
            created = await self._ctl(self.api.acreate_batch, model, api_base, completion_window="24h",
                                      endpoint="/v1/chat/completions", input_file_id=file.id,
                                      custom_llm_provider=provider, metadata={"prefval_batch": batch_id})
        except ServerUnreachable as exc:
            self._fail_all(keys, exc)
            return
        except Exception as exc:  # the provider refused the batch: these requests go online
            self.store.update_llm_batch(batch_id, status="failed", error=error_reason(exc))
            self.store.set_llm_batch_lines(batch_id, {k: "retried" for k in keys})
            self.store.update_llm_batch(batch_id, status="done", finished_at=_now())
            self._event(f"batch {batch_id} of {len(keys)} requests could not be submitted ({error_reason(exc)}); "
                        "they go online")
            for k in keys:
                self._settle(k, _Outcome(action="online", reason=error_reason(exc)))
            return
        self.store.update_llm_batch(batch_id, provider_batch_id=created.id, status=created.status or "validating")
        self.batch_stats.batches += 1
        self.batch_stats.lines += len(keys)
        self._event(f"batch {batch_id} submitted: {len(keys)} requests of {model} (provider batch {created.id})")
        self._attach(batch_id)

    async def _ctl(self, fn: Callable, model: str, api_base: str | None, **kwargs) -> Any:
        """One request to a batch endpoint, with the client's retries for overload-like faults; a refused
        connection or unknown host stops the client (ServerUnreachable), as online."""
        if api_base:
            kwargs["api_base"] = api_base
        kwargs.setdefault("timeout", self.options.timeout)
        attempts = 0
        while True:
            attempts += 1
            try:
                return await fn(**kwargs)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                kind = fault_kind(exc)
                if kind == "unreachable":
                    if attempts >= 2:
                        raise self.client._trip(ServerUnreachable(unreachable_message(api_base, model, exc))) \
                            from None
                    await asyncio.sleep(self.client.retry.unreachable_wait)
                    continue
                if kind not in ("timeout", "connection", "server", "rate_limit") or \
                        attempts >= self.client.retry.max_attempts:
                    raise
                await asyncio.sleep(min(self.client.retry.backoff_max, self.client.retry.backoff_base * 2 ** attempts)
                                    * 0.5)

    # ---- waiting and taking the results ------------------------------------------------------------------------------
    def _attach(self, batch_id: str) -> None:
        if batch_id not in self._pollers:
            self._pollers[batch_id] = asyncio.ensure_future(self._follow_batch(batch_id))

    async def _follow_batch(self, batch_id: str) -> None:
        try:
            await self._follow(batch_id)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # every line of the batch gets the error (ServerUnreachable ...)
            keys = [k for _, k, st in self.store.llm_batch_lines(batch_id) if st == "pending"]
            self._fail_all(keys, exc if isinstance(exc, Exception) else LLMCallFailed(str(exc)))

    async def _follow(self, batch_id: str) -> None:
        b = self.store.llm_batch(batch_id)
        if b.provider_batch_id is None and b.id not in self._submitted:
            b = await self._recover(b)
            if b is None:
                return
        if b.id not in self._submitted:
            self.batch_stats.reattached += 1
            self._event(f"batch {b.id} of an earlier run re-attached ({b.status}, {b.n_lines} requests)")
        status = b.status
        info = None
        while True:
            # litellm_metadata: without it litellm downloads a completed batch's output once more to price it
            info = await self._ctl(self.api.aretrieve_batch, b.model, b.api_base, batch_id=b.provider_batch_id,
                                   custom_llm_provider=b.provider,
                                   litellm_metadata={"batch_ignore_default_logging": True})
            counts = getattr(info, "request_counts", None)
            done, failed = (getattr(counts, "completed", 0) or 0), (getattr(counts, "failed", 0) or 0)
            if info.status != status:
                status = info.status
                self.store.update_llm_batch(b.id, status=status, n_completed=done, n_failed=failed,
                                            output_file_id=info.output_file_id, error_file_id=info.error_file_id)
                self._event(f"batch {b.id}: {status}, {done} of {b.n_lines} done, {failed} failed")
            if status in ENDED:
                break
            await asyncio.sleep(self.options.poll_every)
        await self._take_results(self.store.llm_batch(b.id), info)

    async def _recover(self, b) -> Any:
        """A batch recorded but without a provider id (a kill between upload and submission): find it at the
        provider by its input file, or submit the uploaded file, or hand its lines back to be sent again."""
        if b.input_file_id:
            listed = await self._ctl(self.api.alist_batches, b.model, b.api_base, custom_llm_provider=b.provider,
                                     limit=100)
            for x in getattr(listed, "data", None) or []:
                if getattr(x, "input_file_id", None) == b.input_file_id:
                    self.store.update_llm_batch(b.id, provider_batch_id=x.id, status=x.status)
                    return self.store.llm_batch(b.id)
            created = await self._ctl(self.api.acreate_batch, b.model, b.api_base, completion_window="24h",
                                      endpoint="/v1/chat/completions", input_file_id=b.input_file_id,
                                      custom_llm_provider=b.provider, metadata={"prefval_batch": b.id})
            self.store.update_llm_batch(b.id, provider_batch_id=created.id, status=created.status or "validating")
            return self.store.llm_batch(b.id)
        keys = [k for _, k, _ in self.store.llm_batch_lines(b.id)]  # nothing was uploaded: nothing to pay for
        self.store.set_llm_batch_lines(b.id, {k: "retried" for k in keys})
        self.store.update_llm_batch(b.id, status="done", finished_at=_now(), error="never submitted")
        for k in keys:
            self._pending.pop(k, None)
            line = self._lines.get(k)
            if line is not None and not line.future.done():
                self._queue[k] = line
        if self._queue and (self._flusher is None or self._flusher.done()):
            self._last_enqueue = time.monotonic()
            self._flusher = asyncio.ensure_future(self._flush_when_quiet())
        return None

    async def _read_file(self, b, file_id: str | None) -> list[dict]:
        if not file_id:
            return []
        content = await self._ctl(self.api.afile_content, b.model, b.api_base, file_id=file_id,
                                  custom_llm_provider=b.provider)
        raw = getattr(content, "content", content)
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
        out = []
        for text in raw.decode("utf-8", "replace").splitlines():
            if text.strip():
                try:
                    out.append(json.loads(text))
                except ValueError:
                    continue
        return out

    async def _take_results(self, b, info: Any) -> None:
        """Every line of an ended batch: its reply through the client's checks and cache, or online."""
        results: dict[str, dict] = {}
        for rec in await self._read_file(b, getattr(info, "output_file_id", None) or b.output_file_id):
            results[str(rec.get("custom_id"))] = rec
        for rec in await self._read_file(b, getattr(info, "error_file_id", None) or b.error_file_id):
            results.setdefault(str(rec.get("custom_id")), rec)
        await asyncio.sleep(self.options.settle)  # callers of a re-attached batch come as their rows start
        statuses: dict[str, str] = {}
        lines = self.store.llm_batch_lines(b.id)
        for custom_id, key, st in lines:
            if st != "pending":
                continue
            rec = results.get(custom_id)
            self._raw[key] = {"rec": rec, "batch": b, "status": info.status}
            self._pending.pop(key, None)
            if key in self._lines:
                statuses[custom_id] = await self._resolve_async(key)
        if statuses:
            self.store.set_llm_batch_lines(b.id, statuses)
        left = [k for cid, k, st in self.store.llm_batch_lines(b.id) if st == "pending"]
        if not left:
            self.store.update_llm_batch(b.id, status="done", finished_at=_now())
        self._event(f"batch {b.id} ended {info.status}: {sum(1 for s in statuses.values() if s == 'done')} replies "
                    f"taken, {sum(1 for s in statuses.values() if s != 'done')} to retry online"
                    + (f", {len(left)} waiting for their rows" if left else ""))

    def _resolve(self, key: str) -> None:
        asyncio.ensure_future(self._resolve_later(key))

    async def _resolve_later(self, key: str) -> None:
        raw = self._raw.get(key)
        status = await self._resolve_async(key)
        if raw is not None:
            b = raw["batch"]
            self.store.set_llm_batch_lines(b.id, {key: status})
            if not [k for _, k, st in self.store.llm_batch_lines(b.id) if st == "pending"]:
                self.store.update_llm_batch(b.id, status="done", finished_at=_now())

    async def _resolve_async(self, key: str) -> str:
        """Settle the caller of ``key`` from its result line; the line's status (done, failed, expired, invalid)."""
        raw = self._raw.pop(key, None)
        line = self._lines.get(key)
        if raw is None or line is None:
            return "pending"
        rec, b = raw["rec"], raw["batch"]
        if rec is None:
            self._settle(key, _Outcome(action="online", reason=f"not answered in the batch ({raw['status']})"))
            return "expired" if raw["status"] == "expired" else "failed"
        response = rec.get("response") or {}
        if rec.get("error") or response.get("status_code") != 200:
            err = rec.get("error") or (response.get("body") or {}).get("error") or {}
            reason = f"batch line {err.get('code') or response.get('status_code')}: {err.get('message', '')}".strip()
            self._settle(key, _Outcome(action="online", reason=reason))
            return "expired" if (err.get("code") == "batch_expired") else "failed"
        reply, text, reason = self.client.take_reply(line.request, response.get("body") or {}, line.output_model,
                                                     line.check, b.price_factor)
        if reply is None:
            self._settle(key, _Outcome(action="repair", text=text, reason=reason))
            return "invalid"
        await self.client.write_reply(line.request, reply)
        self._settle(key, _Outcome(reply=reply))
        return "done"


def _now() -> str:
    from storage.db import now_iso

    return now_iso()
