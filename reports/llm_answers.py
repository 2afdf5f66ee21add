"""Figures of model answers and LLM-judge runs (`prefval evaluate`), added to a study's report. Which figures a study
gets depends on its task's answer schema (storage.task_specs.TaskSpec.answer_shape), never on a task's name:

- MCQ / T-F studies (answer_shape "choice": mcq, easy_test, blind_test) with answers of LLM annotators: ``llm_accuracy``, accuracy per
  LLM annotator overall and by the item's fields: question type, expression type (RealPref), evolved or static
  (HorizonBench's has_evolved) and context length (messages the item sees, in bins); answers given once per
  rotation of the options (annotators NAME/rot<k>) are also averaged over the rotations (position bias removed) and
  ``llm_positions`` gives the share of picks at each displayed position. The task's own tables of models beside
  people come from its model_section (annotator/tasks: RealPref Tables 8 and 9, HorizonBench's distractor share
  per model with its binomial test). Validators of a consensus run
  (annotators validator:<model>) get ``consensus``: how many keyed items at least m of the k validators answered
  wrongly, for every m (HorizonBench section 5.1: 5/5 strict, 3/5 majority).
- pairwise studies (answer_shape "winner"): ``position_consistency``: per judge NAME with NAME/swapped (the same pairs in the other order),
  the share of pairs with the same verdict after the swap, ties included, and how often each order's first record
  won.
- judge_validation studies (answer_shape "reflected") whose items carry metadata.sample (`evaluate judge-reflection`): ``benchpres_table1``,
  BenchPreS Table 1: MR, AAR (mean +- sd over the response samples) and AAR - MR (section 3.3) per evaluated model
  (the model whose responses were judged: the items' metadata.responder) and judge; ``reflection_samples``, the
  same per sample.
Accuracy intervals: 95% percentile bootstrap over items.
"""
from __future__ import annotations

import re
import statistics
from collections import Counter
from typing import Any

import numpy as np

from reports.figures import Figure, FigureSet, Table
from reports.stats.bootstrap import finish
from reports.stats._common import safe_ratio
from reports.study_data import StudyData
from storage import task_specs

ROT = re.compile(r"^(.*)/rot(\d+)$")
LENGTH_BINS = ((0, 10), (11, 50), (51, 200), (201, 1000), (1001, None))


def share(flags: list[bool], seed: int, metric: str = "accuracy"):
    """Share of True with a 95% bootstrap interval over items (reports.stats.bootstrap)."""
    n = len(flags)
    if not n:
        from reports.stats.result import StatResult
        return StatResult(metric, None, None, None, 0, 1, "undefined: no answer")
    f = np.column_stack([np.ones(n), np.array(flags, dtype=float)])
    return finish(metric, float(np.mean(flags)), "share of items", n_items=n, n_raters=1, ci=True, n_boot=1000,
                  seed=seed, features=f, stat_fn=lambda s: safe_ratio(s[:, 1], s[:, 0]))


def _length_bin(n: int | None) -> str:
    if n is None:
        return "no context"
    for lo, hi in LENGTH_BINS:
        if hi is None or n <= hi:
            return f"{lo}+ messages" if hi is None else f"{lo}-{hi} messages"
    return "?"


def _fields(item) -> dict[str, str]:
    p = item.payload
    meta = p.get("metadata") or {}
    out = {"format": "T/F" if p.get("fmt") == "tf" else "MCQ",
           "question type": p.get("question_type"), "expression type": meta.get("expression_type"),
           "evolved": None if meta.get("has_evolved") is None else ("evolved" if meta["has_evolved"] else "static"),
           "context length": _length_bin(item.context_end) if item.context_id else None}
    return {k: str(v) for k, v in out.items() if v is not None}


def _llm_answers(data: StudyData) -> dict[str, dict[str, dict]]:
    out: dict[str, dict[str, dict]] = {}
    for a in data.model_answers:
        ann = data.annotators[a.annotator_id]
        if a.answer:
            out.setdefault(ann.name, {})[a.unit_id] = a.answer
    return out


