"""`prefval annotate STUDY --annotator WHO`: open the TUI on the annotator's own queue."""
from __future__ import annotations

import argparse
import sys

from storage.errors import PrefvalError


def register(sub: argparse._SubParsersAction) -> None:
    from annotator.cli import add_db_option

    p = sub.add_parser("annotate", help="annotate a study in the terminal",
                       description="Open the annotation screen. Every key decision is saved at once; quit any "
                                   "time with q and come back to resume where you stopped.")
    p.add_argument("study", help="the study to annotate")
    p.add_argument("--annotator", required=True, help="your name (each annotator gets their own items)")
    add_new_annotator_option(p)
    add_db_option(p)
    p.set_defaults(func=run)


def add_new_annotator_option(p: argparse.ArgumentParser) -> None:
    """--new-annotator, for every command that lets a name claim items of a study (annotate, bundle export); read
    by confirm_newcomer."""
    p.add_argument("--new-annotator", action="store_true",
                   help="confirm that a name new to a study that already has annotators may claim items")


def run(args: argparse.Namespace) -> int:
    from annotator.app import AnnotateApp
    from annotator.cli import db_path
    from annotator.safe_text import visible

    _check_study(args)  # before the newcomer question: an archived study is refused whoever asks
    if not confirm_newcomer(args):
        return 1
    need_terminal("prefval annotate")  # before the app claims anything
    app = AnnotateApp(db_path(args, must_exist=True), args.study, args.annotator)
    app.run_checked()
    done, total = app.session.progress()
    screen = getattr(app, "annotate_screen", None)
    refused = list(screen.refused.values()) if screen is not None else []
    try:
        print(visible(f"{args.annotator} on {args.study}: {done}/{total} answered (saved in {db_path(args)})", False))
        for text in refused:  # given on the screen but refused for good: said again, a note with its text
            print(visible(f"NOT saved: {text}", False), file=sys.stderr)
    except OSError:  # the terminal is gone (hang-up): what is saved is saved, there is nobody to tell
        pass
    return 1 if refused else 0


def terminal_problem() -> str | None:
    """What stands in the way of a full-screen terminal UI: stdin (the keys), stdout or stderr (Textual draws the
    screen on stderr) not a terminal (a pipe, a file, /dev/null, a script), as one phrase; None when all three
    are terminals."""
    import sys

    bad = [name for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout), ("stderr", sys.stderr))
           if stream is None or not stream.isatty()]
    if not bad:
        return None
    names = bad[0] if len(bad) == 1 else ", ".join(bad[:-1]) + " and " + bad[-1]
    return f"{names} {'is' if len(bad) == 1 else 'are'} not a terminal"


def need_terminal(command: str) -> None:
    """Refuse to open a screen without a terminal (PrefvalError, one line): the screen would write its escape
    codes into a pipe or file and, for `annotate`, claim items nobody sees. Called before anything is written."""
    problem = terminal_problem()
    if problem:
        raise PrefvalError(f"{command} needs a terminal: {problem} (run it in a terminal, e.g. over ssh -t; nothing "
                           "was claimed or written)")


def _check_study(args: argparse.Namespace) -> None:
    """Refuse a study its task can no longer annotate (Task.check_study) or an archived one
    (storage.studies.refuse_archived), reading only."""
    from annotator.cli import db_path
    from annotator.tasks import get_task
    from storage.store import Store
    from storage.studies import refuse_archived

    with Store.open(db_path(args, must_exist=True), mode="ro") as store:
        study = store.get_study(args.study)
    get_task(study.task_type).check_study(study)
    refuse_archived(study.name, study.settings, "annotated")


def confirm_newcomer(args: argparse.Namespace) -> bool:
    """Ask before a name new to a study that already has annotators claims items (a mistyped --annotator must
    not lock the real annotator out), for `annotate` and `bundle export` alike (args: study, annotator,
    new_annotator, db). True to go on. Without a terminal to ask on, refuses with a one-line error
    unless --new-annotator was given. On a bundle, any annotator but the bundle's own is refused (PrefvalError,
    even with --new-annotator). Nothing is written before the answer."""
    import sys

    from annotator.cli import db_path
    from annotator.study_setup import newcomer_question
    from storage.store import Store

    from storage.visible_text import name_problem

    with Store.open(db_path(args, must_exist=True), mode="ro") as store:
        info = store.bundle_info()
        known = store.find_annotator(args.annotator) is not None
    if not known and name_problem(args.annotator, "annotator"):  # a new name must be plain text, --new-annotator or not
        raise PrefvalError(name_problem(args.annotator, "annotator"))
    if info is not None and args.annotator.strip() != info.get("annotator"):
        raise PrefvalError(f"{db_path(args)}: is the bundle of '{info.get('annotator')}'; only they can annotate "
                           f"it (not '{args.annotator.strip()}'), or it could not be merged")
    if args.new_annotator:
        return True
    with Store.open(db_path(args, must_exist=True), mode="rw") as store:  # migrated at most; no claim yet
        question = newcomer_question(store, store.get_study(args.study), args.annotator)
    if question is None:
        return True
    if not sys.stdin.isatty():
        raise PrefvalError(question + " Add --new-annotator to confirm.")
    from annotator.safe_text import visible

    question = visible(question, layout=False)
    reply = input(question + f" Start as '{args.annotator.strip()}'? [y/N] ")
    if reply.strip().lower() in ("y", "yes"):
        return True
    print("nothing claimed", file=sys.stderr)
    return False
