"""The generator's pipeline: runs the configured stages in order (``generator.config.STAGES``), one output row at a
time through the stage functions of ``generator.stages``, saves every row as soon as it is finished (``gen_rows``,
done or failed with the reason), and writes each stage's done rows as a dataset that the existing task types take:

| stage | dataset items (kind) | made through |
|---|---|---|
| personas | persona_record (persona) ``u001:persona`` | persona_filter |
| profiles | persona_record (persona + profile) ``u001:persona``, ``u001:profile`` | RealPref profile records |
| events | persona_record (event) ``u001:e01`` | |
| preferences | persona_record (preference) ``u001:p01:preference`` | RealPref preference records |
| generalized | persona_record (preference) ``u001:g01:preference`` | RealPref preference records |
| conversations | conversation_record ``u001:p01:conv2`` (pairwise) | RealPref conversation records |
| queries | mcq: ``u001:p01:e2:mcq`` + ``:t`` / ``:f`` T/F, snippet = the type-2 conversation | RealPref query records |
| evolution | mcq with five options and ``distractor_index`` = the pre-evolution option ``u001:p01:evolved`` | |
| contexts | mcq ``u001:p01:e2:2000`` on the user's context of ~2000 tokens (a stored context) | |

Every item's ``metadata.provenance`` holds pipeline, stage, row, model, template id@version, seed and the rows it
was made from ("stage/row_key"); run id, tokens and cost of each row are in ``gen_rows``.

Determinism: every choice is drawn from ``random.Random`` seeded with the config's seed and the row's key (never
from the order in which replies arrive), rows are listed by their seq, and a row that is done is never made again,
so a run that is killed and run again ends with the same rows as an uninterrupted one given the same replies.
"""
from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from generator import stages as st
from generator.config import STAGES, PipelineConfig
from generator.llm_types import BudgetExhausted, LLMCallFailed, ServerFault
from generator.schemas import (
    EXPRESSION_TYPES, PREFERENCE_TYPES, EventSessionIn, EventsIn, EvolveIn, GeneralizeIn, PreferenceSessionIn,
    PreferencesIn, ProfileIn, QueryIn, RandomSessionIn, parse_date,
)
from generator.templates import random_subjects, topic_pool
from storage.errors import PrefvalError
from storage.generation import GenRow
from storage.models import ContextIn, ItemIn, Message, new_id
from storage.payloads import McqPayload, PersonaRecordPayload

DATASET_FORMAT = "generator"
#: ``token_counter(model, messages) -> int``: prompt tokens of a message list.
TokenCounter = Callable[[str, list[dict]], int]


class BudgetStop(PrefvalError):
    """The run stopped because the budget is spent; everything finished before is saved."""


class ServerStop(PrefvalError):
    """The run stopped early because its server failed (nothing answers, or most requests fail alike); everything
    finished before is saved. The message is the client's one line (generator.llm_types.ServerFault)."""


@dataclass
class StageReport:
    """What a stage did in this run. skipped: rows already done by an earlier run (not made again).
    prompt_tokens / completion_tokens / cost_usd: sums over the rows whose values are known; usage_unknown /
    unpriced: rows made by calls whose tokens / cost are unknown (left out of the sums); estimated /
    cost_estimated_usd: rows whose cost was priced from tokens counted offline (a server without usage), and that
    part of cost_usd."""

    stage: str
    total: int = 0
    done: int = 0
    failed: int = 0
    skipped: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    usage_unknown: int = 0
    unpriced: int = 0
    estimated: int = 0
    cost_estimated_usd: float = 0.0
    reasons: list[str] = field(default_factory=list)


@dataclass
class _Job:
    key: str
    seq: int
    parents: list[str]
    make: Callable[[st.RowLLM], Awaitable[dict]]


def _session_messages(sessions: list[list[dict]]) -> list[dict]:
    return [t for s in sessions for t in s]


