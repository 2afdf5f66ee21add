"""Studies, their units (items or item pairs), annotators and assignments."""
from __future__ import annotations

import json
import os
from array import array
import socket
from typing import Any, Callable, Iterable

from storage.db import BATCH_ROWS, now_iso, write_transaction
from storage.errors import DatabaseBusy, PrefvalError, StudyClosed, is_busy
from storage.visible_text import name_problem
from storage.models import MODEL_IDS_SQL, Annotator, Assignment, Study, Unit, UnitColumns, derived_id, new_id
from storage.queue_state import FLAGGED_UNITS


def _study(row: dict) -> Study:
    return Study(**{**row, "settings": json.loads(row["settings"] or "{}")})


#: every field of a Unit: the one `model_fields_set` that Store.units gives all its units (a set pydantic adds a
#: field name to when it is assigned, which changes nothing here as every name is in it)
UNIT_FIELDS = set(Unit.model_fields)


def _unit(row: dict) -> Unit:
    extra = row["extra"]
    return Unit(**{**row, "extra": json.loads(extra) if extra and extra != "{}" else {}})


# Units of study ?1 with a free slot (open_slots > 0: fewer human annotators than the quota; partial index
# idx_study_items_open) that annotator ?2 does not hold yet.
_CLAIMABLE_SQL = """
SELECT u.id, u.item_id, u.item_b_id, u.position, u.extra FROM study_items u
WHERE u.study_id = ?1 AND u.open_slots > 0
  AND NOT EXISTS (SELECT 1 FROM assignments m WHERE m.study_id = ?1 AND m.unit_id = u.id AND m.annotator_id = ?2
                  AND m.released_at IS NULL)
"""  # a unit released from the annotator (study release/unassign) can be claimed by them again, as by anyone


def _alive(creating: dict[str, Any]) -> bool:
    """Whether the process that is creating a study (settings["creating"]: pid, host) still runs; a process on
    another host is taken to be alive."""
    if creating.get("host") != socket.gethostname():
        return True
    try:
        os.kill(int(creating.get("pid", 0)), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, OSError):
        return True
    return True


def refuse_archived(name: str, settings: dict[str, Any], doing: str, where: str = "") -> None:
    """Refuse `doing` (e.g. "annotated", "adjudicated") on an archived study: an archived study is read-only until
    it is brought back, as Label Studio and Argilla treat archived projects, so nothing is written to it that
    `prefval status` (which hides it) would not show. Raises PrefvalError with one line naming the study and the
    command that brings it back (after `where`, e.g. a bundle's path and ": "); does nothing for a study that is
    not archived."""
    if settings.get("archived"):
        raise PrefvalError(f"{where}study '{name}' is archived and cannot be {doing} (read-only until "
                           f"`prefval study unarchive {name}` brings it back); nothing was written")


def study_closed(db: Any, path: str, study_id: str, what: str = "answer") -> StudyClosed | None:
    """The error of a write to a study that may not be written any more, read in the caller's write transaction:
    deleted (no such study: `prefval study delete` ran since the caller read it) or archived (read-only until
    unarchived); None while the study is open. A screen opened before either is refused at its next write
    (StudyClosed, nothing written), as a write on a released assignment is (AssignmentReleased). what: the row
    written, for the message ("answer", "note", "flag", "adjudication")."""
    row = db.execute("SELECT name, settings FROM studies WHERE id = ?", [study_id]).fetchone()
    if row is None:
        reason = "the study was deleted (`prefval study delete`) after this screen opened"
        return StudyClosed(f"{path}: the {what} was NOT saved: the study was deleted meanwhile (`prefval study "
                           "delete`); q quits, listing what was not saved", reason)
    if json.loads(row[1] or "{}").get("archived"):
        reason = f"study '{row[0]}' was archived after this screen opened"
        return StudyClosed(f"{path}: the {what} was NOT saved: study '{row[0]}' was archived meanwhile (read-only "
                           f"until `prefval study unarchive {row[0]}`; then press the key again)", reason)
    return None


def _released_ids(db: Any, ids: list[str]) -> set[str]:
    """Those of the assignment ids given that exist, released (the rest are new)."""
    out: set[str] = set()
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        out.update(r[0] for r in db.execute(f"SELECT id FROM assignments WHERE id IN ({','.join('?' * len(chunk))}) "
                                            "AND released_at IS NOT NULL", chunk))
    return out


def unit_quota(settings: dict[str, Any], extra: dict[str, Any]) -> int:
    """How many annotators a unit needs: extra["annotators"] when the task set it (e.g. a rubric study's shared
    subset), else the study's settings["annotators_per_item"], else 1. (storage.db.QUOTA_SQL is its SQL twin.)"""
    return int(extra.get("annotators", settings.get("annotators_per_item", 1)))


