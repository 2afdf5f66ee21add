"""Figures of a persona_filter study (RealPref, appendix G.1): the funnel over the chain of rounds, the keep rate
with its interval, drop-reason counts, and agreement when several annotators judged the same records."""
from __future__ import annotations

import math
from collections import Counter

import numpy as np

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
    or more annotators percent agreement, Fleiss' kappa and Gwet's AC1 on keep/drop (bootstrap 95% CI).
    Kept, decided and the funnel are the records' outcomes (TaskType.outcomes: the same as status, release and
    --from-study), after adjudication; with adjudications, kept_by_votes gives the annotators' votes alone."""
    from annotator.tasks import get_task

    task = get_task(data.study.task_type)
    outcomes = list(task.outcomes(data).values())
    by_votes = list(task.outcomes(data, with_adjudications=False).values()) if data.adjudications else None
    by_unit = data.by_unit()
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
    per: dict[str, list[bool]] = {}
    for a in data.answers:
        per.setdefault(data.annotators[a.annotator_id].name, []).append((a.answer or {}).get("decision") == "keep")
    raters = data.rater_names()
    ratings = [[by_unit[u.id].get(r, {}).get("decision") for r in raters] for u in data.units] \
        if len(raters) >= 2 else None
    return _figure_set(data.study, outcomes, cited, {r: len(units) for r, units in records_citing.items()},
                       no_reason, {name: (len(v), sum(v)) for name, v in per.items()}, reason_agreement(data),
                       ratings, by_votes)


def _figure_set(study, outcomes: list, cited: dict[str, int], records_citing: dict[str, int], no_reason: int,
                per: dict[str, tuple[int, int]], reason_fig: Figure, ratings, by_votes: list | None = None
                ) -> FigureSet:
    """The FigureSet of persona_figures from the records' outcomes (annotator.tasks.outcome.Outcome, one per
    record), answers and records citing each drop reason (cited in first-cited order), answers without a reason,
    (answered, kept) per annotator name, the drop-reason figure, the units x raters keep/drop ratings (None with
    fewer than 2 raters; a reports.stats Prepared table or lists of labels), and, when the study has
    adjudications, the outcomes by the annotators' votes alone (by_votes)."""
    from annotator.tasks.outcome import NEEDS_ADJUDICATION, tally
    from reports.stats import fleiss_kappa, gwet_ac1, percent_agreement

    s = study.settings
    rule = s.get("keep_rule", "majority")
    counts = tally(outcomes)
    n_units = len(outcomes)
    kept, n_decided = counts["passed"], counts["passed"] + counts["failed"]
    waiting = counts[NEEDS_ADJUDICATION]
    # the headline applies the adjudications and says how many records the adjudicator kept and dropped (or
    # excluded): a record the adjudicator dropped is not among the kept ones (the votes alone: kept_by_votes)
    by_adj = [o for o in outcomes if o.decided_by == "adjudication"]
    adj_kept = sum(1 for o in by_adj if o.state == "passed")
    after = f"; after adjudication: {adj_kept} kept and {len(by_adj) - adj_kept} dropped by the adjudicator" \
        if by_adj else ""
    fs = FigureSet(study=study.name, task=study.task_type)
    fs.figures.append(Figure(key="records", label="records in this round", value=n_units, n=n_units))
    fs.figures.append(Figure(key="kept", label=f"records kept ({rule} of the people's answers{after})", value=kept,
                             n=n_decided, note="" if n_decided else "no record decided yet"))
    lo, hi = wilson_interval(kept, n_decided)
    fs.figures.append(Figure(key="keep_rate", label="keep rate (decided records, Wilson 95% CI)",
                             value=kept / n_decided if n_decided else None, ci_low=lo, ci_high=hi,
                             n=n_decided, note="" if n_decided else "no record decided yet"))
    fs.figures.append(Figure(key="needs_adjudication", label="records undecided: a tie that needs adjudication",
                             value=waiting, n=n_units,
                             note=f"`prefval adjudicate {study.name}` decides them" if waiting else ""))
    if by_votes is not None:
        vk = tally(by_votes)["passed"]
        fs.figures.append(Figure(key="kept_by_votes", label="records the annotators' votes alone keep "
                                 "(adjudications not applied)", value=vk, n=n_units,
                                 note="the headline figure 'kept' applies the adjudications"))

    stages = [dict(st) for st in s.get("chain", [])]
    current = {"study": study.name, "records": n_units, "decided": n_decided, "kept": kept, "rule": rule,
               "mode": s.get("chain_mode")}
    stages.append(current)
    # records = decided + undecided, decided = kept + dropped: a record not yet decided is never counted as dropped
    rows = [[i + 1, st["study"], st["records"], st["decided"], st["kept"], st["decided"] - st["kept"],
             st["records"] - st["decided"], st["kept"] / st["decided"] if st["decided"] else None]
            for i, st in enumerate(stages)]
    open_now = n_units - n_decided
    undecided_words = ""
    if open_now:
        undecided_words = f" ({open_now} of this round undecided" + (
            f", {waiting} of them waiting for adjudication)" if waiting else ")")
    fs.tables.append(Table(key="funnel", title=f"funnel: {funnel_text(stages)}" + undecided_words,
                           columns=["stage", "study", "records", "decided", "kept", "dropped", "undecided",
                                    "keep rate"],
                           rows=rows, note="earlier rounds as they stood when this round was created; decided, "
                                           "kept and dropped are the records' outcomes (after adjudication, as "
                                           "the release counts them); undecided = no answer yet, fewer answers "
                                           "than the quota, or a tie waiting for adjudication"))

    reasons = list(s.get("reasons", []))
    extra = [r for r in cited if r not in reasons]
    reason_rows = [[str(i + 1) if i < len(reasons) else "-", r, cited.get(r, 0), records_citing.get(r, 0)]
                   for i, r in enumerate(reasons + extra)]
    reason_rows.append(["d", "(no reason given)", no_reason, None])
    fs.tables.append(Table(key="drop_reasons", title="drop reasons (answers citing each; records)",
                           columns=["key", "reason", "answers", "records"], rows=reason_rows))

    if per:
        fs.tables.append(Table(key="keep_by_annotator", title="keep rate by annotator",
                               columns=["annotator", "answered", "kept", "keep rate"],
                               rows=[[n, k, c, c / k] for n, (k, c) in sorted(per.items())]))

    fs.figures.append(reason_fig)

    if ratings is not None:
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
    return _reason_figure(pairs, sum(1 for sets in drops.values() if len(sets) >= 2))


