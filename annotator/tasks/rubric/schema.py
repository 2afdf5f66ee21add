"""Rubrics as data: a rubric file (YAML or JSON) lists dimensions, each with a name (the key scores are stored
under), a title, a description and five levels 1..5 with a description each. Validated with pydantic; any error
is one PrefvalError line naming the file and the field (e.g. ``r.yaml: field 'dimensions.1.levels': ...``).
"""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from storage.errors import PrefvalError

DEFAULT_RUBRIC = Path(__file__).with_name("default.yaml")
LEVELS = (1, 2, 3, 4, 5)


class RubricDimension(BaseModel):
    """One dimension. name: identifier (letters, digits, _ or -); levels: score 1..5 -> description."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_-]+$")
    title: str = ""
    description: str = Field(min_length=1)
    levels: dict[int, str]

    @field_validator("levels")
    @classmethod
    def _five_levels(cls, v: dict[int, str]) -> dict[int, str]:
        if sorted(v) != list(LEVELS):
            raise ValueError(f"levels must be exactly 1..5, got {sorted(v)}")
        for k, text in v.items():
            if not str(text).strip():
                raise ValueError(f"level {k} has an empty description")
        return dict(sorted(v.items()))

    @model_validator(mode="after")
    def _default_title(self) -> "RubricDimension":
        if not self.title:
            self.title = self.name.replace("_", " ")
        return self


class Rubric(BaseModel):
    """A rubric: an optional name and one or more dimensions with distinct names, scored in list order."""

    model_config = ConfigDict(extra="forbid")

    name: str = ""
    dimensions: list[RubricDimension] = Field(min_length=1)

    @field_validator("dimensions")
    @classmethod
    def _distinct(cls, v: list[RubricDimension]) -> list[RubricDimension]:
        names = [d.name for d in v]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup:
            raise ValueError(f"dimension name '{dup}' appears twice")
        return v

    @property
    def names(self) -> list[str]:
        return [d.name for d in self.dimensions]

    def dimension(self, name: str) -> RubricDimension:
        """The dimension called name. Raises KeyError."""
        for d in self.dimensions:
            if d.name == name:
                return d
        raise KeyError(name)


def load_rubric(path: str | Path | None = None) -> Rubric:
    """Read and validate a rubric file (.json as JSON, anything else as YAML); None reads the default rubric.

    Raises PrefvalError (one line naming file and field) for a missing file, a parse error or a schema error.
    """
    from storage.importers.base import load_yaml_or_json

    p = Path(path) if path else DEFAULT_RUBRIC
    raw = load_yaml_or_json(p, "rubric file")
    if not isinstance(raw, dict):
        raise PrefvalError(f"{p}: field '(top)': expected a mapping with 'dimensions'")
    return rubric_from_dict(raw, str(p))


def rubric_from_dict(raw: dict, where: str = "rubric") -> Rubric:
    """Validate a rubric dict (as stored in study settings). Raises PrefvalError naming `where` and the field."""
    try:
        return Rubric.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"]) or "(top)"
        msg = err["msg"].removeprefix("Value error, ")
        raise PrefvalError(f"{where}: field '{loc}': {msg}") from None
