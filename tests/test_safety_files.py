"""No command can overwrite or alter a file it was not asked to change (issue 11, "Writing files").

--out never replaces a database (its -wal/-shm), another SQLite file, an existing file without --force, or a
symbolic link's target without --force, and is written atomically. Read-only commands open the database read-only:
another application's SQLite file, or an empty file, stays byte for byte as it was. Read-only files and folders are
tested for real by running the CLI without the root capabilities that bypass file permissions (setpriv), or as
the user the tests run as when that is not root.
"""
from __future__ import annotations

import os
import re
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from annotator.cli import main
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from storage.errors import PrefvalError
from storage.outfile import output_path, write_output
from storage.store import Store
from tests.conftest import REPO, make_mcq_items


def _prefval_db(path: Path, study: str = "s1") -> Path:
    """A prefval database with one MCQ study of 6 items, one answered."""
    items, ctx = make_mcq_items()
    with Store.open(path, mode="create") as s:
        s.import_items("ds", "jsonl", items, contexts=ctx)
        create_study(s, StudySpec(name=study, task="mcq", datasets=["ds"], seed=1, annotators=["ana"],
                                  annotators_per_item=1))
    return path


def _snapshot(path: Path) -> tuple[bytes, int, list[str]]:
    """The file's bytes, its mtime in ns, and the names in its folder (a -wal/-shm appearing counts)."""
    return path.read_bytes(), path.stat().st_mtime_ns, sorted(os.listdir(path.parent))


