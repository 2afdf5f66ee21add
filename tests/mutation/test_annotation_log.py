"""The append-only annotation log read back (storage/annotations.py): superseding chains with clocks out of order,
current rows by status, flags, notes, recent decisions and history, worked by hand (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

from storage.db import after_iso as _after
from storage.models import AnnotationIn, ItemIn


def _setup(store):
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"i{k}", kind="persona_record", payload={"text": "t"})
                                       for k in range(2)])
    ids = [r[0] for r in store.db.execute("SELECT id FROM items ORDER BY external_id")]
    st = store.create_study("s", "persona_filter", {}, 1, [(i, None, {}) for i in ids])
    return st, store.units(st.id), store.ensure_annotator("ann"), store.ensure_annotator("bo")


def test_superseding_chain_keeps_order_when_the_clock_is_behind(store):
    st, (u0, _), ann, _ = _setup(store)
    first = store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u0.id, item_id=u0.item_id, annotator_id=ann.id,
                                              status="answered", answer={"decision": "keep"}),
                                 submitted_at="2026-01-01T00:00:05.000000+00:00", supersede_latest=True)
    assert first.supersedes is None and first.submitted_at == "2026-01-01T00:00:05.000000+00:00"
    # a second window whose clock is behind: the new row still sorts after the one it supersedes
    second = store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u0.id, item_id=u0.item_id,
                                               annotator_id=ann.id, status="skipped"),
                                  submitted_at="2026-01-01T00:00:01.000000+00:00", supersede_latest=True)
    assert second.supersedes == first.id and second.submitted_at == "2026-01-01T00:00:05.000001+00:00"
    third = store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u0.id, item_id=u0.item_id, annotator_id=ann.id,
                                              status="answered", answer={"decision": "drop"}),
                                 submitted_at="2026-01-01T00:00:09.000000+00:00", supersede_latest=True)
    assert third.supersedes == second.id and third.submitted_at == "2026-01-01T00:00:09.000000+00:00"
    assert store.latest_decision(st.id, u0.id, ann.id).id == third.id
    assert _after("2026-01-01T00:00:59.999999+00:00") == "2026-01-01T00:01:00.000000+00:00"
    plain = store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u0.id, item_id=u0.item_id, annotator_id=ann.id,
                                              status="note", note="n", supersedes="given"), submitted_at="2026-01-02")
    assert (plain.supersedes, plain.submitted_at) == ("given", "2026-01-02")  # without supersede_latest: as given


def test_current_rows_flags_notes_and_history(store):
    st, (u0, u1), ann, bo = _setup(store)
    rows = [(u0, ann, "answered", "2026-01-01T00:00:01", {"decision": "keep"}),
            (u0, ann, "partial", "2026-01-01T00:00:02", {"decision": "drop", "reasons": ["x"]}),
            (u1, ann, "skipped", "2026-01-01T00:00:03", None),
            (u0, bo, "answered", "2026-01-01T00:00:04", {"decision": "drop"}),
            (u0, ann, "flag", "2026-01-01T00:00:05", None),
            (u1, ann, "flag", "2026-01-01T00:00:06", None),
            (u1, ann, "unflag", "2026-01-01T00:00:07", None),
            (u1, bo, "note", "2026-01-01T00:00:08", None)]
    for u, who, status, at, answer in rows:
        store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=who.id,
                                          status=status, answer=answer), submitted_at=at)
    answered = store.current_annotations(st.id)
    assert [(a.unit_id, a.annotator_id, a.status) for a in answered] == sorted(
        [(u0.id, ann.id, "answered"), (u0.id, bo.id, "answered")], key=lambda t: t[1])
    decisions = store.current_annotations(st.id, status=("answered", "skipped", "partial"))
    assert {(a.unit_id, a.annotator_id): a.status for a in decisions} == {
        (u0.id, ann.id): "partial", (u1.id, ann.id): "skipped", (u0.id, bo.id): "answered"}
    assert [a.status for a in store.current_annotations(st.id, ann.id, status=("skipped",))] == ["skipped"]
    assert [a.annotator_id for a in store.current_annotations(st.id, bo.id)] == [bo.id]
    assert store.has_answer(st.id, u0.id, ann.id) and not store.has_answer(st.id, u1.id, ann.id)
    assert store.flagged(st.id) == {(u0.id, ann.id)} and store.flagged(st.id, bo.id) == set()
    assert store.noted_units(st.id, bo.id) == {u1.id} and store.noted_units(st.id, ann.id) == set()
    assert [a.status for a in store.recent_decisions(st.id, ann.id)] == ["skipped", "answered"]
    assert [a.status for a in store.recent_decisions(st.id, ann.id, n=1)] == ["skipped"]
    assert [a.status for a in store.history(st.id, u0.id, ann.id)] == ["answered", "partial", "flag"]
    assert len(store.annotations(st.id)) == 8 and store.annotations(st.id)[-1].status == "note"
    n = store.append_annotations([AnnotationIn(study_id=st.id, unit_id=u1.id, item_id=u1.item_id,
                                               annotator_id=bo.id, status="answered", answer={"decision": "keep"})
                                  for _ in range(5)], batch_size=2)
    assert n == 5 and len(store.annotations(st.id)) == 13
