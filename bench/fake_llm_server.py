"""A fake OpenAI-compatible chat-completions server for tests, benchmarks and trying the generator offline.

    python bench/fake_llm_server.py --port 8011 [--latency 0.2] [--error-rate 0.05] [--rate-limit-rate 0.05]

Then point a model at it, e.g. ``--model openai/fake --api-base http://127.0.0.1:8011/v1`` (litellm's ``openai/``
provider wants some key: ``export OPENAI_API_KEY=anything``).

``POST /v1/chat/completions`` (and ``/chat/completions``) answers every request. When the request carries a
``response_format`` of type ``json_schema`` the reply is a JSON instance valid for that schema, made by a generic
generator (objects, ``$defs``/``$ref``, enum/const, arrays with min/maxItems, strings with min/maxLength and date
formats, integers/numbers with bounds, anyOf/oneOf/nullable, allOf), deterministic from the request body (the same
body gives the same reply). :meth:`FakeLLMServer.register` installs a reply maker for one schema name, for replies that
must also satisfy rules a schema cannot state.

Faults (:meth:`FakeLLMServer.add_fault`): latency, 429 with Retry-After, 500, a hanging request, invalid JSON, a
truncated reply (finish_reason "length"), a reply that ignores the schema, a reply without ``usage``, a body cut
mid-way, a reply that echoes the request's Authorization header (echo_auth). A request log counts requests per body hash and the most requests ever in flight at once.

The batch API as OpenAI defines it (``POST /v1/files``, ``GET /v1/files/{id}/content``, ``POST /v1/batches``,
``GET /v1/batches[/{id}]``, cancel): a batch completes after ``batch.delay`` seconds, its lines answered as the
chat endpoint would; it can fail lines, expire with lines left, or fail whole (:class:`BatchSettings`). Batch lines
are logged in ``log.batch_lines``, not in ``log.requests``; ``batch_calls`` counts the batch endpoints' requests.

In tests: the ``fake_llm`` fixture (tests/llm_fixtures.py) starts one on 127.0.0.1 on a free port in a background
thread.
"""
from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import hashlib
import json
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from aiohttp import web

#: ``maker(body, rng) -> dict | str``: the reply for a request whose schema has this name (a dict is sent as JSON).
ReplyMaker = Callable[[dict, random.Random], Any]

FAULT_KINDS = ("latency", "status", "hang", "invalid_json", "truncated", "ignore_schema", "no_usage", "cut",
               "echo_auth")

_WORDS = ("river", "garden", "morning", "violin", "harbor", "lantern", "meadow", "pepper", "canvas", "orbit",
          "thunder", "velvet", "maple", "compass", "quartz", "saffron", "tundra", "willow", "ember", "cobalt")


def body_hash(body: bytes | dict) -> str:
    """sha256 hex of a request body (a dict is hashed as canonical JSON, bytes as they are)."""
    if isinstance(body, dict):
        body = json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(body).hexdigest()


def canonical_body_hash(body: dict) -> str:
    """The hash of the parts of a request that define it (model, messages, response_format, sampling), so that the
    same call hashed at the server and in a test agree whatever else the SDK adds."""
    keep = {k: body.get(k) for k in ("model", "messages", "response_format", "temperature", "max_tokens", "seed",
                                     "top_p", "n")}
    return body_hash(keep)


