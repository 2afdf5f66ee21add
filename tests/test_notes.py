"""Every note reaches the export, a notes section of the report and `prefval status`, whatever became of the item."""
from __future__ import annotations

import json

from annotator.cli import main
from annotator.session import Session
from annotator.tasks.base import Decision
from storage.store import Store


def _answer(choice: int) -> Decision:
    return Decision({"choice": choice, "letter": "ABCD"[choice], "shown": "A", "cant_tell": False})


def _three_notes(db: str) -> None:
    with Store.open(db, mode="create") as s:
        w = Session(s, "st", "ana")
        w.note("option C has a typo")
        w.skip()  # a note on a skipped item
        w.note("fine \x1b[31mitem")
        w.decide(_answer(1))  # a note on an answered item
        w.note("come back to this")  # a note on an item left open
        w.close()


def test_notes_on_skipped_answered_and_open_items_everywhere(mcq_study, capsys):
    _three_notes(mcq_study)
    assert main(["export", "st", "--db", mcq_study, "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    by_status = {r["status"]: r for r in rows}
    assert by_status["skipped"]["note"] == "option C has a typo"
    assert by_status["answered"]["note"] == "fine \x1b[31mitem"  # data stays as written in the export
    assert by_status["note"]["note"] == "come back to this"
    assert sorted(r["note"] for r in rows if r["note"]) == sorted(
        ["option C has a typo", "fine \x1b[31mitem", "come back to this"])

    assert main(["report", "st", "--db", mcq_study, "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "notes (3)" in md
    for text, status in (("option C has a typo", "skipped"), ("come back to this", "open")):
        assert any(text in line and f"| {status} |" in line for line in md.splitlines()), text

    assert main(["status", "st", "--db", mcq_study]) == 0
    out = capsys.readouterr().out
    assert "notes (3):" in out and "(skipped): option C has a typo" in out and "(open): come back to this" in out
    assert "\x1b" not in out and "fine \\x1b[31mitem" in out  # no escape sequence reaches the terminal
    assert main(["status", "st", "--db", mcq_study, "--format", "json"]) == 0
    notes = json.loads(capsys.readouterr().out)["studies"][0]["notes"]
    assert [n["status"] for n in notes] == ["skipped", "answered", "open"]
    assert all(n["annotator"] == "ana" for n in notes)
