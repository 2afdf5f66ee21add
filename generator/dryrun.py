"""Dry runs: what a pipeline would send, before anything is spent.

:class:`DryRunClient` stands in for the LLM client: it keeps every request and answers with a stand-in reply
(``generator.fake_replies``) so that later stages can be planned from it. Nothing is sent and nothing is written;
``estimate()`` then prices the requests with the client's ``dry_run_estimate`` (prompt tokens counted offline,
max_tokens as the most a reply can cost, requests already in the call cache free).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from generator.fake_replies import make_reply
from generator.llm_types import LLMReply, LLMRequest, canonical_json


@dataclass
class DryRunClient:
    """``complete(request, output_model)`` without sending anything; ``requests`` holds what was asked, as
    (stage, request) with the stage set by ``set_stage`` (the pipeline's ``on_stage`` hook)."""

    requests: list[tuple[str, LLMRequest]] = field(default_factory=list)
    stage: str = ""

    def set_stage(self, stage: str, n_rows: int = 0) -> None:
        self.stage = stage

    async def complete(self, request: LLMRequest, output_model: Any = None, check: Any = None) -> LLMReply:
        self.requests.append((self.stage, request))
        data = make_reply(request.schema_name, list(request.messages))
        value = output_model.model_validate(data) if output_model is not None else None
        return LLMReply(value=value, text=canonical_json(data), prompt_tokens=None, completion_tokens=None,
                        cost_usd=None, seconds=0.0, attempts=0, cached=False, finish_reason="stop",
                        cache_key=request.cache_key(), model=request.model)

    def estimate(self, prices: dict | None = None, cached_keys: set[str] | None = None, by_stage: bool = True):
        """{stage: DryRunEstimate} of the requests seen (one group "all" when not by_stage).
        prices: model -> generator.client.Price; cached_keys: keys already in the call cache."""
        from generator.client import dry_run_estimate

        groups: dict[str, list[LLMRequest]] = {}
        for stage, r in self.requests:
            groups.setdefault(stage if by_stage else "all", []).append(r)
        return {k: dry_run_estimate(v, prices=prices, cached_keys=cached_keys) for k, v in groups.items()}
