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

import contextlib
import datetime as _dt
import json
import math
import os
import shutil
import sqlite3
import tempfile
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, get_args

from storage.db import now_iso, write_transaction
from storage.errors import PrefvalError
from storage.models import PEOPLE_IDS_SQL, Item, Status, Study, Unit, content_hash, new_id
from storage.textfile import regular_file
from storage.studies import refuse_archived, unit_quota

SQLITE_MAGIC = b"SQLite format 3\x00"
_BATCH = 500
#: the statuses an annotator's own screen writes (models.Status); anything else in a bundle is refused
ANNOTATOR_STATUSES = frozenset(get_args(Status))
#: how far (seconds) a row's submitted_at may lie in the future of the merging machine's clock (clock skew
#: between an annotator's laptop and the main machine)
CLOCK_SKEW_SECONDS = 300.0
#: how many refused items a merge's line names (the rest counted)
REFUSED_SHOWN = 10

#: answer_check(study_id, unit_id, status, answer) -> None when the answer is one the study's task can produce on
#: that unit, else a phrase saying what is wrong (naming the answer's field). Given by the layer that knows the
#: task types (annotator.bundles); storage checks everything else about a row.
AnswerCheck = Callable[[str, str, str, dict[str, Any]], "str | None"]


@dataclass
class BundleContent:
    """What goes into a bundle, chosen (and redacted) by the caller.

    study: the study with the settings to store (e.g. dataset names replaced by aliases).
    annotator_id: the one annotator the bundle is for.
    units: that annotator's units. items: item id -> Item to store (payload as it should appear in the bundle;
    items a screen needs besides the units' own, such as a persona record's parent, included).
    dataset_names: dataset id -> the name the bundle shows for it.
    bundle_id: this bundle's own id (its meta record and the main database's bundle_exports row name it).
    """

    study: Study
    annotator_id: str
    units: list[Unit]
    items: dict[str, Item]
    dataset_names: dict[str, str]
    extra_meta: dict[str, Any] = field(default_factory=dict)
    bundle_id: str = field(default_factory=new_id)


