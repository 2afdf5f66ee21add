"""Creating studies and assigning their units to annotators (no Textual; used by the CLI and the session)."""
from __future__ import annotations

import random

from annotator.tasks import get_task
from annotator.tasks.base import StudySpec, stable_seed
from storage.visible_text import name_problem
from storage.errors import PrefvalError
from storage.models import Annotator, Study, Unit
from storage.store import Store
from storage.studies import unit_quota as _unit_quota


#: the `--option KEY=VALUE` keys every task type reads (the quality thresholds of reports.per_annotator and the
#: idle cap of annotator.session), with what they take: (KEY=VALUES, what it does, check of the value)
STUDY_WIDE_OPTIONS = (
    ("idle_cap=SECONDS", "time on an item counts at most this long without input (default 300; 0: no cap)",
     lambda v: v >= 0),
    ("min_check_accuracy=X", "flag annotators below this attention-check accuracy (default 0.8)",
     lambda v: 0 <= v <= 1),
    ("max_too_fast_share=X", "flag annotators with a larger share of too-fast answers (default 0.2)",
     lambda v: 0 <= v <= 1),
    ("min_agreement=X", "flag annotators below this agreement with the others (no default)",
     lambda v: 0 <= v <= 1),
)


def check_option_keys(task_name: str, options: dict) -> None:
    """Refuse an `--option` key that neither this task type (its TaskSpec.option_help) nor every task
    (STUDY_WIDE_OPTIONS) reads, and a study-wide option whose value is not a number in its range: one line naming
    the key, the task's keys and, for a near miss (tie-rule), the key meant. Raises PrefvalError."""
    import difflib
    import math

    from storage import task_specs

    wide = {k.split("=")[0]: ok for k, _, ok in STUDY_WIDE_OPTIONS}
    own = [k.split("=")[0] for k, _ in task_specs.get(task_name).option_help]
    known = own + list(wide)
    for key, value in options.items():
        if key in wide:
            try:
                v = float(value)
            except (TypeError, ValueError):
                v = math.nan
            if math.isnan(v) or math.isinf(v) or not wide[key](v):
                raise PrefvalError(f"--option {key}={value}: "
                                   + next(w for k, w, _ in STUDY_WIDE_OPTIONS if k.startswith(key + "=")))
            continue
        if key in own:
            continue
        takers = [s.name for s in task_specs.specs() if key in [k.split("=")[0] for k, _ in s.option_help]]
        if takers:
            raise PrefvalError(f"--option {key} applies to {', '.join(takers)} studies, not {task_name}")
        near = difflib.get_close_matches(key.replace("-", "_"), known, n=1)
        raise PrefvalError(f"--option {key}: not an option of {task_name} studies"
                           + (f" (did you mean {near[0]}?)" if near else "")
                           + f"; it takes {', '.join(known)}")


def create_study(store: Store, spec: StudySpec) -> Study:
    """Create a study from a spec: the task builds its units, then annotators named in the spec are assigned.

    Raises PrefvalError (nothing left written) for an unknown task, dataset or a taken name, and for more --dataset
    than the task takes (TaskType.check_datasets, before and after TaskType.prepare_spec).
    """
    task = get_task(spec.task)
    task.check_datasets(spec.datasets)
    from annotator.tasks.strata import spec_rule

    spec_rule(spec)  # --stratify/--balance: one of them, with --sample
    given = list(spec.datasets)
    spec = task.prepare_spec(store, spec)
    task.check_datasets(given, spec.datasets)
    settings = task.study_settings(spec)
    check_option_keys(spec.task, spec.options)
    units = task.build_units(store, spec)
    if not units:
        raise PrefvalError(f"study '{spec.name}' would have no items")
    # items lacking their conversation, identical on screen, the sample drawn (annotator.tasks.screens)
    settings.update(task.build_notes)
    if spec.checks:
        checks = attention_check_units(store, task, spec, units)
        settings["checks"] = {"source": spec.checks, "n": len(checks)}
        units = list(units) + checks
    k = int(settings.get("annotators_per_item", 1))
    if spec.annotators and len(spec.annotators) < k:
        raise PrefvalError(f"study '{spec.name}' needs {k} annotators per item; {len(spec.annotators)} named")
    # Written in batches (each committed; the write lock is never held for long, so people annotating beside it
    # are not kept waiting) while the study stays hidden; shown only when complete, removed on failure.
    study = store.create_study(spec.name, spec.task, settings, spec.seed, units, in_batches=True)
    try:
        if spec.annotators:
            assign_named(store, study, spec.annotators)
        return store.finish_study(study.id)
    except BaseException:
        store.drop_unfinished_study(study.id)
        raise


