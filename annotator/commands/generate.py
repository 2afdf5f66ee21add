"""`prefval generate CONFIG`: run a generator pipeline (see generator/config.py for the config), or plan it with
--dry-run. Heavy imports (litellm, the pipeline) happen inside the handler."""
from __future__ import annotations

import argparse
import sys

from storage.errors import PrefvalError
from annotator.safe_text import echo


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
    p.add_argument("--api-base", help="base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 "
                                      "('' for the provider's own endpoint)")
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
    return {"api_base": args.api_base or None, "concurrency": args.concurrency, "budget_usd": args.budget}


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
    if args.api_base == "":  # --api-base '': the provider's own endpoint
        config.api_base = None
    if args.dry_run:
        path = db_path(args)
        with Store.open(path, mode="ro") if os.path.exists(path) else Store.open(":memory:") as store:
            return _dry_run(store, config, args.stage)
    with Store.open(db_path(args), mode="create") as store:
        return _run(store, config, args.stage)


def _dry_run(store, config, stage: str | None) -> int:
    import asyncio

    from generator.dryrun import DryRunClient
    from generator.pipeline import Pipeline
    from generator.tokens import count_tokens

    client = DryRunClient()
    reports = asyncio.run(Pipeline(store, config, client, dry_run=True, token_counter=count_tokens,
                                   on_stage=client.set_stage).run(stage))
    from generator.client import cached_keys

    cached = cached_keys(store)
    est = client.estimate(_prices(config), cached)
    echo(f"dry run of pipeline {config.name} (nothing sent, nothing written):")
    print(f"  {'stage':<14} {'rows':>6} {'done':>6} {'calls':>6} {'cached':>6} {'prompt tok':>11} "
          f"{'max out tok':>12}  USD at most")
    for r in reports:
        e = est.get(r.stage)
        if e is None:
            print(f"  {r.stage:<14} {r.total:>6} {r.skipped:>6} {0:>6} {0:>6} {0:>11} {0:>12}  -")
            continue
        print(f"  {r.stage:<14} {r.total:>6} {r.skipped:>6} {e.calls:>6} {e.cached:>6} {e.prompt_tokens:>11} "
              f"{_n(e.max_completion_tokens):>12}  {_usd(e.cost_upper_usd)}")
    total = client.estimate(_prices(config), cached, by_stage=False)
    t = total.get("all")
    if t is not None:
        print(f"  total: {t.calls} calls, {t.prompt_tokens} prompt tokens, at most {_n(t.max_completion_tokens)} "
              f"completion tokens, at most {_usd(t.cost_upper_usd)} if every reply is valid at its first attempt "
              "(repairs of invalid replies add to it)")
        if t.unpriced_models:
            print(f"  no price for {', '.join(sorted(t.unpriced_models))}: add it under prices: in the config")
    print("  (later stages are planned from stand-in replies: their counts and prompts are estimates)")
    return 0


def _n(v) -> str:
    return "unbounded" if v is None else str(v)


def _usd(v: float | None) -> str:
    return "unknown" if v is None else f"${v:.4f}"


def _prices(config) -> dict:
    from generator.client import Price

    return {m: Price(input_per_million=p.input, output_per_million=p.output) for m, p in config.prices.items()}


def _run(store, config, stage: str | None) -> int:
    import asyncio

    from generator.client import LLMClient, ModelLimits
    from generator.config import LLM_STAGES
    from generator.pipeline import BudgetStop, Pipeline
    from generator.progress import RunProgress

    run_id = store.start_run("generate", config.model_dump(mode="json"), name=config.name)
    status, code, reports = "failed", 1, []
    progress = RunProgress(total=0, description=f"generate {config.name}")

    async def go():
        async with LLMClient(store, run_id=run_id, budget_usd=config.budget_usd, prices=_prices(config),
                             default_limits=ModelLimits(max_in_flight=config.concurrency),
                             budget_scope=f"generate:{config.name}") as client:
            progress.attach(client)
            pipe = Pipeline(store, config, client, run_id=run_id,
                            on_stage=lambda s, n: progress.add_total(n) if s in LLM_STAGES else None)
            try:
                return await pipe.run(stage), client.stats.as_dict()
            finally:
                totals.update(client.stats.as_dict())

    from annotator.cli import EXIT_BUDGET

    totals: dict = {}
    try:
        with progress:
            reports, _ = asyncio.run(go())
        status, code = "done", 0
    except BudgetStop as exc:
        status, code = "budget", EXIT_BUDGET
        echo(f"prefval: {exc}", file=sys.stderr)
    except KeyboardInterrupt:
        status, code = "interrupted", 130
        raise
    finally:
        store.finish_run(run_id, status, totals)
    print(progress.summary())
    for r in reports:
        echo(f"{r.stage:<14} {r.done} made, {r.skipped} already done, {r.failed} failed, {r.calls} requests, "
              f"{r.prompt_tokens}+{r.completion_tokens} tokens, ${r.cost_usd:.4f} -> dataset "
              f"{config.dataset_for(r.stage)}")
        for reason in r.reasons[:3]:
            echo(f"    failed {reason}")
    from annotator.cli import failed_rows_exit

    return failed_rows_exit(code, sum(r.failed for r in reports), sum(r.total for r in reports), "rows")

