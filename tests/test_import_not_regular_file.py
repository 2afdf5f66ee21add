"""`prefval import` of a path that exists but is not a regular file (/dev/null, a directory, a FIFO) says so: one line
naming the path and what it is, exit code 1, the database byte for byte as it was, and nothing opened (a FIFO
without a writer would block a reader forever). The other readers of user files (mapping, rubric, pairs,
guidelines and bundle files) share the same check (storage.textfile.regular_file), which says why a path that cannot be
looked at failed."""
from __future__ import annotations

import hashlib
import os
import socket
from pathlib import Path

import pytest

from annotator.cli import main
from storage.errors import PrefvalError
from storage.importers.base import load_yaml_or_json
from storage.textfile import regular_file
from tests.test_importers_errors import db  # noqa: F401  (the fixture: a database holding one dataset)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _refused(db: Path, capsys, fmt: str, target: str, kind: str) -> None:
    files = {p.name: _sha(p) for p in db.parent.iterdir() if p.name.startswith(db.name)}
    assert main(["import", fmt, target, "--dataset", "bad", "--db", str(db)]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == f"prefval: error: {target}: not a regular file ({kind})\n"
    assert {p.name: _sha(p) for p in db.parent.iterdir() if p.name.startswith(db.name)} == files


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
@pytest.mark.parametrize("fmt", ["jsonl", "personamem", "horizonbench"])
def test_dev_null_is_a_character_device(db, capsys, fmt):
    _refused(db, capsys, fmt, "/dev/null", "a character device")


def test_a_directory(db, tmp_path, capsys):
    folder = tmp_path / "items.jsonl"
    folder.mkdir()
    _refused(db, capsys, "jsonl", str(folder), "a directory")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_fifo_is_refused_without_being_opened(db, tmp_path, capsys):
    fifo = tmp_path / "items.jsonl"
    os.mkfifo(fifo)
    _refused(db, capsys, "jsonl", str(fifo), "a FIFO")  # (opening it would block: the test would hang)


def test_a_missing_file_is_still_no_such_file(db, tmp_path, capsys):
    gone = tmp_path / "gone.jsonl"
    before = _sha(db)
    assert main(["import", "jsonl", str(gone), "--dataset", "bad", "--db", str(db)]) == 1
    assert capsys.readouterr().err == f"prefval: error: {gone}: no such file\n"
    assert _sha(db) == before


def test_regular_file_for_each_kind(tmp_path):
    def problem(path, what="file"):
        with pytest.raises(PrefvalError) as info:
            regular_file(path, what)
        return str(info.value)

    real = tmp_path / "a.txt"
    real.write_text("x", encoding="utf-8")
    assert regular_file(str(real)) == real
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    assert regular_file(link) == link  # a link to a regular file is one
    dangling = tmp_path / "dangling.txt"
    dangling.symlink_to(tmp_path / "nowhere")
    assert problem(dangling) == f"{dangling}: no such file"
    assert problem(tmp_path / "gone.yaml", "rubric file") == f"{tmp_path / 'gone.yaml'}: no such rubric file"
    assert problem(real / "below") == f"{real / 'below'}: no such file"  # a file used as a folder
    assert problem(tmp_path) == f"{tmp_path}: not a regular file (a directory)"
    if os.path.exists("/dev/null"):
        assert problem("/dev/null", "pairs file") == "/dev/null: not a regular file (a character device)"
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "p")
        assert problem(tmp_path / "p") == f"{tmp_path / 'p'}: not a regular file (a FIFO)"
    if hasattr(socket, "AF_UNIX"):
        sock_path = tmp_path / "s"
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(str(sock_path))
            assert problem(sock_path) == f"{sock_path}: not a regular file (a socket)"


def test_settings_files_share_the_check(tmp_path):
    with pytest.raises(PrefvalError) as info:
        load_yaml_or_json(tmp_path, "mapping file")
    assert str(info.value) == f"{tmp_path}: not a regular file (a directory)"
    if os.path.exists("/dev/null"):
        with pytest.raises(PrefvalError) as info:
            load_yaml_or_json("/dev/null", "rubric file")
        assert str(info.value) == "/dev/null: not a regular file (a character device)"


def test_a_path_that_cannot_be_looked_at_says_why(tmp_path):
    import errno
    import os

    from storage.errors import PrefvalError
    from storage.textfile import regular_file

    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(loop)  # a link to itself: stat() fails with ELOOP
    with pytest.raises(PrefvalError) as info:
        regular_file(loop)
    assert str(info.value) == f"{loop}: cannot read ({os.strerror(errno.ELOOP)})"
