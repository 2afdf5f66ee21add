"""Benchmark of the annotation TUI (issue: foundation). Prints figures; asserts nothing.

    python bench/tui.py [--items N] [--decisions N]

Data: the 589 real PersonaMem questions (../shared/datasets/personamem/questions_32k.csv; the bundled sample when
absent) plus one item whose context holds 1,000,000 characters. Figures:
1. seconds from process start to the first item on screen (a child process per run, headless), and the same for a
   minimal Textual app started the same way: the ratio is prefval's start-up over Textual's own;
2. milliseconds from a decision key to the next item on screen with the answer committed (p50, p95, max);
3. peak resident memory (MB) of a process that opens the long-context item and scrolls through its context.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CHILD = r"""
import sys, time, resource
t0 = float(sys.argv[1])
mode = sys.argv[2]
if mode == "minimal":
    from textual.app import App
    from textual.widgets import Static
    class Minimal(App):
        def compose(self):
            yield Static("hello")
        def on_mount(self):
            self.call_after_refresh(self.done)
        def done(self):
            print(f"FIRST {time.time() - t0:.4f}")
            self.exit()
    Minimal().run(headless=True)
else:
    db, study, who = sys.argv[3], sys.argv[4], sys.argv[5]
    from annotator.app import AnnotateApp
    class Timed(AnnotateApp):
        def on_mount(self):
            super().on_mount()
            self.call_after_refresh(self.first)
        def first(self):
            print(f"FIRST {time.time() - t0:.4f}")
            if mode == "first":
                self.exit()
            else:
                self.set_timer(0.05, self.scroll_context)
        def scroll_context(self):
            from annotator.widgets.context import ContextView
            views = self.screen.query(ContextView)
            if views:
                v = views.first()
                for _ in range(40):
                    v._load_more()
                print(f"BLOCKS {v.blocks_mounted}")
            self.set_timer(0.3, self.finish)
        def finish(self):
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"PEAKMB {rss:.1f}")
            self.exit()
    Timed(db, study, who, show_timer=False).run(headless=True)
"""


def build_db(path: str) -> None:
    """The benchmark database: PersonaMem questions as study "bench", the long item as study "long"."""
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec
    from storage.importers import personamem
    from storage.models import ContextIn, ItemIn, Message
    from storage.payloads import McqPayload
    from storage.store import Store

    real = REPO.parent / "shared" / "datasets" / "personamem" / "questions_32k.csv"
    src = [real] if real.exists() else [REPO / "sample_data" / "personamem" / "questions_sample.csv"]
    parsed = personamem.read(src)
    msgs = [Message(role="user" if i % 2 == 0 else "assistant",
                    content=(f"message {i}: " + "lorem ipsum dolor sit amet " * 80)[:2000]) for i in range(500)]
    assert sum(len(m.content) for m in msgs) == 1_000_000
    long_item = ItemIn(external_id="long", kind="mcq", context_external_id="long-ctx", context_end=500,
                       payload=McqPayload(question="Which option fits?", options=["one", "two", "three", "four"],
                                          correct_index=0).model_dump(exclude_none=True))
    with Store.open(path) as s:
        s.import_items("pm", "personamem", parsed.items)
        s.import_items("long", "jsonl", [long_item], contexts=[ContextIn(external_id="long-ctx", messages=msgs)])
        create_study(s, StudySpec(name="bench", task="mcq", datasets=["pm"], seed=1, annotators_per_item=100))
        create_study(s, StudySpec(name="long", task="mcq", datasets=["long"], seed=1, annotators_per_item=100))
    print(f"database: {len(parsed.items)} PersonaMem items from {src[0].name} + 1 item with a 1,000,000-character "
          "context")


def child(mode: str, *args: str) -> dict[str, float]:
    t0 = time.time()
    out = subprocess.run([sys.executable, "-c", CHILD, repr(t0), mode, *args], capture_output=True, text=True,
                         cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    vals = {}
    for line in out.stdout.splitlines():
        if line.split()[:1] and line.split()[0] in ("FIRST", "PEAKMB", "BLOCKS"):
            vals[line.split()[0]] = float(line.split()[1])
    if "FIRST" not in vals:
        raise RuntimeError(out.stdout + out.stderr)
    return vals


async def decision_latencies(db: str, n: int) -> list[float]:
    """Post a decision key n times; time from the key event until the answer is committed, the next item's panel is
    mounted in place of the old one, and a screen refresh has run after that. Pilot's settling delays between
    keys are not part of the figure."""
    from textual import events

    from annotator.app import AnnotateApp

    app = AnnotateApp(db, "bench", "latency", show_timer=False)
    lat = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for i in range(n):
            before = app.session.index
            drawn = app.screen.items_drawn
            painted = asyncio.Event()
            key = "abcd"[i % 4]
            t = time.perf_counter()
            app.screen.post_message(events.Key(key, key))
            # wait for: the decision stored (index moved on) and the next item drawn in the panel
            while app.session.index == before or app.screen.items_drawn == drawn:
                await asyncio.sleep(0.001)
            app.screen.call_after_refresh(painted.set)  # then the first screen refresh that shows it
            await painted.wait()
            lat.append((time.perf_counter() - t) * 1000)
            await pilot.pause()
        rows = app.store.current_annotations(app.session.study.id, app.session.annotator.id)
        assert len(rows) == n, (len(rows), n)
    return lat


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="start-up runs of each app")
    ap.add_argument("--decisions", type=int, default=200, help="decision keys to time")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "bench.db")
        build_db(db)
        child("first", db, "bench", "warmup")  # warm the OS file cache once for both
        child("minimal")
        ours = [child("first", db, "bench", f"start{i}")["FIRST"] for i in range(args.runs)]
        base = [child("minimal")["FIRST"] for _ in range(args.runs)]
        m_ours, m_base = statistics.median(ours), statistics.median(base)
        print(f"start-up to first item: median {m_ours:.3f} s over {args.runs} runs (target < 1.0 s); minimal "
              f"Textual app {m_base:.3f} s; ratio {m_ours / m_base:.2f}x")
        lat = asyncio.run(decision_latencies(db, args.decisions))
        lat.sort()
        p95 = lat[int(0.95 * (len(lat) - 1))]
        print(f"decision key -> next item, answer committed: p50 {statistics.median(lat):.1f} ms, p95 {p95:.1f} ms, "
              f"max {lat[-1]:.1f} ms over {len(lat)} decisions (target p95 < 50 ms)")
        long = child("long", db, "long", "reader")
        print(f"long context (1,000,000 characters, 500 messages) open and scrolled: {long.get('BLOCKS', 0):.0f} "
              f"blocks mounted, first item after {long['FIRST']:.3f} s, peak RSS {long['PEAKMB']:.0f} MB "
              "(target < 300 MB)")


if __name__ == "__main__":
    main()
