"""The LLM call cache (storage/llm_calls.py, storage/llm_cache_writer.py): cached calls keyed without
their api_base, the writer's error messages, its per-transaction hook and its daemon thread.

Written for survivors of the storage sample of mutation seed 5381 (README, "Mutation testing"), each as a
user or caller sees it."""
from __future__ import annotations


import pytest

from storage.errors import PrefvalError
from storage.llm_cache_writer import LLMCallWriter
from storage.llm_calls import LLMCall
from storage.store import Store

from tests.mutation.test_llm_cache_and_runs import _hold


def _call(key: str, **kw) -> LLMCall:
    return LLMCall(key=key, model="m-1", template="judge", request={"messages": [{"role": "user", "content": "hi"}]},
                   reply_text="ok", created_at="2026-01-01T00:00:01", **kw)


def test_cached_calls_keyed_without_their_api_base_are_listed_with_it(store):
    store.put_llm_calls([_call("old-1", api_base="http://127.0.0.1:8001", key_version=1),
                         _call("old-2", api_base=None, key_version=1),
                         _call("new-1", api_base="http://127.0.0.1:8002")])
    assert store.llm_calls_keyed_without_api_base() == [("old-1", "http://127.0.0.1:8001")]


def test_the_cache_writer_names_the_kind_of_error_that_stopped_a_write(tmp_path):
    path = str(tmp_path / "w.db")
    Store.open(path, mode="create").close()
    writer = LLMCallWriter(path)
    try:
        def fails(store):
            raise ValueError("no room")

        failed = writer.submit_op(fails)
        with pytest.raises(PrefvalError) as info:
            failed.result(timeout=30)
        assert str(info.value) == f"{path}: the LLM call cache could not be written (ValueError: no room)"
    finally:
        writer.close()


def test_the_cache_writer_runs_its_hook_once_per_transaction_and_survives_a_bad_call(tmp_path):
    """on_batch runs at the end of every transaction that committed as one: here two (a held op, then the two
    calls submitted meanwhile); a bad call in a batch fails alone and the rest of its batch is written."""
    path = str(tmp_path / "w.db")
    Store.open(path, mode="create").close()
    hooks: list[int] = []
    writer = LLMCallWriter(path, on_batch=lambda s: hooks.append(
        s.db.execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0]))
    try:
        go, first = _hold(writer)  # the writer busy in a transaction of its own until go is set
        a, b = writer.submit(_call("a")), writer.submit(_call("b"))
        go.set()
        assert (first.result(30), a.result(30), b.result(30)) == ("held", None, None)
        assert hooks == [0, 2]  # after the op (no call yet), after both calls
        bad = _call("bad")
        bad.request["token"] = "t"
        go, first = _hold(writer)
        c, failed = writer.submit(_call("c")), writer.submit(bad)
        go.set()
        assert (first.result(30), c.result(30)) == ("held", None)
        with pytest.raises(PrefvalError, match="field 'token' holds a credential"):
            failed.result(30)
    finally:
        writer.close()
    with Store.open(path, mode="rw") as s:
        assert s.llm_call_keys() == {"a", "b", "c"}


def test_the_cache_writer_thread_never_keeps_the_process_alive(tmp_path):
    from storage.llm_cache_writer import LLMCallWriter
    from storage.store import Store

    path = str(tmp_path / "w.db")
    Store.open(path, mode="create").close()
    writer = LLMCallWriter(path)
    try:
        assert writer._thread.daemon is True and writer._thread.name == "prefval-llm-cache-writer"
    finally:
        writer.close()
