"""The generator's stage functions (RealPref, arXiv 2603.04191, sections 3-4 and appendix E; HorizonBench section
5.1). Each takes its pydantic input (``generator.schemas``) and a :class:`RowLLM`, and makes its LLM call through the
one client (``LLMClientProtocol.complete``) under a :class:`Contract`: the reply's JSON schema built from the input
(sent as ``response_format`` and checked by the client) and the stage's checks, run on every reply before it is
accepted or cached. A reply that fails a check is sent back once or twice for repair (the client's repair
attempts); one that still fails makes the call fail (LLMCallFailed with the reason), and the pipeline records the
row as failed and goes on. So a reply that fails a check is never cached: the same command again asks afresh.

A contract's checks come in two kinds. ``stated`` ones repeat what the schema already states (a birth year that makes
the person an adult, dates within the person's life, topics the ones offered): a server that decodes to the schema
always passes them; they are kept for servers that ignore it. ``cross`` ones are what no JSON schema can state: a
field against another field or against the input, case-insensitively (four options that differ, a query that does
not quote the preference, a new option that is none of the old ones); only they can fail a reply of the schema.

Pure helpers that need no LLM (sampling personas, building T/F queries from MCQ options, ordering options with a
pre-evolution distractor) are here too, each deterministic given its seed.
"""
from __future__ import annotations

import datetime as _dt
import random
from dataclasses import dataclass, field
from typing import Any, Callable

from generator.llm_types import LLMRequest, ReplyRejected
from generator.schemas import (
    EXPRESSION_TYPES, EventSessionIn, EventsIn, EventsReply, EvolveIn, EvolveReply, GeneralizeIn, GeneralizeReply,
    GeneralizedOut, PreferenceOut, PreferenceSessionIn, PreferenceSessionsReply, PreferencesIn, PreferencesReply,
    ProfileIn, ProfileReply, QueryIn, QueryReply, RandomSessionIn, REPLY_MODELS, SessionReply, events_schema,
    evolution_schema, evolution_window, generalized_schema, parse_date, preference_sessions_schema,
    preferences_schema, profile_schema, query_schema, session_schema, topic_key,
)
from generator.templates import load_template


class StageCheckFailed(ReplyRejected):
    """A reply passed its schema but fails a check of the stage (one-line reason)."""


@dataclass(frozen=True)
class Contract:
    """What one call of a stage asks for and accepts: the template, the reply schema (per request, from the input)
    and the checks (see the module docstring)."""

    template: str
    schema: dict[str, Any]
    stated: Callable[[Any], None] | None = None
    cross: Callable[[Any], None] | None = None

    def check(self, value: Any) -> None:
        """Raises StageCheckFailed when the reply fails a check of either kind."""
        if self.stated is not None:
            self.stated(value)
        if self.cross is not None:
            self.cross(value)


@dataclass
class RowLLM:
    """What one output row's stage function uses to call the LLM: the client, the stage's model and settings, and
    the row's usage so far (summed over its calls).

    prompt_tokens / completion_tokens: tokens (None once any call reported none); cost_usd: USD (None once any
    call's price was unknown); cost_estimated: some of cost_usd was priced from tokens counted offline (a server
    that sent no usage); calls: requests sent (cache hits count 0); templates: refs used.
    """

    client: Any
    model: str
    api_base: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    template_dir: str | None = None
    prompt_tokens: int | None = 0
    completion_tokens: int | None = 0
    cost_usd: float | None = 0.0
    cost_estimated: bool = False
    calls: int = 0
    templates: list[str] = field(default_factory=list)

    def request(self, template: str, inp: Any, sample_index: int = 0, schema: dict | None = None,
                **fields: Any) -> LLMRequest:
        """The LLMRequest for template ``template`` on ``inp`` (no call made). ``schema``: the reply's schema (by
        default the reply model's, made strict)."""
        t = load_template(template, self.template_dir)
        if schema is None:
            from generator.client import json_schema_for

            schema = json_schema_for(REPLY_MODELS[t.reply])
        return LLMRequest(
            model=self.model, messages=t.render(inp, **fields), template=t.ref,
            schema=schema, schema_name=t.reply, params={**t.params, **self.params},
            sample_index=sample_index, api_base=self.api_base)

    async def ask(self, contract: Contract, inp: Any, sample_index: int = 0, **fields: Any) -> Any:
        """Send (or replay) the contract's request and return the validated reply value (it passed the contract's
        checks). Raises LLMCallFailed, BudgetExhausted, ServerFault (from the client)."""
        req = self.request(contract.template, inp, sample_index, contract.schema, **fields)
        model = REPLY_MODELS[load_template(contract.template, self.template_dir).reply]
        reply = await self.client.complete(req, model, contract.check)
        if req.template not in self.templates:
            self.templates.append(req.template)
        self.calls += reply.attempts
        self.prompt_tokens = None if self.prompt_tokens is None or reply.prompt_tokens is None \
            else self.prompt_tokens + reply.prompt_tokens
        self.completion_tokens = None if self.completion_tokens is None or reply.completion_tokens is None \
            else self.completion_tokens + reply.completion_tokens
        self.cost_usd = None if self.cost_usd is None or reply.cost_usd is None else self.cost_usd + reply.cost_usd
        self.cost_estimated = self.cost_estimated or bool(getattr(reply, "cost_estimated", False))
        return reply.value


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


