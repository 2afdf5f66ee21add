"""Judge validation for any study with people's and LLM-judge annotations of the same units: may the judge stand
in for the people?

A study's answers are read as labels per dimension (the task's storage.task_specs.Labeler, declared in its package's
spec.py: e.g. an MCQ's chosen option, a pairwise winner, each rubric dimension's 1..5 score). Who is a person is
storage.models.Annotator.is_person (StudyData.answers); every other rater (LLM judges, `prefval evaluate answer`
models, consensus validators ``validator:<model>``: StudyData.model_answers) is a model, and every row or column
named "human" holds people only. A study whose Labeler has by_format (the MCQ tasks) and that mixes True/False and
multiple-choice items gets each format as a dimension of its own ("T/F items", "MCQ items", as the easy and blind
figures split them with annotator.tasks.mcq.task.is_tf), never pooled: no confusion table, kappa or test merges the
two. The section has:

- ``verdicts``: first, one sentence per judge answering "may this judge replace the people on this study?": yes,
  no or cannot tell yet, with why (reports.stats.replacement: the alternative annotator test's own conditions,
  the people's agreement beyond chance, a chance-judge control, then the test), shown at the top of the section
  in every report format and in `prefval status STUDY`; several dimensions: yes when every dimension says yes,
  no when one says no, else cannot tell yet, each dimension's answer and reason in the sentence.
- ``judge_pairs``: per rater pair (human-human, human-LLM, LLM-LLM) and dimension: items both rated, percent
  agreement and Cohen's kappa (Cohen 1960; quadratic-weighted, Cohen 1968, for 1..5 scores), and for scores
  Pearson r and Spearman rho with two-sided p-values; 95% percentile bootstrap intervals over items. The shape of
  BenchPreS table 6 (agreement and kappa per evaluator pair) and, for scores, RealPref table 10 (``judge_pearson``:
  Pearson r per pair and dimension, with an "overall" column pooling item x dimension). Pairwise tasks get their
  rows twice (a Labeler with a tie label): with ties (tie is a label of its own) and without ties (units where either rater said tie dropped),
  as MT-Bench reports judge agreement (Zheng et al. 2023, section 4.2).
- ``judge_ceiling``: per dimension, the mean over human-human pairs of agreement and kappa (the ceiling a judge
  is compared with) beside each judge's mean over its judge-human pairs.
- ``judge_vs_majority``: each judge against the human majority label of every unit (plurality of the unit's human
  labels; units without one are left out): accuracy, and precision, recall, F1 and support per label plus the
  macro average, from ``sklearn.metrics``; a confusion-matrix heatmap per judge and dimension.
- ``alt_test``: the alternative annotator test (reports.stats.alt_test; Calderon, Reichart and Dror, ACL 2025)
  per judge and dimension: winning rate, the answer (may replace the people: yes / no / cannot tell yet) and
  average advantage probability, judges ranked by it; and ``alt_test_annotators``: the per-annotator t-tests.
- ``ppi``: the study's headline figure (``Labeler.value_label``: e.g. the share answered correctly, the
  share reflected, the mean score) by prediction-powered inference (reports.stats.ppi; Angelopoulos et al.,
  Science 2023) from the judge's labels on every unit plus the human labels (mean over a unit's annotators) where
  people labelled, beside the human-only and the judge-only estimates.

scikit-learn and ppi_py are imported inside the functions that use them (never at start-up).
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

from reports.figures import Figure, FigureSet, Plot, PValue, Table
from reports.stats import cohen_kappa, majority_vote, pearson, percent_agreement, spearman
from reports.stats.alt_test import DEFAULT_EPSILON, DEFAULT_MIN_INSTANCES, alt_test
from reports.stats.ppi import classical_mean, ppi_mean
from reports.stats.replacement import CANNOT_TELL, NO, YES, Verdict, replacement_verdict
from reports.study_data import StudyData
from storage import task_specs
from storage.task_specs import Labeler

N_BOOT = 1000
SCORES = [1, 2, 3, 4, 5]
OVERALL = "overall"


#: the dimension of each item format in a study that mixes them (Labeler.by_format)
TF_DIM, MCQ_DIM = "T/F items", "MCQ items"


def _is_tf(payload: dict) -> bool:
    """Whether a payload is a True/False item's (fmt "tf", as annotator.tasks.mcq.task.is_tf)."""
    return payload.get("fmt") == "tf"


