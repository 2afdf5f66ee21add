"""HorizonBench benchmark/sample rows (JSONL, or Parquet as on the HF hub: ``.parquet`` files via pandas).

A row: id, generator, user_id, conversation (one long string), correct_letter "A".."E", options (a JSON string
of 5 ``{letter, value, option}``), has_evolved, preference_domain, distractor_letter ("" if none) and
preference_evolution (a JSON string, "null" when the preference never changed).

Each row becomes one 5-option "mcq" item. HorizonBench has no question text of its own (the options are whole
assistant replies), so every item carries the fixed QUESTION below. options = the option texts in letter order;
correct_index / distractor_index come from the letters; topic = preference_domain; metadata holds generator,
user_id, has_evolved, preference_domain, preference_evolution (parsed), option_values (the preference value each
option expresses, in letter order) and source_id (the row id). External id: ``f"{generator}/{id}"`` (the same
row id could in principle come from two generators; user_id uses the same "generator/..." form).

The conversation is parsed into messages and stored once per distinct string as a context whose external id is
the sha256 hex of the string; items see all of it (context_end = number of messages). Parsing, line by line: a
first line "Conversation History:" is dropped; "Date: ..." opens a session with a "system" message, and a
"Scenario: ..." line right after it joins that message; "User: " / "Assistant: " open a "user" / "assistant"
turn; any other line (blank ones too) continues the previous message. Text before any header or turn becomes a
"system" message. Message text is stripped of surrounding blank space.

Original records (for `prefval release`): each item points to its row without the conversation (``row_src``),
to the conversation string (``conversation_src``, kept once however many rows share it), to the kind of file it
came from (``file``: "jsonl" or "parquet") and, for Parquet, to the file's Arrow schema (``schema_src``);
release_files writes the released rows back as JSONL and/or Parquet with the same columns.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from storage.errors import InputError
from storage.importers.base import Parsed, check_paths, file_sha256, validate
from storage.importers.generic import input_error_from, iter_jsonl, json_problem, read_parquet_rows
from storage.importers.original import (
    ReleaseFile, jsonl_or_parquet_files, load_record, parquet_schema_text, record_text,
)
from storage.models import ContextIn, ItemIn, ItemSource, Message
from storage.payloads import McqPayload

FORMAT = "horizonbench"
QUESTION = "Given everything this user has said so far, which reply suits their preferences as they stand now?"
LETTERS = "ABCDE"


class HorizonRow(BaseModel):
    """One benchmark row with its JSON-string fields still as strings (or already parsed values)."""

    id: str = Field(min_length=1)
    generator: str = Field(min_length=1)
    user_id: str = Field(min_length=1)
    conversation: str = Field(min_length=1)
    correct_letter: Literal["A", "B", "C", "D", "E"]
    options: str | list
    has_evolved: bool
    preference_domain: str
    distractor_letter: Literal["", "A", "B", "C", "D", "E"] | None = ""
    preference_evolution: str | dict | None = None

    @field_validator("correct_letter", "distractor_letter", mode="before")
    @classmethod
    def _strip(cls, v: Any) -> Any:
        return v.strip() if isinstance(v, str) else v


class HorizonOption(BaseModel):
    """One entry of the options list: a reply expressing one value of the preference."""

    letter: Literal["A", "B", "C", "D", "E"]
    value: Any = None
    option: str = Field(min_length=1)


def parse_conversation(text: str) -> list[Message]:
    """The flat conversation string as messages (roles system/user/assistant), by the rules in the module docstring."""
    msgs: list[list[str]] = []  # [role, text]
    header_open = False
    for n, line in enumerate(text.splitlines()):
        if n == 0 and line.strip() == "Conversation History:":
            continue
        if line.startswith("Date:"):
            msgs.append(["system", line.strip()])
            header_open = True
        elif line.startswith("Scenario:") and header_open:
            msgs[-1][1] += "\n" + line.strip()
        elif line.startswith("User:"):
            msgs.append(["user", line[len("User:"):].strip()])
            header_open = False
        elif line.startswith("Assistant:"):
            msgs.append(["assistant", line[len("Assistant:"):].strip()])
            header_open = False
        elif msgs:
            msgs[-1][1] += "\n" + line
        elif line.strip():
            msgs.append(["system", line])
    return [Message(role=r, content=t.strip()) for r, t in msgs if t.strip()]


def _rows(path: Path):
    if path.suffix.lower() == ".parquet":
        for i, row in enumerate(read_parquet_rows(path)):
            yield f"row {i}", row
    else:
        for lineno, obj in iter_jsonl(path):
            yield f"line {lineno}", obj


def _json_field(raw: Any, path: Path, record: str, field: str) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(str(path), record, field, json_problem(exc)) from None


def read(paths: list[str | Path], options: dict | None = None) -> Parsed:
    """Read HorizonBench JSONL/Parquet files into 5-option mcq items plus one context per distinct conversation.

    Raises InputError (file, record, field) for a bad row: options not valid JSON or not 5 entries lettered A-E,
    a letter outside A-E, preference_evolution not valid JSON, a repeated external id; PrefvalError for a missing
    or unreadable file.
    """
    ps = check_paths(paths)
    parsed = Parsed(file_hash=file_sha256(ps), source_path=",".join(str(p) for p in ps))
    contexts: dict[str, ContextIn] = {}
    seen: set[str] = set()
    for p in ps:
        is_parquet = p.suffix.lower() == ".parquet"
        schema_sid = parsed.add_source(parquet_schema_text(p)) if is_parquet else None
        for record, obj in _rows(p):
            try:
                row = HorizonRow.model_validate(obj)
            except ValidationError as exc:
                raise input_error_from(exc, p, record) from None
            raw_opts = _json_field(row.options, p, record, "options")
            if not isinstance(raw_opts, list) or len(raw_opts) != len(LETTERS):
                got = len(raw_opts) if isinstance(raw_opts, list) else type(raw_opts).__name__
                raise InputError(str(p), record, "options", f"expected a list of 5 options, got {got}")
            opts = [validate(HorizonOption, o, p, record, prefix=f"options[{i}].") for i, o in enumerate(raw_opts)]
            opts.sort(key=lambda o: o.letter)
            if "".join(o.letter for o in opts) != LETTERS:
                raise InputError(str(p), record, "options", "letters must be A, B, C, D and E, once each")
            evolution = _json_field(row.preference_evolution, p, record, "preference_evolution")
            ext = f"{row.generator}/{row.id}"
            if ext in seen:
                raise InputError(str(p), record, "id", f"repeats the row {ext!r}")
            seen.add(ext)
            cid = hashlib.sha256(row.conversation.encode("utf-8")).hexdigest()
            if cid not in contexts:
                msgs = parse_conversation(row.conversation)
                if not msgs:
                    raise InputError(str(p), record, "conversation", "holds no messages")
                contexts[cid] = ContextIn(external_id=cid, messages=msgs)
            payload = McqPayload(
                question=QUESTION,
                options=[o.option for o in opts],
                correct_index=LETTERS.index(row.correct_letter),
                distractor_index=LETTERS.index(row.distractor_letter) if row.distractor_letter else None,
                topic=row.preference_domain or None,
                metadata={"generator": row.generator, "user_id": row.user_id, "has_evolved": row.has_evolved,
                          "preference_domain": row.preference_domain, "preference_evolution": evolution,
                          "option_values": [o.value for o in opts], "source_id": row.id},
            )
            source = {"row_src": parsed.add_source(record_text({**obj, "conversation": None})),
                      "conversation_src": parsed.add_source(row.conversation),
                      "file": "parquet" if is_parquet else "jsonl"}
            if schema_sid:
                source["schema_src"] = schema_sid
            parsed.items.append(ItemIn(external_id=ext, kind="mcq", payload=payload.model_dump(exclude_none=True),
                                       context_external_id=cid, context_end=len(contexts[cid].messages),
                                       source=source))
    parsed.contexts = list(contexts.values())
    return parsed


def release_files(entries: list[ItemSource], texts: dict[str, str]) -> list[ReleaseFile]:
    """The released rows with every original column (the conversation string put back), in import order: rows
    imported from JSONL as ``.horizonbench.jsonl``, rows imported from Parquet as ``.horizonbench.parquet`` with
    the first such file's column types."""
    by_file: dict[str, list[dict]] = {"jsonl": [], "parquet": []}
    schema = None
    for e in entries:
        row = load_record(texts, e.source["row_src"])
        row["conversation"] = texts[e.source["conversation_src"]]
        by_file[e.source.get("file", "jsonl")].append(row)
        if schema is None and e.source.get("schema_src"):
            schema = texts.get(e.source["schema_src"])
    return jsonl_or_parquet_files("horizonbench", by_file, schema, FORMAT)
