"""The client under faults (issue 26, parts 3 and 4), with an injected completion function (no litellm, no network):
checks that reject a reply are repaired and never cached; a call sends at most --attempts requests whatever fails;
a hung server costs attempts x timeout per call and the breaker stops the whole client once recent requests time
out alike; a refused connection fails fast with one line; a budget never runs blind; replies are scrubbed."""
from __future__ import annotations

import asyncio
import socket
import time

import pytest

from generator.client import LLMClient, ModelLimits, Price, RetryPolicy, fault_kind
from generator.llm_types import (BudgetExhausted, CircuitOpen, LLMCallFailed, ReplyRejected, ServerUnreachable)
from tests.test_llm_client_unit import GOOD, FakeCompletion, Sleeps, StatusError, Verdict, request, response


def client(fn, store=None, sleeps=None, **kw) -> LLMClient:
    retry = kw.pop("retry", RetryPolicy(max_attempts=4, max_repairs=2, timeout=5, deadline=30, retry_after_cap=5))
    return LLMClient(store, completion_fn=fn, retry=retry, sleep=sleeps if sleeps is not None else Sleeps(),
                     seed=1, **kw)


def refused(api_base: str = "http://127.0.0.1:9/v1") -> Exception:
    """What litellm raises for a refused connection: a 500 'Connection error' whose cause is ConnectionRefusedError."""
    err = StatusError(500, message="litellm.InternalServerError: OpenAIException - Connection error.")
    try:
        raise err from ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 9)")
    except StatusError as e:
        return e


def unknown_host() -> Exception:
    err = StatusError(500, message="litellm.InternalServerError: OpenAIException - Connection error.")
    try:
        raise err from socket.gaierror(-2, "Name or service not known")
    except StatusError as e:
        return e


# ---- checks that no schema can state: repaired, never cached --------------------------------------------------------
def no_fours(value):
    if value.score == 4:
        raise ReplyRejected("a score of 4 is not allowed here")


async def test_a_reply_that_fails_the_callers_check_is_repaired_and_only_the_good_one_cached(store):
    fn = FakeCompletion(response(GOOD), response('{"label": "ok", "score": 5}'))
    reply = await client(fn, store).complete(request(), Verdict, no_fours)
    assert reply.value.score == 5 and len(fn.calls) == 2
    assert "a score of 4 is not allowed here" in fn.calls[1]["messages"][-1]["content"]
    assert store.get_llm_call(request().cache_key()).parsed == {"label": "ok", "score": 5}


async def test_a_reply_that_always_fails_the_check_fails_the_call_caches_nothing_and_a_rerun_asks_again(store):
    fn = FakeCompletion(response(GOOD))
    with pytest.raises(LLMCallFailed, match="after 2 repair attempts: a score of 4 is not allowed here"):
        await client(fn, store).complete(request(), Verdict, no_fours)
    assert len(fn.calls) == 3 and store.get_llm_call(request().cache_key()) is None
    with pytest.raises(LLMCallFailed):  # the same command again: asked again, not replayed from the cache
        await client(fn, store).complete(request(), Verdict, no_fours)
    assert len(fn.calls) == 6


async def test_a_cached_reply_that_fails_a_check_is_asked_again(store):
    fn = FakeCompletion(response(GOOD), response('{"label": "ok", "score": 5}'))
    await client(fn, store).complete(request(), Verdict)          # cached without the check
    reply = await client(fn, store).complete(request(), Verdict, no_fours)
    assert reply.value.score == 5 and len(fn.calls) == 2


# ---- the attempts of one call are bounded, whatever fails ----------------------------------------------------------
async def test_a_call_sends_at_most_max_attempts_requests_transport_failures_and_repairs_together():
    fn = FakeCompletion(StatusError(500), response("{bad"), StatusError(503), response("{bad"), StatusError(500),
                        response(GOOD))
    with pytest.raises(LLMCallFailed) as err:
        await client(fn).complete(request(), Verdict)  # max_attempts 4
    assert len(fn.calls) == 4 and err.value.attempts == 4 and "--attempts" in err.value.reason


