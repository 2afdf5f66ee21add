"""Figures of an MCQ study (HorizonBench section 5.3).

- accuracy: correct answers / answers over keyed items, every answer pooled (can't tell counts as wrong:
  CANT_TELL_RULE, the same in the per-annotator table; n counts answers).
- with several annotators per item (items with a key and >= 2 answers): majority-vote accuracy (plurality over
  answer categories, can't tell one of them; a tie for first place is settled by the study's tie rule,
  ``--option tie_rule=``: "no-label", the default, gives no label, counted as not correct
  (reports.stats.majority_vote); "first-annotator" gives it to the first annotator, in name order, whose answer
  is among the tied and is not can't tell, as HorizonBench's agreement script does
  (stellalisy/HorizonBench scripts/compute_annotator_agreement.py, compute_majority_vote; its "discard" is our
  can't tell; reports.stats.majority_vote_first_non_discard); label and note name the rule), Fleiss'
  kappa over the ORIGINAL letters plus "can't tell" as its own category (HorizonBench's "discard"), and the share
  of items with at least one annotator correct. HorizonBench reports 56-64%, 0.37-0.51 and 81%.
- distractor share: among wrong answers (an option other than the key; can't tell is not an option and is left
  out) on items with a distractor_index (the pre-evolution value), the share that picked it, next to the uniform
  baseline 1/(k-1) of the k-1 wrong options (HorizonBench: models > 1/3 against 25%, 1.5x).
All intervals: 95% percentile bootstrap over items, seeded with the study seed.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from annotator.tasks.mcq.stats import (CANT_TELL_LABEL, CANT_TELL_RULE, ItemAnswers, accuracy_figure, accuracy_pairs,
                                        answer_label, collect, features_stat, pooled_ratio, pooled_ratio_features,
                                        share)
from reports.figures import Figure, FigureSet, PValue, Table
from reports.stats import at_least_one_correct, fleiss_kappa, majority_vote, majority_vote_first_non_discard
from reports.stats.bootstrap import shared_resamples
from reports.study_data import StudyData
from storage.payloads import letter

MIN_VOTES = 2
#: majority-vote accuracy measures the annotators' own votes against the key (HorizonBench 5.3), so an
#: adjudicator's final answer is not a vote; the per-annotator agreement, which asks whether an annotator matches
#: the item's settled answer, does use it. Label and note say so.
MV_SOURCE = "the annotators' own answers, adjudicated final answers not used"
DEFAULT_TIE_RULE = "no-label"
#: each tie rule: (the words of the figure's label, the note's sentence with its source)
TIE_RULE_WORDS = {
    "no-label": ("a tie: no label",
                 "tie rule no-label (prefval's default): a tie for first place gives no label and counts as not "
                 "correct"),
    "first-annotator": ("a tie: the first annotator's answer",
                        "tie rule first-annotator (HorizonBench's agreement script, scripts/"
                        "compute_annotator_agreement.py compute_majority_vote): a tie for first place goes to the "
                        "first annotator (by name in a study, by column in a CSV) whose answer is among the tied "
                        "ones and is not can't tell (the script's discard)"),
}


def mv_label(tie_rule: str = DEFAULT_TIE_RULE) -> str:
    """The majority-vote figure's label, naming the tie rule."""
    return f"majority-vote accuracy (annotators' votes; {TIE_RULE_WORDS[tie_rule][0]}; adjudications not used)"


#: the label under the default rule
MV_LABEL = mv_label()


def tie_rule_of(settings: dict) -> str:
    """The study's tie rule (settings["tie_rule"], McqTask.study_settings), DEFAULT_TIE_RULE for a study made
    before the option."""
    return settings.get("tie_rule") or DEFAULT_TIE_RULE


def plurality(labels: list, tie_rule: str = DEFAULT_TIE_RULE, discard=CANT_TELL_LABEL):
    """One item's majority-vote label under a tie rule (labels: answer_label of each answer, in annotator order;
    discard: the label the first-annotator rule passes over, can't tell); None when it has no label."""
    if tie_rule == "first-annotator":
        return majority_vote_first_non_discard(labels, discard=discard)
    return majority_vote(labels)


