"""Small storage pieces worked by hand: secrets kept out of text and configs, busy errors told apart, the store's
busy timeout and transactions, event reads (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import sqlite3

import pytest

from storage.db import BUSY_TIMEOUT_MS
from storage.errors import InputError, is_busy
from storage.secrets import is_secret_field, scrub_config, scrub_text, secret_values


def test_secret_fields():
    for name in ("api_key", "API-KEY", "apikey", "client_secret", "password", "passwd", "Authorization",
                 "authorisation", "access_token", "access-token", "bearer", "token", "refresh_token", "key"):
        assert is_secret_field(name), name
    for name in ("max_tokens", "max_completion_tokens", "model", "keyword", "monkey", "tokenizer", "temperature"):
        assert not is_secret_field(name), name


def test_scrubbing(monkeypatch):
    for k in list(__import__("os").environ):
        if any(s in k.upper() for s in ("KEY", "TOKEN", "SECRET", "PASSWORD")):
            monkeypatch.delenv(k)
    monkeypatch.setenv("OPENAI_API_KEY", "abcdef123")
    monkeypatch.setenv("MY_TOKEN", "tok456789xyz")
    monkeypatch.setenv("SHORT_KEY", "abcde")         # shorter than 6: not a secret value
    monkeypatch.setenv("PATH_LIKE", "abcdef123456")  # not named like a credential
    assert secret_values() == ["tok456789xyz", "abcdef123"]  # longest first
    assert scrub_text("use abcdef123 and tok456789xyz, not abcde") == "use *** and ***, not abcde"
    assert scrub_text("sk-ABCDEFGH12 and Bearer abcdefgh.ij= and sk-short") == "*** and *** and sk-short"
    cfg = {"model": "m", "api_key": "x", "nested": [{"password": "p", "note": "key abcdef123"}], "n": 3,
           "t": ("sk-12345678abc",)}
    assert scrub_config(cfg) == {"model": "m", "nested": [{"note": "key ***"}], "n": 3, "t": ["***"]}


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


def test_store_busy_timeout_and_transactions(store):
    assert BUSY_TIMEOUT_MS == 10_000
    with store.busy_timeout(0) as s:
        assert s is store and store.db.execute("PRAGMA busy_timeout").fetchone()[0] == 0
    assert store.db.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.log_event("a")
            raise RuntimeError("undo")
    assert store.events() == []  # rolled back
    with store.transaction():
        store.log_event("b", None, None, x=1)
        with store.transaction():  # nested: a savepoint
            store.log_event("c", "s1")
    events = store.events()
    assert [(e.kind, e.study_id, e.payload) for e in events] == [("b", None, {"x": 1}), ("c", "s1", {})]
    assert [e.kind for e in store.events("c")] == ["c"] and [e.kind for e in store.events(study_id="s1")] == ["c"]
    assert store.events("c", "other") == []


def test_scrubbing_with_the_values_the_caller_read(monkeypatch):
    for k in list(__import__("os").environ):
        if any(s in k.upper() for s in ("KEY", "TOKEN", "SECRET", "PASSWORD")):
            monkeypatch.delenv(k)
    # values read once for a batch of texts (Store.put_llm_calls): they are scrubbed though no longer in the env
    assert scrub_text("keys abcdef123 and tok456789xyz", ["tok456789xyz", "abcdef123"]) == "keys *** and ***"
    assert scrub_text("nothing secret here", ["abcdef123"]) == "nothing secret here"


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