async def test_a_hung_server_costs_attempts_times_timeout_per_call():
    fn = FakeCompletion("hang")
    policy = RetryPolicy(max_attempts=3, timeout=0.05, deadline=30, backoff_base=0.001, breaker_window=0)
    t0 = time.monotonic()
    with pytest.raises(LLMCallFailed) as err:
        await LLMClient(completion_fn=fn, retry=policy).complete(request(), Verdict)
    assert len(fn.calls) == 3 and time.monotonic() - t0 < 1.0
    assert err.value.reason.startswith("timeout: no reply within 0.05 s") and "--attempts" in err.value.reason


# ---- the circuit breaker --------------------------------------------------------------------------------------------
async def test_the_breaker_stops_every_call_once_recent_requests_time_out_alike():
    fn = FakeCompletion("hang")
    policy = RetryPolicy(max_attempts=6, timeout=0.1, deadline=60, backoff_base=0.001, breaker_window=8)
    c = LLMClient(completion_fn=fn, retry=policy, default_limits=ModelLimits(max_in_flight=8),
                  sleep=Sleeps())
    t0 = time.monotonic()
    results = await asyncio.gather(*[c.complete(request(i, api_base="http://127.0.0.1:8011/v1"), Verdict)
                                     for i in range(200)], return_exceptions=True)
    elapsed = time.monotonic() - t0
    assert all(isinstance(r, CircuitOpen) for r in results)
    assert len(fn.calls) <= 16 and elapsed < 2.0  # the first 8 timed out together; nothing else was sent
    msg = str(results[0])
    assert msg.startswith("stopped early: the last 8 requests to http://127.0.0.1:8011/v1 all failed, 8 of them "
                          "timed out") and "--timeout 0.1 s" in msg and "run the same command again" in msg
    sent = len(fn.calls)
    with pytest.raises(CircuitOpen):
        await c.complete(request(999), Verdict)
    assert len(fn.calls) == sent and c.stats.stopped == 201


async def test_the_breaker_stays_closed_while_some_requests_succeed_and_for_429s():
    fn = FakeCompletion(*[StatusError(500) if i % 3 else response(GOOD) for i in range(60)])
    policy = RetryPolicy(max_attempts=6, timeout=1, deadline=60, backoff_base=0.0, breaker_window=4)
    c = LLMClient(completion_fn=fn, retry=policy, sleep=Sleeps(), default_limits=ModelLimits(max_in_flight=1))
    replies = await asyncio.gather(*[c.complete(request(i), Verdict) for i in range(15)])
    assert len(replies) == 15
    limited = FakeCompletion(*[StatusError(429, {"retry-after": "0"})] * 20, response(GOOD))
    c = LLMClient(completion_fn=limited, retry=RetryPolicy(max_attempts=30, breaker_window=4), sleep=Sleeps())
    assert (await c.complete(request(), Verdict)).attempts == 21


# ---- nothing listening: fail fast, one line ------------------------------------------------------------------------
async def test_a_refused_connection_fails_fast_after_one_quick_retry_and_stops_the_client():
    sleeps = Sleeps()
    fn = FakeCompletion(refused())
    c = client(fn, sleeps=sleeps, retry=RetryPolicy(max_attempts=6, timeout=5, deadline=900))
    results = await asyncio.gather(*[c.complete(request(i, api_base="http://127.0.0.1:9/v1/"), Verdict)
                                     for i in range(10)], return_exceptions=True)
    assert all(isinstance(r, ServerUnreachable) for r in results)
    assert str(results[0]) == ("cannot reach http://127.0.0.1:9/v1: connection refused (is the server running? is "
                               "the port right? check --api-base or api_base: in the config)")
    assert sleeps[:1] == [0.5] and len(fn.calls) <= 2 * 8  # one quick retry each, no long schedule
    assert c.stats.retries <= 10


async def test_an_unknown_host_is_named():
    fn = FakeCompletion(unknown_host())
    with pytest.raises(ServerUnreachable) as err:
        await client(fn).complete(request(api_base="http://llm-box.invalid:8000/v1"), Verdict)
    assert str(err.value).startswith("cannot reach http://llm-box.invalid:8000/v1: its host name is unknown")
    assert len(fn.calls) == 2


def test_fault_kinds():
    assert fault_kind(refused()) == "unreachable" and fault_kind(unknown_host()) == "unreachable"
    assert fault_kind(StatusError(500)) == "server" and fault_kind(StatusError(429)) == "rate_limit"
    assert fault_kind(asyncio.TimeoutError()) == "timeout" and fault_kind(ConnectionError("reset")) == "connection"
    assert fault_kind(StatusError(400)) == "client"
    cut = StatusError(500, message="litellm.InternalServerError: Connection error.")
    assert fault_kind(cut) == "connection"


