"""Write the documentation's screenshots (docs/images/*.svg): each task type's annotation screen on the bundled
sample data, taken headless with Textual's own SVG export (App.run_test, App.export_screenshot).

    python tools/screenshots.py              # rewrite docs/images/
    python tools/screenshots.py --out DIR    # write them elsewhere (tests/test_screenshots.py compares)

Each screen is set up in a scratch database with the same commands a user types (prefval import, study create),
with fixed seeds, at a fixed terminal size, the timer hidden, as annotator "ana" (the demo: "demo"); nothing is
answered. normalise() removes what
Textual makes different from run to run, so the same code gives the same files.
"""
from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "images"
SIZE = (110, 34)  #: columns, rows of every screenshot
S = "sample_data/"
REALPREF = [S + "realpref/" + f for f in ("conversations.jsonl", "preferences.json", "profiles.json",
                                          "queries.jsonl")]

#: name -> (the prefval commands that make the study, the study to open). The demo's screen is what the
#: README shows; the others are the task pages'.
SCREENS: dict[str, tuple[list[list[str]], str]] = {
    "demo-mcq": ([["demo", "--no-tui"]], "demo-mcq"),
    "mcq": ([["import", "personamem", S + "personamem/questions_sample.csv",
              S + "personamem/shared_contexts_sample.jsonl", "--dataset", "pms"],
             ["study", "create", "pm-mcq", "--task", "mcq", "--dataset", "pms", "--seed", "1"]], "pm-mcq"),
    "easy_test": ([["import", "realpref", *REALPREF, "--dataset", "rp"],
                   ["study", "create", "easy", "--task", "easy_test", "--dataset", "rp", "--seed", "1"]], "easy"),
    "blind_test": ([["import", "realpref", *REALPREF, "--dataset", "rp"],
                    ["study", "create", "blind", "--task", "blind_test", "--dataset", "rp", "--seed", "1"]], "blind"),
    "persona_filter": ([["import", "jsonl", S + "persona/personas.jsonl", "--kind", "persona_record",
                         "--dataset", "personas"],
                        ["study", "create", "personas-r1", "--task", "persona_filter", "--dataset", "personas",
                         "--seed", "1"]], "personas-r1"),
    "gold_label": ([["import", "cimemories", S + "cimemories/sample_profiles.json", "--dataset", "cim"],
                    ["study", "create", "gold", "--task", "gold_label", "--dataset", "cim", "--seed", "1"]], "gold"),
    "pairwise": ([["import", "jsonl", S + "pairwise/dataset_a.jsonl", "--kind", "conversation_record",
                   "--dataset", "pair_a"],
                  ["import", "jsonl", S + "pairwise/dataset_b.jsonl", "--kind", "conversation_record",
                   "--dataset", "pair_b"],
                  ["study", "create", "plaus", "--task", "pairwise", "--dataset", "pair_a", "--dataset", "pair_b",
                   "--seed", "3"]], "plaus"),
    "rubric": ([["import", "jsonl", S + "rubric/answers.jsonl", "--kind", "rubric_item", "--dataset", "answers"],
                ["study", "create", "open-answers", "--task", "rubric", "--dataset", "answers", "--seed", "1"]],
               "open-answers"),
    "item_quality": ([["import", "personamem", S + "personamem/questions_sample.csv",
                       S + "personamem/shared_contexts_sample.jsonl", "--dataset", "pms"],
                      ["study", "create", "quality", "--task", "item_quality", "--dataset", "pms", "--seed", "1"]],
                     "quality"),
    "judge_validation": ([["import", "jsonl", S + "judgments/judge_items.jsonl", "--kind", "gold_candidate",
                           "--dataset", "jv"],
                          ["study", "create", "jvs", "--task", "judge_validation", "--dataset", "jv", "--seed", "1"]],
                         "jvs"),
}

_UNIQUE = re.compile(r"terminal-\d+")


def normalise(svg: str) -> str:
    """The SVG with Textual's per-export id (``terminal-<number>`` in class names and ids) made constant."""
    return _UNIQUE.sub("terminal", svg)


async def _shoot(db: str, study: str, annotator: str) -> str:
    from annotator.app import AnnotateApp

    app = AnnotateApp(db, study, annotator, show_timer=False)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(5):
            await pilot.pause()
        svg = app.export_screenshot(title=f"prefval annotate {study}")
    return normalise(svg)


def take(name: str, workdir: Path) -> str:
    """The normalised SVG of screen ``name`` (a key of SCREENS), set up in a new database under workdir."""
    import contextlib
    import io
    import os

    from annotator.cli import main

    commands, study = SCREENS[name]
    db = str(workdir / f"{name}.db")
    old = os.getcwd()
    os.chdir(REPO)  # the commands name sample_data/ relative to the repository
    try:
        for argv in commands:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
                code = main(argv + ["--db", db])
            if code != 0:
                raise RuntimeError(f"prefval {' '.join(argv)}: exit {code}: {err.getvalue().strip()}")
        return asyncio.run(_shoot(db, study, "demo" if name == "demo-mcq" else "ana"))  # the demo's default name
    finally:
        os.chdir(old)


def main(argv: list[str] | None = None) -> int:
    """Write every screenshot of SCREENS (or those named) to --out (default docs/images/)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="screens to take (default: all)")
    ap.add_argument("--out", type=Path, default=OUT, help="folder to write NAME.svg into (default docs/images/)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO))
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.names or list(SCREENS):
            (args.out / f"{name}.svg").write_text(take(name, Path(tmp)), encoding="utf-8")
            print(args.out / f"{name}.svg")
    return 0


if __name__ == "__main__":
    sys.exit(main())
