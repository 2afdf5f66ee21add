"""The study and annotator records of storage/studies.py: creation (at once and in batches), the hidden study of a
process that died, renaming, archiving, deleting (the export time of a bundle out), annotators (ids derived from the
name alone), a study stored without settings, the counts of a study made in batches; exact errors and the events logged
(CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid

import pytest

import storage.bundles
from storage.errors import PrefvalError
from storage.models import PREFVAL_NAMESPACE, AnnotationIn, ItemIn
from storage.studies import _alive, unit_quota
from tests.mutation.persona_study import _study


def _items(store, n=3) -> list[str]:
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"i{k}", kind="persona_record", payload={"text": f"t{k}"})
                                       for k in range(n)])
    return [r[0] for r in store.db.execute("SELECT id FROM items ORDER BY external_id").fetchall()]


def _err(fn, *args, **kwargs) -> str:
    with pytest.raises(PrefvalError) as info:
        fn(*args, **kwargs)
    return str(info.value)


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_unit_quota_sources():
    assert unit_quota({}, {}) == 1
    assert unit_quota({"annotators_per_item": 3}, {}) == 3
    assert unit_quota({"annotators_per_item": 3}, {"annotators": "2"}) == 2


def test_alive():
    here = socket.gethostname()
    assert _alive({"pid": os.getpid(), "host": here})
    assert not _alive({"pid": _dead_pid(), "host": here})
    assert _alive({"pid": _dead_pid(), "host": here + "-elsewhere"})  # another host: cannot tell, taken as alive
    assert _alive({"pid": "x", "host": here})


def test_create_study_units_quota_and_event(store):
    ids = _items(store)
    st = store.create_study("s", "persona_filter", {"annotators_per_item": 2}, 7,
                            [(ids[2], None, {}), (ids[0], None, {"annotators": 3}), (ids[1], None, None)])
    assert (st.name, st.task_type, st.seed, st.settings) == ("s", "persona_filter", 7, {"annotators_per_item": 2})
    units = store.units(st.id)
    assert [(u.item_id, u.position, u.extra) for u in units] == [(ids[2], 0, {}), (ids[0], 1, {"annotators": 3}),
                                                                 (ids[1], 2, {})]
    slots = dict(store.db.execute("SELECT item_id, open_slots FROM study_items WHERE study_id = ?", [st.id]).fetchall())
    assert slots == {ids[2]: 2, ids[0]: 3, ids[1]: 2}
    (ev,) = store.events("study_created", st.id)
    assert ev.payload == {"name": "s", "task": "persona_filter", "units": 3, "seed": 7}
    assert store.units_by_id([units[1].id, "nope"]) == {units[1].id: units[1]}
    assert _err(store.create_study, "s", "persona_filter", {}, 1, []) == "a study named 's' already exists"
    msg = _err(store.create_study, "t", "persona_filter", {}, 1, [("no-such-item", None, {})])
    assert msg.startswith("study 't': could not add its items (") and "FOREIGN KEY" in msg
    assert [s.name for s in store.studies()] == ["s"]  # the failed one left nothing


def test_study_created_in_batches_is_hidden_until_finished(store):
    ids = _items(store)
    st = store.create_study("big", "persona_filter", {}, 1, [(i, None, {}) for i in ids], in_batches=True)
    pid = os.getpid()
    assert st.settings["creating"] == {"pid": pid, "host": socket.gethostname()}
    assert store.studies() == [] and store.events("study_created") == []
    assert _err(store.get_study, "big") == f"study 'big' is still being created (process {pid})"
    assert _err(store.create_study, "big", "persona_filter", {}, 1, []) == (
        f"a study named 'big' already exists (process {pid} is creating it)")
    done = store.finish_study(st.id)
    assert "creating" not in done.settings and done.settings["counts"]["units"] == 3
    assert [s.name for s in store.studies()] == ["big"]
    (ev,) = store.events("study_created", st.id)
    assert ev.payload == {"name": "big", "task": "persona_filter", "units": 3, "seed": 1}
    assert _err(store.drop_unfinished_study, st.id) == "only a study still being created can be dropped"
    store.drop_unfinished_study("no-such-study")  # nothing to drop: no error


def test_hidden_study_of_a_dead_process_is_replaced(store):
    ids = _items(store)
    st = store.create_study("big", "persona_filter", {}, 1, [(i, None, {}) for i in ids], in_batches=True)
    dead = {"pid": _dead_pid(), "host": socket.gethostname()}
    store.db.execute("UPDATE studies SET settings = ? WHERE id = ?", [json.dumps({"creating": dead}), st.id])
    store.db.conn.commit()
    assert _err(store.get_study, "big") == (
        f"study 'big' is still being created (process {dead['pid']}, which has stopped: create it again)")
    again = store.create_study("big", "persona_filter", {}, 2, [(ids[0], None, {})])
    assert again.id != st.id and [u.item_id for u in store.units(again.id)] == [ids[0]]
    assert store.db.execute("SELECT COUNT(*) FROM study_items WHERE study_id = ?", [st.id]).fetchone()[0] == 0


def test_get_rename_archive_delete(store):
    ids = _items(store)
    assert _err(store.get_study, "x") == "no study named 'x' (known: none yet)"
    a = store.create_study("a", "persona_filter", {}, 1, [(ids[0], None, {})])
    store.create_study("b", "persona_filter", {}, 1, [(ids[1], None, {})])
    assert _err(store.get_study, "x") == "no study named 'x' (known: a, b)"
    assert _err(store.rename_study, "a", "  ") == "the new study name must not be empty"
    assert _err(store.rename_study, "a", "b") == "a study named 'b' already exists"
    assert _err(store.rename_study, "a", " a2 ") == ("the new study name ' a2 ' starts or ends with whitespace; "
                                                     "give it without")
    renamed = store.rename_study("a", "a2")
    assert renamed.id == a.id and renamed.name == "a2" and renamed.settings["seed_name"] == "a"
    assert store.rename_study("a2", "a3").settings["seed_name"] == "a"  # the first name is kept
    assert [e.payload for e in store.events("study_renamed", a.id)] == [{"from": "a", "to": "a2"},
                                                                        {"from": "a2", "to": "a3"}]
    assert store.set_study_archived("a3").settings["archived"] is True
    assert [s.name for s in store.studies()] == ["b"]
    assert [s.name for s in store.studies(include_archived=True)] == ["a3", "b"]
    assert store.set_study_archived("a3", archived=False).settings["archived"] is False
    assert [e.kind for e in store.events(study_id=a.id)][-2:] == ["study_archived", "study_unarchived"]
    assert store.events("study_archived", a.id)[0].payload == {"name": "a3"}

    b = store.get_study("b")
    ann = store.ensure_annotator("ann")
    u = store.units(b.id)[0]
    store.add_annotation(AnnotationIn(study_id=b.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                      status="skipped", answer=None))
    assert _err(store.delete_study, "b") == ("study 'b' has 1 annotation row(s), which are never deleted; use "
                                             "`prefval study archive b` to hide it instead")
    assert store.delete_study("a3") == 1
    assert [s.name for s in store.studies(include_archived=True)] == ["b"]
    assert store.db.execute("SELECT COUNT(*) FROM study_items WHERE study_id = ?", [a.id]).fetchone()[0] == 0
    assert store.events("study_deleted", a.id)[0].payload == {"name": "a3", "units": 1}


def test_annotators(store):
    assert _err(store.ensure_annotator, "  ") == "the annotator name must not be empty"
    assert _err(store.ensure_annotator, "b\x1bo") == ("the annotator name 'b\\x1bo' holds a control character; a "
                                                      "name is plain text (letters, digits, spaces inside, punctuation)")
    assert _err(store.ensure_annotator, " bo ") == ("the annotator name ' bo ' starts or ends with whitespace; "
                                                    "give it without")
    bo = store.ensure_annotator("bo")
    assert (bo.name, bo.kind, bo.model) == ("bo", "human", None)
    judge = store.ensure_annotator("judge", kind="llm", model="m-2")
    assert (judge.kind, judge.model) == ("llm", "m-2")
    assert store.ensure_annotator("judge") == judge  # found by name, nothing changed
    assert store.find_annotator(" bo ") == bo and store.find_annotator("nobody") is None
    assert [a.name for a in store.annotators()] == ["bo", "judge"]
    assert _err(store.rename_annotator, "nobody", "x") == "no annotator named 'nobody'"
    assert _err(store.rename_annotator, "bo", " ") == "the new annotator name must not be empty"
    assert _err(store.rename_annotator, "bo", "judge") == "an annotator named 'judge' already exists"
    assert "starts or ends with whitespace" in _err(store.rename_annotator, "bo", " al ")
    al = store.rename_annotator("bo", "al")
    assert (al.id, al.name, al.kind) == (bo.id, "al", "human")
    assert store.find_annotator("bo") is None and store.ensure_annotator("al").id == bo.id
    assert [a.name for a in store.annotators()] == ["al", "judge"]
    assert store.events("annotator_renamed")[0].payload == {"from": "bo", "to": "al"}


def test_a_study_stored_without_settings_reads_as_empty_settings(store):
    store.db.execute("INSERT INTO studies (id, name, task_type, settings, seed, created_at) VALUES "
                     "('s-old', 'old', 'mcq', NULL, 1, '2025-01-01T00:00:00')")
    assert store.get_study("old").settings == {}


def test_a_refused_delete_names_the_time_the_bundle_was_exported(store, monkeypatch):
    st, _ = _study(store)
    ana = store.ensure_annotator("ana")
    monkeypatch.setattr(storage.bundles, "now_iso", lambda: "2026-03-04T05:06:07.123456+00:00")
    store.record_bundle_export("b-1", st, ana.id, "ana.bundle", 2)
    with pytest.raises(PrefvalError) as info:
        store.delete_study("s")
    assert str(info.value) == (
        "study 's' has 1 bundle(s) out that were not merged back, the latest ana.bundle of 'ana' (exported "
        "2026-03-04 05:06 UTC); its answers could never be merged: merge it first (`prefval bundle merge`), or "
        "`prefval study archive s` to hide the study instead")


def test_an_annotators_id_is_derived_from_the_name_alone(store, tmp_path):
    """The same name gives the same id in every database and every prefval version (uuid5 of "annotator" and the
    name in prefval's namespace), so bundles and judgments of one annotator merge into any copy."""
    ana = store.ensure_annotator("ana")
    assert ana.id == str(uuid.uuid5(PREFVAL_NAMESPACE, "annotator\x1fana"))
    judge = store.ensure_annotator("gpt judge", kind="llm", model="m")
    assert (judge.id, judge.kind, judge.model) == (str(uuid.uuid5(PREFVAL_NAMESPACE, "annotator\x1fgpt judge")),
                                                   "llm", "m")


def test_a_study_made_in_batches_counts_its_units_when_finished(store):
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"i{k}", kind="persona_record", payload={"text": str(k)})
                                       for k in range(3)])
    ids = [r[0] for r in store.db.execute("SELECT id FROM items ORDER BY external_id")]
    st = store.create_study("b", "persona_filter", {}, 1, [(ids[0], None, {}), (ids[1], None, {"check": True}),
                                                           (ids[2], None, {"annotators": 3})], in_batches=True)
    done = store.finish_study(st.id)
    # 3 units, 1 a check; needed: 1 (no annotators_per_item: one annotator per item) + 3 (its own quota)
    assert done.settings["counts"] == {"units": 3, "checks": 1, "needed": 4}
    assert [e.payload["units"] for e in store.events("study_created")] == [3]
    got = store.study_progress(st.id)  # from the counts stored when the study was finished
    assert (got["items"], got["checks"], got["needed"]) == (2, 1, 4)
    empty = store.create_study("e", "persona_filter", {"annotators_per_item": 2}, 1, [], in_batches=True)
    assert store.finish_study(empty.id).settings["counts"] == {"units": 0, "checks": 0, "needed": 0}
    got = store.study_progress(empty.id)
    assert (got["items"], got["checks"], got["needed"]) == (0, 0, 0)
