"""`prefval evaluate KIND ...`: models answer items, LLM judges score them, and a blind multi-model consensus
filter, through the one LLM client (generator.client). Runs are resumable through its call cache; each run is
recorded in the runs table (kind "evaluate") with its settings and totals. See generator/evaluate/runs.py.

Common options: --model (litellm model string), --name (the annotator the results are stored under; default the
model), --api-base (a local OpenAI-compatible server), --temperature, --max-tokens, --concurrency (requests in
flight per model), --budget USD (stops cleanly once spent: what finished is kept, exit code 3), the client's knobs
(--timeout, --deadline, --attempts, --repairs, --breaker, --rpm, --tpm, --price, --budget-unknown-as: see
generator/settings.py), --dry-run (calls, prompt tokens and a cost bound; nothing is sent or written). A run in which
some calls failed ends with exit code 4 and a line saying how many; running it again retries them (everything
finished comes from the cache). A run whose server failed (nothing listening, or most requests failing alike) stops
early with one line and exit code 5.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

from storage.errors import PrefvalError
from annotator.safe_text import echo

KINDS = ("answer", "judge-rubric", "judge-pairwise", "judge-reflection", "consensus")


def register(sub: argparse._SubParsersAction) -> None:
    from annotator.cli import add_db_option, add_group_db_option
    from generator.settings import add_client_flags

    p = sub.add_parser("evaluate", help="run LLMs on the items: answers, LLM judges, a blind consensus filter",
                       description="Models answer items and LLM judges score them; results are stored as answers "
                                   "of annotators of kind llm beside the human ones (or as new datasets). Every "
                                   "call is cached: re-running a run sends only the calls not yet answered.")
    add_group_db_option(p)
    kinds = p.add_subparsers(dest="kind", metavar="KIND", required=True)

    def common(q: argparse.ArgumentParser, model_required: bool = True) -> None:
        q.add_argument("--model", required=model_required, help="litellm model string, e.g. openai/gpt-4o-mini")
        q.add_argument("--name", help="annotator name to store the results under (default: the model)")
        q.add_argument("--api-base", help="base URL of an OpenAI-compatible server (local models)")
        q.add_argument("--temperature", type=float, default=0.0,
                       help="sampling temperature of every call (default 0.0)")
        q.add_argument("--max-tokens", type=int, default=512, help="completion tokens per call (default 512)")
        q.add_argument("--concurrency", type=int, default=8, help="requests in flight per model (default 8)")
        q.add_argument("--budget", type=float, metavar="USD", help="stop sending new calls once this is spent")
        add_client_flags(q)
        q.add_argument("--dry-run", action="store_true", help="count calls, tokens and a cost bound; send nothing")
        add_db_option(q)
        q.set_defaults(func=run)

    q = kinds.add_parser("answer", help="a model answers the MCQ/T-F items of a study or a whole dataset, or open "
                                        "queries")
    q.add_argument("--study", help="an mcq, easy_test or blind_test study (with --dataset of MCQ items: the study "
                                   "to store the answers in, made over the dataset when missing; default "
                                   "DATASET-llm)")
    q.add_argument("--blind", action="store_true", help="question and options only, no conversation")
    q.add_argument("--rotate-options", action="store_true",
                   help="ask once per rotation of the options (position bias measured and averaged out)")
    q.add_argument("--dataset", help="a dataset of MCQ/T-F items to answer whole (no study needed), or of open "
                                     "queries (rubric_item items, with --out-dataset)")
    q.add_argument("--out-dataset", help="open queries: the dataset the answers are written to")
    q.add_argument("--quota", type=_quota_arg, metavar="N",
                   help="people per item of the study made over --dataset (default 1), so that N people's "
                        "answers can be imported beside the model's (`prefval import annotations`)")
    common(q)
    q = kinds.add_parser("judge-rubric", help="an LLM judge scores a rubric study's open answers 1-5 per dimension")
    q.add_argument("--study", required=True, help="a rubric study (its rubric is the judge's rubric)")
    common(q)
    q = kinds.add_parser("judge-pairwise", help="an LLM judge picks the better record of each pair, in both orders")
    q.add_argument("--study", required=True, help="a pairwise study")
    common(q)
    q = kinds.add_parser("judge-reflection",
                         help="a model writes responses from profile memory; a judge says which preferences they "
                              "reflect (MR, AAR)")
    q.add_argument("--dataset", required=True, help="gold_candidate items (profile, recipient, task, attribute)")
    q.add_argument("--responder", required=True, help="the model that writes the responses")
    q.add_argument("--samples", type=int, default=3, help="responses per (profile, context) (default 3)")
    q.add_argument("--out", required=True, help="name of the new dataset and judge_validation study")
    q.add_argument("--quota", type=_quota_arg, metavar="N",
                   help="people per item of the new study (default 1): how many people's verdicts `prefval import "
                        "annotations FILE --study OUT` may add to each item, for the people-vs-people rows")
    common(q)
    q = kinds.add_parser("consensus", help="k validator models answer each item blind; keep the items at least m "
                                           "of them get wrong (HorizonBench 5.1)")
    q.add_argument("--study", required=True, help="an mcq, easy_test or blind_test study of candidate items")
    q.add_argument("--models", required=True, help="comma-separated validator models")
    q.add_argument("--rule", default=None, help="M/K: pass when at least M of the K validators answer wrongly "
                                                "(default K/K, strict)")
    q.add_argument("--out-dataset", required=True, help="the dataset the passing items are written to")
    common(q, model_required=False)


def _quota_arg(text: str) -> int:
    """An argparse type: a whole number of people per item >= 1. Raises argparse.ArgumentTypeError otherwise."""
    import argparse

    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of people per item >= 1, got {text!r}")
    return n


def _check_quota(store, name: str, quota: int | None) -> None:
    """Refuse --quota for a study that exists already with another quota (it applies when the study is made)."""
    if quota is None:
        return
    have = int(store.get_study(name).settings.get("annotators_per_item", 1))
    if have != quota:
        raise PrefvalError(f"study '{name}' exists with {have} people per item; --quota {quota} applies only to a "
                           "study this command makes (give another name, or leave --quota out)")


def _params(args) -> dict[str, Any]:
    return {"temperature": args.temperature, "max_tokens": args.max_tokens}


def _prices(args, models: list[str]) -> dict | None:
    """{model: Price} from --price IN,OUT for every model of the run, None without --price. Raises PrefvalError."""
    from generator.settings import parse_price

    price = parse_price(args.price, "--price")
    return None if price is None else {m: price for m in models}


def _run_models(args) -> list[str]:
    """Every model the command will call."""
    if args.kind == "consensus":
        return [m.strip() for m in args.models.split(",") if m.strip()]
    if args.kind == "judge-reflection":
        return [args.responder, args.model]
    return [args.model]


def _dry_run(store, jobs, args) -> str:
    from generator.client import cached_keys, dry_run_estimate

    models = sorted({j.request.model for j in jobs})
    est = dry_run_estimate([j.request for j in jobs], prices=_prices(args, models),
                           cached_keys=cached_keys(store))
    cost = "unknown (a model without a known price)" if est.cost_upper_usd is None else \
        f"at most {est.cost_upper_usd:.4f} USD"
    return (f"dry run: {est.calls} calls to send ({est.cached} already cached), {est.prompt_tokens:,} prompt tokens, "
            f"at most {est.max_completion_tokens or 0:,} completion tokens, cost {cost}; nothing sent")


async def _send(store, run_id: str, jobs, args, models: list[str], description: str, budget: float | None):
    from generator.client import LLMClient
    from generator.evaluate.runs import run_jobs
    from generator.progress import RunProgress
    from annotator.commands.generate import batch_event_printer
    from generator.settings import ClientKnobs, batch_options, parse_price

    knobs = ClientKnobs.from_sources(args)
    limits = {m: knobs.limits(args.concurrency) for m in models}
    scope = f"evaluate:{args.kind}:{getattr(args, 'study', None) or getattr(args, 'dataset', None)}"
    async with LLMClient(store, run_id=run_id, limits=limits, budget_usd=budget, prices=_prices(args, models),
                         budget_scope=scope, retry=knobs.retry_policy(),
                         budget_unknown_price=parse_price(args.budget_unknown_as, "--budget-unknown-as")) as client:
        with RunProgress(total=len(jobs), description=description, interval=args.progress_every) as progress:
            progress.attach(client)
            options = batch_options(args)
            if options is None:
                result = await run_jobs(client, jobs)
            else:  # the calls not in the cache go out as provider batches
                from generator.batch import BatchClient

                async with BatchClient(client, store, scope, options, on_event=batch_event_printer()) as batch:
                    result = await run_jobs(batch, jobs)
        result.charged_usd = client.charged_usd
        print(progress.summary())
    return result


def _run_stage(store, args, jobs, config: dict, description: str, models: list[str]):
    """Send jobs as one recorded run; returns (run id, RunResult). The budget is shared by the stages of one command
    (args.spent_usd); once it stopped a stage, args.budget_stopped is set and `run` exits with code 3."""
    from generator.evaluate.runs import RunResult

    budget = None if args.budget is None else args.budget - args.spent_usd
    if getattr(args, "budget_stopped", False) or getattr(args, "server_stopped", None):
        return None, RunResult(budget_stopped=args.budget_stopped, stopped=args.server_stopped)
    run_id = store.start_run("evaluate", config, name=description)
    try:
        import asyncio

        result = asyncio.run(_send(store, run_id, jobs, args, models, description, budget))
    except BaseException:
        store.finish_run(run_id, "interrupted")
        raise
    store.finish_run(run_id, "stopped" if result.stopped else "budget" if result.budget_stopped else "done",
                     result.totals())
    args.spent_usd += result.charged_usd
    args.budget_stopped = result.budget_stopped
    args.server_stopped = result.stopped
    args.failed_calls += len(result.failed)
    args.total_calls += len(jobs)
    if result.failed:
        first = next(iter(result.failed.values()))
        echo(f"{len(result.failed)} calls failed (first: {first}); re-run to retry them", file=sys.stderr)
    if result.stopped:
        echo(f"prefval: {result.stopped}", file=sys.stderr)
    elif result.budget_stopped:
        why = f" ({result.budget_reason})" if result.budget_reason and "spent" not in result.budget_reason else ""
        echo(f"budget of {args.budget} USD spent{why}: the run stopped; finished calls are kept, re-run with a "
             "larger --budget to go on", file=sys.stderr)
    return run_id, result


def run(args: argparse.Namespace) -> int:
    from annotator.cli import EXIT_BUDGET, db_path, failed_rows_exit
    from storage.store import Store

    handler: Callable = {"answer": _answer, "judge-rubric": _judge_study, "judge-pairwise": _judge_study,
                         "judge-reflection": _judge_reflection, "consensus": _consensus}[args.kind]
    from generator.settings import EXIT_SERVER, budget_refusal, check_client_flags, parse_price

    if args.concurrency < 1:
        raise PrefvalError("--concurrency must be at least 1")
    if args.budget is not None and args.budget <= 0:
        raise PrefvalError("--budget must be positive")
    check_client_flags(args)  # a malformed --price, --timeout ... fails before anything runs
    args.spent_usd, args.budget_stopped, args.failed_calls, args.total_calls = 0.0, False, 0, 0
    args.server_stopped = None
    path = db_path(args, must_exist=True)
    if not args.dry_run:  # a budget that cannot count is refused before the database is opened
        models = _run_models(args)
        refusal = budget_refusal(args.budget, models, _prices(args, models) or {},
                                 parse_price(args.budget_unknown_as, "--budget-unknown-as"))
        if refusal is not None:
            raise PrefvalError(refusal)
    with Store.open(path, mode="rw") as store:
        code = handler(store, args)
    if args.server_stopped:
        return EXIT_SERVER
    return EXIT_BUDGET if args.budget_stopped else failed_rows_exit(code, args.failed_calls, args.total_calls,
                                                                     "calls")


def _config(args, **extra) -> dict[str, Any]:
    return {"kind": args.kind, "model": args.model, "name": args.name or args.model, "api_base": args.api_base,
            "params": _params(args), "budget_usd": args.budget, "batch": bool(getattr(args, "batch", False)), **extra}


def _dataset_kinds(store, dataset: str) -> set[str]:
    """The item kinds of a dataset (raises PrefvalError naming the database when there is no such dataset)."""
    store.get_dataset(dataset)
    return {it.kind for it in store.items(dataset)}


def _study_over_dataset(store, args) -> str:
    """The study an MCQ dataset's answers are stored in: --study NAME (made over the dataset when it does not
    exist), else DATASET-llm, made once over every item of the dataset (task mcq, nobody assigned), so that reports
    find the model's answers as they find them in any study."""
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec

    name = args.study or f"{args.dataset}-llm"
    existing = {s.name: s for s in store.studies(include_archived=True)}
    if name in existing:
        study = existing[name]
        if args.dataset not in (study.settings.get("datasets") or []):
            raise PrefvalError(f"study '{name}' is not over dataset '{args.dataset}' (it is over "
                               f"{', '.join(study.settings.get('datasets') or []) or 'no dataset'}); give another "
                               "--study NAME")
        _check_quota(store, name, getattr(args, "quota", None))
        return name
    create_study(store, StudySpec(name=name, task="mcq", datasets=[args.dataset],
                                  annotators_per_item=getattr(args, "quota", None)))
    echo(f"study {name} made over every item of dataset {args.dataset} for the answers (prefval report {name})")
    return name


