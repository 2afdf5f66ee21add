"""storage/studies.py: an annotator stored without a kind is found as human.

Written for survivors of the storage sample of mutation seed 5381 (README, "Mutation testing"), each as a
user or caller sees it."""
from __future__ import annotations

def test_an_annotator_stored_without_a_kind_is_found_as_human(store):
    store.db.execute("INSERT INTO annotators (id, name, kind, model, created_at) VALUES "
                     "('a-old', 'olga', NULL, NULL, '2025-01-01T00:00:00')")
    found = store.find_annotator("olga")
    assert (found.id, found.name, found.kind, found.model) == ("a-old", "olga", "human", None)
