"""Figures of a blind test (RealPref appendix G.2, table 9): accuracy against chance per format with a binomial
test, guessable items (rule in annotator/tasks/blind_test/task.py and GUESS_* below) and the "odd one out" polarity
share."""
from __future__ import annotations

import functools
from typing import Any


from annotator.tasks.mcq.stats import ItemAnswers, collect, share
from reports.figures import Figure, FigureSet, Table
from reports.stats import accuracy_vs_chance
from reports.study_data import StudyData

# RealPref Table 9 (appendix G.2): one LLM's blind accuracy (Gemini 2.5 Flash-Lite); no human row. It belongs beside
# models' answers, so reports/llm_answers.py's Table 9 shows it, never a figure about people.
PUBLISHED_LLM = {"mcq": 0.563, "tf": 0.546}
PUBLISHED_LLM_NAME = "Gemini 2.5 Flash-Lite"
GUESS_MIN_ANSWERS = 2
GUESS_ALPHA = 0.05


def chance(it: ItemAnswers) -> float:
    """Chance accuracy of one item: 0.5 for T/F, 1/k for k options."""
    return 0.5 if it.fmt == "tf" else 1.0 / it.n_options


def polarity(it: ItemAnswers) -> str | None:
    """"negative", "other" or None (unknown) from metadata polarity, else preference_type / Type."""
    meta = it.metadata
    pol = meta.get("polarity")
    if pol is not None:
        return "negative" if str(pol).strip().lower().startswith("neg") else "other"
    ptype = meta.get("preference_type", meta.get("Type"))
    if ptype is not None:
        return "negative" if "negative" in str(ptype).lower() else "other"
    return None


@functools.lru_cache(maxsize=4096)
def binomial_p(k: int, n: int, p0: float) -> float:
    """One-sided exact binomial p-value P(X >= k) for X ~ Binomial(n, p0) (scipy.stats.binomtest, alternative
    "greater"); cached, as a study's items share a few (k, n, chance) triples."""
    from scipy.stats import binomtest

    return float(binomtest(k, n, p0, alternative="greater").pvalue)


def item_verdict(it: ItemAnswers) -> dict[str, Any]:
    """Counts, one-sided binomial p (correct count at chance or above) and the guessable flag of one item."""
    picked = it.chosen()
    n, k = len(picked), sum(a["choice"] == it.key for a in picked)
    p = binomial_p(k, n, chance(it)) if n else None
    guessable = None if n < GUESS_MIN_ANSWERS else (k == n or p < GUESS_ALPHA)
    # guessable None: too few option answers to judge
    return {"n": n, "correct": k, "cant_tell": len(it.answers) - n, "p": p, "guessable": guessable}


def _groups(items: list[ItemAnswers]) -> list[tuple[str, str, list[ItemAnswers]]]:
    """(key suffix, label, items): T/F, then MCQ as one group when every MCQ item has the same k, else per k."""
    out = []
    tf = [it for it in items if it.fmt == "tf"]
    if tf:
        out.append(("tf", "T/F", tf))
    mcq = [it for it in items if it.fmt != "tf"]
    ks = sorted({it.n_options for it in mcq})
    if len(ks) == 1:
        out.append(("mcq", f"MCQ ({ks[0]} options)", mcq))
    for k in ks if len(ks) > 1 else []:
        out.append((f"mcq_k{k}", f"MCQ ({k} options)", [it for it in mcq if it.n_options == k]))
    return out


def table9_groups(items: list[ItemAnswers]) -> list[tuple[str, str, list[ItemAnswers]]]:
    """The columns of RealPref Table 9 (MCQ, then T/F): _groups in the paper's order."""
    groups = _groups(items)
    return [g for g in groups if g[0] != "tf"] + [g for g in groups if g[0] == "tf"]