@dataclass
class _Ratings:
    """rater -> dimension -> unit id -> label; kinds: rater -> annotator kind; people: the raters who are people
    (Annotator.is_person); dims in first-seen order; poolable: dims may be pooled into an "overall" one (never
    the formats of a mixed T/F and MCQ study)."""

    labels: dict[str, dict[str, dict[str, Any]]]
    kinds: dict[str, str]
    dims: list[str]
    payload: dict[str, dict]  # unit id -> the unit's (first) item payload
    people: set[str]
    poolable: bool = True

    def is_person(self, rater: str) -> bool:
        return rater in self.people

    def humans(self) -> list[str]:
        """The people (never a model, a judge or a validator), sorted."""
        return sorted(r for r in self.labels if r in self.people)

    def judges(self) -> list[str]:
        """The models (LLM judges, answering models, consensus validators), sorted."""
        return sorted(r for r in self.labels if r not in self.people)

    def dims_overall(self) -> list[str]:
        """The dimensions, and "overall" (item x dimension pooled) when there are several that may be pooled."""
        return self.dims + ([OVERALL] if len(self.dims) > 1 and self.poolable else [])


def _read(data: StudyData, lab: Labeler) -> _Ratings:
    units = {u.id: u for u in data.units if not u.extra.get("calibration")}
    out: dict[str, dict[str, dict[str, Any]]] = {}
    kinds: dict[str, str] = {}
    people: set[str] = set()
    dims: list[str] = list(data.study.settings.get("dimensions") or [])
    payload = {uid: data.items[u.item_id].payload for uid, u in units.items() if u.item_id in data.items}
    split = lab.by_format and len({_is_tf(p) for p in payload.values()}) > 1
    for a in data.answers + data.model_answers:  # people (Annotator.is_person), then models
        if a.unit_id not in units or not a.answer:
            continue
        ann = data.annotators[a.annotator_id]
        p = payload.get(a.unit_id, {})
        for dim, label in lab.labels(a.answer, p).items():
            if split:
                dim = TF_DIM if _is_tf(p) else MCQ_DIM
            if dim not in dims:
                dims.append(dim)
            out.setdefault(ann.name, {}).setdefault(dim, {})[a.unit_id] = label
        kinds[ann.name] = ann.kind
        if ann.is_person:
            people.add(ann.name)
    return _Ratings(out, kinds, dims, payload, people, poolable=not split)


def _shares_units(r: _Ratings) -> bool:
    """True when some unit has a label from a human and from an LLM judge."""
    human_units = {u for h in r.humans() for per in r.labels[h].values() for u in per}
    return any(u in human_units for j in r.judges() for per in r.labels[j].values() for u in per)


def _pair_kind(r: _Ratings, a: str, b: str) -> str:
    """"human-human (ceiling)" for two people, "human-LLM" for a person and a model, "LLM-LLM" for two models."""
    people = r.is_person(a) + r.is_person(b)
    return {2: "human-human (ceiling)", 1: "human-LLM", 0: "LLM-LLM"}[people]


def _paired(r: _Ratings, a: str, b: str, dims: list[str], drop_ties: str | None = None) -> list[tuple[Any, Any]]:
    """(label a, label b) over units both rated, pooled over dims (in dim order, then unit order); drop_ties: the
    tie label (Labeler.tie) whose units are left out, None to keep every unit."""
    out = []
    for d in dims:
        la, lb = r.labels[a].get(d, {}), r.labels[b].get(d, {})
        for u in la:
            if u in lb and not (drop_ties is not None and drop_ties in (la[u], lb[u])):
                out.append((la[u], lb[u]))
    return out


def _fig(key: str, label: str, stat) -> Figure:
    return Figure.from_stat(key, label, stat)