class StudiesMixin:
    db: object

    def create_study(self, name: str, task_type: str, settings: dict[str, Any], seed: int,
                     units: Iterable[tuple[str, str | None, dict[str, Any]]], in_batches: bool = False) -> Study:
        """Create a study and its units.

        units: (item_id, item_b_id or None, extra dict) in study order. Raises PrefvalError when the name is taken
        or a unit names an unknown item.

        in_batches=False: one transaction, and the study is visible when this returns. in_batches=True (a big
        study beside people at work): the study row is committed first, hidden (settings["creating"] names this
        process), then its units every BATCH_ROWS rows, each batch its own transaction, so that the write lock is
        never held for long; the caller adds assignments and then calls finish_study (which shows it), or
        drop_unfinished_study on failure. A hidden study left by a process that died is removed by the next
        create of the same name.
        """
        problem = name_problem(name, "study")
        if problem:
            raise PrefvalError(problem)
        old = self.db.execute("SELECT id, settings FROM studies WHERE name = ?", [name]).fetchone()
        if old:
            creating = json.loads(old[1] or "{}").get("creating")
            if not creating or _alive(creating):
                raise PrefvalError(f"a study named '{name}' already exists" + (
                    f" (process {creating['pid']} is creating it)" if creating else ""))
            self.drop_unfinished_study(old[0])
        sid = new_id()
        batched = in_batches and not self.db.conn.in_transaction
        rows = [{"id": derived_id("unit", sid, item_id, item_b_id or ""), "study_id": sid,
                 "item_id": item_id, "item_b_id": item_b_id, "position": pos,
                 "extra": json.dumps(extra or {}), "open_slots": unit_quota(settings, extra or {})}
                for pos, (item_id, item_b_id, extra) in enumerate(units)]
        shown = {**settings, "creating": {"pid": os.getpid(), "host": socket.gethostname()}} if in_batches \
            else settings
        with write_transaction(self.db):
            self.db["studies"].insert({
                "id": sid, "name": name, "task_type": task_type, "settings": json.dumps(shown),
                "seed": seed, "created_at": now_iso(),
            })
            if not batched:
                self._insert_units(name, rows)
                self._insert_event("study_created", sid, None, {"name": name, "task": task_type,
                                                                "units": len(rows), "seed": seed})
        if batched:
            try:
                for start in range(0, len(rows), BATCH_ROWS):
                    with write_transaction(self.db):
                        self._insert_units(name, rows[start:start + BATCH_ROWS])
            except BaseException:
                self.drop_unfinished_study(sid)
                raise
        return _study(self.db["studies"].get(sid))

    def _insert_units(self, name: str, rows: list[dict]) -> None:
        try:
            self.db["study_items"].insert_all(rows, batch_size=500)
        except Exception as exc:  # foreign key or duplicate unit
            raise PrefvalError(f"study '{name}': could not add its items ({exc})") from None

    def finish_study(self, study_id: str) -> Study:
        """Show a study created with in_batches=True (drops settings["creating"]) and log its creation."""
        study = _study(self.db["studies"].get(study_id))
        settings = {k: v for k, v in study.settings.items() if k != "creating"}
        settings["counts"] = self._unit_counts(study_id, settings)  # for `prefval status` (study_progress)
        n = settings["counts"]["units"]
        with write_transaction(self.db):
            self.db["studies"].update(study_id, {"settings": json.dumps(settings)})
            self._insert_event("study_created", study_id, None, {"name": study.name, "task": study.task_type,
                                                                 "units": n, "seed": study.seed})
        return _study(self.db["studies"].get(study_id))

    def drop_unfinished_study(self, study_id: str) -> None:
        """Remove a study that create_study(in_batches=True) did not finish, with its units and assignments (in
        batches). Refuses (PrefvalError) a finished study or one with annotation rows."""
        row = self.db.execute("SELECT settings FROM studies WHERE id = ?", [study_id]).fetchone()
        if row is None:
            return
        if not json.loads(row[0] or "{}").get("creating") or self.db.execute(
                "SELECT 1 FROM annotations WHERE study_id = ? LIMIT 1", [study_id]).fetchone():
            raise PrefvalError("only a study still being created can be dropped")
        for table in ("assignments", "study_items"):
            while True:
                with write_transaction(self.db):
                    n = self.db.execute(f"DELETE FROM {table} WHERE rowid IN (SELECT rowid FROM {table} "
                                        f"WHERE study_id = ? LIMIT {BATCH_ROWS})", [study_id]).rowcount
                if not n:
                    break
        with write_transaction(self.db):
            self.db.execute("DELETE FROM studies WHERE id = ?", [study_id])

    def get_study(self, name: str) -> Study:
        """The study called name. Raises PrefvalError naming the known studies when there is none, or saying
        that it is still being created."""
        rows = list(self.db["studies"].rows_where("name = ?", [name]))
        if not rows:
            known = ", ".join(s.name for s in self.studies()) or "none yet"
            raise PrefvalError(f"no study named '{name}' (known: {known})")
        study = _study(rows[0])
        creating = study.settings.get("creating")
        if creating:
            raise PrefvalError(f"study '{name}' is still being created (process {creating.get('pid')}"
                               + ("" if _alive(creating) else ", which has stopped: create it again") + ")")
        return study

    def get_study_by_id(self, study_id: str) -> Study:
        return _study(self.db["studies"].get(study_id))

    def studies(self, include_archived: bool = False) -> list[Study]:
        """Studies by creation time; archived ones (settings["archived"]) only with include_archived=True."""
        out = [_study(r) for r in self.db["studies"].rows_where(order_by="created_at")]
        out = [s for s in out if not s.settings.get("creating")]  # still being created (create_study in_batches)
        return out if include_archived else [s for s in out if not s.settings.get("archived")]

    def rename_study(self, name: str, new_name: str) -> Study:
        """Give a study a new name (its id, items, assignments and answers are unchanged). The name its
        annotators' queue orders were seeded from is kept in settings["seed_name"], so people who join later
        get the order they would have had. Raises PrefvalError for an unknown study, an empty or taken name."""
        study = self.get_study(name)
        problem = name_problem(new_name, "new study")
        if problem:
            raise PrefvalError(problem)
        if self.db.execute("SELECT 1 FROM studies WHERE name = ?", [new_name]).fetchone():
            raise PrefvalError(f"a study named '{new_name}' already exists")
        settings = {**study.settings, "seed_name": study.settings.get("seed_name", study.name)}
        with write_transaction(self.db):
            self.db["studies"].update(study.id, {"name": new_name, "settings": json.dumps(settings)})
            self._insert_event("study_renamed", study.id, None, {"from": name, "to": new_name})
        return self.get_study(new_name)

    def set_study_archived(self, name: str, archived: bool = True) -> Study:
        """Archive a study (hidden from `study list` and `status`, everything kept in the file) or bring it back."""
        study = self.get_study(name)
        settings = {**study.settings, "archived": bool(archived)}
        with write_transaction(self.db):
            self.db["studies"].update(study.id, {"settings": json.dumps(settings)})
            self._insert_event("study_archived" if archived else "study_unarchived", study.id, None, {"name": name})
        return self.get_study(name)

    def delete_study(self, name: str) -> int:
        """Delete a study that has no annotation rows at all (no answer, skip, note or flag), with its units and
        assignments. Returns the number of units removed. Raises PrefvalError when the study has annotations
        (they are append-only: a study with answers can only be archived) or a bundle out (exported and not
        merged back: Store.bundles_out), whose answers could then never be merged."""
        study = self.get_study(name)
        n_rows = self.db.execute("SELECT COUNT(*) FROM annotations WHERE study_id = ?", [study.id]).fetchone()[0]
        if n_rows:
            raise PrefvalError(f"study '{name}' has {n_rows} annotation row(s), which are never deleted; "
                               f"use `prefval study archive {name}` to hide it instead")
        out = self.bundles_out(study.id)
        if out:
            b = out[-1]
            raise PrefvalError(f"study '{name}' has {len(out)} bundle(s) out that were not merged back, the latest "
                               f"{b['file_name']} of '{b['annotator']}' (exported "
                               f"{b['exported_at'][:16].replace('T', ' ')} UTC); its answers could never be merged: "
                               f"merge it first (`prefval bundle merge`), or `prefval study archive {name}` to hide "
                               "the study instead")
        with write_transaction(self.db):
            n_units = self.db.execute("SELECT COUNT(*) FROM study_items WHERE study_id = ?", [study.id]).fetchone()[0]
            self.db.execute("DELETE FROM assignments WHERE study_id = ?", [study.id])
            self.db.execute("DELETE FROM study_items WHERE study_id = ?", [study.id])
            self.db.execute("DELETE FROM studies WHERE id = ?", [study.id])
            self._insert_event("study_deleted", study.id, None, {"name": name, "units": n_units})
        return n_units

    def units(self, study_id: str) -> list[Unit]:
        """The study's units in study order. Read as tuples and built without validation (the rows were validated
        when written), sharing one set of field names and the study id: half the memory and time on 100k units.
        """
        return [Unit.model_construct(UNIT_FIELDS, id=r[0], study_id=study_id, item_id=r[1], item_b_id=r[2],
                                     position=r[3], extra=json.loads(r[4]) if r[4] and r[4] != "{}" else {})
                for r in self.db.execute("SELECT id, item_id, item_b_id, position, extra FROM study_items "
                                         "WHERE study_id = ? ORDER BY position", [study_id])]

    def unit_columns(self, study_id: str, values: dict[str, str] | None = None,
                     lengths: dict[str, str] | None = None) -> UnitColumns:
        """The study's units as columns in study order (see UnitColumns), with only the item payload fields asked
        for: values name -> JSON path (json_extract), lengths name -> JSON path of an array (json_array_length).
        No Unit or Item object is built and no payload is parsed in Python: a few bytes per unit."""
        values, lengths = dict(values or {}), dict(lengths or {})
        cols = [f"json_extract(i.payload, ?)" for _ in values] + [f"json_array_length(i.payload, ?)" for _ in lengths]
        sql = ("SELECT si.position, si.id, CASE WHEN si.extra IS NULL OR si.extra IN ('', '{}') THEN NULL ELSE si.extra END"
               + "".join(", " + c for c in cols) + " FROM study_items si "
               + ("JOIN items i ON i.id = si.item_id " if cols else "")
               + "WHERE si.study_id = ? ORDER BY si.position")
        out = UnitColumns(positions=array("q"), values={k: [] for k in values}, lengths={k: [] for k in lengths})
        lists = list(out.values.values()) + list(out.lengths.values())
        for r in self.db.execute(sql, [*values.values(), *lengths.values(), study_id]):
            if r[2] is not None:
                extra = json.loads(r[2])
                if extra.get("check"):
                    out.checks[r[0]] = r[1]
                if "annotators" in extra:
                    out.quotas[r[0]] = int(extra["annotators"])
            out.positions.append(r[0])
            for col, v in zip(lists, r[3:]):
                col.append(v)
        return out

    def unit_positions(self, unit_ids: list[str]) -> dict[str, int]:
        """unit id -> its study position (study_items.position), for the given ids (unknown ids are absent)."""
        out: dict[str, int] = {}
        for start in range(0, len(unit_ids), 500):
            chunk = unit_ids[start:start + 500]
            out.update(self.db.execute(f"SELECT id, position FROM study_items WHERE id IN ({','.join('?' * len(chunk))})",
                                       chunk).fetchall())
        return out

    def units_by_id(self, unit_ids: list[str]) -> dict[str, Unit]:
        """Units by id (missing ids are absent from the result); reads only those rows."""
        out: dict[str, Unit] = {}
        for start in range(0, len(unit_ids), 500):
            chunk = unit_ids[start:start + 500]
            for r in self.db["study_items"].rows_where(f"id IN ({','.join('?' * len(chunk))})", chunk):
                out[r["id"]] = _unit(r)
        return out

    def ensure_annotator(self, name: str, kind: str = "human", model: str | None = None) -> Annotator:
        """The annotator called name (surrounding whitespace ignored), created (committed) if new. kind: "human" or
        "llm" (an LLM judge). Raises PrefvalError for a new name that is empty or not plain text
        (storage.visible_text.name_problem); an existing annotator is found whatever their name holds."""
        given, name = name, name.strip()
        if not name:
            raise PrefvalError("the annotator name must not be empty")
        aid = derived_id("annotator", name)
        row = self.db.execute("SELECT id, name, kind, model FROM annotators WHERE name = ?", [name]).fetchone()
        if row:  # looked up by name: a renamed annotator keeps the id derived from their first name
            return Annotator(id=row[0], name=row[1], kind=row[2] or "human", model=row[3])
        problem = name_problem(given, "annotator")
        if problem:
            raise PrefvalError(problem)
        with write_transaction(self.db):  # OR IGNORE: two windows opening as a new name at the same moment
            self.db["annotators"].insert({"id": aid, "name": name, "kind": kind, "model": model,
                                          "created_at": now_iso()}, ignore=True)
            row = self.db.execute("SELECT id, name, kind, model FROM annotators WHERE id = ?", [aid]).fetchone()
        return Annotator(id=row[0], name=row[1], kind=row[2] or "human", model=row[3])

    def find_annotator(self, name: str) -> Annotator | None:
        """The annotator called name, or None (nothing is created)."""
        row = self.db.execute("SELECT id, name, kind, model FROM annotators WHERE name = ?",
                              [name.strip()]).fetchone()
        return Annotator(id=row[0], name=row[1], kind=row[2] or "human", model=row[3]) if row else None

    def rename_annotator(self, old: str, new: str) -> Annotator:
        """Rename an annotator everywhere (same id, so every assignment and annotation follows). Raises
        PrefvalError when old is unknown or new is empty or already taken."""
        a = self.find_annotator(old)
        if a is None:
            raise PrefvalError(f"no annotator named '{old}'")
        problem = name_problem(new, "new annotator")
        if problem:
            raise PrefvalError(problem)
        if self.find_annotator(new) is not None:
            raise PrefvalError(f"an annotator named '{new}' already exists")
        with write_transaction(self.db):
            self.db["annotators"].update(a.id, {"name": new})
            self._insert_event("annotator_renamed", None, a.id, {"from": old, "to": new})
        return Annotator(id=a.id, name=new, kind=a.kind, model=a.model)

    def annotators(self) -> list[Annotator]:
        return [Annotator(**{k: r[k] for k in ("id", "name", "kind", "model")})
                for r in self.db["annotators"].rows_where(order_by="name")]

    def add_assignments(self, study_id: str, rows: Iterable[tuple[str, str, int, int]]) -> int:
        """Assign units to annotators; existing (study, unit, annotator) triples are kept (a released one comes
        back at its new position). Commits every BATCH_ROWS rows (each batch whole or absent) unless called inside a
        caller's transaction, so that a big assignment never holds the write lock for long.

        rows: (unit_id, annotator_id, position in that annotator's queue, shuffle_seed). Returns the number added.
        """
        rows = list(rows)
        if len(rows) > BATCH_ROWS and not self.db.conn.in_transaction:
            return sum(self.add_assignments(study_id, rows[i:i + BATCH_ROWS]) for i in range(0, len(rows), BATCH_ROWS))
        with write_transaction(self.db):
            ids = [derived_id("assignment", study_id, unit_id, annotator_id) for unit_id, annotator_id, _, _ in rows]
            existing: dict[str, str | None] = {}
            for start in range(0, len(ids), 500):  # only the ids being added are looked up
                chunk = ids[start:start + 500]
                existing.update((r[0], r[1]) for r in self.db.execute(
                    f"SELECT id, released_at FROM assignments WHERE id IN ({','.join('?' * len(chunk))})", chunk))
            new_rows = []
            stamp = now_iso()
            for aid, (unit_id, annotator_id, position, seed) in zip(ids, rows):
                if aid in existing:
                    if existing[aid] is not None:  # released earlier: back in the queue, at its new position
                        self.db.execute("UPDATE assignments SET released_at = NULL, position = ? WHERE id = ?",
                                        [position, aid])
                        existing[aid] = None
                        new_rows.append(None)
                    continue
                existing[aid] = None
                new_rows.append({
                    "id": aid, "study_id": study_id, "unit_id": unit_id, "annotator_id": annotator_id,
                    "position": position, "shuffle_seed": seed, "created_at": stamp,
                })
            self.db["assignments"].insert_all([r for r in new_rows if r is not None], batch_size=500)
        added = len(new_rows)
        return added

    def claim_units(self, study_id: str, annotator_id: str, limit: int,
                    plan: Callable[[list[Unit], int], list[tuple[str, int, int]]], spread_checks: bool = False) -> int:
        """Claim up to `limit` more units of a study for one annotator: counting and claiming are ONE write
        transaction (BEGIN IMMEDIATE), so however many annotators claim at the same moment, no unit ever gets more
        human annotators than its quota.

        A unit can be claimed when the annotator does not hold it yet and fewer human annotators than its quota
        (unit_quota) hold it: its open_slots, kept by triggers on assignments (LLM judges do not count), is above 0.
        Units are taken in study order (position), so that with a quota above 1 the units already begun are filled
        first and agreement can be computed early. plan(units, next_position) -> [(unit_id, position, seed)] is
        called inside the transaction with the claimable units (study order) and the next free position of the
        annotator's queue; it orders them (each annotator's own shuffle) and gives each its shuffle seed.
        spread_checks: the study has attention-check units (extra["check"], every annotator gets them): `limit`
        counts the other units, and each batch adds the checks due so that the annotator's share of the checks
        keeps pace with their share of the other units (ceil(checks * mine / units)), mixed in by plan.
        Returns the number of units claimed (0: nothing left to claim). Raises DatabaseBusy when another process
        held the write lock beyond the busy timeout (nothing claimed).
        """
        import sqlite3

        try:
            with write_transaction(self.db):
                if study_closed(self.db, self.path, study_id):  # archived or deleted in another process: claim nothing
                    return 0
                regular = " AND json_extract(u.extra, '$.check') IS NULL" if spread_checks else ""
                rows = self.db.execute(_CLAIMABLE_SQL + regular + " ORDER BY u.position LIMIT ?3",
                                       [study_id, annotator_id, limit]).fetchall()
                if spread_checks and rows:
                    rows += self._checks_due(study_id, annotator_id, len(rows))
                if not rows:
                    return 0
                units = [Unit(id=r[0], study_id=study_id, item_id=r[1], item_b_id=r[2], position=r[3],
                              extra=json.loads(r[4] or "{}")) for r in rows]
                nxt = self.db.execute("SELECT COALESCE(MAX(position) + 1, 0) FROM assignments "
                                      "WHERE study_id = ? AND annotator_id = ?", [study_id, annotator_id]).fetchone()[0]
                stamp = now_iso()
                new_rows = [{"id": derived_id("assignment", study_id, unit_id, annotator_id), "study_id": study_id,
                             "unit_id": unit_id, "annotator_id": annotator_id, "position": position,
                             "shuffle_seed": seed, "created_at": stamp}
                            for unit_id, position, seed in plan(units, nxt)]
                released = _released_ids(self.db, [r["id"] for r in new_rows])
                for r in new_rows:  # released from this annotator before: live again at its new place (same seed)
                    if r["id"] in released:
                        self.db.execute("UPDATE assignments SET released_at = NULL, position = ? WHERE id = ?",
                                        [r["position"], r["id"]])
                self.db["assignments"].insert_all([r for r in new_rows if r["id"] not in released], batch_size=500)
        except sqlite3.OperationalError as exc:
            if is_busy(exc):
                raise DatabaseBusy(f"{getattr(self, 'path', '')}: could not claim items (the database is busy: "
                                   "another program is writing to it); try again") from None
            raise
        return len(new_rows)

    def _checks_due(self, study_id: str, annotator_id: str, adding: int) -> list[tuple]:
        """Attention-check units (extra.check) to claim with `adding` other units (see claim_units)."""
        is_check = "json_extract(u.extra, '$.check') IS NOT NULL"
        totals = self.db.execute(f"SELECT SUM({is_check}), SUM(NOT {is_check}) FROM study_items u "
                                 "WHERE u.study_id = ?", [study_id]).fetchone()
        n_checks, n_units = totals[0] or 0, totals[1] or 0
        mine = self.db.execute(f"SELECT SUM({is_check}), SUM(NOT {is_check}) FROM assignments m "
                               "JOIN study_items u ON u.id = m.unit_id WHERE m.study_id = ? AND m.annotator_id = ?",
                               [study_id, annotator_id]).fetchone()
        mine_checks, mine_units = mine[0] or 0, (mine[1] or 0) + adding
        due = -(-n_checks * mine_units // n_units) - mine_checks if n_units else 0
        if due <= 0:
            return []
        return self.db.execute(_CLAIMABLE_SQL + f" AND {is_check} ORDER BY u.position LIMIT ?3",
                               [study_id, annotator_id, due]).fetchall()

    def study_progress(self, study_id: str) -> dict[str, Any]:
        """A study's progress, counted in SQL (memory does not grow with the number of answers).

        Returns {"items": units that are not attention checks, "checks": attention-check units, "needed": answers
        the study needs (the quota of each non-check unit, summed), "answered": (unit, human annotator) pairs with
        an answer on a non-check unit, "assignments": unreleased assignments, "annotators": human annotators
        holding units, "llm_judges": LLM judges holding units, "last_activity": ISO time of the latest annotation
        or adjudication row or None}. progress = answered / needed. The unit figures are counted once when the study is finished
        (settings["counts"]) and re-counted only when the number of units no longer matches.
        """
        settings = json.loads(self.db.execute("SELECT settings FROM studies WHERE id = ?",
                                              [study_id]).fetchone()[0] or "{}")
        n_units = self.db.execute("SELECT COUNT(*) FROM study_items WHERE study_id = ?", [study_id]).fetchone()[0]
        counts = settings.get("counts") or {}
        if counts.get("units") != n_units:
            counts = self._unit_counts(study_id, settings)
        llm = MODEL_IDS_SQL
        answered = self.db.execute(
            "SELECT COUNT(*) FROM (SELECT DISTINCT annotator_id, unit_id FROM annotations "
            f"WHERE study_id = ? AND status = 'answered' AND annotator_id NOT IN {llm})", [study_id]).fetchone()[0]
        if counts["checks"]:
            answered -= self.db.execute(
                "SELECT COUNT(*) FROM (SELECT DISTINCT a.annotator_id, a.unit_id FROM study_items u "
                "JOIN annotations a ON a.study_id = u.study_id AND a.unit_id = u.id "
                "WHERE u.study_id = ? AND json_extract(u.extra, '$.check') IS NOT NULL AND a.status = 'answered' "
                f"AND a.annotator_id NOT IN {llm})", [study_id]).fetchone()[0]
        holders = dict(self.db.execute(
            "SELECT COALESCE(n.kind, 'human'), COUNT(*) FROM annotators n WHERE EXISTS (SELECT 1 FROM assignments a "
            "WHERE a.study_id = ? AND a.annotator_id = n.id AND a.released_at IS NULL) GROUP BY 1", [study_id]))
        n_assign = self.assignment_count(study_id)
        last = self.db.execute("SELECT MAX(t) FROM (SELECT MAX(submitted_at) AS t FROM annotations WHERE study_id = ?1 "
                               "UNION ALL SELECT MAX(submitted_at) FROM adjudications WHERE study_id = ?1)",
                               [study_id]).fetchone()[0]
        return {"items": n_units - counts["checks"], "checks": counts["checks"], "needed": counts["needed"],
                "answered": answered, "assignments": n_assign, "annotators": holders.get("human", 0),
                "llm_judges": holders.get("llm", 0), "last_activity": last}

    def _unit_counts(self, study_id: str, settings: dict[str, Any]) -> dict[str, int]:
        """{"units", "checks", "needed"} of a study, counted over its units (one pass)."""
        units, checks, needed = self.db.execute(
            "SELECT COUNT(*), SUM(json_extract(extra, '$.check') IS NOT NULL), "
            "SUM(CASE WHEN json_extract(extra, '$.check') IS NULL "
            "THEN COALESCE(json_extract(extra, '$.annotators'), ?) ELSE 0 END) "
            "FROM study_items WHERE study_id = ?", [int(settings.get("annotators_per_item", 1)), study_id]).fetchone()
        return {"units": units or 0, "checks": checks or 0, "needed": needed or 0}

    def _assigned_per_annotator(self, study_id: str) -> dict[str, int]:
        """annotator_id -> unreleased assignments in a study (all rows from the covering index, less the released
        ones from their partial index)."""
        out = dict(self.db.execute("SELECT annotator_id, COUNT(*) FROM assignments WHERE study_id = ? "
                                   "GROUP BY annotator_id", [study_id]))
        for aid, n in self.db.execute("SELECT annotator_id, COUNT(*) FROM assignments WHERE study_id = ? "
                                      "AND released_at IS NOT NULL GROUP BY annotator_id", [study_id]):
            out[aid] -= n
        return {a: n for a, n in out.items() if n > 0}

    def assignment_count(self, study_id: str) -> int:
        """Unreleased assignments of a study (a count; no rows are read into memory)."""
        return sum(self._assigned_per_annotator(study_id).values())

    def annotator_progress(self, study_id: str, median: bool = True) -> list[dict[str, Any]]:
        """Per annotator holding units of a study, counted in SQL: {"annotator", "kind", "assigned", "answered",
        "skipped" (latest decision a skip, never answered), both over the units they hold now (released ones left
        out: answered + skipped <= assigned), "median_seconds" (None without, or when median=False: it reads
        every answer row, about a second per 100k answers)}, by name. The median is of the seconds per item as the
        report defines them (reports.per_annotator.seconds_per_item): for each item the annotator answered
        (attention checks left out), the seconds of the FIRST answer with a time, which sum the visits to the item.
        Read with ORDER BY / OFFSET, so memory does not grow with the number of answers."""
        assigned = self._assigned_per_annotator(study_id)
        names = {r[0]: (r[1], r[2]) for r in self.db.execute(
            "SELECT id, name, COALESCE(kind, 'human') FROM annotators")}
        out = []
        for aid in sorted(assigned, key=lambda a: names[a][0]):
            name, kind = names[aid]
            # over the annotator's live queue (Store.queue_counts), so that answered + skipped + open = assigned: a
            # skip (or a stray answer) on an item released since is no longer theirs to count
            counts = self.queue_counts(study_id, aid, marks=False)  # type: ignore[attr-defined]
            answered, skipped = counts["answered"], counts["skipped"]
            # the first timed answer per unit: SQLite takes the bare column `seconds` from the row with
            # MIN(submitted_at); attention-check units are not items of the study's figures
            current = ("(SELECT seconds, MIN(submitted_at) FROM annotations WHERE study_id = ?1 AND status = 'answered' "
                       "AND annotator_id = ?2 AND seconds IS NOT NULL AND unit_id NOT IN (SELECT u.id FROM study_items u "
                       "WHERE u.study_id = ?1 AND json_extract(u.extra, '$.check') IS NOT NULL) GROUP BY unit_id)")
            n = self.db.execute(f"SELECT COUNT(*) FROM {current}", [study_id, aid]).fetchone()[0] if median else 0
            median = None
            if n:
                mid = [r[0] for r in self.db.execute(f"SELECT seconds FROM {current} ORDER BY seconds LIMIT ?3 "
                                                     "OFFSET ?4", [study_id, aid, 2 - n % 2, (n - 1) // 2])]
                median = sum(mid) / len(mid)
            out.append({"annotator": name, "kind": kind, "assigned": assigned[aid], "answered": answered,
                        "skipped": skipped, "median_seconds": median})
        return out

    def has_llm_answers(self, study_id: str) -> bool:
        """Whether an LLM annotator (annotators.kind "llm") has an "answered" row in a study (one look-up per LLM
        annotator in idx_annotations_progress)."""
        return self.db.execute(
            "SELECT 1 FROM annotations INDEXED BY idx_annotations_progress WHERE study_id = ? AND status = 'answered' "
            f"AND annotator_id IN {MODEL_IDS_SQL} LIMIT 1", [study_id]).fetchone() \
            is not None

    def holder_names(self, study_id: str, kind: str = "human") -> list[str]:
        """Names of the annotators of a kind who hold (unreleased) units of a study, sorted; one SQL pass."""
        return [r[0] for r in self.db.execute(
            "SELECT n.name FROM annotators n WHERE COALESCE(n.kind, 'human') = ? AND EXISTS (SELECT 1 FROM assignments a "
            "WHERE a.study_id = ? AND a.annotator_id = n.id AND a.released_at IS NULL) ORDER BY n.name",
            [kind, study_id])]

    def claimable_count(self, study_id: str, annotator_id: str) -> int:
        """How many units of a study the annotator could still claim (see claim_units); a read, no lock: the
        units with a free slot (study_open_units, one row), less those of them the annotator already holds (a count
        over their own assignments): cheap enough for every decision."""
        row = self.db.execute("SELECT open FROM study_open_units WHERE study_id = ?", [study_id]).fetchone()
        open_units = row[0] if row else 0  # kept by triggers (migration 19): one row, not a count of the units
        if not open_units:  # every unit has its annotators (e.g. all assigned by name): nothing to count
            return 0
        mine = self.db.execute(
            "SELECT COUNT(*) FROM assignments m JOIN study_items u ON u.id = m.unit_id "
            "WHERE m.study_id = ? AND m.annotator_id = ? AND u.open_slots > 0", [study_id, annotator_id]).fetchone()[0]
        return open_units - mine

    def assignments(self, study_id: str, annotator_id: str | None = None) -> list[Assignment]:
        """Assignments of a study (of one annotator, in their queue order, when annotator_id is given).

        The rows are the file's own, typed by the schema (TEXT ids, INTEGER position and seed), so they are built
        without validating them again: an annotator's queue of 100,000 items reads in a tenth of the time."""
        fields = list(Assignment.model_fields)
        where, params, order = "study_id = ? AND released_at IS NULL", [study_id], "annotator_id, position"
        if annotator_id:
            where, params, order = where + " AND annotator_id = ?", params + [annotator_id], "position"
        rows = self.db.execute(f"SELECT {', '.join(fields)} FROM assignments WHERE {where} ORDER BY {order}", params)
        return [Assignment.model_construct(**dict(zip(fields, r))) for r in rows]

    # An annotator's queue: their live (not released) assignments in a study, in (position, id) order. Read through
    # the partial index idx_assignments_live and the length kept in queue_lengths (migration 17), so that opening
    # a queue of 100,000 items reads one number and one page.
    _LIVE = "FROM assignments WHERE study_id = ? AND annotator_id = ? AND released_at IS NULL"

    def queue_length(self, study_id: str, annotator_id: str) -> int:
        """How many live assignments one annotator has in a study (the length of their queue)."""
        row = self.db.execute("SELECT live FROM queue_lengths WHERE study_id = ? AND annotator_id = ?",
                              [study_id, annotator_id]).fetchone()
        return row[0] if row else 0

    def queue_page(self, study_id: str, annotator_id: str, offset: int, limit: int,
                   after: tuple[int, str] | None = None) -> list[tuple[str, str, int, int]]:
        """Queue entries offset .. offset+limit-1 of one annotator as (id, unit_id, position, shuffle_seed) tuples.
        after: (position, id) of entry offset-1 when known: the page is then read from there through the index
        instead of stepping over `offset` entries."""
        cols = f"SELECT id, unit_id, position, shuffle_seed {self._LIVE}"
        if after is not None:
            return self.db.execute(cols + " AND (position, id) > (?, ?) ORDER BY position, id LIMIT ?",
                                   [study_id, annotator_id, after[0], after[1], limit]).fetchall()
        return self.db.execute(cols + " ORDER BY position, id LIMIT ? OFFSET ?",
                               [study_id, annotator_id, limit, offset]).fetchall()

    def queue_rank(self, study_id: str, annotator_id: str, unit_id: str) -> int | None:
        """The 0-based place of a unit in one annotator's queue; None when it is not in it."""
        row = self.db.execute("SELECT position, id FROM assignments WHERE study_id = ? AND unit_id = ? "
                              "AND annotator_id = ? AND released_at IS NULL", [study_id, unit_id, annotator_id]
                              ).fetchone()
        if row is None:
            return None
        return self.db.execute(f"SELECT COUNT(*) {self._LIVE} AND (position, id) < (?, ?)",
                               [study_id, annotator_id, row[0], row[1]]).fetchone()[0]

    def released_since(self, study_id: str, annotator_id: str, since: str) -> int:
        """How many of one annotator's assignments in a study a study command (`study release`, `unassign`,
        `rename-annotator`: release_assignments) released at or after `since` (an ISO 8601 UTC time as now_iso()
        writes it) and are still released: the items taken out of an open session's queue. One probe of the partial
        index idx_assignments_released."""
        return self.db.execute("SELECT COUNT(*) FROM assignments WHERE study_id = ? AND annotator_id = ? "
                               "AND released_at IS NOT NULL AND released_at >= ?",
                               [study_id, annotator_id, since]).fetchone()[0]

    def queue_members(self, study_id: str, annotator_id: str, unit_ids) -> set[str]:
        """Which of `unit_ids` are in one annotator's queue (one indexed look-up per unit)."""
        ids, out = list(unit_ids), set()
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            out.update(r[0] for r in self.db.execute(
                f"SELECT unit_id {self._LIVE} AND unit_id IN ({','.join('?' * len(chunk))})",
                [study_id, annotator_id, *chunk]))
        return out

    def assignment_counts(self, study_id: str) -> dict[str, int]:
        """unit_id -> number of annotators assigned to it (released assignments do not count)."""
        return {r[0]: r[1] for r in self.db.execute(
            "SELECT unit_id, COUNT(*) FROM assignments WHERE study_id = ? AND released_at IS NULL "
            "GROUP BY unit_id", [study_id])}

    def release_assignments(self, study_id: str, annotator_id: str, keep_skipped: bool = False,
                            keep_marked: bool = False) -> int:
        """Give one annotator's unanswered units of a study back to the pool: their assignments get released_at
        (rows stay, since annotations may name them) and leave the queue. Units with an "answered" row stay
        assigned (answers are never deleted or moved); so do units the annotator skipped when keep_skipped, and
        with keep_marked every unit they left a mark on without answering (a skip, a partial answer, a note, or a
        "needs review" flag not taken back: the marks of storage.queue_state.QueueStateMixin.marked_units).
        Returns the number of assignments released."""
        keep = ["answered"] + (["skipped"] if keep_skipped or keep_marked else []) + \
            (["partial", "note"] if keep_marked else [])
        flagged = f" AND s.unit_id NOT IN ({FLAGGED_UNITS})" if keep_marked else ""
        with write_transaction(self.db):
            ids = [r[0] for r in self.db.execute(
                "SELECT s.id FROM assignments s WHERE s.study_id = ?1 AND s.annotator_id = ?2 "
                "AND s.released_at IS NULL AND NOT EXISTS (SELECT 1 FROM annotations a WHERE a.study_id = s.study_id "
                "AND a.unit_id = s.unit_id AND a.annotator_id = s.annotator_id "
                f"AND a.status IN ({', '.join(repr(k) for k in keep)})){flagged}",
                [study_id, annotator_id])]
            stamp = now_iso()
            for i in range(0, len(ids), 500):
                chunk = ids[i:i + 500]
                self.db.execute(f"UPDATE assignments SET released_at = ? WHERE id IN ({','.join('?' * len(chunk))})",
                                [stamp, *chunk])
            if ids:
                self._insert_event("assignments_released", study_id, annotator_id,
                                   {"released": len(ids), "keep_skipped": keep_skipped,
                                    **({"keep_marked": True} if keep_marked else {})})
        return len(ids)
