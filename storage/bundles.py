"""Offline bundles: one annotator's share of a study in a SQLite file of its own, and its merge back.

A bundle is an ordinary prefval database (same schema, so `prefval annotate --db BUNDLE` works on any machine)
that holds only: the study (settings as the caller passes them, e.g. redacted), the annotator's units, their items
(payloads as the caller passes them: the caller strips answer keys for blind tasks), the contexts those items
refer to, the datasets under the names the caller gives (aliases hide sources), the annotator, their assignments
and their own earlier annotations. Its `meta` table says what it is a bundle of (database id, study id, annotator
id). Every row keeps the id it has in the main database (ids are derived or copied), so merging back is
`INSERT` of the annotation rows the main database does not have yet: idempotent, history included.
"""
from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from storage.db import now_iso, write_transaction
from storage.errors import PrefvalError
from storage.models import Item, Study, Unit

SQLITE_MAGIC = b"SQLite format 3\x00"
_BATCH = 500


@dataclass
class BundleContent:
    """What goes into a bundle, chosen (and redacted) by the caller.

    study: the study with the settings to store (e.g. dataset names replaced by aliases).
    annotator_id: the one annotator the bundle is for.
    units: that annotator's units. items: item id -> Item to store (payload as it should appear in the bundle;
    items a screen needs besides the units' own, such as a persona record's parent, included).
    dataset_names: dataset id -> the name the bundle shows for it.
    """

    study: Study
    annotator_id: str
    units: list[Unit]
    items: dict[str, Item]
    dataset_names: dict[str, str]
    extra_meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class MergeSummary:
    """The outcome of one merge: rows added by status, rows already present, and whose bundle it was."""

    path: str
    study: str
    annotator: str
    added: dict[str, int]
    already_present: int

    @property
    def n_added(self) -> int:
        return sum(self.added.values())

    def line(self) -> str:
        """One line for the terminal, e.g. ``b.db: ana on study s: 5 rows added (4 answered, 1 note), 3 present``."""
        detail = ", ".join(f"{n} {k}" for k, n in sorted(self.added.items()))
        return (f"{self.path}: {self.annotator} on study '{self.study}': {self.n_added} rows added"
                f"{f' ({detail})' if detail else ''}, {self.already_present} already present")


