"""Merging an offline bundle back: every check names the file and the problem in one line and leaves the main
database unchanged; the summary counts rows by status; a bundle row's note must be text or absent (CONTRIBUTING.md,
"Mutation testing")."""
from __future__ import annotations

import datetime as dt
import shutil
import sqlite3

import pytest

from annotator.bundles import export_bundle, merge_bundles
from annotator.study_setup import assign_named
from storage.bundles import MergeSummary, _row_problem, is_bundle_file
from storage.errors import PrefvalError
from storage.models import AnnotationIn
from storage.store import Store
from tests.mutation.mcq_plan import mcq_items

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.timezone.utc)


@pytest.fixture
def main_db(tmp_path):
    path = str(tmp_path / "main.db")
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec

    with Store.open(path, mode="create") as s:
        s.import_items("ds", "jsonl", mcq_items({"m0": (0, []), "m1": (1, [])}))
        st = create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], annotators_per_item=1))
        assign_named(s, st, ["ana"])
    return path


def _bundle(main_db, tmp_path, name="ana.db"):
    out = str(tmp_path / name)
    with Store.open(main_db, mode="rw") as s:
        export_bundle(s, "st", "ana", out)
    with Store.open(out, mode="rw") as b:
        study = b.get_study("st")
        ana = b.ensure_annotator("ana")
        units = {u.id: u for u in b.units(study.id)}
        for a, status in zip(b.assignments(study.id, ana.id), ("answered", "skipped")):
            u = units[a.unit_id]
            b.add_annotation(AnnotationIn(study_id=study.id, unit_id=u.id, item_id=u.item_id, annotator_id=ana.id,
                                          assignment_id=a.id, status=status,
                                          answer={"choice": 0} if status == "answered" else None))
    return out


def _count(path):
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT COUNT(*) FROM annotations").fetchone()[0]
    finally:
        con.close()


def test_merge_counts_and_line(main_db, tmp_path):
    b = _bundle(main_db, tmp_path)
    assert is_bundle_file(b) and not is_bundle_file(main_db) and not is_bundle_file(tmp_path / "none.db")
    with Store.open(main_db, mode="rw") as s:
        (first,) = merge_bundles(s, [b])
        assert (first.study, first.annotator, first.added, first.already_present) == ("st", "ana",
                                                                                     {"answered": 1, "skipped": 1}, 0)
        assert first.n_added == 2
        assert first.line() == f"{b}: ana on study 'st': 2 rows added (1 answered, 1 skipped), 0 already present"
        again = s.merge_bundle(b)
        assert (again.added, again.already_present, again.n_added) == ({}, 2, 0)
        assert again.line() == f"{b}: ana on study 'st': 0 rows added, 2 already present"
        (ev,) = s.events("bundle_merged")
        assert ev.payload == {"path": "ana.db", "added": 2, "already_present": 0}
    assert MergeSummary("p", "s", "a", {"note": 2, "answered": 1}, 0).line() == \
        "p: a on study 's': 3 rows added (1 answered, 2 note), 0 already present"


def test_dry_run_writes_nothing(main_db, tmp_path):
    b = _bundle(main_db, tmp_path)
    with Store.open(main_db, mode="rw") as s:
        assert s.merge_bundle(b, dry_run=True).n_added == 2
    assert _count(main_db) == 0


def _tamper(path, sql, params=()):
    con = sqlite3.connect(path)
    con.execute("DROP TRIGGER IF EXISTS annotations_no_update")
    con.execute(sql, params)
    con.commit()
    con.close()


@pytest.mark.parametrize("sql, problem", [
    ("DELETE FROM meta WHERE key = 'bundle'", "not a prefval bundle (no bundle record; make one with `prefval bundle "
                                              "export`)"),
    ("UPDATE meta SET value = json_set(value, '$.database_id', 'other') WHERE key = 'bundle'",
     "this bundle was made from another database, not {main}"),
    ("UPDATE meta SET value = json_set(value, '$.study_id', 'x', '$.study', 'gone') WHERE key = 'bundle'",
     "its study 'gone' does not exist in {main}"),
    ("UPDATE meta SET value = json_set(value, '$.annotator_id', 'x', '$.annotator', 'zed') WHERE key = 'bundle'",
     "annotator 'zed' is not assigned in study 'st' of {main}"),
    ("DROP TABLE annotations", "not a prefval bundle (no such table: annotations)"),
])
@pytest.mark.slow
def test_refused_bundles(main_db, tmp_path, sql, problem):
    b = _bundle(main_db, tmp_path)
    _tamper(b, sql)
    with Store.open(main_db, mode="rw") as s:
        with pytest.raises(PrefvalError) as info:
            merge_bundles(s, [b])
    assert str(info.value) == f"{b}: " + problem.format(main=main_db)
    assert _count(main_db) == 0


