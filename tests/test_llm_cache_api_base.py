"""The call cache keys on the server too: the same model name behind two api_bases is two models. Two fake
OpenAI-compatible servers on 127.0.0.1 answer differently; each run gets its own server's replies, and a rerun
against the same server sends nothing. Rows cached before the key held the api_base (key version 1) stay valid
for their own server only."""
from __future__ import annotations

import asyncio

import pytest

from annotator.cli import main
from bench.fake_llm_server import FakeLLMServer
from generator.client import LLMClient, RetryPolicy, cached_keys, dry_run_estimate
from generator.llm_types import LLMRequest, normalize_api_base
from storage.llm_calls import LLMCall
from storage.store import Store
from tests.test_evaluate import answers_of

FAST = RetryPolicy(max_attempts=2, max_repairs=0, timeout=5, deadline=20, backoff_base=0.01)


@pytest.fixture
def two_servers():
    """Two fake servers; A answers every MCQ with option A, B with option B."""
    a = FakeLLMServer(host="127.0.0.1", port=0, seed=1).start()
    b = FakeLLMServer(host="127.0.0.1", port=0, seed=2).start()
    a.register("mcq_answer", lambda body, rng: {"answer": "A"})
    b.register("mcq_answer", lambda body, rng: {"answer": "B"})
    yield a, b
    a.stop()
    b.stop()


@pytest.mark.parametrize("given, expected", [
    (None, None), ("", None), ("   ", None),
    ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
    ("HTTP://LocalHost:8000/v1/", "http://localhost:8000/v1"),
    ("http://127.0.0.1:80/v1//", "http://127.0.0.1/v1"),
    ("https://example.org:443/openai/v1", "https://example.org/openai/v1"),
    ("https://example.org:8443/openai/v1", "https://example.org:8443/openai/v1"),
    ("http://127.0.0.1:8000/V1", "http://127.0.0.1:8000/V1"),  # paths are case-sensitive
])
def test_api_base_normalisation(given, expected):
    assert normalize_api_base(given) == expected


def test_the_key_holds_the_api_base_and_is_unchanged_without_one():
    msgs = ({"role": "user", "content": "hi"},)
    plain = LLMRequest(model="openai/m", messages=msgs, template="t@1")
    on_a = LLMRequest(model="openai/m", messages=msgs, template="t@1", api_base="http://127.0.0.1:1/v1")
    on_a2 = LLMRequest(model="openai/m", messages=msgs, template="t@1", api_base="HTTP://127.0.0.1:1/v1/")
    on_b = LLMRequest(model="openai/m", messages=msgs, template="t@1", api_base="http://127.0.0.1:2/v1")
    assert len({plain.cache_key(), on_a.cache_key(), on_b.cache_key()}) == 3
    assert on_a.cache_key() == on_a2.cache_key()
    assert on_a.legacy_cache_key() == on_b.legacy_cache_key() == plain.cache_key()
    assert LLMRequest(model="openai/m", messages=msgs, template="t@1", api_base="").cache_key() == plain.cache_key()
    # key version 1 of a request without api_base, worked out by hand: sha256 of the canonical JSON of its fields
    import hashlib
    material = ('{"messages":[{"content":"hi","role":"user"}],"model":"openai/m","params":{},"sample_index":0,'
                '"schema":null,"template":"t@1"}')
    assert plain.cache_key() == hashlib.sha256(material.encode()).hexdigest()


