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
from typing import TYPE_CHECKING, Any, Callable

from reports.figures import Table
from reports.stats import cohen_kappa, majority_vote
from reports.study_data import StudyData

if TYPE_CHECKING:
    from reports.study_table import StudyTable

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
    """The median of seconds per item (s), unrounded: the table's formatter rounds it once, as it does the fastest
    time beside it; None without timings."""
    return statistics.median(secs) if secs else None


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


def _mixed_scale(pairs: list[tuple]) -> list | None:
    """The labels of (own, reference) pairs as a declared scale (first-seen order) when they mix numbers and text,
    e.g. MCQ's option indexes and "cant_tell" (reports.stats refuses to order such labels by itself; Cohen's kappa
    without weights does not depend on the order); None otherwise, so that the labels are read as before."""
    from reports.stats._prep import is_missing

    from itertools import chain

    labels = [x for x in dict.fromkeys(chain.from_iterable(pairs)) if not is_missing(x)]
    nums = [isinstance(x, (int, float)) for x in labels]
    return labels if any(nums) and not all(nums) else None


def per_annotator_table(data: StudyData, min_seconds: float = DEFAULT_MIN_SECONDS,
                        label_fn: Callable[[dict], Any] | None = None,
                        check_fn: Callable[[Any, dict], bool | None] | None = None,
                        group_field: str | None = None) -> Table:
    """One row per annotator with a current answer or a skip: annotator, kind, items done, skipped, median
    seconds, too fast (count), agreement with the majority of the others, units compared, kappa vs that majority,
    then fastest seconds, the share of answers too fast, attention-check accuracy and the number of checks
    answered (check_fn(item, answer) -> correct or None, from the task), and flags: the study's thresholds
    (quality_thresholds) an annotator misses, and "excluded: reason" for an annotator left out of the figures.

    data: the study's StudyData (times per item and `decided` come from the log, read with the answers). Cells
    are None where a value is undefined (no timing, no unit with a majority of others); the kappa column then
    says why in words. group_field: an item payload field (mcq: "fmt") whose values are never pooled in one
    kappa: an annotator whose compared items span several values gets one kappa per value, in words
    ("MCQ 0.211 (n=9); T/F 0.077 (n=7)"); agreement (a share) is over all compared items.
    """
    label = label_fn or default_label
    per_item = seconds_per_item(data)
    labels: dict[str, dict[str, Any]] = {}  # unit -> annotator id -> label
    mine_of: dict[str, list] = {}  # annotator id -> their current answers
    skips: dict[str, int] = {}
    for a in data.answers:
        labels.setdefault(a.unit_id, {})[a.annotator_id] = label(a.answer or {})
        mine_of.setdefault(a.annotator_id, []).append(a)
    for a in data.skipped:
        skips[a.annotator_id] = skips.get(a.annotator_id, 0) + 1
    items_by_unit = {u.id: data.items[u.item_id] for u in data.check_units}
    check_rows: dict[str, list[bool]] = {}
    if check_fn is not None:
        for a in data.check_answers:
            ok = check_fn(items_by_unit[a.unit_id], a.answer or {})
            if ok is not None:
                check_rows.setdefault(a.annotator_id, []).append(ok)
    pairs_of: dict[str, list[tuple]] = {}
    for aid, mine in mine_of.items():
        pairs = pairs_of[aid] = []
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
                group = data.items[a.item_id].payload.get(group_field) if group_field else None
                pairs.append((labels[a.unit_id][aid], maj, group))
    out_done: dict[str, int] = {}
    for a in data.excluded_answers:
        out_done[a.annotator_id] = out_done.get(a.annotator_id, 0) + 1
    out_ids = {i for i, a in data.annotators.items() if a.name in data.excluded}
    out_skips: dict[str, int] = {}
    check_ids = {u.id for u in data.check_units}
    for a in data.all_skipped:
        if a.annotator_id in out_ids and a.unit_id not in check_ids:
            out_skips[a.annotator_id] = out_skips.get(a.annotator_id, 0) + 1
    return _table(data.study, data.annotators, data.excluded, data.decided, min_seconds, per_item,
                  {aid: len(m) for aid, m in mine_of.items()}, skips, check_rows, pairs_of,
                  excluded_work=(out_done, out_skips, seconds_per_item(data, excluded_too=True)))


#: how a group value of an mcq-family item is named in the kappa cell
GROUP_WORDS = {"tf": "T/F", "mcq": "MCQ", None: "MCQ"}


def _kappa_cell(pairs: list[tuple]) -> Any:
    """Cohen's kappa (Cohen 1960) of (own, reference, group) pairs against the majority of the others: the value
    (or why it is undefined, in words) when every pair is of one group; else one kappa per group, never pooled, as
    text "MCQ 0.211 (n=9); T/F 0.077 (n=7)" (groups in GROUP_WORDS order, then by name)."""
    by_group: dict[Any, list[tuple]] = {}
    for own, ref, group in pairs:
        by_group.setdefault(group if group != "mcq" else None, []).append((own, ref))

    def one(ps):
        k = cohen_kappa(ps, categories=_mixed_scale(ps))
        return k.value if k.value is not None else k.note

    if len(by_group) == 1:
        return one(next(iter(by_group.values())))
    order = sorted(by_group, key=lambda g: (g is not None, str(g)))
    parts = []
    for g in order:
        v = one(by_group[g])
        text = f"{v:.3f}" if isinstance(v, float) else str(v)
        parts.append(f"{GROUP_WORDS.get(g, g)} {text} (n={len(by_group[g])})")
    return "; ".join(parts)


