"""`prefval recover FILE`: put back the decisions a screen kept in a rescue file (annotator/rescue.py) when it could
not reach the database (the quit's wait passed its limit, ctrl+c, a crash, kill -9 while it said "saving…").

Writes into the database the file was kept for (its meta line; --db to name another, e.g. a moved file). Rows whose
id is there already are left alone, so running it twice is safe; the file itself is never changed or removed (the
command says when it can go). Rows refused (the study archived meanwhile, the item released from the annotator's
queue) are listed, one line each, and the exit code is 1.
"""
from __future__ import annotations

import argparse
import os
import sys


def register(sub: argparse._SubParsersAction) -> None:
    from annotator.cli import add_db_option

    p = sub.add_parser("recover", help="put back the decisions a screen kept in a rescue file (DB.unsaved-*.jsonl)",
                       description="Write the answers, adjudications and session events kept in a rescue file into "
                                   "the database it was kept for (or --db). Rows already there are left alone; "
                                   "the file is not changed. `prefval status` lists the rescue files beside a "
                                   "database.")
    p.add_argument("file", help="the rescue file (DB.unsaved-TIME-PID.jsonl)")
    add_db_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from annotator.rescue import read_rescue_file
    from annotator.safe_text import visible
    from storage.errors import PrefvalError
    from storage.recovery import restore_rescued
    from storage.store import Store

    kept = read_rescue_file(args.file)
    db = args.db or kept.database  # the file names its database; --db for one moved since
    if not os.path.exists(db):
        raise PrefvalError(f"{db}: no such database ({args.file} was kept for {kept.database}; pass --db PATH "
                           "for a database moved since)")
    with Store.open(db, mode="rw") as store:
        done = restore_rescued(store, kept.rows, kept.adjudications, kept.events)
    for table, rid, why in done.refused:
        print(visible(f"not restored: {table} row {rid}: {why}", layout=False), file=sys.stderr)
    print(visible(f"{db}: restored {done.annotations} annotation(s), {done.adjudications} adjudication(s), "
                  f"{done.events} event(s) from {args.file}; {done.present} already there"
                  + ("; the file can be deleted" if not done.refused else
                     f"; {len(done.refused)} refused (above): the file is kept as it is"), layout=False))
    return 1 if done.refused else 0
