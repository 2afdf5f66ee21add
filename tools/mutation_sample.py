"""Mutation kill ratio of storage/, reports/stats/ and annotator/tasks/ on a seeded random sample of mutants.

A full mutmut run (about 18,000 mutants) does not fit on a small machine, so this script estimates the kill ratio of
each module group from a simple random sample of its mutants, drawn with a fixed seed, and gives a 95% Wilson score
interval (Wilson 1927, "Probable inference, the law of succession, and statistical inference", JASA 22:209-212).
Whole files can be run instead of sampled (`--files`), which gives their exact ratio.

Steps: (1) mutmut generates every mutant into `mutants/` (only files changed since the last run are regenerated);
(2) the sample is drawn per group from the sorted mutant names with `random.Random(seed)`; (3) `mutmut run NAMES...`
runs exactly those mutants that have no verdict yet or did not die (`--rerun` runs all of them again), under
`nice -n 10`; (4) the verdicts stored by mutmut in `mutants/**/*.meta` are counted.

Counting: killed and timeout count as detected; survived, "no tests" (no selected test reaches the mutated
function) and suspicious/segfault as not detected; "not checked" mutants are left out and reported. Mutants
marked `# pragma: no mutate` are never generated and so are not in the denominator (the README says how many
there are and why).

Not part of the prefval package; needs the `[mutation]` extra (mutmut 3.8). Run from the repository root:

    python tools/mutation_sample.py --per-group 120 --seed 13        # sample, run, report
    python tools/mutation_sample.py --per-group 120 --seed 13 --report   # report only, run nothing
    python tools/mutation_sample.py --files reports/stats/fleiss.py    # every mutant of one file
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import random
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's prefval, not an installed one

GROUPS = {"storage": "storage.", "reports/stats": "reports.stats.", "annotator/tasks": "annotator.tasks."}
DETECTED = {"killed", "timeout", "caught by type check"}
UNDETECTED = {"survived", "no tests", "suspicious", "segfault"}


def wilson(k: int, n: int) -> tuple[float, float]:
    """95% Wilson score interval (low, high) of k/n (Wilson 1927); (0.0, 1.0) when n is 0."""
    from annotator.tasks.persona_filter.figures import wilson_interval

    lo, hi = wilson_interval(k, n)
    return (0.0, 1.0) if lo is None else (lo, hi)


def generate() -> None:
    """Let mutmut write every mutant into mutants/ (unchanged files are kept with their verdicts)."""
    import os

    from mutmut.__main__ import create_mutants, set_mutant_under_test, store_lines_covered_by_tests
    from mutmut.utils.file_utils import copy_src_dir, setup_source_paths

    set_mutant_under_test("mutant_generation")
    os.makedirs("mutants", exist_ok=True)
    copy_src_dir()  # (not the also_copy folders: `mutmut run` copies them, and names need only the sources)
    setup_source_paths()
    store_lines_covered_by_tests()
    create_mutants(2)


def load() -> dict[str, tuple[str, int | None, float | None]]:
    """Every generated mutant: name -> (source file, mutmut exit code or None, seconds it took or None)."""
    out: dict[str, tuple[str, int | None, float | None]] = {}
    for meta in sorted(Path("mutants").rglob("*.py.meta")):
        data = json.loads(meta.read_text())
        source = str(meta.relative_to("mutants"))[: -len(".meta")]
        if not Path(source).is_file():  # left from a file since moved or deleted
            continue
        durations = data.get("durations_by_key", {})
        for name, code in data["exit_code_by_key"].items():
            out[name] = (source, code, durations.get(name))
    return out


def group_of(name: str) -> str | None:
    return next((g for g, prefix in GROUPS.items() if name.startswith(prefix)), None)


def draw(mutants: dict, per_group: int, seed: int, groups: list[str]) -> list[str]:
    """A simple random sample of per_group mutant names from each group (all of them if the group is smaller)."""
    rng = random.Random(seed)
    chosen: list[str] = []
    for g in groups:
        names = sorted(n for n in mutants if group_of(n) == g)
        chosen += names if len(names) <= per_group else sorted(rng.sample(names, per_group))
    return chosen


def run(names: list[str], max_children: int) -> float:
    """mutmut run on exactly these names, niced; returns wall seconds."""
    mutmut = shutil.which("mutmut") or str(Path(sys.executable).with_name("mutmut"))
    start = time.monotonic()
    for i in range(0, len(names), 400):  # keep the command line short
        subprocess.run(["nice", "-n", "10", mutmut, "run", "--max-children", str(max_children), *names[i : i + 400]])
    return time.monotonic() - start


def status(code: int | None) -> str:
    from mutmut.stats import status_by_exit_code

    return status_by_exit_code[code]


def line(label: str, counts: dict[str, int], total: int | None = None) -> str:
    k = sum(counts[s] for s in DETECTED)
    n = k + sum(counts[s] for s in UNDETECTED)
    lo, hi = wilson(k, n)
    ratio = f"{k / n:6.1%}" if n else "   n/a"
    of = f"{n}/{total}" if total is not None else f"{n}"
    return (
        f"{label:44} {of:>10} {counts['killed']:6} {counts['timeout']:4} {counts['survived']:6} {counts['no tests']:5}"
        f" {counts['suspicious'] + counts['segfault']:4} {counts['not checked']:5}  {ratio}  [{lo:.1%}, {hi:.1%}]"
    )


def report(mutants: dict, names: list[str], survivors: bool) -> None:
    by_group: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    by_file: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    times = []
    for name in names:
        source, code, seconds = mutants[name]
        s = status(code)
        by_group[group_of(name) or "other"][s] += 1
        by_file[source][s] += 1
        if seconds is not None and s != "not checked":
            times.append(seconds)
    totals = defaultdict(int)
    for name in mutants:
        totals[group_of(name) or "other"] += 1
    head = f"{'':44} {'n/total':>10} {'killed':>6} {'t/o':>4} {'surv.':>6} {'none':>5} {'susp':>4} {'unrun':>5}  ratio   95% Wilson"
    print(head)
    for g in by_group:
        print(line(g, by_group[g], totals[g]))
    print()
    print(head.replace("n/total", "      n"))
    for f in sorted(by_file):
        print(line(f, by_file[f]))
    if times:
        times.sort()
        print(f"\nseconds per mutant (mutmut's own timing, {len(times)} mutants): median {times[len(times) // 2]:.2f},"
              f" mean {sum(times) / len(times):.2f}, max {times[-1]:.1f}")
    if survivors:
        print("\nnot detected:")
        for name in names:
            s = status(mutants[name][1])
            if s in UNDETECTED:
                print(f"  {s:10} {name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-group", type=int, default=120, help="mutants sampled per group (default 120)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--groups", nargs="+", default=list(GROUPS), choices=list(GROUPS))
    parser.add_argument("--files", nargs="+", help="run every mutant of these source files instead of a sample")
    parser.add_argument("--report", action="store_true", help="run nothing; report the verdicts mutmut stored")
    parser.add_argument("--rerun", action="store_true", help="run killed mutants again too")
    parser.add_argument("--survivors", action="store_true", help="list the mutants that were not detected")
    parser.add_argument("--exclude", nargs="+", default=[], metavar="GLOB",
                        help="leave out the drawn mutants of source files matching these patterns (counted)")
    parser.add_argument("--max-children", type=int, default=2)
    args = parser.parse_args(argv)
    if not Path("pyproject.toml").is_file() or not Path("storage").is_dir():
        parser.error("run from the repository root")

    generate()
    mutants = load()
    if args.files:
        wanted = {str(Path(f)) for f in args.files}
        names = sorted(n for n, (src, _, _) in mutants.items() if src in wanted)
        if not names:
            parser.error(f"no mutants in {', '.join(args.files)}")
    else:
        names = draw(mutants, args.per_group, args.seed, args.groups)
    if args.exclude:
        kept = [n for n in names if not any(fnmatch.fnmatch(mutants[n][0], g) for g in args.exclude)]
        print(f"left out {len(names) - len(kept)} drawn mutants of files matching {' '.join(args.exclude)}")
        names = kept
    if not args.report:
        todo = [n for n in names if args.rerun or status(mutants[n][1]) not in DETECTED]
        if todo:
            seconds = run(todo, args.max_children)
            print(f"\nran {len(todo)} mutants in {seconds:.0f} s wall ({seconds / len(todo):.1f} s each)")
        mutants = load()
    report(mutants, names, args.survivors)
    return 0


if __name__ == "__main__":
    sys.exit(main())
