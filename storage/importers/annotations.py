"""People's annotations collected elsewhere (`prefval import annotations FILE --study S [--map FIELD=COLUMN]`).

What Prolific, Label Studio (CSV/JSON-MIN export), Potato or a spreadsheet give: one record per (item, annotator),
as JSONL (one object per line) or CSV (a header row; chosen by the .csv suffix). Fields:

- ``item``: the external id of the annotated item (pairwise studies: ``item`` and ``item_b``);
- ``annotator``: the person's name (stored as an annotator of kind human: a person, storage.models.PERSON_KIND);
- the answer: the task's answer fields, read exactly as `prefval import judgments` reads them
  (the task's declaration, storage.task_specs.TaskSpec.from_record: e.g. ``choice``, ``winner``,
  ``label``/``reflected``, ``scores``, ``labels``, ``decision`` + ``reasons``), or ``answer``, read as the task's
  main field (TaskSpec.answer_field: an MCQ's ``answer`` is its ``choice``, a gold label's its ``label``, ...);
- ``seconds`` (optional): the time the person spent on the item, a number >= 0.

``--map FIELD=COLUMN`` reads a field from a column of another name (``--map annotator=PROLIFIC_PID --map
answer=response``). Other columns are ignored.

Checks (every record before anything is written; a bad record stops the import with one line naming the file,
the record ("line N" / "row N") and the field, and the database is left unchanged):
- the item is one of the study's; an (item, annotator) pair appears once;
- the annotator is named, is plain text (storage.visible_text.name_problem) and is not a model: a name that
  belongs to an annotator of kind llm (an LLM judge, `prefval evaluate` answers, a consensus validator) is refused,
  as people's figures must never count a model;
- the answer fits the task (the mapping above, then the task's own answer check when the caller gives one: the
  rule every answer from the screen or a bundle meets);
- an item gets no more people than its quota of annotators (the study's --annotators-per-item, or the unit's own
  quota), counting the people already assigned to it;
- ``seconds``, when given, is a finite number >= 0.

Stored as "answered" annotations with source "human", each assigned to its annotator (shuffle seed 0: the answer
is given in the item's original option order). Annotation ids are derived_id("annotation import", study, annotator,
unit): importing the same file again adds nothing; a record whose answer differs from the one imported before is
refused (fix the file, or let the person change the answer on the screen, which keeps the history).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from storage.db import write_transaction
from storage.errors import InputError, PrefvalError
from storage.importers.base import check_mapped_columns, check_paths
from storage import task_specs
from storage.importers.judgments import _Rec, _records, record_key
from storage.models import AnnotationIn, derived_id
from storage.store import Store
from storage.studies import unit_quota
from storage.visible_text import name_problem

FORMAT = "annotations"
#: fields every record may carry besides the task's answer fields (its TaskSpec.answer_fields; an ``answer``
#: column stands for its TaskSpec.answer_field)
COMMON_FIELDS = ("item", "item_b", "annotator", "answer", "seconds")


@dataclass
class AnnotationImport:
    """What an import did: answers added, already present (the same answer imported before), people new to the
    database, units newly assigned."""

    study: str
    n_added: int
    n_present: int
    annotators: list[str]
    n_new_annotators: int
    n_assigned: int


class _AliasRec(_Rec):
    """A record whose ``answer`` column stands for the task's main field: an error about that field names the
    column the file has (``answer``), not the field it was read as."""

    def __init__(self, rec: _Rec, alias: str | None):
        super().__init__(rec.path, rec.record, rec.data, rec.is_csv)
        self.alias = alias

    def error(self, field: str, problem: str) -> InputError:
        if self.alias is not None and field == self.alias:
            field = "answer"
        return super().error(field, problem)


def parse_map(pairs: list[str], task: str) -> dict[str, str]:
    """--map FIELD=COLUMN options -> {field: column}. Raises PrefvalError for a malformed pair or a field that is
    neither a common field nor one of the task's answer fields."""
    known = COMMON_FIELDS + task_specs.get(task).answer_fields
    out: dict[str, str] = {}
    for pair in pairs:
        field, sep, column = pair.partition("=")
        field, column = field.strip(), column.strip()
        if not sep or not field or not column:
            raise PrefvalError(f"--map {pair!r}: expected FIELD=COLUMN")
        if field not in known:
            raise PrefvalError(f"--map {pair!r}: {field!r} is not a field of a {task} annotation "
                               f"({', '.join(known)})")
        out[field] = column
    return out


