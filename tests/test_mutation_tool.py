"""tools/mutation_sample.py leaves out only the mutants that are equivalent by construction: a case change inside SQL
text that SQLite reads without regard to case. Each case below is worked by hand from SQLite's rules (keywords and
names are case-insensitive; quoted literals, named parameters, result-column names and stored schema text are not)."""
from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "mutation_sample", Path(__file__).resolve().parents[1] / "tools" / "mutation_sample.py")
tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tool)


@pytest.mark.parametrize("sql, how", [
    ("SELECT id FROM items WHERE dataset_id = ?", str.lower),  # keywords only
    ("SELECT * FROM items WHERE dataset_id = ?", str.upper),  # names outside the result list
    ("SELECT DISTINCT unit_id FROM annotations WHERE study_id = ?", str.lower),  # DISTINCT names no column
    ("UPDATE items SET source = ? WHERE id = ? AND source IS NULL", str.upper),
    ("DELETE FROM studies WHERE id = ?", str.lower),
    ("INSERT INTO runs (id, kind) VALUES (?, ?)", str.upper),
    (" AND annotator_id = ?", str.upper),  # a WHERE condition's continuation
    (" ORDER BY submitted_at DESC, id DESC LIMIT 1", str.lower),
    ("SELECT 1 FROM a WHERE x IN (SELECT id FROM t WHERE k = ?)", str.upper),  # a compared sub-select names nothing
    ("SELECT 1 FROM annotations WHERE status = 'answered'", str.lower),  # the literal is lower case already
])
def test_equivalent_case_changes(sql, how):
    assert tool.sql_case_equivalent(sql, how(sql)) is True


@pytest.mark.parametrize("sql, how", [
    ("SELECT study_id FROM t", str.upper),  # a result column
    ("SELECT COUNT(*) FROM items", str.lower),  # the column is named "COUNT(*)"
    ("SELECT x AS n FROM t", str.upper),  # an alias names a key of the returned rows
    ("SELECT 1 FROM annotations WHERE status = 'answered'", str.upper),  # 'ANSWERED' is another value
    ("SELECT * FROM t WHERE id = :study_id", str.upper),  # :STUDY_ID is looked up in a Python dict
    ("CREATE TABLE t (id TEXT)", str.lower),  # schema text is stored
    ("PRAGMA table_info(annotations)", str.upper),
    ("INSERT INTO t (a) VALUES (?) RETURNING id", str.upper),  # RETURNING names columns
    ("SELECT * FROM (SELECT a AS Foo FROM t)", str.lower),  # a derived table's names reach the result
    ("UPDATE", str.lower),  # a lone keyword may be spliced into a trigger's text
    ("items", str.upper),  # a bare name: a sqlite-utils table or a dict key
    ("a.unit_id FROM t", str.upper),  # a fragment whose start may sit in a result list
    (": the answer was NOT saved", str.lower),  # a message
    ("answer NOT saved", str.lower),
    ("Select an option", str.upper),
])
def test_case_changes_that_are_kept(sql, how):
    assert tool.sql_case_equivalent(sql, how(sql)) is False


def test_only_case_changes_count():
    assert tool.sql_case_equivalent("SELECT id FROM t", "XXSELECT id FROM tXX") is False
    assert tool.sql_case_equivalent("SELECT id FROM t", "SELECT id FROM t") is False
    # a WHERE or ORDER BY argument of rows_where cannot be in a result list: its names are free
    assert tool.sql_case_equivalent("study_id = ?", "STUDY_ID = ?") is False
    assert tool.sql_case_equivalent("study_id = ?", "STUDY_ID = ?", clause_arg=True) is True
    assert tool.sql_case_equivalent("name", "NAME", clause_arg=True) is True


def _fn(src: str) -> ast.AST:
    return ast.parse(src).body[0]


def test_mutant_functions_are_compared_whole():
    orig = _fn('def f(db, t):\n    return db.execute("SELECT id FROM items " "WHERE k = ?", [1])')
    lower = _fn('def f(db, t):\n    return db.execute("SELECT id FROM items " "where k = ?", [1])')
    assert tool._case_only_sql(orig, lower) is True  # the two literals are one SQL text
    also = _fn('def f(db, t):\n    return db.execute("SELECT id FROM items " "where k = ?", [2])')
    assert tool._case_only_sql(orig, also) is False  # something else changed too
    fstr = _fn('def f(db, t):\n    return db.execute(f"SELECT id FROM {t} " "WHERE k = ?")')
    fmut = _fn('def f(db, t):\n    return db.execute(f"SELECT id FROM {t} " "where k = ?")')
    assert tool._case_only_sql(fstr, fmut) is True
    where = _fn('def f(db):\n    return db["t"].rows_where("name = ?", [1], order_by="created_at")')
    upper = _fn('def f(db):\n    return db["t"].rows_where("NAME = ?", [1], order_by="created_at")')
    order = _fn('def f(db):\n    return db["t"].rows_where("name = ?", [1], order_by="CREATED_AT")')
    assert tool._case_only_sql(where, upper) is True and tool._case_only_sql(where, order) is True
    select = _fn('def f(db):\n    return db["t"].rows_where(select="id, name")')
    assert tool._case_only_sql(select, _fn('def f(db):\n    return db["t"].rows_where(select="ID, NAME")')) is False
    key = _fn('def f(row):\n    return row["study_id"]')
    assert tool._case_only_sql(key, _fn('def f(row):\n    return row["STUDY_ID"]')) is False


