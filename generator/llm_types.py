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

import functools
import hashlib
import json
import urllib.parse
from dataclasses import dataclass, field, replace
from typing import Any, Awaitable, Callable, Protocol

#: ``async def completion_fn(**kwargs) -> response``: the signature of ``litellm.acompletion``. The response is a
#: litellm ``ModelResponse`` or any object/dict with ``choices[0].message.content``, ``choices[0].finish_reason``
#: and ``usage.prompt_tokens`` / ``usage.completion_tokens``.
CompletionFn = Callable[..., Awaitable[Any]]


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: equal values give equal strings (the basis of cache keys)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


_SCHEMA_JSON: dict[int, tuple[Any, str]] = {}


def _schema_json(schema: dict[str, Any] | None) -> str:
    """canonical_json(schema), remembered per schema object (requests of one stage share one schema dict). A schema
    must not be changed once requests use it."""
    if schema is None:
        return "null"
    memo = _SCHEMA_JSON.get(id(schema))
    if memo is None or memo[0] is not schema:
        if len(_SCHEMA_JSON) > 1024:
            _SCHEMA_JSON.clear()
        memo = _SCHEMA_JSON[id(schema)] = (schema, canonical_json(schema))
    return memo[1]


@functools.lru_cache(maxsize=256)
def normalize_api_base(api_base: str | None) -> str | None:
    """The form of an api_base that the cache key holds: None for no api_base (the provider's default endpoint) or
    an empty one; else the URL with scheme and host in lower case, the scheme's default port (http 80, https 443)
    dropped and trailing slashes removed, so ``HTTP://127.0.0.1:8000/v1/`` and ``http://127.0.0.1:8000/v1`` are
    one server. Nothing else is rewritten (``localhost`` and ``127.0.0.1`` stay two servers)."""
    if api_base is None:
        return None
    text = str(api_base).strip()
    if not text:
        return None
    try:
        parts = urllib.parse.urlsplit(text)
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:  # not a URL we can take apart (a bad port ...): keep it as typed, minus trailing slashes
        return text.rstrip("/") or text
    if not scheme or not host:
        return text.rstrip("/") or text
    if ":" in host:
        host = f"[{host}]"  # an IPv6 address
    if port is not None and not (scheme, port) in (("http", 80), ("https", 443)):
        host = f"{host}:{port}"
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = f"{userinfo}@{host}" if userinfo else host
    return urllib.parse.urlunsplit((scheme, netloc, parts.path.rstrip("/"), parts.query, ""))


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
    api_base: the server for local OpenAI-compatible models (None = the provider's default endpoint); part of the
        cache key in its normalised form (normalize_api_base), since the same model name on two servers is two
        models. Never a secret.
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
        """sha256 hex digest of (model, messages, params, schema, template, sample_index, and the normalised
        api_base when there is one): the call cache's key. A request without an api_base has the key it had before
        api_base was part of it (key version 1), so those cached calls stay valid."""
        # canonical_json of {"api_base"?, "messages", "model", "params", "sample_index", "schema", "template"}, written
        # out key by key in sorted order so that the schema (the same dict for every request of a stage) is encoded
        # once (_schema_json); the text is the same as canonical_json of the whole dict.
        base = normalize_api_base(self.api_base)
        material = "".join((
            "{" if base is None else '{"api_base":' + canonical_json(base) + ",",
            '"messages":', canonical_json(list(self.messages)), ',"model":', canonical_json(self.model),
            ',"params":', canonical_json(self.params), ',"sample_index":', canonical_json(self.sample_index),
            ',"schema":', _schema_json(self.schema), ',"template":', canonical_json(self.template), "}"))
        return hashlib.sha256(material.encode("utf-8")).hexdigest()

    def legacy_cache_key(self) -> str:
        """The key this request had in cache key version 1, which left api_base out (rows written before
        the migration "llm_calls.key_version"). The client reads such a row only when the api_base stored beside it normalises to this
        request's, so a reply is never shared between two servers."""
        return replace(self, api_base=None).cache_key()


@dataclass
class LLMReply:
    """A validated reply.

    value: the output model's instance (None when the request had no output model: then ``text`` is the answer).
    text: the raw reply content as the server sent it.
    prompt_tokens / completion_tokens: from the server's ``usage``; None when the server sent none (unknown, never 0).
    cost_usd: USD for this call from litellm's price map or the config's prices; None when unknown; 0.0 for a cache hit.
        When the server sent no usage it is priced from tokens counted offline and ``cost_estimated`` is True.
    seconds: wall time of the successful attempt (0.0 for a cache hit).
    attempts: requests sent for this reply (transport retries and repair attempts together; 0 for a cache hit).
    cached: True when the reply came from the SQLite call cache and no request was sent.
    finish_reason: as the server said ("stop", "length", ...).
    cache_key: the key of the cache row that holds the reply: ``LLMRequest.cache_key()`` of the request (or, for a
        reply read from a row written before api_base was part of the key, that row's ``legacy_cache_key()``).
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
    #: True when the server sent no usage and tokens and cost_usd were counted offline (an estimate)
    cost_estimated: bool = False


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


class ServerFault(LLMError):
    """The server cannot be used as it is: the run stops early, with everything finished saved, and this error's
    one line says what happened and what to check. Raised to every call of the client from then on."""


class ServerUnreachable(ServerFault):
    """Nothing answers at the api_base (connection refused, unknown host), after one quick retry."""


class ClientMisconfigured(ServerFault):
    """The request cannot be sent as configured (litellm refused it before any request: no API key in the
    environment). Raised at the first call, with no retry; the message names the model and the environment
    variable(s) litellm asked for."""


class CircuitOpen(ServerFault):
    """Most recent requests failed alike (timeouts, 5xx, broken connections) with no success among them."""


class ReplyRejected(Exception):
    """Raised by a caller's ``check`` of a reply that is valid for its schema but unusable (a check no schema can
    state: four options that differ, a new option that is none of the old ones). The client treats it as an invalid
    reply: it asks again with the reason (a repair attempt) and never caches the reply."""


class LLMClientProtocol(Protocol):
    """What stages and evaluation runs need of a client."""

    async def complete(self, request: LLMRequest, output_model: Any = None,
                       check: Callable[[Any], None] | None = None) -> LLMReply:
        """Send (or replay from the cache) one request; validate the reply against the request's schema and into
        ``output_model``; ``check(value)`` may raise ReplyRejected (then the reply counts as invalid).

        Raises LLMCallFailed, BudgetExhausted.
        """
        ...