def _mcq(data: StudyData, fs: FigureSet, task=None) -> None:
    answers = _llm_answers(data)
    if not answers:
        return
    seed = data.study.seed
    items = {u.id: data.items[u.item_id] for u in data.units}
    keyed = [u for u in items if items[u].payload.get("correct_index") is not None]
    correct = {name: {u: per[u].get("choice") == items[u].payload["correct_index"] for u in keyed if u in per}
               for name, per in answers.items()}
    rows = []
    for name in sorted(correct):
        flags = correct[name]
        res = share(list(flags.values()), seed)
        fs.figures.append(Figure.from_stat(f"llm_accuracy:{name}", f"accuracy of {name}", res))
        rows.append([name, "all items", "", Figure.from_stat("", "", res)])
        groups: dict[tuple[str, str], list[bool]] = {}
        for u, ok in flags.items():
            for field, value in _fields(items[u]).items():
                groups.setdefault((field, value), []).append(ok)
        for (field, value), fl in sorted(groups.items()):
            rows.append([name, field, value, Figure.from_stat("", "", share(fl, seed))])
    rotated: dict[str, list[str]] = {}
    for name in correct:
        m = ROT.match(name)
        if m:
            rotated.setdefault(m.group(1), []).append(name)
    pos_rows = []
    for base, names in sorted(rotated.items()):
        accs = [np.mean(list(correct[n].values())) for n in names if correct[n]]
        if accs:
            fs.figures.append(Figure(key=f"llm_accuracy_rotations:{base}",
                                     label=f"accuracy of {base}, mean over {len(accs)} rotations of the options",
                                     value=float(np.mean(accs)), n=len(keyed),
                                     note=f"spread over rotations: min {min(accs):.3f}, max {max(accs):.3f}"))
            rows.append([base, "mean over rotations", f"{len(accs)} rotations", float(np.mean(accs))])
        picks: Counter = Counter()
        for n in names:
            r = int(ROT.match(n).group(2))
            for u, ans in answers[n].items():
                if isinstance(ans.get("choice"), int):
                    k = len(items[u].payload["options"])
                    picks[(ans["choice"] - r) % k] += 1
        total = sum(picks.values())
        if total:
            pos_rows.append([base, total] + [picks.get(i, 0) / total for i in range(max(picks) + 1)])
    if rows:
        fs.tables.append(Table(key="llm_accuracy", title="accuracy of model answers (prefval evaluate answer)",
                               columns=["model", "by", "group", "accuracy"], rows=rows,
                               note="items with an answer key; can't tell counts as wrong; 95% bootstrap "
                                    "intervals over items"))
    if pos_rows:
        width = max(len(r) for r in pos_rows) - 2
        fs.tables.append(Table(key="llm_positions", title="share of picks by displayed position (option rotations)",
                               columns=["model", "answers"] + [chr(65 + i) for i in range(width)], rows=pos_rows,
                               note="with every rotation asked, an unbiased model picks each position equally "
                                    "often over the items"))
    if task is not None and hasattr(task, "model_section"):  # the task's own tables of models beside people
        task.model_section(data, answers, fs)
    validators = sorted(n for n in answers if n.startswith("validator:"))
    if validators:
        k = len(validators)
        wrong = []
        for u in keyed:
            got = [answers[v][u] for v in validators if u in answers[v]]
            wrong.append(sum(1 for a in got if a.get("choice") != items[u].payload["correct_index"]))
        crow = [[f"{m}/{k}", sum(1 for w in wrong if w >= m), len(wrong),
                 sum(1 for w in wrong if w >= m) / len(wrong) if wrong else None] for m in range(k, 0, -1)]
        fs.tables.append(Table(key="consensus", title="blind consensus filter (HorizonBench 5.1)",
                               columns=["rule: wrong by at least", "items passing", "keyed items", "pass rate"],
                               rows=crow, note=f"validators: {', '.join(v.split(':', 1)[1] for v in validators)}; "
                                               "an item passes when at least m of the k validators, shown only the "
                                               "question and options, answer it wrongly"))


