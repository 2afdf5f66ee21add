"""Generic JSONL and CSV records mapped onto any item kind (``prefval import jsonl|csv``).

One module serves both formats; options["format"] ("jsonl" or "csv") says which. Each record (a JSON object per
line, or a CSV row under a header) becomes one item of the kind options["kind"] (else the mapping file's ``kind``,
else "mcq"), whose payload model comes from storage.payloads.PAYLOADS.

Field mapping (payload field -> record field):
- by default every payload field takes the record field of the same name;
- a mapping file (options["mapping"], YAML or JSON: ``{kind: mcq, id: qid, fields: {question: prompt}}``) and then
  ``--map FIELD=COLUMN`` options (options["map"], later ones win) rename fields;
- ``options`` may map to several columns, comma-separated (``--map options=opt_a,opt_b,opt_c,opt_d``): the option
  texts are those cells in that order; empty cells may only come at the end (they are dropped, so a 5-column
  layout can hold rows with 4 options). Mapped to one column, ``options`` is a list (JSONL) or a cell holding a
  JSON list or a Python list literal (CSV).
- Record fields not used by the mapping (and not the id) go to payload ``metadata``; Parsed.kept_in_metadata names
  each such field once per file with the number of records that had it, and, when its name reads as an answer
  (ANSWER_NAMES: ``answer``, ``label``, ``gold`` ...), the kind's answer-key field (KEY_FIELDS) it was probably
  meant for (`prefval import` prints one warning line per field).

Index fields (correct_index, distractor_index) accept, case-insensitively:
a 0-based integer (JSON int, or a cell of digits: "2" is the third option); a single letter, bare or in
parentheses ("A", "b", "(c)") counting A as 0; failing both, text equal to exactly one option. Empty means none.

In CSV cells, list/dict fields (snippet, messages, reference_scores, metadata) hold JSON, candidate_label holds
true/false/yes/no/1/0, and an empty cell means "absent".

External id: the field named by options["id_field"] (--id-field), else the mapping's ``id``, else the record's
``id`` field when it has one, else the record number (CSV row number with the header as row 1; JSONL line number).

Original records (for `prefval release`): each item points to its record as read, with its original field
names and order (``record_src``; CSV rows as {column: cell}) and the kind of file (``file``: "jsonl" or
"csv"); release_files writes the released records back as JSONL or CSV, which this importer reads again with
the same options (--kind, --map, --mapping, --id-field).

This module also holds the small readers the other importers share: load_json, iter_jsonl, read_parquet_rows.
"""
from __future__ import annotations

import ast
import csv
import json
import re
from pathlib import Path
from typing import Any, Iterator

from pydantic import ValidationError

from storage.errors import InputError, PrefvalError
from storage.importers.base import (KeptInMetadata, Parsed, check_mapped_columns, check_paths, file_sha256,
                                    load_yaml_or_json)
from storage.importers.original import ReleaseFile, csv_bytes, jsonl_bytes, load_record, record_text, union_header
from storage.models import ItemIn, ItemSource
from storage.payloads import PAYLOADS
from storage.textfile import open_text, read_text

FORMAT = "jsonl"  # this module also serves FORMAT "csv", chosen by options["format"]
FORMATS = ("jsonl", "csv")
INDEX_FIELDS = ("correct_index", "distractor_index")
JSON_FIELDS = ("options", "snippet", "messages", "reference_scores", "metadata")
BOOL_FIELDS = ("candidate_label",)
#: record field names that read as an item's answer or gold label (compared case-insensitively, "-" and " " as "_")
ANSWER_NAMES = frozenset({"answer", "answers", "answer_key", "key", "gold", "gold_label", "gold_answer", "label",
                          "correct", "correct_answer", "correct_option", "correct_choice", "correct_letter",
                          "target", "ground_truth", "truth", "solution"})
