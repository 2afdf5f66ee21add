"""Studies and people (issue 12): release, unassign, rename-annotator, confirmation before a new name claims items,
rename / archive / delete a study; flags in the log and the export; T/F and distractor exports; pairing by id."""
from __future__ import annotations

import json

import pytest

from annotator.cli import main
from annotator.session import Session
from annotator.study_setup import create_study
from annotator.tasks.base import Decision, StudySpec
from storage.errors import PrefvalError
from storage.models import ItemIn
from storage.payloads import McqPayload
from storage.store import Store
from tests.conftest import make_mcq_items


def _mcq_study(db_file: str, name: str = "st", n: int = 6, annotators: list[str] | None = None, k: int = 1) -> None:
    with Store.open(db_file, mode="create") as s:
        items, ctxs = make_mcq_items(n, with_context=False)
        s.import_items("ds", "jsonl", items)
        create_study(s, StudySpec(name=name, task="mcq", datasets=["ds"], seed=3, annotators_per_item=k,
                                  annotators=annotators or []))


def _answer(s: Store, study: str, who: str, n: int) -> Session:
    sess = Session(s, study, who)
    for _ in range(n):
        sess.decide(Decision({"choice": 0, "letter": "A", "shown": "A", "cant_tell": False}))
    return sess


def _queue(s: Store, study: str, who: str) -> list[str]:
    a = s.find_annotator(who)
    return [x.unit_id for x in s.assignments(s.get_study(study).id, a.id)] if a else []


