"""Keep/drop verdicts of persona_filter studies and the chaining of filtering rounds (RealPref, appendix G.1).

RealPref filters generated records in rounds: persona sentences (150 -> 137), the profiles built from the kept
ones (-> 100), then the life events and preferences generated per kept profile. A later round is a study created
with `--from-study EARLIER`; its units are built from the records the earlier study KEPT, in one of two modes:

- chain=same: the kept records themselves, filtered again (a second plausibility check of the same items);
- chain=children: the records of `--dataset D` whose payload parent_external_id (or, when that is empty, whose
  payload profile) equals the external id of a kept record of the earlier study (profiles of kept personas,
  events/preferences of kept profiles). The parent record is remembered in the unit's extra["parent_item"]
  so the screen can show it as the profile.

A record's verdict comes from the CURRENT answers of its study (one per annotator):
- rule "majority" (default): kept when more than half of the answers are keep (a tie is not a keep);
- rule "unanimous": kept when every answer is keep.
A record without any answer has no verdict (open) and is never carried into a later round.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from storage.errors import PrefvalError
from storage.models import Item

RULES = ("majority", "unanimous")
CHAIN_MODES = ("same", "children")
TASK_NAME = "persona_filter"


def verdict(decisions: Sequence[str], rule: str = "majority") -> str | None:
    """"keep", "drop" or None (no answer) for one record.

    decisions: the current "keep"/"drop" answers of the record, one per annotator. rule: see the module
    docstring. Raises ValueError for an unknown rule.
    """
    if rule not in RULES:
        raise ValueError(f"unknown keep rule {rule!r} (use {' or '.join(RULES)})")
    if not decisions:
        return None
    keeps = sum(1 for d in decisions if d == "keep")
    if rule == "unanimous":
        return "keep" if keeps == len(decisions) else "drop"
    return "keep" if 2 * keeps > len(decisions) else "drop"


def study_verdicts(store, study_name: str, rule: str) -> tuple[Any, list[Item], dict[str, str | None]]:
    """The earlier study, its items in study order, and item id -> verdict under `rule`.

    Raises PrefvalError when the study is unknown or is not a persona_filter study.
    """
    study = store.get_study(study_name)
    if study.task_type != TASK_NAME:
        raise PrefvalError(f"--from-study {study_name}: a {study.task_type} study, not a {TASK_NAME} study")
    units = store.units(study.id)
    items = store.get_items([u.item_id for u in units])
    unit_item = {u.id: u.item_id for u in units}
    decisions: dict[str, list[str]] = {u.item_id: [] for u in units}
    for a in store.current_annotations(study.id):
        if a.answer and a.answer.get("decision") in ("keep", "drop"):
            decisions[unit_item[a.unit_id]].append(a.answer["decision"])
    return study, [items[u.item_id] for u in units], {i: verdict(d, rule) for i, d in decisions.items()}


def chain_stages(store, study_name: str, rule: str, allow_open: bool) -> tuple[list[dict], list[Item], Any]:
    """The funnel up to and including the earlier study, the records it kept, and the earlier study.

    Returns (stages, kept items in study order, study). A stage is {"study", "records", "decided", "kept",
    "rule", "mode"} (mode: how that study chose its records: None for a first round, "same" or "children");
    the earlier study's own recorded stages (settings["chain"]) come first. Raises PrefvalError when records
    of the earlier study have no answer yet (unless allow_open) or when it kept nothing.
    """
    study, items, verdicts = study_verdicts(store, study_name, rule)
    open_n = sum(1 for v in verdicts.values() if v is None)
    if open_n and not allow_open:
        raise PrefvalError(f"--from-study {study_name}: {open_n} of {len(items)} records have no answer yet "
                           "(finish that round, or pass --option allow_open=1 to treat them as not kept)")
    kept = [it for it in items if verdicts[it.id] == "keep"]
    if not kept:
        raise PrefvalError(f"--from-study {study_name}: no record was kept (rule {rule})")
    stages = list(study.settings.get("chain", []))
    stages.append({"study": study.name, "records": len(items), "decided": len(items) - open_n,
                   "kept": len(kept), "rule": rule, "mode": study.settings.get("chain_mode")})
    return stages, kept, study


def children_of(candidates: list[Item], kept: list[Item]) -> list[tuple[Item, Item]]:
    """(child, parent) for each candidate whose payload parent_external_id — or profile, when that is empty —
    is the external id of a kept record. Candidates keep their dataset order."""
    by_ext = {it.external_id: it for it in kept}
    out = []
    for it in candidates:
        ref = it.payload.get("parent_external_id") or it.payload.get("profile")
        if ref and ref in by_ext:
            out.append((it, by_ext[ref]))
    return out
