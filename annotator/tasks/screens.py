"""What a study is made of, judged by what its screens show (issue 21, part 4).

Three rules applied by TaskType.build_units to the items a task accepts, before any sample is drawn:

1. Items whose conversation is missing (storage.models.Item.context_missing: the importer gave a context
   reference, e.g. PersonaMem's shared_context_id, that names no imported context). A task whose decision needs the
   conversation (TaskType.needs_conversation) refuses them with one line naming how many, unless the study is
   created with ``--option missing_context=keep`` (shown without a conversation) or ``=drop`` (left out).
2. Items identical on screen (TaskType.screen_key: the fields the task's view shows). Each distinct screen is kept
   once: the first item in dataset order becomes the study's item, the others are its copies, stored in the unit's
   extra (``same_screen``: copies with the same key on screen, TaskType.key_on_screen; ``same_screen_other_key``:
   copies whose key differs, items that contradict each other on the same screen). Every figure, test and interval
   is then over distinct screens: an annotator answers a screen once, and two copies are not two trials.
   ``--option identical_screens=keep`` keeps every copy as its own item (the figures then count them twice).
3. ``--sample N`` over items that carry ``metadata.query_id`` (RealPref-shaped queries: an MCQ and its T and F
   forms) draws whole queries: queries in a seeded random order (with the queries that share a screen with them),
   each taken when its screens still fit in N, so that `prefval release` can write every sampled query back in
   RealPref's layout (annotator.release.realpref_release writes only queries released whole; a copy is released
   with its study item's verdict). ``--option sample_unit=item`` draws items one by one. With ``--stratify FIELD``
   or ``--balance FIELD`` the draw is made per value of an item field (annotator.tasks.strata), in the same units.

What each rule did is stored in the study's settings (``missing_context``, ``identical_on_screen``, ``sampled``)
and said by `prefval study create`.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from storage.errors import PrefvalError
from storage.models import Item

if TYPE_CHECKING:  # pragma: no cover
    from annotator.tasks.base import StudySpec, TaskType
    from storage.store import Store

MISSING_CONTEXT_CHOICES = ("refuse", "keep", "drop")
SAMPLE_UNITS = ("query", "item")


def canonical(value: Any) -> str:
    """value as canonical JSON (sorted keys, no spaces): the form in which screen keys compare nested fields."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass
class Screen:
    """One distinct screen: the study's item, and the other items that show the same screen.

    same_key: copies whose key on screen (TaskType.key_on_screen) is the item's; other_key: copies whose key
    differs (the same screen scored against another answer)."""

    item: Item
    same_key: list[Item] = field(default_factory=list)
    other_key: list[Item] = field(default_factory=list)

    @property
    def copies(self) -> list[Item]:
        """Every copy, same key first."""
        return self.same_key + self.other_key

    def extra(self) -> dict[str, Any]:
        """The unit extra that records the copies (item ids, in dataset order); {} without copies."""
        out: dict[str, Any] = {}
        if self.same_key:
            out["same_screen"] = [it.id for it in self.same_key]
        if self.other_key:
            out["same_screen_other_key"] = [it.id for it in self.other_key]
        return out


def option(spec: "StudySpec", name: str, choices: tuple[str, ...], default: str) -> str:
    """The study option `name` (--option NAME=VALUE), one of choices. Raises PrefvalError naming them."""
    value = str(spec.options.get(name, default)).strip().lower()
    if value not in choices:
        raise PrefvalError(f"--option {name}={spec.options.get(name)}: use {' or '.join(choices)}")
    return value


def missing_context(task: "TaskType", spec: "StudySpec", items: list[Item]) -> tuple[list[Item], dict | None]:
    """Rule 1: the items kept and the record {"items": how many lack their conversation, "rule": keep|drop} (None
    when none lacks it, or the task does not show the conversation). Raises PrefvalError (one line: how many, the
    first one's external id, how to keep them or add the contexts) when some lack it and the study did not say
    --option missing_context=keep|drop."""
    rule = option(spec, "missing_context", MISSING_CONTEXT_CHOICES, "refuse")
    if not task.needs_conversation:
        return items, None
    lacking = [it for it in items if it.context_missing]
    if not lacking:
        return items, None
    if rule == "refuse":
        dataset = spec.datasets[0] if spec.datasets else "the dataset"
        raise PrefvalError(
            f"{len(lacking)} of the {len(items)} items of dataset '{dataset}' lack their conversation, which "
            f"the {task.name} screen shows (first: {lacking[0].external_id!r}: its context reference names no "
            f"imported context): import the questions again with their contexts file, or add --option "
            f"missing_context=keep (shown without it) or --option missing_context=drop (left out); nothing was "
            f"created")
    kept = items if rule == "keep" else [it for it in items if not it.context_missing]
    return kept, {"items": len(lacking), "rule": rule}


