"""What `prefval recover FILE` does with each row of a rescue file (annotator/rescue.py), and the one write.

A rescue file holds what a screen could not write before it ended (the quit's wait passed its limit, ctrl+c, a
crash, kill -9 while it said "saving…"): annotation rows, adjudication rows and session events, each with the id it
was to have and the time it was decided. Each row ends in one of four states (plan):

- ``restore``: written now, with the time it was decided (not the time of the recovery);
- ``present``: a row with its id is in the database with the same values (its write made it after all, or an
  earlier recover): left alone, so recover can run twice;
- ``superseded``: the same annotator decided the unit again after it (SUPERSEDED_BY: a rescued answer only by a later
  answer, since a skip of an item shown without its lost answer never takes an answer away), or the unit was
  adjudicated again after it: the later decision stays in force and the older one is not restored, as a screen
  never lets an earlier decision replace a later one;
- ``refused``: the database no longer takes it: the study archived (`prefval study unarchive`, then recover again)
  or the item released from the annotator's queue by a study command.

A file whose screen is still running (RescueFile.live_screen) is not for recover at all: that screen is still
saving its rows (`prefval recover` says so before reading the database). Anything else is bad input and nothing
is written: a row naming a study, unit, item, annotator or assignment the
database does not hold (the file belongs to another database, or was edited), an answer the study's task could not
have given on that unit (TaskType.answer_problem), a row whose id is in the database with other values. The error
is one line naming the file, the line and the field. The plan and the write are one transaction, so the rows
restored are all of them or none.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from annotator.rescue import KeptRow, RescueFile, same_file
from storage import recovery as db
from storage.db import now_iso
from storage.errors import PrefvalError
from storage.models import Event, is_person_kind, new_id

__all__ = ["RowOutcome", "Recovery", "plan", "recover", "rows_waiting"]

_DECISIONS = ("answered", "skipped", "partial")
#: the later decisions that keep a rescued one of each status out: an answer only by a later answer (a skip or a
#: partial re-scoring made on an item shown without its lost answer never takes an answer away, as `s` on an
#: answered item only moves on); a partial answer by a later answer or partial; a skip by any later decision
SUPERSEDED_BY = {"answered": ("answered",), "partial": ("answered", "partial"), "skipped": _DECISIONS}
STATES = ("restore", "present", "superseded", "refused")


@dataclass
class RowOutcome:
    """What becomes of one row of the file: state (one of STATES) and, for superseded and refused rows, why (a
    sentence naming the row); a restored row placed after a later skip says so in `why` too."""

    kept: KeptRow
    state: str
    why: str = ""


@dataclass
class Recovery:
    """A plan (or, after recover(), what was done): the file, the database path and each row's outcome."""

    file: RescueFile
    database: str
    outcomes: list[RowOutcome] = field(default_factory=list)

    def count(self, state: str, table: str | None = None) -> int:
        """Rows in `state`, of `table` when given ("annotations", "adjudications", "events")."""
        return sum(1 for o in self.outcomes if o.state == state and (table is None or o.kept.table == table))

    @property
    def notes(self) -> list[RowOutcome]:
        """The restored rows that went in after a later row of their unit (their `why` says which)."""
        return [o for o in self.outcomes if o.state == "restore" and o.why]

    @property
    def not_restored(self) -> list[RowOutcome]:
        """The superseded and refused rows, in file order."""
        return [o for o in self.outcomes if o.state in ("superseded", "refused")]

    @property
    def nothing_to_restore(self) -> bool:
        """Whether every row is in the database or superseded by a later decision (none waits to be restored or
        was refused)."""
        return not (self.count("restore") or self.count("refused"))

    def summary(self) -> str:
        """The closing line of `prefval recover` (after recover()): what was restored, already there, superseded
        and refused, and what to do with the file (it can go only once every row is in the database)."""
        n = self.count
        line = (f"{self.database}: restored {n('restore', 'annotations')} annotation(s), "
                f"{n('restore', 'adjudications')} adjudication(s), {n('restore', 'events')} event(s) from "
                f"{self.file.path}; {n('present')} already there")
        if n("superseded"):
            line += f"; {n('superseded')} superseded by a later decision (above)"
        if n("refused"):
            return line + f"; {n('refused')} refused (above): the file is kept as it is"
        if n("superseded"):
            return line + ": nothing else to restore; delete the file when you no longer need those rows"
        return line + "; the file can be deleted"

    def status_text(self) -> str:
        """What `prefval status` says of the file (a plan, before recover)."""
        n = self.count
        if not self.nothing_to_restore:
            return (f"{n('restore') + n('refused')} row(s) not in the database"
                    + (f", {n('refused')} of them refused (prefval recover says why)" if n("refused") else ""))
        if n("superseded"):
            return (f"nothing to restore: {n('superseded')} row(s) superseded by later decisions, the rest in the "
                    "database; delete the file when you no longer need those rows")
        return "every row is in the database: the file can be deleted"


