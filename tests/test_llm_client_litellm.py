"""LLMClient through real litellm against the fake OpenAI-compatible server on 127.0.0.1 (requests counted at the
server)."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from bench.fake_llm_server import canonical_body_hash
from generator.client import LLMClient, ModelLimits, Price, RetryPolicy, json_schema_for
from generator.llm_types import BudgetExhausted, LLMCallFailed, LLMRequest
from storage.store import Store

REPO = Path(__file__).resolve().parents[1]
FAST = RetryPolicy(max_attempts=4, max_repairs=2, timeout=5, deadline=30, backoff_base=0.01, retry_after_cap=2)


class Profile(BaseModel):
    name: str = Field(min_length=2, max_length=40)
    birth_year: int = Field(ge=1930, le=2006)
    occupation: str
    hobbies: list[str] = Field(min_length=1, max_length=3)
    marital_status: Literal["single", "married", "divorced", "widowed"]


def req(i: int, api_base: str, **kw) -> LLMRequest:
    base = dict(model="openai/fake-model", messages=({"role": "user", "content": f"make profile {i}"},),
                template="profile@1", schema=json_schema_for(Profile), schema_name="profile", api_base=api_base,
                params={"temperature": 0.7})
    base.update(kw)
    return LLMRequest(**base)


def run(coro):
    return asyncio.run(coro)


async def _complete_all(client: LLMClient, requests, model=Profile, return_exceptions=False):
    async with client:
        return await asyncio.gather(*[client.complete(r, model) for r in requests],
                                    return_exceptions=return_exceptions)


def test_schema_reaches_the_server_and_reply_is_valid_and_no_key_is_stored(fake_llm, fake_key, db_file):
    with Store.open(db_file, mode="create") as store:
        run_id = store.start_run("generate", {"model": "openai/fake-model", "api_base": fake_llm.url})
        replies = run(_complete_all(LLMClient(store, run_id=run_id, retry=FAST), [req(0, fake_llm.url)]))
        reply = replies[0]
        assert isinstance(reply.value, Profile) and reply.attempts == 1 and reply.prompt_tokens > 0
        body = fake_llm.log.requests[0].body
        sent = body["response_format"]
        assert sent["type"] == "json_schema" and sent["json_schema"]["name"] == "profile"
        assert sent["json_schema"]["schema"]["properties"]["birth_year"]["minimum"] == 1930
        assert body["temperature"] == 0.7
        row = store.get_llm_call(reply.cache_key)
        assert row.run_id == run_id and row.api_base == fake_llm.url and row.usage_known
        store.finish_run(run_id, "done", {"calls": 1})
    raw = Path(db_file).read_bytes() + b"".join(p.read_bytes() for p in Path(db_file).parent.glob("*.db-wal"))
    assert fake_key.encode() not in raw
    with Store.open(db_file, mode="create") as store:
        for table in store.db.table_names():
            for row in store.db[table].rows:
                assert fake_key not in json.dumps(row, default=str), table


@pytest.mark.slow
def test_429_with_retry_after_is_honoured(fake_llm, fake_key):
    fake_llm.add_fault("status", status=429, retry_after=1)
    waits: list[float] = []

    async def sleep(s):
        waits.append(s)
        await asyncio.sleep(s)

    reply = run(_complete_all(LLMClient(retry=FAST, sleep=sleep), [req(0, fake_llm.url)]))[0]
    assert reply.attempts == 2 and fake_llm.log.count() == 2 and waits == [1.0]
    first, second = fake_llm.log.requests
    assert first.status == 429 and second.status == 200 and second.at - first.at >= 1.0


def test_retry_after_is_capped(fake_llm, fake_key):
    fake_llm.add_fault("status", status=429, retry_after=30)
    waits: list[float] = []

    async def sleep(s):
        waits.append(s)

    policy = RetryPolicy(max_attempts=3, timeout=5, deadline=30, retry_after_cap=0.2)
    run(_complete_all(LLMClient(retry=policy, sleep=sleep), [req(0, fake_llm.url)]))
    assert waits == [0.2] and fake_llm.log.count() == 2


def test_500_then_success(fake_llm, fake_key):
    fake_llm.add_fault("status", status=500)
    reply = run(_complete_all(LLMClient(retry=FAST), [req(0, fake_llm.url)]))[0]
    assert reply.attempts == 2 and [r.status for r in fake_llm.log.requests] == [500, 200]


def test_400_is_not_retried(fake_llm, fake_key):
    fake_llm.add_fault("status", status=400)
    [err] = run(_complete_all(LLMClient(retry=FAST), [req(0, fake_llm.url)], return_exceptions=True))
    assert isinstance(err, LLMCallFailed) and err.reason.startswith("HTTP 400") and fake_llm.log.count() == 1


def test_no_hidden_sdk_retries(fake_llm, fake_key):
    fake_llm.add_fault("status", status=503, times=100)
    policy = RetryPolicy(max_attempts=3, timeout=5, deadline=30, backoff_base=0.01)
    [err] = run(_complete_all(LLMClient(retry=policy), [req(0, fake_llm.url)], return_exceptions=True))
    assert isinstance(err, LLMCallFailed) and "HTTP 503" in err.reason
    assert fake_llm.log.count() == 3 and err.attempts == 3


def test_a_hanging_request_hits_the_timeout_and_is_retried(fake_llm, fake_key):
    fake_llm.add_fault("hang", seconds=30)
    policy = RetryPolicy(max_attempts=3, timeout=0.5, deadline=30, backoff_base=0.01)
    reply = run(_complete_all(LLMClient(retry=policy), [req(0, fake_llm.url)]))[0]
    assert reply.attempts == 2 and fake_llm.log.count() == 2 and fake_llm.log.requests[0].fault == "hang"


def test_a_body_cut_mid_way_is_retried(fake_llm, fake_key):
    fake_llm.add_fault("cut")
    reply = run(_complete_all(LLMClient(retry=FAST), [req(0, fake_llm.url)]))[0]
    assert reply.attempts == 2 and fake_llm.log.count() == 2


@pytest.mark.parametrize("fault", ["invalid_json", "truncated", "ignore_schema"])
def test_an_invalid_reply_is_repaired(fault, fake_llm, fake_key, store):
    fake_llm.add_fault(fault)
    reply = run(_complete_all(LLMClient(store, retry=FAST), [req(0, fake_llm.url)]))[0]
    assert isinstance(reply.value, Profile) and reply.attempts == 2 and fake_llm.log.count() == 2
    repair = fake_llm.log.requests[1].body["messages"]
    assert len(repair) == 3 and repair[2]["role"] == "user" and "cannot be used" in repair[2]["content"]
    assert store.get_llm_call(reply.cache_key).reply_text == reply.text


def test_an_invalid_reply_fails_after_n_repairs_with_the_reason(fake_llm, fake_key, store):
    fake_llm.add_fault("invalid_json", times=100)
    [err] = run(_complete_all(LLMClient(store, retry=FAST), [req(0, fake_llm.url)], return_exceptions=True))
    assert isinstance(err, LLMCallFailed) and "after 2 repair attempts: not JSON" in err.reason
    assert fake_llm.log.count() == 3 and store.llm_call_keys() == set()


def test_missing_usage_is_recorded_as_unknown_and_priced_from_counted_tokens(fake_llm, fake_key, store):
    from generator.client import import_litellm

    fake_llm.add_fault("no_usage")
    client = LLMClient(store, retry=FAST, prices={"openai/fake-model": Price(1.0, 2.0)})
    reply = run(_complete_all(client, [req(0, fake_llm.url)]))[0]
    assert reply.prompt_tokens is None and reply.cost_estimated
    litellm = import_litellm()  # the same offline count (tiktoken, bundled)
    pt = litellm.token_counter(model="openai/fake-model", messages=list(req(0, fake_llm.url).messages))
    ct = litellm.token_counter(model="openai/fake-model", text=reply.text)
    assert reply.cost_usd == pytest.approx((pt * 1.0 + ct * 2.0) / 1e6)
    row = store.get_llm_call(reply.cache_key)
    assert row.usage_known is False and row.prompt_tokens is None and row.cost_usd == pytest.approx(reply.cost_usd)


def test_a_cache_hit_sends_no_request(fake_llm, fake_key, db_file):
    with Store.open(db_file, mode="create") as store:
        run(_complete_all(LLMClient(store, retry=FAST), [req(i, fake_llm.url) for i in range(3)]))
    assert fake_llm.log.count() == 3
    with Store.open(db_file, mode="create") as store:
        client = LLMClient(store, retry=FAST)
        replies = run(_complete_all(client, [req(i, fake_llm.url) for i in range(4)]))
    assert fake_llm.log.count() == 4 and [r.cached for r in replies] == [True, True, True, False]


def test_32_identical_concurrent_calls_send_one_request(fake_llm, fake_key, store):
    fake_llm.latency = 0.05
    replies = run(_complete_all(LLMClient(store, retry=FAST), [req(7, fake_llm.url)] * 32))
    assert fake_llm.log.count() == 1 and len({r.text for r in replies}) == 1


def test_in_flight_limit_is_never_exceeded(fake_llm, fake_key):
    fake_llm.latency = 0.05
    client = LLMClient(retry=FAST, limits={"openai/fake-model": ModelLimits(max_in_flight=5)})
    replies = run(_complete_all(client, [req(i, fake_llm.url) for i in range(30)]))
    assert len(replies) == 30 and fake_llm.log.max_in_flight == 5


def test_requests_per_minute_queue_rather_than_reject(fake_llm, fake_key):
    client = LLMClient(retry=FAST, limits={"openai/fake-model": ModelLimits(max_in_flight=20, rpm=3, period=0.3)})
    replies = run(_complete_all(client, [req(i, fake_llm.url) for i in range(8)]))
    assert len(replies) == 8 and fake_llm.log.count() == 8 and client.stats.failed == 0
    at = sorted(r.at for r in fake_llm.log.requests)
    assert at[-1] - at[0] >= 0.4  # 3 at once, then 5 more at 10 per second


def test_budget_stops_the_run(fake_llm, fake_key, store):
    # the fake server reports about 40 tokens per call: at 100 USD per 1M, about 0.004 USD a call
    client = LLMClient(store, retry=FAST, budget_usd=0.012, prices={"openai/fake-model": Price(100.0, 100.0)},
                       limits={"openai/fake-model": ModelLimits(max_in_flight=1)})
    results = run(_complete_all(client, [req(i, fake_llm.url) for i in range(10)], return_exceptions=True))
    done = [r for r in results if not isinstance(r, BaseException)]
    assert any(isinstance(r, BudgetExhausted) for r in results)
    assert fake_llm.log.count() == len(done) == len(store.llm_call_keys()) < 10
    assert sum(r.cost_usd for r in done[:-1]) < 0.012 <= sum(r.cost_usd for r in done)


KILL_SCRIPT = r"""
import asyncio, sys
sys.path.insert(0, sys.argv[3])
from generator.client import LLMClient, ModelLimits, RetryPolicy
from storage.store import Store
from tests.test_llm_client_litellm import Profile, req

