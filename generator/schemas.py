"""The pydantic input and output schemas of the generator's stages (RealPref, arXiv 2603.04191, sections 3-4 and
appendix E; HorizonBench section 5.1 for evolved preferences).

``*In`` models are what a stage function receives (rendered into its prompt as JSON). A reply's JSON schema is
built per request from the stage's input by the ``*_schema`` functions here (the topics offered, the user's
preference ids, the span of dates the person lived, the number of sessions asked for), sent as ``response_format``
and checked by the client against every reply (``generator.json_schema``): what JSON Schema can state is stated
there, in the subset OpenAI's strict mode and guided decoding (vLLM, llama.cpp) accept, so a server that decodes
to the schema cannot send a reply that fails it. The ``*Reply`` models are typed views of a reply valid for its
schema (they check nothing the schema does not). Checks no schema can state (four options that differ, the query
not quoting the preference) are made by the stage functions in ``generator.stages``.

A session is a list of exchanges ``{"user": ..., "assistant": ...}``: a session that starts with the assistant, or
two turns of one speaker in a row, cannot be written (``turns_of`` gives the usual role/content turns).
"""
from __future__ import annotations

import datetime as _dt
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict

from generator.json_schema import any_of, array, date_in, enum, integer, obj, text

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


#: A date in a reply: "YYYY/MM/DD" (also read: "YYYY-MM-DD"), kept as "YYYY/MM/DD".
ReplyDate = Annotated[str, AfterValidator(_date_field)]


class Exchange(_Reply):
    """One exchange of a session: the user's message and the assistant's reply."""

    user: str
    assistant: str


def turns_of(exchanges: list[Exchange]) -> list[dict[str, str]]:
    """The session as alternating turns ``{"role": "user"|"assistant", "content": ...}``, starting with the user."""
    out: list[dict[str, str]] = []
    for x in exchanges:
        out.append({"role": "user", "content": x.user})
        out.append({"role": "assistant", "content": x.assistant})
    return out


def _exchange_schema() -> dict:
    return obj({"user": text(1, "what the user writes"), "assistant": text(1, "the assistant's reply")})


def _session_schema(min_exchanges: int, max_exchanges: int) -> dict:
    return array(_exchange_schema(), min_exchanges, max_exchanges,
                 "the session's exchanges in order: each is one user message and the assistant's reply")


# ---- 2 profile -------------------------------------------------------------------------------------------------
class ProfileIn(BaseModel):
    user_id: str
    persona: str
    reference_year: int


class ProfileReply(_Reply):
    """Demographics and an extended persona of about five sentences (RealPref 3.1, appendix E.1)."""

    name: str
    birth_year: int
    gender: str
    education: str
    occupation: str
    economic_status: str
    marital_status: str
    extended_persona: str


@lru_cache(maxsize=64)
def profile_schema(reference_year: int) -> dict:
    """The person is an adult (at least 18) in the reference year and at most 100."""
    return obj({
        "name": text(2), "birth_year": integer(reference_year - 100, reference_year - 18),
        "gender": text(1), "education": text(1), "occupation": text(1), "economic_status": text(1),
        "marital_status": text(1), "extended_persona": text(40, "about five sentences in the third person"),
    })


# ---- 3 life events ---------------------------------------------------------------------------------------------
class EventsIn(BaseModel):
    user_id: str
    profile: dict
    n_events: int
    reference_date: str


class LifeEvent(_Reply):
    date: ReplyDate
    duration_type: DurationType
    event: str


class EventsReply(_Reply):
    events: list[LifeEvent]


@lru_cache(maxsize=1024)
def events_schema(birth_year: int, reference_date: str, n_events: int) -> dict:
    """1..n events, each dated from the person's birth year to the reference date."""
    return obj({"events": array(obj({
        "date": date_in(_dt.date(birth_year, 1, 1), parse_date(reference_date)),
        "duration_type": enum(("years", "months", "weeks", "days")),
        "event": text(10),
    }), 1, n_events)})


# ---- 4 preferences ---------------------------------------------------------------------------------------------
class PreferencesIn(BaseModel):
    user_id: str
    profile: dict
    events: list[dict]
    topics: list[str]
    preference_types: dict[str, str]


class PreferenceOut(_Reply):
    topic: str
    preference: str
    reason: str
    type: PreferenceType
    event_date: ReplyDate
    event: str


class PreferencesReply(_Reply):
    """One preference per offered topic, under the keys ``topic_1``, ``topic_2`` ... in the order offered."""

    preferences: dict[str, PreferenceOut]


def topic_key(i: int) -> str:
    """The reply's key of the i-th offered topic (0-based): topic_1, topic_2 ..."""
    return f"topic_{i + 1}"


@lru_cache(maxsize=1024)
def preferences_schema(topics: tuple[str, ...], birth_year: int, reference_date: str) -> dict:
    """Exactly one preference per offered topic (an object keyed topic_1.. whose ``topic`` is that topic: none left
    out, none twice, none other), its initializing event dated from the birth year to the reference date."""
    lo, hi = _dt.date(birth_year, 1, 1), parse_date(reference_date)
    return obj({"preferences": obj({topic_key(i): obj({
        "topic": enum([t]),
        "preference": text(10), "reason": text(5), "type": enum(("relative", "negative", "exclusive", "positive")),
        "event_date": date_in(lo, hi, "when the preference started"), "event": text(10),
    }) for i, t in enumerate(topics)})})


# ---- 5 generalized preferences ---------------------------------------------------------------------------------
class GeneralizeIn(BaseModel):
    user_id: str
    preferences: list[dict]
    n: int


class SourcePair(_Reply):
    first: str
    second: str