def _field(row: Any, key: str) -> Any:
    """A field of a kept row: an adjudication's dict, or an AnnotationIn's or Event's attribute (None when absent)."""
    return row.get(key) if isinstance(row, dict) else getattr(row, key, None)


def _when(stamp: str | None) -> str:
    """A row's time as people read it: "2026-12-04 02:49:03" (UTC)."""
    return (stamp or "?")[:19].replace("T", " ")


class _Planner:
    """The reads of one plan, made once for the whole file (a rescue file holds a few rows; a hand-made one may
    hold many)."""

    def __init__(self, store, kept: RescueFile) -> None:
        from annotator.bundles import answer_checker

        self.store, self.kept = store, kept
        rows = [k.row for k in kept.kept]
        self.studies = db.studies_by_id(store, [_field(r, "study_id") for r in rows])
        self.units = db.units_by_id(store, [_field(r, "unit_id") for r in rows])
        self.annotators = db.annotators_by_id(store, [_field(r, "annotator_id") for r in rows]
                                              + [_field(r, "adjudicator_id") for r in rows])
        self.assignments = db.assignments_by_id(store, [_field(r, "assignment_id") for r in rows])
        self.stored = {t: db.stored_by_id(store, t, [k.id for k in kept.kept if k.table == t])
                       for t in ("annotations", "adjudications", "events")}
        self.check_answer = answer_checker(store)
        self.elsewhere = (" (deleted since, or the file was edited)" if same_file(store.path, kept.database)
                          else f" (the file was kept for {kept.database})")

    def bad(self, k: KeptRow, name: str, problem: str) -> PrefvalError:
        return PrefvalError(f"{self.kept.path}: line {k.line}: field {name!r}: {problem}; nothing restored")

    # ---- the rows a row names ----------------------------------------------------------------------------
    def study(self, k: KeptRow, study_id: str | None, required: bool = True) -> dict[str, Any] | None:
        if study_id is None and not required:
            return None
        study = self.studies.get(study_id)
        if study is None:
            raise self.bad(k, "study_id", f"no study with id {study_id} in {self.store.path}{self.elsewhere}")
        return study

    def unit(self, k: KeptRow, study: dict, unit_id: str) -> dict[str, Any]:
        unit = self.units.get(unit_id)
        if unit is None or unit["study_id"] != study["id"]:
            raise self.bad(k, "unit_id", f"study '{study['name']}' has no unit {unit_id} in {self.store.path}"
                                         f"{self.elsewhere}")
        return unit

    def person(self, k: KeptRow, name: str, annotator_id: str | None, required: bool = True) -> dict | None:
        if annotator_id is None and not required:
            return None
        who = self.annotators.get(annotator_id)
        if who is None:
            raise self.bad(k, name, f"no annotator with id {annotator_id} in {self.store.path}{self.elsewhere}")
        if not is_person_kind(who["kind"]):
            raise self.bad(k, name, f"'{who['name']}' is an LLM annotator (kind {who['kind']}); a screen keeps "
                                    "people's rows only")
        return who

    def same_as_stored(self, k: KeptRow, values: dict[str, Any]) -> bool:
        """Whether the row's id is in the database already (with the same values; other values: bad input)."""
        stored = self.stored[k.table].get(k.id)
        if stored is None:
            return False
        for col in db.COMPARED[k.table]:
            if stored.get(col) != values.get(col):
                raise self.bad(k, col, f"row {k.id} is in {self.store.path} with another value (the file was "
                                       "edited, or it was kept for another database)")
        return True

    def answer(self, k: KeptRow, study_id: str, unit_id: str, status: str, answer: Any) -> None:
        if status in ("answered", "partial"):
            if not isinstance(answer, dict):
                raise self.bad(k, "answer", f"a row of status {status!r} needs an answer, a JSON object")
            problem = self.check_answer(study_id, unit_id, status, answer)
            if problem:
                raise self.bad(k, "answer", problem)
        elif answer is not None:
            raise self.bad(k, "answer", f"a row of status {status!r} holds no answer")

    # ---- each table ----------------------------------------------------------------------------------------
    def annotation(self, k: KeptRow) -> RowOutcome:
        row = k.row
        study = self.study(k, row.study_id)
        unit = self.unit(k, study, row.unit_id)
        if row.item_id != unit["item_id"]:
            raise self.bad(k, "item_id", f"unit {row.unit_id} holds item {unit['item_id']}, not {row.item_id}")
        who = self.person(k, "annotator_id", row.annotator_id)
        a = self.assignments.get(row.assignment_id) if row.assignment_id else None
        if a is None:
            raise self.bad(k, "assignment_id", f"no assignment {row.assignment_id} in {self.store.path}"
                                               f"{self.elsewhere}")
        if (a["study_id"], a["unit_id"], a["annotator_id"]) != (row.study_id, row.unit_id, row.annotator_id):
            raise self.bad(k, "assignment_id", f"assignment {row.assignment_id} is not {who['name']}'s of unit "
                                               f"{row.unit_id}")
        if row.status == "note" and not (row.note or "").strip():
            raise self.bad(k, "note", "a note row needs its note")
        self.answer(k, row.study_id, row.unit_id, row.status, row.answer)
        if self.same_as_stored(k, row.model_dump()):
            return RowOutcome(k, "present")
        what = f"{who['name']}'s {row.status if row.status != 'answered' else 'answer'} on item {unit['external_id']}"
        if study["archived"]:
            return RowOutcome(k, "refused", self.archived(study, what))
        if a["released_at"] is not None:
            return RowOutcome(k, "refused", f"{what}: the item was released from {who['name']}'s queue by a study "
                                            "command since (study release, unassign or rename-annotator); "
                                            f"`prefval study assign {study['name']} --annotators {who['name']}` "
                                            "gives it back if no one else took it, then run prefval recover again")
        if row.status in _DECISIONS:
            at = decided_at(self.kept, k)
            later = db.later_decision(self.store, row.study_id, row.unit_id, row.annotator_id, at,
                                      SUPERSEDED_BY[row.status])
            if later:
                return self.superseded(k, what, f"{who['name']} decided", later[0])
            after = db.later_decision(self.store, row.study_id, row.unit_id, row.annotator_id, at)
            if after:  # e.g. a skip of the item shown without this answer: the answer goes after it, in force
                return RowOutcome(k, "restore", f"{what} (decided {_when(at)}) is put after {who['name']}'s later "
                                                f"{after[1]} row of {_when(after[0])}, which it replaces as the "
                                                "answer in force")
        return RowOutcome(k, "restore")

    def adjudication(self, k: KeptRow) -> RowOutcome:
        a = k.row
        study = self.study(k, a["study_id"])
        unit = self.unit(k, study, a["unit_id"])
        who = self.person(k, "adjudicator_id", a["adjudicator_id"])
        if a["kind"] == "final":
            self.answer(k, a["study_id"], a["unit_id"], "answered", a["answer"])
        if self.same_as_stored(k, a):
            return RowOutcome(k, "present")
        what = f"{who['name']}'s adjudication of item {unit['external_id']}"
        if study["archived"]:
            return RowOutcome(k, "refused", self.archived(study, what))
        later = db.later_adjudication(self.store, a["study_id"], a["unit_id"], decided_at(self.kept, k))
        if later:
            return self.superseded(k, what, f"{later[1]} adjudicated", later[0])
        return RowOutcome(k, "restore")

    def event(self, k: KeptRow) -> RowOutcome:
        e = k.row
        study = self.study(k, e.study_id, required=False)
        self.person(k, "annotator_id", e.annotator_id, required=False)
        if self.same_as_stored(k, e.model_dump()):
            return RowOutcome(k, "present")
        if study is not None and study["archived"]:
            return RowOutcome(k, "refused", self.archived(study, f"the {e.kind} event"))
        return RowOutcome(k, "restore")

    def superseded(self, k: KeptRow, what: str, who_did: str, later: str) -> RowOutcome:
        """The row superseded by a decision made at `later` ("ana decided", "eve adjudicated")."""
        return RowOutcome(k, "superseded", f"{what} (decided {_when(decided_at(self.kept, k))}): {who_did} the item again "
                                           f"at {_when(later)}; that later decision stays")

    def archived(self, study: dict, what: str) -> str:
        return (f"{what}: study '{study['name']}' is archived (read-only); `prefval study unarchive "
                f"{study['name']}`, then run prefval recover again")

