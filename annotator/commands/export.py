"""`prefval export STUDY --format jsonl|csv [--out PATH]`: one row per current annotation, answers mapped back to
the item's original option letters. `prefval export --dataset NAME --format realpref [--out PATH.jsonl]`: a dataset's
items as RealPref records (JSONL), which `prefval import realpref` reads back into the same items."""
from __future__ import annotations

import argparse
import csv
import io
import json
import sys

from storage.errors import PrefvalError
from annotator.safe_text import echo


def register(sub: argparse._SubParsersAction) -> None:
    from annotator.cli import add_db_option, add_out_option

    p = sub.add_parser("export", help="export a study's current answers, or a dataset as RealPref records")
    p.add_argument("study", nargs="?", help="the study to export")
    p.add_argument("--dataset", help="export this dataset's items instead of a study (with --format realpref)")
    p.add_argument("--format", choices=["jsonl", "csv", "realpref"], default=None,
                   help="jsonl (default) or csv for a study; realpref for a dataset")
    p.add_argument("--history", action="store_true", help="every row of the append-only log, not just current")
    p.add_argument("--outcomes", action="store_true",
                   help="one row per item: what the study decided about it (passed, failed, undecided: needs "
                        "adjudication, too few answers, open), by whom, the people's answers counted and the "
                        "release fields; the same decision status, report, funnel and release give")
    add_out_option(p)
    add_db_option(p)
    p.set_defaults(func=run)


def export_rows(store, study_name: str, history: bool = False) -> list[dict]:
    """export_table's rows (the columns are each row's keys)."""
    return export_table(store, study_name, history)[1]


