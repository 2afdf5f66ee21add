"""storage/studies.py: an annotator stored without a kind is found as human (by find_annotator and by
ensure_annotator).

Written for survivors of the storage sample of mutation seed 5381 (README, "Mutation testing"), each as a
user or caller sees it."""
from __future__ import annotations

def test_an_annotator_stored_without_a_kind_is_found_as_human(store):
    store.db.execute("INSERT INTO annotators (id, name, kind, model, created_at) VALUES "
                     "('a-old', 'olga', NULL, NULL, '2025-01-01T00:00:00')")
    found = store.find_annotator("olga")
    assert (found.id, found.name, found.kind, found.model) == ("a-old", "olga", "human", None)


def test_an_annotator_stored_without_a_kind_is_human(store):
    store.db.execute("INSERT INTO annotators (id, name, kind, model, created_at) VALUES "
                     "('a-old', 'olga', NULL, NULL, '2025-01-01T00:00:00')")
    found = store.find_annotator("olga")
    assert (found.id, found.name, found.kind, found.model) == ("a-old", "olga", "human", None)
    assert store.find_annotator("nobody") is None


def test_a_kindless_annotator_found_again_by_ensure_is_human(store):
    store.db.execute("INSERT INTO annotators (id, name, kind, model, created_at) VALUES "
                     "('a-old', 'olga', NULL, NULL, '2025-01-01T00:00:00')")
    again = store.ensure_annotator("olga")
    assert (again.id, again.kind) == ("a-old", "human")
