"""Malformed inputs: one error line naming file, record and field; exit code 1; the database is unchanged."""
from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import re

import pytest

from annotator.cli import main

S = Path(__file__).resolve().parents[1] / "sample_data"
TABLES = ("datasets", "items", "contexts", "context_messages", "imports", "events")


def _counts(db: Path) -> dict[str, int]:
    con = sqlite3.connect(db)
    try:
        return {t: con.execute(f"SELECT COUNT(*) FROM [{t}]").fetchone()[0] for t in TABLES}
    finally:
        con.close()


@pytest.fixture
def db(tmp_path, capsys) -> Path:
    """A database that already holds one dataset, so 'unchanged' is checked against real rows."""
    path = tmp_path / "t.db"
    assert main(["import", "benchpres", str(S / "benchpres/sample.jsonl"), "--dataset", "seed", "--db", str(path)]) == 0
    capsys.readouterr()
    return path


def _fails(db: Path, capsys, argv: list[str], filename: str, record: str, field: str) -> str:
    before = _counts(db)
    assert main([*argv, "--dataset", "bad", "--db", str(db)]) == 1
    out = capsys.readouterr()
    lines = out.err.splitlines()
    assert len(lines) == 1, out.err
    line = lines[0]
    assert line.startswith("prefval: error: ")
    # record is a regular expression, e.g. r"line \d+"
    assert filename in line and re.search(f": {record}: ", line) and f"field '{field}'" in line, line
    assert _counts(db) == before
    return line


# ---- personamem --------------------------------------------------------------------------------------------
def _pm_rows() -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO((S / "personamem/questions_sample.csv").read_text(encoding="utf-8"))))
    return rows[0], rows[1:]


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([header, *rows])
    return path


def test_personamem_broken_quoting(db, tmp_path, capsys):
    header, rows = _pm_rows()
    i = header.index("all_options")
    rows[3][i] = "['(a) it's broken', '(b) two', '(c) three', '(d) four']"
    bad = _write_csv(tmp_path / "q_quoting.csv", header, rows)
    _fails(db, capsys, ["import", "personamem", str(bad)], "q_quoting.csv", "row 5", "all_options")


def test_personamem_missing_column(db, tmp_path, capsys):
    header, rows = _pm_rows()
    i = header.index("correct_answer")
    bad = _write_csv(tmp_path / "q_missing.csv", header[:i] + header[i + 1:], [r[:i] + r[i + 1:] for r in rows])
    _fails(db, capsys, ["import", "personamem", str(bad)], "q_missing.csv", "header", "correct_answer")


def test_personamem_wrong_type(db, tmp_path, capsys):
    header, rows = _pm_rows()
    rows[0][header.index("persona_id")] = "abc"
    bad = _write_csv(tmp_path / "q_type.csv", header, rows)
    _fails(db, capsys, ["import", "personamem", str(bad)], "q_type.csv", "row 2", "persona_id")


def test_personamem_three_options(db, tmp_path, capsys):
    header, rows = _pm_rows()
    rows[10][header.index("all_options")] = "['(a) one', '(b) two', '(c) three']"
    bad = _write_csv(tmp_path / "q_three.csv", header, rows)
    line = _fails(db, capsys, ["import", "personamem", str(bad)], "q_three.csv", "row 12", "all_options")
    assert "got 3" in line


def test_personamem_five_options(db, tmp_path, capsys):
    """One option too many is refused like one too few (a 5-option row must never be imported silently)."""
    header, rows = _pm_rows()
    rows[3][header.index("all_options")] = "['(a) one', '(b) two', '(c) three', '(d) four', '(e) five']"
    bad = _write_csv(tmp_path / "q_five.csv", header, rows)
    line = _fails(db, capsys, ["import", "personamem", str(bad)], "q_five.csv", "row 5", "all_options")
    assert "got 5" in line


# ---- truncated JSON ----------------------------------------------------------------------------------------
def test_cimemories_truncated_json(db, tmp_path, capsys):
    text = (S / "cimemories/sample_profiles.json").read_text(encoding="utf-8")
    bad = tmp_path / "cim_cut.json"
    bad.write_text(text[: len(text) // 2], encoding="utf-8")
    _fails(db, capsys, ["import", "cimemories", str(bad)], "cim_cut.json", r"line \d+", "(json)")


def test_cimemories_bad_attribute(db, tmp_path, capsys):
    data = json.loads((S / "cimemories/sample_profiles.json").read_text(encoding="utf-8"))
    del data[1]["information_attributes"]["visa_legal_visa_status"]["memory_statement"]
    bad = tmp_path / "cim_attr.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    _fails(db, capsys, ["import", "cimemories", str(bad)], "cim_attr.json", "record 1",
           "information_attributes.visa_legal_visa_status.memory_statement")


def test_jsonl_truncated_line(db, tmp_path, capsys):
    lines = (S / "generic/items.jsonl").read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][:40]
    bad = tmp_path / "items_cut.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _fails(db, capsys, ["import", "jsonl", str(bad)], "items_cut.jsonl", "line 3", "(json)")


