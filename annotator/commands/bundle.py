"""`prefval bundle export|merge`: offline bundles for annotators who work without the shared database."""
from __future__ import annotations

import argparse
import shlex
import sys

from annotator.safe_text import echo


def register(sub: argparse._SubParsersAction) -> None:
    from annotator.cli import add_db_option, add_group_db_option
    from annotator.commands.annotate import add_new_annotator_option

    p = sub.add_parser("bundle", help="offline bundles: one annotator's items in a file of their own, merged back",
                       description="Cut one annotator's share of a study into a bundle file they can annotate "
                                   "anywhere (`prefval annotate STUDY --annotator WHO --db BUNDLE`), then merge "
                                   "their answers back with their whole history.")
    add_group_db_option(p)
    bsub = p.add_subparsers(dest="bundle_command", metavar="ACTION")
    e = bsub.add_parser("export", help="write one annotator's bundle of a study",
                        description="The bundle holds only that annotator's items (and their contexts), the "
                                    "study's settings, guidelines and rubric, and the annotator's own answers. "
                                    "Never other annotators' answers; for blind tasks no answer keys, sources, "
                                    "LLM verdicts or hidden candidate labels.")
    e.add_argument("study", help="the study to cut a bundle of")
    e.add_argument("--annotator", required=True, help="the annotator whose items the bundle holds")
    e.add_argument("--out", required=True, help="the bundle file to write (a new file)")
    e.add_argument("--force", action="store_true", help="replace an existing file")
    add_new_annotator_option(e)  # a new name claims items when the bundle is cut: confirmed as on `annotate`
    add_db_option(e)
    e.set_defaults(func=run_export)
    m = bsub.add_parser("merge", help="merge bundles back into the database",
                        description="Append the annotations of each bundle that the database does not have yet. "
                                    "Every bundle is checked first; a damaged bundle, one of another database or "
                                    "study, or one whose annotator is not assigned stops the merge with nothing "
                                    "written. Rows on items taken from the annotator since the bundle was cut "
                                    "(study release, unassign, rename-annotator) are not written: the merge names "
                                    "them and exits with 4. Merging the same bundle again adds nothing.")
    m.add_argument("bundles", nargs="+", metavar="BUNDLE", help="bundle files written by `prefval bundle export`")
    add_db_option(m)
    m.set_defaults(func=run_merge)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_export(args: argparse.Namespace) -> int:
    from annotator.bundles import export_bundle
    from annotator.cli import db_path, refuse_stdout
    from annotator.commands.annotate import _check_study, confirm_newcomer
    from annotator.study_setup import earlier_bundle_warning
    from storage.store import Store

    refuse_stdout(args.out, "bundle export", "a SQLite file")
    path = db_path(args, must_exist=True)
    _check_study(args)  # an archived study is refused before the newcomer question
    if not confirm_newcomer(args):
        return 1
    with Store.open(path, mode="rw") as store:
        earlier = earlier_bundle_warning(store, store.get_study(args.study), args.annotator)
        counts = export_bundle(store, args.study, args.annotator, args.out, force=args.force)
    if earlier:
        echo(earlier, file=sys.stderr)
    echo(f"wrote {args.out}: {counts['study_items']} items of study '{args.study}' for {args.annotator} "
          f"({counts['annotations']} earlier rows of theirs); annotate with "
          f"`prefval annotate {shlex.quote(args.study)} --annotator {shlex.quote(args.annotator)} "
          f"--db {shlex.quote(args.out)}`")
    return 0


def run_merge(args: argparse.Namespace) -> int:
    from annotator.bundles import merge_bundles
    from annotator.cli import db_path
    from storage.store import Store

    path = db_path(args, must_exist=True)
    with Store.open(path, mode="rw") as store:
        summaries = merge_bundles(store, args.bundles)
    for s in summaries:
        echo(s.line())
    refused = sum(s.n_refused for s in summaries)
    if refused:  # the rest is merged; these rows stay in their bundle (exit 4: finished, some rows not written)
        from annotator.cli import EXIT_FAILED_ROWS

        echo(f"prefval: {refused} row(s) NOT merged: their items were taken from the annotator since the bundle was "
             "cut (`study release|unassign|rename-annotator`), and an answer is written only on an item its "
             "annotator holds; everything else is merged. They stay in the bundle: merge it again once the items "
             "are the annotator's again", file=sys.stderr)
        return EXIT_FAILED_ROWS
    return 0
