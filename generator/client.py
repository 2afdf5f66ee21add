"""prefval's one LLM client: every call of the generator and the evaluator goes through :class:`LLMClient`.

    async with LLMClient(store, run_id=run_id, limits={"openai/gpt-4o-mini": ModelLimits(16, rpm=500)},
                         budget_usd=2.0) as client:
        reply = await client.complete(LLMRequest(model=..., messages=(...,), template="profile@1",
                                                 schema=json_schema_for(Profile), schema_name="profile"),
                                      output_model=Profile)

What it does, and why (the numbered behaviours of litellm 1.110.2 in ../shared/LLM_CLIENT_NOTES.md):
- Only litellm (``acompletion``), imported on first use with ``LITELLM_LOCAL_MODEL_COST_MAP=True`` and
  ``LITELLM_OFFLINE_MODE=true`` set before the import (11, 10). A ``completion_fn`` with its signature can be
  injected instead (unit tests never import litellm).
- Structured output: the request's schema goes out as ``response_format`` json_schema, sent whatever litellm's
  ``supports_response_schema`` says (6), and every reply is checked against that very schema (jsonschema; the
  schema sent is the schema checked), then read into the pydantic ``output_model`` and passed to the caller's
  ``check`` (checks no schema can state; it raises ReplyRejected). ``finish_reason == "length"`` is a truncated,
  invalid reply (7). An invalid or rejected reply gets up to ``max_repairs`` repair requests (the error sent back,
  14), then :class:`LLMCallFailed`. Only replies that pass everything are cached.
- Retries: one loop here, exponential backoff with full jitter, Retry-After honoured up to a cap and charged to the
  call's deadline (2), for 429, 408, timeouts, broken connections and 5xx (13); never for other 4xx. A call sends at
  most ``max_attempts`` requests in all, transport retries and repairs together. litellm's and the SDK's retries
  are off (``max_retries=0``, ``num_retries=0``: 1). Every request has ``timeout=`` and every call a deadline (3).
- Faults that stop the run (:class:`ServerFault`): a refused connection or an unknown host gets one quick retry,
  then ServerUnreachable names the api_base and what to check (litellm reports it as a 500 "Connection error":
  fault_kind reads the exception's chain); once the last ``breaker_window`` requests had no success and mostly
  failed alike (timeouts, 5xx, broken connections), CircuitOpen. Either cancels the calls in flight and refuses
  every later call, so a dead server costs one timeout, not hours.
- Limits that queue, never reject (5): per model, a semaphore of requests in flight and token buckets (aiolimiter)
  for requests and tokens per minute.
- Cache and resume (12): each valid reply is written to the SQLite file (``llm_calls``, through storage) before
  ``complete`` returns; a key already there sends nothing; identical concurrent calls share one request, in one
  process (a shared task) and across processes on one file (a claim row taken just before each request; see
  ``claims``). The key holds the normalised api_base (LLMRequest.cache_key).
- Cost (8, 9): config prices (USD per 1M tokens) first, else litellm's price map; unknown = None, never an error.
  A reply without usage (or 0/0) has unknown tokens and is priced from tokens counted offline, marked as an
  estimate (``cost_estimated``). The budget stops new requests once spent >= budget (BudgetExhausted); requests in
  flight finish and are cached. A reply the budget cannot count (no price at all) stops it too, unless
  ``budget_unknown_price`` says how to count it. With a ``budget_scope``, "spent" includes what concurrent clients
  of the scope in other processes spent.
- ``aclose()`` (or ``async with``) awaits ``litellm.close_litellm_async_clients()`` (4).
- Keys only from the environment (litellm reads them); no request parameter may carry one, every error message is
  scrubbed of secret values, and so is every reply before it is validated, cached or returned (a server that echoes
  the Authorization header) (storage.secrets).
"""
from __future__ import annotations

import asyncio
import collections
import email.utils
import json
import os
import random
import re
import socket
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable

from generator.llm_types import (
    BudgetExhausted, CircuitOpen, ClientMisconfigured, CompletionFn, LLMCallFailed, LLMReply, LLMRequest, ReplyRejected, ServerFault,
    ServerUnreachable, normalize_api_base,
)
from storage.secrets import is_secret_field, scrub_text, secret_values

#: Parameters the client sets itself; a request's params may not carry them.
RESERVED_PARAMS = frozenset({"model", "messages", "api_base", "base_url", "response_format", "timeout",
                             "max_retries", "num_retries", "stream", "n"})


def import_litellm():
    """Import litellm offline (local price map, no tokenizer or catalog downloads) and quietly."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ["LITELLM_OFFLINE_MODE"] = "true"
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    # without an API key litellm's OpenAI handler makes its acompletion coroutine, then raises before awaiting it:
    # Python's "coroutine ... was never awaited" warning (and its tracemalloc line) then printed over the one-line
    # "no API key" error (a newcomer's run). The error says everything; that warning is litellm's internals.
    import warnings

    warnings.filterwarnings("ignore", message=r"coroutine '\w+\.acompletion' was never awaited",
                            category=RuntimeWarning)
    return litellm


# ---------------------------------------------------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModelLimits:
    """Limits of one model (they queue requests, never reject them).

    max_in_flight: requests open at once. rpm: requests per minute (None = no limit). tpm: tokens per minute,
    counted before sending as prompt characters / 4 + max_tokens (None = no limit). Both are leaky buckets
    (aiolimiter): rpm a burst of at most a second's worth (rpm / 60, at least 1), then rpm per minute; tpm a burst
    of up to tpm tokens, then tpm per minute.
    """

    max_in_flight: int = 8
    rpm: float | None = None
    tpm: float | None = None
    period: float = 60.0  #: seconds that rpm and tpm refer to (60; tests shorten it)


@dataclass(frozen=True)
class Price:
    """USD per 1,000,000 prompt (input) and completion (output) tokens."""

    input_per_million: float
    output_per_million: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_million + completion_tokens * self.output_per_million) / 1e6


@dataclass(frozen=True)
class RetryPolicy:
    """How hard the client tries, and how long a call may take.

    max_attempts: requests per call at most, all told: the first, transport retries (429, timeouts, broken
        connections, 5xx) and repair requests together (so a call never sends more, whatever fails).
    max_repairs: of those, requests that send an invalid reply's error back (repair attempts).
    timeout: seconds per request (litellm ``timeout=`` and a guard around it).
    deadline: seconds per call, all its requests, waits and repairs together (asyncio.timeout).
    backoff_base / backoff_max: seconds; the n-th retry waits uniform(0, min(backoff_max, backoff_base * 2**n))
        ("full jitter", M. Brooker, "Exponential Backoff And Jitter", AWS Architecture Blog, 2015).
    retry_after_cap: seconds; a server's Retry-After is honoured up to this.
    unreachable_wait: seconds before the one quick retry of a refused connection or an unknown host (then the run
        stops: ServerUnreachable).
    breaker_window / breaker_share: the client stops every call (CircuitOpen) once the last ``breaker_window``
        requests had no success and at least ``breaker_share`` of them failed alike (timeouts, 5xx, broken
        connections; a 429 counts as an answer). 0 turns it off.
    """

    max_attempts: int = 6
    max_repairs: int = 2
    timeout: float = 120.0
    deadline: float = 300.0
    backoff_base: float = 1.0
    backoff_max: float = 30.0
    retry_after_cap: float = 60.0
    unreachable_wait: float = 0.5
    breaker_window: int = 16
    breaker_share: float = 0.8


@dataclass
class ClientStats:
    """Running totals of one client (this process only; cache hits cost nothing).

    done: calls answered by a fresh request; cached: calls answered from the cache (or by an identical call in
    flight); failed: LLMCallFailed raised; requests: HTTP requests sent (retries and repairs included);
    prompt_tokens / completion_tokens: from the servers' usage (replies without usage are not in them:
    usage_unknown counts those); cost_usd: priced replies, estimates included; cost_estimated_usd: the part of
    cost_usd priced from tokens counted offline (servers that sent no usage); unpriced: replies whose cost is
    unknown (no price for the model); budget_refused: calls refused by the budget; stopped: calls refused because
    the client stopped (ServerFault).
    """

    done: int = 0
    cached: int = 0
    failed: int = 0
    requests: int = 0
    retries: int = 0
    repairs: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cost_estimated_usd: float = 0.0
    usage_unknown: int = 0
    unpriced: int = 0
    budget_refused: int = 0
    stopped: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The totals for a run's record: tokens None when no reply had usage, cost None when no reply had a price
        (unknown, never 0)."""
        out = dict(self.__dict__)
        if self.usage_unknown and not (self.prompt_tokens or self.completion_tokens):
            out["prompt_tokens"] = out["completion_tokens"] = None
        if self.unpriced and not self.cost_usd:
            out["cost_usd"] = None
        return out


