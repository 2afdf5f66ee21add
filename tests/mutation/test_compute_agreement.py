"""compute_agreement, the dispatcher of `prefval stats agreement` (reports/stats/__init__.py): every argument passed
to the named statistic, its defaults and the unknown metric's message (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import pytest


# ---- compute_agreement: the dispatcher of `prefval stats agreement` --------------------------------------
@pytest.mark.usefixtures("intervals_from_few_items")
def test_compute_agreement_passes_every_argument_to_the_named_statistic():
    import reports.stats as st

    data = [[1, 2, 2], [2, 2, 3], [3, 3, 3], [1, 1, 2], [2, 3, 3], [1, 1, 1]]
    pair = [row[:2] for row in data]
    cats = [1, 2, 3, 4]  # 4 is declared but unused: it changes the weighted statistics
    kw = dict(ci=True, n_boot=200, seed=5)
    expected = {
        "percent_agreement": st.percent_agreement(data, **kw),
        "unanimity_rate": st.unanimity_rate(data, **kw),
        "fleiss_kappa": st.fleiss_kappa(data, categories=cats, **kw),
        "krippendorff_alpha": st.krippendorff_alpha(data, level="ordinal", categories=cats, **kw),
        "gwet_ac1": st.gwet_ac1(data, categories=cats, **kw),
        "gwet_ac2_linear": st.gwet_ac2(data, weights="linear", categories=cats, **kw),
        "gwet_ac2_quadratic": st.gwet_ac2(data, weights="quadratic", categories=cats, **kw),
    }
    for metric, want in expected.items():
        got = st.compute_agreement(metric, data, categories=cats, level="ordinal", **kw)
        assert got == want, metric
        assert got.ci_low is not None or got.value is None, metric
    for metric, w in (("cohen_kappa", None), ("cohen_kappa_linear", "linear"), ("cohen_kappa_quadratic", "quadratic")):
        assert st.compute_agreement(metric, pair, categories=cats, **kw) == st.cohen_kappa(
            pair, weights=w, categories=cats, **kw)
    # the level reaches alpha, and the defaults are nominal, no interval, 1000 resamples, seed 0
    assert st.compute_agreement("krippendorff_alpha", data).value != st.compute_agreement(
        "krippendorff_alpha", data, level="interval").value
    assert st.compute_agreement("krippendorff_alpha", data) == st.krippendorff_alpha(data, level="nominal")
    assert st.compute_agreement("fleiss_kappa", data).ci_low is None
    assert st.compute_agreement("fleiss_kappa", data, ci=True) == st.fleiss_kappa(data, ci=True, n_boot=1000,
                                                                                  seed=0)
    assert st.AGREEMENT_METRICS == ("percent_agreement", "cohen_kappa", "cohen_kappa_linear",
                                    "cohen_kappa_quadratic", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1",
                                    "gwet_ac2_linear", "gwet_ac2_quadratic", "unanimity_rate")
    for bad in ("cohen_kappa_cubic", "kappa", ""):
        with pytest.raises(ValueError, match=r"^unknown metric .*; choose one of percent_agreement, cohen_kappa, "):
            st.compute_agreement(bad, pair)
