"""The fake OpenAI-compatible server: replies valid for any JSON schema, deterministic per body, reply makers per
schema name, faults, and the request log."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from datetime import date
from typing import Literal, Optional

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from bench.fake_llm_server import FakeLLMServer, instance_for_schema
from generator.client import json_schema_for
from tests.conftest import REPO


class Event(BaseModel):
    date: date
    description: str = Field(min_length=5, max_length=60)
    duration: Literal["years", "months", "weeks", "days"]


class Preference(BaseModel):
    content: str
    kind: Literal["relative", "negative", "exclusive", "positive"]
    strength: float = Field(gt=0, lt=1)
    rank: int = Field(ge=-3, le=3)
    event: Optional[Event] = None
    tags: list[str] = Field(min_length=2, max_length=4)
    flags: list[bool] = []


class Persona(BaseModel):
    name: str = Field(min_length=1, max_length=8)
    preferences: list[Preference] = Field(min_length=1, max_length=2)
    events: list[Event]
    children: Optional[int] = Field(default=None, ge=0, le=6)


@pytest.mark.parametrize("model", [Event, Preference, Persona])
@pytest.mark.parametrize("strict", [True, False])
def test_instances_are_valid_for_pydantic_schemas(model, strict):
    schema = json_schema_for(model, strict=strict)
    for seed in range(25):
        value = instance_for_schema(schema, seed)
        jsonschema.validate(value, schema)
        model.model_validate(value)


@settings(max_examples=60, deadline=None)
@given(lo=st.integers(0, 10), extra=st.integers(0, 10), min_len=st.integers(0, 30), span=st.integers(0, 30),
       imin=st.integers(-1000, 1000), ispan=st.integers(0, 50), seed=st.integers(0, 10_000))
@pytest.mark.slow
def test_instances_respect_bounds(lo, extra, min_len, span, imin, ispan, seed):
    schema = {
        "type": "object",
        "properties": {
            "xs": {"type": "array", "minItems": lo, "maxItems": lo + extra,
                   "items": {"type": "string", "minLength": min_len, "maxLength": min_len + span}},
            "n": {"type": "integer", "minimum": imin, "maximum": imin + ispan},
            "x": {"type": "number", "exclusiveMinimum": imin, "exclusiveMaximum": imin + ispan + 1},
            "choice": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/Color"}]},
            "c": {"const": "fixed"},
            "both": {"type": ["string", "null"]},
        },
        "required": ["xs", "n", "x", "choice", "c", "both"],
        "$defs": {"Color": {"enum": ["red", "green"]}},
    }
    value = instance_for_schema(schema, seed)
    jsonschema.validate(value, schema)
    assert value["choice"] in ("red", "green") and value["c"] == "fixed"


def test_the_same_seed_gives_the_same_instance():
    schema = json_schema_for(Persona)
    assert instance_for_schema(schema, 3) == instance_for_schema(schema, 3)
    assert any(instance_for_schema(schema, 3) != instance_for_schema(schema, s) for s in range(4, 8))


def _post(url: str, body: dict, timeout: float = 10) -> tuple[int, dict, dict]:
    req = urllib.request.Request(url + "/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, dict(resp.headers), json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), json.loads(err.read())


def _body(text: str = "hello", schema_name: str | None = "event") -> dict:
    body = {"model": "fake", "messages": [{"role": "user", "content": text}]}
    if schema_name:
        body["response_format"] = {"type": "json_schema", "json_schema": {
            "name": schema_name, "schema": json_schema_for(Event), "strict": True}}
    return body


def test_server_replies_deterministically_and_logs(fake_llm):
    status, _, first = _post(fake_llm.url, _body())
    _, _, again = _post(fake_llm.url, _body())
    _, _, other = _post(fake_llm.url, _body("something else"))
    content = first["choices"][0]["message"]["content"]
    assert status == 200 and Event.model_validate_json(content)
    assert content == again["choices"][0]["message"]["content"]
    assert content != other["choices"][0]["message"]["content"]
    assert first["usage"]["prompt_tokens"] == 1 + 4  # one word + 4 per message
    assert sorted(fake_llm.log.per_hash().values()) == [1, 2]


def test_registered_maker_answers_its_schema_name(fake_llm):
    fake_llm.register("event", lambda body, rng: {"date": "2020-02-02", "description": "moved to Lisbon",
                                                  "duration": "years"})
    _, _, reply = _post(fake_llm.url, _body())
    assert json.loads(reply["choices"][0]["message"]["content"])["description"] == "moved to Lisbon"
    _, _, free = _post(fake_llm.url, _body(schema_name=None))
    assert free["choices"][0]["message"]["content"].startswith("fake reply")


def test_faults_apply_to_matching_requests_only_as_often_as_asked(fake_llm):
    fake_llm.add_fault("status", status=429, retry_after=1, times=2, match=lambda b: "limit" in str(b))
    fake_llm.add_fault("no_usage")
    fake_llm.add_fault("truncated")
    fake_llm.add_fault("ignore_schema")
    s1, h1, _ = _post(fake_llm.url, _body("limit me"))
    s2, _, _ = _post(fake_llm.url, _body("please limit"))
    assert (s1, s2, h1["Retry-After"]) == (429, 429, "1")
    _, _, no_usage = _post(fake_llm.url, _body("limit again"))  # the 429 rule is used up
    assert "usage" not in no_usage
    _, _, cut = _post(fake_llm.url, _body("b"))
    assert cut["choices"][0]["finish_reason"] == "length"
    with pytest.raises(ValueError):
        json.loads(cut["choices"][0]["message"]["content"])
    _, _, prose = _post(fake_llm.url, _body("c"))
    assert prose["choices"][0]["message"]["content"].startswith("Sure!")
    assert [r.fault for r in fake_llm.log.requests] == ["status", "status", "no_usage", "truncated",
                                                        "ignore_schema"]
    with pytest.raises(ValueError):
        fake_llm.add_fault("explode")


def test_the_command_line_server_answers(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(REPO / "bench" / "fake_llm_server.py"), "--port", str(port),
                             "--latency", "0.01"], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert f"127.0.0.1:{port}/v1" in line
        status, _, reply = _post(f"http://127.0.0.1:{port}/v1", _body())
        assert status == 200 and Event.model_validate_json(reply["choices"][0]["message"]["content"])
    finally:
        proc.terminate()
        proc.wait(10)


def test_the_command_line_server_with_generator_replies_starts(tmp_path):
    """`python bench/fake_llm_server.py --generator-replies` as the README runs it: bench/ comes first on sys.path,
    and bench/generator.py must not shadow the generator package."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(REPO / "bench" / "fake_llm_server.py"), "--port", str(port),
                             "--generator-replies"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path)
    try:
        line = proc.stdout.readline()
        assert f"127.0.0.1:{port}/v1" in line, proc.stderr.read() if proc.poll() is not None else line
        status, _, reply = _post(f"http://127.0.0.1:{port}/v1", _body())
        assert status == 200 and Event.model_validate_json(reply["choices"][0]["message"]["content"])
    finally:
        proc.terminate()
        proc.wait(10)