class Pipeline:
    """One run of a configured pipeline over a Store.

    client: anything with ``async complete(request, output_model) -> LLMReply`` (``generator.client.LLMClient``,
    or a fake in tests). token_counter: counts context tokens (default: litellm's ``token_counter``, offline).
    dry_run: nothing is written; rows live in memory only (the client is expected to send nothing either).
    on_progress: called as ``on_progress(stage, report)`` after every row; on_stage as ``on_stage(stage, n)``
    before a stage starts its n rows still to make. row_limit: rows in flight at once (default the config's
    concurrency; with provider batches every row of a stage, so that they go out in one batch).
    """

    def __init__(self, store, config: PipelineConfig, client: Any, *, run_id: str | None = None,
                 token_counter: TokenCounter | None = None, dry_run: bool = False,
                 on_progress: Callable[[str, StageReport], None] | None = None,
                 on_stage: Callable[[str, int], None] | None = None, row_limit: int | None = None):
        self.store, self.config, self.client = store, config, client
        self.run_id = run_id or new_id()
        self.dry_run = dry_run
        self.on_progress = on_progress
        self.on_stage = on_stage
        self._count = token_counter
        self.row_limit = row_limit  # rows in flight at once (default config.concurrency; batches: all of a stage)
        self.rows: dict[str, dict[str, GenRow]] = {s: {} for s in STAGES}
        for r in store.gen_rows(config.name, status="done"):
            self.rows.setdefault(r.stage, {})[r.row_key] = r
        self._stop = False
        self._fault: ServerFault | None = None
        self._failed_keys: set[str] = set()  # row keys that failed in this run, of every stage

    # ---- running ---------------------------------------------------------------------------------------------
    async def run(self, only: str | None = None) -> list[StageReport]:
        """Run every configured stage in order (or only ``only``), writing datasets after each.

        Raises BudgetStop when the budget ran out, ServerStop when the client stopped because the server failed
        (finished rows are saved, the stage's dataset is written, either way); PrefvalError for a stage that is not
        configured or a missing input file."""
        if only and only not in self.config.stages:
            raise PrefvalError(f"stage '{only}' is not in the config (configured: {', '.join(self.config.stages)})")
        reports = []
        for name in STAGES:
            if name not in self.config.stages or (only and name != only):
                continue
            rep = StageReport(stage=name)
            reports.append(rep)
            jobs = getattr(self, f"_jobs_{name}")()
            await self._run_jobs(name, jobs, rep)
            if not self.dry_run:
                self.write_dataset(name)
            if self._fault is not None:
                raise ServerStop(f"{self._fault} (stage {name}: {rep.done} rows done in this run)")
            if self._stop:
                raise BudgetStop(f"budget reached during stage {name}: {rep.done} rows done in this stage, the rest "
                                 "not started; run again with a higher --budget to go on")
        return reports

    async def _run_jobs(self, stage: str, jobs: list[_Job], rep: StageReport) -> None:
        have = self.rows[stage]
        rep.total = len(jobs)
        rep.skipped = sum(1 for j in jobs if j.key in have)
        todo = [j for j in jobs if j.key not in have]
        if self.on_stage:
            self.on_stage(stage, len(todo))
        model = self.config.model_for(stage) if stage in ("profiles", "events", "preferences", "generalized",
                                                          "conversations", "queries", "evolution") else None
        sem = asyncio.Semaphore(self.row_limit or self.config.concurrency)
        settings = self.config.stage(stage)

        async def one(job: _Job) -> None:
            async with sem:
                if self._stop:
                    return
                llm = st.RowLLM(client=self.client, model=model or "", api_base=self.config.api_base,
                                params=dict(settings.params), template_dir=self.config.path(self.config.template_dir))
                status, output, reason = "done", None, None
                try:
                    output = await job.make(llm)
                except BudgetExhausted:
                    self._stop = True
                    return
                except ServerFault as exc:  # the client stopped: this row is not made, nor any other
                    self._stop = True
                    if self._fault is None:
                        self._fault = exc
                    return
                except (LLMCallFailed, st.StageCheckFailed) as exc:
                    status, reason = "failed", str(getattr(exc, "reason", None) or exc).splitlines()[0][:500]
                    llm.calls += getattr(exc, "attempts", 0)
                except Exception as exc:  # a reply that breaks a later step: the row fails, the run goes on
                    status, reason = "failed", f"{type(exc).__name__}: {exc}".splitlines()[0][:500]
                row = GenRow(pipeline=self.config.name, stage=stage, row_key=job.key, seq=job.seq, status=status,
                             output=output, parents=job.parents, run_id=self.run_id, model=model,
                             template=",".join(llm.templates) or None, seed=self.config.seed,
                             prompt_tokens=llm.prompt_tokens, completion_tokens=llm.completion_tokens,
                             cost_usd=llm.cost_usd, calls=llm.calls, reason=reason)
                if not self.dry_run:
                    self.store.save_gen_rows([row])
                if status == "done":
                    have[job.key] = row
                    rep.done += 1
                else:
                    rep.failed += 1
                    rep.reasons.append(f"{job.key}: {reason}")
                    self._failed_keys.add(job.key)
                rep.prompt_tokens += llm.prompt_tokens or 0
                rep.completion_tokens += llm.completion_tokens or 0
                rep.cost_usd += llm.cost_usd or 0.0
                rep.usage_unknown += llm.prompt_tokens is None or llm.completion_tokens is None
                rep.unpriced += llm.cost_usd is None
                if llm.cost_estimated and llm.cost_usd is not None:
                    rep.estimated += 1
                    rep.cost_estimated_usd += llm.cost_usd
                rep.calls += llm.calls
                if self.on_progress:
                    self.on_progress(stage, rep)

        await asyncio.gather(*(one(j) for j in todo))

    def done(self, stage: str) -> list[GenRow]:
        """The done rows of a stage in their deterministic order (seq, then key)."""
        return sorted(self.rows.get(stage, {}).values(), key=lambda r: (r.seq, r.row_key))

    def _prov(self, row: GenRow) -> dict:
        return {"pipeline": self.config.name, "stage": row.stage, "row": row.row_key, "model": row.model,
                "template": row.template, "seed": row.seed, "parents": row.parents}

    # ---- 1 personas ------------------------------------------------------------------------------------------
    def _persona_lines(self) -> list[str]:
        s = self.config.stage("personas")
        path = self.config.path(s.file)
        from storage.textfile import read_text

        try:
            text = read_text(path)  # UTF-8, a byte-order mark dropped, CRLF/CR read as LF
        except OSError as exc:
            raise PrefvalError(f"{path}: cannot read the personas ({exc.strerror})") from None
        if not s.field:
            return text.splitlines()
        import json

        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                out.append("")
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise PrefvalError(f"{path}: line {n}: not JSON ({exc.msg})") from None
            if not isinstance(rec, dict) or not isinstance(rec.get(s.field), str):
                raise PrefvalError(f"{path}: line {n}: field '{s.field}': expected a string")
            out.append(rec[s.field])
        return out

    def _jobs_personas(self) -> list[_Job]:
        s = self.config.stage("personas")
        lines = self._persona_lines()
        picked = st.sample_personas(lines, s.n or 10, self.config.seed)
        jobs = []
        for k, (line, text) in enumerate(picked):
            uid = f"u{k + 1:03d}"

            async def make(llm, uid=uid, line=line, text=text) -> dict:
                return {"user_id": uid, "persona": text, "line": line + 1}
            jobs.append(_Job(uid, k, [], make))
        return jobs

    # ---- 2 profiles ------------------------------------------------------------------------------------------
    def _jobs_profiles(self) -> list[_Job]:
        ref_year = parse_date(self.config.reference_date).year
        jobs = []
        for r in self.done("personas"):
            o = r.output

            async def make(llm, o=o) -> dict:
                p = await st.profile(ProfileIn(user_id=o["user_id"], persona=o["persona"], reference_year=ref_year),
                                     llm)
                return {"user_id": o["user_id"], "Demographics": {
                    "Name": p.name, "Birth": str(p.birth_year), "Gender": p.gender, "Education": p.education,
                    "Occupation": p.occupation, "Economic Status": p.economic_status,
                    "Marital Status": p.marital_status},
                    "Original Persona": o["persona"], "Extended Persona": p.extended_persona}
            jobs.append(_Job(o["user_id"], r.seq, [f"personas/{r.row_key}"], make))
        return jobs

    def _profile_view(self, uid: str) -> dict:
        o = self.rows["profiles"][uid].output
        return {"demographics": o["Demographics"], "extended_persona": o["Extended Persona"]}

    # ---- 3 events --------------------------------------------------------------------------------------------
    def _jobs_events(self) -> list[_Job]:
        n = self.config.stage("events").n or 8
        jobs = []
        for r in self.done("profiles"):
            uid = r.row_key

            async def make(llm, uid=uid) -> dict:
                prof = self._profile_view(uid)
                out = await st.life_events(EventsIn(user_id=uid, profile=prof, n_events=n,
                                                    reference_date=self.config.reference_date),
                                           llm, int(prof["demographics"]["Birth"]))
                return {"user_id": uid, "events": [{"event_id": f"e{i + 1:02d}", **e.model_dump()}
                                                   for i, e in enumerate(out.events)]}
            jobs.append(_Job(uid, r.seq, [f"profiles/{uid}"], make))
        return jobs

    # ---- 4 preferences ---------------------------------------------------------------------------------------
    def _jobs_preferences(self) -> list[_Job]:
        n = self.config.stage("preferences").n or 10
        pool = topic_pool(self.config.path(self.config.topics))
        jobs = []
        for r in self.done("events"):
            uid = r.row_key
            if uid not in self.rows["profiles"]:
                continue

            async def make(llm, uid=uid, events=r.output["events"]) -> dict:
                prof = self._profile_view(uid)
                topics = st.sample_topics(pool, n, self.config.seed, uid)
                out = await st.preferences(PreferencesIn(
                    user_id=uid, profile=prof, events=[{"date": e["date"], "event": e["event"]} for e in events],
                    topics=topics, preference_types={k: v for k, v in PREFERENCE_TYPES.items()}),
                    llm, int(prof["demographics"]["Birth"]), self.config.reference_date)
                return {"user_id": uid, "preferences": [
                    {"pref_id": f"p{i + 1:02d}", "Preference": p.preference, "Type": PREFERENCE_TYPES[p.type],
                     "Topic": p.topic, "Date": p.event_date, "Event": p.event, "Reason": p.reason}
                    for i, p in enumerate(out)]}
            jobs.append(_Job(uid, r.seq, [f"profiles/{uid}", f"events/{uid}"], make))
        return jobs

    def _prefs(self, uid: str) -> list[dict]:
        row = self.rows["preferences"].get(uid)
        return row.output["preferences"] if row else []

    # ---- 5 generalized ---------------------------------------------------------------------------------------
    def _jobs_generalized(self) -> list[_Job]:
        n = self.config.stage("generalized").n or 3
        pool = topic_pool(self.config.path(self.config.topics))
        jobs = []
        for r in self.done("preferences"):
            uid = r.row_key
            if len(r.output["preferences"]) < 2:
                continue

            async def make(llm, uid=uid, prefs=r.output["preferences"]) -> dict:
                out = await st.generalized(GeneralizeIn(user_id=uid, n=n, preferences=[
                    {"pref_id": p["pref_id"], "preference": p["Preference"], "type": p["Type"], "topic": p["Topic"]}
                    for p in prefs]), llm, pool)
                return {"user_id": uid, "generalized": [
                    {"pref_id": f"g{i + 1:02d}", "Preference": g.preference, "Type": PREFERENCE_TYPES[g.type],
                     "Topic": g.topic, "Inference_Reason": g.inference_reason, "Generalized_From": g.source_pref_ids}
                    for i, g in enumerate(out)]}
            jobs.append(_Job(uid, r.seq, [f"preferences/{uid}"], make))
        return jobs

    # ---- 6 conversations -------------------------------------------------------------------------------------
    def _jobs_conversations(self) -> list[_Job]:
        s = self.config.stage("conversations")
        subjects = random_subjects()
        jobs: list[_Job] = []
        for i in range(s.random_sessions):
            subject = subjects[i % len(subjects)]

            async def make_random(llm, i=i, subject=subject) -> dict:
                out = await st.random_session(RandomSessionIn(index=i, subject=subject), llm)
                return {"kind": "random", "subject": subject, "sessions": [out.turns()]}
            jobs.append(_Job(f"random:{i:03d}", i, [], make_random))
        base = len(jobs)
        for k, r in enumerate(self.done("events")):
            uid = r.row_key
            if uid not in self.rows["profiles"]:
                continue
            for e in r.output["events"]:
                async def make_event(llm, uid=uid, e=e) -> dict:
                    out = await st.event_session(EventSessionIn(user_id=uid, profile=self._profile_view(uid),
                                                                event=e), llm)
                    return {"kind": "event", "user_id": uid, "event_id": e["event_id"], "dates": [e["date"]],
                            "sessions": [out.turns()]}
                jobs.append(_Job(f"event:{uid}:{e['event_id']}", base + k * 1000 + int(e["event_id"][1:]),
                                 [f"events/{uid}"], make_event))
        base = len(jobs) + 10 ** 6
        for k, r in enumerate(self.done("preferences")):
            uid = r.row_key
            for p in r.output["preferences"]:
                for t in s.expression_types:
                    n_sess = s.feedback_sessions if t == 4 else 1

                    async def make_pref(llm, uid=uid, p=p, t=t, n_sess=n_sess) -> dict:
                        out = await st.preference_sessions(PreferenceSessionIn(
                            user_id=uid, profile=self._profile_view(uid), preference=p, expression_type=t,
                            expression_name=EXPRESSION_TYPES[t], n_sessions=n_sess), llm)
                        sessions = out.session_turns()
                        return {"kind": "preference", "user_id": uid, "pref_id": p["pref_id"], "expression_type": t,
                                "Preference": p["Preference"], "dates": st.session_dates(p["Date"], len(sessions)),
                                "sessions": sessions}
                    jobs.append(_Job(f"pref:{uid}:{p['pref_id']}:e{t}",
                                     base + k * 10000 + int(p["pref_id"][1:]) * 10 + t,
                                     [f"preferences/{uid}"], make_pref))
        return jobs

    # ---- 8 queries (run before contexts: the long-context items need them) -------------------------------------
    def _jobs_queries(self) -> list[_Job]:
        jobs = []
        for k, r in enumerate(self.done("preferences")):
            uid = r.row_key
            for p in r.output["preferences"]:
                key = f"{uid}:{p['pref_id']}"

                async def make(llm, uid=uid, p=p, key=key) -> dict:
                    q = await st.query(QueryIn(user_id=uid, pref_id=p["pref_id"], preference=p["Preference"],
                                               type=p["Type"], topic=p["Topic"]), llm)
                    t_query, f_query, _ = st.tf_queries(q, self.config.seed, key)
                    return {"user_id": uid, "pref_id": p["pref_id"], "Preference": p["Preference"], "Type": p["Type"],
                            "Topic": p["Topic"], "Query": q.query, "Explanation": q.explanation,
                            "MCQ_options": q.options.model_dump(), "Correct_Answer": q.correct,
                            "T_Query": t_query, "F_Query": f_query}
                jobs.append(_Job(key, k * 1000 + int(p["pref_id"][1:]), [f"preferences/{uid}"], make))
        return jobs

    # ---- 9 evolution -----------------------------------------------------------------------------------------
    def _jobs_evolution(self) -> list[_Job]:
        share = self.config.stage("evolution").share
        jobs = []
        for r in self.done("queries"):
            if not st.chosen_for_evolution(self.config.seed, r.row_key, share):
                continue
            q = r.output
            pref = next((p for p in self._prefs(q["user_id"]) if p["pref_id"] == q["pref_id"]), None)
            if pref is None:
                continue

            async def make(llm, q=q, pref=pref, key=r.row_key) -> dict:
                ev = await st.evolution(EvolveIn(
                    user_id=q["user_id"], pref_id=q["pref_id"], preference=q["Preference"], type=q["Type"],
                    topic=q["Topic"], since=pref["Date"], query=q["Query"], options=q["MCQ_options"],
                    correct=q["Correct_Answer"]), llm, self.config.reference_date)
                options, correct, distractor = st.evolved_options(q["MCQ_options"], q["Correct_Answer"],
                                                                  ev.new_option, self.config.seed, key)
                return {"user_id": q["user_id"], "pref_id": q["pref_id"], "query": q["Query"], "options": options,
                        "correct_index": correct, "distractor_index": distractor, "topic": q["Topic"],
                        "preference": ev.evolved_preference, "pre_evolution_preference": q["Preference"],
                        "reason": ev.reason, "date": ev.event_date, "event": ev.event,
                        "dates": [ev.event_date], "sessions": [ev.turns()]}
            jobs.append(_Job(r.row_key, r.seq, [f"queries/{r.row_key}", f"preferences/{q['user_id']}"], make))
        return jobs

    # ---- 7 contexts ------------------------------------------------------------------------------------------
    def _tokens(self, messages: list[dict]) -> int:
        if self._count is None:
            from generator.tokens import count_tokens

            self._count = count_tokens
        return int(self._count(self.config.model_for("queries"), messages))

    def _personal_sessions(self, uid: str, etype: int) -> list[tuple[str, str, list[dict]]]:
        """(date, key, messages) of the user's life-event sessions, their type-``etype`` preference sessions and
        their evolution sessions, in chronological order (ties by key)."""
        out = []
        for key, r in self.rows["conversations"].items():
            o = r.output
            if o.get("user_id") != uid:
                continue
            if o["kind"] == "event" or (o["kind"] == "preference" and o["expression_type"] == etype):
                for i, (d, sess) in enumerate(zip(o["dates"], o["sessions"])):
                    out.append((d, f"conversations/{key}#{i}", sess))
        for key, r in self.rows["evolution"].items():
            if r.output["user_id"] == uid:
                out.append((r.output["dates"][0], f"evolution/{key}#0", r.output["sessions"][0]))
        return sorted(out, key=lambda x: (parse_date(x[0]), x[1]))

    def _jobs_contexts(self) -> list[_Job]:
        s = self.config.stage("contexts")
        etypes = self.config.stage("conversations").expression_types
        randoms = [r for r in self.done("conversations") if r.output["kind"] == "random"]
        specs = []  # (label, total target or None, interval tokens, tail tokens)
        for x in s.lengths:
            if isinstance(x, int):
                specs.append((str(x), x, None, None) if s.mode == "interval" else (str(x), x, 0, None))
            else:
                specs.append((f"i{x.interval}t{x.tail}", None, x.interval, x.tail))
        specs = sorted(set(specs), key=lambda sp: sp[0])
        jobs = []
        # A context is made once, from every session it can hold: a user with a row that failed in this run (theirs,
        # or any random session) waits, so that the run that retries the row makes the context an uninterrupted run
        # makes (a context made without the session would stay as it is).
        blocked_all = any(key.startswith("random:") for key in self._failed_keys)
        blocked = {part for key in self._failed_keys for part in key.split(":")}
        for k, prof in enumerate(self.done("profiles")):
            uid = prof.row_key
            if uid not in self.rows["events"] or uid not in self.rows["preferences"]:
                continue
            if blocked_all or uid in blocked:
                continue
            for t in etypes:
                for n, spec in enumerate(specs):
                    async def make(llm, uid=uid, t=t, spec=spec) -> dict:
                        return self._assemble(uid, t, spec, randoms)
                    jobs.append(_Job(f"{uid}:e{t}:{spec[0]}", k * 100000 + t * 1000 + n,
                                     [f"profiles/{uid}", f"events/{uid}", f"preferences/{uid}"], make))
        return jobs

    def _assemble(self, uid: str, etype: int, spec: tuple, randoms: list[GenRow]) -> dict:
        """Insert random sessions (drawn without replacement, order by ``Random(f"{seed}:ctx:{uid}:{etype}:
        {label}")``) into the user's sessions (RealPref section 3.4, Table 2). spec = (label, total, interval,
        tail): with a total, random sessions go between the user's sessions at random gaps (interval is None) or at
        the end (interval 0) until the context has at least ``total`` tokens; otherwise about ``interval`` tokens
        go between the sessions, then ``tail`` tokens at the end. Stops early when the random sessions run out
        (``reached`` is then False)."""
        label, total_target, interval, tail = spec
        personal = self._personal_sessions(uid, etype)
        if not personal:
            raise st.StageCheckFailed(f"{uid} has no sessions of expression type {etype}")
        rng = random.Random(f"{self.config.seed}:ctx:{uid}:{etype}:{label}")
        pool = [f"conversations/{r.row_key}#0" for r in randoms]
        rng.shuffle(pool)
        texts = {k: s for _, k, s in personal}
        for r in randoms:
            texts[f"conversations/{r.row_key}#0"] = r.output["sessions"][0]
        total = sum(self._tokens(s) for _, _, s in personal)
        if total_target is not None:
            phases = [("tail" if interval == 0 else "interval", total_target - total)]
        else:
            phases = [("interval", interval), ("tail", tail)]
        gaps: dict[int, list[str]] = {}
        used, reached = 0, True
        for where, budget in phases:
            added = 0
            while added < budget and used < len(pool):
                key = pool[used]
                used += 1
                gap = len(personal) if where == "tail" else rng.randint(0, len(personal) - 1)
                gaps.setdefault(gap, []).append(key)
                added += self._tokens(texts[key])
            reached = reached and added >= budget
            total += added
        order: list[str] = []
        for g in range(len(personal) + 1):
            order.extend(gaps.get(g, []))
            if g < len(personal):
                order.append(personal[g][1])
        return {"user_id": uid, "expression_type": etype, "length": label, "target_tokens": total_target,
                "interval_tokens": interval, "tail_tokens": tail, "n_tokens": total, "reached": reached,
                "n_random": used, "session_keys": order}

    def _session_by_key(self, key: str) -> list[dict]:
        ref, idx = key.rsplit("#", 1)
        stage, row = ref.split("/", 1)
        return self.rows[stage][row].output["sessions"][int(idx)]

    # ---- datasets --------------------------------------------------------------------------------------------
    def items_for(self, stage: str) -> tuple[list[ItemIn], list[ContextIn]]:
        """The items (and contexts) of a stage's dataset, built from its done rows in their order."""
        from storage.importers.realpref import items_from_records

        src = f"pipeline {self.config.name}"
        rows = self.done(stage)
        if stage == "personas":
            return [ItemIn(external_id=f"{r.row_key}:persona", kind="persona_record", payload=PersonaRecordPayload(
                text=r.output["persona"], record_type="persona",
                metadata={"user_id": r.row_key, "line": r.output["line"], "provenance": self._prov(r)},
            ).model_dump(exclude_none=True)) for r in rows], []
        if stage == "profiles":
            return items_from_records((src, f"row {r.row_key}", {**r.output, "provenance": self._prov(r)})
                                      for r in rows), []
        if stage == "events":
            items = []
            for r in rows:
                for e in r.output["events"]:
                    items.append(ItemIn(external_id=f"{r.row_key}:{e['event_id']}", kind="persona_record",
                                        payload=PersonaRecordPayload(
                        text=e["event"], record_type="event", parent_external_id=f"{r.row_key}:profile",
                        metadata={"user_id": r.row_key, "event_id": e["event_id"], "date": e["date"],
                                  "duration_type": e["duration_type"], "provenance": self._prov(r)},
                    ).model_dump(exclude_none=True)))
            return items, []
        if stage in ("preferences", "generalized"):
            field_ = "preferences" if stage == "preferences" else "generalized"
            return items_from_records((src, f"row {r.row_key}", {"user_id": r.row_key, **p,
                                                                 "provenance": self._prov(r)})
                                      for r in rows for p in r.output[field_]), []
        if stage == "conversations":
            return items_from_records(
                (src, f"row {r.row_key}", self._conversation_record(r)) for r in rows
                if r.output["kind"] == "preference"), []
        if stage == "queries":
            return items_from_records(self._query_records(rows)), []
        if stage == "evolution":
            return [self._evolved_item(r) for r in rows], []
        if stage == "contexts":
            return self._context_items(rows)
        raise PrefvalError(f"unknown stage {stage}")

    def _conversation_record(self, r: GenRow) -> dict:
        o = r.output
        return {"user_id": o["user_id"], "pref_id": o["pref_id"], "expression_type": o["expression_type"],
                "Preference": o["Preference"], "sessions": o["sessions"], "provenance": self._prov(r)}

    def _query_records(self, rows: list[GenRow]):
        src = f"pipeline {self.config.name}"
        convs = self.rows["conversations"]
        for r in rows:
            q = r.output
            kinds = [t for t in EXPRESSION_TYPES if f"pref:{q['user_id']}:{q['pref_id']}:e{t}" in convs]
            for t in kinds or [None]:
                rec = {**q, "provenance": self._prov(r)}
                if t is not None:
                    rec["Expression_Type"] = t
                    crow = convs[f"pref:{q['user_id']}:{q['pref_id']}:e{t}"]
                    rec["provenance"] = {**rec["provenance"],
                                         "parents": [*r.parents, f"conversations/{crow.row_key}"]}
                    yield src, f"row {crow.row_key}", self._conversation_record(crow)
                yield src, f"row {r.row_key}", rec

    def _evolved_item(self, r: GenRow) -> ItemIn:
        o = r.output
        return ItemIn(external_id=f"{r.row_key}:evolved", kind="mcq", payload=McqPayload(
            question=o["query"], options=o["options"], correct_index=o["correct_index"],
            distractor_index=o["distractor_index"], question_type="evolved_preference", topic=o["topic"],
            metadata={"user_id": o["user_id"], "pref_id": o["pref_id"], "preference": o["preference"],
                      "pre_evolution_preference": o["pre_evolution_preference"], "evolution_reason": o["reason"],
                      "evolution_event": o["event"], "evolution_date": o["date"], "provenance": self._prov(r)},
        ).model_dump(exclude_none=True))

    def _context_items(self, rows: list[GenRow]) -> tuple[list[ItemIn], list[ContextIn]]:
        items, contexts = [], []
        for r in rows:
            o = r.output
            uid, t, length = o["user_id"], o["expression_type"], o["length"]
            msgs = [Message(**m) for k in o["session_keys"] for m in self._session_by_key(k)]
            cid = f"{uid}:e{t}:{length}"
            contexts.append(ContextIn(external_id=cid, messages=msgs))
            for q in self.done("queries"):
                if q.output["user_id"] != uid or f"pref:{uid}:{q.output['pref_id']}:e{t}" not in self.rows[
                        "conversations"]:
                    continue
                ev = self.rows["evolution"].get(q.row_key)
                meta = {"user_id": uid, "pref_id": q.output["pref_id"], "expression_type": t,
                        "context_tokens": o["n_tokens"], "context_length": length,
                        "preference": q.output["Preference"], "preference_type": q.output["Type"],
                        "provenance": {**self._prov(r), "parents": [*r.parents, f"queries/{q.row_key}"]
                                       + ([f"evolution/{ev.row_key}"] if ev else [])}}
                if ev:
                    e = ev.output
                    payload = McqPayload(question=e["query"], options=e["options"], correct_index=e["correct_index"],
                                         distractor_index=e["distractor_index"], question_type="evolved_preference",
                                         topic=e["topic"], metadata={**meta, "preference": e["preference"],
                                                                     "pre_evolution_preference":
                                                                         e["pre_evolution_preference"]})
                else:
                    opts = q.output["MCQ_options"]
                    payload = McqPayload(question=q.output["Query"], options=[opts[x] for x in st.LETTERS],
                                         correct_index=st.LETTERS.index(q.output["Correct_Answer"]),
                                         question_type="preference", topic=q.output["Topic"], metadata=meta)
                items.append(ItemIn(external_id=f"{q.row_key}:e{t}:{length}", kind="mcq",
                                    payload=payload.model_dump(exclude_none=True), context_external_id=cid,
                                    context_end=len(msgs)))
        return items, contexts

    def write_dataset(self, stage: str):
        """Add the stage's done rows to its dataset (``config.dataset_for(stage)``) in one transaction; rows
        already there are unchanged. Returns the ImportResult, or None when the stage has no done row."""
        items, contexts = self.items_for(stage)
        if not items and not contexts:
            return None
        return self.store.import_items(self.config.dataset_for(stage), DATASET_FORMAT, items, contexts=contexts,
                                       source_path=f"pipeline {self.config.name} stage {stage}",
                                       file_hash=f"run {self.run_id}")


def run_pipeline(store, config: PipelineConfig, client: Any, *, only: str | None = None, **kw) -> list[StageReport]:
    """Run ``Pipeline(store, config, client, **kw).run(only)`` to completion (see Pipeline)."""
    return asyncio.run(Pipeline(store, config, client, **kw).run(only))