class BundlesMixin:
    db: Any
    path: str

    # ---- the file's identity --------------------------------------------------------------------------
    def database_id(self) -> str:
        """This database's own id (a UUID made when the file was created or first migrated to schema 3)."""
        row = self.db.execute("SELECT value FROM meta WHERE key = 'database_id'").fetchone()
        return row[0]

    def bundle_info(self) -> dict[str, Any] | None:
        """What this file is a bundle of ({"database_id", "study_id", "annotator_id", "created_at", ...}), or None
        when it is not a bundle."""
        row = self.db.execute("SELECT value FROM meta WHERE key = 'bundle'").fetchone()
        return json.loads(row[0]) if row else None

    # ---- writing a bundle -------------------------------------------------------------------------------
    def write_bundle(self, out: "BundlesMixin", content: BundleContent) -> dict[str, int]:
        """Copy `content` from this (main) database into `out`, a freshly created empty prefval database, in one
        transaction of `out`. Also copies the contexts the items refer to, the annotator's assignments and their
        own annotations of the study (every status, so the history continues). Returns row counts by table.

        Raises PrefvalError when `out` already holds a study or items (a bundle is only written into a new file).
        """
        if out.db.execute("SELECT COUNT(*) FROM studies").fetchone()[0] or \
                out.db.execute("SELECT COUNT(*) FROM items").fetchone()[0]:
            raise PrefvalError(f"{out.path}: not an empty database; a bundle is written into a new file")
        study = content.study
        unit_ids = [u.id for u in content.units]
        counts: dict[str, int] = {}
        ann = self.db.execute("SELECT id, name, kind, model, created_at FROM annotators WHERE id = ?",
                              [content.annotator_id]).fetchone()
        if ann is None:
            raise PrefvalError(f"{self.path}: no annotator with id {content.annotator_id}")
        assignments = [dict(r) for r in self.db.query(
            "SELECT * FROM assignments WHERE study_id = ? AND annotator_id = ? AND released_at IS NULL "
            "ORDER BY position",
            [study.id, content.annotator_id])]
        wanted_units = set(unit_ids)
        assignments = [a for a in assignments if a["unit_id"] in wanted_units]
        annotations = [dict(r) for r in self.db.query(
            "SELECT * FROM annotations WHERE study_id = ? AND annotator_id = ? ORDER BY submitted_at, id",
            [study.id, content.annotator_id])]
        annotations = [a for a in annotations if a["unit_id"] in wanted_units]
        context_ids = sorted({it.context_id for it in content.items.values() if it.context_id})
        with write_transaction(out.db):
            ds_rows = [{"id": ds_id, "name": name, "format": "bundle", "source_path": "", "file_hash": "",
                        "imported_at": now_iso(), "derived_from_study": None, "settings": "{}"}
                       for ds_id, name in sorted(content.dataset_names.items())]
            out.db["datasets"].insert_all(ds_rows)
            counts["datasets"] = len(ds_rows)
            n_ctx = n_msg = 0
            for cid in context_ids:
                cols = ("id", "dataset_id", "external_id", "n_messages", "n_chars", "message_sizes")
                row = self.db.execute(f"SELECT {', '.join(cols)} FROM contexts WHERE id = ?", [cid]).fetchone()
                if row is None:
                    continue
                out.db["contexts"].insert(dict(zip(cols, row)))
                n_ctx += 1
                batch: list[dict] = []
                for m in self.db.execute("SELECT context_id, idx, role, content FROM context_messages "
                                         "WHERE context_id = ? ORDER BY idx", [cid]):
                    batch.append({"context_id": m[0], "idx": m[1], "role": m[2], "content": m[3]})
                    if len(batch) >= _BATCH:
                        out.db["context_messages"].insert_all(batch)
                        n_msg += len(batch)
                        batch = []
                out.db["context_messages"].insert_all(batch)
                n_msg += len(batch)
            counts["contexts"], counts["context_messages"] = n_ctx, n_msg
            out.db["items"].insert_all(
                [{"id": it.id, "dataset_id": it.dataset_id, "external_id": it.external_id, "kind": it.kind,
                  "payload": json.dumps(it.payload, ensure_ascii=False), "content_hash": it.content_hash,
                  "context_id": it.context_id, "context_end": it.context_end, "created_at": now_iso()}
                 for it in content.items.values()], batch_size=_BATCH)
            counts["items"] = len(content.items)
            out.db["studies"].insert({"id": study.id, "name": study.name, "task_type": study.task_type,
                                      "settings": json.dumps(study.settings), "seed": study.seed,
                                      "created_at": study.created_at})
            out.db["study_items"].insert_all(
                [{"id": u.id, "study_id": u.study_id, "item_id": u.item_id, "item_b_id": u.item_b_id,
                  "position": u.position, "extra": json.dumps(u.extra)} for u in content.units],
                batch_size=_BATCH)
            counts["study_items"] = len(content.units)
            out.db["annotators"].insert(dict(zip(("id", "name", "kind", "model", "created_at"), ann)))
            out.db["assignments"].insert_all(assignments, batch_size=_BATCH)
            counts["assignments"] = len(assignments)
            out.db["annotations"].insert_all(annotations, batch_size=_BATCH)
            counts["annotations"] = len(annotations)
            info = {"database_id": self.database_id(), "study_id": study.id, "study": study.name,
                    "annotator_id": content.annotator_id, "annotator": ann[1], "created_at": now_iso(),
                    **content.extra_meta}
            out.db["meta"].insert({"key": "bundle", "value": json.dumps(info)})
        return counts

    # ---- merging a bundle back ------------------------------------------------------------------------------
    def merge_bundle(self, bundle_path: str | Path, dry_run: bool = False) -> MergeSummary:
        """Append the annotations of a bundle that this database does not have yet, in one transaction.

        Checks first, writing nothing when any check fails (PrefvalError, one line naming the file):
        the file is a readable, intact SQLite database (quick_check); it is a prefval bundle (meta 'bundle');
        it was cut from THIS database (database id) and its study still exists here with the same id; its
        annotator is assigned in that study here; every row to add names a unit, item and assignment of that
        study that exist here, belongs to the bundle's annotator, and is a row of the study.
        Rows already present (same id) are counted, not changed. Returns a MergeSummary. dry_run: check and
        count only, write nothing.
        """
        path = str(bundle_path)
        bundle = open_bundle_readonly(path)
        try:
            info_row = _safe_fetch(bundle, path, "SELECT value FROM meta WHERE key = 'bundle'")
            if info_row is None:
                raise PrefvalError(f"{path}: not a prefval bundle (no bundle record; make one with "
                                   "`prefval bundle export`)")
            info = json.loads(info_row[0])
            if info.get("database_id") != self.database_id():
                raise PrefvalError(f"{path}: this bundle was made from another database, not {self.path}")
            study_row = self.db.execute("SELECT id, name FROM studies WHERE id = ?", [info["study_id"]]).fetchone()
            if study_row is None:
                raise PrefvalError(f"{path}: its study '{info.get('study')}' does not exist in {self.path}")
            study_id, annotator_id = info["study_id"], info["annotator_id"]
            if not self.db.execute("SELECT 1 FROM assignments WHERE study_id = ? AND annotator_id = ? LIMIT 1",
                                   [study_id, annotator_id]).fetchone():
                raise PrefvalError(f"{path}: annotator '{info.get('annotator')}' is not assigned in study "
                                   f"'{study_row[1]}' of {self.path}")
            cols = [r[1] for r in bundle.execute("PRAGMA table_info(annotations)")]
            rows = [dict(zip(cols, r)) for r in _safe_all(bundle, path, "SELECT * FROM annotations "
                                                                        "ORDER BY submitted_at, id")]
        finally:
            bundle.close()
        main_cols = [r[1] for r in self.db.execute("PRAGMA table_info(annotations)")]
        assignments = {r[0]: (r[1], r[2]) for r in self.db.execute(
            "SELECT id, unit_id, annotator_id FROM assignments WHERE study_id = ?", [study_id])}
        units = {r[0]: (r[1], r[2]) for r in self.db.execute(
            "SELECT id, item_id, item_b_id FROM study_items WHERE study_id = ?", [study_id])}
        present = {r[0] for r in self.db.execute(
            "SELECT id FROM annotations WHERE study_id = ? AND annotator_id = ?", [study_id, annotator_id])}
        new_rows, already = [], 0
        for i, row in enumerate(rows, 1):
            where = f"{path}: annotation {row.get('id')}"
            if row.get("study_id") != study_id or row.get("annotator_id") != annotator_id:
                raise PrefvalError(f"{where}: field 'annotator_id': not the bundle's annotator and study")
            if row["unit_id"] not in units:
                raise PrefvalError(f"{where}: field 'unit_id': no such unit in study '{study_row[1]}'")
            if row.get("item_id") and row["item_id"] not in units[row["unit_id"]]:
                raise PrefvalError(f"{where}: field 'item_id': not an item of its unit")
            if row.get("assignment_id") and assignments.get(row["assignment_id"]) != (row["unit_id"],
                                                                                      annotator_id):
                raise PrefvalError(f"{where}: field 'assignment_id': the annotator is not assigned this unit "
                                   f"in {self.path}")
            if row["id"] in present:
                already += 1
                continue
            present.add(row["id"])
            new_rows.append({k: row.get(k) for k in main_cols})
        added: dict[str, int] = {}
        for r in new_rows:
            added[r["status"]] = added.get(r["status"], 0) + 1
        if new_rows and not dry_run:
            try:
                with write_transaction(self.db):
                    self.db["annotations"].insert_all(new_rows, batch_size=_BATCH)
                    self._insert_event("bundle_merged", study_id, annotator_id,
                                       {"path": os.path.basename(path), "added": len(new_rows),
                                        "already_present": already})
            except sqlite3.IntegrityError as exc:
                raise PrefvalError(f"{path}: could not merge ({exc}); {self.path} is unchanged") from None
        return MergeSummary(path=path, study=study_row[1], annotator=info.get("annotator", annotator_id),
                            added=added, already_present=already)