# ---- 1 personas ------------------------------------------------------------------------------------------------
def sample_personas(lines: list[str], n: int, seed: int) -> list[tuple[int, str]]:
    """n persona sentences sampled without replacement with ``random.Random(f"{seed}:personas")``, as (index in
    ``lines``, sentence), in sampled order. Blank and repeated sentences are left out first. n larger than the
    number of sentences takes them all (shuffled)."""
    seen: dict[str, int] = {}
    for i, s in enumerate(lines):
        s = s.strip()
        if s and s not in seen:
            seen[s] = i
    pool = list(seen.items())
    picked = random.Random(f"{seed}:personas").sample(pool, min(n, len(pool)))
    return [(i, s) for s, i in picked]


# ---- 2 profile -------------------------------------------------------------------------------------------------
def profile_contract(inp: ProfileIn) -> Contract:
    """The person is at least 18 in the reference year (stated: the schema's maximum birth year)."""
    ref = inp.reference_year

    def stated(out: ProfileReply) -> None:
        if out.birth_year > ref - 18:
            raise StageCheckFailed(f"birth year {out.birth_year} makes the person under 18 in {ref}")
        if out.birth_year < ref - 100:
            raise StageCheckFailed(f"birth year {out.birth_year} makes the person over 100 in {ref}")
    return Contract("profile", profile_schema(ref), stated)


async def profile(inp: ProfileIn, llm: RowLLM) -> ProfileReply:
    """Demographics and an extended persona (RealPref 3.1)."""
    return await llm.ask(profile_contract(inp), inp, reference_year=inp.reference_year)


# ---- 3 life events ---------------------------------------------------------------------------------------------
def events_contract(inp: EventsIn, birth_year: int) -> Contract:
    """No event before the birth year or after the reference date, at most n_events (stated)."""
    ref = parse_date(inp.reference_date)

    def stated(out: EventsReply) -> None:
        if not 1 <= len(out.events) <= inp.n_events:
            raise StageCheckFailed(f"{len(out.events)} events, not 1 to {inp.n_events}")
        for e in out.events:
            d = parse_date(e.date)
            if d.year < birth_year or d > ref:
                raise StageCheckFailed(f"event dated {e.date} lies outside {birth_year}..{inp.reference_date}")
    return Contract("events", events_schema(birth_year, inp.reference_date, inp.n_events), stated)


async def life_events(inp: EventsIn, llm: RowLLM, birth_year: int) -> EventsReply:
    """Dated life events consistent with the profile (RealPref 3.1), sorted by date, at most ``n_events``."""
    out: EventsReply = await llm.ask(events_contract(inp, birth_year), inp, n_events=inp.n_events,
                                     reference_date=inp.reference_date)
    out.events = sorted(out.events, key=lambda e: parse_date(e.date))[: inp.n_events]
    return out


# ---- 4 preferences ---------------------------------------------------------------------------------------------
def sample_topics(pool: tuple[str, ...] | list[str], n: int, seed: int, user_id: str) -> list[str]:
    """n distinct topics for one user, ``random.Random(f"{seed}:topics:{user_id}")`` (RealPref 3.2 samples topics
    per user to spread them)."""
    return random.Random(f"{seed}:topics:{user_id}").sample(list(pool), min(n, len(pool)))


