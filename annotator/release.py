"""`prefval release`: the items that passed the studies' filters, with a datasheet that justifies them.

An item is released when every given study that contains it lets it pass (TaskType.outcomes, annotator.tasks.outcome: kept by
persona_filter, a unanimous or adjudicated gold label, easy test passed, blind test not flagged; an answered item
for task types without a filter; an item a study kept once as identical on screen to one of its items takes that
item's outcome: screen_copies). The output directory holds one JSONL file per dataset of released items, in
external-id order, and DATASHEET.md + datasheet.json: the funnel, every study's figures with their intervals,
annotator counts, dates, guidelines and rubric, the excluded items and the annotators excluded from each study
(`study exclude-annotator`), each with its reason, and the prefval version.
Beside each JSONL file, the dataset's released items in the layout of the benchmark they were imported from
(original_release: PersonaMem questions CSV + shared contexts, CIMemories profiles, HorizonBench and BenchPreS
rows as JSONL or Parquet, generic records with their own field names, RealPref records), which prefval's importer
of that format reads again. Where benchmarks are published (issue 22): a Parquet file per dataset with typed
columns (annotator/hub_rows.py), a Hugging Face dataset card README.md (reports/render/hub_card.py) and
croissant.json, Croissant 1.0 with its RAI 1.0 extension (annotator/croissant.py); all three state the
datasheet's figures, never recomputed. Nothing in the output depends on the time it was written, so the same
database gives byte-identical files.
"""
from __future__ import annotations

import inspect
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from annotator.tasks import get_task
from storage.errors import PrefvalError
from storage.models import is_person_kind
from storage.store import Store
from storage.textfile import read_text


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("prefval")
    except Exception:  # not installed (running from a checkout)
        return "unknown"


def _figure_dict(f) -> dict[str, Any]:
    return {"key": f.key, "label": f.label, "value": f.value, "ci_low": f.ci_low, "ci_high": f.ci_high,
            "n": f.n, "note": f.note}


def judge_verdicts(data) -> list[dict[str, Any]]:
    """The judge-validation verdicts of a study, as `prefval report` gives them with its default settings
    (reports.judge_vs_human.judge_validation: may this judge replace the people, reports.stats.replacement, from the
    alternative annotator test of Calderon, Reichart and Dror, ACL 2025): one {"judge", "dimension", "verdict" (yes,
    no or cannot tell yet), "why" (the reason in a sentence), "winning_rate", "advantage_probability",
    "instances"} per judge and dimension, judges by name; [] when the study has no LLM judge labelling the people's
    units."""
    from reports.judge_vs_human import judge_validation

    section = judge_validation(data)
    if section is None:
        return []
    out = []
    for judge in sorted(section.verdicts):
        for dim, v in section.verdicts[judge].items():
            out.append({"judge": judge, "dimension": dim, "verdict": v.answer, "why": v.why,
                        "winning_rate": v.alt.winning_rate, "advantage_probability": v.alt.advantage_probability,
                        "instances": v.alt.n_instances})
    return out


#: the release rule as the datasheet states it
RELEASE_RULE = ("An item is released when every given study that holds it lets it pass. A study decides an item "
                "by one rule, the same for its status, report, funnel and export (annotator.tasks.outcome): an "
                "adjudicator's final answer or exclusion stands on its own; otherwise the item needs as many answers "
                "as its quota of annotators (annotators per item), counting only people whose answers count (a "
                "model's answer is never a vote; an annotator excluded with `study exclude-annotator` does not count, "
                "and the quota is not lowered for them), and then the people's votes decide by the task's rule; a "
                "tie is undecided until adjudicated. An item a study has not decided is held back. An item a study "
                "kept once as identical on screen to one of its items (`study create`) takes that item's outcome, "
                "unless its key differs. A later round drawn from an earlier study of the release holds back the "
                "records the earlier study kept after the later round was made (it never filtered them). The "
                "funnel counts, for each study in turn, only that study's items still in the release.")