#: the quota of an attention-check unit: every annotator of the study gets it
CHECK_QUOTA = 1_000_000


def attention_check_units(store: Store, task, spec: StudySpec, units: list) -> list:
    """Units of attention checks mixed into every annotator's queue (each annotator's seeded order places them).

    spec.checks: the name of a dataset, whose items the task can show and check (TaskType.check_key not None)
    all become checks; or a number N, for N such items of the study's first dataset that are not already in the
    study, nor kept once in it as identical on screen to one of its items (a seeded sample); an item lacking the
    conversation the task shows is a check only with --option missing_context=keep, as for the study's items.
    Check units carry extra {"check": True}; figures leave them out, the per-annotator table scores them. Raises PrefvalError when there are not enough keyed items.
    """
    in_study = {u[0] for u in units} | {i for u in units for k in ("same_screen", "same_screen_other_key")
                                         for i in u[2].get(k, [])}  # a copy of a study item is in it too
    raw = spec.checks.strip()
    if raw.isdigit():
        n = int(raw)
        if not spec.datasets:
            raise PrefvalError("--checks N takes keyed items of the study's dataset; give --dataset or a dataset name")
        source = spec.datasets[0]
    else:
        n, source = None, raw
    keep_bare = str(spec.options.get("missing_context", "")).strip().lower() == "keep"
    pool = [it for it in store.items(source)
            if it.kind in task.item_kinds and task.accepts(it) and task.check_key(it) is not None
            and it.id not in in_study
            and (keep_bare or not (task.needs_conversation and it.context_missing))]  # as the study's own items
    if not pool or (n is not None and len(pool) < n):
        raise PrefvalError(f"--checks {raw}: dataset '{source}' has {len(pool)} keyed items a {task.name} study can "
                           f"use as attention checks{'' if n is None else f' besides its items (needs {n})'} "
                           f"in {store.path}")
    if n is not None:
        pool = [pool[i] for i in sorted(random.Random(spec.seed).sample(range(len(pool)), n))]
    return [(it.id, None, {**task.unit_links(store, it), "check": True, "annotators": CHECK_QUOTA}) for it in pool]


def unit_quota(study: Study, unit: Unit) -> int:
    """How many annotators a unit needs: unit.extra["annotators"] when the task set it (e.g. a rubric study's
    shared subset), else the study's annotators_per_item (storage.studies.unit_quota)."""
    return _unit_quota(study.settings, unit.extra)


def _queue_seed(study: Study, annotator: Annotator) -> int:
    """Seed of an annotator's queue order: from the study's name and seed and the annotator's name, so that the
    same study set up again (or in another database) gives everyone the same order."""
    return stable_seed("queue", study.seed, study.settings.get("seed_name", study.name), annotator.name)


def _assign_seed(study: Study, annotator: Annotator, unit: Unit) -> int:
    """Seed of the option/side shuffle of one unit for one annotator (stored in the assignment)."""
    return stable_seed("shuffle", study.seed, annotator.name, unit.item_id, unit.item_b_id or "")


def _ordered(store: Store, study: Study, annotator: Annotator, unit_ids: list[str]) -> list[str]:
    """The annotator's own queue order: seeded shuffle unless the study keeps its order (settings.order)."""
    if study.settings.get("order", "shuffled") == "study":
        return unit_ids
    ids = list(unit_ids)
    random.Random(_queue_seed(study, annotator)).shuffle(ids)
    return ids