def export_table(store, study_name: str, history: bool = False) -> tuple[list[str], list[dict]]:
    """Rows: study, item (external id), item_b, annotator, annotator_kind, status, answer (dict), the task's
    fields (e.g. choice_text, is_correct), note (all notes the annotator wrote on the item, joined by " | "),
    flagged (the annotator marked the item "needs review"), submitted_at, seconds; an item flagged without an
    answer gets a row of its own with status "flagged", and so does an item with notes but no answer (status
    "skipped", or "note" while it is still open): every note is in the export. With history=True one row per log entry (notes, flags
    and unflags included) plus id/supersedes.
    Adjudications follow as rows with annotator_kind "adjudicator" and status "adjudicated" (the final answer)
    or "excluded" (note: the reason); the ones in force, or every one with history=True.
    Every row has the same keys in the same order (same_columns: the task's fields are None on rows without an
    answer, e.g. an exclusion by adjudication). Every row also has attention_check (the item is an attention check of the study, `--checks`),
    check_correct (on an answered check: whether the answer is right; None elsewhere or for a check without a
    key), annotator_excluded and excluded_reason (the annotator is left out of the study's figures by
    `study exclude-annotator`, and why): checks and excluded annotators' rows are exported like any other,
    marked, never left out.
    Returns (columns, rows). The columns are the same for every export of the study, with or without answers (an
    empty CSV export has its header): HEAD_COLUMNS, the task's columns (TaskType.export_columns of every unit, in
    study order: a study mixing T/F and MCQ items has both kinds), then the tail (column_order)."""
    from annotator.tasks import get_task
    from reports.study_data import load_study_data

    data = load_study_data(store, study_name)
    task = get_task(data.study.task_type)
    units = {u.id: u for u in data.units + data.check_units}
    checks = {u.id for u in data.check_units}
    log = store.annotations(data.study.id)
    rows_in = log if history else data.all_answers
    notes: dict[tuple[str, str], list[str]] = {}
    for a in log:
        if a.status == "note" and a.note:
            notes.setdefault((a.unit_id, a.annotator_id), []).append(a.note)
    flagged = store.flagged(data.study.id)
    if not history:
        answered = {(a.unit_id, a.annotator_id) for a in rows_in}
        last_flag: dict[tuple[str, str], object] = {}
        for a in log:
            if a.status == "flag" and (a.unit_id, a.annotator_id) in flagged - answered:
                last_flag[(a.unit_id, a.annotator_id)] = a
        rows_in = list(rows_in) + [a.model_copy(update={"status": "flagged"}) for a in last_flag.values()]
        # every note reaches the export: an item with notes but no answer row (skipped, or still open) gets its
        # skip row, else a row with status "note"
        covered = {(a.unit_id, a.annotator_id) for a in rows_in}
        skips = {(a.unit_id, a.annotator_id): a for a in data.all_skipped}
        for key in notes:
            if key in covered or key[0] not in units:
                continue
            last_note = next(a for a in reversed(log) if a.status == "note" and (a.unit_id, a.annotator_id) == key)
            rows_in.append(skips.get(key) or last_note.model_copy(update={"note": None}))
            covered.add(key)
    out = []
    # the task's export columns: those of a complete answer on each unit, in study order (attention checks last),
    # so that every export of the study, empty or not, has the same header; then any an answer adds
    known: dict[str, None] = {}  # an ordered set
    for u in data.units + data.check_units:
        known.update(dict.fromkeys(task.export_columns(data.study.settings, u, data.items[u.item_id],
                                                       data.items.get(u.item_b_id) if u.item_b_id else None)))
    task_keys = list(known)
    for a in rows_in:
        unit = units[a.unit_id]
        item = data.items[unit.item_id]
        item_b = data.items.get(unit.item_b_id) if unit.item_b_id else None
        row = {"study": data.study.name, "item": item.external_id,
               "item_b": item_b.external_id if item_b else None,
               "annotator": data.annotators[a.annotator_id].name,
               "annotator_kind": data.annotators[a.annotator_id].kind, "status": a.status, "answer": a.answer}
        if a.status in ("answered", "partial") and a.answer:
            row.update(_task_fields(task.export_fields(unit, item, item_b, a.answer), task_keys))
        note = a.note if history else " | ".join(notes.get((a.unit_id, a.annotator_id), [])) or None
        row.update({"note": note})
        if not history:
            row["flagged"] = (a.unit_id, a.annotator_id) in flagged
        row.update({"submitted_at": a.submitted_at, "seconds": a.seconds})
        name = data.annotators[a.annotator_id].name
        is_check = a.unit_id in checks
        row.update({"attention_check": is_check,
                    "check_correct": task.check_correct(item, a.answer) if is_check and a.status == "answered"
                    and a.answer else None,
                    "annotator_excluded": name in data.excluded, "excluded_reason": data.excluded.get(name)})
        if history:
            row.update({"id": a.id, "supersedes": a.supersedes})
        out.append(row)
    # adjudications: rows of their own kind (annotator_kind "adjudicator", status "adjudicated" or "excluded")
    adjudications = (store.adjudication_log(data.study.id) if history
                     else list(store.current_adjudications(data.study.id).values()))
    names = {a.id: a.name for a in store.annotators()}
    for adj in adjudications:
        unit = units[adj.unit_id]
        item = data.items[unit.item_id]
        item_b = data.items.get(unit.item_b_id) if unit.item_b_id else None
        row = {"study": data.study.name, "item": item.external_id,
               "item_b": item_b.external_id if item_b else None, "annotator": names.get(adj.adjudicator_id),
               "annotator_kind": "adjudicator", "status": "adjudicated" if adj.kind == "final" else "excluded",
               "answer": adj.answer}
        if adj.kind == "final" and adj.answer:
            row.update(_task_fields(task.export_fields(unit, item, item_b, adj.answer), task_keys))
        row["note"] = adj.reason
        if not history:
            row["flagged"] = False
        row.update({"submitted_at": adj.submitted_at, "seconds": None,
                    "attention_check": adj.unit_id in checks, "check_correct": None, "annotator_excluded": False,
                    "excluded_reason": None})
        if history:
            row.update({"id": adj.id, "supersedes": adj.supersedes})
        out.append(row)
    rows = same_columns(out, task_keys, history)
    return (list(rows[0]) if rows else column_order(task_keys, history)), rows