def distinct_on_screen(task: "TaskType", store: "Store", items: list[Item]) -> list[Screen]:
    """Rule 2: the items grouped by TaskType.screen_key, in dataset order (the first item of a group is its
    study item); an item whose key is None is a screen of its own."""
    screens: list[Screen] = []
    by_key: dict[Any, Screen] = {}
    for it in items:
        key = task.screen_key(store, it)
        if key is None:
            screens.append(Screen(it))
            continue
        got = by_key.get(key)
        if got is None:
            by_key[key] = got = Screen(it)
            screens.append(got)
        elif task.key_on_screen(it) == task.key_on_screen(got.item):
            got.same_key.append(it)
        else:
            got.other_key.append(it)
    return screens


def screens_record(screens: list[Screen]) -> dict[str, int]:
    """The study-settings record of rule 2: {"copies": items kept once in another's place, "screens": distinct
    screens that had copies, "other_key": copies whose key differs from the kept item's}."""
    return {"copies": sum(len(s.copies) for s in screens), "screens": sum(1 for s in screens if s.copies),
            "other_key": sum(len(s.other_key) for s in screens)}


def query_id(item: Item) -> str | None:
    """The RealPref query an item is a form of (payload metadata.query_id, as storage.importers.realpref writes
    it), else None."""
    qid = (item.payload.get("metadata") or {}).get("query_id")
    return None if qid in (None, "") else str(qid)


def query_groups(screens: list[Screen]) -> list[list[int]]:
    """The screens (by index) in groups that a whole-query sample takes together: the screens of a RealPref query
    (metadata.query_id of any item shown on them, study item or copy), joined with those of every query that
    shares a screen with it, so that each item of a query drawn is on a screen of the study. A screen whose items
    carry no query_id is a group of its own. Groups in order of their first screen, screens in order."""
    parent: dict[str, str] = {}

    def find(q: str) -> str:
        while parent[q] != q:
            parent[q] = parent[parent[q]]
            q = parent[q]
        return q

    screen_queries: list[list[str]] = []
    for s in screens:
        qs = sorted({q for q in (query_id(it) for it in [s.item, *s.copies]) if q is not None})
        for q in qs:
            parent.setdefault(q, q)
        for q in qs[1:]:
            a, b = find(qs[0]), find(q)
            if a != b:
                parent[b] = a
        screen_queries.append(qs)
    groups: dict[str, list[int]] = {}
    for i, qs in enumerate(screen_queries):
        groups.setdefault(find(qs[0]) if qs else f"screen {i}", []).append(i)
    return list(groups.values())


def sample(screens: list[Screen], spec: "StudySpec") -> tuple[list[Screen], dict | None]:
    """Rule 3: `--sample N` of the screens (kept in their order) and the record {"unit": "query" or "item",
    "items": study items, and for the query unit "queries": queries drawn, all whole, "groups": groups drawn
    (query_groups)}; (all screens, None) without --sample or when N covers them all.

    Query unit (the default when an item carries metadata.query_id): the groups of query_groups are shuffled with
    random.Random(seed) and taken in that order while their screens fit in N (a group that does not fit is passed
    over and the next tried), so the study holds at most N items and every item of a query drawn is on one of its
    screens. Item unit: N screens drawn with random.Random(seed).sample, as annotator.tasks.base.seeded_sample does.
    With --stratify or --balance FIELD (annotator.tasks.strata), drawn per value of the field in the same units, and
    the record adds "strata". Raises PrefvalError for N <= 0, when no group fits in N, and as strata does."""
    unit = option(spec, "sample_unit", SAMPLE_UNITS, "query")
    if spec.sample is None:
        return screens, None
    if spec.sample <= 0:
        raise PrefvalError("--sample must be positive")
    n = spec.sample
    from annotator.tasks.strata import spec_rule

    rule = spec_rule(spec)
    if n >= len(screens) and (rule is None or rule[0] == "stratify"):
        return screens, None
    with_queries = any(query_id(it) is not None for s in screens for it in [s.item, *s.copies])
    if rule is not None:
        return _strata(screens, spec, rule, unit == "item" or not with_queries)
    if unit == "item" or not with_queries:
        picked = sorted(random.Random(spec.seed).sample(range(len(screens)), n))
        return [screens[i] for i in picked], {"unit": "item", "items": n}
    groups = query_groups(screens)
    random.Random(spec.seed).shuffle(groups)
    taken: list[int] = []
    n_groups = 0
    for g in groups:
        if len(taken) + len(g) <= n:
            taken += g
            n_groups += 1
    if not taken:
        smallest = min(len(g) for g in groups)
        raise PrefvalError(f"--sample {n} holds no whole query (the smallest takes {smallest} items: a query's MCQ "
                           f"and T/F forms, with the queries that share a screen with them); ask for at least "
                           f"{smallest}, or add --option sample_unit=item")
    chosen = [screens[i] for i in sorted(taken)]
    queries = {q for s in chosen for it in [s.item, *s.copies] for q in [query_id(it)] if q is not None}
    return chosen, {"unit": "query", "queries": len(queries), "groups": n_groups, "items": len(taken)}


