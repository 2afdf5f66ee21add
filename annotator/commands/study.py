"""`prefval study create|list|assign|release|unassign|rename-annotator|rename|archive|unarchive|delete`."""
from __future__ import annotations

import argparse
import sys

from annotator.safe_text import echo, visible
from storage.errors import PrefvalError
from storage.textfile import read_text, regular_file


def _parse_options(pairs: list[str]) -> dict:
    out = {}
    for p in pairs:
        if "=" not in p:
            raise PrefvalError(f"--option '{p}': expected KEY=VALUE")
        k, v = p.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def _add_task_options(parser: argparse.ArgumentParser) -> None:
    """A flag --NAME for every study option a task declares (storage.task_specs.TaskSpec.study_options), once per
    name, its help naming the tasks that take it. Not given: absent from the namespace's task_args."""
    from storage import task_specs

    takers: dict[str, list[str]] = {}
    first: dict[str, task_specs.StudyOption] = {}
    for spec in task_specs.specs():
        for option in spec.study_options:
            first.setdefault(option.name, option)
            takers.setdefault(option.name, []).append(spec.name)
    for name, option in first.items():
        parser.add_argument(f"--{name.replace('_', '-')}", dest=f"task_arg_{name}", default=None,
                            metavar="N" if option.kind == "int" else name.upper(),
                            help=f"{option.help} ({', '.join(takers[name])})")


def _option_help() -> str:
    """The --option keys the tasks declare (TaskSpec.option_help), each with the tasks that read it."""
    from storage import task_specs

    keys: dict[tuple[str, str], list[str]] = {}
    for spec in task_specs.specs():
        for key, what in spec.option_help:
            keys.setdefault((key, what), []).append(spec.name)
    from annotator.study_setup import STUDY_WIDE_OPTIONS

    wide = "; ".join(f"{key} ({what})" for key, what, _ in STUDY_WIDE_OPTIONS)
    return ("every task: " + wide + "; "
            + "; ".join(f"{', '.join(tasks)}: {key} ({what})" for (key, what), tasks in keys.items()))


def _task_args(args: argparse.Namespace) -> dict:
    """The task-declared options given on the command line (flags added by _add_task_options)."""
    return {k[len("task_arg_"):]: v for k, v in vars(args).items() if k.startswith("task_arg_") and v is not None}


