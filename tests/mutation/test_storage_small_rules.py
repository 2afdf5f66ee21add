"""Small storage rules each worked by hand: a bundle row's note must be text; an annotator stored without a kind is
human; contexts' message sizes are compact JSON; claimed assignments carry their creation time; an event tag needs both words and an event; a record
imported before sources named their file is released as JSONL; a CIMemories release labels only the items that
have a label; sqlite-utils' dateutil import stays lazy (README, "Mutation testing")."""
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


def test_sqlite_utils_leaves_dateutil_parser_unloaded():
    import sqlite_utils

    import storage.db

    pytest.importorskip("dateutil.parser")
    assert storage.db._import_sqlite_utils() is sqlite_utils  # (in this process: already imported, the same module)
    code = "import sys; import storage.db; print(type(sys.modules['dateutil.parser']).__name__)"
    got = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert got.stdout.strip() == "_LazyModule"  # in sys.modules for sqlite-utils, its code not run yet
