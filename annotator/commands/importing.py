"""`prefval import FORMAT PATH... --dataset NAME`: validate every record, then add all in one transaction."""
from __future__ import annotations

import argparse

from storage.errors import PrefvalError


def register(sub: argparse._SubParsersAction) -> None:
    from annotator.cli import add_db_option
    from storage.importers import IMPORTERS

    p = sub.add_parser(
        "import", help="import benchmark items into a dataset",
        description="Read benchmark files, check every record, and add them as one dataset. A bad record "
                    "stops the import with one line naming the file, record and field; nothing is written.",
    )
    p.add_argument("format", choices=sorted(IMPORTERS), help="input format")
    p.add_argument("paths", nargs="+", metavar="PATH", help="input file(s)")
    p.add_argument("--dataset", required=True, help="name of the dataset to add the items to")
    p.add_argument("--kind", help="(jsonl/csv) item kind the records map to, e.g. mcq, persona_record")
    p.add_argument("--mapping", help="(jsonl/csv) YAML/JSON file mapping item fields to record fields")
    p.add_argument("--map", action="append", default=[], metavar="FIELD=COLUMN",
                   help="(jsonl/csv) map one item field to a record field; repeatable")
    p.add_argument("--id-field", help="(jsonl/csv) record field holding the external id (default: id, else row)")
    add_db_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from annotator.cli import db_path
    from storage.importers import get_importer
    from storage.store import Store

    importer = get_importer(args.format)
    options = {"format": args.format, "kind": args.kind, "mapping": args.mapping, "map": args.map,
               "id_field": args.id_field}
    parsed = importer.read(args.paths, options)
    if not parsed.items and not parsed.contexts:
        raise PrefvalError(f"{parsed.source_path}: no records found")
    with Store.open(db_path(args)) as store:
        result = store.import_items(args.dataset, args.format, parsed.items, source_path=parsed.source_path,
                                    file_hash=parsed.file_hash, contexts=parsed.contexts)
    extra = f", {result.n_contexts} contexts" if result.n_contexts else ""
    print(f"dataset {result.dataset}: {result.n_added} items added, {result.n_unchanged} already present{extra}")
    return 0