def _pair_tables(r: _Ratings, lab: Labeler, fs: FigureSet, seed: int, pairwise: bool) -> dict:
    """Adds judge_pairs (and judge_pearson for scores); returns {(dim, kind, rater): [(agreement, kappa)]} for
    the ceiling table."""
    kw = dict(ci=True, n_boot=N_BOOT, seed=seed)
    dims = r.dims_overall()
    raters = r.humans() + r.judges()
    cols = ["rater", "rater", "pair", "dimension", "items", "agreement", "Cohen's kappa" +
            (" (quadratic weights)" if lab.ordinal else "")]
    if lab.ordinal:
        cols += ["Pearson r", "p (Pearson)", "Spearman rho", "p (Spearman)"]
    rows, pearson_rows, collected = [], [], {}
    variants = [(False, "")] + ([(True, " (ties dropped)")] if pairwise else [])
    for a, b in combinations(raters, 2):
        kind = _pair_kind(r, a, b)
        prow = [f"{a} / {b}", kind]
        for drop, suffix in variants:
            for d in dims:
                pairs = _paired(r, a, b, r.dims if d == OVERALL else [d], drop_ties=lab.tie if drop else None)
                if not pairs:
                    continue
                ratings = [list(p) for p in pairs]
                agree = percent_agreement(ratings, **kw)
                kappa = cohen_kappa(ratings, weights="quadratic" if lab.ordinal else None,
                                    categories=SCORES if lab.ordinal else None, **kw)
                row = [a, b, kind, d + suffix, len(pairs), _fig(f"agreement:{a}|{b}:{d}", "", agree),
                       _fig(f"kappa:{a}|{b}:{d}", "", kappa)]
                if lab.ordinal:
                    xs, ys = [float(p[0]) for p in pairs], [float(p[1]) for p in pairs]
                    pr, sr = pearson(xs, ys, **kw), spearman(xs, ys, **kw)
                    row += [_fig("", "", pr), pr.p_value, _fig("", "", sr), sr.p_value]
                    prow.append(pr.value)
                rows.append(row)
                if not drop:
                    for rater in (a, b):
                        other = b if rater == a else a
                        if not r.is_person(rater) and r.is_person(other):
                            collected.setdefault((d, rater), []).append((agree.value, kappa.value))
                        elif r.is_person(rater) and r.is_person(other) and rater == a:
                            collected.setdefault((d, "human-human (ceiling)"), []).append(
                                (agree.value, kappa.value))
        if lab.ordinal and len(prow) > 2:
            pearson_rows.append(prow)
    if rows:
        fs.tables.append(Table(
            key="judge_pairs", title="judge validation: agreement per rater pair (BenchPreS table 6)",
            columns=cols, rows=rows,
            note="items both raters labelled; 95% percentile bootstrap intervals over items"
                 + ("; overall pools item x dimension" if OVERALL in dims else "")
                 + ("; '(ties dropped)' rows leave out units where either rater said tie" if pairwise else "")))
    if pearson_rows:
        fs.tables.append(Table(key="judge_pearson",
                               title="judge validation: Pearson r per rater pair and dimension (RealPref table 10)",
                               columns=["raters", "pair"] + dims, rows=pearson_rows,
                               note="p-values and intervals in the table above"))
    return collected


def _ceiling_table(r: _Ratings, collected: dict, fs: FigureSet) -> None:
    dims = r.dims_overall()
    who = ["human-human (ceiling)"] + r.judges()
    rows = []
    for d in dims:
        for w in who:
            vals = collected.get((d, w))
            if not vals:
                continue
            ag = [v[0] for v in vals if v[0] is not None]
            ka = [v[1] for v in vals if v[1] is not None]
            rows.append([d, w if w.startswith("human") else f"{w} vs humans", len(vals),
                         sum(ag) / len(ag) if ag else None, sum(ka) / len(ka) if ka else None])
    if rows:
        fs.tables.append(Table(key="judge_ceiling", title="judge validation: each judge against the human ceiling",
                               columns=["dimension", "raters", "pairs", "mean agreement", "mean kappa"], rows=rows,
                               note="means over rater pairs of the values in the pair table; the human-human "
                                    "row is the ceiling a judge's agreement with people is read against"))


