"""storage/errors.py: a busy or locked SQLite error told apart from any other, and an input error's fields and its
one-line message (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import sqlite3

from storage.errors import InputError, is_busy


def test_busy_errors_are_told_apart():
    class Err(sqlite3.OperationalError):
        pass

    busy = Err("x")
    busy.sqlite_errorname = "SQLITE_BUSY_SNAPSHOT"
    locked = Err("y")
    locked.sqlite_errorname = "SQLITE_LOCKED"
    assert is_busy(busy) and is_busy(locked) and is_busy(sqlite3.OperationalError("database is locked"))
    assert not is_busy(sqlite3.OperationalError("disk I/O error")) and not is_busy(ValueError("database"))
    e = InputError("f.csv", "row 3", "col", "bad")
    assert (e.path, e.record, e.field, e.problem, str(e)) == ("f.csv", "row 3", "col", "bad",
                                                             "f.csv: row 3: field 'col': bad")
