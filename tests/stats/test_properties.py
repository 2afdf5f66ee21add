"""Property tests (hypothesis): invariance to item/rater order, perfect agreement, ranges, intervals."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reports.stats import (cohen_kappa, fleiss_kappa, gwet_ac1, gwet_ac2, krippendorff_alpha,
                           percent_agreement, unanimity_rate)

SETTINGS = settings(max_examples=40, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])  # derandomize: the same examples every run
CATS = ["lo", "mid", "hi"]


@st.composite
def tables(draw, min_raters=2, max_raters=4):
    r = draw(st.integers(min_raters, max_raters))
    n = draw(st.integers(2, 12))
    cell = st.one_of(st.none(), st.sampled_from(CATS))
    rows = draw(st.lists(st.lists(cell, min_size=r, max_size=r), min_size=n, max_size=n))
    perm_items = draw(st.permutations(range(n)))
    perm_raters = draw(st.permutations(range(r)))
    return rows, perm_items, perm_raters


STATS = {
    "percent_agreement": lambda t: percent_agreement(t),
    "unanimity_rate": lambda t: unanimity_rate(t),
    "fleiss_kappa": lambda t: fleiss_kappa(t, categories=CATS),
    "gwet_ac1": lambda t: gwet_ac1(t, categories=CATS),
    "gwet_ac2_quadratic": lambda t: gwet_ac2(t, "quadratic", categories=CATS),
    "alpha_nominal": lambda t: krippendorff_alpha(t, categories=CATS),
    "alpha_ordinal": lambda t: krippendorff_alpha(t, "ordinal", categories=CATS),
}


def _same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-9


@SETTINGS
@given(tables())
@pytest.mark.slow
def test_permuting_items_and_raters_leaves_values_unchanged(data):
    rows, pi, pr = data
    permuted = [[rows[i][j] for j in pr] for i in pi]
    for name, fn in STATS.items():
        assert _same(fn(rows).value, fn(permuted).value), name


@SETTINGS
@given(tables(2, 2))
@pytest.mark.slow
def test_cohen_invariant_to_item_order_and_rater_swap(data):
    rows, pi, _ = data
    permuted = [rows[i][::-1] for i in pi]
    for w in (None, "linear", "quadratic"):
        assert _same(cohen_kappa(rows, w, categories=CATS).value,
                     cohen_kappa(permuted, w, categories=CATS).value)


@SETTINGS
@given(tables())
@pytest.mark.slow
def test_ranges(data):
    rows, _, _ = data
    for name, fn in STATS.items():
        v = fn(rows).value
        if v is None:
            continue
        assert v <= 1 + 1e-12, name
        if name in ("percent_agreement", "unanimity_rate"):
            assert 0 <= v <= 1
    v = cohen_kappa([r[:2] for r in rows], categories=CATS).value
    assert v is None or -1 - 1e-12 <= v <= 1 + 1e-12


@SETTINGS
@given(st.lists(st.sampled_from(CATS), min_size=2, max_size=15), st.integers(2, 5))
@pytest.mark.slow
def test_perfect_agreement_gives_one_where_defined(labels, r):
    rows = [[lab] * r for lab in labels]
    for name, fn in STATS.items():
        res = fn(rows)
        if len(set(labels)) > 1:
            assert res.value == pytest.approx(1.0), name
        elif name.startswith(("fleiss", "alpha")):
            assert res.value is None and "undefined" in res.note
        else:
            assert res.value == pytest.approx(1.0), name
    if len(set(labels)) > 1:
        assert cohen_kappa([[x, x] for x in labels]).value == pytest.approx(1.0)


@settings(max_examples=15, deadline=None, database=None, derandomize=True)
@given(st.integers(0, 10_000))
def test_interval_contains_estimate_on_typical_data(seed):
    rng = np.random.default_rng(seed)
    n, r, q = 80, 4, 4
    truth = rng.integers(0, q, n)
    t = np.where(rng.random((n, r)) < 0.7, truth[:, None], rng.integers(0, q, (n, r))).astype(object)
    t[rng.random((n, r)) < 0.1] = None
    rows = t.tolist()
    for fn in (fleiss_kappa, gwet_ac1, krippendorff_alpha, percent_agreement):
        res = fn(rows, ci=True, n_boot=200, seed=seed)
        assert res.ci_low <= res.value <= res.ci_high
