"""The evaluation runs of `prefval evaluate KIND`: plan the LLM calls, send them through the one LLM client, and
write the results beside the human annotations.

Each kind has a ``plan_*`` function (store -> list of :class:`Job`, nothing written, used for --dry-run too) and a
``write_*`` function (the replies -> annotations of annotators of kind "llm", or a new dataset), both synchronous;
:func:`run_jobs` sends the jobs. Every call goes through ``client.complete``: its SQLite cache makes a run
resumable (a finished call is never sent again) and records model, template version, parameters, the raw reply,
the parsed value, tokens, cost and time per call. Results are written through
``storage.importers.judgments.add_judgment_records`` (the same checks and the same idempotent ids as `prefval import
judgments`), so re-running a finished run adds nothing.

Kinds (the annotator names they write):
- answer (MCQ/T-F studies): the model answers each item with its conversation (full) or with the question and
  options only (blind) -> annotator NAME; with rotations of the options one annotator NAME/rot<k> per rotation
  plus NAME = the plurality answer over the rotations (a tie is "can't tell").
- answer (open queries, rubric_item datasets): the model answers each item's query knowing the preference -> a new
  dataset of rubric_item items with the model's answers (for rubric studies).
- judge-rubric (rubric studies; RealPref G.3 / F.2): scores 1..5 and a reason per dimension of the study's rubric.
- judge-pairwise (pairwise studies): the judge sees both records in both orders -> NAME (dataset A's record first)
  and NAME/swapped (B first); the report's position consistency compares them.
- judge-reflection (gold_candidate datasets; BenchPreS 3.3): a model writes the response for each (profile,
  recipient, task) from the profile's memory, S samples; a judge decides per attribute whether the response
  reflects it -> a new dataset of gold_candidate items with the response, and the judge's verdicts.
- consensus (HorizonBench 5.1): k validator models answer each item blind -> validator:<model> each; an item
  passes when at least m of the k answered it wrongly; the passing items become a new dataset.
"""
from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Hashable

from generator.evaluate.templates import (LETTERS, PairwiseVerdict, ReflectionVerdict, letter_answer_model, render,
                                          rubric_scores_model)
from generator.llm_types import BudgetExhausted, LLMCallFailed, LLMReply, LLMRequest, ServerFault
from storage.errors import PrefvalError

DEFAULT_PARAMS = {"temperature": 0.0, "max_tokens": 512}


@dataclass
class Job:
    """One LLM call to make: the request, the pydantic model its reply must validate into (None: free text), and
    key, what the reply is for (a unit and rotation, an item and sample ...)."""

    key: Hashable
    request: LLMRequest
    output_model: Any = None


@dataclass
class RunResult:
    """What run_jobs got: replies and failures (one-line reasons) by job key; budget_stopped when the budget ran
    out (jobs without a reply were not sent); stopped: the one line of the server fault that stopped the run
    (generator.llm_types.ServerFault), or None; charged_usd: what the budget counted (set by the caller)."""

    replies: dict[Hashable, LLMReply] = field(default_factory=dict)
    failed: dict[Hashable, str] = field(default_factory=dict)
    budget_stopped: bool = False
    budget_reason: str | None = None
    stopped: str | None = None
    charged_usd: float = 0.0

    def totals(self) -> dict[str, Any]:
        """calls, cached, failed, prompt/completion tokens and cost (USD) of the replies sent in this run: sums of
        the known values, None when none is known (unknown, never 0); usage_unknown / unpriced count the replies
        without usage / without a price, cost_estimated those priced from tokens counted offline."""
        r = list(self.replies.values())
        fresh = [x for x in r if not x.cached]
        pts = [x.prompt_tokens for x in fresh if x.prompt_tokens is not None]
        cts = [x.completion_tokens for x in fresh if x.completion_tokens is not None]
        costs = [x.cost_usd for x in fresh if x.cost_usd is not None]
        unknown_usage = sum(1 for x in fresh if x.prompt_tokens is None)
        unpriced = sum(1 for x in fresh if x.cost_usd is None)
        return {"replies": len(r), "cached": len(r) - len(fresh), "failed": len(self.failed),
                "prompt_tokens": sum(pts) if pts or not unknown_usage else None,
                "completion_tokens": sum(cts) if cts or not unknown_usage else None,
                "usage_unknown": unknown_usage,
                "cost_usd": sum(costs) if costs or not unpriced else None, "unpriced": unpriced,
                "cost_estimated": sum(1 for x in fresh if getattr(x, "cost_estimated", False)),
                "budget_stopped": self.budget_stopped, "stopped": self.stopped}


