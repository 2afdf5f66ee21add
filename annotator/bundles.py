"""Offline bundles for annotators without the shared database: what goes into one annotator's bundle.

`export_bundle` chooses the rows (the annotator's units and the items their screens need) and redacts them
through the study's task type (``TaskType.bundle_payload``: no answer keys, hidden candidate labels, reference
scores or sources for blind tasks; dataset names replaced by neutral aliases), then storage writes them into a new
file. `merge_bundles` checks every bundle before any is merged (storage.bundles has the checks; the answers'
format is checked here, by the study's task type, and handed to storage as its answer_check).
"""
from __future__ import annotations

import os

from annotator.study_setup import claim_assignments
from annotator.tasks import get_task
from storage.bundles import MergeSummary
from storage.errors import PrefvalError
from storage.outfile import check_output, output_path
from storage.store import Store
from storage.studies import refuse_archived


def _redact_settings(value, aliases: dict[str, str], key: str = ""):
    """Study settings as a blind bundle stores them: every dataset name replaced by its alias (also inside lists
    and nested settings, e.g. a pairwise study's dataset_a/dataset_b), and file paths (keys ending in _file)
    left out, so no setting names a source."""
    if isinstance(value, dict):
        return {k: (None if k.endswith("_file") else _redact_settings(v, aliases, k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_settings(v, aliases, key) for v in value]
    if isinstance(value, str) and value in aliases:
        return aliases[value]
    return value


def _unmarked(unit, position: int):
    """A unit as a bundle stores it: at its place in the annotator's queue (the seeded order that mixes the
    attention checks in; a study appends its checks after its items), and an attention check not marked as one
    (nor by its every-annotator quota, nor by lacking the copies identical on screen a study item may have)."""
    extra = unit.extra
    if extra.get("check"):
        extra = {k: v for k, v in extra.items() if k not in ("check", "annotators")}
    if any(k in extra for k in SCREEN_COPY_KEYS):  # only study items have copies: the copies would tell the checks
        extra = {k: v for k, v in extra.items() if k not in SCREEN_COPY_KEYS}
    return unit.model_copy(update={"extra": extra, "position": position})


#: study settings that count units or items chosen when the study was made (--sample, the rubric's shared subset
#: and calibration items, the unit counts of `prefval status`): set beside the number of items a bundle holds they
#: would tell how many attention checks were mixed in; no screen reads them
COUNT_SETTINGS = frozenset({"counts", "sample", "shared", "calibration", "identical_on_screen", "sampled",
                            "missing_context"})
#: unit extras naming a study item's copies identical on screen (annotator.tasks.screens): no screen reads them
SCREEN_COPY_KEYS = ("same_screen", "same_screen_other_key")


def _unmarked_settings(settings: dict) -> dict:
    """Study settings as a bundle stores them: without the attention-check settings (any key naming checks, e.g.
    "checks" with their source and number, "min_check_accuracy") and without COUNT_SETTINGS (counts of units
    that, with the bundle's own number of items, would give the number of checks)."""
    def keep(key: str) -> bool:
        return "check" not in key.lower() and key not in COUNT_SETTINGS

    out = {k: v for k, v in settings.items() if keep(k)}
    if isinstance(out.get("options"), dict):
        out["options"] = {k: v for k, v in out["options"].items() if keep(k)}
    return out


def export_bundle(store: Store, study_name: str, annotator_name: str, out: str, force: bool = False
                  ) -> dict[str, int]:
    """Write the bundle of one annotator's share of a study to `out` (a new SQLite file) and return its row
    counts by table. An annotator without a queue yet claims one first, as on opening the study.

    The file is built under a temporary name beside `out` and renamed into place, so a failure leaves no half
    bundle; the annotator, their claim and the export's record are written in one transaction of the main
    database, committed only once the file is in place, so a failed export leaves the main database unchanged.
    Raises PrefvalError when `out` exists (without force), is any SQLite file (even with force: an earlier
    bundle may hold answers not merged yet), has a -wal/-shm/-journal file beside it, is the database, or the
    annotator has no items.
    """
    check_output(out, [store.path], force, sqlite_output=True)  # before any work
    study = store.get_study(study_name)
    refuse_archived(study.name, study.settings, "cut into a bundle")
    # the claim, the bundle file and its record are one transaction of the main database: an export that fails
    # anywhere (no items, a file that cannot be written) leaves the main database as it was
    with store.transaction():
        return _export(store, study, annotator_name, out, force)


def _export(store: Store, study, annotator_name: str, out: str, force: bool) -> dict[str, int]:
    """export_bundle's work, inside its transaction."""
    study_name = study.name
    task = get_task(study.task_type)
    annotator = store.ensure_annotator(annotator_name)
    if not annotator.is_person:
        raise PrefvalError(f"'{annotator_name}' is an LLM judge, not a human annotator")
    claim_assignments(store, study, annotator)
    queue = store.assignments(study.id, annotator.id)
    if not queue:
        raise PrefvalError(f"study '{study_name}' has no items for annotator '{annotator_name}' in {store.path}")
    by_id = {u.id: u for u in store.units(study.id)}
    units = [by_id[a.unit_id] for a in queue]
    needed: dict[str, str] = {}  # item id -> unit id it is shown with
    for u in units:
        for iid in (u.item_id, u.item_b_id, u.extra.get("parent_item"), *(u.extra.get("source_items") or [])):
            if iid:
                needed.setdefault(iid, u.id)
    items = store.get_items(list(needed))
    # an attention check sits among the study's items: in the dataset of the first of them (not its own), and in
    # a bundle every item is named by its id only (a check dataset's external ids would tell its items apart)
    check_items = {u.item_id for u in units if u.extra.get("check")}
    home = next((items[u.item_id].dataset_id for u in sorted(by_id.values(), key=lambda u: u.position)
                 if not u.extra.get("check") and u.item_id in items), None)
    # records shown beside a unit's item: a screen may look these up by external id
    parents = {iid for u in units for iid in (u.extra.get("parent_item"), *(u.extra.get("source_items") or []))
               } - {None}
    items = {iid: items[iid].model_copy(update={  # in queue order (rows of a bundle in their insertion order)
        "dataset_id": home if iid in check_items and home else items[iid].dataset_id,
        "external_id": items[iid].external_id if iid in parents else iid}) for iid in needed if iid in items}
    datasets = {d.id: d.name for d in store.datasets()}
    used = sorted({it.dataset_id for it in items.values()}, key=lambda d: datasets.get(d, d))
    if task.blind:
        names = {ds: f"dataset-{i}" for i, ds in enumerate(used, 1)}
    else:
        names = {ds: datasets.get(ds, ds) for ds in used}
    keep_context = task.bundle_needs_context()
    redacted = {iid: it.model_copy(update={
        "payload": task.bundle_payload(by_id[needed[iid]], it),
        "context_id": it.context_id if keep_context else None,
        "context_end": it.context_end if keep_context else None}) for iid, it in items.items()}
    settings = _unmarked_settings(study.settings)
    if task.blind:
        aliases = {datasets[ds]: alias for ds, alias in names.items() if ds in datasets}
        settings = _redact_settings(settings, aliases)
    from storage.bundles import BundleContent

    content = BundleContent(study=study.model_copy(update={"settings": settings}), annotator_id=annotator.id,
                            units=[_unmarked(u, a.position) for u, a in zip(units, queue)], items=redacted,
                            dataset_names=names)
    with output_path(out, [store.path], force, sqlite_output=True) as tmp:
        tmp.unlink()  # Store.open creates the file fresh
        try:
            with Store.open(tmp, mode="create") as out_store:
                counts = store.write_bundle(out_store, content)
                out_store.make_single_file()
        finally:
            for suffix in ("-wal", "-shm"):
                if os.path.exists(f"{tmp}{suffix}"):
                    os.unlink(f"{tmp}{suffix}")
        # until merged back, the bundle is "out" (see Store.bundles_out); committed with the claim once the file is
        # in place (a failure to put it there rolls the record back)
        store.record_bundle_export(content.bundle_id, study, annotator.id, str(out), counts["study_items"])
    return counts


def answer_checker(store: Store):
    """The answer_check of Store.merge_bundle for `store`: (study_id, unit_id, status, answer) -> None when the
    study's task type could have written that answer on that unit (TaskType.answer_problem, against the item as
    the main database holds it, answer keys included), else what is wrong. Studies, units and items are read once
    each."""
    studies: dict = {}
    units: dict = {}

    def check(study_id: str, unit_id: str, status: str, answer: dict) -> str | None:
        if study_id not in studies:
            study = store.get_study_by_id(study_id)
            studies[study_id] = (study, get_task(study.task_type))
            units.update({u.id: u for u in store.units(study_id)})
        study, task = studies[study_id]
        unit = units[unit_id]
        items = store.get_items([i for i in (unit.item_id, unit.item_b_id) if i])
        return task.answer_problem(status, answer, unit, items[unit.item_id],
                                   items.get(unit.item_b_id) if unit.item_b_id else None, study.settings)

    return check


def merge_bundles(store: Store, paths: list[str]) -> list[MergeSummary]:
    """Merge bundles into `store`. Every bundle is checked before the first is merged, and all are merged in one
    transaction (each checked again against what the ones before it added: two bundles that together would put
    an item over its quota are refused), so a damaged, foreign or refused bundle anywhere in the list leaves the
    database unchanged. Rows on items their annotator no longer holds here are left out of a merge that goes on
    (Store.merge_bundle; MergeSummary.refused). Returns one MergeSummary per bundle.

    Raises PrefvalError naming the bundle file.
    """
    check = answer_checker(store)
    for p in paths:
        store.merge_bundle(p, dry_run=True, answer_check=check)
    with store.transaction():
        return [store.merge_bundle(p, answer_check=check) for p in paths]
