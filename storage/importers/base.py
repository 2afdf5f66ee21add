"""Shared pieces of the importers: the Parsed result, file hashing, pydantic errors as one line."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from storage.errors import InputError, PrefvalError
from storage.models import ContextIn, ItemIn
from storage.textfile import not_utf8, read_text, regular_file


@dataclass(frozen=True)
class KeptInMetadata:
    """A record field that is no field of the item kind, kept in the items' metadata (the generic importer's rule):
    the file, the field's name, how many records of the file had it (non-empty), the kind, and answer_field: the
    kind's answer-key field when the name reads as an answer (e.g. 'answer' for mcq: "correct_index") and some of
    those records' items got no key, else None; replaced_by: for an item field that --map (or the mapping) reads from
    another column instead, that column's name ("answer" for --map correct_index=answer), else None."""

    path: str
    field: str
    records: int
    kind: str
    answer_field: str | None = None
    unkeyed: int = 0  # of the records, those whose item got no answer key (KEY_FIELDS) of its own
    replaced_by: str | None = None


@dataclass
class Parsed:
    """What an importer read: items, contexts, and the hash of the input files (sha256 hex, combined);
    kept_in_metadata: the record fields the generic importer kept in metadata, one per (file, field), in the order
    first met."""

    items: list[ItemIn] = field(default_factory=list)
    contexts: list[ContextIn] = field(default_factory=list)
    file_hash: str = ""
    source_path: str = ""
    #: original texts the items' ItemIn.source point to, by sha256 hex of the text (see add_source)
    sources: dict[str, str] = field(default_factory=dict)
    kept_in_metadata: list[KeptInMetadata] = field(default_factory=list)

    def add_source(self, text: str) -> str:
        """Keep an original text (a record as JSON, a Parquet schema) once; returns its id, the sha256 hex."""
        sid = hashlib.sha256(text.encode("utf-8")).hexdigest()
        self.sources.setdefault(sid, text)
        return sid


def file_sha256(paths: list[Path]) -> str:
    """sha256 over the bytes of every file, in order."""
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def check_paths(paths: list[str | Path]) -> list[Path]:
    """Paths as Path objects; raises PrefvalError (one line naming the path) for one that is missing, not a regular
    file (a directory, /dev/null, a FIFO: see storage.textfile.regular_file) or empty."""
    out = []
    for p in paths:
        p = regular_file(p)
        if p.stat().st_size == 0:
            raise PrefvalError(f"{p}: empty file")
        out.append(p)
    return out


def locate_decode_error(paths: list[str | Path], exc: UnicodeDecodeError) -> PrefvalError:
    """A one-line error for a file that is not UTF-8: the first file that fails to decode, with line and byte
    (storage.textfile.not_utf8)."""
    for p in paths:
        located = not_utf8(p)
        if located is not None:
            return located
    return PrefvalError(f"input is not UTF-8 text ({exc.reason})")


def check_mapped_columns(path: str | Path, mapped: list[tuple[str, str]], columns: list[str],
                         is_csv: bool) -> None:
    """Refuse a field mapping (--map FIELD=COLUMN, a mapping file) whose column the file does not have.

    mapped: (field, column) pairs; columns: the CSV header, or for JSONL every key any record has, in order of first
    appearance. Raises PrefvalError, one line naming the file, the column, the field it was mapped to and the
    columns (CSV) or fields (JSONL) the file has."""
    have = set(columns)
    for field, column in mapped:
        if column not in have:
            what = "column" if is_csv else "field"
            raise PrefvalError(f"{path}: no {what} {column!r} (mapped to {field!r}); the file's {what}s: "
                               f"{', '.join(repr(c) for c in columns) or '(none)'}")


def validate(model: type[BaseModel], data: Any, path: Path | str, record: str, prefix: str = "") -> Any:
    """model.model_validate(data), turning the first pydantic error into InputError(path, record, field)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "(record)"
        raise InputError(str(path), record, prefix + loc, err["msg"]) from None


def load_yaml_or_json(path: str | Path, what: str = "file") -> Any:
    """Parse a small settings file: .json as JSON, anything else as YAML (safe_load).

    what: how the file is named in errors ("rubric file", "mapping file"). Raises PrefvalError (one line naming
    the file) when it is missing, not a regular file, or does not parse.
    """
    p = regular_file(path, what)
    is_json = p.suffix.lower() == ".json"
    try:
        text = read_text(p)
        if is_json:
            import json

            return json.loads(text)
        import yaml

        return yaml.safe_load(text)
    except PrefvalError:  # storage.textfile.NotUtf8Error: names the file, line and byte
        raise
    except Exception as exc:  # yaml.YAMLError / json.JSONDecodeError
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PrefvalError(f"{p}: not valid {'JSON' if is_json else 'YAML'}: {first}") from None


def duplicate_options(items: list[ItemIn]) -> list[tuple[str, int, int]]:
    """MCQ items with two options of the same text (compared with whitespace runs collapsed, case ignored).

    Returns one (external_id, i, j) per such item, i < j being the 0-based indexes of its first identical pair, in
    the items' order. Such an item cannot be answered reliably: an annotator who picks the copy of the key is
    scored wrong, and two annotators who mean the same text disagree. Raises nothing.
    """
    out = []
    for item in items:
        if item.kind != "mcq":
            continue
        options = item.payload.get("options") or []
        first: dict[str, int] = {}
        for j, text in enumerate(options):
            key = " ".join(str(text).split()).casefold()
            if key in first:
                out.append((item.external_id, first[key], j))
                break
            first[key] = j
    return out
