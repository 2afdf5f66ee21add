"""PersonaMem (v1) questions_*.csv and, optionally, shared_contexts_*.jsonl.

questions: persona_id, question_id, question_type, topic, context/distance columns, user_question_or_message,
correct_answer "(a)".."(d)", all_options (a Python-literal list of 4 strings, read with ast.literal_eval),
shared_context_id, end_index_in_shared_context. Each row becomes one "mcq" item whose external id is question_id;
it sees context[:end_index_in_shared_context] of its shared context.
contexts: one JSON object per line, {context_id: [{role, content}, ...]}.

Original records (for `prefval release`): each item points to its CSV row as {column: cell} (``row_src``), each
context to its line's object (``record_src``); release_files writes the released questions' rows with their
columns in order and the contexts they reference, and read() takes both files again.
"""
from __future__ import annotations

import ast
import csv
import json
import re
from pathlib import Path

from pydantic import BaseModel, Field, field_validator

from storage.errors import InputError
from storage.importers.base import Parsed, check_paths, file_sha256, validate
from storage.importers.original import ReleaseFile, csv_bytes, jsonl_bytes, load_record, record_text, union_header
from storage.models import ContextIn, ItemIn, ItemSource, Message
from storage.payloads import McqPayload
from storage.textfile import open_text

FORMAT = "personamem"
REQUIRED = ["persona_id", "question_id", "question_type", "topic", "user_question_or_message", "correct_answer",
            "all_options", "shared_context_id", "end_index_in_shared_context"]
INT_COLUMNS = ["context_length_in_tokens", "context_length_in_letters", "distance_to_ref_in_blocks",
               "distance_to_ref_in_tokens", "num_irrelevant_tokens"]
_PREFIX = re.compile(r"^\(([a-j])\)\s*")


class QuestionRow(BaseModel):
    """One row of questions_*.csv, as strings from the CSV reader converted to their types."""

    persona_id: int
    question_id: str = Field(min_length=1)
    question_type: str = Field(min_length=1)
    topic: str
    user_question_or_message: str = Field(min_length=1)
    correct_answer: str = Field(pattern=r"^\([a-d]\)$")
    shared_context_id: str = Field(min_length=1)
    end_index_in_shared_context: int = Field(ge=0)
    context_length_in_tokens: int | None = None
    context_length_in_letters: int | None = None
    distance_to_ref_in_blocks: int | None = None
    distance_to_ref_in_tokens: int | None = None
    num_irrelevant_tokens: int | None = None
    distance_to_ref_proportion_in_context: str | None = None

    @field_validator("correct_answer", mode="before")
    @classmethod
    def _strip(cls, v: str) -> str:
        return v.strip() if isinstance(v, str) else v


def parse_options(raw: str, path: Path, record: str) -> list[str]:
    """all_options -> 4 option texts without their "(a) " prefixes. Uses ast.literal_eval, never eval."""
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
        raise InputError(str(path), record, "all_options",
                         f"not a Python list literal ({type(exc).__name__})") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(str(path), record, "all_options", "expected a list of strings")
    if len(value) != 4:
        raise InputError(str(path), record, "all_options", f"expected 4 options, got {len(value)}")
    return [_PREFIX.sub("", v.strip(), count=1) for v in value]


def _read_questions(path: Path, parsed: Parsed) -> list[ItemIn]:
    items = []
    with open_text(path) as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(str(path), "header", missing[0], "required column is missing")
        for rowno, row in enumerate(reader, start=2):
            record = f"row {rowno}"
            if None in row:  # more cells than header columns: broken quoting
                raise InputError(str(path), record, "(row)", "more cells than columns (broken quoting?)")
            data = {k: (v if v != "" else None) for k, v in row.items() if k != "all_options"}
            for k in REQUIRED:
                if data.get(k) is None and k != "all_options":
                    raise InputError(str(path), record, k, "empty value")
            q = validate(QuestionRow, data, path, record)
            options = parse_options(row["all_options"], path, record)
            payload = McqPayload(
                question=q.user_question_or_message,
                options=options,
                correct_index="abcd".index(q.correct_answer[1]),
                question_type=q.question_type,
                topic=q.topic,
                metadata={k: v for k, v in q.model_dump().items()
                          if k not in ("user_question_or_message", "correct_answer", "question_type", "topic")},
            )
            items.append(ItemIn(external_id=q.question_id, kind="mcq", payload=payload.model_dump(exclude_none=True),
                                context_external_id=q.shared_context_id, context_end=q.end_index_in_shared_context,
                                source={"row_src": parsed.add_source(record_text(row))}))
    return items


def _read_contexts(path: Path, parsed: Parsed) -> list[ContextIn]:
    out = []
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            record = f"line {lineno}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(str(path), record, "(json)", f"invalid JSON: {exc.msg}") from None
            if not isinstance(obj, dict) or len(obj) != 1:
                raise InputError(str(path), record, "(object)", "expected one {context_id: [messages]} object")
            (cid, messages), = obj.items()
            if not isinstance(messages, list):
                raise InputError(str(path), record, cid, "expected a list of {role, content} messages")
            msgs = [validate(Message, m, path, record, prefix=f"{cid}[{i}].") for i, m in enumerate(messages)]
            out.append(ContextIn(external_id=cid, messages=msgs,
                                 source={"record_src": parsed.add_source(record_text(obj))}))
    return out


def read(paths: list[str | Path], options: dict | None = None) -> Parsed:
    """Read question CSVs and context JSONL files (told apart by extension: .csv / .jsonl).

    Raises InputError (file, record, field) on the first bad record; PrefvalError for a missing file.
    """
    ps = check_paths(paths)
    parsed = Parsed(file_hash=file_sha256(ps), source_path=",".join(str(p) for p in ps))
    for p in ps:
        if p.suffix.lower() in (".jsonl", ".json"):
            parsed.contexts.extend(_read_contexts(p, parsed))
        else:
            parsed.items.extend(_read_questions(p, parsed))
    return parsed


def release_files(entries: list[ItemSource], texts: dict[str, str]) -> list[ReleaseFile]:
    """The released questions as a questions CSV (the imported columns in their order, rows in import order) and,
    when they have contexts, a shared-contexts JSONL holding each referenced context once (in order of first
    reference). A context imported without its original record is left out and named in notes."""
    rows, contexts = [], {}
    for e in entries:
        rows.append(load_record(texts, e.source["row_src"]))
        cid = e.context_external_id
        if cid and cid not in contexts:
            contexts[cid] = load_record(texts, (e.context_source or {}).get("record_src"))
    missing = [cid for cid, c in contexts.items() if c is None]
    out = [ReleaseFile(".personamem.questions.csv", csv_bytes(rows, union_header(rows)), len(rows), FORMAT,
                       {"contexts_without_original_record": missing} if missing else {})]
    ctx = [c for c in contexts.values() if c is not None]
    if ctx:
        out.append(ReleaseFile(".personamem.shared_contexts.jsonl", jsonl_bytes(ctx), len(ctx), FORMAT))
    return out
