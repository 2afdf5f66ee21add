"""The released records of a dataset as a typed table: the Parquet file that the Hugging Face dataset card's
`configs` name (reports/render/hub_card.py) and that croissant.json's record set reads (annotator/croissant.py).

One row per released record (annotator.release.build_release: ``{"external_id", "kind", "payload", "release"}``),
in the JSONL's order, with these columns:

- ``external_id``, ``kind``: text;
- one column per field of the item (the JSONL's ``payload``: ``question``, ``options``, ``snippet``, ``metadata``,
  ...), in the order they first appear; a field an item lacks is null;
- ``release``: what the release adds (``gold_label``, ...), an object.

Every column is typed (Arrow types, so that `datasets` gives `Value("string")`, `List(Value("string"))`,
`{"role": Value("string"), ...}`), by one shape per column inferred from every row (``shape_of``, ``unify``): a
field that is an integer in one row and a float in another is a float; an object gets the union of the keys of
every row (a key a row lacks is null there). What cannot be typed that way, or could not be read back by a
Croissant 1.0 reader (mlcroissant follows a column and JSONPath below it, and a list of objects only at a
column's top level), is written as JSON text (``json.dumps(value, ensure_ascii=False, sort_keys=True)``) and
listed in ``HubTable.json_text`` by its path:

- a value whose rows disagree on its kind (a number in one item, text in another, an object in a third);
- a list of objects anywhere but directly in a column (``snippet`` and ``messages`` stay typed), and an object
  inside such a list's objects;
- an object with a key that JSONPath cannot quote (a key holding both quote characters or a backslash).

An object that is empty (``{}``) or null in every row, at any depth, has no column or field: Parquet cannot
store an object without fields (the JSONL keeps it). Nothing here depends on the time it runs: the same records
give the same bytes (pyarrow's Parquet writer, fixed options).
"""
from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from typing import Any

#: the columns every row has besides the item's own fields
ID_COLUMNS = ("external_id", "kind")
RELEASE_COLUMN = "release"
#: the split every dataset's records are in (a benchmark's items are for evaluation: the Hub's "test" split)
SPLIT = "test"

# a shape: ("null",) | ("bool",) | ("int",) | ("float",) | ("str",) | ("list", shape) | ("struct", {key: shape})
# | ("json",)
NULL, BOOL, INT, FLOAT, STR, JSON = ("null",), ("bool",), ("int",), ("float",), ("str",), ("json",)
SCALARS = (BOOL, INT, FLOAT, STR)
_INT64 = 2 ** 63


