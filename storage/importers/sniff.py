"""What kind of file an importer was given, to say so when it is another importer's file (new-user trial 6:
`prefval import personamem data_*.json` said "line 1: field '(json)': invalid JSON: Expecting value" about a valid
CIMemories JSON document).

`sniff(path)` looks at the first 64 KiB only: the container (a JSON document, JSON Lines, CSV, Parquet) and, from
its field names, the benchmark whose files look like it. `wrong_importer(fmt, paths)` turns that into one line for
the import command when an import failed: the file is not the container `fmt` reads, or it looks like another
benchmark's file; with "did you mean `prefval import X`?". It never decides what is imported: it only explains a
failure.
"""
from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

HEAD_BYTES = 65536

#: the containers each importer reads ("json" = one JSON document, "jsonl" = one JSON value a line)
READS: dict[str, tuple[set[str], str]] = {
    "personamem": ({"csv", "jsonl"}, "CSV questions and JSONL shared contexts"),
    "cimemories": ({"json"}, "JSON document (a list of profiles)"),
    "horizonbench": ({"jsonl", "parquet"}, "JSONL or Parquet rows"),
    "benchpres": ({"jsonl", "parquet"}, "JSONL or Parquet rows"),
    "realpref": ({"json", "jsonl"}, "JSON or JSONL records"),
    "jsonl": ({"jsonl"}, "JSONL records"),
    "csv": ({"csv"}, "CSV rows"),
    "judgments": ({"jsonl", "csv"}, "JSONL or CSV judgments"),
    "annotations": ({"jsonl", "csv"}, "JSONL or CSV annotations"),
}

CONTAINER_TEXT = {"json": "a JSON document", "jsonl": "JSON Lines", "csv": "CSV (or other text)",
                  "parquet": "a Parquet file"}

#: field names that identify a benchmark's files: (importer, container or None for any, fields that must all occur)
FINGERPRINTS: list[tuple[str, str | None, frozenset[str]]] = [
    ("cimemories", None, frozenset({"bio", "information_attributes"})),
    ("cimemories", None, frozenset({"bio", "contexts"})),
    ("benchpres", None, frozenset({"prompt", "preference_attribute"})),
    ("horizonbench", None, frozenset({"generator", "conversation", "correct_letter"})),
    ("personamem", "csv", frozenset({"persona_id", "question_id", "user_question_or_message"})),
    ("realpref", None, frozenset({"pref_id", "Preference"})),
    ("realpref", None, frozenset({"pref_id", "sessions"})),
    ("realpref", None, frozenset({"query_id", "pref_id"})),
    ("realpref", None, frozenset({"Demographics"})),
]
_HEX_KEY = re.compile(r"[0-9a-f]{32,}")
_JSON_KEY = re.compile(r'"((?:[^"\\]|\\.){1,80})"\s*:')


def sniff(path: str | Path) -> tuple[str | None, str | None, list[str]]:
    """(container, importer, fields) of a file from its first 64 KiB: container "json", "jsonl", "csv",
    "parquet" or None (unreadable); importer: the format whose files have these field names (FINGERPRINTS; a
    JSONL line whose one key is a long hex id is a PersonaMem shared context), or None; fields: the names it saw
    (keys, columns), in order, for the message. Never raises: a missing, empty or not regular file gives
    (None, None, [])."""
    import os

    try:
        if not os.path.isfile(path):  # a device, a pipe, a folder: the importer's own error says what it is
            return None, None, []
        with open(path, "rb") as f:
            head = f.read(HEAD_BYTES)
    except OSError:
        return None, None, []
    if not head.strip():
        return None, None, []
    if head.startswith(b"PAR1"):
        try:
            import pyarrow.parquet as pq

            fields = list(pq.read_schema(path).names)
        except Exception:  # noqa: BLE001  (a hint only: an unreadable schema gives no fields)
            fields = []
        return "parquet", _match("parquet", fields), fields
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    stripped = text.lstrip()
    if stripped[:1] in ("[", "{"):
        first = stripped.split("\n", 1)[0]
        try:
            value = json.loads(first)
        except ValueError:
            value = None
        if isinstance(value, dict):  # a whole object on the first line: JSON Lines
            fields = list(value)
            if len(fields) == 1 and _HEX_KEY.fullmatch(fields[0]):
                return "jsonl", "personamem", fields
            return "jsonl", _match("jsonl", fields), fields
        fields = list(dict.fromkeys(m.group(1) for m in _JSON_KEY.finditer(text)))
        return "json", _match("json", fields), fields
    try:
        header = next(csv.reader(io.StringIO(stripped.split("\n", 1)[0])), [])
    except csv.Error:
        header = []
    return "csv", _match("csv", header), header


def _match(container: str, fields: list[str]) -> str | None:
    names = set(fields)
    for fmt, where, need in FINGERPRINTS:
        if (where is None or where == container) and need <= names:
            return fmt
    return None


def wrong_importer(fmt: str, paths: list[str]) -> str | None:
    """One line for a failed `prefval import fmt PATHS`, when a file is another importer's: it is a container
    `fmt` does not read ("... is a JSON document ..., not the CSV questions and JSONL shared contexts that `prefval
    import personamem` reads; did you mean `prefval import cimemories`?"), or its field names are another
    benchmark's. None when every file looks like what `fmt` reads (the importer's own error then stands)."""
    reads = READS.get(fmt)
    if reads is None:
        return None
    containers, reads_text = reads
    for p in paths:
        container, other, fields = sniff(p)
        if container is None:
            continue
        mean = f"; did you mean `prefval import {other}`?" if other and other != fmt else ""
        seen = f" with fields {', '.join(fields[:4])}{', ...' if len(fields) > 4 else ''}" if fields else ""
        if container not in containers:
            return (f"{p}: {CONTAINER_TEXT[container]}{seen}, not the {reads_text} that `prefval import {fmt}` "
                    f"reads{mean}")
        if other and other != fmt and fmt not in ("jsonl", "csv"):
            return f"{p}: {CONTAINER_TEXT[container]}{seen}, as in {other} files, not {fmt} ones{mean}"
    return None