def _strata(screens: list[Screen], spec: "StudySpec", rule: tuple[str, str], by_item: bool
            ) -> tuple[list[Screen], dict]:
    """Rule 3 with --stratify or --balance (annotator.tasks.strata): units are screens (by_item) or the groups of
    query_groups (whole queries: a group's size is its screens); a unit's value is that of every item shown on its
    screens, study item and copies. The record adds "strata" (strata.strata_sample's)."""
    from annotator.tasks.strata import strata_sample, unit_values

    groups = [[i] for i in range(len(screens))] if by_item else query_groups(screens)
    units = [[it for i in g for it in (screens[i].item, *screens[i].copies)] for g in groups]
    dataset = spec.datasets[0] if spec.datasets else "the dataset"
    values = unit_values(units, rule[1], rule[0], dataset)
    picked, record = strata_sample(values, [len(g) for g in groups], spec.sample, spec.seed, rule[0], rule[1],
                                   "screen" if by_item else "query")
    chosen_idx = sorted(i for gi in picked for i in groups[gi])
    chosen = [screens[i] for i in chosen_idx]
    if by_item:
        return chosen, {"unit": "item", "items": len(chosen), "strata": record}
    queries = {q for s in chosen for it in [s.item, *s.copies] for q in [query_id(it)] if q is not None}
    return chosen, {"unit": "query", "queries": len(queries), "groups": len(picked), "items": len(chosen),
                    "strata": record}


def study_items(task: "TaskType", store: "Store", spec: "StudySpec", items: list[Item]
                ) -> tuple[list[Screen], dict[str, Any]]:
    """The three rules in turn over the items a task accepts: (the study's screens in dataset order, the records
    to store in the study's settings: missing_context, identical_on_screen, sampled, each only when it applied).
    Raises PrefvalError as missing_context and sample do, and when no item is left."""
    items, lacking = missing_context(task, spec, items)
    notes: dict[str, Any] = {}
    if lacking:
        notes["missing_context"] = lacking
    if not items:
        raise PrefvalError(f"study '{spec.name}' would have no items: every item lacks its conversation "
                           "(--option missing_context=drop left them all out)")
    merge = option(spec, "identical_screens", ("merge", "keep"), "merge")
    screens = distinct_on_screen(task, store, items) if merge == "merge" else [Screen(it) for it in items]
    record = screens_record(screens)
    if record["copies"]:
        notes["identical_on_screen"] = record
    screens, sampled = sample(screens, spec)
    if sampled:
        notes["sampled"] = sampled
        if record["copies"]:  # the copies of the screens drawn
            notes["identical_on_screen"] = {**screens_record(screens), "in_dataset": record["copies"]}
    return screens, notes


def created_lines(settings: dict[str, Any], asked: int | None) -> list[str]:
    """The lines `prefval study create` says about the rules (settings as stored), in rule order; [] when none
    applied."""
    out = []
    lacking = settings.get("missing_context")
    if lacking:
        out.append(f"{lacking['items']} item(s) lack their conversation: "
                   + ("kept, shown without it (--option missing_context=keep)" if lacking["rule"] == "keep"
                      else "left out (--option missing_context=drop)"))
    sampled = settings.get("sampled")
    if sampled and sampled.get("unit") == "query":
        out.append(f"--sample {asked}: {sampled['items']} items holding {sampled['queries']} whole queries (each "
                   "query's MCQ and T/F forms together, with the queries that share a screen with them, so that "
                   "`prefval release` can write them in RealPref's layout; --option sample_unit=item samples "
                   "items one by one)")
    if sampled and sampled.get("strata"):
        from annotator.tasks.strata import strata_line

        out.append(strata_line(sampled["strata"]))
    same = settings.get("identical_on_screen")
    if same and same.get("copies"):
        other = (f"; {same['other_key']} of them have another key than the item kept (the same screen scored "
                 "against another answer): not released with its verdict" if same.get("other_key") else "")
        out.append(f"{same['copies']} item(s) identical on screen to another were kept once ({same['screens']} "
                   f"screens): each distinct screen is one item of the study and one trial of its tests{other}; "
                   "--option identical_screens=keep keeps every copy")
    return out


def screen_copies_figure(settings: dict[str, Any]):
    """The figure that says how many items were kept once as identical on screen (reports.figures.Figure), or
    None when the study kept none."""
    from reports.figures import Figure

    same = settings.get("identical_on_screen") or {}
    if not same.get("copies"):
        return None
    other = f"; {same['other_key']} of them with another key" if same.get("other_key") else ""
    return Figure(key="identical_on_screen", label="items identical on screen to another, kept once",
                  value=int(same["copies"]), n=None,
                  note=f"at study creation; {same['screens']} screens had copies{other}; every figure counts each "
                       "distinct screen once")
