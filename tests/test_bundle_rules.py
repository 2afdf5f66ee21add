"""Offline bundle rules (issue 9), each case as a kind: a new name cuts a bundle only with the confirmation
`annotate` asks for; answers on items the annotator no longer holds (released, unassigned) are left out of the merge
(issue 12; tests/test_bundle_released.py) and one that would put an item over its quota refuses the bundle whole;
exports are recorded so that taking an annotator off a study warns while their bundle is out; attention checks are indistinguishable inside a bundle; merge names a recreated study as another
instance and never leaves side files beside the bundle it reads."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3

import pytest

from annotator.bundles import export_bundle
from annotator.cli import main
from annotator.study_setup import claim_assignments, create_study
from annotator.tasks.base import StudySpec
from storage.models import AnnotationIn, ItemIn
from storage.payloads import McqPayload
from storage.store import Store
from tests.test_bundles import _counts, _rows, blind_main  # noqa: F401  (fixtures)
from tests.test_task_blind_test import blind_db  # noqa: F401


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(argv)
    got = capsys.readouterr()
    return rc, got.out, got.err.strip()


def _queue(path: str, who: str) -> list[str]:
    with Store.open(path, mode="ro") as s:
        a = s.find_annotator(who)
        return [x.unit_id for x in s.assignments(s.get_study("bt").id, a.id)] if a else []


# ---- 2. a new name needs the confirmation annotate asks for ---------------------------------------------------
@pytest.mark.slow
def test_export_under_a_new_name_needs_the_same_confirmation_as_annotate(blind_db, tmp_path, capsys, monkeypatch):
    with Store.open(blind_db, mode="rw") as s:  # ana holds 2 of the 5 units (3 annotators per item)
        study = s.get_study("bt")
        assert claim_assignments(s, study, s.ensure_annotator("ana"), limit=2) == 2
    before = _counts(blind_db)
    out = str(tmp_path / "anna.bundle")
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    rc, _, err = _run(capsys, ["bundle", "export", "bt", "--annotator", "anna", "--out", out, "--db", blind_db])
    assert rc == 1 and err.count("\n") == 0
    assert "already has annotators ana" in err and "Did you mean 'ana'?" in err and "--new-annotator" in err
    assert not os.path.exists(out) and _counts(blind_db) == before and _queue(blind_db, "anna") == []
    # on a terminal: asked once, and "no" claims nothing
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    asked: list[str] = []
    monkeypatch.setattr("builtins.input", lambda q: asked.append(q) or "n")
    rc, _, err = _run(capsys, ["bundle", "export", "bt", "--annotator", "anna", "--out", out, "--db", blind_db])
    assert rc == 1 and len(asked) == 1 and "Start as 'anna'? [y/N]" in asked[0] and "nothing claimed" in err
    assert not os.path.exists(out) and _counts(blind_db) == before
    # confirmed by the option: anna claims all 5 units (each has 2 free slots), and the bundle holds exactly those
    rc, _, _ = _run(capsys, ["bundle", "export", "bt", "--annotator", "anna", "--new-annotator", "--out", out,
                             "--db", blind_db])
    assert rc == 0 and len(asked) == 1
    assert len(_queue(blind_db, "anna")) == 5
    assert sorted(r["id"] for r in _rows(out, "study_items")) == sorted(_queue(blind_db, "anna"))
    # the annotator who already holds items is never asked
    rc, _, _ = _run(capsys, ["bundle", "export", "bt", "--annotator", "ana", "--out", str(tmp_path / "ana.bundle"),
                             "--db", blind_db])
    assert rc == 0 and len(asked) == 1


# ---- 1. answers on items the annotator no longer holds are left out; over an item's quota, the bundle refused --
def _answer(path: str, study_name: str, who: str, n: int) -> list[str]:
    """who answers the first n units of their queue in the database at path; returns those units' ids."""
    with Store.open(path, mode="rw") as b:
        study = b.get_study(study_name)
        ann = b.ensure_annotator(who)
        units = {u.id: u for u in b.units(study.id)}
        done = []
        for a in b.assignments(study.id, ann.id)[:n]:
            u = units[a.unit_id]
            b.add_annotation(AnnotationIn(study_id=study.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                          assignment_id=a.id, status="answered",
                                          answer={"choice": 0, "letter": "A", "shown": "A", "cant_tell": False}))
            done.append(u.id)
        return done


