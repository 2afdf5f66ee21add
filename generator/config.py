"""A generator pipeline's configuration, read from YAML or JSON.

    name: sample                  # the pipeline; datasets are called "<name>-<stage>" unless a stage names its own
    seed: 7                       # every sampling choice derives from it
    model: openai/some-model      # any litellm model string; a stage's "model" overrides it
    api_base: http://127.0.0.1:8000/v1   # a local OpenAI-compatible server (optional)
    concurrency: 8                # rows in flight at once
    budget_usd: 2.0               # stop cleanly once this much is spent (optional)
    prices: {openai/some-model: {input: 0.15, output: 0.60}}   # USD per million tokens, for unknown models
    budget_unknown_as: {input: 1.0, output: 4.0}   # with a budget: count unpriced models' replies at this price
    timeout: 120                  # seconds a request may take; also deadline, attempts, repairs, breaker, rpm,
    rpm: 500                      # tpm: see generator/settings.py (each also a flag of `prefval generate`)
    reference_date: 2025/06/30    # "now" for the generated people
    stages:
      personas: {file: personas.txt, n: 3}           # or file: x.jsonl with field: persona
      profiles: {}
      events: {n: 4}
      preferences: {n: 3}
      generalized: {n: 1}
      conversations: {random_sessions: 24, expression_types: [1, 2, 3, 4], feedback_sessions: 3}
      queries: {}
      evolution: {share: 0.3}
      contexts: {lengths: [1000, 3000], mode: interval}   # or lengths: [{interval: 35000, tail: 105000}]

Only the stages listed run. Relative paths are read from the config file's folder.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from storage.errors import PrefvalError

STAGES: tuple[str, ...] = ("personas", "profiles", "events", "preferences", "generalized", "conversations",
                           "queries", "evolution", "contexts")
#: Stages that call an LLM (personas are sampled, contexts assembled, without one).
LLM_STAGES = ("profiles", "events", "preferences", "generalized", "conversations", "queries", "evolution")


class Price(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class ContextLength(BaseModel):
    """Tokens of random sessions inserted between the user's sessions (interval) and appended at the end (tail)."""

    model_config = ConfigDict(extra="forbid")

    interval: int = Field(default=0, ge=0)
    tail: int = Field(default=0, ge=0)


class StageSettings(BaseModel):
    """Settings of one stage; each stage reads the fields that concern it.

    model / params: the LLM and extra sampling parameters (merged over the template's).
    dataset: the output dataset's name. n: personas sampled, life events, preferences or generalized
    preferences per user. file / field: the personas file (one per line, or JSONL with ``field``).
    random_sessions: random sessions generated (shared by all users). expression_types: which of 1-4.
    feedback_sessions: sessions of expression type 4. share: fraction of preferences that evolve (0-1).
    lengths: target context lengths: a number is the total in tokens, reached with random sessions placed as
    ``mode`` says, "interval" (between the user's sessions) or "tail" (at the end); ``{interval: I, tail: T}``
    inserts about I tokens of random sessions between the user's sessions and then T tokens at the end (RealPref
    Table 2: "Extended" is interval 35000 + tail 105000).
    """

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    params: dict = {}
    dataset: str | None = None
    n: int | None = Field(default=None, ge=1)
    file: str | None = None
    field: str | None = None
    random_sessions: int = Field(default=20, ge=0)
    expression_types: list[Literal[1, 2, 3, 4]] = [1, 2, 3, 4]
    feedback_sessions: int = Field(default=3, ge=2)
    share: float = Field(default=0.3, ge=0, le=1)
    lengths: list[int | ContextLength] = Field(default=[2000], min_length=1)
    mode: Literal["interval", "tail"] = "interval"


class PipelineConfig(BaseModel):
    """The whole pipeline (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    seed: int = 0
    model: str = Field(min_length=1)
    api_base: str | None = None
    concurrency: int = Field(default=8, ge=1)
    budget_usd: float | None = Field(default=None, gt=0)
    prices: dict[str, Price] = {}
    budget_unknown_as: Price | None = None
    timeout: float | None = Field(default=None, gt=0)
    deadline: float | None = Field(default=None, gt=0)
    attempts: int | None = Field(default=None, ge=1)
    repairs: int | None = Field(default=None, ge=0)
    breaker: int | None = Field(default=None, ge=0)
    rpm: float | None = Field(default=None, gt=0)
    tpm: float | None = Field(default=None, gt=0)
    reference_date: str = "2025/06/30"
    template_dir: str | None = None
    topics: str | None = None
    stages: dict[Literal[STAGES], StageSettings] = Field(min_length=1)  # type: ignore[valid-type]
    base_dir: str = "."

    @model_validator(mode="after")
    def _checks(self) -> "PipelineConfig":
        from generator.schemas import parse_date

        parse_date(self.reference_date)
        if "personas" in self.stages and not self.stages["personas"].file:
            raise ValueError("stages.personas needs file")
        return self

    def stage(self, name: str) -> StageSettings:
        """The settings of stage ``name`` (defaults when the stage is not listed)."""
        return self.stages.get(name) or StageSettings()

    def llm_models(self) -> list[str]:
        """The models of the configured stages that call an LLM."""
        return sorted({self.model_for(s) for s in LLM_STAGES if s in self.stages})

    def model_for(self, stage: str) -> str:
        return self.stage(stage).model or self.model

    def dataset_for(self, stage: str) -> str:
        return self.stage(stage).dataset or f"{self.name}-{stage}"

    def path(self, value: str | None) -> str | None:
        """A path from the config, relative to the config file's folder."""
        if value is None:
            return None
        p = Path(value)
        return str(p if p.is_absolute() else Path(self.base_dir) / p)


def load_config(path: str | Path, overrides: dict | None = None) -> PipelineConfig:
    """Read a pipeline config (.yaml/.yml or .json) and apply ``overrides`` (top-level keys: model, api_base,
    concurrency, budget_usd, the client knobs of generator.settings; None values ignored).

    Raises PrefvalError with one line naming the file and the field for a missing file, a file that is not UTF-8
    text, bad YAML/JSON or a field that fails validation. The file may start with a byte-order mark and use CRLF."""
    p = Path(path)
    from storage.textfile import read_text

    try:
        text = read_text(p)  # UTF-8, a byte-order mark dropped, CRLF/CR read as LF
    except OSError as exc:
        raise PrefvalError(f"{p}: cannot read the config ({exc.strerror})") from None
    try:
        if p.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as exc:  # yaml.YAMLError / json.JSONDecodeError
        raise PrefvalError(f"{p}: not valid {'JSON' if p.suffix.lower() == '.json' else 'YAML'} ({exc})".replace(
            "\n", " ")) from None
    if not isinstance(data, dict):
        raise PrefvalError(f"{p}: a pipeline config is a mapping (name, model, stages, ...)")
    for k, v in (overrides or {}).items():
        if v is not None:
            data[k] = v
    data["base_dir"] = str(p.resolve().parent)
    try:
        return PipelineConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"]) or "(config)"
        raise PrefvalError(f"{p}: field '{loc}': {err['msg']}") from None
