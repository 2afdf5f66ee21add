"""`prefval stats majority-vote`, `win-rate` and `ppi`: the report's own functions on a CSV, with hand-worked
values (HorizonBench 5.3's majority vote under both tie rules, RealPref Table 7's win / loss / tie, PPI and
PPI++)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from annotator.cli import main
from tests.test_seed_horizonbench import PATTERNS

Z = 1.959963984540054


def _run(capsys, *args):
    capsys.readouterr()
    code = main(["stats", *args])
    return code, capsys.readouterr()


@pytest.mark.parametrize("rule, value", [("no-label", 40 / 60), ("first-annotator", 47 / 60)])
def test_majority_vote_of_the_60_item_table(tmp_path, capsys, rule, value):
    f = tmp_path / "hb.csv"
    f.write_text("item,annotator_1,annotator_2,annotator_3,correct\n"
                 + "".join(f"h{i},{','.join(p)},A\n" for i, p in enumerate(PATTERNS)))
    code, out = _run(capsys, "majority-vote", str(f), "--key", "correct", "--tie-rule", rule, "--discard", "x",
                     "--format", "json")
    assert code == 0
    res = json.loads(out.out)
    assert res["metric"] == "majority_vote_accuracy" and res["value"] == pytest.approx(value) and res["n_items"] == 60
    assert res["ci_low"] < value < res["ci_high"]
    assert f"tie rule {rule}" in res["note"] and "(12 tied items)" in res["note"]


def test_majority_vote_a_column_order_decides_and_missing_cells(tmp_path, capsys):
    # i1: B, A, C -> a tie: first-annotator takes B (wrong); i2: A, (missing), B -> a tie of two: A (right);
    # i3: one answer only: left out (fewer than 2); key A everywhere -> first-annotator 1 of 2, no-label 0 of 2
    f = tmp_path / "m.csv"
    f.write_text("item,r1,r2,r3,key\ni1,B,A,C,A\ni2,A,,B,A\ni3,,A,,A\n")
    for rule, want in (("first-annotator", 0.5), ("no-label", 0.0)):
        code, out = _run(capsys, "majority-vote", str(f), "--key", "key", "--tie-rule", rule, "--format", "json")
        res = json.loads(out.out)
        assert (code, res["value"], res["n_items"]) == (0, want, 2)
        assert res["n_raters"] == 3  # r1, r2, r3 (not item, not the key)
    code, out = _run(capsys, "majority-vote", str(f), "--key", "key")
    assert code == 0 and [ln.split() for ln in out.out.splitlines() if ln.startswith("raters")] == [["raters", "3"]]
    code, out = _run(capsys, "majority-vote", str(f), "--key", "nokey")
    assert code == 1 and "no column named 'nokey'" in out.err


def test_win_rate_realpref_table_7_and_majority(tmp_path, capsys):
    # RealPref Table 7: 100 pairs, one evaluator each: 69 win, 13 loss, 18 tie
    f = tmp_path / "t7.csv"
    f.write_text("item,evaluator\n" + "".join(f"p{i},{'win' if i < 69 else 'loss' if i < 82 else 'tie'}\n"
                                             for i in range(100)))
    code, out = _run(capsys, "win-rate", str(f), "--format", "json")
    res = json.loads(out.out)
    assert code == 0
    assert {k: res["all_judgments"][k]["value"] for k in ("win", "loss", "tie")} == {"win": 0.69, "loss": 0.13,
                                                                                     "tie": 0.18}
    assert res["majority_per_pair"]["win"]["value"] == 0.69 and res["pairs_without_majority"] == 0
    # three evaluators: p1 A A B -> win; p2 B tie tie -> tie; p3 A B (one empty) -> no majority; judgments: win
    # 3 (p1 2, p3 1), loss 3 (p1, p2, p3), tie 2 (p2) of the 8 filled cells
    g = tmp_path / "three.csv"
    g.write_text("item,e1,e2,e3\np1,A,A,B\np2,B,tie,tie\np3,A,B,\n")
    code, out = _run(capsys, "win-rate", str(g), "--format", "json")
    res = json.loads(out.out)
    assert {k: res["all_judgments"][k]["value"] for k in ("win", "loss", "tie")} == {
        "win": pytest.approx(3 / 8), "loss": pytest.approx(3 / 8), "tie": pytest.approx(2 / 8)}
    assert {k: res["majority_per_pair"][k]["value"] for k in ("win", "loss", "tie")} == {"win": 0.5, "loss": 0.0,
                                                                                         "tie": 0.5}
    assert res["pairs_without_majority"] == 1
    code, out = _run(capsys, "win-rate", str(g))
    assert code == 0 and "all judgments (8 judgments):" in out.out and "1 pairs without a majority" in out.out
    g.write_text("item,e1\np1,draw\n")
    code, out = _run(capsys, "win-rate", str(g))
    assert code == 1 and out.err.strip().endswith("row 1: field 'e1': expected win, loss or tie (or A, B, tie), "
                                                  "got 'draw'")


def test_ppi_both_tunings_by_hand(tmp_path, capsys):
    f = tmp_path / "ppi.csv"
    f.write_text("item,human,judge\n" + "".join(f"i{k},{h},{j}\n" for k, (h, j) in enumerate(
        [(1, 1), (0, 1), (1, 1), (0, 0), ("", 1), ("", 1), ("", 1), ("", 0)])))
    code, out = _run(capsys, "ppi", str(f), "--human", "human", "--judge", "judge", "--format", "json")
    plain = json.loads(out.out)
    code2, out2 = _run(capsys, "ppi", str(f), "--human", "human", "--judge", "judge", "--tuning", "power",
                       "--format", "json")
    tuned = json.loads(out2.out)
    assert code == code2 == 0
    # lambda = 1: 1/2 +- z sqrt(3/16 / 4 + 3/16 / 4); lambda = 7/24 (tests/stats/test_ppi_tuning.py): +- 0.4480
    assert plain["value"] == pytest.approx(0.5) and plain["ci_high"] == pytest.approx(0.5 + Z * np.sqrt(3 / 32))
    assert "PPI with lambda = 1" in plain["note"]
    resid = np.array([17 / 24, -7 / 24, 17 / 24, 0])
    assert tuned["ci_high"] == pytest.approx(0.5 + Z * np.sqrt((7 / 24) ** 2 * 3 / 64 + resid.var() / 4))
    assert "PPI++ with lambda = 0.292" in tuned["note"]
    f.write_text("item,human,judge\ni0,1,\n")
    code, out = _run(capsys, "ppi", str(f), "--human", "human", "--judge", "judge")
    assert code == 1 and out.err.strip().endswith("row 1: field 'judge': missing: every item needs the judge's label")
