"""Reading a pairwise study's `--pairs FILE`: CSV with a header a_id,b_id, or JSONL objects {"a_id", "b_id"}.

Ids are the items' external ids in dataset A and dataset B. Every error is one PrefvalError line naming the file,
the row (CSV data rows count from 1 after the header; JSONL lines from 1) and the field.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from storage.errors import InputError, PrefvalError
from storage.models import Item
from storage.textfile import read_text, regular_file


def _rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(record label, row dict) for each row of a CSV or JSONL file."""
    text = read_text(path)
    out: list[tuple[str, dict[str, Any]]] = []
    if path.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(str(path), f"line {n}", "(json)", f"not valid JSON: {exc.msg}") from None
            if not isinstance(row, dict):
                raise InputError(str(path), f"line {n}", "(json)", "expected an object with a_id and b_id")
            out.append((f"line {n}", row))
        return out
    reader = csv.DictReader(text.splitlines())
    missing = [c for c in ("a_id", "b_id") if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(str(path), "header", missing[0], "missing column (expected a_id,b_id)")
    for n, row in enumerate(reader, start=1):
        out.append((f"row {n}", row))
    return out


def read_pairs(path: str, a_by_id: dict[str, Item], b_by_id: dict[str, Item],
               a_name: str, b_name: str) -> list[tuple[Item, Item]]:
    """The (item A, item B) pairs a file lists, in file order.

    a_by_id / b_by_id: external id -> item of dataset A / B. Raises PrefvalError (InputError) for a missing file,
    an empty file, a row without a_id/b_id, an id not in its dataset, or a pair listed twice.
    """
    p = regular_file(path, "pairs file")
    pairs: list[tuple[Item, Item]] = []
    seen: set[tuple[str, str]] = set()
    for record, row in _rows(p):
        ids = []
        for field, by_id, ds in (("a_id", a_by_id, a_name), ("b_id", b_by_id, b_name)):
            value = row.get(field)
            value = "" if value is None else str(value).strip()
            if not value:
                raise InputError(str(p), record, field, "missing")
            if value not in by_id:
                raise InputError(str(p), record, field, f"'{value}' is not an item of dataset '{ds}'")
            ids.append(value)
        key = (ids[0], ids[1])
        if key in seen:
            raise InputError(str(p), record, "a_id", f"pair ({ids[0]}, {ids[1]}) is listed twice")
        seen.add(key)
        pairs.append((a_by_id[ids[0]], b_by_id[ids[1]]))
    if not pairs:
        raise PrefvalError(f"{p}: no pairs in the file")
    return pairs