def _table(study, annotators, excluded, decided, min_seconds, per_item, n_mine, skips, check_rows, pairs_of,
           excluded_work=({}, {}, {})):
    """The table from each annotator's seconds per item, answer count, skips, check results and (own label,
    reference label) pairs: shared by per_annotator_table and per_annotator_table_columns. excluded_work: the
    work of annotators excluded from the study (answers, skips by annotator id, and seconds per item of everyone,
    excluded ones included): their rows show what they really did, flagged "excluded", while the too-fast
    threshold and every figure stay computed without them."""
    out_done, out_skips, all_secs = excluded_work
    human_ids = {i for i, a in annotators.items() if a.is_person}
    human_secs = [s for aid, secs in per_item.items() if aid in human_ids for s in secs]
    threshold = too_fast_threshold(human_secs, min_seconds)
    thresholds = quality_thresholds(study.settings)
    excluded_ids = {i for i, a in annotators.items() if a.name in excluded}
    ids = sorted(set(n_mine) | set(skips) | set(check_rows) | (excluded_ids & decided),
                 key=lambda i: annotators[i].name)
    rows = []
    for aid in ids:
        secs = all_secs.get(aid, []) if aid in excluded_ids else per_item.get(aid, [])
        pairs = pairs_of.get(aid, [])
        agree = sum(x == y for x, y, _ in pairs) / len(pairs) if pairs else None
        kappa = _kappa_cell(pairs) if pairs else None
        ann = annotators[aid]
        fast = sum(1 for s in secs if s < threshold)
        fast_share = fast / len(secs) if secs else None
        checks = check_rows.get(aid, [])
        check_acc = sum(checks) / len(checks) if checks else None
        flags = []
        if check_acc is not None and check_acc < thresholds["min_check_accuracy"]:
            flags.append(f"attention checks {check_acc:.2f} < {thresholds['min_check_accuracy']:g}")
        if fast_share is not None and ann.is_person and fast_share > thresholds["max_too_fast_share"]:
            flags.append(f"too fast {fast_share:.2f} > {thresholds['max_too_fast_share']:g}")
        if agree is not None and "min_agreement" in thresholds and agree < thresholds["min_agreement"]:
            flags.append(f"agreement {agree:.2f} < {thresholds['min_agreement']:g}")
        if ann.name in excluded:
            flags.append(f"excluded: {excluded[ann.name]}")
        done = out_done.get(aid, 0) if aid in excluded_ids else n_mine.get(aid, 0)
        skipped = out_skips.get(aid, 0) if aid in excluded_ids else skips.get(aid, 0)
        rows.append([ann.name, ann.kind, done, skipped,
                     median_seconds(secs), fast,
                     agree, len(pairs), kappa, min(secs) if secs else None, fast_share, check_acc,
                     len(checks), "; ".join(flags) or None])
    note = (f"too fast = answered in under {threshold:.1f} s (max of {min_seconds:g} s and a tenth of the median "
            "human time per item); seconds = time to the first complete answer of each item; agreement = share "
            "of answers equal to the majority of the other annotators on the same item, or to the adjudicated answer "
            "where there is one (items without such a majority, or excluded by adjudication, left out); kappa = Cohen's kappa against that majority (T/F and MCQ items apart, never pooled); attention checks = share of the "
            "keyed check items answered correctly; flags = thresholds missed (study options min_check_accuracy, "
            "max_too_fast_share, min_agreement); an excluded annotator's answers are left out of every figure (their row "
            "shows the items they did and their times, flagged excluded, with no agreement).")
    return Table(key="per_annotator", title="per annotator",
                 columns=["annotator", "kind", "items done", "skipped", "median s/item", "too fast",
                          "agreement with others", "items compared", "kappa vs others", "fastest s/item",
                          "share too fast", "attention checks", "checks answered", "flags"],
                 rows=rows, note=note)


def seconds_per_item_columns(t: "StudyTable", excluded_too: bool = False) -> dict[str, list[float]]:
    """seconds_per_item for a reports.study_table.StudyTable: annotator id -> the first_seconds of each current
    answer that has one (attention checks left out; excluded_too adds the excluded annotators' answers)."""
    import numpy as np

    out: dict[str, list[float]] = {}
    groups = [(t.annotator, t.first_seconds)] + ([(t.excluded_annotator, t.excluded_first_seconds)]
                                                  if excluded_too else [])
    for ann, secs in groups:
        timed = ~np.isnan(secs)
        ann, secs = ann[timed], secs[timed]
        for k in np.unique(ann).tolist():
            out.setdefault(t.annotator_ids[k], []).extend(secs[ann == k].tolist())
    return out