def register(sub: argparse._SubParsersAction) -> None:
    from annotator.cli import add_db_option, add_group_db_option
    from annotator.tasks import TASKS  # discovers the task packages: their declarations fill storage.task_specs

    p = sub.add_parser("study", help="create and list studies")
    add_group_db_option(p)
    ssub = p.add_subparsers(dest="study_command", metavar="ACTION")
    c = ssub.add_parser("create", help="create a study over a dataset",
                        description="Create a study: the task type decides what annotators see and answer.")
    c.add_argument("name", help="the new study's name (plain text)")
    c.add_argument("--task", required=True, choices=sorted(TASKS), help="the task type: what annotators see and answer")
    c.add_argument("--dataset", action="append", default=[], help="input dataset: one (pairwise: two; persona_filter: several; easy_test: a "
                                "second with the originals of generalized preferences); more are refused")
    c.add_argument("--sample", type=int, help="use a seeded random sample of N items")
    c.add_argument("--stratify", metavar="FIELD",
                   help="with --sample N: draw per value of this item field, in proportion to each value's items "
                        "(largest remainder, summing to N), e.g. expression_type for RealPref; FIELD: a payload or "
                        "metadata field, or a dotted path")
    c.add_argument("--balance", metavar="FIELD",
                   help="with --sample N: draw N/k items of each of the k values of this item field, e.g. "
                        "candidate_label for BenchPreS's 300 balanced over gold labels; refused when N is not a "
                        "multiple of k or a value has too few items")
    c.add_argument("--seed", type=int, default=0, help="seed for sampling and per-annotator shuffles")
    c.add_argument("--annotators-per-item", type=int, help="annotators per item (task default otherwise)")
    c.add_argument("--annotators", help="comma-separated names to assign now (otherwise claimed on first annotate)")
    c.add_argument("--guidelines", help="Markdown file shown with `?` (task default otherwise)")
    c.add_argument("--from-study", help="use the records kept by this earlier study as input (persona rounds; "
                                        "judge_validation: the gold labels of a gold_label study)")
    _add_task_options(c)
    c.add_argument("--checks", metavar="DATASET_OR_N",
                   help="attention checks: every keyed item of DATASET (or N keyed items of the input dataset not "
                        "in the study) mixed into each annotator's queue, never marked on screen")
    c.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="task option; repeatable. " + _option_help())
    add_db_option(c)
    c.set_defaults(func=run_create)
    ls = ssub.add_parser("list", help="list studies")
    add_db_option(ls)
    ls.set_defaults(func=run_list)
    a = ssub.add_parser("assign", help="assign a study's items to named annotators")
    a.add_argument("name", help="the study")
    a.add_argument("--annotators", required=True, help="comma-separated names")
    add_db_option(a)
    a.set_defaults(func=run_assign)
    ls.add_argument("--archived", action="store_true", help="list archived studies too")
    r = ssub.add_parser("release", help="give claimed but untouched items back to the pool",
                        description="Items an annotator holds and has not touched go back to the pool (for "
                                    "whoever opens the study next). Items they answered stay theirs (answers are "
                                    "never deleted), and so do items they marked without answering: skipped, "
                                    "partly answered, flagged 'needs review' or noted (they looked at them; the "
                                    "line counts them). --include-marked releases those too; their marks stay in "
                                    "the log under the annotator's name.")
    r.add_argument("name", help="the study")
    r.add_argument("--annotator", help="only this annotator's items (default: every annotator's)")
    r.add_argument("--include-marked", action="store_true",
                   help="also release items the annotator skipped, flagged, noted or partly answered")
    add_db_option(r)
    r.set_defaults(func=run_release)
    u = ssub.add_parser("unassign", help="take an annotator off a study (unanswered items back to the pool)",
                        description="Every item the annotator has not answered goes back to the pool, marked ones "
                                    "too (skipped, partly answered, flagged 'needs review', noted: the line counts "
                                    "them; their marks stay in the log under the annotator's name, "
                                    "`prefval export --history` lists them); items they answered stay theirs, "
                                    "since answers are never deleted.")
    u.add_argument("name", help="the study")
    u.add_argument("--annotator", required=True, help="the annotator who leaves the study")
    add_db_option(u)
    u.set_defaults(func=run_unassign)
    ra = ssub.add_parser("rename-annotator", help="give an annotator's items in a study to another name",
                         description="When NEW is not an annotator yet and OLD works on no other study, OLD is "
                                     "renamed (answers, skips, flags and notes follow). Otherwise OLD's unanswered "
                                     "items move to NEW, marked ones too (the line counts them; the marks stay in "
                                     "the log under OLD, and NEW decides those items afresh), and OLD keeps the "
                                     "answered ones (the log is append-only).")
    ra.add_argument("name", help="the study")
    ra.add_argument("old", help="the annotator's current name")
    ra.add_argument("new", help="the name their items go to")
    add_db_option(ra)
    ra.set_defaults(func=run_rename_annotator)
    rn = ssub.add_parser("rename", help="rename a study")
    rn.add_argument("name", help="the study")
    rn.add_argument("new_name", help="its new name")
    add_db_option(rn)
    rn.set_defaults(func=run_rename)
    ar = ssub.add_parser("archive", help="hide a study from lists (everything stays in the file)")
    ar.add_argument("name", help="the study")
    ar.add_argument("--undo", action="store_true", help="bring an archived study back (= study unarchive)")
    add_db_option(ar)
    ar.set_defaults(func=run_archive)
    ua = ssub.add_parser("unarchive", help="bring an archived study back (into lists; annotate it again)")
    ua.add_argument("name", help="the study")
    add_db_option(ua)
    ua.set_defaults(func=run_archive, undo=True)
    d = ssub.add_parser("delete", help="delete a study that has no annotations")
    d.add_argument("name", help="the study (one without any annotation)")
    add_db_option(d)
    d.set_defaults(func=run_delete)
    ex = ssub.add_parser("exclude-annotator", help="leave an annotator's answers out of a study's figures",
                         description="Leave an annotator's answers out of every figure, report and release of the "
                                     "study, with a recorded reason (e.g. failed attention checks). Their rows stay "
                                     "in the file and in exports; --undo takes them back in.")
    ex.add_argument("name", help="the study")
    ex.add_argument("annotator", help="the annotator to leave out of the figures")
    ex.add_argument("--reason", help="why (required unless --undo)")
    ex.add_argument("--undo", action="store_true", help="count the annotator's answers again")
    add_db_option(ex)
    ex.set_defaults(func=run_exclude_annotator)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_create(args: argparse.Namespace) -> int:
    from annotator.cli import db_path
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec
    from storage.store import Store

    from storage.visible_text import name_problem

    if name_problem(args.name, "study"):  # before anything is read: one line, nothing written
        raise PrefvalError(name_problem(args.name, "study"))
    if args.annotators_per_item is not None and args.annotators_per_item < 1:
        raise PrefvalError("--annotators-per-item must be at least 1")
    if args.sample is not None and args.sample < 1:
        raise PrefvalError("--sample must be at least 1")
    guidelines = None
    if args.guidelines:
        guidelines = read_text(regular_file(args.guidelines, "guidelines file"))
    names = [n.strip() for n in (args.annotators or "").split(",") if n.strip()]
    from annotator.tasks.strata import spec_rule

    spec_rule(args)  # --stratify/--balance: one of them, with --sample (before anything is read)
    spec = StudySpec(name=args.name, task=args.task, datasets=args.dataset, sample=args.sample, seed=args.seed,
                     stratify=args.stratify, balance=args.balance,
                     annotators_per_item=args.annotators_per_item, annotators=names, guidelines=guidelines,
                     from_study=args.from_study, options=_parse_options(args.option), checks=args.checks,
                     task_args=_task_args(args))
    with Store.open(db_path(args, must_exist=True), mode="rw") as store:
        known = {d.name for d in store.datasets()}
        for value in args.dataset or []:  # --annotators takes a comma list; --dataset is given once per dataset
            if "," in value and value not in known:
                parts = [v.strip() for v in value.split(",") if v.strip()]
                raise PrefvalError(f"--dataset {value!r}: no dataset of that name; give --dataset once per dataset "
                                   f"({' '.join('--dataset ' + v for v in parts)})")
        study = create_study(store, spec)
        n = len(store.units(study.id))
        k = study.settings.get("annotators_per_item", 1)
        from annotator.tasks import get_task

        task_lines = get_task(study.task_type).creation_lines(store, study, spec)
    checks = (study.settings.get("checks") or {}).get("n", 0)
    extra = f" (and {checks} attention checks for every annotator)" if checks else ""
    print(visible(f"study {study.name}: task {study.task_type}, {n - checks} items{extra}, {k} annotator(s) per "
                  f"item, seed {study.seed}", layout=False))
    from annotator.tasks.screens import created_lines

    for line in created_lines(study.settings, args.sample):
        echo(line)
    for line in task_lines:
        echo(line)
    if args.sample is not None and n - checks < args.sample and not study.settings.get("sampled"):
        distinct = " distinct on screen" if study.settings.get("identical_on_screen") else ""
        echo(f"note: --sample {args.sample} asked for more items than the dataset offers{distinct}; the study has "
             f"all {n - checks}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    from annotator.cli import db_path
    from storage.store import Store

    with Store.open(db_path(args, must_exist=True), mode="ro") as store:
        for s in store.studies(include_archived=args.archived):
            n = len(store.units(s.id))
            datasets = ", ".join(s.settings.get("datasets", []))
            fields = [s.name, s.task_type, f"{n} items", f"datasets: {datasets}"]
            if s.settings.get("archived"):
                fields.append("archived")
            print("\t".join(visible(v, layout=False) for v in fields))
    return 0


def run_assign(args: argparse.Namespace) -> int:
    from annotator.cli import db_path
    from annotator.study_setup import assign_named
    from storage.store import Store

    names = [n.strip() for n in args.annotators.split(",") if n.strip()]
    with Store.open(db_path(args, must_exist=True), mode="rw") as store:
        out = assign_named(store, _live_study(store, args.name, "assigned"), names)
    for name, n in out.items():
        print(visible(f"{name}: {n} items", layout=False))
    return 0


def _open(args: argparse.Namespace):
    from annotator.cli import db_path
    from storage.store import Store

    return Store.open(db_path(args, must_exist=True), mode="rw")


def _live_study(store, name: str, doing: str):
    """The study called name, refused when archived (storage.studies.refuse_archived: read-only until
    `study unarchive`) for a command that would change its assignments or figures."""
    from storage.studies import refuse_archived

    study = store.get_study(name)
    refuse_archived(study.name, study.settings, doing)
    return study


def _say(text: str) -> None:
    """Print one line that may hold names from the database or the user, as text (annotator.safe_text)."""
    print(visible(text, layout=False))


def _warn_bundle_out(store, study, name: str) -> None:
    """Print on stderr that `name` has a bundle of the study out (study_setup.bundle_out_warning), if so."""
    from annotator.study_setup import bundle_out_warning

    warning = bundle_out_warning(store, study, name)
    if warning:
        print(visible(warning, layout=False), file=sys.stderr)


def _of_them_marked(n: int, marks: dict[str, int], who: str) -> str:
    """" (2 of them marked by 'cy': 1 skipped, 1 flagged 'needs review'; the marks stay in the log under 'cy')", or ""
    when none of the items was marked."""
    from annotator.study_setup import marks_text

    return (f" ({n} of them marked by '{who}': {marks_text(marks)}; the marks stay in the log under '{who}')"
            if n else "")


def run_release(args: argparse.Namespace) -> int:
    from annotator.study_setup import marks_text, release_counted, study_annotator_names

    with _open(args) as store:
        study = _live_study(store, args.name, "changed (release)")
        names = [args.annotator] if args.annotator else study_annotator_names(store, study)
        for name in names:
            _warn_rescued(store, study, name)
            keep = not args.include_marked
            got = release_counted(store, study, name, keep_skipped=keep, keep_marked=keep)
            if args.include_marked:
                _say(f"{name}: {got['released']} unanswered item(s) back to the pool"
                     f"{_of_them_marked(got['released_marked'], got['released_marks'], name)}; keeps "
                     f"{got['kept']} answered item(s)")
            else:
                marked = (f" and {got['kept_marked']} marked without an answer ({marks_text(got['kept_marks'])}: "
                          "still theirs to answer; --include-marked releases them too)" if got["kept_marked"] else "")
                _say(f"{name}: {got['released']} untouched item(s) back to the pool; keeps {got['kept_answered']} "
                     f"answered{marked}")
            _warn_bundle_out(store, study, name)
    return 0


def run_unassign(args: argparse.Namespace) -> int:
    from annotator.study_setup import release_counted

    with _open(args) as store:
        study = _live_study(store, args.name, "changed (unassign)")
        _warn_rescued(store, study, args.annotator)
        got = release_counted(store, study, args.annotator, keep_skipped=False)
        kept = got["kept"]
        tail = f"; {kept} answered item(s) stay theirs (answers are never deleted)" if kept else ""
        _say(f"{args.annotator}: {got['released']} unanswered item(s) back to the pool"
             f"{_of_them_marked(got['released_marked'], got['released_marks'], args.annotator)}{tail}")
        _warn_bundle_out(store, study, args.annotator)
    return 0


def run_rename_annotator(args: argparse.Namespace) -> int:
    from annotator.study_setup import move_annotator

    with _open(args) as store:
        study = _live_study(store, args.name, "changed (rename-annotator)")
        if store.find_annotator(args.new) is not None:  # items move to another annotator (a rename in place keeps
            _warn_rescued(store, study, args.old)        # the annotator's id: its rescued rows still fit)
        got = move_annotator(store, study, args.old, args.new)
        if got["how"] == "renamed":
            _say(f"annotator '{args.old}' is now '{args.new}' ({got['moved']} item(s) in study {args.name}, answers, "
                 "skips, flags and notes included)")
        else:
            pool = (f"; {got['to_pool']} item(s) '{args.new}' already holds went back to the pool"
                    f"{_of_them_marked(got['to_pool_marked'], got['to_pool_marks'], args.old)}"
                    if got["to_pool"] else "")
            _say(f"{got['moved']} unanswered item(s) of '{args.old}' moved to '{args.new}'"
                 f"{_of_them_marked(got['moved_marked'], got['moved_marks'], args.old)}{pool}"
                 + (f"; '{args.old}' keeps {got['kept']} answered item(s) (answers are never moved or deleted)"
                    if got["kept"] else ""))
            _warn_bundle_out(store, study, args.old)  # renamed: same id, its bundle merges as before
    return 0


def run_rename(args: argparse.Namespace) -> int:
    with _open(args) as store:
        store.rename_study(args.name, args.new_name)
    _say(f"study {args.name} is now {args.new_name.strip()}")
    return 0


def run_archive(args: argparse.Namespace) -> int:
    """`study archive NAME` (read-only and hidden from lists until unarchived) and `study unarchive NAME`
    (= `study archive --undo`)."""
    with _open(args) as store:
        store.set_study_archived(args.name, not args.undo)
    _say(f"study {args.name} " + ("is back: in the lists, and open to annotate and adjudicate" if args.undo else
                                  "archived: read-only (annotate, adjudicate, bundles and assignments refused) and "
                                  "hidden from lists (`study list --archived` shows it); `prefval study unarchive "
                                  f"{args.name}` brings it back"))
    return 0


def _rescued(store, study, annotator: str | None = None) -> list[tuple[str, int]]:
    """The rescue files holding rows of the study (of that annotator) not in the database (annotator.recovery)."""
    from annotator.recovery import rows_waiting

    who = store.find_annotator(annotator) if annotator else None
    if annotator and who is None:
        return []
    return rows_waiting(store, study.id, who.id if who else None)


def _warn_rescued(store, study, name: str) -> None:
    """Print on stderr that a rescue file holds rows of `name` in the study that this command makes impossible to
    put back until the items are theirs again, if so."""
    for path, n in _rescued(store, study, name):
        print(visible(f"warning: {path} holds {n} row(s) of '{name}' in study {study.name} that a screen could not "
                      f"write: put them back first (prefval recover {path}); for an item released now recover "
                      f"refuses them until `prefval study assign {study.name} --annotators {name}` gives it back",
                      layout=False), file=sys.stderr)


def run_delete(args: argparse.Namespace) -> int:
    with _open(args) as store:
        study = store.get_study(args.name)
        waiting = _rescued(store, study)  # its rows could never be put back
        if waiting:
            path, n = waiting[0]
            raise PrefvalError(f"study '{args.name}' has {n} row(s) in {path} that a screen could not write; put "
                               f"them back first (prefval recover {path}), or delete that file if they are not "
                               "wanted")
        n = store.delete_study(args.name)
    _say(f"study {args.name} deleted ({n} items; the imported items stay in their dataset)")
    return 0


def run_exclude_annotator(args: argparse.Namespace) -> int:
    from reports.study_data import excluded_annotators

    with _open(args) as store:
        study = _live_study(store, args.name, "changed (exclude-annotator)")
        who = store.find_annotator(args.annotator)
        if who is None or not store.assignments(study.id, who.id):
            raise PrefvalError(f"'{args.annotator}' has no items in study '{args.name}' in {store.path}")
        excluded = excluded_annotators(store, study.id)
        if args.undo:
            if who.name not in excluded:
                raise PrefvalError(f"'{who.name}' is not excluded from study '{args.name}'")
            store.log_event("annotator_included", study.id, who.id, annotator=who.name)
            echo(f"{who.name}'s answers count again in the figures of {args.name}")
            return 0
        reason = (args.reason or "").strip()
        if not reason:
            raise PrefvalError("--reason is required: say why the annotator's answers are left out")
        store.log_event("annotator_excluded", study.id, who.id, annotator=who.name, reason=reason)
    echo(f"{who.name}'s answers are left out of the figures of {args.name} (reason: {reason}); their rows stay")
    return 0