def _majority_tables(r: _Ratings, lab: Labeler, fs: FigureSet) -> None:
    from sklearn.metrics import accuracy_score, confusion_matrix, precision_recall_fscore_support

    rows = []
    humans = r.humans()
    for j in r.judges():
        for d in r.dims:
            jl = r.labels[j].get(d, {})
            y_true, y_pred = [], []
            for u, lbl in jl.items():
                maj = majority_vote([r.labels[h].get(d, {}).get(u) for h in humans])
                if maj is not None:
                    y_true.append(maj)
                    y_pred.append(lbl)
            if not y_true:
                continue
            cats = SCORES if lab.ordinal else sorted(set(y_true) | set(y_pred), key=str)
            acc = float(accuracy_score(y_true, y_pred))
            p, rc, f1, sup = precision_recall_fscore_support(y_true, y_pred, labels=cats, zero_division=0)
            mp, mr, mf, _ = precision_recall_fscore_support(y_true, y_pred, labels=cats, average="macro",
                                                            zero_division=0)
            for k, c in enumerate(cats):
                if sup[k] or any(y == c for y in y_pred):
                    rows.append([j, d, len(y_true), acc, str(c), float(p[k]), float(rc[k]), float(f1[k]),
                                 int(sup[k])])
            rows.append([j, d, len(y_true), acc, "macro average", float(mp), float(mr), float(mf), len(y_true)])
            fs.figures.append(Figure(key=f"judge_majority_accuracy:{j}:{d}",
                                     label=f"{j}: accuracy against the human majority, {d}", value=acc,
                                     n=len(y_true)))
            cm = confusion_matrix(y_true, y_pred, labels=cats)
            fs.plots.append(Plot(key=f"judge_confusion:{j}:{d}",
                                 title=f"{j} (columns) against the human majority (rows), {d}", kind="heatmap",
                                 data={"rows": [f"humans: {c}" for c in cats],
                                       "columns": [f"{j}: {c}" for c in cats],
                                       "values": [[int(v) for v in row] for row in cm]}))
    if rows:
        fs.tables.append(Table(
            key="judge_vs_majority", title="judge validation: each judge against the human majority label",
            columns=["judge", "dimension", "items", "accuracy", "label", "precision", "recall", "F1", "support"],
            rows=rows, note="human majority = the plurality label of the unit's human annotators (units without "
                            "one left out); precision/recall/F1 from sklearn.metrics, a label never predicted "
                            "has precision 0"))


def _alt_results(r: _Ratings, lab: Labeler, epsilon: float, min_instances: int,
                 seed: int, rule: str = "paper") -> list[tuple[str, Verdict]]:
    """(dimension, verdict) per dimension (and "overall" when dims pool) and judge: the alt-test of the judge
    against the people (Verdict.alt) and the answer built on it (reports.stats.replacement.replacement_verdict)."""
    humans = r.humans()
    scoring = "neg_rmse" if lab.ordinal else "accuracy"
    out = []
    for d in r.dims_overall():
        use = r.dims if d == OVERALL else [d]

        def flat(rater: str) -> dict:
            return {(u, dd): v for dd in use for u, v in r.labels[rater].get(dd, {}).items()}

        people = {h: flat(h) for h in humans}
        for j in r.judges():
            llm = flat(j)
            res = alt_test(people, llm, judge=j, scoring=scoring, epsilon=epsilon, min_instances=min_instances,
                           rule=rule)
            out.append((d, replacement_verdict(res, people, llm, ordinal=lab.ordinal, seed=seed,
                                               min_instances=min_instances)))
    return out


def _alt_tables(results: list[tuple[str, Verdict]], lab: Labeler, fs: FigureSet, epsilon: float,
                min_instances: int, rule: str = "paper") -> None:
    scoring = "neg_rmse" if lab.ordinal else "accuracy"
    rows, detail = [], []
    dims = list(dict.fromkeys(d for d, _ in results))
    for d in dims:
        ranked = sorted((v for dd, v in results if dd == d),
                        key=lambda v: -(v.alt.advantage_probability if v.alt.advantage_probability is not None
                                        else -1))
        for rank, v in enumerate(ranked, start=1):
            res = v.alt
            rows.append([res.judge, d, rank if res.advantage_probability is not None else None,
                         res.n_humans_tested, res.n_instances, res.winning_rate, v.answer,
                         res.advantage_probability])
            fs.figures.append(Figure(key=f"alt_test:{res.judge}:{d}",
                                     label=f"alt-test winning rate of {res.judge}, {d} (may replace the people: "
                                           f"{v.answer})",
                                     value=res.winning_rate, n=res.n_instances,
                                     note=res.note, extra={"passed": res.passed, "answer": v.answer,
                                                           "why": v.why, "rule": res.rule,
                                                           "advantage_probability": res.advantage_probability,
                                                           "epsilon": epsilon}))
            for c in res.comparisons:
                detail.append([res.judge, d, c.annotator, c.n_instances, c.rho_llm, c.rho_human, c.t_stat,
                               None if c.p_value is None else PValue(c.p_value),
                               None if c.p_adjusted is None else PValue(c.p_adjusted), TEST_NAMES.get(c.test, c.test),
                               ("yes" if c.rejected else "no") if c.p_value is not None else c.note])
    if rows:
        fs.tables.append(Table(
            key="alt_test", title="alternative annotator test (Calderon, Reichart and Dror, ACL 2025)",
            columns=["judge", "dimension", "rank", "annotators tested", "instances", "winning rate",
                     "may replace the people", "advantage probability"], rows=rows,
            note=f"leave one annotator out; {scoring} alignment with the remaining annotators; one-sided paired "
                 f"t-test with margin epsilon = {epsilon:g}; Benjamini-Yekutieli at q = 0.05 across annotators; "
                 "the test passes when the judge wins against at least half the annotators; rank by advantage "
                 f"probability; " + (
                     f"the authors' small-sample rule (FAQ): annotators with fewer than {min_instances} instances "
                     "are tested by a one-sided Wilcoxon signed-rank test, and two annotators suffice. 'may replace "
                     "the people' is the answer of the sentence above the section: by this rule yes or no when 2 or "
                     "more people have an item each" if rule == "small-sample" else
                     f"annotators with fewer than {min_instances} instances are left out. "
                     "'may replace the people' is the answer of the sentence above the section: yes or no only when "
                     "3 or more people have 30 or more items each") +
                 ", the people agree beyond chance, and (for a yes) a judge answering at random would not pass"))
    if detail:
        fs.tables.append(Table(
            key="alt_test_annotators", title="alternative annotator test: the judge against each left-out annotator",
            columns=["judge", "dimension", "annotator", "instances", "rho judge", "rho annotator", "t or W+", "p",
                     "p (BY adjusted)", "test", "judge wins"], rows=detail,
            note="test: the one-sided paired t-test (statistic t), or, by the authors' small-sample rule, the "
                 "one-sided Wilcoxon signed-rank test (statistic W+, the rank sum of the positive d - epsilon)"))


