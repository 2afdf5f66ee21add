"""`prefval status [STUDY...] [--format json]`: one line per study (task, items, annotators, a progress bar,
last activity), counted in SQL; `prefval status STUDY` adds that study's annotators and the task's figures."""
from __future__ import annotations

import argparse
import json


def register(sub: argparse._SubParsersAction) -> None:
    from annotator.cli import add_db_option

    p = sub.add_parser("status", help="progress of every study (one line each); STUDY: its annotators and figures",
                       description="Without STUDY: datasets, and one line per study (task, items, annotators, "
                                   "progress, last activity). With STUDY names: those studies' annotators and "
                                   "figures too.")
    p.add_argument("study", nargs="*", help="show these studies' annotators and figures")
    p.add_argument("--format", choices=["table", "json"], default="table")
    add_db_option(p)
    p.set_defaults(func=run)


def collect(store, names: list[str] | None = None, with_annotators: bool = True) -> dict:
    """The status as a dict: {"datasets": [...], "generation": [...], "studies": [{name, task, items, needed,
    answered, progress (answered / needed, 0..1), assignments, annotations (= answered), n_annotators,
    last_activity, annotators: [{annotator, kind, assigned, answered, skipped, open, median_seconds}]}]}.

    Progress comes from SQL counts (Store.study_progress, Store.annotator_progress): time and memory do not grow
    with the number of answers. Without names, "annotators" holds counts only (median_seconds None; empty when
    with_annotators=False, as the one-line-per-study text needs no per-annotator rows). With names, only those
    studies, each with the annotators' median seconds, "figures", "tables", "notes" and "bundles_out" (bundles
    exported and not merged back since: [{annotator, file_name, exported_at, n_items}]): the study's answers and
    its log are read once for all four, as columns (reports.study_table.load_study_table: memory that does not
    grow with the number of answers) for task types that compute their figures from them (TaskType.reads_columns),
    else as reports.study_data.load_study_data.
    """
    from annotator.tasks import get_task

    out = {"datasets": [{"name": d.name, "format": d.format, "items": d.n_items} for d in store.datasets()],
           "generation": [{k: r[k] for k in ("pipeline", "stage", "done", "failed", "calls", "prompt_tokens",
                                             "completion_tokens", "cost_usd")} for r in store.gen_summary()],
           "studies": []}
    studies = [store.get_study(n) for n in names] if names else store.studies()
    for s in studies:
        p = store.study_progress(s.id)
        per = store.annotator_progress(s.id, median=False) if (names or with_annotators) else []
        data = table = task = None
        if names:  # the study's answers and log, read once for the medians, figures, quality table and notes
            import statistics

            from reports.per_annotator import seconds_per_item, seconds_per_item_columns

            task = get_task(s.task_type)
            if task.reads_columns():  # answers as columns: memory that does not grow with the answers
                from reports.study_table import load_study_table

                table = load_study_table(store, s.name, task.table_values, task.table_lengths)
                ids = {table.annotators[i].name: i for i in table.annotators}
                secs = seconds_per_item_columns(table, excluded_too=True)
            else:
                from reports.study_data import load_study_data

                data = load_study_data(store, s.name)
                ids = {a.name: i for i, a in data.annotators.items()}
                secs = seconds_per_item(data, excluded_too=True)
            for a in per:
                times = secs.get(ids.get(a["annotator"]))
                a["median_seconds"] = statistics.median(times) if times else None
        for a in per:
            a["open"] = max(0, a["assigned"] - a["answered"] - a["skipped"])
            if a["median_seconds"] is not None:
                a["median_seconds"] = round(a["median_seconds"], 1)
        row = {"name": s.name, "task": s.task_type, "items": p["items"], "needed": p["needed"],
               "answered": p["answered"], "progress": round(p["answered"] / p["needed"], 4) if p["needed"] else None,
               "assignments": p["assignments"], "annotations": p["answered"], "n_annotators": p["annotators"],
               "llm_judges": p["llm_judges"], "last_activity": p["last_activity"], "annotators": per}
        if table is not None:
            figs = task.figures_from_table(table)
            row["figures"] = [f.model_dump() for f in figs.figures]
            row["tables"] = [t.model_dump() for t in figs.tables]
            row["tables"].append(task.quality_table_from_table(table).model_dump())
            row["notes"] = table.notes  # every note, oldest first
        elif names:
            figs = task.figures(data)
            row["figures"] = [f.model_dump() for f in figs.figures]
            row["tables"] = [t.model_dump() for t in figs.tables]
            # speed, agreement, attention checks and flags per annotator, as in `prefval report`
            row["tables"].append(task.quality_table(store, data).model_dump())
            from reports.notes import study_notes

            row["notes"] = study_notes(data)  # every note, oldest first
        if names:
            row["bundles_out"] = [{k: b[k] for k in ("annotator", "file_name", "exported_at", "n_items")}
                                  for b in store.bundles_out(s.id)]  # exported, not merged back since
        out["studies"].append(row)
    return out


