"""Opening a database file in each mode (storage/db.py): what is created, migrated or refused, each refusal as its
exact one-line message, and the schema version checks (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import sqlite3

import pytest

from storage.db import SCHEMA_VERSION, is_sqlite_file, migrate, open_database, sqlite_error_message
from storage.errors import PrefvalError


def _err(path, mode) -> str:
    with pytest.raises(PrefvalError) as info:
        open_database(path, mode)
    return str(info.value)


def test_modes(tmp_path):
    p = tmp_path / "p.db"
    assert _err(p, "rw") == f"{p}: no such database (start with `prefval import ...`, or pass --db PATH)"
    assert _err(p, "ro") == f"{p}: no such database (start with `prefval import ...`, or pass --db PATH)"
    assert not p.exists()
    db = open_database(p, "create")
    assert db.journal_mode == "wal" and db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] == 10_000
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert db.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0] == SCHEMA_VERSION
    db.close()
    ro = open_database(p, "ro")
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        ro.execute("INSERT INTO events (id, at, kind) VALUES ('x', 'now', 'k')")
    ro.close()
    assert _err(tmp_path, "rw") == f"{tmp_path}: is a folder, not a database file"
    with pytest.raises(TypeError, match=r"mode must be one of \('ro', 'rw', 'create'\), got 'w'"):
        open_database(p, "w")
    assert is_sqlite_file(p) and not is_sqlite_file(tmp_path / "none")


def test_files_that_are_not_prefval_databases(tmp_path):
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    assert _err(empty, "rw") == f"{empty}: not a prefval database (an empty file); nothing was changed"
    open_database(empty, "create").close()  # an empty file may become a database
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    for t in "abcdef":
        con.execute(f"CREATE TABLE {t} (x)")
    con.commit()
    con.close()
    before = other.read_bytes()
    for mode in ("ro", "rw", "create"):
        assert _err(other, mode) == (f"{other}: not a prefval database (another application's database (tables: "
                                     "a, b, c, d, e, ...)); nothing was changed")
    assert other.read_bytes() == before
    text = tmp_path / "t.db"
    text.write_text("not sqlite at all, just some text that is long enough to be a header and more")
    assert _err(text, "rw").startswith(f"{text}: not a prefval database (file is not a database")


@pytest.mark.slow
def test_schema_versions(tmp_path):
    p = tmp_path / "p.db"
    open_database(p, "create").close()
    con = sqlite3.connect(p)
    con.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future', 'x')",
                [SCHEMA_VERSION + 1])
    con.commit()
    con.close()
    newer = f"{p}: database schema version {SCHEMA_VERSION + 1} is newer than this prefval ({SCHEMA_VERSION}); " \
            "update prefval"
    assert _err(p, "rw") == newer and _err(p, "ro") == newer
    old = tmp_path / "old.db"
    con = sqlite3.connect(old)
    con.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)")
    con.commit()
    con.close()
    assert _err(old, "ro") == (f"{old}: database schema version 0 is older than this prefval ({SCHEMA_VERSION}); any "
                               "writing command (e.g. `prefval import`) upgrades it")
    db = open_database(old, "rw")  # a writing mode migrates
    assert db.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0] == SCHEMA_VERSION
    assert migrate(db) == SCHEMA_VERSION  # nothing left to apply
    db.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'f', 'x')", [SCHEMA_VERSION + 5])
    with pytest.raises(RuntimeError, match=rf"^database schema version {SCHEMA_VERSION + 5} is newer than this "
                                           rf"prefval \({SCHEMA_VERSION}\)$"):
        migrate(db)
    db.close()


def test_sqlite_error_messages(tmp_path):
    p = tmp_path / "p.db"
    assert sqlite_error_message(p, sqlite3.OperationalError("disk I/O error")) is None
    assert sqlite_error_message(tmp_path / "no" / "p.db", sqlite3.OperationalError("unable to open database file")) \
        == f"{tmp_path / 'no' / 'p.db'}: the folder {tmp_path / 'no'} does not exist"
    assert sqlite_error_message(p, sqlite3.OperationalError("attempt to write a readonly database")) == \
        f"{p}: the database is read-only (file, folder or file system; nothing was changed)"


def test_five_tables_of_another_application_are_all_named(tmp_path):
    other = tmp_path / "five.db"
    con = sqlite3.connect(other)
    for t in "edcba":
        con.execute(f"CREATE TABLE {t} (x)")
    con.commit()
    con.close()
    assert _err(other, "rw") == (f"{other}: not a prefval database (another application's database (tables: "
                                 "a, b, c, d, e)); nothing was changed")


def test_read_only_messages_name_what_is_read_only(tmp_path, monkeypatch):
    # the tests run as root, for whom every file is writable: os.access is what a user without the right sees
    from storage import db as storage_db

    p = tmp_path / "p.db"
    p.write_bytes(b"")
    denied: set = set()
    monkeypatch.setattr(storage_db.os, "access", lambda path, mode: str(path) not in denied)
    assert storage_db.readonly_message(p) == \
        f"{p}: the database is read-only (file, folder or file system; nothing was changed)"
    denied.add(str(tmp_path))
    assert storage_db.readonly_message(p) == (
        f"{p}: the folder {tmp_path} is read-only (SQLite needs to write its journal beside the database; "
        "nothing was changed)")
    denied.add(str(p))
    assert storage_db.readonly_message(p) == f"{p}: the database file is read-only (nothing was changed)"
    gone = tmp_path / "gone.db"  # a missing file is not the read-only one: its folder is
    assert storage_db.readonly_message(gone).startswith(f"{gone}: the folder {tmp_path} is read-only")
    assert storage_db.readonly_message("x.db") == \
        "x.db: the database is read-only (file, folder or file system; nothing was changed)"  # folder "." writable
    err = sqlite3.OperationalError("attempt to write a readonly database")
    assert storage_db.database_error_message(p, err) == f"{p}: the database file is read-only (nothing was changed)"
    assert storage_db.database_error_message(p, ValueError("readonly")) is None  # not a SQLite error
    assert storage_db.sqlite_error_message(p, sqlite3.OperationalError("unable to open database file")) == \
        f"{p}: the database file is read-only (nothing was changed)"  # its folder exists: read-only is why


@pytest.mark.slow
def test_each_database_file_gets_its_own_lasting_id(tmp_path):
    import uuid

    from storage.store import Store

    ids = []
    for name in ("a.db", "b.db"):
        with Store.open(tmp_path / name, mode="create") as s:
            ids.append(s.database_id())
        with Store.open(tmp_path / name, mode="rw") as s:
            assert s.database_id() == ids[-1]  # kept across openings
    assert ids[0] != ids[1] and all(str(uuid.UUID(i)) == i for i in ids)


def test_each_migration_is_recorded_once_with_its_name_and_time(tmp_path):
    import datetime as dt

    from storage.db import MIGRATIONS

    before = dt.datetime.now(dt.timezone.utc)
    db = open_database(tmp_path / "m.db", "create")
    rows = db.execute("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").fetchall()
    assert [(v, n) for v, n, _ in rows] == [(v, n) for v, n, _ in MIGRATIONS]
    assert [v for v, _, _ in rows] == list(range(1, SCHEMA_VERSION + 1))  # numbered 1, 2, ... without a gap
    assert rows[1][1] == "current_answers view" and rows[2][1] == "meta table with the database id"
    for _, _, at in rows:
        stamp = dt.datetime.fromisoformat(at)
        assert stamp.tzinfo is not None and before <= stamp <= dt.datetime.now(dt.timezone.utc)
    db.close()


def test_a_read_only_error_spelled_with_a_hyphen_is_explained(tmp_path):
    p = tmp_path / "p.db"
    assert sqlite_error_message(p, sqlite3.OperationalError("attempt to write a read-only database")) == \
        f"{p}: the database is read-only (file, folder or file system; nothing was changed)"