TEST_NAMES = {"t": "t-test", "wilcoxon": "Wilcoxon signed-rank (small-sample rule)", "": ""}

ANSWER_TEXT = {YES: "Yes", NO: "No", CANNOT_TELL: "Cannot tell yet"}
VERDICT_TITLE = "judge validation: may the judge replace the people on this study?"


def study_answer(answers: list[str]) -> str:
    """The study's answer from its dimensions' answers: yes when every one is yes, no when one is no, else cannot
    tell yet."""
    if answers and all(a == YES for a in answers):
        return YES
    return NO if NO in answers else CANNOT_TELL


def verdict_sentence(judge: str, per_dim: list[tuple[str, Verdict]]) -> str:
    """"May J replace the people on this study? Yes: <why>." (one dimension) or, for several (study_answer of
    theirs), "... Cannot tell yet: on T/F items, yes: <why>; on MCQ items, cannot tell yet: <why>." Dimensions
    with the same answer for the same reason are named together ("on T/F items and MCQ items alike, ...")."""
    head = f"May {judge} replace the people on this study?"
    if len(per_dim) == 1:
        v = per_dim[0][1]
        return f"{head} {ANSWER_TEXT[v.answer]}: {v.why}."
    groups: dict[tuple[str, str], list[str]] = {}
    for d, v in per_dim:
        groups.setdefault((v.answer, v.why), []).append(d)
    answer = study_answer([v.answer for _, v in per_dim])
    if len(groups) == 1:
        (_, why), dims = next(iter(groups.items()))
        return f"{head} {ANSWER_TEXT[answer]}: on {', '.join(dims[:-1])} and {dims[-1]} alike, {why}."
    parts = [f"on {', '.join(dims[:-1]) + ' and ' if len(dims) > 1 else ''}{dims[-1]}, {a}: {why}"
             for (a, why), dims in groups.items()]
    return f"{head} {ANSWER_TEXT[answer]}: " + "; ".join(parts) + "."


def _sentences(r: _Ratings, results: list[tuple[str, Verdict]]) -> list[str]:
    """One sentence per judge over the study's dimensions (never the pooled "overall")."""
    return [verdict_sentence(j, [(d, v) for d, v in results if v.judge == j and d != OVERALL])
            for j in r.judges()]


def _human_values(r: _Ratings, lab: Labeler, d: str) -> dict[str, float]:
    """unit id -> mean of the human annotators' values on dimension d (units with at least one value)."""
    vals: dict[str, list[float]] = {}
    for h in r.humans():
        for u, lbl in r.labels[h].get(d, {}).items():
            v = lab.value(lbl, r.payload.get(u, {}))
            if v is not None:
                vals.setdefault(u, []).append(v)
    return {u: sum(v) / len(v) for u, v in vals.items()}


