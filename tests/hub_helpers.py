"""Reading a release back the way its users will: `datasets.load_dataset` on the folder (the dataset card's
configs) and `mlcroissant` on croissant.json, each turned back into the JSONL's records
({"external_id", "kind", "payload", "release"}) so that a test can compare them with the released items.

Both readers see the Parquet file's typed columns (annotator/hub_rows.py): values written as JSON text (their
paths in datasheet.json's release.hub.configs[dataset].json_text) are decoded here, and ``normalized`` drops what
the typed columns cannot tell apart: a key whose value is null or an empty object (an object's missing keys read
as null). mlcroissant yields text as bytes, lists as arrays, and each record as {field id: value} with an
object's sub-fields under their parent's id (one level), and a null list of objects as one element whose fields
are all null; ``croissant_records`` undoes those.
"""
from __future__ import annotations

import json
from typing import Any

FIXED = ("external_id", "kind", "release")


def normalized(value: Any) -> Any:
    """value with bytes decoded, arrays as lists, and in every object the keys whose value is null or {} dropped
    (recursively)."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [normalized(v) for v in value]
    if isinstance(value, dict):
        out = {k: normalized(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v is not None and v != {}}
    return value


def _decode(row: dict[str, Any], paths: list[str]) -> dict[str, Any]:
    """row with the JSON-text values at paths (``metadata.value``, ``snippet[].x``) decoded."""
    def walk(v, steps):
        if v is None:
            return None
        if not steps:
            return json.loads(v)
        step = steps[0]
        if step == "[]":
            return [walk(x, steps[1:]) for x in v]
        if isinstance(v, dict) and step in v:
            v = dict(v)
            v[step] = walk(v[step], steps[1:])
        return v

    for p in paths:
        steps = []
        for part in p.split("."):
            while part.endswith("[]"):
                part = part[:-2]
                steps += [part, "[]"] if part else ["[]"]
                part = ""
            if part:
                steps.append(part)
        row = walk(row, steps)
    return row


def as_records(rows: list[dict[str, Any]], json_text: list[str]) -> list[dict[str, Any]]:
    """Hub rows (external_id, kind, the item's fields, release) as normalized JSONL records."""
    out = []
    for r in rows:
        r = _decode(dict(r), json_text)
        payload = {k: v for k, v in r.items() if k not in FIXED}
        out.append(normalized({"external_id": r["external_id"], "kind": r["kind"], "payload": payload,
                               "release": r.get("release")}))
    return out


def jsonl_records(path) -> list[dict[str, Any]]:
    """The release's JSONL file, normalized."""
    return [normalized(json.loads(line)) for line in open(path, encoding="utf-8")]


def _paths(fields: list[dict], prefix: tuple, out: dict) -> dict:
    for f in fields:
        out[f["@id"]] = (prefix + (f["name"],), f)
        _paths(f.get("subField", []), prefix + (f["name"],), out)
    return out


def _put(row: dict, path: tuple, value: Any) -> None:
    for step in path[:-1]:
        row = row.setdefault(step, {})
    if isinstance(row.get(path[-1]), dict) and isinstance(value, dict):
        row[path[-1]].update(value)
    else:
        row[path[-1]] = value


def croissant_records(record: dict[str, Any], record_set: dict[str, Any]) -> dict[str, Any]:
    """One mlcroissant record ({field id: value}) as a hub row keyed by column names, nested as the Parquet
    columns are."""
    ids = _paths(record_set["field"], (), {})
    row: dict[str, Any] = {}

    def value_of(v, field):
        if isinstance(v, dict):
            return {ids[k][0][-1]: value_of(x, ids[k][1]) for k, x in v.items()}
        if field.get("subField") and field.get("repeated") and isinstance(v, list):
            items = [value_of(x, field) for x in v]
            if len(items) == 1 and all(x is None for x in items[0].values()):
                return None  # mlcroissant's reading of a null list of objects
            return items
        return v

    for fid, v in record.items():
        path, field = ids[fid]
        _put(row, path, value_of(v, field))
    return row
