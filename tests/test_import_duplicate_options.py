"""MCQ items with two options of the same text: imported as they are, with one warning line on stderr naming the
count, the first record and its two options (PersonaMem 32k has 17 such questions of 589)."""
from __future__ import annotations

import csv
import sqlite3
from pathlib import Path

import pytest

from annotator.cli import main
from storage.importers.base import duplicate_options
from storage.models import ItemIn

S = Path(__file__).resolve().parents[1] / "sample_data"
REAL = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "personamem" / "questions_32k.csv"


def _mcq(ext: str, options: list[str]) -> ItemIn:
    return ItemIn(external_id=ext, kind="mcq", payload={"question": "q?", "options": options, "correct_index": 0})


def test_duplicate_options_first_pair_per_item_whitespace_and_case_ignored():
    items = [_mcq("a", ["x", "y", "z", "w"]),
             _mcq("b", ["one", "Two  words", "two words", "one"]),   # first pair found in order: (1, 2)
             _mcq("c", ["p", "q", "r", " P "]),
             ItemIn(external_id="d", kind="persona", payload={"persona": "same"})]
    assert duplicate_options(items) == [("b", 1, 2), ("c", 0, 3)]


def test_import_warns_once_and_imports_every_row(tmp_path, capsys):
    with open(S / "personamem" / "questions_sample.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    fields = list(rows[0])
    rows[1]["all_options"] = str(["(a) Same text.", "(b) Other.", "(c) Same  text.", "(d) Last."])
    path = tmp_path / "q.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    db = tmp_path / "t.db"
    contexts = S / "personamem" / "shared_contexts_sample.jsonl"  # with them, no line about missing contexts
    assert main(["import", "personamem", str(path), str(contexts), "--dataset", "pm", "--db", str(db)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("warning: ") and f"record {rows[1]['question_id']}," in err[0]
    assert " 1 MCQ item(s) " in err[0] and "options A and C" in err[0]
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM items").fetchone()[0] == len(rows)
    con.close()


def test_no_warning_without_duplicates(tmp_path, capsys):
    db = tmp_path / "t.db"
    assert main(["import", "personamem", str(S / "personamem" / "questions_sample.csv"),
                 str(S / "personamem" / "shared_contexts_sample.jsonl"), "--dataset", "pm", "--db", str(db)]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.skipif(not REAL.exists(), reason="../shared/datasets not beside the repository")
def test_real_personamem_32k_has_17_questions_with_duplicate_options():
    from storage.importers import personamem

    dups = duplicate_options(personamem.read([REAL]).items)
    assert len(dups) == 17
    assert dups[0] == ("344ea859-e70d-48d2-8a97-7b68a104c6ae", 0, 1)
