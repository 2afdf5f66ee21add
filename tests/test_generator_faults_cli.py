"""`prefval generate` and `prefval evaluate` under faults, from the command line (issue 26, parts 3 and 4): nothing
listening ends in seconds with one line; a budget never runs blind (unknown price refused, usage-less servers priced
from counted tokens); a reply that fails a stage's check is not cached, so the same command again retries it; the
knobs of the client are the user's (config keys and flags); unknown is printed as unknown; a run in a pipe prints
progress lines; keys echoed by a server stay out of the database."""
from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import pytest

from annotator.cli import main
from bench.fake_llm_server import FakeLLMServer
from generator.config import load_config
from generator.fake_replies import make_reply, register_all
from generator.settings import EXIT_SERVER
from storage.errors import PrefvalError
from storage.store import Store
from tests.conftest import SAMPLE_DATA
from tests.llm_fixtures import FAKE_KEY

CONFIG = SAMPLE_DATA / "generator" / "pipeline.yaml"


@pytest.fixture
def server(fake_key):
    srv = FakeLLMServer(host="127.0.0.1", port=0).start()
    register_all(srv)
    yield srv
    srv.stop()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def small_config(tmp_path: Path, extra: str = "", prices: bool = True) -> Path:
    """The sample pipeline's first two stages only (3 profiles), in a folder of its own."""
    text = (f"name: small\nseed: 7\nmodel: openai/fake-model\nconcurrency: 4\n"
            + ("prices:\n  openai/fake-model: {input: 0.15, output: 0.60}\n" if prices else "")
            + f"{extra}stages:\n  personas: {{file: {SAMPLE_DATA / 'generator' / 'personas.txt'}, n: 3}}\n"
            "  profiles: {}\n  events: {n: 2}\n")
    p = tmp_path / "small.yaml"
    p.write_text(text, encoding="utf-8")
    return p


# ---- part 3: nothing listening ------------------------------------------------------------------------------------
@pytest.mark.slow
def test_generate_against_a_port_with_nothing_listening_ends_in_seconds_with_one_line(tmp_path, fake_key, capsys):
    from generator.client import import_litellm

    import_litellm()  # its import (seconds on a loaded machine) is not what is timed
    base = f"http://127.0.0.1:{closed_port()}/v1"
    db = str(tmp_path / "x.db")
    t0 = time.monotonic()
    assert main(["generate", str(CONFIG), "--api-base", base, "--db", db]) == EXIT_SERVER == 5
    assert time.monotonic() - t0 < 10  # it retried for 91 s
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"prefval: cannot reach {base}: connection refused (is the server "
                                               "running? is the port right? check --api-base")
    with Store.open(db, mode="ro") as s:
        assert s.runs("generate")[0].status == "stopped" and not s.gen_rows("sample", status="failed")


@pytest.mark.slow
def test_evaluate_against_a_port_with_nothing_listening_ends_with_one_line(mcq_study, fake_key, capsys):
    base = f"http://127.0.0.1:{closed_port()}/v1"
    assert main(["evaluate", "answer", "--study", "st", "--model", "openai/m1", "--api-base", base,
                 "--db", mcq_study]) == EXIT_SERVER
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert err == [f"prefval: cannot reach {base}: connection refused (is the server running? is the port right? "
                   "check --api-base or api_base: in the config)"]


# ---- part 4: the budget ---------------------------------------------------------------------------------------------
def test_a_budget_with_no_known_price_is_refused_before_anything_is_written(tmp_path, server, capsys):
    cfg = small_config(tmp_path, prices=False)
    db = tmp_path / "b.db"
    code = main(["generate", str(cfg), "--api-base", server.url, "--budget", "1", "--db", str(db)])
    assert code == 1 and not db.exists() and server.log.count() == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--budget 1 USD cannot be kept: no price is known for openai/fake-model" in err[0]
    assert "--price IN,OUT" in err[0] and "--budget-unknown-as IN,OUT" in err[0]
    # told how to count: it runs, and stops at the budget
    assert main(["generate", str(cfg), "--api-base", server.url, "--budget", "0.0000001",
                 "--budget-unknown-as", "1,1", "--db", str(db)]) == 3
    assert 0 < server.log.count() <= 4


