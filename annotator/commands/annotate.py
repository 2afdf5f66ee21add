"""`prefval annotate STUDY --annotator WHO`: open the TUI on the annotator's own queue."""
from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    from annotator.cli import add_db_option

    p = sub.add_parser("annotate", help="annotate a study in the terminal",
                       description="Open the annotation screen. Every key decision is saved at once; quit any "
                                   "time with q and come back to resume where you stopped.")
    p.add_argument("study")
    p.add_argument("--annotator", required=True, help="your name (each annotator gets their own items)")
    add_db_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from annotator.app import AnnotateApp
    from annotator.cli import db_path

    app = AnnotateApp(db_path(args, must_exist=True), args.study, args.annotator)
    app.run()
    done, total = app.session.progress()
    print(f"{args.annotator} on {args.study}: {done}/{total} answered (saved in {db_path(args)})")
    return 0
