"""Dry runs: what a pipeline would send, before anything is spent.

:class:`DryRunClient` stands in for the LLM client: for each request it counts the prompt tokens offline, takes the
request's ``max_tokens`` as the most the reply can cost, and answers with a stand-in reply
(``generator.fake_replies``) so that later stages can be planned from it. Nothing is sent and nothing is written.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from generator.fake_replies import make_reply
from generator.llm_types import LLMReply, LLMRequest, canonical_json

#: max_tokens assumed for a request that sets none (tokens).
DEFAULT_MAX_TOKENS = 4096


def price_per_token(model: str, prices: dict[str, Any]) -> tuple[float, float] | None:
    """(input, output) USD per token for ``model``: the config's ``prices`` (USD per million tokens) first, else
    litellm's bundled price map (``model_cost``, offline); None when neither knows the model."""
    if model in prices:
        p = prices[model]
        return p.input / 1e6, p.output / 1e6
    from generator.tokens import litellm_module

    cost = litellm_module().model_cost
    for name in (model, model.split("/", 1)[-1]):
        info = cost.get(name)
        if info and "input_cost_per_token" in info:
            return float(info["input_cost_per_token"]), float(info.get("output_cost_per_token", 0.0))
    return None


@dataclass
class DryRunTotals:
    """Per model: requests, prompt tokens, most completion tokens, and the USD bound (None: unknown price)."""

    calls: int = 0
    prompt_tokens: int = 0
    max_completion_tokens: int = 0
    cost_usd: float | None = 0.0


@dataclass
class DryRunClient:
    """``complete(request, output_model)`` without sending anything (see module docstring).

    token_counter: ``f(model, messages) -> int``; prices: the config's prices. Totals per model in ``totals``.
    """

    token_counter: Callable[[str, list[dict]], int]
    prices: dict[str, Any] = field(default_factory=dict)
    totals: dict[str, DryRunTotals] = field(default_factory=dict)

    async def complete(self, request: LLMRequest, output_model: Any = None) -> LLMReply:
        prompt = int(self.token_counter(request.model, list(request.messages)))
        most = int(request.params.get("max_tokens") or DEFAULT_MAX_TOKENS)
        t = self.totals.setdefault(request.model, DryRunTotals())
        price = price_per_token(request.model, self.prices)
        cost = None if price is None else prompt * price[0] + most * price[1]
        t.calls += 1
        t.prompt_tokens += prompt
        t.max_completion_tokens += most
        t.cost_usd = None if cost is None or t.cost_usd is None else t.cost_usd + cost
        data = make_reply(request.schema_name, list(request.messages))
        value = output_model.model_validate(data) if output_model is not None else None
        return LLMReply(value=value, text=canonical_json(data), prompt_tokens=prompt, completion_tokens=most,
                        cost_usd=cost, seconds=0.0, attempts=1, cached=False, finish_reason="stop",
                        cache_key=request.cache_key(), model=request.model)
