"""The contract between prefval's one LLM client (``generator.client``) and everything that uses it (the
generator's pipeline stages, the evaluator's runs).

A caller builds an :class:`LLMRequest` and awaits ``client.complete(request, output_model)``; it gets an
:class:`LLMReply` whose ``value`` is an instance of ``output_model`` (a pydantic model) validated from the reply,
or the call raises :class:`LLMCallFailed` (the row is recorded as failed, the run goes on) or
:class:`BudgetExhausted` (the run stops cleanly). A completion function with the signature of
``litellm.acompletion`` can be injected, so unit tests never import litellm.

This module imports nothing heavy (no litellm, no pydantic models of stages) and no SQL.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Protocol

#: ``async def completion_fn(**kwargs) -> response``: the signature of ``litellm.acompletion``. The response is a
#: litellm ``ModelResponse`` or any object/dict with ``choices[0].message.content``, ``choices[0].finish_reason``
#: and ``usage.prompt_tokens`` / ``usage.completion_tokens``.
CompletionFn = Callable[..., Awaitable[Any]]


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: equal values give equal strings (the basis of cache keys)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


@dataclass(frozen=True)
class LLMRequest:
    """One chat-completion request, as the cache sees it.

    model: any litellm model string ("openai/gpt-4o-mini", "hosted_vllm/llama-3", "ollama_chat/qwen2.5", ...).
    messages: the chat, ``[{"role": "system"|"user"|"assistant", "content": str}, ...]``.
    template: the prompt template's id and version, e.g. ``"profile@1"``; a new template version is a new request.
    schema: the JSON schema of the expected reply (sent as ``response_format`` json_schema), or None for free text.
    schema_name: the name sent with the schema (letters, digits, ``_``).
    params: sampling parameters that change the reply (temperature, max_tokens, seed, top_p ...).
    sample_index: the n-th independent sample of the same prompt (several samples of one request are distinct
        cache entries).
    api_base: the server for local OpenAI-compatible models; not part of the cache key (the same model served
        elsewhere gives the same kind of reply), never a secret.
    """

    model: str
    messages: tuple[dict[str, str], ...]
    template: str
    schema: dict[str, Any] | None = None
    schema_name: str = "reply"
    params: dict[str, Any] = field(default_factory=dict)
    sample_index: int = 0
    api_base: str | None = None

    def cache_key(self) -> str:
        """sha256 hex digest of (model, messages, params, schema, template, sample_index): the call cache's key."""
        material = canonical_json({
            "model": self.model, "messages": list(self.messages), "params": self.params,
            "schema": self.schema, "template": self.template, "sample_index": self.sample_index,
        })
        return hashlib.sha256(material.encode("utf-8")).hexdigest()


@dataclass
class LLMReply:
    """A validated reply.

    value: the output model's instance (None when the request had no output model: then ``text`` is the answer).
    text: the raw reply content as the server sent it.
    prompt_tokens / completion_tokens: from the server's ``usage``; None when the server sent none (unknown, never 0).
    cost_usd: USD for this call from litellm's price map or the config's prices; None when unknown; 0.0 for a cache hit.
    seconds: wall time of the successful attempt (0.0 for a cache hit).
    attempts: requests sent for this reply (transport retries and repair attempts together; 0 for a cache hit).
    cached: True when the reply came from the SQLite call cache and no request was sent.
    finish_reason: as the server said ("stop", "length", ...).
    cache_key: ``LLMRequest.cache_key()`` of the request.
    """

    value: Any
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    seconds: float
    attempts: int
    cached: bool
    finish_reason: str | None
    cache_key: str
    model: str


class LLMError(Exception):
    """Base of the errors the client raises. Messages never contain an API key."""


class LLMCallFailed(LLMError):
    """The call gave no valid reply after the allowed retries and repair attempts.

    reason: one line ("HTTP 400: ...", "invalid JSON after 2 repair attempts: ...", "timed out after 60 s").
    attempts: requests sent.
    """

    def __init__(self, reason: str, attempts: int = 0):
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts


class BudgetExhausted(LLMError):
    """The run's budget (USD) is spent: no new request is sent. Finished calls are already in the cache."""


class LLMClientProtocol(Protocol):
    """What stages and evaluation runs need of a client."""

    async def complete(self, request: LLMRequest, output_model: Any = None) -> LLMReply:
        """Send (or replay from the cache) one request; validate the reply into ``output_model``.

        Raises LLMCallFailed, BudgetExhausted.
        """
        ...