# ---------------------------------------------------------------------------------------------------------------------
# A JSON instance for a JSON schema
# ---------------------------------------------------------------------------------------------------------------------
class SchemaInstanceMaker:
    """Makes one instance valid for a JSON schema (draft 2020-12 subset that pydantic and OpenAI strict mode use).

    Every property of an object is filled (strict structured output requires them all). A ``pattern`` is decoded
    as guided decoding does: the string is drawn from the pattern itself (Python's regex parser, every construct
    of the subset prefval's schemas use: literals, classes, groups, alternation, repeats); a repeat of "any
    character" becomes words, with a number among them so that texts of one reply differ. ``not`` is ignored.
    """

    def __init__(self, root: dict, rng: random.Random):
        self.root = root
        self.rng = rng

    def make(self, schema: dict | bool | None = None, depth: int = 0) -> Any:
        schema = self.root if schema is None else schema
        if schema is True or schema == {}:
            return self._word()
        if depth > 12:
            return None
        if "$ref" in schema:
            return self.make(self._resolve(schema["$ref"]), depth + 1)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.rng.choice(schema["enum"])
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = schema[key]
                non_null = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
                return self.make(self.rng.choice(non_null or options), depth + 1)
        if "allOf" in schema:
            merged: dict = {}
            for part in schema["allOf"]:
                part = self._resolve(part["$ref"]) if "$ref" in part else part
                for k, v in part.items():
                    if k == "properties":
                        merged.setdefault("properties", {}).update(v)
                    elif k == "required":
                        merged.setdefault("required", []).extend(v)
                    else:
                        merged[k] = v
            rest = {k: v for k, v in schema.items() if k != "allOf"}
            return self.make({**merged, **rest}, depth + 1)
        kind = schema.get("type")
        if isinstance(kind, list):
            non_null = [k for k in kind if k != "null"]
            kind = self.rng.choice(non_null) if non_null else "null"
        if kind is None:
            kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
        return getattr(self, f"_make_{kind}")(schema, depth)

    def _resolve(self, ref: str) -> dict:
        if not ref.startswith("#/"):
            raise ValueError(f"only local $ref are supported, got {ref!r}")
        node: Any = self.root
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def _word(self) -> str:
        return self.rng.choice(_WORDS)

    def _make_object(self, schema: dict, depth: int) -> dict:
        props = schema.get("properties", {})
        return {name: self.make(sub, depth + 1) for name, sub in props.items()}

    def _make_array(self, schema: dict, depth: int) -> list:
        lo = int(schema.get("minItems", 1))
        hi = int(schema.get("maxItems", max(lo, 3)))
        n = self.rng.randint(lo, max(lo, min(hi, lo + 3)))
        items = schema.get("items", {})
        prefix = schema.get("prefixItems", [])
        out = [self.make(p, depth + 1) for p in prefix[:n]]
        out += [self.make(items, depth + 1) for _ in range(n - len(out))]
        if schema.get("uniqueItems"):
            seen, unique = set(), []
            for i, v in enumerate(out):
                tag = json.dumps(v, sort_keys=True)
                while tag in seen and isinstance(v, str):
                    v = f"{v}{i}"
                    tag = json.dumps(v, sort_keys=True)
                seen.add(tag)
                unique.append(v)
            out = unique
        return out

    def _text(self, lo: int, hi: float) -> str:
        """Words (and a number) of lo..hi characters."""
        words = [self._word() for _ in range(self.rng.randint(3, 7))]
        words.insert(self.rng.randint(0, len(words)), str(self.rng.randint(100, 9999)))
        text = " ".join(words)
        while len(text) < lo:
            text += " " + self._word()
        if len(text) > hi:
            text = text[: int(hi)].rstrip() or text[: int(hi)]
            text += "x" * (lo - len(text))
        return text

    def _from_pattern(self, pattern: str) -> str:
        import re._parser as sre  # Python 3.11+

        return self._gen_seq(list(sre.parse(pattern)))

    def _any_char(self, seq: list) -> bool:
        """Whether a repeated part stands for one character of any kind ("." or a line end, [\\s\\S] ...)."""
        import re._constants as c

        if len(seq) != 1:
            return False
        op, av = seq[0]
        if op is c.SUBPATTERN:
            return self._any_char(list(av[-1]))
        if op is c.BRANCH:
            return any(len(alt) == 1 and alt[0][0] is c.ANY for alt in av[1])
        if op is c.ANY:
            return True
        if op is c.IN:
            cats = {x[1] for x in av if x[0] is c.CATEGORY}
            return {c.CATEGORY_SPACE, c.CATEGORY_NOT_SPACE} <= cats
        return False

    def _gen_seq(self, seq: list) -> str:
        return "".join(self._gen(op, av) for op, av in seq)

    def _gen(self, op, av) -> str:
        import re._constants as c

        if op is c.LITERAL:
            return chr(av)
        if op is c.AT:
            return ""
        if op is c.ANY:
            return self.rng.choice("abcdefghij")
        if op is c.NOT_LITERAL:
            return "x" if chr(av) != "x" else "y"
        if op is c.IN:
            chars: list[str] = []
            for kind, val in av:
                if kind is c.LITERAL:
                    chars.append(chr(val))
                elif kind is c.RANGE:
                    chars.extend(chr(x) for x in range(val[0], val[1] + 1))
                elif kind is c.CATEGORY:
                    chars.extend({c.CATEGORY_DIGIT: "0123456789", c.CATEGORY_SPACE: " ",
                                  c.CATEGORY_WORD: "abcxyz019_"}.get(val, "abc"))
            return self.rng.choice(chars or ["a"])
        if op is c.BRANCH:
            return self._gen_seq(list(self.rng.choice(av[1])))
        if op is c.SUBPATTERN:
            return self._gen_seq(list(av[-1]))
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
            lo, hi, sub = av
            sub = list(sub)
            hi = float("inf") if hi is c.MAXREPEAT else hi
            if self._any_char(sub):
                return self._text(lo, hi)
            n = self.rng.randint(lo, int(min(hi, lo + 3)))
            return "".join(self._gen_seq(sub) for _ in range(n))
        raise ValueError(f"pattern construct {op} is not supported by the fake decoder")

    def _make_string(self, schema: dict, depth: int) -> str:
        if "pattern" in schema:
            return self._from_pattern(schema["pattern"])
        fmt = schema.get("format")
        if fmt in ("date", "date-time"):
            day = _dt.date(1990, 1, 1) + _dt.timedelta(days=self.rng.randint(0, 12000))
            return day.isoformat() if fmt == "date" else f"{day.isoformat()}T12:00:00Z"
        lo = int(schema.get("minLength", 0))
        hi = schema.get("maxLength")
        n_words = self.rng.randint(2, 6)
        text = " ".join(self._word() for _ in range(n_words))
        while len(text) < lo:
            text += " " + self._word()
        if hi is not None:
            text = text[: int(hi)].rstrip() or text[: int(hi)]
            while len(text) < lo:  # rstrip made it too short
                text += "x"
        return text

    def _number_bounds(self, schema: dict, step: float) -> tuple[float, float]:
        lo = schema.get("minimum", schema.get("exclusiveMinimum", None))
        if "exclusiveMinimum" in schema and "minimum" not in schema:
            lo = schema["exclusiveMinimum"] + step
        hi = schema.get("maximum", None)
        if "exclusiveMaximum" in schema and "maximum" not in schema:
            hi = schema["exclusiveMaximum"] - step
        if lo is None and hi is None:
            lo, hi = 0, 100
        elif lo is None:
            lo = hi - 100
        elif hi is None:
            hi = lo + 100
        return lo, hi

    def _make_integer(self, schema: dict, depth: int) -> int:
        lo, hi = self._number_bounds(schema, 1)
        import math
        return self.rng.randint(math.ceil(lo), math.floor(hi))

    def _make_number(self, schema: dict, depth: int) -> float:
        lo, hi = self._number_bounds(schema, 1e-6)
        return round(self.rng.uniform(lo, hi), 3) if hi - lo > 0.01 else float(lo)

    def _make_boolean(self, schema: dict, depth: int) -> bool:
        return self.rng.random() < 0.5

    def _make_null(self, schema: dict, depth: int) -> None:
        return None


