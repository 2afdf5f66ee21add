"""An archived study is read-only until `prefval study unarchive` (issue 12): annotate, adjudicate, bundle export and
merge, assign, release, unassign, rename-annotator and exclude-annotator refuse with one line naming the study and
the command that brings it back, and the database file keeps every row as it was; once unarchived it is annotated
again."""
from __future__ import annotations

import os
import sqlite3

import pytest

from annotator.bundles import export_bundle
from annotator.cli import main
from annotator.session import Session
from annotator.study_setup import create_study
from annotator.tasks.base import Decision, StudySpec
from storage.errors import PrefvalError
from storage.store import Store
from tests.conftest import make_mcq_items

ANSWER_A = {"choice": 0, "letter": "A", "shown": "A", "cant_tell": False}


def _dump(path: str) -> list[str]:
    """Every row of every table of the file, as SQL text (the database's whole content)."""
    con = sqlite3.connect(path)
    try:
        return list(con.iterdump())
    finally:
        con.close()


def _study_with_answers(db_file: str, tmp_path) -> str:
    """Study `st` (mcq, 4 items, 2 annotators per item): ana and bo answer the first item of their queues, ana's
    bundle is cut, then the study is archived. Returns the bundle's path."""
    with Store.open(db_file, mode="create") as s:
        items, _ = make_mcq_items(4, with_context=False)
        s.import_items("ds", "jsonl", items)
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=3, annotators_per_item=2,
                                  annotators=["ana", "bo"]))
        for who in ("ana", "bo"):
            Session(s, "st", who).decide(Decision(dict(ANSWER_A)))
        bundle = str(tmp_path / "ana.bundle")
        export_bundle(s, "st", "ana", bundle)
    with Store.open(bundle, mode="rw") as b:  # ana answers one more item offline
        Session(b, "st", "ana").decide(Decision(dict(ANSWER_A)))
    assert main(["study", "archive", "st", "--db", db_file]) == 0
    return bundle


@pytest.mark.slow
def test_every_writing_command_refuses_an_archived_study_and_writes_nothing(db_file, tmp_path, capsys, monkeypatch):
    bundle = _study_with_answers(db_file, tmp_path)
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    before = _dump(db_file)
    out_bundle = str(tmp_path / "bo.bundle")
    commands = [
        ["annotate", "st", "--annotator", "ana"],
        ["annotate", "st", "--annotator", "newcomer"],  # refused before the newcomer question
        ["adjudicate", "st", "--annotator", "judge"],
        ["bundle", "export", "st", "--annotator", "bo", "--out", out_bundle],
        ["bundle", "merge", bundle],
        ["study", "assign", "st", "--annotators", "cy,dee"],
        ["study", "release", "st"],
        ["study", "unassign", "st", "--annotator", "bo"],
        ["study", "rename-annotator", "st", "bo", "bob"],
        ["study", "exclude-annotator", "st", "bo", "--reason", "checks"],
    ]
    for argv in commands:
        capsys.readouterr()
        rc = main(argv + ["--db", db_file])
        got = capsys.readouterr()
        lines = got.err.strip().splitlines()
        assert rc == 1, argv
        assert len(lines) == 1 and "study 'st' is archived" in lines[0], (argv, got.err)
        assert "`prefval study unarchive st`" in lines[0] and "nothing was written" in lines[0]
        assert got.out == ""
        assert _dump(db_file) == before, argv  # not one row changed
    assert not os.path.exists(out_bundle)
    with Store.open(db_file, mode="rw") as s:  # the screens' own sessions refuse too (AnnotateApp, AdjudicateApp)
        for who in ("ana", "carl"):
            try:
                Session(s, "st", who)
            except PrefvalError as exc:
                assert "study 'st' is archived and cannot be annotated" in str(exc)
            else:
                raise AssertionError("an archived study opened for annotation")
    assert _dump(db_file) == before


@pytest.mark.slow
def test_merge_names_the_bundle_and_unarchive_opens_the_study_again(db_file, tmp_path, capsys):
    bundle = _study_with_answers(db_file, tmp_path)
    capsys.readouterr()
    assert main(["bundle", "merge", bundle, "--db", db_file]) == 1
    assert capsys.readouterr().err.strip() == (
        f"prefval: error: {bundle}: study 'st' is archived and cannot be merged into (read-only until "
        f"`prefval study unarchive st` brings it back); nothing was written (database: {db_file})")
    assert main(["study", "unarchive", "st", "--db", db_file]) == 0
    assert "is back" in capsys.readouterr().out
    assert main(["study", "list", "--db", db_file]) == 0
    assert capsys.readouterr().out.split("\t")[0] == "st"
    assert main(["bundle", "merge", bundle, "--db", db_file]) == 0  # ana's offline answer comes in now
    with Store.open(db_file, mode="rw") as s:
        st = s.get_study("st")
        ana = s.find_annotator("ana")
        assert len([a for a in s.current_annotations(st.id) if a.annotator_id == ana.id]) == 2
        Session(s, "st", "bo").decide(Decision(dict(ANSWER_A)))  # and annotated again on the main file
        bo = s.find_annotator("bo")
        assert len([a for a in s.current_annotations(st.id) if a.annotator_id == bo.id]) == 2
