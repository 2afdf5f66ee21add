"""Decision latency of the annotation TUI measured from outside, as an annotator sees it: the real `prefval annotate`
in a tmux pane, a decision key sent with `tmux send-keys`, the time until the pane's progress counter ("N/M done")
moves. Prints figures and ratios; asserts nothing. Needs tmux.

    python bench/tui_tmux.py [--decisions 60] [--scales 100000,160000] [--size 160x50]

Data: the same database as bench/tui.py (PersonaMem 32k questions, without conversations and with synthetic
conversations of each scale in characters per question; see that file). Each study is opened by a new annotator;
its first --decisions items in queue order (the study's seeded shuffle: a sample of the 589 questions) are decided.
Before each timed key the bench does what an annotator must do first and is not timed: when the screen says the
conversation's end has not been seen, End (the conversation pane has the focus at start), with a pause of 0.3 s
(reading time) before. The timed key is `a`; the figure is from just before `send-keys` until a `capture-pane` shows the
counter moved. Granularity: one capture-pane round trip (a few ms, printed). Ratio: each study's p95 over the p95
without conversations (issue 13's target: <= 1.5x).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

TMUX = ["tmux", "-L", f"prefval-bench-{os.getpid()}"]  # a private server: other tmux sessions untouched
DONE = re.compile(r"(\d+)/(\d+) done")


def capture(target: str) -> str:
    return subprocess.run([*TMUX, "capture-pane", "-p", "-t", target], capture_output=True, text=True).stdout


def done_count(screen: str) -> int | None:
    m = DONE.search(screen)
    return int(m.group(1)) if m else None


def wait_for(target: str, pred, timeout: float = 30.0) -> str:
    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        s = capture(target)
        if pred(s):
            return s
        time.sleep(0.002)
    raise TimeoutError(f"pane {target} did not reach the expected state:\n{capture(target)}")


def time_study(db: str, study: str, n: int, size: tuple[int, int], who: str) -> tuple[list[float], int]:
    """Returns (latencies in ms, keys pressed to see each item before deciding). Raises TimeoutError when the screen stops responding."""
    session = f"prefval-bench-{os.getpid()}"
    subprocess.run([*TMUX, "kill-session", "-t", session], capture_output=True)
    cmd = f"{sys.executable} -m annotator.cli annotate {study} --annotator {who} --db {db}"
    subprocess.run([*TMUX, "new-session", "-d", "-s", session, "-x", str(size[0]), "-y", str(size[1]),
                    "-c", str(HERE), cmd], check=True)
    lat: list[float] = []
    presses = 0
    try:
        screen = wait_for(session, lambda s: done_count(s) is not None)
        for _ in range(n):
            before = done_count(screen)
            time.sleep(0.3)  # reading time; the new item is drawn whole
            screen = capture(session)
            for _ in range(20):  # what an annotator does before deciding (not timed)
                if "scroll to see" not in screen:
                    break
                key = "End" if "end of the conversation" in screen else "PageDown"
                subprocess.run([*TMUX, "send-keys", "-t", session, key], check=True)
                presses += 1
                time.sleep(0.2)
                after = capture(session)
                if after.split("\n", 1)[1:] == screen.split("\n", 1)[1:]:  # (the header's timer ticks)
                    # the key went to another pane: move the focus on
                    subprocess.run([*TMUX, "send-keys", "-t", session, "Tab"], check=True)
                    presses += 1
                    time.sleep(0.2)
                    after = capture(session)
                screen = after
            t = time.perf_counter()
            subprocess.run([*TMUX, "send-keys", "-t", session, "a"], check=True)
            screen = wait_for(session, lambda s: (done_count(s) or 0) > before or "Study done" in s)
            lat.append((time.perf_counter() - t) * 1000)
            if done_count(screen) is None:
                break
    finally:
        subprocess.run([*TMUX, "kill-server"], capture_output=True)
    return lat, presses


def pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[int(q * (len(v) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decisions", type=int, default=60)
    ap.add_argument("--scales", default="100000,160000")
    ap.add_argument("--size", default="160x50", help="terminal columns x rows")
    args = ap.parse_args()
    if not shutil.which("tmux"):
        sys.exit("bench/tui_tmux.py: tmux is not installed")
    from bench.tui import build_db

    size = tuple(int(x) for x in args.size.split("x"))
    scales = [int(x) for x in args.scales.split(",") if x]
    t0 = time.perf_counter()
    for _ in range(20):
        capture("")  # warm
    rt = (time.perf_counter() - t0) / 20 * 1000
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "bench.db")
        studies = build_db(db, None, scales)
        rows = []
        for label, study in studies.items():
            if label == "long":
                continue
            lat, ends = time_study(db, study, args.decisions, size, "tmux-" + study)
            rows.append((label, lat, ends))
    print(f"terminal {size[0]}x{size[1]}; one capture-pane round trip {rt:.1f} ms (the granularity)")
    base = pct(rows[0][1], 0.95)
    for label, lat, ends in rows:
        label = "without conversations" if label == "bare" else "with " + label
        print(f"  {label:34s} p50 {pct(lat, 0.5):6.1f}  p95 {pct(lat, 0.95):6.1f}  max {max(lat):6.1f}  "
              f"over {len(lat)}  keys to see the items {ends}  p95 ratio {pct(lat, 0.95) / base:.2f}x")


if __name__ == "__main__":
    main()
