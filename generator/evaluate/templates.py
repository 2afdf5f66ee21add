"""Prompt templates of the evaluator (data in templates.yaml) and the output models replies are validated into.

A template is rendered with str.format: values from items are inserted as plain text (a brace in an item is just
a character). Each request names its template as "id@version"; the version is part of the call cache's key.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

TEMPLATES_FILE = Path(__file__).with_name("templates.yaml")
LETTERS = "ABCDEFGHIJ"


@lru_cache(maxsize=1)
def templates() -> dict[str, dict[str, Any]]:
    """All templates: id -> {"version", "system", "user"}."""
    import yaml

    return yaml.safe_load(TEMPLATES_FILE.read_text(encoding="utf-8"))


def render(template_id: str, **values: Any) -> tuple[str, tuple[dict[str, str], ...]]:
    """("id@version", chat messages) of a template filled with values. Raises KeyError for an unknown template
    or a missing placeholder value."""
    t = templates()[template_id]
    messages = ({"role": "system", "content": t["system"].strip()},
                {"role": "user", "content": t["user"].strip().format(**{k: str(v) for k, v in values.items()})})
    return f"{template_id}@{t['version']}", messages


@lru_cache(maxsize=None)
def letter_answer_model(n_options: int) -> type[BaseModel]:
    """The reply of an MCQ prompt with n_options options: {"answer": one of the letters A..}."""
    letters = tuple(LETTERS[:n_options])
    return create_model(f"McqAnswer{n_options}", answer=(Literal[letters], ...))  # type: ignore[valid-type]


class DimensionScore(BaseModel):
    """One rubric dimension's score (1..5) with a short reason."""

    score: int = Field(ge=1, le=5)
    reason: str


@lru_cache(maxsize=None)
def rubric_scores_model(dimensions: tuple[str, ...]) -> type[BaseModel]:
    """The reply of the rubric judge: one DimensionScore per dimension name."""
    return create_model("RubricScores", **{d: (DimensionScore, ...) for d in dimensions})  # type: ignore[call-overload]


class PairwiseVerdict(BaseModel):
    """The pairwise judge's reply: "1" (first record), "2" (second) or "tie", with a reason."""

    winner: Literal["1", "2", "tie"]
    reason: str


class ReflectionVerdict(BaseModel):
    """The reflection judge's reply: whether the writing reflects the attribute, with a reason."""

    reflected: bool
    reason: str
