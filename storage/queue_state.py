"""One annotator's queue seen through their decisions, counted and searched in SQL: the annotation screen opens a
queue of 100,000 answered items without reading one answer into Python.

The states are the annotation screen's (annotator.session.Session.status_of), derived from the append-only log:
  answered  the annotator has an "answered" row on the unit (a later partial row, a re-scoring in progress, does not
            retract it);
  skipped   no "answered" row, and the latest decision row (answered, skipped or partial; latest by submitted_at,
            then id) is a skip;
  partial   no "answered" row, and the latest decision row is a partial one;
  open      no decision row at all.
"Closed" is answered or skipped; "unanswered" (the item list's filter) is open or partial. A unit is flagged when the
latest of the annotator's flag/unflag rows on it is a "flag"; noted when they wrote at least one note on it.
The queue is the annotator's live (not released) assignments in (position, id) order; every count and search is
over it, and a queue position is the 0-based rank in that order.

Indexes: idx_annotations_progress (study_id, status, annotator_id, unit_id) for the annotator's rows of one status;
idx_assignments_queue (migration 18: the queue in order with its units) for walks in queue order, and
idx_assignments_queue_unit (migration 18: the queue by unit) for "is this unit in the queue" while counting.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from storage.models import Annotation, annotation_from_row

DECISIONS = ("answered", "skipped", "partial")
ITEM_FILTERS = ("all", "unanswered", "skipped", "flagged", "noted", "answered")

# Unit-id sets of one annotator (?1 study, ?2 annotator), each read from an index as one list subquery.
_ANSWERED = ("SELECT unit_id FROM annotations INDEXED BY idx_annotations_progress "
             "WHERE study_id = ?1 AND status = 'answered' AND annotator_id = ?2")
# units whose latest decision row is a skip (the skip row s with no later decision row)
_LATEST_SKIP = ("SELECT s.unit_id FROM annotations s INDEXED BY idx_annotations_progress "
                "WHERE s.study_id = ?1 AND s.status = 'skipped' AND s.annotator_id = ?2 AND NOT EXISTS ("
                "SELECT 1 FROM annotations l INDEXED BY idx_annotations_progress WHERE l.study_id = ?1 "
                "AND l.status IN ('answered', 'skipped', 'partial') AND l.annotator_id = ?2 AND l.unit_id = s.unit_id "
                "AND (l.submitted_at, l.id) > (s.submitted_at, s.id))")
# units whose latest decision row is a partial one
_LATEST_PARTIAL = _LATEST_SKIP.replace("s.status = 'skipped'", "s.status = 'partial'")
# units whose latest flag/unflag row is a flag
_FLAGGED = ("SELECT f.unit_id FROM annotations f INDEXED BY idx_annotations_progress "
            "WHERE f.study_id = ?1 AND f.status = 'flag' AND f.annotator_id = ?2 AND NOT EXISTS ("
            "SELECT 1 FROM annotations l INDEXED BY idx_annotations_progress WHERE l.study_id = ?1 "
            "AND l.status IN ('flag', 'unflag') AND l.annotator_id = ?2 AND l.unit_id = f.unit_id "
            "AND (l.submitted_at, l.id) > (f.submitted_at, f.id))")
#: the public name of _FLAGGED (units of ?1 study whose latest flag/unflag row of ?2 annotator is a flag)
FLAGGED_UNITS = _FLAGGED
_NOTED = ("SELECT unit_id FROM annotations INDEXED BY idx_annotations_progress "
          "WHERE study_id = ?1 AND status = 'note' AND annotator_id = ?2")
# whether unit {u} is in the queue (a probe of the queue's index by unit)
_IN_QUEUE = ("EXISTS (SELECT 1 FROM assignments q INDEXED BY idx_assignments_queue_unit WHERE q.study_id = ?1 "
             "AND q.annotator_id = ?2 AND q.unit_id = {u} AND q.released_at IS NULL)")
# the queue's units in unit order, through its index by unit
_QUEUE_UNITS = ("SELECT unit_id FROM assignments INDEXED BY idx_assignments_queue_unit "
                "WHERE study_id = ?1 AND annotator_id = ?2 AND released_at IS NULL")
# the queue in order, through its covering index
_QUEUE = ("FROM assignments q INDEXED BY idx_assignments_queue "
          "WHERE q.study_id = ?1 AND q.annotator_id = ?2 AND q.released_at IS NULL")
# the same conditions on one queue entry q, probed in the index (cheap for a few entries)
_ANSWERED_Q = ("EXISTS (SELECT 1 FROM annotations a INDEXED BY idx_annotations_progress WHERE a.study_id = ?1 "
               "AND a.status = 'answered' AND a.annotator_id = ?2 AND a.unit_id = q.unit_id)")
_LATEST_SKIP_Q = (f"EXISTS ({_LATEST_SKIP.replace('SELECT s.unit_id', 'SELECT 1')} AND s.unit_id = q.unit_id)")
_NEAR_OPEN = f"NOT {_ANSWERED_Q} AND NOT {_LATEST_SKIP_Q}"
_NEAR_SKIPPED = f"{_LATEST_SKIP_Q} AND NOT {_ANSWERED_Q}"
WALK = 2000  # queue entries queue_first probes one by one before it reads the annotator's units as lists
# the item list's filters as conditions on a queue entry q, for the far part of a walk (lists read once)
_FILTER_SQL = {
    "all": "1",
    "unanswered": f"q.unit_id NOT IN ({_ANSWERED}) AND q.unit_id NOT IN ({_LATEST_SKIP})",
    "skipped": f"q.unit_id IN ({_LATEST_SKIP}) AND q.unit_id NOT IN ({_ANSWERED})",
    "flagged": f"q.unit_id IN ({_FLAGGED})",
    "noted": f"q.unit_id IN ({_NOTED})",
    "answered": f"q.unit_id IN ({_ANSWERED})",
}
# ... and for a page of the item list: the frequent states probed per entry as the walk goes (a page near the start
# reads a page of entries), the rare ones (few units) as lists
_PAGE_SQL = {
    **_FILTER_SQL,
    "unanswered": _NEAR_OPEN,
    "skipped": f"q.unit_id IN ({_LATEST_SKIP} AND NOT EXISTS (SELECT 1 FROM annotations a INDEXED BY "
               "idx_annotations_progress WHERE a.study_id = ?1 AND a.status = 'answered' AND a.annotator_id = ?2 "
               "AND a.unit_id = s.unit_id))",
    "answered": _ANSWERED_Q,
}


@dataclass
class UnitState:
    """One annotator's state on one unit: `latest` their latest decision row (answered, skipped or partial; None
    without one), `answered` whether they have an "answered" row, `flagged`, `noted` (see the module docstring)."""

    latest: Annotation | None
    answered: bool
    flagged: bool
    noted: bool

    @property
    def status(self) -> str:
        """"answered", "skipped", "partial" or "open"."""
        if self.answered:
            return "answered"
        return self.latest.status if self.latest is not None else "open"


@dataclass
class QueueItem:
    """A row of the item list: the unit at queue position `position` (0-based) and its state."""

    position: int
    unit_id: str
    state: UnitState


class QueueStateMixin:
    db: object

    def queue_counts(self, study_id: str, annotator_id: str, marks: bool = True) -> dict[str, int]:
        """Counts over one annotator's queue, in SQL (nothing per answer is read into Python): {"total": queue
        length, "answered", "skipped", "partial", "open" (no decision row), and with marks=True "flagged" and
        "noted"} (states as in the module docstring; answered + skipped + partial + open == total). Each count reads
        the annotator's rows of one status from idx_annotations_progress and matches them with the queue's index by
        unit: time in the number of the annotator's own rows (about 0.03 s for 100,000 answers), not in the
        study's."""
        total = self.queue_length(study_id, annotator_id)  # type: ignore[attr-defined]

        def count(units_sql: str) -> int:
            return self.db.execute(f"SELECT COUNT(*) FROM ({units_sql} GROUP BY 1) d "
                                   f"WHERE {_IN_QUEUE.format(u='d.unit_id')}", [study_id, annotator_id]).fetchone()[0]

        # the answered units of the queue: a merge of two indexes both in unit order (MERGE (INTERSECT): no probe
        # per unit), about 0.03 s for 100,000 answers; the other states are few units, each probed
        answered = self.db.execute(f"SELECT COUNT(*) FROM ({_QUEUE_UNITS} INTERSECT {_ANSWERED} ORDER BY 1)",
                                   [study_id, annotator_id]).fetchone()[0] if total else 0
        not_answered = f" AND s.unit_id NOT IN ({_ANSWERED})"
        skipped = count(_LATEST_SKIP + not_answered) if total else 0
        partial = count(_LATEST_PARTIAL + not_answered) if total else 0
        out = {"total": total, "answered": answered, "skipped": skipped, "partial": partial,
               "open": total - answered - skipped - partial}
        if marks:
            out.update(flagged=count(_FLAGGED) if total else 0, noted=count(_NOTED) if total else 0)
        return out

    #: the marks an annotator can leave on a unit without answering it, in the order messages list them
    MARKS = ("skipped", "partial", "flagged", "noted")

    def marked_units(self, study_id: str, annotator_id: str) -> dict[str, set[str]]:
        """The units of one annotator's queue that they have not answered but left a mark on: {"skipped" (latest
        decision a skip), "partial" (latest decision a partial answer, e.g. some of a rubric's dimensions),
        "flagged" ("needs review", not taken back), "noted" (a note written)} -> unit ids (a unit can have several
        marks). What `study release` keeps by default and `unassign`/`rename-annotator` count. Time in the number of
        the annotator's marks, not in the queue's length."""
        sources = {"skipped": _LATEST_SKIP, "partial": _LATEST_PARTIAL, "flagged": _FLAGGED, "noted": _NOTED}
        out = {}
        for kind in self.MARKS:
            out[kind] = {r[0] for r in self.db.execute(
                f"SELECT DISTINCT d.unit_id FROM ({sources[kind]}) d WHERE {_IN_QUEUE.format(u='d.unit_id')} "
                f"AND d.unit_id NOT IN ({_ANSWERED})", [study_id, annotator_id])}
        return out

    def queue_first(self, study_id: str, annotator_id: str, which: str = "open",
                    after: tuple[int, str] | None = None, after_rank: int | None = None) -> int | None:
        """The queue position (0-based) of the first unit of one annotator's queue that is `which`: "open" (neither
        answered nor skipped: open or partial) or "skipped"; only after the entry (position, assignment id) `after`
        when given (after_rank: its queue position, when the caller knows it). None when there is none.

        Walks the queue's index in order: the next WALK entries each probed in idx_annotations_progress (the time
        of a decision key, whose next open item is near), then the rest against the annotator's answered and
        skipped units read once as lists (a reopened queue whose first open item is far: time in the number of
        their rows, not in the study's)."""
        cond = _FILTER_SQL["unanswered" if which == "open" else "skipped"]
        near = _NEAR_OPEN if which == "open" else _NEAR_SKIPPED
        params: list = [study_id, annotator_id]
        where = ""
        if after is not None:
            where, params = " AND (q.position, q.id) > (?3, ?4)", params + list(after)
        found = self.db.execute(
            f"SELECT q.rn, q.position, q.id FROM (SELECT q.unit_id, q.position, q.id, ROW_NUMBER() OVER "
            f"(ORDER BY q.position, q.id) AS rn {_QUEUE}{where} ORDER BY q.position, q.id LIMIT {WALK}) q "
            f"WHERE {near} LIMIT 1", params).fetchone()  # in the walk's order (no sort: stops at the first)
        if found is not None and (after is None or after_rank is not None):
            return (after_rank + found[0] if after is not None else found[0] - 1)
        if found is None:
            last = self.db.execute(f"SELECT q.position, q.id {_QUEUE}{where} ORDER BY q.position, q.id "
                                   f"LIMIT 1 OFFSET {WALK - 1}", params).fetchone()
            if last is None:  # the walk saw the whole rest of the queue
                return None
            found = self.db.execute(f"SELECT NULL, q.position, q.id {_QUEUE} AND (q.position, q.id) > (?3, ?4) "
                                    f"AND {cond} ORDER BY q.position, q.id LIMIT 1",
                                    [study_id, annotator_id, *last]).fetchone()
            if found is None:
                return None
        return self.db.execute(f"SELECT COUNT(*) {_QUEUE} AND (q.position, q.id) < (?3, ?4)",
                               [study_id, annotator_id, found[1], found[2]]).fetchone()[0]

    def unit_states(self, study_id: str, annotator_id: str, unit_ids: Iterable[str]) -> dict[str, UnitState]:
        """unit id -> UnitState of one annotator, for the given units (any number; read 500 at a time through
        idx_annotations_progress: one probe per unit and status)."""

        ids = list(dict.fromkeys(unit_ids))
        out: dict[str, UnitState] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            latest: dict[str, dict] = {}
            flag: dict[str, tuple] = {}
            answered: set[str] = set()
            noted: set[str] = set()
            marks = ",".join("?" * len(chunk))
            cur = self.db.execute(
                "SELECT * FROM annotations INDEXED BY idx_annotations_progress WHERE study_id = ? AND status IN "
                "('answered', 'skipped', 'partial', 'flag', 'unflag', 'note') AND annotator_id = ? "
                f"AND unit_id IN ({marks})", [study_id, annotator_id, *chunk])
            cols = [d[0] for d in cur.description]
            for values in cur:
                row = dict(zip(cols, values))
                unit, status, key = row["unit_id"], row["status"], (row["submitted_at"], row["id"])
                if status in DECISIONS:
                    answered.update([unit] if status == "answered" else [])
                    prev = latest.get(unit)
                    if prev is None or key > (prev["submitted_at"], prev["id"]):
                        latest[unit] = row
                elif status == "note":
                    noted.add(unit)
                elif unit not in flag or key > flag[unit][0]:
                    flag[unit] = (key, status)
            for unit in chunk:
                row = latest.get(unit)
                out[unit] = UnitState(latest=annotation_from_row(row) if row is not None else None,
                                      answered=unit in answered, flagged=unit in flag and flag[unit][1] == "flag", noted=unit in noted)
        return out

    def queue_items(self, study_id: str, annotator_id: str, which: str = "all", offset: int = 0,
                    limit: int = 200, sparse: bool = False) -> list[QueueItem]:
        """A page of one annotator's queue for the item list: the entries that pass the filter `which` (one of
        ITEM_FILTERS: "unanswered" is open or partial) in queue order, skipping the first `offset` of them, at most
        `limit`, each with its queue position and UnitState. "all" steps over `offset` entries of the queue's
        index; a filter walks the queue's entries in order, numbering them, and keeps those that pass (answered and
        unanswered probed per entry in idx_annotations_progress, skipped, flagged and noted units read once as
        lists) until the page is full; sparse=True (the caller knows few entries pass, e.g. from queue_counts):
        the answered and unanswered units too are read once as lists, so that a walk over the whole queue does not
        probe every entry. Raises ValueError for an unknown filter."""
        if which not in _PAGE_SQL:
            raise ValueError(f"unknown item filter {which!r} (one of {', '.join(ITEM_FILTERS)})")
        if which == "all":
            rows = self.db.execute(f"SELECT q.unit_id {_QUEUE} ORDER BY q.position, q.id LIMIT ?3 OFFSET ?4",
                                   [study_id, annotator_id, limit, offset]).fetchall()
            found = [(offset + i, r[0]) for i, r in enumerate(rows)]
        else:
            # the walk's own order (no sort): it stops once the page is full
            found = self.db.execute(
                f"SELECT q.rank, q.unit_id FROM (SELECT q.unit_id AS unit_id, ROW_NUMBER() OVER "
                f"(ORDER BY q.position, q.id) - 1 AS rank {_QUEUE} ORDER BY q.position, q.id) q "
                f"WHERE {(_FILTER_SQL if sparse else _PAGE_SQL)[which]} LIMIT ?3 OFFSET ?4",
                [study_id, annotator_id, limit, offset]).fetchall()
        states = self.unit_states(study_id, annotator_id, [u for _, u in found])
        return [QueueItem(position=p, unit_id=u, state=states[u]) for p, u in found]

    def median_answer_seconds(self, study_id: str, annotator_id: str) -> float | None:
        """The median (seconds) of the `seconds` of one annotator's current answers in a study (the latest
        "answered" row per unit, as Store.current_annotations gives them; rows without seconds left out): the middle
        value, or the mean of the two middle ones; None when no answer has seconds. Computed in SQL: the annotator's
        answered rows are read in time order (idx_annotations_annotator_time: the table in the order it was
        written), and only the units answered more than once (found in idx_annotations_progress) are checked for a
        later answer; about 0.1 s for 100,000 answers."""
        row = self.db.execute(
            "WITH multi AS (SELECT unit_id FROM annotations INDEXED BY idx_annotations_progress WHERE study_id = ?1 "
            "AND status = 'answered' AND annotator_id = ?2 GROUP BY unit_id HAVING COUNT(*) > 1), "
            "s AS MATERIALIZED (SELECT a.seconds FROM annotations a INDEXED BY idx_annotations_annotator_time "
            "WHERE a.study_id = ?1 AND a.annotator_id = ?2 AND a.status = 'answered' AND a.seconds IS NOT NULL "
            "AND (a.unit_id NOT IN multi OR NOT EXISTS (SELECT 1 FROM annotations l INDEXED BY idx_annotations_progress "
            "WHERE l.study_id = ?1 AND l.status = 'answered' AND l.annotator_id = ?2 AND l.unit_id = a.unit_id "
            "AND (l.submitted_at, l.id) > (a.submitted_at, a.id)))), "
            "n AS (SELECT COUNT(*) AS n FROM s) "
            "SELECT AVG(seconds) FROM (SELECT seconds FROM s ORDER BY seconds "
            "LIMIT 2 - (SELECT n FROM n) % 2 OFFSET ((SELECT n FROM n) - 1) / 2)", [study_id, annotator_id]).fetchone()
        return row[0] if row is not None else None
