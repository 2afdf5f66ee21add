"""Cross-checks against independent implementations: irrCAC (recorded values), statsmodels, nltk, scikit-learn."""
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from reports.stats import (cohen_kappa, fleiss_kappa, gwet_ac1, gwet_ac2, krippendorff_alpha,
                           percent_agreement)


def random_table(seed, n=40, r=4, q=4, missing=0.2):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, q, n)
    t = np.where(rng.random((n, r)) < 0.6, truth[:, None], rng.integers(0, q, (n, r))) + 1
    out = t.astype(object)
    out[rng.random((n, r)) < missing] = None
    # no all-missing rows, to keep comparisons simple
    for i in range(n):
        if all(v is None for v in out[i]):
            out[i, 0] = int(t[i, 0])
    return out.tolist()


def as_frame(rows):
    import pandas as pd
    return pd.DataFrame([[np.nan if v is None else v for v in r] for r in rows], dtype=float)


REFERENCE = json.loads((Path(__file__).parent / "reference" / "irrcac.json").read_text(encoding="utf-8"))


def _ours(metric, rows, categories):
    if metric == "percent_agreement":
        return percent_agreement(rows).value
    if metric == "gwet_ac1":
        return gwet_ac1(rows, categories=categories).value
    if metric.startswith("gwet_ac2_"):
        return gwet_ac2(rows, metric.rsplit("_", 1)[1], categories=categories).value
    if metric == "fleiss_kappa":
        return fleiss_kappa(rows, categories=categories).value
    return krippendorff_alpha(rows, categories=categories).value


@pytest.mark.parametrize("case", REFERENCE["cases"], ids=[c["name"] for c in REFERENCE["cases"]])
def test_irrcac_recorded_values(case):
    # irrCAC 0.4.4's figures, recorded by tests/stats/reference/make_irrcac_reference.py (irrCAC pins
    # scipy 1.12, so it runs in its own environment, not in the test extra)
    assert case["irrcac"], "no figures recorded"
    for metric, theirs in case["irrcac"].items():
        assert _ours(metric, case["rows"], case["categories"]) == pytest.approx(theirs, abs=1e-12), metric


def test_irrcac_unused_declared_categories_change_ac1_and_ac2():
    by_name = {c["name"]: c for c in REFERENCE["cases"]}
    five = by_name["3 categories used, 1..5 declared"]
    # the unused categories raise q and so lower chance agreement: AC1 changes
    assert abs(gwet_ac1(five["rows"], categories=five["categories"]).value - gwet_ac1(five["rows"]).value) > 1e-3
    four = by_name["3 categories used, 1..4 declared"]
    assert abs(gwet_ac2(four["rows"], "quadratic", categories=four["categories"]).value
               - gwet_ac2(four["rows"], "quadratic").value) > 1e-4


@pytest.mark.parametrize("seed", range(4))
def test_statsmodels_fleiss_complete_data(seed):
    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss
    rows = random_table(seed, n=50, r=5, missing=0.0)
    table, _ = aggregate_raters(np.array(rows, dtype=int))
    assert fleiss_kappa(rows).value == pytest.approx(sm_fleiss(table, method="fleiss"), abs=1e-12)


def _pairs(seed, n=60, q=5, missing=0.1):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, q, n)
    b = np.where(rng.random(n) < 0.6, a, rng.integers(0, q, n))
    rows = [[int(x), int(y)] for x, y in zip(a, b)]
    for i in np.flatnonzero(rng.random(n) < missing):
        rows[i][int(rng.integers(0, 2))] = None
    return rows


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("seed", range(3))
def test_cohen_against_sklearn_and_statsmodels(weights, seed):
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import cohens_kappa, to_table
    rows = _pairs(seed)
    both = [r for r in rows if None not in r]
    a, b = [r[0] for r in both], [r[1] for r in both]
    res = cohen_kappa(rows, weights=weights)
    assert res.n_items == len(both)
    assert res.value == pytest.approx(cohen_kappa_score(a, b, weights=weights), abs=1e-12)
    table = to_table(np.array(both), bins=np.arange(6) - 0.5)[0]
    sm = cohens_kappa(table, wt={None: None, "linear": "linear", "quadratic": "quadratic"}[weights])
    assert res.value == pytest.approx(sm.kappa, abs=1e-12)


