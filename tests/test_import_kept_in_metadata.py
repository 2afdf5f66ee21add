"""`prefval import jsonl|csv` keeps a record field that is no field of the item kind in the item's metadata (the
generic importer's documented rule), and now says so on stderr: one line per field and file, with the number of
records that had it; a name that reads as an answer (`answer`, `label`, `gold` ...) of a kind with an answer key
says which field it was probably meant for and the --map that imports it as that."""
from __future__ import annotations

import json

import pytest

from annotator.cli import main
from storage.importers.generic import answer_field_for
from storage.store import Store


def _write_jsonl(path, records) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


def _items(db: str, dataset: str) -> dict:
    with Store.open(db, mode="ro") as s:
        return {it.external_id: it.payload for it in s.items(dataset)}


def test_an_answer_field_kept_in_metadata_is_one_warning_line_naming_the_key_field(tmp_path, capsys):
    db = str(tmp_path / "x.db")
    f = _write_jsonl(tmp_path / "q.jsonl", [
        {"id": "a1", "question": "Q1?", "options": ["x", "y"], "answer": "B"},
        {"id": "a2", "question": "Q2?", "options": ["x", "y"], "answer": "A", "note": "hard"},
        {"id": "a3", "question": "Q3?", "options": ["x", "y"], "answer": "B"},
    ])
    assert main(["import", "jsonl", f, "--dataset", "d", "--db", db]) == 0
    out, err = capsys.readouterr()
    assert out == "dataset d: 3 items added, 0 already present\n"
    assert err.splitlines() == [
        f"warning: {f}: field 'answer' is not a field of mcq items; kept in the metadata of 3 record(s); it reads "
        "as the answer key, which the items did not get from it: to import it as their correct_index, add --map "
        "correct_index=answer",
        f"warning: {f}: field 'note' is not a field of mcq items; kept in the metadata of 1 record(s)",
    ]
    items = _items(db, "d")
    # the documented behaviour is kept: the field is in metadata, and the item has no key
    assert {k: v.get("metadata") for k, v in items.items()} == {
        "a1": {"answer": "B"}, "a2": {"answer": "A", "note": "hard"}, "a3": {"answer": "B"}}
    assert all("correct_index" not in v for v in items.values())
    # with the --map the warning gives: the key, and no warning about the answer
    assert main(["import", "jsonl", f, "--dataset", "d2", "--map", "correct_index=answer", "--db", db]) == 0
    err = capsys.readouterr().err
    assert "'answer'" not in err and err.count("\n") == 1 and "'note'" in err
    assert {k: v["correct_index"] for k, v in _items(db, "d2").items()} == {"a1": 1, "a2": 0, "a3": 1}


def test_csv_counts_only_records_with_a_cell_and_each_file_has_its_lines(tmp_path, capsys):
    db = str(tmp_path / "x.db")
    one = tmp_path / "one.csv"
    one.write_text("id,question,options,Gold Label,difficulty\n"
                   'c1,Q1?,"[""x"", ""y""]",A,easy\n'
                   'c2,Q2?,"[""x"", ""y""]",,hard\n'
                   'c3,Q3?,"[""x"", ""y""]",,\n', encoding="utf-8")
    assert main(["import", "csv", str(one), "--dataset", "c", "--db", db]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"warning: {one}: field 'Gold Label' is not a field of mcq items; kept in the metadata of 1 record(s); it "
        "reads as the answer key, which the items did not get from it: to import it as their correct_index, add "
        "--map correct_index=Gold Label",
        f"warning: {one}: field 'difficulty' is not a field of mcq items; kept in the metadata of 2 record(s)",
    ]
    a = _write_jsonl(tmp_path / "a.jsonl", [{"id": "p1", "text": "a baker", "source": "x"}])
    b = _write_jsonl(tmp_path / "b.jsonl", [{"id": "p2", "text": "a pilot", "source": "y", "answer": "keep"},
                                            {"id": "p3", "text": "a nurse", "source": "z"}])
    assert main(["import", "jsonl", a, b, "--kind", "persona_record", "--dataset", "p", "--db", db]) == 0
    # persona_record has no answer key: the name 'answer' gets no hint
    assert capsys.readouterr().err.splitlines() == [
        f"warning: {a}: field 'source' is not a field of persona_record items; kept in the metadata of 1 record(s)",
        f"warning: {b}: field 'source' is not a field of persona_record items; kept in the metadata of 2 record(s)",
        f"warning: {b}: field 'answer' is not a field of persona_record items; kept in the metadata of 1 record(s)",
    ]


