"""Original records kept at import, written back in each benchmark's own layout by `prefval release`.

An importer keeps every original text its items come from in Parsed.sources (a record as JSON, a conversation
string, a Parquet schema; each stored once under the sha256 hex of its text) and points each item (ItemIn.source)
and context (ContextIn.source) at them with keys ending in ``_src``. Its ``release_files(entries, texts)`` turns
the released items' entries (storage.models.ItemSource, in import order) back into files of the format's layout,
which the same importer reads again.

Records are kept as JSON with their keys in the original order (``record_text``); CSV rows as ``{column: cell}``
strings, Parquet rows as the plain values pandas reads, with the file's Arrow schema kept beside them so that
the columns come back with their types.
"""
from __future__ import annotations

import base64
import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from storage.models import ItemSource


@dataclass
class ReleaseFile:
    """One file of a release in a benchmark's own layout: the name's suffix after the dataset name (".cimemories.json"),
    its bytes, how many records it holds, the format that reads it again, and notes for the datasheet
    (e.g. items left out because they had no original record)."""

    suffix: str
    data: bytes
    records: int
    format: str
    notes: dict[str, Any] = field(default_factory=dict)


def record_text(obj: Any) -> str:
    """A record as JSON text with its keys in their original order (the form kept in Parsed.sources)."""
    return json.dumps(obj, ensure_ascii=False)


def source_ids(entries: Iterable[ItemSource]) -> list[str]:
    """Every source id the entries (and their contexts) point to: the string values under keys ending in _src."""
    out: set[str] = set()
    for e in entries:
        for src in (e.source, e.context_source):
            for k, v in (src or {}).items():
                if k.endswith("_src") and isinstance(v, str):
                    out.add(v)
    return sorted(out)


def load_record(texts: dict[str, str], sid: str | None) -> Any:
    """The record kept under sid (None when it is not stored: an item imported before records were kept)."""
    if sid is None or sid not in texts:
        return None
    return json.loads(texts[sid])


def jsonl_bytes(records: Iterable[Any]) -> bytes:
    """One JSON object per line, keys in their original order, UTF-8, "\\n" line ends."""
    return "".join(record_text(r) + "\n" for r in records).encode("utf-8")


def csv_bytes(rows: list[dict[str, Any]], header: list[str]) -> bytes:
    """A CSV file as Python's csv module writes it by default (minimal quoting, CRLF line ends, as PersonaMem's
    questions files): the header, then each row's cells in header order ("" for a cell the row lacks)."""
    buf = io.StringIO(newline="")
    w = csv.writer(buf)
    w.writerow(header)
    for r in rows:
        w.writerow(["" if r.get(c) is None else r.get(c) for c in header])
    return buf.getvalue().encode("utf-8")


def union_header(rows: list[dict[str, Any]]) -> list[str]:
    """The columns of all rows in the order of first appearance."""
    header: dict[str, None] = {}
    for r in rows:
        for k in r:
            header.setdefault(k, None)
    return list(header)


def parquet_schema_text(path: Path) -> str:
    """The Arrow schema of a Parquet file, serialized and base64-encoded (kept once per file in Parsed.sources)."""
    import pyarrow.parquet as pq

    return "arrow-schema:" + base64.b64encode(pq.read_schema(path).serialize().to_pybytes()).decode("ascii")


def parquet_bytes(rows: list[dict[str, Any]], schema_text: str | None) -> bytes:
    """A Parquet file of rows with the kept schema's columns and types (pandas' index metadata and columns the
    rows do not carry are left out); without a schema, the types pyarrow infers. Deterministic for the same
    rows and pyarrow version."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = union_header(rows)
    schema = None
    if schema_text and schema_text.startswith("arrow-schema:"):
        full = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(schema_text[len("arrow-schema:"):])))
        fields = [full.field(c) for c in columns if c in full.names]
        if len(fields) == len(columns):
            meta = {k: v for k, v in (full.metadata or {}).items() if k != b"pandas"}
            schema = pa.schema(fields, metadata=meta or None)
    table = pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in rows], schema=schema)
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def jsonl_or_parquet_files(name: str, by_file: dict[str, list[dict]], schema_text: str | None,
                           fmt: str) -> list[ReleaseFile]:
    """The release files of a format read from JSONL or Parquet: ``.NAME.jsonl`` for by_file["jsonl"] and
    ``.NAME.parquet`` (with the kept schema's column types) for by_file["parquet"], each only when it has rows."""
    out = []
    if by_file.get("jsonl"):
        out.append(ReleaseFile(f".{name}.jsonl", jsonl_bytes(by_file["jsonl"]), len(by_file["jsonl"]), fmt))
    if by_file.get("parquet"):
        out.append(ReleaseFile(f".{name}.parquet", parquet_bytes(by_file["parquet"], schema_text),
                               len(by_file["parquet"]), fmt))
    return out