async def run_jobs(client: Any, jobs: list[Job]) -> RunResult:
    """Send every job through ``client.complete`` at once (the client's per-model limits queue them). A failed call
    is recorded and the others go on; BudgetExhausted stops new calls cleanly (replies already cached stay), and so
    does a ServerFault (the client stopped: its line is kept in ``stopped``)."""
    out = RunResult()

    async def one(job: Job) -> None:
        if out.budget_stopped or out.stopped:
            return
        try:
            out.replies[job.key] = await client.complete(job.request, job.output_model)
        except BudgetExhausted as exc:
            out.budget_stopped = True
            out.budget_reason = out.budget_reason or str(exc)
        except ServerFault as exc:
            out.stopped = out.stopped or str(exc)
        except LLMCallFailed as exc:
            out.failed[job.key] = exc.reason

    await asyncio.gather(*(one(j) for j in jobs))
    return out


def _request(model: str, template: str, messages, output_model: Any, params: dict, api_base: str | None,
             sample_index: int = 0, schema_name: str = "reply") -> LLMRequest:
    schema = None
    if output_model is not None:
        from generator.client import json_schema_for

        schema = json_schema_for(output_model)
    return LLMRequest(model=model, messages=tuple(messages), template=template, schema=schema,
                      schema_name=schema_name, params=dict(params), sample_index=sample_index, api_base=api_base)


def _study_units(store, study_name: str, shape: str):
    """(study, units, items by id) of a study whose task's answers have `shape` (storage.task_specs.TaskSpec.
    answer_shape: "choice", "scores", "winner"). Raises PrefvalError naming the tasks that have it otherwise."""
    from storage import task_specs

    study = store.get_study(study_name)
    if task_specs.get(study.task_type).answer_shape != shape:
        raise PrefvalError(f"study '{study_name}' is a {study.task_type} study; this run needs a "
                           f"{' or '.join(task_specs.with_shape(shape))} study")
    units = store.units(study.id)
    items = store.get_items([u.item_id for u in units] + [u.item_b_id for u in units if u.item_b_id])
    return study, units, items


# ---- MCQ answers (answer, consensus) -----------------------------------------------------------------------------
def _conversation(store, item) -> str:
    lines = []
    if item.context_id:
        for m in store.context_messages(item.context_id, 0, item.context_end):
            lines.append(f"{m.role}: {m.content}")
    for m in item.payload.get("snippet") or []:
        lines.append(f"{m['role']}: {m['content']}")
    return "\n".join(lines) if lines else "(no earlier conversation)"


def mcq_jobs(store, study_name: str, model: str, *, blind: bool, rotate: bool, params: dict | None = None,
             api_base: str | None = None, tag: str = "") -> list[Job]:
    """One job per (unit, rotation) of an MCQ/T-F study (rotation 0 only without rotate). Rotation r shows the
    options starting at original option r (circularly). Job key: (tag, unit id, r)."""
    _, units, items = _study_units(store, study_name, "choice")
    return [job for u in units for job in mcq_item_jobs(store, items[u.item_id], model, blind=blind, rotate=rotate,
                                                         params=params, api_base=api_base, key=(tag, u.id))]


