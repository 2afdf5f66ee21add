"""The read-only SQLite error spelled with a hyphen (storage.db.sqlite_error_message) and a bare Bearer
token scrubbed (storage.secrets.scrub_text).

Written for survivors of the storage sample of mutation seed 5381 (README, "Mutation testing"), each as a
user or caller sees it."""
from __future__ import annotations

import sqlite3

from storage.db import sqlite_error_message
from storage.secrets import scrub_text


def test_a_read_only_error_spelled_with_a_hyphen_is_explained(tmp_path):
    p = tmp_path / "p.db"
    assert sqlite_error_message(p, sqlite3.OperationalError("attempt to write a read-only database")) == \
        f"{p}: the database is read-only (file, folder or file system; nothing was changed)"


def test_a_bearer_token_without_sk_is_scrubbed():
    assert scrub_text("Authorization: Bearer abcdefgh12345678 sent", []) == "Authorization: *** sent"
