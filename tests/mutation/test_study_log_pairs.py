"""Store.study_log on a pairwise study where one item is item B of one unit and item A of the next: every row keeps
its own item id (the log shares one string object per id, which must be the id itself; CONTRIBUTING.md, "Mutation
testing")."""
from __future__ import annotations

from storage.models import AnnotationIn, ItemIn


def test_an_item_that_is_b_of_one_pair_and_a_of_the_next(store):
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"r{k}", kind="response", payload={"text": f"reply {k}"})
                                       for k in range(3)])
    i0, i1, i2 = (r[0] for r in store.db.execute("SELECT id FROM items ORDER BY external_id"))
    study = store.create_study("p", "pairwise", {"annotators_per_item": 1}, 1, [(i0, i1, {}), (i1, i2, {})])
    u0, u1 = store.units(study.id)
    assert (u0.item_id, u0.item_b_id, u1.item_id, u1.item_b_id) == (i0, i1, i1, i2)
    ann = store.ensure_annotator("ann")
    for unit, winner, at in ((u0, "A", "2026-01-01T00:00:01"), (u1, "B", "2026-01-01T00:00:02")):
        store.add_annotation(AnnotationIn(study_id=study.id, unit_id=unit.id, item_id=unit.item_id,
                                          annotator_id=ann.id, status="answered", answer={"winner": winner},
                                          seconds=3.0), submitted_at=at)
    store.add_annotation(AnnotationIn(study_id=study.id, unit_id=u1.id, item_id=u1.item_id, annotator_id=ann.id,
                                      status="note", note="close call"), submitted_at="2026-01-01T00:00:03")
    log = store.study_log(study.id, store.units(study.id))
    assert [(r.unit_id, r.item_id, r.answer) for r in log.answers] == [(u0.id, i0, {"winner": "A"}),
                                                                      (u1.id, i1, {"winner": "B"})]
    assert [(r.unit_id, r.item_id, r.note, state) for r, state in log.notes] == [(u1.id, i1, "close call", "answered")]