def mcq_item_jobs(store, item, model: str, *, blind: bool, rotate: bool, params: dict | None = None,
                  api_base: str | None = None, key: tuple = ("",)) -> list[Job]:
    """The jobs of one MCQ/T-F item (see mcq_jobs); job key: (*key, rotation)."""
    opts = item.payload["options"]
    jobs = []
    for r in (range(len(opts)) if rotate else [0]):
        shown = opts[r:] + opts[:r]
        options = "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(shown))
        if blind:
            template, messages = render("mcq_blind", question=item.payload["question"], options=options)
        else:
            template, messages = render("mcq_full", question=item.payload["question"], options=options,
                                        context=_conversation(store, item))
        out_model = letter_answer_model(len(opts))
        jobs.append(Job((*key, r), _request(model, template, messages, out_model, params or DEFAULT_PARAMS,
                                            api_base, schema_name="mcq_answer"), out_model))
    return jobs


def _original_index(reply: LLMReply, r: int, n: int) -> int:
    return (LETTERS.index(reply.value.answer) + r) % n


def write_mcq_answers(store, study_name: str, name: str, model: str, result: RunResult, *, rotate: bool,
                      tag: str = "") -> dict[str, int]:
    """Write the answers as llm annotations: NAME (and NAME/rot<k> with rotations). Returns {annotator: added}."""
    _, units, items = _study_units(store, study_name, "choice")
    from storage.importers.judgments import add_judgment_records

    per_rot: dict[int, list[dict]] = {}
    combined = []
    for u in units:
        item = items[u.item_id]
        n = len(item.payload["options"])
        picks = []
        for r in (range(n) if rotate else [0]):
            reply = result.replies.get((tag, u.id, r))
            if reply is None:
                continue
            idx = _original_index(reply, r, n)
            picks.append(idx)
            per_rot.setdefault(r, []).append({"item": item.external_id, "choice": idx})
        if rotate and picks:
            top = Counter(picks).most_common(2)
            tie = len(top) == 2 and top[0][1] == top[1][1]
            combined.append({"item": item.external_id, "cant_tell": True} if tie
                            else {"item": item.external_id, "choice": top[0][0]})
    added = {}
    targets = [(f"{name}/rot{r}", recs) for r, recs in sorted(per_rot.items())] + [(name, combined)] if rotate \
        else [(name, per_rot.get(0, []))]
    for who, recs in targets:
        if recs:
            added[who] = add_judgment_records(store, recs, study_name, who, model=model, source="evaluate answer").n_added
    return added


# ---- open answers ------------------------------------------------------------------------------------------------
def open_answer_jobs(store, dataset: str, model: str, *, params: dict | None = None,
                     api_base: str | None = None) -> list[Job]:
    """One free-text job per rubric_item of a dataset: the model answers its query knowing its preference."""
    items = [it for it in store.items(dataset) if it.kind == "rubric_item"]
    if not items:
        raise PrefvalError(f"dataset '{dataset}' has no rubric_item items (open queries)")
    jobs = []
    for it in items:
        template, messages = render("open_answer", preference=it.payload["preference"], query=it.payload["query"])
        jobs.append(Job(it.id, _request(model, template, messages, None, params or DEFAULT_PARAMS, api_base)))
    return jobs


def write_open_answers(store, dataset: str, out_dataset: str, model: str, result: RunResult) -> int:
    """A new dataset of rubric_item items (same external ids) whose answer is the model's reply. Returns added."""
    from storage.models import ItemIn

    items = []
    for it in store.items(dataset):
        reply = result.replies.get(it.id)
        if reply is None or not reply.text.strip():
            continue
        items.append(ItemIn(external_id=it.external_id, kind="rubric_item", payload={
            "preference": it.payload["preference"], "query": it.payload["query"], "answer": reply.text.strip(),
            "metadata": {"model": model, "source_dataset": dataset, "call": reply.cache_key}}))
    if not items:
        return 0
    return store.import_items(out_dataset, "evaluate", items, source_path=f"evaluate answer {dataset}").n_added


