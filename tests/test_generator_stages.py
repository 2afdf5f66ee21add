"""The generator's stage functions and pure helpers, with an injected fake client (no litellm, no network)."""
from __future__ import annotations

import random

import pytest

from generator import stages as st
from generator.llm_types import LLMCallFailed
from generator.schemas import (
    EventsIn, EventsReply, EvolveIn, EvolveReply, GeneralizeIn, GeneralizeReply, PreferenceSessionIn,
    PreferenceSessionsReply, PreferencesIn, PreferencesReply, ProfileIn, ProfileReply, QueryIn, QueryReply,
    RandomSessionIn, REPLY_MODELS, SessionReply, query_schema,
)
from generator.templates import load_template, topic_pool
from tests.gen_fakes import FakeClient

PROFILE = {"demographics": {"Name": "Ada", "Birth": "1990"}, "extended_persona": "x"}


def llm(client=None) -> st.RowLLM:
    return st.RowLLM(client=client or FakeClient(), model="openai/fake")


def test_topic_pool_is_realprefs_seven_areas_and_37_subtopics():
    pool = topic_pool()
    assert len(pool) == 37
    assert len({t.split(": ")[0] for t in pool}) == 7
    assert "Travel: Accommodation" in pool and "Food: Snacks & Drinks" in pool


def test_every_template_names_a_reply_schema_and_renders_its_input_as_text():
    for name in ("profile", "events", "preferences", "generalized", "event_session", "random_session",
                 "preference_sessions", "query", "evolution"):
        t = load_template(name)
        assert t.reply in REPLY_MODELS and t.ref == f"{name}@{t.version}"
    t = load_template("profile")
    msgs = t.render({"persona": "likes {braces} and [bold]markup[/bold]"}, reference_year=2025)
    assert msgs[0]["role"] == "system" and msgs[1]["role"] == "user"
    assert "likes {braces} and [bold]markup[/bold]" in msgs[1]["content"] and "2025" in msgs[1]["content"]


def test_request_carries_template_version_schema_and_params():
    r = llm()
    inp = QueryIn(user_id="u1", pref_id="p01", preference="p", type="t", topic="Food: Diet")
    req = r.request("query", inp, schema=query_schema())
    assert req.template == "query@2" and req.schema_name == "query" and req.schema is query_schema()
    assert req.schema["properties"].keys() == QueryReply.model_fields.keys()
    assert req.schema["additionalProperties"] is False and req.params["max_tokens"] == 900
    r2 = st.RowLLM(client=FakeClient(), model="openai/fake", params={"temperature": 0.0})
    assert r2.request("query", inp).params["temperature"] == 0.0
    assert r2.request("query", QueryIn(user_id="u1", pref_id="p01", preference="p", type="t", topic="x")
                      ).cache_key() != req.cache_key()


def test_sample_personas_drops_blanks_and_repeats_and_follows_the_seed():
    lines = ["a", "", "b", "a", "c", "d", "  "]
    got = st.sample_personas(lines, 2, seed=5)
    pool = [("a", 0), ("b", 2), ("c", 4), ("d", 5)]
    want = random.Random("5:personas").sample(pool, 2)
    assert got == [(i, s) for s, i in want]
    assert sorted(s for _, s in st.sample_personas(lines, 10, seed=5)) == ["a", "b", "c", "d"]


def test_tf_queries_use_the_aligned_option_and_one_other():
    q = QueryReply(query="Where should I eat tonight?", explanation="because", correct="C",
                   options={"A": "Steak house", "B": "Burger bar", "C": "Vegan bistro", "D": "BBQ pit"})
    t, f, wrong = st.tf_queries(q, 3, "u1:p01")
    assert t == "Where should I eat tonight? Would this suit me: Vegan bistro"
    assert wrong in "ABD" and f.endswith({"A": "Steak house", "B": "Burger bar", "D": "BBQ pit"}[wrong])
    assert wrong == random.Random("3:tf:u1:p01").choice(["A", "B", "D"])


def test_evolved_options_mark_the_pre_evolution_option_as_distractor():
    old = {"A": "a", "B": "b", "C": "c", "D": "d"}
    options, correct, distractor = st.evolved_options(old, "B", "new", 1, "k")
    assert sorted(options) == ["a", "b", "c", "d", "new"]
    assert options[correct] == "new" and options[distractor] == "b"
    again = st.evolved_options(old, "B", "new", 1, "k")
    assert again == (options, correct, distractor)


def test_session_dates_spread_a_week_apart():
    assert st.session_dates("2020/02/27", 3) == ["2020/02/28", "2020/03/06", "2020/03/13"]


def fails_schema(contract, reply: dict) -> str:
    """The reason the client gives for a reply that does not fit the contract's schema."""
    from generator.json_schema import schema_error

    problem = schema_error(reply, contract.schema)
    assert problem is not None, "the schema admits the reply"
    return problem


