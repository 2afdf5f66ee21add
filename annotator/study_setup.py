"""Creating studies and assigning their units to annotators (no Textual; used by the CLI and the session)."""
from __future__ import annotations

import random

from annotator.tasks import get_task
from annotator.tasks.base import StudySpec, stable_seed
from storage.errors import PrefvalError
from storage.models import Annotator, Study, Unit
from storage.store import Store


def create_study(store: Store, spec: StudySpec) -> Study:
    """Create a study from a spec: the task builds its units, then annotators named in the spec are assigned.

    Raises PrefvalError (nothing written) for an unknown task, dataset or a taken name.
    """
    task = get_task(spec.task)
    settings = task.study_settings(spec)
    units = task.build_units(store, spec)
    if not units:
        raise PrefvalError(f"study '{spec.name}' would have no items")
    k = int(settings.get("annotators_per_item", 1))
    if spec.annotators and len(spec.annotators) < k:
        raise PrefvalError(f"study '{spec.name}' needs {k} annotators per item; {len(spec.annotators)} named")
    with store.transaction():  # the study and its assignments, or nothing
        study = store.create_study(spec.name, spec.task, settings, spec.seed, units)
        if spec.annotators:
            assign_named(store, study, spec.annotators)
    return study


def unit_quota(study: Study, unit: Unit) -> int:
    """How many annotators a unit needs: unit.extra["annotators"] when the task set it (e.g. a rubric study's
    shared subset), else the study's annotators_per_item."""
    return int(unit.extra.get("annotators", study.settings.get("annotators_per_item", 1)))


def _queue_seed(study: Study, annotator: Annotator) -> int:
    """Seed of an annotator's queue order: from the study's name and seed and the annotator's name, so that the
    same study set up again (or in another database) gives everyone the same order."""
    return stable_seed("queue", study.seed, study.name, annotator.name)


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


def claim_assignments(store: Store, study: Study, annotator: Annotator) -> int:
    """Give an annotator who has no queue yet every unit that still has fewer than `annotators_per_item`
    annotators, in their own seeded order. Returns the number of units added (0 when they had a queue)."""
    if store.assignments(study.id, annotator.id):
        return 0
    humans = {a.id for a in store.annotators() if a.kind == "human"}  # LLM judges do not fill human quotas
    counts: dict[str, int] = {}
    for a in store.assignments(study.id):
        if a.annotator_id in humans:
            counts[a.unit_id] = counts.get(a.unit_id, 0) + 1
    by_id = {u.id: u for u in store.units(study.id)}
    open_units = [uid for uid, u in by_id.items() if counts.get(uid, 0) < unit_quota(study, u)]
    ids = _ordered(store, study, annotator, open_units)
    return store.add_assignments(study.id, [(uid, annotator.id, pos, _assign_seed(study, annotator, by_id[uid]))
                                            for pos, uid in enumerate(ids)])
