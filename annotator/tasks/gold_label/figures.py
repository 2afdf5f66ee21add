"""Gold labels and figures of gold_label studies (BenchPreS, appendix A.2).

Definitions used throughout:
- an item is COMPLETE when it has at least `annotators_per_item` current answers (three by default);
- its gold label is the label all its answers share (unanimity); a complete non-unanimous item has no gold
  label unless an adjudicator set one with `prefval adjudicate` (the adjudications table, read through
  StudyData.adjudications). An adjudication is in force on any item: its final label replaces the votes, an
  exclusion leaves the item without gold;
- a CONTEXT is a (recipient, task) pair; its unanimity rate is the share of its complete items that are
  unanimous. Contexts below the study's context_threshold are listed to drop and their items get no gold
  (BenchPreS kept 39 of 49 candidate contexts, those whose judgements did not vary).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from reports.figures import Figure, FigureSet, Table
from reports.study_data import StudyData

WORDS = {1: "apply", 0: "suppress"}


def unit_votes(data: StudyData) -> dict[str, list[int]]:
    """unit id -> the labels (0/1) of its current answers, in annotator-name order."""
    out: dict[str, list[int]] = {}
    for uid, answers in data.by_unit().items():
        out[uid] = [answers[n]["label"] for n in sorted(answers) if answers[n].get("label") in (0, 1)]
    return out


def _complete(data: StudyData, labels: list[int]) -> bool:
    return len(labels) >= int(data.study.settings.get("annotators_per_item", 3))


def _context(item) -> tuple[str, str]:
    return item.payload["recipient"], item.payload["task"]


def context_unanimity(data: StudyData) -> dict[tuple[str, str], dict[str, Any]]:
    """(recipient, task) -> {"complete", "unanimous", "rate" (None without complete items), "kept"} where kept
    means rate >= settings context_threshold (default 0.9)."""
    threshold = float(data.study.settings.get("context_threshold", 0.9))
    votes = unit_votes(data)
    acc: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for u in data.units:
        ctx = _context(data.items[u.item_id])
        labels = votes[u.id]
        acc[ctx]  # every context appears, even before any answer
        if _complete(data, labels):
            acc[ctx][0] += 1
            acc[ctx][1] += len(set(labels)) == 1
    out = {}
    for ctx, (n, k) in acc.items():
        rate = k / n if n else None
        out[ctx] = {"complete": n, "unanimous": k, "rate": rate, "kept": rate is not None and rate >= threshold}
    return out


#: how an item got its gold label (or why it has none), in the gold table's "decided by" column
UNANIMOUS, ADJUDICATED, EXCLUDED, UNRESOLVED, INCOMPLETE, DROPPED = (
    "unanimous", "adjudicated", "excluded by adjudication", "not unanimous, not adjudicated", "incomplete",
    "context dropped")


#: why an item of a dropped context has no gold label (its outcome's reason)
DROPPED_REASON = "no gold label (its context was dropped for low unanimity)"


def dropped_context_units(data: StudyData) -> list[str]:
    """Ids of the units whose context is judged (it has complete items) and below the study's context_threshold:
    BenchPreS A.2 drops such contexts, so their items get no gold label (GoldLabelTask.study_rule)."""
    contexts = context_unanimity(data)
    return [u.id for u in data.units
            if contexts[_context(data.items[u.item_id])]["rate"] is not None
            and not contexts[_context(data.items[u.item_id])]["kept"]]


def gold_status(data: StudyData, drop_contexts: bool = True) -> dict[str, tuple[int | None, str]]:
    """item external id -> (gold label 1 apply / 0 suppress / None, how: one of UNANIMOUS, ADJUDICATED, EXCLUDED,
    UNRESOLVED, INCOMPLETE, DROPPED), read from the items' outcomes (TaskType.outcomes, annotator.tasks.outcome:
    the same decision status, release and export give).

    When drop_contexts, an item whose context is below the study's context_threshold has no gold whatever decided
    it (DROPPED; BenchPreS A.2 drops such contexts); then an adjudication in force decides (its final label:
    ADJUDICATED, or no label: EXCLUDED); then an item with fewer labels than its quota is INCOMPLETE; a complete
    item's gold is its unanimous label (UNANIMOUS), else none (UNRESOLVED).
    """
    from annotator.tasks import get_task
    from annotator.tasks.outcome import ADJUDICATION, FAILED, NEEDS_ADJUDICATION, OPEN, PASSED, STUDY_RULE, TOO_FEW

    outcomes = get_task(data.study.task_type).outcomes(data, study_rules=drop_contexts)
    out: dict[str, tuple[int | None, str]] = {}
    for u in data.units:
        o = outcomes[u.id]
        ext = data.items[u.item_id].external_id
        if o.decided_by == STUDY_RULE:
            out[ext] = (None, DROPPED)
        elif o.decided_by == ADJUDICATION:
            out[ext] = (o.label, ADJUDICATED) if o.state == PASSED else (None, EXCLUDED)
        elif o.state in (OPEN, TOO_FEW):
            out[ext] = (None, INCOMPLETE)
        elif o.state == PASSED:
            out[ext] = (o.label, UNANIMOUS)
        else:
            assert o.state in (FAILED, NEEDS_ADJUDICATION), o
            out[ext] = (None, UNRESOLVED)
    return out


def gold_labels(data: StudyData, drop_contexts: bool = True) -> dict[str, int | None]:
    """item external id -> gold label 1 (apply) / 0 (suppress), or None (incomplete, not unanimous and not
    adjudicated, excluded by adjudication, or in a dropped context when drop_contexts). See gold_status."""
    return {ext: label for ext, (label, _) in gold_status(data, drop_contexts).items()}


def study_gold_labels(store, study_name: str, drop_contexts: bool = True) -> dict[str, int | None]:
    """gold_labels of the gold_label study named study_name, read from the store with its adjudications.
    Raises PrefvalError for an unknown study."""
    from reports.study_data import load_study_data

    return gold_labels(load_study_data(store, study_name), drop_contexts)


def units_to_adjudicate(data: StudyData) -> list:
    """The units `prefval adjudicate` lists for a gold_label study, in study order: complete items whose labels
    are not unanimous, in contexts the study keeps (an item of a dropped context gets no gold label whatever an
    adjudicator decides, so it is not asked about)."""
    votes = unit_votes(data)
    contexts = context_unanimity(data)
    return [u for u in data.units if _complete(data, votes[u.id]) and len(set(votes[u.id])) > 1
            and contexts[_context(data.items[u.item_id])]["kept"]]


def _adjudication_figures(fs: FigureSet, data: StudyData, status: dict[str, tuple[int | None, str]]) -> None:
    """Items to adjudicate (complete, not unanimous, context kept) split into adjudicated / excluded /
    unresolved, and how often an adjudicated label equals the original strict majority of the annotators."""
    from reports.stats import strict_majority

    votes = unit_votes(data)
    todo = units_to_adjudicate(data)
    n = len(todo)
    how = [status[data.items[u.item_id].external_id][1] for u in todo]
    none = "" if n else "no complete non-unanimous item in a kept context"
    for key, label, want in (("adjudicated", "items adjudicated (final label set)", ADJUDICATED),
                             ("adjudication_excluded", "items excluded by adjudication", EXCLUDED),
                             ("unresolved", "items not unanimous and not adjudicated yet", UNRESOLVED)):
        fs.figures.append(Figure(key=key, label=label, value=how.count(want), n=n, note=none))
    pairs = []
    for u, h in zip(todo, how):
        label = status[data.items[u.item_id].external_id][0]
        majority = strict_majority(votes[u.id])
        if h == ADJUDICATED and majority is not None:
            pairs.append(label == majority)
    fs.figures.append(Figure(key="with_majority", label="adjudicated labels equal to the annotators' majority",
                             value=sum(pairs) / len(pairs) if pairs else None, n=len(pairs),
                             note="" if pairs else "no adjudicated item with a majority label"))


def _candidate_agreement(fs: FigureSet, data: StudyData, gold: dict[str, int | None]) -> None:
    """Percent agreement and Cohen's kappa of gold labels with the items' candidate labels (figures only)."""
    from reports.stats import cohen_kappa, percent_agreement

    pairs = []
    for u in data.units:
        item = data.items[u.item_id]
        cand = item.payload.get("candidate_label")
        g = gold.get(item.external_id)
        if cand is not None and g is not None:
            pairs.append([g, int(cand)])
    if not pairs:
        return
    fs.figures.append(Figure.from_stat("candidate_agreement", "gold vs candidate labels: percent agreement",
                                       percent_agreement(pairs, ci=True)))
    fs.figures.append(Figure.from_stat("candidate_kappa", "gold vs candidate labels: Cohen's kappa",
                                       cohen_kappa(pairs, categories=[0, 1], ci=True)))


def _gold_table(data: StudyData, votes: dict[str, list[int]], status: dict[str, tuple[int | None, str]]) -> Table:
    limit = int(data.study.settings.get("gold_table_max", 200))
    rows = []
    for u in data.units:
        item = data.items[u.item_id]
        label, how = status[item.external_id]
        rows.append([item.external_id, item.payload["recipient"], item.payload["task"], item.payload["attribute"],
                     votes[u.id].count(1), votes[u.id].count(0), how, label])
    note = "" if len(rows) <= limit else f"first {limit} of {len(rows)} items; gold_labels() gives all"
    return Table(key="gold", title="gold labels (1 apply, 0 suppress, - none)" + (f" ({note})" if note else ""),
                 columns=["item", "recipient", "task", "attribute", "apply votes", "suppress votes", "decided by",
                          "gold"],
                 rows=rows[:limit], note=note)


def gold_figures(data: StudyData) -> FigureSet:
    """The figures of a gold study: unanimity, the adjudication of the non-unanimous items (adjudicated,
    excluded, unresolved, agreement with the majority), contexts, categories, agreement, gold table."""
    from reports.stats import fleiss_kappa, gwet_ac1, unanimity_rate

    s = data.study.settings
    fs = FigureSet(study=data.study.name, task=data.study.task_type)
    votes = unit_votes(data)
    complete = [u for u in data.units if _complete(data, votes[u.id])]
    fs.figures.append(Figure(key="complete", label=f"items with all {s.get('annotators_per_item', 3)} labels",
                             value=len(complete), n=len(data.units)))
    unan = unanimity_rate([votes[u.id] for u in complete], ci=True)
    fs.figures.append(Figure.from_stat("unanimity", "unanimous items (share of complete items)", unan))
    fs.figures.append(Figure(key="unanimous", label="unanimous items",
                             value=sum(len(set(votes[u.id])) == 1 for u in complete), n=len(complete)))
    removed_label = ("sent to adjudication (not unanimous)" if s.get("non_unanimous") == "adjudicate"
                     else "removed (not unanimous)")
    fs.figures.append(Figure(
        key="removed", label=removed_label, value=None if unan.value is None else 1 - unan.value,
        ci_low=None if unan.ci_high is None else 1 - unan.ci_high,
        ci_high=None if unan.ci_low is None else 1 - unan.ci_low, n=unan.n_items, note=unan.note))
    raters = data.rater_names()
    by_unit = data.by_unit()
    matrix = [[by_unit[u.id].get(r, {}).get("label") for r in raters] for u in data.units]
    if len(raters) >= 2:
        fs.figures.append(Figure.from_stat("fleiss_kappa", "Fleiss' kappa", fleiss_kappa(matrix, [0, 1], ci=True)))
        fs.figures.append(Figure.from_stat("gwet_ac1", "Gwet's AC1", gwet_ac1(matrix, [0, 1], ci=True)))

    contexts = context_unanimity(data)
    judged = {c: v for c, v in contexts.items() if v["rate"] is not None}
    kept = [c for c, v in judged.items() if v["kept"]]
    threshold = float(s.get("context_threshold", 0.9))
    fs.figures.append(Figure(key="contexts_kept", label=f"contexts kept (unanimity >= {threshold:g}) of those judged",
                             value=len(kept) if judged else None, n=len(judged),
                             note="" if judged else "no context has a complete item yet"))
    ctx_rows = sorted(([r, t, v["complete"], v["unanimous"], v["rate"], "keep" if v["kept"] else "drop"]
                       for (r, t), v in judged.items()), key=lambda row: (row[4], row[0], row[1]))
    fs.tables.append(Table(key="contexts", title="unanimity per context (recipient + task)",
                           columns=["recipient", "task", "complete", "unanimous", "rate", "context"],
                           rows=ctx_rows))
    fs.tables.append(Table(key="contexts_to_drop", title=f"contexts below the threshold {threshold:g} (drop)",
                           columns=["recipient", "task", "complete", "rate"],
                           rows=[[r[0], r[1], r[2], r[4]] for r in ctx_rows if r[5] == "drop"]))

    status = gold_status(data)
    gold = {ext: label for ext, (label, _) in status.items()}
    _adjudication_figures(fs, data, status)
    cat: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for u in complete:
        item = data.items[u.item_id]
        row = cat[item.payload.get("category") or "-"]
        row[0] += 1
        row[1] += len(set(votes[u.id])) == 1
        g = gold.get(item.external_id)
        row[2] += g == 1
        row[3] += g == 0
    fs.tables.append(Table(key="categories", title="unanimity per preference category",
                           columns=["category", "complete", "unanimous", "rate", "gold apply", "gold suppress"],
                           rows=[[c, n, k, k / n, a, z] for c, (n, k, a, z) in sorted(cat.items())]))

    groups: dict[tuple, Counter] = defaultdict(Counter)
    for u in complete:
        item = data.items[u.item_id]
        if contexts[_context(item)]["kept"]:
            groups[(item.payload.get("profile_name"),) + _context(item)][gold.get(item.external_id)] += 1
    n_groups = len(groups)
    for key, g, word in (("mean_apply_per_context", 1, "apply (g=1)"), ("mean_suppress_per_context", 0,
                                                                       "suppress (g=0)")):
        fs.figures.append(Figure(
            key=key, label=f"mean gold {word} labels per (profile, kept context)",
            value=sum(c[g] for c in groups.values()) / n_groups if n_groups else None, n=n_groups,
            note="" if n_groups else "no kept context with a complete item"))
    _candidate_agreement(fs, data, gold)
    fs.tables.append(_gold_table(data, votes, status))
    return fs