def test_same_model_on_two_servers_gets_each_servers_replies(mcq_study, two_servers, fake_key):
    a, b = two_servers
    args = ["evaluate", "answer", "--study", "st", "--model", "openai/same", "--blind", "--db", mcq_study]
    assert main([*args, "--api-base", a.url, "--name", "on-a"]) == 0
    assert main([*args, "--api-base", b.url, "--name", "on-b"]) == 0
    assert a.log.count() == 6 and b.log.count() == 6
    assert {x.answer["choice"] for x in answers_of(mcq_study, "st", "on-a")} == {0}
    assert {x.answer["choice"] for x in answers_of(mcq_study, "st", "on-b")} == {1}
    with Store.open(mcq_study, mode="ro") as s:
        calls = s.llm_calls()
    assert len(calls) == 12 and {c.api_base for c in calls} == {a.url, b.url}
    assert {c.key_version for c in calls} == {2}
    # a rerun against either server, however its URL is spelled, sends nothing
    assert main([*args, "--api-base", a.url + "/", "--name", "on-a"]) == 0
    assert main([*args, "--api-base", b.url.replace("http", "HTTP"), "--name", "on-b"]) == 0
    assert a.log.count() == 6 and b.log.count() == 6
    assert {x.answer["choice"] for x in answers_of(mcq_study, "st", "on-b")} == {1}


def _legacy_row(request: LLMRequest, text: str, api_base: str) -> LLMCall:
    return LLMCall(key=request.legacy_cache_key(), model=request.model, api_base=api_base,
                   template=request.template, request={"messages": list(request.messages)}, reply_text=text,
                   key_version=1)


def test_rows_cached_before_are_kept_for_their_own_server_only(db_file, two_servers, fake_key):
    a, b = two_servers

    def req(i, base):
        return LLMRequest(model="openai/same", messages=({"role": "user", "content": f"say {i}"},),
                          template="free@1", api_base=base)

    with Store.open(db_file, mode="create") as store:
        store.put_llm_calls([_legacy_row(req(i, a.url), f"old reply {i} from A", a.url) for i in range(3)])

        async def ask(base):
            async with LLMClient(store, retry=FAST) as client:
                return await asyncio.gather(*[client.complete(req(i, base)) for i in range(3)])

        again_a = asyncio.run(ask(a.url.replace("http://", "HTTP://") + "/"))  # same server, other spelling
        assert [r.text for r in again_a] == [f"old reply {i} from A" for i in range(3)]
        assert all(r.cached and r.cache_key == req(i, a.url).legacy_cache_key() for i, r in enumerate(again_a))
        assert a.log.count() == 0
        on_b = asyncio.run(ask(b.url))
        assert b.log.count() == 3 and not any(r.cached for r in on_b)
        assert not any(r.text.startswith("old reply") for r in on_b)
        keys = cached_keys(store)
    # the dry run counts the old rows as cached for A, not for B
    est_a = dry_run_estimate([req(i, a.url) for i in range(3)], cached_keys=keys, token_counter=lambda r: 1,
                             use_litellm_prices=False)
    est_b = dry_run_estimate([req(i, b.url) for i in range(3)] + [req(9, b.url)], cached_keys=keys,
                             token_counter=lambda r: 1, use_litellm_prices=False)
    assert (est_a.cached, est_a.calls) == (3, 0) and (est_b.cached, est_b.calls) == (3, 1)


def test_migration_marks_rows_cached_before_as_key_version_1(db_file):
    from storage.db import MIGRATIONS, now_iso, sqlite_utils

    # a file at the schema before the key held the api_base, with one cached call in it
    ours = next(v for v, _, step in MIGRATIONS if step.__name__.endswith("_llm_call_key_version"))
    db = sqlite_utils.Database(db_file)
    db["schema_migrations"].create({"version": int, "name": str, "applied_at": str}, pk="version")
    for version, name, step in MIGRATIONS:
        if version < ours:
            step(db)
            db["schema_migrations"].insert({"version": version, "name": name, "applied_at": now_iso()})
    assert "key_version" not in db["llm_calls"].columns_dict
    db.execute("INSERT INTO llm_calls (key, model, api_base, template, request, reply_text, seconds, attempts, "
               "created_at) VALUES ('k1', 'openai/m', 'http://127.0.0.1:1/v1', 't@1', '{}', 'r', 0.1, 1, "
               "'2026-01-01')")
    db.conn.commit()
    db.close()
    with Store.open(db_file, mode="rw") as s:
        assert [(c.key, c.key_version) for c in s.llm_calls()] == [("k1", 1)]
        assert s.llm_calls_keyed_without_api_base() == [("k1", "http://127.0.0.1:1/v1")]
