"""Offline bundles: export one annotator's share, annotate it with Pilot on its own, merge back (twice), and
refuse damaged, foreign and unassigned bundles with the main database unchanged. A blind study's bundle is read
table by table and column by column for anything the annotator must not see."""
from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3

import pytest

from annotator.app import AnnotateApp
from annotator.bundles import export_bundle, merge_bundles
from annotator.cli import main
from annotator.study_setup import assign_named, create_study
from annotator.tasks.base import StudySpec
from storage.errors import PrefvalError
from storage.models import AnnotationIn, ItemIn
from storage.store import Store
from tests.test_task_blind_test import HIDDEN, blind_db  # noqa: F401  (blind_db is the fixture used here)


@pytest.fixture
def blind_main(blind_db):
    """The blind_test study of test_task_blind_test (5 items) with 3 annotators named; ben has answered
    everything, an LLM judge too."""
    with Store.open(blind_db, mode="rw") as s:
        study = s.get_study("bt")
        assign_named(s, study, ["ana", "ben", "cy"])
        ben = s.ensure_annotator("ben")
        judge = s.ensure_annotator("judge-x", kind="llm", model="m")
        units = {u.id: u for u in s.units(study.id)}
        for a in s.assignments(study.id, ben.id):
            u = units[a.unit_id]
            s.add_annotation(AnnotationIn(study_id=study.id, unit_id=u.id, item_id=u.item_id, annotator_id=ben.id,
                                          assignment_id=a.id, status="answered",
                                          answer={"choice": 0, "letter": "A", "shown": "A", "cant_tell": False},
                                          note="BEN-NOTE-SECRET"))
            s.add_annotation(AnnotationIn(study_id=study.id, unit_id=u.id, item_id=u.item_id,
                                          annotator_id=judge.id, status="answered", source="llm",
                                          answer={"choice": 1, "letter": "B", "shown": "B", "cant_tell": False}))
    return blind_db


def _skip_first(b: Store) -> None:
    """ana skips the first item of her queue in the bundle (one new row to merge)."""
    study = b.get_study("bt")
    ana = b.ensure_annotator("ana")
    a = b.assignments(study.id, ana.id)[0]
    unit = {u.id: u for u in b.units(study.id)}[a.unit_id]
    b.add_annotation(AnnotationIn(study_id=study.id, unit_id=unit.id, item_id=unit.item_id,
                                  annotator_id=ana.id, assignment_id=a.id, status="skipped"))


def _rows(path: str, table: str) -> list[dict]:
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(f"SELECT * FROM {table}")]
    finally:
        conn.close()


def _tables(path: str) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    finally:
        conn.close()


def _counts(path: str) -> dict[str, int]:
    return {t: len(_rows(path, t)) for t in _tables(path) if t != "sqlite_sequence"}


def _ann_rows(path: str, who: str) -> list[dict]:
    with Store.open(path, mode="create") as s:
        study = s.get_study("bt")
        a = s.ensure_annotator(who)
        return [r.model_dump() for r in s.annotations(study.id) if r.annotator_id == a.id]


