"""Benchmark of the annotation TUI on the real case: PersonaMem questions with their conversations. Prints figures,
each beside its baseline and as a ratio; asserts nothing.

    python bench/tui.py [--items N] [--decisions N] [--rounds N] [--runs N] [--scales 10000,100000,160000,1000000]
                        [--sizes 100,100000] [--repo PATH]

Data: the PersonaMem 32k questions (../shared/datasets/personamem/questions_32k.csv; the bundled sample when absent).
Their conversations (shared_contexts_32k.jsonl) are not available, so the bench writes synthetic ones of the
published shape: one per shared_context_id, as many messages as the largest end_index_in_shared_context of its
questions, a system message then alternating user/assistant turns of pseudo-words, sized so that a question sees
about S characters for each scale S (the published context_length_in_letters of the 32k split runs from 88k to 164k).
The same questions are imported once without any conversation (the baseline) and once per scale.

Figures:
1. start-up: seconds from process start to the first item on screen (a child process per run, headless, 120x40), for a
   minimal Textual app, for the questions without conversations and for the questions with the largest scale;
   ratios: prefval over Textual, and with a conversation over without (target <= 1.5); wall-clock and CPU seconds
   (CPU: of the child process, less disturbed by other programs on a shared machine), runs interleaved; compiled
   modules kept between runs in a folder of the bench, as an install keeps them; and the questions without
   conversations through `prefval annotate` (the command as a user starts it: its parser and checks included);
2. decision key -> next item on screen with the answer committed (ms, p50/p95/max), without conversations and
   with each scale; ratio of each p95 to the baseline's (target <= 1.5, and flat across scales); timed in --rounds
   rounds in which the studies take turns (a busy spell of the machine hits them alike), each round resuming the
   same annotator, its first key untimed; beside the wall clock, the CPU time of the process per decision (what
   the decision cost, little disturbed by other programs) and its p95 ratio;
3. flat in the study's size: studies of --sizes MCQ items (synthetic questions of PersonaMem's length, no
   conversation), each item assigned to two annotators by name and already answered by one of them (a study in
   progress); start-up (also through `prefval annotate`) and decision keys of the other: each figure and its ratio
   to the smallest study's; and the start-up of the annotator who answered every item (one run per size);
4. scrolling a 1,000,000-character conversation (500 messages) from top to bottom by PageDown presses in a child
   process: presses, seconds, resident memory (MB) after the first item, at each quarter and at the end (ratio to
   the start; flat means ~1.0), and the time for one End press on a fresh view.
"""
from __future__ import annotations

import argparse
import asyncio
import csv
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
WORDS = ("music production software weekend plan therapist patient favorite recently tried learned feel about "
         "really think maybe because morning garden recipe travel friends family project budget hiking ocean "
         "painting guitar pacific sounds event blend modern beats novel chapter coffee evening").split()

