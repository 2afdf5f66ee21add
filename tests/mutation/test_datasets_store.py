"""Datasets, items and contexts in the store: what an import adds, keeps and refuses (exact errors), the import
record and event, item and context reads, contexts' message sizes as compact JSON (CONTRIBUTING.md, "Mutation testing")."""
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


def test_original_record_pointers_written_once_and_backfilled(store):
    from storage.models import ItemSource

    def ctx(source=None):
        return ContextIn(external_id="c1", messages=[Message(role="user", content="hello")], source=source)

    def item(ext, source=None):
        return ItemIn(external_id=ext, kind="persona_record", payload={"text": ext}, context_external_id="c1",
                      context_end=1, source=source)

    # first imported by an older prefval that kept no pointers
    store.import_items("ds", "jsonl", [item("a")], contexts=[ctx()])
    assert store.item_sources("ds") == [ItemSource(external_id="a", context_external_id="c1")]
    assert store.db.execute("SELECT COUNT(*) FROM sources").fetchone()[0] == 0
    # the same file again, now with pointers: the unchanged item and context get theirs, a new item comes with its own
    r = store.import_items("ds", "jsonl",
                           [item("a", {"rec_src": "h1", "n": "ü"}), item("b", {"rec_src": "h1", "n": 2})],
                           contexts=[ctx({"ctx_src": "h2", "line": "é"})], sources={"h1": "record text", "h2": "ctx"})
    assert (r.n_added, r.n_unchanged, r.n_contexts) == (1, 1, 0)
    want = [ItemSource(external_id="a", source={"rec_src": "h1", "n": "ü"}, context_external_id="c1",
                       context_source={"ctx_src": "h2", "line": "é"}),
            ItemSource(external_id="b", source={"rec_src": "h1", "n": 2}, context_external_id="c1",
                       context_source={"ctx_src": "h2", "line": "é"})]
    assert store.item_sources("ds") == want
    assert store.source_texts(["h2", "h1", "nope", "h1"]) == {"h1": "record text", "h2": "ctx"}
    # stored as JSON text with sorted keys, non-ASCII kept as it is (the database is read by other tools too)
    assert store.db.execute("SELECT source FROM contexts").fetchone()[0] == '{"ctx_src": "h2", "line": "é"}'
    assert [r[0] for r in store.db.execute("SELECT source FROM items ORDER BY external_id")] == [
        '{"n": "ü", "rec_src": "h1"}', '{"n": 2, "rec_src": "h1"}']
    # a pointer once set is never overwritten by a later import
    store.import_items("ds", "jsonl", [item("a", {"rec_src": "h9", "n": 9})], contexts=[ctx({"ctx_src": "h9"})],
                       sources={"h9": "other"})
    assert store.item_sources("ds") == want
    assert store.source_texts(["h9"]) == {}  # nothing new was written, so neither was its text


def test_a_big_import_commits_in_batches(store, monkeypatch):
    """Rows are written BATCH_ROWS at a time, each batch its own transaction (contexts grouped by message count),
    so that annotators beside a big import never wait long for the write lock."""
    import storage.datasets

    monkeypatch.setattr(storage.datasets, "BATCH_ROWS", 2)
    began = []
    store.db.conn.set_trace_callback(lambda sql: began.append(sql) if sql.startswith("BEGIN IMMEDIATE") else None)
    contexts = [ContextIn(external_id=ext, messages=[Message(role="user", content=f"m{i}") for i in range(n)])
                for ext, n in (("ca", 1), ("cb", 1), ("cc", 2))]
    r = store.import_items("ds", "jsonl", [_item(f"i{k}") for k in range(5)], contexts=contexts,
                           sources={f"h{k}": "text" for k in range(3)})
    store.db.conn.set_trace_callback(None)
    # dataset row 1; contexts [ca cb] (2 messages) and [cc] (2): 2; sources 3 by 2: 2; items 5 by 2: 3; record 1
    assert len(began) == 1 + 2 + 2 + 3 + 1
    assert (r.n_added, r.n_contexts) == (5, 3)
    assert [i.external_id for i in store.items("ds")] == ["i0", "i1", "i2", "i3", "i4"]
    assert store.db.execute("SELECT COUNT(*) FROM context_messages").fetchone()[0] == 4
    assert store.db.execute("SELECT COUNT(*) FROM sources").fetchone()[0] == 3


def test_the_same_import_running_beside_adds_nothing_twice(tmp_path, monkeypatch):
    """Two processes importing the same file at once: the second one checked before the first wrote, then finds
    the rows there when it writes; its rows are skipped (OR IGNORE), not an error and not duplicated."""
    import storage.datasets
    from storage.store import Store

    path = tmp_path / "two.db"
    first, other = Store.open(path, mode="create"), Store.open(path, mode="rw")
    items = [_item("a", ctx="c1", end=2), _item("b")]
    real = storage.datasets.write_transaction
    calls = []

    def beside(db):  # the other import runs whole just before this one takes its first write lock
        if not calls:
            calls.append(1)
            other.import_items("ds", "jsonl", items, contexts=[CTX], sources={"h": "text"})
        return real(db)

    monkeypatch.setattr(storage.datasets, "write_transaction", beside)
    r = first.import_items("ds", "jsonl", items, contexts=[CTX], sources={"h": "text"})
    assert (r.n_added, r.n_contexts) == (2, 1)  # what it checked: nothing was there yet
    for table, n in (("items", 2), ("contexts", 1), ("context_messages", 3), ("sources", 1), ("imports", 2)):
        assert first.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == n, table
    first.close()
    other.close()


def test_message_sizes_are_compact_json():
    from storage.db import message_sizes_json

    assert message_sizes_json([("user", 5), ("assistant", 12)]) == '[["user",5],["assistant",12]]'
    assert message_sizes_json([("user", 0)]) == '[["user",0]]'
    assert message_sizes_json([("système", 3)]) == '[["système",3]]'  # text as text, not \u escapes
    assert message_sizes_json([]) == "[]"
