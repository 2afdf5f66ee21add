"""The generic JSONL/CSV importer and the importers' shared readers on bad input: the exact one-line error (file,
record, field and problem), and the values that parsing rules give on good input (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from storage.errors import InputError, PrefvalError
from storage.importers import generic
from storage.importers.base import check_paths, file_sha256, load_yaml_or_json, locate_decode_error, validate
from storage.models import Message


def _write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    (p.write_bytes if isinstance(text, bytes) else p.write_text)(text)
    return p


def _jsonl(tmp_path: Path, *records, name: str = "in.jsonl") -> Path:
    return _write(tmp_path, name, "".join(json.dumps(r) + "\n" for r in records))


def _error(exc_type, fn, *args, **kwargs) -> str:
    with pytest.raises(exc_type) as info:
        fn(*args, **kwargs)
    assert type(info.value) is exc_type
    return str(info.value)


MCQ = {"question": "Which?", "options": ["red", "green", "blue"]}


# ---- shared readers (storage/importers/base.py) ---------------------------------------------------------------
def test_check_paths_names_the_problem(tmp_path):
    assert _error(PrefvalError, check_paths, [tmp_path]) == f"{tmp_path}: not a regular file (a directory)"
    assert _error(PrefvalError, check_paths, [tmp_path / "gone.csv"]) == f"{tmp_path / 'gone.csv'}: no such file"
    empty = _write(tmp_path, "empty.csv", "")
    assert _error(PrefvalError, check_paths, [empty]) == f"{empty}: empty file"
    one = _write(tmp_path, "one.csv", "x")
    assert check_paths([str(one)]) == [one]


def test_file_sha256_covers_every_file_in_order(tmp_path):
    import hashlib

    a, b = _write(tmp_path, "a", b"abc"), _write(tmp_path, "b", b"def")
    assert file_sha256([a, b]) == hashlib.sha256(b"abcdef").hexdigest()
    assert file_sha256([b, a]) == hashlib.sha256(b"defabc").hexdigest()


def test_locate_decode_error_finds_file_line_and_byte(tmp_path):
    good = _write(tmp_path, "good.jsonl", '{"a": 1}\n')
    bad = _write(tmp_path, "bad.jsonl", b'{"a": 1}\n{"b": "\xe9"}\n')
    exc = UnicodeDecodeError("utf-8", b"\xe9", 0, 1, "invalid continuation byte")
    err = locate_decode_error([tmp_path / "missing", good, bad], exc)
    # byte 0xe9 sits at offset 9 + 7 = 16 (second line: '{"b": "' is 7 bytes)
    assert isinstance(err, InputError)
    assert str(err) == f"{bad}: line 2: field '(encoding)': not UTF-8 text (byte 0xe9 at offset 16)"
    fallback = locate_decode_error([good], exc)
    assert type(fallback) is PrefvalError and str(fallback) == "input is not UTF-8 text (invalid continuation byte)"


def test_validate_names_the_field_with_its_prefix():
    assert validate(Message, {"role": "user", "content": "hi"}, "f.json", "record 1").content == "hi"
    msg = _error(InputError, validate, Message, {"role": "user"}, "f.json", "record 1", prefix="ctx[0].")
    assert msg == "f.json: record 1: field 'ctx[0].content': Field required"
    assert _error(InputError, validate, Message, "text", "f.json", "record 2").startswith(
        "f.json: record 2: field '(record)': ")


def test_load_yaml_or_json(tmp_path):
    assert load_yaml_or_json(_write(tmp_path, "m.yaml", "kind: mcq\nid: qid\n")) == {"kind": "mcq", "id": "qid"}
    assert load_yaml_or_json(_write(tmp_path, "m.JSON", '{"kind": "mcq"}')) == {"kind": "mcq"}
    missing = tmp_path / "none.yaml"
    assert _error(PrefvalError, load_yaml_or_json, missing, "rubric file") == f"{missing}: no such rubric file"
    assert _error(PrefvalError, load_yaml_or_json, missing) == f"{missing}: no such file"
    bad_json = _write(tmp_path, "b.json", "{")
    assert _error(PrefvalError, load_yaml_or_json, bad_json) == (
        f"{bad_json}: not valid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)")
    bad_yaml = _write(tmp_path, "b.yaml", "a: [1\n")
    msg = _error(PrefvalError, load_yaml_or_json, bad_yaml)
    assert msg.startswith(f"{bad_yaml}: not valid YAML: ") and "\n" not in msg
    latin = _write(tmp_path, "l.yaml", b"a: \xe9\n")
    from storage.textfile import NotUtf8Error

    assert _error(NotUtf8Error, load_yaml_or_json, latin) == (  # "a: " is 3 bytes: 0xe9 at offset 3, line 1
        f"{latin}: line 1: field '(encoding)': not UTF-8 text (byte 0xe9 at offset 3)")


# ---- JSON readers shared by the importers ---------------------------------------------------------------------
def test_iter_jsonl_and_load_json_errors(tmp_path):
    p = _write(tmp_path, "x.jsonl", '{"a": 1}\n\n   \n{"b": 2}\n')
    assert list(generic.iter_jsonl(p)) == [(1, {"a": 1}), (4, {"b": 2})]  # blank lines skipped, numbers kept
    cases = [  # (file, text, reader, record, field, problem)
        ("bad.jsonl", '{"a": 1}\nnope\n', "lines", "line 2", "(json)", "invalid JSON: Expecting value at column 1"),
        # the decoder's message already ends with "at": no second "at"
        ("cut.json", '{"a": "abc', "json", "line 1", "(json)", "invalid JSON: Unterminated string starting at column 7"),
        ("arr.jsonl", "[1, 2]\n", "lines", "line 1", "(record)", "expected a JSON object, got list"),
        ("d.json", '{\n  "a": 1,\n  "b": \n}', "json", "line 4", "(json)", "invalid JSON: Expecting value at column 1"),
    ]
    for name, text, reader, record, field, problem in cases:
        f = _write(tmp_path, name, text)
        read = generic.load_json if reader == "json" else (lambda f: list(generic.iter_jsonl(f)))
        assert _error(InputError, read, f) == f"{f}: {record}: field '{field}': {problem}"
    assert generic.load_json(_write(tmp_path, "ok.json", '[1, {"x": null}]')) == [1, {"x": None}]


def test_native_turns_numpy_into_python():
    import numpy as np

    out = generic._native({"a": np.array([1, 2]), "b": [np.int64(3), {"c": np.float64(0.5)}], "s": "txt"})
    assert out == {"a": [1, 2], "b": [3, {"c": 0.5}], "s": "txt"}
    assert type(out["b"][0]) is int and type(out["b"][1]["c"]) is float


# ---- parse_index ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, expected", [
    (None, None), ("", None), ("  ", None), (2, 2), (1.0, 1), ("3", 3), (" 0 ", 0),
    ("A", 0), ("b", 1), ("(c)", 2), ("( D )", 3), ("green", 1),
])
def test_parse_index_rules(value, expected):
    assert generic.parse_index(value, ["red", "green", "blue", "x"], Path("f.csv"), "row 2", "answer") == expected


@pytest.mark.parametrize("value, problem", [
    (True, "expected an index or a letter, got True"),
    (1.5, "expected a 0-based index, a letter or an option's text, got 1.5"),
    ("purple", "expected a 0-based index, a letter or an option's text, got 'purple'"),
    ("AB", "expected a 0-based index, a letter or an option's text, got 'AB'"),
    ("dup", "expected a 0-based index, a letter or an option's text, got 'dup'"),  # two options have this text
])
def test_parse_index_refusals(value, problem):
    msg = _error(InputError, generic.parse_index, value, ["dup", "dup", "x"], Path("f.csv"), "row 2", "answer")
    assert msg == f"f.csv: row 2: field 'answer': {problem}"


# ---- mapping --------------------------------------------------------------------------------------------------
def test_load_mapping_sources_and_precedence(tmp_path):
    m = _write(tmp_path, "m.yaml", "kind: rubric_item\nid: rid\nfields: {query: q, answer: a}\n")
    assert generic.load_mapping({"mapping": str(m)}) == ("rubric_item", "rid", {"query": "q", "answer": "a"})
    # --map after the file wins; --kind and --id-field win over the file
    out = generic.load_mapping({"mapping": str(m), "map": [" answer = reply ", "preference=p"], "id_field": "k"})
    assert out == ("rubric_item", "k", {"query": "q", "answer": "reply", "preference": "p"})
    assert generic.load_mapping({}) == ("mcq", None, {})
    only_kind = _write(tmp_path, "k.yaml", "kind: persona_record\n")
    assert generic.load_mapping({"mapping": str(only_kind)}) == ("persona_record", None, {})
    assert generic.load_mapping({"mapping": str(only_kind), "kind": "mcq"})[0] == "mcq"


def test_load_mapping_refusals(tmp_path):
    listed = _write(tmp_path, "l.yaml", "- kind\n")
    assert _error(PrefvalError, generic.load_mapping, {"mapping": str(listed)}) == (
        f"{listed}: expected a mapping with keys kind, id, fields")
    extra = _write(tmp_path, "e.yaml", "kind: mcq\ncolumns: {a: b}\n")
    assert _error(PrefvalError, generic.load_mapping, {"mapping": str(extra)}) == (
        f"{extra}: expected a mapping with keys kind, id, fields")
    fields = _write(tmp_path, "f.yaml", "fields: [question]\n")
    assert _error(PrefvalError, generic.load_mapping, {"mapping": str(fields)}) == (
        f"{fields}: 'fields' must map item fields to record fields")
    for bad in ("question", "=prompt", "question=", " = "):
        assert _error(PrefvalError, generic.load_mapping, {"map": [bad]}) == f"--map {bad!r}: expected FIELD=COLUMN"
    assert _error(PrefvalError, generic.load_mapping, {"kind": "essay"}) == (
        "unknown kind 'essay' (known: conversation_record, gold_candidate, mcq, persona_record, rubric_item)")
    msg = _error(PrefvalError, generic.load_mapping, {"kind": "persona_record", "map": ["colour=c"]})
    assert msg == "kind 'persona_record' has no field 'colour' (fields: text, record_type, profile, " \
                  "parent_external_id, metadata)"


# ---- read(): records, ids, payloads ---------------------------------------------------------------------------
def test_read_jsonl_ids_metadata_and_index_fields(tmp_path):
    p = _jsonl(tmp_path, {**MCQ, "id": "q1", "correct_index": "B", "source": "web"},
               {**MCQ, "correct_index": "blue"}, {**MCQ, "distractor_index": 0, "correct_index": None})
    parsed = generic.read([p])
    assert [i.external_id for i in parsed.items] == ["q1", "2", "3"]  # id field, else the line number
    assert parsed.source_path == str(p) and parsed.file_hash == file_sha256([p])
    assert parsed.items[0].kind == "mcq"
    assert parsed.items[0].payload == {**MCQ, "correct_index": 1, "fmt": "mcq", "metadata": {"source": "web"}}
    assert parsed.items[1].payload["correct_index"] == 2
    third = parsed.items[2].payload
    assert "correct_index" not in third and third["distractor_index"] == 0 and third["metadata"] == {}


def test_read_csv_cells(tmp_path):
    p = _write(tmp_path, "in.csv",
               "qid,question,options,snippet,note,topic\n"
               'a,Q1,"[""x"", ""y""]","[{""role"": ""user"", ""content"": ""hi""}]",,t\n'
               "b,Q2,\"['x', 'y', 'z']\",,keep,\n")
    parsed = generic.read([p], {"format": "csv", "id_field": "qid"})
    assert [i.external_id for i in parsed.items] == ["a", "b"]
    first, second = (i.payload for i in parsed.items)
    assert first["options"] == ["x", "y"] and first["snippet"] == [{"role": "user", "content": "hi"}]
    assert first["topic"] == "t" and first["metadata"] == {}  # empty cells are absent, not metadata
    assert second["options"] == ["x", "y", "z"] and second["metadata"] == {"note": "keep"}


def test_read_csv_row_numbers_and_options_over_columns(tmp_path):
    p = _write(tmp_path, "in.csv", "q,o1,o2,o3\nQ1,a,b,\nQ2,a,b,c\n")
    parsed = generic.read([p], {"format": "csv", "map": ["question=q", "options=o1,o2,o3"]})
    assert [i.external_id for i in parsed.items] == ["2", "3"]  # header is row 1
    assert [i.payload["options"] for i in parsed.items] == [["a", "b"], ["a", "b", "c"]]
    assert all(i.payload["metadata"] == {} for i in parsed.items)


def test_read_two_files_prefix_record_numbers(tmp_path):
    a = _jsonl(tmp_path, MCQ, name="a.jsonl")
    b = _jsonl(tmp_path, MCQ, MCQ, name="b.jsonl")
    parsed = generic.read([a, b])
    assert [i.external_id for i in parsed.items] == ["a.jsonl:1", "b.jsonl:1", "b.jsonl:2"]
    assert parsed.source_path == f"{a},{b}"
    dup_a = _jsonl(tmp_path, {**MCQ, "id": "x"}, name="c.jsonl")
    dup_b = _jsonl(tmp_path, {**MCQ, "id": "y"}, {**MCQ, "id": "x"}, name="d.jsonl")
    assert _error(InputError, generic.read, [dup_a, dup_b]) == (
        f"{dup_b}: line 2: field 'id': duplicate id 'x' (first at c.jsonl line 1)")


def test_read_bool_cells(tmp_path):
    rows = "".join(f"r,t,a{i},{v}\n" for i, v in enumerate(["TRUE", " yes", "1", "t", "Y", "false", "No", "0", "f", "n"]))
    p = _write(tmp_path, "g.csv", "recipient,task,attribute,candidate_label\n" + rows)
    parsed = generic.read([p], {"format": "csv", "kind": "gold_candidate"})
    assert [i.payload["candidate_label"] for i in parsed.items] == [True] * 5 + [False] * 5
    bad = _write(tmp_path, "b.csv", "recipient,task,attribute,candidate_label\nr,t,a,maybe\n")
    assert _error(InputError, generic.read, [bad], {"format": "csv", "kind": "gold_candidate"}) == (
        f"{bad}: row 2: field 'candidate_label': expected true or false, got 'maybe'")


@pytest.mark.parametrize("name, text, options, record, field, problem", [
    ("in.csv", "question,options\nQ,\"[1,\",extra\n", {"format": "csv"},
     "row 2", "(row)", "more cells than columns (broken quoting?)"),
    ("in.csv", "question,options\nQ,\"[1,\"\n", {"format": "csv", "kind": "mcq"},
     "row 2", "options", "not a JSON list or a Python list literal"),
    ("in.jsonl", '{"question": "Q", "options": ["a"]}\n', {"id_field": "qid"},
     "line 1", "qid", "id field is missing or empty"),
    ("in.jsonl", '{"qid": "", "question": "Q", "options": ["a"]}\n', {"id_field": "qid"},
     "line 1", "qid", "id field is missing or empty"),
    ("in.jsonl", '{"id": 7, "question": "Q", "options": ["a", "b"]}\n{"id": "7", "question": "Q", "options": ["a"]}\n', {},
     "line 2", "id", "duplicate id '7' (first at line 1)"),
    ("in.jsonl", '{"k": 1, "question": "Q", "options": ["a", "b"]}\n{"k": 1, "question": "Q", "options": ["a"]}\n',
     {"id_field": "k"}, "line 2", "k", "duplicate id '1' (first at line 1)"),
    ("in.csv", "q,o1,o2,o3\nQ,a,,c\n", {"format": "csv", "map": ["question=q", "options=o1,o2,o3"]},
     "row 2", "o1,o2,o3", "an empty option cell comes before a filled one"),
    ("in.jsonl", '{"question": "Q", "options": ["a"]}\n', {"map": ["question=prompt"]},
     "line 1", "prompt", "mapped field is missing (the record has: question, options)"),
    ("in.jsonl", '{"question": "Q", "options": ["a"], "x": 1, "metadata": [1]}\n', {"kind": "mcq"},
     "line 1", "metadata", "expected an object"),
    ("in.jsonl", '{"prompt": 5, "options": ["a"]}\n', {"map": ["question=prompt"]},
     "line 1", "prompt", "Input should be a valid string"),
    ("in.jsonl", '{"question": "Q", "options": ["a"], "correct_index": "zz"}\n', {"kind": "mcq"},
     "line 1", "correct_index", "expected a 0-based index, a letter or an option's text, got 'zz'"),
])
def test_read_refusals(tmp_path, name, text, options, record, field, problem):
    p = _write(tmp_path, name, text)
    assert _error(InputError, generic.read, [p], options) == f"{p}: {record}: field '{field}': {problem}"


def test_read_default_kind_hints_at_the_fitting_kind(tmp_path):
    p = _jsonl(tmp_path, {"text": "a persona"})
    assert _error(InputError, generic.read, [p]) == (
        f"{p}: line 1: field 'question': Field required; no --kind was given, so records were read as mcq items; "
        "this record fits persona_record: pass --kind persona_record")
    both = _jsonl(tmp_path, {"text": "t", "preference": "p"}, name="b.jsonl")
    assert _error(InputError, generic.read, [both]).endswith(
        "this record fits conversation_record or persona_record: pass --kind conversation_record or "
        "--kind persona_record")
    none = _jsonl(tmp_path, {"colour": "red"}, name="n.jsonl")
    assert _error(InputError, generic.read, [none]) == (
        f"{none}: line 1: field 'question': Field required; no --kind was given, so records were read as mcq items; "
        "pass --kind KIND (one of conversation_record, gold_candidate, mcq, persona_record, rubric_item) and map "
        "differently named fields with --map FIELD=COLUMN")
    # a kind from a mapping file (not mcq), --kind or --map: no hint
    m = _write(tmp_path, "m.yaml", "kind: rubric_item\n")
    assert _error(InputError, generic.read, [p], {"mapping": str(m)}) == (
        f"{p}: line 1: field 'preference': Field required")
    assert _error(InputError, generic.read, [p], {"kind": "mcq"}) == f"{p}: line 1: field 'question': Field required"
    assert _error(InputError, generic.read, [p], {"map": ["options=opts"]}) == (
        f"{p}: line 1: field 'opts': mapped field is missing (the record has: text)")


def test_read_csv_refuses_a_mapped_column_its_header_lacks(tmp_path):
    p = _write(tmp_path, "in.csv", "q,o1,o2\nQ,a,b\n")
    assert _error(PrefvalError, generic.read, [p], {"format": "csv", "map": ["question=q", "options=o1,o2,o3"]}) == (
        f"{p}: no column 'o3' (mapped to 'options'); the file's columns: 'q', 'o1', 'o2'")


def test_read_unknown_format_and_empty_csv(tmp_path):
    p = _jsonl(tmp_path, MCQ)
    assert _error(PrefvalError, generic.read, [p], {"format": "xml"}) == (
        "generic importer: unknown format 'xml' (expected jsonl or csv)")
    header_only = _write(tmp_path, "h.csv", "\n\n")
    assert generic.read([header_only], {"format": "csv"}).items == []