# ---------------------------------------------------------------------------------------------------------------------
# Schemas
# ---------------------------------------------------------------------------------------------------------------------
def json_schema_for(output_model: Any, strict: bool = True) -> dict[str, Any]:
    """The JSON schema of a pydantic model; with ``strict``, made fit for OpenAI strict structured output and
    guided decoding (generator.json_schema.strict_schema): every object gets ``additionalProperties: false`` and
    all its properties ``required``, ``default`` is removed, string length bounds become patterns. (Fields with
    defaults thus become required in the schema; the pydantic model still accepts them absent.) The same model
    gives the same dict, which must not be changed."""
    if not strict:
        return output_model.model_json_schema()
    memo = _SCHEMA_OF.get(output_model)
    if memo is None:  # one dict per model: the validator, the strict flag and the cache key's text are memoised on it
        from generator.json_schema import strict_schema

        if len(_SCHEMA_OF) > 1024:
            _SCHEMA_OF.clear()
        memo = _SCHEMA_OF[output_model] = strict_schema(output_model.model_json_schema())
    return memo


#: the strict schema of each pydantic model (json_schema_for); a schema must not be changed once made
_SCHEMA_OF: dict[Any, dict[str, Any]] = {}


def schema_is_strict(schema: dict[str, Any]) -> bool:
    """True when every object in the schema forbids additional properties and requires all its properties (what
    OpenAI's ``strict: true`` accepts)."""
    ok = True

    def walk(node: Any) -> None:
        nonlocal ok
        if isinstance(node, dict):
            if node.get("type") == "object" or "properties" in node:
                props = node.get("properties", {})
                if node.get("additionalProperties") is not False or set(node.get("required", [])) != set(props):
                    ok = False
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    return ok


_STRICT_MEMO: dict[int, tuple[dict, bool]] = {}


def response_format_for(request: LLMRequest) -> dict[str, Any] | None:
    """The ``response_format`` sent for a request: OpenAI structured outputs (json_schema), or None for free text.
    ``strict`` is true when the schema is strict-compatible (schema_is_strict; remembered per schema object)."""
    schema = request.schema
    if schema is None:
        return None
    memo = _STRICT_MEMO.get(id(schema))
    if memo is None or memo[0] is not schema:
        if len(_STRICT_MEMO) > 1024:
            _STRICT_MEMO.clear()
        memo = _STRICT_MEMO[id(schema)] = (schema, schema_is_strict(schema))
    return {"type": "json_schema", "json_schema": {"name": request.schema_name, "schema": schema,
                                                   "strict": memo[1]}}


# ---------------------------------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------------------------------
#: where litellm starts appending a Python traceback (or its bug-report text) to an exception's message
_TRACEBACK_MARKERS = ("Traceback (most recent call last)", "This looks like a bug in LiteLLM")


def _one_line(text: str, limit: int = 300) -> str:
    text = str(text)
    for marker in _TRACEBACK_MARKERS:  # never a traceback in a user message: only the text before it
        text = text.split(marker, 1)[0]
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def error_reason(exc: BaseException) -> str:
    """One scrubbed line naming an exception: ``HTTP 400: ...``, ``timeout: ...``, ``ConnectionError: ...``."""
    status = getattr(exc, "status_code", None)
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        head = "timeout"
    elif isinstance(status, int):
        head = f"HTTP {status}"
    else:
        head = type(exc).__name__
    detail = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return scrub_text(_one_line(f"{head}: {detail}"))


#: Messages of errors that litellm raises before any request is sent (a missing key), whatever status it gives them:
#: the OpenAI SDK's "Missing credentials" / "api_key client option must be set", and litellm's own provider checks,
#: e.g. "Missing Gemini API key. Set the GEMINI_API_KEY or GOOGLE_API_KEY environment variable." (a ValueError
#: wrapped as a 500 APIConnectionError in litellm 1.110.2, so status and class alone call it a broken connection)
_CONFIG_ERRORS = ("Missing credentials", "api_key client option must be set")
_CONFIG_PATTERN = re.compile(r"\bmissing\b[\w .-]{0,40}\bapi[ _]?key\b|\bapi[ _]?key\b[\w .-]{0,40}\b(?:not (?:set|found|"
                             r"provided)|is required|must be set)", re.IGNORECASE)
_ENV_VAR = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:API_KEY|KEY|TOKEN|CREDENTIALS)\b")


def is_config_error(exc: BaseException) -> bool:
    """Whether an exception (or one in its chain) is litellm/the SDK refusing a request before sending it because
    no API key is configured (_CONFIG_ERRORS, or a message such as "Missing Gemini API key ..."). Raises nothing."""
    return any(any(m in str(e) for m in _CONFIG_ERRORS) or _CONFIG_PATTERN.search(str(e)) for e in _chain(exc))


def config_message(model: str, exc: BaseException) -> str:
    """One line for a request litellm would not send (is_config_error): the model and the environment variables
    its message names (OPENAI_API_KEY for the SDK's "Missing credentials", which names none), never a traceback."""
    names: list[str] = []
    for e in _chain(exc):
        for name in _ENV_VAR.findall(_one_line(e, 2000)):
            if name not in names:
                names.append(name)
    if not names and any(m in str(exc) for m in _CONFIG_ERRORS):
        names = ["OPENAI_API_KEY"]
    want = " or ".join(names) if names else "its provider's API key variable"
    return scrub_text(f"{model}: no API key: litellm needs {want} in the environment before it sends any request "
                      "(set it, or pass --api-base to a server that needs none with a hosted_vllm/ model name); "
                      "nothing was sent")


def is_retryable(exc: BaseException) -> bool:
    """True for failures worth another request: timeouts, connection errors, 408/409/425/429 and 5xx.
    False for other HTTP statuses (400, 401, 403, 404, 422 ...), for a missing API key, and for anything else."""
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError, ConnectionError)):
        return True
    if is_config_error(exc):
        return False  # litellm reports a missing key as a 500: asking again cannot help
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status in (408, 409, 425, 429) or status >= 500
    names = {c.__name__ for c in type(exc).__mro__}
    return bool(names & {"APIConnectionError", "APITimeoutError", "Timeout", "ClientConnectionError",
                         "ServerDisconnectedError", "ConnectError", "ReadTimeout", "RemoteProtocolError",
                         "TransportError", "OSError"})