async def _answer(path: str, who: str, keys: list[str]) -> None:
    app = AnnotateApp(path, "bt", who, show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        for k in keys:
            tf = app.session.view().item.payload.get("fmt") == "tf"
            await pilot.press(("t" if k == "a" else "f") if tf else k)
        await pilot.pause()


def test_blind_bundle_holds_nothing_the_annotator_must_not_see(blind_main, tmp_path):
    out = str(tmp_path / "ana.bundle")
    with Store.open(blind_main, mode="create") as s:
        counts = export_bundle(s, "bt", "ana", out)
    assert counts["study_items"] == 5 and counts["annotations"] == 0
    tables = _tables(out)
    seen_text = []
    for t in tables:
        for row in _rows(out, t):
            seen_text.extend(str(v) for v in row.values() if v is not None)
    blob = "\n".join(seen_text)
    for secret in HIDDEN + ["BEN-NOTE-SECRET", "judge-x", "ben", "cy"]:
        assert secret not in blob, secret
    payloads = [json.loads(r["payload"]) for r in _rows(out, "items")]
    assert all(set(p) <= {"question", "options", "fmt"} for p in payloads)
    assert all(r["context_id"] is None for r in _rows(out, "items"))
    assert _rows(out, "contexts") == [] and _rows(out, "context_messages") == []
    assert [r["name"] for r in _rows(out, "annotators")] == ["ana"]
    assert _rows(out, "annotations") == [] and _rows(out, "events") == [] and _rows(out, "imports") == []
    assert {r["annotator_id"] for r in _rows(out, "assignments")} == {_rows(out, "annotators")[0]["id"]}
    # every table of the schema was read (a new table must be thought about here)
    assert set(tables) >= {"items", "annotations", "annotators", "assignments", "studies", "study_items",
                           "datasets", "contexts", "context_messages", "events", "imports", "meta"}


@pytest.mark.slow
async def test_round_trip_merge_twice_then_more_work_keeps_the_whole_history(blind_main, tmp_path):
    out = str(tmp_path / "ana.bundle")
    with Store.open(blind_main, mode="create") as s:
        export_bundle(s, "bt", "ana", out)
    await _answer(out, "ana", ["a", "b"])
    with Store.open(blind_main, mode="create") as s:
        first = merge_bundles(s, [out])
    assert first[0].added == {"answered": 2} and first[0].already_present == 0
    main_rows = _ann_rows(blind_main, "ana")
    assert [r["id"] for r in main_rows] == [r["id"] for r in _ann_rows(out, "ana")]
    before = _counts(blind_main)
    with Store.open(blind_main, mode="create") as s:
        again = merge_bundles(s, [out])
    assert again[0].n_added == 0 and again[0].already_present == 2
    assert _counts(blind_main) == before
    # answered further, and the first answer changed (u goes back: the change supersedes the first row)
    app = AnnotateApp(out, "bt", "ana", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        tf = app.session.view().item.payload.get("fmt") == "tf"
        await pilot.press("t" if tf else "c")
        await pilot.press("u", "u")
        tf = app.session.view().item.payload.get("fmt") == "tf"
        await pilot.press("f" if tf else "d")
        await pilot.pause()
    with Store.open(blind_main, mode="create") as s:
        third = merge_bundles(s, [out])
    assert third[0].added == {"answered": 2} and third[0].already_present == 2
    main_rows = _ann_rows(blind_main, "ana")
    bundle_rows = _ann_rows(out, "ana")
    assert sorted(r["id"] for r in main_rows) == sorted(r["id"] for r in bundle_rows)
    changed = [r for r in main_rows if r["supersedes"]]
    assert len(changed) == 1 and changed[0]["supersedes"] in {r["id"] for r in main_rows}
    with Store.open(blind_main, mode="create") as s:
        study = s.get_study("bt")
        current = s.current_annotations(study.id, s.ensure_annotator("ana").id)
    assert len(current) == 3


@pytest.mark.slow
def test_cli_export_then_reexport_carries_earlier_answers(blind_main, tmp_path, capsys):
    out = str(tmp_path / "ana.bundle")
    assert main(["bundle", "export", "bt", "--annotator", "ana", "--out", out, "--db", blind_main]) == 0
    assert main(["bundle", "export", "bt", "--annotator", "ana", "--out", out, "--db", blind_main]) == 1
    assert "merge it first" in capsys.readouterr().err
    with Store.open(out, mode="create") as b:
        _skip_first(b)
    assert main(["bundle", "merge", out, "--db", blind_main]) == 0
    out2 = str(tmp_path / "ana2.bundle")
    assert main(["bundle", "export", "bt", "--annotator", "ana", "--out", out2, "--db", blind_main]) == 0
    assert [r["status"] for r in _rows(out2, "annotations")] == ["skipped"]


@pytest.mark.slow
def test_damaged_foreign_and_unassigned_bundles_are_refused_with_main_unchanged(blind_main, tmp_path, capsys):
    good = str(tmp_path / "ana.bundle")
    with Store.open(blind_main, mode="create") as s:
        export_bundle(s, "bt", "ana", good)
    with Store.open(good, mode="create") as b:
        _skip_first(b)
    data = open(good, "rb").read()
    truncated = str(tmp_path / "cut.bundle")
    open(truncated, "wb").write(data[: len(data) // 2])
    garbage = str(tmp_path / "junk.bundle")
    open(garbage, "wb").write(b"not a database at all\n" * 100)
    # the same study set up in another database: same names, another database id
    other_db = str(tmp_path / "other.db")
    shutil.copy(blind_main, other_db)
    with Store.open(other_db, mode="create") as o:
        o.db.execute("UPDATE meta SET value = 'another-database' WHERE key = 'database_id'")
        o.db.conn.commit()
        foreign = str(tmp_path / "foreign.bundle")
        export_bundle(o, "bt", "ana", foreign)
    # a bundle of an annotator who claimed items only in a copy of the database
    copy_db = str(tmp_path / "copy.db")
    shutil.copy(blind_main, copy_db)
    with Store.open(copy_db, mode="create") as c:
        st = c.get_study("bt")
        dan = c.ensure_annotator("dan")
        c.add_assignments(st.id, [(u.id, dan.id, i, 1) for i, u in enumerate(c.units(st.id))])
        unassigned = str(tmp_path / "dan.bundle")
        export_bundle(c, "bt", "dan", unassigned)
    plain = str(tmp_path / "plain.db")
    Store.open(plain, mode="create").close()
    digest = hashlib.sha256(open(blind_main, "rb").read()).hexdigest()
    before = _counts(blind_main)
    cases = {truncated: "damaged or truncated", garbage: "not an SQLite file", foreign: "another database",
             unassigned: "not assigned", plain: "not a prefval bundle", str(tmp_path / "missing"): "no such"}
    for path, words in cases.items():
        # the good bundle first: a bad one anywhere in the list stops the whole merge before anything is written
        assert main(["bundle", "merge", good, path, "--db", blind_main]) == 1
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and words in err and path in err, err
        assert _counts(blind_main) == before
    assert hashlib.sha256(open(blind_main, "rb").read()).hexdigest() == digest
    assert main(["bundle", "merge", good, "--db", blind_main]) == 0
    assert _counts(blind_main)["annotations"] == before["annotations"] + 1


def test_out_path_refusals(blind_main, tmp_path):
    with Store.open(blind_main, mode="create") as s:
        with pytest.raises(PrefvalError, match="database itself"):
            export_bundle(s, "bt", "ana", blind_main, force=True)
        with pytest.raises(PrefvalError, match="folder"):
            export_bundle(s, "bt", "ana", str(tmp_path))
        with pytest.raises(PrefvalError, match="LLM judge"):
            export_bundle(s, "bt", "judge-x", str(tmp_path / "j.bundle"))
    assert not (tmp_path / "j.bundle").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_pairwise_bundle_hides_the_sources(db_file, tmp_path):
    a = [ItemIn(external_id=f"p{i}", kind="conversation_record",
                payload={"preference": f"Likes thing {i}", "messages": [{"role": "user", "content": f"hi {i}"}],
                         "metadata": {"generator": "SECRET-GEN-A"}}) for i in range(3)]
    b = [ItemIn(external_id=f"p{i}", kind="conversation_record",
                payload={"preference": f"Enjoys item {i}", "messages": [{"role": "user", "content": f"yo {i}"}],
                         "metadata": {"generator": "SECRET-GEN-B"}}) for i in range(3)]
    with Store.open(db_file, mode="create") as s:
        s.import_items("secret_source_a", "jsonl", a, source_path="/data/secret_source_a.jsonl")
        s.import_items("secret_source_b", "jsonl", b, source_path="/data/secret_source_b.jsonl")
        create_study(s, StudySpec(name="plaus", task="pairwise", datasets=["secret_source_a", "secret_source_b"],
                                  seed=3, annotators=["ana"], annotators_per_item=1))
        out = str(tmp_path / "ana.bundle")
        export_bundle(s, "plaus", "ana", out)
    raw = open(out, "rb").read()
    for secret in (b"secret_source", b"SECRET-GEN", b"/data/"):
        assert secret not in raw, secret
    prefs = sorted(json.loads(r["payload"])["preference"] for r in _rows(out, "items"))
    assert prefs == sorted([f"Likes thing {i}" for i in range(3)] + [f"Enjoys item {i}" for i in range(3)])
