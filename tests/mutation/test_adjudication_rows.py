"""Adjudication rows (storage/adjudications.py): append-only, superseding, the one in force, worked by hand
(CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import sqlite3

import pytest

from storage.errors import PrefvalError
from storage.models import ItemIn


def test_adjudications_by_hand(store):
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"i{k}", kind="persona_record", payload={"text": "t"})
                                       for k in range(2)])
    ids = [r[0] for r in store.db.execute("SELECT id FROM items ORDER BY external_id")]
    st = store.create_study("s", "persona_filter", {}, 1, [(i, None, {}) for i in ids])
    u0, u1 = store.units(st.id)
    lead = store.ensure_annotator("lead")
    first = store.add_adjudication(st.id, u0.id, lead.id, "final", {"decision": "keep"})
    assert (first.kind, first.answer, first.reason, first.supersedes) == ("final", {"decision": "keep"}, None, None)
    second = store.add_adjudication(st.id, u0.id, lead.id, "exclude", reason="off-topic")
    assert (second.kind, second.answer, second.reason, second.supersedes) == ("exclude", None, "off-topic", first.id)
    other = store.add_adjudication(st.id, u1.id, lead.id, "final", {"decision": "drop"})
    assert other.supersedes is None
    current = store.current_adjudications(st.id)
    assert set(current) == {u0.id, u1.id} and current[u0.id].id == second.id and current[u1.id].answer == {
        "decision": "drop"}
    assert [a.id for a in store.adjudication_log(st.id)] == [first.id, second.id, other.id]
    with pytest.raises(PrefvalError, match=r"^unknown adjudication kind 'maybe'$"):
        store.add_adjudication(st.id, u0.id, lead.id, "maybe")
    for sql in ("UPDATE adjudications SET kind = 'final'", "DELETE FROM adjudications"):
        with pytest.raises(sqlite3.IntegrityError, match="adjudications are append-only"):
            store.db.conn.execute(sql)
    assert store.current_adjudications("other") == {} and store.adjudication_log("other") == []
