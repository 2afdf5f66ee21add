"""Small storage rules each worked by hand: a bundle row's note must be text; an annotator stored without a kind is
human; contexts' message sizes are compact JSON; claimed assignments carry their creation time; an event tag needs both words and an event; a record
imported before sources named their file is released as JSONL; a CIMemories release labels only the items that
have a label; sqlite-utils' dateutil import stays lazy; stored rows without settings or kind; events name their
study and annotator; the cache writer's thread; busy claims; which environment values count as secrets (CONTRIBUTING.md,
"Mutation testing")."""
from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest

from storage.bundles import _row_problem
from storage.importers import cimemories, generic
from storage.importers.cimemories import GOLD_LABEL_KEY, event_tag_lengths
from storage.models import ItemIn, ItemSource

ROOT = Path(__file__).resolve().parents[2]
NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.timezone.utc)


def test_message_sizes_are_compact_json():
    from storage.db import message_sizes_json

    assert message_sizes_json([("user", 5), ("assistant", 12)]) == '[["user",5],["assistant",12]]'
    assert message_sizes_json([("user", 0)]) == '[["user",0]]'
    assert message_sizes_json([("système", 3)]) == '[["système",3]]'  # text as text, not \u escapes
    assert message_sizes_json([]) == "[]"


def test_a_bundle_rows_note_must_be_text_or_absent():
    row = {"id": "r1", "unit_id": "u1", "status": "skipped", "source": "human", "answer": None,
           "submitted_at": "2026-12-01T11:00:00+00:00"}
    assert _row_problem(row, None, NOW, {}) is None
    assert _row_problem({**row, "note": "too vague"}, None, NOW, {}) is None
    assert _row_problem({**row, "note": 5}, None, NOW, {}) == ("note", "not text")
    assert _row_problem({**row, "note": ["a"]}, None, NOW, {}) == ("note", "not text")


def test_an_annotator_stored_without_a_kind_is_human(store):
    store.db.execute("INSERT INTO annotators (id, name, kind, model, created_at) VALUES "
                     "('a-old', 'olga', NULL, NULL, '2025-01-01T00:00:00')")
    found = store.find_annotator("olga")
    assert (found.id, found.name, found.kind, found.model) == ("a-old", "olga", "human", None)
    assert store.find_annotator("nobody") is None


def test_claimed_assignments_carry_their_creation_time(store):
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"i{k}", kind="persona_record", payload={"text": str(k)})
                                       for k in range(2)])
    ids = [r[0] for r in store.db.execute("SELECT id FROM items ORDER BY external_id")]
    study = store.create_study("s", "persona_filter", {"annotators_per_item": 1}, 1, [(i, None, {}) for i in ids])
    ann = store.ensure_annotator("ann")
    before = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=1)
    assert store.claim_units(study.id, ann.id, 5, lambda units, nxt: [(u.id, nxt + i, 3)
                                                                        for i, u in enumerate(units)]) == 2
    after = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=1)
    stamps = [r[0] for r in store.db.execute("SELECT created_at FROM assignments ORDER BY position")]
    assert len(stamps) == 2 and stamps[0] == stamps[1]  # one claim, one time
    t = dt.datetime.fromisoformat(stamps[0])
    t = t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc)
    assert before <= t <= after


def test_an_event_tag_needs_words_and_an_event():
    assert event_tag_lengths([], "lottery win") == []
    assert event_tag_lengths(["lottery", "win", "amount"], "") == []
    assert event_tag_lengths(["lottery", "win", "amount"], "of the") == []  # only small words: no vocabulary
    assert event_tag_lengths(["lw", "amount"], "lottery win") == [1]  # initials


def test_a_record_imported_before_sources_named_their_file_is_released_as_jsonl():
    parsed = generic.read([ROOT / "sample_data/persona/personas.jsonl"], {"format": "jsonl", "kind": "persona_record"})
    first, second = parsed.items[:2]
    entries = [ItemSource(external_id=first.external_id, source={"record_src": first.source["record_src"]}),
               ItemSource(external_id=second.external_id, source=second.source)]
    files = generic.release_files(entries, parsed.sources)
    assert [(f.suffix, f.records) for f in files] == [(".records.jsonl", 2)]
    want = [json.loads(x) for x in (ROOT / "sample_data/persona/personas.jsonl").read_text(encoding="utf-8")
            .splitlines() if x][:2]
    assert [json.loads(x) for x in files[0].data.decode("utf-8").splitlines()] == want


def test_a_cimemories_release_labels_only_the_items_with_a_label():
    parsed = cimemories.read([ROOT / "sample_data/cimemories/sample_profiles.json"])
    items = parsed.items[:3]
    assert len({(i.source["profile_src"], i.source["context_index"]) for i in items}) == 1  # one context
    entries = [ItemSource(external_id=i.external_id, source=i.source) for i in items]
    labelled = items[1]
    files = cimemories.release_files(entries, parsed.sources, {labelled.external_id: {"gold_label": 1}})
    out = json.loads(files[0].data.decode("utf-8"))
    labels = [c[GOLD_LABEL_KEY] for p in out for c in p["contexts"] if GOLD_LABEL_KEY in c]
    assert labels == [{labelled.source["attr_key"]: 1}]


