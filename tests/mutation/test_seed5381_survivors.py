"""What the catchable survivors of the storage sample of seed 5381 changed, each as a user or caller sees it
(CONTRIBUTING.md, "Mutation testing"): the read-only SQLite error, a bare Bearer token, the cache writer's messages and
its per-transaction hook, cached calls keyed without their api_base, the judgments refusal's task list, import
ids of two datasets under one clock reading, a chain of bundle rows that are all new, a bundle context of more
than one insert batch, CIMemories tags and attributes without a tag, RealPref profiles and preference records,
and an annotator stored without a kind."""
from __future__ import annotations

import sqlite3

import pytest

from storage.bundles import _BATCH, _chain
from storage.db import sqlite_error_message
from storage.errors import PrefvalError
from storage.importers import cimemories, judgments, realpref
from storage.importers.cimemories import event_tag_lengths
from storage.llm_calls import LLMCall, LLMCallWriter
from storage.models import ContextIn, Item, ItemIn, Message
from storage.payloads import McqPayload
from storage.secrets import scrub_text
from storage.store import Store

from tests.conftest import make_mcq_items
from tests.mutation.test_llm_cache_and_runs import _hold


def _call(key: str, **kw) -> LLMCall:
    return LLMCall(key=key, model="m-1", template="judge", request={"messages": [{"role": "user", "content": "hi"}]},
                   reply_text="ok", created_at="2026-01-01T00:00:01", **kw)


# ---- storage/db.py, storage/secrets.py -------------------------------------------------------------------------
def test_a_read_only_error_spelled_with_a_hyphen_is_explained(tmp_path):
    p = tmp_path / "p.db"
    assert sqlite_error_message(p, sqlite3.OperationalError("attempt to write a read-only database")) == \
        f"{p}: the database is read-only (file, folder or file system; nothing was changed)"


def test_a_bearer_token_without_sk_is_scrubbed():
    assert scrub_text("Authorization: Bearer abcdefgh12345678 sent", []) == "Authorization: *** sent"


# ---- storage/llm_calls.py ----------------------------------------------------------------------------------------
def test_cached_calls_keyed_without_their_api_base_are_listed_with_it(store):
    store.put_llm_calls([_call("old-1", api_base="http://127.0.0.1:8001", key_version=1),
                         _call("old-2", api_base=None, key_version=1),
                         _call("new-1", api_base="http://127.0.0.1:8002")])
    assert store.llm_calls_keyed_without_api_base() == [("old-1", "http://127.0.0.1:8001")]


def test_the_cache_writer_names_the_kind_of_error_that_stopped_a_write(tmp_path):
    path = str(tmp_path / "w.db")
    Store.open(path, mode="create").close()
    writer = LLMCallWriter(path)
    try:
        def fails(store):
            raise ValueError("no room")

        failed = writer.submit_op(fails)
        with pytest.raises(PrefvalError) as info:
            failed.result(timeout=30)
        assert str(info.value) == f"{path}: the LLM call cache could not be written (ValueError: no room)"
    finally:
        writer.close()


def test_the_cache_writer_runs_its_hook_once_per_transaction_and_survives_a_bad_call(tmp_path):
    """on_batch runs at the end of every transaction that committed as one: here two (a held op, then the two
    calls submitted meanwhile); a bad call in a batch fails alone and the rest of its batch is written."""
    path = str(tmp_path / "w.db")
    Store.open(path, mode="create").close()
    hooks: list[int] = []
    writer = LLMCallWriter(path, on_batch=lambda s: hooks.append(
        s.db.execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0]))
    try:
        go, first = _hold(writer)  # the writer busy in a transaction of its own until go is set
        a, b = writer.submit(_call("a")), writer.submit(_call("b"))
        go.set()
        assert (first.result(30), a.result(30), b.result(30)) == ("held", None, None)
        assert hooks == [0, 2]  # after the op (no call yet), after both calls
        bad = _call("bad")
        bad.request["token"] = "t"
        go, first = _hold(writer)
        c, failed = writer.submit(_call("c")), writer.submit(bad)
        go.set()
        assert (first.result(30), c.result(30)) == ("held", None)
        with pytest.raises(PrefvalError, match="field 'token' holds a credential"):
            failed.result(30)
    finally:
        writer.close()
    with Store.open(path, mode="rw") as s:
        assert s.llm_call_keys() == {"a", "b", "c"}


# ---- storage/importers/judgments.py --------------------------------------------------------------------------------
def test_judgments_for_a_task_without_an_answer_map_name_the_tasks_that_have_one(store, monkeypatch):
    items, contexts = make_mcq_items(2)
    store.import_items("ds", "jsonl", items, contexts=contexts)
    store.create_study("st", "mcq", {"annotators_per_item": 1}, 1,
                       [(r[0], None, {}) for r in store.db.execute("SELECT id FROM items ORDER BY external_id")])
    monkeypatch.delitem(judgments.ANSWER_MAPS, "mcq")
    with pytest.raises(PrefvalError) as info:
        judgments.add_judgment_records(store, [{"item": "q0", "choice": "A"}], "st", "judge")
    assert str(info.value) == ("study 'st' (task mcq): LLM judgments can be imported for tasks blind_test, "
                               "easy_test, gold_label, item_quality, judge_validation, pairwise, persona_filter, "
                               "rubric only")


