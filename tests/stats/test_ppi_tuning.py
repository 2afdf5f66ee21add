"""PPI and PPI++ (reports.stats.ppi): lambda = 1 (prefval's default, the report's) against the power-tuned
lambda (Angelopoulos, Duchi and Zrnic 2023), by hand and against ppi_py's values (lam=1 and its power-tuned
default), recorded in tests/stats/reference/ppi.json by make_ppi_reference.py (ppi-python is not a dependency)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from reports.stats.ppi import classical_mean, power_tuned_lambda, ppi_mean

REFERENCE = json.loads((Path(__file__).parent / "reference" / "ppi.json").read_text(encoding="utf-8"))

Y, YHAT, YUN = [1, 0, 1, 0], [1, 1, 1, 0], [1, 1, 1, 0]
Z = 1.959963984540054


def test_power_tuned_by_hand():
    # Cov(Y, Yhat) over the 4 labelled items (ddof 0): deviations (.5, -.5, .5, -.5) x (.25, .25, .25, -.75) -> 1/8;
    # Var of the 8 judge labels (six 1s, two 0s; ddof 1): 1.5 / 7; lambda = (1/8) / ((1 + 4/4) 1.5/7) = 7/24
    assert power_tuned_lambda(Y, YHAT, YUN) == pytest.approx(7 / 24)
    r = ppi_mean(Y, YHAT, YUN, tuning="power")
    # theta = 7/24 * 3/4 + mean(Y - 7/24 Yhat) = 7/32 + (1/2 - 7/32) = 1/2
    assert r.value == pytest.approx(0.5)
    # var: (7/24)^2 * 3/16 / 4 + var(17/24, -7/24, 17/24, 0) / 4, population variances
    resid = np.array([17 / 24, -7 / 24, 17 / 24, 0])
    half = Z * np.sqrt((7 / 24) ** 2 * (3 / 16) / 4 + resid.var() / 4)
    assert (r.ci_low, r.ci_high) == (pytest.approx(0.5 - half), pytest.approx(0.5 + half))
    assert round(half, 4) == 0.4480
    assert r.extra["lambda"] == pytest.approx(7 / 24) and r.extra["tuning"] == "power"
    assert r.extra["rectifier"] == pytest.approx(resid.mean())
    assert r.note.startswith("prediction-powered mean, PPI++ with lambda = 0.292 chosen from the data (power "
                             "tuning; Angelopoulos, Duchi and Zrnic 2023, PPI++, section 2; ppi_py's default)")
    # lambda = 1 on the same data: +- z sqrt(3/16 / 4 + 3/16 / 4) = +- 0.600, wider
    plain = ppi_mean(Y, YHAT, YUN)
    assert plain.ci_high - plain.value == pytest.approx(Z * np.sqrt(3 / 32)) and plain.extra["lambda"] == 1.0


@pytest.mark.parametrize("case", REFERENCE["cases"], ids=lambda c: c["name"])
def test_equals_ppi_py_default_and_lam_1(case):
    y, yhat, yun = case["y"], case["yhat"], case["yhat_unlabeled"]
    for tuning, key in (("power", "power"), ("none", "lam_1")):
        r, ref = ppi_mean(y, yhat, yun, tuning=tuning), case[key]
        assert r.value == pytest.approx(ref["value"], rel=1e-12)
        assert (r.ci_low, r.ci_high) == (pytest.approx(ref["ci_low"], rel=1e-12),
                                         pytest.approx(ref["ci_high"], rel=1e-12))
    c, ref = classical_mean(y), case["classical"]
    assert (c.value, c.ci_low, c.ci_high) == (pytest.approx(ref["value"], rel=1e-12),
                                              pytest.approx(ref["ci_low"], rel=1e-12),
                                              pytest.approx(ref["ci_high"], rel=1e-12))


def test_the_reference_cases_tell_the_two_tunings_apart():
    # the recorded cases would not catch a swapped lambda if PPI and PPI++ agreed on them
    for case in REFERENCE["cases"]:
        assert abs(case["power"]["ci_high"] - case["lam_1"]["ci_high"]) > 1e-3, case["name"]


def test_alpha_outside_0_1_is_refused():
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\), got 1.5"):
        ppi_mean(Y, YHAT, YUN, alpha=1.5)
    with pytest.raises(ValueError, match="alpha must be in"):
        classical_mean(Y, alpha=0)


def test_a_judge_that_never_varies_gets_lambda_0_and_an_unknown_tuning_is_refused():
    assert power_tuned_lambda([1, 0, 1], [1, 1, 1], [1, 1]) == 0.0
    r = ppi_mean([1, 0, 1], [1, 1, 1], [1, 1], tuning="power")
    assert r.value == pytest.approx(2 / 3)  # lambda 0: the people's mean
    with pytest.raises(ValueError, match="tuning must be one of none, power, got 'auto'"):
        ppi_mean(Y, YHAT, YUN, tuning="auto")
