"""Regenerate tests/stats/reference/irrcac.json: irrCAC's values on fixed inputs.

irrCAC pins scipy 1.12 (hence numpy < 2), so it is not part of prefval's test extra: the test
suite compares against these recorded values instead. Run this script in a separate, throw-away
environment whenever a case is added:

    python3 -m venv /tmp/irrcac-env && /tmp/irrcac-env/bin/pip install irrCAC==0.4.4 pandas
    /tmp/irrcac-env/bin/python tests/stats/reference/make_irrcac_reference.py

Each case stores its inputs (items x raters, None for missing) next to irrCAC's figures, so the
tests do not depend on a random generator's stream.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
from irrCAC.datasets import raw_5observers, raw_ben_gerry, raw_gender
from irrCAC.raw import CAC

OUT = Path(__file__).with_name("irrcac.json")


def random_table(seed, n=40, r=4, q=4, missing=0.2):
    """A latent category per item, raters right 60% of the time, then ratings dropped; no empty row."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, q, n)
    t = np.where(rng.random((n, r)) < 0.6, truth[:, None], rng.integers(0, q, (n, r))) + 1
    out = t.astype(object)
    out[rng.random((n, r)) < missing] = None
    for i in range(n):
        if all(v is None for v in out[i]):
            out[i, 0] = int(t[i, 0])
    return [[None if v is None else int(v) for v in row] for row in out.tolist()]


def frame(rows):
    if all(isinstance(v, (int, float)) or v is None for r in rows for v in r):
        return pd.DataFrame([[np.nan if v is None else v for v in r] for r in rows], dtype=float)
    return pd.DataFrame([[np.nan if v is None else v for v in r] for r in rows])


def rows_of(df):
    return [[None if v is None or (isinstance(v, float) and math.isnan(v)) else
             (int(v) if isinstance(v, float) and v.is_integer() else v) for v in r]
            for r in df.to_numpy().tolist()]


def figures(rows, categories=None):
    """irrCAC's AC1, AC2 linear/quadratic, Fleiss, Krippendorff (nominal) and p_a for one table."""
    kw = {} if categories is None else {"categories": [float(c) if isinstance(c, int) else c for c in categories]}
    est = lambda res: res["est"]["coefficient_value"]  # noqa: E731
    out = {
        "gwet_ac1": est(CAC(frame(rows), digits=15, **kw).gwet()),
        "fleiss_kappa": est(CAC(frame(rows), digits=15, **kw).fleiss()),
        "krippendorff_alpha": est(CAC(frame(rows), digits=15, **kw).krippendorff()),
        "percent_agreement": CAC(frame(rows), digits=15, **kw).gwet()["est"]["pa"],
    }
    if all(isinstance(v, (int, float)) for r in rows for v in r if v is not None):
        for w in ("linear", "quadratic"):
            out[f"gwet_ac2_{w}"] = est(CAC(frame(rows), weights=w, digits=15, **kw).gwet())
    return out


def main() -> None:
    cases = []
    for seed in range(5):
        rows = random_table(seed)
        cases.append({"name": f"random seed {seed}, 4 categories, 20% missing", "rows": rows,
                      "categories": [1, 2, 3, 4], "irrcac": figures(rows, [1, 2, 3, 4])})
    rows = random_table(11, q=3)
    cases.append({"name": "3 categories used, 1..5 declared", "rows": rows, "categories": [1, 2, 3, 4, 5],
                  "irrcac": figures(rows, [1, 2, 3, 4, 5])})
    rows = random_table(3, q=3)
    cases.append({"name": "3 categories used, 1..4 declared", "rows": rows, "categories": [1, 2, 3, 4],
                  "irrcac": figures(rows, [1, 2, 3, 4])})
    cases.append({"name": "irrCAC raw_5observers", "rows": rows_of(raw_5observers()), "categories": None,
                  "irrcac": figures(rows_of(raw_5observers()))})
    issue = [[1, 2], [2, 4], [4, 4], [1, 1], [2, 2], [4, 2]]
    cases.append({"name": "numeric labels 1,2,4: weights by value (issue 10)", "rows": issue, "categories": None,
                  "irrcac": figures(issue)})
    for name, df in (("irrCAC raw_ben_gerry", raw_ben_gerry()), ("irrCAC raw_gender", raw_gender())):
        rows = rows_of(df)
        cats = sorted({v for r in rows for v in r if v is not None})
        cases.append({"name": name, "rows": rows, "categories": cats, "irrcac": figures(rows, cats)})
    OUT.write_text(json.dumps({"irrCAC": "0.4.4", "cases": cases}, indent=1) + "\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