def preferences_contract(inp: PreferencesIn, birth_year: int, reference_date: str) -> Contract:
    """One preference per offered topic, each under its key with that topic, none other; event dates from the birth
    year to the reference date (all stated)."""
    ref = parse_date(reference_date)
    keys = {topic_key(i): t for i, t in enumerate(inp.topics)}

    def stated(out: PreferencesReply) -> None:
        if set(out.preferences) != set(keys):
            raise StageCheckFailed(f"the preferences must be keyed {', '.join(keys)}, one per topic offered")
        for k, p in out.preferences.items():
            if p.topic != keys[k]:
                raise StageCheckFailed(f"topic {p.topic!r} under {k} is not the topic offered there ({keys[k]!r})")
            d = parse_date(p.event_date)
            if d.year < birth_year or d > ref:
                raise StageCheckFailed(f"initializing event dated {p.event_date} lies outside {birth_year}.."
                                       f"{reference_date}")
    return Contract("preferences", preferences_schema(tuple(inp.topics), birth_year, reference_date), stated)


async def preferences(inp: PreferencesIn, llm: RowLLM, birth_year: int, reference_date: str) -> list[PreferenceOut]:
    """One preference per offered topic with its type, reason and initializing event (RealPref 3.2, Table 1), in
    the order the topics were offered."""
    out: PreferencesReply = await llm.ask(preferences_contract(inp, birth_year, reference_date), inp)
    return [out.preferences[topic_key(i)] for i in range(len(inp.topics))]


# ---- 5 generalized preferences ---------------------------------------------------------------------------------
def generalized_contract(inp: GeneralizeIn, topics: tuple[str, ...] | None = None) -> Contract:
    """Each comes from two or more different preferences of the user; at most n (stated: a pair of ids first, then
    ids of the user's only)."""
    ids = tuple(p["pref_id"] for p in inp.preferences)
    known = set(ids)

    def stated(out: GeneralizeReply) -> None:
        if not 1 <= len(out.generalized) <= inp.n:
            raise StageCheckFailed(f"{len(out.generalized)} generalized preferences, not 1 to {inp.n}")
        for g in out.generalized:
            unknown = [s for s in g.source_pref_ids if s not in known]
            if unknown:
                raise StageCheckFailed(f"source_pref_ids {unknown} are not preferences of {inp.user_id}")
            if len(g.source_pref_ids) < 2:
                raise StageCheckFailed("a generalized preference needs two different source preferences")
            if topics and g.topic not in topics:
                raise StageCheckFailed(f"topic {g.topic!r} is not one of the topic pool's")
    return Contract("generalized", generalized_schema(ids, inp.n, tuple(topics) if topics else None), stated)


async def generalized(inp: GeneralizeIn, llm: RowLLM, topics: tuple[str, ...] | None = None) -> list[GeneralizedOut]:
    """Preferences inferred from two or more original ones, with the reason (RealPref 3.2); the topic one of the
    pool's when ``topics`` is given."""
    out: GeneralizeReply = await llm.ask(generalized_contract(inp, topics), inp, n=inp.n)
    return out.generalized[: inp.n]


# ---- 6 conversations -------------------------------------------------------------------------------------------
def session_contract(template: str) -> Contract:
    """A session of exchanges (the schema makes the user speak first, and the two alternate)."""
    return Contract(template, session_schema())


async def event_session(inp: EventSessionIn, llm: RowLLM) -> SessionReply:
    """A life-event session (RealPref 3.3)."""
    return await llm.ask(session_contract("event_session"), inp)


async def random_session(inp: RandomSessionIn, llm: RowLLM) -> SessionReply:
    """A random session that reveals nothing about the user (RealPref 3.3), shared by all users."""
    return await llm.ask(session_contract("random_session"), inp)


def preference_sessions_contract(inp: PreferenceSessionIn) -> Contract:
    """One session for expression types 1-3, ``n_sessions`` (>= 2) for type 4 (stated: the schema's item count)."""
    if inp.expression_type not in EXPRESSION_TYPES:
        raise StageCheckFailed(f"expression type {inp.expression_type} is not 1-4")
    n = inp.n_sessions if inp.expression_type == 4 else 1
    if inp.expression_type == 4 and n < 2:
        raise StageCheckFailed("experience feedback needs at least two sessions")

    def stated(out: PreferenceSessionsReply) -> None:
        if len(out.sessions) != n:
            raise StageCheckFailed(f"{len(out.sessions)} sessions, not {n}"
                                   + (" (experience feedback needs at least two sessions)" if n >= 2 else ""))
    return Contract("preference_sessions", preference_sessions_schema(n), stated)


async def preference_sessions(inp: PreferenceSessionIn, llm: RowLLM) -> PreferenceSessionsReply:
    """The sessions expressing one preference at one expression type (RealPref 3.3): one session for types 1-3,
    ``n_sessions`` (>= 2) for type 4, experience feedback."""
    contract = preference_sessions_contract(inp)
    n = inp.n_sessions if inp.expression_type == 4 else 1
    return await llm.ask(contract, inp, n_sessions=n)


