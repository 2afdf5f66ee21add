"""LLM-judge verdicts on a study's units (`prefval import judgments FILE --study S --judge NAME [--model M]`).

A file is JSONL (one object per line) or CSV (a header row; chosen by the .csv suffix). Each record names the unit
it judges by the item's external id in `item` (pairwise studies: `item` and `item_b`) and carries the answer
fields of the study's task, mapped to the answer dict the task's screen would store by the task's own declaration
(storage.task_specs.TaskSpec.from_record, in the task package's spec.py; e.g. an MCQ's `choice` = a letter, a
0-based index or the option text, a pairwise `winner` = A, B or tie, a rubric's `scores` = {dimension: 1..5}).
Per-dimension answers in CSV: a JSON cell, or one column per dimension (storage.task_specs.per_dimension); the
dimensions (and drop reasons) are those stored in the study's settings.

In CSV cells booleans are true/false/yes/no/1/0. Other columns are ignored.

Judgments are stored as "answered" annotations with source "llm" by the annotator `judge` (kind "llm", created
with `model` when new), who is assigned the units judged (shuffle seed 0: the judge saw the original order). All
records are checked before anything is written, then everything is written in ONE transaction. Annotation ids are
derived_id("judgment", study name, judge, unit id): a unit this judge already has a judgment for is left as it
is, so importing the same file again adds nothing.

Errors: InputError naming the file, the record ("line N" / "row N") and the field; PrefvalError for an unknown
study, a task whose declaration has no from_record, or a judge name that belongs to a human annotator.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from storage.db import write_transaction
from storage.errors import InputError, PrefvalError
from storage.importers.base import check_paths
from storage.importers.generic import iter_jsonl, parse_index
from storage import task_specs
from storage.models import AnnotationIn, derived_id
from storage.store import Store
from storage.task_specs import AnswerRecord
from storage.textfile import open_text

FORMAT = "judgments"


@dataclass
class JudgmentImport:
    """What an import did: judgments added, already present (same judge and unit), units newly assigned."""

    study: str
    judge: str
    n_added: int
    n_present: int
    n_assigned: int


#: a record with its place in the file, for error messages (storage.task_specs.AnswerRecord)
_Rec = AnswerRecord


# ---- reading ------------------------------------------------------------------------------------------------
def _records(path: Path) -> Iterator[_Rec]:
    if path.suffix.lower() == ".csv":
        with open_text(path) as fh:
            reader = csv.DictReader(fh)
            for rowno, row in enumerate(reader, start=2):
                if None in row:
                    raise InputError(str(path), f"row {rowno}", "(row)", "more cells than columns")
                yield _Rec(path, f"row {rowno}", row, True)
    else:
        for lineno, obj in iter_jsonl(path):
            yield _Rec(path, f"line {lineno}", obj, False)


def import_judgments(store: Store, path: str | Path, study_name: str, judge: str,
                     model: str | None = None) -> JudgmentImport:
    """Check every record of `path`, then add the judgments in one transaction (see module doc).

    Raises InputError (file, record, field) for a bad record and PrefvalError for an unknown study, a task
    without judgment mapping, an empty file or a judge name taken by a human; the database is then unchanged.
    """
    (p,) = check_paths([path])
    return _add_judgments(store, list(_records(p)), study_name, judge, model, str(p))


def record_key(rec, pairwise: bool, what: str) -> tuple[str, str | None]:
    """(item, item_b) external ids of a record (item_b None outside pairwise studies). what: "judged" or
    "annotated", for the error. Raises InputError (rec.error) naming the missing field."""
    ext = rec.get("item")
    if ext is None:
        raise rec.error("item", f"missing (the external id of the {what} item)")
    ext_b = rec.get("item_b")
    if pairwise and ext_b is None:
        raise rec.error("item_b", "missing (this study's units are pairs: give item and item_b)")
    return str(ext), str(ext_b) if ext_b is not None else None


def add_judgment_records(store: Store, records: list[dict], study_name: str, judge: str, model: str | None = None,
                         source: str = "evaluate") -> JudgmentImport:
    """Add judgments given as records (the same fields as a JSONL file's lines: `item`, `item_b`, the task's
    answer fields) in one transaction, exactly as import_judgments does; `source` names them in errors ("record
    N") and in the event log. Used by `prefval evaluate`. Raises InputError / PrefvalError as import_judgments."""
    recs = [_Rec(Path(source), f"record {i}", r, False) for i, r in enumerate(records, start=1)]
    return _add_judgments(store, recs, study_name, judge, model, source)


def _add_judgments(store: Store, records: list[_Rec], study_name: str, judge: str, model: str | None,
                   source: str) -> JudgmentImport:
    study = store.get_study(study_name)
    build = task_specs.get(study.task_type).from_record
    if build is None:
        raise PrefvalError(f"study '{study_name}' (task {study.task_type}): LLM judgments can be imported for "
                           f"tasks {', '.join(task_specs.names(lambda s: s.from_record is not None))} only")
    existing = {a.name: a for a in store.annotators()}
    if judge in existing and existing[judge].is_person:
        raise PrefvalError(f"annotator '{judge}' is a human annotator; choose another --judge name")
    units = store.units(study.id)
    items = store.get_items([u.item_id for u in units] + [u.item_b_id for u in units if u.item_b_id])
    by_ext = {(items[u.item_id].external_id, items[u.item_b_id].external_id if u.item_b_id else None): u
              for u in units}
    pairwise = any(u.item_b_id for u in units)
    todo, seen = [], {}
    for rec in records:
        key = record_key(rec, pairwise, "judged")
        ext, ext_b = key
        unit = by_ext.get(key)
        if unit is None:
            what = f"{key[0]!r}" + (f" / {key[1]!r}" if key[1] else "")
            kept = _kept_in_place(store, units, items).get(key[0]) if key[1] is None else None
            if kept is not None:
                raise rec.error("item", f"{what} is identical on screen to {kept!r}, which study '{study_name}' "
                                        f"holds in its place (kept once at study creation): judge {kept!r}")
            raise rec.error("item_b" if ext_b is not None and (str(ext), None) in by_ext else "item",
                            f"{what} is not an item of study '{study_name}'")
        if unit.id in seen:
            raise rec.error("item", f"{key[0]!r} is judged twice (first at {seen[unit.id]})")
        seen[unit.id] = rec.record
        answer = build(rec, items[unit.item_id], items.get(unit.item_b_id) if unit.item_b_id else None,
                       study.settings)
        todo.append((unit, answer))
    if not todo:
        raise PrefvalError(f"{source}: no records found")
    added = present = 0
    with write_transaction(store.db):
        ann = store.ensure_annotator(judge, kind="llm", model=model)
        queue = store.assignments(study.id, ann.id)
        n_assigned = store.add_assignments(study.id, [(u.id, ann.id, len(queue) + i, 0)
                                                      for i, (u, _) in enumerate(todo)])
        assignment = {a.unit_id: a.id for a in store.assignments(study.id, ann.id)}
        logged = {a.id for a in store.annotations(study.id) if a.annotator_id == ann.id}
        for unit, answer in todo:
            aid = derived_id("judgment", study.name, judge, unit.id)
            if aid in logged:
                present += 1
                continue
            store.add_annotation(AnnotationIn(
                study_id=study.id, unit_id=unit.id, item_id=unit.item_id, annotator_id=ann.id,
                assignment_id=assignment[unit.id], status="answered", answer=answer, source="llm"),
                annotation_id=aid)
            added += 1
        store.log_event("judgments_imported", study.id, ann.id, file=source, added=added, present=present)
    return JudgmentImport(study.name, judge, added, present, n_assigned)


def _kept_in_place(store, units: list, items: dict) -> dict[str, str]:
    """External id of each item a study kept once as identical on screen to one of its items (unit extra
    "same_screen", "same_screen_other_key": annotator.tasks.screens) -> the external id of that study item."""
    ids = {i: u.item_id for u in units for k in ("same_screen", "same_screen_other_key") for i in u.extra.get(k, [])}
    copies = store.get_items(list(ids)) if ids else {}
    return {c.external_id: items[ids[c.id]].external_id for c in copies.values()}


def read(paths, options=None):  # pragma: no cover - the CLI routes "judgments" to import_judgments
    """Not an item importer: judgments attach to a study. Raises PrefvalError pointing at the right command."""
    raise PrefvalError("use `prefval import judgments FILE --study STUDY --judge NAME`")