# ---- the budget is the user's: it never runs blind -----------------------------------------------------------------
async def test_a_budget_refuses_to_go_on_when_a_reply_cannot_be_priced():
    fn = FakeCompletion(response(GOOD, usage=(1000, 500)))
    c = client(fn, budget_usd=1.0)  # test/model has no price
    await c.complete(request(1), Verdict)
    with pytest.raises(BudgetExhausted, match="no price is known for test/model"):
        await c.complete(request(2), Verdict)
    assert len(fn.calls) == 1


async def test_a_budget_counts_unpriced_replies_at_the_price_given_for_them():
    fn = FakeCompletion(response(GOOD, usage=(1000, 500)))
    # 1000 x 2 + 500 x 8 per 1M = 0.006 USD a call, counted against the budget; the cost stays unknown
    c = client(fn, budget_usd=0.01, budget_unknown_price=Price(2.0, 8.0))
    r1 = await c.complete(request(1), Verdict)
    await c.complete(request(2), Verdict)
    with pytest.raises(BudgetExhausted):
        await c.complete(request(3), Verdict)
    assert r1.cost_usd is None and c.stats.cost_usd == 0.0 and c.charged_usd == pytest.approx(0.012)
    assert len(fn.calls) == 2 and c.stats.unpriced == 2


async def test_a_server_without_usage_is_priced_from_counted_tokens_against_the_budget():
    fn = FakeCompletion(response(GOOD, usage=None))
    counts = []

    def counter(model, messages=None, text=None):
        counts.append((model, messages is not None))
        return 1000 if messages is not None else 500

    c = client(fn, budget_usd=0.01, prices={"test/model": Price(2.0, 8.0)}, token_counter=counter)
    r = await c.complete(request(1), Verdict)
    assert r.cost_estimated and r.cost_usd == pytest.approx(0.006) and counts == [("test/model", True),
                                                                                   ("test/model", False)]
    await c.complete(request(2), Verdict)
    with pytest.raises(BudgetExhausted):
        await c.complete(request(3), Verdict)
    assert c.stats.cost_estimated_usd == pytest.approx(0.012) and c.stats.usage_unknown == 2


# ---- replies are scrubbed ------------------------------------------------------------------------------------------
async def test_a_reply_that_echoes_a_key_is_scrubbed_before_anything_keeps_it(store, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "zz-echoed-secret-987654321")
    fn = FakeCompletion(response('{"label": "you sent zz-echoed-secret-987654321 and Bearer sk-abcdef1234567", '
                                 '"score": 3}'))
    reply = await client(fn, store).complete(request(), Verdict)
    assert "zz-echoed" not in reply.text and "sk-abcdef" not in reply.text and reply.value.label.count("***") == 2
    row = store.get_llm_call(request().cache_key())
    assert "zz-echoed" not in row.reply_text + str(row.parsed)


@pytest.mark.slow
async def test_a_call_waiting_for_its_turn_is_not_timed_out_by_its_deadline():
    """The deadline runs from a call's first request: 20 calls of 0.1 s behind one slot take 2 s, far beyond the
    deadline of 0.5 s, and all succeed (25,000 calls behind 65 slots failed 10,996 at the 300 s deadline)."""
    fn = FakeCompletion(delay=0.1)
    policy = RetryPolicy(timeout=5, deadline=0.5)
    c = LLMClient(completion_fn=fn, retry=policy, default_limits=ModelLimits(max_in_flight=1), sleep=Sleeps())
    replies = await asyncio.gather(*[c.complete(request(i), Verdict) for i in range(20)])
    assert len(replies) == 20 and c.stats.failed == 0


async def test_the_deadline_still_bounds_a_call_once_it_started():
    fn = FakeCompletion("hang")
    policy = RetryPolicy(max_attempts=100, timeout=0.05, deadline=0.3, backoff_base=0.001, breaker_window=0)
    t0 = time.monotonic()
    with pytest.raises(LLMCallFailed, match="deadline of 0.3 s"):
        await LLMClient(completion_fn=fn, retry=policy).complete(request(), Verdict)
    assert time.monotonic() - t0 < 1.0
