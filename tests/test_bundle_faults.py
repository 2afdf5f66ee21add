"""Offline bundle faults found by a newcomer check, each as a kind: an export never replaces a bundle (nor any
SQLite file) and never lands beside a stale -wal/-shm; further cases below."""
from __future__ import annotations

import hashlib
import os
import sqlite3

import pytest

from annotator.bundles import export_bundle
from annotator.cli import main
from storage.models import AnnotationIn
from storage.store import Store
from tests.test_bundles import _rows, blind_main  # noqa: F401  (fixtures)
from tests.test_task_blind_test import blind_db  # noqa: F401


def _sha(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def _answer_first(bundle: str, who: str = "ana") -> None:
    """who answers the first unit of their queue in the bundle (a row not merged yet)."""
    with Store.open(bundle, mode="rw") as b:
        study = b.get_study("bt")
        ann = b.ensure_annotator(who)
        a = b.assignments(study.id, ann.id)[0]
        unit = {u.id: u for u in b.units(study.id)}[a.unit_id]
        b.add_annotation(AnnotationIn(study_id=study.id, unit_id=unit.id, item_id=unit.item_id,
                                      annotator_id=ann.id, assignment_id=a.id, status="answered",
                                      answer={"choice": 0, "letter": "A", "shown": "A", "cant_tell": False}))


@pytest.mark.slow
def test_export_force_never_replaces_a_bundle_with_unmerged_answers(blind_main, tmp_path, capsys):
    out = str(tmp_path / "ana.bundle")
    assert main(["bundle", "export", "bt", "--annotator", "ana", "--out", out, "--db", blind_main]) == 0
    _answer_first(out)
    assert len(_rows(out, "annotations")) == 1
    digest = _sha(out)
    capsys.readouterr()
    assert main(["bundle", "export", "bt", "--annotator", "ana", "--out", out, "--force", "--db",
                 blind_main]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "merge it first" in err and out in err, err
    assert _sha(out) == digest and len(_rows(out, "annotations")) == 1
    # any other SQLite file too
    other = str(tmp_path / "some.db")
    Store.open(other, mode="create").close()
    digest = _sha(other)
    assert main(["bundle", "export", "bt", "--annotator", "ana", "--out", other, "--force", "--db",
                 blind_main]) == 1
    assert _sha(other) == digest


@pytest.mark.slow
def test_export_refuses_a_stale_wal_or_shm_beside_the_path(blind_main, tmp_path, capsys):
    # a session killed while answering a bundle leaves its WAL; the bundle itself was then moved away
    out = str(tmp_path / "ana.bundle")
    with Store.open(blind_main, mode="rw") as s:
        export_bundle(s, "bt", "ana", out)
    conn = sqlite3.connect(out)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("DELETE FROM study_items")
    conn.commit()
    wal = open(out + "-wal", "rb").read()
    assert wal  # the deletion lives in the WAL only
    os.rename(out, str(tmp_path / "moved.bundle"))  # the WAL stays behind (as a kill leaves it)
    open(out + "-wal", "wb").write(wal)
    for side in ("-wal", "-shm"):
        path = out + side
        if side == "-shm":
            os.unlink(out + "-wal")
            open(path, "wb").write(b"\0" * 32768)
        before = open(path, "rb").read()
        capsys.readouterr()
        assert main(["bundle", "export", "bt", "--annotator", "ana", "--out", out, "--force", "--db",
                     blind_main]) == 1
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and side in err, err
        assert not os.path.exists(out) and open(path, "rb").read() == before
    conn.close()
    os.unlink(out + "-shm")
    assert main(["bundle", "export", "bt", "--annotator", "ana", "--out", out, "--db", blind_main]) == 0
    assert len(_rows(out, "study_items")) == 5
    assert not os.path.exists(out + "-wal") and not os.path.exists(out + "-shm")


@pytest.mark.slow
def test_cli_lines_quote_the_command_and_escape_names(blind_main, tmp_path, capsys):
    out = str(tmp_path / "my bundle;x.bundle")
    assert main(["bundle", "export", "bt", "--annotator", "ana", "--out", out, "--db", blind_main]) == 0
    line = capsys.readouterr().out
    assert f"--db '{out}'`" in line
    with Store.open(blind_main, mode="rw") as s:
        s.db.execute("UPDATE annotators SET name = 'an\x1b[2Ja' WHERE name = 'ana'")
        s.db.conn.commit()
    _answer_first(out)
    with Store.open(out, mode="rw") as b:
        b.db.execute("UPDATE meta SET value = replace(value, '\"ana\"', '\"an\\u001b[2Ja\"') WHERE key = 'bundle'")
        b.db.conn.commit()
    capsys.readouterr()
    assert main(["bundle", "merge", out, "--db", blind_main]) == 0
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "an\\x1b[2Ja" in printed and "1 rows added" in printed


@pytest.mark.slow
def test_annotate_on_a_bundle_refuses_another_annotator(blind_main, tmp_path, capsys):
    out = str(tmp_path / "cy.bundle")
    assert main(["bundle", "export", "bt", "--annotator", "cy", "--out", out, "--db", blind_main]) == 0
    digest = _sha(out)
    capsys.readouterr()
    assert main(["annotate", "bt", "--annotator", "bo", "--db", out, "--new-annotator"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "'cy'" in err and "'bo'" in err, err
    assert _sha(out) == digest and [r["name"] for r in _rows(out, "annotators")] == ["cy"]
