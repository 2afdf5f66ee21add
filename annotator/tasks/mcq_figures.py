"""Figures of an MCQ study (HorizonBench section 5.3): accuracy, and with several annotators per item
majority-vote accuracy, Fleiss' kappa, at-least-one-correct, and the pre-evolution distractor share."""
from __future__ import annotations

from reports.figures import Figure, FigureSet, Table
from reports.study_data import StudyData


def _label(answer: dict) -> str:
    """The category an answer counts as in agreement statistics: the original letter, or "can't tell"."""
    return "can't tell" if answer.get("cant_tell") else chr(ord("A") + answer["choice"])


def mcq_figures(data: StudyData) -> FigureSet:
    """Accuracy per annotator and overall (answers with a key; can't-tell counts as wrong)."""
    fs = FigureSet(study=data.study.name, task=data.study.task_type)
    rows = []
    total_correct = total = 0
    per: dict[str, list[bool]] = {}
    unit_item = {u.id: u.item_id for u in data.units}
    for a in data.answers:
        key = data.items[unit_item[a.unit_id]].payload.get("correct_index")
        if key is None or not a.answer:
            continue
        ok = a.answer.get("choice") == key
        per.setdefault(data.annotators[a.annotator_id].name, []).append(ok)
        total += 1
        total_correct += ok
    for name, oks in sorted(per.items()):
        rows.append([name, len(oks), sum(oks) / len(oks)])
    fs.figures.append(Figure(key="accuracy", label="accuracy (all answers)",
                             value=(total_correct / total) if total else None, n=total,
                             note="" if total else "no answered item with a key"))
    if rows:
        fs.tables.append(Table(key="accuracy_by_annotator", title="accuracy by annotator",
                               columns=["annotator", "answered", "accuracy"], rows=rows))
    return fs