def is_bundle_file(path: str | Path) -> bool:
    """Whether path is an intact prefval bundle (its meta table names what it is a bundle of). Never raises."""
    try:
        conn = open_bundle_readonly(str(path))
    except PrefvalError:
        return False
    try:
        return conn.execute("SELECT 1 FROM meta WHERE key = 'bundle'").fetchone() is not None
    except sqlite3.DatabaseError:
        return False
    finally:
        conn.close()


def open_bundle_readonly(path: str) -> sqlite3.Connection:
    """A read-only connection to a bundle file after checking it is an intact SQLite file.

    Raises PrefvalError (one line) for a missing file, a file that is not SQLite, or one that is truncated or
    corrupt (PRAGMA quick_check).
    """
    p = Path(path)
    if not p.is_file():
        raise PrefvalError(f"{path}: no such bundle file")
    with open(p, "rb") as fh:
        head = fh.read(len(SQLITE_MAGIC))
    if head != SQLITE_MAGIC:
        raise PrefvalError(f"{path}: not a prefval bundle (not an SQLite file)")
    try:
        conn = sqlite3.connect(f"file:{p.resolve()}?mode=ro", uri=True)
        result = conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as exc:
        raise PrefvalError(f"{path}: damaged or truncated bundle ({exc})") from None
    if result != [("ok",)]:
        conn.close()
        raise PrefvalError(f"{path}: damaged or truncated bundle (integrity check: {result[0][0]})")
    return conn


def _safe_fetch(conn: sqlite3.Connection, path: str, sql: str):
    try:
        return conn.execute(sql).fetchone()
    except sqlite3.DatabaseError as exc:
        raise PrefvalError(f"{path}: not a prefval bundle ({exc})") from None


def _safe_all(conn: sqlite3.Connection, path: str, sql: str):
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.DatabaseError as exc:
        raise PrefvalError(f"{path}: not a prefval bundle ({exc})") from None


