"""The run progress display: drawn on a terminal, a plain line every N seconds otherwise, text never read as
markup, unknown values printed as unknown."""
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
    assert format_stats(stats).endswith("0.0123 USD + 3 replies of unknown cost")


def test_unknown_is_printed_as_unknown_never_as_zero():
    none_known = ClientStats(done=6, usage_unknown=6, unpriced=6)
    assert format_stats(none_known, 6) == "6/6 done (0 cached), 0 failed, tokens unknown (6 replies without usage), " \
                                          "cost unknown (6 replies without a price)"
    estimated = ClientStats(done=2, usage_unknown=2, cost_usd=0.004, cost_estimated_usd=0.004)
    assert format_stats(estimated).endswith("tokens unknown (2 replies without usage), "
                                            "0.0040 USD (0.0040 of it estimated from counted tokens)")
    assert "0 tokens" not in format_stats(none_known) and "0.0000" not in format_stats(none_known)


def test_a_line_every_interval_when_not_a_terminal():
    import time

    out = io.StringIO()
    client = LLMClient(completion_fn=FakeCompletion())
    with RunProgress(3, "generate sample", file=out, interval=0.05) as progress:
        progress.attach(client)
        asyncio.run(client.complete(request(), Verdict))
        time.sleep(0.2)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 2 and all(x.startswith("generate sample: ") for x in lines)
    assert lines[-1].startswith("generate sample: 1/3 done (0 cached), 0 failed, 10 tokens in / 5 out, cost unknown "
                                "(1 reply without a price), 0:00 elapsed, about 0:0")


def test_quiet_when_not_a_terminal_and_no_interval():
    out = io.StringIO()
    client = LLMClient(completion_fn=FakeCompletion())
    with RunProgress(3, "profiles", file=out, interval=0) as progress:
        progress.attach(client)
        asyncio.run(client.complete(request(), Verdict))
    assert out.getvalue() == ""
    # the run ended with 2 of its 3 calls never sent (a stop): the summary says so
    assert progress.summary().startswith("profiles: 1/3 done (0 cached), 0 failed, 2 not sent, 10 tokens in / 5 out")


def _one_failed_then_sent(progress, sent: int) -> None:
    """Through a client attached to progress: one call refused with a 400 (failed), then `sent` calls answered."""
    client = LLMClient(completion_fn=FakeCompletion(StatusError(400), FakeCompletion().script[0]))
    progress.attach(client)

    async def run():
        try:
            await client.complete(request(1), Verdict)  # 400: failed
        except Exception:
            pass
        for k in range(sent):
            await client.complete(request(2 + k), Verdict)
    asyncio.run(run())


def test_summary_of_a_finished_run_names_no_unsent_calls():
    with RunProgress(2, "profiles", file=io.StringIO(), interval=0) as progress:
        _one_failed_then_sent(progress, 1)
    assert progress.summary().startswith("profiles: 1/2 done (0 cached), 1 failed, 10 tokens in / 5 out")


def test_drawn_on_a_terminal_with_counts_and_no_markup():
    out = io.StringIO()
    with RunProgress(4, "[bold]evil[/bold] stage", file=out, force_terminal=True) as progress:
        _one_failed_then_sent(progress, 2)
    text = out.getvalue()
    assert "[bold]evil[/bold] stage" in text  # shown as typed, not as markup
    assert "3/4" in text and "1 failed" in text and "20/10 tok" in text