def decided_at(kept: RescueFile, k: KeptRow) -> str:
    """When a row was decided: its own time, else when the file was written (files kept before prefval recorded
    the time of each row; the file is written as the decision waits), else now."""
    return k.decided_at or kept.written_at or now_iso()


def plan(store, kept: RescueFile) -> Recovery:
    """Each row's outcome (module docstring) against `store` as it is now; reads only (`prefval status` calls it
    on a read-only Store). Raises PrefvalError, one line naming the file, the line and the field, for a row that
    is bad input (nothing may be restored then)."""
    p = _Planner(store, kept)
    out = Recovery(kept, store.path)
    first: dict[tuple[str, str], int] = {}
    for k in kept.kept:
        seen = first.setdefault((k.table, k.id), k.line)
        if seen != k.line:
            raise p.bad(k, "id", f"{k.id} is the id of line {seen} too")
        out.outcomes.append(p.annotation(k) if k.table == "annotations" else
                            p.adjudication(k) if k.table == "adjudications" else p.event(k))
    return out


def recover(store, kept: RescueFile) -> Recovery:
    """Plan the file against `store` and write the rows to restore, as one transaction: all of them or none
    (storage.recovery.write_restored: each row with the time it was decided), with a "recovered" event naming the
    file and each restored row's decision time (payload {"file", "decided_at": {row id: ISO time}}). Returns the
    Recovery. Raises PrefvalError for bad input (plan; nothing written), DatabaseBusy when another program holds
    the write lock beyond the busy timeout (nothing written; run it again), PrefvalError for a write that fails
    otherwise."""
    with store.transaction():
        done = plan(store, kept)
        # in the order they were decided, so that of two rows on one unit the later one ends up in force
        restore = sorted((o.kept for o in done.outcomes if o.state == "restore"), key=lambda k: decided_at(kept, k))
        events = [k.row for k in restore if k.table == "events"]
        decisions = [k for k in restore if k.table != "events"]
        if decisions:  # what was put back, from which file, and when each row was decided (a row put after a later
            # skip takes a time just after it: its own time is kept here)
            studies = {_field(k.row, "study_id") for k in decisions}
            times = {k.id: decided_at(kept, k) for k in decisions}
            events.append(Event(id=new_id(), at=now_iso(), kind="recovered",
                                study_id=studies.pop() if len(studies) == 1 else None,
                                payload={"file": os.path.abspath(kept.path), "decided_at": times}))
        db.write_restored(
            store,
            [(k.row, k.id, decided_at(kept, k)) for k in restore if k.table == "annotations"],
            [(k.row, decided_at(kept, k)) for k in restore if k.table == "adjudications"],
            events)
    return done


def rows_waiting(store, study_id: str, annotator_id: str | None = None) -> list[tuple[str, int]]:
    """The rescue files beside the store's database holding rows of the study (of that annotator, when given)
    that are not in the database yet: [(path, rows)], in file order; files that cannot be read are left out (status
    names them). For study commands that would make those rows impossible to put back (delete, release)."""
    from annotator.rescue import read_rescue_file, rescue_files_of

    out = []
    for f in rescue_files_of(store.path):
        try:
            kept = read_rescue_file(f)
        except PrefvalError:
            continue
        mine = [k for k in kept.kept if k.table != "events" and _field(k.row, "study_id") == study_id
                and annotator_id in (None, _field(k.row, "annotator_id"), _field(k.row, "adjudicator_id"))]
        stored = {t: db.stored_by_id(store, t, [k.id for k in mine if k.table == t])
                  for t in ("annotations", "adjudications")}
        n = sum(1 for k in mine if k.id not in stored[k.table])
        if n:
            out.append((str(f), n))
    return out
