"""`prefval generate CONFIG`: run a generator pipeline (see generator/config.py for the config), or plan it with
--dry-run. Heavy imports (litellm, the pipeline) happen inside the handler."""
from __future__ import annotations

import argparse
import sys

from storage.errors import PrefvalError
from annotator.safe_text import echo


def register(sub: argparse._SubParsersAction) -> None:
    from annotator.cli import add_db_option
    from generator.settings import add_client_flags

    p = sub.add_parser(
        "generate", help="generate benchmark items with an LLM pipeline",
        description="Run the stages of a pipeline config (YAML or JSON): personas, profiles, events, preferences, "
                    "generalized, conversations, queries, evolution, contexts. Every finished row is saved at "
                    "once; run the same command again to resume. Each stage's rows become a dataset. Exit codes: "
                    "0 done, 1 error, 3 budget spent, 4 some rows failed, 5 the server failed (stopped early).")
    p.add_argument("config", help="pipeline config file (.yaml or .json)")
    p.add_argument("--stage", help="run only this stage (the stages before it must have run)")
    p.add_argument("--model", help="model for every stage (any litellm model string)")
    p.add_argument("--api-base", help="base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 "
                                      "('' for the provider's own endpoint)")
    p.add_argument("--concurrency", type=int, help="rows in flight at once")
    p.add_argument("--budget", type=float, metavar="USD", help="stop cleanly once this much is spent")
    add_client_flags(p)
    p.add_argument("--dry-run", action="store_true",
                   help="print calls, prompt tokens and a cost bound per stage; send and write nothing")
    add_db_option(p)
    p.set_defaults(func=run)


def _overrides(args: argparse.Namespace) -> dict:
    from generator.settings import KNOBS, check_client_flags

    if args.concurrency is not None and args.concurrency < 1:
        raise PrefvalError("--concurrency must be at least 1")
    if args.budget is not None and args.budget <= 0:
        raise PrefvalError("--budget must be above 0")
    check_client_flags(args)
    out = {"api_base": args.api_base or None, "concurrency": args.concurrency, "budget_usd": args.budget}
    out.update({k: getattr(args, k) for k in KNOBS})
    return out


def _apply_model(config, model: str | None):
    if model:
        config.model = model
        for s in config.stages.values():
            s.model = None
    return config


def _apply_prices(config, args) -> None:
    """--price IN,OUT for every model of the run, --budget-unknown-as over the config's."""
    from generator.config import Price as ConfigPrice
    from generator.settings import parse_price

    price = parse_price(args.price, "--price")
    if price is not None:
        for m in config.llm_models():
            config.prices[m] = ConfigPrice(input=price.input_per_million, output=price.output_per_million)
    unknown = parse_price(args.budget_unknown_as, "--budget-unknown-as")
    if unknown is not None:
        config.budget_unknown_as = ConfigPrice(input=unknown.input_per_million, output=unknown.output_per_million)


def run(args: argparse.Namespace) -> int:
    import os

    from annotator.cli import db_path
    from generator.config import load_config
    from storage.store import Store

    config = _apply_model(load_config(args.config, _overrides(args)), args.model)
    if args.api_base == "":  # --api-base '': the provider's own endpoint
        config.api_base = None
    _apply_prices(config, args)
    if args.dry_run:
        path = db_path(args)
        with Store.open(path, mode="ro") if os.path.exists(path) else Store.open(":memory:") as store:
            return _dry_run(store, config, args.stage)
    from generator.settings import budget_refusal

    refusal = budget_refusal(config.budget_usd, config.llm_models(), _prices(config), _unknown_price(config))
    if refusal is not None:  # before the database is opened: nothing is created or written
        raise PrefvalError(refusal)
    with Store.open(db_path(args), mode="create") as store:
        return _run(store, config, args.stage, args)


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
            print(f"  no price for {', '.join(sorted(t.unpriced_models))}: add it under prices: in the config "
                  "or give --price IN,OUT")
    print("  (later stages are planned from stand-in replies: their counts and prompts are estimates)")
    return 0


def _n(v) -> str:
    return "unbounded" if v is None else str(v)


