"""Regenerate tests/stats/reference/ppi.json: ppi_py's values on fixed inputs.

prefval computes PPI and PPI++ in closed form (reports.stats.ppi); ppi-python is not a dependency (it brings
numba and llvmlite, about 208 MB, for these two formulas). The tests compare against these recorded values.
Run this script in a separate, throw-away environment whenever a case is added:

    python3 -m venv /tmp/ppi-env && /tmp/ppi-env/bin/pip install ppi-python==0.2.3
    /tmp/ppi-env/bin/python tests/stats/reference/make_ppi_reference.py

Each case stores its inputs (human labels Y and the judge's Yhat on the n labelled items, the judge's Yhat_u on
the N others) next to ppi_py's point estimates and 95% intervals for lam=1 (PPI) and lam=None (PPI++, ppi_py's
power-tuned default), and its classical (human-only) interval, so no random generator's stream is involved.
"""
from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import numpy as np
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

OUT = Path(__file__).with_name("ppi.json")


def biased_judge(seed, n=40, big_n=400):
    """Truth right 60% of the time, a judge agreeing with it 80% of the time, shifted by (seed - 1) * 0.05."""
    rng = np.random.default_rng(seed)
    truth = rng.random(n + big_n) < 0.6
    judge = np.where(rng.random(n + big_n) < 0.8, truth, ~truth).astype(float) + (seed - 1) * 0.05
    return truth[:n].astype(float), judge[:n], judge[n:]


def scores(seed, n=25, big_n=120):
    """1..5 scores: a judge one point generous with noise, people rounding the truth."""
    rng = np.random.default_rng(100 + seed)
    truth = rng.uniform(1, 5, n + big_n)
    judge = np.clip(np.round(truth + 1 + rng.normal(0, 0.7, n + big_n)), 1, 5)
    return np.round(truth[:n]), judge[:n], judge[n:]


def one(y, yhat, yun):
    out = {"y": y.tolist(), "yhat": yhat.tolist(), "yhat_unlabeled": yun.tolist()}
    for name, lam in (("lam_1", 1), ("power", None)):
        lo, hi = ppi_mean_ci(y, yhat, yun, alpha=0.05, lam=lam)
        est = ppi_mean_pointestimate(y, yhat, yun, lam=lam)
        out[name] = {"value": float(np.ravel(est)[0]), "ci_low": float(np.ravel(lo)[0]),
                     "ci_high": float(np.ravel(hi)[0])}
    lo, hi = classical_mean_ci(y, alpha=0.05)
    out["classical"] = {"value": float(y.mean()), "ci_low": float(np.ravel(lo)[0]),
                        "ci_high": float(np.ravel(hi)[0])}
    return out


def main():
    cases = []
    for seed in range(4):
        cases.append({"name": f"1/0 labels, biased judge, seed {seed}", **one(*biased_judge(seed))})
    for seed in range(2):
        cases.append({"name": f"1..5 scores, generous judge, seed {seed}", **one(*scores(seed))})
    OUT.write_text(json.dumps({"ppi-python": version("ppi-python"), "cases": cases}, indent=1) + "\n",
                   encoding="utf-8")


if __name__ == "__main__":
    main()
