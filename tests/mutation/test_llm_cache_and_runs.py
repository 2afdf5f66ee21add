"""The LLM call cache and the runs table (storage/llm_calls.py): every field written and read back, order, runs'
statuses and their refusals, credentials kept out, and a call claimed by a live other client being busy (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import pytest

from storage.errors import PrefvalError
from storage.llm_cache_writer import LLMCallWriter
from storage.llm_calls import LLMCall


def _call(key, run_id=None, at="2026-01-01T00:00:02", **kw):
    return LLMCall(key=key, run_id=run_id, model="m-1", api_base="http://127.0.0.1:9", template="judge",
                   request={"messages": [{"role": "user", "content": "hi"}], "params": {"temperature": 0}},
                   reply_text='{"x": 1}', parsed={"x": 1}, finish_reason="stop", prompt_tokens=3,
                   completion_tokens=4, usage_known=True, cost_usd=0.5, seconds=1.5, attempts=2, created_at=at, **kw)


def test_calls_round_trip_and_order(store):
    run = store.start_run("evaluate", {"model": "m-1"}, name="first")
    store.put_llm_calls([_call("k2", run), _call("k1", None, at="2026-01-01T00:00:01"),
                         _call("k3", run, at="2026-01-01T00:00:02")])
    assert store.get_llm_call("k2") == _call("k2", run)  # every field back as written
    assert store.get_llm_call("nope") is None
    assert [c.key for c in store.llm_calls()] == ["k1", "k2", "k3"]  # by time, then key
    assert [c.key for c in store.llm_calls(run)] == ["k2", "k3"]
    assert store.llm_call_keys() == {"k1", "k2", "k3"}
    free = LLMCall(key="k4", model="m", template="t", request={"messages": []}, reply_text="plain")
    store.put_llm_call(free)
    got = store.get_llm_call("k4")
    assert (got.parsed, got.usage_known, got.prompt_tokens, got.cost_usd, got.attempts) == (None, False, None, None, 1)
    assert got.created_at  # stamped when not given
    store.put_llm_call(_call("k4", at="2026-01-01T00:00:09"))  # replaces
    assert store.get_llm_call("k4").reply_text == '{"x": 1}'


def test_a_credential_in_a_request_is_refused(store):
    bad = _call("kkkkkkkkkkkkkk-rest")
    bad.request["params"]["api_key"] = "sk-123"
    with pytest.raises(PrefvalError) as info:
        store.put_llm_calls([_call("ok"), bad])
    assert str(info.value) == ("llm call kkkkkkkkkkkk: field 'api_key' holds a credential; keys come from the "
                               "environment only")
    assert store.llm_call_keys() == set()  # nothing written
    nested = _call("n")
    nested.request["messages"] = [{"role": "user", "content": "x", "extra": {"Authorization": "Bearer t"}}]
    with pytest.raises(PrefvalError, match=r"field 'Authorization' holds a credential"):
        store.put_llm_call(nested)


def test_runs(store):
    a = store.start_run("generate", {"stage": "s", "api_key": "sk-secret-value"}, name="gen")
    b = store.start_run("evaluate", {})
    ra = store.get_run(a)
    assert (ra.kind, ra.name, ra.status, ra.ended_at, ra.totals) == ("generate", "gen", "running", None, {})
    assert "api_key" not in ra.config and ra.config["stage"] == "s"
    store.finish_run(a, "done", {"calls": 3, "cost_usd": 0.25})
    ra = store.get_run(a)
    assert (ra.status, ra.totals) == ("done", {"calls": 3, "cost_usd": 0.25}) and ra.ended_at >= ra.started_at
    for status in ("failed", "budget", "interrupted", "stopped"):
        store.finish_run(b, status)
        assert store.get_run(b).status == status and store.get_run(b).totals == {}
    assert [r.id for r in store.runs()] == [a, b]
    assert [r.id for r in store.runs("evaluate")] == [b] and store.runs("generate")[0].id == a
    with pytest.raises(PrefvalError, match=r"^run kind 'train' is not one of generate, evaluate$"):
        store.start_run("train", {})
    for status in ("running", "ok"):
        with pytest.raises(PrefvalError, match=rf"^run status '{status}' is not one of done, failed, budget, "
                                               r"interrupted, stopped$"):
            store.finish_run(a, status)
    with pytest.raises(PrefvalError, match=r"^no run with id 'x'$"):
        store.finish_run("x", "done")
    with pytest.raises(PrefvalError, match=r"^no run with id 'x'$"):
        store.get_run("x")


def test_writer_commits_from_its_own_thread(tmp_path):
    from storage.store import Store

    path = str(tmp_path / "w.db")
    Store.open(path, mode="create").close()
    writer = LLMCallWriter(path)
    futures = [writer.submit(_call(f"w{i}", at=f"2026-01-01T00:00:0{i}")) for i in range(3)]
    bad = _call("bad")
    bad.request["token"] = "t"
    failed = writer.submit(bad)
    assert [f.result(timeout=30) for f in futures] == [None, None, None]
    with pytest.raises(PrefvalError, match="field 'token' holds a credential"):
        failed.result(timeout=30)
    writer.close()
    with Store.open(path, mode="rw") as s:
        assert [c.key for c in s.llm_calls()] == ["w0", "w1", "w2"]


def _hold(writer):
    """Keep the writer busy in a transaction of its own until the returned event is set, so that what is submitted
    meanwhile is written together as the next batch."""
    import threading

    go = threading.Event()
    started = threading.Event()

    def op(store):
        started.set()
        go.wait(30)
        return "held"

    first = writer.submit_op(op)
    assert started.wait(30)
    return go, first


def test_writer_results_of_a_good_batch_and_of_one_written_item_by_item(tmp_path):
    from storage.llm_calls import ClaimOwner
    from storage.store import Store

    path = str(tmp_path / "w.db")
    Store.open(path, mode="create").close()
    owner = ClaimOwner(token="me", host="h", pid=1)
    writer = LLMCallWriter(path, claimer=(owner, 60.0, lambda holder, now: True))
    # a batch of good items: each future gets its own item's result
    go, first = _hold(writer)
    call = writer.submit(_call("g1"))
    claim = writer.submit_claim("c1")
    count = writer.submit_op(lambda s: s.db.execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0])
    go.set()
    assert (first.result(30), call.result(30), claim.result(30), count.result(30)) == ("held", None, "claimed", 1)
    # a batch with a bad call is written item by item: the others still get their results
    go, first = _hold(writer)
    bad = _call("bad")
    bad.request["token"] = "t"
    failed = writer.submit(bad)
    claim2 = writer.submit_claim("c2")
    release = writer.submit_release("c1")
    cached = writer.submit_claim("g1")
    go.set()
    assert (first.result(30), claim2.result(30), release.result(30), cached.result(30)) == (
        "held", "claimed", None, "cached")
    with pytest.raises(PrefvalError, match="field 'token' holds a credential"):
        failed.result(timeout=30)
    writer.close()
    with Store.open(path, mode="rw") as s:
        assert [k for k, _ in s.llm_claims()] == ["c2"]  # c1 given back
        assert s.llm_call_keys() == {"g1"}


def test_a_claim_held_by_a_live_other_client_is_busy(store):
    from storage.llm_calls import BUSY, CLAIMED, ClaimHolder, ClaimOwner

    a = ClaimOwner(token="host-a:1:aa", host="host-a", pid=1)
    b = ClaimOwner(token="host-b:2:bb", host="host-b", pid=2)
    assert store.claim_llm_calls(["k1", "k2"], a, 60, lambda h, now: True) == {"k1": CLAIMED, "k2": CLAIMED}
    seen = []

    def alive(holder, now):
        seen.append(holder)
        return holder.token == a.token and holder.host == "host-a" and holder.pid == 1

    assert store.claim_llm_calls(["k1"], b, 60, alive) == {"k1": BUSY}
    assert [h.token for h in seen] == [a.token] and isinstance(seen[0], ClaimHolder)
    assert store.claim_llm_calls(["k2"], b, 60, lambda h, now: False) == {"k2": CLAIMED}  # taken over
