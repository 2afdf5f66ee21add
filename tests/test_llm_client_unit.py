"""LLMClient with an injected completion function: no litellm, no network, no server."""
from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel, Field

from generator.client import (
    LLMClient, ModelLimits, Price, RetryPolicy, dry_run_estimate, json_schema_for, response_format_for,
    retry_after_seconds, schema_is_strict,
)
from generator.llm_types import BudgetExhausted, LLMCallFailed, LLMRequest
from storage.errors import PrefvalError
from storage.llm_calls import LLMCall
from storage.store import Store


class Verdict(BaseModel):
    label: str = Field(min_length=1)
    score: int = Field(ge=1, le=5)


class StatusError(Exception):
    """An HTTP error shaped like litellm's (status_code, response headers)."""

    def __init__(self, status: int, headers: dict | None = None, message: str = ""):
        super().__init__(message or f"status {status}")
        self.status_code = status
        self.litellm_response_headers = headers or {}


def response(content: str, finish: str = "stop", usage: tuple[int, int] | None = (10, 5)) -> dict:
    out = {"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": finish}]}
    if usage is not None:
        out["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1]}
    return out


GOOD = json.dumps({"label": "fine", "score": 4})


class FakeCompletion:
    """A completion function that plays a script (responses or exceptions, the last one repeats) and records calls."""

    def __init__(self, *script, delay: float = 0.0):
        self.script = list(script) or [response(GOOD)]
        self.calls: list[dict] = []
        self.delay = delay
        self.in_flight = 0
        self.max_in_flight = 0

    async def __call__(self, **kwargs):
        self.calls.append(kwargs)
        step = self.script[min(len(self.calls) - 1, len(self.script) - 1)]
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            if step == "hang":
                await asyncio.sleep(3600)
            if isinstance(step, BaseException):
                raise step
            return step
        finally:
            self.in_flight -= 1


class Sleeps(list):
    """A sleep that records its argument and does not wait."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def request(i: int = 0, **kw) -> LLMRequest:
    base = dict(model="test/model", messages=({"role": "user", "content": f"judge item {i}"},), template="judge@1",
                schema=json_schema_for(Verdict), schema_name="verdict")
    base.update(kw)
    return LLMRequest(**base)


def client(fn, store=None, sleeps=None, **kw) -> LLMClient:
    retry = kw.pop("retry", RetryPolicy(max_attempts=4, max_repairs=2, timeout=5, deadline=30, retry_after_cap=5))
    return LLMClient(store, completion_fn=fn, retry=retry, sleep=sleeps if sleeps is not None else Sleeps(),
                     seed=1, **kw)


async def test_valid_reply_is_parsed_cached_and_sent_with_the_schema(store):
    fn = FakeCompletion(response(GOOD, usage=(120, 30)))
    c = client(fn, store, prices={"test/model": Price(2.0, 8.0)})
    reply = await c.complete(request(), Verdict)
    assert reply.value == Verdict(label="fine", score=4)
    assert (reply.prompt_tokens, reply.completion_tokens, reply.attempts, reply.cached) == (120, 30, 1, False)
    assert reply.cost_usd == pytest.approx((120 * 2.0 + 30 * 8.0) / 1e6)
    sent = fn.calls[0]
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["name"] == "verdict"
    assert sent["response_format"]["json_schema"]["schema"]["properties"]["score"]["maximum"] == 5
    assert sent["response_format"]["json_schema"]["strict"] is True
    assert (sent["max_retries"], sent["num_retries"], sent["timeout"]) == (0, 0, 5)
    row = store.get_llm_call(request().cache_key())
    assert row.parsed == {"label": "fine", "score": 4} and row.usage_known and row.attempts == 1
    assert row.request["messages"][0]["content"] == "judge item 0" and row.template == "judge@1"


async def test_cache_hit_sends_nothing_and_costs_nothing(store):
    fn = FakeCompletion()
    await client(fn, store).complete(request(), Verdict)
    again = await client(fn, store).complete(request(), Verdict)
    assert len(fn.calls) == 1
    assert again.cached and again.attempts == 0 and again.cost_usd == 0.0 and again.value.score == 4


async def test_another_sample_index_is_another_request(store):
    fn = FakeCompletion()
    c = client(fn, store)
    await c.complete(request(), Verdict)
    await c.complete(request(sample_index=1), Verdict)
    assert len(fn.calls) == 2


async def test_identical_concurrent_calls_share_one_request(store):
    fn = FakeCompletion(delay=0.01)
    c = client(fn, store)
    replies = await asyncio.gather(*[c.complete(request(), Verdict) for _ in range(32)])
    assert len(fn.calls) == 1
    assert sum(not r.cached for r in replies) == 1 and all(r.value.score == 4 for r in replies)
    assert (c.stats.done, c.stats.cached) == (1, 31)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_client_errors_are_not_retried(status):
    fn = FakeCompletion(StatusError(status, message="bad request body"))
    with pytest.raises(LLMCallFailed) as err:
        await client(fn).complete(request(), Verdict)
    assert len(fn.calls) == 1
    assert err.value.reason.startswith(f"HTTP {status}") and err.value.attempts == 1


@pytest.mark.parametrize("exc", [StatusError(500), StatusError(502), StatusError(503), StatusError(408),
                                 StatusError(429), asyncio.TimeoutError(), ConnectionError("reset")])
async def test_transient_failures_are_retried_then_succeed(exc, store):
    sleeps = Sleeps()
    fn = FakeCompletion(exc, response(GOOD))
    reply = await client(fn, store, sleeps).complete(request(), Verdict)
    assert len(fn.calls) == 2 and reply.attempts == 2 and len(sleeps) == 1
    assert store.get_llm_call(request().cache_key()).attempts == 2


async def test_retry_after_is_honoured_and_capped():
    sleeps = Sleeps()
    fn = FakeCompletion(StatusError(429, {"retry-after": "3"}), StatusError(429, {"retry-after": "90"}),
                        StatusError(429, {"retry-after-ms": "250"}), response(GOOD))
    await client(fn, sleeps=sleeps).complete(request(), Verdict)
    assert sleeps == [3.0, 5.0, 0.25]  # the cap is 5 s


async def test_backoff_grows_with_full_jitter():
    sleeps = Sleeps()
    fn = FakeCompletion(StatusError(500), StatusError(500), StatusError(500), response(GOOD))
    policy = RetryPolicy(max_attempts=4, backoff_base=1.0, backoff_max=3.0, timeout=5, deadline=60)
    await client(fn, sleeps=sleeps, retry=policy).complete(request(), Verdict)
    assert len(sleeps) == 3
    for n, wait in enumerate(sleeps):
        assert 0 <= wait <= min(3.0, 1.0 * 2 ** n)


async def test_retries_stop_after_max_attempts_with_the_reason():
    fn = FakeCompletion(StatusError(503, message="overloaded"))
    with pytest.raises(LLMCallFailed) as err:
        await client(fn).complete(request(), Verdict)
    assert len(fn.calls) == 4 and err.value.attempts == 4
    assert "HTTP 503" in err.value.reason and "overloaded" in err.value.reason


async def test_a_retry_after_beyond_the_deadline_fails_at_once():
    sleeps = Sleeps()
    fn = FakeCompletion(StatusError(429, {"retry-after": "50"}), response(GOOD))
    policy = RetryPolicy(timeout=5, deadline=10, retry_after_cap=60)
    with pytest.raises(LLMCallFailed) as err:
        await client(fn, sleeps=sleeps, retry=policy).complete(request(), Verdict)
    assert sleeps == [] and len(fn.calls) == 1 and "deadline" in err.value.reason


async def test_a_hanging_request_times_out_and_is_retried():
    fn = FakeCompletion("hang", response(GOOD))
    policy = RetryPolicy(timeout=0.05, deadline=10, backoff_base=0.001)
    reply = await client(fn, retry=policy).complete(request(), Verdict)
    assert len(fn.calls) == 2 and reply.attempts == 2


async def test_the_call_deadline_bounds_all_attempts():
    fn = FakeCompletion("hang")
    policy = RetryPolicy(max_attempts=100, timeout=0.05, deadline=0.3, backoff_base=0.001)
    with pytest.raises(LLMCallFailed) as err:
        await LLMClient(completion_fn=fn, retry=policy).complete(request(), Verdict)
    assert "deadline of 0.3 s" in err.value.reason
    assert 2 <= len(fn.calls) < 100


async def test_invalid_json_is_repaired_with_the_error_sent_back(store):
    fn = FakeCompletion(response("{not json"), response(GOOD))
    reply = await client(fn, store).complete(request(), Verdict)
    assert reply.value.score == 4 and reply.attempts == 2 and len(fn.calls) == 2
    repair = fn.calls[1]["messages"]
    assert repair[0] == {"role": "user", "content": "judge item 0"}
    assert repair[1] == {"role": "assistant", "content": "{not json"}
    assert "not JSON" in repair[2]["content"]
    assert store.get_llm_call(request().cache_key()).reply_text == GOOD


@pytest.mark.parametrize("bad,why", [
    (response("{not json"), "not JSON"),
    (response(json.dumps({"label": "x", "score": 9})), "score"),
    (response(GOOD[:12], finish="length"), "truncated"),
    (response(GOOD, finish="length"), "truncated"),  # even when it parses: the model was cut off
    (response("Sure! Here is my verdict: fine."), "not JSON"),
])
async def test_invalid_replies_fail_after_the_repairs_and_are_never_cached(bad, why, store):
    fn = FakeCompletion(bad)
    with pytest.raises(LLMCallFailed) as err:
        await client(fn, store).complete(request(), Verdict)
    assert len(fn.calls) == 3 and err.value.attempts == 3  # 1 + max_repairs 2
    assert err.value.reason.startswith("invalid reply after 2 repair attempts") and why in err.value.reason
    assert store.get_llm_call(request().cache_key()) is None


async def test_repairs_and_transport_retries_count_together():
    fn = FakeCompletion(StatusError(500), response("{bad"), StatusError(429), response(GOOD))
    reply = await client(fn).complete(request(), Verdict)
    assert reply.attempts == 4 and len(fn.calls) == 4


async def test_schema_without_output_model_is_checked_with_jsonschema():
    fn = FakeCompletion(response(json.dumps({"label": "", "score": 3})), response(GOOD))
    reply = await client(fn).complete(request())
    assert reply.value == {"label": "fine", "score": 4} and len(fn.calls) == 2


async def test_free_text_without_schema():
    fn = FakeCompletion(response("A plain answer."))
    reply = await client(fn).complete(request(schema=None))
    assert reply.value is None and reply.text == "A plain answer."
    assert "response_format" not in fn.calls[0]


@pytest.mark.parametrize("usage", [None, (0, 0)])
async def test_missing_usage_is_unknown_not_zero_and_priced_from_counted_tokens(usage, store):
    fn = FakeCompletion(response(GOOD, usage=usage))
    c = client(fn, store, prices={"test/model": Price(1.0, 1.0)})
    reply = await c.complete(request(), Verdict)
    assert reply.prompt_tokens is None and reply.completion_tokens is None
    # counted offline (characters / 4 without litellm): "judge item 0" 12 -> 3, the reply's 30 characters -> 7
    assert reply.cost_estimated and reply.cost_usd == pytest.approx((3 + 7) * 1.0 / 1e6)
    row = store.get_llm_call(request().cache_key())
    assert row.usage_known is False and row.prompt_tokens is None and row.cost_usd == pytest.approx(10e-6)
    assert c.stats.usage_unknown == 1 and c.stats.unpriced == 0
    assert c.stats.cost_estimated_usd == pytest.approx(10e-6) == c.stats.cost_usd
    totals = c.stats.as_dict()
    assert totals["prompt_tokens"] is None and totals["completion_tokens"] is None


async def test_unknown_price_is_none_and_never_raises():
    fn = FakeCompletion(response(GOOD, usage=(10, 10)))
    reply = await client(fn).complete(request(), Verdict)
    assert reply.cost_usd is None


async def test_budget_stops_new_requests():
    # each call: 1000 prompt + 500 completion tokens at 2 / 8 USD per 1M = 0.002 + 0.004 = 0.006 USD
    fn = FakeCompletion(response(GOOD, usage=(1000, 500)))
    c = client(fn, prices={"test/model": Price(2.0, 8.0)}, budget_usd=0.01)
    first = await c.complete(request(1), Verdict)
    assert first.cost_usd == pytest.approx(0.006)
    await c.complete(request(2), Verdict)  # 0.006 < 0.01: sent
    assert c.stats.cost_usd == pytest.approx(0.012)
    with pytest.raises(BudgetExhausted):
        await c.complete(request(3), Verdict)
    assert len(fn.calls) == 2 and c.stats.budget_refused == 1


async def test_budget_lets_calls_in_flight_finish_and_caches_them(store):
    fn = FakeCompletion(response(GOOD, usage=(1000, 500)), delay=0.02)
    c = client(fn, store, prices={"test/model": Price(2.0, 8.0)}, budget_usd=0.001,
               default_limits=ModelLimits(max_in_flight=4))
    results = await asyncio.gather(*[c.complete(request(i), Verdict) for i in range(10)], return_exceptions=True)
    sent = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, BudgetExhausted)]
    assert len(sent) == 4 and len(refused) == 6  # the first 4 were in flight before any cost was known
    assert len(store.llm_call_keys()) == 4


async def test_in_flight_limit_is_never_exceeded_and_queues():
    fn = FakeCompletion(delay=0.01)
    c = client(fn, limits={"test/model": ModelLimits(max_in_flight=3)})
    replies = await asyncio.gather(*[c.complete(request(i), Verdict) for i in range(20)])
    assert len(replies) == 20 and fn.max_in_flight == 3


async def test_limits_are_per_model():
    fn = FakeCompletion(delay=0.01)
    c = client(fn, limits={"test/a": ModelLimits(max_in_flight=2), "test/b": ModelLimits(max_in_flight=2)})
    await asyncio.gather(*[c.complete(request(i, model=m), Verdict) for i in range(6) for m in ("test/a", "test/b")])
    assert fn.max_in_flight == 4


def timed_completion():
    """A completion function that answers at once and records when each request started (loop time)."""
    starts: list[float] = []

    async def fn(**kwargs):
        starts.append(asyncio.get_running_loop().time())
        return response(GOOD)

    return fn, starts


async def test_requests_per_minute_queue_rather_than_reject():
    fn, starts = timed_completion()
    # a bucket of 4 that refills 4 per 0.4 s (10 per second)
    c = client(fn, limits={"test/model": ModelLimits(max_in_flight=50, rpm=4, period=0.4)})
    replies = await asyncio.gather(*[c.complete(request(i), Verdict) for i in range(10)])
    assert len(replies) == 10 and c.stats.failed == 0
    t0 = starts[0]
    assert sum(s - t0 < 0.05 for s in starts) <= 5  # the burst of 4 (+1 refilled), the rest queued
    assert starts[-1] - t0 >= 0.4  # 6 more at 10 per second take at least 0.5 s, minus rounding


async def test_error_messages_never_hold_a_key(monkeypatch):
    monkeypatch.setenv("SOMEPROVIDER_API_KEY", "zz-very-secret-key-123456")
    fn = FakeCompletion(StatusError(401, message="invalid key zz-very-secret-key-123456 for sk-abcdefghijklmnop"))
    with pytest.raises(LLMCallFailed) as err:
        await client(fn).complete(request(), Verdict)
    assert "zz-very-secret" not in err.value.reason and "sk-abcdefghijklmnop" not in err.value.reason
    assert "***" in err.value.reason


async def test_a_key_in_the_params_is_refused():
    with pytest.raises(ValueError):
        await client(FakeCompletion()).complete(request(params={"api_key": "sk-x"}), Verdict)
    with pytest.raises(ValueError):
        await client(FakeCompletion()).complete(request(params={"timeout": 3}), Verdict)


def test_storage_refuses_a_request_with_a_credential(store):
    call = LLMCall(key="k", model="m", template="t", request={"params": {"Authorization": "Bearer x"}},
                   reply_text="x")
    with pytest.raises(PrefvalError):
        store.put_llm_call(call)


async def test_the_unit_tests_never_import_litellm():
    c = client(FakeCompletion())
    await c.complete(request(), Verdict)
    await c.aclose()
    assert c._used_litellm is False


def test_runs_record_provenance_without_secrets(store, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-abcdefghijklmnop")
    run = store.start_run("generate", {"model": "openai/gpt-4o-mini", "api_key": "sk-live-abcdefghijklmnop",
                                       "max_tokens": 300, "note": "uses sk-live-abcdefghijklmnop",
                                       "nested": {"secret": "s3cr3t-value"}}, name="sample")
    assert store.get_run(run).status == "running"
    store.finish_run(run, "done", {"calls": 3, "cost_usd": 0.01})
    got = store.get_run(run)
    assert got.config == {"model": "openai/gpt-4o-mini", "max_tokens": 300, "note": "uses ***", "nested": {}}
    assert got.status == "done" and got.totals == {"calls": 3, "cost_usd": 0.01} and got.ended_at
    assert [r.id for r in store.runs("generate")] == [run] and store.runs("evaluate") == []
    with pytest.raises(PrefvalError):
        store.finish_run("nope", "done")
    with pytest.raises(PrefvalError):
        store.start_run("train", {})


async def test_cached_calls_carry_the_run_id(store):
    run = store.start_run("evaluate", {})
    await client(FakeCompletion(), store, run_id=run).complete(request(), Verdict)
    assert [c.run_id for c in store.llm_calls(run)] == [run]


def test_strict_schema_helper():
    class Inner(BaseModel):
        x: int = 1

    class Outer(BaseModel):
        a: str
        inner: Inner
        items: list[Inner] = []

    schema = json_schema_for(Outer)
    assert schema_is_strict(schema)
    assert schema["required"] == ["a", "inner", "items"] and schema["additionalProperties"] is False
    assert schema["$defs"]["Inner"]["additionalProperties"] is False and "default" not in str(schema)
    assert not schema_is_strict(Outer.model_json_schema())
    fmt = response_format_for(request(schema=Outer.model_json_schema()))
    assert fmt["json_schema"]["strict"] is False


def test_retry_after_reads_seconds_ms_and_dates():
    assert retry_after_seconds(StatusError(429, {"retry-after": "7"})) == 7.0
    assert retry_after_seconds(StatusError(429, {"retry-after-ms": "1500"})) == 1.5
    assert retry_after_seconds(StatusError(429, {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0
    assert retry_after_seconds(StatusError(429, {})) is None
    assert retry_after_seconds(ValueError()) is None


def test_dry_run_estimate_counts_only_uncached_calls():
    reqs = [request(i, params={"max_tokens": 100}) for i in range(3)]
    est = dry_run_estimate(reqs, prices={"test/model": Price(2.0, 8.0)}, cached_keys={reqs[0].cache_key()},
                           token_counter=lambda r: 50, use_litellm_prices=False)
    # 2 calls x (50 x 2 + 100 x 8) / 1e6
    assert (est.calls, est.cached, est.prompt_tokens, est.max_completion_tokens) == (2, 1, 100, 200)
    assert est.cost_upper_usd == pytest.approx(2 * (50 * 2.0 + 100 * 8.0) / 1e6)
    no_max = dry_run_estimate([request(9)], prices={"test/model": Price(1, 1)}, token_counter=lambda r: 5,
                              use_litellm_prices=False)
    assert no_max.cost_upper_usd is None and no_max.max_completion_tokens is None


def test_dry_run_estimate_without_a_price_has_no_bound():
    est = dry_run_estimate([request(1, model="nobody/knows-me", params={"max_tokens": 10})],
                           token_counter=lambda r: 5, use_litellm_prices=False)
    assert est.cost_upper_usd is None and est.unpriced_models == {"nobody/knows-me"}


async def test_a_cached_reply_that_no_longer_validates_is_asked_again(store):
    class Strict(BaseModel):
        label: str
        score: int = Field(ge=5)

    fn = FakeCompletion(response(GOOD), response(json.dumps({"label": "x", "score": 5})))
    await client(fn, store).complete(request(), Verdict)
    reply = await client(fn, store).complete(request(), Strict)
    assert len(fn.calls) == 2 and reply.value.score == 5


def _call(key: str, **kw) -> LLMCall:
    return LLMCall(key=key, model="m", template="t@1", request={"messages": [], "params": kw}, reply_text="{}",
                   parsed={})


def test_writer_thread_commits_batches_and_isolates_a_bad_call(db_file):
    from storage.llm_cache_writer import LLMCallWriter

    Store.open(db_file, mode="create").close()
    writer = LLMCallWriter(db_file)
    futures = [writer.submit(_call(f"k{i}")) for i in range(50)]
    bad = writer.submit(_call("bad", api_key="sk-nope"))
    futures += [writer.submit(_call(f"z{i}")) for i in range(5)]
    for f in futures:
        assert f.result(10) is None
    with pytest.raises(PrefvalError):
        bad.result(10)
    writer.close()
    with Store.open(db_file, mode="create") as store:
        assert store.llm_call_keys() == {f"k{i}" for i in range(50)} | {f"z{i}" for i in range(5)}
    with pytest.raises(PrefvalError):
        LLMCallWriter(":memory:")


async def test_a_reply_is_committed_before_complete_returns(db_file):
    store = Store.open(db_file, mode="create")
    c = client(FakeCompletion(), store)
    reply = await c.complete(request(), Verdict)
    with Store.open(db_file, mode="create") as other:  # another connection sees it at once
        assert other.get_llm_call(reply.cache_key).reply_text == GOOD
    await c.aclose()
    store.close()


async def test_tokens_per_minute_queue_rather_than_reject():
    fn, starts = timed_completion()
    # each request counts len("judge item N") // 4 + max_tokens 97 = 100 tokens; a bucket of 300 per 0.3 s
    c = client(fn, limits={"test/model": ModelLimits(max_in_flight=50, tpm=300, period=0.3)})
    reqs = [request(i, params={"max_tokens": 97}) for i in range(7)]
    replies = await asyncio.gather(*[c.complete(r, Verdict) for r in reqs])
    assert len(replies) == 7 and c.stats.failed == 0
    assert sum(s - starts[0] < 0.05 for s in starts) <= 4  # 3 at once (+1 refilled), the others queued
    assert starts[-1] - starts[0] >= 0.3  # 4 more at 1000 tokens per second: at least 0.4 s, minus rounding