# ---- rubric judge ------------------------------------------------------------------------------------------------
def _rubric_text(rubric: dict, dims: list[str]) -> str:
    by_name = {d["name"]: d for d in rubric["dimensions"]}
    parts = []
    for name in dims:
        d = by_name[name]
        levels = "\n".join(f"  {k}: {v}" for k, v in sorted(d["levels"].items(), key=lambda kv: int(kv[0])))
        parts.append(f"- {name} ({d.get('title') or name}): {d['description']}\n{levels}")
    return "\n".join(parts)


def rubric_jobs(store, study_name: str, model: str, *, params: dict | None = None,
                api_base: str | None = None) -> list[Job]:
    """One job per non-calibration unit of a rubric study, with the study's own rubric (the one people score on)."""
    study, units, items = _study_units(store, study_name, "scores")
    dims = list(study.settings.get("dimensions") or [d["name"] for d in study.settings["rubric"]["dimensions"]])
    rubric = _rubric_text(study.settings["rubric"], dims)
    out_model = rubric_scores_model(tuple(dims))
    jobs = []
    for u in units:
        if u.extra.get("calibration"):
            continue
        p = items[u.item_id].payload
        template, messages = render("judge_rubric", preference=p["preference"], query=p["query"],
                                    answer=p["answer"], rubric=rubric)
        jobs.append(Job(u.id, _request(model, template, messages, out_model, params or DEFAULT_PARAMS, api_base,
                                       schema_name="rubric_scores"), out_model))
    return jobs


def write_rubric_scores(store, study_name: str, name: str, model: str, result: RunResult) -> dict[str, int]:
    """The judge's scores as llm annotations {"scores": {dimension: 1..5}} of the rubric study. Returns
    {name: added}."""
    from storage.importers.judgments import add_judgment_records

    study, units, items = _study_units(store, study_name, "scores")
    recs = []
    for u in units:
        reply = result.replies.get(u.id)
        if reply is not None:
            recs.append({"item": items[u.item_id].external_id,
                         "scores": {d: getattr(reply.value, d).score for d in type(reply.value).model_fields}})
    if not recs:
        return {}
    return {name: add_judgment_records(store, recs, study_name, name, model=model,
                                       source="evaluate judge-rubric").n_added}


# ---- pairwise judge ----------------------------------------------------------------------------------------------
def _record_text(payload: dict) -> str:
    conv = "\n".join(f"{m['role']}: {m['content']}" for m in payload.get("messages") or [])
    return f"Preference: {payload.get('preference', '')}\nConversation:\n{conv or '(none)'}"


def pairwise_jobs(store, study_name: str, model: str, *, params: dict | None = None,
                  api_base: str | None = None) -> list[Job]:
    """Two jobs per pair unit: key (unit id, "AB") with dataset A's record first, (unit id, "BA") swapped."""
    _, units, items = _study_units(store, study_name, "winner")
    jobs = []
    for u in units:
        a, b = _record_text(items[u.item_id].payload), _record_text(items[u.item_b_id].payload)
        for order, (first, second) in (("AB", (a, b)), ("BA", (b, a))):
            template, messages = render("judge_pairwise", first=first, second=second)
            jobs.append(Job((u.id, order), _request(model, template, messages, PairwiseVerdict,
                                                    params or DEFAULT_PARAMS, api_base,
                                                    schema_name="pairwise_verdict"), PairwiseVerdict))
    return jobs


def write_pairwise(store, study_name: str, name: str, model: str, result: RunResult) -> dict[str, int]:
    """Verdicts as llm annotations {"winner": A|B|tie}: NAME for the A-first order, NAME/swapped for B-first."""
    from storage.importers.judgments import add_judgment_records

    _, units, items = _study_units(store, study_name, "winner")
    out = {}
    for order, who in (("AB", name), ("BA", f"{name}/swapped")):
        recs = []
        for u in units:
            reply = result.replies.get((u.id, order))
            if reply is None:
                continue
            w = reply.value.winner
            winner = "tie" if w == "tie" else ("A" if (w == "1") == (order == "AB") else "B")
            recs.append({"item": items[u.item_id].external_id, "item_b": items[u.item_b_id].external_id,
                         "winner": winner})
        if recs:
            out[who] = add_judgment_records(store, recs, study_name, who, model=model,
                                            source="evaluate judge-pairwise").n_added
    return out


