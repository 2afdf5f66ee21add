"""The generator's stage functions (RealPref, arXiv 2603.04191, sections 3-4 and appendix E; HorizonBench section
5.1). Each takes its pydantic input (``generator.schemas``) and a :class:`RowLLM`, makes its LLM call(s) through the
one client (``LLMClientProtocol.complete``), checks what the schema alone cannot (dates against the profile, topics
against the ones offered, source ids) and returns the validated reply. A check that fails raises
:class:`StageCheckFailed`; the pipeline then records the row as failed with the reason and goes on.

Pure helpers that need no LLM (sampling personas, building T/F queries from MCQ options, ordering options with a
pre-evolution distractor) are here too, each deterministic given its seed.
"""
from __future__ import annotations

import datetime as _dt
import random
from dataclasses import dataclass, field
from typing import Any

from generator.llm_types import LLMRequest
from generator.schemas import (
    EXPRESSION_TYPES, EventSessionIn, EventsIn, EventsReply, EvolveIn, EvolveReply, GeneralizeIn, GeneralizeReply,
    PreferenceSessionIn, PreferenceSessionsReply, PreferencesIn, PreferencesReply, ProfileIn, ProfileReply,
    QueryIn, QueryReply, RandomSessionIn, REPLY_MODELS, SessionReply, parse_date,
)
from generator.templates import load_template


class StageCheckFailed(Exception):
    """A reply passed its schema but contradicts the stage's input (one-line reason)."""


@dataclass
class RowLLM:
    """What one output row's stage function uses to call the LLM: the client, the stage's model and settings, and
    the row's usage so far (summed over its calls).

    prompt_tokens / completion_tokens: tokens (None once any call reported none); cost_usd: USD (None once any
    call's price was unknown); calls: requests sent (cache hits count 0); templates: refs used.
    """

    client: Any
    model: str
    api_base: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    template_dir: str | None = None
    prompt_tokens: int | None = 0
    completion_tokens: int | None = 0
    cost_usd: float | None = 0.0
    calls: int = 0
    templates: list[str] = field(default_factory=list)

    def request(self, template: str, inp: Any, sample_index: int = 0, **fields: Any) -> LLMRequest:
        """The LLMRequest for template ``template`` on ``inp`` (no call made)."""
        from generator.client import json_schema_for

        t = load_template(template, self.template_dir)
        model = REPLY_MODELS[t.reply]
        return LLMRequest(
            model=self.model, messages=t.render(inp, **fields), template=t.ref,
            schema=json_schema_for(model), schema_name=t.reply, params={**t.params, **self.params},
            sample_index=sample_index, api_base=self.api_base)

    async def ask(self, template: str, inp: Any, sample_index: int = 0, **fields: Any) -> Any:
        """Send (or replay) the request and return the validated reply value. Raises LLMCallFailed,
        BudgetExhausted (from the client)."""
        req = self.request(template, inp, sample_index, **fields)
        reply = await self.client.complete(req, REPLY_MODELS[load_template(template, self.template_dir).reply])
        if req.template not in self.templates:
            self.templates.append(req.template)
        self.calls += reply.attempts
        self.prompt_tokens = None if self.prompt_tokens is None or reply.prompt_tokens is None \
            else self.prompt_tokens + reply.prompt_tokens
        self.completion_tokens = None if self.completion_tokens is None or reply.completion_tokens is None \
            else self.completion_tokens + reply.completion_tokens
        self.cost_usd = None if self.cost_usd is None or reply.cost_usd is None else self.cost_usd + reply.cost_usd
        return reply.value


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
async def profile(inp: ProfileIn, llm: RowLLM) -> ProfileReply:
    """Demographics and an extended persona (RealPref 3.1). Checks: the person is at least 18 in the reference
    year."""
    out: ProfileReply = await llm.ask("profile", inp, reference_year=inp.reference_year)
    if out.birth_year > inp.reference_year - 18:
        raise StageCheckFailed(f"birth year {out.birth_year} makes the person under 18 in {inp.reference_year}")
    return out


# ---- 3 life events ---------------------------------------------------------------------------------------------
async def life_events(inp: EventsIn, llm: RowLLM, birth_year: int) -> EventsReply:
    """Dated life events consistent with the profile (RealPref 3.1), sorted by date, at most ``n_events``.
    Checks: no event before the birth year or after the reference date."""
    out: EventsReply = await llm.ask("events", inp, n_events=inp.n_events, reference_date=inp.reference_date)
    ref = parse_date(inp.reference_date)
    for e in out.events:
        d = parse_date(e.date)
        if d.year < birth_year or d > ref:
            raise StageCheckFailed(f"event dated {e.date} lies outside {birth_year}..{inp.reference_date}")
    out.events = sorted(out.events, key=lambda e: parse_date(e.date))[: inp.n_events]
    return out