BAR_WIDTHS = (12, 3)  #: the progress bar's widest and narrowest width (characters)
NAME_MIN = 8  #: a study name is cut (with an ellipsis) to no fewer characters than this


def _cut(text: str, width: int) -> str:
    """text cut to width characters, the last one an ellipsis when something was cut."""
    return text if len(text) <= width else text[:max(width - 1, 0)] + "…"


def study_lines(studies: list[dict], width: int | None = None) -> list[str]:
    """The studies as a header and one line each: name, task, items, annotators (+ LLM judges), a progress bar
    with answers given / answers needed and the share, last activity (UTC, to the minute). Each column is as wide
    as its widest value (no fixed padding); when the lines would be wider than `width` (characters; default the
    terminal's, shutil.get_terminal_size, unlimited when standard output is not a terminal and $COLUMNS is unset),
    the progress bar narrows from 12 to 6, long names are cut to 8 characters with an ellipsis, the bar narrows to
    3, and the headers shorten ("annotators" to "ann.", "last activity (UTC)" to "last (UTC)"). Names are given as
    they are (render_text shows them with visible escapes)."""
    import shutil

    from annotator.safe_text import visible
    from annotator.widgets.status_header import progress_bar

    if width is None:
        width = shutil.get_terminal_size((10**6, 24)).columns
    rows = []
    for s in studies:
        people = f"{s['n_annotators']}" + (f" +{s['llm_judges']} LLM" if s.get("llm_judges") else "")
        rows.append((visible(s["name"], layout=False), s["task"], f"{s['items']:,}", people,
                     f"{s['answered']:,}/{s['needed']:,}", f"{s['progress'] or 0.0:.0%}",
                     (s["last_activity"] or "")[:16].replace("T", " ") or "-", s))

    def render(name_w: int, bar: int, short: bool) -> list[str]:
        heads = ("study", "task", "items", "ann." if short else "annotators", "",
                 "last (UTC)" if short else "last activity (UTC)")
        ws = [max([len(r[i]) for r in rows] + [len(heads[i])]) for i in range(6)]
        ws[0] = name_w
        cells = [f"{progress_bar(r[7]['answered'], r[7]['needed'] or 1, bar)} {r[4]:<{ws[4]}} {r[5]:>4}"
                 for r in rows]
        span = len(cells[0])
        prog_head = "progress (answers / needed)" if span >= 27 else "progress"
        span = max(span, len(prog_head))
        head = (f"  {'study':<{ws[0]}}  {heads[1]:<{ws[1]}}  {heads[2]:>{ws[2]}}  {heads[3]:<{ws[3]}}  "
                f"{prog_head:<{span}}  {heads[5]}")
        return [head] + [f"  {_cut(r[0], ws[0]):<{ws[0]}}  {r[1]:<{ws[1]}}  {r[2]:>{ws[2]}}  {r[3]:<{ws[3]}}  "
                         f"{cell:<{span}}  {r[6]}" for r, cell in zip(rows, cells)]

    natural = max([len(r[0]) for r in rows] + [len("study")])
    cut = min(natural, NAME_MIN)
    plans = [(natural, BAR_WIDTHS[0], False), (natural, 6, False), (natural, 6, True), (cut, 6, True),
             (cut, BAR_WIDTHS[1], True)]
    for name_w, bar, short in plans:
        lines = render(name_w, bar, short)
        if max(map(len, lines)) <= width:
            break
    return lines  # a very narrow terminal: the narrowest plan, each study still one row of the table


