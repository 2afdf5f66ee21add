"""`prefval report STUDY... [--format md|html|latex|json] [--out PATH]`: each study's task figures (the paper's
tables) and a per-annotator section, rendered by reports.render."""
from __future__ import annotations

import argparse
import sys

from storage.errors import PrefvalError
from annotator.safe_text import echo



def seconds_arg(text: str) -> float:
    """An argparse type: a finite number of seconds >= 0 (float). Raises argparse.ArgumentTypeError (argparse prints
    it as one usage line, exit 2) for anything else: -1, nan, inf, "soon"."""
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, got {text!r}")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    from annotator.cli import add_db_option, add_out_option

    p = sub.add_parser(
        "report", help="write a report of one or more studies (Markdown, HTML, LaTeX or JSON)",
        description="Figures with 95 percent intervals and n, the task's tables, plots (HTML, as inline SVG) and a "
                    "per-annotator section (items done, time, too-fast answers, agreement with the others).")
    p.add_argument("studies", nargs="+", metavar="STUDY", help="the studies to report on")
    p.add_argument("--format", choices=["md", "html", "latex", "json"], default="md", help="output format (default md)")
    p.add_argument("--too-fast", type=seconds_arg, default=2.0, metavar="SECONDS",
                   help="floor of the too-fast threshold: max(SECONDS, a tenth of the median time) (default 2)")
    p.add_argument("--epsilon", type=float, default=0.2, metavar="E",
                   help="alternative annotator test: the cost-benefit margin epsilon (default 0.2, the paper's "
                        "value for expert annotators; 0.15 skilled, 0.1 crowd-workers)")
    p.add_argument("--alt-test-min-items", type=int, default=30, metavar="N",
                   help="alternative annotator test: leave out annotators with fewer than N items shared with the "
                        "judge and another annotator (default 30, for the t-test; below 30 the test's winning rate "
                        "is shown, but the report answers 'cannot tell yet' to whether the judge may replace the "
                        "people); with --alt-test-rule small-sample they are tested by a Wilcoxon signed-rank test")
    p.add_argument("--alt-test-rule", choices=["paper", "small-sample"], default="paper",
                   help="alternative annotator test: 'paper' (default: 3 or more people, the t-test on 30 or more "
                        "items each) or 'small-sample', the authors' FAQ rule: people with fewer items tested by a "
                        "one-sided Wilcoxon signed-rank test, two people enough; its answers say they rest on it")
    add_out_option(p)
    add_db_option(p)
    p.set_defaults(func=run)


def build_reports(store, names: list[str], min_seconds: float = 2.0, epsilon: float = 0.2,
                  alt_test_min_items: int = 30, alt_test_rule: str = "paper") -> list:
    """One reports.render.StudyReport per study name, in the order given. A study with human and LLM-judge
    answers on the same units gets the judge-validation section (reports.judge_vs_human) after its task's
    figures, opened by one sentence per judge (a reports.render.Lead: may it replace the people on this study?),
    and a study with model answers or judge runs the section of reports.llm_answers; epsilon,
    alt_test_min_items and alt_test_rule go to the alternative annotator test. Raises PrefvalError for an unknown
    study (before anything is rendered) and for epsilon outside [0, 1)."""
    from annotator.tasks import get_task
    from reports.judge_vs_human import VERDICT_TITLE, judge_validation
    from reports.llm_answers import llm_answers_section
    from reports.notes import notes_table
    from reports.render import Lead, StudyReport
    from reports.study_data import load_study_data

    if not 0 <= epsilon < 1:
        raise PrefvalError(f"--epsilon must be at least 0 and below 1, got {epsilon:g}")
    studies = [store.get_study(n) for n in names]  # fail on an unknown name first
    out = []
    for s in studies:
        task = get_task(s.task_type)
        if task.reads_columns() and not store.has_llm_answers(s.id) and not store.current_adjudications(s.id):
            report = _report_from_columns(store, s, task, min_seconds)
            if report is not None:
                out.append(report)
                continue
        data = load_study_data(store, s.name)
        table = task.quality_table(store, data, min_seconds=min_seconds)
        header = {"task": s.task_type, "items": len(data.units), "assignments": data.n_assignments,
                  "current answers": len(data.answers), "skipped": len(data.skipped)}
        if data.model_answers:  # never counted among the people's answers above
            header["model answers"] = len(data.model_answers)
        figures = task.figures(data)
        from annotator.adjudication import adjudication_table
        from annotator.tasks.outcome import outcome_tables

        outcomes = task.outcomes(data)
        figures.tables += outcome_tables(
            [outcomes[u.id] for u in data.units],
            [(data.items[u.item_id].external_id, data.items[u.item_b_id].external_id if u.item_b_id else None)
             for u in data.units])


        adjudicated = adjudication_table(store, data, task)
        if adjudicated is not None:
            figures.tables.append(adjudicated)
            kinds = [data.adjudications[u.id].kind for u in data.units if u.id in data.adjudications]
            header["adjudicated"] = kinds.count("final")
            header["excluded by adjudication"] = kinds.count("exclude")
        leads = []
        judged = judge_validation(data, epsilon=epsilon, min_instances=alt_test_min_items, rule=alt_test_rule)
        if judged is not None:  # the answer first: may the judge replace the people (reports.stats.replacement)
            leads.append(Lead(VERDICT_TITLE, judged.sentences, before=judged.figures.tables[0].key
                              if judged.figures.tables else None))
        for section in (judged.figures if judged is not None else None, llm_answers_section(data, task)):
            if section is not None:
                figures.figures += section.figures
                figures.tables += section.tables
                figures.plots += section.plots
        notes = notes_table(data)
        if notes is not None:
            figures.tables.append(notes)
            header["notes"] = len(notes.rows)
        out.append(StudyReport(figures=figures, per_annotator=table, header=header, leads=leads))
    combined = benchpres_table1_across(out)
    if combined is not None:
        out.append(combined)
    return out


