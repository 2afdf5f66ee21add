"""Studies, their units (items or item pairs), annotators and assignments."""
from __future__ import annotations

import json
from typing import Any, Iterable

from storage.db import now_iso, write_transaction
from storage.errors import PrefvalError
from storage.models import Annotator, Assignment, Study, Unit, derived_id, new_id


def _study(row: dict) -> Study:
    return Study(**{**row, "settings": json.loads(row["settings"] or "{}")})


def _unit(row: dict) -> Unit:
    return Unit(**{**row, "extra": json.loads(row["extra"] or "{}")})


class StudiesMixin:
    db: object

    def create_study(self, name: str, task_type: str, settings: dict[str, Any], seed: int,
                     units: Iterable[tuple[str, str | None, dict[str, Any]]]) -> Study:
        """Create a study and its units in one transaction.

        units: (item_id, item_b_id or None, extra dict) in study order. Raises PrefvalError when the name is taken
        or a unit names an unknown item.
        """
        if self.db.execute("SELECT 1 FROM studies WHERE name = ?", [name]).fetchone():
            raise PrefvalError(f"a study named '{name}' already exists")
        sid = new_id()
        with write_transaction(self.db):
            self.db["studies"].insert({
                "id": sid, "name": name, "task_type": task_type, "settings": json.dumps(settings),
                "seed": seed, "created_at": now_iso(),
            })
            rows = []
            for pos, (item_id, item_b_id, extra) in enumerate(units):
                rows.append({
                    "id": derived_id("unit", sid, item_id, item_b_id or ""), "study_id": sid,
                    "item_id": item_id, "item_b_id": item_b_id, "position": pos,
                    "extra": json.dumps(extra or {}),
                })
            try:
                self.db["study_items"].insert_all(rows, batch_size=500)
            except Exception as exc:  # foreign key or duplicate unit
                raise PrefvalError(f"study '{name}': could not add its items ({exc})") from None
            self._insert_event("study_created", sid, None, {"name": name, "task": task_type,
                                                            "units": len(rows), "seed": seed})
        return self.get_study(name)

    def get_study(self, name: str) -> Study:
        """The study called name. Raises PrefvalError naming the known studies when there is none."""
        rows = list(self.db["studies"].rows_where("name = ?", [name]))
        if not rows:
            known = ", ".join(s.name for s in self.studies()) or "none yet"
            raise PrefvalError(f"no study named '{name}' (known: {known})")
        return _study(rows[0])

    def get_study_by_id(self, study_id: str) -> Study:
        return _study(self.db["studies"].get(study_id))

    def studies(self) -> list[Study]:
        """All studies by creation time."""
        return [_study(r) for r in self.db["studies"].rows_where(order_by="created_at")]

    def units(self, study_id: str) -> list[Unit]:
        """The study's units in study order."""
        return [_unit(r) for r in self.db["study_items"].rows_where("study_id = ?", [study_id],
                                                                     order_by="position")]

    def ensure_annotator(self, name: str, kind: str = "human", model: str | None = None) -> Annotator:
        """The annotator called name, created (committed) if new. kind: "human" or "llm" (an LLM judge)."""
        name = name.strip()
        if not name:
            raise PrefvalError("annotator name must not be empty")
        aid = derived_id("annotator", name)
        row = self.db.execute("SELECT id, name, kind, model FROM annotators WHERE id = ?", [aid]).fetchone()
        if row:
            return Annotator(id=row[0], name=row[1], kind=row[2] or "human", model=row[3])
        with write_transaction(self.db):
            self.db["annotators"].insert({"id": aid, "name": name, "kind": kind, "model": model,
                                          "created_at": now_iso()})
        return Annotator(id=aid, name=name, kind=kind, model=model)

    def annotators(self) -> list[Annotator]:
        return [Annotator(**{k: r[k] for k in ("id", "name", "kind", "model")})
                for r in self.db["annotators"].rows_where(order_by="name")]

    def add_assignments(self, study_id: str, rows: Iterable[tuple[str, str, int, int]]) -> int:
        """Assign units to annotators in one transaction; existing (study, unit, annotator) triples are kept.

        rows: (unit_id, annotator_id, position in that annotator's queue, shuffle_seed). Returns the number added.
        """
        with write_transaction(self.db):
            existing = {r[0] for r in self.db.execute("SELECT id FROM assignments WHERE study_id = ?", [study_id])}
            new_rows = []
            stamp = now_iso()
            for unit_id, annotator_id, position, seed in rows:
                aid = derived_id("assignment", study_id, unit_id, annotator_id)
                if aid in existing:
                    continue
                existing.add(aid)
                new_rows.append({
                    "id": aid, "study_id": study_id, "unit_id": unit_id, "annotator_id": annotator_id,
                    "position": position, "shuffle_seed": seed, "created_at": stamp,
                })
            self.db["assignments"].insert_all(new_rows, batch_size=500)
        added = len(new_rows)
        return added

    def assignments(self, study_id: str, annotator_id: str | None = None) -> list[Assignment]:
        """Assignments of a study (of one annotator, in their queue order, when annotator_id is given)."""
        if annotator_id:
            rows = self.db["assignments"].rows_where("study_id = ? AND annotator_id = ?",
                                                     [study_id, annotator_id], order_by="position")
        else:
            rows = self.db["assignments"].rows_where("study_id = ?", [study_id],
                                                     order_by="annotator_id, position")
        return [Assignment(**{k: r[k] for k in Assignment.model_fields}) for r in rows]

    def assignment_counts(self, study_id: str) -> dict[str, int]:
        """unit_id -> number of annotators assigned to it."""
        return {r[0]: r[1] for r in self.db.execute(
            "SELECT unit_id, COUNT(*) FROM assignments WHERE study_id = ? GROUP BY unit_id", [study_id])}