_UNREACHABLE_MARKERS = ("connection refused", "connect call failed", "name or service not known",
                        "nodename nor servname", "temporary failure in name resolution", "getaddrinfo failed",
                        "no address associated with hostname", "no route to host", "network is unreachable")


def _chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen and len(seen) < 12:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def fault_kind(exc: BaseException) -> str:
    """What kind of failure an exception is: "unreachable" (connection refused, unknown host: nothing answers at
    that address), "timeout", "connection" (reset, cut mid-way), "rate_limit" (429), "server" (5xx), "client"
    (other HTTP statuses), "config" (no API key), or "other". litellm reports a refused connection as a 500
    "Connection error": the exception's chain tells them apart."""
    import errno

    if is_config_error(exc):  # refused before any request, whatever status or class litellm gives it
        return "config"
    for e in _chain(exc):
        if isinstance(e, (ConnectionRefusedError, socket.gaierror)):
            return "unreachable"
        if isinstance(e, OSError) and e.errno in (errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH):
            return "unreachable"
        if type(e).__name__ == "ClientConnectorDNSError":
            return "unreachable"
    text = " ".join(str(e) for e in _chain(exc)).lower()
    if any(m in text for m in _UNREACHABLE_MARKERS):
        return "unreachable"
    names = {c.__name__ for e in _chain(exc) for c in type(e).__mro__}
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)) or names & {"Timeout", "APITimeoutError", "ReadTimeout",
                                                                         "TimeoutException", "ServerTimeoutError"}:
        return "timeout"
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        if status == 429:
            return "rate_limit"
        if status == 408:
            return "timeout"
        if names & {"APIConnectionError", "ServerDisconnectedError", "ClientPayloadError", "RemoteProtocolError"} \
                or "connection error" in text:
            return "connection"
        return "server" if status >= 500 else "client"
    if isinstance(exc, ConnectionError) or names & {"APIConnectionError", "ClientConnectionError", "ConnectError",
                                                    "ServerDisconnectedError", "RemoteProtocolError",
                                                    "TransportError", "ClientPayloadError"}:
        return "connection"
    return "other"


_KIND_WORDS = {"timeout": "timed out", "connection": "lost the connection", "server": "got a server error (5xx)"}


def where_of(api_base: str | None, model: str) -> str:
    """The server a request goes to, for messages: its api_base, or the provider's endpoint of the model."""
    return normalize_api_base(api_base) or f"the provider's endpoint of {model}"


def unreachable_message(api_base: str | None, model: str, exc: BaseException) -> str:
    """One line for a server that nothing answers at, naming it and what to check."""
    dns = any(isinstance(e, socket.gaierror) or type(e).__name__ == "ClientConnectorDNSError" for e in _chain(exc)) \
        or any(m in str(exc).lower() for m in _UNREACHABLE_MARKERS[2:7])
    where = where_of(api_base, model)
    if dns:
        return scrub_text(f"cannot reach {where}: its host name is unknown (is the address right? check "
                          "--api-base or api_base: in the config)")
    if api_base:
        return scrub_text(f"cannot reach {where}: connection refused (is the server running? is the port right? "
                          "check --api-base or api_base: in the config)")
    return scrub_text(f"cannot reach {where}: connection refused (is the network up?)")


def retry_after_seconds(exc: BaseException) -> float | None:
    """Seconds the server asked to wait (``retry-after-ms`` or ``Retry-After`` as seconds or an HTTP date) from the
    exception's response headers, or None."""
    headers = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
    if headers is None:
        headers = getattr(exc, "headers", None)
    if not headers:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
        value = headers.get("retry-after")
    except Exception:
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
        except (TypeError, ValueError):
            return None


class _InvalidReply(Exception):
    """A reply that arrived but cannot be used (truncated, not JSON, not valid for the schema)."""


