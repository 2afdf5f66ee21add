"""Importers: read benchmark files, validate every record with pydantic, return items for Store.import_items.

Each importer module defines ``FORMAT`` (the CLI name) and ``read(paths) -> Parsed``; it never writes SQL.
A bad record raises storage.errors.InputError naming the file, the record (line/row number) and the field,
before anything is written. Importers of benchmark formats also keep each item's original record (Parsed.sources,
ItemIn.source) and write released items back in their layout with ``release_files`` (storage.importers.original).
"""
from __future__ import annotations

import importlib

IMPORTERS = {
    "personamem": "storage.importers.personamem",
    "cimemories": "storage.importers.cimemories",
    "jsonl": "storage.importers.generic",
    "csv": "storage.importers.generic",
    "realpref": "storage.importers.realpref",
    "horizonbench": "storage.importers.horizonbench",
    "benchpres": "storage.importers.benchpres",
    "judgments": "storage.importers.judgments",
    "annotations": "storage.importers.annotations",
}


def get_importer(fmt: str):
    """The importer module for a format name. Raises KeyError for an unknown one.

    Also lifts the csv module's 128 KiB cell limit: benchmark cells (conversations, contexts) can be larger.
    """
    import csv
    import sys

    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    return importlib.import_module(IMPORTERS[fmt])