def _ext(path: str, unit_id: str) -> str:
    with Store.open(path, mode="ro") as s:
        unit = s.units_by_id([unit_id])[unit_id]
        return s.get_items([unit.item_id])[unit.item_id].external_id


def _sha(path: str) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


@pytest.mark.slow
def test_bundle_with_answers_on_released_items_leaves_them_out(blind_main, tmp_path, capsys):
    out = str(tmp_path / "ana.bundle")
    assert _run(capsys, ["bundle", "export", "bt", "--annotator", "ana", "--out", out, "--db", blind_main])[0] == 0
    answered = _answer(out, "bt", "ana", 2)
    # the export is on record: study, annotator, time, file name and item count (ana holds all 5 units)
    (rec,) = _rows(blind_main, "bundle_exports")
    assert (rec["file_name"], rec["n_items"], rec["study_name"]) == (out, 5, "bt") and rec["exported_at"]
    with Store.open(blind_main, mode="ro") as s:
        st, ana = s.get_study("bt"), s.find_annotator("ana")
        assert s.bundles_out(st.id) == s.bundles_out(st.id, ana.id) == [
            {"bundle_id": rec["id"], "annotator_id": ana.id, "annotator": "ana", "file_name": out,
             "exported_at": rec["exported_at"], "n_items": 5}]
        assert s.bundles_out(st.id, "someone-else") == []
    rc, said, err = _run(capsys, ["study", "unassign", "bt", "--annotator", "ana", "--db", blind_main])
    assert rc == 0 and "5 unanswered item(s) back to the pool" in said
    assert err.count("\n") == 0 and "warning" in err and "'ana'" in err and out in err and "5 items" in err, err
    before = _counts(blind_main)
    rc, said, err = _run(capsys, ["bundle", "merge", out, "--db", blind_main])
    assert rc == 4 and err.count("\n") == 0 and "2 row(s) NOT merged" in err, err
    names = sorted(_ext(blind_main, u) for u in answered)
    assert said.strip().startswith(f"{out}: ana on study 'bt': 0 rows added, 0 already present; 2 rows NOT merged "
                                   "(2 answered) on 2 item(s) 'ana' no longer holds"), said
    assert sorted(said.strip().rsplit(": ", 1)[1].split(", ")) == names
    # not even the first answer; only the merge's own record (the bundle is back)
    assert _counts(blind_main) == {**before, "bundle_merges": before["bundle_merges"] + 1}
    # given back to her, the same bundle merges the rest: her 2 answers
    with Store.open(blind_main, mode="rw") as s:
        st, ana = s.get_study("bt"), s.find_annotator("ana")
        s.add_assignments(st.id, [(u, ana.id, i, 1) for i, u in enumerate(answered)])
    rc, said, _ = _run(capsys, ["bundle", "merge", out, "--db", blind_main])
    assert rc == 0 and "2 rows added (2 answered)" in said
    with Store.open(blind_main, mode="ro") as s:
        assert s.bundles_out(s.get_study("bt").id) == []  # merged back
    assert _counts(blind_main)["annotations"] == before["annotations"] + 2
    # merged back: no longer out, so taking items from ana warns no more
    rc, _, err = _run(capsys, ["study", "release", "bt", "--annotator", "ana", "--db", blind_main])
    assert rc == 0 and err == ""


def _quota1_study(blind_db: str) -> None:
    """bt1: the 5 blind items with one annotator per item; ana claims all of them."""
    with Store.open(blind_db, mode="rw") as s:
        study = create_study(s, StudySpec(name="bt1", task="blind_test", datasets=["blindsrc"], seed=9,
                                          annotators_per_item=1))
        assert claim_assignments(s, study, s.ensure_annotator("ana")) == 5


