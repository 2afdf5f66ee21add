"""`prefval recover FILE`: put back the decisions a screen kept in a rescue file (annotator/rescue.py) when it could
not reach the database (the quit's wait passed its limit, ctrl+c, a crash, kill -9 while it said "saving…").

Writes into the database the file was kept for (its meta line; --db to name another, e.g. a moved file). What
becomes of each row is annotator.recovery's: restored with the time it was decided, already there (so running it
twice is safe), superseded by a later decision (not restored: the later one stays), or refused (the study archived,
the item released); bad input (a row this database does not hold, an answer the task could not give, a row whose
id is there with other values) is one line naming the file, the line and the field, and nothing is written. The
file itself is never changed or removed (the command says when it can go). Exit 1 when a row was refused.
"""
from __future__ import annotations

import argparse
import os
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("recover", help="put back the decisions a screen kept in a rescue file (DB.unsaved-*.jsonl)",
                       description="Write the answers, adjudications and session events kept in a rescue file into "
                                   "the database it was kept for (or --db), each with the time it was decided. Rows "
                                   "already there are left alone; a decision made again since is not restored "
                                   "(the later one stays); the file is not changed. `prefval status` lists the "
                                   "rescue files beside a database.")
    p.add_argument("file", help="the rescue file (DB.unsaved-TIME-PID.jsonl)")
    p.add_argument("--db", default=None,
                   help="SQLite file (default: the database the file was kept for, named on its first line)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from annotator.recovery import recover
    from annotator.rescue import database_beside, read_rescue_file, same_file
    from annotator.safe_text import visible
    from storage.errors import PrefvalError
    from storage.store import Store

    kept = read_rescue_file(args.file)
    live = kept.live_screen()
    if live:  # its screen still retries these rows and removes the file once they are in
        raise PrefvalError(f"{args.file}: the screen that keeps it (process {live}) is still running and still "
                           "saving these rows; let it save them (or quit it with q), then run prefval recover again "
                           "if the file is still there")
    if args.db is None:
        beside = database_beside(args.file)
        if beside and os.path.exists(beside) and not same_file(beside, kept.database):
            raise PrefvalError(f"{args.file}: it lies beside {beside} but was kept for {kept.database} (a copied or "
                               "moved folder?); say which database gets its rows with --db PATH")
    db = args.db = args.db or kept.database  # the file names its database; --db for one moved since (and errors
    # about it name this one, not ./prefval.db)
    if not os.path.exists(db):
        raise PrefvalError(f"{db}: no such database ({args.file} was kept for {kept.database}; pass --db PATH "
                           "for a database moved since)")
    with Store.open(db, mode="rw") as store:
        done = recover(store, kept)
    for o in done.notes:
        print(visible(f"restored: line {o.kept.line}: {o.why}", layout=False), file=sys.stderr)
    for o in done.not_restored:
        print(visible(f"not restored: line {o.kept.line}: {o.why}", layout=False), file=sys.stderr)
    print(visible(done.summary(), layout=False))
    return 1 if done.count("refused") else 0