def shape_of(value: Any) -> tuple:
    """The shape of one JSON value: a scalar's kind, a list's unified element shape, an object's keys (in their
    order) with their shapes; an integer outside int64 is JSON."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT if -_INT64 <= value < _INT64 else JSON
    if isinstance(value, float):
        return FLOAT
    if isinstance(value, str):
        return STR
    if isinstance(value, list):
        elem = NULL
        for v in value:
            elem = unify(elem, shape_of(v))
        return ("list", elem)
    if isinstance(value, dict):
        return ("struct", {k: shape_of(v) for k, v in value.items()})
    return JSON


def unify(a: tuple, b: tuple) -> tuple:
    """One shape for values of shapes a and b: null gives way to anything, int and float give float, lists unify
    their elements, objects the union of their keys (a's order, then b's new keys); any other pair is JSON."""
    if a == NULL:
        return b
    if b == NULL or a == b and a[0] not in ("list", "struct"):
        return a
    if a in (INT, FLOAT) and b in (INT, FLOAT):
        return FLOAT
    if a[0] == b[0] == "list":
        return ("list", unify(a[1], b[1]))
    if a[0] == b[0] == "struct":
        keys = dict(a[1])
        for k, s in b[1].items():
            keys[k] = unify(keys[k], s) if k in keys else s
        return ("struct", keys)
    return JSON


def json_path_key(key: str) -> str | None:
    """key as a quoted JSONPath member name (jsonpath-rw, which mlcroissant uses): in single quotes, else in
    double quotes; None when neither can hold it (both quote characters, a backslash, or a control character)."""
    if "\\" in key or any(ord(c) < 32 or ord(c) == 127 for c in key):
        return None
    if "'" not in key:
        return f"'{key}'"
    if '"' not in key:
        return f'"{key}"'
    return None


def _is_scalar_list(shape: tuple) -> bool:
    """A list of scalars, or of lists of scalars, at any depth (a repeated field of one data type)."""
    while shape[0] == "list":
        shape = shape[1]
    return shape in SCALARS or shape == NULL


def settle(shape: tuple, where: str = "column") -> tuple | None:
    """The shape written for a value of this shape (module doc): JSON where it cannot be typed or read back, None
    when it is an object without fields (left out). where: "column" (a column), "nested" (below a column's
    object), "element" (a key of the objects of a column's list), "leaf" (below such a key)."""
    kind = shape[0]
    if kind in ("null", "bool", "int", "float", "str", "json"):
        return shape
    if kind == "list":
        if _is_scalar_list(shape):
            return shape
        elem = shape[1]
        if elem[0] == "struct" and where == "column":
            inner = settle(elem, "element")
            return None if inner is None else (("list", inner) if inner != JSON else JSON)
        return JSON
    # an object
    if where == "leaf":
        return JSON if shape[1] else None
    keys = {}
    for k, s in shape[1].items():
        got = settle(s, "leaf" if where == "element" else "nested")
        if got is not None:
            keys[k] = got
    if not keys:
        return None
    if any(json_path_key(k) is None for k in keys):
        return JSON
    return ("struct", keys)


def arrow_type(shape: tuple):
    """The pyarrow type of a settled shape (JSON and null-only values as text)."""
    import pyarrow as pa

    kind = shape[0]
    if kind in ("null", "str", "json"):
        return pa.string()
    if kind == "bool":
        return pa.bool_()
    if kind == "int":
        return pa.int64()
    if kind == "float":
        return pa.float64()
    if kind == "list":
        return pa.list_(arrow_type(shape[1]))
    return pa.struct([pa.field(k, arrow_type(s)) for k, s in shape[1].items()])


def conform(value: Any, shape: tuple) -> Any:
    """value as the column of shape stores it: JSON text where the shape is JSON, an object with exactly the
    shape's keys (missing ones null, left-out ones dropped), ints as floats in a float column."""
    if value is None:
        return None
    kind = shape[0]
    if kind == "json":
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    if kind == "float":
        return float(value)
    if kind == "null":
        return None
    if kind == "list":
        return [conform(v, shape[1]) for v in value]
    if kind == "struct":
        return {k: conform(value.get(k), s) for k, s in shape[1].items()}
    return value


def json_text_paths(shape: tuple, prefix: str) -> list[str]:
    """Dotted paths (``metadata.value``, ``snippet[].extra``) of the JSON-text values in a settled shape."""
    if shape == JSON:
        return [prefix]
    if shape[0] == "list":
        return json_text_paths(shape[1], prefix + "[]")
    if shape[0] == "struct":
        return [p for k, s in shape[1].items() for p in json_text_paths(s, f"{prefix}.{k}")]
    return []


@dataclass
class HubTable:
    """A dataset's released records as typed columns. columns: name -> settled shape, in column order (ID_COLUMNS,
    the item's fields, RELEASE_COLUMN); rows: one dict per record with exactly those keys, values conformed;
    json_text: dotted paths of the values written as JSON text; left_out: item fields (and ``release``) with no
    column because they are an empty object or null in every record."""

    columns: dict[str, tuple]
    rows: list[dict[str, Any]]
    json_text: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)


def hub_table(records: list[dict[str, Any]]) -> HubTable:
    """The HubTable of released records (``{"external_id", "kind", "payload", "release"}``, build_release's
    order kept). Raises ValueError when an item field is named like a fixed column (payload models forbid it)."""
    flat: list[dict[str, Any]] = []
    for r in records:
        payload = r.get("payload") or {}
        clash = [k for k in payload if k in ID_COLUMNS or k == RELEASE_COLUMN]
        if clash:
            raise ValueError(f"item {r['external_id']}: field {clash[0]!r} has the name of a release column")
        flat.append({"external_id": r["external_id"], "kind": r["kind"], **payload,
                     RELEASE_COLUMN: r.get("release") or {}})
    shapes: dict[str, tuple] = {c: STR for c in ID_COLUMNS}
    for row in flat:
        for k, v in row.items():
            if k not in ID_COLUMNS:
                shapes[k] = unify(shapes.get(k, NULL), shape_of(v))
    # the release column last
    shapes[RELEASE_COLUMN] = shapes.pop(RELEASE_COLUMN, ("struct", {}))
    columns: dict[str, tuple] = {}
    left_out = []
    for k, s in shapes.items():
        got = settle(s)
        if got is None:
            left_out.append(k)
        else:
            columns[k] = got
    rows = [{k: conform(row.get(k), s) for k, s in columns.items()} for row in flat]
    json_text = [p for k, s in columns.items() for p in json_text_paths(s, k)]
    return HubTable(columns=columns, rows=rows, json_text=json_text, left_out=left_out)


#: pyarrow.parquet.write_table options: fixed, so the same rows give the same bytes
PARQUET_OPTIONS = {"compression": "snappy", "version": "2.6", "use_dictionary": True, "write_statistics": True}


def parquet_bytes(table: HubTable) -> bytes:
    """The Parquet file of a HubTable (one row group, PARQUET_OPTIONS): pyarrow, no pandas metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([pa.field(k, arrow_type(s)) for k, s in table.columns.items()])
    arrow = pa.Table.from_pylist(table.rows, schema=schema)
    buf = io.BytesIO()
    pq.write_table(arrow, buf, **PARQUET_OPTIONS)
    return buf.getvalue()
