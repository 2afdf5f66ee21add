"""Benchmark concurrent writers on one prefval database.

Run: ``python bench/concurrency.py [--answers 300] [--writers 1,2,4,8]``. Builds a study of (answers x 8) MCQ
units with 8 named annotators in a temporary file, then for each N starts N processes together (a barrier), each
an annotator appending `--answers` decisions through ``Store.add_annotation`` as fast as it can (every one
committed: WAL, synchronous=FULL, BEGIN IMMEDIATE). Prints, per N, answers per second over all writers, the
median and the worst wait for one write (seconds), and the ratio of N writers' throughput to one writer's. The
baseline is the same loop with N = 1 in the same run.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from storage.models import AnnotationIn, ContextIn, ItemIn, Message  # noqa: E402
from storage.payloads import McqPayload  # noqa: E402
from storage.store import Store  # noqa: E402

ANNOTATORS = [f"writer{i}" for i in range(8)]


def build(path: str, n_answers: int) -> None:
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec

    n_units = n_answers * len(ANNOTATORS)
    ctx = ContextIn(external_id="c", messages=[Message(role="user", content="hello " * 50) for _ in range(20)])
    items = [ItemIn(external_id=f"q{i}", kind="mcq", context_external_id="c", context_end=10,
                    payload=McqPayload(question=f"Question {i}?", options=["a", "b", "c", "d"],
                                       correct_index=i % 4).model_dump(exclude_none=True))
             for i in range(n_units)]
    with Store.open(path, mode="create") as s:
        s.import_items("bench", "jsonl", items, contexts=[ctx])
        create_study(s, StudySpec(name="bench", task="mcq", datasets=["bench"], seed=1, annotators=ANNOTATORS,
                                  annotators_per_item=1))


def writer(path: str, who: str, n: int, barrier, out) -> None:
    with Store.open(path, mode="rw") as s:
        study = s.get_study("bench")
        ann = s.ensure_annotator(who)
        queue = s.assignments(study.id, ann.id)
        units = {u.id: u for u in s.units(study.id)}
        waits = []
        barrier.wait()
        for k in range(n):
            a = queue[k % len(queue)]
            u = units[a.unit_id]
            t = time.perf_counter()
            s.add_annotation(AnnotationIn(study_id=study.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                          assignment_id=a.id, status="answered",
                                          answer={"choice": k % 4, "letter": "ABCD"[k % 4], "shown": "A",
                                                  "cant_tell": False}))
            waits.append(time.perf_counter() - t)
        out.put(waits)


def run(path: str, n_writers: int, n_answers: int) -> dict:
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(n_writers + 1)
    out = ctx.Queue()
    procs = [ctx.Process(target=writer, args=(path, ANNOTATORS[i], n_answers, barrier, out))
             for i in range(n_writers)]
    for p in procs:
        p.start()
    barrier.wait()
    t0 = time.perf_counter()
    waits = [w for _ in procs for w in out.get()]
    elapsed = time.perf_counter() - t0
    for p in procs:
        p.join()
    return {"writers": n_writers, "answers": len(waits), "seconds": elapsed, "per_second": len(waits) / elapsed,
            "median_wait": statistics.median(waits), "worst_wait": max(waits)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--answers", type=int, default=300, help="answers per writer")
    ap.add_argument("--writers", default="1,2,4,8", help="comma-separated numbers of concurrent writers")
    args = ap.parse_args()
    counts = [int(x) for x in args.writers.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.db")
        build(path, args.answers)
        results = [run(path, n, args.answers) for n in counts]
    base = results[0]["per_second"]
    print(f"{'writers':>7} {'answers':>8} {'answers/s':>10} {'x 1 writer':>10} {'median wait s':>14} "
          f"{'worst wait s':>13}")
    for r in results:
        print(f"{r['writers']:>7} {r['answers']:>8} {r['per_second']:>10.0f} {r['per_second'] / base:>10.2f} "
              f"{r['median_wait']:>14.4f} {r['worst_wait']:>13.4f}")


if __name__ == "__main__":
    main()
