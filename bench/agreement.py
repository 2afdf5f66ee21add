"""Benchmark prefval's agreement statistics on a large synthetic table.

Run: ``python bench/agreement.py [--items N] [--boot B] [--repeats R]``. Builds N items x 5 raters
on 4 categories with 10% of ratings missing (seeded), times each statistic without an interval, the
total, then Krippendorff's alpha against the ``krippendorff`` package, like with like (median of R
runs, every conversion inside the timer):

* library: ``reports.stats.krippendorff_alpha(rows)`` against converting the same Python rows to
  the package's float array and calling ``krippendorff.alpha``;
* command line: ``prefval stats agreement FILE.csv --metric krippendorff_alpha`` (in-process,
  output discarded) against ``pandas.read_csv(FILE.csv)`` plus ``krippendorff.alpha``.

Target: both ratios <= 1.5. Then each statistic with B bootstrap resamples. Targets on a 2-core
machine: < 5 s total without bootstrap, < 60 s total with 1,000 resamples.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from reports import stats  # noqa: E402


def synthetic(n_items: int, n_raters: int = 5, q: int = 4, missing: float = 0.1, seed: int = 0):
    """Items x raters list of lists: a latent true category per item, raters right ~70% of the time."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, q, n_items)
    noise = rng.integers(0, q, (n_items, n_raters))
    right = rng.random((n_items, n_raters)) < 0.7
    r = np.where(right, truth[:, None], noise) + 1
    data = r.astype(object)
    data[rng.random((n_items, n_raters)) < missing] = None
    return data.tolist()


CALLS = {
    "percent_agreement": lambda d, **k: stats.percent_agreement(d, **k),
    "unanimity_rate": lambda d, **k: stats.unanimity_rate(d, **k),
    "cohen_kappa (raters 1-2)": lambda d, **k: stats.cohen_kappa([r[:2] for r in d], **k),
    "cohen_kappa_quadratic (1-2)": lambda d, **k: stats.cohen_kappa([r[:2] for r in d], "quadratic", **k),
    "fleiss_kappa": lambda d, **k: stats.fleiss_kappa(d, **k),
    "krippendorff_alpha nominal": lambda d, **k: stats.krippendorff_alpha(d, "nominal", **k),
    "krippendorff_alpha ordinal": lambda d, **k: stats.krippendorff_alpha(d, "ordinal", **k),
    "krippendorff_alpha interval": lambda d, **k: stats.krippendorff_alpha(d, "interval", **k),
    "gwet_ac1": lambda d, **k: stats.gwet_ac1(d, **k),
    "gwet_ac2_linear": lambda d, **k: stats.gwet_ac2(d, "linear", **k),
    "gwet_ac2_quadratic": lambda d, **k: stats.gwet_ac2(d, "quadratic", **k),
}


def _median_time(fn, repeats: int):
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def write_csv(rows, path: str) -> None:
    """The rows as a ratings CSV the way a user has it: item column, one column per rater, empty = missing."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("item," + ",".join(f"rater{j + 1}" for j in range(len(rows[0]))) + "\n")
        for i, row in enumerate(rows):
            fh.write(f"i{i}," + ",".join("" if v is None else str(v) for v in row) + "\n")


def alpha_vs_package(data, repeats: int) -> None:
    """Nominal alpha: prefval against the krippendorff package, library and command line (see module doc)."""
    import contextlib
    import io
    import json
    import tempfile

    import krippendorff
    import pandas as pd

    from annotator.cli import main as prefval

    def package_from_rows():
        rel = np.array([[np.nan if x is None else x for x in row] for row in data], dtype=float).T
        return krippendorff.alpha(reliability_data=rel, level_of_measurement="nominal")

    t_pkg, a_pkg = _median_time(package_from_rows, repeats)
    t_ours, a_ours = _median_time(lambda: stats.krippendorff_alpha(data, "nominal"), repeats)
    print(f"\nkrippendorff_alpha nominal, median of {repeats}, conversions inside the timers")
    print(f"  library:      prefval {t_ours:.3f} s, package from the same rows {t_pkg:.3f} s, "
          f"ratio {t_ours / t_pkg:.2f} (target <= 1.5); values {a_ours.value:.6f} / {a_pkg:.6f}")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ratings.csv")
        write_csv(data, path)

        def package_from_csv():
            rel = pd.read_csv(path, index_col=0).to_numpy(dtype=float).T
            return krippendorff.alpha(reliability_data=rel, level_of_measurement="nominal")

        def cli():
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                prefval(["stats", "agreement", path, "--metric", "krippendorff_alpha", "--bootstrap", "0",
                         "--format", "json"])
            return json.loads(out.getvalue())["value"]

        cli()  # first call pays the imports, as does the pandas import above
        t_pkg, a_pkg = _median_time(package_from_csv, repeats)
        t_cli, a_cli = _median_time(cli, repeats)
    print(f"  command line: prefval stats agreement {t_cli:.3f} s, pandas.read_csv + package {t_pkg:.3f} s, "
          f"ratio {t_cli / t_pkg:.2f} (target <= 1.5); values {a_cli:.6f} / {a_pkg:.6f}")


def _time(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5, help="runs per alpha timing (median reported)")
    args = ap.parse_args(argv)

    data = synthetic(args.items)
    print(f"synthetic data: {args.items:,} items x 5 raters, 4 categories, 10% missing")
    print(f"\n{'statistic':32} {'seconds':>8}  value")
    total = 0.0
    for name, fn in CALLS.items():
        sec, res = _time(lambda: fn(data))
        total += sec
        print(f"{name:32} {sec:8.3f}  {res.value:.4f}")
    print(f"{'TOTAL (no bootstrap)':32} {total:8.3f}  (target < 5 s)")

    alpha_vs_package(data, args.repeats)

    print(f"\nwith {args.boot} bootstrap resamples")
    print(f"{'statistic':32} {'seconds':>8}  95% interval")
    total_b = 0.0
    for name, fn in CALLS.items():
        sec, res = _time(lambda: fn(data, ci=True, n_boot=args.boot, seed=0))
        total_b += sec
        print(f"{name:32} {sec:8.3f}  [{res.ci_low:.4f}, {res.ci_high:.4f}]")
    print(f"{'TOTAL (bootstrap)':32} {total_b:8.3f}  (target < 60 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
