"""Figures of a pairwise study (RealPref, appendix G.1): win / loss / tie rates of dataset A against dataset B
with 95% percentile bootstrap intervals, over all judgments and by majority per pair, a bars plot of both, the
share of "left" choices (position bias check) and a per-annotator table."""
from __future__ import annotations

from collections import Counter

from reports.figures import Figure, FigureSet, Plot, Table
from reports.stats import majority_vote, win_loss_tie
from reports.study_data import StudyData

ORDER = ("win", "tie", "loss")


def _outcome(answer: dict) -> str | None:
    return {"A": "win", "B": "loss", "tie": "tie"}.get(answer.get("winner") or "")


def win_rates(per_pair: list[list[str | None]], seed: int, n_boot: int = 1000):
    """Win / loss / tie shares of A against B (RealPref G.1, Table 7) over all judgments and by plurality per pair:
    (all judgments' {win, loss, tie} StatResults, the majority-per-pair ones, pairs without a majority). per_pair:
    each pair's outcomes ("win", "loss", "tie", None for none). Pairs whose votes tie for first place
    (reports.stats.majority_vote) are left out of the second and counted. The figures of pairwise studies and
    `prefval stats win-rate` both come from here."""
    flat = [o for pair in per_pair for o in pair]
    all_res = win_loss_tie(flat, ci=True, seed=seed, n_boot=n_boot)
    majority = [majority_vote(v) for v in per_pair if any(o is not None for o in v)]
    no_majority = sum(m is None for m in majority)
    maj_res = win_loss_tie([m for m in majority if m is not None], ci=True, seed=seed, n_boot=n_boot)
    return all_res, maj_res, no_majority


def pairwise_figures(data: StudyData) -> FigureSet:
    """win/loss/tie (all human judgments; keys win, loss, tie), the same by plurality vote per pair (keys
    win_majority, ...; pairs whose votes tie for first place are left out and counted in the note), left_share,
    a Plot "win_tie_loss" (bars) and a Table per annotator. Bootstrap seed: the study's seed."""
    s = data.study.settings
    fs = FigureSet(study=data.study.name, task=data.study.task_type)
    a_name, b_name = s.get("dataset_a", "A"), s.get("dataset_b", "B")
    answers = [a for a in data.answers if a.answer]  # people only (StudyData.answers)
    outcomes = [_outcome(a.answer) for a in answers]
    seed = data.study.seed
    per_unit: dict[str, list[str]] = {}
    for a, o in zip(answers, outcomes):
        per_unit.setdefault(a.unit_id, []).append(o)
    all_res, maj_res, no_majority = win_rates(list(per_unit.values()), seed)
    for k in ("win", "loss", "tie"):
        f = Figure.from_stat(k, f"{k} rate of {a_name} vs {b_name} (all judgments)", all_res[k], n_of="judgments")
        if f.value is not None:
            f.note = f"{all_res[k].n_items} judgments over {len({a.unit_id for a in answers})} pairs; " + f.note
        fs.figures.append(f)

    for k in ("win", "loss", "tie"):
        f = Figure.from_stat(f"{k}_majority", f"{k} rate of {a_name} vs {b_name} (majority per pair)", maj_res[k])
        if no_majority:
            f.note = (f.note + "; " if f.note else "") + f"{no_majority} pairs without a majority left out"
        fs.figures.append(f)

    pressed = [a.answer.get("pressed") for a in answers if a.answer.get("pressed") in ("left", "right")]
    fs.figures.append(Figure(
        key="left_share", label="share of non-tie choices that picked the left side (0.5 = no position bias)",
        value=(pressed.count("left") / len(pressed)) if pressed else None, n=len(pressed), n_of="choices",
        note="" if pressed else "no non-tie choice"))

    fs.plots.append(Plot(key="win_tie_loss", title=f"{a_name} against {b_name}", kind="bars", data={
        "categories": list(ORDER),
        "series": {"all judgments": [all_res[k].value for k in ORDER],
                   "majority per pair": [maj_res[k].value for k in ORDER]},
        "intervals": {"all judgments": [[all_res[k].ci_low, all_res[k].ci_high] for k in ORDER],
                      "majority per pair": [[maj_res[k].ci_low, maj_res[k].ci_high] for k in ORDER]},
        "y_label": "share (95% bootstrap interval)"}))

    rows = []
    by_ann: dict[str, Counter] = {}
    for a, o in zip(answers, outcomes):
        by_ann.setdefault(data.annotators[a.annotator_id].name, Counter())[o] += 1
    for name, c in sorted(by_ann.items()):
        rows.append([name, sum(c.values()), c["win"], c["tie"], c["loss"]])
    if rows:
        fs.tables.append(Table(key="by_annotator", title=f"judgments by annotator ({a_name} vs {b_name})",
                               columns=["annotator", "judgments", "win", "tie", "loss"], rows=rows))
    return fs
