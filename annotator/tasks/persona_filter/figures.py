"""Figures of a persona_filter study (RealPref, appendix G.1): the funnel over the chain of rounds, the keep rate
with its interval, drop-reason counts, and agreement when several annotators judged the same records."""
from __future__ import annotations

import math
from collections import Counter

from annotator.tasks.persona_filter.chain import verdict
from reports.figures import Figure, FigureSet, Table
from reports.study_data import StudyData


def wilson_interval(k: int, n: int, z: float = 1.959964) -> tuple[float, float] | tuple[None, None]:
    """95% Wilson score interval of a proportion k/n (Wilson 1927, JASA 22:209-212); (None, None) for n = 0."""
    if n == 0:
        return None, None
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def funnel_text(stages: list[dict]) -> str:
    """"150 -> 137 -> 100" for rounds that re-filter the kept records; a round over other records (children of
    the kept ones) starts a new segment: "150 -> 137 -> 100 | 1200 -> 950"."""
    if not stages:
        return ""
    parts = [f"{stages[0]['records']} -> {stages[0]['kept']}"]
    for prev, st in zip(stages, stages[1:]):
        if st["records"] == prev["kept"] and st.get("mode") != "children":
            parts[-1] += f" -> {st['kept']}"
        else:
            parts.append(f"{st['records']} -> {st['kept']}")
    return " | ".join(parts)


def persona_figures(data: StudyData) -> FigureSet:
    """Figures: records / decided / kept, keep rate (record level, Wilson 95% CI), the funnel table (earlier rounds
    as recorded when this study was created, this round live), drop reasons, keep rate per annotator, and with two
    or more annotators percent agreement, Fleiss' kappa and Gwet's AC1 on keep/drop (bootstrap 95% CI)."""
    from reports.stats import fleiss_kappa, gwet_ac1, percent_agreement

    s = data.study.settings
    rule = s.get("keep_rule", "majority")
    fs = FigureSet(study=data.study.name, task=data.study.task_type)
    by_unit = data.by_unit()
    verdicts = {uid: verdict([a.get("decision") for a in answers.values()], rule)
                for uid, answers in by_unit.items()}
    decided = [v for v in verdicts.values() if v is not None]
    kept = sum(1 for v in decided if v == "keep")
    n_units = len(data.units)

    fs.figures.append(Figure(key="records", label="records in this round", value=n_units, n=n_units))
    fs.figures.append(Figure(key="kept", label=f"records kept ({rule} of the answers)", value=kept,
                             n=len(decided), note="" if decided else "no record answered yet"))
    lo, hi = wilson_interval(kept, len(decided))
    fs.figures.append(Figure(key="keep_rate", label="keep rate (records, Wilson 95% CI)",
                             value=kept / len(decided) if decided else None, ci_low=lo, ci_high=hi,
                             n=len(decided), note="" if decided else "no record answered yet"))

    stages = [dict(st) for st in s.get("chain", [])]
    current = {"study": data.study.name, "records": n_units, "decided": len(decided), "kept": kept, "rule": rule,
               "mode": s.get("chain_mode")}
    stages.append(current)
    rows = [[i + 1, st["study"], st["records"], st["decided"], st["kept"], st["records"] - st["kept"],
             st["kept"] / st["decided"] if st["decided"] else None] for i, st in enumerate(stages)]
    fs.tables.append(Table(key="funnel", title=f"funnel: {funnel_text(stages)}",
                           columns=["stage", "study", "records", "decided", "kept", "not kept", "keep rate"],
                           rows=rows, note="earlier rounds as they stood when this round was created"))

    reasons = list(s.get("reasons", []))
    cited: Counter = Counter()
    records_citing: dict[str, set] = {}
    no_reason = 0
    for a in data.answers:
        ans = a.answer or {}
        if ans.get("decision") != "drop":
            continue
        if not ans.get("reasons"):
            no_reason += 1
        for r in ans.get("reasons") or []:
            cited[r] += 1
            records_citing.setdefault(r, set()).add(a.unit_id)
    extra = [r for r in cited if r not in reasons]
    reason_rows = [[str(i + 1) if i < len(reasons) else "-", r, cited[r], len(records_citing.get(r, ()))]
                   for i, r in enumerate(reasons + extra)]
    reason_rows.append(["d", "(no reason given)", no_reason, None])
    fs.tables.append(Table(key="drop_reasons", title="drop reasons (answers citing each; records)",
                           columns=["key", "reason", "answers", "records"], rows=reason_rows))

    per: dict[str, list[bool]] = {}
    for a in data.answers:
        per.setdefault(data.annotators[a.annotator_id].name, []).append((a.answer or {}).get("decision") == "keep")
    if per:
        fs.tables.append(Table(key="keep_by_annotator", title="keep rate by annotator",
                               columns=["annotator", "answered", "kept", "keep rate"],
                               rows=[[n, len(v), sum(v), sum(v) / len(v)] for n, v in sorted(per.items())]))

    fs.figures.append(reason_agreement(data))

    raters = data.rater_names(kind=None)
    if len(raters) >= 2:
        ratings = [[by_unit[u.id].get(r, {}).get("decision") for r in raters] for u in data.units]
        cats = ["keep", "drop"]
        fs.figures.append(Figure.from_stat("percent_agreement", "percent agreement (keep/drop)",
                                           percent_agreement(ratings, ci=True)))
        fs.figures.append(Figure.from_stat("fleiss_kappa", "Fleiss' kappa (keep/drop)",
                                           fleiss_kappa(ratings, categories=cats, ci=True)))
        fs.figures.append(Figure.from_stat("gwet_ac1", "Gwet's AC1 (keep/drop)",
                                           gwet_ac1(ratings, categories=cats, ci=True)))
    return fs


def reason_agreement(data: StudyData) -> Figure:
    """Drop reasons as their own figure (agreement itself is on keep/drop): over every pair of annotators who both
    dropped the same record, the share of pairs that cited the same set of reasons (n = such pairs)."""
    from itertools import combinations

    drops: dict[str, list[frozenset]] = {}
    for a in data.answers:
        ans = a.answer or {}
        if ans.get("decision") == "drop":
            drops.setdefault(a.unit_id, []).append(frozenset(ans.get("reasons") or []))
    pairs = [x == y for sets in drops.values() for x, y in combinations(sets, 2)]
    records = sum(1 for sets in drops.values() if len(sets) >= 2)
    if not pairs:
        return Figure(key="drop_reason_agreement", label="same drop reasons (pairs who both dropped a record)",
                      value=None, n=0, n_of="pairs", note="no record dropped by two annotators")
    return Figure(key="drop_reason_agreement", label="same drop reasons (pairs who both dropped a record)",
                  value=sum(pairs) / len(pairs), n=len(pairs), n_of="pairs",
                  note=f"{len(pairs)} pairs of annotators over {records} records both dropped; a pair agrees when "
                       "both cite the same set of reasons (none counts as a set)")
