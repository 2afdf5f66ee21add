"""The knobs of a run that `prefval generate` and `prefval evaluate` share: how long a call may take and how often
it is tried (timeout, deadline, attempts, repairs, breaker), how fast requests go (rpm, tpm), and how a budget
counts (prices, --budget-unknown-as). Each comes from a flag, or for generate from the pipeline config's key of
the same name; unset ones keep the client's defaults (generator.client.RetryPolicy).

    timeout: 120        # seconds a request may take
    deadline: 300       # seconds a call may take, all its requests and waits together (default: 300, or 2.5 x
                        # timeout when that is longer)
    attempts: 6         # requests a call may send at most: the first, retries and repairs together
    repairs: 2          # of those, repair requests for invalid replies
    breaker: 16         # stop the run once this many requests in a row failed alike (0: never)
    rpm: 500            # requests per minute per model (queued, never refused)
    tpm: 200000         # tokens per minute per model
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from typing import Any, Iterable

from storage.errors import PrefvalError

#: exit code of a run stopped because its server failed (nothing listening, or most requests failing alike) or
#: because no request can be sent as configured (no API key: generator.llm_types.ClientMisconfigured):
#: everything finished is saved; run the same command again once the server answers
EXIT_SERVER = 5

KNOBS = ("timeout", "deadline", "attempts", "repairs", "breaker", "rpm", "tpm")


def add_client_flags(p: argparse.ArgumentParser) -> None:
    """The flags of the knobs above, and --price, --budget-unknown-as, --progress-every."""
    p.add_argument("--timeout", type=float, metavar="S", help="seconds a request may take (default 120)")
    p.add_argument("--deadline", type=float, metavar="S",
                   help="seconds a call may take, its retries and repairs together (default 300, or 2.5 x "
                        "--timeout when that is longer)")
    p.add_argument("--attempts", type=int, metavar="N",
                   help="requests a call may send at most, retries and repairs together (default 6)")
    p.add_argument("--repairs", type=int, metavar="N", help="of those, repairs of invalid replies (default 2)")
    p.add_argument("--breaker", type=int, metavar="N",
                   help="stop the run once the last N requests failed alike with no success (default 16; 0: never)")
    p.add_argument("--rpm", type=float, metavar="N", help="requests per minute per model (queued, never refused)")
    p.add_argument("--tpm", type=float, metavar="N", help="tokens per minute per model (queued, never refused)")
    p.add_argument("--price", metavar="IN,OUT", help="USD per 1M input and output tokens of the run's models "
                                                      "(default: litellm's price map; unknown prices count as "
                                                      "unknown, never as 0)")
    p.add_argument("--budget-unknown-as", metavar="IN,OUT", dest="budget_unknown_as",
                   help="with --budget: count the replies of models without a known price at IN,OUT USD per 1M "
                        "tokens (their cost is still recorded as unknown); without it such a budget is refused")
    p.add_argument("--batch", action="store_true",
                   help="send the requests not in the cache as provider batches (about half the price, no rate "
                        "limits; results within the provider's window, up to 24 h); a run killed and started again "
                        "re-attaches to its batches")
    p.add_argument("--batch-poll", type=float, metavar="S", dest="batch_poll", default=None,
                   help="with --batch: seconds between looks at a batch in progress (default 60)")
    p.add_argument("--batch-price", type=float, metavar="F", dest="batch_price", default=None,
                   help="with --batch: the share of the online price a batch request costs (default 0.5)")
    p.add_argument("--progress-every", type=float, metavar="S", dest="progress_every", default=None,
                   help="when the output is not a terminal, print a progress line every S seconds (default 30; "
                        "0: none)")


def check_client_flags(args: argparse.Namespace) -> None:
    """One line for a flag out of range (before anything is opened or written)."""
    for name, low, strict in (("timeout", 0, True), ("deadline", 0, True), ("attempts", 1, False),
                              ("repairs", 0, False), ("breaker", 0, False), ("rpm", 0, True), ("tpm", 0, True),
                              ("progress_every", 0, False), ("batch_poll", 0, True), ("batch_price", 0, False)):
        v = getattr(args, name, None)
        if v is None:
            continue
        if (v <= low) if strict else (v < low):
            flag = "--" + name.replace("_", "-")
            raise PrefvalError(f"{flag} must be {'above' if strict else 'at least'} {low:g}")
    if (getattr(args, "batch_poll", None) is not None or getattr(args, "batch_price", None) is not None) \
            and not getattr(args, "batch", False):
        raise PrefvalError("--batch-poll and --batch-price go with --batch")
    parse_price(getattr(args, "price", None), "--price")
    parse_price(getattr(args, "budget_unknown_as", None), "--budget-unknown-as")


def parse_price(text: str | None, flag: str):
    """generator.client.Price from "IN,OUT" (USD per 1M tokens), None for None. Raises PrefvalError."""
    if not text:
        return None
    from generator.client import Price

    try:
        p_in, p_out = (float(x) for x in text.split(","))
    except ValueError:
        raise PrefvalError(f"{flag} {text!r}: expected IN,OUT in USD per 1M tokens, e.g. 0.15,0.6") from None
    if p_in < 0 or p_out < 0 or p_in != p_in or p_out != p_out:
        raise PrefvalError(f"{flag}: prices cannot be negative")
    return Price(p_in, p_out)


@dataclass(frozen=True)
class ClientKnobs:
    """The knobs' values (None: the client's default)."""

    timeout: float | None = None
    deadline: float | None = None
    attempts: int | None = None
    repairs: int | None = None
    breaker: int | None = None
    rpm: float | None = None
    tpm: float | None = None

    @classmethod
    def from_sources(cls, *sources: Any) -> "ClientKnobs":
        """The first value set of each knob among the sources (objects with attributes of the knobs' names, e.g.
        the parsed flags, then the pipeline config)."""
        values = {}
        for k in KNOBS:
            for src in sources:
                v = getattr(src, k, None)
                if v is not None:
                    values[k] = v
                    break
        return cls(**values)

    def retry_policy(self):
        from generator.client import RetryPolicy

        base = RetryPolicy()
        changes: dict[str, Any] = {}
        if self.timeout is not None:
            changes["timeout"] = float(self.timeout)
        if self.deadline is not None:
            changes["deadline"] = float(self.deadline)
        elif self.timeout is not None:
            changes["deadline"] = max(base.deadline, 2.5 * float(self.timeout))
        if self.attempts is not None:
            changes["max_attempts"] = int(self.attempts)
        if self.repairs is not None:
            changes["max_repairs"] = int(self.repairs)
        if self.breaker is not None:
            changes["breaker_window"] = int(self.breaker)
        return replace(base, **changes)

    def limits(self, in_flight: int):
        from generator.client import ModelLimits

        return ModelLimits(max_in_flight=in_flight, rpm=self.rpm, tpm=self.tpm)

    def as_config(self) -> dict[str, Any]:
        """The knobs set, for the run's record."""
        return {k: v for k, v in self.__dict__.items() if v is not None}