async def test_profile_under_18_is_refused():
    inp = ProfileIn(user_id="u1", persona="a pupil", reference_year=2025)
    kid = {"name": "Kid Kiddo", "birth_year": 2010, "gender": "F", "education": "none", "occupation": "pupil",
           "economic_status": "n/a", "marital_status": "single", "extended_persona": "y" * 50}
    c = st.profile_contract(inp)
    assert c.schema["properties"]["birth_year"] == {"type": "integer", "minimum": 1925, "maximum": 2007}
    assert "2010 is greater than the maximum of 2007" in fails_schema(c, kid)
    with pytest.raises(LLMCallFailed, match="maximum of 2007"):
        await st.profile(inp, llm(FakeClient({"profile": lambda r: kid})))
    with pytest.raises(st.StageCheckFailed, match="under 18"):  # a server that ignores the schema
        c.check(ProfileReply(**kid))


async def test_events_outside_the_life_are_refused_and_kept_sorted():
    inp = EventsIn(user_id="u1", profile=PROFILE, n_events=2, reference_date="2025/06/30")
    ok = {"events": [{"date": "2015/01/01", "duration_type": "years", "event": "moved to a new city"},
                     {"date": "2012/05/05", "duration_type": "days", "event": "finished a long course"}]}
    out = await st.life_events(inp, llm(FakeClient({"events": lambda r: ok})), 1990)
    assert [e.date for e in out.events] == ["2012/05/05", "2015/01/01"]
    c = st.events_contract(inp, 1990)
    for date in ("1989/12/31", "2025/07/01", "2012-05-05", "2021/02/29", "2015/04/31"):
        assert "does not match" in fails_schema(c, {"events": [{**ok["events"][0], "date": date}]}), date
    assert "is too long" in fails_schema(c, {"events": ok["events"] * 2})
    bad = {"events": [{"date": "1985/01/01", "duration_type": "years", "event": "before being born"}]}
    with pytest.raises(LLMCallFailed, match="does not match"):
        await st.life_events(inp, llm(FakeClient({"events": lambda r: bad})), 1990)
    with pytest.raises(st.StageCheckFailed, match="1985/01/01"):
        c.check(EventsReply(**bad))


async def test_preferences_are_one_per_topic_offered_in_their_order():
    inp = PreferencesIn(user_id="u1", profile=PROFILE, events=[], topics=["Food: Diet", "Travel: Destinations"],
                        preference_types={})
    pref = {"preference": "Avoids sugar entirely", "reason": "health", "type": "negative", "event_date": "2015/02/02",
            "event": "a doctor's visit changed things"}
    reply = {"preferences": {"topic_2": {**pref, "topic": "Travel: Destinations"},
                             "topic_1": {**pref, "topic": "Food: Diet"}}}
    out = await st.preferences(inp, llm(FakeClient({"preferences": lambda r: reply})), 1990, "2025/06/30")
    assert [p.topic for p in out] == ["Food: Diet", "Travel: Destinations"]
    c = st.preferences_contract(inp, 1990, "2025/06/30")
    assert "is not one of ['Food: Diet']" in fails_schema(
        c, {"preferences": {**reply["preferences"], "topic_1": {**pref, "topic": "food: diet"}}})
    assert "'topic_2' is a required property" in fails_schema(
        c, {"preferences": {"topic_1": reply["preferences"]["topic_1"]}})
    assert "Additional properties" in fails_schema(
        c, {"preferences": {**reply["preferences"], "topic_3": reply["preferences"]["topic_1"]}})
    with pytest.raises(st.StageCheckFailed, match="not the topic offered"):
        c.check(PreferencesReply(preferences={"topic_1": {**pref, "topic": "Travel: Destinations"},
                                              "topic_2": {**pref, "topic": "Travel: Destinations"}}))


async def test_generalized_sources_are_two_different_preferences_of_the_user():
    inp = GeneralizeIn(user_id="u1", n=1, preferences=[{"pref_id": "p01"}, {"pref_id": "p02"}, {"pref_id": "p03"}])
    g = {"preference": "Likes calm things overall", "type": "positive", "topic": "Lifestyle: Daily Routine",
         "inference_reason": "both are calm choices", "more_sources": ["p01"]}
    good = {"generalized": [{**g, "sources": {"first": "p01", "second": "p03"}}]}
    out = await st.generalized(inp, llm(FakeClient({"generalized": lambda r: good})), topic_pool())
    assert out[0].source_pref_ids == ["p01", "p03"]  # a repeat in more_sources is dropped
    c = st.generalized_contract(inp, topic_pool())
    for pair in ({"first": "p01", "second": "p01"}, {"first": "p02", "second": "p01"},
                 {"first": "p01", "second": "p09"}):
        fails_schema(c, {"generalized": [{**g, "sources": pair}]})
    assert "is not one of" in fails_schema(c, {"generalized": [{**good["generalized"][0], "topic": "Cars: Speed"}]})
    with pytest.raises(st.StageCheckFailed, match="p09"):
        c.check(GeneralizeReply(generalized=[{**g, "sources": {"first": "p01", "second": "p09"}}]))
    with pytest.raises(st.StageCheckFailed, match="two different"):
        c.check(GeneralizeReply(generalized=[{**g, "sources": {"first": "p01", "second": "p01"}}]))


