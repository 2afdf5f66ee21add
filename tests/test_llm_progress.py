"""The run progress display: drawn on a terminal, silent otherwise, text never read as markup."""
from __future__ import annotations

import asyncio
import io

from generator.client import ClientStats, LLMClient
from generator.progress import RunProgress, format_stats
from tests.test_llm_client_unit import FakeCompletion, StatusError, Verdict, request


def test_format_stats_hand_worked():
    stats = ClientStats(done=10, cached=2, failed=1, prompt_tokens=5300, completion_tokens=1200, cost_usd=0.0123)
    assert format_stats(stats, 40) == "12/40 done (2 cached), 1 failed, 5,300 tokens in / 1,200 out, 0.0123 USD"
    stats.unpriced = 3
    assert format_stats(stats).endswith("0.0123 USD (+3 unpriced)")


def test_quiet_when_not_a_terminal():
    out = io.StringIO()
    client = LLMClient(completion_fn=FakeCompletion())
    with RunProgress(3, "profiles", file=out) as progress:
        progress.attach(client)
        asyncio.run(client.complete(request(), Verdict))
    assert out.getvalue() == ""
    assert progress.summary().startswith("profiles: 1/3 done (0 cached), 0 failed, 10 tokens in / 5 out")


def test_drawn_on_a_terminal_with_counts_and_no_markup():
    out = io.StringIO()
    client = LLMClient(completion_fn=FakeCompletion(StatusError(400), FakeCompletion().script[0]))
    with RunProgress(4, "[bold]evil[/bold] stage", file=out, force_terminal=True) as progress:
        progress.attach(client)

        async def run():
            try:
                await client.complete(request(1), Verdict)  # 400: failed
            except Exception:
                pass
            await client.complete(request(2), Verdict)
            await client.complete(request(3), Verdict)
        asyncio.run(run())
    text = out.getvalue()
    assert "[bold]evil[/bold] stage" in text  # shown as typed, not as markup
    assert "3/4" in text and "1 failed" in text and "20/10 tok" in text