def instance_for_schema(schema: dict, seed: int | str = 0) -> Any:
    """A JSON value valid for ``schema`` (see :class:`SchemaInstanceMaker`), the same for the same seed."""
    return SchemaInstanceMaker(schema, random.Random(seed)).make()


# ---------------------------------------------------------------------------------------------------------------------
# Faults and the request log
# ---------------------------------------------------------------------------------------------------------------------
@dataclass
class Fault:
    """One fault rule: applied to the next ``times`` requests that ``match`` (None = every request).

    kind: one of FAULT_KINDS. status: the HTTP status for kind "status" (429, 500, 400 ...). retry_after: seconds
    sent as ``Retry-After`` with a status. seconds: the extra latency of kind "latency", or how long a "hang" lasts.
    """

    kind: str
    times: int = 1
    match: Callable[[dict], bool] | None = None
    status: int = 500
    retry_after: float | None = None
    seconds: float = 3600.0
    used: int = 0


@dataclass
class LoggedRequest:
    """One request as the server saw it."""

    body: dict
    hash: str
    at: float
    fault: str | None
    status: int


@dataclass
class RequestLog:
    """What the server received (thread-safe through the server's lock)."""

    requests: list[LoggedRequest] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    batch_lines: list[LoggedRequest] = field(default_factory=list)  #: lines answered through the batch API

    def count(self) -> int:
        return len(self.requests)

    def per_hash(self) -> Counter:
        """Requests per canonical body hash (see :func:`canonical_body_hash`)."""
        return Counter(r.hash for r in self.requests)