def _answer(store, args) -> int:
    from generator.evaluate import runs

    if args.quota is not None and not (args.dataset and "mcq" in _dataset_kinds(store, args.dataset)):
        raise PrefvalError("--quota sets the people per item of the study made over an MCQ --dataset; without "
                           "one no study is made (`prefval study create ... --annotators-per-item N`)")
    if args.dataset:
        kinds = _dataset_kinds(store, args.dataset)
        if "mcq" in kinds and "rubric_item" not in kinds:
            if args.out_dataset:
                raise PrefvalError(
                    f"dataset '{args.dataset}' holds MCQ items, not open queries (rubric_item): to answer them drop "
                    f"--out-dataset (the answers are stored in study {args.study or args.dataset + '-llm'}, made "
                    "over the whole dataset; --study NAME names it)")
            name = args.study or f"{args.dataset}-llm"
            if args.dry_run and name not in {x.name for x in store.studies(include_archived=True)}:
                items = [it for it in store.items(args.dataset) if it.kind == "mcq"]  # nothing is written
                jobs = [j for it in items for j in runs.mcq_item_jobs(
                    store, it, args.model, blind=args.blind, rotate=args.rotate_options, params=_params(args),
                    api_base=args.api_base, key=("", it.id))]
                print(_dry_run(store, jobs, args) + f" (study {name} would be made over the dataset)")
                return 0
            args.study = _study_over_dataset(store, args)
        elif "rubric_item" in kinds:
            if not args.out_dataset:
                raise PrefvalError(f"dataset '{args.dataset}' holds open queries (rubric_item): give --out-dataset "
                                   "NAME, the dataset of rubric items the model's answers are written to")
            if args.study:
                raise PrefvalError("open queries are answered from --dataset into --out-dataset; --study is not "
                                   "used with them")
            return _open_answers(store, args)
        else:
            raise PrefvalError(f"dataset '{args.dataset}' holds no MCQ items and no open queries (rubric_item): it "
                               f"holds {', '.join(sorted(kinds)) or 'no items'}")
    elif args.out_dataset:
        raise PrefvalError("--out-dataset goes with --dataset (open queries: rubric_item items)")
    if not args.study:
        raise PrefvalError("answer needs --study (MCQ/T-F items), --dataset (a whole MCQ dataset, or open queries "
                           "with --out-dataset)")
    jobs = runs.mcq_jobs(store, args.study, args.model, blind=args.blind, rotate=args.rotate_options,
                         params=_params(args), api_base=args.api_base)
    if args.dry_run:
        print(_dry_run(store, jobs, args))
        return 0
    name = args.name or args.model
    _, result = _run_stage(store, args, jobs, _config(args, study=args.study, blind=args.blind,
                                                      rotate_options=args.rotate_options), "answer", [args.model])
    added = runs.write_mcq_answers(store, args.study, name, args.model, result, rotate=args.rotate_options)
    for who, n in added.items():
        echo(f"study {args.study}: {n} answers of {who} added")
    return 0