# ---------------------------------------------------------------------------------------------------------------------
# Reply reading and validation
# ---------------------------------------------------------------------------------------------------------------------
def _get(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def read_response(response: Any) -> tuple[str, str | None, int | None, int | None]:
    """(content, finish_reason, prompt_tokens, completion_tokens) of a litellm ModelResponse or an OpenAI-shaped
    dict. Tokens are None when the server sent no usage, or sent 0/0 (litellm's stand-in for none)."""
    choices = _get(response, "choices") or []
    if not choices:
        raise _InvalidReply("the reply has no choices")
    choice = choices[0]
    content = _get(_get(choice, "message"), "content")
    finish = _get(choice, "finish_reason")
    usage = _get(response, "usage")
    pt, ct = _get(usage, "prompt_tokens"), _get(usage, "completion_tokens")
    if usage is None or pt is None or ct is None or (pt == 0 and ct == 0):
        pt = ct = None
    return (content if isinstance(content, str) else ("" if content is None else str(content))), finish, pt, ct


def _strip_fences(text: str) -> str:
    t = text.strip()
    if t.startswith("```"):
        t = t.split("\n", 1)[1] if "\n" in t else ""
        if t.rstrip().endswith("```"):
            t = t.rstrip()[:-3]
    return t.strip()


def validate_reply(text: str, finish_reason: str | None, request: LLMRequest, output_model: Any,
                   check: Callable[[Any], None] | None = None) -> tuple[Any, Any]:
    """(value, parsed JSON) of a reply, or raises _InvalidReply with a one-line reason.

    A reply to a request with a schema is checked against that very schema (generator.json_schema.schema_error:
    the schema sent is the schema checked), then read into ``output_model`` when one is given (value: its
    instance; else the parsed JSON; free text without a schema: None, the text is the answer). ``check(value)``
    then may raise ReplyRejected (a check no schema can state)."""
    if finish_reason == "length":
        raise _InvalidReply("truncated: the reply hit max_tokens (finish_reason length)")
    if output_model is None and request.schema is None:
        if not text.strip():
            raise _InvalidReply("empty reply")
        value, parsed = None, None
    else:
        body = _strip_fences(text)
        try:
            parsed = json.loads(body)
        except ValueError as exc:
            raise _InvalidReply(f"not JSON ({exc})") from None
        if request.schema is not None:
            from generator.json_schema import schema_error

            problem = schema_error(parsed, request.schema)
            if problem is not None:
                raise _InvalidReply(f"does not match the schema: {problem}")
        value = parsed
        if output_model is not None:
            try:
                value = output_model.model_validate(parsed)
            except Exception as exc:  # pydantic.ValidationError
                errors = getattr(exc, "errors", None)
                if callable(errors):
                    parts = [f"{'.'.join(str(p) for p in e.get('loc', ())) or '(root)'}: {e.get('msg')}"
                             for e in errors()[:3]]
                    raise _InvalidReply("does not match the schema: " + "; ".join(parts)) from None
                raise _InvalidReply(f"does not match the schema: {_one_line(str(exc), 200)}") from None
    if check is not None:
        try:
            check(value if value is not None else text)
        except ReplyRejected as exc:
            raise _InvalidReply(_one_line(str(exc) or type(exc).__name__, 300)) from None
    return value, parsed


def repair_messages(request: LLMRequest, bad_text: str, reason: str) -> list[dict[str, str]]:
    """The conversation of a repair attempt: the original messages, the unusable reply, and a note of what was
    wrong (each repair starts from the original messages, so the conversation does not grow with every try)."""
    return list(request.messages) + [
        {"role": "assistant", "content": bad_text[:4000]},
        {"role": "user", "content": (f"That reply cannot be used: {reason}. Answer the request again with only "
                                     "a JSON value that follows the given schema, with no other text.")},
    ]


# ---------------------------------------------------------------------------------------------------------------------
# Claims across processes: who is alive
# ---------------------------------------------------------------------------------------------------------------------
_HOST = socket.gethostname()
#: owner tokens of the clients of this process that may hold claims (added at their first claim, removed by aclose)
_LIVE_TOKENS: set[str] = set()


def _pid_running(pid: int) -> bool:
    """Whether a process with this pid runs on this host (a zombie, killed but not yet reaped, does not)."""
    if os.name == "nt":  # pragma: no cover - no signal 0 there: trust the lease
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return True


def holder_alive(holder: Any, now: float) -> bool:
    """Whether the holder of a claim or budget share (storage.llm_calls.ClaimHolder) still runs: its lease (unix
    seconds) has not run out, and on this host its process exists (in this process: its client is not closed).
    A holder on another host is trusted until its lease runs out."""
    if holder.lease_until < now:
        return False
    if holder.host != _HOST or holder.pid is None:
        return True
    if holder.pid == os.getpid():
        return holder.token in _LIVE_TOKENS
    return _pid_running(holder.pid)


class _AnsweredElsewhere(Exception):
    """The request is being sent by another client (status BUSY) or was answered meanwhile (CACHED)."""

    def __init__(self, status: str):
        super().__init__(status)
        self.status = status


# ---------------------------------------------------------------------------------------------------------------------
# The client
# ---------------------------------------------------------------------------------------------------------------------
class _Limits:
    """The semaphore and token buckets of one model in one event loop."""

    def __init__(self, limits: ModelLimits):
        from aiolimiter import AsyncLimiter

        self.spec = limits
        self.in_flight = asyncio.Semaphore(max(1, limits.max_in_flight))
        self.rpm = None
        if limits.rpm:
            # a bucket of at most one second's worth of requests (min 1), so that rpm=500 sends about 8 a second
            # rather than 500 at once: providers count rate limits over windows shorter than a minute
            window = min(1.0, limits.period)
            burst = max(1.0, limits.rpm * window / limits.period)
            self.rpm = AsyncLimiter(burst, burst * limits.period / limits.rpm)
        self.tpm = AsyncLimiter(limits.tpm, limits.period) if limits.tpm else None

    async def wait(self, est_tokens: int) -> None:
        if self.rpm is not None:
            await self.rpm.acquire()
        if self.tpm is not None:
            await self.tpm.acquire(min(float(est_tokens), self.tpm.max_rate))


class LLMClient:
    """The client (see the module docstring). Use one per event loop, closed with ``aclose()`` or ``async with``.

    store: a storage.Store whose ``llm_calls`` table is the cache (None = no cache, for tests and dry runs).
    run_id: the run (Store.start_run) written beside each cached call.
    completion_fn: ``litellm.acompletion`` by default; any async function with its signature.
    limits: ModelLimits per model string; default_limits for the others.
    retry: RetryPolicy. budget_usd: stop sending once this much (USD) is spent by this client (None = no budget).
    prices: Price per model string (USD per 1M tokens), used before litellm's price map.
    use_litellm_prices: look unknown models up in litellm's price map (default: when litellm is the completion
        function).
    sleep: the coroutine used to wait between retries (tests pass a recorder).
    background_writes: write the cache from a writer thread with its own connection (database files only).
    claims: with a database file, claim each request in the database just before sending it, so that clients in
        other processes on the same file never send it too: they wait for its reply (polling the cache), or send
        it themselves once the claim is given back without a reply (the call failed) or its holder died (its pid
        is gone on this host, or its lease of ``timeout + max(retry_after_cap, backoff_max) + 30`` seconds, renewed
        with every request, ran out).
    budget_scope: a name shared by runs that should share one budget (e.g. ``generate:PIPELINE``): the budget
        then counts what every client of the scope spent while their runs overlapped (storage
        ``llm_budget_shares``, updated with every cache transaction), so concurrent runs together spend at most the
        budget plus what is in flight. Needs a database file and background_writes.
    budget_unknown_price: the Price at which a budget counts replies whose model has no known price (their cost
        is still recorded as unknown). Without it, a budget stops the run at the first such reply: a budget that
        cannot count is no budget (commands refuse to start in that case; see price_known).
    token_counter: ``counter(model, messages=..., text=...) -> int``, counts tokens offline for replies whose
        server sent no usage (their cost is then an estimate); default litellm's token_counter when litellm is the
        completion function, else characters / 4.
    """

    def __init__(self, store: Any = None, *, run_id: str | None = None, completion_fn: CompletionFn | None = None,
                 limits: dict[str, ModelLimits] | None = None, default_limits: ModelLimits = ModelLimits(),
                 retry: RetryPolicy = RetryPolicy(), budget_usd: float | None = None,
                 prices: dict[str, Price] | None = None, use_litellm_prices: bool | None = None,
                 sleep: Callable[[float], Any] = asyncio.sleep, seed: int | None = None,
                 background_writes: bool = True, claims: bool = True, budget_scope: str | None = None,
                 budget_unknown_price: Price | None = None, token_counter: Callable[..., int] | None = None):
        self.store = store
        self.run_id = run_id
        self._completion_fn = completion_fn
        self.limits = dict(limits or {})
        self.default_limits = default_limits
        self.retry = retry
        self.budget_usd = budget_usd
        self.prices = dict(prices or {})
        self.use_litellm_prices = completion_fn is None if use_litellm_prices is None else use_litellm_prices
        self.stats = ClientStats()
        self.listeners: list[Callable[[ClientStats], None]] = []
        self._sleep = sleep
        self._rng = random.Random(seed)
        self._inflight: dict[str, asyncio.Task] = {}
        self._limits: dict[tuple[str, int], _Limits] = {}
        self._unknown_price: set[str] = set()
        self._used_litellm = False
        self.background_writes = background_writes
        self._writer: Any = None
        self._legacy_rows: bool | None = None
        self.claims = claims
        self.budget_scope = budget_scope
        self._others_spent = 0.0  # USD spent by the other clients of budget_scope (set by the writer thread)
        self._share_joined = False
        self._closing = False
        self.budget_unknown_price = budget_unknown_price
        self._token_counter = token_counter
        self._charged = 0.0  # USD the budget counts: cost_usd plus unpriced replies at budget_unknown_price
        self._uncounted: set[str] = set()  # models with replies the budget could not count (no price at all)
        self._fault: ServerFault | None = None  # set once the client stopped (every call raises it)
        self._recent: collections.deque = collections.deque(maxlen=max(1, retry.breaker_window))
        self._secrets: list[str] | None = None
        self._pending_parsed: dict[str, Any] = {}
        from storage.llm_calls import ClaimOwner

        self._owner = ClaimOwner(token=f"{_HOST}:{os.getpid()}:{uuid.uuid4().hex[:12]}", host=_HOST,
                                 pid=os.getpid(), run_id=run_id)
        self._lease = retry.timeout + max(retry.retry_after_cap, retry.backoff_max) + 30.0
        # a guard a little above litellm's own timeout, in case a transport ignores it
        self._guard_timeout = retry.timeout + min(0.5, retry.timeout * 0.1)

    # ---- lifecycle -----------------------------------------------------------------------------------------------
    async def __aenter__(self) -> "LLMClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Cancel calls still in flight and close litellm's HTTP sessions of this event loop (call before the loop
        ends)."""
        for task in list(self._inflight.values()):
            task.cancel()
        if self._inflight:
            await asyncio.gather(*self._inflight.values(), return_exceptions=True)
        if self._writer is not None:
            writer, self._writer = self._writer, None
            self._closing = True
            if writer.on_batch is not None:
                writer.submit_op(lambda store: None)  # a last transaction records the final spend as ended
            await asyncio.to_thread(writer.close)
        _LIVE_TOKENS.discard(self._owner.token)
        if self._used_litellm:
            litellm = import_litellm()
            await litellm.close_litellm_async_clients()

    def _completion(self) -> CompletionFn:
        if self._completion_fn is None:
            self._completion_fn = import_litellm().acompletion
            self._used_litellm = True
        return self._completion_fn

    def budget_left(self) -> float | None:
        """USD left of the budget (None without a budget); with a budget_scope, after what the other clients of
        the scope spent."""
        return None if self.budget_usd is None else self.budget_usd - self._charged - self._others_spent

    @property
    def charged_usd(self) -> float:
        """What this client's budget counted so far (cost_usd, plus unpriced replies at budget_unknown_price)."""
        return self._charged

    def _notify(self) -> None:
        for listener in self.listeners:
            try:
                listener(self.stats)
            except Exception:  # a display must never break a call
                pass

    # ---- the public call -----------------------------------------------------------------------------------------
    async def complete(self, request: LLMRequest, output_model: Any = None,
                       check: Callable[[Any], None] | None = None) -> LLMReply:
        """Send (or replay from the cache) one request; check the reply against the request's schema, read it into
        ``output_model`` and pass it to ``check`` (which may raise ReplyRejected: then the reply is invalid, gets a
        repair attempt and is never cached).

        Returns an LLMReply. Raises LLMCallFailed (a one-line reason, no key in it) when no valid reply came within
        the retry policy, BudgetExhausted when the budget is spent before the request could be sent, ServerFault
        when the client stopped (nothing answers at the server, or most recent requests failed alike), ValueError
        when the request's params carry a reserved or credential-named parameter.
        """
        return await self._complete(request, output_model, check)

    async def complete_repair(self, request: LLMRequest, output_model: Any, check: Callable[[Any], None] | None,
                              bad_text: str, reason: str) -> LLMReply:
        """Like complete, for a request whose reply came otherwise (a provider batch) and was invalid: its first
        request is the repair (the bad reply and the reason sent back), counting as one of the call's repairs."""
        return await self._complete(request, output_model, check, start=(bad_text, reason))

    def check_request(self, request: LLMRequest) -> None:
        """Raises ValueError when the request's params carry a reserved or credential-named parameter."""
        for name in request.params:
            if is_secret_field(name):
                raise ValueError(f"request parameter '{name}' holds a credential: keys come from the environment only")
            if name in RESERVED_PARAMS:
                raise ValueError(f"request parameter '{name}' is set by the client and cannot be given")

    def request_body(self, request: LLMRequest) -> dict[str, Any]:
        """The chat-completion parameters of a request as a provider receives them (params, messages,
        response_format), without the model, the api_base and the client's own transport settings."""
        body: dict[str, Any] = dict(request.params)
        body["messages"] = list(request.messages)
        fmt = response_format_for(request)
        if fmt is not None:
            body["response_format"] = fmt
        return body

    def take_reply(self, request: LLMRequest, response: Any, output_model: Any,
                   check: Callable[[Any], None] | None, price_factor: float = 1.0,
                   seconds: float = 0.0) -> tuple[LLMReply | None, str, str]:
        """Take a chat completion that arrived otherwise (a provider batch line) as a reply to ``request``: read,
        scrubbed, paid for at ``price_factor`` of the price, checked like an online reply. Returns (reply, "", "")
        for a valid one, which is not cached yet (``write_reply`` does it); else (None, text, reason)."""
        try:
            text, finish, pt, ct = read_response(response)
        except _InvalidReply as exc:
            return None, "", str(exc)
        text = scrub_text(text, self._secret_list())
        cost, estimated = self._account(request, list(request.messages), text, pt, ct, price_factor)
        try:
            value, parsed = validate_reply(text, finish, request, output_model, check)
        except _InvalidReply as exc:
            return None, text, str(exc)
        reply = LLMReply(value=value, text=text, prompt_tokens=pt, completion_tokens=ct, cost_usd=cost,
                         seconds=seconds, attempts=1, cached=False, finish_reason=finish,
                         cache_key=request.cache_key(), model=request.model, cost_estimated=estimated)
        self._pending_parsed[reply.cache_key] = parsed
        return reply, "", ""

    async def write_reply(self, request: LLMRequest, reply: LLMReply) -> None:
        """Cache a reply taken by take_reply (committed before this returns)."""
        await self._write_cache(request, reply, self._pending_parsed.pop(reply.cache_key, None))
        self.stats.done += 1
        self._notify()

    async def _complete(self, request: LLMRequest, output_model: Any, check: Callable[[Any], None] | None,
                        start: tuple[str, str] | None = None) -> LLMReply:
        self.check_request(request)
        if self._fault is not None:
            self.stats.stopped += 1
            raise self._fault_copy()
        key = request.cache_key()
        shared = self._inflight.get(key)
        if shared is not None:
            return await self._follow(shared, output_model, check)
        cached = self._from_cache(key, request, output_model, check)
        if cached is not None:
            self.stats.cached += 1
            self._notify()
            return cached
        task = asyncio.ensure_future(self._call(request, output_model, key, check, start))
        self._inflight[key] = task
        task.add_done_callback(lambda t, k=key: self._call_finished(k, t))
        reply = await self._shared_result(task)
        if reply.cached:  # answered by a client in another process
            self.stats.cached += 1
        else:
            self.stats.done += 1
        self._notify()
        return reply

    async def _shared_result(self, task: asyncio.Task) -> LLMReply:
        """The call's reply (shielded: a cancelled caller does not cancel the shared call), its failures counted."""
        try:
            return await asyncio.shield(task)
        except LLMCallFailed:
            self.stats.failed += 1
            self._notify()
            raise
        except BudgetExhausted:
            self.stats.budget_refused += 1
            self._notify()
            raise
        except ServerFault:
            self.stats.stopped += 1
            self._notify()
            raise
        except asyncio.CancelledError:
            if self._fault is not None and task.cancelled():  # stopped by the client, not by our caller
                self.stats.stopped += 1
                self._notify()
                raise self._fault_copy() from None
            raise

    def _call_finished(self, key: str, task: asyncio.Task) -> None:
        self._inflight.pop(key, None)
        if not task.cancelled():
            task.exception()  # retrieved here, so a call whose callers were all cancelled logs no warning

    async def _follow(self, task: asyncio.Task, output_model: Any, check: Callable[[Any], None] | None) -> LLMReply:
        """Wait for an identical call in flight and share its reply (no request of its own)."""
        reply = await self._shared_result(task)
        if output_model is not None and not isinstance(reply.value, output_model):
            try:
                value = output_model.model_validate(json.loads(_strip_fences(reply.text)))
            except Exception as exc:
                raise LLMCallFailed(f"the shared reply does not fit {output_model.__name__}: "
                                    f"{_one_line(str(exc), 200)}", 0) from None
            reply = replace(reply, value=value)
        if check is not None:
            try:
                check(reply.value if reply.value is not None else reply.text)
            except ReplyRejected as exc:
                raise LLMCallFailed(f"the shared reply fails this call's check: {_one_line(str(exc), 200)}",
                                    0) from None
        self.stats.cached += 1
        self._notify()
        return replace(reply, cached=True, attempts=0, cost_usd=0.0, seconds=0.0)

    def _from_cache(self, key: str, request: LLMRequest, output_model: Any,
                    check: Callable[[Any], None] | None = None) -> LLMReply | None:
        if self.store is None:
            return None
        row = self.store.get_llm_call(key)
        if row is None and request.api_base and self._has_legacy_rows():
            row = self.store.get_llm_call(request.legacy_cache_key())
            if row is not None and (row.key_version != 1
                                    or normalize_api_base(row.api_base) != normalize_api_base(request.api_base)):
                row = None  # a reply of another server (or of the default endpoint): never shared
        if row is None:
            return None
        try:
            value, _ = validate_reply(row.reply_text, row.finish_reason, request, output_model, check)
        except _InvalidReply:
            return None  # the output model or the checks changed since: ask again
        return LLMReply(value=value, text=row.reply_text, prompt_tokens=row.prompt_tokens,
                        completion_tokens=row.completion_tokens, cost_usd=0.0, seconds=0.0, attempts=0,
                        cached=True, finish_reason=row.finish_reason, cache_key=row.key, model=request.model)

    def _has_legacy_rows(self) -> bool:
        """Whether the cache holds rows of key version 1 sent to an api_base (looked up once per client)."""
        if self._legacy_rows is None:
            self._legacy_rows = bool(self.store.llm_calls_keyed_without_api_base())
        return self._legacy_rows

    # ---- stopping: a server nothing answers at, or one that fails every request ------------------------------------
    def _fault_copy(self) -> ServerFault:
        fault = self._fault
        return type(fault)(str(fault))  # type: ignore[arg-type]

    def _trip(self, fault: ServerFault) -> ServerFault:
        """Stop the client: every call in flight is cancelled (its callers get the fault), every later call raises
        it at once. Returns the fault to raise where it was found."""
        if self._fault is None:
            self._fault = fault
            current = asyncio.current_task()
            for task in list(self._inflight.values()):
                if task is not current and not task.done():
                    task.cancel()
        return self._fault_copy()

    def _record(self, kind: str, request: LLMRequest, reason: str) -> ServerFault | None:
        """Note one request's outcome ("ok", or a failure kind) for the circuit breaker; the fault to raise when the
        last breaker_window requests had no success and mostly failed alike."""
        window = self.retry.breaker_window
        if window <= 0:
            return None
        self._recent.append(kind)
        if kind == "ok" or len(self._recent) < window or "ok" in self._recent:
            return None
        top, n = collections.Counter(self._recent).most_common(1)[0]
        if n < self.retry.breaker_share * window:
            return None
        where = where_of(request.api_base, request.model)
        hint = {"timeout": f"is it overloaded or hung? (a request may take --timeout {self.retry.timeout:g} s)",
                "server": "see the server's log",
                "connection": "is it restarting, or behind a proxy that drops connections?"}.get(top, "")
        return self._trip(CircuitOpen(scrub_text(
            f"stopped early: the last {window} requests to {where} all failed, {n} of them {_KIND_WORDS.get(top, top)}"
            f" (last: {reason}); {hint}. Finished rows are saved: run the same command again to go on")))

    # ---- one call: repairs around transport retries, under a deadline -------------------------------------------
    async def _call(self, request: LLMRequest, output_model: Any, key: str,
                    check: Callable[[Any], None] | None = None, start: tuple[str, str] | None = None) -> LLMReply:
        state = {"attempts": 0, "key": key, "force": False, "claimed": False, "written": False, "unreachable": 0,
                 "start": start}
        try:
            while True:
                try:
                    # the deadline runs from the call's first request, not from when it was queued: a run that
                    # gathers 25,000 calls behind 64 slots must not time out the ones still waiting their turn
                    async with asyncio.timeout(None) as clock:  # rescheduled by _send at the first request
                        state["clock"] = clock
                        return await self._call_inner(request, output_model, key, state, check)
                except _AnsweredElsewhere as exc:
                    state["claimed"] = False
                    reply = await self._await_other(key, request, output_model, exc.status, state, check)
                    if reply is not None:
                        return reply
                    # the other client gave the claim back without a reply (its call failed): ask ourselves
        except asyncio.TimeoutError:
            raise LLMCallFailed(f"no valid reply within the call's deadline of {self.retry.deadline:g} s "
                                f"({state['attempts']} requests; --deadline)", state["attempts"]) from None
        finally:
            if state["claimed"] and not state["written"]:
                self._release_claim(key)

    # ---- claims across processes ---------------------------------------------------------------------------------
    def _claims_on(self) -> bool:
        return self.claims and self.store is not None and str(getattr(self.store, "path", ":memory:")) != ":memory:"

    def _get_writer(self) -> Any:
        if self._writer is None:
            from storage.llm_cache_writer import LLMCallWriter

            share = self._share if self.budget_usd is not None and self.budget_scope else None
            self._writer = LLMCallWriter(str(self.store.path), on_batch=share,
                                         claimer=(self._owner, self._lease, holder_alive))
        return self._writer

    def _share(self, store: Any) -> None:
        """Runs in the writer thread at the end of every transaction: record this client's spend in its budget
        scope and learn the others'."""
        self._others_spent = store.share_budget(self.budget_scope, self._owner, self._charged, self._lease,
                                                holder_alive, join=not self._share_joined, ended=self._closing)
        self._share_joined = True

    async def _claim(self, key: str, force: bool) -> str:
        """Claim ``key`` just before sending it: storage.llm_calls CLAIMED, CACHED or BUSY."""
        _LIVE_TOKENS.add(self._owner.token)
        if self.background_writes:
            return await asyncio.wrap_future(self._get_writer().submit_claim(key, force))
        forced = frozenset([key]) if force else frozenset()
        return self.store.claim_llm_calls([key], self._owner, self._lease, holder_alive, force=forced)[key]

    def _release_claim(self, key: str) -> None:
        """Give a claim back (the call failed or was cancelled), without waiting for the write."""
        try:
            if self._writer is not None:
                self._writer.submit_release(key)
            else:
                self.store.release_llm_claims([key], self._owner.token)
        except Exception:  # the claim's holder is this process: once it ends, others take the claim over
            pass

    async def _await_other(self, key: str, request: LLMRequest, output_model: Any, status: str,
                           state: dict, check: Callable[[Any], None] | None = None) -> LLMReply | None:
        """Wait for the reply of the client that holds ``key``'s claim; None when it gave the claim back without
        one, or died (then this client sends the request)."""
        from storage.llm_calls import CACHED

        if status == CACHED:
            reply = self._from_cache(key, request, output_model, check)
            if reply is None:
                state["force"] = True  # a cached reply this output model rejects: ask again
            return reply
        delay = 0.02
        while True:
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, 0.5)
            reply = self._from_cache(key, request, output_model, check)
            if reply is not None:
                return reply
            holder = self.store.llm_claim_holder(key)
            if holder is None or holder.token == self._owner.token or not holder_alive(holder, time.time()):
                return None

    def _secret_list(self) -> list[str]:
        if self._secrets is None:
            self._secrets = secret_values()
        return self._secrets

    async def _call_inner(self, request: LLMRequest, output_model: Any, key: str, state: dict,
                          check: Callable[[Any], None] | None = None) -> LLMReply:
        deadline_at = None  # set by _send at the call's first request (state["deadline_at"])
        messages = list(request.messages)
        repairs = 0
        if state.get("start") is not None:  # the reply came otherwise (a batch) and was invalid: repair it
            bad_text, reason = state.pop("start")
            messages = repair_messages(request, bad_text, reason)
            repairs = 1
            self.stats.repairs += 1
        while True:
            response, seconds = await self._send(request, messages, state, deadline_at)
            try:
                text, finish, pt, ct = read_response(response)
            except _InvalidReply as exc:
                text, reason = "", str(exc)
            else:
                # a reply may echo what it was sent (an Authorization header, a key): nothing secret goes further
                text = scrub_text(text, self._secret_list())
                cost, estimated = self._account(request, messages, text, pt, ct)
                try:
                    value, parsed = validate_reply(text, finish, request, output_model, check)
                except _InvalidReply as exc:
                    reason = str(exc)
                else:
                    reply = LLMReply(value=value, text=text, prompt_tokens=pt, completion_tokens=ct, cost_usd=cost,
                                     seconds=seconds, attempts=state["attempts"], cached=False,
                                     finish_reason=finish, cache_key=key, model=request.model,
                                     cost_estimated=estimated)
                    await self._write_cache(request, reply, parsed)
                    state["written"] = True  # the cache row replaced the claim
                    return reply
            if repairs >= self.retry.max_repairs:
                raise LLMCallFailed(f"invalid reply after {repairs} repair attempts: {reason}", state["attempts"])
            if state["attempts"] >= self.retry.max_attempts:
                raise LLMCallFailed(f"invalid reply after {repairs} repair attempts ({state['attempts']} requests, "
                                    f"the most a call may send: --attempts): {reason}", state["attempts"])
            repairs += 1
            self.stats.repairs += 1
            messages = repair_messages(request, text, reason)

    async def _write_cache(self, request: LLMRequest, reply: LLMReply, parsed: Any) -> None:
        """Commit the reply to the cache before the caller gets it. With a database file the write runs in a
        writer thread (group commit, the event loop never waits for a disk sync); with ":memory:" here."""
        if self.store is None:
            return
        from storage.llm_calls import LLMCall

        call = LLMCall(
            key=reply.cache_key, run_id=self.run_id, model=request.model, api_base=request.api_base,
            template=request.template,
            request={"messages": list(request.messages), "params": request.params, "schema": request.schema,
                     "schema_name": request.schema_name, "sample_index": request.sample_index},
            reply_text=reply.text, parsed=parsed, finish_reason=reply.finish_reason,
            prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens,
            usage_known=reply.prompt_tokens is not None, cost_usd=reply.cost_usd, seconds=reply.seconds,
            attempts=reply.attempts)
        path = str(getattr(self.store, "path", ":memory:"))
        if not self.background_writes or path == ":memory:":
            self.store.put_llm_call(call)
            return
        await asyncio.wrap_future(self._get_writer().submit(call))

    # ---- one request with transport retries ----------------------------------------------------------------------
    def _limits_for(self, model: str) -> _Limits:
        loop_id = id(asyncio.get_running_loop())
        lim = self._limits.get((model, loop_id))
        if lim is None:
            lim = self._limits[(model, loop_id)] = _Limits(self.limits.get(model, self.default_limits))
        return lim

    def _check_budget(self) -> None:
        if self.budget_usd is None:
            return
        if self._uncounted:
            raise BudgetExhausted(
                f"the budget of {self.budget_usd:g} USD cannot be kept: no price is known for "
                f"{', '.join(sorted(self._uncounted))}, so its replies cannot be counted; give its price (--price "
                "IN,OUT or prices: in the config) or --budget-unknown-as IN,OUT; no new request sent")
        spent = self._charged + self._others_spent
        if spent >= self.budget_usd:
            others = f", {self._others_spent:.4f} of it by concurrent runs" if self._others_spent else ""
            raise BudgetExhausted(f"budget of {self.budget_usd:g} USD spent ({spent:.4f} USD{others}); "
                                  "no new request sent")

    async def _send(self, request: LLMRequest, messages: list[dict], state: dict,
                    deadline_at: float) -> tuple[Any, float]:
        """Send one request, retrying transport failures within the call's attempts (state["attempts"] counts
        every request of the call). Returns (response, seconds of the successful request)."""
        kwargs: dict[str, Any] = dict(request.params)
        kwargs.update(model=request.model, messages=messages, timeout=self.retry.timeout, max_retries=0,
                      num_retries=0)
        if request.api_base:
            kwargs["api_base"] = request.api_base
        fmt = response_format_for(request)
        if fmt is not None:
            kwargs["response_format"] = fmt
        est_tokens = sum(len(str(m.get("content", ""))) for m in messages) // 4 + int(
            request.params.get("max_tokens") or request.params.get("max_completion_tokens") or 0)
        limits = self._limits_for(request.model)
        completion = self._completion()
        while True:
            if self._fault is not None:
                raise self._fault_copy()
            if state["attempts"] >= self.retry.max_attempts:
                raise LLMCallFailed(f"{state.get('last_reason', 'no reply')} (gave up after {state['attempts']} "
                                    "requests, the most a call may send: --attempts)", state["attempts"]) from None
            self._check_budget()
            await limits.wait(est_tokens)
            self._check_budget()
            async with limits.in_flight:
                self._check_budget()
                if self._fault is not None:
                    raise self._fault_copy()
                if self._claims_on():
                    status = await self._claim(state["key"], state["force"])
                    if status != "claimed":
                        raise _AnsweredElsewhere(status)
                    state["claimed"] = True
                state["attempts"] += 1
                self.stats.requests += 1
                started = time.monotonic()
                if "deadline_at" not in state:  # the call's first request: its deadline starts now
                    state["deadline_at"] = started + self.retry.deadline
                    clock = state.get("clock")
                    if clock is not None:
                        clock.reschedule(asyncio.get_running_loop().time() + self.retry.deadline)
                try:
                    async with asyncio.timeout(self._guard_timeout):
                        response = await completion(**kwargs)
                    self._record("ok", request, "")
                    return response, time.monotonic() - started
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # classified below
                    failure = exc
            kind = fault_kind(failure)
            reason = f"timeout: no reply within {self.retry.timeout:g} s" if kind == "timeout" else error_reason(failure)
            state["last_reason"] = reason
            if kind == "config":  # refused before sending: no retry, and every other call would fail alike
                raise self._trip(ClientMisconfigured(config_message(request.model, failure))) from None
            if kind == "unreachable":
                state["unreachable"] += 1
                if state["unreachable"] > 1:  # one quick retry, then the run stops
                    raise self._trip(ServerUnreachable(unreachable_message(request.api_base, request.model,
                                                                           failure))) from None
                self.stats.retries += 1
                await self._sleep(self.retry.unreachable_wait)
                continue
            if not is_retryable(failure):
                raise LLMCallFailed(reason, state["attempts"]) from None
            tripped = self._record("ok" if kind == "rate_limit" else kind, request, reason)
            if tripped is not None:
                raise tripped from None
            if state["attempts"] >= self.retry.max_attempts:
                raise LLMCallFailed(f"{reason} (gave up after {state['attempts']} requests, the most a call may "
                                    "send: --attempts)", state["attempts"]) from None
            wait = retry_after_seconds(failure)
            if wait is not None:
                wait = min(wait, self.retry.retry_after_cap)
            else:
                wait = self._rng.uniform(0, min(self.retry.backoff_max,
                                                self.retry.backoff_base * 2 ** state.get("retries", 0)))
            state["retries"] = state.get("retries", 0) + 1
            if time.monotonic() + wait > state.get("deadline_at", deadline_at or float("inf")):
                raise LLMCallFailed(f"{reason} (waiting {wait:.1f} s more would pass the call's "
                                    f"deadline of {self.retry.deadline:g} s)",
                                    state["attempts"]) from None
            self.stats.retries += 1
            await self._sleep(wait)

    # ---- cost ----------------------------------------------------------------------------------------------------
    def count_tokens(self, model: str, messages: list[dict] | None = None, text: str | None = None) -> int:
        """Tokens of messages or of a text, counted offline (token_counter; never raises: characters / 4 when
        counting fails)."""
        counter = self._token_counter
        if counter is None and self._used_litellm:
            litellm = import_litellm()

            def counter(model, messages=None, text=None):  # noqa: E306
                return litellm.token_counter(model=model, messages=messages, text=text)
            self._token_counter = counter
        chars = sum(len(str(m.get("content", ""))) for m in messages) if messages is not None else len(text or "")
        if counter is None:
            return max(1, chars // 4)
        try:
            return int(counter(model, messages=messages, text=text) if messages is not None
                       else counter(model, text=text))
        except Exception:
            return max(1, chars // 4)

    def _account(self, request: LLMRequest, messages: list[dict], text: str, prompt_tokens: int | None,
                 completion_tokens: int | None, price_factor: float = 1.0) -> tuple[float | None, bool]:
        """Count tokens and cost of one reply (valid or not: every reply is paid for); returns (cost, estimated).
        A reply without usage is priced from tokens counted offline (estimated); price_factor: the share of the
        price paid (a provider batch: 0.5). Never raises."""
        model = request.model
        estimated = prompt_tokens is None or completion_tokens is None
        if estimated:
            self.stats.usage_unknown += 1
            pt, ct = self.count_tokens(model, messages=messages), self.count_tokens(model, text=text)
        else:
            pt, ct = prompt_tokens, completion_tokens
            self.stats.prompt_tokens += pt
            self.stats.completion_tokens += ct
        cost = self.cost_of(model, pt, ct)
        if cost is not None:
            cost *= price_factor
        if cost is None:
            self.stats.unpriced += 1
            if self.budget_unknown_price is not None:
                self._charged += self.budget_unknown_price.cost(pt, ct) * price_factor
            elif self.budget_usd is not None:
                self._uncounted.add(model)
        else:
            self.stats.cost_usd += cost
            self._charged += cost
            if estimated:
                self.stats.cost_estimated_usd += cost
        return cost, estimated and cost is not None

    def price_known(self, model: str) -> bool:
        """Whether a cost can be given for this model's replies (a configured price, or litellm's price map)."""
        return self.cost_of(model, 1000, 1000) is not None

    def cost_of(self, model: str, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
        """USD for these tokens: the configured Price of the model, else litellm's price map (when enabled); None
        when the tokens or the price are unknown. Never raises."""
        if prompt_tokens is None or completion_tokens is None:
            return None
        price = self.prices.get(model)
        if price is not None:
            return price.cost(prompt_tokens, completion_tokens)
        if not self.use_litellm_prices or model in self._unknown_price:
            return None
        try:
            litellm = import_litellm()
            p, c = litellm.cost_per_token(model=model, prompt_tokens=prompt_tokens,
                                          completion_tokens=completion_tokens)
            return float(p) + float(c)
        except Exception:
            self._unknown_price.add(model)
            return None


# ---------------------------------------------------------------------------------------------------------------------
# Dry runs
# ---------------------------------------------------------------------------------------------------------------------
def count_prompt_tokens(request: LLMRequest) -> int:
    """Prompt tokens of a request, counted offline with litellm's bundled tokenizers (tiktoken for OpenAI models;
    an estimate for others when their tokenizer is not bundled). Nothing is downloaded (LITELLM_OFFLINE_MODE)."""
    litellm = import_litellm()
    return int(litellm.token_counter(model=request.model, messages=list(request.messages)))


def cached_keys(store: Any) -> set[str]:
    """What a store's call cache holds, for is_cached: every key, and for each row of key version 1 sent to an
    api_base (its key leaves the api_base out) the entry ``KEY|NORMALISED_API_BASE``."""
    keys = store.llm_call_keys()
    keys.update(f"{key}|{normalize_api_base(base)}" for key, base in store.llm_calls_keyed_without_api_base())
    return keys


def is_cached(request: LLMRequest, keys: set[str]) -> bool:
    """Whether the cache whose cached_keys() are ``keys`` answers this request without a request being sent."""
    if request.cache_key() in keys:
        return True
    base = normalize_api_base(request.api_base)
    return base is not None and f"{request.legacy_cache_key()}|{base}" in keys


@dataclass
class DryRunEstimate:
    """What a set of requests would cost at most.

    calls: requests not in the cache. prompt_tokens: their prompt tokens (counted offline).
    max_completion_tokens: the sum of their max_tokens (None when a request has no max_tokens: then there is no
    upper bound). cost_upper_usd: prompt tokens x input price + max_tokens x output price, summed (None when a model
    has no known price or a request no max_tokens). unpriced_models: models without a price.
    """

    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    max_completion_tokens: int | None = 0
    cost_upper_usd: float | None = 0.0
    unpriced_models: set[str] = field(default_factory=set)


def dry_run_estimate(requests: Iterable[LLMRequest], prices: dict[str, Price] | None = None,
                     cached_keys: set[str] | None = None,
                     token_counter: Callable[[LLMRequest], int] = count_prompt_tokens,
                     use_litellm_prices: bool = True) -> DryRunEstimate:
    """Count calls, prompt tokens and an upper bound of the cost without sending anything.

    cached_keys: what the cache holds (cached_keys(store)); those requests cost nothing and are counted in
    ``cached``. Prices: the given ones first, else litellm's price map (when use_litellm_prices).
    """
    pricer = LLMClient(completion_fn=_never_called, prices=prices, use_litellm_prices=use_litellm_prices)
    out = DryRunEstimate()
    cached_keys = cached_keys or set()
    for request in requests:
        if is_cached(request, cached_keys):
            out.cached += 1
            continue
        out.calls += 1
        tokens = token_counter(request)
        out.prompt_tokens += tokens
        max_tokens = request.params.get("max_tokens") or request.params.get("max_completion_tokens")
        if max_tokens is None:
            out.max_completion_tokens = None
            out.cost_upper_usd = None
            continue
        if out.max_completion_tokens is not None:
            out.max_completion_tokens += int(max_tokens)
        cost = pricer.cost_of(request.model, tokens, int(max_tokens))
        if cost is None:
            out.unpriced_models.add(request.model)
            out.cost_upper_usd = None
        elif out.cost_upper_usd is not None:
            out.cost_upper_usd += cost
    return out


async def _never_called(**kwargs: Any) -> Any:  # pragma: no cover - a dry run sends nothing
    raise RuntimeError("a dry run sends no request")