# ---- 4 preferences ---------------------------------------------------------------------------------------------
def sample_topics(pool: tuple[str, ...] | list[str], n: int, seed: int, user_id: str) -> list[str]:
    """n distinct topics for one user, ``random.Random(f"{seed}:topics:{user_id}")`` (RealPref 3.2 samples topics
    per user to spread them)."""
    return random.Random(f"{seed}:topics:{user_id}").sample(list(pool), min(n, len(pool)))


async def preferences(inp: PreferencesIn, llm: RowLLM, birth_year: int, reference_date: str) -> PreferencesReply:
    """One preference per offered topic with its type, reason and initializing event (RealPref 3.2, Table 1).
    Checks: every topic is one offered and none repeats; event dates after the birth year, not after the reference
    date. Replies keep the offered spelling of the topic."""
    out: PreferencesReply = await llm.ask("preferences", inp)
    offered = {t.lower(): t for t in inp.topics}
    used: set[str] = set()
    ref = parse_date(reference_date)
    for p in out.preferences:
        key = p.topic.strip().lower()
        if key not in offered:
            raise StageCheckFailed(f"topic {p.topic!r} is not one of the topics offered")
        if key in used:
            raise StageCheckFailed(f"topic {p.topic!r} is used twice")
        used.add(key)
        p.topic = offered[key]
        d = parse_date(p.event_date)
        if d.year < birth_year or d > ref:
            raise StageCheckFailed(f"initializing event dated {p.event_date} lies outside {birth_year}.."
                                   f"{reference_date}")
    return out


# ---- 5 generalized preferences ---------------------------------------------------------------------------------
async def generalized(inp: GeneralizeIn, llm: RowLLM) -> GeneralizeReply:
    """Preferences inferred from two or more original ones, with the reason (RealPref 3.2). Checks: the source
    ids are the user's preference ids. At most ``n`` are kept."""
    out: GeneralizeReply = await llm.ask("generalized", inp, n=inp.n)
    known = {p["pref_id"] for p in inp.preferences}
    for g in out.generalized:
        unknown = [s for s in g.source_pref_ids if s not in known]
        if unknown:
            raise StageCheckFailed(f"source_pref_ids {unknown} are not preferences of {inp.user_id}")
        if len(set(g.source_pref_ids)) < 2:
            raise StageCheckFailed("a generalized preference needs two different source preferences")
    out.generalized = out.generalized[: inp.n]
    return out


# ---- 6 conversations -------------------------------------------------------------------------------------------
async def event_session(inp: EventSessionIn, llm: RowLLM) -> SessionReply:
    """A life-event session (RealPref 3.3)."""
    return await llm.ask("event_session", inp)


async def random_session(inp: RandomSessionIn, llm: RowLLM) -> SessionReply:
    """A random session that reveals nothing about the user (RealPref 3.3), shared by all users."""
    return await llm.ask("random_session", inp)


async def preference_sessions(inp: PreferenceSessionIn, llm: RowLLM) -> PreferenceSessionsReply:
    """The sessions expressing one preference at one expression type (RealPref 3.3): one session for types 1-3
    (the first is kept if more come back), ``n_sessions`` (>= 2) for type 4, experience feedback."""
    if inp.expression_type not in EXPRESSION_TYPES:
        raise StageCheckFailed(f"expression type {inp.expression_type} is not 1-4")
    out: PreferenceSessionsReply = await llm.ask("preference_sessions", inp, n_sessions=inp.n_sessions)
    if inp.expression_type == 4:
        if len(out.sessions) < 2:
            raise StageCheckFailed("experience feedback needs at least two sessions")
        out.sessions = out.sessions[: inp.n_sessions]
    else:
        out.sessions = out.sessions[:1]
    return out


# ---- 8 queries -------------------------------------------------------------------------------------------------
LETTERS = ("A", "B", "C", "D")


async def query(inp: QueryIn, llm: RowLLM) -> QueryReply:
    """An open-ended query, four MCQ options with exactly one aligned, and its letter (RealPref 4.1). Checks: the
    query does not quote the preference."""
    out: QueryReply = await llm.ask("query", inp)
    if inp.preference.strip().lower() in out.query.lower():
        raise StageCheckFailed("the query states the preference")
    return out


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


async def evolution(inp: EvolveIn, llm: RowLLM) -> EvolveReply:
    """A later event that changes the preference, the evolved preference and the option aligned with it
    (HorizonBench section 5.1). Checks: the event comes after ``since``; the new option is none of the old ones."""
    out: EvolveReply = await llm.ask("evolution", inp)
    if parse_date(out.event_date) <= parse_date(inp.since):
        raise StageCheckFailed(f"the evolution event {out.event_date} is not after {inp.since}")
    if out.new_option.strip().lower() in {o.strip().lower() for o in inp.options.values()}:
        raise StageCheckFailed("the new option repeats an old one")
    return out


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