def assign_named(store: Store, study: Study, names: list[str]) -> dict[str, int]:
    """Assign each unit to `annotators_per_item` of the named annotators, balanced round-robin.

    Returns name -> number of units assigned. Raises PrefvalError when fewer names than annotators per item.
    """
    k = int(study.settings.get("annotators_per_item", 1))
    if len(names) < k:
        raise PrefvalError(f"study '{study.name}' needs {k} annotators per item; {len(names)} named")
    annotators = [store.ensure_annotator(n) for n in names]
    units = store.units(study.id)
    by_id = {u.id: u for u in units}
    per: dict[str, list[str]] = {a.id: [] for a in annotators}
    start = 0
    for u in units:
        need = min(unit_quota(study, u), len(annotators))
        for j in range(need):
            per[annotators[(start + j) % len(annotators)].id].append(u.id)
        start += need
    out = {}
    for a in annotators:
        ids = _ordered(store, study, a, per[a.id])
        store.add_assignments(study.id, [(uid, a.id, pos, _assign_seed(study, a, by_id[uid]))
                                         for pos, uid in enumerate(ids)])
        out[a.name] = len(ids)
    return out


CLAIM_BATCH = 20  # units claimed at a time by an annotator who was not named at creation


def claim_assignments(store: Store, study: Study, annotator: Annotator, limit: int = CLAIM_BATCH) -> int:
    """Claim the next `limit` units for an annotator (lazy claiming: called when the annotator's queue has no
    open item left, so people who start later share the work). Counting and claiming are one write transaction
    (Store.claim_units): no unit ever gets more human annotators than its quota, however many claim at once.

    Units come in study order, filling the units others began first, with the attention checks due mixed in
    (their share keeps pace with the annotator's share of the study); within a batch the annotator sees them in
    their own seeded order (unless settings.order == "study"), each with its seeded option/side shuffle.
    Returns the number of units claimed (0 when nothing is left for this annotator). Raises DatabaseBusy when
    another program held the write lock beyond the busy timeout.
    """
    def plan(units: list[Unit], start: int) -> list[tuple[str, int, int]]:
        units = list(units)
        if study.settings.get("order", "shuffled") != "study":
            seed = _queue_seed(study, annotator)  # the first batch: the order a whole-queue claim would give
            random.Random(seed if start == 0 else stable_seed(seed, start)).shuffle(units)
        return [(u.id, start + i, _assign_seed(study, annotator, u)) for i, u in enumerate(units)]

    return store.claim_units(study.id, annotator.id, limit, plan, spread_checks=bool(study.settings.get("checks")))


def study_annotator_names(store: Store, study: Study) -> list[str]:
    """Names of the human annotators who hold items of a study (released assignments do not count), sorted."""
    return store.holder_names(study.id, "human")


def newcomer_question(store: Store, study: Study, name: str) -> str | None:
    """The question to ask before `name` claims items of a study that already has other human annotators
    (a mistyped --annotator must not take the real annotator's items); None when no confirmation is needed
    (the name already has items here, or nobody else has). Nothing is written. Raises PrefvalError first when
    the name is new and cannot be one (empty, surrounding whitespace, control characters:
    storage.visible_text.name_problem)."""
    import difflib

    me = store.find_annotator(name)
    if me is None and name_problem(name, "annotator"):
        raise PrefvalError(name_problem(name, "annotator"))
    known = study_annotator_names(store, study)
    if not known or (me is not None and store.queue_length(study.id, me.id)):  # a count, not their whole queue
        return None
    close = difflib.get_close_matches(name.strip(), known, n=1, cutoff=0.6)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    return (f"study '{study.name}' already has annotators {', '.join(known)}; '{name.strip()}' is new here and "
            f"would claim items of it.{hint}")


