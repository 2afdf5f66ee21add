"""Provider batches (issue 26, part 2), against the fake OpenAI-compatible server's /v1/files and /v1/batches on
127.0.0.1: the calls not in the cache go out as one batch, recorded in the database before they are submitted; the
results go through the client's validation, checks and cache at the batch price; lines that failed or expired, and a
batch that failed, are retried online; invalid lines get their repair online; the budget bounds what is submitted;
a run killed after submitting (kill -9, or between upload and submission) and started again re-attaches to its batch
instead of paying twice; `prefval status` shows each batch. And a 10,000-call stage run by batch and online gives the
same answers, the requests counted at the server."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from annotator.cli import main
from bench.fake_llm_server import FakeLLMServer
from generator.batch import BatchClient, BatchOptions
from generator.client import LLMClient, Price, RetryPolicy, json_schema_for
from generator.fake_replies import register_all
from generator.llm_types import LLMRequest
from storage.store import Store
from tests.conftest import REPO, SAMPLE_DATA
from tests.llm_fixtures import FAKE_KEY
from tests.test_evaluate import answers_of, mcq_maker

FAST = ["--batch", "--batch-poll", "0.05"]


def ev(db: str, *args: str) -> int:
    return main(["evaluate", *args, "--db", db])


def answer(fake_llm, *extra: str) -> list[str]:
    return ["answer", "--study", "st", "--model", "openai/good", "--blind", "--api-base", fake_llm.url,
            "--price", "1,2", *extra]


def choices(db: str, who: str = "openai/good") -> dict:
    return {a.unit_id: a.answer for a in answers_of(db, "st", who)}


@pytest.mark.slow
def test_a_run_by_batch_sends_no_chat_request_and_gives_the_online_answers(mcq_study, fake_llm, fake_key, capsys,
                                                                          tmp_path):
    fake_llm.register("mcq_answer", mcq_maker)
    fake_llm.batch.delay = 0.2
    assert ev(mcq_study, *answer(fake_llm, *FAST)) == 0
    err = capsys.readouterr().err
    assert "batch pb-" in err and "submitted: 6 requests of openai/good" in err and "ended completed: 6 replies" in err
    assert fake_llm.log.count() == 0 and len(fake_llm.log.batch_lines) == 6
    assert fake_llm.batch_calls["create_batch"] == 1 and fake_llm.batch_calls["create_file"] == 1
    with Store.open(mcq_study, mode="ro") as s:
        [b] = s.llm_batches()
        calls = s.llm_calls()
    assert (b.status, b.n_lines, b.n_completed, b.price_factor) == ("done", 6, 6, 0.5)
    # at the batch price: half of 1 / 2 USD per 1M tokens
    for c in calls:
        assert c.cost_usd == pytest.approx((c.prompt_tokens * 1 + c.completion_tokens * 2) / 1e6 * 0.5)
    by_batch = choices(mcq_study)
    online = str(tmp_path / "online.db")
    import shutil

    shutil.copyfile(mcq_study, online)
    with Store.open(online, mode="rw") as s:
        s.db.execute("DELETE FROM llm_calls")
        s.db.conn.commit()
    assert ev(online, *answer(fake_llm), "--name", "online") == 0
    assert fake_llm.log.count() == 6  # online: one chat request each
    assert {u: a for u, a in choices(online, "online").items()} == by_batch
    assert ev(mcq_study, *answer(fake_llm, *FAST)) == 0  # again: all from the cache, no new batch
    assert fake_llm.batch_calls["create_batch"] == 1


@pytest.mark.slow
def test_failed_and_expired_lines_and_invalid_ones_are_retried_online(mcq_study, fake_llm, fake_key, capsys):
    fake_llm.register("mcq_answer", mcq_maker)
    bodies = []

    def fail_second(custom_id, body):
        bodies.append(custom_id)
        return len(bodies) == 2
    fake_llm.batch.fail_line = fail_second
    fake_llm.batch.expire_after = 5  # the sixth line is left when the batch expires
    fake_llm.add_fault("invalid_json", times=1)  # the first online retry gets a bad reply: repaired
    assert ev(mcq_study, *answer(fake_llm, *FAST)) == 0
    err = capsys.readouterr().err
    assert "ended expired: 4 replies taken, 2 to retry online" in err
    assert fake_llm.log.count() == 3  # 2 online retries, one of them repaired once
    assert len(choices(mcq_study)) == 6
    with Store.open(mcq_study, mode="ro") as s:
        [b] = s.llm_batches()
        lines = sorted(st for _, _, st in s.llm_batch_lines(b.id))
    assert b.status == "done" and lines == ["done"] * 4 + ["expired", "failed"]


@pytest.mark.slow
def test_an_invalid_batch_line_gets_its_repair_online(mcq_study, fake_llm, fake_key):
    served = []

    def bad_first(body, rng):
        served.append(1)
        return "not json at all" if len(served) == 1 else mcq_maker(body, rng)
    fake_llm.register("mcq_answer", bad_first)
    assert ev(mcq_study, *answer(fake_llm, *FAST)) == 0
    [repair] = fake_llm.log.requests
    assert "cannot be used: not JSON" in repair.body["messages"][-1]["content"]
    assert len(choices(mcq_study)) == 6


@pytest.mark.slow
def test_a_batch_that_fails_whole_goes_online(mcq_study, fake_llm, fake_key, capsys):
    fake_llm.register("mcq_answer", mcq_maker)
    fake_llm.batch.fail_batch = True
    assert ev(mcq_study, *answer(fake_llm, *FAST)) == 0
    assert "ended failed: 0 replies taken, 6 to retry online" in capsys.readouterr().err
    assert fake_llm.log.count() == 6 and len(choices(mcq_study)) == 6


@pytest.mark.slow
def test_the_budget_bounds_what_a_batch_may_cost_before_it_is_submitted(mcq_study, fake_llm, fake_key, capsys):
    fake_llm.register("mcq_answer", mcq_maker)
    # each request: ~170 prompt tokens + 512 max_tokens at 1 USD per token, halved: ~340 USD at most
    args = answer(fake_llm, *FAST)
    args[args.index("--price") + 1] = "1000000,1000000"
    assert ev(mcq_study, *args, "--budget", "1000") == 3
    assert 1 <= len(fake_llm.log.batch_lines) < 6 and fake_llm.log.count() == 0
    with Store.open(mcq_study, mode="ro") as s:
        assert sum(c.cost_usd for c in s.llm_calls()) <= 1000
    assert "do not fit in what is left" in capsys.readouterr().err


@pytest.mark.slow
def test_status_shows_each_batch(mcq_study, fake_llm, fake_key, capsys):
    fake_llm.register("mcq_answer", mcq_maker)
    assert ev(mcq_study, *answer(fake_llm, *FAST)) == 0
    capsys.readouterr()
    assert main(["status", "--db", mcq_study]) == 0
    out = capsys.readouterr().out
    assert "provider batches (scope, batch: status, requests, done, failed, created):" in out
    assert "evaluate:answer:st pb-" in out and ": done, 6 requests, 6 done, 0 failed" in out
    assert main(["status", "--format", "json", "--db", mcq_study]) == 0
    [b] = json.loads(capsys.readouterr().out)["batches"]
    assert b["status"] == "done" and b["requests"] == 6 and b["provider_batch_id"].startswith("batch-")


# ---- killed after submitting: re-attached, never paid twice --------------------------------------------------------
def _requests(url: str, n: int = 5) -> list[LLMRequest]:
    from tests.test_llm_client_unit import Verdict

    return [LLMRequest(model="openai/fake-model", messages=({"role": "user", "content": f"judge {i}"},),
                       template="judge@1", schema=json_schema_for(Verdict), schema_name="verdict", api_base=url)
            for i in range(n)]


KILLED_SCRIPT = r"""
import asyncio, os, signal, sys
sys.path.insert(0, sys.argv[1])
from generator.batch import BatchClient, BatchOptions
from generator.client import LLMClient, RetryPolicy, import_litellm
from storage.store import Store
from tests.test_llm_batches import _requests
from tests.test_llm_client_unit import Verdict

