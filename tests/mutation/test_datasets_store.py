"""Datasets, items and contexts in the store: what an import adds, keeps and refuses (exact errors), the import
record and event, item and context reads (README, "Mutation testing")."""
from __future__ import annotations

import pytest

from storage.errors import PrefvalError
from storage.models import ContextIn, ItemIn, Message


def _item(ext, text="t", ctx=None, end=None):
    return ItemIn(external_id=ext, kind="persona_record", payload={"text": text}, context_external_id=ctx,
                  context_end=end)


CTX = ContextIn(external_id="c1", messages=[Message(role="user", content="hello"),
                                            Message(role="assistant", content="hi there"),
                                            Message(role="user", content="bye")])


def test_import_counts_reimport_and_refusals(store):
    r = store.import_items("ds", "jsonl", [_item("a", ctx="c1", end=2), _item("b", ctx="gone")], contexts=[CTX, CTX],
                           source_path="in.jsonl", file_hash="abc")
    assert (r.dataset, r.n_added, r.n_unchanged, r.n_contexts) == ("ds", 2, 0, 1)  # the context given twice: once
    again = store.import_items("ds", "jsonl", [_item("a", ctx="c1", end=2), _item("c")], contexts=[CTX])
    assert (again.n_added, again.n_unchanged, again.n_contexts) == (1, 1, 0)
    events = store.events("import")
    assert events[0].payload == {"dataset": "ds", "format": "jsonl", "path": "in.jsonl", "added": 2, "unchanged": 0}
    assert events[1].payload == {"dataset": "ds", "format": "jsonl", "path": "", "added": 1, "unchanged": 1}
    imports = store.db.execute("SELECT path, file_hash, n_added, n_unchanged FROM imports ORDER BY rowid").fetchall()
    assert imports == [("in.jsonl", "abc", 2, 0), ("", "", 1, 1)]
    with pytest.raises(PrefvalError, match=r"^dataset 'ds' exists with format 'jsonl', not 'csv'$"):
        store.import_items("ds", "csv", [_item("z")])
    with pytest.raises(PrefvalError, match=r"^dataset 'ds': item 'a' was imported before with other content; import "
                                           r"the changed file under a new --dataset name$"):
        store.import_items("ds", "jsonl", [_item("a", text="changed", ctx="c1", end=2)])
    with pytest.raises(PrefvalError, match=r"^dataset 'ds': item 'a' was imported before with other content"):
        store.import_items("ds", "jsonl", [_item("a", ctx="c1", end=3)])  # the context end is content too
    with pytest.raises(PrefvalError, match=r"^dataset 'new': external id 'x' occurs twice$"):
        store.import_items("new", "jsonl", [_item("x"), _item("x", text="other")])
    assert [d.name for d in store.datasets()] == ["ds"]  # the refused import wrote nothing
    ds = store.get_dataset("ds")
    assert (ds.name, ds.format, ds.n_items, ds.source_path, ds.file_hash) == ("ds", "jsonl", 3, "", "")


def test_items_and_contexts_read_back(store):
    store.import_items("ds", "jsonl", [_item("b", ctx="c1", end=2), _item("a", text="first")], contexts=[CTX])
    # a later import can point at a context stored earlier
    store.import_items("ds", "jsonl", [_item("c", ctx="c1")])
    items = store.items("ds")
    assert [i.external_id for i in items] == ["b", "a", "c"]  # import order
    b, a, c = items
    assert (b.dataset_name, b.kind, b.payload, b.context_end) == ("ds", "persona_record", {"text": "t"}, 2)
    assert b.context_id is not None and c.context_id == b.context_id and a.context_id is None
    assert store.get_item(a.id).payload == {"text": "first"} and store.get_item(a.id).dataset_name == "ds"
    with pytest.raises(PrefvalError, match=r"^no item with id nope$"):
        store.get_item("nope")
    got = store.get_items([c.id, "nope", a.id])
    assert set(got) == {a.id, c.id} and got[c.id].dataset_name == "ds"
    cid = b.context_id
    assert store.context_length(cid) == 3 and store.context_length(cid, 2) == 2 and store.context_length(cid, 9) == 3
    assert store.context_length("nope") == 0
    assert [m.content for m in store.context_messages(cid)] == ["hello", "hi there", "bye"]
    assert [(m.role, m.content) for m in store.context_messages(cid, 1, 2)] == [("assistant", "hi there")]
    assert store.context_sizes(cid) == [("user", 5), ("assistant", 8), ("user", 3)]
    assert store.context_sizes("nope") == []


def test_unknown_dataset_names_the_known_ones(store):
    with pytest.raises(PrefvalError, match=r"^no dataset named 'x' \(known: none yet\)$"):
        store.get_dataset("x")
    store.import_items("b", "jsonl", [_item("1")])
    store.import_items("a", "csv", [_item("1")])
    with pytest.raises(PrefvalError, match=r"^no dataset named 'x' \(known: a, b\)$"):
        store.items("x")
    assert [(d.name, d.format, d.n_items) for d in store.datasets()] == [("a", "csv", 1), ("b", "jsonl", 1)]