@pytest.mark.slow
def test_sqlite_utils_leaves_dateutil_parser_unloaded():
    import sqlite_utils

    import storage.db

    pytest.importorskip("dateutil.parser")
    assert storage.db._import_sqlite_utils() is sqlite_utils  # (in this process: already imported, the same module)
    code = "import sys; import storage.db; print(type(sys.modules['dateutil.parser']).__name__)"
    got = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert got.stdout.strip() == "_LazyModule"  # in sys.modules for sqlite-utils, its code not run yet


def test_a_kindless_annotator_found_again_by_ensure_is_human(store):
    store.db.execute("INSERT INTO annotators (id, name, kind, model, created_at) VALUES "
                     "('a-old', 'olga', NULL, NULL, '2025-01-01T00:00:00')")
    again = store.ensure_annotator("olga")
    assert (again.id, again.kind) == ("a-old", "human")


def test_a_study_stored_without_settings_reads_as_empty_settings(store):
    store.db.execute("INSERT INTO studies (id, name, task_type, settings, seed, created_at) VALUES "
                     "('s-old', 'old', 'mcq', NULL, 1, '2025-01-01T00:00:00')")
    assert store.get_study("old").settings == {}


def test_released_assignments_are_logged_with_their_annotator(store):
    store.import_items("ds", "jsonl", [ItemIn(external_id="i0", kind="persona_record", payload={"text": "0"})])
    (iid,) = (r[0] for r in store.db.execute("SELECT id FROM items"))
    study = store.create_study("s", "persona_filter", {"annotators_per_item": 1}, 1, [(iid, None, {})])
    ann = store.ensure_annotator("ann")
    store.add_assignments(study.id, [(store.units(study.id)[0].id, ann.id, 0, 1)])
    assert store.release_assignments(study.id, ann.id) == 1
    assert [(e.study_id, e.annotator_id) for e in store.events("assignments_released")] == [(study.id, ann.id)]


def test_cimemories_items_name_their_profile_and_file():
    path = ROOT / "sample_data/cimemories/sample_profiles.json"
    parsed = cimemories.read([path])
    first_name = json.loads(path.read_text(encoding="utf-8"))[0]["bio"]["name"]
    assert parsed.items[0].payload["profile_name"] == first_name
    assert parsed.source_path == str(path)


def test_the_cache_writer_thread_never_keeps_the_process_alive(tmp_path):
    from storage.llm_cache_writer import LLMCallWriter
    from storage.store import Store

    path = str(tmp_path / "w.db")
    Store.open(path, mode="create").close()
    writer = LLMCallWriter(path)
    try:
        assert writer._thread.daemon is True and writer._thread.name == "prefval-llm-cache-writer"
    finally:
        writer.close()


def test_a_claim_held_by_a_live_other_client_is_busy(store):
    from storage.llm_calls import BUSY, CLAIMED, ClaimHolder, ClaimOwner

    a = ClaimOwner(token="host-a:1:aa", host="host-a", pid=1)
    b = ClaimOwner(token="host-b:2:bb", host="host-b", pid=2)
    assert store.claim_llm_calls(["k1", "k2"], a, 60, lambda h, now: True) == {"k1": CLAIMED, "k2": CLAIMED}
    seen = []

    def alive(holder, now):
        seen.append(holder)
        return holder.token == a.token and holder.host == "host-a" and holder.pid == 1

    assert store.claim_llm_calls(["k1"], b, 60, alive) == {"k1": BUSY}
    assert [h.token for h in seen] == [a.token] and isinstance(seen[0], ClaimHolder)
    assert store.claim_llm_calls(["k2"], b, 60, lambda h, now: False) == {"k2": CLAIMED}  # taken over


def test_secret_values_from_the_minimum_length_longest_first(monkeypatch):
    import os

    from storage.secrets import _SECRET_ENV_NAME, MIN_SECRET_LENGTH, secret_values

    for k in [k for k in os.environ if _SECRET_ENV_NAME.search(k)]:  # this machine's own: out of the way
        monkeypatch.delenv(k)
    assert MIN_SECRET_LENGTH == 6
    monkeypatch.setenv("A_TOKEN", "zzzzzz")  # exactly 6: kept
    monkeypatch.setenv("B_API_KEY", "aaaaaaaaaa")  # 10
    monkeypatch.setenv("C_SECRET", "short")  # 5: too short to look for
    assert secret_values() == ["aaaaaaaaaa", "zzzzzz"]  # longest first (by text, "zzzzzz" would come first)


def test_a_benchpres_row_of_the_wrong_shape_names_file_line_and_field(tmp_path):
    from storage.errors import InputError
    from storage.importers import benchpres

    good = (ROOT / "sample_data/benchpres/sample.jsonl").read_text(encoding="utf-8").splitlines()[0]
    bad = json.loads(good)
    bad["preference_attribute"] = "humorous tone"  # a string, not a list
    path = tmp_path / "rows.jsonl"
    path.write_text(good + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        benchpres.read([path])
    assert str(info.value).startswith(f"{path}: line 2: field 'preference_attribute': ")
