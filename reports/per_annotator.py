"""The per-annotator section of a report: work done, speed, too-fast answers and agreement with the others.

Rules (stated in the table note):
- items done: the annotator's current "answered" decisions in the study.
- seconds per item: for each unit, the `seconds` of the annotator's FIRST "answered" row in the log (time from
  the item appearing to the key that completed it; multi-step items count all their steps). LLM judges have none.
- too fast: answers whose seconds are below max(min_seconds, 0.1 x the median seconds of all human answers in
  the study); min_seconds defaults to 2 s.
- agreement with the rest: on each unit the annotator answered, the majority (plurality, tie -> no majority) of
  the OTHER annotators' current answers; share of the annotator's answers equal to it (units without a majority
  of others are left out); where an adjudication is in force the reference is its final answer instead, and an
  item excluded by adjudication is left out (issue 9); and Cohen's kappa (Cohen 1960) between the annotator and that majority when defined.
  Two answers are equal when their label is equal: label_fn(answer) when the caller gives one, else the whole
  answer dict without display-only keys (DISPLAY_KEYS, e.g. the letter as shown after shuffling).
"""
from __future__ import annotations

import json
import statistics
from typing import Any, Callable

from reports.figures import Table
from reports.stats import cohen_kappa, majority_vote
from reports.study_data import StudyData

DISPLAY_KEYS = frozenset({"shown", "shown_left", "pressed", "shown_order", "display_order", "order", "position"})
DEFAULT_MIN_SECONDS = 2.0


def default_label(answer: dict[str, Any] | None) -> str | None:
    """The answer as a comparable label: canonical JSON without DISPLAY_KEYS (None for no answer)."""
    if not answer:
        return None
    return json.dumps({k: v for k, v in answer.items() if k not in DISPLAY_KEYS}, sort_keys=True,
                      ensure_ascii=False, default=str)


def seconds_per_item(data: StudyData, excluded_too: bool = False) -> dict[str, list[float]]:
    """annotator id -> the seconds of each item the annotator currently has an answer on (AnswerRow.first_seconds:
    the seconds of the annotator's FIRST "answered" row on the unit that has seconds; items without, e.g.
    imported LLM judgments, are left out): the one definition of "time per item" behind `prefval status` and the
    report's per-annotator table. Attention checks are left out; excluded_too adds the annotators excluded from
    the figures (`prefval status` shows their median too)."""
    out: dict[str, list[float]] = {}
    for a in data.answers + data.excluded_answers if excluded_too else data.answers:
        if a.first_seconds is not None:
            out.setdefault(a.annotator_id, []).append(a.first_seconds)
    return out


def median_seconds(secs: list[float]) -> float | None:
    """The median of seconds per item, to 0.1 s; None without timings."""
    return round(statistics.median(secs), 1) if secs else None


def too_fast_threshold(seconds: list[float], min_seconds: float = DEFAULT_MIN_SECONDS) -> float:
    """max(min_seconds, 0.1 x median(seconds)); min_seconds alone when there are no timings."""
    return max(min_seconds, 0.1 * statistics.median(seconds)) if seconds else min_seconds


#: default quality thresholds; a study sets its own with --option min_check_accuracy=..., max_too_fast_share=...,
#: min_agreement=... (min_agreement has no default: agreement depends too much on the task to guess one)
DEFAULT_THRESHOLDS = {"min_check_accuracy": 0.8, "max_too_fast_share": 0.2}


def quality_thresholds(settings: dict[str, Any]) -> dict[str, float]:
    """The thresholds below which (or above, for too-fast answers) an annotator is flagged: DEFAULT_THRESHOLDS
    updated with the study's --option values of the same names. Raises ValueError for a non-number."""
    out = dict(DEFAULT_THRESHOLDS)
    for key in ("min_check_accuracy", "max_too_fast_share", "min_agreement"):
        value = (settings.get("options") or {}).get(key)
        if value is not None:
            out[key] = float(value)
    return out


