"""`study create --option KEY=VALUE`: a key the task type does not read is refused in one line, nothing written
(the trial's case: `--option tie-rule=first-annotator` on an mcq study was stored and ignored, the study silently
using the no-label rule; `--option nonsense=1` and `idle_cap=-1` were accepted too)."""
from __future__ import annotations

import hashlib
import sqlite3

import pytest

from annotator.cli import main
from storage.models import ItemIn
from storage.payloads import McqPayload
from storage.store import Store


def _dump(db: str) -> str:
    con = sqlite3.connect(db)
    try:
        return hashlib.sha256("\n".join(con.iterdump()).encode()).hexdigest()
    finally:
        con.close()


@pytest.fixture
def mcq_db(db_file):
    items = [ItemIn(external_id=f"q{i}", kind="mcq", payload=McqPayload(
        question=f"Which {i}?", options=["a", "b", "c", "d"], correct_index=i % 4).model_dump(exclude_none=True))
        for i in range(4)]
    with Store.open(db_file, mode="create") as s:
        s.import_items("d", "jsonl", items)
    return db_file


@pytest.mark.parametrize("option, words", [
    ("tie-rule=first-annotator", "--option tie-rule: not an option of mcq studies (did you mean tie_rule?)"),
    ("nonsense=1", "--option nonsense: not an option of mcq studies; it takes identical_screens, sample_unit, "
                   "missing_context, tie_rule, idle_cap, min_check_accuracy, max_too_fast_share, min_agreement"),
    ("keep_rule=unanimous", "--option keep_rule applies to persona_filter studies, not mcq"),
    ("idle_cap=-1", "--option idle_cap=-1: time on an item counts at most this long without input"),
    ("min_check_accuracy=1.5", "--option min_check_accuracy=1.5: flag annotators below"),
    ("max_too_fast_share=nan", "--option max_too_fast_share=nan: flag annotators with"),
])
def test_an_option_the_task_does_not_read_is_refused(mcq_db, capsys, option, words):
    before = _dump(mcq_db)
    capsys.readouterr()
    assert main(["study", "create", "s", "--task", "mcq", "--dataset", "d", "--option", "missing_context=keep",
                 "--option", option, "--db", mcq_db]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0]
    assert _dump(mcq_db) == before


def test_the_options_a_task_reads_are_taken(mcq_db, capsys):
    assert main(["study", "create", "s", "--task", "mcq", "--dataset", "d", "--option", "missing_context=keep",
                 "--option", "tie_rule=first-annotator", "--option", "idle_cap=0", "--option",
                 "min_agreement=0.5", "--db", mcq_db]) == 0
    with Store.open(mcq_db, mode="ro") as s:
        st = s.get_study("s")
    assert st.settings["tie_rule"] == "first-annotator"
    assert st.settings["options"]["idle_cap"] == "0" and st.settings["options"]["min_agreement"] == "0.5"