@pytest.mark.slow
def test_an_answer_that_would_put_an_item_over_its_quota_refuses_the_bundle(blind_db, tmp_path, capsys):
    _quota1_study(blind_db)
    out = str(tmp_path / "ana.bundle")
    assert _run(capsys, ["bundle", "export", "bt1", "--annotator", "ana", "--out", out, "--db", blind_db])[0] == 0
    first = _answer(out, "bt1", "ana", 1)
    # meanwhile dan is assigned every unit by name (assign does not look at holders) and answers ana's first item
    assert _run(capsys, ["study", "assign", "bt1", "--annotators", "dan", "--db", blind_db])[0] == 0
    with Store.open(blind_db, mode="rw") as s:
        st, dan = s.get_study("bt1"), s.find_annotator("dan")
        dan_queue = [a.unit_id for a in s.assignments(st.id, dan.id)]
    assert first[0] in dan_queue
    _answer_units(blind_db, "bt1", "dan", first)
    before = _counts(blind_db)
    rc, _, err = _run(capsys, ["bundle", "merge", out, "--db", blind_db])
    # quota 1, dan answered it: 1 other + ana = 2 > 1
    assert rc == 1 and err.count("\n") == 0 and out in err and "'ana'" in err, err
    assert f"item '{_ext(blind_db, first[0])}'" in err and "1 other annotator(s) and a quota of 1" in err
    assert _counts(blind_db) == before


def _answer_units(path: str, study_name: str, who: str, unit_ids: list[str]) -> None:
    with Store.open(path, mode="rw") as s:
        st, ann = s.get_study(study_name), s.find_annotator(who)
        units = s.units_by_id(unit_ids)
        held = {a.unit_id: a.id for a in s.assignments(st.id, ann.id)}
        for uid in unit_ids:
            s.add_annotation(AnnotationIn(study_id=st.id, unit_id=uid, item_id=units[uid].item_id,
                                          annotator_id=ann.id, assignment_id=held[uid], status="answered",
                                          answer={"choice": 1, "letter": "B", "shown": "B", "cant_tell": False}))


@pytest.mark.slow
def test_a_bundle_out_is_warned_about_listed_and_blocks_delete_until_merged(blind_db, tmp_path, capsys):
    out = str(tmp_path / "ana.bundle")
    rc, _, _ = _run(capsys, ["bundle", "export", "bt", "--annotator", "ana", "--out", out, "--db", blind_db])
    assert rc == 0
    rc, said, _ = _run(capsys, ["status", "bt", "--db", blind_db])
    assert rc == 0 and f"bundle out (not merged back): {out} of ana, 5 items" in said
    # renamed (same id, nothing released): no warning, the bundle merges as before
    rc, said, err = _run(capsys, ["study", "rename-annotator", "bt", "ana", "anna", "--db", blind_db])
    assert rc == 0 and "is now 'anna'" in said and err == ""
    rc, said, err = _run(capsys, ["study", "release", "bt", "--annotator", "anna", "--db", blind_db])
    assert rc == 0 and "5 untouched item(s) back to the pool" in said
    assert err.count("\n") == 0 and "warning" in err and "'anna'" in err and out in err, err
    # the study has no annotation yet, but deleting it would orphan the bundle: refused, nothing changed
    before, digest = _counts(blind_db), _sha(blind_db)
    rc, _, err = _run(capsys, ["study", "delete", "bt", "--db", blind_db])
    assert rc == 1 and err.count("\n") == 0 and out in err and "'anna'" in err and "merge it first" in err, err
    assert _counts(blind_db) == before and _sha(blind_db) == digest
    # merged back (nothing answered in it, and nothing held any more: no row to refuse), it is no longer out
    rc, said, _ = _run(capsys, ["bundle", "merge", out, "--db", blind_db])
    assert rc == 0 and "0 rows added" in said
    (merge,) = _rows(blind_db, "bundle_merges")
    assert merge["bundle_id"] == _rows(blind_db, "bundle_exports")[0]["id"] and merge["added"] == 0
    rc, said, _ = _run(capsys, ["status", "bt", "--db", blind_db])
    assert "bundle out" not in said
    assert _run(capsys, ["study", "delete", "bt", "--db", blind_db])[0] == 0
    # the log is append-only and outlives the study
    assert len(_rows(blind_db, "bundle_exports")) == 1