def test_string_labels_with_declared_order_and_unused_category_match_sklearn_labels():
    from sklearn.metrics import cohen_kappa_score
    scale = ["low", "rather low", "mid", "high"]  # "rather low" never used
    used = ["low", "mid", "high"]
    a = ["low", "mid", "high", "mid", "low", "high", "mid", "low"]
    b = ["mid", "mid", "high", "high", "low", "mid", "mid", "low"]
    rows = list(zip(a, b))
    for w in ("linear", "quadratic"):
        declared = cohen_kappa(rows, w, categories=scale)
        assert declared.value == pytest.approx(cohen_kappa_score(a, b, weights=w, labels=scale), abs=1e-12)
        three = cohen_kappa(rows, w, categories=used)
        assert three.value == pytest.approx(cohen_kappa_score(a, b, weights=w, labels=used), abs=1e-12)
        # the unused middle category stretches the low-mid distance: weighted kappa changes
        assert abs(declared.value - three.value) > 1e-3
        # an unused category at an end only rescales all distances, which weighted kappa ignores
        assert cohen_kappa(rows, w, categories=used + ["extreme"]).value == pytest.approx(three.value)
    scale = used
    # declared order, not alphabetical: alphabetical would put "high" before "low"
    alpha_order = sorted(scale[:3])
    assert cohen_kappa(rows, "linear", categories=scale[:3]).value != pytest.approx(
        cohen_kappa(rows, "linear", categories=alpha_order).value)
    # unweighted kappa does not depend on unused categories
    assert cohen_kappa(rows, categories=scale).value == pytest.approx(cohen_kappa(rows).value)
    with pytest.raises(ValueError, match="ordered categories"):
        cohen_kappa(rows, "linear")


def _nltk_task(rows):
    from nltk.metrics.agreement import AnnotationTask
    triples = [(f"c{j}", f"i{i}", str(v)) for i, r in enumerate(rows) for j, v in enumerate(r)
               if v is not None]
    return AnnotationTask(data=triples)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.slow
def test_nltk_alpha_kappa_multikappa_pi(seed):
    complete = random_table(seed, n=30, r=3, missing=0.0)
    task = _nltk_task(complete)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert krippendorff_alpha(complete).value == pytest.approx(task.alpha(), abs=1e-9)
        assert fleiss_kappa(complete).value == pytest.approx(task.pi(), abs=1e-9)  # multi-pi = Fleiss
        two = [r[:2] for r in complete]
        t2 = _nltk_task(two)
        assert cohen_kappa(two).value == pytest.approx(t2.kappa(), abs=1e-9)
        assert cohen_kappa(two).value == pytest.approx(t2.multi_kappa(), abs=1e-9)


def test_nltk_alpha_with_missing():
    rows = random_table(7, n=30, r=4, missing=0.25)
    rows = [r for r in rows if sum(v is not None for v in r) >= 2]  # nltk counts singletons oddly
    assert krippendorff_alpha(rows).value == pytest.approx(_nltk_task(rows).alpha(), abs=1e-9)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed", range(3))
def test_krippendorff_package_equals_own_coincidence_code(level, seed):
    rows = random_table(seed, n=50, r=5, q=5, missing=0.3)
    a = krippendorff_alpha(rows, level)
    b = krippendorff_alpha(rows, level, engine="own")
    assert a.value == pytest.approx(b.value, abs=1e-12)


def test_krippendorff_sparse_path_equals_dense(monkeypatch):
    from reports.stats import alpha as alpha_mod
    rows = random_table(5, n=40, r=4, q=6, missing=0.2)
    dense = krippendorff_alpha(rows, "ordinal", engine="own", ci=True, n_boot=200)
    monkeypatch.setattr(alpha_mod, "_DENSE_LIMIT", 0)
    sparse = krippendorff_alpha(rows, "ordinal", engine="own", ci=True, n_boot=200)
    assert sparse.value == pytest.approx(dense.value, abs=1e-12)
    assert (sparse.ci_low, sparse.ci_high) == pytest.approx((dense.ci_low, dense.ci_high), abs=1e-12)


def test_numpy_and_dataframe_inputs_agree_with_lists():
    rows = random_table(1)
    arr = np.array([[np.nan if v is None else v for v in r] for r in rows], dtype=float)
    assert fleiss_kappa(arr).value == pytest.approx(fleiss_kappa(rows).value, abs=1e-12)
    assert gwet_ac1(as_frame(rows)).value == pytest.approx(gwet_ac1(rows).value, abs=1e-12)
    assert krippendorff_alpha(arr, "interval").value == pytest.approx(
        krippendorff_alpha(rows, "interval").value, abs=1e-12)
