"""A fake LLM client for the generator's unit tests: answers every request with ``generator.fake_replies`` (or a
per-schema override), validates it like the real client would, and records the requests it saw. No litellm."""
from __future__ import annotations

from typing import Any, Callable

from generator.fake_replies import make_reply
from generator.llm_types import LLMCallFailed, LLMReply, LLMRequest, BudgetExhausted, canonical_json


class FakeClient:
    """``complete(request, output_model)`` like ``generator.client.LLMClient``.

    overrides: schema name -> ``f(request) -> dict | Exception`` (an Exception instance is raised).
    budget_calls: after this many calls BudgetExhausted is raised. raise_check: a reply that fails the caller's
    check raises the check's StageCheckFailed (the stage tests match its message) instead of LLMCallFailed. Usage: prompt tokens = words of the prompt,
    completion tokens = words of the reply, cost = 1e-6 USD per token.
    """

    def __init__(self, overrides: dict[str, Callable[[LLMRequest], Any]] | None = None,
                 budget_calls: int | None = None, raise_check: bool = False):
        self.overrides = overrides or {}
        self.raise_check = raise_check
        self.requests: list[LLMRequest] = []
        self.budget_calls = budget_calls

    async def complete(self, request: LLMRequest, output_model: Any = None, check=None) -> LLMReply:
        if self.budget_calls is not None and len(self.requests) >= self.budget_calls:
            raise BudgetExhausted("budget reached")
        self.requests.append(request)
        maker = self.overrides.get(request.schema_name)
        data = maker(request) if maker else make_reply(request.schema_name, list(request.messages))
        if isinstance(data, Exception):
            raise data
        text = canonical_json(data)
        from generator.client import _InvalidReply, validate_reply

        try:  # as the client: the schema sent, the output model, then the caller's check
            value, _ = validate_reply(text, "stop", request, output_model, check)
        except _InvalidReply as exc:
            if self.raise_check and check is not None:
                check(output_model.model_validate(data))  # the check's own error, for tests that match it
            raise LLMCallFailed(f"invalid reply: {exc}", attempts=1) from None
        p = sum(len(m["content"].split()) for m in request.messages)
        c = len(text.split())
        return LLMReply(value=value, text=text, prompt_tokens=p, completion_tokens=c, cost_usd=(p + c) * 1e-6,
                        seconds=0.0, attempts=1, cached=False, finish_reason="stop",
                        cache_key=request.cache_key(), model=request.model)


def word_tokens(model: str, messages: list[dict]) -> int:
    """A stand-in token counter: words in the messages."""
    return sum(len(m["content"].split()) for m in messages)