def per_annotator_table(data: StudyData, min_seconds: float = DEFAULT_MIN_SECONDS,
                        label_fn: Callable[[dict], Any] | None = None,
                        check_fn: Callable[[Any, dict], bool | None] | None = None) -> Table:
    """One row per annotator with a current answer or a skip: annotator, kind, items done, skipped, median
    seconds, too fast (count), agreement with the majority of the others, units compared, kappa vs that majority,
    then fastest seconds, the share of answers too fast, attention-check accuracy and the number of checks
    answered (check_fn(item, answer) -> correct or None, from the task), and flags: the study's thresholds
    (quality_thresholds) an annotator misses, and "excluded: reason" for an annotator left out of the figures.

    data: the study's StudyData (times per item and `decided` come from the log, read with the answers). Cells
    are None where a value is undefined (no timing, no unit with a majority of others); the kappa column then
    says why in words.
    """
    label = label_fn or default_label
    per_item = seconds_per_item(data)
    human_ids = {i for i, a in data.annotators.items() if a.kind == "human"}
    human_secs = [s for aid, secs in per_item.items() if aid in human_ids for s in secs]
    threshold = too_fast_threshold(human_secs, min_seconds)
    labels: dict[str, dict[str, Any]] = {}  # unit -> annotator id -> label
    mine_of: dict[str, list] = {}  # annotator id -> their current answers
    skips: dict[str, int] = {}
    for a in data.answers:
        labels.setdefault(a.unit_id, {})[a.annotator_id] = label(a.answer or {})
        mine_of.setdefault(a.annotator_id, []).append(a)
    for a in data.skipped:
        skips[a.annotator_id] = skips.get(a.annotator_id, 0) + 1
    thresholds = quality_thresholds(data.study.settings)
    items_by_unit = {u.id: data.items[u.item_id] for u in data.check_units}
    check_rows: dict[str, list[bool]] = {}
    if check_fn is not None:
        for a in data.check_answers:
            ok = check_fn(items_by_unit[a.unit_id], a.answer or {})
            if ok is not None:
                check_rows.setdefault(a.annotator_id, []).append(ok)
    excluded_ids = {i for i, a in data.annotators.items() if a.name in data.excluded}
    ids = sorted(set(mine_of) | set(skips) | set(check_rows) | (excluded_ids & data.decided),
                 key=lambda i: data.annotators[i].name)
    rows = []
    for aid in ids:
        mine = mine_of.get(aid, [])
        secs = per_item.get(aid, [])
        pairs = []
        for a in mine:
            adj = data.adjudications.get(a.unit_id)
            if adj is not None and adj.kind == "exclude":
                continue  # excluded by adjudication: no reference answer
            if adj is not None and adj.kind == "final":
                maj = label(adj.answer or {})
            else:
                others = [lab for oid, lab in labels.get(a.unit_id, {}).items() if oid != aid]
                maj = majority_vote(others) if others else None
            if maj is not None:
                pairs.append((labels[a.unit_id][aid], maj))
        agree = sum(x == y for x, y in pairs) / len(pairs) if pairs else None
        if pairs:
            k = cohen_kappa(pairs)
            kappa = k.value if k.value is not None else k.note
        else:
            kappa = None
        ann = data.annotators[aid]
        fast = sum(1 for s in secs if s < threshold)
        fast_share = fast / len(secs) if secs else None
        checks = check_rows.get(aid, [])
        check_acc = sum(checks) / len(checks) if checks else None
        flags = []
        if check_acc is not None and check_acc < thresholds["min_check_accuracy"]:
            flags.append(f"attention checks {check_acc:.2f} < {thresholds['min_check_accuracy']:g}")
        if fast_share is not None and ann.kind == "human" and fast_share > thresholds["max_too_fast_share"]:
            flags.append(f"too fast {fast_share:.2f} > {thresholds['max_too_fast_share']:g}")
        if agree is not None and "min_agreement" in thresholds and agree < thresholds["min_agreement"]:
            flags.append(f"agreement {agree:.2f} < {thresholds['min_agreement']:g}")
        if ann.name in data.excluded:
            flags.append(f"excluded: {data.excluded[ann.name]}")
        rows.append([ann.name, ann.kind, len(mine), skips.get(aid, 0),
                     median_seconds(secs), fast,
                     agree, len(pairs), kappa, round(min(secs), 1) if secs else None, fast_share, check_acc,
                     len(checks), "; ".join(flags) or None])
    note = (f"too fast = answered in under {threshold:.1f} s (max of {min_seconds:g} s and a tenth of the median "
            "human time per item); seconds = time to the first complete answer of each item; agreement = share "
            "of answers equal to the majority of the other annotators on the same item, or to the adjudicated answer "
            "where there is one (items without such a majority, or excluded by adjudication, left out); kappa = Cohen's kappa against that majority; attention checks = share of the "
            "keyed check items answered correctly; flags = thresholds missed (study options min_check_accuracy, "
            "max_too_fast_share, min_agreement); an excluded annotator's answers are left out of every figure.")
    return Table(key="per_annotator", title="per annotator",
                 columns=["annotator", "kind", "items done", "skipped", "median s/item", "too fast",
                          "agreement with others", "items compared", "kappa vs others", "fastest s/item",
                          "share too fast", "attention checks", "checks answered", "flags"],
                 rows=rows, note=note)
