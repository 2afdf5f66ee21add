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