def test_jsonl_wrong_type_names_field(db, tmp_path, capsys):
    bad = tmp_path / "items_type.jsonl"
    bad.write_text(json.dumps({"id": "x", "question": "Q?", "options": "not a list"}) + "\n", encoding="utf-8")
    _fails(db, capsys, ["import", "jsonl", str(bad)], "items_type.jsonl", "line 1", "options")


@pytest.mark.parametrize("key, said", [
    ("x", "letter 'x' is option 24, beyond the 2 options (0 to 1, or A to B)"),
    ("(C)", "letter '(C)' is option 3, beyond the 2 options (0 to 1, or A to B)"),
    (5, "5 is beyond the 2 options (0 to 1, or A to B)"),  # it said: field '(record)': Value error, correct_index 5 ...
    ("2", "'2' is beyond the 2 options (0 to 1, or A to B)"),
    (-1, "-1 is not an option (0 to 1, or A to B)"),
])
def test_a_letter_key_beyond_the_options_is_said_as_given(db, tmp_path, capsys, key, said):
    bad = tmp_path / "letters.jsonl"
    bad.write_text(json.dumps({"id": "a", "question": "Q?", "options": ["yes", "no"], "correct_index": "B"}) + "\n"
                   + json.dumps({"id": "b", "question": "Q?", "options": ["yes", "no"], "correct_index": key}) + "\n",
                   encoding="utf-8")
    line = _fails(db, capsys, ["import", "jsonl", str(bad)], "letters.jsonl", "line 2", "correct_index")
    assert line.endswith(said), line  # it said "correct_index 23 is outside the 2 options" for x (and a --kind hint)


def test_csv_mapped_column_missing(db, tmp_path, capsys):
    bad = tmp_path / "items_cols.csv"
    bad.write_text("qid,prompt,opt_a,opt_b,answer\nc1,Q?,x,y,A\n", encoding="utf-8")
    # a column the header lacks is refused before the first row, naming the columns the file has
    before = _counts(db)
    assert main(["import", "csv", str(bad), "--mapping", str(S / "generic/mapping.yaml"), "--dataset", "bad",
                 "--db", str(db)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"prefval: error: {bad}: no column 'opt_c' (mapped to 'options'); the file's columns: "
                     "'qid', 'prompt', 'opt_a', 'opt_b', 'answer'"]
    assert _counts(db) == before


# ---- benchpres / horizonbench / realpref ------------------------------------------------------------------------
def test_benchpres_label_length_mismatch(db, tmp_path, capsys):
    rows = [json.loads(x) for x in (S / "benchpres/sample.jsonl").read_text(encoding="utf-8").splitlines()]
    rows[4]["preference_label"] = rows[4]["preference_label"][:3]
    bad = tmp_path / "bp_len.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    _fails(db, capsys, ["import", "benchpres", str(bad)], "bp_len.jsonl", "line 5", "preference_label")


def _hb_rows() -> list[dict]:
    return [json.loads(x) for x in (S / "horizonbench/sample.jsonl").read_text(encoding="utf-8").splitlines()]


def test_horizonbench_options_not_json(db, tmp_path, capsys):
    rows = _hb_rows()
    rows[1]["options"] = rows[1]["options"][:-5]
    bad = tmp_path / "hb_opts.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    _fails(db, capsys, ["import", "horizonbench", str(bad)], "hb_opts.jsonl", "line 2", "options")


def test_horizonbench_correct_letter_f(db, tmp_path, capsys):
    rows = _hb_rows()
    rows[6]["correct_letter"] = "F"
    bad = tmp_path / "hb_letter.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    _fails(db, capsys, ["import", "horizonbench", str(bad)], "hb_letter.jsonl", "line 7", "correct_letter")


def _rp_queries() -> list[dict]:
    return [json.loads(x) for x in (S / "realpref/queries.jsonl").read_text(encoding="utf-8").splitlines()]


def test_realpref_correct_answer_outside_a_to_d(db, tmp_path, capsys):
    rows = _rp_queries()
    rows[5]["Correct_Answer"] = "E"
    bad = tmp_path / "rp_answer.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    _fails(db, capsys, ["import", "realpref", str(bad)], "rp_answer.jsonl", "line 6", "Correct_Answer")


def test_realpref_missing_mcq_option(db, tmp_path, capsys):
    rows = _rp_queries()
    del rows[8]["MCQ_options"]["D"]
    bad = tmp_path / "rp_opts.json"
    bad.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    _fails(db, capsys, ["import", "realpref", str(bad)], "rp_opts.json", "record 8", "MCQ_options.D")


def test_realpref_query_without_id(db, tmp_path, capsys):
    rows = _rp_queries()
    rows[1].pop("user_id")
    bad = tmp_path / "rp_id.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    _fails(db, capsys, ["import", "realpref", str(bad)], "rp_id.jsonl", "line 2", "id")
