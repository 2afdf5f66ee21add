"""The pydantic input and output schemas of the generator's stages (RealPref, arXiv 2603.04191, sections 3-4 and
appendix E; HorizonBench section 5.1 for evolved preferences).

``*In`` models are what a stage function receives (rendered into its prompt as JSON); ``*Reply`` models are what
the LLM must return (sent as the JSON schema of ``response_format`` and validated by the client). Checks that need
the input (an event date before the person's birth, a topic outside the ones offered) are made by the stage
functions in ``generator.stages``; checks that need only the reply are validators here, so the client's repair
attempts can fix them.
"""
from __future__ import annotations

import datetime as _dt
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

#: RealPref's four preference types (Table 1) and the labels its records use.
PREFERENCE_TYPES: dict[str, str] = {
    "relative": "Relative Preference", "negative": "Negative Preference",
    "exclusive": "Exclusive Preference", "positive": "Positive Preference",
}
#: RealPref's four expression types (section 3.3): 1-2 explicit, 3-4 implicit; 4 spans several sessions.
EXPRESSION_TYPES: dict[int, str] = {
    1: "direct statement", 2: "contextualized mention", 3: "stylistic expression", 4: "experience feedback",
}
DurationType = Literal["years", "months", "weeks", "days"]
PreferenceType = Literal["relative", "negative", "exclusive", "positive"]
Letter = Literal["A", "B", "C", "D"]


def parse_date(value: str) -> _dt.date:
    """A RealPref date "YYYY/MM/DD" (also accepted: "YYYY-MM-DD"). Raises ValueError."""
    return _dt.date.fromisoformat(value.strip().replace("/", "-"))


def format_date(d: _dt.date) -> str:
    """RealPref's date layout, "YYYY/MM/DD"."""
    return d.strftime("%Y/%m/%d")


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _date_field(v: str) -> str:
    return format_date(parse_date(v))


#: A date in a reply: "YYYY/MM/DD" or "YYYY-MM-DD", kept as "YYYY/MM/DD".
ReplyDate = Annotated[str, AfterValidator(_date_field)]


class Turn(_Reply):
    """One message of a session."""

    role: Literal["user", "assistant"]
    content: str = Field(min_length=1)


def _alternating(turns: list[Turn]) -> list[Turn]:
    if turns and turns[0].role != "user":
        raise ValueError("a session starts with the user")
    return turns


# ---- 2 profile -------------------------------------------------------------------------------------------------
class ProfileIn(BaseModel):
    user_id: str
    persona: str
    reference_year: int


class ProfileReply(_Reply):
    """Demographics and an extended persona of about five sentences (RealPref 3.1, appendix E.1)."""

    name: str = Field(min_length=2)
    birth_year: int = Field(ge=1920, le=2010)
    gender: str = Field(min_length=1)
    education: str = Field(min_length=1)
    occupation: str = Field(min_length=1)
    economic_status: str = Field(min_length=1)
    marital_status: str = Field(min_length=1)
    extended_persona: str = Field(min_length=40)


# ---- 3 life events ---------------------------------------------------------------------------------------------
class EventsIn(BaseModel):
    user_id: str
    profile: dict
    n_events: int
    reference_date: str


class LifeEvent(_Reply):
    date: ReplyDate
    duration_type: DurationType
    event: str = Field(min_length=10)


class EventsReply(_Reply):
    events: list[LifeEvent] = Field(min_length=1)


# ---- 4 preferences ---------------------------------------------------------------------------------------------
class PreferencesIn(BaseModel):
    user_id: str
    profile: dict
    events: list[dict]
    topics: list[str]
    preference_types: dict[str, str]


class PreferenceOut(_Reply):
    preference: str = Field(min_length=10)
    reason: str = Field(min_length=5)
    type: PreferenceType
    topic: str = Field(min_length=3)
    event_date: ReplyDate
    event: str = Field(min_length=10)


class PreferencesReply(_Reply):
    preferences: list[PreferenceOut] = Field(min_length=1)


# ---- 5 generalized preferences ---------------------------------------------------------------------------------
class GeneralizeIn(BaseModel):
    user_id: str
    preferences: list[dict]
    n: int


class GeneralizedOut(_Reply):
    preference: str = Field(min_length=10)
    type: PreferenceType
    topic: str = Field(min_length=3)
    source_pref_ids: list[str] = Field(min_length=2)
    inference_reason: str = Field(min_length=10)


class GeneralizeReply(_Reply):
    generalized: list[GeneralizedOut] = Field(min_length=1)


# ---- 6 conversations -------------------------------------------------------------------------------------------
class EventSessionIn(BaseModel):
    user_id: str
    profile: dict
    event: dict


class RandomSessionIn(BaseModel):
    index: int
    subject: str


class SessionReply(_Reply):
    """One session: alternating user/assistant turns starting with the user."""

    turns: list[Turn] = Field(min_length=2)

    _t = field_validator("turns")(classmethod(lambda cls, v: _alternating(v)))


class PreferenceSessionIn(BaseModel):
    user_id: str
    profile: dict
    preference: dict
    expression_type: int
    expression_name: str
    n_sessions: int


class PreferenceSessionsReply(_Reply):
    sessions: list[list[Turn]] = Field(min_length=1)

    @field_validator("sessions")
    @classmethod
    def _each(cls, v: list[list[Turn]]) -> list[list[Turn]]:
        for s in v:
            if len(s) < 2:
                raise ValueError("every session needs at least one user and one assistant turn")
            _alternating(s)
        return v


# ---- 8 queries -------------------------------------------------------------------------------------------------
class QueryIn(BaseModel):
    user_id: str
    pref_id: str
    preference: str
    type: str
    topic: str


class Options(_Reply):
    A: str = Field(min_length=1)
    B: str = Field(min_length=1)
    C: str = Field(min_length=1)
    D: str = Field(min_length=1)


class QueryReply(_Reply):
    """An open-ended query that does not reveal the preference, four options of which exactly one is aligned."""

    query: str = Field(min_length=10)
    explanation: str = Field(min_length=5)
    options: Options
    correct: Letter

    @field_validator("options")
    @classmethod
    def _distinct(cls, v: Options) -> Options:
        texts = [v.A.strip().lower(), v.B.strip().lower(), v.C.strip().lower(), v.D.strip().lower()]
        if len(set(texts)) != 4:
            raise ValueError("the four options must differ")
        return v


# ---- 9 evolution -----------------------------------------------------------------------------------------------
class EvolveIn(BaseModel):
    user_id: str
    pref_id: str
    preference: str
    type: str
    topic: str
    since: str
    query: str
    options: dict[str, str]
    correct: str


class EvolveReply(_Reply):
    """A later event that changes the preference, the new preference, the option aligned with it, and a session in
    which the user shows the change (HorizonBench section 5.1)."""

    event_date: ReplyDate
    event: str = Field(min_length=10)
    evolved_preference: str = Field(min_length=10)
    reason: str = Field(min_length=5)
    new_option: str = Field(min_length=1)
    session: list[Turn] = Field(min_length=2)

    _t = field_validator("session")(classmethod(lambda cls, v: _alternating(v)))


REPLY_MODELS: dict[str, type[BaseModel]] = {
    "profile": ProfileReply, "events": EventsReply, "preferences": PreferencesReply,
    "generalized": GeneralizeReply, "event_session": SessionReply, "random_session": SessionReply,
    "preference_sessions": PreferenceSessionsReply, "query": QueryReply, "evolution": EvolveReply,
}
