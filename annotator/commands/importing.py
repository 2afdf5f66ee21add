"""`prefval import FORMAT PATH... --dataset NAME`: validate every record, then add all in one transaction."""
from __future__ import annotations

import argparse
import csv
import sys

from annotator.safe_text import visible
from storage.errors import InputError, PrefvalError


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
    p.add_argument("--dataset", help="name of the dataset to add the items to (required, except for judgments and "
                                        "annotations, which go into a --study)")
    p.add_argument("--kind", help="(jsonl/csv) item kind the records map to, e.g. mcq, persona_record")
    p.add_argument("--mapping", help="(jsonl/csv) YAML/JSON file mapping item fields to record fields")
    p.add_argument("--map", action="append", default=[], metavar="FIELD=COLUMN",
                   help="(jsonl/csv/annotations) map one field to a record field of another name; repeatable")
    p.add_argument("--id-field", help="(jsonl/csv) record field holding the external id (default: id, else row)")
    p.add_argument("--study", help="(judgments, annotations) the study whose units were judged or annotated")
    p.add_argument("--judge", help="(judgments) name of the LLM judge (an annotator of kind llm)")
    p.add_argument("--model", help="(judgments) the judge's model name, stored with a new judge")
    add_db_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from annotator.cli import db_path
    from storage.importers import get_importer
    from storage.store import Store

    if args.map and args.format not in ("jsonl", "csv", "annotations"):
        raise PrefvalError(f"--map is read by import jsonl, csv and annotations only, not by import {args.format}")
    if args.format == "judgments":
        return run_judgments(args)
    if args.format == "annotations":
        return run_annotations(args)
    if not args.dataset:
        raise PrefvalError("--dataset is required")
    importer = get_importer(args.format)
    options = {"format": args.format, "kind": args.kind, "mapping": args.mapping, "map": args.map,
               "id_field": args.id_field}
    from storage.importers.sniff import wrong_importer

    from storage.textfile import NotUtf8Error

    try:
        parsed = importer.read(args.paths, options)
    except UnicodeDecodeError as exc:  # a reader that decodes by itself (a Parquet string column ...)
        from storage.importers.base import locate_decode_error

        raise locate_decode_error(args.paths, exc) from None
    except NotUtf8Error:  # already names the file, line and byte: never turned into another importer's hint
        raise
    except csv.Error as exc:
        raise (PrefvalError(wrong_importer(args.format, args.paths) or
                            f"{', '.join(args.paths)}: unreadable CSV ({exc})")) from None
    except InputError:  # another importer's file: say so instead of the record-level error
        hint = wrong_importer(args.format, args.paths)
        if hint:
            raise PrefvalError(hint) from None
        raise
    if not parsed.items and not parsed.contexts:
        raise PrefvalError(f"{parsed.source_path}: no records found")
    with Store.open(db_path(args), mode="create") as store:
        result = store.import_items(args.dataset, args.format, parsed.items, source_path=parsed.source_path,
                                    file_hash=parsed.file_hash, contexts=parsed.contexts,
                                    sources=parsed.sources)
    extra = f", {result.n_contexts} contexts" if result.n_contexts else ""
    print(visible(f"dataset {result.dataset}: {result.n_added} item{'' if result.n_added == 1 else 's'} added, "
                  f"{result.n_unchanged} already "
                  f"present{extra}", layout=False))
    if result.n_context_linked:
        print(visible(f"{result.n_context_linked} item(s) imported before without their conversation have it now",
                      layout=False))
    warn_missing_contexts(result, len(parsed.items))
    warn_duplicate_options(parsed)
    warn_kept_in_metadata(parsed)
    return 0


