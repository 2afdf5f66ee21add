"""LLM-judge verdicts on a study's units (`prefval import judgments FILE --study S --judge NAME [--model M]`).

A file is JSONL (one object per line) or CSV (a header row; chosen by the .csv suffix). Each record names the unit
it judges by the item's external id in `item` (pairwise studies: `item` and `item_b`) and carries the answer
fields of the study's task, mapped to the answer dict the task's screen would store (table ANSWER_MAPS):

- mcq, easy_test, blind_test: `choice` = a letter, a 0-based index or the option text (T/F items also t/f/true/
  false), or `cant_tell: true` -> {choice, letter, shown (= the original letter), cant_tell}
- pairwise: `winner` = A, B or tie (A = dataset A's side) -> {winner, shown_left: "A", pressed}
- judge_validation: `reflected` = true/false, or `label` = 1/0 -> {reflected: bool}
- gold_label: `label` = 1 (apply) / 0 (suppress), or true/false -> {label: 1 or 0}
- rubric: `scores` = {dimension: 1..5} for every dimension of the study -> {scores: {...}}
- item_quality: `labels` = {dimension: true/false} for every dimension -> {labels: {...}}
- persona_filter: `decision` = keep/drop, `reasons` = [reason names] (drop only) -> {decision, reasons}

rubric/item_quality in CSV: a JSON cell `scores`/`labels`, or one column per dimension. The dimensions (and
persona_filter's reasons) are those stored in the study's settings.

In CSV cells booleans are true/false/yes/no/1/0. Other columns are ignored.

Judgments are stored as "answered" annotations with source "llm" by the annotator `judge` (kind "llm", created
with `model` when new), who is assigned the units judged (shuffle seed 0: the judge saw the original order). All
records are checked before anything is written, then everything is written in ONE transaction. Annotation ids are
derived_id("judgment", study name, judge, unit id): a unit this judge already has a judgment for is left as it
is, so importing the same file again adds nothing.

Errors: InputError naming the file, the record ("line N" / "row N") and the field; PrefvalError for an unknown
study, a task without a mapping, or a judge name that belongs to a human annotator.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from storage.db import write_transaction
from storage.errors import InputError, PrefvalError
from storage.importers.base import check_paths
from storage.importers.generic import iter_jsonl, parse_index
from storage.models import AnnotationIn, Item, derived_id
from storage.store import Store
from storage.textfile import open_text

FORMAT = "judgments"
_TRUE = {"true", "yes", "1", "t", "y"}
_FALSE = {"false", "no", "0", "f", "n"}


@dataclass
class JudgmentImport:
    """What an import did: judgments added, already present (same judge and unit), units newly assigned."""

    study: str
    judge: str
    n_added: int
    n_present: int
    n_assigned: int


class _Rec:
    """One record with its place in the file, for error messages."""

    def __init__(self, path: Path, record: str, data: dict, is_csv: bool):
        self.path, self.record, self.data, self.is_csv = path, record, data, is_csv

    def error(self, field: str, problem: str) -> InputError:
        return InputError(str(self.path), self.record, field, problem)

    def get(self, field: str) -> Any:
        v = self.data.get(field)
        return None if (isinstance(v, str) and not v.strip()) else v

    def boolean(self, field: str) -> bool | None:
        v = self.get(field)
        if v is None or isinstance(v, bool):
            return v
        if isinstance(v, (int, float)) and v in (0, 1):
            return bool(v)
        if isinstance(v, str) and v.strip().lower() in _TRUE | _FALSE:
            return v.strip().lower() in _TRUE
        raise self.error(field, f"expected true or false, got {v!r}")


# ---- answer mapping per task ------------------------------------------------------------------------------
def _mcq(rec: _Rec, item: Item, item_b: Item | None, settings: dict) -> dict:
    options = item.payload.get("options", [])
    if rec.boolean("cant_tell"):
        return {"choice": None, "letter": None, "shown": None, "cant_tell": True}
    raw = rec.get("choice")
    if raw is None:
        raise rec.error("choice", "missing (give a letter, a 0-based index or the option text, or cant_tell)")
    tf = item.payload.get("fmt") == "tf"
    if tf and isinstance(raw, (str, bool)) and str(raw).strip().lower() in ("t", "true", "f", "false"):
        want = "True" if str(raw).strip().lower() in ("t", "true") else "False"
        idx = options.index(want) if want in options else None
    else:
        idx = parse_index(raw, options, rec.path, rec.record, "choice")
    if idx is None or not 0 <= idx < len(options):
        raise rec.error("choice", f"{raw!r} is not one of the item's {len(options)} options")
    shown = options[idx][0] if tf else chr(ord("A") + idx)
    return {"choice": idx, "letter": chr(ord("A") + idx), "shown": shown, "cant_tell": False}


def _pairwise(rec: _Rec, item: Item, item_b: Item | None, settings: dict) -> dict:
    raw = rec.get("winner")
    w = str(raw).strip() if raw is not None else ""
    w = {"a": "A", "b": "B", "tie": "tie"}.get(w.lower())
    if w is None:
        raise rec.error("winner", f"expected A, B or tie, got {raw!r}")
    return {"winner": w, "shown_left": "A", "pressed": {"A": "left", "B": "right", "tie": "tie"}[w]}


def _judge_validation(rec: _Rec, item: Item, item_b: Item | None, settings: dict) -> dict:
    reflected = rec.boolean("reflected")
    if reflected is None:
        label = rec.get("label")
        if label is None:
            raise rec.error("reflected", "missing (give reflected: true/false or label: 1/0)")
        if isinstance(label, bool) or str(label).strip() not in ("0", "1"):
            raise rec.error("label", f"expected 1 (reflected) or 0 (not reflected), got {label!r}")
        reflected = str(label).strip() == "1"
    return {"reflected": reflected}


def _gold_label(rec: _Rec, item: Item, item_b: Item | None, settings: dict) -> dict:
    label = rec.boolean("label")
    if label is None:
        raise rec.error("label", "missing (1 apply, 0 suppress)")
    return {"label": int(label)}


def _per_dimension(rec: _Rec, field: str, settings: dict, parse: Callable[[Any, str], Any]) -> dict:
    """{dimension: value} for every dimension of the study, from a dict `field` (a JSON cell in CSV) or, in
    CSV, from one column per dimension."""
    dims = list(settings.get("dimensions") or [])
    raw = rec.get(field)
    if raw is None and rec.is_csv and dims and all(rec.get(d) is not None for d in dims):
        raw = {d: rec.get(d) for d in dims}
    if isinstance(raw, str):
        import json
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            raise rec.error(field, "not a JSON object") from None
    if not isinstance(raw, dict):
        raise rec.error(field, f"expected an object with one value per dimension ({', '.join(dims)})")
    extra = [k for k in raw if k not in dims]
    if extra:
        raise rec.error(f"{field}.{extra[0]}", f"not a dimension of this study ({', '.join(dims)})")
    missing = [d for d in dims if d not in raw]
    if missing:
        raise rec.error(f"{field}.{missing[0]}", "missing")
    return {d: parse(raw[d], f"{field}.{d}") for d in dims}


def _rubric(rec: _Rec, item: Item, item_b: Item | None, settings: dict) -> dict:
    def score(v: Any, where: str) -> int:
        if isinstance(v, bool) or str(v).strip() not in ("1", "2", "3", "4", "5"):
            raise rec.error(where, f"expected a score 1..5, got {v!r}")
        return int(str(v).strip())
    return {"scores": _per_dimension(rec, "scores", settings, score)}


def _item_quality(rec: _Rec, item: Item, item_b: Item | None, settings: dict) -> dict:
    def boolean(v: Any, where: str) -> bool:
        s = str(v).strip().lower()
        if isinstance(v, bool):
            return v
        if s in _TRUE | _FALSE:
            return s in _TRUE
        raise rec.error(where, f"expected true or false, got {v!r}")
    return {"labels": _per_dimension(rec, "labels", settings, boolean)}


def _persona_filter(rec: _Rec, item: Item, item_b: Item | None, settings: dict) -> dict:
    decision = str(rec.get("decision") or "").strip().lower()
    if decision not in ("keep", "drop"):
        raise rec.error("decision", f"expected keep or drop, got {rec.get('decision')!r}")
    reasons = rec.get("reasons") or []
    if isinstance(reasons, str):
        reasons = [r.strip() for r in reasons.split(",") if r.strip()]
    known = list(settings.get("reasons") or [])
    bad = [r for r in reasons if r not in known]
    if bad:
        raise rec.error("reasons", f"{bad[0]!r} is not a reason of this study ({', '.join(known)})")
    if decision == "keep" and reasons:
        raise rec.error("reasons", "a kept record has no drop reasons")
    return {"decision": decision, "reasons": [r for r in known if r in reasons]}


ANSWER_MAPS: dict[str, Callable[[_Rec, Item, Item | None, dict], dict]] = {
    "mcq": _mcq,
    "easy_test": _mcq,
    "blind_test": _mcq,
    "pairwise": _pairwise,
    "judge_validation": _judge_validation,
    "gold_label": _gold_label,
    "rubric": _rubric,
    "item_quality": _item_quality,
    "persona_filter": _persona_filter,
}


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
    build = ANSWER_MAPS.get(study.task_type)
    if build is None:
        raise PrefvalError(f"study '{study_name}' (task {study.task_type}): LLM judgments can be imported for "
                           f"tasks {', '.join(sorted(ANSWER_MAPS))} only")
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
        ext = rec.get("item")
        if ext is None:
            raise rec.error("item", "missing (the external id of the judged item)")
        ext_b = rec.get("item_b")
        if pairwise and ext_b is None:
            raise rec.error("item_b", "missing (this study's units are pairs: give item and item_b)")
        key = (str(ext), str(ext_b) if ext_b is not None else None)
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
