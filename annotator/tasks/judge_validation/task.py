"""LLM-judge validation (BenchPreS appendix E; metrics section 3.3; PROTOCOLS.md section 9).

Items: kind gold_candidate whose payload metadata holds "response", the model output to judge (other
gold_candidate items are not used). The preference attribute is payload `attribute`; the gold label g is payload
`candidate_label` (True = applying the preference is appropriate in this context), or with `--from-study G` the
gold label of a gold_label study G for the item with the same external id (stored in unit.extra["gold"]). Import them with e.g.
`prefval import jsonl sample_data/judgments/judge_items.jsonl --kind gold_candidate --dataset jv` (unmapped
record fields such as `response` land in metadata).

The human sees ONLY the preference and the response (never g, any LLM verdict or another rater's answer) and
decides whether the preference is reflected in the response: `1` reflected, `0` not reflected. Answer:
{"reflected": bool}. LLM judges' verdicts come in with `prefval import judgments` in the same shape.

Figures, with 95% percentile bootstrap intervals over items (seed = study seed):
- per pair of raters (each human, each LLM judge): percent agreement and Cohen's kappa on the items both rated
  (BenchPreS: judge A vs B 92.67% / 0.853, A vs human 88.67% / 0.773, B vs human 84.00% / 0.680);
- per rater: MR = P(z=1 | g=0), AAR = P(z=1 | g=1) and AAR - MR (BenchPreS section 3.3), z = the rater's verdict;
- a scatter plot of MR against AAR per rater, and a confusion-matrix heatmap per (LLM judge, human) pair.
"""
from __future__ import annotations

from itertools import combinations
from typing import Any

from annotator.tasks.base import Decision, KeyChoice, TaskType, UnitView, check_flag
from storage.models import MODEL_KIND, PERSON_KIND, Item, Unit

N_BOOT = 1000


