"""An importer given another importer's file says so (new-user trial 6: `prefval import personamem` on a valid
CIMemories JSON document said "line 1: field '(json)': invalid JSON: Expecting value"): one line naming what the
file is and the importer that reads it; nothing is written."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from annotator.cli import main
from storage.importers.sniff import sniff

SAMPLES = Path(__file__).resolve().parent.parent / "sample_data"


def _cimemories(tmp_path) -> str:
    path = tmp_path / "data_x.json"  # the layout of a CIMemories file: a pretty-printed list of profiles
    path.write_text(json.dumps([{"bio": {"name": "Ann", "age": 40}, "information_attributes": {},
                                 "contexts": []}], indent=4))
    return str(path)


def test_sniff_by_hand(tmp_path):
    assert sniff(_cimemories(tmp_path)) == ("json", "cimemories", ["bio", "name", "age", "information_attributes",
                                                                   "contexts"])
    assert sniff(SAMPLES / "benchpres" / "sample.jsonl")[:2] == ("jsonl", "benchpres")
    assert sniff(SAMPLES / "horizonbench" / "sample.parquet")[:2] == ("parquet", "horizonbench")
    assert sniff(SAMPLES / "personamem" / "questions_sample.csv")[:2] == ("csv", "personamem")
    assert sniff(SAMPLES / "personamem" / "shared_contexts_sample.jsonl")[:2] == ("jsonl", "personamem")
    assert sniff(SAMPLES / "realpref" / "queries.jsonl")[:2] == ("jsonl", "realpref")
    assert sniff(SAMPLES / "pairwise" / "dataset_a.jsonl")[:2] == ("jsonl", None)
    assert sniff(tmp_path / "missing.json") == (None, None, [])


@pytest.mark.parametrize("fmt, reads", [
    ("personamem", "CSV questions and JSONL shared contexts"),
    ("horizonbench", "JSONL or Parquet rows"),
    ("benchpres", "JSONL or Parquet rows"),
    ("jsonl", "JSONL records"),
    ("csv", "CSV rows"),
])
def test_a_cimemories_document_given_to_another_importer(fmt, reads, tmp_path, capsys):
    tmp_path = tmp_path / "judge-study-dataset"  # folder names that are also record words name no record
    tmp_path.mkdir()
    path = _cimemories(tmp_path)
    db = str(tmp_path / "p.db")
    assert main(["import", fmt, path, "--dataset", "x", "--db", db]) == 1
    err = capsys.readouterr().err
    assert err == (f"prefval: error: {path}: a JSON document with fields bio, name, age, information_attributes, "
                   f"..., not the {reads} that `prefval import {fmt}` reads; did you mean `prefval import "
                   "cimemories`?\n")
    assert not os.path.exists(db)


@pytest.mark.parametrize("fmt, path, other, container", [
    ("realpref", "horizonbench/sample.jsonl", "horizonbench", "JSON Lines"),
    ("horizonbench", "benchpres/sample.jsonl", "benchpres", "JSON Lines"),
    ("benchpres", "horizonbench/sample.parquet", "horizonbench", "a Parquet file"),
    ("personamem", "benchpres/sample.jsonl", "benchpres", "JSON Lines"),
])
def test_right_container_but_another_benchmark(fmt, path, other, container, tmp_path, capsys):
    assert main(["import", fmt, str(SAMPLES / path), "--dataset", "x", "--db", str(tmp_path / "p.db")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f": {container} with fields " in err
    assert err.rstrip().endswith(f"as in {other} files, not {fmt} ones; did you mean `prefval import {other}`?")


def test_cimemories_given_a_personamem_csv(tmp_path, capsys):
    path = str(SAMPLES / "personamem" / "questions_sample.csv")
    assert main(["import", "cimemories", path, "--dataset", "x", "--db", str(tmp_path / "p.db")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"prefval: error: {path}: CSV (or other text) with fields persona_id, question_id, ")
    assert err.rstrip().endswith("not the JSON document (a list of profiles) that `prefval import cimemories` reads; "
                                 "did you mean `prefval import personamem`?")


def test_the_right_importer_still_gives_its_own_record_error(tmp_path, capsys):
    bad = tmp_path / "b.jsonl"  # BenchPreS rows, one without its prompt: the importer's own error stands
    rows = [json.loads(line) for line in (SAMPLES / "benchpres" / "sample.jsonl").read_text().splitlines()[:2]]
    del rows[1]["prompt"]
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["import", "benchpres", str(bad), "--dataset", "x", "--db", str(tmp_path / "p.db")]) == 1
    err = capsys.readouterr().err
    assert "line 2" in err and "did you mean" not in err