# ---- storage/datasets.py --------------------------------------------------------------------------------------------
def test_one_file_imported_into_two_datasets_in_the_same_instant_records_two_imports(store, monkeypatch):
    import storage.datasets as datasets

    monkeypatch.setattr(datasets, "now_iso", lambda: "2026-01-01T00:00:00.000000+00:00")
    items, _ = make_mcq_items(1, with_context=False)
    store.import_items("one", "jsonl", items, source_path="same.jsonl", file_hash="h1")
    store.import_items("two", "jsonl", items, source_path="same.jsonl", file_hash="h1")
    rows = store.db.execute("SELECT d.name, i.path, i.n_added FROM imports i JOIN datasets d ON d.id = i.dataset_id "
                            "ORDER BY d.name").fetchall()
    assert rows == [("one", "same.jsonl", 1), ("two", "same.jsonl", 1)]


# ---- storage/bundles.py ----------------------------------------------------------------------------------------------
def _row(rid: str, at: str, supersedes: str | None) -> dict:
    return {"id": rid, "unit_id": "u1", "status": "answered", "submitted_at": at, "supersedes": supersedes}


def test_new_rows_of_a_unit_with_no_rows_here_are_chained_in_time_order():
    late, early = _row("r-late", "2026-01-01T00:00:09+00:00", None), _row("r-early", "2026-01-01T00:00:01+00:00", None)
    relinked = _chain({}, [late, early])
    assert relinked == {"r-late": None}  # its bundle link (None) replaced
    assert (early["supersedes"], late["supersedes"]) == (None, "r-early")


@pytest.mark.slow
def test_a_context_longer_than_one_insert_batch_goes_whole_into_the_bundle(tmp_path):
    from annotator.bundles import export_bundle
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec

    n = _BATCH + 1  # 501 messages: one full batch of 500, then one more
    ctx = ContextIn(external_id="long", messages=[Message(role="user" if i % 2 == 0 else "assistant",
                                                          content=f"turn {i}") for i in range(n)])
    item = ItemIn(external_id="q0", kind="mcq", context_external_id="long", context_end=n,
                  payload=McqPayload(question="Which?", options=["a", "b"], correct_index=0).model_dump(
                      exclude_none=True))
    db, out = str(tmp_path / "main.db"), str(tmp_path / "ana.bundle")
    with Store.open(db, mode="create") as s:
        s.import_items("ds", "jsonl", [item], contexts=[ctx])
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=1, annotators_per_item=1,
                                  annotators=["ana"]))
        counts = export_bundle(s, "st", "ana", out)
    assert (counts["contexts"], counts["context_messages"]) == (1, 501)
    con = sqlite3.connect(out)
    try:
        assert con.execute("SELECT COUNT(*), MIN(idx), MAX(idx) FROM context_messages").fetchone() == (501, 0, 500)
        assert con.execute("SELECT content FROM context_messages WHERE idx = 500").fetchone() == ("turn 500",)
    finally:
        con.close()


# ---- storage/importers/cimemories.py -----------------------------------------------------------------------------
def test_a_tag_written_as_one_joined_word_is_one_word_long():
    assert event_tag_lengths(["pendinglegalcase", "court", "date"], "pending legal case") == [1]
    assert event_tag_lengths(["weightloss", "goal"], "weight loss") == [1]


def test_an_attribute_whose_key_carries_no_event_tag_drops_its_first_word(tmp_path):
    """"favorite_color" under the event "moving house": no tag found, so the first token ("favorite") is taken
    for one, as for any event but "general"."""
    import json

    f = tmp_path / "p.json"
    f.write_text(json.dumps([{
        "bio": {"name": "Ana Lind", "sex": "F", "address": "1 Road", "age": 30},
        "information_attributes": {"favorite_color": {
            "value": "green", "information_domain": "preferences", "event": "moving house",
            "memory_statement": "I like green."}},
        "contexts": [{"recipient": "Landlord", "task": "Rent a flat"}]}]), encoding="utf-8")
    (it,) = cimemories.read([f]).items
    assert (it.payload["attribute"], it.payload["metadata"]["event"]) == ("color", "moving house")


# ---- storage/importers/realpref.py --------------------------------------------------------------------------------
def test_a_record_with_only_an_extended_persona_is_a_profile():
    assert realpref.classify({"Extended Persona": "a night nurse", "user_id": "u1"}) == "profile"


def test_a_released_preference_record_keeps_its_fields_in_the_import_order():
    """The record's own fields first (id, Preference, Type, Topic, Event, user_id, pref_id), then extra metadata."""
    it = Item(id="1", dataset_id="d", external_id="u2:9:preference", kind="persona_record", content_hash="h",
              payload={"text": "hates rain", "record_type": "preference",
                       "metadata": {"mood": "grim", "user_id": "u2", "pref_id": "9", "preference_type": "Negative",
                                    "topic": "weather", "event": "trip"}})
    (rec,) = realpref.records_from_items([it])
    assert list(rec.items()) == [("id", "u2:9:preference"), ("Preference", "hates rain"), ("Type", "Negative"),
                                 ("Topic", "weather"), ("Event", "trip"), ("user_id", "u2"), ("pref_id", "9"),
                                 ("mood", "grim")]


# ---- storage/studies.py -------------------------------------------------------------------------------------------
def test_an_annotator_stored_without_a_kind_is_found_as_human(store):
    store.db.execute("INSERT INTO annotators (id, name, kind, model, created_at) VALUES "
                     "('a-old', 'olga', NULL, NULL, '2025-01-01T00:00:00')")
    found = store.find_annotator("olga")
    assert (found.id, found.name, found.kind, found.model) == ("a-old", "olga", "human", None)
