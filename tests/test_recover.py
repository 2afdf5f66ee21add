"""`prefval recover FILE` puts back what a screen kept in a rescue file (the quit's limit passed, ctrl+c, kill -9
while it said "saving…"), and `prefval status` lists the rescue files beside a database: before, nothing read them
back (a newcomer's kill -9 left an answer in a file no command could restore)."""
from __future__ import annotations

import hashlib
import json
import os
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


DECIDED = "2026-12-04T01:59:58.250000+00:00"  # when the key was pressed (the rescue row's decided_at)
OPTION_B = {"choice": 1, "letter": "B", "shown": "B", "cant_tell": False}


def _row(db: str, **change) -> tuple[AnnotationIn, str]:
    """ana's answer (option B) on the first unit of study "st" in db as the screen would keep it, with `change`
    applied (AnnotationIn fields)."""
    with Store.open(db, mode="ro") as s:
        study = s.get_study("st")
        ana = s.find_annotator("ana")
        a = s.assignments(study.id, ana.id)[0]
        unit = next(u for u in s.units(study.id) if u.id == a.unit_id)
    fields = dict(study_id=study.id, unit_id=unit.id, item_id=unit.item_id, annotator_id=ana.id, assignment_id=a.id,
                  status="answered", answer=OPTION_B, source="human", seconds=4.5)
    return AnnotationIn(**{**fields, **change}), new_id()


def _kept(db: str) -> tuple[str, str, str]:
    """A rescue file beside db with one answer (option B of the first item, decided at DECIDED) and the session's
    end; returns (file, answer id, event id)."""
    study_id, _ = _study(db)
    row, rid = _row(db)
    event = Event(id=new_id(), at="2026-12-04T02:00:00+00:00", kind="session_end", study_id=study_id,
                  annotator_id=row.annotator_id, payload={"index": 0})
    return str(write_rescue(db, [(row, rid, DECIDED)], [event])), rid, event.id


def _answers(db: str) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT id, status, answer, seconds FROM annotations ORDER BY submitted_at").fetchall()


def _dump(db: str) -> list[str]:
    with sqlite3.connect(db) as c:
        return list(c.iterdump())