def _renamed(rec: _Rec, mapping: dict[str, str]) -> _Rec:
    """The record with each mapped column read under its field's name (the column's own name is dropped)."""
    if not mapping:
        return rec
    data = {k: v for k, v in rec.data.items() if k not in mapping.values()}
    for field, column in mapping.items():
        if column in rec.data:
            data[field] = rec.data[column]
    return _Rec(rec.path, rec.record, data, rec.is_csv)


def _seconds(rec: _Rec) -> float | None:
    raw = rec.get("seconds")
    if raw is None:
        return None
    try:
        value = float(raw) if not isinstance(raw, bool) else math.nan
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise rec.error("seconds", f"expected a number of seconds >= 0, got {raw!r}")
    return value


def import_annotations(store: Store, path: str | Path, study_name: str, mapping: list[str] | None = None,
                       answer_check: Callable[..., str | None] | None = None) -> AnnotationImport:
    """Check every record of `path`, then add the people's answers in one transaction (module doc).

    answer_check: (answer, unit, item, item_b, settings) -> a problem or None, the task's own check of an answer
    (TaskType.answer_problem); storage does not know the task types. Raises InputError (file, record, field) for a
    bad record and PrefvalError for an unknown study, a task without an answer mapping or an empty file; the
    database is then unchanged."""
    (p,) = check_paths([path])
    study = store.get_study(study_name)
    spec = task_specs.get(study.task_type)
    build = spec.from_record
    if build is None or spec.answer_field is None:
        raise PrefvalError(f"study '{study_name}' (task {study.task_type}): annotations can be imported for "
                           f"tasks {', '.join(task_specs.names(lambda s: s.from_record is not None))} only")
    fields = parse_map(mapping or [], study.task_type)
    main = spec.answer_field
    known = {a.name: a for a in store.annotators()}
    units = store.units(study.id)
    items = store.get_items([u.item_id for u in units] + [u.item_b_id for u in units if u.item_b_id])
    by_ext = {(items[u.item_id].external_id, items[u.item_b_id].external_id if u.item_b_id else None): u
              for u in units}
    pairwise = any(u.item_b_id for u in units)
    people = {aid for aid, a in ((a.id, a) for a in known.values()) if a.is_person}
    holders: dict[str, set[str]] = {}  # unit id -> names of the people assigned to it
    names = {a.id: a.name for a in known.values()}
    for a in store.assignments(study.id):
        if a.annotator_id in people:
            holders.setdefault(a.unit_id, set()).add(names[a.annotator_id])
    todo: list[tuple[_Rec, Any, str, dict, float | None]] = []
    seen: dict[tuple[str, str], str] = {}
    raws = list(_records(p))
    if fields:
        columns = list(dict.fromkeys(k for r in raws for k in r.data))
        check_mapped_columns(p, list(fields.items()), columns, p.suffix.lower() == ".csv")
    for raw in raws:
        rec = _renamed(raw, fields)
        name = rec.get("annotator")
        if name is None:
            raise rec.error("annotator", "missing (the name of the person who answered)")
        name = str(name).strip() if not isinstance(name, str) else name
        found = known.get(name.strip())
        if found is not None and not found.is_person:
            raise rec.error("annotator", f"{name.strip()!r} is a model (an annotator of kind {found.kind}: an LLM "
                                         "judge, `prefval evaluate` answers or a validator); people's annotations "
                                         "need a person's name")
        if found is None and name_problem(name, "annotator"):
            raise rec.error("annotator", name_problem(name, "annotator"))
        name = name.strip()
        key = record_key(rec, pairwise, "annotated")
        ext, ext_b = key
        unit = by_ext.get(key)
        if unit is None:
            what = f"{key[0]!r}" + (f" / {key[1]!r}" if key[1] else "")
            raise rec.error("item_b" if ext_b is not None and (str(ext), None) in by_ext else "item",
                            f"{what} is not an item of study '{study_name}'")
        if (unit.id, name) in seen:
            raise rec.error("annotator", f"{name!r} answers item {key[0]!r} twice (first at {seen[(unit.id, name)]})")
        seen[(unit.id, name)] = rec.record
        held = holders.setdefault(unit.id, set())
        quota = unit_quota(study.settings, unit.extra)
        if name not in held and len(held) >= quota:
            raise rec.error("annotator", f"item {key[0]!r} would get {len(held) + 1} people, more than its quota "
                                         f"of {quota} annotators (create the study with --annotators-per-item "
                                         f"{len(held) + 1} or more)")
        held.add(name)
        alias = None
        if main not in rec.data:  # the file names the answer `answer` (or not at all): errors say `answer`
            alias = main
            if rec.get("answer") is not None:
                rec = _Rec(rec.path, rec.record, {**rec.data, main: rec.get("answer")}, rec.is_csv)
        mapped = _AliasRec(rec, alias)
        item = items[unit.item_id]
        item_b = items.get(unit.item_b_id) if unit.item_b_id else None
        answer = build(mapped, item, item_b, study.settings)
        if answer_check is not None:
            problem = answer_check(answer, unit, item, item_b, study.settings)
            if problem:
                raise mapped.error(alias or main, problem)
        todo.append((mapped, unit, name, answer, _seconds(rec)))
    if not todo:
        raise PrefvalError(f"{p}: no records found")
    log = store.annotations(study.id)
    stored = {a.id: a for a in log}
    answered_elsewhere = {(a.unit_id, names.get(a.annotator_id)) for a in log if a.status == "answered"
                          and a.id != derived_id("annotation import", study.name, names.get(a.annotator_id),
                                                 a.unit_id)}
    for rec, unit, name, answer, _ in todo:
        before = stored.get(derived_id("annotation import", study.name, name, unit.id))
        if before is not None and before.answer != answer:
            raise rec.error(main, f"differs from the answer imported before for {name!r} "
                                  f"({json.dumps(before.answer)})")
        if before is None and (unit.id, name) in answered_elsewhere:
            raise rec.error("annotator", f"{name!r} already answered item {rec.get('item')!r} in this study (on the "
                                         "screen or in a bundle); an imported answer would hide that one")
    added = present = n_assigned = 0
    new_people = sorted({n for _, _, n, _, _ in todo if n not in known})
    with write_transaction(store.db):
        ids = {}
        for n in sorted({n for _, _, n, _, _ in todo}):
            ids[n] = store.ensure_annotator(n, kind="human").id
        for n, aid in ids.items():
            queue = store.assignments(study.id, aid)
            mine = [u for _, u, who, _, _ in todo if who == n]
            n_assigned += store.add_assignments(study.id, [(u.id, aid, len(queue) + i, 0) for i, u in enumerate(mine)])
        assignment = {(a.unit_id, a.annotator_id): a.id for a in store.assignments(study.id)}
        for rec, unit, name, answer, seconds in todo:
            ann_id = derived_id("annotation import", study.name, name, unit.id)
            if ann_id in stored:
                present += 1
                continue
            store.add_annotation(AnnotationIn(
                study_id=study.id, unit_id=unit.id, item_id=unit.item_id, annotator_id=ids[name],
                assignment_id=assignment[(unit.id, ids[name])], status="answered", answer=answer, source="human",
                seconds=seconds), annotation_id=ann_id)
            added += 1
        store.log_event("annotations_imported", study.id, None, file=str(p), added=added, present=present,
                        annotators=sorted(ids))
    return AnnotationImport(study.name, added, present, sorted(ids), len(new_people), n_assigned)


def read(paths, options=None):  # pragma: no cover - the CLI routes "annotations" to import_annotations
    """Not an item importer: annotations attach to a study. Raises PrefvalError pointing at the right command."""
    raise PrefvalError("use `prefval import annotations FILE --study STUDY`")
