"""Everything a study's figures are computed from, read once from the store."""
from __future__ import annotations

import contextlib
import gc
from dataclasses import dataclass, field

from storage.adjudications import Adjudication
from storage.models import Annotation, Annotator, AnswerRow, Item, Study, Unit
from storage.store import Store


@dataclass
class StudyData:
    """A study with its units, their items, the annotators and the CURRENT answers (latest row per assignment).

    answers: current "answered" annotations OF PEOPLE (Annotator.is_person), in unit order; skipped: people's
    current "skipped" ones. Every figure about people reads these, so a model's answer can never count as an
    annotator's. model_answers: the current answers of models (LLM annotators: `prefval evaluate`, imported
    judgments, consensus validators), attention checks and excluded annotators left out, in unit order: only the
    sections about models read them.
    Attention checks (units with extra["check"]) are NOT among units/answers/skipped, so no figure counts them:
    they are in check_units and check_answers. Answers of annotators excluded from the study's figures (events
    "annotator_excluded") are left out of answers and skipped too; excluded maps their names to the reason.
    adjudications: unit id -> the adjudication in force (`prefval adjudicate`, storage/adjudications.py).
    From the same one pass over the log (storage.models.StudyLog): notes, every note row with the annotator's
    decision on the unit; decided, ids of annotators with an answered or skipped row (excluded ones too);
    excluded_answers, the current answers of excluded annotators (not checks), for their time per item.
    all_answers, all_skipped: every current answer and skip, attention checks and excluded annotators included
    (what `prefval export` lists; no figure reads them).
    Rows are storage.models.AnswerRow from load_study_data (each answer with its first_seconds, the time per
    item); figure code reads only attributes that Annotation has too.
    """

    study: Study
    units: list[Unit]
    items: dict[str, Item]
    annotators: dict[str, Annotator]
    answers: list[AnswerRow | Annotation]
    skipped: list[AnswerRow | Annotation] = field(default_factory=list)
    n_assignments: int = 0
    check_units: list[Unit] = field(default_factory=list)
    check_answers: list[AnswerRow | Annotation] = field(default_factory=list)
    excluded: dict[str, str] = field(default_factory=dict)
    adjudications: dict[str, Adjudication] = field(default_factory=dict)
    excluded_answers: list[AnswerRow] = field(default_factory=list)
    notes: list[tuple[AnswerRow, str]] = field(default_factory=list)
    decided: set[str] = field(default_factory=set)
    all_answers: list[AnswerRow | Annotation] = field(default_factory=list)
    all_skipped: list[AnswerRow | Annotation] = field(default_factory=list)
    model_answers: list[AnswerRow | Annotation] = field(default_factory=list)

    def by_unit(self) -> dict[str, dict[str, dict]]:
        """unit_id -> {annotator name -> answer dict} for the people's current answers (answers)."""
        out: dict[str, dict[str, dict]] = {u.id: {} for u in self.units}
        for a in self.answers:
            out.setdefault(a.unit_id, {})[self.annotators[a.annotator_id].name] = a.answer or {}
        return out

    def rater_names(self) -> list[str]:
        """Names of the people with at least one current answer (answers), sorted."""
        return sorted({self.annotators[a.annotator_id].name for a in self.answers})

    def model_names(self) -> list[str]:
        """Names of the models (LLM annotators) with at least one current answer (model_answers), sorted."""
        return sorted({self.annotators[a.annotator_id].name for a in self.model_answers})

    def model_by_unit(self) -> dict[str, dict[str, dict]]:
        """unit_id -> {model name -> answer dict} for the models' current answers (every unit present)."""
        out: dict[str, dict[str, dict]] = {u.id: {} for u in self.units}
        for a in self.model_answers:
            out.setdefault(a.unit_id, {})[self.annotators[a.annotator_id].name] = a.answer or {}
        return out


@contextlib.contextmanager
def gc_paused():
    """Python's cyclic garbage collector paused for the block (restored as it was after it): reading a study
    builds a few hundred thousand rows and dicts that hold no reference cycles, and the collector's passes
    over them cost about a quarter of the time of `prefval status STUDY` on 100k items. Nothing is freed
    later than it would be otherwise except cycles, which this code does not make."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def load_study_data(store: Store, study_name: str) -> StudyData:
    """Read a study's units, items, annotators and current answers (with the timings and notes of its log, in
    the same pass: Store.study_log). Raises PrefvalError for an unknown study."""
    study = store.get_study(study_name)
    all_units = store.units(study.id)
    ids = [u.item_id for u in all_units] + [u.item_b_id for u in all_units if u.item_b_id]
    items = store.get_items(ids)
    annotators = {a.id: a for a in store.annotators()}
    excluded = excluded_annotators(store, study.id)
    out_ids = {aid for aid, a in annotators.items() if a.name in excluded}
    checks = {u.id for u in all_units if u.extra.get("check")}
    units = [u for u in all_units if u.id not in checks]
    log = store.study_log(study.id, all_units)
    answers, skipped = log.answers, log.skipped
    n_assign = store.assignment_count(study.id)
    models = {aid for aid, a in annotators.items() if not a.is_person}
    people = [a for a in answers if a.annotator_id not in models]
    return StudyData(study, units, items, annotators,
                     [a for a in people if a.unit_id not in checks and a.annotator_id not in out_ids],
                     [a for a in skipped if a.unit_id not in checks and a.annotator_id not in out_ids
                      and a.annotator_id not in models], n_assign,
                     check_units=[u for u in all_units if u.id in checks],
                     check_answers=[a for a in people if a.unit_id in checks],
                     excluded=excluded, adjudications=store.current_adjudications(study.id),
                     notes=log.notes, decided=log.decided,
                     excluded_answers=[a for a in people if a.unit_id not in checks and a.annotator_id in out_ids],
                     all_answers=answers, all_skipped=skipped,
                     model_answers=[a for a in answers if a.annotator_id in models and a.unit_id not in checks
                                    and a.annotator_id not in out_ids])


def excluded_annotators(store: Store, study_id: str) -> dict[str, str]:
    """Annotator name -> reason, for annotators whose answers a study leaves out of its figures: the latest of
    their "annotator_excluded" / "annotator_included" events is an exclusion (their rows stay in the log)."""
    state: dict[str, str | None] = {}
    for e in store.events(study_id=study_id):
        if e.kind in ("annotator_excluded", "annotator_included"):
            state[e.payload.get("annotator", "")] = e.payload.get("reason", "") if e.kind == "annotator_excluded" \
                else None
    return {name: reason for name, reason in state.items() if reason is not None}