class GeneralizedOut(_Reply):
    preference: str
    type: PreferenceType
    topic: str
    sources: SourcePair
    more_sources: list[str]
    inference_reason: str

    @property
    def source_pref_ids(self) -> list[str]:
        """The preferences it was inferred from: first, second, then the others, each once."""
        return list(dict.fromkeys([self.sources.first, self.sources.second, *self.more_sources]))


class GeneralizeReply(_Reply):
    generalized: list[GeneralizedOut]


@lru_cache(maxsize=1024)
def generalized_schema(pref_ids: tuple[str, ...], n: int, topics: tuple[str, ...] | None = None) -> dict:
    """1..n generalized preferences, each from two different preferences of the user: ``sources`` is one of the
    pairs (an earlier id first, a later one second), ``more_sources`` any further ids of the user's (repeats are
    dropped). The topic is one of the pool's when a pool is given. Needs at least two ids."""
    ids = list(pref_ids)
    if len(ids) < 2:
        raise ValueError("a generalized preference needs two preferences to come from")
    pairs = any_of([obj({"first": enum([a]), "second": enum(ids[i + 1:])}) for i, a in enumerate(ids[:-1])],
                   "two different preferences it follows from (the one with the earlier id first)")
    return obj({"generalized": array(obj({
        "preference": text(10), "type": enum(("relative", "negative", "exclusive", "positive")),
        "topic": enum(topics) if topics else text(3, "Area: Subtopic"),
        "sources": pairs,
        "more_sources": array(enum(ids), 0, max(0, len(ids) - 2), "further preferences it follows from, if any"),
        "inference_reason": text(10),
    }), 1, n)})


# ---- 6 conversations -------------------------------------------------------------------------------------------
class EventSessionIn(BaseModel):
    user_id: str
    profile: dict
    event: dict


class RandomSessionIn(BaseModel):
    index: int
    subject: str


class SessionReply(_Reply):
    """One session: exchanges of a user message and the assistant's reply."""

    exchanges: list[Exchange]

    def turns(self) -> list[dict[str, str]]:
        return turns_of(self.exchanges)


@lru_cache(maxsize=1)
def session_schema() -> dict:
    """A session of 2 to 4 exchanges (4 to 8 turns, as the prompts ask)."""
    return obj({"exchanges": _session_schema(2, 4)})


class PreferenceSessionIn(BaseModel):
    user_id: str
    profile: dict
    preference: dict
    expression_type: int
    expression_name: str
    n_sessions: int


class PreferenceSessionsReply(_Reply):
    sessions: list[list[Exchange]]

    def session_turns(self) -> list[list[dict[str, str]]]:
        return [turns_of(s) for s in self.sessions]


@lru_cache(maxsize=16)
def preference_sessions_schema(n_sessions: int) -> dict:
    """Exactly ``n_sessions`` sessions of 1 to 6 exchanges each."""
    return obj({"sessions": array(_session_schema(1, 6), n_sessions, n_sessions)})


# ---- 8 queries -------------------------------------------------------------------------------------------------
class QueryIn(BaseModel):
    user_id: str
    pref_id: str
    preference: str
    type: str
    topic: str


class Options(_Reply):
    A: str
    B: str
    C: str
    D: str


class QueryReply(_Reply):
    """An open-ended query that does not reveal the preference, four options of which exactly one is aligned."""

    query: str
    explanation: str
    options: Options
    correct: Letter


@lru_cache(maxsize=1)
def query_schema() -> dict:
    return obj({"query": text(10), "explanation": text(5),
                "options": obj({x: text(1) for x in "ABCD"}), "correct": enum("ABCD")})


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
    event: str
    evolved_preference: str
    reason: str
    new_option: str
    session: list[Exchange]

    def turns(self) -> list[dict[str, str]]:
        return turns_of(self.session)


def evolution_window(since: str, reference_date: str | None) -> tuple[_dt.date, _dt.date]:
    """The days an evolution event may fall on: from the day after ``since`` to the reference date, or to a year
    after ``since`` when that is later."""
    lo = parse_date(since) + _dt.timedelta(days=1)
    hi = lo + _dt.timedelta(days=364)
    if reference_date is not None:
        hi = max(hi, parse_date(reference_date))
    return lo, hi


@lru_cache(maxsize=4096)
def evolution_schema(since: str, reference_date: str | None = None) -> dict:
    lo, hi = evolution_window(since, reference_date)
    return obj({"event_date": date_in(lo, hi, "when the change happened: after the preference began"),
                "event": text(10), "evolved_preference": text(10), "reason": text(5), "new_option": text(1),
                "session": _session_schema(1, 6)})


REPLY_MODELS: dict[str, type[BaseModel]] = {
    "profile": ProfileReply, "events": EventsReply, "preferences": PreferencesReply,
    "generalized": GeneralizeReply, "event_session": SessionReply, "random_session": SessionReply,
    "preference_sessions": PreferenceSessionsReply, "query": QueryReply, "evolution": EvolveReply,
}


def example_schema(name: str) -> dict[str, Any]:
    """The schema of reply ``name`` for a typical input (3 topics or preference ids, a person born in 1990, reference
    date 2025/06/30), e.g. for documentation and for stand-in replies."""
    return {
        "profile": lambda: profile_schema(2025), "events": lambda: events_schema(1990, "2025/06/30", 4),
        "preferences": lambda: preferences_schema(("Food: Diet", "Travel: Destinations", "Social: Family"), 1990,
                                                  "2025/06/30"),
        "generalized": lambda: generalized_schema(("p01", "p02", "p03"), 1),
        "event_session": session_schema, "random_session": session_schema,
        "preference_sessions": lambda: preference_sessions_schema(3), "query": query_schema,
        "evolution": lambda: evolution_schema("2020/01/01", "2025/06/30"),
    }[name]()