#: the funnel's rows for the items a study holds back, by outcome state (annotator.tasks.outcome)
HELD_BACK = (("failed", "failed"), ("needs_adjudication", "held back, a tie waiting for adjudication"),
             ("too_few", "held back, too few answers"), ("open", "held back, no answer yet"),
             ("undecided", "held back, undecided (other reason)"))


def release_funnel(study_names: list[str], order: list[str], verdicts: dict[str, list[tuple[str, Any]]],
                   members: dict[str, set[str]]) -> list[dict[str, Any]]:
    """The release funnel: the items of all the studies, then per study in the order given the items of THAT study
    still in the release (items of other studies are not counted as passing it: they are in the row "not in it"),
    how many it failed or held back, by outcome state (HELD_BACK), and passed; last the items released. verdicts:
    item id -> [(study name, annotator.tasks.outcome.Outcome)]. Each row {"stage": text, "items": count}."""
    funnel = [{"stage": "items in the studies", "items": len(order)}]
    remaining = set(order)
    for name in study_names:
        mine = remaining & members.get(name, set())
        tally = dict.fromkeys((state for state, _ in HELD_BACK), 0)
        for iid in mine:
            o = dict(verdicts[iid])[name]
            if not o.passed:
                tally[o.state] += 1
                remaining.discard(iid)
        funnel.append({"stage": f"{name}: its items still in", "items": len(mine)})
        funnel += [{"stage": f"{name}: {words}", "items": tally[state]} for state, words in HELD_BACK]
        funnel += [{"stage": f"{name}: passed", "items": len(mine) - sum(tally.values())},
                   {"stage": f"{name}: items not in it (not filtered by it)", "items": len(remaining - mine)}]
    funnel.append({"stage": "released", "items": len(remaining)})
    return funnel


def screen_copies(store: Store, data) -> dict[str, list[Any]]:
    """unit id -> the items the study kept once as identical on screen to the unit's item with the same key (unit
    extra "same_screen", annotator.tasks.screens), in dataset order: the study judged that screen, so each copy
    takes the unit's outcome (copied_outcome). Copies with another key (extra "same_screen_other_key") are not
    released by the study: nobody judged them against their own key."""
    ids = [i for u in data.units for i in u.extra.get("same_screen", [])]
    if not ids:
        return {}
    found = store.get_items(ids)
    return {u.id: [found[i] for i in u.extra.get("same_screen", []) if i in found] for u in data.units
            if u.extra.get("same_screen")}


def copied_outcome(outcome, kept):
    """The outcome (annotator.tasks.outcome.Outcome) of a copy identical on screen to the study item `kept`: the
    same state and fields, its reason naming the item judged, and the field identical_on_screen_to (kept's
    external id)."""
    from dataclasses import replace

    return replace(outcome, reason=f"{outcome.reason} (identical on screen to {kept.external_id})",
                   fields={**outcome.fields, "identical_on_screen_to": kept.external_id})