CREATE = ('def f(db):\n    db["items"].create({"id": str, "dataset_id": str, "kind": str, "n": int}, pk=%s, '
          'not_null=%s, column_order=%s, foreign_keys=[%s]%s)')
PLAIN = ('"id"', '{"kind", "n"}', '["kind"]', '("dataset_id", "datasets", "id")', "")


def _create(i: int | None = None, new: str | None = None, extra: str = "") -> ast.AST:
    parts = list(PLAIN)
    if i is not None:
        parts[i] = new
    parts[4] = extra
    return _fn(CREATE % tuple(parts))


@pytest.mark.parametrize("i, new", [
    (0, '"ID"'),                                      # pk
    (1, '{"KIND", "n"}'),                             # a NOT NULL column
    (2, '["Kind"]'),                                  # column_order
    (3, '("DATASET_ID", "datasets", "id")'),          # a foreign key's own column
    (3, '("dataset_id", "datasets", "ID")'),          # and the column it references
])
def test_column_names_that_sqlite_utils_create_resolves(i, new):
    assert tool._case_only_create_arg(_create(), _create(i, new)) is True


@pytest.mark.parametrize("orig, mutant", [
    (_create(), _create(3, '("dataset_id", "DATASETS", "id")')),  # the other table's name: sqlite-utils raises
    (_create(), _create(0, '"XXidXX"')),                           # not a case change
    (_create(0, '"rowid_x"'), _create(0, '"ROWID_X"')),            # pk not among the columns: a new column
    (_create(extra=", transform=True"), _create(0, '"ID"', ", transform=True")),  # compared with the old table
    (_fn('def f(db, cols):\n    db["t"].create(cols, pk="id")'),
     _fn('def f(db, cols):\n    db["t"].create(cols, pk="ID")')),  # columns not written in the call
    (_fn('def f(db):\n    db["t"].insert({"id": 1}, pk="id")'),
     _fn('def f(db):\n    db["t"].insert({"id": 1}, pk="ID")')),   # an insert may create the table from its keys
    (_fn('def f(db):\n    db["t"].insert({"id": 1})'), _fn('def f(db):\n    db["t"].insert({"ID": 1})')),
    (_fn('def f(db):\n    db["t"].create_index(["study_id"])'),
     _fn('def f(db):\n    db["t"].create_index(["STUDY_ID"])')),   # the index's stored text names it
    (_fn('def f(db):\n    db["t"].create({"id": str}, pk="id")'),
     _fn('def f(db):\n    db["T"].create({"id": str}, pk="id")')),  # a table name
])
def test_column_names_elsewhere_are_kept(orig, mutant):
    assert tool._case_only_create_arg(orig, mutant) is False


def test_installed_sqlite_utils_writes_the_same_table_for_names_in_another_case():
    """The rule above rests on sqlite-utils' create_table_sql resolving these names; if a version stops doing so,
    this fails and the rule must go."""
    import sqlite_utils

    def schema(pk, not_null, order, fk, pair_pk):
        db = sqlite_utils.Database(memory=True)
        db["datasets"].create({"id": str}, pk="id")
        db["items"].create({"id": str, "dataset_id": str, "kind": str}, pk=pk, not_null=not_null,
                           column_order=order, foreign_keys=[fk])
        db["pairs"].create({"a": str, "b": int}, pk=pair_pk)
        return [r[0] for r in db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' ORDER BY name")]

    want = schema("id", {"kind"}, ["kind"], ("dataset_id", "datasets", "id"), ("a", "b"))
    assert want[1] == ('CREATE TABLE "items" (\n   "kind" TEXT NOT NULL,\n   "id" TEXT PRIMARY KEY,\n'
                       '   "dataset_id" TEXT REFERENCES "datasets"("id")\n)')
    assert want[2] == 'CREATE TABLE "pairs" (\n   "a" TEXT,\n   "b" INTEGER,\n   PRIMARY KEY ("a", "b")\n)'
    assert schema("ID", {"KIND"}, ["Kind"], ("DATASET_ID", "datasets", "ID"), ("A", "b")) == want
