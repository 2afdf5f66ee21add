"""Adjudications: the final answer an adjudicator sets for a unit where annotators disagree, or its exclusion.

Rows are append-only (triggers refuse UPDATE and DELETE); a change is a new row naming the one it supersedes, and
the latest row per (study, unit) is in force.
"""
from __future__ import annotations

import json
import sqlite3
from typing import Any, Literal

from storage.db import after_iso, now_iso, write_transaction
from storage.errors import DatabaseBusy, PrefvalError, is_busy
from storage.models import Model, new_id
from storage.studies import study_closed


class Adjudication(Model):
    """kind "final": answer is the task's answer dict that now counts for the unit; kind "exclude": the unit is
    left out of figures and releases, with a reason."""

    id: str
    study_id: str
    unit_id: str
    adjudicator_id: str
    kind: Literal["final", "exclude"]
    answer: dict[str, Any] | None = None
    reason: str | None = None
    submitted_at: str
    supersedes: str | None = None


def _adjudication(row: dict) -> Adjudication:
    return Adjudication(**{**row, "answer": json.loads(row["answer"]) if row["answer"] else None})


class AdjudicationsMixin:
    db: Any
    path: str

    def add_adjudication(self, study_id: str, unit_id: str, adjudicator_id: str, kind: str,
                         answer: dict[str, Any] | None = None, reason: str | None = None,
                         adjudication_id: str | None = None, submitted_at: str | None = None) -> Adjudication:
        """Append one adjudication (committed when it returns); it supersedes the unit's current one, read in the
        same write transaction.

        adjudication_id: the id it gets (chosen beforehand by a screen that may keep it in a rescue file; default a
        new one); when a row with that id is in the file already (`prefval recover` wrote its rescued copy while the
        screen still retried it), that row is returned and nothing is written. submitted_at: its time (default now;
        `prefval recover` gives the time it was decided), moved to just after the row it supersedes when not later
        than that one.

        Raises StudyClosed when the study was archived or deleted meanwhile (nothing written), DatabaseBusy when
        another process held the write lock beyond the busy timeout (nothing written; retrying can succeed),
        PrefvalError when the write fails otherwise (read-only, disk full) or kind is unknown."""
        if kind not in ("final", "exclude"):
            raise PrefvalError(f"unknown adjudication kind {kind!r}")
        rec = {"id": adjudication_id or new_id(), "study_id": study_id, "unit_id": unit_id,
               "adjudicator_id": adjudicator_id,
               "kind": kind, "answer": json.dumps(answer, ensure_ascii=False) if answer is not None else None,
               "reason": reason, "submitted_at": submitted_at or now_iso(), "supersedes": None}
        try:
            with write_transaction(self.db):
                if adjudication_id is not None:  # written already under its id (`prefval recover` of its rescue
                    # copy while the screen still retried it): that row, not a second one
                    cur = self.db.execute("SELECT * FROM adjudications WHERE id = ?", [adjudication_id])
                    done = cur.fetchone()
                    if done is not None:
                        return _adjudication(dict(zip([d[0] for d in cur.description], done)))
                closed = study_closed(self.db, self.path, study_id, "adjudication")
                if closed is not None:  # archived or deleted in another process since the screen opened
                    raise closed
                row = self.db.execute(
                    "SELECT id, submitted_at FROM adjudications WHERE study_id = ? AND unit_id = ? "
                    "ORDER BY submitted_at DESC, id DESC LIMIT 1", [study_id, unit_id]).fetchone()
                rec["supersedes"] = row[0] if row else None
                if row and rec["submitted_at"] <= row[1]:  # the row in force sorts first: this one after it
                    rec["submitted_at"] = after_iso(row[1])
                self.db["adjudications"].insert(rec)
        except sqlite3.OperationalError as exc:
            if is_busy(exc):
                raise DatabaseBusy(f"{self.path}: the adjudication was NOT saved (the database is busy: another "
                                   "program is writing to it); try again") from None
            raise PrefvalError(f"{self.path}: the adjudication was NOT saved ({exc}); try again") from None
        return _adjudication(rec)

    def current_adjudications(self, study_id: str) -> dict[str, Adjudication]:
        """unit id -> the adjudication in force (the latest row of the unit)."""
        out: dict[str, Adjudication] = {}
        for r in self.db.query("SELECT * FROM adjudications WHERE study_id = ? ORDER BY submitted_at, id",
                               [study_id]):
            out[r["unit_id"]] = _adjudication(r)
        return out

    def adjudication_log(self, study_id: str) -> list[Adjudication]:
        """Every adjudication row of a study, oldest first (changes included)."""
        return [_adjudication(r) for r in self.db.query(
            "SELECT * FROM adjudications WHERE study_id = ? ORDER BY submitted_at, id", [study_id])]