def build_release(store: Store, study_names: list[str], with_names: bool = False
                  ) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    """The released records by dataset name (each list sorted by external id) and the datasheet as a dict.

    Raises PrefvalError for an unknown study or when no study is given.
    """
    from reports.study_data import load_study_data

    if not study_names:
        raise PrefvalError("name at least one study to release")
    from annotator.tasks.outcome import tally

    verdicts: dict[str, list[tuple[str, Any]]] = {}  # item id -> [(study, Outcome)]
    items: dict[str, Any] = {}
    order: list[str] = []
    members: dict[str, set[str]] = {}  # study name -> its item ids
    sheet_studies = []
    for name in study_names:
        data = load_study_data(store, name)
        task = get_task(data.study.task_type)
        task.check_study(data.study)
        outcomes = task.outcomes(data)
        counts = {"units": len(data.units), **tally(outcomes.values())}
        copies = screen_copies(store, data)
        for u in data.units:
            # the unit's item, then its copies identical on screen (same key), which take its outcome
            kept = data.items[u.item_id]
            for item in [kept, *copies.get(u.id, [])]:
                items[item.id] = item
                if item.id not in verdicts:
                    order.append(item.id)
                verdicts.setdefault(item.id, []).append(
                    (name, outcomes[u.id] if item is kept else copied_outcome(outcomes[u.id], kept)))
                members.setdefault(name, set()).add(item.id)
        humans = data.rater_names()
        judges = data.model_names()
        # each model's name; a judge imported without --model is named itself, said plainly
        models = sorted({(data.annotators[a.annotator_id].model
                          or f"{data.annotators[a.annotator_id].name} (model not given at import)")
                         for a in data.model_answers if not is_person_kind(data.annotators[a.annotator_id].kind)})
        stamps = sorted(a.submitted_at for a in data.answers)
        figures = task.figures(data)
        entry: dict[str, Any] = {
            "name": name, "task": data.study.task_type, "title": task.title,
            "created_at": data.study.created_at, "seed": data.study.seed,
            "annotators": {"human": len(humans), "llm_judges": len(judges)},
            "annotators_per_item": int(data.study.settings.get("annotators_per_item", 1)),
            "first_answer": stamps[0] if stamps else None, "last_answer": stamps[-1] if stamps else None,
            "guidelines": data.study.settings.get("guidelines"),
            "rubric": data.study.settings.get("rubric"),
            "funnel": counts,
            "figures": [_figure_dict(f) for f in figures.figures],
            "models": models,
            "judge_validation": judge_verdicts(data),
        }
        by_reason: dict[str, list[str]] = {}
        for who, why in data.excluded.items():
            by_reason.setdefault(why, []).append(who)
        entry["excluded_annotators"] = {
            "count": len(data.excluded),
            "by_reason": [{"reason": why, "count": len(who), **({"names": sorted(who)} if with_names else {})}
                          for why, who in sorted(by_reason.items())]}
        if with_names:
            entry["annotator_names"] = humans
            entry["llm_judge_names"] = judges
        sheet_studies.append(entry)
    # a later round drawn from an earlier study of this release holds back the records the earlier study kept
    # after the later round was made: the later round never filtered them (TaskType.unfiltered_by_later_round)
    from annotator.tasks.outcome import Outcome, UNDECIDED

    by_name = {e["name"]: e for e in sheet_studies}
    for later in study_names:
        study = store.get_study(later)
        earlier = study.settings.get("from_study")
        if earlier not in by_name or earlier == later:
            continue
        passed_there = [items[iid] for iid in order if iid in members.get(earlier, set())
                        and dict(verdicts[iid])[earlier].passed]
        for item in get_task(study.task_type).unfiltered_by_later_round(study, earlier, passed_there):
            if item.id in members.get(later, set()):
                continue
            verdicts[item.id].append((later, Outcome(
                UNDECIDED, f"kept by {earlier} after {later} was drawn from it: never filtered by {later} (put it "
                           f"in a later round, or release {earlier} alone)")))
            members.setdefault(later, set()).add(item.id)
    released: dict[str, list[dict[str, Any]]] = {}
    exclusions = []
    funnel = release_funnel(study_names, order, verdicts, members)
    for iid in order:
        item = items[iid]
        failed = [(s, o) for s, o in verdicts[iid] if not o.passed]
        if failed:
            for s, o in failed:
                exclusions.append({"item": item.external_id, "dataset": item.dataset_name, "study": s,
                                   "reason": o.reason, "outcome": o.state})
            continue
        fields: dict[str, Any] = {}
        for _, v in verdicts[iid]:
            fields.update(v.fields)
        released.setdefault(item.dataset_name, []).append(
            {"external_id": item.external_id, "kind": item.kind, "payload": item.payload, "release": fields})
    for rows in released.values():
        rows.sort(key=lambda r: r["external_id"])
    exclusions.sort(key=lambda e: (e["dataset"], e["item"], e["study"]))
    reasons: dict[str, int] = {}
    for e in exclusions:
        key = f"{e['study']}: {e['reason']}"
        reasons[key] = reasons.get(key, 0) + 1
    sheet = {
        "prefval_version": _version(),
        "studies": sheet_studies,
        "release": {"items": sum(len(r) for r in released.values()),
                    "by_dataset": {k: len(v) for k, v in sorted(released.items())},
                    "rule": RELEASE_RULE, "funnel": funnel,
                    "exclusion_reasons": dict(sorted(reasons.items()))},
        "exclusions": exclusions,
    }
    return released, sheet