CHILD = r"""
import sys, time
t0 = float(sys.argv[1])
mode = sys.argv[2]


def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 1e6


SIZE = (120, 40)  # both apps: a fixed terminal size (headless, Textual's first guess and its driver's differed by a
# line, and the resize that followed laid out and painted every screen a second time, which no terminal does)

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
            print(f"CPU {time.process_time():.4f}")
            self.exit()
    Minimal().run(headless=True, size=SIZE)
elif mode == "first":
    db, study, who = sys.argv[3], sys.argv[4], sys.argv[5]
    from annotator.app import AnnotateApp
    class Timed(AnnotateApp):
        def on_mount(self):
            # Textual calls the on_mount of every class in the MRO: AnnotateApp's runs after this one (a super() call
            # here pushed a second annotation screen, and the figure counted two screens built)
            self.call_after_refresh(self.first)
        def first(self):
            drawn = getattr(self.screen, "items_drawn", None)
            if drawn == 0 or (drawn is None and not self.session.finished):  # no item drawn yet: after the next refresh
                self.call_after_refresh(self.first)
                return
            print(f"FIRST {time.time() - t0:.4f}")
            print(f"CPU {time.process_time():.4f}")
            self.exit()
    Timed(db, study, who, show_timer=False).run(headless=True, size=SIZE)
elif mode == "cli":  # the user's path: `prefval annotate STUDY --annotator WHO --db DB`, its app run headless
    import importlib.machinery
    import os
    db, study, who = sys.argv[3], sys.argv[4], sys.argv[5]

    def timed(app_class):
        def run_checked(self, **kw):
            def first():
                drawn = getattr(self.screen, "items_drawn", None)
                if drawn == 0 or (drawn is None and not self.session.finished):
                    self.call_after_refresh(first)
                    return
                with open(os.environ["BENCH_RESULT"], "w") as out:  # stdout is the pseudo-terminal
                    print(f"FIRST {time.time() - t0:.4f}", file=out)
                    print(f"CPU {time.process_time():.4f}", file=out)
                self.exit()
            self.call_later(self.call_after_refresh, first)
            self.run(headless=True, size=SIZE)
        app_class.run_checked = run_checked

    class Hook:  # patches AnnotateApp when the command imports it, so that every import keeps its own place
        def find_spec(self, name, path, target=None):
            if name != "annotator.app":
                return None
            sys.meta_path.remove(self)
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            run = spec.loader.exec_module
            def exec_module(module):
                run(module)
                timed(module.AnnotateApp)
            spec.loader.exec_module = exec_module
            return spec
    sys.meta_path.insert(0, Hook())
    from annotator.cli import main
    main(["annotate", study, "--annotator", who, "--db", db] + (["--new-annotator"] if sys.argv[6:] == ["new"] else []))
else:  # scroll: PageDown from top to bottom, then End on a fresh item view
    import asyncio
    db, study, who = sys.argv[3], sys.argv[4], sys.argv[5]
    from annotator.app import AnnotateApp

    async def main():
        app = AnnotateApp(db, study, who, show_timer=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            from textual.containers import ScrollableContainer
            from annotator.widgets.context import ContextView
            view = app.screen.query(ContextView).first()
            view.focus()
            await pilot.pause()
            print(f"RSS0 {rss_mb():.1f}")
            presses, t, quarter = 0, time.perf_counter(), 1
            while view.scroll_y < view.max_scroll_y and presses < 100000:
                await pilot.press("pagedown")
                presses += 1
                if view.max_scroll_y and view.scroll_y >= quarter * view.max_scroll_y / 4:
                    print(f"RSSQ{quarter} {rss_mb():.1f}")
                    quarter += 1
            await pilot.pause()
            print(f"SCROLLS {time.perf_counter() - t:.3f}")
            print(f"PRESSES {presses}")
            print(f"RSSEND {rss_mb():.1f}")
            print(f"ATEND {int(view.scroll_y >= view.max_scroll_y)}")
            await pilot.press("home")
            await pilot.pause()
            t = time.perf_counter()
            await pilot.press("end")
            await pilot.pause()
            print(f"ENDKEY {time.perf_counter() - t:.4f}")
            print(f"ENDOK {int(view.scroll_y >= view.max_scroll_y > 0)}")
    asyncio.run(main())
"""


def synthetic_text(rng: random.Random, n_chars: int) -> str:
    """Pseudo-words in sentences, exactly n_chars characters."""
    out, size = [], 0
    while size < n_chars:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))).capitalize() + ". "
        out.append(sentence)
        size += len(sentence)
    return "".join(out)[:n_chars]


