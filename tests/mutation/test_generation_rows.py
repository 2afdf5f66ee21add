"""Generator rows (storage/generation.py): done rows never overwritten, failed ones retried, order, sums per stage,
worked by hand (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

from storage.generation import GenRow


def _row(key, stage="s1", seq=0, status="done", **kw):
    return GenRow(pipeline="p", stage=stage, row_key=key, seq=seq, status=status, **kw)


def test_gen_rows_by_hand(store):
    n = store.save_gen_rows([
        _row("b", seq=1, output={"x": 1}, parents=["s0/a"], prompt_tokens=10, completion_tokens=5, cost_usd=0.5,
             calls=2, model="m", template="t", seed=3, created_at="2026-01-01T00:00:01"),
        _row("a", seq=0, status="failed", reason="timeout", calls=1, created_at="2026-01-01T00:00:02"),
        _row("c", stage="s0", seq=0, output={"y": 2}, prompt_tokens=1, completion_tokens=1, cost_usd=None,
             created_at="2026-01-01T00:00:00"),
    ])
    assert n == 3
    rows = store.gen_rows("p")
    assert [(r.stage, r.row_key) for r in rows] == [("s0", "c"), ("s1", "a"), ("s1", "b")]  # stage, then seq
    b = rows[2]
    assert (b.output, b.parents, b.prompt_tokens, b.cost_usd, b.calls, b.model, b.seed) == (
        {"x": 1}, ["s0/a"], 10, 0.5, 2, "m", 3)
    assert rows[1].output is None and rows[1].reason == "timeout" and rows[1].parents == []
    # a done row is kept, a failed one is replaced
    assert store.save_gen_rows([_row("b", output={"x": 99}), _row("a", output={"z": 0})]) == 1
    assert [r.row_key for r in store.gen_rows("p", "s1", "done")] == ["a", "b"]
    by = {r.row_key: r for r in store.gen_rows("p", "s1")}
    assert by["b"].output == {"x": 1} and by["a"].status == "done" and by["a"].output == {"z": 0}
    assert store.gen_rows("p", status="failed") == [] and store.gen_rows("other") == []
    summary = store.gen_summary()
    assert [(s["pipeline"], s["stage"], s["done"], s["failed"], s["prompt_tokens"], s["completion_tokens"],
             s["cost_usd"], s["calls"]) for s in summary] == [
        ("p", "s0", 1, 0, 1, 1, None, 0), ("p", "s1", 2, 0, 10, 5, 0.5, 2)]