# ---- 8 queries -------------------------------------------------------------------------------------------------
LETTERS = ("A", "B", "C", "D")


def query_contract(inp: QueryIn) -> Contract:
    """Cross checks: the four options differ (spaces and case aside) and the query does not quote the
    preference."""
    pref = _norm(inp.preference)

    def cross(out: QueryReply) -> None:
        texts = [_norm(getattr(out.options, x)) for x in LETTERS]
        if len(set(texts)) != 4:
            raise StageCheckFailed("the four options must differ")
        if pref and pref in _norm(out.query):
            raise StageCheckFailed("the query states the preference")
    return Contract("query", query_schema(), None, cross)


async def query(inp: QueryIn, llm: RowLLM) -> QueryReply:
    """An open-ended query, four MCQ options with exactly one aligned, and its letter (RealPref 4.1)."""
    return await llm.ask(query_contract(inp), inp)


def tf_queries(q: QueryReply, seed: int, key: str) -> tuple[str, str, str]:
    """(T_Query, F_Query, letter of the option used in F_Query): the query joined with the aligned option (true)
    and with one other option drawn by ``random.Random(f"{seed}:tf:{key}")`` (false) (RealPref 4.1: a correct and
    an incorrect version of each query, built from the MCQ options)."""
    opts = q.options.model_dump()
    wrong = random.Random(f"{seed}:tf:{key}").choice([x for x in LETTERS if x != q.correct])

    def ask(option: str) -> str:
        return f"{q.query} Would this suit me: {option.strip()}"

    return ask(opts[q.correct]), ask(opts[wrong]), wrong


# ---- 9 evolution -----------------------------------------------------------------------------------------------
def chosen_for_evolution(seed: int, key: str, share: float) -> bool:
    """Whether preference ``key`` evolves: ``random.Random(f"{seed}:evolve:{key}").random() < share`` (decided per
    preference, so it does not depend on which other rows exist)."""
    return random.Random(f"{seed}:evolve:{key}").random() < share


def evolution_contract(inp: EvolveIn, reference_date: str | None = None) -> Contract:
    """The event comes after ``since`` (stated: the schema's dates); the new option is none of the old ones (cross,
    spaces and case aside)."""
    lo, hi = evolution_window(inp.since, reference_date)
    old = {_norm(o) for o in inp.options.values()}

    def stated(out: EvolveReply) -> None:
        d = parse_date(out.event_date)
        if d < lo:
            raise StageCheckFailed(f"the evolution event {out.event_date} is not after {inp.since}")
        if d > hi:
            raise StageCheckFailed(f"the evolution event {out.event_date} is after {hi:%Y/%m/%d}")

    def cross(out: EvolveReply) -> None:
        if _norm(out.new_option) in old:
            raise StageCheckFailed("the new option repeats an old one")
    return Contract("evolution", evolution_schema(inp.since, reference_date), stated, cross)


async def evolution(inp: EvolveIn, llm: RowLLM, reference_date: str | None = None) -> EvolveReply:
    """A later event that changes the preference, the evolved preference and the option aligned with it
    (HorizonBench section 5.1)."""
    return await llm.ask(evolution_contract(inp, reference_date), inp)


def evolved_options(old: dict[str, str], old_correct: str, new_option: str, seed: int,
                    key: str) -> tuple[list[str], int, int]:
    """Five options in an order drawn by ``random.Random(f"{seed}:evolve-order:{key}")``: the four old ones and the
    new aligned one. Returns (options, correct_index of the new option, distractor_index of the option aligned
    with the pre-evolution preference, HorizonBench's hard negative)."""
    texts = [old[x] for x in LETTERS] + [new_option]
    order = list(range(5))
    random.Random(f"{seed}:evolve-order:{key}").shuffle(order)
    options = [texts[i] for i in order]
    return options, order.index(4), order.index(LETTERS.index(old_correct))


def session_dates(start: str, n: int, gap_days: int = 7) -> list[str]:
    """n dates "YYYY/MM/DD": the day after ``start``, then every ``gap_days`` days (sessions of experience
    feedback spread over time)."""
    d0 = parse_date(start) + _dt.timedelta(days=1)
    return [(d0 + _dt.timedelta(days=gap_days * i)).strftime("%Y/%m/%d") for i in range(n)]