def kept_in_metadata_line(kept) -> str:
    """The warning of one record field the generic importer kept in metadata (storage.importers.base.KeptInMetadata):
    "warning: FILE: field 'answer' is not a field of mcq items; kept in the metadata of 3 record(s)", and when the
    name reads as an answer, what it was probably meant for and how to import it as that ("; it reads as the answer
    key, which the items did not get from it: to import it as their correct_index, add --map
    correct_index=answer")."""
    if kept.replaced_by is not None:  # an item field, read from another column as the mapping says
        return (f"warning: {kept.path}: field {kept.field!r} was not read ({kept.kind} items take their "
                f"{kept.field} from {kept.replaced_by!r}, as mapped); kept in the metadata of {kept.records} record(s)")
    line = (f"warning: {kept.path}: field {kept.field!r} is not a field of {kept.kind} items; kept in the metadata "
            f"of {kept.records} record(s)")
    if kept.answer_field and kept.unkeyed >= kept.records:
        line += (f"; it reads as the answer key, which the items did not get from it: to import it as their "
                 f"{kept.answer_field}, add --map {kept.answer_field}={kept.field}")
    elif kept.answer_field:  # some have a key of their own: a --map would read the field for every record
        line += (f"; it reads as the answer key, and {kept.unkeyed} of those record(s) have no {kept.answer_field}"
                 f" of their own (a --map {kept.answer_field}={kept.field} would read it for every record)")
    return line


def warn_kept_in_metadata(parsed) -> None:
    """One line on stderr per record field (per file) that the items' kind has no field for, kept in their metadata
    as the generic importer documents (kept_in_metadata_line). The items are imported as they are."""
    for kept in parsed.kept_in_metadata:
        print(visible(kept_in_metadata_line(kept), layout=False), file=sys.stderr)


def warn_missing_contexts(result, n_items: int) -> None:
    """One line on stderr when imported items lack their conversation (storage.models.ImportResult.without_context:
    a context reference, e.g. PersonaMem's shared_context_id, that names no context of the dataset): how many, the
    first, what a study does with them and how to add the contexts. The items are imported as they are."""
    lacking = result.without_context
    if not lacking:
        return
    print(visible(f"warning: {len(lacking)} of {n_items} items lack their conversation: their context reference "
                  f"names no context of dataset '{result.dataset}' (first: '{lacking[0]}'); an mcq or item_quality "
                  "study refuses them unless --option missing_context=keep or drop; to add the conversations, "
                  "import the questions again with their contexts file", layout=False), file=sys.stderr)


def warn_duplicate_options(parsed) -> None:
    """One line on stderr when MCQ items have two options of the same text (the item is imported as it is)."""
    from storage.importers.base import duplicate_options

    dups = duplicate_options(parsed.items)
    if dups:
        ext, i, j = dups[0]
        print(visible(f"warning: {parsed.source_path}: {len(dups)} MCQ item(s) have two options of the same text "
                      f"(first: record {ext}, options {chr(65 + i)} and {chr(65 + j)}); an answer picking the copy "
                      "of the key is scored wrong", layout=False), file=sys.stderr)


def run_judgments(args: argparse.Namespace) -> int:
    """`prefval import judgments FILE --study S --judge NAME [--model M]` (storage.importers.judgments)."""
    from annotator.cli import db_path
    from storage.importers.judgments import import_judgments
    from storage.store import Store

    if not args.study or not args.judge:
        raise PrefvalError("import judgments needs --study STUDY and --judge NAME")
    if len(args.paths) != 1:
        raise PrefvalError("import judgments takes one file")
    with Store.open(db_path(args, must_exist=True), mode="rw") as store:
        r = import_judgments(store, args.paths[0], args.study, args.judge, model=args.model)
    print(visible(f"study {r.study}: {r.n_added} judgments by {r.judge} added, {r.n_present} already present",
                  layout=False))
    return 0


def run_annotations(args: argparse.Namespace) -> int:
    """`prefval import annotations FILE --study S [--map FIELD=COLUMN]`: people's answers collected elsewhere
    (storage.importers.annotations), each checked by the study's task as an answer from the screen is."""
    from annotator.cli import db_path
    from annotator.tasks import get_task
    from storage.importers.annotations import import_annotations
    from storage.store import Store

    if not args.study:
        raise PrefvalError("import annotations needs --study STUDY")
    if len(args.paths) != 1:
        raise PrefvalError("import annotations takes one file")
    with Store.open(db_path(args, must_exist=True), mode="rw") as store:
        task = get_task(store.get_study(args.study).task_type)

        def check(answer, unit, item, item_b, settings):
            return task.answer_problem("answered", answer, unit, item, item_b, settings)

        r = import_annotations(store, args.paths[0], args.study, args.map, answer_check=check)
    print(visible(f"study {r.study}: {r.n_added} answers by {len(r.annotators)} people added "
                  f"({r.n_new_annotators} new to the database), {r.n_present} already present", layout=False))
    return 0