async def test_experience_feedback_needs_several_sessions():
    inp = PreferenceSessionIn(user_id="u1", profile=PROFILE, preference={"Preference": "x"}, expression_type=4,
                              expression_name="experience feedback", n_sessions=3)
    one = {"sessions": [[{"user": "hi", "assistant": "hello"}]]}
    c = st.preference_sessions_contract(inp)
    assert "is too short" in fails_schema(c, one)
    with pytest.raises(LLMCallFailed, match="too short"):
        await st.preference_sessions(inp, llm(FakeClient({"preference_sessions": lambda r: one})))
    with pytest.raises(st.StageCheckFailed, match="two sessions"):
        c.check(PreferenceSessionsReply(**one))


def test_a_session_cannot_start_with_the_assistant_or_repeat_a_speaker():
    c = st.session_contract("random_session")
    assert "Additional properties" in fails_schema(c, {"exchanges": [
        {"assistant": "How can I help?", "user": "hi", "role": "assistant"}, {"user": "a", "assistant": "b"}]})
    reply = SessionReply(exchanges=[{"user": "hi", "assistant": "hello"}, {"user": "more", "assistant": "sure"}])
    assert [t["role"] for t in reply.turns()] == ["user", "assistant", "user", "assistant"]


async def test_query_must_not_state_the_preference():
    inp = QueryIn(user_id="u1", pref_id="p01", preference="Hates loud bars", type="negative", topic="Social: Friendship")
    bad = {"query": "I hates loud bars; where should we go?", "explanation": "obvious",
           "options": {"A": "a", "B": "b", "C": "c", "D": "d"}, "correct": "A"}
    with pytest.raises(st.StageCheckFailed, match="states the preference"):
        await st.query(inp, llm(FakeClient({"query": lambda r: bad}, raise_check=True)))
    with pytest.raises(LLMCallFailed, match="invalid reply: the query states the preference"):
        await st.query(inp, llm(FakeClient({"query": lambda r: bad})))


async def test_the_four_options_must_differ():
    inp = QueryIn(user_id="u1", pref_id="p01", preference="p", type="negative", topic="t")
    same = {"query": "Where should we go tonight?", "explanation": "generic answers miss it",
            "options": {"A": "same", "B": " Same", "C": "c", "D": "d"}, "correct": "A"}
    with pytest.raises(LLMCallFailed, match="the four options must differ"):
        await st.query(inp, llm(FakeClient({"query": lambda r: same})))


async def test_evolution_event_must_come_later_and_the_new_option_be_new():
    inp = EvolveIn(user_id="u1", pref_id="p01", preference="p", type="t", topic="x", since="2020/01/01",
                   query="q", options={"A": "a", "B": "b", "C": "c", "D": "d"}, correct="A")
    base = {"event": "something changed a lot", "evolved_preference": "now the opposite of before",
            "reason": "because", "session": [{"user": "u", "assistant": "a"}]}
    c = st.evolution_contract(inp, "2025/06/30")
    for date in ("2019/05/05", "2020/01/01", "2025/07/01"):
        fails_schema(c, {**base, "event_date": date, "new_option": "e"})
    with pytest.raises(LLMCallFailed, match="does not match"):
        await st.evolution(inp, llm(FakeClient({"evolution": lambda r: {**base, "event_date": "2019/05/05",
                                                                          "new_option": "e"}})), "2025/06/30")
    with pytest.raises(st.StageCheckFailed, match="not after"):
        c.check(EvolveReply(**base, event_date="2019/05/05", new_option="e"))
    with pytest.raises(st.StageCheckFailed, match="repeats"):
        await st.evolution(inp, llm(FakeClient({"evolution": lambda r: {**base, "event_date": "2021/05/05",
                                                                          "new_option": " B "}}, raise_check=True)),
                           "2025/06/30")


async def test_row_usage_sums_calls():
    r = llm()
    await st.random_session(RandomSessionIn(index=0, subject="tides"), r)
    first = (r.prompt_tokens, r.completion_tokens)
    await st.random_session(RandomSessionIn(index=1, subject="tides"), r)
    assert r.calls == 2 and r.prompt_tokens > first[0] and r.templates == ["random_session@2"]
    assert r.cost_usd == pytest.approx((r.prompt_tokens + r.completion_tokens) * 1e-6)
