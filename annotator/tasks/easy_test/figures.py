"""Figures of an easy test (RealPref appendix G.2): accuracy overall, for MCQ and T/F, per expression type (table 8)
and per preference type, with 95% percentile bootstrap intervals over items; the "not inferable" items."""
from __future__ import annotations

from annotator.tasks.mcq.stats import CANT_TELL_RULE, ItemAnswers, accuracy_figure, accuracy_pairs, collect, pooled_ratio
from reports.figures import Figure, FigureSet, Table
from reports.study_data import StudyData

# RealPref table 8: human accuracy on 200 sampled items, half from each implicit expression type
PUBLISHED_HUMAN = {"3": 0.980, "4": 0.960}
FORMATS = (("all", "all items"), ("mcq", "MCQ"), ("tf", "T/F"))


def _fmt_match(it: ItemAnswers, fmt: str) -> bool:
    return fmt == "all" or it.fmt == fmt


def _group(it: ItemAnswers, field: str) -> str:
    v = it.metadata.get(field)
    if v is None and field == "preference_type":
        v = it.metadata.get("Type")
    return "n/a" if v is None else str(v)


def _table(items: list[ItemAnswers], field: str, key: str, title: str, seed: int, published: bool) -> Table:
    rows = []
    for fmt, fmt_label in FORMATS:
        groups = sorted({_group(it, field) for it in items if _fmt_match(it, fmt)})
        for g in groups:
            sel = [it for it in items if _fmt_match(it, fmt) and _group(it, field) == g]
            st = pooled_ratio(key, accuracy_pairs(sel), f"accuracy, {fmt_label}, {field} {g}", seed)
            row = [fmt_label, g, len(sel), int(st.extra.get("denominator", 0)), st.value, st.ci_low, st.ci_high]
            if published:
                row.append(PUBLISHED_HUMAN.get(g) if fmt == "all" else None)
            rows.append(row)
    cols = ["format", field.replace("_", " "), "items", "answers", f"accuracy ({CANT_TELL_RULE})", "ci_low", "ci_high"]
    if published:
        cols.append("published (humans, RealPref table 8)")
    return Table(key=key, title=title, columns=cols, rows=rows,
                 note=f"answers include can't tell; {CANT_TELL_RULE}; 95% bootstrap intervals over items")


def not_inferable_table(items: list[ItemAnswers], outcomes: dict) -> Table:
    """Items the easy test fails (their outcome, TaskType.outcomes: fewer than half of the people's answers are
    correct once the item has its quota; with one annotator a single miss): the items `prefval release` leaves
    out. outcomes: unit id -> Outcome."""
    from annotator.tasks.outcome import FAILED

    rows = []
    for it in items:
        flags = it.correct_flags()
        if outcomes[it.unit_id].state == FAILED:
            rows.append([it.item.external_id, it.fmt, _group(it, "expression_type"), _group(it, "preference_type"),
                         len(flags), sum(flags), it.payload["question"][:80]])
    return Table(key="not_inferable", title="not inferable: items most annotators miss",
                 columns=["item", "format", "expression type", "preference type", "answers", "correct", "question"],
                 rows=rows, note="the items the easy test fails: more than half of the item's answers are not correct "
                                "(can't tell counts as a miss), once it has its quota of answers; an item decided by "
                                "adjudication follows the adjudicated answer")


def easy_test_figures(data: StudyData) -> FigureSet:
    """Accuracy overall / MCQ / T/F and per expression type as figures, the group tables, and not-inferable items."""
    fs = FigureSet(study=data.study.name, task=data.study.task_type)
    items = [it for it in collect(data) if it.key is not None]
    seed = data.study.seed
    for fmt, fmt_label in FORMATS:
        sel = [it for it in items if _fmt_match(it, fmt)]
        key = "accuracy" if fmt == "all" else f"accuracy_{fmt}"
        st = pooled_ratio(key, accuracy_pairs(sel), f"correct answers / answers, {fmt_label}", seed)
        fs.figures.append(accuracy_figure(key, f"accuracy, {fmt_label}", st))
    for etype in sorted({_group(it, "expression_type") for it in items}):
        sel = [it for it in items if _group(it, "expression_type") == etype]
        key = f"accuracy_expression_{etype}"
        st = pooled_ratio(key, accuracy_pairs(sel), f"correct answers / answers, expression type {etype} "
                          "(MCQ and T/F; split in the table below)", seed)
        fig = accuracy_figure(key, f"accuracy, expression type {etype}", st)
        if etype in PUBLISHED_HUMAN:
            fig.extra["published_human"] = PUBLISHED_HUMAN[etype]
            fig.note += f"; RealPref table 8, humans: {PUBLISHED_HUMAN[etype]:.3f}"
        fs.figures.append(fig)
    fs.tables.append(_table(items, "expression_type", "accuracy_by_expression_type", "accuracy by expression type",
                            seed, published=True))
    fs.tables.append(_table(items, "preference_type", "accuracy_by_preference_type", "accuracy by preference type",
                            seed, published=False))
    from annotator.tasks import get_task

    fs.tables.append(not_inferable_table(items, get_task(data.study.task_type).outcomes(data)))
    return fs