async def main():
    store = Store.open(sys.argv[1], mode="create")
    async with LLMClient(store, retry=RetryPolicy(timeout=10, deadline=60),
                         limits={"openai/fake-model": ModelLimits(max_in_flight=4)}) as client:
        await asyncio.gather(*[client.complete(req(i, sys.argv[2]), Profile) for i in range(40)])
    print("finished", client.stats.requests, flush=True)

asyncio.run(main())
"""


@pytest.mark.slow
def test_killed_and_resumed_sends_no_cached_request_again(fake_llm, fake_key, db_file, tmp_path):
    fake_llm.latency = 0.05
    script = tmp_path / "run_calls.py"
    script.write_text(KILL_SCRIPT)
    args = [sys.executable, str(script), db_file, fake_llm.url, str(REPO)]
    proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    give_up = time.monotonic() + 120
    while fake_llm.log.count() < 12 and time.monotonic() < give_up and proc.poll() is None:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 12 <= fake_llm.log.count() < 40, "the first run must be killed part-way"
    with Store.open(db_file, mode="create") as store:
        cached = {row.request["messages"][0]["content"] for row in store.llm_calls()}
    assert 0 < len(cached) < 40
    first_run = fake_llm.log.count()

    out = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "finished" in out.stdout, out.stderr[-2000:]
    second = fake_llm.log.requests[first_run:]
    resent = {r.body["messages"][0]["content"] for r in second}
    assert not resent & cached, "a call cached before the kill reached the server again"
    assert len(second) == 40 - len(cached)
    with Store.open(db_file, mode="create") as store:
        assert len(store.llm_call_keys()) == 40
    counts = fake_llm.log.per_hash()
    for r in second:
        assert counts[canonical_body_hash(r.body)] <= 2  # at most: once killed in flight, once now


def test_prices_from_litellm_price_map_and_config():
    client = LLMClient(use_litellm_prices=True, prices={"openai/my-local": Price(1.0, 3.0)})
    # gpt-4o-mini's published price: 0.15 USD per 1M input tokens, 0.60 per 1M output tokens
    assert client.cost_of("openai/gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.75)
    assert client.cost_of("openai/my-local", 2_000, 1_000) == pytest.approx((2_000 * 1.0 + 1_000 * 3.0) / 1e6)
    assert client.cost_of("openai/nobody-knows-this-model", 10, 10) is None  # never raises
    assert client.cost_of("openai/gpt-4o-mini", None, None) is None


def test_prompt_tokens_are_counted_offline():
    from generator.client import count_prompt_tokens

    def tokens(model: str, copies: int) -> int:
        return count_prompt_tokens(LLMRequest(model=model, template="t@1",
                                              messages=({"role": "user", "content": "hello world " * copies},)))

    # o200k: "hello" and " world" / " hello" are one token each, so 10 more copies are 20 more tokens
    assert tokens("openai/gpt-4o-mini", 20) - tokens("openai/gpt-4o-mini", 10) == 20
    # a Llama name needs a tokenizer that is not bundled: an estimate, and no download (the test has no network)
    assert tokens("hosted_vllm/meta-llama/Llama-3.1-8B-Instruct", 10) > 20


def test_a_missing_key_fails_at_once_without_retries(fake_llm, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    [err] = run(_complete_all(LLMClient(retry=FAST), [req(0, fake_llm.url)], return_exceptions=True))
    from generator.llm_types import ClientMisconfigured

    # a configuration error that stops the client (every later call alike), naming the model and the variable
    assert isinstance(err, ClientMisconfigured) and str(err).startswith("openai/fake-model: no API key: litellm "
                                                                         "needs OPENAI_API_KEY")
    assert fake_llm.log.count() == 0
    # a local server reached through hosted_vllm/ needs no key
    reply = run(_complete_all(LLMClient(retry=FAST), [req(0, fake_llm.url, model="hosted_vllm/fake-model")]))[0]
    assert isinstance(reply.value, Profile) and fake_llm.log.count() == 1


# ---- issue 26: faults that say what to do, and the clock is the user's -------------------------------------------
def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_nothing_listening_fails_fast_with_one_line_naming_the_api_base(fake_key):
    from generator.llm_types import ServerUnreachable

    base = f"http://127.0.0.1:{_closed_port()}/v1"
    t0 = time.monotonic()
    results = run(_complete_all(LLMClient(retry=RetryPolicy()), [req(i, base) for i in range(20)],
                                return_exceptions=True))
    assert time.monotonic() - t0 < 5  # one quick retry, not the long schedule (it took 91 s)
    assert all(isinstance(r, ServerUnreachable) for r in results)
    assert str(results[0]) == (f"cannot reach {base}: connection refused (is the server running? is the port right? "
                               "check --api-base or api_base: in the config)")


def test_an_unknown_host_fails_fast(fake_key, monkeypatch):
    import socket

    from generator.llm_types import ServerUnreachable

    real = socket.getaddrinfo

    def no_such_host(host, *a, **kw):  # no DNS query leaves the machine
        if host == "llm-box.invalid":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *a, **kw)

    monkeypatch.setattr(socket, "getaddrinfo", no_such_host)
    [err] = run(_complete_all(LLMClient(retry=RetryPolicy()), [req(0, "http://llm-box.invalid:8000/v1")],
                              return_exceptions=True))
    assert isinstance(err, ServerUnreachable) and "its host name is unknown" in str(err)


def test_a_hung_server_stops_the_run_after_one_timeout_not_hours(fake_llm, fake_key):
    from generator.llm_types import CircuitOpen

    fake_llm.add_fault("hang", times=10_000, seconds=60)
    policy = RetryPolicy(timeout=0.5, breaker_window=8)
    t0 = time.monotonic()
    results = run(_complete_all(LLMClient(retry=policy, default_limits=ModelLimits(max_in_flight=8)),
                                [req(i, fake_llm.url) for i in range(100)], return_exceptions=True))
    elapsed = time.monotonic() - t0
    assert all(isinstance(r, CircuitOpen) for r in results) and elapsed < 5
    assert fake_llm.log.count() <= 16
    assert str(results[0]).startswith(f"stopped early: the last 8 requests to {fake_llm.url} all failed, 8 of them "
                                      "timed out")


def test_a_reply_echoing_the_authorization_header_keeps_no_key(fake_llm, fake_key, db_file):
    class Note(BaseModel):
        text: str

    fake_llm.add_fault("echo_auth", times=2)
    with Store.open(db_file, mode="create") as store:
        replies = run(_complete_all(LLMClient(store, retry=FAST), [
            req(0, fake_llm.url, schema=json_schema_for(Note), schema_name="note"),
            req(1, fake_llm.url, schema=None, schema_name="reply")], model=None))
        for reply in replies:  # JSON and free text alike
            assert "you sent Authorization: Bearer ***" in reply.text and fake_key not in reply.text
        assert fake_llm.log.count() == 2
    raw = Path(db_file).read_bytes() + b"".join(p.read_bytes() for p in Path(db_file).parent.glob("*.db-wal"))
    assert fake_key.encode() not in raw


def test_a_missing_gemini_key_stops_the_client_at_the_first_call(fake_llm, monkeypatch):
    """litellm 1.110.2 raises "Missing Gemini API key ..." as a 500 APIConnectionError with a traceback in its text,
    before sending anything: a configuration error, not a broken connection. The first call stops the client (no
    retry, no request at the server); every call gets the same one line naming the model and the variables."""
    from generator.llm_types import ClientMisconfigured

    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    client = LLMClient(retry=RetryPolicy())  # the default schedule: a retried call would take seconds
    t0 = time.monotonic()
    results = run(_complete_all(client, [req(i, fake_llm.url, model="gemini/gemini-2.5-flash-lite")
                                         for i in range(16)], return_exceptions=True))
    assert time.monotonic() - t0 < 5
    assert all(isinstance(r, ClientMisconfigured) for r in results)
    assert fake_llm.log.count() == 0
    # the calls already in flight when the first failed (8 slots by default) fail alike; none is retried
    assert client.stats.retries == 0 and client.stats.requests <= 8
    line = str(results[0])
    assert line.startswith("gemini/gemini-2.5-flash-lite: no API key: litellm needs GEMINI_API_KEY or GOOGLE_API_KEY "
                           "in the environment")
    assert "\n" not in line and "Traceback" not in line and "File \"" not in line and "lost the connection" not in line


@pytest.mark.slow
def test_no_api_key_is_one_error_line_without_python_warnings(tmp_path):
    """Without OPENAI_API_KEY litellm makes its acompletion coroutine and raises before awaiting it: the run printed
    Python's "coroutine ... was never awaited" RuntimeWarning and a tracemalloc line over the error (a newcomer's
    run). Now stderr holds the progress line and the one error, exit code 5, nothing sent."""
    import subprocess
    import sys

    db = tmp_path / "d.db"
    env = {k: v for k, v in os.environ.items() if not k.endswith("API_KEY")}
    prefval = [sys.executable, "-m", "annotator.cli"]
    subprocess.run([*prefval, "demo", "--no-tui", "--db", str(db)], check=True, capture_output=True, env=env)
    r = subprocess.run([*prefval, "evaluate", "answer", "--study", "demo-mcq", "--model", "openai/fake-model",
                        "--api-base", "http://127.0.0.1:1/v1", "--db", str(db)], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 5
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert not any("Warning" in line or "tracemalloc" in line for line in lines), r.stderr
    assert lines[-1].startswith("prefval: openai/fake-model: no API key: litellm needs OPENAI_API_KEY"), r.stderr
    assert lines[-1].endswith("nothing was sent")