db, url, when = sys.argv[2], sys.argv[3], sys.argv[4]
litellm = import_litellm()


class Api:
    # litellm, except that the process is killed (SIGKILL) around acreate_batch
    def __getattr__(self, name):
        return getattr(litellm, name)

    async def acreate_batch(self, **kw):
        if when == "after submission":
            await litellm.acreate_batch(**kw)  # the provider has it; the database never hears its id
        os.kill(os.getpid(), signal.SIGKILL)


async def main():
    with Store.open(db, mode="create") as store:
        client = LLMClient(store, retry=RetryPolicy(timeout=5))
        batch = BatchClient(client, store, "test:kill", BatchOptions(poll_every=0.05, settle=0.05), api=Api())
        await asyncio.gather(*[batch.complete(r, Verdict) for r in _requests(url)])

asyncio.run(main())
"""


@pytest.mark.parametrize("when", ["after upload", "after submission"])
@pytest.mark.slow
def test_killed_between_upload_and_record_a_resumed_run_finds_or_submits_the_batch_once(when, fake_llm, fake_key,
                                                                                     db_file, tmp_path):
    from tests.test_llm_client_unit import Verdict

    fake_llm.batch.delay = 0.1
    script = tmp_path / "killed.py"
    script.write_text(KILLED_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), str(REPO), db_file, fake_llm.url, when], cwd=REPO,
                          env={**os.environ, "OPENAI_API_KEY": FAKE_KEY}, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    with Store.open(db_file, mode="ro") as s:
        [b] = s.llm_batches()
        assert b.status == "submitting" and b.input_file_id and b.provider_batch_id is None
    created_before = fake_llm.batch_calls["create_batch"]

    async def second():
        with Store.open(db_file, mode="rw") as store:
            async with LLMClient(store, retry=RetryPolicy(timeout=5)) as client:
                batch = BatchClient(client, store, "test:kill", BatchOptions(poll_every=0.05, settle=0.05))
                replies = await asyncio.gather(*[batch.complete(r, Verdict) for r in _requests(fake_llm.url)])
                await batch.aclose()
                return replies, batch.batch_stats

    replies, stats = asyncio.run(second())
    assert len(replies) == 5 and stats.reattached == 1 and stats.batches == 0
    # found at the provider by its input file (after submission), or submitted from the uploaded file: once
    assert fake_llm.batch_calls["create_batch"] == 1 and fake_llm.batch_calls["create_file"] == 1
    assert created_before == (1 if when == "after submission" else 0)
    assert fake_llm.log.count() == 0 and len(fake_llm.log.batch_lines) == 5


@pytest.mark.slow
def test_generate_killed_after_submitting_resumes_its_batch_and_makes_the_items_of_an_online_run(fake_key, tmp_path):
    srv = FakeLLMServer(host="127.0.0.1", port=0).start()
    register_all(srv)
    srv.batch.delay = 1.0
    config = SAMPLE_DATA / "generator" / "pipeline.yaml"
    db = str(tmp_path / "killed.db")
    env = {**os.environ, "OPENAI_API_KEY": FAKE_KEY}
    cmd = [sys.executable, "-m", "annotator.cli", "generate", str(config), "--api-base", srv.url, "--batch",
           "--batch-poll", "0.1", "--db", db]
    try:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        t0 = time.monotonic()
        while srv.batch_calls["create_batch"] < 2 and proc.poll() is None and time.monotonic() - t0 < 120:
            time.sleep(0.02)  # the second stage's batch was submitted: kill the run while it waits for it
        time.sleep(0.2)
        assert proc.poll() is None, proc.stderr.read()
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with Store.open(db, mode="ro") as s:
            open_batches = [b for b in s.llm_batches() if b.status != "done"]
        assert len(open_batches) == 1 and open_batches[0].provider_batch_id
        lines_before = [r.hash for r in srv.log.batch_lines]
        rerun = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        assert rerun.returncode == 0, rerun.stderr
        assert "re-attached" in rerun.stderr
        all_lines = [r.hash for r in srv.log.batch_lines]
        assert len(all_lines) == len(set(all_lines))  # no request was paid for twice
        assert srv.log.count() == 0  # nothing online
        with Store.open(db, mode="ro") as s:
            assert all(b.status == "done" for b in s.llm_batches())
            assert len(set(lines_before) & set(all_lines)) == len(lines_before)
        online = str(tmp_path / "online.db")
        assert main(["generate", str(config), "--api-base", srv.url, "--db", online]) == 0
        from tests.test_generator_pipeline import snapshot

        with Store.open(db, mode="ro") as a, Store.open(online, mode="ro") as b:
            assert {k: sorted(map(repr, v)) for k, v in snapshot(a).items()} == \
                {k: sorted(map(repr, v)) for k, v in snapshot(b).items()}
    finally:
        srv.stop()


# ---- a 10,000-call stage, by batch and online ----------------------------------------------------------------------
#: calls of the batch-and-online comparison: 10,000 with PREFVAL_SCALE_TESTS=1 (about 4 minutes on 2 shared cores:
#: the online half is 10,000 litellm calls), else 1,000
SCALE_CALLS = 10_000 if os.environ.get("PREFVAL_SCALE_TESTS") == "1" else 1_000


@pytest.mark.slow
def test_a_10000_call_stage_by_batch_and_online_gives_the_same_answers(tmp_path, fake_key, capsys):
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec
    from storage.models import ItemIn
    from storage.payloads import McqPayload

    n = SCALE_CALLS
    srv = FakeLLMServer(host="127.0.0.1", port=0).start()
    srv.register("mcq_answer", mcq_maker)
    items = [ItemIn(external_id=f"q{i}", kind="mcq", payload=McqPayload(
        question=f"Question number {i}?", options=[f"Option text {i}-{j}" for j in range(4)],
        correct_index=i % 4).model_dump(exclude_none=True)) for i in range(n)]
    dbs = {}
    try:
        for how in ("batch", "online"):
            db = dbs[how] = str(tmp_path / f"{how}.db")
            with Store.open(db, mode="create") as s:
                s.import_items("big", "jsonl", items)
                create_study(s, StudySpec(name="st", task="mcq", datasets=["big"], seed=3))
            before = srv.log.count()
            extra = FAST if how == "batch" else ["--concurrency", "64"]
            assert ev(db, "answer", "--study", "st", "--model", "openai/good", "--blind", "--api-base", srv.url,
                      "--price", "1,2", *extra) == 0
            sent = srv.log.count() - before
            assert sent == (0 if how == "batch" else n)  # requests counted at the server
        assert len(srv.log.batch_lines) == n and srv.batch_calls["create_batch"] == 1
        capsys.readouterr()
        got = {}
        for how, db in dbs.items():
            with Store.open(db, mode="ro") as s:
                st = s.get_study("st")
                units = {u.id: u.item_id for u in s.units(st.id)}
                ext = {it.id: it.external_id for it in s.items("big")}
                got[how] = {ext[units[a.unit_id]]: a.answer["choice"] for a in s.current_annotations(st.id)}
        assert len(got["batch"]) == n and got["batch"] == got["online"]
    finally:
        srv.stop()
