"""PPI and PPI++ (reports.stats.ppi): lambda = 1 (prefval's default, the report's) against the power-tuned
lambda (Angelopoulos, Duchi and Zrnic 2023), by hand and against ppi_py's own default."""
from __future__ import annotations

import numpy as np
import pytest

from reports.stats.ppi import power_tuned_lambda, ppi_mean

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


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_equals_ppi_py_default_and_lam_1(seed):
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    rng = np.random.default_rng(seed)
    n, big_n = 40, 400
    truth = rng.random(n + big_n) < 0.6
    judge = np.where(rng.random(n + big_n) < 0.8, truth, ~truth).astype(float) + (seed - 1) * 0.05  # biased
    y, yhat, yun = truth[:n].astype(float), judge[:n], judge[n:]
    for tuning, lam in (("power", None), ("none", 1)):
        r = ppi_mean(y, yhat, yun, tuning=tuning)
        lo, hi = ppi_mean_ci(y, yhat, yun, alpha=0.05, lam=lam)
        assert r.value == pytest.approx(float(np.ravel(ppi_mean_pointestimate(y, yhat, yun, lam=lam))[0]))
        assert (r.ci_low, r.ci_high) == (pytest.approx(float(np.ravel(lo)[0])), pytest.approx(float(np.ravel(hi)[0])))


def test_a_judge_that_never_varies_gets_lambda_0_and_an_unknown_tuning_is_refused():
    assert power_tuned_lambda([1, 0, 1], [1, 1, 1], [1, 1]) == 0.0
    r = ppi_mean([1, 0, 1], [1, 1, 1], [1, 1], tuning="power")
    assert r.value == pytest.approx(2 / 3)  # lambda 0: the people's mean
    with pytest.raises(ValueError, match="tuning must be one of none, power, got 'auto'"):
        ppi_mean(Y, YHAT, YUN, tuning="auto")