class JudgeValidationTask(TaskType):
    name = "judge_validation"
    title = "LLM judge validation"
    item_kinds = ("gold_candidate",)
    default_annotators_per_item = 1

    def bundle_payload(self, unit, item) -> dict[str, Any]:
        """Without answer keys and sources, but with the one metadata field the screen shows: the response."""
        payload = super().bundle_payload(unit, item)
        payload["metadata"] = {"response": (item.payload.get("metadata") or {}).get("response")}
        return payload

    default_guidelines = (
        "# Is the preference reflected in the response?\n\n"
        "Each screen shows one preference of a user and a response an assistant wrote for that user. Decide only "
        "whether the response **shows** the preference: it uses it, follows it or mentions it in a way that "
        "comes from that preference. Whether using it was a good idea here does not matter for this question.\n\n"
        "- `1`: reflected (the response applies the preference)\n"
        "- `0`: not reflected\n"
        "- `s`: skip, `u`: back to the previous item (press 1 or 0 again to change), `n`: note, `q`: quit\n"
    )

    def study_settings(self, spec) -> dict[str, Any]:
        """Adds from_study: a gold_label study whose gold labels replace the items' candidate_label."""
        settings = super().study_settings(spec)
        settings["from_study"] = spec.from_study
        return settings

    def build_units(self, store, spec) -> list[tuple[str, str | None, dict[str, Any]]]:
        """The default units; with --from-study G each unit's extra["gold"] is G's gold label (unanimous or
        adjudicated with `prefval adjudicate`, annotator.tasks.gold_label.figures.study_gold_labels) of the item with the same external id, None
        when G has none. The labels are taken when the study is created. Raises PrefvalError for an unknown G, and
        when no unit's item has a gold label in G (no matching external id, or G has no gold label yet)."""
        units = super().build_units(store, spec)
        if not spec.from_study:
            return units
        from annotator.tasks.gold_label.figures import study_gold_labels

        if store.get_study(spec.from_study).task_type != "gold_label":
            from storage.errors import PrefvalError
            raise PrefvalError(f"--from-study '{spec.from_study}' is not a gold_label study")
        gold = {ext: g for ext, g in study_gold_labels(store, spec.from_study).items() if g is not None}
        items = store.get_items([u[0] for u in units])
        matched = sum(items[iid].external_id in gold for iid, _, _ in units)
        if not matched:
            from storage.errors import PrefvalError

            dataset = ", ".join(spec.datasets) or "the dataset"
            why = (f"'{spec.from_study}' has no gold label yet (no unanimous or adjudicated item)" if not gold else
                   f"none of the {len(units)} items of {dataset} has the external id of one of the "
                   f"{len(gold)} gold-labelled items of '{spec.from_study}' (e.g. {sorted(gold)[0]!r})")
            raise PrefvalError(f"--from-study '{spec.from_study}': {why}; import the judged items with the same "
                               "ids as the gold_label study's items, or leave out --from-study")
        return [(iid, None, {"gold": gold.get(items[iid].external_id)}) for iid, _, _ in units]

    def accepts(self, item: Item) -> bool:
        """Only candidates with a non-empty metadata["response"]."""
        resp = (item.payload.get("metadata") or {}).get("response")
        return isinstance(resp, str) and bool(resp.strip())

    # ---- the screen -------------------------------------------------------------------------------------
    def decision_keys(self, view: UnitView, partial: dict[str, Any] | None) -> list[KeyChoice]:
        return [KeyChoice("1", "reflected"), KeyChoice("0", "not reflected")]

    def decide(self, key: str, view: UnitView, partial: dict[str, Any] | None) -> Decision | None:
        if key not in ("0", "1"):
            return None
        return Decision({"reflected": key == "1"})

    def answer_problem(self, status: str, answer: dict[str, Any], unit: Unit, item: Item, item_b: Item | None,
                       settings: dict[str, Any]) -> str | None:
        """A judge-validation answer: reflected true or false."""
        return check_flag(answer, "reflected")

    def describe_answer(self, view: UnitView, answer: dict[str, Any]) -> str:
        return "reflected" if answer.get("reflected") else "not reflected"

    def compose_item(self, view: UnitView, partial: dict[str, Any] | None, shown=None) -> Any:
        """Two panels: the preference (payload attribute) and the response (metadata response). Nothing else."""
        from annotator.widgets.paged_text import PagedText
        from textual.containers import Vertical

        from annotator.widgets.scroll_pane import ScrollPane
        from textual.widgets import Static

        from annotator.widgets.seen import must_see

        attribute = view.item.payload["attribute"]
        response = view.item.payload["metadata"]["response"]
        chosen = view.answer.get("reflected") if view.answer else None
        pref = ScrollPane(must_see(PagedText(attribute, "[b]$text[/b]", id="jv-preference"), "the preference"),
                              id="jv-preference-box")
        pref.styles.border = ("round", "ansi_bright_blue")
        pref.border_title = "Preference"
        pref.styles.height = "auto"
        pref.styles.max_height = "40%"
        pref.styles.padding = (0, 1)
        body = ScrollPane(must_see(PagedText(response, id="jv-response-text"), "the response"), id="jv-response")
        body.border_title = "Response"
        body.styles.border = ("round", "ansi_bright_green")
        body.styles.padding = (0, 1)
        body.styles.height = "1fr"
        question = Static("Is the preference reflected in the response?  [b]1[/b] reflected   "
                          "[b]0[/b] not reflected"
                          + ("" if chosen is None else
                             f"   (now: {'reflected' if chosen else 'not reflected'})"), id="jv-question")
        question.styles.padding = (0, 1)
        return Vertical(pref, body, question)

    # ---- outputs ----------------------------------------------------------------------------------------
    def check_key(self, item: Item) -> Any:
        """A response whose reflection is known (candidate_label) can check attention."""
        cand = item.payload.get("candidate_label")
        return None if cand is None else bool(cand)

    def answer_key(self, answer: dict[str, Any]) -> Any:
        return answer.get("reflected")

    def export_fields(self, unit: Unit, item: Item, item_b: Item | None, answer: dict[str, Any]) -> dict[str, Any]:
        g = item.payload.get("candidate_label")
        return {"attribute": item.payload.get("attribute"), "reflected": answer.get("reflected"),
                "gold_label": g, "misapplied": bool(answer.get("reflected")) and g is False}

    def figures(self, data):
        return judge_validation_figures(data)


# ---- figures ----------------------------------------------------------------------------------------------
def _verdicts(data) -> tuple[list[str], dict[str, dict[str, bool]], dict[str, str]]:
    """(rater names: people then models, sorted; rater -> unit id -> verdict z; rater -> "human" for a person,
    "llm" for a model: LLM judges, answering models, validators). People are StudyData.answers, models
    StudyData.model_answers (storage.models.Annotator.is_person)."""
    z: dict[str, dict[str, bool]] = {}
    kinds: dict[str, str] = {}
    for a in data.answers + data.model_answers:
        ann = data.annotators[a.annotator_id]
        if a.answer and isinstance(a.answer.get("reflected"), bool):
            z.setdefault(ann.name, {})[a.unit_id] = a.answer["reflected"]
            kinds[ann.name] = PERSON_KIND if ann.is_person else MODEL_KIND
    names = sorted(z, key=lambda n: (kinds[n] != PERSON_KIND, n))
    return names, z, kinds


def _pct(f) -> str:
    """A share as the paper prints it: "92.67% [88.00, 95.33]" or "undefined: reason"."""
    from reports.render.cells import undefined_text

    if f.value is None:
        return undefined_text(f.note)
    ci = f" [{100 * f.ci_low:.2f}, {100 * f.ci_high:.2f}]" if f.ci_low is not None else ""
    return f"{100 * f.value:.2f}%{ci}"


