"""`--out -` is standard output for every command that writes one file (export, report), as without --out: no file
named "-", no temporary file left beside it, the database byte for byte as it was. release (a folder) and bundle
export (a SQLite file) refuse `--out -` in one line naming the option, writing nothing."""
from __future__ import annotations

import csv
import hashlib
import io
import json
import os

import pytest

from annotator.cli import main
from tests.test_adjudication import answered_mcq_study


def _digest(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


@pytest.fixture
def study_db(tmp_path, monkeypatch):
    """Study "st" answered as tests.test_adjudication.PLAN, in a folder of its own that is also the working
    directory (where a file named "-" would appear)."""
    folder = tmp_path / "work"
    folder.mkdir()
    db = str(folder / "prefval.db")
    answered_mcq_study(db).close()
    monkeypatch.chdir(folder)
    return db


def _unchanged(db: str, before: str) -> None:
    folder = os.path.dirname(db)
    # no "-", no temporary file (SQLite's own -wal and -shm of a reader may lie beside the database)
    assert set(os.listdir(folder)) - {"prefval.db-wal", "prefval.db-shm"} == {"prefval.db"}
    assert _digest(db) == before


def test_export_out_dash_writes_standard_output_only(study_db, capsys):
    before = _digest(study_db)
    assert main(["export", "st", "--outcomes", "--format", "csv", "--out", "-", "--db", study_db]) == 0
    out, err = capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(out)))
    # PLAN: q0-q3 answered by all three (quota 3, an mcq item passes once annotated); q4 and q5 by two only
    assert [(r["item"], r["outcome"]) for r in rows] == [
        ("q0", "passed"), ("q1", "passed"), ("q2", "passed"), ("q3", "passed"), ("q4", "too_few"),
        ("q5", "too_few")]
    assert [r["answers"] for r in rows] == ["3", "3", "3", "3", "2", "2"]
    assert "written to" not in err
    _unchanged(study_db, before)


def test_export_out_dash_is_the_same_as_no_out(study_db, capsys):
    assert main(["export", "st", "--format", "jsonl", "--db", study_db]) == 0
    plain = capsys.readouterr().out
    before = _digest(study_db)
    assert main(["export", "st", "--format", "jsonl", "--out", "-", "--db", study_db]) == 0
    dashed = capsys.readouterr().out
    assert dashed == plain
    # 3 + 3 + 3 + 3 + 2 + 2 answers of PLAN, one JSON object a line
    assert [json.loads(line)["item"] for line in dashed.splitlines()].count("q4") == 2
    assert len(dashed.splitlines()) == 16
    _unchanged(study_db, before)


def test_report_out_dash_writes_standard_output_only(study_db, capsys):
    before = _digest(study_db)
    assert main(["report", "st", "--format", "json", "--out", "-", "--db", study_db]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)  # the whole report, on standard output
    assert "written to" not in err
    _unchanged(study_db, before)


def test_a_file_named_dash_is_still_written_as_dot_slash_dash(study_db, capsys):
    assert main(["export", "st", "--outcomes", "--format", "csv", "--out", "./-", "--db", study_db]) == 0
    with open("-", encoding="utf-8") as fh:
        assert fh.readline().startswith("study,item,item_b,outcome,")


@pytest.mark.parametrize("argv, writes", [
    (["release", "st", "--out", "-"], "release writes a folder of files"),
    (["bundle", "export", "st", "--annotator", "ana", "--out", "-"], "bundle export writes a SQLite file"),
])
def test_release_and_bundle_refuse_out_dash_in_one_line(study_db, capsys, argv, writes):
    before = _digest(study_db)
    assert main(argv + ["--db", study_db]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("prefval: error: --out -: " + writes)
    assert "standard output" in err
    _unchanged(study_db, before)