#: dataset formats whose items can be written back in RealPref's published layout
REALPREF_FORMATS = ("realpref", "generator")
#: why released items are left out of the original-layout files, as named in the datasheet
NO_ORIGINAL_RECORD = ("no original record kept (imported by an older prefval, or not from a file: importing the "
                      "same files again adds them)")
INCOMPLETE_QUERY = "its RealPref query is not released whole (MCQ and both T/F variants)"


def realpref_release(store: Store, dataset: str, rows: list[dict[str, Any]]) -> tuple[list[dict], list[str]] | None:
    """The released items of a RealPref-shaped dataset (imported with `import realpref`, or generated) as
    RealPref records (storage.importers.realpref.records_from_items), and the external ids left out because a
    query is released only whole (its MCQ and both T/F variants). None when the dataset is of another format or its
    items have no RealPref form."""
    from storage.errors import InputError
    from storage.importers.realpref import records_from_items
    from storage.models import Item

    fmt = next((d.format for d in store.datasets() if d.name == dataset), None)
    if fmt not in REALPREF_FORMATS:
        return None
    released = {r["external_id"] for r in rows}
    parts: dict[str, set[str]] = {}
    for r in rows:
        meta = r["payload"].get("metadata") or {}
        if r["kind"] == "mcq" and meta.get("query_id"):
            parts.setdefault(meta["query_id"], set()).add(meta.get("variant"))
    whole = {q for q, v in parts.items() if {"mcq", "t", "f"} <= v and f"{q}:mcq" in released}
    dropped = sorted(r["external_id"] for r in rows if r["kind"] == "mcq"
                     and (r["payload"].get("metadata") or {}).get("query_id") not in whole)
    items = [Item(id="", dataset_id="", external_id=r["external_id"], kind=r["kind"], payload=r["payload"],
                  content_hash="") for r in rows if r["external_id"] not in dropped]
    try:
        return records_from_items(items), dropped
    except InputError:
        return None


def original_release(store: Store, dataset: str, rows: list[dict[str, Any]]
                     ) -> tuple[str, list, dict[str, list[str]]] | None:
    """The released items of a dataset in its benchmark's own layout: (format, files, left out), where files are
    storage.importers.original.ReleaseFile (suffix after the dataset's file name, bytes, record count) that the
    format's importer reads again, and left out maps a reason to the external ids (or context ids) the files do
    not hold. RealPref-shaped datasets use realpref_release; imported formats their importer's release_files
    over the original records kept at import. None for a dataset made by prefval in no benchmark's layout
    (evaluator outputs, bundles)."""
    from storage.importers import IMPORTERS, get_importer
    from storage.importers.original import ReleaseFile, jsonl_bytes, source_ids

    fmt = next((d.format for d in store.datasets() if d.name == dataset), None)
    if fmt in REALPREF_FORMATS:
        got = realpref_release(store, dataset, rows)
        if got is None:
            return None
        records, dropped = got
        return "realpref", [ReleaseFile(".realpref.jsonl", jsonl_bytes(records), len(records), "realpref")], \
            ({INCOMPLETE_QUERY: dropped} if dropped else {})
    module = get_importer(fmt) if fmt in IMPORTERS else None
    if module is None or not hasattr(module, "release_files"):
        return None
    released = {r["external_id"] for r in rows}
    entries = [e for e in store.item_sources(dataset) if e.external_id in released]
    texts = store.source_texts(source_ids(entries))
    kept, missing = [], []
    for e in entries:
        ids = [v for k, v in (e.source or {}).items() if k.endswith("_src")]
        (kept if e.source and all(i in texts for i in ids) else missing).append(e)
    left_out: dict[str, list[str]] = {}
    if missing:
        left_out[NO_ORIGINAL_RECORD] = sorted(e.external_id for e in missing)
    fields = {r["external_id"]: r.get("release") or {} for r in rows}
    takes_fields = "fields" in inspect.signature(module.release_files).parameters
    files = (module.release_files(kept, texts, fields=fields) if takes_fields else
             module.release_files(kept, texts)) if kept else []
    for f in files:
        for reason, ids in f.notes.items():
            left_out.setdefault(reason.replace("_", " "), []).extend(ids)
    return fmt, files, left_out