def test_records_without_extra_fields_import_without_a_warning(tmp_path, capsys):
    db = str(tmp_path / "x.db")
    f = _write_jsonl(tmp_path / "q.jsonl", [{"id": "a1", "question": "Q1?", "options": ["x", "y"],
                                             "correct_index": 1, "metadata": {"answer": "kept as given"}}])
    assert main(["import", "jsonl", f, "--dataset", "d", "--db", db]) == 0
    assert capsys.readouterr().err == ""
    assert _items(db, "d")["a1"]["metadata"] == {"answer": "kept as given"}


@pytest.mark.parametrize("kind, name, field", [
    ("mcq", "answer", "correct_index"), ("mcq", "Correct-Answer", "correct_index"), ("mcq", "gold label", "correct_index"),
    ("gold_candidate", "label", "candidate_label"), ("mcq", "answered_by", None), ("mcq", "source", None),
    ("persona_record", "answer", None), ("conversation_record", "gold", None),
])
def test_which_names_read_as_an_answer(kind, name, field):
    assert answer_field_for(kind, name) == field


def test_an_answer_field_beside_a_key_suggests_no_map_and_a_mapped_key_is_said_as_replaced(tmp_path, capsys):
    """Records with correct_index and answer: the items have their key, so the warning suggests no --map; with
    --map correct_index=answer the record's own correct_index is the field left over, said as replaced (it read
    "'correct_index' is not a field of mcq items", a newcomer's run)."""
    db = str(tmp_path / "x.db")
    f = _write_jsonl(tmp_path / "q.jsonl", [
        {"id": "b1", "question": "Q1?", "options": ["x", "y"], "correct_index": 0, "answer": "B"},
    ])
    assert main(["import", "jsonl", f, "--dataset", "d", "--db", db]) == 0
    out, err = capsys.readouterr()
    assert out == "dataset d: 1 item added, 0 already present\n"
    assert err.splitlines() == [
        f"warning: {f}: field 'answer' is not a field of mcq items; kept in the metadata of 1 record(s)"]
    assert _items(db, "d")["b1"]["correct_index"] == 0
    assert main(["import", "jsonl", f, "--dataset", "e", "--map", "correct_index=answer", "--db", db]) == 0
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        f"warning: {f}: field 'correct_index' was not read (mcq items take their correct_index from 'answer', as "
        "mapped); kept in the metadata of 1 record(s)"]
    assert _items(db, "e")["b1"]["correct_index"] == 1  # B
    assert _items(db, "e")["b1"]["metadata"] == {"correct_index": 0}


def test_an_answer_field_on_records_some_of_which_have_a_key_warns_what_a_map_would_do(tmp_path, capsys):
    """b1 and b2 have correct_index and answer, b3 answer only, b4 correct_index only: one item lacks a key; a
    --map would read answer for every record (b1's key 0 would become 1), so no --map is suggested as the fix."""
    db = str(tmp_path / "x.db")
    f = _write_jsonl(tmp_path / "both.jsonl", [
        {"id": "b1", "question": "Q1?", "options": ["x", "y"], "correct_index": 0, "answer": "B"},
        {"id": "b2", "question": "Q2?", "options": ["x", "y"], "correct_index": 1, "answer": "B"},
        {"id": "b3", "question": "Q3?", "options": ["x", "y"], "answer": "A"},
        {"id": "b4", "question": "Q4?", "options": ["x", "y"], "correct_index": 1},
    ])
    assert main(["import", "jsonl", f, "--dataset", "d", "--db", db]) == 0
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"warning: {f}: field 'answer' is not a field of mcq items; kept in the metadata of 3 record(s); it reads as "
        "the answer key, and 1 of those record(s) have no correct_index of their own (a --map correct_index=answer "
        "would read it for every record)"]
    assert [_items(db, "d")[i].get("correct_index") for i in ("b1", "b2", "b3", "b4")] == [0, 1, None, 1]