def _reason_figure(pairs: list[bool], records: int) -> Figure:
    """The drop-reason figure from its pairs (True when both cite the same set) over `records` records."""
    if not pairs:
        return Figure(key="drop_reason_agreement", label="same drop reasons (pairs who both dropped a record)",
                      value=None, n=0, n_of="pairs", note="no record dropped by two annotators")
    return Figure(key="drop_reason_agreement", label="same drop reasons (pairs who both dropped a record)",
                  value=sum(pairs) / len(pairs), n=len(pairs), n_of="pairs",
                  note=f"{len(pairs)} pairs of annotators over {records} records both dropped; a pair agrees when "
                       "both cite the same set of reasons (none counts as a set)")

def persona_figures_table(t) -> FigureSet:
    """persona_figures from a reports.study_table.StudyTable: the same figures, from answer columns and per-unit
    counts (outcomes by TaskType.outcomes_from_table, the same decide() per distinct answer pattern; drop reasons
    once per distinct answer; keep/drop ratings as a coded units x raters table)."""
    from reports.stats._prep import Prepared, is_missing

    from annotator.tasks import get_task

    task = get_task(t.study.task_type)
    n = t.n_units
    answers = t.answers
    unit, code, ann = t.unit, t.code, t.annotator
    decision = [a.get("decision") for a in answers]
    keep = np.array([d == "keep" for d in decision], dtype=bool)
    outcomes = task.outcomes_from_table(t)
    by_votes = task.outcomes_from_table(t, with_adjudications=False) if t.adjudications else None

    # drop reasons, in the order they are first cited (answers in unit order, then annotator id)
    drop = np.array([d == "drop" for d in decision], dtype=bool)
    drop_at = np.flatnonzero(drop[code]) if len(code) else np.zeros(0, dtype=np.int64)
    first: dict = {}
    cited: dict = {}
    citing_units: dict = {}
    no_reason = 0
    drop_codes = code[drop_at]
    for c in np.unique(drop_codes).tolist():
        at = drop_at[drop_codes == c]
        reasons = answers[c].get("reasons")
        if not reasons:
            no_reason += len(at)
        for j, r in enumerate(reasons or []):
            cited[r] = cited.get(r, 0) + len(at)
            first[r] = min(first.get(r, (len(code), 0)), (int(at[0]), j))
            citing_units.setdefault(r, []).append(unit[at])
    cited = {r: cited[r] for r in sorted(cited, key=first.__getitem__)}
    records_citing = {r: len(np.unique(np.concatenate(u))) for r, u in citing_units.items()}

    names = t.names()
    per_k = np.bincount(ann, minlength=len(names))
    per_c = np.bincount(ann[keep[code]], minlength=len(names)) if len(code) else per_k * 0
    per = {names[k]: (m, c) for k, (m, c) in enumerate(zip(per_k.tolist(), per_c.tolist())) if m}

    # the drop-reason figure: pairs of annotators who both dropped the same record
    sets = {c: frozenset(answers[c].get("reasons") or []) for c in np.unique(drop_codes).tolist()}
    drop_units = unit[drop_at]
    multi = np.flatnonzero(np.bincount(drop_units, minlength=n) >= 2)
    same = []
    from itertools import combinations
    for u in multi.tolist():
        cs = drop_codes[drop_units == u].tolist()
        same.extend(sets[x] == sets[y] for x, y in combinations(cs, 2))
    reason_fig = _reason_figure(same, len(multi))

    ratings = None
    if len(per) >= 2:
        raters = sorted(per)
        col = {k: raters.index(names[k]) for k in range(len(names)) if names[k] in per}
        col_of = np.array([col.get(k, -1) for k in range(len(names))], dtype=np.int64)
        cat = []
        for d in decision:
            cat.append(0 if d == "keep" else 1 if d == "drop" else -1 if is_missing(d) else -2)
        cat = np.array(cat, dtype=np.int64)
        codes = np.full((n, len(raters)), -1, dtype=np.int64)
        codes[unit, col_of[ann]] = cat[code]
        if (codes == -2).any():  # a decision other than keep/drop: the labels (and their errors) as before
            ratings = [[None] * len(raters) for _ in range(n)]
            for u, k, c in zip(unit.tolist(), ann.tolist(), code.tolist()):
                ratings[u][col[k]] = decision[c]
        else:
            ratings = Prepared.from_codes(codes, ["keep", "drop"])
    return _figure_set(t.study, outcomes, cited, records_citing, no_reason, per, reason_fig, ratings, by_votes)