def render_text(status: dict, width: int | None = None) -> str:
    """The status dict as plain text for the terminal; the studies' table fits `width` (study_lines)."""
    from annotator.safe_text import visible
    from reports.figures import Figure
    from reports.render.cells import plain

    lines = ["datasets:"]
    for d in status["datasets"]:
        lines.append(f"  {d['name']:<24} {d['format']:<12} {d['items']} items")
    if not status["datasets"]:
        lines.append("  (none: try `prefval import ...` or `prefval demo`)")
    if status.get("generation"):
        lines.append("")
        lines.append("generated (pipeline / stage: rows done, failed, LLM calls, tokens in+out, USD):")
        for g in status["generation"]:
            usd = "-" if g["cost_usd"] is None else f"${g['cost_usd']:.4f}"
            lines.append(f"  {g['pipeline'] + ' / ' + g['stage']:<28} {g['done']:>5} done {g['failed']:>4} failed "
                         f"{g['calls'] or 0:>6} calls {g['prompt_tokens'] or 0}+{g['completion_tokens'] or 0} "
                         f"tokens {usd}")
    if status["studies"]:
        lines.append("")
    table = study_lines(status["studies"], width) if status["studies"] else []
    lines.extend(table[:1])
    for s, line in zip(status["studies"], table[1:]):
        lines.append(line)
        if "figures" not in s:
            continue
        for a in s["annotators"]:
            med = "-" if a["median_seconds"] is None else f"{a['median_seconds']}s"
            kind = " (LLM)" if a["kind"] == "llm" else ""
            lines.append(f"    {a['annotator'] + kind:<22} {a['answered']:>6,}/{a['assigned']:<6,} answered  "
                         f"{a['skipped']} skipped  median {med}")
        for f in s["figures"]:
            fig = Figure(**f)
            lines.append(f"    {fig.label}: {fig.text()}")
        for t in s["tables"]:
            lines.append(f"    {t['title']}:")
            widths = [max(len(str(c)), *(len(_cell(r[i])) for r in t["rows"])) if t["rows"] else len(str(c))
                      for i, c in enumerate(t["columns"])]
            lines.append("      " + "  ".join(str(c).ljust(w) for c, w in zip(t["columns"], widths)))
            for r in t["rows"]:
                lines.append("      " + "  ".join(_cell(v).ljust(w) for v, w in zip(r, widths)))
        for b in s.get("bundles_out") or []:
            lines.append(f"    bundle out (not merged back): {b['file_name']} of {b['annotator']}, {b['n_items']} items, "
                         f"exported {b['exported_at'][:16].replace('T', ' ')} UTC")
        notes = s.get("notes") or []
        if notes:
            shown = notes[-NOTES_SHOWN:]
            more = f"; {len(notes) - len(shown)} earlier in `prefval report` and `prefval export`" \
                if len(notes) > len(shown) else ""
            lines.append(f"    notes ({len(notes)}{more}):")
            for n in shown:
                item = n["item"] + (f" / {n['item_b']}" if n.get("item_b") else "")
                lines.append(f"      {plain(item)}, {plain(n['annotator'])} ({n['status']}): {plain(n['note'])}")
        lines.append("")
    return "\n".join(visible(line, layout=False) for line in lines)  # names and cells from data: as text


NOTES_SHOWN = 5  # the latest notes of a named study in the text status; all of them in --format json, report, export


def _cell(v) -> str:
    from reports.render.cells import cell

    return "-" if v is None else cell(v)


def run(args: argparse.Namespace) -> int:
    from annotator.cli import db_path
    from annotator.safe_text import json_safe
    from storage.store import Store

    from reports.study_data import gc_paused

    with Store.open(db_path(args, must_exist=True), mode="ro") as store, gc_paused():
        status = collect(store, args.study or None, with_annotators=args.format == "json" or bool(args.study))
    if args.format == "json":
        print(json_safe(json.dumps(status, indent=2, ensure_ascii=False)))
    else:
        print(render_text(status))
    return 0