def _ppi_table(r: _Ratings, lab: Labeler, fs: FigureSet) -> None:
    rows = []
    for d in r.dims:
        human = _human_values(r, lab, d)
        human_only = classical_mean(list(human.values()))
        for j in r.judges():
            y, yhat, yhat_u, judge_all = [], [], [], []
            for u, lbl in r.labels[j].get(d, {}).items():
                jv = lab.value(lbl, r.payload.get(u, {}))
                if jv is None:
                    continue
                judge_all.append(jv)
                if u in human:
                    y.append(human[u])
                    yhat.append(jv)
                else:
                    yhat_u.append(jv)
            if not judge_all:
                continue
            judge_only = classical_mean(judge_all)
            pp = ppi_mean(y, yhat, yhat_u)
            label = f"{lab.value_label}, {d}"
            fs.figures.append(_fig(f"ppi:{j}:{d}", f"{label}: prediction-powered estimate with judge {j}", pp))
            rows.append([j, d, _fig("", "", human_only), _fig("", "", judge_only), _fig("", "", pp)])
    if rows:
        fs.tables.append(Table(
            key="ppi", title=f"prediction-powered inference of the {lab.value_label} (Angelopoulos et al. 2023)",
            columns=["judge", "dimension", "human-only", "judge-only", "prediction-powered"], rows=rows,
            note="human-only: the human labels (mean per unit) on every unit people labelled; judge-only: the "
                 "judge's labels on every unit it labelled (its interval ignores the judge's bias); "
                 "prediction-powered: the judge's labels on the units people did not label, corrected by its "
                 "bias on the units they did; 95% normal intervals"))


@dataclass
class JudgeSection:
    """The judge-validation section of a study: figures (its FigureSet), sentences (one per judge: may it replace
    the people on this study, verdict_sentence) and verdicts (judge -> dimension -> Verdict)."""

    figures: FigureSet
    sentences: list[str]
    verdicts: dict[str, dict[str, Verdict]]


def _ratings(data: StudyData) -> tuple[_Ratings, Labeler] | None:
    lab = task_specs.get(data.study.task_type).labeler
    if lab is None:
        return None
    r = _read(data, lab)
    if not r.humans() or not r.judges() or not _shares_units(r):
        return None
    return r, lab


def judge_validation(data: StudyData, *, epsilon: float = DEFAULT_EPSILON,
                     min_instances: int = DEFAULT_MIN_INSTANCES, rule: str = "paper") -> JudgeSection | None:
    """The judge-validation section of a study (module doc), or None when the study's task has no labeler or no
    unit carries both a person's and a model's label. epsilon: the alt-test's cost-benefit margin;
    min_instances: the alt-test's minimum instances per left-out annotator (the answer needs 30 whatever it is:
    reports.stats.replacement); rule: the alt-test's rule, "paper" or "small-sample" (reports.stats.alt_test)."""
    got = _ratings(data)
    if got is None:
        return None
    r, lab = got
    fs = FigureSet(study=data.study.name, task=data.study.task_type)
    seed = data.study.seed
    results = _alt_results(r, lab, epsilon, min_instances, seed, rule)
    collected = _pair_tables(r, lab, fs, seed, pairwise=lab.tie is not None)
    _ceiling_table(r, collected, fs)
    _majority_tables(r, lab, fs)
    _alt_tables(results, lab, fs, epsilon, min_instances, rule)
    _ppi_table(r, lab, fs)
    verdicts: dict[str, dict[str, Verdict]] = {}
    for d, v in results:
        verdicts.setdefault(v.judge, {})[d] = v
    return JudgeSection(fs, _sentences(r, results), verdicts)


def judge_verdicts(data: StudyData, *, epsilon: float = DEFAULT_EPSILON,
                   min_instances: int = DEFAULT_MIN_INSTANCES, rule: str = "paper") -> list[str] | None:
    """Only the section's sentences (one per judge), without its tables: what `prefval status STUDY` shows. None
    when the study has no judge-validation section."""
    got = _ratings(data)
    if got is None:
        return None
    r, lab = got
    return _sentences(r, _alt_results(r, lab, epsilon, min_instances, data.study.seed, rule))


def judge_validation_section(data: StudyData, *, epsilon: float = DEFAULT_EPSILON,
                             min_instances: int = DEFAULT_MIN_INSTANCES, rule: str = "paper") -> FigureSet | None:
    """The figures of judge_validation (its FigureSet), or None when there is no section."""
    section = judge_validation(data, epsilon=epsilon, min_instances=min_instances, rule=rule)
    return None if section is None else section.figures