def table9_cell(choices: list[tuple[ItemAnswers, dict]], seed: int) -> Figure | None:
    """One Table 9 cell: blind accuracy of the option answers (item, answer) given, can't tell left out, with its
    exact one-sided binomial test against the items' chance (reports.stats.accuracy_vs_chance, as the people's
    figure); None when there is no option answer."""
    picked = [(it, a) for it, a in choices if not a.get("cant_tell") and a.get("choice") is not None]
    if not picked:
        return None
    ch = chance(picked[0][0])
    st = accuracy_vs_chance([a["choice"] == it.key for it, a in picked], ch, ci=True, seed=seed,
                            alternative="greater", unit="answers")
    n_items = len({it.unit_id for it, _ in picked})
    # p_value, p_label and note all from the one one-sided test st computed
    return Figure.from_stat("", "", st, n_of="answers", p_value=st.p_value,
                            p_label="one-sided binomial test, above chance",
                            note=f"{st.n_items} answers over {n_items} items; {st.note.split('; ', 1)[1]}")


def table9_published(suffix: str, label: str) -> float | None:
    """Table 9's published LLM value for a column: MCQ is RealPref's four-option MCQ."""
    if suffix == "tf":
        return PUBLISHED_LLM["tf"]
    return PUBLISHED_LLM["mcq"] if label == "MCQ (4 options)" else None


def blind_test_figures(data: StudyData) -> FigureSet:
    """Accuracy against chance per format, can't-tell rate, the per-item table with guessable flags and the
    odd-one-out polarity figure (see the module docstring)."""
    fs = FigureSet(study=data.study.name, task=data.study.task_type)
    items = [it for it in collect(data) if it.key is not None]
    seed = data.study.seed
    verdicts = {it.unit_id: item_verdict(it) for it in items}
    # an item is guessable when its outcome (TaskType.outcomes: the release's decision, over the people's answers
    # once the item has its quota) fails it; items not decided yet are not judged
    from annotator.tasks import get_task
    from annotator.tasks.outcome import FAILED

    outcomes = get_task(data.study.task_type).outcomes(data)
    for it in items:
        o = outcomes[it.unit_id]
        verdicts[it.unit_id]["guessable"] = (o.state == FAILED) if o.decided else None
        verdicts[it.unit_id]["outcome"] = o.text()
    for suffix, label, group in _groups(items):
        flags = [a["choice"] == it.key for it in group for a in it.chosen()]
        ch = chance(group[0])
        st = accuracy_vs_chance(flags, ch, ci=True, seed=seed, alternative="greater", unit="answers")
        answered_items = sum(1 for it in group if it.chosen())
        fig = Figure.from_stat(f"accuracy_vs_chance_{suffix}", f"blind accuracy, {label}, chance {ch:.3g}", st,
                               n_of="answers", p_value=st.p_value, p_label="one-sided binomial test, above chance")
        fig.note = (f"{st.n_items} answers over {answered_items} items; exact binomial test against chance {ch:.3g}, "
                    "one-sided (above chance); can't tell answers left out; answers taken as independent trials"
                    if st.value is not None else fig.note)
        fs.figures.append(fig)
        n_all = sum(len(it.answers) for it in group)
        n_ct = sum(verdicts[it.unit_id]["cant_tell"] for it in group)
        fs.figures.append(Figure(key=f"cant_tell_rate_{suffix}", label=f"can't tell answers, {label}",
                                 value=n_ct / n_all if n_all else None, n=n_all, n_of="answers",
                                 note=f"{n_all} answers over {sum(1 for it in group if it.answers)} items"
                                 if n_all else "no answer yet"))
        judged = [verdicts[it.unit_id]["guessable"] for it in group
                  if verdicts[it.unit_id]["guessable"] is not None]
        gs = share(f"guessable_share_{suffix}", judged, "share of items flagged guessable among the items the study "
                   f"has decided (their quota of answers, at least {GUESS_MIN_ANSWERS} option answers): the items "
                   "`prefval release` leaves out", seed)
        fs.figures.append(Figure.from_stat(f"guessable_share_{suffix}", f"guessable items, {label}", gs))
    fs.figures.append(odd_one_out_figure([it for it in items if it.fmt != "tf"], verdicts, seed))
    rows = []
    for it in items:
        v = verdicts[it.unit_id]
        rows.append([it.item.external_id, it.fmt, it.n_options, v["n"], v["correct"], v["cant_tell"],
                     v["correct"] / v["n"] if v["n"] else None, chance(it), v["p"], v["guessable"], v["outcome"]])
    fs.tables.append(Table(
        key="items", title="blind answers per item",
        columns=["item", "format", "options", "answers", "correct", "can't tell", "accuracy", "chance",
                 "p (one-sided)", "guessable", "outcome"], rows=rows,
        note=f"guessable: at least {GUESS_MIN_ANSWERS} option answers and all correct, or one-sided binomial "
             f"p < {GUESS_ALPHA} at chance, once the item has its quota of answers (blank until then); can't "
             "tell is not an option answer; outcome: the item's decision, as `prefval release` applies it"))
    return fs