def test_evaluate_refuses_a_budget_it_cannot_count_and_runs_with_a_price(mcq_study, fake_llm, fake_key, capsys):
    args = ["evaluate", "answer", "--study", "st", "--model", "openai/m1", "--api-base", fake_llm.url,
            "--budget", "1", "--db", mcq_study]
    assert main(args) == 1 and fake_llm.log.count() == 0
    assert "no price is known for openai/m1" in capsys.readouterr().err
    assert main(args + ["--price", "0.1,0.2"]) == 0 and fake_llm.log.count() == 6


@pytest.mark.slow
def test_a_server_without_usage_is_priced_from_counted_tokens_and_the_budget_stops_it(tmp_path, server, capsys):
    server.add_fault("no_usage", times=10_000)
    db = str(tmp_path / "u.db")
    # the sample config prices the fake model; each profile call costs ~0.0001 USD when counted
    assert main(["generate", str(CONFIG), "--api-base", server.url, "--budget", "0.0002", "--concurrency", "1",
                 "--db", db]) == 3  # it sent every call with no usage, and exited 0
    sent = server.log.count()
    assert 1 <= sent < 10
    out = capsys.readouterr().out
    assert "tokens unknown" in out and "estimated from counted tokens" in out
    with Store.open(db, mode="ro") as s:
        run = s.runs("generate")[0]
        calls = s.llm_calls()
    assert run.status == "budget" and run.totals["prompt_tokens"] is None and run.totals["cost_estimated_usd"] > 0
    assert all(not c.usage_known and c.prompt_tokens is None and c.cost_usd > 0 for c in calls)


@pytest.mark.slow
def test_evaluate_records_and_prints_unknown_tokens_and_cost_as_unknown(mcq_study, fake_llm, fake_key, capsys):
    fake_llm.add_fault("no_usage", times=10_000)
    assert main(["evaluate", "answer", "--study", "st", "--model", "openai/m1", "--api-base", fake_llm.url,
                 "--db", mcq_study]) == 0
    out = capsys.readouterr().out
    assert "tokens unknown (6 replies without usage), cost unknown (6 replies without a price)" in out
    assert "0 tokens" not in out and "0.0000" not in out
    with Store.open(mcq_study, mode="ro") as s:
        totals = s.runs("evaluate")[0].totals
    assert totals["prompt_tokens"] is None and totals["cost_usd"] is None and totals["unpriced"] == 6


# ---- part 4: a reply that fails a stage's check is never cached -------------------------------------------------------
@pytest.mark.slow
def test_a_reply_failing_a_stage_check_is_not_cached_and_the_same_command_retries_it(tmp_path, server, capsys):
    sent_bad = []

    def same_options_for_u002_p01(body, rng):
        data = make_reply("query", body.get("messages") or [])
        text = " ".join(m.get("content", "") for m in body["messages"])
        if '"user_id": "u002"' in text and '"pref_id": "p01"' in text and len(sent_bad) < 3:
            sent_bad.append(1)
            data["options"]["B"] = data["options"]["A"].upper()  # passes the schema, fails "the four options differ"
        return data

    server.register("query", same_options_for_u002_p01)
    db = str(tmp_path / "c.db")
    assert main(["generate", str(CONFIG), "--api-base", server.url, "--db", db]) == 4
    assert len(sent_bad) == 3  # the first try and its two repairs
    with Store.open(db, mode="ro") as s:
        [failed] = s.gen_rows("sample", status="failed")
        assert failed.row_key == "u002:p01" and "the four options must differ" in failed.reason
        cached_options = [c.parsed["options"] for c in s.llm_calls() if c.template.startswith("query@")]
    assert all(len({v.lower() for v in o.values()}) == 4 for o in cached_options)  # no bad reply was cached
    before = server.log.count()
    assert main(["generate", str(CONFIG), "--api-base", server.url, "--db", db]) == 0
    again = server.log.requests[before:]
    assert len(again) >= 1 and again[0].body["response_format"]["json_schema"]["name"] == "query"