#: the payload field of each kind that holds its answer key (kinds without one are not listed)
KEY_FIELDS = {"mcq": "correct_index", "gold_candidate": "candidate_label"}
_LETTER = re.compile(r"^\(?\s*([A-Za-z])\s*\)?$")
_TRUE = {"true", "yes", "1", "t", "y"}
_FALSE = {"false", "no", "0", "f", "n"}


# ---- readers shared by the importers ------------------------------------------------------------------------
def json_problem(exc: json.JSONDecodeError) -> str:
    """A decoder error as one readable phrase, e.g. "invalid JSON: Expecting value at column 5"."""
    where = "column" if exc.msg.endswith(" at") else "at column"
    return f"invalid JSON: {exc.msg} {where} {exc.colno}"


def load_json(path: Path) -> Any:
    """The parsed content of a JSON file. Raises InputError (record "line N", field '(json)') when it is invalid."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(str(path), f"line {exc.lineno}", "(json)", json_problem(exc)) from None


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSONL file, numbered from 1.

    Raises InputError with field '(json)' for a line that is not JSON and '(record)' for one that is not an object.
    """
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(str(path), f"line {lineno}", "(json)", json_problem(exc)) from None
            if not isinstance(obj, dict):
                raise InputError(str(path), f"line {lineno}", "(record)",
                                 f"expected a JSON object, got {type(obj).__name__}")
            yield lineno, obj


