"""The schema sent is the schema checked (issue 26, part 1).

Every stage's reply schema is built from its input, is valid for OpenAI strict mode and for guided decoding, and
every instance a schema-driven generator draws from it (tests/schema_strategy.py, on hypothesis) passes the client's validation and
the stage's checks that the schema states; only the checks no schema can state (cross) may fail such a reply. And
the sample pipeline, run against a server that decodes exactly to the sent schema (the fake server without reply
makers), makes every row with no repair attempt."""
from __future__ import annotations

import datetime as dt
import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as hst
from tests.schema_strategy import from_schema

from generator import stages as st
from generator.client import _InvalidReply, json_schema_for, validate_reply
from generator.evaluate.templates import (PairwiseVerdict, ReflectionVerdict, letter_answer_model,
                                          rubric_scores_model)
from generator.json_schema import (date_range_pattern, guided_decoding_problems, openai_strict_problems,
                                   schema_error)
from generator.llm_types import LLMRequest
from generator.schemas import (
    REPLY_MODELS, EventsIn, EvolveIn, GeneralizeIn, PreferenceSessionIn, PreferencesIn, ProfileIn, QueryIn,
)
from generator.templates import load_template, topic_pool

PROFILE = {"demographics": {"Name": "Ada", "Birth": "1990"}, "extended_persona": "x"}
OPTIONS = {"A": "a quiet bistro", "B": "a loud bar", "C": "a food court", "D": "a steak house"}


def contracts() -> dict[str, st.Contract]:
    """One contract per stage call, on typical inputs (the sample pipeline's shapes)."""
    return {
        "profile": st.profile_contract(ProfileIn(user_id="u1", persona="a nurse", reference_year=2025)),
        "events": st.events_contract(EventsIn(user_id="u1", profile=PROFILE, n_events=4,
                                              reference_date="2025/06/30"), 1990),
        "preferences": st.preferences_contract(PreferencesIn(
            user_id="u1", profile=PROFILE, events=[], topics=["Food: Diet", "Travel: Destinations", "Social: Family"],
            preference_types={}), 1990, "2025/06/30"),
        "generalized": st.generalized_contract(GeneralizeIn(user_id="u1", n=2, preferences=[
            {"pref_id": f"p0{i}"} for i in (1, 2, 3, 4)]), topic_pool()),
        "event_session": st.session_contract("event_session"),
        "random_session": st.session_contract("random_session"),
        "preference_sessions": st.preference_sessions_contract(PreferenceSessionIn(
            user_id="u1", profile=PROFILE, preference={"Preference": "x"}, expression_type=4,
            expression_name="experience feedback", n_sessions=3)),
        "preference_sessions_1": st.preference_sessions_contract(PreferenceSessionIn(
            user_id="u1", profile=PROFILE, preference={"Preference": "x"}, expression_type=2,
            expression_name="contextualized mention", n_sessions=1)),
        "query": st.query_contract(QueryIn(user_id="u1", pref_id="p01", preference="Avoids loud places",
                                           type="negative", topic="Social: Friendship")),
        "evolution": st.evolution_contract(EvolveIn(
            user_id="u1", pref_id="p01", preference="p", type="negative", topic="Food: Diet", since="2024/12/30",
            query="q", options=OPTIONS, correct="A"), "2025/06/30"),
    }


def evaluate_schemas() -> dict[str, dict]:
    return {"mcq_answer": json_schema_for(letter_answer_model(4)),
            "mcq_answer5": json_schema_for(letter_answer_model(5)),
            "rubric_scores": json_schema_for(rubric_scores_model(("preference_alignment", "helpfulness"))),
            "pairwise_verdict": json_schema_for(PairwiseVerdict),
            "reflection_verdict": json_schema_for(ReflectionVerdict)}


def _request(contract: st.Contract) -> LLMRequest:
    t = load_template(contract.template)
    return LLMRequest(model="openai/fake", messages=({"role": "user", "content": "x"},), template=t.ref,
                      schema=contract.schema, schema_name=t.reply)