def majority_vote_stat(labels: list[list], keys: list, seed: int, tie_rule: str = DEFAULT_TIE_RULE,
                       discard=CANT_TELL_LABEL, n_boot: int = 1000):
    """Majority-vote accuracy (HorizonBench 5.3): the share of items whose plurality label (plurality() under
    tie_rule) is the key, with a 95% percentile bootstrap over items; over the items with a key and at least
    MIN_VOTES labels. labels: per item, its labels in annotator order (None for missing); keys: per item, the key's
    label or None. The figure of mcq studies and `prefval stats majority-vote` both come from here."""
    rows = [(lab, k) for lab, k in zip(labels, keys)
            if k is not None and sum(x is not None for x in lab) >= MIN_VOTES]
    why = f"over {len(rows)} keyed items with at least {MIN_VOTES} answers"
    present = [[x for x in lab if x is not None] for lab, _ in rows]
    votes = [plurality(lab, tie_rule, discard) == k for lab, (_, k) in zip(present, rows)]
    ties = sum(_is_tie(lab) for lab in present)
    return share("majority_vote_accuracy", votes, _mv_what(why, ties, tie_rule), seed, n_boot=n_boot,
                 extra={"ties": ties, "tie_rule": tie_rule})


def _distractor_fn(s: np.ndarray) -> np.ndarray:
    return _div(s[:, 1], s[:, 0])


