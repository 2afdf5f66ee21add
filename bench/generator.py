"""Benchmark of prefval's LLM client against a bare litellm loop (issues 7, 26). Prints figures; asserts nothing.

    python bench/generator.py [--calls 500] [--in-flight 32] [--latency 0.2] [--rounds 7]

A fake OpenAI-compatible server (bench/fake_llm_server.py) runs in a child process with a fixed latency per reply.
In this process, in interleaved rounds (the order swapped every round, so that a load on the machine that comes and
goes falls on both alike):
- bare: ``litellm.acompletion`` under an asyncio.Semaphore(in-flight), no cache, no validation;
- prefval: ``LLMClient.complete`` with the same in-flight limit, every reply checked against the JSON schema sent
  as response_format and validated into a pydantic model, and written to the call cache in a temporary SQLite file.
Both send the same number of distinct requests (prefval never hits its cache). Figures: per round, prefval's calls
per second as a ratio of bare's in the same round; printed as the median over the rounds with its spread (min,
max, quartiles), target >= 0.9 at the median; the same for client CPU per call (all threads of this process); and
prefval's own overhead per call in milliseconds, measured with an instant completion function (no HTTP at all),
split into cache lookup, validation and cache write.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != str(REPO / "bench")]
sys.path.insert(0, str(REPO))

from bench._common import spread, start_server  # noqa: E402

from pydantic import BaseModel, Field  # noqa: E402

from generator.client import (  # noqa: E402
    LLMClient, ModelLimits, RetryPolicy, import_litellm, json_schema_for, validate_reply,
)
from generator.llm_types import LLMRequest  # noqa: E402
from storage.llm_calls import LLMCall  # noqa: E402
from storage.store import Store  # noqa: E402

MODEL = "openai/bench-model"


class Preference(BaseModel):
    content: str = Field(min_length=1)
    reason: str
    kind: str = Field(json_schema_extra={"enum": ["relative", "negative", "exclusive", "positive"]})
    topic: str
    strength: int = Field(ge=1, le=5)
    related_events: list[str] = Field(min_length=1, max_length=3)


SCHEMA = json_schema_for(Preference)


def make_request(tag: str, i: int, api_base: str | None) -> LLMRequest:
    return LLMRequest(model=MODEL, messages=(
        {"role": "system", "content": "You extract one preference of the user as JSON."},
        {"role": "user", "content": f"[{tag} {i}] I have loved hiking in the mountains since my first trip in 2015, "
                                    "and I avoid crowded beaches whenever I can."}),
        template="preference@1", schema=SCHEMA, schema_name="preference", params={"temperature": 0.7},
        api_base=api_base)


async def bare_round(litellm, api_base: str, tag: str, calls: int, in_flight: int) -> float:
    sem = asyncio.Semaphore(in_flight)

    async def one(i: int):
        r = make_request(tag, i, api_base)
        async with sem:
            return await litellm.acompletion(
                model=r.model, messages=list(r.messages), api_base=api_base, temperature=0.7, timeout=60,
                max_retries=0, num_retries=0,
                response_format={"type": "json_schema",
                                 "json_schema": {"name": "preference", "schema": SCHEMA, "strict": True}})

    t0, cpu0 = time.perf_counter(), time.process_time()
    await asyncio.gather(*[one(i) for i in range(calls)])
    return time.perf_counter() - t0, time.process_time() - cpu0


async def prefval_round(client: LLMClient, api_base: str, tag: str, calls: int) -> float:
    t0, cpu0 = time.perf_counter(), time.process_time()
    replies = await asyncio.gather(*[client.complete(make_request(tag, i, api_base), Preference)
                                     for i in range(calls)])
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    assert all(isinstance(r.value, Preference) and not r.cached for r in replies)
    return elapsed, cpu


async def overhead(calls: int, in_flight: int, db_path: str) -> dict[str, float]:
    """ms per call of prefval's own machinery, with a completion function that answers at once."""
    from bench.fake_llm_server import instance_for_schema

    content = json.dumps(instance_for_schema(SCHEMA, 1))
    reply = {"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
             "usage": {"prompt_tokens": 40, "completion_tokens": 60}}

    async def instant(**kwargs):
        return reply

    with Store.open(db_path, mode="create") as store:
        client = LLMClient(store, completion_fn=instant, default_limits=ModelLimits(in_flight))
        requests = [make_request("overhead", i, None) for i in range(calls)]
        t0, cpu0 = time.perf_counter(), time.thread_time()
        await asyncio.gather(*[client.complete(r, Preference) for r in requests])
        total = (time.perf_counter() - t0) / calls * 1000
        loop_cpu = (time.thread_time() - cpu0) / calls * 1000
        await client.aclose()
        t0 = time.perf_counter()
        for r in requests:
            store.get_llm_call(r.cache_key())
        lookup = (time.perf_counter() - t0) / calls * 1000
        t0 = time.perf_counter()
        for r in requests:
            validate_reply(content, "stop", r, Preference)
        validation = (time.perf_counter() - t0) / calls * 1000
        t0 = time.perf_counter()
        for i, r in enumerate(requests[:200]):
            store.put_llm_call(LLMCall(key=f"bench-{i}", model=MODEL, template="t", request={"messages": []},
                                       reply_text=content, parsed=json.loads(content)))
        write = (time.perf_counter() - t0) / 200 * 1000
    return {"total": total, "loop_cpu": loop_cpu, "lookup": lookup, "validation": validation, "write": write}