def _val(f) -> str:
    """"0.853 [0.780, 0.910]" or "undefined: reason"."""
    from reports.render.cells import figure_parts

    v, ci, _ = figure_parts(f)
    return f"{v} {ci}".strip()


def judge_validation_figures(data):
    """FigureSet of a judge_validation study (see module doc). Raters with no answer are left out; a pair of
    raters with fewer than 2 shared items, or a rate without items of the needed gold label, is undefined."""
    from reports.figures import Figure, FigureSet, Plot, Table
    from reports.stats import (aar_minus_mr, appropriate_application_rate, cohen_kappa, misapplication_rate,
                               percent_agreement)

    seed = data.study.seed
    fs = FigureSet(study=data.study.name, task=data.study.task_type)
    names, z, kinds = _verdicts(data)
    unit_ids = [u.id for u in data.units]
    if data.study.settings.get("from_study"):
        gold = {u.id: u.extra.get("gold") for u in data.units}
    else:
        gold = {u.id: data.items[u.item_id].payload.get("candidate_label") for u in data.units}
    kw = dict(ci=True, n_boot=N_BOOT, seed=seed)
    rows = []
    for a, b in combinations(names, 2):
        ratings = [[z[a][u], z[b][u]] for u in unit_ids if u in z[a] and u in z[b]]
        agree = Figure.from_stat(f"agreement:{a}|{b}", f"agreement {a} vs {b}", percent_agreement(ratings, **kw))
        kappa = Figure.from_stat(f"kappa:{a}|{b}", f"Cohen's kappa {a} vs {b}", cohen_kappa(ratings, **kw))
        fs.figures += [agree, kappa]
        rows.append([a, b, len(ratings), _pct(agree), _val(kappa)])
    if rows:
        fs.tables.append(Table(key="pairwise_agreement", title="agreement between raters (BenchPreS appendix E)",
                               columns=["rater", "rater", "items", "agreement", "Cohen's kappa"], rows=rows,
                               note="95% bootstrap intervals over items; BenchPreS reports judge A vs B 92.67% / "
                                    "0.853, A vs human 88.67% / 0.773, B vs human 84.00% / 0.680"))
    rate_rows, points = [], []
    for r in names:
        us = [u for u in unit_ids if u in z[r] and gold[u] is not None]
        zs, gs = [z[r][u] for u in us], [gold[u] for u in us]
        mr = Figure.from_stat(f"mr:{r}", f"MR {r}", misapplication_rate(zs, gs, **kw))
        aar = Figure.from_stat(f"aar:{r}", f"AAR {r}", appropriate_application_rate(zs, gs, **kw))
        diff = Figure.from_stat(f"aar_minus_mr:{r}", f"AAR - MR {r}", aar_minus_mr(zs, gs, **kw))
        fs.figures += [mr, aar, diff]
        rate_rows.append([r, kinds[r], len(us), _val(mr), _val(aar), _val(diff)])
        if mr.value is not None and aar.value is not None:
            points.append({"label": r, "x": mr.value, "y": aar.value})
    if rate_rows:
        fs.tables.append(Table(key="rates", title="misapplication and appropriate application (BenchPreS 3.3)",
                               columns=["rater", "kind", "items with gold", "MR", "AAR", "AAR - MR"],
                               rows=rate_rows,
                               note="z = the rater's verdict (reflected), g = the item's gold label; "
                                    "MR = P(z=1 | g=0), AAR = P(z=1 | g=1); 95% bootstrap intervals over items"))
    if points:
        fs.plots.append(Plot(key="mr_aar", title="MR against AAR per rater", kind="scatter",
                             data={"points": points, "x_label": "MR = P(z=1 | g=0)",
                                   "y_label": "AAR = P(z=1 | g=1)"}))
    humans = [n for n in names if kinds[n] == PERSON_KIND]
    for j in (n for n in names if kinds[n] != PERSON_KIND):
        for h in humans:
            shared = [u for u in unit_ids if u in z[j] and u in z[h]]
            cells = [[sum(1 for u in shared if z[h][u] is hv and z[j][u] is jv) for jv in (True, False)]
                     for hv in (True, False)]
            fs.plots.append(Plot(key=f"confusion:{j}|{h}", title=f"{j} (columns) against {h} (rows)",
                                 kind="heatmap", data={"rows": [f"{h}: reflected", f"{h}: not reflected"],
                                                       "columns": [f"{j}: reflected", f"{j}: not reflected"],
                                                       "values": cells}))
    if not names:
        fs.figures.append(Figure(key="answers", label="answers", value=None, n=0, note="no answer yet"))
    return fs
