"""Budget shares (storage/llm_calls.py, share_budget): what each concurrent client of one budget scope has spent,
the holder record that the liveness test sees, and when a joining client starts afresh (CONTRIBUTING.md, "Mutation
testing"). Expected values are worked by hand from the calls made."""
from __future__ import annotations

import time

from storage.llm_calls import ClaimHolder, ClaimOwner

A = ClaimOwner(token="host-a:11:aaaa", host="host-a", pid=11)
B = ClaimOwner(token="host-b:22:bbbb", host="host-b", pid=22)
C = ClaimOwner(token="host-c:33:cccc", host="host-c", pid=33)


def _alive(_holder, _now):
    return True


def _dead(_holder, _now):
    return False


def _shares(store, scope):
    return sorted(store.db.execute("SELECT owner, host, pid, spent_usd, ended FROM llm_budget_shares WHERE scope = ?",
                                   [scope]).fetchall())


def test_each_client_sees_what_the_others_spent(store):
    assert store.share_budget("pipe", A, 1.5, 60, _alive, join=True) == 0.0  # alone: nobody else spent anything
    assert store.share_budget("pipe", B, 2.25, 60, _alive, join=True) == 1.5  # A is alive: its 1.5 stays
    assert store.share_budget("pipe", A, 3.0, 60, _alive) == 2.25  # its own 3.0 is not counted for itself
    assert store.share_budget("pipe", C, 0.0, 60, _alive, join=True) == 5.25  # 3.0 + 2.25
    assert store.share_budget("pipe", B, 4.0, 60, _alive) == 3.0  # A 3.0 + C 0.0
    assert _shares(store, "pipe") == [("host-a:11:aaaa", "host-a", 11, 3.0, 0), ("host-b:22:bbbb", "host-b", 22, 4.0, 0),
                                      ("host-c:33:cccc", "host-c", 33, 0.0, 0)]
    # another scope is another budget
    assert store.share_budget("other", A, 9.0, 60, _alive, join=True) == 0.0
    assert store.share_budget("pipe", A, 3.5, 60, _alive) == 4.0  # B 4.0 + C 0.0, the 9.0 of "other" not counted


def test_the_liveness_test_sees_each_other_holder_as_stored(store):
    before = time.time()
    store.share_budget("pipe", A, 1.0, 120, _alive, join=True)
    after = time.time()
    seen: list[tuple[ClaimHolder, float]] = []

    def record(holder, now):
        seen.append((holder, now))
        return True

    store.share_budget("pipe", B, 0.5, 30, record, join=True)
    assert len(seen) == 1  # only A: a client never tests itself
    holder, now = seen[0]
    assert (holder.token, holder.host, holder.pid) == ("host-a:11:aaaa", "host-a", 11)
    assert before + 120 <= holder.lease_until <= after + 120  # its lease: when it shared + its 120 s
    assert now >= after


def test_a_joining_client_starts_afresh_when_no_other_holder_runs(store):
    store.share_budget("pipe", A, 2.0, 60, _alive, join=True)
    store.share_budget("pipe", B, 1.0, 60, _alive, join=True)
    store.share_budget("keep", A, 7.0, 60, _alive, join=True)
    # both earlier clients are gone: C's run is a new one with a fresh budget, and their shares are cleared
    assert store.share_budget("pipe", C, 0.25, 60, _dead, join=True) == 0.0
    assert _shares(store, "pipe") == [("host-c:33:cccc", "host-c", 33, 0.25, 0)]
    assert _shares(store, "keep") == [("host-a:11:aaaa", "host-a", 11, 7.0, 0)]  # only that scope is cleared
    # not joining (a later call of a running client): nothing is cleared even if the others are gone
    store.share_budget("keep", B, 1.0, 60, _alive, join=True)
    assert store.share_budget("keep", B, 1.5, 60, _dead) == 7.0
    assert len(_shares(store, "keep")) == 2


def test_an_ended_client_still_counts_but_does_not_keep_the_budget_alive(store):
    store.share_budget("pipe", A, 2.0, 60, _alive, join=True)
    store.share_budget("pipe", A, 2.5, 60, _alive, ended=True)  # A is done: its spend still counts
    assert _shares(store, "pipe") == [("host-a:11:aaaa", "host-a", 11, 2.5, 1)]
    assert store.share_budget("pipe", B, 1.0, 60, _alive, ended=False) == 2.5  # B overlapped A: A's 2.5 counts
    # a new client joining when the only live-looking holder has ended starts afresh: ended is not running
    store.db.execute("DELETE FROM llm_budget_shares WHERE owner = ?", [B.token])
    assert store.share_budget("pipe", C, 0.0, 60, _alive, join=True) == 0.0
    assert _shares(store, "pipe") == [("host-c:33:cccc", "host-c", 33, 0.0, 0)]


def test_a_joining_client_keeps_the_shares_when_one_other_holder_still_runs(store):
    store.share_budget("pipe", A, 2.0, 60, _alive, join=True)
    store.share_budget("pipe", B, 1.0, 60, _alive, join=True)

    def only_b(holder, _now):
        return holder.token == B.token

    assert store.share_budget("pipe", C, 0.0, 60, only_b, join=True) == 3.0  # B runs: A's 2.0 and B's 1.0 count