def testers(answers: dict[str, dict[str, dict]]) -> list[str]:
    """The models that took the test themselves: every LLM annotator but the rotations (NAME/rot<k>, averaged in
    NAME) and consensus validators (their own table)."""
    return sorted(n for n in answers if not ROT.match(n) and not n.startswith("validator:"))


def model_answers_by_name(data: StudyData) -> dict[str, dict[str, dict]]:
    """model name -> unit id -> its current non-empty answer (StudyData.model_answers)."""
    return _llm_answers(data)


def _pairwise(data: StudyData, fs: FigureSet) -> None:
    answers = _llm_answers(data)
    rows = []
    for name in sorted(answers):
        swapped = answers.get(f"{name}/swapped")
        if swapped is None:
            continue
        units = [u for u in answers[name] if u in swapped]
        same = [answers[name][u].get("winner") == swapped[u].get("winner") for u in units]
        res = share(same, data.study.seed, "position_consistency")
        fs.figures.append(Figure.from_stat(f"position_consistency:{name}", f"position consistency of {name}", res))
        first_ab = sum(1 for u in units if answers[name][u].get("winner") == "A") / len(units) if units else None
        first_ba = sum(1 for u in units if swapped[u].get("winner") == "B") / len(units) if units else None
        rows.append([name, len(units), Figure.from_stat("", "", res), first_ab, first_ba])
    if rows:
        fs.tables.append(Table(key="position_consistency", title="position consistency of LLM judges",
                               columns=["judge", "pairs", "same verdict after the swap", "first record wins (A first)",
                                        "first record wins (B first)"], rows=rows,
                               note="each pair asked in both orders; a consistent judge picks the same record "
                                    "(or tie) whatever its position"))


NOT_NAMED = "(responder not named)"


def responder_of(item) -> str:
    """The model whose response an item of `evaluate judge-reflection` carries (payload metadata.responder)."""
    return str((item.payload.get("metadata") or {}).get("responder") or NOT_NAMED)


def reflection_rates(data: StudyData, judge: str, responder: str | None = None) -> list[dict[str, Any]]:
    """Per response sample (items' metadata.sample): MR = P(z=1 | g=0), AAR = P(z=1 | g=1) and AAR - MR of the
    annotator judge's verdicts z against the items' candidate_label g (BenchPreS section 3.3, equations for MR and
    AAR), over the responses of `responder` (items' metadata.responder; None: every item), in sample order:
    [{"sample", "n", "mr", "aar", "diff"}], None where undefined (no item with that gold label)."""
    per = _llm_answers(data).get(judge, {})
    by_sample: dict[Any, list[tuple[bool, bool]]] = {}
    for u in data.units:
        item = data.items[u.item_id]
        meta = item.payload.get("metadata") or {}
        g = item.payload.get("candidate_label")
        if responder is not None and responder_of(item) != responder:
            continue
        if u.id in per and "sample" in meta and g is not None:
            by_sample.setdefault(meta["sample"], []).append((bool(per[u.id].get("reflected")), bool(g)))
    out = []
    for s, zg in sorted(by_sample.items()):
        neg, pos = [z for z, g in zg if not g], [z for z, g in zg if g]
        mr = sum(neg) / len(neg) if neg else None
        aar = sum(pos) / len(pos) if pos else None
        out.append({"sample": s, "n": len(zg), "mr": mr, "aar": aar,
                    "diff": aar - mr if mr is not None and aar is not None else None})
    return out


def responders(data: StudyData) -> list[str]:
    """The evaluated models of a study's judge-reflection items (metadata.responder), sorted."""
    return sorted({responder_of(data.items[u.item_id]) for u in data.units
                   if "sample" in (data.items[u.item_id].payload.get("metadata") or {})})


def mean_sd(values: list[float]) -> tuple[float | None, float | None]:
    """(mean, sample standard deviation) of the values; sd None with fewer than 2, both None for none."""
    if not values:
        return None, None
    return float(np.mean(values)), (statistics.stdev(values) if len(values) > 1 else None)


RATES = (("mr", "MR"), ("aar", "AAR"), ("diff", "AAR - MR"))


def _mean_sd_text(mean: float | None, sd: float | None) -> str | None:
    return None if mean is None else f"{mean:.3f}" + ("" if sd is None else f" ± {sd:.3f}")