def _foreign_sqlite(path: Path) -> Path:
    """Another application's SQLite file (rollback journal, two tables, one row)."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute("CREATE TABLE tags (name TEXT)")
    conn.execute("INSERT INTO notes (body) VALUES ('keep me')")
    conn.commit()
    conn.close()
    return path


@pytest.fixture
def prefval_db(tmp_path) -> Path:
    return _prefval_db(tmp_path / "prefval.db")


# ---- --out ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", [["export", "s1"], ["report", "s1"]])
@pytest.mark.parametrize("side", ["", "-wal", "-shm"])
def test_out_is_the_database_or_its_wal_or_shm_is_refused(prefval_db, command, side, capsys):
    target = Path(f"{prefval_db}{side}")
    before = _snapshot(prefval_db)
    for force in ([], ["--force"]):
        code = main([*command, "--db", str(prefval_db), "--out", str(target), *force])
        err = capsys.readouterr().err
        assert code == 1
        assert "refusing to overwrite" in err and err.count("\n") == 1
        assert _snapshot(prefval_db) == before
        assert not target.exists() or side == ""
    with Store.open(prefval_db, mode="ro") as s:  # every study still there
        assert [st.name for st in s.studies()] == ["s1"]


def test_out_as_the_database_through_another_spelling_is_refused(prefval_db, monkeypatch, capsys):
    monkeypatch.chdir(prefval_db.parent)
    before = _snapshot(prefval_db)
    assert main(["export", "s1", "--db", "prefval.db", "--out", "./sub/../prefval.db", "--force"]) == 1
    assert "refusing" in capsys.readouterr().err
    assert _snapshot(prefval_db) == before


def test_out_onto_any_sqlite_file_is_refused_even_with_force(prefval_db, tmp_path, capsys):
    other = _foreign_sqlite(tmp_path / "notes.sqlite")
    other_prefval = _prefval_db(tmp_path / "other-prefval.db", study="x")
    for victim in (other, other_prefval):
        before = _snapshot(victim)
        assert main(["report", "s1", "--db", str(prefval_db), "--out", str(victim), "--force"]) == 1
        assert "is a SQLite database" in capsys.readouterr().err
        assert _snapshot(victim) == before


def test_existing_file_is_replaced_only_with_force(prefval_db, tmp_path, capsys):
    out = tmp_path / "answers.jsonl"
    out.write_text("old content\n")
    assert main(["export", "s1", "--db", str(prefval_db), "--out", str(out)]) == 1
    assert "--force" in capsys.readouterr().err
    assert out.read_text() == "old content\n"
    assert main(["export", "s1", "--db", str(prefval_db), "--out", str(out), "--force"]) == 0
    assert out.read_text() == ""  # no answers yet: an empty JSONL file
    new = tmp_path / "new.md"
    assert main(["report", "s1", "--db", str(prefval_db), "--out", str(new)]) == 0
    assert new.read_text().startswith("# prefval report: s1")


def test_symlink_out_is_not_followed_without_force(prefval_db, tmp_path, capsys):
    target = tmp_path / "precious.txt"
    target.write_text("precious\n")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    assert main(["report", "s1", "--db", str(prefval_db), "--out", str(link)]) == 1
    assert "symbolic link" in capsys.readouterr().err
    assert target.read_text() == "precious\n" and link.is_symlink()
    assert main(["report", "s1", "--db", str(prefval_db), "--out", str(link), "--force"]) == 0
    assert link.is_symlink() and target.read_text().startswith("# prefval report: s1")


def test_symlink_to_the_database_is_refused_even_with_force(prefval_db, tmp_path, capsys):
    link = tmp_path / "innocent.csv"
    link.symlink_to(prefval_db)
    before = _snapshot(prefval_db)
    assert main(["export", "s1", "--db", str(prefval_db), "--format", "csv", "--out", str(link), "--force"]) == 1
    assert "refusing to overwrite" in capsys.readouterr().err
    assert _snapshot(prefval_db) == before


def test_out_into_a_folder_that_is_a_folder_or_missing(prefval_db, tmp_path, capsys):
    assert main(["export", "s1", "--db", str(prefval_db), "--out", str(tmp_path)]) == 1
    assert "is a folder" in capsys.readouterr().err
    assert main(["export", "s1", "--db", str(prefval_db), "--out", str(tmp_path / "no" / "x.csv")]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_a_failure_while_writing_leaves_the_old_file_and_no_temporary(tmp_path):
    out = tmp_path / "report.md"
    out.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):  # fails halfway through producing the bytes
        write_output(out, "new text \ud800 that cannot be encoded", force=True)
    assert out.read_text() == "old\n"
    with pytest.raises(RuntimeError):
        with output_path(out, force=True) as tmp:
            tmp.write_text("half a fi")
            raise RuntimeError("killed while writing")
    assert out.read_text() == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["report.md"]
    write_output(out, "new\n", force=True)
    assert out.read_text() == "new\n" and sorted(os.listdir(tmp_path)) == ["report.md"]


def test_replacing_keeps_the_files_permissions(tmp_path):
    out = tmp_path / "shared.csv"
    out.write_text("old\n")
    out.chmod(0o640)
    write_output(out, "new\n", force=True)
    assert stat.S_IMODE(out.stat().st_mode) == 0o640


# ---- read-only commands never change a file -----------------------------------------------------------------
READ_COMMANDS = [["status"], ["status", "--format", "json"], ["export", "s1"], ["report", "s1"],
                 ["study", "list"]]


@pytest.mark.parametrize("command", READ_COMMANDS)
@pytest.mark.parametrize("kind", ["foreign", "empty", "text"])
def test_read_commands_on_a_foreign_or_empty_file_change_nothing(tmp_path, command, kind, capsys):
    path = tmp_path / "other.db"
    if kind == "foreign":
        _foreign_sqlite(path)
    elif kind == "empty":
        path.write_bytes(b"")
    else:
        path.write_text("name,score\nana,3\n")
    before = _snapshot(path)
    code = main([*command, "--db", str(path)])
    err = capsys.readouterr().err
    assert code == 1
    assert "not a prefval database" in err and err.count("\n") == 1
    assert _snapshot(path) == before
    if kind == "foreign":
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")} == {"notes", "tags"}
        conn.close()


@pytest.mark.parametrize("command", [["import", "jsonl", "{src}", "--kind", "persona_record", "--dataset", "p"],
                                     ["study", "create", "x", "--task", "mcq", "--dataset", "ds"]])
def test_writing_commands_refuse_a_foreign_sqlite_file_without_touching_it(tmp_path, command, capsys):
    path = _foreign_sqlite(tmp_path / "other.db")
    src = REPO / "sample_data" / "persona" / "personas.jsonl"
    before = _snapshot(path)
    assert main([c.replace("{src}", str(src)) for c in command] + ["--db", str(path)]) == 1
    assert "not a prefval database" in capsys.readouterr().err
    assert _snapshot(path) == before


def test_import_makes_a_new_database_only_from_a_missing_or_empty_file(tmp_path, capsys):
    src = REPO / "sample_data" / "persona" / "personas.jsonl"
    for name, content in (("new.db", None), ("empty.db", b"")):
        path = tmp_path / name
        if content is not None:
            path.write_bytes(content)
        assert main(["import", "jsonl", str(src), "--kind", "persona_record", "--dataset", "p",
                     "--db", str(path)]) == 0
        with Store.open(path, mode="ro") as s:
            assert [d.name for d in s.datasets()] == ["p"]


def test_read_commands_leave_a_prefval_database_byte_identical(prefval_db, capsys):
    # a rollback-journal prefval file (e.g. copied from elsewhere): reading must not switch it to WAL
    conn = sqlite3.connect(prefval_db)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    before = _snapshot(prefval_db)
    for command in READ_COMMANDS:
        assert main([*command, "--db", str(prefval_db)]) == 0
    capsys.readouterr()
    assert _snapshot(prefval_db) == before


def test_open_needs_an_explicit_mode_for_a_file(tmp_path):
    with pytest.raises(TypeError, match="mode"):
        Store.open(tmp_path / "x.db")
    assert not (tmp_path / "x.db").exists()
    with pytest.raises(PrefvalError, match="no such database"):
        Store.open(tmp_path / "x.db", mode="rw")
    assert not (tmp_path / "x.db").exists()


# ---- read-only files and folders, for real --------------------------------------------------------------------
def _unprivileged(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run `python -m annotator.cli ARGV` so that file permissions apply: as root, without the capabilities that
    bypass them (setpriv); otherwise as the current user."""
    cmd = [sys.executable, "-m", "annotator.cli", *argv]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: file permissions cannot be made to apply")
        cmd = [setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner", *cmd]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def permissions_apply(tmp_path):
    """Skip when even the unprivileged run can write a read-only file (e.g. setpriv not permitted)."""
    probe = tmp_path / "probe"
    probe.write_text("x")
    probe.chmod(0o444)
    r = _unprivileged(["--help"], REPO)  # the interpreter starts at all
    assert r.returncode == 0, r.stderr
    cmd = [sys.executable, "-c", f"open({str(probe)!r}, 'a')"]
    if os.geteuid() == 0:
        cmd = [shutil.which("setpriv"), "--bounding-set=-dac_override,-dac_read_search,-fowner", *cmd]
    if subprocess.run(cmd, capture_output=True).returncode == 0:
        pytest.skip("file permissions do not apply here (cannot drop the capabilities that bypass them)")
    probe.unlink()


@pytest.fixture
def readonly_folder(tmp_path):
    """A folder holding a WAL prefval database (closed cleanly: no -wal/-shm), made read-only."""
    folder = tmp_path / "ro"
    folder.mkdir()
    db = _prefval_db(folder / "prefval.db")
    assert sorted(os.listdir(folder)) == ["prefval.db"]
    folder.chmod(0o555)
    yield db
    folder.chmod(0o755)


@pytest.mark.slow
def test_a_database_in_a_read_only_folder_can_be_read(permissions_apply, readonly_folder):
    before = _snapshot(readonly_folder)
    r = _unprivileged(["status", "--db", str(readonly_folder)], REPO)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^  s1 +mcq +6 +1 .* 0/6 ", r.stdout, re.M), r.stdout  # study, task, items, annotators
    r = _unprivileged(["export", "s1", "--db", str(readonly_folder), "--format", "csv"], REPO)
    assert r.returncode == 0, r.stderr
    assert _snapshot(readonly_folder) == before


@pytest.mark.slow
def test_writes_in_a_read_only_folder_say_so_in_one_line(permissions_apply, readonly_folder, tmp_path):
    before = _snapshot(readonly_folder)
    src = REPO / "sample_data" / "persona" / "personas.jsonl"
    r = _unprivileged(["import", "jsonl", str(src), "--kind", "persona_record", "--dataset", "p",
                       "--db", str(readonly_folder)], REPO)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "read-only" in r.stderr and "unexpected" not in r.stderr, r.stderr
    r = _unprivileged(["import", "jsonl", str(src), "--kind", "persona_record", "--dataset", "p",
                       "--db", str(readonly_folder.parent / "new.db")], REPO)
    assert r.returncode == 1 and "read-only" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    r = _unprivileged(["report", "s1", "--db", str(readonly_folder),
                       "--out", str(readonly_folder.parent / "r.md")], REPO)
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
    assert "folder" in r.stderr and "read-only" in r.stderr
    assert _snapshot(readonly_folder) == before


@pytest.mark.slow
def test_a_read_only_database_file_reads_and_refuses_writes_in_one_line(permissions_apply, tmp_path):
    db = _prefval_db(tmp_path / "prefval.db")
    db.chmod(0o444)
    before = _snapshot(db)
    r = _unprivileged(["status", "--db", str(db)], REPO)
    assert r.returncode == 0 and re.search(r"^  s1 +mcq +6 ", r.stdout, re.M), r.stderr
    src = REPO / "sample_data" / "persona" / "personas.jsonl"
    for argv in (["import", "jsonl", str(src), "--kind", "persona_record", "--dataset", "p"],
                 ["study", "create", "x", "--task", "mcq", "--dataset", "ds"],
                 ["study", "assign", "s1", "--annotators", "bo"]):
        r = _unprivileged([*argv, "--db", str(db)], REPO)
        assert r.returncode == 1, (argv, r.stdout)
        assert r.stderr.count("\n") == 1 and "read-only" in r.stderr and "unexpected" not in r.stderr, r.stderr
    assert db.read_bytes() == before[0]
    db.chmod(0o644)
