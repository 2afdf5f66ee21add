"""The ``prefval`` console script: one argparse parser, one sub-command module each.

Each module listed in COMMAND_MODULES defines ``register(subparsers)``, which adds its sub-parser(s) and
sets ``func`` to a handler ``handler(args) -> int`` (the exit code). Modules are imported when the parser is
built, so they must keep heavy imports (textual apps, litellm, scikit-learn, pandas) inside the handlers.
"""
from __future__ import annotations

import argparse
import importlib
import os
import re
import sys

from annotator.safe_text import TerminalSafeStream, visible
from storage.errors import InputError, PrefvalError

COMMAND_MODULES = [
    "annotator.commands.demo",
    "annotator.commands.importing",
    "annotator.commands.study",
    "annotator.commands.annotate",
    "annotator.commands.status",
    "annotator.commands.export",
    "annotator.commands.stats",
    "annotator.commands.report",
    "annotator.commands.bundle",
    "annotator.commands.release",
    "annotator.commands.adjudicate",
    "annotator.commands.recover",
    "annotator.commands.generate",
    "annotator.commands.evaluate",
]

DEFAULT_DB = "prefval.db"


def add_db_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--db PATH`` to a sub-command; default ``$PREFVAL_DB`` or ``./prefval.db``."""
    parser.add_argument(
        "--db",
        default=None,
        help="SQLite file (default: $PREFVAL_DB or ./prefval.db)",
    )


#: the --out value that means standard output (as in most command-line tools); a file named "-" is ./-
STDOUT = "-"


def out_file(value: str) -> str | None:
    """The argparse type of ``--out`` of a command that writes a file or to standard output: None (standard
    output, as when --out is not given) for ``-``, else the path as given (``./-`` names a file called "-")."""
    return None if value == STDOUT else value


def refuse_stdout(value: str | None, command: str, writes: str) -> None:
    """Refuse ``--out -`` for a command whose output cannot go to standard output (a folder, a SQLite file):
    PrefvalError, one line naming the option and what the command writes. Call it before any work."""
    if value == STDOUT:
        raise PrefvalError(f"--out -: {command} writes {writes}, which cannot go to standard output; give a path "
                           "(./- for one named '-')")


def add_group_db_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--db PATH`` to a command that holds actions (study, bundle, evaluate), so that ``prefval study --db
    x.db list`` reads x.db as ``prefval study list --db x.db`` does. Its own dest (group_db) and no default, so
    the action's --db (default None) never hides it; main() takes whichever was given and refuses two different
    files."""
    parser.add_argument("--db", dest="group_db", default=argparse.SUPPRESS, metavar="PATH",
                        help="SQLite file, before the action as well as after it (default: $PREFVAL_DB or "
                             "./prefval.db)")


def add_out_option(parser: argparse.ArgumentParser, what: str = "output file") -> None:
    """Add ``--out PATH`` and ``--force`` to a command that writes a file (written through storage.outfile: never
    the database or another SQLite file, an existing file only with --force, atomically). ``--out -`` is standard
    output (args.out is None then, as without --out: out_file)."""
    parser.add_argument("--out", type=out_file,
                        help=f"{what} (default, or -: standard output); an existing file only with --force")
    parser.add_argument("--force", action="store_true",
                        help="replace an existing --out file (or a symbolic link's target); never a database")


def db_path(args: argparse.Namespace, must_exist: bool = False) -> str:
    """The database path for a parsed command: ``--db``, else ``$PREFVAL_DB``, else ``./prefval.db``.

    must_exist: commands that only read or extend existing studies raise PrefvalError for a missing file instead
    of silently creating an empty database (a typo in --db).
    """
    path = getattr(args, "db", None) or os.environ.get("PREFVAL_DB") or DEFAULT_DB
    if must_exist and path != ":memory:" and not os.path.exists(path):
        raise PrefvalError(f"{path}: no such database (start with `prefval import ...`, or pass --db PATH)")
    return path


