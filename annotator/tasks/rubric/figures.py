"""Figures of a rubric study (RealPref, appendix G.3): Cohen's kappa between human judges on the items they both
scored (the shared subset), per dimension and overall; score histograms per dimension (humans and each LLM
judge); Pearson r with its p-value between humans and each LLM judge, per dimension and overall; and how far each
annotator's calibration scores were from the reference. Calibration items are left out of everything else."""
from __future__ import annotations

from itertools import combinations

from reports.figures import Figure, FigureSet, Plot, Table
from reports.stats import cohen_kappa, pearson
from reports.study_data import StudyData

CATEGORIES = [1, 2, 3, 4, 5]
WEIGHTS = (("kappa", None), ("kappa_linear", "linear"), ("kappa_quadratic", "quadratic"))


def _scores_by_unit(data: StudyData, people: bool) -> dict[str, dict[str, dict[str, int]]]:
    """annotator name -> unit id -> {dimension: score}: the current answers of the people (StudyData.answers) when
    people, else of the LLM judges (StudyData.model_answers)."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for a in data.answers if people else data.model_answers:
        ann = data.annotators[a.annotator_id]
        if not a.answer:
            continue
        out.setdefault(ann.name, {})[a.unit_id] = {k: int(v) for k, v in (a.answer.get("scores") or {}).items()}
    return out


def rubric_figures(data: StudyData) -> FigureSet:
    """Figures (keys): kappa_<dim> / kappa_linear_<dim> / kappa_quadratic_<dim> and ..._overall (pooled over
    item x dimension) for each pair of human judges, with the suffix _<a>_<b> when there is more than one pair;
    pearson_<dim> and pearson_overall (pooled item x dimension; x = mean human score of the item, y = the LLM
    judge's score; p-value in extra["p_value"]), suffixed _<llm> with more than one LLM judge. Plots
    histogram_<dim> (bars: counts of 1..5 per judge group; LLM counts over the items humans scored when any
    human scored). Tables kappa, pearson, calibration. Categories 1..5 are declared for every kappa."""
    s = data.study.settings
    dims: list[str] = s.get("dimensions") or []
    fs = FigureSet(study=data.study.name, task=data.study.task_type)
    calib = {u.id for u in data.units if u.extra.get("calibration")}
    units = [u.id for u in data.units if u.id not in calib]
    humans = _scores_by_unit(data, people=True)
    llms = _scores_by_unit(data, people=False)

    # -- kappa between each pair of human judges ---------------------------------------------------------------
    pairs = list(combinations(sorted(humans), 2))
    rows = []
    for a, b in pairs:
        suffix = "" if len(pairs) == 1 else f"_{a}_{b}"
        both = [u for u in units if u in humans[a] and u in humans[b]]
        pooled: list[list[int | None]] = []
        for dim in dims + ["overall"]:
            if dim == "overall":
                ratings = pooled
            else:
                ratings = [[humans[a][u].get(dim), humans[b][u].get(dim)] for u in both]
                pooled.extend(ratings)
            row = [f"{a} / {b}", dim, len(ratings)]
            for key, w in WEIGHTS:
                res = cohen_kappa(ratings, weights=w, categories=CATEGORIES) if ratings else None
                if res is None:
                    fig = Figure(key=f"{key}_{dim}{suffix}", label="", value=None, n=0, note="no item scored by both")
                else:
                    fig = Figure.from_stat(f"{key}_{dim}{suffix}", "", res)
                fig.label = (f"Cohen's kappa{' (' + w + ' weights)' if w else ''}, {dim}, {a} vs {b} "
                             f"(items both scored)")
                fs.figures.append(fig)
                row.append(fig.value)
            rows.append(row)
    if rows:
        fs.tables.append(Table(key="kappa", title="Cohen's kappa between human judges (categories 1..5)",
                               columns=["judges", "dimension", "items", "kappa", "linear", "quadratic"], rows=rows))

    # -- histograms ----------------------------------------------------------------------------------------------
    human_units = {u for per in humans.values() for u in per}
    for dim in dims:
        series = {}
        if humans:
            series["human"] = [sum(1 for per in humans.values() for u, sc in per.items()
                                   if u not in calib and sc.get(dim) == c) for c in CATEGORIES]
        for name, per in sorted(llms.items()):
            keep = [u for u in per if u not in calib and (not humans or u in human_units)]
            series[f"LLM {name}"] = [sum(1 for u in keep if per[u].get(dim) == c) for c in CATEGORIES]
        if series:
            fs.plots.append(Plot(key=f"histogram_{dim}", title=f"scores on {dim}", kind="bars",
                                 data={"categories": [str(c) for c in CATEGORIES], "series": series}))

    # -- Pearson r between humans (mean per item) and each LLM judge -------------------------------------------
    prow = []
    for name, per in sorted(llms.items()):
        suffix = "" if len(llms) == 1 else f"_{name}"
        px: list[float] = []
        py: list[float] = []
        for dim in dims + ["overall"]:
            if dim == "overall":
                xs, ys = px, py
            else:
                xs, ys = [], []
                for u in units:
                    hs = [h[u][dim] for h in humans.values() if u in h and dim in h[u]]
                    if hs and u in per and dim in per[u]:
                        xs.append(sum(hs) / len(hs))
                        ys.append(per[u][dim])
                px.extend(xs)
                py.extend(ys)
            res = pearson(xs, ys, ci=True, seed=data.study.seed)
            fig = Figure.from_stat(f"pearson_{dim}{suffix}", f"Pearson r, {dim}, humans vs LLM judge {name}", res)
            fs.figures.append(fig)
            prow.append([name, dim, res.n_items, res.value, res.p_value])
    if prow:
        fs.tables.append(Table(key="pearson", title="Pearson r between human scores (mean per item) and LLM judges",
                               columns=["LLM judge", "dimension", "items", "r", "p"], rows=prow))

    # -- calibration ---------------------------------------------------------------------------------------------
    crow = []
    for name, per in sorted(humans.items()):
        diffs = []
        for u in calib:
            ref = data.items[next(x.item_id for x in data.units if x.id == u)].payload.get("reference_scores") or {}
            if u in per:
                diffs += [abs(per[u][d] - ref[d]) for d in dims if d in ref and d in per[u]]
        if diffs:
            crow.append([name, len(diffs), sum(diffs) / len(diffs), sum(x == 0 for x in diffs) / len(diffs)])
    if crow:
        fs.tables.append(Table(key="calibration", title="calibration: distance to the reference scores",
                               columns=["annotator", "scores", "mean |diff|", "exact share"], rows=crow))
    return fs