def benchpres_table1_across(reports: list):
    """BenchPreS Table 1 over several studies of `evaluate judge-reflection` reported together (one evaluated
    model per --out, so one study per model): their benchpres_table1 rows in one table, each with its study, as a
    last section; None when fewer than two of the reports have one."""
    from reports.figures import FigureSet, Table
    from reports.llm_answers import TABLE1_COLUMNS, TABLE1_NOTE
    from reports.render import StudyReport

    found = [(r.figures.study, t) for r in reports for t in r.figures.tables if t.key == "benchpres_table1"]
    if len(found) < 2:
        return None
    rows = [[study, *row] for study, t in found for row in t.rows]
    names = ", ".join(study for study, _ in found)
    table = Table(key="benchpres_table1_all", title=f"BenchPreS Table 1 over the studies {names}",
                  columns=["study"] + TABLE1_COLUMNS, rows=rows, note=TABLE1_NOTE)
    return StudyReport(figures=FigureSet(study=names, task="BenchPreS Table 1", tables=[table]),
                       header={"studies": len(found), "evaluated models": len({r[1] for r in rows})})


def _report_from_columns(store, study, task, min_seconds: float):
    """The StudyReport of a study without LLM answers or adjudications (their sections read StudyData) whose task
    computes its figures from columns (TaskType.reads_columns): its answers read as a StudyTable
    (reports.study_table: numpy columns, no object per answer, as `prefval status STUDY` reads them), giving the
    same figures, quality table, notes and header as the StudyData path of build_reports."""
    from annotator.tasks.outcome import NEEDS_ADJUDICATION, outcome_tables
    from reports.notes import notes_table_of
    from reports.render import StudyReport
    from reports.study_table import load_study_table


    table = load_study_table(store, study.name, task.table_values, task.table_lengths)
    quality = task.quality_table_from_table(table, min_seconds=min_seconds)
    header = {"task": study.task_type, "items": table.n_units, "assignments": store.assignment_count(study.id),
              "current answers": len(table.code), "skipped": len(table.skip_unit)}
    outcomes = task.outcomes_from_table(table)
    if any(o.state == NEEDS_ADJUDICATION for o in outcomes):
        return None  # the items waiting for adjudication are listed by name: the StudyData path has them
    figures = task.figures_from_table(table)
    figures.tables += outcome_tables(outcomes)
    notes = notes_table_of(table.notes)
    if notes is not None:
        figures.tables.append(notes)
        header["notes"] = len(notes.rows)
    return StudyReport(figures=figures, per_annotator=quality, header=header)


def run(args: argparse.Namespace) -> int:
    from annotator.cli import db_path
    from reports.render import render
    from storage.outfile import check_output, write_output
    from storage.store import Store

    db = db_path(args, must_exist=True)
    if args.out:
        check_output(args.out, [db], args.force)  # before the slow part: a wrong --out fails at once
    from reports.study_data import gc_paused

    with Store.open(db, mode="ro") as store, gc_paused():
        reports = build_reports(store, args.studies, args.too_fast, args.epsilon, args.alt_test_min_items,
                                args.alt_test_rule)
    title = "prefval report: " + ", ".join(args.studies)
    text = render(reports, args.format, title=title)
    if args.out:
        write_output(args.out, text, [db], args.force)
        echo(f"report of {len(reports)} studies written to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)  # render() already shows control characters as visible escapes
    return 0
