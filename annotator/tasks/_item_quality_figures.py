"""Figures of an item-quality study (PersonaMem, appendix A): per dimension the share of items whose majority
label is True, Gwet's AC1 (the coefficient PersonaMem reports, robust to labels skewed to True) and Fleiss' kappa
beside it, which collapses on the same skewed labels (the "kappa paradox", Feinstein & Cicchetti 1990)."""
from __future__ import annotations

from reports.figures import Figure, FigureSet, Plot, Table
from reports.stats import fleiss_kappa, gwet_ac1, majority_vote
from reports.study_data import StudyData

CATEGORIES = [True, False]


def item_quality_figures(data: StudyData) -> FigureSet:
    """Figures (keys, per dimension d): share_true_<d> (share of items with a majority label that is True;
    items whose votes tie are left out and counted in the note), ac1_<d> and fleiss_<d> (ratings: items x human
    annotators, None where an annotator did not answer; categories True/False declared); a Table
    "by_dimension" and a Plot "share_true" (bars). Only human answers count."""
    dims: list[str] = data.study.settings.get("dimensions") or []
    fs = FigureSet(study=data.study.name, task=data.study.task_type)
    raters = data.rater_names("human")
    by_unit = data.by_unit()
    rows, shares = [], []
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
        share = sum(decided) / len(decided) if decided else None
        note = "" if decided else "no item with a majority label"
        if ties:
            note = (note + "; " if note else "") + f"{ties} items without a majority left out"
        fs.figures.append(Figure(key=f"share_true_{d}", label=f"{d}: share of items judged True (majority)",
                                 value=share, n=len(decided), note=note))
        ac1 = gwet_ac1(ratings, categories=CATEGORIES) if ratings else None
        fk = fleiss_kappa(ratings, categories=CATEGORIES) if ratings else None
        for key, label, res in ((f"ac1_{d}", f"{d}: Gwet's AC1", ac1), (f"fleiss_{d}", f"{d}: Fleiss' kappa", fk)):
            fs.figures.append(Figure.from_stat(key, label, res) if res is not None else
                              Figure(key=key, label=label, value=None, n=0, note="no answered item"))
        rows.append([d, len(decided), share, ac1.value if ac1 else None, fk.value if fk else None])
        shares.append(share or 0.0)
    fs.tables.append(Table(key="by_dimension", title="item quality by dimension (majority label; AC1 vs Fleiss)",
                           columns=["dimension", "items", "share True", "Gwet AC1", "Fleiss kappa"], rows=rows,
                           note="with labels mostly True, Fleiss' kappa can be low while agreement is high "
                                "(kappa paradox); AC1 is what PersonaMem reports"))
    fs.plots.append(Plot(key="share_true", title="share of items judged True", kind="bars",
                         data={"categories": dims, "series": {"share True": shares}}))
    return fs