MAX_VECTOR_LABELS = 16  # up to this many distinct answer labels, majorities are counted in a units x labels matrix
_CHUNK = 65_536  # answers per block when finding the majority of the others (bounds the temporary arrays)


def _majority_of_others(unit, own, n_units: int, n_labels: int):
    """Per answer: the label id (into 0..n_labels-1) of the plurality of the OTHER answers on its unit, -1 for no
    majority (a tie, or no other labelled answer): reports.stats.majority_vote over the others' labels. unit, own:
    int arrays per answer (own -1 for a missing label)."""
    import numpy as np

    ok = own >= 0
    counts = np.bincount(unit[ok] * n_labels + own[ok], minlength=n_units * n_labels).reshape(n_units, n_labels)
    out = np.full(len(unit), -1, dtype=np.int64)
    for start in range(0, len(unit), _CHUNK):
        u, o = unit[start:start + _CHUNK], own[start:start + _CHUNK]
        c = counts[u].copy()
        mine = o >= 0
        c[np.flatnonzero(mine), o[mine]] -= 1
        top = c.max(axis=1)
        unique = (c == top[:, None]).sum(axis=1) == 1
        out[start:start + _CHUNK] = np.where((top > 0) & unique, c.argmax(axis=1), -1)
    return out


def per_annotator_table_columns(t: "StudyTable", min_seconds: float = DEFAULT_MIN_SECONDS,
                                label_fn: Callable[[dict], Any] | None = None,
                                check_fn: Callable[[Any, dict], bool | None] | None = None,
                                group_field: str | None = None) -> Table:
    """per_annotator_table from a reports.study_table.StudyTable (the same table, the same rules; see there), in
    memory that is a few words per answer: labels are taken once per distinct answer, and the majority of the
    others on each unit comes from a units x labels count matrix (MAX_VECTOR_LABELS labels at most; more distinct
    labels, e.g. free-text answers, are counted unit by unit)."""
    import numpy as np

    from reports.stats._prep import is_missing

    label = label_fn or default_label
    code_label = [label(a or {}) for a in t.answers]
    lab_id: dict[Any, int] = {}
    lab_values: list[Any] = []
    code_lab = np.full(len(code_label), -1, dtype=np.int64)
    for c, v in enumerate(code_label):
        if not is_missing(v):
            if v not in lab_id:
                lab_id[v] = len(lab_values)
                lab_values.append(v)
            code_lab[c] = lab_id[v]
    own = code_lab[t.code] if len(t.code) else np.zeros(0, dtype=np.int64)
    if len(lab_values) <= MAX_VECTOR_LABELS:
        maj = _majority_of_others(t.unit, own, t.n_units, max(len(lab_values), 1))
    else:  # answers are sorted by unit: one unit's answers at a time
        maj = np.full(len(own), -1, dtype=np.int64)
        bounds = np.flatnonzero(np.diff(t.unit)) + 1
        for lo, hi in zip(np.r_[0, bounds].tolist(), np.r_[bounds, len(own)].tolist()):
            labs = own[lo:hi].tolist()
            for j in range(hi - lo):
                others = [lab_values[x] if x >= 0 else None for i, x in enumerate(labs) if i != j]
                m = majority_vote(others) if others else None
                maj[lo + j] = -1 if m is None else lab_id[m]
    ids = t.annotator_ids
    n_mine = {ids[k]: n for k, n in enumerate(np.bincount(t.annotator, minlength=len(ids)).tolist()) if n}
    skips = {ids[k]: n for k, n in enumerate(np.bincount(t.skip_annotator, minlength=len(ids)).tolist()) if n}
    groups = t.values.get(group_field) if group_field else None
    pairs_of: dict[str, list[tuple]] = {}
    for k in np.unique(t.annotator).tolist():
        sel = t.annotator == k
        pairs = pairs_of[ids[k]] = []
        for u, c, m in zip(t.unit[sel].tolist(), t.code[sel].tolist(), maj[sel].tolist()):
            adj = t.adjudications.get(u)
            if adj is not None and adj.kind == "exclude":
                continue
            if adj is not None and adj.kind == "final":
                ref = label(adj.answer or {})
                if ref is not None:
                    pairs.append((code_label[c], ref, groups[u] if groups is not None else None))
            elif m >= 0:
                pairs.append((code_label[c], lab_values[m], groups[u] if groups is not None else None))
    check_rows: dict[str, list[bool]] = {}
    if check_fn is not None:
        for item, aid, answer in t.check_answers:
            ok = check_fn(item, answer or {})
            if ok is not None:
                check_rows.setdefault(aid, []).append(ok)
    out_done = {ids[k]: n for k, n in enumerate(np.bincount(t.excluded_annotator, minlength=len(ids)).tolist())
                if n}
    out_skips = {ids[k]: n for k, n in enumerate(np.bincount(t.excluded_skip_annotator,
                                                             minlength=len(ids)).tolist()) if n}
    return _table(t.study, t.annotators, t.excluded, t.decided, min_seconds, seconds_per_item_columns(t),
                  n_mine, skips, check_rows, pairs_of,
                  excluded_work=(out_done, out_skips, seconds_per_item_columns(t, excluded_too=True)))
