"""Figures of an MCQ study (HorizonBench section 5.3).

- accuracy: correct answers / answers over keyed items, every answer pooled (can't tell counts as wrong).
- with several annotators per item (items with a key and >= 2 answers): majority-vote accuracy (plurality via
  reports.stats.majority_vote over answer categories; a tie gives no label and counts as not correct), Fleiss'
  kappa over the ORIGINAL letters plus "can't tell" as its own category (HorizonBench's "discard"), and the share
  of items with at least one annotator correct. HorizonBench reports 56-64%, 0.37-0.51 and 81%.
- distractor share: among wrong answers (an option other than the key; can't tell is not an option and is left
  out) on items with a distractor_index (the pre-evolution value), the share that picked it, next to the uniform
  baseline 1/(k-1) of the k-1 wrong options (HorizonBench: models > 1/3 against 25%, 1.5x).
All intervals: 95% percentile bootstrap over items, seeded with the study seed.
"""
from __future__ import annotations

import numpy as np

from annotator.tasks.mcq.stats import (CANT_TELL_LABEL, ItemAnswers, accuracy_pairs, answer_label, collect,
                                        features_stat, pooled_ratio, share)
from reports.figures import Figure, FigureSet, Table
from reports.stats import at_least_one_correct, fleiss_kappa, majority_vote
from reports.stats.bootstrap import shared_resamples
from reports.study_data import StudyData
from storage.payloads import letter

MIN_VOTES = 2


def _distractor_fn(s: np.ndarray) -> np.ndarray:
    return _div(s[:, 1], s[:, 0])


def _div(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.asarray(a, dtype=float) / np.asarray(b, dtype=float)
    out[~np.isfinite(out)] = np.nan
    return out


def multi_annotator_figures(items: list[ItemAnswers], seed: int) -> list[Figure]:
    """Majority-vote accuracy, Fleiss' kappa and at-least-one-correct over keyed items with >= 2 answers."""
    multi = [it for it in items if it.key is not None and len(it.answers) >= MIN_VOTES]
    why = f"over {len(multi)} keyed items with at least {MIN_VOTES} answers"
    plurality = [majority_vote([answer_label(a) for a in it.answers.values()]) for it in multi]
    votes = [p == letter(it.key) for p, it in zip(plurality, multi)]
    ties = sum(p is None for p in plurality)
    raters = sorted({n for it in multi for n in it.answers})
    ratings = [[answer_label(it.answers[r]) if r in it.answers else None for r in raters] for it in multi]
    k_max = max((it.n_options for it in multi), default=0)
    cats = [letter(i) for i in range(k_max)] + [CANT_TELL_LABEL]
    correct = [[it.answers[r].get("choice") == it.key if r in it.answers else None for r in raters] for it in multi]
    with shared_resamples() as batch:  # the three statistics resample the same items: one draw for all three
        mv = share("majority_vote_accuracy", votes,
                   f"share of items whose plurality answer is the key, {why}; a tie gives no label and counts as "
                   f"not correct ({ties} tied items)", seed, extra={"ties": ties})
        if multi:
            fk = fleiss_kappa(ratings, categories=cats, ci=True, seed=seed)
        else:
            fk = pooled_ratio("fleiss_kappa", [], why, seed)
        alo = at_least_one_correct(correct, ci=True, seed=seed) if multi else pooled_ratio(
            "at_least_one_correct", [], why, seed)
    mv, fk, alo = batch.result(mv), batch.result(fk), batch.result(alo)
    return [Figure.from_stat("majority_vote_accuracy", "majority-vote accuracy", mv),
            Figure.from_stat("fleiss_kappa", "Fleiss' kappa (letters + can't tell)", fk),
            Figure.from_stat("at_least_one_correct", "items with at least one annotator correct", alo)]


def distractor_figures(items: list[ItemAnswers], seed: int) -> list[Figure]:
    """Share of wrong answers that chose the pre-evolution distractor, the uniform baseline and their ratio.

    Per item features: [wrong answers, wrong answers on the distractor, sum over wrong answers of 1/(k-1)].
    share = f1/f0, baseline = f2/f0 (1/(k-1) averaged over the wrong answers), ratio = f1/f2.
    """
    feats = []
    for it in items:
        d = it.payload.get("distractor_index")
        if d is None or it.key is None:
            continue
        wrong = [a["choice"] for a in it.chosen() if a["choice"] != it.key]
        if wrong:
            feats.append([len(wrong), sum(c == d for c in wrong), len(wrong) / (it.n_options - 1)])
    what = "among wrong answers (options other than the key; can't tell left out) on items with a distractor"
    sh = features_stat("distractor_share", feats, _distractor_fn, f"share choosing the distractor {what}", seed)
    base = features_stat("distractor_baseline", feats, lambda s: _div(s[:, 2], s[:, 0]),
                         f"uniform chance 1/(k-1) of picking it {what}", seed)
    ratio = features_stat("distractor_ratio", feats, lambda s: _div(s[:, 1], s[:, 2]),
                          "distractor share / uniform baseline (HorizonBench: 1.5x for models)", seed)
    return [Figure.from_stat("distractor_share", "wrong answers on the pre-evolution distractor", sh),
            Figure.from_stat("distractor_baseline", "uniform baseline 1/(k-1)", base),
            Figure.from_stat("distractor_ratio", "distractor share / baseline", ratio)]


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
                 columns=["annotator", "answered", "correct", "can't tell", "accuracy"], rows=rows,
                 note="can't tell counts as not correct")


def mcq_figures(data: StudyData) -> FigureSet:
    """All MCQ figures (see the module docstring) for `prefval status` / reports."""
    fs = FigureSet(study=data.study.name, task=data.study.task_type)
    items = collect(data)
    seed = data.study.seed
    acc = pooled_ratio("accuracy", accuracy_pairs(items),
                       "correct answers / answers over keyed items (can't tell counts as wrong)", seed)
    fs.figures.append(Figure.from_stat("accuracy", "accuracy (all answers)", acc))
    n_ans = sum(len(it.answers) for it in items)
    n_ct = sum(bool(a.get("cant_tell")) for it in items for a in it.answers.values())
    fs.figures.append(Figure(key="cant_tell_rate", label="can't tell answers", value=n_ct / n_ans if n_ans else None,
                             n=n_ans, n_of="answers",
                             note=f"{n_ans} answers over {sum(1 for it in items if it.answers)} items"
                             if n_ans else "no answer yet"))
    fs.figures.extend(multi_annotator_figures(items, seed))
    if any(it.payload.get("distractor_index") is not None for it in items):
        fs.figures.extend(distractor_figures(items, seed))
    table = annotator_table(items)
    if table:
        fs.tables.append(table)
    return fs
