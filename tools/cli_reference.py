"""Write docs/cli.md, the command-line reference, from the argparse parsers that annotator.cli builds.

The page is never written by hand: each command's section is its ``--help`` text (as sqlite-utils' CLI
reference is), formatted at a fixed width so the file is the same on every terminal. tests/test_cli_docs.py
fails when docs/cli.md differs from what this script writes.

    python tools/cli_reference.py            # rewrite docs/cli.md
    python tools/cli_reference.py --check    # exit 1 when docs/cli.md is stale
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "cli.md"
WIDTH = "100"  #: columns the help texts are wrapped to (argparse reads $COLUMNS)


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("prefval",)):
    """Yield (path, parser) for the parser and every sub-parser below it, depth first in the order registered."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, path + (name,))


def render() -> str:
    """The whole reference page as Markdown (str)."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        sys.path.insert(0, str(REPO))
        from annotator.cli import build_parser

        parser = build_parser()
        parts = ["# Command-line reference", "",
                 "<!-- written by tools/cli_reference.py from the argparse parsers: do not edit by hand -->", "",
                 "Every command takes `--db PATH` (default `./prefval.db`, or `$PREFVAL_DB`) before or after the "
                 "command, and `--help`. Exit codes: 0 done, 1 bad input or an error (one line on stderr), 2 usage, "
                 "3 an LLM budget spent (generate, evaluate), 4 finished with some rows not written or failed, "
                 "130 interrupted.", ""]
        for path, sub in commands(parser):
            parts += [f"{'#' * min(len(path) + 1, 4)} {' '.join(path)}", "", "```text",
                      sub.format_help().rstrip(), "```", ""]
        return "\n".join(parts)
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def main(argv: list[str] | None = None) -> int:
    """Write docs/cli.md (0), or with --check compare it (0 when current, 1 when stale)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when docs/cli.md differs from the parsers")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT.relative_to(REPO)} is stale: run python tools/cli_reference.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
