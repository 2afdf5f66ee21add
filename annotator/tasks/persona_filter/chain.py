"""Keep/drop verdicts of persona_filter studies and the chaining of filtering rounds (RealPref, appendix G.1).

RealPref filters generated records in rounds: persona sentences (150 -> 137), the profiles built from the kept
ones (-> 100), then the life events and preferences generated per kept profile. A later round is a study created
with `--from-study EARLIER`; its units are built from the records the earlier study KEPT, in one of two modes:

- chain=same: the kept records themselves, filtered again (a second plausibility check of the same items);
- chain=children: the records of `--dataset D` whose payload parent_external_id (or, when that is empty, whose
  payload profile) equals the external id of a kept record of the earlier study (profiles of kept personas,
  events/preferences of kept profiles). The parent record is remembered in the unit's extra["parent_item"]
  so the screen can show it as the profile.

A record's outcome in a round is the round's own (annotator.tasks.outcome, TaskType.outcomes: the people's current
answers, the record's quota of annotators, adjudications), by the round's keep_rule over the people's answers:
- rule "majority" (default): kept when more than half of the answers are keep, dropped when more than half are
  drop; a tie (as many keep as drop) is undecided and needs adjudication;
- rule "unanimous": kept when every answer is keep, else dropped.
A later round takes the records its earlier round KEPT (passed); a record the earlier round has not decided (no
answer, too few answers, a tie waiting for adjudication) is never carried into it.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from storage.errors import PrefvalError
from storage.models import Item

if TYPE_CHECKING:  # pragma: no cover
    from annotator.tasks.outcome import Outcome

RULES = ("majority", "unanimous")
CHAIN_MODES = ("same", "children")
TASK_NAME = "persona_filter"


def keep_vote(decisions: Sequence[str], rule: str = "majority") -> "Outcome":
    """The vote outcome of one record from its people's current "keep"/"drop" decisions (at least one), under
    `rule` (module docstring): passed (kept), failed (dropped) or needs_adjudication (a majority tie). Raises
    ValueError for an unknown rule."""
    from annotator.tasks.outcome import failed, needs_adjudication, passed

    if rule not in RULES:
        raise ValueError(f"unknown keep rule {rule!r} (use {' or '.join(RULES)})")
    keeps = sum(1 for d in decisions if d == "keep")
    drops = len(decisions) - keeps
    votes = f"{keeps} keep, {drops} drop"
    if rule == "unanimous":
        return passed(f"kept (unanimous: {votes})", label="keep") if keeps == len(decisions) else \
            failed(f"dropped (unanimous: {votes})", label="drop")
    if 2 * keeps > len(decisions):
        return passed(f"kept (majority: {votes})", label="keep")
    if 2 * keeps == len(decisions):
        return needs_adjudication(f"{votes}: a tie (majority)")
    return failed(f"dropped (majority: {votes})", label="drop")


def study_outcomes(store, study_name: str) -> tuple[Any, list[Item], dict[str, "Outcome"]]:
    """The earlier study, its items in study order, and item id -> the item's Outcome in that study (its own
    TaskType.outcomes: the same as its funnel, status, report and release).

    Raises PrefvalError when the study is unknown or is not a persona_filter study.
    """
    from annotator.tasks import get_task
    from reports.study_data import load_study_data

    study = store.get_study(study_name)
    if study.task_type != TASK_NAME:
        raise PrefvalError(f"--from-study {study_name}: a {study.task_type} study, not a {TASK_NAME} study")
    data = load_study_data(store, study_name)
    outcomes = get_task(TASK_NAME).outcomes(data)
    return data.study, [data.items[u.item_id] for u in data.units], {u.item_id: outcomes[u.id] for u in data.units}


def chain_stages(store, study_name: str, allow_open: bool) -> tuple[list[dict], list[Item], Any]:
    """The funnel up to and including the earlier study, the records it kept, and the earlier study.

    Returns (stages, kept items in study order, study). A stage is {"study", "records", "decided", "kept",
    "rule", "mode"} (decided: passed or failed; mode: how that study chose its records: None for a first round,
    "same" or "children"); the earlier study's own recorded stages (settings["chain"]) come first. Raises
    PrefvalError when records of the earlier study are undecided (unless allow_open), naming how many have no
    answer, too few answers or wait for adjudication, or when it kept nothing.
    """
    from annotator.tasks.outcome import NEEDS_ADJUDICATION, OPEN, TOO_FEW, UNDECIDED, tally

    study, items, outcomes = study_outcomes(store, study_name)
    counts = tally(outcomes.values())
    undecided = len(items) - counts["passed"] - counts["failed"]
    rule = study.settings.get("keep_rule", "majority")
    if undecided and not allow_open:
        parts = [f"{counts[OPEN]} have no answer yet" if counts[OPEN] else "",
                 f"{counts[TOO_FEW]} have fewer answers than their quota" if counts[TOO_FEW] else "",
                 f"{counts[NEEDS_ADJUDICATION]} wait for adjudication (`prefval adjudicate {study.name}`)"
                 if counts[NEEDS_ADJUDICATION] else "",
                 f"{counts[UNDECIDED]} are undecided" if counts[UNDECIDED] else ""]
        raise PrefvalError(f"--from-study {study_name}: {undecided} of {len(items)} records are not decided yet: "
                           f"{', '.join(p for p in parts if p)} (finish that round, or pass --option allow_open=1 "
                           "to treat them as not kept)")
    kept = [it for it in items if outcomes[it.id].passed]
    if not kept:
        raise PrefvalError(f"--from-study {study_name}: no record was kept (rule {rule})")
    stages = list(study.settings.get("chain", []))
    stages.append({"study": study.name, "records": len(items), "decided": counts["passed"] + counts["failed"],
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