#: the columns of `prefval export --outcomes`
OUTCOME_COLUMNS = ("study", "item", "item_b", "outcome", "outcome_text", "reason", "decided_by", "label",
                   "answers", "quota", "release_fields")


def outcome_table(store, study_name: str) -> tuple[list[str], list[dict]]:
    """`prefval export STUDY --outcomes`: one row per item of the study (attention checks aside), in study order,
    with OUTCOME_COLUMNS: the item's outcome (annotator.tasks.outcome state and its words), the reason, who decided
    (votes, adjudication, study rule, or "" while undecided), the decided label where the task has one, the
    people's counted answers and the item's quota, and what a release adds to the item (release_fields). The same
    TaskType.outcomes that status, report, the funnel and release read. Raises PrefvalError for an unknown study."""
    from annotator.tasks import get_task
    from reports.study_data import load_study_data

    data = load_study_data(store, study_name)
    task = get_task(data.study.task_type)
    task.check_study(data.study)
    outcomes = task.outcomes(data)
    rows = []
    for u in data.units:
        o = outcomes[u.id]
        item_b = data.items.get(u.item_b_id) if u.item_b_id else None
        rows.append({"study": data.study.name, "item": data.items[u.item_id].external_id,
                     "item_b": item_b.external_id if item_b else None, "outcome": o.state, "outcome_text": o.text(),
                     "reason": o.reason, "decided_by": o.decided_by or None, "label": o.label, "answers": o.answers,
                     "quota": o.quota, "release_fields": o.fields if o.passed else None})
    return list(OUTCOME_COLUMNS), rows


#: the first columns of every export row, before the task's own (TaskType.export_fields)
HEAD_COLUMNS = ("study", "item", "item_b", "annotator", "annotator_kind", "status", "answer")
#: the columns after the task's own, in order: of the current answers' export, and of the history's
TAIL_COLUMNS = ("note", "flagged", "submitted_at", "seconds", "attention_check", "check_correct",
                "annotator_excluded", "excluded_reason")
HISTORY_TAIL_COLUMNS = ("note", "submitted_at", "seconds", "attention_check", "check_correct", "annotator_excluded",
                        "excluded_reason", "id", "supersedes")


def column_order(task_keys: list[str], history: bool = False) -> list[str]:
    """An export's columns: HEAD_COLUMNS, the task's columns (task_keys), then TAIL_COLUMNS (HISTORY_TAIL_COLUMNS
    with history=True)."""
    head = list(HEAD_COLUMNS) + [k for k in task_keys if k not in HEAD_COLUMNS]
    return head + [k for k in (HISTORY_TAIL_COLUMNS if history else TAIL_COLUMNS) if k not in head]


def _task_fields(fields: dict, task_keys: list[str]) -> dict:
    """fields, with their keys added to task_keys (the task's export columns met so far) in order."""
    task_keys.extend(k for k in fields if k not in task_keys)
    return fields


def same_columns(rows: list[dict], task_keys: list[str], history: bool = False) -> list[dict]:
    """Every row with the same keys in the same order: column_order (HEAD_COLUMNS, the task's columns, task_keys:
    None on a row the task gave no value, such as a skip, a flag, an exclusion by adjudication, or a can't tell;
    then the tail), then any other key in the order first met (None where a row lacks one)."""
    cols = column_order(task_keys, history)
    seen = set(cols)
    for r in rows:
        for k in r:
            if k not in seen:
                cols.append(k)
                seen.add(k)
    return [{k: r.get(k) for k in cols} for r in rows]


