"""`prefval adjudicate STUDY --annotator WHO`: resolve the items where annotators disagree, in the terminal."""
from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    from annotator.cli import add_db_option

    p = sub.add_parser("adjudicate", help="set the final answer where annotators disagree",
                       description="Open the adjudication screen: every item whose annotators disagree (for "
                                   "rubric: scores more than --option adjudication_threshold apart, default 1), "
                                   "with each answer, its annotator and notes. The task's decision keys set the "
                                   "final answer; E excludes the item with a reason. Saved at once, append-only; "
                                   "exports, reports and releases use them. The head (when it fits) and the line "
                                   "it ends with say how many of these need adjudication (the votes decide "
                                   "nothing: what `prefval status` counts) and how many the votes decided.")
    p.add_argument("study", help="the study whose disagreements to settle")
    p.add_argument("--annotator", required=True, help="the adjudicator's name")
    p.add_argument("--allow-annotator", action="store_true",
                   help="let an annotator of the study adjudicate (their own disagreements); refused without it")
    add_db_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from annotator.cli import db_path
    from annotator.safe_text import visible
    from annotator.screens.adjudicate import AdjudicateApp

    from annotator.commands.annotate import need_terminal

    app = AdjudicateApp(db_path(args, must_exist=True), args.study, args.annotator,
                        allow_annotator=args.allow_annotator)
    need_terminal("prefval adjudicate")
    app.run_checked()
    print(visible(closing_line(app.session), layout=False))
    return 0


def closing_line(session) -> str:
    """The line `prefval adjudicate` prints when the screen closes: how many of the disagreements offered the
    adjudicator has decided, and how they stand on the votes alone (AdjudicationSession.offered_text), so that the
    figure `prefval status` gives as "needs adjudication" can be found in it."""
    done, total = session.progress()
    return (f"{session.adjudicator.name} adjudicated {done} of {total} disagreements in {session.study.name}: "
            f"{session.offered_text(explained=True)}")
