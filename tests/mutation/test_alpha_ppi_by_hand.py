"""Krippendorff's alpha at every level and prediction-powered inference on tables worked by hand, every field of the
result checked (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import numpy as np
import pytest

from reports.stats import krippendorff_alpha
from reports.stats.ppi import classical_mean, ppi_mean
from tests.mutation.expect import check

# 4 units x 2 coders + one unit with a single value. Coincidences (Krippendorff 2011, section C): each unit of m
# values adds 1/(m-1) per ordered pair: o11 = 2, o13 = o31 = 1, o33 = 2, o22 = 2; n = 8, n_1 = 3, n_2 = 2, n_3 = 3.
NUMS = [[1, 1], [1, 3], [3, 3], [2, 2], [2, None]]
NOTE_TAIL = "; computed with the coincidence matrix (Krippendorff 2011, section C); 1 units with fewer than 2 " \
            "values unpairable, ignored"


@pytest.mark.parametrize("level, expected", [
    # nominal: D_o = 2/8; D_e = sum_{c != k} n_c n_k / (n (n-1)) = 2 (6 + 9 + 6) / 56 = 3/4 -> 1 - 1/3
    ("nominal", 2 / 3),
    # interval, delta^2 = (c - k)^2: D_o = (4 + 4)/8 = 1; D_e = 2 (6*1 + 9*4 + 6*1) / 56 = 12/7 -> 1 - 7/12
    ("interval", 5 / 12),
    # ordinal, delta = sum_{g=c..k} n_g - (n_c + n_k)/2: d12 = d23 = 2.5^2, d13 = 5^2:
    # D_o = 2 * 25 / 8 = 6.25; D_e = 2 (6 * 6.25 + 9 * 25 + 6 * 6.25) / 56 = 600/56 -> 1 - 350/600
    ("ordinal", 5 / 12),
    # ratio, delta^2 = ((c - k)/(c + k))^2: d12 = 1/9, d13 = 1/4, d23 = 1/25: D_o = 2 (1/4) / 8 = 1/16;
    # D_e = 2 (6/9 + 9/4 + 6/25) / 56 = 947/8400 -> 1 - 525/947
    ("ratio", 422 / 947),
])
def test_alpha_every_level_by_hand(level, expected):
    extra = {"n_units_unpairable": 1, "level": level, "n_pairable_values": 8.0}
    r = krippendorff_alpha(NUMS, level)
    check(r, "krippendorff_alpha", expected, None, None, 4, 2,
          f"Krippendorff's alpha, {level} level, over 3 observed categories [1, 2, 3]" + NOTE_TAIL, extra=extra)
    pkg = krippendorff_alpha(NUMS, level, engine="krippendorff")
    check(pkg, "krippendorff_alpha", expected, None, None, 4, 2,
          f"Krippendorff's alpha, {level} level, over 3 observed categories [1, 2, 3]; computed with the "
          "krippendorff package (Krippendorff 2011, section C); 1 units with fewer than 2 values unpairable, ignored",
          extra=extra)


def test_alpha_text_labels_in_declared_order():
    text = [[{1: "lo", 2: "mid", 3: "hi"}.get(v) for v in row] for row in NUMS]
    r = krippendorff_alpha(text, "interval", categories=["lo", "mid", "hi"])
    assert r.value == pytest.approx(5 / 12)  # positions 1, 2, 3 as the numbers above
    assert r.note.startswith("Krippendorff's alpha, interval level, over 3 declared categories ['lo', 'mid', 'hi']")
    assert krippendorff_alpha(text, "ordinal", categories=["lo", "mid", "hi"]).value == pytest.approx(5 / 12)
    assert krippendorff_alpha(text, categories=["lo", "mid", "hi"]).value == pytest.approx(2 / 3)
    # with a declared unused category the domain of the interval level stretches: positions 1, 2, 4
    r4 = krippendorff_alpha(text, "interval", categories=["lo", "mid", "gap", "hi"])
    assert r4.value != pytest.approx(5 / 12)


def test_alpha_undefined_and_errors():
    one = krippendorff_alpha([["a", "a"], ["a", "a"], ["b", None]])
    check(one, "krippendorff_alpha", None, None, None, 2, 2,
          "undefined: every pairable value is 'a'; with one value there is no expected disagreement and alpha is 0/0",
          extra={"n_units_unpairable": 1, "level": "nominal", "n_pairable_values": 4.0})
    assert "every pairable value is 'b'" in krippendorff_alpha([["b", "b"], ["b", "b"]], categories=["a", "b"]).note
    lone = krippendorff_alpha([["a", None], [None, "b"]])
    check(lone, "krippendorff_alpha", None, None, None, 0, 2,
          "undefined: no item was rated by two or more raters (no overlap)",
          extra={"n_units_unpairable": 2, "level": "nominal"})
    assert krippendorff_alpha([], ci=True).note == "undefined: no items"
    with pytest.raises(ValueError, match=r"^level must be one of \('nominal', 'ordinal', 'interval', 'ratio'\), "
                                         r"got 'bogus'$"):
        krippendorff_alpha(NUMS, "bogus")
    with pytest.raises(ValueError, match=r"^engine must be 'krippendorff' or 'own', got 'R'$"):
        krippendorff_alpha(NUMS, engine="R")
    with pytest.raises(ValueError, match=r"^ratio-level alpha needs numeric ratings \(the zero point matters\); "
                                         r"the ratings are text labels$"):
        krippendorff_alpha([["a", "b"]], "ratio", categories=["a", "b"])
    for level in ("ordinal", "interval"):
        with pytest.raises(ValueError, match=rf"^{level}-level alpha needs ordered categories"):
            krippendorff_alpha([["a", "b"], ["b", "b"]], level)


def test_alpha_interval_defaults():
    data = NUMS * 3
    assert krippendorff_alpha(data).ci_low is None
    boot = krippendorff_alpha(data, ci=True)
    assert boot == krippendorff_alpha(data, ci=True, n_boot=1000, seed=0)
    assert boot != krippendorff_alpha(data, ci=True, seed=2)
    assert boot.ci_low < 2 / 3 < boot.ci_high
    assert boot.note.endswith(", ignored; 95% percentile bootstrap over items, 1000 resamples, seed 0")
    # the interval level's bootstrap uses its own distances: a different interval from the nominal one
    assert krippendorff_alpha(data, "interval", ci=True).ci_low != boot.ci_low


# ---- prediction-powered inference ----------------------------------------------------------------------------
@pytest.mark.slow
def test_ppi_point_estimate_by_hand():
    # theta = mean(judge on unlabelled) + mean(human - judge on labelled) = 3/4 + (1 - 2)/4 = 1/2
    y, yhat, yun = [1, 0, 1, 0], [1, 1, 1, 0], [1, 1, 1, 0]
    r = ppi_mean(y, yhat, yun)
    assert (r.metric, r.n_items, r.n_raters) == ("ppi_mean", 8, 2)
    assert r.value == pytest.approx(0.5)
    assert r.extra == {"n_labeled": 4, "n_unlabeled": 4, "tuning": "none", "lambda": 1.0,
                       "rectifier": pytest.approx(-0.25)}
    assert r.note == ("prediction-powered mean, PPI with lambda = 1, no power tuning (Angelopoulos et al., Science "
                      "2023; ppi_py lam=1): 4 items with human and judge labels, 4 with judge labels only; 95% "
                      "interval")
    assert r.ci_low < 0.5 < r.ci_high
    wide = ppi_mean(y, yhat, yun, alpha=0.5)
    assert wide.note.endswith("; 50% interval") and r.ci_low < wide.ci_low < wide.ci_high < r.ci_high


def test_ppi_undefined_and_errors():
    few = ppi_mean([1], [1], [1, 0, 1])
    assert few.to_json_dict() == {"metric": "ppi_mean", "value": None, "ci_low": None, "ci_high": None,
                                  "n_items": 1, "n_raters": 2,
                                  "note": "undefined: 1 items with both human and judge labels; PPI needs at least 2"}
    assert few.extra == {"n_labeled": 1, "n_unlabeled": 3, "tuning": "none"}
    alone = ppi_mean([1, 0], [1, 0], [1])
    assert (alone.metric, alone.value, alone.n_items, alone.n_raters) == ("ppi_mean", None, 3, 2)
    assert alone.note == "undefined: 1 items labelled by the judge alone; PPI needs at least 2"
    assert alone.extra == {"n_labeled": 2, "n_unlabeled": 1, "tuning": "none"}
    with pytest.raises(ValueError, match=r"^y and yhat must have the same length, got 2 and 3$"):
        ppi_mean([1, 0], [1, 0, 1], [1, 1])


def test_classical_mean_by_hand():
    # mean 0.5, sd (ddof 0) 0.5, n 4: 0.5 +- 1.959964 * 0.5 / 2
    r = classical_mean([1, 0, 1, 0])
    assert (r.metric, r.n_items, r.n_raters) == ("mean", 4, 1)
    assert r.value == 0.5 and r.note == "mean with a 95% normal (CLT) interval over 4 items"
    assert (r.ci_low, r.ci_high) == (pytest.approx(0.5 - 0.489991, abs=1e-5), pytest.approx(0.5 + 0.489991, abs=1e-5))
    named = classical_mean([2, 4], alpha=0.1, metric="score")
    assert named.metric == "score" and named.note == "mean with a 90% normal (CLT) interval over 2 items"
    # 3 +- 1.644854 * 1 / sqrt(2)
    assert named.ci_high == pytest.approx(3 + 1.644854 / np.sqrt(2), abs=1e-5)
    short = classical_mean([3])
    assert (short.metric, short.value, short.n_items, short.n_raters, short.note) == (
        "mean", None, 1, 1, "undefined: 1 values; an interval needs at least 2")