# ---- part 4: the knobs ------------------------------------------------------------------------------------------------
def test_config_keys_and_flags_of_the_client(tmp_path):
    cfg = load_config(small_config(tmp_path, "rpm: 500\ntpm: 200000\ntimeout: 30\ndeadline: 90\nattempts: 3\n"
                                             "repairs: 1\nbreaker: 0\nbudget_unknown_as: {input: 1, output: 2}\n"))
    from generator.settings import ClientKnobs

    knobs = ClientKnobs.from_sources(cfg)
    policy = knobs.retry_policy()
    assert (policy.timeout, policy.deadline, policy.max_attempts, policy.max_repairs, policy.breaker_window) == \
        (30, 90, 3, 1, 0)
    assert knobs.limits(8).rpm == 500 and knobs.limits(8).tpm == 200000
    assert ClientKnobs(timeout=200).retry_policy().deadline == 500  # 2.5 x timeout when above the default
    for bad, field in (("rpm: 0\n", "rpm"), ("timeout: -1\n", "timeout"), ("attempts: 0\n", "attempts")):
        with pytest.raises(PrefvalError, match=f"field '{field}'"):
            load_config(small_config(tmp_path, bad))


@pytest.mark.parametrize("flag, message", [("--timeout=0", "--timeout must be above 0"),
                                           ("--attempts=0", "--attempts must be at least 1"),
                                           ("--rpm=-5", "--rpm must be above 0"),
                                           ("--price=x", "--price 'x': expected IN,OUT"),
                                           ("--budget-unknown-as=1", "expected IN,OUT")])
def test_bad_flags_are_one_line_errors_and_write_nothing(tmp_path, flag, message, capsys):
    db = tmp_path / "f.db"
    assert main(["generate", str(CONFIG), flag, "--db", str(db)]) == 1
    assert message in capsys.readouterr().err and not db.exists()


@pytest.mark.slow
def test_timeout_and_attempts_bound_a_hung_call(tmp_path, server, capsys):
    server.add_fault("hang", times=10_000, seconds=30,
                     match=lambda b: b.get("response_format", {}).get("json_schema", {}).get("name") == "profile"
                     and "tide-pool" in json.dumps(b["messages"]))
    db = str(tmp_path / "h.db")
    t0 = time.monotonic()
    code = main(["generate", str(small_config(tmp_path)), "--api-base", server.url, "--timeout", "0.3",
                 "--attempts", "2", "--breaker", "0", "--db", db])
    assert code == 4 and time.monotonic() - t0 < 20
    with Store.open(db, mode="ro") as s:
        [failed] = s.gen_rows("small", status="failed")
    assert failed.stage == "profiles" and failed.calls == 2
    assert failed.reason == "timeout: no reply within 0.3 s (gave up after 2 requests, the most a call may send: " \
                            "--attempts)"


@pytest.mark.slow
def test_rpm_from_the_config_queues_requests(tmp_path, server):
    cfg = small_config(tmp_path, "rpm: 120\n")  # 2 per second: a burst of 2, then one every 0.5 s
    db = str(tmp_path / "r.db")
    assert main(["generate", str(cfg), "--api-base", server.url, "--db", db]) == 0
    starts = [r.at for r in server.log.requests]
    assert len(starts) == 6 and starts[-1] - starts[0] >= 1.5


# ---- part 3: a run in a pipe shows progress -------------------------------------------------------------------------
@pytest.mark.slow
def test_a_run_whose_output_is_not_a_terminal_prints_a_progress_line_every_n_seconds(tmp_path, server, capsys):
    server.latency = 0.05
    try:
        assert main(["generate", str(CONFIG), "--api-base", server.url, "--concurrency", "2",
                     "--progress-every", "0.5", "--db", str(tmp_path / "p.db")]) == 0
    finally:
        server.latency = 0.0
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("generate sample: ")]
    assert len(lines) >= 3  # the periodic lines and the summary
    assert any("elapsed" in x for x in lines) and "elapsed" not in lines[-1]


# ---- part 4: keys echoed by a server ----------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_server_echoing_the_authorization_header_leaves_no_key_in_the_database_or_exports(tmp_path, server):
    server.add_fault("echo_auth", times=10_000)
    db = str(tmp_path / "e.db")
    main(["generate", str(small_config(tmp_path)), "--api-base", server.url, "--db", db])
    out = tmp_path / "export.jsonl"
    assert main(["export", "--dataset", "small-profiles", "--format", "realpref", "--out", str(out), "--db", db]) == 0
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert FAKE_KEY.encode() not in raw and b"Bearer ***" in raw
