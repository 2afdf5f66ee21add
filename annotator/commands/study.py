"""`prefval study create|list|assign`."""
from __future__ import annotations

import argparse
from pathlib import Path

from storage.errors import PrefvalError
from storage.textfile import read_text


def _parse_options(pairs: list[str]) -> dict:
    out = {}
    for p in pairs:
        if "=" not in p:
            raise PrefvalError(f"--option '{p}': expected KEY=VALUE")
        k, v = p.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def _split(text: str | None) -> list[str]:
    return [t.strip() for t in (text or "").split(",") if t.strip()]


def register(sub: argparse._SubParsersAction) -> None:
    from annotator.cli import add_db_option
    from annotator.tasks import TASKS

    p = sub.add_parser("study", help="create and list studies")
    ssub = p.add_subparsers(dest="study_command", metavar="ACTION")
    c = ssub.add_parser("create", help="create a study over a dataset",
                        description="Create a study: the task type decides what annotators see and answer.")
    c.add_argument("name")
    c.add_argument("--task", required=True, choices=sorted(TASKS))
    c.add_argument("--dataset", action="append", default=[], help="input dataset (repeat for two, e.g. pairwise)")
    c.add_argument("--sample", type=int, help="use a seeded random sample of N items")
    c.add_argument("--seed", type=int, default=0, help="seed for sampling and per-annotator shuffles")
    c.add_argument("--annotators-per-item", type=int, help="annotators per item (task default otherwise)")
    c.add_argument("--annotators", help="comma-separated names to assign now (otherwise claimed on first annotate)")
    c.add_argument("--guidelines", help="Markdown file shown with `?` (task default otherwise)")
    c.add_argument("--from-study", help="use the records kept by this earlier study as input (persona rounds)")
    c.add_argument("--rubric", help="rubric file, YAML or JSON (rubric task; default: the built-in one)")
    c.add_argument("--pairs", help="pairing file (pairwise task; default: seeded random pairing)")
    c.add_argument("--reasons", help="comma-separated drop reasons (persona_filter)")
    c.add_argument("--dimensions", help="comma-separated dimensions (item_quality, rubric)")
    c.add_argument("--calibration", type=int, default=0, help="number of calibration items (rubric)")
    c.add_argument("--shared", type=int, help="items every annotator gets; the rest go to one each (rubric)")
    c.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="task option; repeatable")
    add_db_option(c)
    c.set_defaults(func=run_create)
    ls = ssub.add_parser("list", help="list studies")
    add_db_option(ls)
    ls.set_defaults(func=run_list)
    a = ssub.add_parser("assign", help="assign a study's items to named annotators")
    a.add_argument("name")
    a.add_argument("--annotators", required=True, help="comma-separated names")
    add_db_option(a)
    a.set_defaults(func=run_assign)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_create(args: argparse.Namespace) -> int:
    from annotator.cli import db_path
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec
    from storage.store import Store

    if not args.name.strip():
        raise PrefvalError("the study name must not be empty")
    if args.annotators_per_item is not None and args.annotators_per_item < 1:
        raise PrefvalError("--annotators-per-item must be at least 1")
    if args.sample is not None and args.sample < 1:
        raise PrefvalError("--sample must be at least 1")
    guidelines = None
    if args.guidelines:
        path = Path(args.guidelines)
        if not path.is_file():
            raise PrefvalError(f"{path}: no such file")
        guidelines = read_text(path)
    names = [n.strip() for n in (args.annotators or "").split(",") if n.strip()]
    spec = StudySpec(name=args.name, task=args.task, datasets=args.dataset, sample=args.sample, seed=args.seed,
                     annotators_per_item=args.annotators_per_item, annotators=names, guidelines=guidelines,
                     from_study=args.from_study, rubric=args.rubric, pairs=args.pairs,
                     reasons=_split(args.reasons), dimensions=_split(args.dimensions),
                     calibration=args.calibration, shared=args.shared, options=_parse_options(args.option))
    with Store.open(db_path(args, must_exist=True)) as store:
        study = create_study(store, spec)
        n = len(store.units(study.id))
        k = study.settings.get("annotators_per_item", 1)
    print(f"study {study.name}: task {study.task_type}, {n} items, {k} annotator(s) per item, seed {study.seed}")
    if args.sample is not None and n < args.sample:
        print(f"note: --sample {args.sample} asked for more items than the dataset offers; the study has all {n}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    from annotator.cli import db_path
    from storage.store import Store

    with Store.open(db_path(args, must_exist=True)) as store:
        for s in store.studies():
            n = len(store.units(s.id))
            print(f"{s.name}\t{s.task_type}\t{n} items\tdatasets: {', '.join(s.settings.get('datasets', []))}")
    return 0


def run_assign(args: argparse.Namespace) -> int:
    from annotator.cli import db_path
    from annotator.study_setup import assign_named
    from storage.store import Store

    names = [n.strip() for n in args.annotators.split(",") if n.strip()]
    with Store.open(db_path(args, must_exist=True)) as store:
        out = assign_named(store, store.get_study(args.name), names)
    for name, n in out.items():
        print(f"{name}: {n} items")
    return 0
