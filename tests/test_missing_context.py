"""Issue 21 part 4: PersonaMem questions imported without their conversations. `prefval import` says how many items
lack theirs; `prefval study create` for a task whose screen shows the conversation (mcq, item_quality) refuses them
in one line unless --option missing_context=keep|drop; a blind test, which never shows it, takes them. Counts
worked from the sample files by hand (questions_sample.csv: 12 questions, 6 on context d317e4ad..., 3 on
6888baa5..., 3 on 474d9c64...; the real 32k split: 589 questions and no contexts file)."""
from __future__ import annotations

import ast
import csv
import re
import sqlite3

import pytest

from annotator.cli import main
from storage.store import Store
from tests.conftest import SAMPLE_DATA, SHARED_DATASETS

QUESTIONS = SAMPLE_DATA / "personamem" / "questions_sample.csv"
CONTEXTS = SAMPLE_DATA / "personamem" / "shared_contexts_sample.jsonl"
REAL = SHARED_DATASETS / "personamem" / "questions_32k.csv"


def _bytes(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def _rows(db: str, sql: str) -> list:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_import_says_how_many_items_lack_their_conversation(db_file, capsys):
    assert main(["import", "personamem", str(QUESTIONS), "--dataset", "pm", "--db", db_file]) == 0
    err = capsys.readouterr().err
    assert "warning: 12 of 12 items lack their conversation" in err and "missing_context=keep" in err
    assert _rows(db_file, "SELECT COUNT(*) FROM items WHERE context_id IS NULL") == [(12,)]


def test_import_with_some_contexts_counts_the_rest(db_file, tmp_path, capsys):
    first = tmp_path / "ctx.jsonl"  # the file's first context only: d317e4ad..., which 6 of the 12 questions use
    first.write_text(CONTEXTS.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    assert main(["import", "personamem", str(QUESTIONS), str(first), "--dataset", "pm", "--db", db_file]) == 0
    assert "warning: 6 of 12 items lack their conversation" in capsys.readouterr().err
    before = _bytes(db_file)
    assert main(["study", "create", "m", "--task", "mcq", "--dataset", "pm", "--db", db_file]) == 1
    err = capsys.readouterr().err
    assert "6 of the 12 items of dataset 'pm' lack their conversation" in err
    assert "--option missing_context=keep" in err and "--option missing_context=drop" in err
    assert len(err.strip().splitlines()) == 1
    assert _bytes(db_file) == before  # nothing written
    assert main(["study", "create", "m", "--task", "mcq", "--dataset", "pm", "--option", "missing_context=drop",
                 "--db", db_file]) == 0
    out = capsys.readouterr().out
    assert "task mcq, 6 items" in out and "6 item(s) lack their conversation: left out" in out
    assert main(["study", "create", "k", "--task", "mcq", "--dataset", "pm", "--option", "missing_context=keep",
                 "--db", db_file]) == 0
    out = capsys.readouterr().out
    assert "task mcq, 12 items" in out and "6 item(s) lack their conversation: kept" in out
    with Store.open(db_file, mode="ro") as s:
        assert s.get_study("k").settings["missing_context"] == {"items": 6, "rule": "keep"}
        kept = {s.get_item(u.item_id).context_id is None for u in s.units(s.get_study("m").id)}
    assert kept == {False}  # the study that dropped them holds only items with their conversation


def test_a_blind_test_takes_items_without_their_conversation(db_file, capsys):
    assert main(["import", "personamem", str(QUESTIONS), "--dataset", "pm", "--db", db_file]) == 0
    assert main(["study", "create", "b", "--task", "blind_test", "--dataset", "pm", "--db", db_file]) == 0
    out = capsys.readouterr().out
    assert "task blind_test, 12 items" in out and "lack their conversation" not in out
    assert main(["study", "create", "q", "--task", "item_quality", "--dataset", "pm", "--db", db_file]) == 1
    assert "12 of the 12 items of dataset 'pm' lack their conversation, which the item_quality screen shows" \
        in capsys.readouterr().err


def test_importing_the_contexts_afterwards_gives_the_items_theirs(db_file, capsys):
    assert main(["import", "personamem", str(QUESTIONS), "--dataset", "pm", "--db", db_file]) == 0
    capsys.readouterr()
    assert main(["import", "personamem", str(QUESTIONS), str(CONTEXTS), "--dataset", "pm", "--db", db_file]) == 0
    got = capsys.readouterr()
    assert "0 items added, 12 already present, 3 contexts" in got.out
    assert "12 item(s) imported before without their conversation have it now" in got.out
    assert "lack their conversation" not in got.err
    assert _rows(db_file, "SELECT COUNT(*) FROM items WHERE context_id IS NULL") == [(0,)]
    assert main(["study", "create", "m", "--task", "mcq", "--dataset", "pm", "--db", db_file]) == 0
    assert "task mcq, 12 items" in capsys.readouterr().out


def test_option_values_are_checked(db_file, capsys):
    assert main(["import", "personamem", str(QUESTIONS), "--dataset", "pm", "--db", db_file]) == 0
    assert main(["study", "create", "m", "--task", "mcq", "--dataset", "pm", "--option", "missing_context=yes",
                 "--db", db_file]) == 1
    assert "--option missing_context=yes: use refuse or keep or drop" in capsys.readouterr().err


def test_help_names_the_option(capsys):
    with pytest.raises(SystemExit):
        main(["study", "create", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "missing_context=refuse|keep|drop" in text and "identical_screens=merge|keep" in text


def _distinct_blind_screens(path) -> int:
    """Distinct (question, set of option texts) of the CSV, the options read without their "(a) " prefixes:
    worked from the file, independently of prefval."""
    screens = set()
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            options = [re.sub(r"^\([a-j]\)\s*", "", o.strip(), count=1) for o in ast.literal_eval(row["all_options"])]
            screens.add((row["user_question_or_message"], tuple(sorted(options))))
    return len(screens)


def test_the_real_sample_without_contexts(db_file, capsys):
    if not REAL.exists():
        pytest.skip("the real PersonaMem sample (../shared/datasets/personamem/) is absent")
    assert main(["import", "personamem", str(REAL), "--dataset", "pm", "--db", db_file]) == 0
    assert "warning: 589 of 589 items lack their conversation" in capsys.readouterr().err
    before = _bytes(db_file)
    assert main(["study", "create", "m", "--task", "mcq", "--dataset", "pm", "--db", db_file]) == 1
    err = capsys.readouterr().err
    assert "589 of the 589 items of dataset 'pm' lack their conversation" in err
    assert len(err.strip().splitlines()) == 1 and _bytes(db_file) == before
    # a blind test takes them; 178 questions have the same text and options (in another order) as another one,
    # placed in another of the split's long contexts: 589 - 178 = 411 distinct screens
    assert _distinct_blind_screens(REAL) == 411
    assert main(["study", "create", "b", "--task", "blind_test", "--dataset", "pm", "--db", db_file]) == 0
    out = capsys.readouterr().out
    assert "task blind_test, 411 items" in out
    assert "178 item(s) identical on screen to another were kept once (178 screens)" in out
    # kept without their conversation, the mcq screens are those of the blind test
    assert main(["study", "create", "m", "--task", "mcq", "--dataset", "pm", "--option", "missing_context=keep",
                 "--db", db_file]) == 0
    out = capsys.readouterr().out
    assert "task mcq, 411 items" in out and "589 item(s) lack their conversation: kept" in out


def test_attention_checks_lacking_the_conversation_follow_the_same_rule(db_file, tmp_path, capsys):
    first = tmp_path / "ctx.jsonl"  # 6 questions with their conversation, 6 without
    first.write_text(CONTEXTS.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    assert main(["import", "personamem", str(QUESTIONS), str(first), "--dataset", "pm", "--db", db_file]) == 0
    # 3 of the 6 with their conversation in the study: 3 left to check with; the 6 without are no checks
    assert main(["study", "create", "m", "--task", "mcq", "--dataset", "pm", "--sample", "3", "--checks", "4",
                 "--option", "missing_context=drop", "--db", db_file]) == 1
    assert "has 3 keyed items a mcq study can use as attention checks besides its items (needs 4)" \
        in capsys.readouterr().err
    assert main(["study", "create", "m", "--task", "mcq", "--dataset", "pm", "--sample", "3", "--checks", "3",
                 "--option", "missing_context=drop", "--db", db_file]) == 0
    with Store.open(db_file, mode="ro") as s:
        units = s.units(s.get_study("m").id)
        checks = [s.get_item(u.item_id) for u in units if u.extra.get("check")]
    assert len(checks) == 3 and all(it.context_id is not None for it in checks)