TABLE1_COLUMNS = ["model (responses judged)", "judge", "samples", "items", "MR (mean ± sd)", "AAR (mean ± sd)",
                  "AAR - MR"]
TABLE1_NOTE = ("BenchPreS Table 1 (section 3.3): MR = P(z=1 | g=0), AAR = P(z=1 | g=1), z the judge's verdict on the "
               "evaluated model's response, g the gold label; each computed per response sample, then mean and "
               "sample standard deviation over the samples; AAR - MR is the difference of the two means (the "
               "paper's 88.69 - 86.48 = 2.21); rows are named after the model whose responses were judged")


def table1_rows(data: StudyData) -> list[list]:
    """BenchPreS Table 1's rows of a study: one per (evaluated model, judge) (TABLE1_COLUMNS)."""
    rows = []
    for responder in responders(data):
        for judge in sorted(_llm_answers(data)):
            rates = reflection_rates(data, judge, responder)
            if not rates:
                continue
            stats = {key: mean_sd([r[key] for r in rates if r[key] is not None]) for key, _ in RATES[:2]}
            (mr, mr_sd), (aar, aar_sd) = stats["mr"], stats["aar"]
            rows.append([responder, judge, len(rates), sum(r["n"] for r in rates), _mean_sd_text(mr, mr_sd),
                         _mean_sd_text(aar, aar_sd), None if mr is None or aar is None else round(aar - mr, 12)])
    return rows


def _reflection(data: StudyData, fs: FigureSet) -> None:
    rows = []
    for responder in responders(data):
        for name in sorted(_llm_answers(data)):
            rates = reflection_rates(data, name, responder)
            if not rates:
                continue
            rows += [[responder, name, str(r["sample"]), r["n"], r["mr"], r["aar"], r["diff"]] for r in rates]
            cells = []
            for key, label in RATES:
                mean, sd = mean_sd([r[key] for r in rates if r[key] is not None])
                cells.append(None if mean is None else f"{mean:.3f}" + ("" if sd is None else f" ({sd:.3f})"))
                if mean is not None:
                    fs.figures.append(Figure(
                        key=f"reflection_{key}:{responder}@{name}",
                        label=f"{label} of {responder}'s responses (judge {name}), mean over samples",
                        value=mean, n=len(rates), n_of="samples",
                        note="" if sd is None else f"standard deviation over samples {sd:.3f}", extra={"sd": sd}))
            rows.append([responder, name, "mean (sd)", sum(r["n"] for r in rates), *cells])
    if rows:
        fs.tables.append(Table(key="benchpres_table1", title="BenchPreS Table 1: MR, AAR and AAR - MR per evaluated "
                                                             "model", columns=TABLE1_COLUMNS,
                               rows=table1_rows(data), note=TABLE1_NOTE))
        fs.tables.append(Table(key="reflection_samples", title="MR and AAR per response sample (BenchPreS 3.3)",
                               columns=["model (responses judged)", "judge", "sample", "items", "MR", "AAR",
                                        "AAR - MR"], rows=rows,
                               note="MR = P(z=1 | g=0), AAR = P(z=1 | g=1): z the judge's verdict, g the gold label; "
                                    "sd = standard deviation over samples"))


def llm_answers_section(data: StudyData, task=None) -> FigureSet | None:
    """The FigureSet of model answers and judge runs of a study (module doc), or None when it has none.

    task: the study's TaskType (annotator.tasks.get_task), given by the caller: its model_section(data, answers,
    fs), when it has one, adds the task's tables of models beside people (the paper-shaped ones: RealPref Tables 8
    and 9, HorizonBench's distractor share per model). Passed in, as reports never imports the task types."""
    fs = FigureSet(study=data.study.name, task=data.study.task_type)
    shape = task_specs.get(data.study.task_type).answer_shape
    if shape == "choice":
        _mcq(data, fs, task)
    elif shape == "winner":
        _pairwise(data, fs)
    elif shape == "reflected":
        _reflection(data, fs)
    return fs if (fs.figures or fs.tables) else None
