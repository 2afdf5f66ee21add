"""Figures of an item-quality study (PersonaMem, appendix A): per dimension the share of items whose majority
label is True, Gwet's AC1 (the coefficient PersonaMem reports, robust to labels skewed to True) and Fleiss' kappa
beside it, which collapses on the same skewed labels (the "kappa paradox", Feinstein & Cicchetti 1990)."""
from __future__ import annotations

from annotator.tasks.mcq.stats import share
from reports.figures import Figure, FigureSet, Plot, Table
from reports.stats import fleiss_kappa, gwet_ac1, majority_vote
from reports.study_data import StudyData

CATEGORIES = [True, False]


def item_quality_figures(data: StudyData) -> FigureSet:
    """Figures (keys, per dimension d), each with a 95% percentile bootstrap interval over items (seed: the study's):
    share_true_<d> (share of items with a majority label that is True;
    items whose votes tie are left out and counted in the note), ac1_<d> and fleiss_<d> (ratings: items x human
    annotators, None where an annotator did not answer; categories True/False declared); a Table
    "by_dimension" and a Plot "share_true" (bars). Only human answers count."""
    dims: list[str] = data.study.settings.get("dimensions") or []
    fs = FigureSet(study=data.study.name, task=data.study.task_type)
    raters = data.rater_names()
    by_unit = data.by_unit()
    rows, shares, intervals = [], [], []
    seed = data.study.seed
    for d in dims:
        ratings = []
        for u in data.units:
            answers = by_unit.get(u.id, {})
            row = [(answers.get(r) or {}).get("labels", {}).get(d) for r in raters]
            if any(x is not None for x in row):
                ratings.append(row)
        majorities = [majority_vote(r) for r in ratings]
        decided = [m for m in majorities if m is not None]
        ties = len(majorities) - len(decided)
        label = f"{d}: share of items judged True (majority)"
        if decided:
            st = share(f"share_true_{d}", [bool(m) for m in decided], "share of items whose majority label is True",
                       seed)
            fig = Figure.from_stat(f"share_true_{d}", label, st)
            if ties:
                fig.note = (fig.note + "; " if fig.note else "") + f"{ties} items without a majority left out"
        else:
            note = "no item with a majority label" + (f"; {ties} items without a majority left out" if ties else "")
            fig = Figure(key=f"share_true_{d}", label=label, value=None, n=0, note=note)
        fs.figures.append(fig)
        share_value = fig.value
        ac1 = gwet_ac1(ratings, categories=CATEGORIES, ci=True, seed=seed) if ratings else None
        fk = fleiss_kappa(ratings, categories=CATEGORIES, ci=True, seed=seed) if ratings else None
        for key, label, res in ((f"ac1_{d}", f"{d}: Gwet's AC1", ac1), (f"fleiss_{d}", f"{d}: Fleiss' kappa", fk)):
            fs.figures.append(Figure.from_stat(key, label, res) if res is not None else
                              Figure(key=key, label=label, value=None, n=0, note="no answered item"))
        rows.append([d, len(decided), share_value, ac1.value if ac1 else None, fk.value if fk else None])
        shares.append(share_value)
        intervals.append([fig.ci_low, fig.ci_high])
    fs.tables.append(Table(key="by_dimension", title="item quality by dimension (majority label; AC1 vs Fleiss)",
                           columns=["dimension", "items", "share True", "Gwet AC1", "Fleiss kappa"], rows=rows,
                           note="with labels mostly True, Fleiss' kappa can be low while agreement is high "
                                "(kappa paradox); AC1 is what PersonaMem reports"))
    fs.plots.append(Plot(key="share_true", title="share of items judged True", kind="bars",
                         data={"categories": dims, "series": {"share True": shares},
                               "intervals": {"share True": intervals}, "y_label": "share (95% bootstrap interval)"}))
    return fs