def bundle_out_warning(store: Store, study: Study, name: str) -> str | None:
    """One line warning that `name` has a bundle of the study out (exported, not merged back since:
    Store.bundles_out), printed by the commands that take items from an annotator (`study release|unassign|
    rename-annotator`) once they did: answers in that bundle on items they no longer hold are refused at merge.
    None when they have none. Nothing is written."""
    a = store.find_annotator(name)
    out = store.bundles_out(study.id, a.id) if a is not None else []
    if not out:
        return None
    return (f"warning: '{a.name}' has a bundle of study '{study.name}' out that was not merged back: "
            f"{_bundles_named(out)}; its answers on items taken from them will be refused at merge unless the items "
            "are assigned to them again")


def earlier_bundle_warning(store: Store, study: Study, name: str) -> str | None:
    """One line warning, before `name` gets a(nother) bundle of the study, that an earlier one of theirs is out
    (exported, not merged back since: Store.bundles_out), naming it: two bundles of one annotator are two places to
    answer the same items (merged, their rows on one item are chained by time). None when none is out. Nothing is
    written."""
    a = store.find_annotator(name)
    out = store.bundles_out(study.id, a.id) if a is not None else []
    if not out:
        return None
    return (f"warning: an earlier bundle of '{a.name}' for study '{study.name}' is out, not merged back: "
            f"{_bundles_named(out)}; merge it too (answers given in both are chained by time)")


def _bundles_named(out: list[dict]) -> str:
    """The latest of the bundles `out` (Store.bundles_out, oldest first) by file, time and size, and how many more."""
    last = out[-1]
    more = f", and {len(out) - 1} earlier bundle(s)" if len(out) > 1 else ""
    return (f"{last['file_name']} (exported {last['exported_at'][:16].replace('T', ' ')} UTC, {last['n_items']} "
            f"items{more})")


def release(store: Store, study: Study, name: str, keep_skipped: bool) -> tuple[int, int]:
    """Give an annotator's unanswered items of a study back to the pool (see Store.release_assignments).
    Returns (released, kept with an answer or, with keep_skipped, a skip). Raises PrefvalError when the name holds
    no items of the study. release_counted gives the skips too."""
    got = release_counted(store, study, name, keep_skipped)
    return got["released"], got["kept"]


def marks_text(marks: dict[str, set[str] | int]) -> str:
    """The marks of a set of items as words, in Store.MARKS order, kinds without items left out: "1 skipped,
    2 flagged 'needs review', 1 with a note" (marks: kind -> unit ids or a count)."""
    words = {"skipped": "skipped", "partial": "partly answered", "flagged": "flagged 'needs review'",
             "noted": "with a note"}
    counts = {k: (v if isinstance(v, int) else len(v)) for k, v in marks.items()}
    return ", ".join(f"{counts[k]} {words[k]}" for k in Store.MARKS if counts.get(k))


def release_counted(store: Store, study: Study, name: str, keep_skipped: bool,
                    keep_marked: bool = False) -> dict:
    """release() with what happened to the items the annotator marked without answering (a skip, a partial answer,
    a "needs review" flag, a note: Store.marked_units): {"released": items back to the pool, "released_skipped":
    of them, those the annotator had skipped (0 with keep_skipped or keep_marked), "released_marked": of them, those
    with any mark, "released_marks": kind -> how many of them had it, "kept": items left in the queue,
    "kept_answered", "kept_skipped", "kept_marked" (unanswered items kept for their marks), "kept_marks": kind ->
    count}. keep_marked keeps every marked item (`study release`'s rule); keep_skipped only the skipped ones.
    kept = kept_answered + kept_marked. Raises PrefvalError when the name holds no items of the study."""
    a = store.find_annotator(name)
    if a is None or not store.queue_length(study.id, a.id):
        raise PrefvalError(f"annotator '{name}' has no items in study '{study.name}'")
    before = store.marked_units(study.id, a.id)
    n = store.release_assignments(study.id, a.id, keep_skipped=keep_skipped, keep_marked=keep_marked)
    after = store.queue_counts(study.id, a.id, marks=False)
    still = store.marked_units(study.id, a.id)
    gone = {k: before[k] - still[k] for k in before}
    return {"released": n, "released_skipped": len(gone["skipped"]),
            "released_marked": len(set().union(*gone.values())),
            "released_marks": {k: len(v) for k, v in gone.items()},
            "kept": after["total"], "kept_answered": after["answered"], "kept_skipped": after["skipped"],
            "kept_marked": len(set().union(*still.values())), "kept_marks": {k: len(v) for k, v in still.items()}}


