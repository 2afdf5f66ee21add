"""Fixtures for LLM tests: the fake OpenAI-compatible server (bench/fake_llm_server.py) on 127.0.0.1, and a fake
API key in the environment (litellm's openai provider wants one; tests assert it is never stored)."""
from __future__ import annotations

import contextlib

import pytest

from bench.fake_llm_server import FakeLLMServer

FAKE_KEY = "sk-prefval-test-9f8e7d6c5b4a39281706"


@pytest.fixture
def fake_llm():
    """A fake LLM server on a free port of 127.0.0.1 in a background thread; ``.url`` is the api_base."""
    server = FakeLLMServer(host="127.0.0.1", port=0).start()
    yield server
    server.stop()


@pytest.fixture
def fake_key(monkeypatch) -> str:
    """OPENAI_API_KEY set to a fake secret for the test."""
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    return FAKE_KEY


@contextlib.contextmanager
def generator_server(**makers):
    """A fake LLM server whose replies pass the generator's stage checks (generator.fake_replies.register_all),
    plus the extra reply makers given (schema name -> maker), with OPENAI_API_KEY set to FAKE_KEY while it runs
    (restored after). For module-scoped fixtures of end-to-end tests."""
    import os

    from generator.fake_replies import register_all

    srv = FakeLLMServer(host="127.0.0.1", port=0).start()
    register_all(srv)
    for name, maker in makers.items():
        srv.register(name, maker)
    old = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = FAKE_KEY
    try:
        yield srv
    finally:
        srv.stop()
        if old is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = old