def test_recover_puts_the_rows_back_once_and_status_lists_the_file(db_file, capsys):
    path, rid, eid = _kept(db_file)
    assert main(["status", "--db", db_file]) == 0
    out = capsys.readouterr().out
    assert "\\n" not in out  # a newline escaped as text (a newcomer saw a literal \n above the list)
    assert out.splitlines()[-2:] == [
        "1 rescue file(s) beside the database: 1 holding rows a screen could not write (put them back with "
        "prefval recover FILE):", f"  {path}: 2 row(s) not in the database"]
    assert main(["recover", path]) == 0  # into the database the file names
    out = capsys.readouterr().out
    assert out.strip() == (f"{db_file}: restored 1 annotation(s), 0 adjudication(s), 1 event(s) from {path}; "
                           "0 already there; the file can be deleted")
    rows = _answers(db_file)
    assert [(i, st, json.loads(ans)["choice"], sec) for i, st, ans, sec in rows] == [(rid, "answered", 1, 4.5)]
    with sqlite3.connect(db_file) as c:  # the time it was decided, not the time of the recovery
        assert c.execute("SELECT submitted_at FROM annotations").fetchone()[0] == DECIDED
    with Store.open(db_file, mode="ro") as s:
        assert [e.id for e in s.events("session_end")] == [eid]
    assert main(["recover", path]) == 0  # again: nothing written twice
    assert "restored 0 annotation(s), 0 adjudication(s), 0 event(s)" in capsys.readouterr().out
    assert len(_answers(db_file)) == 1
    # status no longer says the file holds rows to put back (it did after a recover)
    assert main(["status", "--db", db_file]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == [
        "1 rescue file(s) beside the database: nothing left in them to restore:",
        f"  {path}: every row is in the database: the file can be deleted"]
    assert main(["status", "--db", db_file, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["rescue_files"] == [
        {"path": path, "state": "every row is in the database: the file can be deleted", "nothing_to_restore": True,
         "readable": True, "live_screen": None}]


def test_a_decision_made_again_since_stays_and_the_older_is_not_restored(db_file, capsys):
    path, rid, _ = _kept(db_file)
    again, _ = _row(db_file, answer={"choice": 2, "letter": "C", "shown": "C", "cant_tell": False})
    with Store.open(db_file, mode="rw") as s:  # ana reopened the screen and answered the item again, later
        s.add_annotation(again, submitted_at="2026-12-04T02:05:00+00:00", supersede_latest=True)
    before = _answers(db_file)
    assert main(["recover", path]) == 0
    cap = capsys.readouterr()
    assert cap.err.splitlines() == [
        "not restored: line 2: ana's answer on item q1 (decided 2026-12-04 01:59:58): ana decided the item again "
        "at 2026-12-04 02:05:00; that later decision stays"]
    assert cap.out.strip().endswith("restored 0 annotation(s), 0 adjudication(s), 1 event(s) from " + path +
                                    "; 0 already there; 1 superseded by a later decision (above): nothing else to "
                                    "restore; delete the file when you no longer need those rows")
    assert _answers(db_file) == before  # option C stays the current answer; the older B is not put over it
    assert json.loads(before[0][2])["choice"] == 2


def test_an_archived_study_refuses_until_unarchived(db_file, capsys):
    path, rid, _ = _kept(db_file)
    assert main(["study", "archive", "st", "--db", db_file]) == 0
    capsys.readouterr()
    before = _dump(db_file)
    assert main(["recover", path]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == ("not restored: line 2: ana's answer on item q1: study 'st' is archived (read-only); "
                      "`prefval study unarchive st`, then run prefval recover again")
    assert len(err) == 2 and err[1].startswith("not restored: line 3: the session_end event: study 'st' is archived")
    assert _dump(db_file) == before
    assert main(["study", "unarchive", "st", "--db", db_file]) == 0
    assert main(["recover", path]) == 0
    assert [r[0] for r in _answers(db_file)] == [rid]


def _file(tmp_path, db: str, *rows: dict) -> str:
    """A rescue file kept for db holding `rows` ({"table": ..., "row": ...} records) after its meta line."""
    f = tmp_path / "kept.jsonl"
    from storage.db import now_iso

    lines = [{"table": "meta", "database": db, "written_at": now_iso()}, *rows]
    f.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return str(f)


def _ann(row: AnnotationIn, rid: str, **extra) -> dict:
    return {"table": "annotations", "row": {"id": rid, **row.model_dump(), **extra}}


@pytest.mark.parametrize("change, said", [
    ({"answer": {"choice": 9, "letter": "Z", "shown": "Z", "cant_tell": False}}, "line 3: field 'answer': "),
    ({"item_id": "nope"}, "line 3: field 'item_id': unit "),
    ({"unit_id": "nope"}, "line 3: field 'unit_id': study 'st' has no unit nope"),
    ({"annotator_id": "nope"}, "line 3: field 'annotator_id': no annotator with id nope"),
    ({"assignment_id": "nope"}, "line 3: field 'assignment_id': no assignment nope"),
    ({"status": "skipped"}, "line 3: field 'answer': a row of status 'skipped' holds no answer"),
    ({"source": "llm"}, "line 3: field 'source': a screen keeps people's rows only, not 'llm'"),
])
def test_a_row_the_database_or_the_task_cannot_take_is_one_line_and_nothing_is_written(db_file, tmp_path, capsys,
                                                                                        change, said):
    _study(db_file)
    # a good row first, the bad one on line 3: before, the good row was written and the error came after it
    path = _file(tmp_path, db_file, _ann(*_row(db_file)), _ann(*_row(db_file, **change)))
    before = _dump(db_file)
    assert main(["recover", path]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"prefval: error: {path}: {said}"), err
    assert _dump(db_file) == before


def test_a_row_for_an_item_released_meanwhile_is_refused_and_said(db_file, capsys):
    path, rid, _ = _kept(db_file)
    assert main(["study", "release", "st", "--annotator", "ana", "--db", db_file]) == 0
    assert capsys.readouterr().err.splitlines() == [  # said before the release (it went on: it was asked for)
        f"warning: {path} holds 1 row(s) of 'ana' in study st that a screen could not write: put them back first "
        f"(prefval recover {path}); for an item released now recover refuses them until `prefval study assign st "
        "--annotators ana` gives it back"]
    assert main(["recover", path]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == ["not restored: line 2: ana's answer on item q1: the item was released from ana's queue by a "
                   "study command since (study release, unassign or rename-annotator); `prefval study assign st "
                   "--annotators ana` gives it back if no one else took it, then run prefval recover again"]
    assert _answers(db_file) == []
    assert main(["study", "assign", "st", "--annotators", "ana", "--db", db_file]) == 0  # as it says
    assert main(["recover", path]) == 0 and [r[0] for r in _answers(db_file)] == [rid]


@pytest.mark.parametrize("text, said", [
    ('{"table": "meta", "database": "x.db"}\nnot json\n', "line 2: not JSON"),
    ('{"table": "meta", "database": "x.db"}\n{"table": "annotations", "row": {"id": "a"}}\n', "line 2: field 'study_id'"),
    ('{"table": "meta", "database": "x.db"}\n{"table": "annotations", "row": {}}\n', "line 2: field 'id'"),
    ('{"table": "meta", "database": "x.db"}\n{"table": "what"}\n', "line 2: field 'table': unknown table 'what'"),
    ('{"table": "events", "row": {}}\n', "line 1: field 'table': the first line must be the meta line"),
    ('{"table": "meta", "database": "x.db"}\n{"table": "meta", "database": "y.db"}\n',
     "line 2: field 'table': the meta line must be the file's first line, and only one"),
    ('{"table": "meta", "database": "x.db", "format": 2}\n{"table": "events", "row": {}}\n',
     "line 2: field 'sha256': missing (every row of this file's format carries one)"),
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
    assert row["decided_at"] and log[0].submitted_at == row["decided_at"]  # the time it was decided


def test_an_adjudication_the_task_cannot_take_or_adjudicated_again_since(db_file, tmp_path, capsys):
    from annotator.adjudication import AdjudicationSession
    from annotator.tasks.base import Decision
    from tests.test_adjudication import answered_mcq_study

    with answered_mcq_study(db_file) as s:
        session = AdjudicationSession(s, "st", "judy")
        _, row = session.prepare(Decision(OPTION_B)).unwritten()
    bad = {**row, "answer": {"choice": 9, "letter": "Z", "shown": "Z", "cant_tell": False}}
    path = _file(tmp_path, db_file, {"table": "adjudications", "row": bad})
    before = _dump(db_file)
    assert main(["recover", path]) == 1  # before: restored, then export and report failed with an IndexError
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"prefval: error: {path}: line 2: field 'answer': "), err
    assert _dump(db_file) == before
    # eve adjudicated the unit after judy's decision was kept: judy's is not put over it
    with Store.open(db_file, mode="rw") as s:
        eve = s.ensure_annotator("eve")
        later = s.add_adjudication(row["study_id"], row["unit_id"], eve.id, "exclude", reason="ambiguous")
    path = _file(tmp_path, db_file, {"table": "adjudications", "row": row})
    assert main(["recover", path]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("not restored: line 2: judy's adjudication of item q1 (decided ")
    assert err[0].endswith(f"eve adjudicated the item again at {later.submitted_at[:19].replace('T', ' ')}; that "
                           "later decision stays")
    with Store.open(db_file, mode="ro") as s:
        assert [a.id for a in s.adjudication_log(s.get_study("st").id)] == [later.id]


@pytest.mark.parametrize("row, said", [
    ({"kind": "exclude", "reason": None}, "field 'reason': an exclusion needs a reason"),
    ({"kind": "final", "answer": None}, "field 'answer': a final answer needs the answer, a JSON object"),
    ({"kind": "bogus"}, "field 'kind': 'bogus' is neither 'final' nor 'exclude'"),
    ({"extra": 1}, "field 'extra': not a field of an adjudication row"),
])
def test_an_adjudication_row_not_as_a_screen_writes_it(db_file, tmp_path, capsys, row, said):
    _study(db_file)
    good = {"id": "a1", "study_id": "s", "unit_id": "u", "adjudicator_id": "j", "kind": "final", "answer": OPTION_B,
            "reason": None}
    path = _file(tmp_path, db_file, {"table": "adjudications", "row": {**good, **row}})
    before = _dump(db_file)
    assert main(["recover", path]) == 1
    assert capsys.readouterr().err.splitlines() == [f"prefval: error: {path}: line 2: {said}"]
    assert _dump(db_file) == before


def test_recover_into_another_database_says_which_one_the_file_was_kept_for(db_file, tmp_path, capsys):
    path, _, _ = _kept(db_file)
    other = str(tmp_path / "other.db")
    with Store.open(other, mode="create") as s:  # a database of its own study "st" (other ids)
        items, _ = make_mcq_items(3, with_context=False)
        s.import_items("ds", "jsonl", items)
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=3, annotators=["ana"],
                                  annotators_per_item=1))
    before = _dump(other)
    assert main(["recover", path, "--db", other]) == 1
    err = capsys.readouterr().err.splitlines()
    study_id = json.loads(open(path, encoding="utf-8").read().splitlines()[1])["row"]["study_id"]
    assert err == [f"prefval: error: {path}: line 2: field 'study_id': no study with id {study_id} in {other} (the "
                   f"file was kept for {db_file}); nothing restored"]
    assert _dump(other) == before


@pytest.mark.parametrize("checksum", [True, False], ids=["with its checksum", "a file without checksums"])
def test_a_row_edited_in_the_file(db_file, tmp_path, capsys, checksum):
    path, rid, _ = _kept(db_file)
    lines = open(path, encoding="utf-8").read().splitlines()
    rec = json.loads(lines[1])
    assert rec["sha256"] == hashlib.sha256(json.dumps(rec["row"], sort_keys=True, separators=(",", ":")).encode()
                                           ).hexdigest()
    if not checksum:  # as files kept before prefval wrote checksums: edits show only against the database
        del rec["sha256"]
        meta = json.loads(lines[0])
        del meta["format"]
        lines[0] = json.dumps(meta)
        open(path, "w", encoding="utf-8").write("\n".join([lines[0], json.dumps(rec), *lines[2:]]) + "\n")
        assert main(["recover", path]) == 0
        capsys.readouterr()
    # edited, same id (a newcomer's A -> B with consistent fields went in unnoticed: the row was not in yet)
    rec["row"]["answer"] = {"choice": 0, "letter": "A", "shown": "A", "cant_tell": False}
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join([lines[0], json.dumps(rec)]) + "\n", encoding="utf-8")
    before = _dump(db_file)
    assert main(["recover", str(edited)]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"prefval: error: {edited}: line 2: field 'sha256': the row was changed after the screen kept it (its "
        "checksum no longer matches); nothing restored" if checksum else
        f"prefval: error: {edited}: line 2: field 'answer': row {rid} is in {db_file} with another value (the file "
        "was edited, or it was kept for another database); nothing restored"]
    assert _dump(db_file) == before


def test_a_decision_time_after_the_file_was_written(db_file, tmp_path, capsys):
    _study(db_file)
    path = _file(tmp_path, db_file, _ann(*_row(db_file), decided_at="2030-01-01T00:00:00+00:00"))
    before = _dump(db_file)
    assert main(["recover", path]) == 1  # a newcomer's 2030: status then said "last activity 2030-01-01"
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"prefval: error: {path}: line 2: field 'decided_at': "
                                               "2030-01-01T00:00:00.000000+00:00 is after the file was written ("), err
    assert _dump(db_file) == before


@pytest.mark.parametrize("make, said", [
    (lambda p: p.mkdir(), "not a regular file (a directory)"),
    (lambda p: None, "no such rescue file"),
    (lambda p: p.write_text('{"table": "meta", "database": "x.db"}\n[1, 2]\n'),
     "line 2: field 'table': the line is not a JSON object"),
    (lambda p: p.write_text('{"table": "meta", "database": "x.db"}\n"hello"\n'),
     "line 2: field 'table': the line is not a JSON object"),
    (lambda p: p.write_text('{"table": "meta", "database": "x.db"}\n{"table": "annotations", "row": [1, 2]}\n'),
     "line 2: field 'row': missing or not a JSON object"),
    (lambda p: p.write_text('{"table": "meta", "database": null}\n'), "line 1: field 'database': missing or not a path"),
])
def test_a_rescue_file_that_cannot_be_read_is_one_line(db_file, tmp_path, capsys, make, said):
    _study(db_file)
    f = tmp_path / "r.jsonl"
    make(f)
    before = _dump(db_file)
    assert main(["recover", str(f), "--db", db_file]) == 1
    assert capsys.readouterr().err.splitlines() == [f"prefval: error: {f}: {said}"]
    assert _dump(db_file) == before


def test_help_names_the_default_database(capsys):
    with pytest.raises(SystemExit):
        main(["recover", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "default: the database the file was kept for, named on its first line" in out
    assert "$PREFVAL_DB" not in out


def test_a_database_busy_beyond_the_timeout_is_one_line_and_nothing_is_written(db_file, capsys, monkeypatch):
    import storage.db

    path, _, _ = _kept(db_file)
    monkeypatch.setattr(storage.db, "BUSY_TIMEOUT_MS", 200)  # another program holds the lock longer than that
    lock = sqlite3.connect(db_file, isolation_level=None)
    try:
        lock.execute("BEGIN IMMEDIATE")
        assert main(["recover", path]) == 1  # before: "unexpected OperationalError: database is locked"
    finally:
        lock.close()
    assert capsys.readouterr().err.splitlines() == [
        f"prefval: error: {db_file}: the database is busy: another program held its write lock longer than 0.2 s, "
        "so the write that waited was not made; run the command again once it is done"]
    assert _answers(db_file) == []
    monkeypatch.undo()
    assert main(["recover", path]) == 0 and len(_answers(db_file)) == 1


def test_one_id_twice_in_the_file(db_file, tmp_path, capsys):
    _study(db_file)
    row, rid = _row(db_file)
    path = _file(tmp_path, db_file, _ann(row, rid), _ann(row, rid))
    before = _dump(db_file)
    assert main(["recover", path]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"prefval: error: {path}: line 3: field 'id': {rid} is the id of line 2 too; nothing restored"]
    assert _dump(db_file) == before


def test_two_rows_of_one_unit_go_in_the_order_they_were_decided(db_file, tmp_path, capsys):
    _study(db_file)
    (b, b_id), (c, c_id) = _row(db_file), _row(db_file, answer={"choice": 2, "letter": "C", "shown": "C",
                                                                  "cant_tell": False})
    # C was decided after B, but comes first in the file
    path = _file(tmp_path, db_file, _ann(c, c_id, decided_at="2026-12-04T02:00:05+00:00"),
                 _ann(b, b_id, decided_at="2026-12-04T02:00:01+00:00"))
    assert main(["recover", path]) == 0
    with sqlite3.connect(db_file) as con:
        rows = con.execute("SELECT id, supersedes FROM annotations ORDER BY submitted_at").fetchall()
    assert rows == [(b_id, None), (c_id, b_id)]  # C, the later decision, is the one in force


def test_a_later_skip_does_not_take_the_rescued_answer_away(db_file, capsys):
    # ana reopened the screen after the kill -9, saw the item without its lost answer and pressed s (before:
    # "superseded", and the export said skipped, although `s` on an answered item only moves on)
    path, rid, _ = _kept(db_file)
    skip, _ = _row(db_file, status="skipped", answer=None)
    with Store.open(db_file, mode="rw") as s:
        skipped = s.add_annotation(skip, submitted_at="2026-12-04T02:10:00+00:00", supersede_latest=True)
    assert main(["recover", path]) == 0
    cap = capsys.readouterr()
    assert cap.err.splitlines() == [
        "restored: line 2: ana's answer on item q1 (decided 2026-12-04 01:59:58) is put after ana's later skipped row "
        "of 2026-12-04 02:10:00, which it replaces as the answer in force"]
    with Store.open(db_file, mode="ro") as s:
        current = s.current_annotations(s.get_study("st").id, status=("answered", "skipped"))
    assert [(a.id, a.status, a.supersedes) for a in current] == [(rid, "answered", skipped.id)]
    assert current[0].submitted_at > "2026-12-04T02:10:00"  # after the skip, so its own time is kept in the event
    with Store.open(db_file, mode="ro") as s:
        (event,) = s.events("recovered")
    assert event.payload == {"file": path, "decided_at": {rid: DECIDED}}


def test_a_later_answer_keeps_a_rescued_skip_out(db_file, capsys):
    _study(db_file)
    row, rid = _row(db_file, status="skipped", answer=None)
    with Store.open(db_file, mode="rw") as s:
        s.add_annotation(_row(db_file)[0], submitted_at="2026-12-04T02:10:00+00:00", supersede_latest=True)
    path = str(write_rescue(db_file, [(row, rid, DECIDED)], []))
    assert main(["recover", path]) == 0
    assert capsys.readouterr().err.startswith("not restored: line 2: ana's skipped on item q1 (decided ")
    assert len(_answers(db_file)) == 1


def test_a_file_a_running_screen_keeps_is_left_to_it(db_file, capsys):
    import subprocess
    import sys

    path, _, _ = _kept(db_file)
    lines = open(path, encoding="utf-8").read().splitlines()
    screen = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "prefval", "annotate"])
    try:
        meta = {**json.loads(lines[0]), "pid": screen.pid}
        open(path, "w", encoding="utf-8").write("\n".join([json.dumps(meta), *lines[1:]]) + "\n")
        before = _dump(db_file)
        assert main(["recover", path]) == 1  # before: restored, and the screen then hung on its own row
        assert capsys.readouterr().err.splitlines() == [
            f"prefval: error: {path}: the screen that keeps it (process {screen.pid}) is still running and still "
            "saving these rows; let it save them (or quit it with q), then run prefval recover again if the file "
            "is still there"]
        assert _dump(db_file) == before
        assert main(["status", "--db", db_file]) == 0
        assert capsys.readouterr().out.splitlines()[-2:] == [
            "1 rescue file(s) beside the database: 1 still being saved by a running screen:",
            f"  {path}: a screen (process {screen.pid}) is still saving it"]
    finally:
        screen.kill()
        screen.wait()
    assert main(["recover", path]) == 0  # the screen is gone: its rows can be put back


def test_a_file_of_a_copied_folder_needs_db(db_file, tmp_path, capsys):
    import shutil

    path, _, _ = _kept(db_file)
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(db_file, copy / "prefval.db")
    shutil.copy(path, copy / os.path.basename(path))
    moved = str(copy / os.path.basename(path))
    here = str(copy / "prefval.db")
    before = _dump(db_file), _dump(here)
    assert main(["recover", moved]) == 1  # before: written into the original's database, named on line 1
    assert capsys.readouterr().err.splitlines() == [
        f"prefval: error: {moved}: it lies beside {here} but was kept for {db_file} (a copied or moved folder?); "
        "say which database gets its rows with --db PATH"]
    assert (_dump(db_file), _dump(here)) == before
    assert main(["status", "--db", here]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"  {moved}: kept for {db_file}: 2 row(s) not in the database; for this database: prefval recover {moved} "
        f"--db {here}")
    assert main(["recover", moved, "--db", here]) == 0
    assert len(_answers(here)) == 1 and _dump(db_file) == before[0]


@pytest.mark.parametrize("change, said", [
    (lambda r: r["row"].update(seconds="Infinity"), "field 'seconds': "),
    (lambda r: r["row"].update(supersedes="nonexistent"), "field 'supersedes': the database sets it"),
    (lambda r: r["row"].update(started_at="garbage"), "field 'started_at': not an ISO time ('garbage')"),
    (lambda r: r["row"].update(decided_at="2026-12-04T01:00:00"), "field 'decided_at': '2026-12-04T01:00:00' has no "
                                                                   "time zone"),
    (lambda r: r["row"].update(started_at="2026-12-04T02:00:00+00:00", decided_at="2026-12-04T01:00:00+00:00"),
     "field 'decided_at': 2026-12-04T01:00:00.000000+00:00 is before the visit started"),
])
def test_an_annotation_row_not_as_a_screen_writes_it(db_file, tmp_path, capsys, change, said):
    _study(db_file)
    rec = _ann(*_row(db_file))
    change(rec)
    f = tmp_path / "kept.jsonl"
    f.write_text(json.dumps({"table": "meta", "database": db_file}) + "\n" + json.dumps(rec).replace(
        '"Infinity"', "Infinity") + "\n", encoding="utf-8")
    before = _dump(db_file)
    assert main(["recover", str(f)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"prefval: error: {f}: line 2: {said}"), err
    assert _dump(db_file) == before


@pytest.mark.parametrize("event, said", [
    ({"kind": "annotator_excluded", "payload": {"annotator": "ben"}},
     "field 'kind': a screen keeps visit and session_end events only, not 'annotator_excluded'"),
    ({"kind": "visit", "payload": {"unit_id": "u", "seconds": 1e9999}},
     "field 'payload.seconds': inf is not a number of seconds"),
    ({"kind": "visit", "payload": {"unit_id": "u", "seconds": -1}}, "field 'payload.seconds': -1 is not a number of seconds"),
])
def test_an_event_a_screen_never_keeps(db_file, tmp_path, capsys, event, said):
    _study(db_file)
    row = {"id": "e1", "at": "2026-12-04T02:00:00+00:00", "study_id": None, "annotator_id": None, **event}
    path = _file(tmp_path, db_file, {"table": "events", "row": row})
    before = _dump(db_file)
    assert main(["recover", path]) == 1
    assert capsys.readouterr().err.splitlines() == [f"prefval: error: {path}: line 2: {said}"]
    assert _dump(db_file) == before


def test_times_with_another_zone_are_compared_as_instants(db_file, capsys):
    # 08:06:50+05:00 is 03:06:50 UTC, before ana's later answer at 03:08:08 (as text it sorted after it)
    _study(db_file)
    row, rid = _row(db_file)
    with Store.open(db_file, mode="rw") as s:
        s.add_annotation(_row(db_file, answer={"choice": 2, "letter": "C", "shown": "C", "cant_tell": False})[0],
                         submitted_at="2026-12-04T03:08:08+00:00", supersede_latest=True)
    path = str(write_rescue(db_file, [(row, rid, "2026-12-04T08:06:50+05:00")], []))
    assert main(["recover", path]) == 0
    assert "decided 2026-12-04 03:06:50" in capsys.readouterr().err  # said in UTC, and not restored
    assert len(_answers(db_file)) == 1


def test_a_study_whose_rows_wait_in_a_rescue_file_is_not_deleted(db_file, capsys):
    path, _, _ = _kept(db_file)  # the study's only answer is in the file: delete would take it for empty
    before = _dump(db_file)
    assert main(["study", "delete", "st", "--db", db_file]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"prefval: error: study 'st' has 1 row(s) in {path} that a screen could not write; put them back first "
        f"(prefval recover {path}), or delete that file if they are not wanted"]
    assert _dump(db_file) == before
    os.unlink(path)
    assert main(["study", "delete", "st", "--db", db_file]) == 0


def test_status_counts_the_files_recover_cannot_read_apart(db_file, capsys):
    path, _, _ = _kept(db_file)
    empty = path.replace(".jsonl", "-2.jsonl")
    open(empty, "w").close()
    folder = path.replace(".jsonl", "-3.jsonl")
    os.mkdir(folder)
    assert main(["status", "--db", db_file]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-4] == ("3 rescue file(s) beside the database: 1 holding rows a screen could not write (put them "
                       "back with prefval recover FILE), 2 that prefval recover cannot read:")
    assert out[-3:] == [  # by name: "-2.jsonl" sorts before ".jsonl"
        f"  {empty}: prefval recover cannot read it ({empty}: line 1: field 'database': no meta line naming the "
        "database it was kept for (not a prefval rescue file?))",
        f"  {folder}: prefval recover cannot read it ({folder}: not a regular file (a directory))",
        f"  {path}: 2 row(s) not in the database"]


def test_a_row_of_a_checksummed_file_without_its_checksum_or_with_a_note_on_an_answer(db_file, capsys):
    # a newcomer deleted the row's sha256 and changed its answer to the key and its note: it went in
    path, _, _ = _kept(db_file)
    lines = open(path, encoding="utf-8").read().splitlines()
    rec = json.loads(lines[1])
    del rec["sha256"]
    open(path, "w", encoding="utf-8").write("\n".join([lines[0], json.dumps(rec), *lines[2:]]) + "\n")
    before = _dump(db_file)
    assert main(["recover", path]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"prefval: error: {path}: line 2: field 'sha256': missing (every row of this file's format carries one); "
        "nothing restored"]
    # a note on an answered row (a screen keeps notes in rows of their own: the export would drop it)
    rec["row"]["note"] = "edited"
    rec["sha256"] = hashlib.sha256(json.dumps(rec["row"], sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    open(path, "w", encoding="utf-8").write("\n".join([lines[0], json.dumps(rec), *lines[2:]]) + "\n")
    assert main(["recover", path]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"prefval: error: {path}: line 2: field 'note': a row of status 'answered' holds no note"]
    assert _dump(db_file) == before