#: files every release writes besides its per-dataset files (README.md: the Hugging Face dataset card,
#: croissant.json: the Croissant metadata)
SHEET_FILES = ("DATASHEET.md", "datasheet.json", "README.md", "croissant.json")


def _dataset_file_stem(dataset: str) -> str:
    """The file-name stem of a dataset's release files: its name with anything but letters, digits, -, _ and .
    written as _."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in dataset) or "dataset"


#: endings of the files a release writes (SHEET_FILES aside): <dataset>.jsonl and the original-layout files
RELEASE_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")


def is_release_file_name(name: str) -> bool:
    """Whether name has the shape of a file that `prefval release` writes: DATASHEET.md, datasheet.json,
    README.md, croissant.json, or a dataset file stem (_dataset_file_stem: letters, digits, -, _ and .) ending in RELEASE_SUFFIXES; never a hidden
    name, a path or anything else (notes.txt)."""
    if name in SHEET_FILES:
        return True
    return (bool(name) and not name.startswith(".") and name.endswith(RELEASE_SUFFIXES)
            and all(c.isalnum() or c in "-_." for c in name))


def _sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def earlier_release_files(folder: Path) -> set[str]:
    """The names of the files in folder that an earlier release wrote and that are still as it wrote them, so that
    `release --force` may replace them: datasheet.json itself, and every file that its release.files lists with
    a sha256, whose name has the shape of a release file (is_release_file_name) and whose content on disk has that
    sha256. A name merely listed (a datasheet.json edited by hand naming someone's notes.txt, a file changed since,
    or a release by a prefval that recorded no hashes) is not returned, so it is never replaced or removed.
    Raises PrefvalError when datasheet.json is not a release's datasheet."""
    path = folder / "datasheet.json"
    try:
        sheet = json.loads(read_text(path))
        hashes = sheet["release"].get("files") or {}
        names = {"datasheet.json"}
        for name, digest in hashes.items():
            if (isinstance(name, str) and isinstance(digest, str) and is_release_file_name(name)
                    and name != "datasheet.json"):
                f = folder / name
                if f.is_file() and not f.is_symlink() and _sha256(f) == digest:
                    names.add(name)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise PrefvalError(f"{path}: not the datasheet of a prefval release ({type(exc).__name__}: {exc}); "
                           "not replacing anything") from None
    return names


def _check_release_folder(target: Path, out_dir: str, databases: list[str]) -> None:
    """Refuse (PrefvalError) a folder that holds the database the release reads, its -wal/-shm/-journal file, or
    any SQLite file: --force never touches a database."""
    from storage.db import is_sqlite_file
    from storage.outfile import database_file_of

    for entry in sorted(target.iterdir()):
        hit = database_file_of(entry, databases)
        if hit is not None:
            raise PrefvalError(f"{out_dir}: holds {hit}; refusing to write a release there, choose another --out")
        if entry.is_file() and is_sqlite_file(entry):
            raise PrefvalError(f"{out_dir}: holds a SQLite database ({entry.name}); refusing to write a release "
                               "there (even with --force), choose another --out")


