"""Gold labels and figures of gold_label studies (BenchPreS, appendix A.2).

Definitions used throughout:
- an item is COMPLETE when it has at least `annotators_per_item` current answers (three by default);
- its gold label is the label all its answers share (unanimity); a complete non-unanimous item has no gold
  label unless an adjudication study resolved it (then the adjudicators' strict-majority label);
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


def gold_labels(data: StudyData, adjudication: StudyData | None = None,
                drop_contexts: bool = True, overrides: dict[str, int | None] | None = None) -> dict[str, int | None]:
    """item external id -> gold label 1 (apply) / 0 (suppress), or None (incomplete, not unanimous and not
    adjudicated, or in a dropped context when drop_contexts).

    data: a gold_label study. adjudication: its adjudication study (settings adjudication=1), whose labels
    resolve non-unanimous items. Given an adjudication study as `data`, returns its adjudicated labels
    (strict majority of its answers; None when unanswered or tied). overrides: item external id -> the label
    an adjudicator set with `prefval adjudicate` (None: excluded); it replaces the label from the votes (a dropped
    context still gives None).
    """
    from reports.stats import strict_majority

    votes = unit_votes(data)
    if data.study.settings.get("adjudication"):
        return {data.items[u.item_id].external_id: strict_majority(votes[u.id]) for u in data.units}
    resolved = gold_labels(adjudication) if adjudication is not None else {}
    contexts = context_unanimity(data) if drop_contexts else {}
    out: dict[str, int | None] = {}
    for u in data.units:
        item = data.items[u.item_id]
        labels = votes[u.id]
        gold = None
        if _complete(data, labels):
            gold = labels[0] if len(set(labels)) == 1 else resolved.get(item.external_id)
        if overrides and item.external_id in overrides:
            gold = overrides[item.external_id]
        if drop_contexts and not contexts[_context(item)]["kept"]:
            gold = None
        out[item.external_id] = gold
    return out


def combined_gold(store, gold_study: str, drop_contexts: bool = True) -> dict[str, int | None]:
    """gold_labels of a gold study with its adjudication: the labels set with `prefval adjudicate GOLD` (they
    take precedence), and the most recent study created with --from-study gold_study --option adjudication=1, if
    any. Raises PrefvalError for an unknown study."""
    from reports.study_data import load_study_data

    data = load_study_data(store, gold_study)
    adj = [s for s in store.studies()
           if s.settings.get("adjudication") and s.settings.get("from_study") == gold_study]
    adj_data = load_study_data(store, adj[-1].name) if adj else None
    overrides = {}
    units = {u.id: u for u in data.units}
    for unit_id, a in store.current_adjudications(data.study.id).items():
        unit = units[unit_id]
        label = (a.answer or {}).get("label") if a.kind == "final" else None
        overrides[data.items[unit.item_id].external_id] = label if label in (0, 1) else None
    return gold_labels(data, adj_data, drop_contexts, overrides)


def non_unanimous_items(store, gold) -> list[tuple[str, None, dict[str, Any]]]:
    """Units of an adjudication study over study `gold`: its complete non-unanimous items in study order,
    each with extra {"votes": {"apply": n, "suppress": m}, "gold_unit": unit id}."""
    k = int(gold.settings.get("annotators_per_item", 3))
    labels: dict[str, list[int]] = defaultdict(list)
    for a in store.current_annotations(gold.id):
        if a.answer and a.answer.get("label") in (0, 1):
            labels[a.unit_id].append(a.answer["label"])
    out = []
    for u in store.units(gold.id):
        got = labels.get(u.id, [])
        if len(got) >= k and len(set(got)) > 1:
            out.append((u.item_id, None, {"votes": {"apply": got.count(1), "suppress": got.count(0)},
                                          "gold_unit": u.id}))
    return out


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


def _gold_table(data: StudyData, votes: dict[str, list[int]], gold: dict[str, int | None]) -> Table:
    limit = int(data.study.settings.get("gold_table_max", 200))
    rows = []
    for u in data.units:
        item = data.items[u.item_id]
        v = u.extra.get("votes") or {"apply": votes[u.id].count(1), "suppress": votes[u.id].count(0)}
        if data.study.settings.get("adjudication"):
            v = {"apply": v["apply"], "suppress": v["suppress"]}
        rows.append([item.external_id, item.payload["recipient"], item.payload["task"],
                     item.payload["attribute"], v["apply"], v["suppress"], gold.get(item.external_id)])
    note = "" if len(rows) <= limit else f"first {limit} of {len(rows)} items; gold_labels() gives all"
    return Table(key="gold", title="gold labels (1 apply, 0 suppress, - none)" + (f" ({note})" if note else ""),
                 columns=["item", "recipient", "task", "attribute", "apply votes", "suppress votes", "gold"],
                 rows=rows[:limit], note=note)


def gold_figures(data: StudyData) -> FigureSet:
    """The figures of a gold study (unanimity, contexts, categories, agreement, gold table) or of an
    adjudication study (adjudicated count, agreement with the original majority, gold table)."""
    if data.study.settings.get("adjudication"):
        return _adjudication_figures(data)
    from reports.stats import fleiss_kappa, gwet_ac1, unanimity_rate

    s = data.study.settings
    fs = FigureSet(study=data.study.name, task=data.study.task_type)
    votes = unit_votes(data)
    complete = [u for u in data.units if _complete(data, votes[u.id])]
    fs.figures.append(Figure(key="complete", label=f"items with all {s.get('annotators_per_item', 3)} labels",
                             value=len(complete), n=len(data.units)))
    unan = unanimity_rate([votes[u.id] for u in complete], ci=True)
    fs.figures.append(Figure.from_stat("unanimity", "unanimous items (share of complete items)", unan))
    removed_label = ("sent to adjudication (not unanimous)" if s.get("non_unanimous") == "adjudicate"
                     else "removed (not unanimous)")
    fs.figures.append(Figure(
        key="removed", label=removed_label, value=None if unan.value is None else 1 - unan.value,
        ci_low=None if unan.ci_high is None else 1 - unan.ci_high,
        ci_high=None if unan.ci_low is None else 1 - unan.ci_low, n=unan.n_items, note=unan.note))
    raters = data.rater_names(kind=None)
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

    gold = gold_labels(data)
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
    fs.tables.append(_gold_table(data, votes, gold))
    return fs


def _adjudication_figures(data: StudyData) -> FigureSet:
    """Adjudicated items, how often the adjudicator sided with the original majority, candidate agreement,
    and the adjudicated gold table."""
    fs = FigureSet(study=data.study.name, task=data.study.task_type)
    votes = unit_votes(data)
    gold = gold_labels(data)
    decided = [u for u in data.units if gold[data.items[u.item_id].external_id] is not None]
    fs.figures.append(Figure(key="adjudicated", label="items adjudicated", value=len(decided),
                             n=len(data.units)))
    sided = 0
    for u in decided:
        v = u.extra.get("votes", {})
        majority = 1 if v.get("apply", 0) > v.get("suppress", 0) else 0
        sided += gold[data.items[u.item_id].external_id] == majority
    fs.figures.append(Figure(key="with_majority", label="adjudicated labels equal to the original majority",
                             value=sided / len(decided) if decided else None, n=len(decided),
                             note="" if decided else "nothing adjudicated yet"))
    _candidate_agreement(fs, data, gold)
    fs.tables.append(_gold_table(data, votes, gold))
    return fs
