"""storage/bundles.py: a chain of bundle rows that are all new, and a context longer than one insert batch.

Written for survivors of the storage sample of mutation seed 5381 (README, "Mutation testing"), each as a
user or caller sees it."""
from __future__ import annotations

import sqlite3

from storage.bundles import _BATCH, _chain
from storage.models import ContextIn, ItemIn, Message
from storage.payloads import McqPayload
from storage.store import Store


def _row(rid: str, at: str, supersedes: str | None) -> dict:
    return {"id": rid, "unit_id": "u1", "status": "answered", "submitted_at": at, "supersedes": supersedes}


def test_new_rows_of_a_unit_with_no_rows_here_are_chained_in_time_order():
    late, early = _row("r-late", "2026-01-01T00:00:09+00:00", None), _row("r-early", "2026-01-01T00:00:01+00:00", None)
    relinked = _chain({}, [late, early])
    assert relinked == {"r-late": None}  # its bundle link (None) replaced
    assert (early["supersedes"], late["supersedes"]) == (None, "r-early")


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
