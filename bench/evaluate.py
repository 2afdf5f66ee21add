"""Benchmark `prefval evaluate answer`'s path (plan, the one LLM client with its cache and limits, results written
as annotations) against a bare litellm loop, on the fake OpenAI-compatible server in a child process.

Run: ``python bench/evaluate.py [--items 1000] [--latency 0.1] [--in-flight 32] [--rounds 7]``. Builds a study of N
blind MCQ items in a temporary database; starts the fake server (every reply waits --latency seconds); then in
--rounds interleaved rounds (the order swapped every round; a fresh database each round, built before the clock
starts):
1. baseline: the same N requests sent with ``litellm.acompletion`` directly, --in-flight at a time (asyncio
   semaphore), nothing checked, cached or written;
2. prefval: ``generator.evaluate.runs.mcq_jobs`` -> ``run_jobs`` through ``LLMClient`` (max_in_flight = --in-flight,
   SQLite call cache) -> ``write_mcq_answers``.
Prints prefval / baseline in calls per second, paired by round, as the median over the rounds with its spread
(target >= 0.9 at the median), CPU per call of both likewise, then times a resumed run (every call from the cache,
nothing sent).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time

_BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _BENCH]
sys.path.insert(0, os.path.dirname(_BENCH))
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
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    args = ap.parse_args()

    import statistics

    from bench._common import spread, start_server
    from generator.client import import_litellm
    from generator.evaluate.runs import mcq_jobs, write_mcq_answers
    from storage.store import Store

    import_litellm()
    proc, url = start_server(args.latency)
    rounds = []  # (baseline s, baseline cpu s, prefval s, prefval cpu s)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            warm = os.path.join(tmp, "warm.db")
            build(warm, args.in_flight)
            with Store.open(warm, mode="rw") as store:
                jobs = mcq_jobs(store, "bench", MODEL, blind=True, rotate=False, api_base=url)
                asyncio.run(baseline(jobs, url, args.in_flight))
                asyncio.run(prefval_run(store, jobs, args.in_flight))
            for rep in range(args.rounds):
                path = os.path.join(tmp, f"bench{rep}.db")  # a fresh database: nothing cached
                build(path, args.items)
                got = {}
                with Store.open(path, mode="rw") as store:
                    jobs = mcq_jobs(store, "bench", MODEL, blind=True, rotate=False, api_base=url)
                    for which in (("base", "prefval") if rep % 2 == 0 else ("prefval", "base")):
                        t0, c0 = time.perf_counter(), time.process_time()
                        if which == "base":
                            asyncio.run(baseline(jobs, url, args.in_flight))
                        else:
                            result = asyncio.run(prefval_run(store, jobs, args.in_flight))
                            added = write_mcq_answers(store, "bench", "bench-model", MODEL, result, rotate=False)
                        got[which] = (time.perf_counter() - t0, time.process_time() - c0)
                rounds.append((*got["base"], *got["prefval"]))
            with Store.open(path, mode="rw") as store:
                t0 = time.perf_counter()
                again = asyncio.run(prefval_run(store, jobs, args.in_flight))
                write_mcq_answers(store, "bench", "bench-model", MODEL, again, rotate=False)
                resumed = time.perf_counter() - t0
        n = len(jobs)
        per_call = lambda xs: [x / n * 1000 for x in xs]  # noqa: E731
        print(f"{n} MCQ items, fake server latency {args.latency * 1000:.0f} ms (a child process), {args.in_flight} in "
              f"flight; {args.rounds} interleaved rounds")
        print(f"bare litellm loop: {n / statistics.median(r[0] for r in rounds):8.1f} calls/s at the median (rounds: "
              f"{', '.join(f'{r[0]:.2f}' for r in rounds)} s)")
        print(f"prefval evaluate:  {n / statistics.median(r[2] for r in rounds):8.1f} calls/s at the median (rounds: "
              f"{', '.join(f'{r[2]:.2f}' for r in rounds)} s; {len(result.replies)} replies, {len(result.failed)} "
              f"failed, {sum(added.values())} answers written)")
        print(f"prefval / bare, calls per second, paired by round: {spread([r[0] / r[2] for r in rounds])}   "
              "(target >= 0.9 at the median)")
        print(f"CPU per call (this process): bare {spread(per_call([r[1] for r in rounds]), '{:.2f}')} ms; prefval "
              f"{spread(per_call([r[3] for r in rounds]), '{:.2f}')} ms")
        print(f"resumed run: {resumed:.2f} s, {sum(1 for r in again.replies.values() if r.cached)} calls from the cache")
    finally:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    main()