@dataclass
class BatchSettings:
    """How the fake's batch API behaves (``FakeLLMServer.batch``).

    delay: seconds from creation until a batch is completed (in_progress before). fail_line: ``f(custom_id,
    body) -> bool``: lines answered with an error (status 500 in the error file). expire_after: when set, a batch
    expires (status "expired") at ``delay`` having answered only this many lines; the others are in the error file
    with code batch_expired. fail_batch: the whole batch fails validation (status "failed", no output).
    """

    delay: float = 0.0
    fail_line: Callable[[str, dict], bool] | None = None
    expire_after: int | None = None
    fail_batch: bool = False


@dataclass
class FakeBatch:
    id: str
    input_file_id: str
    endpoint: str
    created_at: float
    lines: list[dict]
    metadata: dict | None = None
    status: str = "validating"
    output_file_id: str | None = None
    error_file_id: str | None = None
    completed: int = 0
    failed: int = 0
    retrieved: int = 0


class FakeLLMServer:
    """The fake server. ``start()`` runs it in a background thread (for tests); ``serve()`` runs it in the
    current event loop (the command line).

    url: ``http://HOST:PORT/v1`` (the ``api_base`` to give litellm) once started.
    latency: seconds each reply waits before it is sent. error_rate / rate_limit_rate: share of requests
    answered 500 / 429 (drawn from the body hash, so deterministic per body), besides the explicit faults.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, latency: float = 0.0, seed: int = 0,
                 error_rate: float = 0.0, rate_limit_rate: float = 0.0, retry_after: float = 1.0):
        self.host, self.port = host, port
        self.latency = latency
        self.seed = seed
        self.error_rate, self.rate_limit_rate, self.random_retry_after = error_rate, rate_limit_rate, retry_after
        self.makers: dict[str, ReplyMaker] = {}
        self.faults: list[Fault] = []
        self.log = RequestLog()
        self.batch = BatchSettings()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, FakeBatch] = {}
        self.batch_calls: Counter = Counter()  #: requests to the batch endpoints, by kind (create_file, ...)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._stopping = False

    # ---- configuration (callable from any thread) ----------------------------------------------------------------
    def register(self, schema_name: str, maker: ReplyMaker) -> None:
        """Install a reply maker for requests whose json_schema is named ``schema_name``."""
        with self._lock:
            self.makers[schema_name] = maker

    def add_fault(self, kind: str, times: int = 1, match: Callable[[dict], bool] | None = None, **kwargs) -> Fault:
        """Add a fault rule (see :class:`Fault`); rules are tried in the order added, the first that matches applies."""
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {kind!r}; one of {', '.join(FAULT_KINDS)}")
        fault = Fault(kind=kind, times=times, match=match, **kwargs)
        with self._lock:
            self.faults.append(fault)
        return fault

    def reset(self) -> None:
        """Forget faults, makers and the request log."""
        with self._lock:
            self.faults.clear()
            self.makers.clear()
            self.log = RequestLog()
            self.batch = BatchSettings()
            self.files.clear()
            self.batches.clear()
            self.batch_calls.clear()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # ---- serving -------------------------------------------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_post("/chat/completions", self._handle)
        app.router.add_get("/v1/models", self._models)
        # the batch API as OpenAI defines it: upload a JSONL file (purpose batch), create a batch over it, poll it,
        # download its output and error files
        app.router.add_post("/v1/files", self._create_file)
        app.router.add_get("/v1/files/{file_id}/content", self._file_content)
        app.router.add_get("/v1/files/{file_id}", self._file_meta)
        app.router.add_post("/v1/batches", self._create_batch)
        app.router.add_get("/v1/batches", self._list_batches)
        app.router.add_get("/v1/batches/{batch_id}", self._retrieve_batch)
        app.router.add_post("/v1/batches/{batch_id}/cancel", self._cancel_batch)
        return app

    async def _start_site(self) -> None:
        self._runner = web.AppRunner(self.app(), handler_cancellation=True, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, backlog=1024)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def serve(self) -> None:
        """Serve until cancelled (the command line's loop)."""
        await self._start_site()
        print(f"fake LLM server on {self.url} (latency {self.latency} s)", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await self._runner.cleanup()  # type: ignore[union-attr]

    def start(self) -> "FakeLLMServer":
        """Start in a background thread; returns once it accepts connections."""
        ready = threading.Event()
        errors: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._start_site())
            except BaseException as exc:  # pragma: no cover - a port in use
                errors.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._runner.cleanup())  # type: ignore[union-attr]
            loop.close()

        self._thread = threading.Thread(target=run, name="fake-llm-server", daemon=True)
        self._thread.start()
        ready.wait(10)
        if errors:
            raise errors[0]
        return self

    def stop(self) -> None:
        """Stop the background server (hanging requests are cancelled)."""
        self._stopping = True
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    # ---- handlers ------------------------------------------------------------------------------------------------
    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fake", "object": "model"}]})

    # ---- the batch API ---------------------------------------------------------------------------------------------
    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-{hashlib.sha256(f'{prefix}{len(self.files)}{len(self.batches)}{time.time_ns()}'.encode()).hexdigest()[:20]}"

    def _file_object(self, file_id: str, purpose: str, filename: str = "input.jsonl") -> dict:
        return {"id": file_id, "object": "file", "bytes": len(self.files.get(file_id, b"")),
                "created_at": int(time.time()), "filename": filename, "purpose": purpose, "status": "processed"}

    async def _create_file(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form.get("file")
        data = upload.file.read() if hasattr(upload, "file") else str(upload or "").encode("utf-8")
        with self._lock:
            self.batch_calls["create_file"] += 1
            file_id = self._new_id("file")
            self.files[file_id] = data
        return web.json_response(self._file_object(file_id, str(form.get("purpose", "batch")),
                                                   getattr(upload, "filename", "input.jsonl")))

    async def _file_meta(self, request: web.Request) -> web.Response:
        file_id = request.match_info["file_id"]
        if file_id not in self.files:
            return web.json_response({"error": {"message": "no such file", "type": "invalid_request_error"}},
                                     status=404)
        return web.json_response(self._file_object(file_id, "batch"))

    async def _file_content(self, request: web.Request) -> web.Response:
        file_id = request.match_info["file_id"]
        with self._lock:
            self.batch_calls["file_content"] += 1
            data = self.files.get(file_id)
        if data is None:
            return web.json_response({"error": {"message": "no such file", "type": "invalid_request_error"}},
                                     status=404)
        return web.Response(body=data, content_type="application/octet-stream")

    def _batch_object(self, b: FakeBatch) -> dict:
        return {"id": b.id, "object": "batch", "endpoint": b.endpoint, "errors": None,
                "input_file_id": b.input_file_id, "completion_window": "24h", "status": b.status,
                "output_file_id": b.output_file_id, "error_file_id": b.error_file_id,
                "created_at": int(b.created_at), "in_progress_at": None, "expires_at": int(b.created_at) + 86400,
                "finalizing_at": None, "completed_at": None, "failed_at": None, "expired_at": None,
                "cancelling_at": None, "cancelled_at": None,
                "request_counts": {"total": len(b.lines), "completed": b.completed, "failed": b.failed},
                "metadata": b.metadata}

    async def _create_batch(self, request: web.Request) -> web.Response:
        body = await request.json()
        with self._lock:
            self.batch_calls["create_batch"] += 1
            data = self.files.get(body.get("input_file_id", ""))
        if data is None:
            return web.json_response({"error": {"message": "no such input file", "type": "invalid_request_error"}},
                                     status=400)
        lines = [json.loads(x) for x in data.decode("utf-8").splitlines() if x.strip()]
        b = FakeBatch(id=self._new_id("batch"), input_file_id=body["input_file_id"],
                      endpoint=body.get("endpoint", "/v1/chat/completions"), created_at=time.time(), lines=lines,
                      metadata=body.get("metadata"))
        with self._lock:
            self.batches[b.id] = b
        return web.json_response(self._batch_object(b))

    async def _list_batches(self, request: web.Request) -> web.Response:
        with self._lock:
            self.batch_calls["list_batches"] += 1
            data = [self._batch_object(b) for b in self.batches.values()]
        return web.json_response({"object": "list", "data": data, "has_more": False,
                                  "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None})

    async def _cancel_batch(self, request: web.Request) -> web.Response:
        b = self.batches.get(request.match_info["batch_id"])
        if b is None:
            return web.json_response({"error": {"message": "no such batch"}}, status=404)
        b.status = "cancelled"
        return web.json_response(self._batch_object(b))

    async def _retrieve_batch(self, request: web.Request) -> web.Response:
        b = self.batches.get(request.match_info["batch_id"])
        if b is None:
            return web.json_response({"error": {"message": "no such batch", "type": "invalid_request_error"}},
                                     status=404)
        with self._lock:
            self.batch_calls["retrieve_batch"] += 1
            b.retrieved += 1
        if b.status in ("validating", "in_progress"):
            if self.batch.fail_batch:
                b.status = "failed"
            elif time.time() - b.created_at < self.batch.delay:
                b.status = "in_progress"
            else:
                self._finish_batch(b)
        return web.json_response(self._batch_object(b))

    def _finish_batch(self, b: FakeBatch) -> None:
        """Answer the batch's lines as the chat endpoint would (reply makers, schema instances, usage), write its
        output and error files."""
        out, err = [], []
        limit = self.batch.expire_after
        for n, line in enumerate(b.lines):
            cid, body = line.get("custom_id"), line.get("body") or {}
            if limit is not None and n >= limit:
                err.append({"id": f"batch_req_{n}", "custom_id": cid, "response": None,
                            "error": {"code": "batch_expired", "message": "This request could not be executed "
                                                                          "before the completion window expired."}})
                continue
            if self.batch.fail_line is not None and self.batch.fail_line(cid, body):
                err.append({"id": f"batch_req_{n}", "custom_id": cid,
                            "response": {"status_code": 500, "request_id": f"req_{n}",
                                         "body": {"error": {"message": "fake 500", "type": "server_error"}}},
                            "error": None})
                continue
            h = canonical_body_hash(body)
            entry = LoggedRequest(body=body, hash=h, at=time.monotonic(), fault="batch", status=200)
            with self._lock:
                self.log.batch_lines.append(entry)
            out.append({"id": f"batch_req_{n}", "custom_id": cid,
                        "response": {"status_code": 200, "request_id": f"req_{n}", "body": self._reply(body, h, None)},
                        "error": None})
        b.completed, b.failed = len(out), len(err)
        with self._lock:
            if out:
                b.output_file_id = self._new_id("file")
                self.files[b.output_file_id] = "".join(json.dumps(x) + "\n" for x in out).encode("utf-8")
            if err:
                b.error_file_id = self._new_id("file")
                self.files[b.error_file_id] = "".join(json.dumps(x) + "\n" for x in err).encode("utf-8")
        b.status = "expired" if limit is not None and limit < len(b.lines) else "completed"

    def _pick_fault(self, body: dict) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.used < fault.times and (fault.match is None or fault.match(body)):
                    fault.used += 1
                    return fault
        return None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            return web.json_response({"error": {"message": "body is not JSON", "type": "invalid_request_error"}},
                                     status=400)
        h = canonical_body_hash(body)
        fault = self._pick_fault(body)
        if fault is None and (self.error_rate or self.rate_limit_rate):
            draw = random.Random(f"{self.seed}:{h}:{self.log.per_hash()[h]}").random()
            if draw < self.rate_limit_rate:
                fault = Fault("status", status=429, retry_after=self.random_retry_after)
            elif draw < self.rate_limit_rate + self.error_rate:
                fault = Fault("status", status=500)
        entry = LoggedRequest(body=body, hash=h, at=time.monotonic(), fault=fault.kind if fault else None,
                              status=fault.status if fault and fault.kind == "status" else 200)
        with self._lock:
            self.log.requests.append(entry)
            self.log.in_flight += 1
            self.log.max_in_flight = max(self.log.max_in_flight, self.log.in_flight)
        try:
            delay = self.latency + (fault.seconds if fault and fault.kind == "latency" else 0.0)
            if delay:
                await asyncio.sleep(delay)
            if fault and fault.kind == "hang":
                end = time.monotonic() + fault.seconds
                while time.monotonic() < end and not self._stopping:
                    if request.transport is None or request.transport.is_closing():
                        break
                    await asyncio.sleep(0.02)
                raise web.HTTPServiceUnavailable()
            if fault and fault.kind == "status":
                headers = {}
                if fault.retry_after is not None:
                    headers["Retry-After"] = f"{fault.retry_after:g}"
                kind = "rate_limit_error" if fault.status == 429 else "server_error" if fault.status >= 500 \
                    else "invalid_request_error"
                return web.json_response({"error": {"message": f"fake {fault.status}", "type": kind}},
                                         status=fault.status, headers=headers)
            payload = self._reply(body, h, fault, request.headers.get("Authorization", ""))
            if fault and fault.kind == "cut":
                data = json.dumps(payload).encode("utf-8")
                resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
                resp.content_length = len(data)
                await resp.prepare(request)
                await resp.write(data[: len(data) // 2])
                request.transport.close()  # type: ignore[union-attr]
                return resp
            return web.json_response(payload)
        finally:
            with self._lock:
                self.log.in_flight -= 1

    def _reply(self, body: dict, h: str, fault: Fault | None, authorization: str = "") -> dict:
        rng = random.Random(f"{self.seed}:{h}")
        fmt = body.get("response_format") or {}
        content: str
        finish = "stop"
        if fmt.get("type") == "json_schema":
            spec = fmt.get("json_schema") or {}
            name, schema = spec.get("name", ""), spec.get("schema") or {}
            with self._lock:
                maker = self.makers.get(name)
            value = maker(body, rng) if maker else instance_for_schema(schema, f"{self.seed}:{h}")
            content = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        elif fmt.get("type") == "json_object":
            content = json.dumps({"answer": " ".join(rng.choice(_WORDS) for _ in range(4))})
        else:
            content = f"fake reply {h[:8]}: " + " ".join(rng.choice(_WORDS) for _ in range(8))
        if fault and fault.kind == "echo_auth":  # a server (or proxy) that echoes the request's credentials
            try:
                value = json.loads(content)
            except ValueError:
                value = None
            if isinstance(value, dict):
                for k, v in value.items():
                    if isinstance(v, str):
                        value[k] = f"{v} (you sent Authorization: {authorization})"
                        break
                content = json.dumps(value, ensure_ascii=False)
            else:
                content = f"{content} (you sent Authorization: {authorization})"
        if fault and fault.kind == "invalid_json":
            content = "{" + content.strip("{}")[:40] + ", oops"
        elif fault and fault.kind == "truncated":
            content, finish = content[: max(1, len(content) // 2)], "length"
        elif fault and fault.kind == "ignore_schema":
            content = "Sure! Here is what you asked for, in plain words rather than JSON."
        prompt_tokens = sum(len(str(m.get("content", "")).split()) + 4 for m in body.get("messages", []))
        reply: dict = {
            "id": f"chatcmpl-{h[:24]}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": finish}],
        }
        if not (fault and fault.kind == "no_usage"):
            completion_tokens = max(1, len(content) // 4)
            reply["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                              "total_tokens": prompt_tokens + completion_tokens}
        return reply


def _import_repo_first() -> None:
    """Run as ``python bench/fake_llm_server.py``, Python puts ``bench/`` first on ``sys.path``, where
    ``bench/generator.py`` would shadow the ``generator`` package: put the repository root there instead."""
    import os
    import sys

    bench = os.path.dirname(os.path.realpath(__file__))  # real paths: bench/ may be reached through a link
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or os.curdir) != bench]
    sys.path.insert(0, os.path.dirname(bench))
    cached = sys.modules.get("generator")
    if cached is not None and not hasattr(cached, "__path__"):
        del sys.modules["generator"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible chat-completions server (offline).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each reply (default 0)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated replies")
    parser.add_argument("--error-rate", type=float, default=0.0, help="share of requests answered 500")
    parser.add_argument("--rate-limit-rate", type=float, default=0.0,
                        help="share of requests answered 429 with Retry-After: 1")
    parser.add_argument("--generator-replies", action="store_true",
                        help="answer the generator's stage schemas with replies that pass its checks "
                             "(generator/fake_replies.py), so `prefval generate` runs end to end")
    args = parser.parse_args(argv)
    server = FakeLLMServer(args.host, args.port, latency=args.latency, seed=args.seed,
                           error_rate=args.error_rate, rate_limit_rate=args.rate_limit_rate)
    if args.generator_replies:
        _import_repo_first()
        from generator.fake_replies import register_all

        register_all(server)
    try:
        asyncio.run(server.serve())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