def move_annotator(store: Store, study: Study, old: str, new: str) -> dict:
    """`prefval study rename-annotator STUDY OLD NEW`: give OLD's work in a study to NEW.

    When NEW is not an annotator yet and OLD holds items of no other study, OLD is renamed (same id: every
    answer, skip, note and flag follows). Otherwise answers cannot move (the log is append-only): OLD keeps the
    items they answered, and the rest, skipped ones included (a skip is no answer: NEW decides them afresh), are
    released and appended to NEW's queue, except units NEW already holds, which go back to the pool.
    Items OLD marked without answering (skipped, partly answered, flagged "needs review", noted: Store.marked_units)
    move like the others: their marks stay in the log under OLD (never moved or deleted) and NEW decides afresh.
    Returns {"how": "renamed" | "moved", "moved": items now NEW's (renamed: every item), "moved_skipped": of them,
    those OLD had skipped, "moved_marked": of them, those OLD had marked, "moved_marks": kind -> count, "to_pool":
    items NEW already held (released to the pool), "to_pool_skipped", "to_pool_marked", "to_pool_marks": the same
    for them, "kept": items OLD keeps (answered)} (the renamed case has no *_marked keys: every mark follows).
    Raises PrefvalError for unknown names.
    """
    a_old = store.find_annotator(old)
    if a_old is None or not store.queue_length(study.id, a_old.id):
        raise PrefvalError(f"annotator '{old}' has no items in study '{study.name}'")
    if store.find_annotator(new) is None and name_problem(new, "new annotator"):
        raise PrefvalError(name_problem(new, "new annotator"))
    elsewhere = [s.name for s in store.studies(include_archived=True)
                 if s.id != study.id and store.queue_length(s.id, a_old.id)]
    if store.find_annotator(new) is None and not elsewhere:
        store.rename_annotator(old, new)
        return {"how": "renamed", "moved": store.queue_length(study.id, a_old.id), "moved_skipped": 0, "to_pool": 0,
                "to_pool_skipped": 0, "kept": 0}
    with store.transaction():
        before = {x.unit_id for x in store.assignments(study.id, a_old.id)}
        marks = store.marked_units(study.id, a_old.id)
        skipped = marks["skipped"]
        store.release_assignments(study.id, a_old.id)
        kept = {x.unit_id for x in store.assignments(study.id, a_old.id)}
        a_new = store.ensure_annotator(new)
        queue = store.assignments(study.id, a_new.id)
        have = {x.unit_id for x in queue}
        by_id = {u.id: u for u in store.units(study.id)}
        moving = [uid for uid in by_id if uid in before - kept and uid not in have]  # study order
        start = max((x.position for x in queue), default=-1) + 1
        moved = store.add_assignments(study.id, [(uid, a_new.id, start + i, _assign_seed(study, a_new, by_id[uid]))
                                                 for i, uid in enumerate(moving)])
        to_pool = (before - kept) & have
    marked = set().union(*marks.values())
    return {"how": "moved", "moved": moved, "moved_skipped": len(set(moving) & skipped), "to_pool": len(to_pool),
            "to_pool_skipped": len(to_pool & skipped), "kept": len(kept),
            "moved_marked": len(set(moving) & marked),
            "moved_marks": {k: len(set(moving) & v) for k, v in marks.items()},
            "to_pool_marked": len(to_pool & marked), "to_pool_marks": {k: len(to_pool & v) for k, v in marks.items()}}