def unpriced_models(models: Iterable[str], prices: dict) -> list[str]:
    """The models among ``models`` whose replies cannot be priced: no price given and none in litellm's price map
    (looked up offline)."""
    from generator.client import LLMClient

    pricer = LLMClient(prices=prices, use_litellm_prices=True)
    return sorted(m for m in set(models) if not pricer.price_known(m))


def budget_refusal(budget: float | None, models: Iterable[str], prices: dict, unknown_price: Any) -> str | None:
    """Why a budget cannot be kept (one line), or None: with a budget, every model needs a price, unless
    --budget-unknown-as says how to count the others."""
    if budget is None or unknown_price is not None:
        return None
    missing = unpriced_models(models, prices)
    if not missing:
        return None
    return (f"--budget {budget:g} USD cannot be kept: no price is known for {', '.join(missing)} (litellm's price "
            "map has none, and none was given); give its price with --price IN,OUT (USD per 1M tokens; for "
            "generate also prices: in the config), or count its replies at an assumed price with "
            "--budget-unknown-as IN,OUT; nothing was sent or written")


def batch_options(args: argparse.Namespace):
    """generator.batch.BatchOptions from --batch-poll and --batch-price (None without --batch)."""
    if not getattr(args, "batch", False):
        return None
    from generator.batch import BatchOptions

    changes = {}
    if getattr(args, "batch_poll", None) is not None:
        changes["poll_every"] = float(args.batch_poll)
    if getattr(args, "batch_price", None) is not None:
        changes["price_factor"] = float(args.batch_price)
    return replace(BatchOptions(), **changes)

