"""`prefval demo`: import the bundled sample data into a demo database and open the TUI on it."""
from __future__ import annotations

import argparse
from pathlib import Path

from storage.errors import PrefvalError
from annotator.safe_text import echo

DEMO_DB = "prefval-demo.db"
DEMO_DATASET = "demo-personamem"
DEMO_STUDY = "demo-mcq"


def sample_data_dir() -> Path:
    """The repository's sample_data/ folder (prefval is installed editable from the repository)."""
    path = Path(__file__).resolve().parents[2] / "sample_data"
    if not path.is_dir():
        raise PrefvalError(f"{path}: sample data not found (install prefval from its repository with pip -e)")
    return path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="try prefval on bundled sample data",
                       description=f"Import the bundled PersonaMem-style sample into {DEMO_DB} (or --db), create "
                                   f"the study '{DEMO_STUDY}' and open the annotation screen.")
    # no argparse default: `prefval --db x.db demo` (the --db before the command) must not meet a second file
    p.add_argument("--db", default=None, help=f"database file (default: {DEMO_DB})")
    p.add_argument("--annotator", default="demo", help="annotator name (default: demo)")
    p.add_argument("--no-tui", action="store_true", help="set up the demo database without opening the TUI")
    p.set_defaults(func=run)


def setup_demo(db: str) -> None:
    """Import the sample (idempotent) and create the demo study if it is not there yet."""
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec
    from storage.importers import get_importer
    from storage.store import Store

    base = sample_data_dir() / "personamem"
    paths = [base / "questions_sample.csv", base / "shared_contexts_sample.jsonl"]
    parsed = get_importer("personamem").read(paths)
    with Store.open(db, mode="create") as store:
        store.import_items(DEMO_DATASET, "personamem", parsed.items, source_path=parsed.source_path,
                           file_hash=parsed.file_hash, contexts=parsed.contexts,
                           sources=parsed.sources)
        if DEMO_STUDY not in {s.name for s in store.studies()}:
            create_study(store, StudySpec(name=DEMO_STUDY, task="mcq", datasets=[DEMO_DATASET], seed=1))


def run(args: argparse.Namespace) -> int:
    args.db = args.db or DEMO_DB  # the demo's own file, never $PREFVAL_DB (the user's real database)
    if not args.no_tui:
        from annotator.commands.annotate import need_terminal

        need_terminal("prefval demo (without --no-tui)")
    setup_demo(args.db)
    if args.no_tui:
        echo(f"demo ready: prefval annotate {DEMO_STUDY} --annotator {args.annotator} --db {args.db}")
        return 0
    from annotator.app import AnnotateApp

    app = AnnotateApp(args.db, DEMO_STUDY, args.annotator)
    app.run_checked()
    done, total = app.session.progress()
    echo(f"{args.annotator}: {done}/{total} answered in the demo study (saved in {args.db}).")
    echo(f"Next: prefval status --db {args.db}   |   prefval export {DEMO_STUDY} --db {args.db}")
    return 0
