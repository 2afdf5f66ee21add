"""The payload schema of each item kind. Importers build these; task types read them.

Kinds:
- "mcq": a question with 2-10 options (a T/F item is an MCQ with options ["True", "False"], fmt="tf").
- "persona_record": a generated persona sentence, profile, life event or preference to keep or drop.
- "gold_candidate": a (recipient-task context, preference/memory attribute) pair to label apply(1)/suppress(0).
- "conversation_record": a preference with its conversation (one side of a pairwise comparison).
- "rubric_item": (preference, query, answer) to score on rubric dimensions.
Answer keys (correct_index, candidate_label, reference_scores) are stored here and never shown on blind screens.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from storage.models import Message, Model


class _Payload(Model):
    model_config = ConfigDict(extra="forbid")


class McqPayload(_Payload):
    """A multiple-choice (or T/F) item. options are in their ORIGINAL order; letters are A, B, C... by index.

    correct_index: index into options of the key (None when the dataset has no key).
    distractor_index: the hard negative (HorizonBench's pre-evolution value), None if none.
    snippet: a short conversation shown by easy tests (never by blind tests).
    """

    question: str = Field(min_length=1)
    options: list[str] = Field(min_length=2, max_length=10)
    correct_index: int | None = None
    distractor_index: int | None = None
    fmt: Literal["mcq", "tf"] = "mcq"
    question_type: str | None = None
    topic: str | None = None
    snippet: list[Message] | None = None
    metadata: dict[str, Any] = {}

    @model_validator(mode="after")
    def _indices_in_range(self) -> "McqPayload":
        for name in ("correct_index", "distractor_index"):
            v = getattr(self, name)
            if v is not None and not 0 <= v < len(self.options):
                raise ValueError(f"{name} {v} is outside the {len(self.options)} options")
        return self


class PersonaRecordPayload(_Payload):
    """A generated record for keep/drop filtering. record_type: persona | profile | event | preference."""

    text: str = Field(min_length=1)
    record_type: Literal["persona", "profile", "event", "preference"] = "persona"
    profile: str | None = None
    parent_external_id: str | None = None
    metadata: dict[str, Any] = {}


class GoldCandidatePayload(_Payload):
    """One (context, attribute) candidate for gold labelling. candidate_label: the author's/LLM's label, hidden."""

    recipient: str = Field(min_length=1)
    task: str = Field(min_length=1)
    attribute: str = Field(min_length=1)
    statement: str | None = None
    category: str | None = None
    domain: str | None = None
    profile_name: str | None = None
    candidate_label: bool | None = None
    metadata: dict[str, Any] = {}


class ConversationRecordPayload(_Payload):
    """A preference with its conversation: one side of a pairwise plausibility comparison."""

    preference: str = Field(min_length=1)
    messages: list[Message] = []
    metadata: dict[str, Any] = {}


class RubricItemPayload(_Payload):
    """An open answer to score. reference_scores: dimension -> 1..5, shown only after answering calibration items."""

    preference: str = Field(min_length=1)
    query: str = Field(min_length=1)
    answer: str = Field(min_length=1)
    reference_scores: dict[str, int] | None = None
    metadata: dict[str, Any] = {}


PAYLOADS: dict[str, type[_Payload]] = {
    "mcq": McqPayload,
    "persona_record": PersonaRecordPayload,
    "gold_candidate": GoldCandidatePayload,
    "conversation_record": ConversationRecordPayload,
    "rubric_item": RubricItemPayload,
}


def letter(index: int) -> str:
    """0 -> "A", 1 -> "B", ..."""
    return chr(ord("A") + index)
