"""`prefval report STUDY... [--format md|html|latex|json] [--out PATH]`: each study's task figures (the paper's
tables) and a per-annotator section, rendered by reports.render."""
from __future__ import annotations

import argparse
import sys

from storage.errors import PrefvalError


def register(sub: argparse._SubParsersAction) -> None:
    from annotator.cli import add_db_option

    p = sub.add_parser(
        "report", help="write a report of one or more studies (Markdown, HTML, LaTeX or JSON)",
        description="Figures with 95 percent intervals and n, the task's tables, plots (HTML, as inline SVG) and a "
                    "per-annotator section (items done, time, too-fast answers, agreement with the others).")
    p.add_argument("studies", nargs="+", metavar="STUDY")
    p.add_argument("--format", choices=["md", "html", "latex", "json"], default="md")
    p.add_argument("--out", help="output file (default: standard output)")
    p.add_argument("--too-fast", type=float, default=2.0, metavar="SECONDS",
                   help="floor of the too-fast threshold: max(SECONDS, a tenth of the median time) (default 2)")
    add_db_option(p)
    p.set_defaults(func=run)


def build_reports(store, names: list[str], min_seconds: float = 2.0) -> list:
    """One reports.render.StudyReport per study name, in the order given. Raises PrefvalError for an unknown
    study (before anything is rendered)."""
    from annotator.tasks import get_task
    from reports.per_annotator import per_annotator_table
    from reports.render import StudyReport
    from reports.study_data import load_study_data

    studies = [store.get_study(n) for n in names]  # fail on an unknown name first
    out = []
    for s in studies:
        data = load_study_data(store, s.name)
        task = get_task(s.task_type)
        label_fn = getattr(task, "agreement_label", None)
        table = per_annotator_table(data, store.annotations(s.id), min_seconds=min_seconds, label_fn=label_fn)
        header = {"task": s.task_type, "items": len(data.units), "assignments": data.n_assignments,
                  "current answers": len(data.answers), "skipped": len(data.skipped)}
        figures = task.figures(data)
        from annotator.adjudication import adjudication_table

        adjudicated = adjudication_table(store, data, task)
        if adjudicated is not None:
            figures.tables.append(adjudicated)
            header["adjudicated"] = len(adjudicated.rows)
        out.append(StudyReport(figures=figures, per_annotator=table, header=header))
    return out


def run(args: argparse.Namespace) -> int:
    from annotator.cli import db_path
    from reports.render import render
    from storage.store import Store

    with Store.open(db_path(args, must_exist=True)) as store:
        reports = build_reports(store, args.studies, args.too_fast)
    title = "prefval report: " + ", ".join(args.studies)
    text = render(reports, args.format, title=title)
    if args.out:
        try:
            with open(args.out, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise PrefvalError(f"{args.out}: cannot write the output ({exc.strerror})") from None
        print(f"report of {len(reports)} studies written to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