def _out(capsys, argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(argv)
    got = capsys.readouterr()
    return rc, got.out, got.err


# ---- people -------------------------------------------------------------------------------------------------
def test_mistyped_name_is_asked_for_and_refused_without_a_terminal(db_file, capsys, monkeypatch):
    _mcq_study(db_file, annotators=["cy"])
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    rc, out, err = _out(capsys, ["annotate", "st", "--annotator", "cyy", "--db", db_file])
    assert rc == 1
    assert "already has annotators cy" in err and "Did you mean 'cy'?" in err and "--new-annotator" in err
    with Store.open(db_file, mode="create") as s:
        assert s.find_annotator("cyy") is None  # nothing written: no annotator, no claim
        assert len(_queue(s, "st", "cy")) == 6


def test_new_name_is_asked_on_a_terminal_and_no_means_nothing_claimed(db_file, capsys, monkeypatch):
    from annotator.commands import annotate

    _mcq_study(db_file, annotators=["cy"])
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    asked = []
    monkeypatch.setattr("builtins.input", lambda q: asked.append(q) or "n")
    rc, out, err = _out(capsys, ["annotate", "st", "--annotator", "cyy", "--db", db_file])
    assert rc == 1 and len(asked) == 1 and "Start as 'cyy'? [y/N]" in asked[0]
    assert "nothing claimed" in err
    # the real annotator and a study without named annotators are never asked
    import argparse
    for name, who in (("st", "cy"),):
        assert annotate.confirm_newcomer(argparse.Namespace(study=name, annotator=who, new_annotator=False,
                                                            db=db_file)) is True
    assert len(asked) == 1


def test_unassign_gives_unanswered_items_back_and_keeps_answers(db_file, capsys):
    _mcq_study(db_file)  # annotators_per_item 1, nobody named: the first to open claims everything
    with Store.open(db_file, mode="create") as s:
        sess = _answer(s, "st", "cyy", 2)
        sess.skip()
        assert len(_queue(s, "st", "cyy")) == 6
    rc, out, _ = _out(capsys, ["study", "unassign", "st", "--annotator", "cyy", "--db", db_file])
    assert rc == 0 and ("cyy: 4 unanswered item(s) back to the pool (1 of them marked by 'cyy': 1 skipped; the marks stay in the log "
                      "under 'cyy'); 2 answered "
                      "item(s) stay theirs") in out
    with Store.open(db_file, mode="create") as s:
        assert len(_queue(s, "st", "cyy")) == 2
        assert len(s.current_annotations(s.get_study("st").id)) == 2  # answers untouched
        assert len(s.annotations(s.get_study("st").id)) == 3         # the skip row stays in the log
        real = Session(s, "st", "cy")  # the real annotator now gets the 4 items nobody answered
        assert len(real.queue) == 4 and not set(_queue(s, "st", "cy")) & set(_queue(s, "st", "cyy"))


def test_release_keeps_answered_and_skipped_items(db_file, capsys):
    _mcq_study(db_file, annotators=["ana", "bo"])  # 3 items each
    with Store.open(db_file, mode="create") as s:
        sess = _answer(s, "st", "ana", 1)
        sess.skip()
    rc, out, _ = _out(capsys, ["study", "release", "st", "--db", db_file])
    assert rc == 0
    assert ("ana: 1 untouched item(s) back to the pool; keeps 1 answered and 1 marked without an answer (1 skipped: "
            "still theirs to answer; --include-marked releases them too)") in out
    assert "bo: 3 untouched item(s) back to the pool; keeps 0 answered\n" in out
    with Store.open(db_file, mode="create") as s:
        assert s.assignment_counts(s.get_study("st").id) == {u: 1 for u in _queue(s, "st", "ana")}
        assert len(Session(s, "st", "cy").queue) == 4  # a newcomer claims the 4 released items


def test_rename_annotator_renames_when_the_new_name_is_free(db_file, capsys):
    _mcq_study(db_file)
    with Store.open(db_file, mode="create") as s:
        _answer(s, "st", "cyy", 2)
    rc, out, _ = _out(capsys, ["study", "rename-annotator", "st", "cyy", "cy", "--db", db_file])
    assert rc == 0 and "annotator 'cyy' is now 'cy' (6 item(s)" in out
    with Store.open(db_file, mode="create") as s:
        assert s.find_annotator("cyy") is None
        assert len(Session(s, "st", "cy").queue) == 6
        rows = json.loads(json.dumps([r.answer for r in s.current_annotations(s.get_study("st").id)]))
        assert len(rows) == 2
    rc, out, _ = _out(capsys, ["export", "st", "--db", db_file])
    assert {json.loads(x)["annotator"] for x in out.splitlines()} == {"cy"}


def test_rename_annotator_moves_unanswered_items_when_the_new_name_exists(db_file, capsys):
    _mcq_study(db_file, annotators=["cy", "cyy"])  # 3 each
    with Store.open(db_file, mode="create") as s:
        _answer(s, "st", "cyy", 1)
        before_cy = _queue(s, "st", "cy")
    rc, out, _ = _out(capsys, ["study", "rename-annotator", "st", "cyy", "cy", "--db", db_file])
    assert rc == 0 and "2 unanswered item(s) of 'cyy' moved to 'cy'; 'cyy' keeps 1 answered item(s)" in out
    with Store.open(db_file, mode="create") as s:
        q = _queue(s, "st", "cy")
        assert q[:3] == before_cy and len(q) == 5  # appended after cy's own queue
        assert len(_queue(s, "st", "cyy")) == 1


def test_release_of_an_unknown_name_is_one_line_error(db_file, capsys):
    _mcq_study(db_file, annotators=["ana"])
    rc, out, err = _out(capsys, ["study", "unassign", "st", "--annotator", "nobody", "--db", db_file])
    assert rc != 0 and "annotator 'nobody' has no items in study 'st'" in err and len(err.strip().splitlines()) == 1


# ---- studies ------------------------------------------------------------------------------------------------
def test_rename_archive_and_delete_a_study(db_file, capsys):
    _mcq_study(db_file, "typo")
    _mcq_study(db_file, "kept")
    with Store.open(db_file, mode="create") as s:
        _answer(s, "kept", "ana", 1)
        order_before = _queue(s, "kept", "ana")
    assert _out(capsys, ["study", "rename", "kept", "final", "--db", db_file])[0] == 0
    assert _out(capsys, ["study", "rename", "final", "typo", "--db", db_file])[0] != 0  # taken
    rc, out, err = _out(capsys, ["study", "delete", "final", "--db", db_file])
    assert rc != 0 and "1 annotation row(s)" in err and "study archive final" in err
    assert _out(capsys, ["study", "archive", "final", "--db", db_file])[0] == 0
    rc, out, _ = _out(capsys, ["study", "list", "--db", db_file])
    assert [line.split("\t")[0] for line in out.splitlines()] == ["typo"]
    rc, out, _ = _out(capsys, ["study", "list", "--archived", "--db", db_file])
    assert [line.split("\t")[0] for line in out.splitlines()] == ["typo", "final"] and "archived" in out
    rc, out, _ = _out(capsys, ["status", "--format", "json", "--db", db_file])
    assert [x["name"] for x in json.loads(out)["studies"]] == ["typo"]
    rc, out, _ = _out(capsys, ["study", "delete", "typo", "--db", db_file])
    assert rc == 0 and "6 items" in out
    with Store.open(db_file, mode="create") as s:
        assert [x.name for x in s.studies(include_archived=True)] == ["final"]
        assert len(s.items("ds")) == 6  # the items stay
        st = s.get_study("final")  # archived studies still open by name, answers intact
        assert len(s.current_annotations(st.id)) == 1 and _queue(s, "final", "ana") == order_before
        # a newcomer to the renamed study gets the queue order they would have had under the old name
        assert st.settings["seed_name"] == "kept"


# ---- flags and exports --------------------------------------------------------------------------------------
def test_flags_are_append_only_and_exported(db_file, capsys):
    _mcq_study(db_file, n=3)
    with Store.open(db_file, mode="create") as s:
        sess = Session(s, "st", "ana")
        first = sess.queue[0].unit_id
        sess.flag()                        # flag the first item without answering it
        assert sess.is_flagged() and sess.index == 0
        sess.decide(Decision({"choice": 1, "letter": "B", "shown": "B", "cant_tell": False}))
        sess.flag()                        # flag the second, then take it back
        sess.flag()
        second = sess.queue[1].unit_id
        sess.go(2)
        sess.flag()                        # flag the third, never answered
        third = sess.queue[2].unit_id
        sid = s.get_study("st").id
        ana = s.find_annotator("ana").id
        assert s.flagged(sid) == {(first, ana), (third, ana)}
        statuses = [r.status for r in s.annotations(sid)]
        assert statuses == ["flag", "answered", "flag", "unflag", "flag"]
        ext = {u.id: s.get_items([u.item_id])[u.item_id].external_id for u in s.units(sid)}
    rc, out, _ = _out(capsys, ["export", "st", "--db", db_file])
    rows = {json.loads(x)["item"]: json.loads(x) for x in out.splitlines()}
    assert set(rows) == {ext[first], ext[third]}
    assert rows[ext[first]]["status"] == "answered" and rows[ext[first]]["flagged"] is True
    assert rows[ext[third]]["status"] == "flagged" and rows[ext[third]]["answer"] is None
    rc, out, _ = _out(capsys, ["export", "st", "--history", "--db", db_file])
    assert [json.loads(x)["status"] for x in out.splitlines()] == statuses


def test_horizonbench_export_says_whether_the_distractor_was_picked(db_file, capsys):
    with Store.open(db_file, mode="create") as s:
        s.import_items("hb", "jsonl", [ItemIn(external_id=f"h{i}", kind="mcq", payload=McqPayload(
            question=f"q{i}?", options=["a", "b", "c", "d", "e"], correct_index=0, distractor_index=2).model_dump())
            for i in range(3)])
        create_study(s, StudySpec(name="hbs", task="mcq", datasets=["hb"], annotators_per_item=1))
        sess = Session(s, "hbs", "ana")
        for original in (2, 1):  # the distractor (C), then another wrong option (B)
            view = sess.view()
            key = "abcde"[view.order.index(original)]
            sess.decide(sess.task.decide(key, view, None))
        sess.decide(sess.task.decide("x", sess.view(), None))
    rc, out, _ = _out(capsys, ["export", "hbs", "--db", db_file])
    got = sorted((r["choice_letter"] or "-", r["distractor_letter"], r["picked_distractor"])
                 for r in map(json.loads, out.splitlines()))
    assert got == [("-", "C", None), ("B", "C", False), ("C", "C", True)]


def _records(prefix: str, ids: list[str]) -> list[ItemIn]:
    return [ItemIn(external_id=i, kind="conversation_record", payload={
        "preference": f"{prefix} preference of {i}", "messages": [{"role": "user", "content": f"{prefix} {i}"}]})
        for i in ids]


def test_parallel_datasets_pair_by_id_by_default_and_say_so(db_file, capsys):
    with Store.open(db_file, mode="create") as s:
        s.import_items("gen_a", "jsonl", _records("A", ["p1", "p2", "p3", "p4"]))
        s.import_items("gen_b", "jsonl", _records("B", ["p4", "p3", "p2", "x9"]))
        s.import_items("other", "jsonl", _records("O", ["o1", "o2"]))
    rc, out, _ = _out(capsys, ["study", "create", "pw", "--task", "pairwise", "--dataset", "gen_a",
                               "--dataset", "gen_b", "--seed", "4", "--db", db_file])
    assert rc == 0 and "3 items" in out and "paired by id" in out
    with Store.open(db_file, mode="create") as s:
        units = s.units(s.get_study("pw").id)
        items = s.get_items([u.item_id for u in units] + [u.item_b_id for u in units])
        assert [(items[u.item_id].external_id, items[u.item_b_id].external_id) for u in units] == [
            ("p2", "p2"), ("p3", "p3"), ("p4", "p4")]
        assert {u.extra["paired_by"] for u in units} == {"id"}
    rc, out, _ = _out(capsys, ["study", "create", "pw2", "--task", "pairwise", "--dataset", "gen_a",
                               "--dataset", "other", "--db", db_file])
    assert rc == 0 and "paired at random" in out and "share no ids" in out
    rc, out, _ = _out(capsys, ["study", "create", "pw3", "--task", "pairwise", "--dataset", "gen_a",
                               "--dataset", "gen_b", "--option", "pairing=random", "--db", db_file])
    assert rc == 0 and "paired at random" in out
    rc, out, err = _out(capsys, ["study", "create", "pw4", "--task", "pairwise", "--dataset", "gen_a",
                                 "--dataset", "other", "--option", "pairing=id", "--db", db_file])
    assert rc != 0 and "share no ids" in err