def build_parser() -> argparse.ArgumentParser:
    """Build the full parser, importing every available command module."""
    parser = argparse.ArgumentParser(
        prog="prefval",
        description="Human validation of LLM personalization benchmarks, offline in the terminal.",
    )
    parser.add_argument("--db", dest="global_db", default=None, metavar="PATH",
                        help="SQLite file, before the command as well as after it (default: $PREFVAL_DB or "
                             "./prefval.db)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # a command still being written
            if exc.name == name:
                continue
            raise
        module.register(sub)
    return parser


_NAMES_A_RECORD = re.compile(r"\b(stud(y|ies)|datasets?|annotators?|judge)\b", re.IGNORECASE)
#: a word holding a path separator: a file's path in an error, whose folder names say nothing of the error
_PATH_WORD = re.compile(r"\S*[/\\]\S*")


def with_database(exc: PrefvalError, args: argparse.Namespace) -> str:
    """The error's one line; when it names a study, dataset or annotator, followed by the database it looked in
    (``... (database: PATH)``), unless the line already names that file. Words of a file path in the line (a
    folder called judge-runs/ or studies/) are not read as naming one."""
    text = str(exc)
    if not hasattr(args, "db") or isinstance(exc, InputError) or not _NAMES_A_RECORD.search(_PATH_WORD.sub(" ", text)):
        return text
    path = getattr(args, "db", None) or os.environ.get("PREFVAL_DB") or DEFAULT_DB
    return text if path in text else f"{text} (database: {path})"


#: Exit codes of the commands that call LLMs (generate, evaluate), besides 0 (done), 1 (bad input or an error, one
#: line on stderr), 2 (usage) and 130 (interrupted).
EXIT_BUDGET = 3       #: the budget was spent: the run stopped cleanly, everything finished is saved
EXIT_FAILED_ROWS = 4  #: the run finished, but some rows or calls failed (reasons printed); rerun to retry them


def failed_rows_exit(code: int, failed: int, total: int, what: str) -> int:
    """The exit code of a generate or evaluate run that ended with ``code`` (0 done, 3 budget) and ``failed`` of
    ``total`` rows (or calls) failed: 4 (annotator.cli.EXIT_FAILED_ROWS) when a finished run has failures, with one
    line on stderr that says so and how to retry; ``code`` otherwise (a budget stop keeps 3)."""
    if not failed:
        return code
    print(f"prefval: {failed} of {total} {what} failed (reasons above); run the same command again to retry them: "
          "everything finished comes from the cache and is not sent again", file=sys.stderr)
    return EXIT_FAILED_ROWS if code == 0 else code


def main(argv: list[str] | None = None) -> int:
    """Entry point. Returns the exit code; PrefvalError becomes one line on stderr and exit 1.
    Standard output and error are written through annotator.safe_text.TerminalSafeStream while the command runs:
    no command can print a terminal control sequence or bidi control (they are shown as escapes such as ``\\x1b``)."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = TerminalSafeStream(out), TerminalSafeStream(err)
    try:
        return _main(argv)
    finally:
        if isinstance(sys.stdout, TerminalSafeStream):  # not when a broken pipe replaced it with os.devnull
            sys.stdout = out
        if isinstance(sys.stderr, TerminalSafeStream):
            sys.stderr = err


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    if args.global_db and getattr(args, "refuses_db", None):  # `prefval --db x stats ...`: as after the command
        parser.error(args.refuses_db)
    given = [getattr(args, k, None) for k in ("global_db", "group_db", "db")]
    given = list(dict.fromkeys(v for v in given if v))  # --db before the command, before its action, after it
    if len(given) > 1:
        print(f"prefval: error: --db given twice with different files ({given[0]} and {given[1]})", file=sys.stderr)
        return 2
    if given:
        args.db = given[0]
    try:
        code = args.func(args)
    except PrefvalError as exc:
        print(f"prefval: error: {visible(with_database(exc, args), layout=False)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `prefval status | head`
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except Exception as exc:  # a bug or an environment problem: still one line, unless debugging
        from storage.db import database_error_message

        known = database_error_message(db_path(args), exc)
        if known:  # e.g. a write to a read-only file or folder
            print(f"prefval: error: {visible(known, layout=False)}", file=sys.stderr)
            return 1
        if os.environ.get("PREFVAL_DEBUG"):
            raise
        print(f"prefval: error: unexpected {type(exc).__name__}: {visible(exc, layout=False)} "
              "(PREFVAL_DEBUG=1 shows the traceback)",
              file=sys.stderr)
        return 1
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