def _open_answers(store, args) -> int:
    from generator.evaluate import runs

    jobs = runs.open_answer_jobs(store, args.dataset, args.model, params=_params(args), api_base=args.api_base)
    if args.dry_run:
        print(_dry_run(store, jobs, args))
        return 0
    _, result = _run_stage(store, args, jobs, _config(args, dataset=args.dataset, out=args.out_dataset),
                           "answer (open)", [args.model])
    n = runs.write_open_answers(store, args.dataset, args.out_dataset, args.model, result)
    echo(f"dataset {args.out_dataset}: {n} answers added")
    return 0


def _judge_study(store, args) -> int:
    """judge-rubric and judge-pairwise: plan the study's calls, send them, store the verdicts."""
    from generator.evaluate import runs

    plan, write = {"judge-rubric": (runs.rubric_jobs, runs.write_rubric_scores),
                   "judge-pairwise": (runs.pairwise_jobs, runs.write_pairwise)}[args.kind]
    jobs = plan(store, args.study, args.model, params=_params(args), api_base=args.api_base)
    if args.dry_run:
        print(_dry_run(store, jobs, args))
        return 0
    _, result = _run_stage(store, args, jobs, _config(args, study=args.study), args.kind, [args.model])
    for who, n in write(store, args.study, args.name or args.model, args.model, result).items():
        echo(f"study {args.study}: {n} verdicts of {who} added")
    return 0


