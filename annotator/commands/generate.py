"""`prefval generate CONFIG`: run a generator pipeline (see generator/config.py for the config), or plan it with
--dry-run. Heavy imports (litellm, the pipeline) happen inside the handler."""
from __future__ import annotations

import argparse
import sys

from storage.errors import PrefvalError


def register(sub: argparse._SubParsersAction) -> None:
    from annotator.cli import add_db_option

    p = sub.add_parser(
        "generate", help="generate benchmark items with an LLM pipeline",
        description="Run the stages of a pipeline config (YAML or JSON): personas, profiles, events, preferences, "
                    "generalized, conversations, queries, evolution, contexts. Every finished row is saved at "
                    "once; run the same command again to resume. Each stage's rows become a dataset.")
    p.add_argument("config", help="pipeline config file (.yaml or .json)")
    p.add_argument("--stage", help="run only this stage (the stages before it must have run)")
    p.add_argument("--model", help="model for every stage (any litellm model string)")
    p.add_argument("--api-base", help="base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--concurrency", type=int, help="rows in flight at once")
    p.add_argument("--budget", type=float, metavar="USD", help="stop cleanly once this much is spent")
    p.add_argument("--dry-run", action="store_true",
                   help="print calls, prompt tokens and a cost bound per stage; send and write nothing")
    add_db_option(p)
    p.set_defaults(func=run)


def _overrides(args: argparse.Namespace) -> dict:
    if args.concurrency is not None and args.concurrency < 1:
        raise PrefvalError("--concurrency must be at least 1")
    if args.budget is not None and args.budget <= 0:
        raise PrefvalError("--budget must be above 0")
    out = {"api_base": args.api_base, "concurrency": args.concurrency, "budget_usd": args.budget}
    return out


def _apply_model(config, model: str | None):
    if model:
        config.model = model
        for s in config.stages.values():
            s.model = None
    return config


def run(args: argparse.Namespace) -> int:
    import os

    from annotator.cli import db_path
    from generator.config import load_config
    from storage.store import Store

    config = _apply_model(load_config(args.config, _overrides(args)), args.model)
    if args.dry_run:
        path = db_path(args)
        with Store.open(path if os.path.exists(path) else ":memory:") as store:
            return _dry_run(store, config, args.stage)
    with Store.open(db_path(args)) as store:
        return _run(store, config, args.stage)


def _dry_run(store, config, stage: str | None) -> int:
    from generator.dryrun import DryRunClient
    from generator.pipeline import Pipeline
    from generator.tokens import count_tokens
    import asyncio

    client = DryRunClient(token_counter=count_tokens, prices=config.prices)
    reports = asyncio.run(Pipeline(store, config, client, dry_run=True, token_counter=count_tokens).run(stage))
    print(f"dry run of pipeline {config.name} (nothing sent, nothing written):")
    print(f"  {'stage':<14} {'rows':>6} {'done':>6} {'calls':>6} {'prompt tok':>11} {'max out tok':>12}  USD bound")
    total_cost: float | None = 0.0
    for r in reports:
        cost = None if r.calls and r.cost_usd is None else r.cost_usd
        print(f"  {r.stage:<14} {r.total:>6} {r.skipped:>6} {r.calls:>6} {r.prompt_tokens:>11} "
              f"{r.completion_tokens:>12}  {'-' if not r.calls else _usd(cost)}")
    for model, t in client.totals.items():
        total_cost = None if t.cost_usd is None or total_cost is None else total_cost + t.cost_usd
        print(f"  model {model}: {t.calls} calls, {t.prompt_tokens} prompt tokens, at most "
              f"{t.max_completion_tokens} completion tokens, at most {_usd(t.cost_usd)}"
              + ("" if t.cost_usd is not None else " (price unknown: add it under prices: in the config)"))
    print(f"  total: at most {_usd(total_cost)} if every reply is valid at its first attempt; repair attempts of "
          "invalid replies add to this")
    print("  (later stages are planned from stand-in replies: their counts and prompts are estimates)")
    return 0


def _usd(v: float | None) -> str:
    return "unknown" if v is None else f"${v:.4f}"


def _run(store, config, stage: str | None) -> int:
    import asyncio

    from generator.pipeline import BudgetStop, Pipeline

    client = _make_client(store, config)
    pipe = Pipeline(store, config, client, on_progress=_Progress().update)
    try:
        reports = asyncio.run(pipe.run(stage))
    except BudgetStop as exc:
        print(f"prefval: {exc}", file=sys.stderr)
        return 3
    failed = 0
    for r in reports:
        failed += r.failed
        print(f"{r.stage:<14} {r.done} made, {r.skipped} already done, {r.failed} failed, {r.calls} calls, "
              f"{r.prompt_tokens}+{r.completion_tokens} tokens, ${r.cost_usd:.4f} -> dataset "
              f"{config.dataset_for(r.stage)}")
        for reason in r.reasons[:3]:
            print(f"    failed {reason}")
    return 0


class _Progress:
    """One line per stage on stderr, rewritten as rows finish: done / failed / total, tokens, USD."""

    def __init__(self):
        self.stage = None

    def update(self, stage, rep) -> None:
        if not sys.stderr.isatty():
            return
        sys.stderr.write(f"\r{stage:<14} {rep.done + rep.skipped}/{rep.total} done, {rep.failed} failed, "
                         f"{rep.prompt_tokens + rep.completion_tokens} tokens, ${rep.cost_usd:.4f}   ")
        if rep.done + rep.skipped + rep.failed >= rep.total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _make_client(store, config):
    try:
        from generator.client import LLMClient  # noqa: F401
    except ImportError:
        raise PrefvalError("the LLM client (generator.client) is not installed in this prefval yet; "
                           "use --dry-run") from None
    raise PrefvalError("the LLM client is not wired to the pipeline yet")
