"""BenchPreS rows (JSONL, or Parquet as on the HF hub: ``.parquet`` files are read with pandas).

A row is ``{prompt, preference_attribute: [str], preference_label: [bool], name, task, recipient, domain}``: one
user profile in one recipient-task context with the attributes of that user's memory and, index for index, the
gold label g(t, a) (True = applying the attribute is appropriate here). Every (row, attribute) becomes one
"gold_candidate" item: recipient, task, attribute, domain, profile_name = name, candidate_label = the label (an
answer key, never shown to annotators), metadata {prompt, row_index}. row_index is the row's 0-based position in
its file.

External id: ``f"{name}|{recipient}|{task}|{attribute}"``; a repeat within one import is an error.

Original records (for `prefval release`): each item points to its whole row (``row_src``), its position in the
row's attribute list (``attribute_index``), the kind of file (``file``: "jsonl" or "parquet") and, for Parquet,
the file's Arrow schema (``schema_src``). release_files writes each row that has released items once, with
preference_attribute and preference_label cut to the released attributes (in their order) and every other
column as it was.
"""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from storage.errors import InputError
from storage.importers.base import Parsed, check_paths, file_sha256
from storage.importers.generic import input_error_from, iter_jsonl, read_parquet_rows
from storage.importers.original import (
    ReleaseFile, jsonl_or_parquet_files, load_record, parquet_schema_text, record_text,
)
from storage.models import ItemIn, ItemSource
from storage.payloads import GoldCandidatePayload

FORMAT = "benchpres"


class BenchPresRow(BaseModel):
    """One row of the BenchPreS test split."""

    prompt: str
    preference_attribute: list[str] = Field(min_length=1)
    preference_label: list[bool]
    name: str = Field(min_length=1)
    task: str = Field(min_length=1)
    recipient: str = Field(min_length=1)
    domain: str = Field(min_length=1)


def _rows(path: Path):
    """(record label, row index, row dict) for each row of a JSONL or Parquet file."""
    if path.suffix.lower() == ".parquet":
        for i, row in enumerate(read_parquet_rows(path)):
            yield f"row {i}", i, row
    else:
        for i, (lineno, obj) in enumerate(iter_jsonl(path)):
            yield f"line {lineno}", i, obj


def read(paths: list[str | Path], options: dict | None = None) -> Parsed:
    """Read BenchPreS JSONL/Parquet files into one gold_candidate item per (row, attribute).

    Raises InputError (file, record, field) for a bad row, a preference_label list whose length differs from
    preference_attribute's, or a repeated external id; PrefvalError for a missing or unreadable file.
    """
    ps = check_paths(paths)
    parsed = Parsed(file_hash=file_sha256(ps), source_path=",".join(str(p) for p in ps))
    seen: set[str] = set()
    for p in ps:
        is_parquet = p.suffix.lower() == ".parquet"
        schema_sid = parsed.add_source(parquet_schema_text(p)) if is_parquet else None
        for record, idx, obj in _rows(p):
            try:
                row = BenchPresRow.model_validate(obj)
            except ValidationError as exc:
                raise input_error_from(exc, p, record) from None
            if len(row.preference_label) != len(row.preference_attribute):
                raise InputError(str(p), record, "preference_label",
                                 f"has {len(row.preference_label)} labels for "
                                 f"{len(row.preference_attribute)} attributes")
            row_sid = parsed.add_source(record_text(obj))
            for a_idx, (attr, label) in enumerate(zip(row.preference_attribute, row.preference_label)):
                ext = f"{row.name}|{row.recipient}|{row.task}|{attr}"
                if ext in seen:
                    raise InputError(str(p), record, "preference_attribute",
                                     f"repeats attribute {attr!r} for {row.name} / {row.recipient} / {row.task}")
                seen.add(ext)
                payload = GoldCandidatePayload(
                    recipient=row.recipient, task=row.task, attribute=attr, domain=row.domain,
                    profile_name=row.name, candidate_label=label, metadata={"prompt": row.prompt, "row_index": idx},
                )
                source = {"row_src": row_sid, "attribute_index": a_idx, "file": "parquet" if is_parquet else "jsonl"}
                if schema_sid:
                    source["schema_src"] = schema_sid
                parsed.items.append(ItemIn(external_id=ext, kind="gold_candidate",
                                           payload=payload.model_dump(exclude_none=True), source=source))
    return parsed


def release_files(entries: list[ItemSource], texts: dict[str, str]) -> list[ReleaseFile]:
    """Each row with released items once (in order of its first released item), its preference_attribute and
    preference_label lists cut to the released attributes in their original order, every other column as
    imported: rows from JSONL as ``.benchpres.jsonl``, rows from Parquet as ``.benchpres.parquet`` with the first
    such file's column types."""
    rows: dict[tuple[str, str], tuple[str, set[int]]] = {}  # (file, row id) -> (file kind, attribute indexes)
    schema = None
    for e in entries:
        kind = e.source.get("file", "jsonl")
        rows.setdefault((kind, e.source["row_src"]), (kind, set()))[1].add(e.source["attribute_index"])
        if schema is None and e.source.get("schema_src"):
            schema = texts.get(e.source["schema_src"])
    by_file: dict[str, list[dict]] = {"jsonl": [], "parquet": []}
    for (kind, sid), (_, keep) in rows.items():
        row = load_record(texts, sid)
        for col in ("preference_attribute", "preference_label"):
            row[col] = [v for i, v in enumerate(row[col]) if i in keep]
        by_file[kind].append(row)
    return jsonl_or_parquet_files("benchpres", by_file, schema, FORMAT)