def read_questions(limit: int | None) -> tuple[Path, list[dict]]:
    real = HERE.parent / "shared" / "datasets" / "personamem" / "questions_32k.csv"
    src = real if real.exists() else HERE / "sample_data" / "personamem" / "questions_sample.csv"
    with open(src, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return src, rows[:limit] if limit else rows


def build_db(path: str, limit: int | None, scales: list[int]) -> dict[str, str]:
    """The benchmark database. Returns {label: study name}: "bare" (no conversations), one study per scale, and
    "long" (one question on a 1,000,000-character conversation of 500 messages)."""
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec
    from storage.importers import personamem
    from storage.models import ContextIn, ItemIn, Message
    from storage.payloads import McqPayload
    from storage.store import Store

    src, rows = read_questions(limit)
    tmp_csv = Path(path).with_suffix(".csv")
    with open(tmp_csv, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    parsed = personamem.read([tmp_csv])
    ends: dict[str, int] = {}
    for r in rows:
        cid = r["shared_context_id"]
        ends[cid] = max(ends.get(cid, 0), int(r["end_index_in_shared_context"]))
    studies = {"bare": "bench-bare"}
    with Store.open(path, mode="create") as s:
        s.import_items("bare", "personamem", [i.model_copy(update={"context_external_id": None,
                                                                    "context_end": None})
                                              for i in parsed.items])
        create_study(s, StudySpec(name="bench-bare", task="mcq", datasets=["bare"], seed=1,
                                  annotators_per_item=100))
        for scale in scales:
            rng = random.Random(scale)
            contexts = []
            for cid, n in ends.items():
                per = max(20, scale // max(1, n))
                msgs = [Message(role="system", content="Current user persona: " + synthetic_text(rng, per))]
                msgs += [Message(role="user" if k % 2 else "assistant",
                                 content=("Patient: " if k % 2 else "Therapist: ") + synthetic_text(rng, per))
                         for k in range(1, n)]
                contexts.append(ContextIn(external_id=cid, messages=msgs))
            ds = f"ctx{scale}"
            s.import_items(ds, "personamem", parsed.items, contexts=contexts)
            create_study(s, StudySpec(name=f"bench-{ds}", task="mcq", datasets=[ds], seed=1,
                                      annotators_per_item=100))
            studies[f"{scale:,} characters"] = f"bench-{ds}"
        rng = random.Random(7)
        long_msgs = [Message(role="user" if k % 2 == 0 else "assistant", content=synthetic_text(rng, 2000))
                     for k in range(500)]
        long_item = ItemIn(external_id="long", kind="mcq", context_external_id="long-ctx", context_end=500,
                           payload=McqPayload(question="Which option fits?", options=["one", "two", "three", "four"],
                                              correct_index=0).model_dump(exclude_none=True))
        s.import_items("long", "jsonl", [long_item], contexts=[ContextIn(external_id="long-ctx", messages=long_msgs)])
        create_study(s, StudySpec(name="long", task="mcq", datasets=["long"], seed=1, annotators_per_item=100))
    print(f"database: {len(parsed.items)} PersonaMem questions from {src.name} on {len(ends)} contexts, without "
          f"conversations and with synthetic ones of {', '.join(f'{x:,}' for x in scales)} characters per question; "
          "1 question on a 1,000,000-character conversation")
    return studies


def build_size_db(path: str, sizes: list[int]) -> dict[int, str]:
    """Studies of each size in `sizes`: n MCQ items of synthetic text (a 130-character question, four options
    of 90), assigned by name to "ana" and "bo", every item already answered by "bo". Returns {size: study}."""
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec
    from storage.models import AnnotationIn, ItemIn
    from storage.payloads import McqPayload
    from storage.store import Store

    rng = random.Random(11)
    out = {}
    with Store.open(path, mode="create") as s:
        for n in sizes:
            items = [ItemIn(external_id=f"q{i}", kind="mcq", payload=McqPayload(
                question=synthetic_text(rng, 130) + "?", options=[synthetic_text(rng, 90) for _ in range(4)],
                correct_index=i % 4).model_dump(exclude_none=True)) for i in range(n)]
            s.import_items(f"size{n}", "jsonl", items)
            study = create_study(s, StudySpec(name=f"size{n}", task="mcq", datasets=[f"size{n}"], seed=1,
                                              annotators=["ana", "bo"], annotators_per_item=2))
            bo = s.ensure_annotator("bo")
            s.append_annotations(AnnotationIn(study_id=study.id, unit_id=a.unit_id, item_id=item_id,
                                              annotator_id=bo.id, assignment_id=a.id, status="answered",
                                              answer={"choice": 0, "letter": "A", "shown": "A", "cant_tell": False},
                                              source="human", seconds=3.0)
                                 for a, item_id in _with_items(s, study.id, bo.id))
            out[n] = f"size{n}"
    print(f"size database: studies of {', '.join(f'{n:,}' for n in sizes)} MCQ items, each assigned to ana and bo, "
          "answered by bo")
    return out


def _with_items(store, study_id: str, annotator_id: str):
    units = {u.id: u.item_id for u in store.units(study_id)}
    for a in store.assignments(study_id, annotator_id):
        yield a, units[a.unit_id]


PYCACHE: str | None = None  # where the child processes keep their compiled modules (set by main)


def child(repo: Path, mode: str, *args: str) -> dict[str, float]:
    """Run CHILD in a fresh interpreter. Its compiled modules (.pyc) are kept under PYCACHE, as an installed
    prefval keeps them in __pycache__: the warm-up runs compile, the timed ones load. (With PYTHONDONTWRITEBYTECODE
    set, as on some machines, every start-up compiled prefval's ~30 modules from source again, ~40 ms that a user
    never pays, while Textual's own modules, installed with their .pyc, loaded compiled: the start-up ratio
    compared compiling with loading.)"""
    env = {**os.environ, "PYTHONPATH": str(repo)}
    if PYCACHE:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = PYCACHE
    if mode == "cli":  # `prefval annotate` opens only on a terminal: a pseudo-terminal as stdin/stdout/stderr
        return cli_child(repo, env, *args)
    t0 = time.time()
    out = subprocess.run([sys.executable, "-c", CHILD, repr(t0), mode, *args], capture_output=True, text=True,
                         cwd=repo, env=env, timeout=900)
    return parse_child(out.stdout, out.stdout + out.stderr)


def parse_child(text: str, context: str) -> dict[str, float]:
    """The child's `NAME value` lines as a dict; RuntimeError with the child's output when it printed none."""
    vals = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isupper():
            vals[parts[0]] = float(parts[1])
    if not vals:
        raise RuntimeError(context)
    return vals


def cli_child(repo: Path, env: dict, *args: str) -> dict[str, float]:
    """CHILD in mode "cli" with a pseudo-terminal as its stdin, stdout and stderr (as a user's shell gives it; the
    command refuses to open its screen otherwise), its figures written to a temporary file (BENCH_RESULT)."""
    import pty
    import threading

    master, slave = pty.openpty()
    fd, result = tempfile.mkstemp(prefix="prefval-bench-", suffix=".txt")
    os.close(fd)
    seen = []

    def drain() -> None:  # read what the command writes to its terminal, so that it never blocks on a full buffer
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                return
            if not chunk:
                return
            seen.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        t0 = time.time()
        proc = subprocess.run([sys.executable, "-c", CHILD, repr(t0), "cli", *args], stdin=slave, stdout=slave,
                              stderr=slave, cwd=repo, env={**env, "BENCH_RESULT": result}, timeout=900)
        os.close(slave)
        slave = -1
        reader.join(timeout=5)
        with open(result) as fh:
            text = fh.read()
        return parse_child(text, f"exit {proc.returncode}: " + b"".join(seen).decode(errors="replace"))
    finally:
        if slave >= 0:
            os.close(slave)
        os.close(master)
        os.unlink(result)


async def decision_latencies(db: str, study: str, n: int, who: str = "latency",
                             warmup: int = 0) -> tuple[list[float], list[float]]:
    """Post a decision key n times (after `warmup` untimed ones: the first item drawn after opening the app builds
    what the ones after it reuse); time from the key event until the answer is committed, the next item is drawn
    in the panel, and a screen refresh has run after that. Pilot's settling delays between keys are not part of
    the figure. The annotator resumes where an earlier call left off. Returns (wall-clock ms, CPU ms of this
    process) per decision: CPU time is what the decision cost, less disturbed by other programs on a shared
    machine than the wall clock."""
    from textual import events

    from annotator.app import AnnotateApp
    from tests.tui_helpers import see_all

    app = AnnotateApp(db, study, who, show_timer=False)
    lat, cpu = [], []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        rows_before = len(app.store.current_annotations(app.session.study.id, app.session.annotator.id))
        for i in range(warmup + n):
            if app.session.finished or not hasattr(app.screen, "items_drawn"):
                break
            await see_all(pilot)  # a decision key counts only once the whole question and options were on screen
            await pilot.pause()  # what the scrolling left to draw is drawn (a reader takes seconds to decide)
            before = app.session.index
            drawn = app.screen.items_drawn
            painted = asyncio.Event()
            key = "abcd"[i % 4]
            t, c = time.perf_counter(), time.process_time()
            app.screen.post_message(events.Key(key, key))
            while app.session.index == before or getattr(app.screen, "items_drawn", drawn) == drawn:
                if app.session.finished:  # the last item of a study leads to the summary: no item drawn
                    break
                await asyncio.sleep(0.0005)
            app.screen.call_after_refresh(painted.set)
            await painted.wait()
            if i >= warmup:
                lat.append((time.perf_counter() - t) * 1000)
                cpu.append((time.process_time() - c) * 1000)
            await pilot.pause()
        rows = app.store.current_annotations(app.session.study.id, app.session.annotator.id)
        assert len(rows) - rows_before == warmup + len(lat), (len(rows), rows_before, len(lat))
    return lat, cpu


def pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[int(q * (len(v) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=None, help="questions to import (default: all)")
    ap.add_argument("--runs", type=int, default=5, help="start-up runs of each app")
    ap.add_argument("--decisions", type=int, default=150, help="decision keys to time per study")
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds the decision keys are timed in, the studies taking turns in each")
    ap.add_argument("--scales", default="10000,100000,160000,1000000",
                    help="characters of conversation per question, comma-separated")
    ap.add_argument("--sizes", default="100,100000",
                    help="items of the studies for the study-size figure, comma-separated (empty: skip it)")
    ap.add_argument("--repo", type=Path, default=HERE, help="the prefval checkout to time (default: this one)")
    args = ap.parse_args()
    sys.path.insert(0, str(args.repo))
    scales = [int(x) for x in args.scales.split(",") if x]
    global PYCACHE
    with tempfile.TemporaryDirectory() as tmp:
        PYCACHE = os.path.join(tmp, "pycache")
        db = os.path.join(tmp, "bench.db")
        t = time.perf_counter()
        studies = build_db(db, args.items, scales)
        print(f"(built in {time.perf_counter() - t:.1f} s; code timed: {args.repo})")
        big = studies[f"{max(scales):,} characters"] if scales else "bench-bare"
        child(args.repo, "first", db, "bench-bare", "warmup")  # warm the OS file cache once for all
        child(args.repo, "first", db, big, "warmup")
        child(args.repo, "minimal")
        base, bare, ctx, cli = [], [], [], []
        for i in range(args.runs):  # interleaved, so that a change in the machine's load hits them all alike
            base.append(child(args.repo, "minimal"))
            bare.append(child(args.repo, "first", db, "bench-bare", f"s{i}"))
            ctx.append(child(args.repo, "first", db, big, f"s{i}"))
            cli.append(child(args.repo, "cli", db, "bench-bare", f"c{i}", "new"))
        for key, what in (("FIRST", "wall"), ("CPU", "CPU")):
            m_base, m_bare, m_ctx, m_cli = (statistics.median(r[key] for r in x) for x in (base, bare, ctx, cli))
            print(f"start-up to first item, {what} seconds (median of {args.runs}): minimal Textual app {m_base:.3f} s; "
                  f"questions without conversations {m_bare:.3f} s ({m_bare / m_base:.2f}x Textual; target <= 2x)" + (
                      f"; with {max(scales):,}-character conversations {m_ctx:.3f} s ({m_ctx / m_bare:.2f}x without; "
                      "target <= 1.5x)" if scales else "") +
                  f"; the same through `prefval annotate` {m_cli:.3f} s ({m_cli / m_base:.2f}x Textual)")
        rounds = max(1, min(args.rounds, args.decisions))
        print(f"decision key -> next item, answer committed (ms; {args.decisions} keys per study in {rounds} "
              "interleaved rounds, each opening the app again and deciding one item untimed first):")
        wall = {label: [] for label in studies}
        cpu = {label: [] for label in studies}
        for r in range(rounds):  # interleaved, so that a change in the machine's load hits every study alike
            n = args.decisions // rounds + (1 if r < args.decisions % rounds else 0)
            for label, study in studies.items():
                w, c = asyncio.run(decision_latencies(db, study, n, warmup=1))
                wall[label] += w
                cpu[label] += c
        ref = ref_cpu = None
        for label in studies:
            lat, c = wall[label], cpu[label]
            p50, p95, c50, c95 = statistics.median(lat), pct(lat, 0.95), statistics.median(c), pct(c, 0.95)
            ref, ref_cpu = ref or p95, ref_cpu or c95
            print(f"  {'without conversations' if label == 'bare' else 'with ' + label:<34} p50 {p50:6.1f}  "
                  f"p95 {p95:6.1f}  max {max(lat):6.1f}  over {len(lat)}  p95 ratio {p95 / ref:.2f}x; CPU p50 "
                  f"{c50:5.1f} p95 {c95:5.1f} ratio {c95 / ref_cpu:.2f}x "
                  f"{'(baseline)' if label == 'bare' else '(target <= 1.5x)'}")
        sizes = [int(x) for x in args.sizes.split(",") if x]
        if sizes:
            size_db = os.path.join(tmp, "sizes.db")
            t = time.perf_counter()
            size_studies = build_size_db(size_db, sizes)
            print(f"(built in {time.perf_counter() - t:.1f} s)")
            child(args.repo, "first", size_db, size_studies[sizes[0]], "ana")  # warm the file cache
            runs = {n: [] for n in size_studies}
            cli_runs = {n: [] for n in size_studies}
            for _ in range(args.runs):  # interleaved
                for n, st in size_studies.items():
                    runs[n].append(child(args.repo, "first", size_db, st, "ana"))
                    cli_runs[n].append(child(args.repo, "cli", size_db, st, "ana"))
            first = {n: statistics.median(r["FIRST"] for r in rs) for n, rs in runs.items()}
            first_cpu = {n: statistics.median(r["CPU"] for r in rs) for n, rs in runs.items()}
            first_cli = {n: statistics.median(r["FIRST"] for r in rs) for n, rs in cli_runs.items()}
            print("study size: start-up to first item (median of {}) and decision key -> next item (ms):".format(
                args.runs))
            ref_first, ref_cpu = first[sizes[0]], first_cpu[sizes[0]]
            ref95 = None
            for n, st in size_studies.items():
                lat, _ = asyncio.run(decision_latencies(size_db, st, min(args.decisions, n - 1), who="ana"))
                p50, p95 = statistics.median(lat), pct(lat, 0.95)
                ref95 = ref95 or p95
                print(f"  {n:>9,} items: start-up {first[n]:.3f} s ({first[n] / ref_first:.2f}x; CPU "
                      f"{first_cpu[n]:.3f} s, {first_cpu[n] / ref_cpu:.2f}x; through `prefval annotate` "
                      f"{first_cli[n]:.3f} s, {first_cli[n] / first_cli[sizes[0]]:.2f}x)  decisions p50 "
                      f"{p50:6.1f}  p95 {p95:6.1f}  over {len(lat)}  p95 ratio {p95 / ref95:.2f}x "
                      f"{'(baseline)' if n == sizes[0] else '(flat = 1.0x)'}")
            # the other annotator, who answered every item, opening the study again (one run each: slow when not flat)
            back = {n: child(args.repo, "first", size_db, st, "bo") for n, st in size_studies.items()}
            print("  reopened by the annotator who answered every item (one run): " + "; ".join(
                f"{n:,} items {back[n]['FIRST']:.3f} s ({back[n]['FIRST'] / back[sizes[0]]['FIRST']:.2f}x; CPU "
                f"{back[n]['CPU']:.3f} s)" for n in size_studies) + " (flat = 1.0x)")
        sc = child(args.repo, "scroll", db, "long", "reader")
        if "PRESSES" in sc:
            quarters = " ".join(f"{sc[k]:.0f}" for k in ("RSSQ1", "RSSQ2", "RSSQ3", "RSSQ4") if k in sc)
            print(f"scroll a 1,000,000-character conversation (500 messages) to its end by PageDown: "
                  f"{sc['PRESSES']:.0f} presses in {sc['SCROLLS']:.1f} s ({1000 * sc['SCROLLS'] / sc['PRESSES']:.1f} "
                  f"ms each, Pilot included), reached the end: {'yes' if sc['ATEND'] else 'NO'}; resident memory "
                  f"{sc['RSS0']:.0f} MB at the start, {quarters} MB at each quarter, {sc['RSSEND']:.0f} MB at the end "
                  f"({sc['RSSEND'] / sc['RSS0']:.2f}x the start; flat = 1.0x); one End press on a fresh view: "
                  f"{1000 * sc['ENDKEY']:.0f} ms, at the end: {'yes' if sc['ENDOK'] else 'NO'}")
        else:
            print(f"scroll: the view could not be scrolled by keys ({sc})")


if __name__ == "__main__":
    main()
