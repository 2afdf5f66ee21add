"""A bundle merge writes nothing on items taken from its annotator since the bundle was cut (issue 12, newcomer
check), as the annotation screen refuses an answer on a released assignment (storage.errors.AssignmentReleased):
the other rows are merged, the refused ones are counted by status and their items named on the merge's line, the
command exits with 4 (annotator.cli.EXIT_FAILED_ROWS: finished, some rows not written), and nothing of the refused
rows reaches the database. Cases: after `study release`, after `study unassign`, after the items went to another
annotator (released, then claimed and answered by bo)."""
from __future__ import annotations

import sqlite3

import pytest

from annotator.cli import EXIT_FAILED_ROWS, main
from annotator.session import Session
from annotator.tasks.base import Decision
from storage.store import Store
from tests.test_bundle_rules import _quota1_study
from tests.test_task_blind_test import blind_db  # noqa: F401  (fixture)

A = {"choice": 0, "letter": "A", "shown": "A", "cant_tell": False}
B = {"choice": 1, "letter": "B", "shown": "B", "cant_tell": False}


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(argv)
    got = capsys.readouterr()
    return rc, got.out.strip(), got.err.strip()


def _table(path: str, table: str) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return sorted(conn.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
    finally:
        conn.close()


@pytest.fixture
def offline(blind_db, tmp_path, capsys) -> dict:
    """Study bt1 (5 blind items, one annotator each), all held by ana. On the main file ana answers q0 and skips
    q1 (her queue order), then takes a bundle; in it she changes q0's answer to B, answers q1, q2 and q3, and writes
    a note on q4. Returns {"db", "bundle", "q": her queue's unit ids, "ext": unit id -> item external id,
    "pos": unit id -> study position}."""
    _quota1_study(blind_db)
    with Store.open(blind_db, mode="rw") as s:
        sess = Session(s, "bt1", "ana")
        q = [sess.queue.unit_id(i) for i in range(5)]
        sess.decide(Decision(dict(A)))  # q0
        sess.skip()  # q1
        units = s.units_by_id(q)
        items = s.get_items([u.item_id for u in units.values()])
        ext = {uid: items[u.item_id].external_id for uid, u in units.items()}
        pos = {uid: u.position for uid, u in units.items()}
    out = str(tmp_path / "ana.bundle")
    assert _run(capsys, ["bundle", "export", "bt1", "--annotator", "ana", "--out", out, "--db", blind_db])[0] == 0
    with Store.open(out, mode="rw") as b:
        sess = Session(b, "bt1", "ana")
        assert [sess.queue.unit_id(i) for i in range(5)] == q
        for i, answer in ((0, B), (1, A), (2, A), (3, A)):
            sess.go(i)
            sess.decide(Decision(dict(answer)))
        sess.go(4)
        sess.note("two options say the same")
        sess.close()
    return {"db": blind_db, "bundle": out, "q": q, "ext": ext, "pos": pos}


def _ana_rows(db: str) -> list[tuple[str, str]]:
    """ana's rows in bt1 as (unit id, status), in log order."""
    with Store.open(db, mode="ro") as s:
        st, ana = s.get_study("bt1"), s.find_annotator("ana")
        return [(a.unit_id, a.status) for a in s.annotations(st.id) if a.annotator_id == ana.id]


def _names(o: dict, idx: list[int]) -> str:
    """The items of queue positions idx by external id, in study order, as the merge line lists them."""
    return ", ".join(o["ext"][u] for u in sorted((o["q"][i] for i in idx), key=o["pos"].get))


def _merge(capsys, o: dict) -> tuple[int, str, str]:
    return _run(capsys, ["bundle", "merge", o["bundle"], "--db", o["db"]])


@pytest.mark.slow
def test_merge_after_release_writes_only_the_rows_on_items_she_still_holds(offline, capsys):
    o, q = offline, offline["q"]
    rc, said, _ = _run(capsys, ["study", "release", "bt1", "--annotator", "ana", "--db", o["db"]])
    # release keeps q0 (answered) and q1 (skipped: marked); q2, q3, q4 were untouched in the main file
    assert rc == 0 and said.startswith("ana: 3 untouched item(s) back to the pool; keeps 1 answered and 1 marked")
    before = {t: _table(o["db"], t) for t in ("assignments", "study_items", "items")}
    log = _ana_rows(o["db"])
    rc, said, err = _merge(capsys, o)
    assert rc == EXIT_FAILED_ROWS == 4
    # by hand: the bundle holds her 2 rows from the main file (already present) and 5 new ones; q0's and q1's
    # answers are merged, q2's and q3's answers and q4's note are not
    assert said == (f"{o['bundle']}: ana on study 'bt1': 2 rows added (2 answered), 2 already present; 3 rows NOT "
                    f"merged (2 answered, 1 note) on 3 item(s) 'ana' no longer holds (released since the bundle was "
                    f"cut): {_names(o, [2, 3, 4])}")
    assert err.count("\n") == 0 and err.startswith("prefval: 3 row(s) NOT merged") and "merge it again" in err
    assert _ana_rows(o["db"]) == log + [(q[0], "answered"), (q[1], "answered")]
    assert {t: _table(o["db"], t) for t in before} == before  # no assignment, unit or item changed
    # merged again: nothing new, the same 3 rows refused again
    rc, said, _ = _merge(capsys, o)
    assert rc == 4 and ": 0 rows added, 4 already present; 3 rows NOT merged (2 answered, 1 note)" in said
    assert len(_ana_rows(o["db"])) == len(log) + 2


@pytest.mark.slow
def test_merge_after_unassign_writes_only_the_answered_item(offline, capsys):
    o, q = offline, offline["q"]
    assert _run(capsys, ["study", "unassign", "bt1", "--annotator", "ana", "--db", o["db"]])[0] == 0
    log = _ana_rows(o["db"])
    rc, said, _ = _merge(capsys, o)
    # unassign takes q1 (skipped) too: only q0, answered in the main file, is still hers
    assert rc == 4
    assert said.endswith(f"1 rows added (1 answered), 2 already present; 4 rows NOT merged (3 answered, 1 note) on "
                         "4 item(s) 'ana' no longer holds (released since the bundle was cut): "
                         f"{_names(o, [1, 2, 3, 4])}")
    assert _ana_rows(o["db"]) == log + [(q[0], "answered")]


@pytest.mark.slow
def test_merge_after_the_items_went_to_another_annotator_keeps_the_quota(offline, capsys):
    o, q = offline, offline["q"]
    assert _run(capsys, ["study", "release", "bt1", "--annotator", "ana", "--db", o["db"]])[0] == 0
    with Store.open(o["db"], mode="rw") as s:  # bo opens the study: he claims the 3 released items, answers one
        bo = Session(s, "bt1", "bo")
        assert {bo.queue.unit_id(i) for i in range(len(bo.queue))} == {q[2], q[3], q[4]}
        bo.decide(Decision(dict(B)))
        bo_first = bo.queue.unit_id(0)
    rc, said, _ = _merge(capsys, o)
    assert rc == 4 and "2 rows added (2 answered)" in said and "3 rows NOT merged (2 answered, 1 note)" in said
    with Store.open(o["db"], mode="ro") as s:
        st = s.get_study("bt1")
        names = {a.id: a.name for a in s.annotators()}
        answered: dict[str, set[str]] = {}
        for a in s.annotations(st.id):
            if a.status == "answered":
                answered.setdefault(a.unit_id, set()).add(names[a.annotator_id])
    # quota 1: every item answered by one person; bo's item has only bo's answer, ana's two stay hers
    assert answered == {q[0]: {"ana"}, q[1]: {"ana"}, bo_first: {"bo"}}
    assert not any(u in (q[2], q[3], q[4]) for u, _ in _ana_rows(o["db"]))


@pytest.mark.slow
def test_a_bundle_whose_items_are_all_taken_merges_nothing_and_says_which(offline, capsys):
    o = offline
    with Store.open(o["db"], mode="rw") as s:  # every item of hers released, the answered one included
        st, ana = s.get_study("bt1"), s.find_annotator("ana")
        s.db.execute("UPDATE assignments SET released_at = '2026-12-01T00:00:00+00:00' "
                     "WHERE study_id = ? AND annotator_id = ?", [st.id, ana.id])
        s.db.conn.commit()
    log = _ana_rows(o["db"])
    rc, said, _ = _merge(capsys, o)
    assert rc == 4 and ": 0 rows added, 2 already present; 5 rows NOT merged (4 answered, 1 note) on 5 item(s)" in said
    assert said.endswith(_names(o, [0, 1, 2, 3, 4]))
    assert _ana_rows(o["db"]) == log


def test_the_line_names_ten_items_and_counts_the_rest():
    from storage.bundles import MergeSummary

    s = MergeSummary(path="b.bundle", study="s", annotator="ana", added={"note": 1}, already_present=3,
                     refused={"answered": 12, "flag": 1}, refused_units=12, refused_items=[f"i{k}" for k in range(10)])
    assert s.n_refused == 13
    assert s.line() == ("b.bundle: ana on study 's': 1 rows added (1 note), 3 already present; 13 rows NOT merged "
                        "(12 answered, 1 flag) on 12 item(s) 'ana' no longer holds (released since the bundle was "
                        "cut): i0, i1, i2, i3, i4, i5, i6, i7, i8, i9 and 2 more")