@dataclass
class MergeSummary:
    """The outcome of one merge: rows added by status, rows already present, and whose bundle it was."""

    path: str
    study: str
    annotator: str
    added: dict[str, int]
    already_present: int
    chained: int = 0  # new decision rows whose supersedes was set to an answer given elsewhere (_chain)
    #: rows not merged because their item is no longer the annotator's here (released by `study release|unassign|
    #: rename-annotator` since the bundle was cut), by status
    refused: dict[str, int] = field(default_factory=dict)
    #: how many items those rows are on, and the first REFUSED_SHOWN of them by external id (a pair's two ids joined
    #: by " / "), in study order
    refused_units: int = 0
    refused_items: list[str] = field(default_factory=list)

    @property
    def n_added(self) -> int:
        return sum(self.added.values())

    @property
    def n_refused(self) -> int:
        return sum(self.refused.values())

    def line(self) -> str:
        """One line for the terminal, e.g. ``b.db: ana on study s: 5 rows added (4 answered, 1 note), 3 present``,
        and when rows were refused ``; 3 rows NOT merged (2 answered, 1 note) on 2 items 'ana' no longer holds
        (released since the bundle was cut): p4, p7``."""
        detail = ", ".join(f"{n} {k}" for k, n in sorted(self.added.items()))
        refused = ""
        if self.refused:
            kinds = ", ".join(f"{n} {k}" for k, n in sorted(self.refused.items()))
            shown = self.refused_items[:REFUSED_SHOWN]
            more = f" and {self.refused_units - len(shown)} more" if self.refused_units > len(shown) else ""
            refused = (f"; {self.n_refused} rows NOT merged ({kinds}) on {self.refused_units} item(s) "
                       f"'{self.annotator}' no longer holds (released since the bundle was cut): "
                       f"{', '.join(shown)}{more}")
        return (f"{self.path}: {self.annotator} on study '{self.study}': {self.n_added} rows added"
                f"{f' ({detail})' if detail else ''}, {self.already_present} already present"
                f"{f'; {self.chained} chained after answers given elsewhere' if self.chained else ''}{refused}")


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
            # content_hash of the payload as the bundle stores it: the main file's hash covers the fields left
            # out, so from it and the fields shown a hidden answer key could be found by trying each option
            stamp = now_iso()
            out.db["items"].insert_all(
                [{"id": it.id, "dataset_id": it.dataset_id, "external_id": it.external_id, "kind": it.kind,
                  "payload": json.dumps(it.payload, ensure_ascii=False),
                  "content_hash": content_hash([it.kind, it.payload, it.context_id, it.context_end]),
                  "context_id": it.context_id, "context_end": it.context_end, "created_at": stamp}
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
            info = {"database_id": self.database_id(), "bundle_id": content.bundle_id, "study_id": study.id,
                    "study": study.name, "study_created_at": study.created_at,
                    "annotator_id": content.annotator_id, "annotator": ann[1], "created_at": now_iso(),
                    **content.extra_meta}
            out.db["meta"].insert({"key": "bundle", "value": json.dumps(info)})
        return counts

    # ---- the log of bundles cut and merged back ---------------------------------------------------------------
    def record_bundle_export(self, bundle_id: str, study: Study, annotator_id: str, file_name: str,
                             n_items: int) -> None:
        """Append the row saying that a bundle of `n_items` units of `study` for one annotator was written to
        `file_name` (as the user named it) now. Append-only (bundle_exports)."""
        with write_transaction(self.db):
            self.db["bundle_exports"].insert({"id": bundle_id, "study_id": study.id, "study_name": study.name,
                                              "annotator_id": annotator_id, "exported_at": now_iso(),
                                              "file_name": file_name, "n_items": n_items})

    def bundles_out(self, study_id: str, annotator_id: str | None = None) -> list[dict[str, Any]]:
        """The bundles of a study (of one annotator, when given) that were exported and not merged back since:
        bundle_exports rows with no bundle_merges row of the same bundle id. Oldest first, each
        {"bundle_id", "annotator", "annotator_id", "file_name", "exported_at" (ISO, UTC), "n_items"}."""
        where, params = "e.study_id = ?", [study_id]
        if annotator_id is not None:
            where, params = where + " AND e.annotator_id = ?", params + [annotator_id]
        return [{"bundle_id": r[0], "annotator_id": r[1], "annotator": r[2] or r[1], "file_name": r[3],
                 "exported_at": r[4], "n_items": r[5]}
                for r in self.db.execute(
                    "SELECT e.id, e.annotator_id, n.name, e.file_name, e.exported_at, e.n_items FROM bundle_exports e "
                    "LEFT JOIN annotators n ON n.id = e.annotator_id "
                    f"WHERE {where} AND NOT EXISTS (SELECT 1 FROM bundle_merges m WHERE m.bundle_id = e.id) "
                    "ORDER BY e.exported_at, e.id", params)]

    # ---- merging a bundle back ------------------------------------------------------------------------------
    def merge_bundle(self, bundle_path: str | Path, dry_run: bool = False,
                     answer_check: AnswerCheck | None = None) -> MergeSummary:
        """Append the annotations of a bundle that this database does not have yet, in one transaction.

        Checks first, writing nothing when any check fails (PrefvalError, one line naming the file):
        the file is a readable, intact SQLite database (quick_check); it is a prefval bundle (meta 'bundle');
        it was cut from THIS database (database id) and from this instance of its study (study id: a study deleted
        and created again under the same name is another instance); its annotator is assigned in that study here;
        every row names a unit, item and assignment of that study that exist here and belongs to the
        bundle's annotator; every row to add is on a unit the annotator was assigned here; and no answer to add
        makes an item's human annotators (those who answered it or hold it, LLM judges not counted) more than its
        quota (storage.studies.unit_quota).
        A row on a unit whose assignment was released since the bundle was cut (`study release|unassign|
        rename-annotator`) is not written, as the annotation screen writes nothing on a released assignment: the
        other rows are merged, and the summary counts the refused rows by status and names their items
        (MergeSummary.refused, refused_items); the bundle_merged event lists their units. Such rows stay in the
        bundle: merging it again once the items are the annotator's again adds them.
        Every row to add is valid (_row_problem): a status an annotator's screen writes, an answer that is JSON
        (an object on answered/partial rows, none on the others) and, through `answer_check` (the caller's, which
        knows the task type), one the study's task can produce on that unit; submitted_at an ISO 8601 time not
        before the bundle was exported nor more than CLOCK_SKEW_SECONDS ahead of this clock; seconds finite and
        >= 0; supersedes empty or a row of the same annotator on the same unit, here or in the bundle.
        Rows already present (same id) are counted, not added, and must be identical to the row here (a merged
        row never changes: one edited in the bundle since is refused as a conflict; only a supersedes that the
        merge set, see below, may differ). New decision rows are chained by time with the annotator's decision rows
        on the same unit here (_chain: two bundles of one annotator, or a bundle and a session on the main file):
        each one's supersedes is set to the decision row just before it, as Store.add_annotation's
        supersede_latest sets it for two windows; the links the merge changed are kept in its bundle_merged event
        ("relinked": row id -> the bundle's value). The bundle is read
        without creating any file beside it (bundle_connection). Unless dry_run, the merge is logged
        (bundle_merges) when it adds rows or is the bundle's first (so that it no longer counts as out, even
        with nothing new): merging the same bundle again changes nothing.
        Returns a MergeSummary. dry_run: check and count only, write nothing.
        """
        path = str(bundle_path)
        info, rows = _read_bundle(path)
        if info.get("database_id") != self.database_id():
            raise PrefvalError(f"{path}: this bundle was made from another database, not {self.path}")
        study_row = self.db.execute("SELECT id, name, settings FROM studies WHERE id = ?",
                                    [info["study_id"]]).fetchone()
        if study_row is None:
            same_name = self.db.execute("SELECT created_at FROM studies WHERE name = ?",
                                        [info.get("study")]).fetchone()
            if same_name is not None:
                made = info.get("study_created_at")
                raise PrefvalError(
                    f"{path}: belongs to another instance of study '{info.get('study')}' (that study was deleted "
                    f"and a new one of the same name created {same_name[0][:16].replace('T', ' ')} UTC"
                    f"{'; the bundle is of the one created ' + made[:16].replace('T', ' ') + ' UTC' if made else ''})"
                    f"; nothing merged into {self.path}")
            raise PrefvalError(f"{path}: its study '{info.get('study')}' does not exist in {self.path}")
        study_id, annotator_id = info["study_id"], info["annotator_id"]
        study_name, settings = study_row[1], json.loads(study_row[2] or "{}")
        refuse_archived(study_name, settings, "merged into", where=f"{path}: ")
        who = info.get("annotator", annotator_id)
        held = {r[0]: r[1] for r in self.db.execute(
            "SELECT unit_id, released_at FROM assignments WHERE study_id = ? AND annotator_id = ?",
            [study_id, annotator_id])}
        if not held:
            raise PrefvalError(f"{path}: annotator '{who}' is not assigned in study '{study_name}' of {self.path}")
        main_cols = [r[1] for r in self.db.execute("PRAGMA table_info(annotations)")]
        assignments = {r[0]: (r[1], r[2]) for r in self.db.execute(
            "SELECT id, unit_id, annotator_id FROM assignments WHERE study_id = ?", [study_id])}
        units = {r[0]: (r[1], r[2], r[3]) for r in self.db.execute(
            "SELECT id, item_id, item_b_id, extra FROM study_items WHERE study_id = ?", [study_id])}
        merged = {r["id"]: r for r in self.db.query(
            "SELECT * FROM annotations WHERE study_id = ? AND annotator_id = ?", [study_id, annotator_id])}
        relinked_before: dict[str, str | None] = {}  # rows whose supersedes an earlier merge set: id -> the bundle's
        for (payload,) in self.db.execute("SELECT payload FROM events WHERE kind = 'bundle_merged' AND study_id = ? "
                                          "AND annotator_id = ?", [study_id, annotator_id]):
            relinked_before.update(json.loads(payload or "{}").get("relinked") or {})
        present: set[str] = set(merged)
        known = {i: r["unit_id"] for i, r in merged.items()}  # rows a new row may supersede: id -> unit
        known.update({r.get("id"): r.get("unit_id") for r in rows})
        # the export's time as this database recorded it (a bundle's own meta record can be edited), else the bundle's
        recorded = self.db.execute("SELECT exported_at FROM bundle_exports WHERE id = ?",
                                   [info.get("bundle_id")]).fetchone()
        exported_at = _parse_time(recorded[0] if recorded else info.get("created_at"))
        now = _dt.datetime.now(_dt.timezone.utc)
        new_rows, already = [], 0
        for row in rows:
            where = f"{path}: annotation {row.get('id')}"
            if row.get("study_id") != study_id or row.get("annotator_id") != annotator_id:
                raise PrefvalError(f"{where}: field 'annotator_id': not the bundle's annotator and study")
            if row["unit_id"] not in units:
                raise PrefvalError(f"{where}: field 'unit_id': no such unit in study '{study_name}'")
            new = row.get("id") not in merged  # a new row names its item and assignment (as every screen does)
            if (new or row.get("item_id")) and row.get("item_id") not in [i for i in units[row["unit_id"]][:2] if i]:
                raise PrefvalError(f"{where}: field 'item_id': not an item of its unit")
            if (new or row.get("assignment_id")) and \
                    assignments.get(row.get("assignment_id")) != (row["unit_id"], annotator_id):
                raise PrefvalError(f"{where}: field 'assignment_id': the annotator is not assigned this unit "
                                   f"in {self.path}")
            if row["id"] in merged:
                changed = [k for k in main_cols if k in row and row[k] != merged[row["id"]][k]
                           and not (k == "supersedes" and relinked_before.get(row["id"], "-") == row[k])]
                if changed:
                    raise PrefvalError(f"{where}: field '{changed[0]}': conflict: this row was merged before and "
                                       "has been changed in the bundle since (a merged row never changes); "
                                       f"nothing merged into {self.path}")
                already += 1
                continue
            if row["id"] in present:
                continue
            present.add(row["id"])
            problem = _row_problem(row, exported_at, now, known)
            if problem is None and answer_check is not None and row["status"] in ("answered", "partial"):
                got = answer_check(study_id, row["unit_id"], row["status"], json.loads(row["answer"]))
                problem = ("answer", got) if got else None
            if problem is not None:
                raise PrefvalError(f"{where}: field '{problem[0]}': {problem[1]}; nothing merged into {self.path}")
            new_rows.append({k: row.get(k) for k in main_cols})
        new_rows, refused = self._check_still_held(path, who, study_id, study_name, annotator_id, settings, units,
                                                   held, new_rows)
        relinked = _chain(merged, new_rows)
        refused_by_status: dict[str, int] = {}
        for r in refused:
            refused_by_status[r["status"]] = refused_by_status.get(r["status"], 0) + 1
        order = {r[0]: r[1] for r in self.db.execute("SELECT id, position FROM study_items WHERE study_id = ?",
                                                     [study_id])} if refused else {}
        refused_units = sorted({r["unit_id"] for r in refused}, key=lambda u: (order.get(u, 0), u))
        added: dict[str, int] = {}
        for r in new_rows:
            added[r["status"]] = added.get(r["status"], 0) + 1
        bundle_id = info.get("bundle_id")
        first_merge = bundle_id is not None and self.db.execute(
            "SELECT 1 FROM bundle_merges WHERE bundle_id = ?", [bundle_id]).fetchone() is None
        if not dry_run and (new_rows or first_merge):
            try:
                with write_transaction(self.db):
                    self.db["annotations"].insert_all(new_rows, batch_size=_BATCH)
                    self.db["bundle_merges"].insert({"id": new_id(), "bundle_id": bundle_id,
                                                     "study_id": study_id, "annotator_id": annotator_id,
                                                     "merged_at": now_iso(), "file_name": path,
                                                     "added": len(new_rows)})
                    if new_rows:
                        self._insert_event("bundle_merged", study_id, annotator_id,
                                           {"path": os.path.basename(path), "added": len(new_rows),
                                            "already_present": already,
                                            **({"relinked": relinked} if relinked else {}),
                                            **({"refused_units": refused_units} if refused else {})})
            except sqlite3.IntegrityError as exc:
                raise PrefvalError(f"{path}: could not merge ({exc}); {self.path} is unchanged") from None
        return MergeSummary(path=path, study=study_name, annotator=who, added=added, already_present=already,
                            chained=len(relinked), refused=refused_by_status, refused_units=len(refused_units),
                            refused_items=[self._item_name(units, u) for u in refused_units[:REFUSED_SHOWN]])

    def _item_name(self, units: dict[str, tuple], unit_id: str) -> str:
        """A unit's item by external id (a pair's two joined by " / ")."""
        ids = [i for i in units[unit_id][:2] if i]
        ext = dict(self.db.execute(f"SELECT id, external_id FROM items WHERE id IN ({','.join('?' * len(ids))})",
                                   ids).fetchall())
        return " / ".join(str(ext.get(i, i)) for i in ids)

    def _check_still_held(self, path: str, who: str, study_id: str, study_name: str, annotator_id: str,
                          settings: dict[str, Any], units: dict[str, tuple], held: dict[str, str | None],
                          new_rows: list[dict]) -> tuple[list[dict], list[dict]]:
        """Split the new rows into (rows to add, rows refused): a row on a unit whose assignment to the annotator
        was released here since (`study release|unassign|rename-annotator`) is refused, as the annotation screen
        refuses a write on a released assignment (storage.errors.AssignmentReleased): not written, and counted by
        the caller. Raises PrefvalError (naming the file, the annotator and the first item; nothing merged) for a
        row on a unit the annotator was never assigned (no screen could have written it), and for a new answer that
        would put a unit over its quota of human annotators."""
        keep, refused = [], []
        for r in new_rows:
            if r["unit_id"] not in held:
                raise PrefvalError(f"{path}: annotator '{who}' was never assigned item "
                                   f"'{self._item_name(units, r['unit_id'])}' of study '{study_name}' in {self.path}, "
                                   f"and the bundle has {_a(r['status'])} row on it; nothing merged")
            (keep if held[r["unit_id"]] is None else refused).append(r)
        new_rows = keep
        answering = sorted({r["unit_id"] for r in new_rows if r["status"] == "answered"})
        if not answering:
            return new_rows, refused
        answered_before = {r[0] for r in self.db.execute(
            "SELECT DISTINCT unit_id FROM annotations WHERE study_id = ? AND annotator_id = ? AND status = 'answered'",
            [study_id, annotator_id])}
        for unit_id in answering:
            if unit_id in answered_before:  # already counted as one of the item's annotators
                continue
            others = self.db.execute(
                f"SELECT COUNT(*) FROM annotators n WHERE n.id != ?1 AND n.id IN {PEOPLE_IDS_SQL} AND ("
                "EXISTS (SELECT 1 FROM annotations a WHERE a.study_id = ?2 AND a.unit_id = ?3 "
                "AND a.annotator_id = n.id AND a.status = 'answered') OR "
                "EXISTS (SELECT 1 FROM assignments s WHERE s.study_id = ?2 AND s.unit_id = ?3 "
                "AND s.annotator_id = n.id AND s.released_at IS NULL))",
                [annotator_id, study_id, unit_id]).fetchone()[0]
            extra = units[unit_id][2]
            quota = unit_quota(settings, json.loads(extra) if extra else {})
            if others + 1 > quota:
                raise PrefvalError(f"{path}: item '{self._item_name(units, unit_id)}' of study '{study_name}' "
                                   f"already has {others} other annotator(s) and a quota of {quota}; the answer of '{who}' would exceed "
                                   f"it; nothing merged into {self.path}")
        return new_rows, refused


def is_bundle_file(path: str | Path) -> bool:
    """Whether path is an intact prefval bundle (its meta table names what it is a bundle of). Never raises;
    creates no file."""
    try:
        with bundle_connection(str(path)) as conn:
            return conn.execute("SELECT 1 FROM meta WHERE key = 'bundle'").fetchone() is not None
    except (PrefvalError, sqlite3.DatabaseError):
        return False


@contextlib.contextmanager
def bundle_connection(path: str) -> Iterator[sqlite3.Connection]:
    """A read-only view of a bundle file, checked to be an intact SQLite file, that creates no file beside it.

    A bundle is read where it lies with SQLite's immutable=1 (no -wal or -shm is created, no lock taken) when
    nothing beside it holds changes. A bundle whose last changes are still in its -wal (a session killed, or
    still open) or that has a hot -journal is copied with that file into a private temporary folder, and the copy
    is opened normally, so the changes count and nothing beside the bundle is created or altered; the copy is
    removed on leaving. Raises PrefvalError (one line) for a missing file, a file that is not SQLite, or one
    that is truncated or corrupt (PRAGMA quick_check).
    """
    p = regular_file(path, "bundle file")
    with open(p, "rb") as fh:
        head = fh.read(len(SQLITE_MAGIC))
    if head != SQLITE_MAGIC:
        raise PrefvalError(f"{path}: not a prefval bundle (not an SQLite file)")
    sides = [side for side in ("-wal", "-journal")
             if os.path.isfile(f"{p}{side}") and os.path.getsize(f"{p}{side}") > 0]
    private = tempfile.mkdtemp(prefix="prefval-bundle-") if sides else None
    conn = None
    try:
        if private:
            copy = Path(private) / "bundle.db"
            shutil.copyfile(p, copy)
            for side in sides:
                shutil.copyfile(f"{p}{side}", f"{copy}{side}")
            uri = f"file:{urllib.parse.quote(str(copy))}?mode=rw"
        else:
            uri = f"file:{urllib.parse.quote(str(p.resolve()))}?mode=ro&immutable=1"
        try:
            conn = sqlite3.connect(uri, uri=True)
            result = conn.execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError as exc:
            raise PrefvalError(f"{path}: damaged or truncated bundle ({exc})") from None
        if result != [("ok",)]:
            raise PrefvalError(f"{path}: damaged or truncated bundle (integrity check: {result[0][0]})")
        yield conn
    finally:
        if conn is not None:
            conn.close()
        if private:
            shutil.rmtree(private, ignore_errors=True)


def _read_bundle(path: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The bundle record (meta 'bundle') and every annotation row of a bundle file, oldest first, read through
    bundle_connection. Raises PrefvalError (one line naming the file) when it is not an intact prefval bundle."""
    with bundle_connection(path) as bundle:
        try:
            info_row = bundle.execute("SELECT value FROM meta WHERE key = 'bundle'").fetchone()
            if info_row is None:
                raise PrefvalError(f"{path}: not a prefval bundle (no bundle record; make one with "
                                   "`prefval bundle export`)")
            cols = [r[1] for r in bundle.execute("PRAGMA table_info(annotations)")]
            rows = [dict(zip(cols, r)) for r in bundle.execute("SELECT * FROM annotations ORDER BY submitted_at, id")]
        except sqlite3.DatabaseError as exc:
            raise PrefvalError(f"{path}: not a prefval bundle ({exc})") from None
    return json.loads(info_row[0]), rows


def _a(word: str) -> str:
    """word with its indefinite article: "an answered", "a skipped"."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def _parse_time(value: Any) -> _dt.datetime | None:
    """An ISO 8601 timestamp as an aware datetime (one without a zone read as UTC), or None when value is not one."""
    if not isinstance(value, str) or not value:
        return None
    try:
        t = _dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=_dt.timezone.utc)


def _row_problem(row: dict[str, Any], exported_at: _dt.datetime | None, now: _dt.datetime,
                 known: dict[str, str]) -> tuple[str, str] | None:
    """(field, what is wrong) for the first field of a bundle's annotation row that no annotator's screen could
    have written, else None. Checks everything but the answer's task-specific format (merge_bundle's
    answer_check): status among ANNOTATOR_STATUSES; source "human"; answer JSON text of an object on answered and
    partial rows and absent on the others; note text or absent; submitted_at an ISO 8601 time not before
    exported_at (the bundle's export) and at most CLOCK_SKEW_SECONDS after `now`; started_at absent or such a time
    (not checked against the export: a session may span it); seconds absent or a finite number >= 0; supersedes
    absent or the id of another row (known: row id -> unit id, the annotator's rows here and in the bundle) on
    the same unit."""
    status = row.get("status")
    if status not in ANNOTATOR_STATUSES:
        return "status", f"{status!r} is not a status an annotator's screen writes " \
                         f"({', '.join(sorted(ANNOTATOR_STATUSES))})"
    if row.get("source") not in (None, "human"):
        return "source", f"{row.get('source')!r}: a bundle holds a human annotator's rows only"
    text, answer = row.get("answer"), None
    if text is not None:
        try:
            answer = json.loads(text) if isinstance(text, str) else text
        except ValueError:
            return "answer", f"{text[:40]!r} is not JSON"
    if status in ("answered", "partial"):
        if not isinstance(answer, dict):
            return "answer", f"{_a(status)} row needs an answer object, not {text!r:.40}"
    elif answer is not None:
        return "answer", f"{_a(status)} row carries no answer"
    if row.get("note") is not None and not isinstance(row["note"], str):
        return "note", "not text"
    latest = now + _dt.timedelta(seconds=CLOCK_SKEW_SECONDS)
    for col in ("submitted_at", "started_at"):
        value = row.get(col)
        if value is None and col == "started_at":
            continue
        t = _parse_time(value)
        if t is None:
            return col, f"{value!r:.40} is not an ISO 8601 timestamp"
        if t > latest:
            return col, f"{value} is in the future (this machine's clock says {now.isoformat(timespec='seconds')})"
        if col == "submitted_at" and exported_at is not None and t < exported_at:
            return col, f"{value} is before the bundle was exported ({exported_at.isoformat(timespec='seconds')})"
    secs = row.get("seconds")
    if secs is not None and (isinstance(secs, bool) or not isinstance(secs, (int, float)) or not math.isfinite(secs)
                             or secs < 0):
        return "seconds", f"{secs!r} is not a finite number of seconds >= 0"
    sup = row.get("supersedes")
    if sup not in (None, ""):
        if sup == row.get("id") or known.get(sup) != row.get("unit_id"):
            return "supersedes", f"{sup!r} is no other row of this annotator on this unit, here or in the bundle"
    return None


_DECISIONS = ("answered", "skipped", "partial")
_EARLIEST = _dt.datetime.min.replace(tzinfo=_dt.timezone.utc)


def _chain(merged: dict[str, dict], new_rows: list[dict]) -> dict[str, str | None]:
    """Chain the new decision rows (answered, skipped, partial) with the annotator's decision rows already here,
    in time order (submitted_at, then id), per unit: a new row's supersedes becomes the decision row just before
    it, or None when it is the unit's first; as Store.add_annotation(supersede_latest=True) links a decision
    to the latest one when two windows answer one item. Rows already here are never changed (append-only).
    merged: id -> row of the annotator's rows here; new_rows: the rows to add (changed in place).
    Returns {new row id: the supersedes it had in the bundle} for the rows whose link changed."""
    new_ids = {r["id"] for r in new_rows if r["status"] in _DECISIONS}
    by_unit: dict[str, list[dict]] = {}
    for r in [*merged.values(), *new_rows]:
        if r["status"] in _DECISIONS:
            by_unit.setdefault(r["unit_id"], []).append(r)
    relinked: dict[str, str | None] = {}
    for rows in by_unit.values():
        if not any(r["id"] in new_ids for r in rows):
            continue
        rows.sort(key=lambda r: (_parse_time(r["submitted_at"]) or _EARLIEST, r["id"]))
        for k, r in enumerate(rows):
            before = rows[k - 1]["id"] if k else None
            if r["id"] in new_ids and (r["supersedes"] or None) != before:
                relinked[r["id"]] = r["supersedes"]
                r["supersedes"] = before
    return relinked
