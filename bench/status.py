"""Benchmark of `prefval status` and of a new annotator's first open at scale (issue 11, Scale). Asserts nothing.

    python bench/status.py [--units 300000] [--keep PATH] [--figures-only]

Data (generated, written through storage in bulk): an MCQ dataset and a persona dataset; study "mcq-big" (MCQ,
a third of the units, 3 named annotators per item) and study "persona-big" (persona_filter, two thirds of the
units, 1 of 2 named annotators per item): 300k units and 500k assignments at the default size, of which about 60%
answered (a tenth of those changed once, so the log holds superseded rows), plus a few skips. Then a study
"open-100k" of 100k MCQ items that nobody has claimed yet.

Figures, each in a fresh child process: seconds of the work itself (after imports), seconds since the process
started, and peak resident memory (VmHWM):
1. `prefval status` (one line per study: progress only), `--format json`, and `prefval status mcq-big` /
   `persona-big` (that study's annotators and figures; run once, they are long), and `prefval report mcq-big`
   (Markdown: the same figures and quality table, rendered);
2. the baseline: a child that opens the same file and runs a bare `SELECT count(*)` over annotations and
   assignments: the ratios are status over that baseline;
3. a new annotator's first open of "open-100k": from Session start to the first item's view (the claim of the
   first batch included), as a ratio over the same baseline.
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CHILD = r"""
import sys, time, resource, io, contextlib
t0 = time.perf_counter()
mode, db = sys.argv[1], sys.argv[2]
c0 = time.process_time()
if mode == "baseline":
    from storage.store import Store
    t1, c1 = time.perf_counter(), time.process_time()
    with Store.open(db, mode="ro") as s:
        n = s.db.execute("SELECT count(*) FROM annotations").fetchone()[0]
        n += s.db.execute("SELECT count(*) FROM assignments").fetchone()[0]
elif mode in ("status", "report"):
    from annotator.cli import main
    from storage.store import Store
    import annotator.commands.status, annotator.tasks, reports.study_data
    t1, c1 = time.perf_counter(), time.process_time()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main([mode, "--db", db] + sys.argv[3:])
    assert code == 0, code
    n = len(buf.getvalue().splitlines())
else:  # first open of a new annotator: Session start to the first item's view
    from annotator.session import Session
    from storage.store import Store
    t1, c1 = time.perf_counter(), time.process_time()
    s = Store.open(db, mode="rw")
    sess = Session(s, "open-100k", sys.argv[3])
    v = sess.view()
    n = len(sess.queue)
