"""Output files (storage/outfile.py): each refusal with its exact message, the mode a new file gets, the rename, and
write errors turned into one line (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import errno
import os
import sqlite3
import stat

import pytest

from storage.errors import PrefvalError
from storage.outfile import _umask, _write_error, check_output, output_path, write_output


def _err(fn, *args, **kwargs) -> str:
    with pytest.raises(PrefvalError) as info:
        fn(*args, **kwargs)
    return str(info.value)


def test_refusals_name_the_reason(tmp_path):
    db = tmp_path / "p.db"
    sqlite3.connect(db).execute("CREATE TABLE t (x)").connection.commit()
    assert _err(check_output, "") == "--out: empty path"
    assert _err(check_output, db, [db]) == f"{db}: is the database itself ({db}); refusing to overwrite it, choose " \
                                           "another --out"
    for side in ("wal", "shm", "journal"):
        out = f"{db}-{side}"
        assert _err(check_output, out, [None, ":memory:", str(db)], force=True) == (
            f"{out}: is the database's {side} file ({db}-{side}); refusing to overwrite it, choose another --out")
    assert _err(check_output, db, force=True) == f"{db}: is a SQLite database; refusing to overwrite it (even with " \
                                                 "--force)"
    assert _err(check_output, db, force=True, sqlite_output=True) == (
        f"{db}: is a SQLite database; refusing to overwrite it (even with --force): merge it first "
        "(`prefval bundle merge`) or choose another --out")
    fresh = tmp_path / "fresh.bundle"
    assert check_output(fresh, sqlite_output=True) == fresh
    for side in ("-wal", "-shm", "-journal"):
        (tmp_path / f"fresh.bundle{side}").write_bytes(b"x")
        assert f"fresh.bundle{side} lies beside it" in _err(check_output, fresh, force=True, sqlite_output=True)
        assert check_output(fresh) == fresh  # a text output does not care
        (tmp_path / f"fresh.bundle{side}").unlink()
    assert _err(check_output, tmp_path) == f"{tmp_path}: is a folder; give a file name"
    old = tmp_path / "old.txt"
    old.write_text("keep")
    assert _err(check_output, old) == f"{old}: already exists; pass --force to replace it"
    assert check_output(old, force=True) == old
    gone = tmp_path / "none" / "x.txt"
    assert _err(check_output, gone) == f"{gone}: the folder {tmp_path / 'none'} does not exist"
    link = tmp_path / "link.txt"
    link.symlink_to(old)
    assert _err(check_output, link) == f"{link}: is a symbolic link (to {old}); not following it without --force"
    assert check_output(link, force=True) == old
    dangling = tmp_path / "dangling.txt"
    dangling.symlink_to(tmp_path / "nowhere.txt")
    assert check_output(dangling, force=True) == tmp_path / "nowhere.txt"
    # a link to the database is the database
    to_db = tmp_path / "to_db"
    to_db.symlink_to(db)
    assert "is the database itself" in _err(check_output, to_db, [db], force=True)


def test_write_output_modes_and_replacement(tmp_path):
    new = tmp_path / "new.txt"
    assert write_output(new, "é\n") == new
    assert new.read_bytes() == "é\n".encode()
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o666 & ~_umask()
    os.chmod(new, 0o640)
    write_output(new, b"\x00\x01", force=True)
    assert new.read_bytes() == b"\x00\x01" and stat.S_IMODE(os.stat(new).st_mode) == 0o640  # mode kept
    latin = tmp_path / "l.txt"
    write_output(latin, "é", encoding="latin-1")
    assert latin.read_bytes() == b"\xe9"
    link = tmp_path / "link.txt"
    link.symlink_to(new)
    assert write_output(link, "via link", force=True) == new  # the target, resolved
    assert new.read_text() == "via link" and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.txt", "link.txt", "new.txt"]  # no temporary file left


def test_an_error_leaves_the_old_file(tmp_path):
    old = tmp_path / "old.txt"
    old.write_text("keep")
    with pytest.raises(RuntimeError):
        with output_path(old, force=True) as tmp:
            assert tmp.parent == tmp_path and tmp.name.startswith(".old.txt.") and tmp.name.endswith(".tmp")
            tmp.write_text("half")
            raise RuntimeError("render failed")
    assert old.read_text() == "keep" and [p.name for p in tmp_path.iterdir()] == ["old.txt"]


def test_umask_is_read_without_changing_it():
    before = os.umask(0o027)
    try:
        assert _umask() == 0o027 and _umask() == 0o027
    finally:
        os.umask(before)


@pytest.mark.parametrize("code, text", [
    (errno.EACCES, "out.txt: cannot write the output: the folder /f is read-only"),
    (errno.EPERM, "out.txt: cannot write the output: the folder /f is read-only"),
    (errno.EROFS, "out.txt: cannot write the output: the folder /f is read-only"),
    (errno.ENOSPC, "out.txt: cannot write the output: the disk is full (nothing was replaced)"),
    (errno.EIO, "out.txt: cannot write the output (Input/output error)"),
])
def test_write_errors_in_one_line(code, text):
    assert str(_write_error("out.txt", "/f", OSError(code, os.strerror(code)))) == text
