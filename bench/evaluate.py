"""Benchmark `prefval evaluate answer`'s path (plan, the one LLM client with its cache and limits, results written
as annotations) against a bare litellm loop, on the fake OpenAI-compatible server in this process.

Run: ``python bench/evaluate.py [--items 1000] [--latency 0.1] [--in-flight 32]``. Builds a study of N blind MCQ
items in a temporary database; starts the fake server (every reply waits --latency seconds); then
1. baseline: the same N requests sent with ``litellm.acompletion`` directly, --in-flight at a time (asyncio
   semaphore), nothing cached or written;
2. prefval: ``generator.evaluate.runs.mcq_jobs`` -> ``run_jobs`` through ``LLMClient`` (max_in_flight = --in-flight,
   SQLite call cache) -> ``write_mcq_answers``.
The two alternate --repeat times (a fresh database each time); prints the best calls per second of both and the
ratio prefval / baseline (target >= 0.9), then times a resumed run (every call from the cache, nothing sent).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("OPENAI_API_KEY", "sk-fake-benchmark-key")

MODEL = "openai/bench-model"


def build(path: str, n: int) -> None:
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec
    from storage.models import ItemIn
    from storage.payloads import McqPayload
    from storage.store import Store

    items = [ItemIn(external_id=f"q{i}", kind="mcq", payload=McqPayload(
        question=f"Which gift would the user like most, question {i}?",
        options=[f"a book about topic {i}", f"a concert ticket {i}", f"a cooking class {i}", f"a board game {i}"],
        correct_index=i % 4).model_dump(exclude_none=True)) for i in range(n)]
    with Store.open(path, mode="create") as s:
        s.import_items("bench", "jsonl", items)
        create_study(s, StudySpec(name="bench", task="blind_test", datasets=["bench"]))


async def baseline(jobs, url: str, in_flight: int) -> float:
    from generator.client import import_litellm, response_format_for

    litellm = import_litellm()
    sem = asyncio.Semaphore(in_flight)

    async def one(job):
        async with sem:
            r = job.request
            await litellm.acompletion(model=r.model, messages=list(r.messages), api_base=url,
                                      response_format=response_format_for(r), max_retries=0, timeout=60,
                                      **r.params)

    t0 = time.perf_counter()
    await asyncio.gather(*(one(j) for j in jobs))
    seconds = time.perf_counter() - t0
    await litellm.close_litellm_async_clients()
    return seconds


async def prefval_run(store, jobs, in_flight: int):
    from generator.client import LLMClient, ModelLimits
    from generator.evaluate.runs import run_jobs

    async with LLMClient(store, limits={MODEL: ModelLimits(max_in_flight=in_flight)}) as client:
        return await run_jobs(client, jobs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.1, help="seconds per reply at the fake server")
    ap.add_argument("--in-flight", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3, help="alternate both loops this often; report the best of each")
    args = ap.parse_args()

    from bench.fake_llm_server import FakeLLMServer
    from generator.evaluate.runs import mcq_jobs, write_mcq_answers
    from storage.store import Store

    server = FakeLLMServer(latency=args.latency).start()
    base_times, our_times, write_times = [], [], []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for rep in range(args.repeat):
                path = os.path.join(tmp, f"bench{rep}.db")  # a fresh database: nothing cached
                build(path, args.items)
                with Store.open(path, mode="rw") as store:
                    jobs = mcq_jobs(store, "bench", MODEL, blind=True, rotate=False, api_base=server.url)
                    base_times.append(asyncio.run(baseline(jobs, server.url, args.in_flight)))
                    t0 = time.perf_counter()
                    result = asyncio.run(prefval_run(store, jobs, args.in_flight))
                    t1 = time.perf_counter()
                    added = write_mcq_answers(store, "bench", "bench-model", MODEL, result, rotate=False)
                    our_times.append(time.perf_counter() - t0)
                    write_times.append(time.perf_counter() - t1)
            sent = server.log.count()
            with Store.open(path, mode="rw") as store:
                t0 = time.perf_counter()
                again = asyncio.run(prefval_run(store, jobs, args.in_flight))
                write_mcq_answers(store, "bench", "bench-model", MODEL, again, rotate=False)
                resumed = time.perf_counter() - t0
        n = len(jobs)
        base, ours = min(base_times), min(our_times)
        print(f"{n} MCQ items, fake server latency {args.latency * 1000:.0f} ms, {args.in_flight} in flight "
              f"(max seen at the server: {server.log.max_in_flight}); best of {args.repeat} alternating runs")
        print(f"bare litellm loop: {n / base:8.1f} calls/s (best {base:.2f} s; all: "
              f"{', '.join(f'{t:.2f}' for t in base_times)})")
        print(f"prefval evaluate:  {n / ours:8.1f} calls/s (best {ours:.2f} s; all: "
              f"{', '.join(f'{t:.2f}' for t in our_times)}; {len(result.replies)} replies, {len(result.failed)} "
              f"failed, {sum(added.values())} answers written in {min(write_times):.2f} s)")
        print(f"ratio prefval / bare litellm: {base / ours:.3f} (target >= 0.9)")
        print(f"resumed run: {resumed:.2f} s, {server.log.count() - sent} requests sent, "
              f"{sum(1 for r in again.replies.values() if r.cached)} from the cache")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
