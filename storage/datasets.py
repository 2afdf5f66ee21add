"""Datasets, items and conversation contexts."""
from __future__ import annotations

import hashlib
import json
from typing import Iterable

from storage.db import BATCH_ROWS, message_sizes_json, now_iso, write_transaction
from storage.errors import PrefvalError
from storage.visible_text import name_problem
from storage.models import (
    ContextIn, Dataset, ImportResult, Item, ItemIn, ItemSource, Message, canonical_json, derived_id,
)


#: every field of an Item: the one `model_fields_set` that Store.get_items gives all its items (pydantic adds a
#: field name to it when the field is assigned, which changes nothing here as every name is in it)
ITEM_FIELDS = set(Item.model_fields)


def _item_from_row(row: dict, dataset_name: str = "") -> Item:
    return Item(
        id=row["id"], dataset_id=row["dataset_id"], dataset_name=dataset_name,
        external_id=row["external_id"], kind=row["kind"], payload=json.loads(row["payload"]),
        content_hash=row["content_hash"], context_id=row["context_id"], context_end=row["context_end"],
    )


class DatasetsMixin:
    db: object

    def import_items(self, dataset: str, fmt: str, items: Iterable[ItemIn], *, source_path: str = "",
                     file_hash: str = "", contexts: Iterable[ContextIn] = (),
                     derived_from_study: str | None = None, settings: dict | None = None,
                     sources: dict[str, str] | None = None) -> ImportResult:
        """Add items (and contexts) to dataset `dataset`, creating it.

        Everything is checked before anything is written: an item whose external id is already in the dataset
        with the same content is counted as unchanged (re-importing a file never duplicates); with different
        content it is an error. Items that name a context not given and not already stored are stored without one
        (Item.context_missing; their external ids in ImportResult.without_context); an unchanged item stored so
        gets its context when a later import gives it (ImportResult.n_context_linked). Then the rows are written
        in batches of BATCH_ROWS items (contexts by message count), each its own transaction, so that people
        annotating beside a big import never wait long for the write lock; the import is recorded (table
        imports) after its last batch. An import cut short (killed) leaves
        whole batches, and running it again adds the rest. Inside a caller's transaction it is all one
        transaction. Raises PrefvalError (nothing written) on a conflict or a dataset of another format.

        sources: the original texts the items' `source` pointers name (Parsed.sources: sha256 hex -> text), kept
        once each in table sources for `prefval release`. An unchanged item imported before sources were kept
        gets its pointer now (the content hash leaves the pointer out).
        """
        items = list(items)
        contexts = list(contexts)
        ds_id = derived_id("dataset", dataset)
        added = unchanged = 0
        stamp = now_iso()
        # ---- check and build every row first (reads only: no write lock is held meanwhile)
        existing = self.db.execute("SELECT format FROM datasets WHERE id = ?", [ds_id]).fetchone()
        if existing and existing[0] != fmt:
            raise PrefvalError(f"dataset '{dataset}' exists with format '{existing[0]}', not '{fmt}'")
        if not existing and name_problem(dataset, "dataset"):  # a new name is plain text, as study and annotator names
            raise PrefvalError(name_problem(dataset, "dataset"))
        known_ctx = {r[0] for r in self.db.execute("SELECT id FROM contexts WHERE dataset_id = ?", [ds_id])}
        # original records (migration 11) are touched only when the importer gives them
        with_sources = any(c.source for c in contexts) or any(it.source for it in items)
        ctx_without_source = {r[0] for r in self.db.execute(
            "SELECT id FROM contexts WHERE dataset_id = ? AND source IS NULL", [ds_id])} \
            if known_ctx and with_sources else set()
        ctx_backfill: list[tuple[str, str]] = []
        ctx_ids: dict[str, str] = {}
        new_contexts: list[tuple[dict, list[dict]]] = []
        # message sizes (migration 12) written when the file has the column (a database of an older schema, as the
        # migration tests build them, gets them from the migration)
        with_sizes = bool(contexts) and "message_sizes" in self.db["contexts"].columns_dict
        for ctx in contexts:
            cid = derived_id("context", dataset, ctx.external_id)
            ctx_ids[ctx.external_id] = cid
            ctx_source = json.dumps(ctx.source, ensure_ascii=False, sort_keys=True) if ctx.source else None
            if cid in known_ctx:  # stored already, or given twice
                if ctx_source and cid in ctx_without_source:
                    ctx_backfill.append((ctx_source, cid))
                    ctx_without_source.discard(cid)
                continue
            known_ctx.add(cid)
            new_contexts.append((
                {"id": cid, "dataset_id": ds_id, "external_id": ctx.external_id, "n_messages": len(ctx.messages),
                 "n_chars": sum(len(m.content) for m in ctx.messages),
                 **({"source": ctx_source} if with_sources else {}),
                 **({"message_sizes": message_sizes_json([(m.role, len(m.content)) for m in ctx.messages])}
                    if with_sizes else {})},
                [{"context_id": cid, "idx": i, "role": m.role, "content": m.content}
                 for i, m in enumerate(ctx.messages)]))
        known = {r[0]: r[1] for r in self.db.execute(
            "SELECT id, content_hash FROM items WHERE dataset_id = ?", [ds_id])}
        without_source = {r[0] for r in self.db.execute(
            "SELECT id FROM items WHERE dataset_id = ? AND source IS NULL", [ds_id])} \
            if known and with_sources else set()
        backfill: list[tuple[str, str]] = []
        # items imported before without their context, whose context this import gives or the dataset now holds
        no_context = {r[0] for r in self.db.execute(
            "SELECT id FROM items WHERE dataset_id = ? AND context_id IS NULL AND context_end IS NOT NULL",
            [ds_id])} if known else set()
        ctx_link: list[tuple[str, str]] = []
        lacking: list[str] = []  # external ids of this import's items whose context reference names no context
        rows = []
        seen: set[str] = set()
        for it in items:
            if it.external_id in seen:
                raise PrefvalError(f"dataset '{dataset}': external id '{it.external_id}' occurs twice")
            seen.add(it.external_id)
            iid = derived_id("item", dataset, it.external_id)
            payload_json = canonical_json(it.payload)
            h = hashlib.sha256(f"{it.kind}\x1f{payload_json}\x1f{it.context_external_id}\x1f{it.context_end}"
                               .encode("utf-8")).hexdigest()
            old = known.get(iid)
            cid = None
            if it.context_external_id is not None:
                cid = ctx_ids.get(it.context_external_id)
                if cid is None:
                    cand = derived_id("context", dataset, it.context_external_id)
                    if cand in known_ctx:
                        cid = cand
                if cid is None:
                    lacking.append(it.external_id)
            if old:
                if old != h:
                    raise PrefvalError(
                        f"dataset '{dataset}': item '{it.external_id}' was imported before with other "
                        "content; import the changed file under a new --dataset name")
                unchanged += 1
                if it.source and iid in without_source:
                    backfill.append((json.dumps(it.source, ensure_ascii=False, sort_keys=True), iid))
                if cid is not None and iid in no_context:  # the same reference (in the content hash), now found
                    ctx_link.append((cid, iid))
                continue
            rows.append({
                "id": iid, "dataset_id": ds_id, "external_id": it.external_id, "kind": it.kind,
                "payload": payload_json, "content_hash": h, "context_id": cid,
                "context_end": it.context_end, "created_at": stamp,
                **({"source": json.dumps(it.source, ensure_ascii=False, sort_keys=True) if it.source else None}
                   if with_sources else {}),
            })
            added += 1
        # ---- write: the dataset row, contexts, items in batches (OR IGNORE: the same import running beside)
        with write_transaction(self.db):
            self.db["datasets"].upsert({
                "id": ds_id, "name": dataset, "format": fmt, "source_path": source_path,
                "file_hash": file_hash, "imported_at": now_iso(), "derived_from_study": derived_from_study,
                "settings": json.dumps(settings or {}),
            }, pk="id")
        batches: list[list[tuple[dict, list[dict]]]] = [[]]
        for ctx_row, messages in new_contexts:  # contexts grouped so that a batch holds about BATCH_ROWS messages
            if batches[-1] and sum(len(m) for _, m in batches[-1]) + len(messages) > BATCH_ROWS:
                batches.append([])
            batches[-1].append((ctx_row, messages))
        for batch in batches:
            if batch:
                with write_transaction(self.db):
                    for row, msgs in batch:
                        self.db["contexts"].insert(row, ignore=True)
                        self.db["context_messages"].insert_all(msgs, batch_size=500, ignore=True)
        source_rows = ([{"id": k, "text": v} for k, v in (sources or {}).items()]
                       if rows or backfill or ctx_backfill or new_contexts else [])
        for start in range(0, len(source_rows), BATCH_ROWS):
            with write_transaction(self.db):
                self.db["sources"].insert_all(source_rows[start:start + BATCH_ROWS], batch_size=200, ignore=True)
        for start in range(0, len(rows), BATCH_ROWS):
            with write_transaction(self.db):
                self.db["items"].insert_all(rows[start:start + BATCH_ROWS], batch_size=500, ignore=True)
        for start in range(0, len(backfill), BATCH_ROWS):
            with write_transaction(self.db):
                self.db.conn.executemany("UPDATE items SET source = ? WHERE id = ? AND source IS NULL",
                                         backfill[start:start + BATCH_ROWS])
        if ctx_backfill:
            with write_transaction(self.db):
                self.db.conn.executemany("UPDATE contexts SET source = ? WHERE id = ? AND source IS NULL",
                                         ctx_backfill)
        for start in range(0, len(ctx_link), BATCH_ROWS):
            with write_transaction(self.db):
                self.db.conn.executemany("UPDATE items SET context_id = ? WHERE id = ? AND context_id IS NULL",
                                         ctx_link[start:start + BATCH_ROWS])
        with write_transaction(self.db):
            self.db["imports"].insert({
                "id": derived_id("import", ds_id, source_path, file_hash, now_iso()), "dataset_id": ds_id,
                "path": source_path, "file_hash": file_hash, "imported_at": now_iso(),
                "n_added": added, "n_unchanged": unchanged,
            })
            self._insert_event("import", None, None, {"dataset": dataset, "format": fmt, "path": source_path,
                                                      "added": added, "unchanged": unchanged})
        return ImportResult(dataset=dataset, n_added=added, n_unchanged=unchanged, n_contexts=len(new_contexts),
                            without_context=lacking, n_context_linked=len(ctx_link))

    def get_dataset(self, name: str) -> Dataset:
        """The dataset called name. Raises PrefvalError naming the known datasets when there is none."""
        row = self.db.execute("SELECT * FROM datasets WHERE name = ?", [name]).fetchone()
        if not row:
            known = ", ".join(d.name for d in self.datasets()) or "none yet"
            raise PrefvalError(f"no dataset named '{name}' (known: {known})")
        cols = [d[0] for d in self.db.execute("SELECT * FROM datasets LIMIT 0").description]
        rec = dict(zip(cols, row))
        n = self.db.execute("SELECT COUNT(*) FROM items WHERE dataset_id = ?", [rec["id"]]).fetchone()[0]
        rec.pop("settings", None)
        return Dataset(**rec, n_items=n)

    def datasets(self) -> list[Dataset]:
        """All datasets with their item counts, by name."""
        out = []
        for r in self.db.query(
            "SELECT d.*, (SELECT COUNT(*) FROM items i WHERE i.dataset_id = d.id) AS n_items "
            "FROM datasets d ORDER BY d.name"
        ):
            r.pop("settings", None)
            out.append(Dataset(**r))
        return out

    def items(self, dataset: str) -> list[Item]:
        """All items of a dataset in import order (rowid). Raises PrefvalError for an unknown dataset."""
        ds = self.get_dataset(dataset)
        return [_item_from_row(r, ds.name)
                for r in self.db["items"].rows_where("dataset_id = ?", [ds.id], order_by="rowid")]

    def item_sources(self, dataset: str) -> list[ItemSource]:
        """Every item of a dataset with its pointer to its original record (None for an item imported without
        one) and its context's external id, in import order (rowid). Raises PrefvalError for an unknown dataset."""
        ds = self.get_dataset(dataset)
        if "source" not in {c.name for c in self.db["items"].columns}:  # an older database opened read-only
            return [ItemSource(external_id=r[0], context_external_id=r[1]) for r in self.db.execute(
                "SELECT i.external_id, c.external_id FROM items i LEFT JOIN contexts c ON c.id = i.context_id "
                "WHERE i.dataset_id = ? ORDER BY i.rowid", [ds.id])]
        return [ItemSource(external_id=r[0], source=json.loads(r[1]) if r[1] else None, context_external_id=r[2],
                           context_source=json.loads(r[3]) if r[3] else None)
                for r in self.db.execute(
                    "SELECT i.external_id, i.source, c.external_id, c.source FROM items i LEFT JOIN contexts c "
                    "ON c.id = i.context_id WHERE i.dataset_id = ? ORDER BY i.rowid", [ds.id])]

    def source_texts(self, ids: list[str]) -> dict[str, str]:
        """Original texts by id (sha256 hex, see import_items); ids not stored are absent from the result."""
        out: dict[str, str] = {}
        ids = sorted(set(ids))
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            out.update(self.db.execute(f"SELECT id, text FROM sources WHERE id IN ({','.join('?' * len(chunk))})",
                                       chunk).fetchall())
        return out

    def get_item(self, item_id: str) -> Item:
        """One item by id. Raises PrefvalError when absent."""
        rows = list(self.db.query(
            "SELECT i.*, d.name AS dataset_name FROM items i JOIN datasets d ON d.id = i.dataset_id "
            "WHERE i.id = ?", [item_id]))
        if not rows:
            raise PrefvalError(f"no item with id {item_id}")
        r = rows[0]
        return _item_from_row(r, r["dataset_name"])

    def items_by_external_id(self, external_ids: list[str], kind: str | None = None) -> dict[str, list[Item]]:
        """external id -> the items (of `kind` when given) with that external id in any dataset, in dataset-name
        order; ids no dataset holds are absent. Read one dataset at a time through the (dataset_id, external_id)
        index, so it costs a few lookups per id however many items the file holds."""
        wanted = sorted(set(external_ids))
        out: dict[str, list[Item]] = {}
        for ds_id, ds_name in self.db.execute("SELECT id, name FROM datasets ORDER BY name").fetchall():
            for start in range(0, len(wanted), 500):
                chunk = wanted[start:start + 500]
                sql = (f"SELECT * FROM items WHERE dataset_id = ? AND external_id IN ({','.join('?' * len(chunk))})"
                       + (" AND kind = ?" if kind is not None else ""))
                for r in self.db.query(sql, [ds_id, *chunk, *([kind] if kind is not None else [])]):
                    out.setdefault(r["external_id"], []).append(_item_from_row(r, ds_name))
        return out

    def get_items(self, item_ids: list[str]) -> dict[str, Item]:
        """Items by id (missing ids are simply absent from the result). Rows are read as tuples and built without
        validation (they were validated when imported), sharing one set of field names, the dataset's id, name
        and kind strings, the caller's id strings and the payloads' top-level keys: less than half the memory of
        validated items, and quicker, on 100k items."""
        out: dict[str, Item] = {}
        shared: dict[str, str] = {i: i for i in item_ids}
        same = shared.setdefault
        for start in range(0, len(item_ids), 500):
            chunk = item_ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for r in self.db.execute(
                "SELECT i.id, i.dataset_id, d.name, i.external_id, i.kind, i.payload, i.content_hash, "
                "i.context_id, i.context_end FROM items i JOIN datasets d ON d.id = i.dataset_id "
                f"WHERE i.id IN ({marks})", chunk):
                item_id = same(r[0], r[0])
                out[item_id] = Item.model_construct(
                    ITEM_FIELDS, id=item_id, dataset_id=same(r[1], r[1]), dataset_name=same(r[2], r[2]),
                    external_id=r[3], kind=same(r[4], r[4]),
                    payload={same(k, k): v for k, v in json.loads(r[5]).items()}, content_hash=r[6],
                    context_id=r[7], context_end=r[8])
        return out

    def context_length(self, context_id: str, end: int | None = None) -> int:
        """Number of messages an item sees: min(end, n_messages); end=None means all."""
        row = self.db.execute("SELECT n_messages FROM contexts WHERE id = ?", [context_id]).fetchone()
        if not row:
            return 0
        return row[0] if end is None else min(end, row[0])

    def context_messages(self, context_id: str, start: int = 0, stop: int | None = None) -> list[Message]:
        """Messages [start, stop) of a context, read lazily page by page (stop is exclusive)."""
        if stop is None:
            stop = self.context_length(context_id)
        rows = self.db.execute(
            "SELECT role, content FROM context_messages WHERE context_id = ? AND idx >= ? AND idx < ? "
            "ORDER BY idx", [context_id, start, stop]).fetchall()
        return [Message(role=r[0], content=r[1]) for r in rows]

    def context_texts(self, context_id: str, start: int = 0, stop: int | None = None) -> list[tuple[str, str]]:
        """(role, content) of messages [start, stop) of a context as plain tuples: context_messages without a
        Message per row, for a screen that reads a whole conversation before it draws (500 messages of 1,000,000
        characters: 1.3-1.9 ms, against 2.9-6.9 ms as Messages)."""
        if stop is None:
            stop = self.context_length(context_id)
        return self.db.execute(
            "SELECT role, content FROM context_messages WHERE context_id = ? AND idx >= ? AND idx < ? "
            "ORDER BY idx", [context_id, start, stop]).fetchall()

    def context_sizes(self, context_id: str) -> list[tuple[str, int]]:
        """(role, length in characters) of every message of a context, in order; [] for an unknown context.

        Lets a view size a conversation without holding its text (message contents are read on demand with
        context_messages). Read from the context's own row (contexts.message_sizes, written at import and by
        migration 12), so that sizing a conversation of 1,000,000 characters reads a few kilobytes, not the
        whole text; a context without it (written by other means) is measured message by message."""
        row = self.db.execute("SELECT message_sizes FROM contexts WHERE id = ?", [context_id]).fetchone()
        if row is not None and row[0]:
            return [(role, n) for role, n in json.loads(row[0])]
        rows = self.db.execute(
            "SELECT role, length(content) FROM context_messages WHERE context_id = ? ORDER BY idx",
            [context_id]).fetchall()
        return [(r[0], r[1] or 0) for r in rows]