ALL = sorted(contracts())


@pytest.mark.parametrize("name", ALL)
def test_every_stage_schema_is_valid_for_openai_strict_mode_and_guided_decoding(name):
    schema = contracts()[name].schema
    assert openai_strict_problems(schema) == []
    assert guided_decoding_problems(schema) == []


@pytest.mark.parametrize("name", sorted(evaluate_schemas()))
def test_every_evaluate_schema_is_valid_for_openai_strict_mode_and_guided_decoding(name):
    schema = evaluate_schemas()[name]
    assert openai_strict_problems(schema) == []
    assert guided_decoding_problems(schema) == []


def test_the_checker_finds_what_strict_mode_refuses():
    bad = {"type": "object", "properties": {"a": {"type": "string", "minLength": 2}, "b": {"type": "array",
           "items": {"type": "string"}, "uniqueItems": True}}, "required": ["a"]}
    problems = openai_strict_problems(bad)
    assert "(root): additionalProperties must be false" in problems
    assert "(root): every property must be required" in problems
    assert "(root).a: 'minLength' is not permitted" in problems and "(root).b: 'uniqueItems' is not permitted" in problems
    assert guided_decoding_problems({"type": "string", "pattern": r"\d+"}) == [
        "(root): pattern not anchored ^...$", "(root): pattern uses \\d (write [0-9])"]


