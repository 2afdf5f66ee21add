"""`prefval recover FILE` puts back what a screen kept in a rescue file (the quit's limit passed, ctrl+c, kill -9
while it said "saving…"), and `prefval status` lists the rescue files beside a database: before, nothing read them
back (a newcomer's kill -9 left an answer in a file no command could restore)."""
from __future__ import annotations

import json
import sqlite3

import pytest

from annotator.cli import main
from annotator.rescue import write_rescue
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from storage.models import AnnotationIn, Event, new_id
from storage.store import Store
from tests.conftest import make_mcq_items


def _study(db: str) -> tuple[str, list]:
    items, _ = make_mcq_items(3, with_context=False)
    with Store.open(db, mode="create") as s:
        s.import_items("ds", "jsonl", items)
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=3, annotators=["ana"],
                                  annotators_per_item=1))
        study = s.get_study("st")
        ana = s.ensure_annotator("ana")
        return study.id, [(a, ana.id) for a in s.assignments(study.id, ana.id)]


def _kept(db: str) -> tuple[str, str, str]:
    """A rescue file beside db with one answer (option B of the first item), one adjudication-free session end;
    returns (file, answer id, event id)."""
    study_id, assigned = _study(db)
    a, ana = assigned[0]
    with Store.open(db, mode="ro") as s:
        unit = next(u for u in s.units(study_id) if u.id == a.unit_id)
    row = AnnotationIn(study_id=study_id, unit_id=unit.id, item_id=unit.item_id, annotator_id=ana, assignment_id=a.id,
                       status="answered", answer={"choice": 1, "letter": "B", "shown": "B", "cant_tell": False},
                       source="human", seconds=4.5)
    rid = new_id()
    event = Event(id=new_id(), at="2026-12-04T02:00:00+00:00", kind="session_end", study_id=study_id,
                  annotator_id=ana, payload={"index": 0})
    return str(write_rescue(db, [(row, rid)], [event])), rid, event.id


def _answers(db: str) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT id, status, answer, seconds FROM annotations ORDER BY submitted_at").fetchall()


def test_recover_puts_the_rows_back_once_and_status_lists_the_file(db_file, capsys):
    path, rid, eid = _kept(db_file)
    assert main(["status", "--db", db_file]) == 0
    out = capsys.readouterr().out
    assert "1 rescue file(s) beside the database hold decisions" in out and path in out
    assert main(["recover", path]) == 0  # into the database the file names
    out = capsys.readouterr().out
    assert out.strip() == (f"{db_file}: restored 1 annotation(s), 0 adjudication(s), 1 event(s) from {path}; "
                           "0 already there; the file can be deleted")
    rows = _answers(db_file)
    assert [(i, st, json.loads(ans)["choice"], sec) for i, st, ans, sec in rows] == [(rid, "answered", 1, 4.5)]
    with Store.open(db_file, mode="ro") as s:
        assert [e.id for e in s.events("session_end")] == [eid]
    assert main(["recover", path]) == 0  # again: nothing written twice
    assert "restored 0 annotation(s), 0 adjudication(s), 0 event(s)" in capsys.readouterr().out
    assert len(_answers(db_file)) == 1


def test_a_row_for_an_item_released_meanwhile_is_refused_and_said(db_file, capsys):
    path, rid, _ = _kept(db_file)
    assert main(["study", "release", "st", "--annotator", "ana", "--db", db_file]) == 0
    capsys.readouterr()
    assert main(["recover", path]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"not restored: annotations row {rid}: ")
    assert _answers(db_file) == []


@pytest.mark.parametrize("text, said", [
    ('{"table": "meta", "database": "x.db"}\nnot json\n', "line 2: not JSON"),
    ('{"table": "annotations", "row": {"id": "a"}}\n', "line 1: field 'study_id'"),
    ('{"table": "annotations", "row": {}}\n', "line 1: field 'id'"),
    ('{"table": "what"}\n', "line 1: field 'table': unknown table 'what'"),
    ('', "line 1: field 'database': no meta line"),
])
def test_a_broken_rescue_file_is_one_line_and_changes_nothing(db_file, tmp_path, capsys, text, said):
    _study(db_file)
    before = _answers(db_file)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(text, encoding="utf-8")
    assert main(["recover", str(bad), "--db", db_file]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"prefval: error: {bad}: {said}"), err
    assert _answers(db_file) == before


def test_an_adjudication_kept_by_the_screen_is_put_back(db_file, capsys):
    from annotator.adjudication import AdjudicationSession
    from annotator.tasks.base import Decision
    from tests.test_adjudication import answered_mcq_study

    with answered_mcq_study(db_file) as s:
        session = AdjudicationSession(s, "st", "judy")
        pending = session.prepare(Decision({"choice": 1, "letter": "B", "shown": "B", "cant_tell": False}))
        unit = pending.unit_id
    table, row = pending.unwritten()  # what the controller writes into the rescue file while it waits
    path = str(write_rescue(db_file, [], [], [row]))
    assert main(["recover", path]) == 0
    assert "restored 0 annotation(s), 1 adjudication(s), 0 event(s)" in capsys.readouterr().out
    with Store.open(db_file, mode="ro") as s:
        log = s.adjudication_log(s.get_study("st").id)
    assert [(a.id, a.unit_id, a.kind, a.answer["choice"]) for a in log] == [(pending.row_id, unit, "final", 1)]