# ---- reflection (BenchPreS) -------------------------------------------------------------------------------------
def _profiles(store, dataset: str):
    """profile -> list of gold_candidate items; (profile, recipient, task) -> its items (the attributes judged)."""
    items = [it for it in store.items(dataset) if it.kind == "gold_candidate"]
    if not items:
        raise PrefvalError(f"dataset '{dataset}' has no gold_candidate items")
    by_profile: dict[str, list] = {}
    by_context: dict[tuple[str, str, str], list] = {}
    for it in items:
        p = it.payload
        prof = p.get("profile_name") or "(one profile)"
        by_profile.setdefault(prof, []).append(it)
        by_context.setdefault((prof, p["recipient"], p["task"]), []).append(it)
    return by_profile, by_context


def _memory(items) -> str:
    seen, lines = set(), []
    for it in items:
        text = it.payload.get("statement") or it.payload["attribute"]
        if text not in seen:
            seen.add(text)
            lines.append(f"- {text}")
    return "\n".join(lines)


def response_jobs(store, dataset: str, model: str, samples: int, *, params: dict | None = None,
                  api_base: str | None = None) -> list[Job]:
    """Free-text responses: one per (profile, recipient, task) and sample (sample_index 0..samples-1)."""
    by_profile, by_context = _profiles(store, dataset)
    jobs = []
    for (prof, recipient, task) in by_context:
        template, messages = render("reflection_response", user=prof, memory=_memory(by_profile[prof]),
                                    recipient=recipient, task=task)
        for s in range(samples):
            params_s = dict(params or {"temperature": 0.7, "max_tokens": 600})
            jobs.append(Job((prof, recipient, task, s), _request(model, template, messages, None, params_s, api_base,
                                                                  sample_index=s)))
    return jobs


def reflection_judge_jobs(store, dataset: str, judge_model: str, responses: dict, *, params: dict | None = None,
                          api_base: str | None = None) -> list[Job]:
    """One job per (attribute item, sample) whose response exists: does the response reflect the attribute?
    responses: (profile, recipient, task, sample) -> response text. Job key: (item id, sample)."""
    _, by_context = _profiles(store, dataset)
    jobs = []
    for ctx, items in by_context.items():
        for s in sorted({k[3] for k in responses if k[:3] == ctx}):
            for it in items:
                template, messages = render("judge_reflection", attribute=it.payload["attribute"],
                                            response=responses[(*ctx, s)])
                jobs.append(Job((it.id, s), _request(judge_model, template, messages, ReflectionVerdict,
                                                     params or DEFAULT_PARAMS, api_base,
                                                     schema_name="reflection_verdict"), ReflectionVerdict))
    return jobs


def write_reflection_dataset(store, dataset: str, out_dataset: str, responder: str, responses: dict) -> int:
    """A gold_candidate dataset, one item per (attribute, sample) with metadata.response, .sample and .responder
    (external id "<item>#s<sample>"); gold label = the source item's candidate_label. Returns items added."""
    from storage.models import ItemIn

    _, by_context = _profiles(store, dataset)
    out = []
    for ctx, items in by_context.items():
        for (p, r, t, s), text in sorted(responses.items(), key=lambda kv: kv[0][3]):
            if (p, r, t) != ctx or not text.strip():
                continue
            for it in items:
                payload = {k: v for k, v in it.payload.items() if k != "metadata"}
                payload["metadata"] = {**(it.payload.get("metadata") or {}), "response": text.strip(), "sample": s,
                                       "responder": responder, "source_item": it.external_id}
                out.append(ItemIn(external_id=f"{it.external_id}#s{s}", kind="gold_candidate", payload=payload))
    if not out:
        return 0
    return store.import_items(out_dataset, "evaluate", out, source_path=f"evaluate judge-reflection {dataset}").n_added