@pytest.mark.parametrize("name", ALL)
@pytest.mark.slow
def test_schema_driven_instances_pass_the_client_and_the_stated_checks(name):
    contract = contracts()[name]
    request = _request(contract)
    model = REPLY_MODELS[request.schema_name]

    @settings(max_examples=40, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(from_schema(contract.schema))
    def prop(instance):
        assert schema_error(instance, contract.schema) is None
        text = json.dumps(instance)
        value, _ = validate_reply(text, "stop", request, model, contract.stated)  # raises if any stated check fails
        assert isinstance(value, model)

    prop()


@pytest.mark.parametrize("name", sorted(evaluate_schemas()))
@pytest.mark.slow
def test_schema_driven_instances_of_evaluate_schemas_validate_into_their_models(name):
    schema = evaluate_schemas()[name]
    model = {"mcq_answer": letter_answer_model(4), "mcq_answer5": letter_answer_model(5),
             "rubric_scores": rubric_scores_model(("preference_alignment", "helpfulness")),
             "pairwise_verdict": PairwiseVerdict, "reflection_verdict": ReflectionVerdict}[name]
    request = LLMRequest(model="m", messages=({"role": "user", "content": "x"},), template="t@1", schema=schema)

    @settings(max_examples=30, deadline=None, database=None)
    @given(from_schema(schema))
    def prop(instance):
        value, _ = validate_reply(json.dumps(instance), "stop", request, model)
        assert isinstance(value, model)

    prop()


def test_only_cross_checks_can_fail_a_reply_of_the_schema():
    """The stages whose contracts have cross checks are exactly those whose rules compare fields: the query's
    options and text, the evolution's new option against the old ones."""
    have_cross = {name for name, c in contracts().items() if c.cross is not None}
    assert have_cross == {"query", "evolution"}
    c = contracts()["query"]
    same = {"query": "Where should we go tonight?", "explanation": "generic answers miss it",
            "options": {"A": "Same", "B": "same ", "C": "c", "D": "d"}, "correct": "A"}
    assert schema_error(same, c.schema) is None
    with pytest.raises(_InvalidReply, match="the four options must differ"):
        validate_reply(json.dumps(same), "stop", _request(c), REPLY_MODELS["query"], c.check)


@settings(max_examples=60, deadline=None, database=None)
@given(hst.dates(dt.date(1900, 1, 1), dt.date(2090, 1, 1)), hst.integers(0, 30000), hst.dates())
@pytest.mark.slow
def test_a_date_range_pattern_admits_exactly_the_days_of_the_range(lo, span, probe):
    hi = min(lo + dt.timedelta(days=span), dt.date(9999, 12, 31))
    pattern = re.compile(date_range_pattern(lo, hi))
    for d in (lo, hi, lo - dt.timedelta(days=1), hi + dt.timedelta(days=1), probe,
              lo + (hi - lo) / 2):
        if d.year < 1000:
            continue
        inside = lo <= d <= hi
        feb29_between = d.month == 2 and d.day == 29 and lo.year < d.year < hi.year
        assert bool(pattern.match(d.strftime("%Y/%m/%d"))) == (inside and not feb29_between), (lo, hi, d)
    for bad in ("2021/02/29", "2020/02/30", "2021/04/31", "2020/13/01", "2020/00/10", "2020/01/00", "2020-01-01"):
        assert not pattern.match(bad), bad


@pytest.fixture(scope="module")
def exact_server():
    """The fake server without reply makers: every reply is an instance of the schema sent, nothing more."""
    from bench.fake_llm_server import FakeLLMServer
    from tests.llm_fixtures import FAKE_KEY

    srv = FakeLLMServer(host="127.0.0.1", port=0).start()
    old = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = FAKE_KEY
    yield srv
    srv.stop()
    if old is None:
        os.environ.pop("OPENAI_API_KEY", None)
    else:
        os.environ["OPENAI_API_KEY"] = old


@pytest.mark.slow
def test_the_sample_pipeline_against_a_server_that_decodes_to_the_schema_fails_no_row(exact_server, tmp_path):
    from annotator.cli import main
    from storage.store import Store
    from tests.conftest import SAMPLE_DATA

    db = str(tmp_path / "exact.db")
    assert main(["generate", str(SAMPLE_DATA / "generator" / "pipeline.yaml"), "--api-base", exact_server.url,
                 "--db", db]) == 0
    with Store.open(db, mode="ro") as s:
        rows = s.gen_rows("sample")
        calls = s.llm_calls()
        stages = {r.stage for r in rows}
    assert [r for r in rows if r.status == "failed"] == []
    assert stages == {"personas", "profiles", "events", "preferences", "generalized", "conversations", "queries",
                      "evolution", "contexts"}
    llm_rows = [r for r in rows if r.stage not in ("personas", "contexts")]
    # 0 repair attempts: one request per row, each sent once
    assert exact_server.log.count() == len(calls) == len(llm_rows) == sum(r.calls for r in llm_rows)
    assert all(c.attempts == 1 for c in calls)


@pytest.mark.parametrize("name", ALL)
def test_the_fast_check_and_jsonschema_agree_on_valid_and_broken_replies(name):
    """fastjsonschema recognises valid replies; on every broken one jsonschema (the reference) has the last word:
    so they must agree that a schema instance is valid and that each broken copy of it is not."""
    import copy

    from jsonschema import Draft202012Validator

    from bench.fake_llm_server import instance_for_schema
    from generator.json_schema import _validators

    schema = contracts()[name].schema
    fast, ref = _validators(schema)
    assert fast is not None
    good = instance_for_schema(schema, name)
    fast(good)
    assert Draft202012Validator(schema).is_valid(good)

    def broken(value):  # one change at a time: a key dropped or added, a value of another type, a bool for an int
        if isinstance(value, dict):
            for k in value:
                yield {kk: vv for kk, vv in value.items() if kk != k}
                yield {**value, k: True}
                for b in broken(value[k]):
                    yield {**value, k: b}
            yield {**value, "extra": 1}
        elif isinstance(value, list):
            yield value + value[:1] * 20
            for i, v in enumerate(value):
                for b in broken(v):
                    yield value[:i] + [b] + value[i + 1:]
        elif isinstance(value, str):
            yield 7
            yield ""
        elif isinstance(value, bool) or isinstance(value, int):
            yield "7"
            yield 10 ** 6

    n = 0
    for bad in broken(copy.deepcopy(good)):
        n += 1
        fast_ok = True
        try:
            fast(bad)
        except Exception:
            fast_ok = False
        assert fast_ok == ref.is_valid(bad), bad
    assert n > 5
