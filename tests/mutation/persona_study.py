"""A small persona_filter study and its annotation rows, for the hand-worked storage tests (tests/mutation/ and
tests/test_study_log.py)."""
from __future__ import annotations

from storage.models import AnnotationIn, ItemIn


def _study(store, n_items=2, settings=None):
    """A persona_filter study "s" of n_items items i0, i1, ... of dataset "ds" (settings: the study's, {} by
    default). Returns (the study, its units in study order)."""
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"i{k}", kind="persona_record", payload={"text": str(k)})
                                       for k in range(n_items)])
    ids = [r[0] for r in store.db.execute("SELECT id FROM items ORDER BY external_id")]
    st = store.create_study("s", "persona_filter", settings or {}, 1, [(i, None, {}) for i in ids])
    return st, store.units(st.id)


def _add(store, st, unit, who, status, at, answer=None, note=None, seconds=None):
    """Append one annotation row of annotator `who` on `unit` of study `st`, submitted at `at` (ISO text)."""
    return store.add_annotation(AnnotationIn(study_id=st.id, unit_id=unit.id, item_id=unit.item_id,
                                             annotator_id=who.id, status=status, answer=answer, note=note,
                                             seconds=seconds), submitted_at=at)