def _native(value: Any) -> Any:
    """numpy scalars and arrays (as pandas hands them out) -> plain Python values, recursively."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return _native(value.tolist())
    if isinstance(value, list):
        return [_native(v) for v in value]
    if isinstance(value, dict):
        return {k: _native(v) for k, v in value.items()}
    return value


def read_parquet_rows(path: Path) -> list[dict]:
    """The rows of a Parquet file as plain dicts (0-based order), read with pandas.read_parquet.

    Raises PrefvalError when the file cannot be read or pandas has no working Parquet engine (pyarrow).
    """
    try:
        import pandas as pd
        df = pd.read_parquet(path)
    except ImportError as exc:
        raise PrefvalError(f"{path}: reading Parquet needs a working pyarrow ({str(exc).splitlines()[0]})") from None
    except Exception as exc:  # pyarrow raises its own error types for damaged files
        raise PrefvalError(f"{path}: not a readable Parquet file ({type(exc).__name__})") from None
    return [_native(r) for r in df.to_dict(orient="records")]


def input_error_from(exc: ValidationError, path: Path, record: str, rename: dict[str, str] | None = None,
                     prefix: str = "") -> InputError:
    """The first pydantic error as an InputError; rename maps a model field to the record field it came from."""
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"]]
    if loc and rename and loc[0] in rename:
        loc[0] = rename[loc[0]]
    return InputError(str(path), record, prefix + (".".join(loc) or "(record)"), err["msg"])


# ---- value conversion -----------------------------------------------------------------------------------------
def parse_index(value: Any, options: list[str], path: Path, record: str, field: str) -> int | None:
    """An option index from an int, a digit string, a letter ("A", "b", "(c)") or an option's exact text.

    Returns None for None/"". Raises InputError naming field when the value fits none of these rules.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise InputError(str(path), record, field, f"expected an index or a letter, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        s = value.strip()
        if s.isdigit():
            return int(s)
        m = _LETTER.match(s)
        if m:
            return ord(m.group(1).upper()) - ord("A")
        hits = [i for i, o in enumerate(options) if o == s]
        if len(hits) == 1:
            return hits[0]
    raise InputError(str(path), record, field,
                     f"expected a 0-based index, a letter or an option's text, got {value!r}")


def _parse_list_cell(raw: str, path: Path, record: str, field: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise InputError(str(path), record, field, "not a JSON list or a Python list literal") from None


def _parse_bool_cell(raw: str, path: Path, record: str, field: str) -> bool:
    s = raw.strip().lower()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    raise InputError(str(path), record, field, f"expected true or false, got {raw!r}")


# ---- mapping ------------------------------------------------------------------------------------------------
def load_mapping(options: dict) -> tuple[str, str | None, dict[str, str]]:
    """(kind, id field or None, {payload field: record field(s)}) from the mapping file, --map and --kind.

    Raises PrefvalError for an unreadable mapping file, a malformed --map, or an unknown kind or payload field.
    """
    kind, id_field, fields = None, None, {}
    if options.get("mapping"):
        mpath = Path(options["mapping"])
        spec = load_yaml_or_json(mpath, "file")
        if not isinstance(spec, dict) or set(spec) - {"kind", "id", "fields"}:
            raise PrefvalError(f"{mpath}: expected a mapping with keys kind, id, fields")
        if not isinstance(spec.get("fields", {}), dict):
            raise PrefvalError(f"{mpath}: 'fields' must map item fields to record fields")
        kind, id_field = spec.get("kind"), spec.get("id")
        fields = {str(k): str(v) for k, v in (spec.get("fields") or {}).items()}
    for m in options.get("map") or []:
        name, sep, col = m.partition("=")
        if not sep or not name.strip() or not col.strip():
            raise PrefvalError(f"--map {m!r}: expected FIELD=COLUMN")
        fields[name.strip()] = col.strip()
    kind = options.get("kind") or kind or "mcq"
    if kind not in PAYLOADS:
        raise PrefvalError(f"unknown kind '{kind}' (known: {', '.join(sorted(PAYLOADS))})")
    unknown = [f for f in fields if f not in PAYLOADS[kind].model_fields]
    if unknown:
        raise PrefvalError(f"kind '{kind}' has no field '{unknown[0]}' "
                           f"(fields: {', '.join(PAYLOADS[kind].model_fields)})")
    id_field = options.get("id_field") or id_field
    return kind, id_field, fields


# ---- records ----------------------------------------------------------------------------------------------
def _records(path: Path, fmt: str, fields: dict[str, str] | None = None) -> Iterator[tuple[str, dict, bool]]:
    """(record label, record, came-from-CSV) for each record of a file. fields: {payload field: column(s)} of the
    mapping; a CSV whose header lacks a mapped column is refused before its first row (check_mapped_columns)."""
    if fmt == "csv":
        with open_text(path) as fh:
            reader = csv.DictReader(fh)
            if not reader.fieldnames:
                return
            if fields:
                check_mapped_columns(path, [(f, c.strip()) for f, src in fields.items()
                                            for c in (src.split(",") if f == "options" else [src])],
                                     list(reader.fieldnames), True)
            for rowno, row in enumerate(reader, start=2):
                if None in row:
                    raise InputError(str(path), f"row {rowno}", "(row)", "more cells than columns (broken quoting?)")
                yield f"row {rowno}", row, True
    else:
        for lineno, obj in iter_jsonl(path):
            yield f"line {lineno}", obj, False


def _build_payload(kind: str, rec: dict, fields: dict[str, str], used: set[str], is_csv: bool,
                   path: Path, record: str, kept: list[str] | None = None) -> dict:
    """The payload of one record (the module docstring's rules); the names of the record fields kept in metadata
    are appended to kept when given. Raises InputError (file, record, field)."""
    model = PAYLOADS[kind]
    data: dict[str, Any] = {}
    rename: dict[str, str] = {}
    for name in model.model_fields:
        src = fields.get(name, name)
        cols = [c.strip() for c in src.split(",")] if name == "options" and "," in src else [src]
        if len(cols) > 1:
            missing = [c for c in cols if c not in rec]
            if missing:
                raise InputError(str(path), record, missing[0], f"mapped column is missing (the record has: "
                                                                f"{', '.join(map(str, rec))})")
            used.update(cols)
            cells = [rec[c] for c in cols]
            while cells and (cells[-1] is None or str(cells[-1]).strip() == ""):
                cells.pop()
            if any(c is None or str(c).strip() == "" for c in cells):
                raise InputError(str(path), record, src, "an empty option cell comes before a filled one")
            data[name] = [str(c) for c in cells]
            rename[name] = src
            continue
        if src not in rec:
            if name in fields:
                raise InputError(str(path), record, src, f"mapped field is missing (the record has: "
                                                         f"{', '.join(map(str, rec))})")
            continue
        used.add(src)
        value = rec[src]
        rename[name] = src
        if is_csv and isinstance(value, str):
            if value == "":
                continue
            if name in JSON_FIELDS:
                value = _parse_list_cell(value, path, record, src)
            elif name in BOOL_FIELDS:
                value = _parse_bool_cell(value, path, record, src)
        if value is None:
            continue
        data[name] = value
    for name in INDEX_FIELDS:
        if name in data:
            opts = data.get("options") if isinstance(data.get("options"), list) else []
            idx = parse_index(data[name], [str(o) for o in opts], path, record, rename.get(name, name))
            given = data[name].strip() if isinstance(data[name], str) else None
            if idx is not None and opts and not 0 <= idx < len(opts):  # said here, as given, naming the field
                last = chr(ord('A') + len(opts) - 1)
                said = (f"letter {given!r} is option {idx + 1}," if given and _LETTER.match(given)
                        else f"{data[name]!r} is")
                raise InputError(str(path), record, rename.get(name, name),
                                 f"{said} beyond the {len(opts)} options (0 to {len(opts) - 1}, or A to {last})"
                                 if idx >= 0 else f"{data[name]!r} is not an option (0 to {len(opts) - 1}, or A "
                                 f"to {last})")
            if idx is None:
                del data[name]
            else:
                data[name] = idx
    extra = {k: v for k, v in rec.items() if k not in used and not (is_csv and v == "")}
    if kept is not None:
        kept.extend(extra)
    if extra:
        meta = data.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            raise InputError(str(path), record, rename.get("metadata", "metadata"), "expected an object")
        data["metadata"] = {**extra, **(meta or {})}
    try:
        return model.model_validate(data).model_dump(exclude_none=True)
    except ValidationError as exc:
        raise input_error_from(exc, path, record, rename) from None


def answer_field_for(kind: str, name: str) -> str | None:
    """The kind's answer-key field (KEY_FIELDS) when a record field called name reads as an answer (ANSWER_NAMES),
    else None: answer_field_for("mcq", "Answer") == "correct_index"; answer_field_for("persona_record", "answer")
    is None (no key field)."""
    key = KEY_FIELDS.get(kind)
    if key is None or not isinstance(name, str):
        return None
    return key if re.sub(r"[\s-]+", "_", name.strip().lower()) in ANSWER_NAMES else None


def _kind_hint(rec: dict, is_csv: bool, path: Path, record: str) -> str:
    """What to pass when a record read as the default kind (mcq, no --kind given) does not fit it: the kinds whose
    required fields the record has, else the list of kinds and --map."""
    fits = []
    for name in sorted(PAYLOADS):
        if name == "mcq":
            continue
        try:
            _build_payload(name, rec, {}, set(), is_csv, path, record)
        except (InputError, PrefvalError):
            continue
        fits.append(name)
    if fits:
        return (f"no --kind was given, so records were read as mcq items; this record fits "
                f"{' or '.join(fits)}: pass --kind {' or --kind '.join(fits)}")
    return (f"no --kind was given, so records were read as mcq items; pass --kind KIND (one of "
            f"{', '.join(sorted(PAYLOADS))}) and map differently named fields with --map FIELD=COLUMN")


def read(paths: list[str | Path], options: dict | None = None) -> Parsed:
    """Read JSONL or CSV records (options["format"]) into items of one kind; see the module docstring for rules.

    options: format, kind, mapping (file path), map (list of "FIELD=COLUMN"), id_field; all optional.
    Raises InputError (file, record, field) on the first bad record, including a repeated external id;
    PrefvalError for a missing file, a bad mapping or an unknown kind.
    """
    options = dict(options or {})
    fmt = options.get("format") or FORMAT
    if fmt not in FORMATS:
        raise PrefvalError(f"generic importer: unknown format '{fmt}' (expected jsonl or csv)")
    kind, id_field, fields = load_mapping(options)
    kind_from_mapping = bool(options.get("mapping")) and kind != "mcq"
    ps = check_paths(paths)
    parsed = Parsed(file_hash=file_sha256(ps), source_path=",".join(str(p) for p in ps))
    seen: dict[str, str] = {}
    for p in ps:
        kept_counts: dict[str, int] = {}  # field kept in metadata -> records of this file, in the order first met
        unkeyed: dict[str, int] = {}  # of those, the records whose item got no answer key (KEY_FIELDS)
        for record, rec, is_csv in _records(p, fmt, fields):
            used: set[str] = set()
            if id_field:
                if rec.get(id_field) in (None, ""):
                    raise InputError(str(p), record, id_field, "id field is missing or empty")
                ext = str(rec[id_field])
                used.add(id_field)
            elif rec.get("id") not in (None, ""):
                ext = str(rec["id"])
                used.add("id")
            else:
                ext = record.split()[-1] if len(ps) == 1 else f"{p.name}:{record.split()[-1]}"
            if ext in seen:
                raise InputError(str(p), record, id_field or "id", f"duplicate id '{ext}' (first at {seen[ext]})")
            seen[ext] = record if len(ps) == 1 else f"{p.name} {record}"
            kept: list[str] = []
            try:
                payload = _build_payload(kind, rec, fields, used, is_csv, p, record, kept)
            except InputError as exc:
                if options.get("kind") or kind_from_mapping or fields or exc.field in INDEX_FIELDS:
                    raise  # (an option index out of range: the record is an mcq item, its key is wrong)
                raise InputError(exc.path, exc.record, exc.field, exc.problem + "; " + _kind_hint(rec, is_csv, p, record)) \
                    from None
            parsed.items.append(ItemIn(external_id=ext, kind=kind, payload=payload,
                                       source={"record_src": parsed.add_source(record_text(rec)),
                                               "file": "csv" if is_csv else "jsonl"}))
            key = KEY_FIELDS.get(kind)
            for name in kept:
                kept_counts[name] = kept_counts.get(name, 0) + 1
                if key is not None and payload.get(key) is None:  # the item got no key: the field may be it
                    unkeyed[name] = unkeyed.get(name, 0) + 1
        parsed.kept_in_metadata.extend(
            KeptInMetadata(str(p), name, n, kind, answer_field_for(kind, name) if unkeyed.get(name) else None,
                           unkeyed=unkeyed.get(name, 0),
                           replaced_by=fields[name] if fields.get(name) not in (None, name) else None)
            for name, n in kept_counts.items())
    return parsed


def release_files(entries: list[ItemSource], texts: dict[str, str]) -> list[ReleaseFile]:
    """The released records as imported, in import order: from JSONL as ``.records.jsonl`` (each object with its
    keys in order), from CSV as ``.records.csv`` (the columns of the imported rows, in order)."""
    by_file: dict[str, list[dict]] = {"jsonl": [], "csv": []}
    for e in entries:
        by_file[e.source.get("file", "jsonl")].append(load_record(texts, e.source["record_src"]))
    out = []
    if by_file["jsonl"]:
        out.append(ReleaseFile(".records.jsonl", jsonl_bytes(by_file["jsonl"]), len(by_file["jsonl"]), "jsonl"))
    if by_file["csv"]:
        rows = by_file["csv"]
        out.append(ReleaseFile(".records.csv", csv_bytes(rows, union_header(rows)), len(rows), "csv"))
    return out
