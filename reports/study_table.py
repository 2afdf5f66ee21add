"""A study's current answers as columns, for figures whose memory must not grow with the number of answers
(`prefval status STUDY` on 100k-unit studies, issue 11): the compact counterpart of reports.study_data.StudyData,
read with Store.unit_columns and Store.study_answer_table (no Unit, Item or answer object per row).

Same rules as StudyData: attention-check units are left out of units, answers and skips (their answers are in
check_answers); answers and skips of annotators excluded from the figures are left out too (their timings are in
excluded_first_seconds, for `prefval status`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from storage.adjudications import Adjudication
from storage.models import Annotator, Item, Study
from storage.store import Store


@dataclass
class StudyTable:
    """A study's units and current answers as numpy columns.

    n_units: units that are not attention checks, indexed 0..n_units-1 in study order. annotator_ids: index ->
    annotator id (answers name annotators by index). answers: code -> the parsed answer dict ({} for a row without
    answer), one shared dict per distinct answer text: read it, never change it. Current answers of the figures
    (neither checks nor excluded annotators), sorted by unit then annotator id (the order of StudyData.answers):
    unit, annotator, code (int64 arrays) and first_seconds (float64, NaN without timing: AnswerRow.first_seconds).
    skip_unit, skip_annotator: the current skips, same filter and order. excluded_annotator,
    excluded_first_seconds: current answers of excluded annotators (not checks); excluded_skip_annotator: their
    current skips (not checks). check_answers: (item, annotator
    id, answer dict) of every current answer on an attention check, excluded annotators included. adjudications:
    unit index -> the adjudication in force. values / lengths: the item payload fields asked for, one entry per
    unit (Store.unit_columns). quotas: each unit's quota of annotators (storage.studies.unit_quota). notes: reports.notes.study_notes rows, oldest first. decided: ids of annotators with
    an answered or skipped row. Every answer column holds PEOPLE only (Annotator.is_person), as StudyData.answers:
    models' answers are read by StudyData.model_answers, never here.
    """

    study: Study
    annotators: dict[str, Annotator]
    n_units: int
    annotator_ids: list[str]
    answers: list[dict[str, Any]]
    unit: np.ndarray
    annotator: np.ndarray
    code: np.ndarray
    first_seconds: np.ndarray
    skip_unit: np.ndarray
    skip_annotator: np.ndarray
    excluded_annotator: np.ndarray
    excluded_first_seconds: np.ndarray
    excluded: dict[str, str] = field(default_factory=dict)
    check_answers: list[tuple[Item, str, dict[str, Any]]] = field(default_factory=list)
    adjudications: dict[int, Adjudication] = field(default_factory=dict)
    values: dict[str, list] = field(default_factory=dict)
    lengths: dict[str, list] = field(default_factory=dict)
    notes: list[dict] = field(default_factory=list)
    decided: set[str] = field(default_factory=set)
    excluded_skip_annotator: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    quotas: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def names(self) -> list[str]:
        """index -> annotator name, for annotator_ids."""
        return [self.annotators[i].name for i in self.annotator_ids]


def load_study_table(store: Store, study_name: str, values: dict[str, str] | None = None,
                     lengths: dict[str, str] | None = None) -> StudyTable:
    """Read a study as a StudyTable, with the item payload fields `values` (name -> JSON path) and `lengths`
    (name -> JSON path of an array) per unit. Raises PrefvalError for an unknown study."""
    from reports.study_data import excluded_annotators

    study = store.get_study(study_name)
    cols = store.unit_columns(study.id, values, lengths)
    log = store.study_answer_table(study.id)
    annotators = {a.id: a for a in store.annotators()}
    excluded = excluded_annotators(store, study.id)
    positions = np.frombuffer(cols.positions, dtype=np.int64) if len(cols.positions) else np.zeros(0, np.int64)
    is_check = np.isin(positions, np.fromiter(cols.checks, dtype=np.int64, count=len(cols.checks)))
    kept = positions[~is_check]
    default_quota = int(study.settings.get("annotators_per_item", 1))
    quotas = np.array([cols.quotas.get(p, default_quota) for p in kept.tolist()], dtype=np.int64) \
        if cols.quotas else np.full(len(kept), default_quota, dtype=np.int64)
    keep_unit = ~is_check
    values_out = {k: [v for v, c in zip(col, is_check.tolist()) if not c] for k, col in cols.values.items()} \
        if is_check.any() else cols.values
    lengths_out = {k: [v for v, c in zip(col, is_check.tolist()) if not c] for k, col in cols.lengths.items()} \
        if is_check.any() else cols.lengths

    def arr(a, dtype):
        return np.frombuffer(a, dtype=dtype).astype(np.int64 if dtype != np.float64 else np.float64) \
            if len(a) else np.zeros(0, np.int64 if dtype != np.float64 else np.float64)

    ids = log.annotator_ids
    out_idx = np.array([i for i, aid in enumerate(ids) if annotators[aid].name in excluded], dtype=np.int64)
    a_pos, a_ann = arr(log.ans_pos, np.int64), arr(log.ans_annotator, np.dtype("l"))
    a_code, a_first = arr(log.ans_code, np.dtype("l")), arr(log.ans_first_seconds, np.float64)
    a_check = np.isin(a_pos, positions[is_check])
    a_out = np.isin(a_ann, out_idx)
    # models' answers (LLM annotators) are never among the people's: left out of every column (Annotator.is_person)
    model_idx = np.array([i for i, aid in enumerate(ids) if not annotators[aid].is_person], dtype=np.int64)
    a_model = np.isin(a_ann, model_idx)
    answers = [json.loads(t) if t else {} for t in log.texts]
    fig = ~a_check & ~a_out & ~a_model
    s_pos, s_ann = arr(log.skip_pos, np.int64), arr(log.skip_annotator, np.dtype("l"))
    s_model = np.isin(s_ann, model_idx)
    s_fig = ~np.isin(s_pos, positions[is_check]) & ~np.isin(s_ann, out_idx) & ~s_model

    check_answers = []
    if a_check.any():
        by_id = store.units_by_id(sorted(set(cols.checks.values())))
        unit_at = {u.position: u for u in by_id.values()}
        items = store.get_items([u.item_id for u in unit_at.values()])
        people_checks = a_check & ~a_model
        for p, a, c in zip(a_pos[people_checks].tolist(), a_ann[people_checks].tolist(),
                           a_code[people_checks].tolist()):
            check_answers.append((items[unit_at[p].item_id], ids[a], answers[c]))

    adjudications = {}
    adj = store.current_adjudications(study.id)
    if adj:
        pos_of = store.unit_positions(list(adj))
        for uid, a in adj.items():
            p = pos_of.get(uid)
            if p is not None:
                i = int(np.searchsorted(kept, p))
                if i < len(kept) and kept[i] == p:
                    adjudications[i] = a

    notes = []
    if log.notes:
        by_id = store.units_by_id(sorted({n[0] for n in log.notes}))
        items = store.get_items(sorted({u.item_id for u in by_id.values()} |
                                       {u.item_b_id for u in by_id.values() if u.item_b_id}))
        for unit_id, ann, note, at, state in log.notes:
            unit = by_id[unit_id]
            item_b = items.get(unit.item_b_id) if unit.item_b_id else None
            notes.append({"item": items[unit.item_id].external_id,
                          "item_b": item_b.external_id if item_b else None,
                          "annotator": annotators[ann].name, "status": state, "note": note, "submitted_at": at})

    return StudyTable(
        study=study, annotators=annotators, n_units=int(keep_unit.sum()), annotator_ids=ids, answers=answers,
        unit=np.searchsorted(kept, a_pos[fig]), annotator=a_ann[fig], code=a_code[fig], first_seconds=a_first[fig],
        skip_unit=np.searchsorted(kept, s_pos[s_fig]), skip_annotator=s_ann[s_fig],
        excluded_annotator=a_ann[~a_check & a_out & ~a_model],
        excluded_first_seconds=a_first[~a_check & a_out & ~a_model],
        excluded=excluded, check_answers=check_answers, adjudications=adjudications, values=values_out,
        lengths=lengths_out, notes=notes, decided=log.decided,
        quotas=quotas, excluded_skip_annotator=s_ann[~np.isin(s_pos, positions[is_check]) & np.isin(s_ann, out_idx) & ~s_model])