def _div(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.asarray(a, dtype=float) / np.asarray(b, dtype=float)
    out[~np.isfinite(out)] = np.nan
    return out


def _is_tie(labels: list) -> bool:
    counts: dict = {}
    for x in labels:
        if x is not None:
            counts[x] = counts.get(x, 0) + 1
    return bool(counts) and list(counts.values()).count(max(counts.values())) > 1


def _mv_what(why: str, ties: int, tie_rule: str) -> str:
    return (f"share of items whose plurality answer is the key, {why}; {TIE_RULE_WORDS[tie_rule][1]} ({ties} tied "
            f"items); {MV_SOURCE}")


def multi_annotator_figures(items: list[ItemAnswers], seed: int, tie_rule: str = DEFAULT_TIE_RULE) -> list[Figure]:
    """Majority-vote accuracy (under tie_rule), Fleiss' kappa and at-least-one-correct over keyed items with >= 2
    answers."""
    multi = [it for it in items if it.key is not None and len(it.answers) >= MIN_VOTES]
    why = f"over {len(multi)} keyed items with at least {MIN_VOTES} answers"
    raters = sorted({n for it in multi for n in it.answers})
    ratings = [[answer_label(it.answers[r]) if r in it.answers else None for r in raters] for it in multi]
    k_max = max((it.n_options for it in multi), default=0)
    cats = [letter(i) for i in range(k_max)] + [CANT_TELL_LABEL]
    correct = [[it.answers[r].get("choice") == it.key if r in it.answers else None for r in raters] for it in multi]
    with shared_resamples() as batch:  # the three statistics resample the same items: one draw for all three
        mv = majority_vote_stat([[answer_label(it.answers[n]) for n in sorted(it.answers)] for it in multi],
                                [letter(it.key) for it in multi], seed, tie_rule)
        if multi:
            fk = fleiss_kappa(ratings, categories=cats, ci=True, seed=seed)
        else:
            fk = pooled_ratio("fleiss_kappa", [], why, seed)
        alo = at_least_one_correct(correct, ci=True, seed=seed) if multi else pooled_ratio(
            "at_least_one_correct", [], why, seed)
    mv, fk, alo = batch.result(mv), batch.result(fk), batch.result(alo)
    return [Figure.from_stat("majority_vote_accuracy", mv_label(tie_rule), mv),
            Figure.from_stat("fleiss_kappa", "Fleiss' kappa (letters + can't tell)", fk),
            Figure.from_stat("at_least_one_correct", "items with at least one annotator correct", alo)]


def distractor_features(answered: list[tuple[ItemAnswers, list[dict]]]) -> list[list[float]]:
    """Per item with a key and a distractor_index, given answers (item, its answers): [wrong answers, wrong answers
    on the distractor, sum over wrong answers of 1/(k-1)]; items without a wrong answer left out. A wrong answer is
    an option other than the key (can't tell is no option)."""
    feats = []
    for it, answers in answered:
        d = it.payload.get("distractor_index")
        if d is None or it.key is None:
            continue
        wrong = [a["choice"] for a in answers if not a.get("cant_tell") and a.get("choice") is not None
                 and a["choice"] != it.key]
        if wrong:
            feats.append([len(wrong), sum(c == d for c in wrong), len(wrong) / (it.n_options - 1)])
    return feats


def distractor_p_value(feats) -> float | None:
    """One-sided exact binomial test that wrong answers pick the pre-evolution distractor more often than the
    uniform share (HorizonBench section 6.2: "all 25 models exceed this null (p < 0.001, one-sided binomial
    test)"): P(X >= the wrong answers on the distractor), X the number of wrong answers on it when each picks
    among its item's k-1 wrong options at random, i.e. Binomial(n, 1/(k-1)); with items of several k, the sum of
    one binomial per k (their pmfs convolved), which is the binomial when every item has the same k. Wrong
    answers are taken as independent trials. feats: distractor_features' rows. None without a wrong answer."""
    from scipy.stats import binom

    rows = np.asarray(feats, dtype=np.float64).reshape(-1, 3) if len(feats) else np.zeros((0, 3))
    if not len(rows) or rows[:, 0].sum() == 0:
        return None
    hits = int(round(rows[:, 1].sum()))
    trials: dict[float, int] = {}
    for n_wrong, _, base in rows.tolist():
        p0 = round(base / n_wrong, 12)  # 1/(k-1) of the item
        trials[p0] = trials.get(p0, 0) + int(round(n_wrong))
    pmf = np.ones(1)
    for p0, n in sorted(trials.items()):
        pmf = np.convolve(pmf, binom.pmf(np.arange(n + 1), n, p0))
    return float(min(1.0, pmf[hits:].sum()))


DISTRACTOR_TEST = "one-sided binomial test, share above uniform 1/(k-1)"


def distractor_figures(items: list[ItemAnswers], seed: int) -> list[Figure]:
    """Share of wrong answers that chose the pre-evolution distractor (with its one-sided binomial test against
    the uniform share, distractor_p_value), the uniform baseline and their ratio.

    Per item features (distractor_features): [wrong answers, wrong answers on the distractor, sum over wrong
    answers of 1/(k-1)]. share = f1/f0, baseline = f2/f0 (1/(k-1) averaged over the wrong answers), ratio = f1/f2.
    """
    return _distractor_figures(distractor_features([(it, it.chosen()) for it in items]), seed)


def models_distractor_table(data: StudyData, answers: dict[str, dict[str, dict]], fs: FigureSet) -> None:
    """HorizonBench 6.2 per model, beside the people: among wrong answers on items with a pre-evolution distractor
    (payload distractor_index), the share that picked it, the uniform share 1/(k-1) of the k-1 wrong options, their
    ratio and the one-sided exact binomial test of the share against the uniform one (distractor_features and
    distractor_p_value, the people's figure's own functions). answers: model name -> unit id -> answer
    (reports.llm_answers.model_answers_by_name). Figures llm_distractor_share:NAME; table distractor_by_model with
    the people's row first."""
    from reports.llm_answers import testers as model_testers
    from reports.stats._common import safe_ratio

    seed = data.study.seed
    people = collect(data)
    by_unit = {it.unit_id: it for it in people}
    testers = [("people (this study)", [(it, it.chosen()) for it in people])]
    testers += [(name, [(by_unit[u], [a]) for u, a in answers[name].items() if u in by_unit])
                for name in model_testers(answers)]
    rows = []
    for name, answered in testers:
        feats = distractor_features(answered)
        wrong = int(sum(f[0] for f in feats))
        on_d = int(sum(f[1] for f in feats))
        base = sum(f[2] for f in feats) / wrong if wrong else None
        p = distractor_p_value(feats)
        st = features_stat("distractor_share", feats, lambda s_: safe_ratio(s_[:, 1], s_[:, 0]),
                           "share of wrong answers on the pre-evolution distractor", seed)
        # n counts wrong answers, as the column beside it and the models' figures do (the bootstrap is over items)
        cell = Figure.from_stat("", "", st, n=wrong, n_of="wrong answers", p_value=p,
                                p_label=DISTRACTOR_TEST if p is not None else "")
        rows.append([name, wrong, on_d, cell, base, (on_d / wrong) / base if wrong and base else None,
                     None if p is None else PValue(p)])
        if name != "people (this study)":
            fs.figures.append(Figure.from_stat(
                f"llm_distractor_share:{name}", f"wrong answers of {name} on the pre-evolution distractor", st,
                n=wrong, n_of="wrong answers", p_value=p, p_label=DISTRACTOR_TEST if p is not None else "",
                note=f"{on_d} of {wrong} wrong answers; uniform share {base:.3g}; exact {DISTRACTOR_TEST}"
                if wrong else "no wrong answer on an item with a distractor"))
    fs.tables.append(Table(
        key="distractor_by_model", title="pre-evolution distractor share of wrong answers (HorizonBench 6.2)",
        columns=["tester", "wrong answers", "on the distractor", "share", "uniform share 1/(k-1)", "share / uniform",
                 "p (one-sided binomial)"], rows=rows,
        note="items with a pre-evolution distractor; a wrong answer is an option other than the key (can't tell "
             "left out); uniform: each wrong answer picks among its item's k-1 wrong options at random; exact "
             "one-sided binomial test of the share against it, wrong answers taken as independent trials "
             "(HorizonBench: every model above the uniform 25%, p < 0.001, about 1.5x); 95% bootstrap intervals "
             "over items"))


#: the per-annotator accuracy table: "answered" counts can't tell answers, as the accuracy figure's n does
ANNOTATOR_COLUMNS = ["annotator", "answered", "correct", "can't tell", f"accuracy ({CANT_TELL_RULE})"]
ANNOTATOR_NOTE = f"answered includes can't tell; {CANT_TELL_RULE}, as in the accuracy figure"


def annotator_table(items: list[ItemAnswers]) -> Table | None:
    """Per annotator: answered keyed items, correct, can't tell, accuracy (can't tell counts as wrong)."""
    per: dict[str, list[int]] = {}
    for it in items:
        if it.key is None:
            continue
        for name, a in it.answers.items():
            row = per.setdefault(name, [0, 0, 0])
            row[0] += 1
            row[1] += a.get("choice") == it.key
            row[2] += bool(a.get("cant_tell"))
    if not per:
        return None
    rows = [[name, n, c, ct, c / n] for name, (n, c, ct) in sorted(per.items())]
    return Table(key="accuracy_by_annotator", title="accuracy by annotator",
                 columns=ANNOTATOR_COLUMNS, rows=rows, note=ANNOTATOR_NOTE)


def mcq_figures(data: StudyData) -> FigureSet:
    """All MCQ figures (see the module docstring) for `prefval status` / reports."""
    fs = FigureSet(study=data.study.name, task=data.study.task_type)
    items = collect(data)
    seed = data.study.seed
    acc = pooled_ratio("accuracy", accuracy_pairs(items), "correct answers / answers over keyed items", seed)
    fs.figures.append(accuracy_figure("accuracy", "accuracy (all answers)", acc))
    n_ans = sum(len(it.answers) for it in items)
    n_ct = sum(bool(a.get("cant_tell")) for it in items for a in it.answers.values())
    fs.figures.append(Figure(key="cant_tell_rate", label="can't tell answers", value=n_ct / n_ans if n_ans else None,
                             n=n_ans, n_of="answers",
                             note=f"{n_ans} answers over {sum(1 for it in items if it.answers)} items"
                             if n_ans else "no answer yet"))
    fs.figures.extend(multi_annotator_figures(items, seed, tie_rule_of(data.study.settings)))
    if any(it.payload.get("distractor_index") is not None for it in items):
        fs.figures.extend(distractor_figures(items, seed))
    table = annotator_table(items)
    if table:
        fs.tables.append(table)
    return fs


def _by_pair(codes: np.ndarray, ids: np.ndarray, fn) -> np.ndarray:
    """fn(code, id) for each (code, id) pair of two int arrays, evaluated once per distinct pair."""
    if not len(codes):
        return np.zeros(0, dtype=bool)
    pairs, inv = np.unique(np.column_stack([codes, ids]), axis=0, return_inverse=True)
    return np.array([fn(int(c), int(k)) for c, k in pairs], dtype=bool)[inv.reshape(-1)]


def _factor(values: list) -> tuple[np.ndarray, list]:
    """(id per value, distinct values in first-seen order); -1 for None."""
    index: dict = {}
    ids = np.fromiter((-1 if v is None else index.setdefault(v, len(index)) for v in values), dtype=np.int64,
                      count=len(values))
    return ids, list(index)


def mcq_figures_table(t) -> FigureSet:
    """mcq_figures from a reports.study_table.StudyTable read with McqTask.table_values / table_lengths: the same figures
    (same values, intervals from the same seeded resamples), computed from answer columns and per-unit counts
    instead of one object per answer: every figure is a sum over answers of a function of (distinct answer, the
    unit's key), evaluated once per distinct pair."""
    from reports.stats._prep import Prepared

    fs = FigureSet(study=t.study.name, task=t.study.task_type)
    seed = t.study.seed
    n = t.n_units
    key_id, keys = _factor(t.values["key"])
    answers = t.answers
    # ItemAnswers keeps only non-empty answers
    nonempty = np.array([bool(a) for a in answers], dtype=bool)
    sel = nonempty[t.code] if len(t.code) else np.zeros(0, dtype=bool)
    unit, code, ann = t.unit[sel], t.code[sel], t.annotator[sel]
    kid = key_id[unit]
    keyed = kid >= 0
    correct = np.zeros(len(unit), dtype=bool)
    correct[keyed] = _by_pair(code[keyed], kid[keyed], lambda c, k: answers[c].get("choice") == keys[k])
    n_per_unit = np.bincount(unit, minlength=n)
    keyed_unit = key_id >= 0

    acc_units = keyed_unit & (n_per_unit > 0)
    f = np.column_stack([n_per_unit[acc_units], np.bincount(unit[correct], minlength=n)[acc_units]]).astype(
        np.float64)
    acc = pooled_ratio_features("accuracy", f, "correct answers / answers over keyed items", seed)
    fs.figures.append(accuracy_figure("accuracy", "accuracy (all answers)", acc))
    cant = np.array([bool(a.get("cant_tell")) for a in answers], dtype=bool)
    n_ans, n_ct = len(unit), int(cant[code].sum()) if len(code) else 0
    fs.figures.append(Figure(key="cant_tell_rate", label="can't tell answers", value=n_ct / n_ans if n_ans else None,
                             n=n_ans, n_of="answers",
                             note=f"{n_ans} answers over {int((n_per_unit > 0).sum())} items"
                             if n_ans else "no answer yet"))

    # several annotators per item: keyed units with >= MIN_VOTES answers
    multi_unit = keyed_unit & (n_per_unit >= MIN_VOTES)
    row_of = np.cumsum(multi_unit) - 1
    in_multi = multi_unit[unit]
    n_multi = int(multi_unit.sum())
    why = f"over {n_multi} keyed items with at least {MIN_VOTES} answers"
    m_row, m_code, m_ann = row_of[unit[in_multi]], code[in_multi], ann[in_multi]
    used = set(np.unique(m_code).tolist())  # answer_label of the answers these figures read, as mcq_figures
    lab_id, lab_values = _factor([answer_label(a) if c in used else None for c, a in enumerate(answers)])
    m_lab = lab_id[m_code]
    q = max(len(lab_values), 1)
    ok = m_lab >= 0
    counts = np.bincount(m_row[ok] * q + m_lab[ok], minlength=n_multi * q).reshape(n_multi, q)
    top = counts.max(axis=1) if n_multi else np.zeros(0, dtype=np.int64)
    plural = np.where((top > 0) & ((counts == top[:, None]).sum(axis=1) == 1), counts.argmax(axis=1), -1) \
        if n_multi else np.zeros(0, dtype=np.int64)
    multi_kid = key_id[multi_unit]
    key_lab = np.full(len(keys), -2, dtype=np.int64)
    for k in np.unique(multi_kid).tolist():  # the letter of each key that a multi-annotator item has
        if letter(keys[k]) in lab_values:
            key_lab[k] = lab_values.index(letter(keys[k]))
    votes = (plural >= 0) & (plural == key_lab[multi_kid]) if n_multi else np.zeros(0, dtype=bool)
    ties = int((plural < 0).sum())
    names = t.names()
    rater_idx = sorted(set(m_ann.tolist()), key=lambda k: names[k])
    col = np.full(len(names), -1, dtype=np.int64)
    col[rater_idx] = np.arange(len(rater_idx))
    k_max = max(t.lengths["n_options"][u] for u in np.flatnonzero(multi_unit).tolist()) if n_multi else 0
    cats = [letter(i) for i in range(k_max)] + [CANT_TELL_LABEL]
    cat_of = np.array([cats.index(v) if v in cats else -2 for v in lab_values], dtype=np.int64)
    codes = np.full((n_multi, len(rater_idx)), -1, dtype=np.int64)
    codes[m_row, col[m_ann]] = np.where(m_lab >= 0, cat_of[np.maximum(m_lab, 0)] if len(cat_of) else -1, -1)
    if (codes == -2).any():  # a letter beyond the items' options: the labels path names it in its error
        r, c = np.argwhere(codes == -2)[0]
        ratings = [[None] * len(rater_idx) for _ in range(n_multi)]
        ratings[r][c] = lab_values[m_lab[(m_row == r) & (col[m_ann] == c)][0]]
        fleiss_kappa(ratings, categories=cats)
    tie_rule = tie_rule_of(t.study.settings)
    if tie_rule != DEFAULT_TIE_RULE and ties:  # the tied rows again, in annotator name order (codes' columns)
        votes = votes.copy()
        for r in np.flatnonzero(plural < 0).tolist():
            row = [cats[c] for c in codes[r].tolist() if c >= 0]
            if row:
                votes[r] = plurality(row, tie_rule) == letter(keys[multi_kid[r]])
    correct_m = np.full((n_multi, len(rater_idx)), np.nan)
    correct_m[m_row, col[m_ann]] = correct[in_multi]
    with shared_resamples() as batch:
        mv = pooled_ratio_features(
            "majority_vote_accuracy", np.column_stack([np.ones(n_multi), votes.astype(np.float64)]),
            _mv_what(why, ties, tie_rule), seed, extra={"ties": ties, "tie_rule": tie_rule})
        if n_multi:
            fk = fleiss_kappa(Prepared.from_codes(codes, cats), categories=cats, ci=True, seed=seed)
            alo = at_least_one_correct(correct_m, ci=True, seed=seed)
        else:
            fk = pooled_ratio("fleiss_kappa", [], why, seed)
            alo = pooled_ratio("at_least_one_correct", [], why, seed)
    mv, fk, alo = batch.result(mv), batch.result(fk), batch.result(alo)
    fs.figures.extend([Figure.from_stat("majority_vote_accuracy", mv_label(tie_rule), mv),
                       Figure.from_stat("fleiss_kappa", "Fleiss' kappa (letters + can't tell)", fk),
                       Figure.from_stat("at_least_one_correct", "items with at least one annotator correct", alo)])

    d_id, ds = _factor(t.values["distractor"])
    if (d_id >= 0).any():
        fs.figures.extend(_distractor_figures_table(t, unit, code, kid, d_id, ds, seed))
    if keyed.any():
        per = np.column_stack([np.bincount(ann[keyed], minlength=len(names)),
                               np.bincount(ann[keyed & correct], minlength=len(names)),
                               np.bincount(ann[keyed & cant[code]], minlength=len(names))])
        rows = sorted([names[k], n_, c, ct, c / n_] for k, (n_, c, ct) in enumerate(per.tolist()) if n_)
        fs.tables.append(Table(key="accuracy_by_annotator", title="accuracy by annotator",
                               columns=ANNOTATOR_COLUMNS, rows=rows, note=ANNOTATOR_NOTE))
    return fs


def _distractor_figures_table(t, unit, code, kid, d_id, ds, seed) -> list[Figure]:
    """distractor_figures from answer columns (non-empty answers: unit, code, key id per answer)."""
    answers = t.answers
    n = t.n_units
    u_d = d_id[unit]
    on = (u_d >= 0) & (kid >= 0)
    chosen = np.array([not a.get("cant_tell") and a.get("choice") is not None for a in answers], dtype=bool)
    on &= chosen[code]
    keys = _factor(t.values["key"])[1]
    wrong = np.zeros(len(unit), dtype=bool)
    wrong[on] = _by_pair(code[on], kid[on], lambda c, k: answers[c]["choice"] != keys[k])
    on_d = np.zeros(len(unit), dtype=bool)
    on_d[wrong] = _by_pair(code[wrong], u_d[wrong], lambda c, k: answers[c]["choice"] == ds[k])
    n_wrong = np.bincount(unit[wrong], minlength=n)
    rows = np.flatnonzero(n_wrong > 0)
    n_opt = np.array([t.lengths["n_options"][u] for u in rows.tolist()], dtype=np.float64)
    feats = np.column_stack([n_wrong[rows], np.bincount(unit[on_d], minlength=n)[rows],
                             n_wrong[rows] / (n_opt - 1)]).astype(np.float64) if len(rows) else []
    return _distractor_figures(feats, seed)


def _distractor_figures(feats, seed: int) -> list[Figure]:
    """The three distractor figures from per-item rows [wrong answers, of them on the distractor, share 1/(k-1)]
    (an (n, 3) float array or an empty list): share, uniform baseline and their ratio, each with its bootstrap
    interval (HorizonBench, distractor analysis)."""
    what = "among wrong answers (options other than the key; can't tell left out) on items with a distractor"
    sh = features_stat("distractor_share", feats, _distractor_fn, f"share choosing the distractor {what}", seed)
    base = features_stat("distractor_baseline", feats, lambda s: _div(s[:, 2], s[:, 0]),
                         f"uniform chance 1/(k-1) of picking it {what}", seed)
    ratio = features_stat("distractor_ratio", feats, lambda s: _div(s[:, 1], s[:, 2]),
                          "distractor share / uniform baseline (HorizonBench: 1.5x for models)", seed)
    p = distractor_p_value(feats)
    if p is not None and sh.value is not None:
        sh = replace(sh, note=f"{sh.note}; exact {DISTRACTOR_TEST} (HorizonBench 6.2), wrong answers taken as "
                              "independent trials")
    return [Figure.from_stat("distractor_share", "wrong answers on the pre-evolution distractor", sh,
                             p_value=p if sh.value is not None else None,
                             p_label=DISTRACTOR_TEST if p is not None and sh.value is not None else ""),
            Figure.from_stat("distractor_baseline", "uniform baseline 1/(k-1)", base),
            Figure.from_stat("distractor_ratio", "distractor share / baseline", ratio)]
