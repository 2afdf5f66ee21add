"""A person cannot open the annotation or adjudication screen under an LLM annotator's name (the newcomer's case:
`prefval annotate events --annotator judge-x` opened on the judge's 12 imported verdicts and `u k k` replaced
one with a person's answer, stored as source human under the llm annotator)."""
from __future__ import annotations

import sqlite3

import pytest

from annotator.adjudication import AdjudicationSession
from annotator.app import AnnotateApp
from storage.errors import PrefvalError
from storage.importers import judgments
from storage.store import Store
from tests.test_one_outcome import _round


def _rows(db: str) -> int:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT count(*) FROM annotations").fetchone()[0]
    finally:
        con.close()


def test_an_llm_name_cannot_annotate_or_adjudicate(db_file):
    _round(db_file)
    with Store.open(db_file, mode="create") as s:
        judgments.add_judgment_records(s, [{"item": "p00", "decision": "keep"}], "r1", "judge-x", model="m")
    before = _rows(db_file)
    with pytest.raises(PrefvalError, match=r"'judge-x' is an LLM annotator \(kind llm\) in .*: its answers come "
                                           r"from `prefval evaluate` or `prefval import judgments`; annotate"):
        AnnotateApp(db_file, "r1", "judge-x")
    with Store.open(db_file, mode="create") as s, pytest.raises(PrefvalError, match="'judge-x' is an"):
        AdjudicationSession(s, "r1", "judge-x")
    assert _rows(db_file) == before
    # a person's name still opens the screen
    AnnotateApp(db_file, "r1", "ana")


def test_the_datasheet_counts_people_and_llm_annotators_apart(db_file, tmp_path):
    """The newcomer's case: a model that answered was counted among "LLM judge(s)" and the card said "0
    annotator(s)" beside status's 3 assigned: the datasheet says people who answered and LLM annotators (models
    answering or judging) apart, the card the people who answered."""
    from annotator.cli import main

    _round(db_file)  # ana and ben answer all 12 records
    with Store.open(db_file, mode="create") as s:
        judgments.add_judgment_records(s, [{"item": "p00", "decision": "keep"}], "r1", "judge-x", model="m")
    out = tmp_path / "rel"
    assert main(["release", "r1", "--out", str(out), "--db", db_file]) == 0
    sheet = (out / "DATASHEET.md").read_text()
    assert ("- annotators: 2 people who answered; 1 LLM annotator(s) (models that answered or judged, never "
            "counted as people)") in sheet
    assert "r1 (persona_filter, 2 people who answered, 2 per item)" in (out / "README.md").read_text()