def write_release(store: Store, study_names: list[str], out_dir: str, force: bool = False,
                  with_names: bool = False, license_: str = "unknown", language: str = "en",
                  url: str | None = None) -> dict[str, Any]:
    """Write the release into out_dir and return the datasheet dict.

    Files: per dataset <stem>.jsonl, <stem>.parquet (annotator.hub_rows: typed columns, the Hugging Face split
    and the Croissant record set) and its original layouts; DATASHEET.md; README.md, the Hugging Face dataset
    card (reports.render.hub_card: YAML front matter with license_, language and a config per dataset);
    croissant.json (annotator.croissant: Croissant 1.0 with RAI 1.0, the sha256 of every other file but
    datasheet.json; url its dataset URL when given); datasheet.json last (release.files: the sha256 of every
    file, croissant.json's included). The data-collection facts (annotator.croissant.collection_facts) go into
    the datasheet as release.data_collection. Two datasets whose file names would be the same are refused.

    A new or empty out_dir receives the files. A non-empty one only with force, and only when it holds an earlier
    release (datasheet.json): then the files that earlier release wrote and that are unchanged since
    (earlier_release_files: a release file name and the sha256 its datasheet.json records in release.files) are
    replaced or removed and nothing else in the folder is touched; a new release file whose name is taken by a file of
    someone else is refused. A folder that holds the database, its -wal/-shm/-journal file or any SQLite file is
    refused even with force. The files are first written into a temporary folder beside out_dir; the old release's
    files are then moved aside, the new ones renamed in, and the old ones deleted (on an error the old ones are
    put back), so a failure leaves the earlier release as it was. Raises PrefvalError (nothing changed)."""
    target = Path(out_dir)
    old_files: set[str] = set()
    if target.exists():
        if not target.is_dir():
            raise PrefvalError(f"{out_dir}: exists and is not a folder")
        _check_release_folder(target, out_dir, [store.path] if store.path != ":memory:" else [])
        if any(target.iterdir()):
            if not force:
                raise PrefvalError(f"{out_dir}: folder is not empty; pass --force to replace an earlier release")
            if not (target / "datasheet.json").is_file():
                raise PrefvalError(f"{out_dir}: folder is not an earlier release (no datasheet.json); "
                                   "not replacing it")
            old_files = earlier_release_files(target)
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise PrefvalError(f"{out_dir}: folder {parent} does not exist")
    released, sheet = build_release(store, study_names, with_names)
    from reports.render.datasheet import render_datasheet_md

    from annotator.croissant import collection_facts, croissant_document
    from annotator.hub_rows import SPLIT, hub_table, parquet_bytes
    from reports.render.hub_card import card_description, card_name, render_hub_card
    from storage.visible_text import json_safe

    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=str(parent)))
    written: dict[str, str] = {}  # file name -> the dataset (or "the release") that wrote it

    def claim(name: str, owner: str) -> Path:
        if name in written:
            raise PrefvalError(f"{out_dir}: {owner} and {written[name]} would both be written as {name} (their "
                               "names differ only in characters a file name cannot hold); rename one dataset")
        written[name] = owner
        return tmp / name

    try:
        tables: dict[str, tuple[str, Any]] = {}
        same_as: dict[str, str] = {}
        for dataset, rows in released.items():
            safe = _dataset_file_stem(dataset)
            owner = f"dataset {dataset!r}"
            with open(claim(f"{safe}.jsonl", owner), "w", encoding="utf-8", newline="\n") as fh:
                for r in rows:
                    fh.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
            try:
                table = hub_table(rows)
            except ValueError as exc:
                raise PrefvalError(f"{out_dir}: dataset {dataset!r}: {exc}") from None
            claim(f"{safe}.parquet", owner).write_bytes(parquet_bytes(table))
            tables[dataset] = (f"{safe}.parquet", table)
            same_as[f"{safe}.parquet"] = f"{safe}.jsonl"
            original = original_release(store, dataset, rows)
            if original is not None:
                fmt, files, left_out = original
                for f in files:
                    claim(f"{safe}{f.suffix}", owner).write_bytes(f.data)
                sheet["release"].setdefault("original_format", {})[dataset] = {
                    "format": fmt, "files": [{"file": f"{safe}{f.suffix}", "records": f.records} for f in files],
                    "left_out": {k: sorted(v) for k, v in sorted(left_out.items())}}
        sheet["release"]["data_collection"] = collection_facts(store, released)
        sheet["release"]["hub"] = {
            "split": SPLIT, "kinds": sorted({r["kind"] for rows in released.values() for r in rows}),
            "configs": {d: {"config": f[:-len(".parquet")], "file": f, "columns": list(t.columns),
                            "json_text": t.json_text, "left_out": t.left_out}
                        for d, (f, t) in sorted(tables.items())}}
        claim("DATASHEET.md", "the release").write_text(render_datasheet_md(sheet), encoding="utf-8")
        claim("README.md", "the release").write_text(
            render_hub_card(sheet, license_=license_, language=language), encoding="utf-8")
        files = [(p.name, _sha256(p), p.stat().st_size) for p in sorted(tmp.iterdir())]
        try:
            doc = croissant_document(sheet, tables, files, name=card_name(sheet), description=card_description(sheet),
                                     license_=license_, url=url, language=language, same_as=same_as)
        except ValueError as exc:
            raise PrefvalError(f"{out_dir}: {exc}") from None
        claim("croissant.json", "the release").write_text(
            json_safe(json.dumps(doc, ensure_ascii=False, indent=2)) + "\n", encoding="utf-8")
        # what `--force` later recognises as this release's own files (earlier_release_files)
        sheet["release"]["files"] = {p.name: _sha256(p) for p in sorted(tmp.iterdir())}
        (tmp / "datasheet.json").write_text(json.dumps(sheet, ensure_ascii=False, sort_keys=True, indent=2) + "\n",
                                            encoding="utf-8")
        os.chmod(tmp, 0o755)
        if not target.exists():
            os.replace(tmp, target)
        else:
            _swap_in(tmp, target, out_dir, old_files)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return sheet