def _judge_reflection(store, args) -> int:
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec
    from generator.evaluate import runs

    if args.samples < 1:
        raise PrefvalError("--samples must be at least 1")
    if any(d.name == args.out for d in store.datasets()):  # one evaluated model per --out: its items' ids
        from reports.llm_answers import responder_of

        other = sorted({responder_of(it) for it in store.items(args.out)} - {args.responder})
        if other:
            raise PrefvalError(f"--out {args.out} holds the responses of {', '.join(other)}; give each evaluated "
                               f"model its own --out (`prefval report {args.out} OTHER ...` puts them in one "
                               "BenchPreS Table 1)")
    params = {"temperature": args.temperature if args.temperature else 0.7, "max_tokens": args.max_tokens}
    jobs = runs.response_jobs(store, args.dataset, args.responder, args.samples, params=params,
                              api_base=args.api_base)
    if args.dry_run:
        print(_dry_run(store, jobs, args) + " (responses only; the judge's calls depend on them)")
        return 0
    config = _config(args, dataset=args.dataset, responder=args.responder, samples=args.samples, out=args.out)
    _, result = _run_stage(store, args, jobs, config, "responses", [args.responder])
    responses = {k: r.text for k, r in result.replies.items()}
    if not responses:
        print("no response was written, so there is nothing to judge", file=sys.stderr)
        return 0 if result.failed else 1  # failed calls: exit code 4 (run); none to send at all: 1
    n_items = runs.write_reflection_dataset(store, args.dataset, args.out, args.responder, responses)
    if not any(s.name == args.out for s in store.studies()):
        create_study(store, StudySpec(name=args.out, task="judge_validation", datasets=[args.out],
                                      annotators_per_item=args.quota))
    else:
        _check_quota(store, args.out, args.quota)
    jobs = runs.reflection_judge_jobs(store, args.dataset, args.model, responses, params=_params(args),
                                      api_base=args.api_base)
    _, verdicts = _run_stage(store, args, jobs, config, "judge-reflection", [args.model])
    name = args.name or args.model
    n = runs.write_reflection_verdicts(store, args.dataset, args.out, name, args.model, verdicts)
    echo(f"dataset and study {args.out}: {n_items} responses x attributes added, {n} verdicts of {name} added")
    from reports.llm_answers import RATES, mean_sd, reflection_rates
    from reports.study_data import load_study_data

    rates = reflection_rates(load_study_data(store, args.out), name, args.responder)
    print(f"  responses of {args.responder}, judged by {name}:")
    for r in rates:
        print(f"  sample {r['sample']}: MR {_num(r['mr'])}, AAR {_num(r['aar'])}, AAR - MR {_num(r['diff'])} "
              f"(n={r['n']})")
    for key, label in RATES:
        mean, sd = mean_sd([r[key] for r in rates if r[key] is not None])
        if mean is not None:
            print(f"  {label}: mean {mean:.3f}, sd {_num(sd)} over {len(rates)} samples")
    return 0