# ---- 4. merge names a recreated study, and reads a bundle without leaving files beside it -----------------------
@pytest.mark.slow
def test_merge_into_a_study_deleted_and_created_again_names_another_instance(blind_db, tmp_path, capsys):
    out = str(tmp_path / "ana.bundle")
    assert _run(capsys, ["bundle", "export", "bt", "--annotator", "ana", "--out", out, "--db", blind_db])[0] == 0
    assert _run(capsys, ["bundle", "merge", out, "--db", blind_db])[0] == 0  # nothing answered yet: not out
    _answer(out, "bt", "ana", 2)
    assert _run(capsys, ["study", "delete", "bt", "--db", blind_db])[0] == 0
    with Store.open(blind_db, mode="rw") as s:
        create_study(s, StudySpec(name="bt", task="blind_test", datasets=["blindsrc"], seed=9, annotators=["ana", "ben", "cy"]))
    before, digest = _counts(blind_db), _sha(blind_db)
    rc, _, err = _run(capsys, ["bundle", "merge", out, "--db", blind_db])
    assert rc == 1 and err.count("\n") == 0 and out in err, err
    assert "another instance of study 'bt'" in err and "does not exist" not in err
    # both creation times to the minute, as "YYYY-MM-DD HH:MM UTC"
    assert re.search(r"a new one of the same name created \d{4}-\d\d-\d\d \d\d:\d\d UTC; the bundle is of the one "
                     r"created \d{4}-\d\d-\d\d \d\d:\d\d UTC\); nothing merged into ", err), err
    assert _counts(blind_db) == before and _sha(blind_db) == digest


def _sides(path: str) -> dict[str, bytes]:
    return {s: open(path + s, "rb").read() for s in ("-wal", "-shm", "-journal") if os.path.exists(path + s)}


@pytest.mark.slow
def test_merge_reads_answers_left_in_the_bundles_wal_and_creates_no_side_file(blind_db, tmp_path, capsys):
    live = str(tmp_path / "live.bundle")
    assert _run(capsys, ["bundle", "export", "bt", "--annotator", "ana", "--out", live, "--db", blind_db])[0] == 0
    holder = sqlite3.connect(live)  # keeps the WAL from being checkpointed when the session's store closes
    holder.execute("PRAGMA journal_mode = WAL")
    holder.execute("SELECT COUNT(*) FROM annotations").fetchone()
    _answer(live, "bt", "ana", 2)
    # what a killed session leaves: the bundle and its -wal, the 2 answers only in the -wal
    killed = str(tmp_path / "killed.bundle")
    shutil.copyfile(live, killed)
    shutil.copyfile(live + "-wal", killed + "-wal")
    holder.close()
    alone = sqlite3.connect(f"file:{killed}?mode=ro&immutable=1", uri=True)
    assert alone.execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == 0  # the main file alone: none
    alone.close()
    file_before, sides_before = _sha(killed), _sides(killed)
    assert set(sides_before) == {"-wal"}
    rc, said, _ = _run(capsys, ["bundle", "merge", killed, "--db", blind_db])
    assert rc == 0 and "2 rows added (2 answered)" in said
    assert _sha(killed) == file_before and _sides(killed) == sides_before  # nothing created or changed beside it
    # a bundle without side files (WAL-mode after a session closed cleanly, or fresh from export) gets none
    assert _sides(live) == {}
    fresh = str(tmp_path / "cy.bundle")
    assert _run(capsys, ["bundle", "export", "bt", "--annotator", "cy", "--new-annotator", "--out", fresh,
                         "--db", blind_db])[0] == 0
    for path, added in ((live, "0 rows added, 2 already present"), (fresh, "0 rows added, 0 already present")):
        digest = _sha(path)
        rc, said, _ = _run(capsys, ["bundle", "merge", path, "--db", blind_db])
        assert rc == 0 and added in said, said
        assert _sides(path) == {} and _sha(path) == digest
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


