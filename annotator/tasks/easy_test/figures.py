"""Figures of an easy test (RealPref appendix G.2): accuracy overall, for MCQ and T/F, per expression type (Table 8)
and per preference type, with 95% percentile bootstrap intervals over items; the "not inferable" items. The
published human values of Table 8 sit on the MCQ rows of the expression-type table (the paper's humans took MCQ
items only); Table 8 itself, people beside models and both testers' published values, is in the models' section
(reports/llm_answers.py)."""
from __future__ import annotations

from annotator.tasks.mcq.stats import CANT_TELL_RULE, ItemAnswers, accuracy_figure, accuracy_pairs, collect, pooled_ratio
from reports.figures import Figure, FigureSet, Table
from reports.study_data import StudyData

# RealPref Table 8 (appendix G.2), by (format, expression type): humans took the MCQ items only (200 sampled, half
# from each implicit expression type; the table's T/F cells are "-"); one LLM (Gemini 2.5 Flash-Lite) took every MCQ
# and T/F item of types 3 and 4. Each value sits on its own row and column: the people's table below puts the
# human values on MCQ rows; reports/llm_answers.py's Table 8 puts both testers' values on their own rows.
PUBLISHED_HUMAN = {("mcq", "3"): 0.980, ("mcq", "4"): 0.960}
PUBLISHED_LLM = {("mcq", "3"): 0.972, ("tf", "3"): 0.969, ("mcq", "4"): 0.959, ("tf", "4"): 0.952}
PUBLISHED_LLM_NAME = "Gemini 2.5 Flash-Lite"
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
            if published:  # the humans of Table 8 took MCQ items only: their value belongs on MCQ rows
                row.append(PUBLISHED_HUMAN.get((fmt, g)))
            rows.append(row)
    cols = ["format", field.replace("_", " "), "items", "answers", f"accuracy ({CANT_TELL_RULE})", "ci_low", "ci_high"]
    if published:
        cols.append("published (humans, MCQ, RealPref Table 8)")
    return Table(key=key, title=title, columns=cols, rows=rows,
                 note=f"answers include can't tell; {CANT_TELL_RULE}; 95% bootstrap intervals over items")


def table8_groups(items: list[ItemAnswers]) -> list[tuple[str, str]]:
    """The columns of RealPref Table 8: (format, expression type) for every expression type of the items and the
    paper's types 3 and 4, each type's MCQ then T/F: [("mcq", "3"), ("tf", "3"), ("mcq", "4"), ("tf", "4")]."""
    present = {_group(it, "expression_type") for it in items}
    paper = set() if present == {"generalized"} else {"3", "4"}  # a generalized-preference test (G.1): its own
    types = sorted(present | paper, key=lambda t: (not t.isdigit(), t))
    return [(fmt, t) for t in types for fmt in ("mcq", "tf")
            if not (t == "generalized" and fmt == "tf")]


def table8_column(fmt: str, etype: str) -> str:
    """"MCQ (Type 3)", "T/F (Type 4)", "MCQ (no expression type)": a Table 8 column's name."""
    kind = "MCQ" if fmt == "mcq" else "T/F"
    if etype == "n/a":
        return f"{kind} (no expression type)"
    return f"{kind} (Type {etype})" if etype.isdigit() else f"{kind} ({etype})"


def table8_people_cells(items: list[ItemAnswers], groups: list[tuple[str, str]], seed: int) -> list:
    """The people's accuracy in each Table 8 column (a Figure: correct answers / answers, can't tell counts as
    wrong, 95% bootstrap interval over items), None where the study has no such item."""
    cells = []
    for fmt, etype in groups:
        sel = [it for it in items if it.fmt == fmt and _group(it, "expression_type") == etype]
        if not sel:
            cells.append(None)
            continue
        st = pooled_ratio("accuracy", accuracy_pairs(sel), f"accuracy, {table8_column(fmt, etype)}", seed)
        cells.append(accuracy_figure("", "", st))
    return cells


TABLE8_NOTE = ("RealPref Table 8 (appendix G.2): accuracy with the preference-expression snippet; people: correct "
               f"answers / answers ({CANT_TELL_RULE}, n counts answers); published: the paper's humans took MCQ "
               "items only (T/F: —), its LLM every MCQ and T/F item of types 3 and 4; 95% bootstrap intervals over "
               "items")


def table8_people(items: list[ItemAnswers], seed: int) -> Table:
    """RealPref Table 8's layout for the people of this study, with the paper's human row beside it."""
    groups = table8_groups(items)
    return Table(key="table8", title="easy test in the layout of RealPref Table 8 (people)",
                 columns=["tester"] + [table8_column(*g) for g in groups],
                 rows=[["people (this study)", *table8_people_cells(items, groups, seed)],
                       ["Human (RealPref Table 8, published)", *[PUBLISHED_HUMAN.get(g) for g in groups]]],
                 note=TABLE8_NOTE)


def table8_models(data: StudyData, answers: dict[str, dict[str, dict]], fs: FigureSet) -> None:
    """RealPref Table 8 (easy test): rows people (this study), each model, then the paper's human and LLM rows;
    columns MCQ and T/F per expression type (table8_groups). A model's cell: the share of the column's items it
    answered correctly (can't tell counts as wrong), 95% bootstrap interval over items. answers: model name ->
    unit id -> answer (reports.llm_answers.model_answers_by_name)."""
    from reports.llm_answers import share, testers

    seed = data.study.seed
    people = [it for it in collect(data) if it.key is not None]
    keyed = [ItemAnswers(u.id, data.items[u.item_id]) for u in data.units
             if data.items[u.item_id].payload.get("correct_index") is not None]
    groups = table8_groups(keyed)
    rows = [["people (this study)", *table8_people_cells(people, groups, seed)]]
    for name in testers(answers):
        cells = []
        for fmt, etype in groups:
            flags = [answers[name][it.unit_id].get("choice") == it.key for it in keyed
                     if it.fmt == fmt and _group(it, "expression_type") == etype and it.unit_id in answers[name]]
            cells.append(Figure.from_stat("", "", share(flags, seed)) if flags else None)
        rows.append([name, *cells])
    rows.append(["Human (RealPref Table 8, published)", *[PUBLISHED_HUMAN.get(g) for g in groups]])
    rows.append([f"{PUBLISHED_LLM_NAME} (RealPref Table 8, published)", *[PUBLISHED_LLM.get(g) for g in groups]])
    fs.tables.append(Table(key="table8_models", title="easy test in the layout of RealPref Table 8 (people and models)",
                           columns=["tester"] + [table8_column(*g) for g in groups], rows=rows,
                           note=TABLE8_NOTE + "; a model's cell: the share of the column's items it answered "
                                              "correctly (can't tell counts as wrong)"))


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
        fs.figures.append(accuracy_figure(key, f"accuracy, expression type {etype}", st))
    fs.tables.append(table8_people(items, seed))
    fs.tables.append(_table(items, "expression_type", "accuracy_by_expression_type", "accuracy by expression type",
                            seed, published=True))
    fs.tables.append(_table(items, "preference_type", "accuracy_by_preference_type", "accuracy by preference type",
                            seed, published=False))
    from annotator.tasks import get_task

    fs.tables.append(not_inferable_table(items, get_task(data.study.task_type).outcomes(data)))
    return fs