def _swap_in(new: Path, target: Path, out_dir: str, old_files: set[str]) -> None:
    """Replace the old release's files (old_files, names in target) by the files of folder new: the old ones are
    moved into a folder beside target, the new ones renamed in, then the old ones deleted. On an error every new
    file moved in is taken out again and the old ones are put back. Raises PrefvalError when a new file's name is
    taken in target by a file that is not the old release's."""
    new_names = sorted(p.name for p in new.iterdir())
    taken = [n for n in new_names if os.path.lexists(target / n) and n not in old_files]
    if taken:
        raise PrefvalError(f"{out_dir}: {taken[0]} is there and was not written by the earlier release; "
                           "not replacing it, move it or choose another --out")
    aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=str(target.parent)))
    moved_old: list[str] = []
    moved_new: list[str] = []
    try:
        for n in sorted(old_files):
            if os.path.lexists(target / n) and not (target / n).is_dir():
                os.replace(target / n, aside / n)
                moved_old.append(n)
        for n in new_names:
            os.replace(new / n, target / n)
            moved_new.append(n)
    except BaseException:
        for n in moved_new:
            os.replace(target / n, new / n)
        for n in moved_old:
            os.replace(aside / n, target / n)
        os.rmdir(aside)
        raise
    shutil.rmtree(aside)
