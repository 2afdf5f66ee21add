"""Scale benchmark (issue 26): the consensus filter (HorizonBench 5.1) on N candidates x 5 validator models through
`prefval evaluate consensus`, against the fake OpenAI-compatible server in a child process.

    python bench/scale.py [--candidates 5000] [--latency 0.2] [--in-flight 64] [--keep DB]

Defaults: 5,000 candidates x 5 validators = 25,000 calls, 200 ms per reply, 64 in flight in all (per model:
in-flight / 5, rounded up). Prints the wall time against the ideal (calls x latency / in flight), the CPU per call
(this process, all threads), the peak memory (max RSS), the database's size, and the time of the same command run
again (every call from the cache: nothing is sent). Asserts nothing.
"""
from __future__ import annotations

import argparse
import io
import math
import os
import resource
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != str(REPO / "bench")]
sys.path.insert(0, str(REPO))
os.environ.setdefault("OPENAI_API_KEY", "sk-fake-benchmark-key")

from bench._common import start_server  # noqa: E402

MODELS = [f"openai/validator-{k}" for k in range(1, 6)]


def build(path: str, n: int) -> None:
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec
    from storage.models import ItemIn
    from storage.payloads import McqPayload
    from storage.store import Store

    items = [ItemIn(external_id=f"c{i}", kind="mcq", payload=McqPayload(
        question=f"Which reply suits the user best, candidate {i}?",
        options=[f"a quiet option {i}", f"a lively option {i}", f"a cheap option {i}", f"a fancy option {i}"],
        correct_index=i % 4).model_dump(exclude_none=True)) for i in range(n)]
    with Store.open(path, mode="create") as s:
        s.import_items("cands", "jsonl", items)
        create_study(s, StudySpec(name="cands", task="mcq", datasets=["cands"]))


def run(db: str, url: str, per_model: int) -> tuple[int, float, float, str]:
    """(exit code, wall s, CPU s, last line of output) of one consensus command."""
    from annotator.cli import main

    out, err = io.StringIO(), io.StringIO()
    t0, c0 = time.perf_counter(), time.process_time()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["evaluate", "consensus", "--study", "cands", "--models", ",".join(MODELS), "--rule", "3/5",
                     "--out-dataset", "survivors", "--api-base", url, "--concurrency", str(per_model),
                     "--price", "0.15,0.6", "--progress-every", "0", "--db", db])
    text = (out.getvalue() + err.getvalue()).strip().splitlines()
    first = [x for x in text if "calls failed (first:" in x]
    return code, time.perf_counter() - t0, time.process_time() - c0, " / ".join(first + text[-1:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", type=int, default=5000)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--in-flight", type=int, default=64, help="requests in flight in all (split over the 5 models)")
    ap.add_argument("--keep", help="write the database here (default: a temporary folder)")
    args = ap.parse_args()

    from generator.client import import_litellm

    import_litellm()
    per_model = math.ceil(args.in_flight / len(MODELS))
    calls = args.candidates * len(MODELS)
    proc, url = start_server(args.latency)
    tmp = tempfile.mkdtemp(prefix="prefval-scale-")
    db = args.keep or os.path.join(tmp, "scale.db")
    try:
        t0 = time.perf_counter()
        build(db, args.candidates)
        built = time.perf_counter() - t0
        code, wall, cpu, last = run(db, url, per_model)
        rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        size = sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))
        code2, wall2, cpu2, last2 = run(db, url, per_model)
    finally:
        proc.kill()
        proc.wait()
    ideal = calls * args.latency / (per_model * len(MODELS))
    print(f"consensus filter: {args.candidates} candidates x {len(MODELS)} validators = {calls} calls, fake server "
          f"{args.latency * 1000:.0f} ms per reply (a child process), {per_model * len(MODELS)} in flight "
          f"({per_model} per model); study built in {built:.1f} s")
    print(f"run: exit {code}, {wall:.1f} s wall against an ideal of {ideal:.1f} s ({ideal / wall:.2f} of ideal); "
          f"CPU {cpu:.1f} s = {cpu / calls * 1000:.2f} ms per call; peak memory (max RSS) {rss_kb / 1024:.0f} MB; "
          f"database {size / 1e6:.1f} MB; {last}")
    print(f"resumed (the same command again, every call from the cache): exit {code2}, {wall2:.1f} s wall, "
          f"{cpu2:.1f} s CPU; {last2}")


if __name__ == "__main__":
    main()