# ---- 3. attention checks cannot be told apart inside a bundle ----------------------------------------------------
def _keyed(prefix: str, n: int) -> list[ItemIn]:
    """n four-option items of one shape, each with its key (any of them can be an attention check)."""
    return [ItemIn(external_id=f"{prefix}{i}", kind="mcq",
                   payload=McqPayload(question=f"{prefix} question {i}?", options=[f"{prefix} {i} option {j}"
                                                                                   for j in range(4)],
                                      correct_index=i % 4).model_dump(exclude_none=True)) for i in range(n)]


@pytest.mark.parametrize("checks", ["chk", "2"])
def test_attention_checks_are_indistinguishable_in_every_table_and_column(db_file, tmp_path, checks):
    out = str(tmp_path / "ana.bundle")
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", _keyed("q", 8))
        s.import_items("chk", "jsonl", _keyed("c", 3))
        study = create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=3, annotators=["ana"],
                                          annotators_per_item=1, sample=6, checks=checks,
                                          options={"min_check_accuracy": 0.8}))
        assert "checks" in study.settings  # the main file knows them
        units = s.units(study.id)
        check_units = {u.id for u in units if u.extra.get("check")}
        check_items = {u.item_id for u in units if u.extra.get("check")}
        # the study appends its checks after its items: positions 6 and up in the main file
        assert sorted(u.position for u in units if u.id in check_units) == list(range(6, 6 + len(check_units)))
        main_hashes = {it.content_hash for it in s.get_items([u.item_id for u in units]).values()}
        export_bundle(s, "st", "ana", out)
    n_checks = len(check_units)
    assert n_checks == (3 if checks == "chk" else 2)
    marked = check_units | check_items
    conn = sqlite3.connect(out)
    conn.row_factory = sqlite3.Row
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    n_check_rows = 0
    for table in tables:
        rows = [dict(r) for r in conn.execute(f"SELECT * FROM {table}")]
        is_check = [any(v in marked for v in r.values()) for r in rows]
        n_check_rows += sum(is_check)
        if not any(is_check):
            continue
        chk = [r for r, c in zip(rows, is_check) if c]
        other = [r for r, c in zip(rows, is_check) if not c]
        assert other, table
        for col in rows[0]:
            theirs, ours = [r[col] for r in chk], [r[col] for r in other]
            # the same kinds of value (None where the others have None, text where they have text)
            assert {type(v) for v in theirs} <= {type(v) for v in ours}, (table, col)
            if len(set(ours)) < len(ours):  # a value the ordinary rows share (a dataset, a kind, a time, an extra)
                assert set(theirs) <= set(ours), (table, col, theirs, ours)
            if col in ("payload", "extra", "answer"):
                shape = [sorted(json.loads(v)) if v else v for v in theirs]
                assert all(k in [sorted(json.loads(v)) if v else v for v in ours] for k in shape), (table, col)
    assert n_check_rows >= 3 * n_checks  # items, study_items and assignments rows of each check were compared
    # positions: the annotator's queue order on the main file (checks mixed in), not the study's (checks last)
    queue = {r["unit_id"]: r["position"] for r in conn.execute("SELECT unit_id, position FROM assignments")}
    positions = {r["id"]: r["position"] for r in conn.execute("SELECT id, position FROM study_items")}
    assert positions == queue and sorted(positions.values()) == list(range(6 + n_checks))
    assert sorted(positions[u] for u in check_units) != list(range(6, 6 + n_checks))
    # no setting, meta record or other text names checks; no item carries its key, nor the main file's hash
    settings = conn.execute("SELECT settings FROM studies").fetchone()[0]
    assert "check" not in settings.lower() and "counts" not in json.loads(settings)
    assert "check" not in " ".join(r[0] for r in conn.execute("SELECT value FROM meta")).lower()
    payloads = [json.loads(r[0]) for r in conn.execute("SELECT payload FROM items")]
    assert len(payloads) == 6 + n_checks and all("correct_index" not in p for p in payloads)
    assert not main_hashes & {r[0] for r in conn.execute("SELECT content_hash FROM items")}
    assert {r[0] for r in conn.execute("SELECT name FROM datasets")} == {"dataset-1"}
    conn.close()
