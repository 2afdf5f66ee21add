"""The reads and the one write of `prefval recover` (annotator/recovery.py plans it): what a rescue file's rows meet
in the database (the rows stored under their ids, the studies, units, items, annotators and assignments they name,
a later decision on the same unit), and the write of the rows to restore, each with the time it was decided.

No rule lives here: which rows are restored, refused or bad input is annotator.recovery's to say; this module
only reads and writes, in the caller's transaction (Store.transaction) so that a plan and its write see the same
database.
"""
from __future__ import annotations

import json
from typing import Any, Iterable

from storage.models import AnnotationIn, Event

__all__ = ["stored_by_id", "assignments_by_id", "annotators_by_id", "studies_by_id", "units_by_id",
           "later_decision", "later_adjudication", "write_restored"]

#: the columns of each table a rescued row is compared on when its id is in the database already
COMPARED = {
    "annotations": ("study_id", "unit_id", "item_id", "annotator_id", "assignment_id", "status", "answer", "note"),
    "adjudications": ("study_id", "unit_id", "adjudicator_id", "kind", "answer", "reason"),
    "events": ("kind", "study_id", "annotator_id"),
}


def _chunks(ids: list[str], n: int = 500) -> Iterable[list[str]]:
    for i in range(0, len(ids), n):
        yield ids[i:i + n]


def _by_id(store, sql: str, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """{id: row as a dict} of `sql` (a SELECT whose first column is id, ending in "IN ({marks})") over ids."""
    out: dict[str, dict[str, Any]] = {}
    wanted = sorted({i for i in ids if i})
    for chunk in _chunks(wanted):
        cur = store.db.execute(sql.format(marks=",".join("?" * len(chunk))), chunk)
        names = [d[0] for d in cur.description]
        out.update({r[0]: dict(zip(names, r)) for r in cur.fetchall()})
    return out


def stored_by_id(store, table: str, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The rows of `table` ("annotations", "adjudications" or "events") stored under the given ids: {id: {column:
    value}} with the compared columns (COMPARED[table]); JSON answers parsed. Absent ids are absent."""
    cols = ", ".join(COMPARED[table])
    rows = _by_id(store, f"SELECT id, {cols} FROM [{table}] WHERE id IN ({{marks}})", ids)
    for r in rows.values():
        if isinstance(r.get("answer"), str):
            r["answer"] = json.loads(r["answer"])
    return rows


def assignments_by_id(store, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """{id: {study_id, unit_id, annotator_id, released_at}} of the assignments with those ids."""
    return _by_id(store, "SELECT id, study_id, unit_id, annotator_id, released_at FROM assignments "
                         "WHERE id IN ({marks})", ids)


def annotators_by_id(store, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """{id: {name, kind}} of the annotators with those ids."""
    return _by_id(store, "SELECT id, name, kind FROM annotators WHERE id IN ({marks})", ids)


def studies_by_id(store, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """{id: {name, task_type, archived (bool)}} of the studies with those ids (a study still being created
    included: its rows cannot have come from a screen, so the caller sees it as any other)."""
    rows = _by_id(store, "SELECT id, name, task_type, settings FROM studies WHERE id IN ({marks})", ids)
    for r in rows.values():
        r["archived"] = bool(json.loads(r.pop("settings") or "{}").get("archived"))
    return rows


def units_by_id(store, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """{id: {study_id, item_id, external_id}} of the study units with those ids (external_id: the item's)."""
    return _by_id(store, "SELECT u.id, u.study_id, u.item_id, i.external_id FROM study_items u "
                         "JOIN items i ON i.id = u.item_id WHERE u.id IN ({marks})", ids)


def later_decision(store, study_id: str, unit_id: str, annotator_id: str, after: str,
                   statuses: tuple[str, ...] = ("answered", "skipped", "partial")) -> tuple[str, str] | None:
    """(time, status) of the annotator's latest row on the unit of one of `statuses` (decision statuses) when it is
    later than `after`, else None."""
    marks = ",".join("?" * len(statuses))
    row = store.db.execute(
        f"SELECT submitted_at, status FROM annotations WHERE study_id = ? AND unit_id = ? AND annotator_id = ? "
        f"AND status IN ({marks}) ORDER BY submitted_at DESC LIMIT 1",
        [study_id, unit_id, annotator_id, *statuses]).fetchone()
    return (row[0], row[1]) if row and row[0] > after else None


def later_adjudication(store, study_id: str, unit_id: str, after: str) -> tuple[str, str] | None:
    """(time, adjudicator name) of the unit's latest adjudication when it is later than `after`, else None."""
    row = store.db.execute(
        "SELECT a.submitted_at, n.name FROM adjudications a JOIN annotators n ON n.id = a.adjudicator_id "
        "WHERE a.study_id = ? AND a.unit_id = ? ORDER BY a.submitted_at DESC, a.id DESC LIMIT 1",
        [study_id, unit_id]).fetchone()
    return (row[0], row[1]) if row and row[0] > after else None


def write_restored(store, annotations: list[tuple[AnnotationIn, str, str]], adjudications: list[tuple[dict, str]],
                   events: list[Event]) -> None:
    """Append the rows a plan restores, in one transaction (the caller's, when it holds one): annotation rows as
    (row, id, decided_at) through Store.add_annotation (a decision row supersedes the annotator's latest decision
    on the unit, its time the decision's own: `decided_at`), adjudication rows as (fields, decided_at) through
    Store.add_adjudication, and events as they were (Store.log_events). Raises what those raise (nothing is
    written then: the transaction rolls back)."""
    with store.transaction():
        for row, rid, at in annotations:
            store.add_annotation(row, submitted_at=at, annotation_id=rid, live_assignment=True,
                                 supersede_latest=row.status in ("answered", "skipped", "partial"))
        for a, at in adjudications:
            store.add_adjudication(a["study_id"], a["unit_id"], a["adjudicator_id"], a["kind"], answer=a.get("answer"),
                                   reason=a.get("reason"), adjudication_id=a["id"], submitted_at=at)
        if events:
            store.log_events(events)