def _num(v) -> str:
    return "undefined" if v is None else f"{v:.3f}"


def _consensus(store, args) -> int:
    from generator.evaluate import runs

    models = [m.strip() for m in args.models.split(",") if m.strip()]
    if len(models) < 1 or len(set(models)) != len(models):
        raise PrefvalError("--models: give distinct validator models, comma-separated")
    m = runs.parse_rule(args.rule or f"{len(models)}/{len(models)}", len(models))
    jobs = []
    for model in models:
        jobs += runs.mcq_jobs(store, args.study, model, blind=True, rotate=False, params=_params(args),
                              api_base=args.api_base, tag=model)
    if args.dry_run:
        print(_dry_run(store, jobs, args))
        return 0
    config = {"kind": "consensus", "models": models, "rule": f"{m}/{len(models)}", "study": args.study,
              "out": args.out_dataset, "params": _params(args), "api_base": args.api_base, "budget_usd": args.budget}
    _, result = _run_stage(store, args, jobs, config, "consensus", models)
    for model in models:
        sub = runs.RunResult({k: v for k, v in result.replies.items() if k[0] == model})
        runs.write_mcq_answers(store, args.study, runs.validator_name(model), model, sub, rotate=False, tag=model)
    verdict = runs.consensus_verdicts(store, args.study, models, m)
    funnel = {"candidates": verdict["units"], "with a key": verdict["keyed"],
              "answered by all validators": verdict["answered_by_all"], "passed": len(verdict["passed"])}
    settings = {"consensus": {"study": args.study, "validators": models, "rule": f"{m}/{len(models)}",
                              "funnel": funnel}}
    n = runs.write_consensus_dataset(store, args.study, args.out_dataset, verdict, settings)
    rate = len(verdict["passed"]) / verdict["keyed"] if verdict["keyed"] else None
    print(" -> ".join(f"{k} {v}" for k, v in funnel.items())
          + (f"; pass rate {rate:.3f}" if rate is not None else ""))
    print(f"dataset {args.out_dataset}: {n} items added (rule {m}/{len(models)})")
    return 0
