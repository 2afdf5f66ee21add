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
    p.add_argument("--format", choices=["table", "json"], default="table", help="a table for people (default) or JSON")
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
    exported and not merged back since: [{annotator, file_name, exported_at, n_items}]) and, with models' answers,
    "judge_verdicts" (one sentence per model on the study's people: may it replace them, as `prefval report`
    opens its judge-validation section, reports.judge_vs_human.judge_verdicts): the study's answers and
    its log are read once for all four, as columns (reports.study_table.load_study_table: memory that does not
    grow with the number of answers) for task types that compute their figures from them (TaskType.reads_columns),
    else as reports.study_data.load_study_data.
    """
    from annotator.tasks import get_task

    out = {"datasets": [{"name": d.name, "format": d.format, "items": d.n_items} for d in store.datasets()],
           "generation": [{k: r[k] for k in ("pipeline", "stage", "done", "failed", "calls", "prompt_tokens",
                                             "completion_tokens", "cost_usd")} for r in store.gen_summary()],
           "batches": batch_rows(store), "studies": []}
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
        if names:  # every item's outcome, by the one rule release and the funnel use (annotator.tasks.outcome)
            from annotator.tasks.outcome import summary

            row["outcomes"] = summary(task.outcomes_from_table(table) if table is not None
                                      else task.outcomes(data).values())
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
        if names and store.has_llm_answers(s.id):  # models' answers: their own section, never among the people's
            from reports.judge_vs_human import judge_verdicts
            from reports.llm_answers import llm_answers_section
            from reports.study_data import load_study_data

            if data is None:
                data = load_study_data(store, s.name)
            section = llm_answers_section(data, task)
            if section is not None:
                row["figures"] += [f.model_dump() for f in section.figures]
                row["tables"] += [t.model_dump() for t in section.tables]
            # may each judge replace the people (reports.judge_vs_human: the report's sentence, same defaults)
            row["judge_verdicts"] = judge_verdicts(data) or []
        if names:
            row["bundles_out"] = [{k: b[k] for k in ("annotator", "file_name", "exported_at", "n_items")}
                                  for b in store.bundles_out(s.id)]  # exported, not merged back since
        out["studies"].append(row)
    return out


BAR_WIDTHS = (12, 3)  #: the progress bar's widest and narrowest width (characters)
NAME_MIN = 8  #: a study name is shortened (with an ellipsis) to no fewer terminal cells than this
TASK_MIN = 6  #: a task name is shortened to this many cells, as a late step on narrow terminals
ELLIPSIS = "…"


def _graphemes(text: str) -> list[tuple[str, int]]:
    """text as (grapheme, terminal cells) pairs: a wide (CJK) character takes 2 cells, a combining mark or an
    emoji sequence joined by zero-width joiners stays with its base (rich.cells, as the terminal draws them)."""
    try:
        from rich.cells import split_graphemes
    except ImportError:  # an older rich: one character at a time
        from rich.cells import get_character_cell_size

        return [(ch, get_character_cell_size(ch)) for ch in text]
    spans, _ = split_graphemes(text)
    return [(text[a:b], w) for a, b, w in spans]


def cells(text: str) -> int:
    """The number of terminal cells text takes (a wide character 2; see _graphemes)."""
    return sum(w for _, w in _graphemes(text))


def _head(text: str, width: int) -> str:
    """The longest start of text that takes at most width cells (never a grapheme split)."""
    out, used = [], 0
    for g, w in _graphemes(text):
        if used + w > width:
            break
        out.append(g)
        used += w
    return "".join(out)


def _tail(text: str, width: int) -> str:
    """The longest end of text that takes at most width cells (never a grapheme split)."""
    out, used = [], 0
    for g, w in reversed(_graphemes(text)):
        if used + w > width:
            break
        out.append(g)
        used += w
    return "".join(reversed(out))


def _pad(text: str, width: int, right: bool = False) -> str:
    """text padded with spaces to width cells (on the left when right=True: right-aligned)."""
    fill = " " * max(0, width - cells(text))
    return fill + text if right else text + fill


def _shorten(text: str, width: int, tail: int) -> str:
    """text in at most width cells: whole when it fits, else its start, an ellipsis and its last `tail` cells."""
    if cells(text) <= width:
        return text
    end = _tail(text, tail) if tail else ""
    return _head(text, width - 1 - cells(end)) + ELLIPSIS + end


HEAD_MIN = 3  #: cells of a shortened name's start that always stay (else the column is widened)
SEPARATORS = "-_.: /"  #: where a shortened name's kept end may start (a whole last part: "pers…-r1")


def _extend_tail(text: str, width: int, tail: int, head_min: int = HEAD_MIN) -> int:
    """The cells to keep at the end of text: `tail`, widened back to the separator before it (SEPARATORS), so
    that "personas-r1" keeps "-r1" rather than "1", when that leaves at least head_min cells of its start."""
    if not tail:
        return tail
    end = _tail(text, tail)
    rest = text[:len(text) - len(end)]
    cut = max(rest.rfind(c) for c in SEPARATORS)
    if cut < 0:
        return tail
    wider = cells(text[cut:])
    return wider if width - 1 - wider >= head_min else tail


def distinct_names(names: list[str], width: int, head_min: int = HEAD_MIN) -> list[str] | None:
    """Each name shown in at most width cells so that different names never look the same: a name that fits is
    shown whole; a longer one is cut to its start and an ellipsis ("a-very-…"). When cut names would look alike (or
    like another name), those names keep their end too, the fewest cells that tell them apart (at least head_min
    cells of the start stay), widened to a whole last part where that fits ("personas-r1", "personas-r2" at 8 cells:
    "pers…-r1", "pers…-r2"). Returns the shown names in the order given, or None when width is too narrow to tell
    them apart (names that differ only in the middle: the caller gives more width). Equal names stay equal."""
    tails = [0] * len(names)
    cut = [cells(n) > width for n in names]
    while True:
        shown = [_shorten(n, width, t) for n, t in zip(names, tails)]
        groups: dict[str, set[str]] = {}
        for n, s in zip(names, shown):
            groups.setdefault(s, set()).add(n)
        clash = [i for i, s in enumerate(shown) if cut[i] and len(groups[s]) > 1]
        if not clash:
            break
        for i in clash:
            tails[i] += 1
            if width - 1 - tails[i] < min(head_min, width - 1):  # too little of the start would stay
                return None
    # a whole last part where it fits, as long as the names stay apart
    wider = [_shorten(n, width, _extend_tail(n, width, t)) for n, t in zip(names, tails)]
    if len(set(wider)) == len(set(names)):  # shown names are a function of the names: still one per name
        return wider
    return shown


def fit_names(names: list[str], width: int) -> tuple[list[str], int]:
    """distinct_names at width cells, or at the first wider width where the names can be told apart (at most
    the widest name's, where every name is whole). Returns (shown names, the column's width in cells)."""
    natural = max([cells(n) for n in names] + [0])
    for w in range(min(width, natural), natural + 1):
        shown = distinct_names(names, w)
        if shown is not None:
            return shown, max([cells(s) for s in shown] + [0])
    return list(names), natural


def shown_name(name: str) -> str:
    """A study name as the status table shows it: control and bidi characters as visible escapes
    (storage.visible_text.visible), and in quotes when it starts or ends with whitespace (a name from before names
    were checked: 'pm ' would otherwise look like pm beside it)."""
    from annotator.safe_text import visible

    text = visible(name, layout=False)
    return f"'{text}'" if text != text.strip() else text


def _terminal_width() -> int:
    """The width to fit the status in (columns): $COLUMNS when set to a positive number, else the terminal's
    that standard output is (shutil.get_terminal_size), else unlimited (a pipe, a file)."""
    import shutil

    return shutil.get_terminal_size((10**6, 24)).columns


#: the steps that narrow the table, in order, until the lines fit (each keeps the ones before):
#: (name cells or None for whole names, bar cells (0: no bar), short headers, date characters (0: no column),
#: task cells or None for whole task names)
PLANS = (
    (None, BAR_WIDTHS[0], False, 16, None),   # everything whole
    (None, 6, False, 16, None),               # 1. the bar narrows to 6
    (None, 6, True, 16, None),                # 2. headers shorten ("ann.", "last (UTC)")
    (NAME_MIN, 6, True, 16, None),            # 3. long study names shortened to the room left, >= 8 cells
    (NAME_MIN, BAR_WIDTHS[1], True, 16, None),  # 4. the bar narrows to 3
    (NAME_MIN, BAR_WIDTHS[1], True, 11, None),  # 5. last activity without the year ("12-01 10:32")
    (NAME_MIN, 0, True, 11, None),            # 6. no bar (answers / needed and the share stay)
    (NAME_MIN, 0, True, 11, TASK_MIN),        # 7. task names shortened to 6 cells
    (NAME_MIN, 0, True, 0, TASK_MIN),         # 8. no last-activity column
)


def study_lines(studies: list[dict], width: int | None = None) -> list[str]:
    """The studies as a header and one line each: name, task, items, annotators (+ LLM judges), a progress bar
    with answers given / answers needed and the share, last activity (UTC, to the minute). Each column is as wide
    as its widest value in terminal cells (a wide CJK character takes two; no fixed padding). When the lines would
    be wider than `width` (columns; default _terminal_width: $COLUMNS, else the terminal's, unlimited in a pipe),
    the table narrows by the steps of PLANS in order until it fits: the bar from 12 to 6, shorter headers, long
    study names shortened to the room the other columns leave, no fewer than 8 cells (distinct_names: two studies
    never show the same name, so "personas-r1" and "personas-r2" in 8 cells become "pers…-r1" and "pers…-r2";
    names that differ only in the middle get a wider column), the bar to 3, the date without its year, no bar,
    task names cut to 6 cells, no date. A line still too wide (a terminal under 60 columns, or counts in the
    millions) is cut at the width with an ellipsis, so each study is always one line. Names are shown by shown_name
    (visible escapes; in quotes when they start or end with whitespace)."""
    from annotator.progress_text import progress_bar

    if width is None:
        width = _terminal_width()
    rows = []
    for s in studies:
        people = f"{s['n_annotators']}" + (f" +{s['llm_judges']} LLM" if s.get("llm_judges") else "")
        rows.append((shown_name(s["name"]), s["task"], f"{s['items']:,}", people,
                     f"{s['answered']:,}/{s['needed']:,}", f"{s['progress'] or 0.0:.0%}",
                     (s["last_activity"] or "")[:16].replace("T", " ") or "-", s))

    def render(name_w: int | None, bar: int, short: bool, date: int, task_w: int | None) -> list[str]:
        heads = ("study", "task", "items", "ann." if short else "annotators", "",
                 "last (UTC)" if short else "last activity (UTC)")
        tasks, ws1 = fit_names([r[1] for r in rows], task_w) if task_w else \
            ([r[1] for r in rows], max(cells(r[1]) for r in rows))
        ws = [max([cells(r[i]) for r in rows] + [len(heads[i])]) for i in range(6)]
        ws[1] = max(ws1, len(heads[1]))
        cells_ = [(f"{progress_bar(r[7]['answered'], r[7]['needed'] or 1, bar)} " if bar else "")
                  + f"{r[4]:<{ws[4]}} {r[5]:>4}" for r in rows]
        span = len(cells_[0])
        prog_head = "progress (answers / needed)" if span >= 27 else "progress"
        span = max(span, len(prog_head))
        dates = [r[6] if r[6] == "-" or date >= 16 else r[6][16 - date:] for r in rows]
        if name_w:  # the room the other columns leave, and no less than name_w cells
            rest = 2 + ws[1] + 2 + ws[2] + 2 + ws[3] + 2 + span + (2 + max(map(len, dates + [heads[5]])) if date else 0)
            names, ws0 = fit_names([r[0] for r in rows], max(name_w, width - 2 - rest))
        else:
            names, ws0 = [r[0] for r in rows], max(cells(r[0]) for r in rows)
        ws[0] = max(ws0, len(heads[0]))
        last = f"  {heads[5]}" if date else ""
        head = (f"  {_pad('study', ws[0])}  {_pad(heads[1], ws[1])}  {heads[2]:>{ws[2]}}  {heads[3]:<{ws[3]}}  "
                + (f"{prog_head:<{span}}{last}" if date else prog_head))
        lines = [head]
        for r, name, task, cell, day in zip(rows, names, tasks, cells_, dates):
            lines.append(f"  {_pad(name, ws[0])}  {_pad(task, ws[1])}  {r[2]:>{ws[2]}}  {r[3]:<{ws[3]}}  "
                         + (f"{cell:<{span}}  {day}" if date else cell))
        return lines

    for plan in PLANS:
        lines = render(*plan)
        if max(map(cells, lines)) <= width:
            return lines
    # narrower than every plan: each line cut at the width, so that a study is still one line
    return [line if cells(line) <= width else _head(line, max(width - 1, 0)) + ELLIPSIS for line in lines]


def batch_rows(store, done_shown: int = 5) -> list[dict]:
    """Provider batches (`generate --batch`, `evaluate --batch`): every one not done yet and the last
    ``done_shown`` done ones; status "done" means its results were taken into the cache."""
    rows = store.llm_batches()
    shown = [b for b in rows if b.status != "done"] + [b for b in rows if b.status == "done"][-done_shown:]
    return [{"scope": b.scope, "id": b.id, "provider_batch_id": b.provider_batch_id, "status": b.status,
             "requests": b.n_lines, "done": b.n_completed, "failed": b.n_failed, "created": b.created_at}
            for b in sorted(shown, key=lambda b: (b.created_at, b.id))]


def render_text(status: dict, width: int | None = None) -> str:
    """The status dict as plain text for the terminal, every line within `width` cells (default
    _terminal_width: $COLUMNS, else the terminal's; unlimited in a pipe, which gets the full form).

    The studies' table fits by study_lines. A named study's parts fit by these rules: its annotators' lines
    (answered / assigned, skipped, median seconds) pad names by terminal cells and shorten long names to the room
    left (at least 8 cells, never two alike: fit_names); each table (e.g. accuracy by annotator, per annotator) is
    a table when it fits and otherwise one block per row (table_lines: the row's first cell, then its
    "column: value" pairs, a pair never split); every other line (figures, notes, bundles, datasets) wraps
    between words (wrap_line: a number or a bracketed interval such as "[0.100, 0.501]" is never split)."""
    from annotator.safe_text import visible
    from reports.figures import Figure
    from reports.render.cells import plain

    if width is None:
        width = _terminal_width()

    def v(text) -> str:  # data as text before it is measured (escapes take their cells)
        return visible(text, layout=False)

    lines = ["datasets:"]
    if status["datasets"]:
        names = [v(d["name"]) for d in status["datasets"]]
        nw = max(24, *map(cells, names))
        fw = max(12, *(cells(v(d["format"])) for d in status["datasets"]))
        for name, d in zip(names, status["datasets"]):
            lines += wrap_line(f"  {_pad(name, nw)} {_pad(v(d['format']), fw)} {d['items']} items", width)
    else:
        lines.append("  (none: try `prefval import ...` or `prefval demo`)")
    if status.get("generation"):
        lines.append("")
        lines += wrap_line("generated (pipeline / stage: rows done, failed, LLM calls, tokens in+out, USD):", width)
        for g in status["generation"]:
            usd = "USD unknown" if g["cost_usd"] is None else f"${g['cost_usd']:.4f}"
            tokens = ("unknown tokens" if g["prompt_tokens"] is None or g["completion_tokens"] is None
                      else f"{g['prompt_tokens']}+{g['completion_tokens']} tokens")
            lines += wrap_line(f"  {_pad(v(g['pipeline'] + ' / ' + g['stage']), 28)} {g['done']:>5} done "
                               f"{g['failed']:>4} failed {g['calls'] or 0:>6} calls "
                               f"{tokens} {usd}", width)
    if status.get("batches"):
        lines.append("")
        lines += wrap_line("provider batches (scope, batch: status, requests, done, failed, created):", width)
        for b in status["batches"]:
            lines += wrap_line(f"  {v(b['scope'])} {b['id']}: {b['status']}, {b['requests']} requests, {b['done']} "
                               f"done, {b['failed']} failed, {b['created'][:16].replace('T', ' ')} UTC", width)
    if status["studies"]:
        lines.append("")
    table = study_lines(status["studies"], width) if status["studies"] else []
    lines.extend(table[:1])
    for s, line in zip(status["studies"], table[1:]):
        lines.append(line)
        if "figures" not in s:
            continue
        lines += annotator_lines(s["annotators"], width)
        if s.get("outcomes"):
            from annotator.tasks.outcome import summary_text

            lines += wrap_line(f"    outcomes: {v(summary_text(s['outcomes'], s['name']))}", width)
        for sentence in s.get("judge_verdicts") or []:
            lines += wrap_line(f"    judge verdict: {v(plain(sentence))}", width)
        for f in s["figures"]:
            fig = Figure(**f)
            lines += wrap_line(f"    {v(fig.label)}: {v(fig.text())}", width)
        for t in s["tables"]:
            lines += wrap_line(f"    {v(t['title'])}:", width)
            lines += table_lines(t["columns"], t["rows"], width)
        for b in s.get("bundles_out") or []:
            lines += wrap_line(f"    bundle out (not merged back): {v(b['file_name'])} of {v(b['annotator'])}, "
                               f"{b['n_items']} items, exported {b['exported_at'][:16].replace('T', ' ')} UTC", width)
        notes = s.get("notes") or []
        if notes:
            shown = notes[-NOTES_SHOWN:]
            more = f"; {len(notes) - len(shown)} earlier in `prefval report` and `prefval export`" \
                if len(notes) > len(shown) else ""
            lines += wrap_line(f"    notes ({len(notes)}{more}):", width)
            for n in shown:
                item = n["item"] + (f" / {n['item_b']}" if n.get("item_b") else "")
                lines += wrap_line(f"      {v(plain(item))}, {v(plain(n['annotator']))} ({n['status']}): "
                                   f"{v(plain(n['note']))}", width)
        lines.append("")
    return "\n".join(visible(line, layout=False) for line in lines)  # names and cells from data: as text


def annotator_lines(annotators: list[dict], width: int) -> list[str]:
    """A named study's annotators, one line each: name (" (LLM)" for a judge), answered / assigned, skipped and
    the median seconds per item ("    ana   3/6 answered  1 skipped  median 10.0s"), the columns aligned in
    terminal cells. When the lines are wider than `width`, names are shortened to the room left (at least
    NAME_MIN cells, two names never alike: fit_names); a line still too wide wraps between words (wrap_line)."""
    from annotator.safe_text import visible
    from storage.models import is_person_kind

    if not annotators:
        return []
    names = [visible(a["annotator"], layout=False) + ("" if is_person_kind(a["kind"]) else " (LLM)") for a in annotators]
    done = [f"{a['answered']:,}/{a['assigned']:,}" for a in annotators]
    dw = max(map(len, done))
    tails = [f"{d:<{dw}} answered  {a['skipped']:,} skipped  median "
             + ("-" if a["median_seconds"] is None else f"{a['median_seconds']}s") for d, a in zip(done, annotators)]
    nw = max(map(cells, names))
    room = width - 4 - 2 - max(map(cells, tails))
    if nw > room:
        names, nw = fit_names(names, max(NAME_MIN, room))
    out = []
    for name, tail in zip(names, tails):
        out += wrap_line(f"    {_pad(name, nw)}  {tail}", width)
    return out


def table_lines(columns: list, rows: list[list], width: int, indent: int = 6) -> list[str]:
    """A status table (reports.figures.Table columns and rows) in at most `width` cells a line: a table, each
    column as wide as its widest cell in terminal cells (a CJK character takes two), when it fits; else one
    block per row: its first column's "name: value" on a line of its own, then its other "column: value" pairs,
    as many to a line as fit (two spaces apart, a pair never split; one pair wider than the line wraps between
    words, wrap_line). Cells from data are shown as text (visible)."""
    from annotator.safe_text import visible

    cols = [visible(c, layout=False) for c in columns]
    body = [[visible(_cell(x), layout=False) for x in r] for r in rows]
    widths = [max([cells(c)] + [cells(r[i]) for r in body]) for i, c in enumerate(cols)]
    lead = " " * indent
    table = [(lead + "  ".join(_pad(x, w) for x, w in zip(r, widths))).rstrip() for r in [cols] + body]
    if max(map(cells, table)) <= width or not cols:
        return table
    out = []
    for r in body:
        out += wrap_line(f"{lead}{cols[0]}: {r[0]}", width)
        line = ""
        for pair in (f"{c}: {x}" for c, x in zip(cols[1:], r[1:])):
            if line and cells(lead) + 2 + cells(line) + 2 + cells(pair) <= width:
                line += "  " + pair
                continue
            if line:
                out += wrap_line(f"{lead}  {line}", width)
            line = pair
        if line:
            out += wrap_line(f"{lead}  {line}", width)
    if not body:
        out = wrap_line(lead + "  ".join(cols), width)
    return out


def _tokens(text: str) -> list[str]:
    """The words of text, a bracketed group such as an interval "[0.100, 0.501]" (and what sticks to its end) kept
    as one word."""
    import re

    return re.findall(r"\[[^\]\s]*(?:\s[^\]\s]*)*\]\S*|\S+", text)


def wrap_line(line: str, width: int) -> list[str]:
    """line in lines of at most `width` terminal cells, broken only between words (_tokens: never inside a number
    or a bracketed interval); the lines after the first are indented two cells more than it. A single word
    wider than the room is cut by cells (a path, never a number at 60 columns). A line that fits is returned as
    it is (spacing kept)."""
    if cells(line) <= width:
        return [line]
    indent = len(line) - len(line.lstrip(" "))
    lead, cont = " " * indent, " " * (indent + 2)
    out: list[str] = []
    cur = ""
    for tok in _tokens(line):
        room = width - cells(lead)
        if not cur or cells(cur) + 1 + cells(tok) <= room:
            cur = f"{cur} {tok}" if cur else tok
        else:
            out.append(lead + cur)
            lead, cur = cont, tok
        room = width - cells(lead)
        while cells(cur) > room > 0:  # one word wider than the line: cut by cells
            head = _head(cur, room)
            out.append(lead + head)
            lead, cur = cont, cur[len(head):]
            room = width - cells(lead)
    if cur:
        out.append(lead + cur)
    return out


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
        kept = rescue_files(store)  # decisions a screen could not write: never silent
    if args.format == "json":
        status["rescue_files"] = kept
        print(json_safe(json.dumps(status, indent=2, ensure_ascii=False)))
    else:
        print(render_text(status))
        if kept:
            from annotator.safe_text import visible

            print()
            print(visible(rescue_head(kept), layout=False))
            for k in kept:
                print(visible(f"  {k['path']}: {k['state']}", layout=False))
    return 0


def rescue_head(kept: list[dict]) -> str:
    """The line above the rescue files in `prefval status`: how many hold rows to put back, how many a screen is
    still saving, how many cannot be read, or that nothing is left in them."""
    waiting = sum(1 for k in kept if k["readable"] and not k["live_screen"] and not k["nothing_to_restore"])
    live = sum(1 for k in kept if k["live_screen"])
    broken = sum(1 for k in kept if not k["readable"])
    parts = [f"{waiting} holding rows a screen could not write (put them back with prefval recover FILE)"] \
        if waiting else []
    parts += [f"{live} still being saved by a running screen"] if live else []
    parts += [f"{broken} that prefval recover cannot read"] if broken else []
    return (f"{len(kept)} rescue file(s) beside the database: " + (", ".join(parts) if parts else
                                                                   "nothing left in them to restore") + ":")


def rescue_files(store) -> list[dict]:
    """The rescue files beside the store's database (annotator.rescue.rescue_files_of), each as {"path", "state":
    what `prefval recover` would do with it in words (annotator.recovery.Recovery.status_text, or why it cannot
    be read), "nothing_to_restore": every row is in the database already or superseded by a later decision,
    "readable": prefval recover can read it, "live_screen": the process id of the running screen that keeps it
    (it is still saving those rows) or None}. A file kept for another database (a copied folder) says so and gives
    the recover command with --db. Reads only."""
    from annotator.rescue import rescue_files_of

    files = rescue_files_of(store.path)
    if not files:  # the usual case: nothing more to import or read
        return []
    from annotator.recovery import plan
    from annotator.rescue import read_rescue_file, same_file
    from storage.errors import PrefvalError

    out = []
    for f in files:
        entry = {"path": str(f), "state": "", "nothing_to_restore": False, "readable": True, "live_screen": None}
        out.append(entry)
        try:
            kept = read_rescue_file(f)
            entry["live_screen"] = kept.live_screen()
            if entry["live_screen"]:
                entry["state"] = f"a screen (process {entry['live_screen']}) is still saving it"
                continue
            done = plan(store, kept)
        except PrefvalError as exc:
            entry.update(state=f"prefval recover cannot read it ({exc})", readable=False)
            continue
        entry.update(state=done.status_text(), nothing_to_restore=done.nothing_to_restore)
        if not same_file(store.path, kept.database):  # a copied or moved folder: recover needs --db
            entry["state"] = f"kept for {kept.database}: {entry['state']}" + (
                "" if done.nothing_to_restore else f"; for this database: prefval recover {f} --db {store.path}")
    return out
