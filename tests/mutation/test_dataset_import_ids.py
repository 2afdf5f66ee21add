"""storage/datasets.py: one file imported into two datasets under one clock reading records two imports.

Written for survivors of the storage sample of mutation seed 5381 (README, "Mutation testing"), each as a
user or caller sees it."""
from __future__ import annotations

from tests.conftest import make_mcq_items


def test_one_file_imported_into_two_datasets_in_the_same_instant_records_two_imports(store, monkeypatch):
    import storage.datasets as datasets

    monkeypatch.setattr(datasets, "now_iso", lambda: "2026-01-01T00:00:00.000000+00:00")
    items, _ = make_mcq_items(1, with_context=False)
    store.import_items("one", "jsonl", items, source_path="same.jsonl", file_hash="h1")
    store.import_items("two", "jsonl", items, source_path="same.jsonl", file_hash="h1")
    rows = store.db.execute("SELECT d.name, i.path, i.n_added FROM imports i JOIN datasets d ON d.id = i.dataset_id "
                            "ORDER BY d.name").fetchall()
    assert rows == [("one", "same.jsonl", 1), ("two", "same.jsonl", 1)]