def table9_models(data: StudyData, answers: dict[str, dict[str, dict]], fs: FigureSet) -> None:
    """RealPref Table 9 (blind test): rows people (this study), each model, then the paper's LLM row; columns MCQ
    (per number of options) and T/F. Every cell: option answers correct / option answers, can't tell left out, with
    the one-sided exact binomial test against chance (table9_cell). answers: model name -> unit id -> answer
    (reports.llm_answers.model_answers_by_name)."""
    from reports.llm_answers import testers

    seed = data.study.seed
    people = [it for it in collect(data) if it.key is not None]
    groups = table9_groups(people)
    by_unit = {it.unit_id: it for it in people}
    rows = [["people (this study)", *[table9_cell([(it, a) for it in g for a in it.answers.values()], seed)
                                      for _, _, g in groups]]]
    for name in testers(answers):
        rows.append([name, *[table9_cell([(by_unit[it.unit_id], answers[name][it.unit_id]) for it in g
                                          if it.unit_id in answers[name]], seed) for _, _, g in groups]])
    rows.append([f"{PUBLISHED_LLM_NAME} (RealPref Table 9, published)",
                 *[table9_published(suffix, label) for suffix, label, _ in groups]])
    fs.tables.append(Table(
        key="table9_models", title="blind test in the layout of RealPref Table 9 (people and models)",
        columns=["tester"] + [label for _, label, _ in groups], rows=rows,
        note="RealPref Table 9 (appendix G.2): accuracy with only the question and options; option answers correct / "
             "option answers (can't tell left out), exact one-sided binomial test against chance (1/k, 0.5 for T/F), "
             "answers taken as independent trials; 95% bootstrap intervals over items; published: the paper's LLM on "
             "its four-option MCQ and T/F items (chance 0.25 and 0.5)"))


def odd_one_out_figure(mcq: list[ItemAnswers], verdicts: dict[str, dict], seed: int) -> Figure:
    """Share of guessable MCQ items with a negative preference (RealPref's "odd one out" explanation)."""
    known = [it for it in mcq if polarity(it) is not None]
    if not known:
        return Figure(key="guessable_negative_share", label="guessable MCQ items with a negative preference",
                      value=None, note="not available: the items carry no polarity or preference type")
    flags = [polarity(it) == "negative" for it in known if verdicts[it.unit_id]["guessable"] is True]
    base = sum(polarity(it) == "negative" for it in known) / len(known)
    st = share("guessable_negative_share", flags, "share of negative preferences among guessable MCQ items with "
               "a known polarity", seed, extra={"negative_share_all_mcq": base, "items_known_polarity": len(known),
                                                "items_unknown_polarity": len(mcq) - len(known)})
    return Figure.from_stat("guessable_negative_share", "guessable MCQ items with a negative preference", st)