async def main_async(args) -> None:
    os.environ.setdefault("OPENAI_API_KEY", "bench-not-a-key")
    litellm = import_litellm()
    proc, api_base = start_server(args.latency)
    tmp = tempfile.mkdtemp(prefix="prefval-bench-")
    try:
        store = Store.open(os.path.join(tmp, "bench.db"), mode="create")
        client = LLMClient(store, retry=RetryPolicy(timeout=60, deadline=300),
                           limits={MODEL: ModelLimits(max_in_flight=args.in_flight)})
        # warm-up: connection pools, litellm's first-call set-up
        await bare_round(litellm, api_base, "warm-bare", args.in_flight, args.in_flight)
        await prefval_round(client, api_base, "warm-prefval", args.in_flight)
        rounds = []  # (bare s, bare cpu s, prefval s, prefval cpu s)
        for k in range(args.rounds):  # interleaved, the order swapped every round
            got = {}
            for which in (("bare", "prefval") if k % 2 == 0 else ("prefval", "bare")):
                if which == "bare":
                    got[which] = await bare_round(litellm, api_base, f"bare{k}", args.calls, args.in_flight)
                else:
                    got[which] = await prefval_round(client, api_base, f"prefval{k}", args.calls)
            rounds.append((*got["bare"], *got["prefval"]))
        await client.aclose()
        store.close()
        cost = await overhead(args.calls, args.in_flight, os.path.join(tmp, "overhead.db"))
    finally:
        proc.kill()
        proc.wait()
    ideal = args.in_flight / args.latency
    ratios = [b / p for b, _, p, _ in rounds]
    cpu_ratios = [pc / bc for _, bc, _, pc in rounds]
    per_call = lambda xs: [x / args.calls * 1000 for x in xs]  # noqa: E731
    print(f"fake server latency {args.latency * 1000:.0f} ms (a child process), {args.calls} calls, {args.in_flight} "
          f"in flight, {args.rounds} interleaved rounds")
    print(f"bare litellm loop : {args.calls / statistics.median(r[0] for r in rounds):7.1f} calls/s at the median "
          f"(rounds: {', '.join(f'{r[0]:.2f} s' for r in rounds)})")
    print(f"prefval client    : {args.calls / statistics.median(r[2] for r in rounds):7.1f} calls/s at the median "
          f"(rounds: {', '.join(f'{r[2]:.2f} s' for r in rounds)})")
    print(f"ideal             : {ideal:7.1f} calls/s  (in flight / latency)")
    print(f"prefval / bare, calls per second, paired by round: {spread(ratios)}   (target >= 0.9 at the median)")
    print(f"client CPU per call (this process, all threads): bare {spread(per_call([r[1] for r in rounds]), '{:.2f}')}"
          f" ms; prefval {spread(per_call([r[3] for r in rounds]), '{:.2f}')} ms; prefval / bare "
          f"{spread(cpu_ratios)}")
    print(f"prefval / ideal at the median: {statistics.median(args.calls / r[2] for r in rounds) / ideal:.3f}   "
          f"bare / ideal: {statistics.median(args.calls / r[0] for r in rounds) / ideal:.3f}")
    print(f"prefval overhead per call, with an instant completion function: {cost['loop_cpu']:.2f} ms of event-loop "
          f"CPU ({cost['total']:.2f} ms wall at {args.in_flight} in flight, commits included); parts: cache lookup "
          f"{cost['lookup']:.2f} ms, validation {cost['validation']:.2f} ms; one cache write with its own commit "
          f"{cost['write']:.2f} ms (off the event loop, grouped)")
    await litellm.close_litellm_async_clients()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--in-flight", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per reply at the fake server")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
