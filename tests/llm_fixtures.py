"""Fixtures for LLM tests: the fake OpenAI-compatible server (bench/fake_llm_server.py) on 127.0.0.1, and a fake
API key in the environment (litellm's openai provider wants one; tests assert it is never stored)."""
from __future__ import annotations

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