def write_reflection_verdicts(store, dataset: str, study_name: str, name: str, model: str, result: RunResult) -> int:
    """The judge's verdicts as llm annotations {"reflected": bool} of the judge_validation study over the new
    dataset. Returns added."""
    from storage.importers.judgments import add_judgment_records

    ext = {it.id: it.external_id for it in store.items(dataset)}
    recs = [{"item": f"{ext[iid]}#s{s}", "reflected": reply.value.reflected}
            for (iid, s), reply in result.replies.items()]
    if not recs:
        return 0
    return add_judgment_records(store, recs, study_name, name, model=model,
                                source="evaluate judge-reflection").n_added


# ---- consensus filter (HorizonBench 5.1) -------------------------------------------------------------------------
def parse_rule(rule: str, k: int) -> int:
    """"m/k" -> m (the number of validators that must answer wrongly). Raises PrefvalError when malformed, when
    its k differs from the number of validator models, or m is not in 1..k."""
    try:
        m_s, k_s = rule.split("/")
        m, kk = int(m_s), int(k_s)
    except ValueError:
        raise PrefvalError(f"--rule {rule!r}: expected M/K, e.g. 5/5 or 3/5") from None
    if kk != k:
        raise PrefvalError(f"--rule {rule}: {kk} validators in the rule, but --models names {k}")
    if not 1 <= m <= k:
        raise PrefvalError(f"--rule {rule}: M must be between 1 and {k}")
    return m


def validator_name(model: str) -> str:
    """The annotator name of a consensus validator model."""
    return f"validator:{model}"


def consensus_verdicts(store, study_name: str, models: list[str], m: int) -> dict[str, Any]:
    """Per unit: how many of the validators answered wrongly (from their stored answers), and whether the item
    passes (>= m wrong among the k validators; an item without a key cannot pass; a validator with no answer
    counts as not wrong). Returns {"units": n, "keyed": n, "answered_by_all": n, "passed": [item ids],
    "wrong": {unit id: wrong count}}."""
    study, units, items = _study_units(store, study_name, "choice")
    names = {validator_name(x) for x in models}
    by_id = {a.id: a.name for a in store.annotators() if a.name in names}
    answers: dict[str, dict[str, dict]] = {}
    for a in store.current_annotations(study.id):
        if a.annotator_id in by_id:
            answers.setdefault(a.unit_id, {})[by_id[a.annotator_id]] = a.answer or {}
    wrong, passed, keyed, complete = {}, [], 0, 0
    for u in units:
        key = items[u.item_id].payload.get("correct_index")
        got = answers.get(u.id, {})
        complete += len(got) == len(names)
        if key is None:
            continue
        keyed += 1
        w = sum(1 for ans in got.values() if ans.get("choice") != key)
        wrong[u.id] = w
        if w >= m:
            passed.append(u.item_id)
    return {"units": len(units), "keyed": keyed, "answered_by_all": complete, "passed": passed, "wrong": wrong}


def write_consensus_dataset(store, study_name: str, out_dataset: str, verdict: dict, settings: dict) -> int:
    """The passing items (with their contexts) as a new dataset that studies take as input; the consensus
    settings and funnel are stored with the dataset. Returns items added."""
    from storage.models import ContextIn, ItemIn

    items = store.get_items(verdict["passed"])
    contexts, out = {}, []
    for iid in verdict["passed"]:
        it = items[iid]
        ctx_ext = None
        if it.context_id:
            ctx_ext = f"ctx:{it.context_id}"
            if ctx_ext not in contexts:
                contexts[ctx_ext] = ContextIn(external_id=ctx_ext, messages=store.context_messages(it.context_id))
        out.append(ItemIn(external_id=it.external_id, kind=it.kind, payload=it.payload,
                          context_external_id=ctx_ext, context_end=it.context_end if ctx_ext else None))
    if not out:
        return 0
    return store.import_items(out_dataset, "consensus", out, contexts=list(contexts.values()),
                              source_path=f"evaluate consensus {study_name}", settings=settings).n_added


