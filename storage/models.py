"""pydantic models for every row that crosses the storage boundary.

Rows go in as the *In models (validated before any SQL runs) and come out as the plain models.
JSON columns (payload, settings, answer, extra) are dicts here.
"""
from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# Fixed namespace for derived ids: the same dataset name + external id gives the same item id in every database.
PREFVAL_NAMESPACE = uuid.UUID("6b3f1f0e-8a8e-4c59-9a3b-2f1d3c7e5a10")


def derived_id(*parts: str) -> str:
    """A deterministic UUID (uuid5) from name parts, so ids survive export/import and bundle merges."""
    return str(uuid.uuid5(PREFVAL_NAMESPACE, "\x1f".join(parts)))


def new_id() -> str:
    """A fresh random UUID4 string (annotations, events: rows that are created, not imported)."""
    return str(uuid.uuid4())


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no extra spaces: the form that content hashes are taken of."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def content_hash(value: Any) -> str:
    """sha256 hex of canonical_json(value)."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


class Model(BaseModel):
    """Base of prefval's row models: a model's validator is built when it is first used, not at import (most
    models are never used by a given command; building them all cost the annotation screen's start-up ~0.1 s)."""

    model_config = ConfigDict(defer_build=True)


class Message(Model):
    """One turn of a conversation context."""

    role: str
    content: str


class ContextIn(Model):
    """A conversation history stored once and referenced by items (items see messages[:end])."""

    external_id: str
    messages: list[Message]
    #: pointer to the context's original record (as ItemIn.source); None when the format has none
    source: dict[str, Any] | None = None


class ItemIn(Model):
    """An item as an importer produces it. payload: the kind's fields (see storage.payloads)."""

    external_id: str = Field(min_length=1)
    kind: str
    payload: dict[str, Any]
    context_external_id: str | None = None
    context_end: int | None = Field(default=None, ge=0)
    #: where the item came from in its original file, for `prefval release` in the benchmark's own layout: a small
    #: JSON object whose string values under keys ending in "_src" name texts of Parsed.sources (sha256 hex).
    #: Each importer documents its own keys. Not part of the content hash; never copied into bundles.
    source: dict[str, Any] | None = None


class ItemSource(Model):
    """An item's pointer to its original record (ItemIn.source), as `Store.item_sources` returns it."""

    external_id: str
    source: dict[str, Any] | None = None
    context_external_id: str | None = None
    context_source: dict[str, Any] | None = None


class Item(Model):
    id: str
    dataset_id: str
    dataset_name: str = ""
    external_id: str
    kind: str
    payload: dict[str, Any]
    content_hash: str
    context_id: str | None = None
    context_end: int | None = None

    @property
    def context_missing(self) -> bool:
        """Whether the item refers to a conversation the database does not hold: its importer gave a context
        reference (with the end of the part it sees, context_end) that named no imported context, so
        storage.datasets.import_items stored no context_id (e.g. PersonaMem questions imported without their
        shared-contexts file). Every importer that gives a reference gives its context_end."""
        return self.context_id is None and self.context_end is not None


class Dataset(Model):
    id: str
    name: str
    format: str
    source_path: str | None = None
    file_hash: str | None = None
    imported_at: str | None = None
    derived_from_study: str | None = None
    n_items: int = 0


class ImportResult(Model):
    """What one import did: counts of items added and already present (same content), contexts added;
    without_context: external ids of the imported items (added or present) whose context reference names no
    context of the dataset, in file order; n_context_linked: items stored before without their context that this
    import gave it."""

    dataset: str
    n_added: int
    n_unchanged: int
    n_contexts: int = 0
    without_context: list[str] = []
    n_context_linked: int = 0


class Study(Model):
    model_config = ConfigDict(extra="ignore")

    id: str
    name: str
    task_type: str
    settings: dict[str, Any]
    seed: int
    created_at: str


class Unit(Model):
    """One thing a study asks about: an item, or a pair of items (item_b_id) for pairwise studies."""

    id: str
    study_id: str
    item_id: str
    item_b_id: str | None = None
    position: int
    extra: dict[str, Any] = {}


#: The kinds of annotator. A PERSON ("human") is someone who annotated on the screen, in a bundle or in a file of
#: human annotations; a MODEL ("llm") is an LLM that answered items, judged them or validated them (`prefval
#: evaluate`, `prefval import judgments`). This is the one definition of who is a person: every figure about people
#: (accuracy, majority vote, agreement, can't tell, guessable, unanimity, funnel, release) counts only annotators for
#: whom is_person_kind is true; models get their own rows and sections, named as such.
PERSON_KIND = "human"
MODEL_KIND = "llm"
#: SQL: the ids of the annotators who are people (a NULL kind, from an old file, is a person), and of the models
PEOPLE_IDS_SQL = "(SELECT id FROM annotators WHERE COALESCE(kind, 'human') = 'human')"
MODEL_IDS_SQL = "(SELECT id FROM annotators WHERE COALESCE(kind, 'human') != 'human')"


def is_person_kind(kind: str | None) -> bool:
    """Whether an annotator of this kind is a person (PERSON_KIND; None, from a file older than the column's use,
    is a person too); False for a model (MODEL_KIND)."""
    return (kind or PERSON_KIND) == PERSON_KIND


class Annotator(Model):
    """Someone or something that annotates: name unique in the database; kind PERSON_KIND or MODEL_KIND; model: the
    LLM's model name for a model."""

    id: str
    name: str
    kind: Literal["human", "llm"] = "human"
    model: str | None = None

    @property
    def is_person(self) -> bool:
        """Whether this annotator is a person (is_person_kind): the only test every figure about people uses."""
        return is_person_kind(self.kind)


class Assignment(Model):
    id: str
    study_id: str
    unit_id: str
    annotator_id: str
    position: int
    shuffle_seed: int


# "flag" / "unflag" mark an item "needs review" (or clear the mark) without answering it; the latest of the two
# rows of an annotator on a unit decides whether it is flagged.
Status = Literal["answered", "skipped", "partial", "note", "flag", "unflag"]


class AnnotationIn(Model):
    """One decision to append. answer: the task's answer dict (None for a skip or a note).

    seconds: time on the item before this decision (seconds, wall clock).
    """

    study_id: str
    unit_id: str
    item_id: str
    annotator_id: str
    assignment_id: str | None = None
    status: Status
    answer: dict[str, Any] | None = None
    note: str | None = None
    source: Literal["human", "llm"] = "human"
    started_at: str | None = None
    seconds: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    supersedes: str | None = None


class Annotation(AnnotationIn):
    id: str
    submitted_at: str


#: the columns of table annotations, in the order Annotation's fields are read from a row
ANNOTATION_COLUMNS = ("id", "study_id", "unit_id", "item_id", "annotator_id", "assignment_id", "status", "answer",
                      "note", "source", "started_at", "submitted_at", "seconds", "supersedes")


def annotation_from_row(row: dict) -> Annotation:
    """An Annotation from a row of table annotations (a mapping holding at least ANNOTATION_COLUMNS), the answer
    decoded from its JSON text (None when empty). Raises pydantic.ValidationError for a row that is not one."""
    rec = {k: row[k] for k in ANNOTATION_COLUMNS}
    rec["answer"] = json.loads(rec["answer"]) if rec["answer"] else None
    return Annotation(**rec)


class Event(Model):
    id: str
    at: str
    kind: str
    study_id: str | None = None
    annotator_id: str | None = None
    payload: dict[str, Any] = {}


@dataclass(slots=True)
class AnswerRow:
    """One row of the annotation log as the figures, the quality table and exports of current answers read it:
    the columns they use, without the row's own ids (id, assignment_id, supersedes) and without validation (the
    rows were validated when written); about a quarter of an Annotation's memory. Built by Store.study_log.

    first_seconds (current answers only): seconds of the annotator's FIRST "answered" row on the unit that has
    seconds, i.e. the time per item of reports.per_annotator (a changed answer keeps its first time); None when
    no answer of the annotator on the unit has seconds (e.g. imported LLM judgments)."""

    unit_id: str
    item_id: str
    annotator_id: str
    status: str
    answer: dict[str, Any] | None
    seconds: float | None
    submitted_at: str
    source: str = "human"
    note: str | None = None
    first_seconds: float | None = None


@dataclass
class StudyLog:
    """What a study's figures need from its annotation log, read in one pass (Store.study_log).

    answers: the current answer per (unit, annotator): the latest "answered" row (a later partial row does not
    retract it), in unit order then annotator id, each with its first_seconds. skipped: the (unit, annotator)
    pairs whose latest decision row (answered, skipped or partial) is a skip, in the same order. Only units of
    the study's study_items. notes: every "note" row with a note, oldest first, each with the annotator's latest
    decision on the unit ("answered", "skipped", "partial" or "open"). decided: ids of annotators with at least
    one answered or skipped row.
    """

    answers: list[AnswerRow] = field(default_factory=list)
    skipped: list[AnswerRow] = field(default_factory=list)
    notes: list[tuple[AnswerRow, str]] = field(default_factory=list)
    decided: set[str] = field(default_factory=set)


@dataclass
class AnswerTable:
    """A study's current answers and skips as columns (Store.study_answer_table): what `prefval status STUDY`
    computes its figures from, in memory that is a few machine words per answer (no object per answer).

    Units are named by their study position (study_items.position). Answers: one entry per (unit, annotator) pair
    with an "answered" row, sorted by position then annotator id (the order of StudyLog.answers): ans_pos (array
    'q'), ans_annotator (array 'l', index into annotator_ids), ans_code (array 'l', index into texts, the distinct
    answer JSON texts; None for a row without answer) and ans_first_seconds (array 'd', seconds of the FIRST
    "answered" row with seconds, NaN for none: AnswerRow.first_seconds). Skips: the pairs whose latest decision row
    is a skip, in the same order (skip_pos, skip_annotator). notes: every "note" row with a note of the study's
    units, oldest first, as (unit_id, annotator_id, note, submitted_at, state), state the annotator's latest
    decision on the unit ("answered", "skipped", "partial" or "open"). decided: ids of annotators with an answered
    or skipped row.
    """

    annotator_ids: list[str]
    texts: list[str | None]
    ans_pos: Any
    ans_annotator: Any
    ans_code: Any
    ans_first_seconds: Any
    skip_pos: Any
    skip_annotator: Any
    notes: list[tuple[str, str, str | None, str, str]] = field(default_factory=list)
    decided: set[str] = field(default_factory=set)


@dataclass
class UnitColumns:
    """A study's units as columns (Store.unit_columns), in study order: positions (array 'q'), checks: position -> unit id
    of the attention-check units (extra["check"] true; they stay in positions), and item payload fields per unit: values
    name -> list of json_extract(payload, path) (JSON scalars as Python values; arrays and objects as JSON text),
    lengths name -> list of json_array_length(payload, path) (None when the path is not an array). quotas: position ->
    extra["annotators"] of the units that set their own quota (storage.studies.unit_quota)."""

    positions: Any
    checks: dict[int, str] = field(default_factory=dict)
    quotas: dict[int, int] = field(default_factory=dict)
    values: dict[str, list] = field(default_factory=dict)
    lengths: dict[str, list] = field(default_factory=dict)
