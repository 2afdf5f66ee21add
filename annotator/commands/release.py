"""`prefval release STUDY... --out DIR`: the curated items and their datasheet."""
from __future__ import annotations

import argparse
from annotator.safe_text import echo


def register(sub: argparse._SubParsersAction) -> None:
    from annotator.cli import add_db_option

    p = sub.add_parser("release", help="write the items that passed the studies, with a datasheet",
                       description="Write the items that passed every given study (kept by persona_filter, "
                                   "unanimous or adjudicated gold labels, easy test passed, blind test not "
                                   "flagged; answered, for tasks without a filter) as one JSONL and one Parquet "
                                   "file per dataset (and its benchmark's own layout), plus DATASHEET.md, "
                                   "datasheet.json, a Hugging Face dataset card (README.md) and croissant.json. "
                                   "The same database gives byte-identical files.")
    p.add_argument("studies", nargs="+", metavar="STUDY", help="the studies whose curated items to release")
    p.add_argument("--out", required=True, help="output folder (new or empty; --force replaces an earlier release)")
    p.add_argument("--force", action="store_true", help="replace an earlier release in --out")
    p.add_argument("--names", action="store_true", help="list annotator names (default: counts only)")
    p.add_argument("--license", default="unknown",
                   help="the data's license for the dataset card and croissant.json (a Hub license id such as "
                        "cc-by-4.0; default: unknown)")
    p.add_argument("--language", default="en", help="the items' language, an ISO 639 code (default: en)")
    p.add_argument("--url", help="the dataset's web page, for croissant.json (e.g. its Hub page)")
    add_db_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from annotator.cli import db_path, refuse_stdout
    from annotator.release import write_release
    from storage.store import Store

    refuse_stdout(args.out, "release", "a folder of files")
    with Store.open(db_path(args, must_exist=True), mode="ro") as store:
        sheet = write_release(store, args.studies, args.out, force=args.force, with_names=args.names,
                              license_=args.license, language=args.language, url=args.url)
    rel = sheet["release"]
    echo(f"wrote {args.out}: {rel['items']} items released "
          f"({', '.join(f'{k}: {v}' for k, v in rel['by_dataset'].items()) or 'none'}), "
          f"{len(sheet['exclusions'])} exclusions; DATASHEET.md, datasheet.json, README.md (dataset card), "
          "croissant.json; a .jsonl and a .parquet per dataset")
    for dataset, orig in sorted((rel.get("original_format") or {}).items()):
        files = ", ".join(f"{f['file']} ({f['records']})" for f in orig["files"]) or "no file"
        left = sum(len(v) for v in orig["left_out"].values())
        echo(f"  {dataset}: {orig['format']} layout: {files}"
             + (f"; {left} left out (see DATASHEET.md)" if left else ""))
    return 0