def _usd(v: float | None) -> str:
    return "unknown" if v is None else f"${v:.4f}"


def _prices(config) -> dict:
    from generator.client import Price

    return {m: Price(input_per_million=p.input, output_per_million=p.output) for m, p in config.prices.items()}


def _unknown_price(config):
    from generator.client import Price

    p = config.budget_unknown_as
    return None if p is None else Price(input_per_million=p.input, output_per_million=p.output)


def _stage_line(r, dataset: str) -> str:
    from generator.progress import tokens_text, usd_text

    tokens = tokens_text(r.prompt_tokens, r.completion_tokens, r.usage_unknown, "rows")
    cost = usd_text(r.cost_usd, r.unpriced, r.cost_estimated_usd, "rows")
    return (f"{r.stage:<14} {r.done} made, {r.skipped} already done, {r.failed} failed, {r.calls} requests, "
            f"{tokens}, {cost} -> dataset {dataset}")


def batch_event_printer():
    """on_event for generator.batch.BatchClient: one line on stderr per batch event (submitted, status, ended)."""
    return lambda text: echo(f"prefval: {text}", file=sys.stderr)


def _run(store, config, stage: str | None, args=None) -> int:
    import asyncio

    from generator.client import LLMClient
    from generator.config import LLM_STAGES
    from generator.pipeline import BudgetStop, Pipeline, ServerStop
    from generator.progress import RunProgress
    from generator.settings import EXIT_SERVER, ClientKnobs, batch_options

    knobs = ClientKnobs.from_sources(config)  # the flags were applied over the config's keys
    run_id = store.start_run("generate", {**config.model_dump(mode="json"), "client": knobs.as_config()},
                             name=config.name)
    status, code, reports = "failed", 1, []
    progress = RunProgress(total=0, description=f"generate {config.name}",
                           interval=getattr(args, "progress_every", None))

    async def go():
        async with LLMClient(store, run_id=run_id, budget_usd=config.budget_usd, prices=_prices(config),
                             default_limits=knobs.limits(config.concurrency), retry=knobs.retry_policy(),
                             budget_scope=f"generate:{config.name}",
                             budget_unknown_price=_unknown_price(config)) as client:
            progress.attach(client)
            caller, options = client, batch_options(args) if args is not None else None
            if options is not None:  # requests go out as provider batches; rows of a stage all wait together
                from generator.batch import BatchClient

                caller = BatchClient(client, store, f"generate:{config.name}", options, on_event=batch_event_printer())
            pipe = Pipeline(store, config, caller, run_id=run_id, row_limit=10 ** 9 if options else None,
                            on_stage=lambda s, n: progress.add_total(n) if s in LLM_STAGES else None)
            try:
                return await pipe.run(stage), client.stats.as_dict()
            finally:
                totals.update(client.stats.as_dict())
                if options is not None:
                    await caller.aclose()
                    totals["batch"] = {"batches": caller.batch_stats.batches, "lines": caller.batch_stats.lines,
                                       "reattached": caller.batch_stats.reattached,
                                       "online": caller.batch_stats.online}

    from annotator.cli import EXIT_BUDGET

    totals: dict = {}
    try:
        with progress:
            reports, _ = asyncio.run(go())
        status, code = "done", 0
    except BudgetStop as exc:
        status, code = "budget", EXIT_BUDGET
        echo(f"prefval: {exc}", file=sys.stderr)
    except ServerStop as exc:
        status, code = "stopped", EXIT_SERVER
        echo(f"prefval: {exc}", file=sys.stderr)
    except KeyboardInterrupt:
        status, code = "interrupted", 130
        raise
    finally:
        store.finish_run(run_id, status, totals)
    print(progress.summary())
    for r in reports:
        echo(_stage_line(r, config.dataset_for(r.stage)))
        for reason in r.reasons[:3]:
            echo(f"    failed {reason}")
    if code == EXIT_SERVER:
        return code
    from annotator.cli import failed_rows_exit

    return failed_rows_exit(code, sum(r.failed for r in reports), sum(r.total for r in reports), "rows")