@pytest.mark.parametrize("column, value, field, problem", [
    ("annotator_id", "someone", "annotator_id", "not the bundle's annotator and study"),
    ("unit_id", "no-unit", "unit_id", "no such unit in study 'st'"),
    ("item_id", "no-item", "item_id", "not an item of its unit"),
    ("assignment_id", "no-assignment", "assignment_id", "the annotator is not assigned this unit in {main}"),
])
def test_refused_rows(main_db, tmp_path, column, value, field, problem):
    b = _bundle(main_db, tmp_path)
    con = sqlite3.connect(b)
    row_id = con.execute("SELECT id FROM annotations ORDER BY submitted_at LIMIT 1").fetchone()[0]
    con.close()
    _tamper(b, "PRAGMA foreign_keys = OFF")
    _tamper(b, f"UPDATE annotations SET {column} = ? WHERE id = ?", (value, row_id))
    with Store.open(main_db, mode="rw") as s:
        with pytest.raises(PrefvalError) as info:
            s.merge_bundle(b)
    assert str(info.value) == f"{b}: annotation {row_id}: field '{field}': " + problem.format(main=main_db)
    assert _count(main_db) == 0


def test_files_that_are_no_bundle(main_db, tmp_path):
    text = tmp_path / "t.db"
    text.write_text("hello")
    half = tmp_path / "half.db"
    shutil.copy(main_db, half)
    with open(half, "r+b") as fh:
        fh.truncate(4096)
    with Store.open(main_db, mode="rw") as s:
        for path, problem in ((tmp_path / "gone.db", "no such bundle file"),
                              (text, "not a prefval bundle (not an SQLite file)")):
            with pytest.raises(PrefvalError) as info:
                s.merge_bundle(path)
            assert str(info.value) == f"{path}: {problem}"
        with pytest.raises(PrefvalError) as info:
            s.merge_bundle(half)
        assert str(info.value).startswith(f"{half}: ")


def test_export_counts_each_table_and_records_what_and_when(main_db, tmp_path, monkeypatch):
    import storage.bundles

    monkeypatch.setattr(storage.bundles, "now_iso", lambda: "2026-05-06T07:08:09.000000+00:00")
    out = str(tmp_path / "ana.db")
    with Store.open(main_db, mode="rw") as s:
        counts = export_bundle(s, "st", "ana", out)
        study_id, ana_id = s.get_study("st").id, s.find_annotator("ana").id
    # dataset ds; items m0, m1 (no conversation), their 2 units, ana's 2 assignments, no annotation yet
    assert counts == {"datasets": 1, "contexts": 0, "context_messages": 0, "items": 2, "study_items": 2,
                      "assignments": 2, "annotations": 0}
    with Store.open(out, mode="ro") as b:
        info = b.bundle_info()
    assert (info["study"], info["study_id"], info["annotator"], info["annotator_id"], info["created_at"]) == (
        "st", study_id, "ana", ana_id, "2026-05-06T07:08:09.000000+00:00")


def test_a_bundle_for_an_annotator_the_database_does_not_know_is_refused(main_db, tmp_path):
    from storage.bundles import BundleContent

    with Store.open(main_db, mode="rw") as s, Store.open(str(tmp_path / "new.db"), mode="create") as out:
        content = BundleContent(study=s.get_study("st"), annotator_id="nobody", units=[], items={},
                                dataset_names={})
        with pytest.raises(PrefvalError) as info:
            s.write_bundle(out, content)
    assert str(info.value) == f"{main_db}: no annotator with id nobody"


def test_a_merged_row_whose_supersedes_was_blanked_in_the_bundle_is_a_conflict(main_db, tmp_path):
    b = _bundle(main_db, tmp_path)
    with Store.open(b, mode="rw") as bs:
        study, ana = bs.get_study("st"), bs.ensure_annotator("ana")
        first = next(a for a in bs.annotations(study.id) if a.status == "answered")
        again = bs.add_annotation(AnnotationIn(study_id=study.id, unit_id=first.unit_id, item_id=first.item_id,
                                               annotator_id=ana.id, assignment_id=first.assignment_id,
                                               status="answered", answer={"choice": 1}), supersede_latest=True)
    assert again.supersedes == first.id
    with Store.open(main_db, mode="rw") as s:
        assert s.merge_bundle(b).added == {"answered": 2, "skipped": 1}
    _tamper(b, "UPDATE annotations SET supersedes = NULL WHERE id = ?", (again.id,))
    with Store.open(main_db, mode="rw") as s:
        with pytest.raises(PrefvalError) as info:
            s.merge_bundle(b)
    assert str(info.value) == (f"{b}: annotation {again.id}: field 'supersedes': conflict: this row was merged "
                               "before and has been changed in the bundle since (a merged row never changes); "
                               f"nothing merged into {main_db}")
    assert _count(main_db) == 3


def test_a_bundle_rows_note_must_be_text_or_absent():
    row = {"id": "r1", "unit_id": "u1", "status": "skipped", "source": "human", "answer": None,
           "submitted_at": "2026-12-01T11:00:00+00:00"}
    assert _row_problem(row, None, NOW, {}) is None
    assert _row_problem({**row, "note": "too vague"}, None, NOW, {}) is None
    assert _row_problem({**row, "note": 5}, None, NOW, {}) == ("note", "not text")
    assert _row_problem({**row, "note": ["a"]}, None, NOW, {}) == ("note", "not text")