t2, c2 = time.perf_counter(), time.process_time()
# VmHWM (peak resident set of this program), not ru_maxrss, which keeps the parent's peak across fork + exec
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")]
peak = int(hwm[0].split()[1]) / 1024 if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"RESULT {t2 - t1:.4f} {t2 - t0:.4f} {peak:.1f} {n} {c2 - c1:.4f}")
"""


def build(path: str, n_units: int) -> None:
    """Write the benchmark database (see the module docstring)."""
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec
    from storage.models import AnnotationIn, ItemIn
    from storage.store import Store

    rng = random.Random(7)
    n_mcq, n_persona = n_units // 3, n_units - n_units // 3
    store = Store.open(path, mode="create")
    store.import_items("mcq-items", "jsonl", (ItemIn(
        external_id=f"q{i}", kind="mcq",
        payload={"question": f"Which one does user {i} prefer?", "options": ["tea", "coffee", "water", "juice"],
                 "correct_index": i % 4}) for i in range(max(n_mcq, 100_000))))
    store.import_items("personas", "jsonl", (ItemIn(
        external_id=f"p{i}", kind="persona_record",
        payload={"text": f"Person {i} enjoys hiking on weekends.", "record_type": "persona"})
        for i in range(n_persona)))
    create_study(store, StudySpec(name="mcq-big", task="mcq", datasets=["mcq-items"], sample=n_mcq, seed=1,
                                  annotators_per_item=3, annotators=["ana", "bo", "cy"]))
    create_study(store, StudySpec(name="persona-big", task="persona_filter", datasets=["personas"], seed=2,
                                  annotators_per_item=1, annotators=["dee", "eli"]))
    create_study(store, StudySpec(name="open-100k", task="mcq", datasets=["mcq-items"], sample=100_000, seed=3,
                                  annotators_per_item=1))
    rows = []
    for name in ("mcq-big", "persona-big"):
        study = store.get_study(name)
        for a in store.assignments(study.id):
            r = rng.random()
            if r > 0.62:
                continue
            if name == "mcq-big":
                c = rng.randrange(4)
                ans = {"choice": c, "letter": "ABCD"[c], "shown": "ABCD"[c], "cant_tell": False}
            else:
                ans = {"decision": "keep"} if rng.random() < 0.8 else {"decision": "drop", "reasons": ["off-topic"]}
            status = "skipped" if r > 0.6 else "answered"
            rows.append(AnnotationIn(study_id=study.id, unit_id=a.unit_id, item_id=a.unit_id, annotator_id=a.annotator_id,
                                     assignment_id=a.id, status=status, answer=None if status == "skipped" else ans,
                                     seconds=round(rng.uniform(2, 40), 2)))
            if status == "answered" and rng.random() < 0.1:  # a changed answer: a second row
                rows.append(rows[-1].model_copy())
    units = {}
    for name in ("mcq-big", "persona-big"):
        units.update({u.id: u.item_id for u in store.units(store.get_study(name).id)})
    for r in rows:
        r.item_id = units[r.unit_id]
    store.append_annotations(rows)
    store.close()


def child(mode: str, db: str, *extra: str) -> tuple[float, float, float, int, float]:
    """(seconds of the work after imports, seconds since process start, peak MB, lines or queue length, CPU
    seconds of the work: user + system, which other programs on a busy machine do not inflate)."""
    out = subprocess.run([sys.executable, "-c", CHILD, mode, db, *extra], capture_output=True, text=True,
                         cwd=REPO, check=True).stdout
    line = [x for x in out.splitlines() if x.startswith("RESULT ")][-1].split()
    return float(line[1]), float(line[2]), float(line[3]), int(line[4]), float(line[5])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--units", type=int, default=300_000)
    ap.add_argument("--keep", help="build (or reuse) the database at this path instead of a temporary one")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--no-figures", action="store_true", help="skip the (long) runs with a study's figures")
    ap.add_argument("--figures-only", action="store_true",
                    help="only the runs with a study's figures (status mcq-big / persona-big, report mcq-big)")
    args = ap.parse_args()
    tmp = tempfile.TemporaryDirectory()
    path = args.keep or os.path.join(tmp.name, "bench.db")
    if not os.path.exists(path):
        t = time.perf_counter()
        build(path, args.units)
        print(f"built {path} in {time.perf_counter() - t:.1f} s")
    from storage.store import Store
    Store.open(path, mode="rw").close()  # a file kept from an older prefval: upgraded, as reading commands refuse it
    with Store.open(path, mode="ro") as s:
        counts = {t: s.db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                  for t in ("study_items", "assignments", "annotations")}
    print("units {study_items:,}  assignments {assignments:,}  annotation rows {annotations:,}".format(**counts))

    def best(mode: str, *extra: str) -> tuple[float, float, float, int, float]:
        return min(child(mode, path, *extra) for _ in range(args.runs))

    base = best("baseline")
    print(f"{'':<34}{'work':>9}  {'work cpu':>9}  {'process':>9}  {'peak':>9}   ratios over the baseline "
          "(work time, peak memory)")
    print(f"{'baseline: bare count(*) pass':<34}{base[0]:8.3f}s  {base[4]:8.3f}s  {base[1]:8.3f}s  {base[2]:7.1f}MB")
    for label, mode, extra in (("status (progress)", "status", ()),
                               ("status --format json (progress)", "status", ("--format", "json")),
                               ("status mcq-big (figures)", "status", ("mcq-big",)),
                               ("status persona-big (figures)", "status", ("persona-big",)),
                               ("report mcq-big (figures, md)", "report", ("mcq-big",)),
                               ("first open of open-100k", "first", (f"newcomer{random.randrange(10**6)}",))):
        repeat = mode == "status" and len(extra) != 1  # figure runs are long: once
        figures = mode == "report" or (mode == "status" and not repeat)
        if (figures and args.no_figures) or (not figures and args.figures_only):
            continue
        t, total, mb, n, cpu = best(mode, *extra) if repeat else child(mode, path, *extra)
        print(f"{label:<34}{t:8.3f}s  {cpu:8.3f}s  {total:8.3f}s  {mb:7.1f}MB   x{t / base[0]:6.1f} time  x{mb / base[2]:4.1f} memory"
              f"   ({n} {'items in queue' if mode == 'first' else 'lines'})")


if __name__ == "__main__":
    main()