def run(args: argparse.Namespace) -> int:
    from annotator.cli import db_path
    from annotator.safe_text import json_safe
    from storage.outfile import check_output
    from storage.store import Store

    if args.dataset or args.format == "realpref":
        return run_dataset(args)
    if not args.study:
        raise PrefvalError("name a study (or --dataset NAME --format realpref)")
    db = db_path(args, must_exist=True)
    if args.out:
        check_output(args.out, [db], args.force)  # before reading anything: a wrong --out fails at once
    with Store.open(db, mode="ro") as store:
        if args.outcomes and args.history:
            raise PrefvalError("--outcomes and --history are two different exports: choose one")
        cols, rows = (outcome_table(store, args.study) if args.outcomes
                      else export_table(store, args.study, history=args.history))
    buf = io.StringIO()
    if (args.format or "jsonl") == "jsonl":
        for r in rows:
            buf.write(json_safe(json.dumps(r, ensure_ascii=False)) + "\n")
    else:  # the header also with no rows (column_order)
        cells = [{k: json.dumps(v, ensure_ascii=False) if isinstance(v, (dict, list)) else v for k, v in r.items()}
                 for r in rows]
        if not args.out:
            cells = _visible_cells(cells)
        w = csv.DictWriter(buf, fieldnames=cols)
        w.writeheader()
        w.writerows(cells)
    _write(args, db, buf.getvalue(), f"{len(rows)} rows")
    return 0


def _visible_cells(cells: list[dict]) -> list[dict]:
    """CSV cells for standard output: a text holding a control character (C0 but newline and tab, DEL, C1) or a
    bidi or zero-width control is written with visible escapes (``\\x1b``, ``\\r``, ``\\u202e``;
    storage.visible_text.visible), since a pipe may end in a terminal (``| head``); one line on stderr says how
    many cells were changed and that ``--out FILE`` keeps them byte-exact. Other cells are unchanged."""
    from annotator.safe_text import has_control, visible

    changed = 0
    out = []
    for r in cells:
        row = {}
        for k, v in r.items():
            if isinstance(v, str) and has_control(v):
                v = visible(v)
                changed += 1
            row[k] = v
        out.append(row)
    if changed:
        print(f"prefval: {changed} CSV cell(s) hold control characters, written as visible escapes such as \\x1b "
              "on standard output; --out FILE writes them byte-exact", file=sys.stderr)
    return out


def _write(args: argparse.Namespace, db: str, text: str, what: str) -> None:
    """text to --out (storage.outfile: never the database, --force to replace; byte-exact) or to standard output
    (through annotator.cli's TerminalSafeStream: no control sequence reaches a terminal)."""
    from storage.outfile import write_output

    if args.out:
        write_output(args.out, text, [db], args.force)
        echo(f"{what} written to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)


def run_dataset(args: argparse.Namespace) -> int:
    """`export --dataset NAME --format realpref`: the dataset's items as RealPref records, one JSON object a line."""
    from annotator.cli import db_path
    from annotator.safe_text import json_safe
    from storage.importers.realpref import records_from_items
    from storage.outfile import check_output
    from storage.store import Store

    if not args.dataset or args.format != "realpref":
        raise PrefvalError("a dataset is exported with --dataset NAME --format realpref")
    if args.study:
        raise PrefvalError("give either a study or --dataset, not both")
    if args.out and not args.out.lower().endswith(".jsonl"):
        raise PrefvalError(f"{args.out}: the RealPref export is JSONL; name the file *.jsonl")
    from storage.errors import InputError

    db = db_path(args, must_exist=True)
    if args.out:
        check_output(args.out, [db], args.force)
    with Store.open(db, mode="ro") as store:
        try:
            records = records_from_items(store.items(args.dataset))
        except InputError as exc:
            raise PrefvalError(f"dataset '{args.dataset}': {exc.record}: {exc.problem}") from None
    text = "".join(json_safe(json.dumps(r, ensure_ascii=False)) + "\n" for r in records)
    _write(args, db, text, f"{len(records)} RealPref records")
    return 0
