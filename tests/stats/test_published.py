"""Published worked examples: Krippendorff (2011), Fleiss (1971), irrCAC's documented examples."""
import pytest

from reports.stats import (cohen_kappa, fleiss_kappa, gwet_ac1, gwet_ac2, krippendorff_alpha,
                           percent_agreement)

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C: 4 observers x 12
# units, values 1-5, missing ratings (units are rows here).
K2011 = [
    [1, 1, None, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4],
    [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [None, 5, 5, 5], [None, None, 1, 1],
    [None, None, 3, None],
]

# Krippendorff (2011), example A: two observers, binary data, 10 units.
K2011_BINARY = list(zip([0, 1, 0, 0, 0, 0, 0, 0, 1, 0], [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]))

# Fleiss (1971), table 1 as raw ratings: 30 patients x 6 psychiatrists, 5 diagnoses (coded 1-5),
# as reproduced in statsmodels' test suite.
FLEISS1971 = [
    [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5],
    [2, 2, 2, 4, 4, 4], [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4],
    [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5], [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4],
    [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5], [3, 3, 3, 3, 3, 5],
    [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4],
    [1, 4, 4, 4, 4, 5], [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
]

@pytest.mark.parametrize("level,expected", [
    ("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)])
@pytest.mark.parametrize("engine", ["krippendorff", "own"])
def test_krippendorff_2011_example_c(level, expected, engine):
    res = krippendorff_alpha(K2011, level, engine=engine)
    assert res.value == pytest.approx(expected, abs=5e-4)
    assert res.n_items == 11  # the last unit has one value: unpairable
    assert res.n_raters == 4
    assert "unpairable" in res.note


def test_krippendorff_2011_binary_example():
    res = krippendorff_alpha(K2011_BINARY)
    assert res.value == pytest.approx(0.095, abs=5e-4)
    # alpha = 1 - (n-1) o_01 / (n_0 n_1) = 1 - 19 * 4 / (14 * 6)
    assert res.value == pytest.approx(1 - 19 * 4 / 84, abs=1e-12)


def test_krippendorff_2011_text_labels_with_declared_order():
    names = ["very low", "low", "mid", "high", "very high"]
    text = [[None if v is None else names[v - 1] for v in row] for row in K2011]
    res = krippendorff_alpha(text, "ordinal", categories=names)
    assert res.value == pytest.approx(0.815, abs=5e-4)
    with pytest.raises(ValueError, match="categories"):
        krippendorff_alpha(text, "ordinal")


def test_fleiss_1971_published_kappa():
    res = fleiss_kappa(FLEISS1971)
    assert round(res.value, 3) == 0.430
    assert res.value == pytest.approx(0.4302445, abs=1e-7)  # R irr::kappam.fleiss
    assert (res.n_items, res.n_raters) == (30, 6)


def test_irrcac_doc_example_4raters():  # irrCAC itself: tests/stats/test_crosscheck.py
    # irrCAC.raw module docstring: AC1 0.77544, Fleiss 0.76117, pa 0.81818
    res = gwet_ac1(K2011)
    assert res.value == pytest.approx(0.77544, abs=5e-6)
    assert res.extra["p_a"] == pytest.approx(0.81818, abs=5e-6)
    assert res.extra["p_e"] == pytest.approx(0.19032, abs=5e-6)
    assert fleiss_kappa(K2011).value == pytest.approx(0.76117, abs=5e-6)
    assert percent_agreement(K2011).value == pytest.approx(0.81818, abs=5e-6)


def test_ben_gerry_cohen_kappa_matches_sklearn_with_missing_dropped():
    import json
    from pathlib import Path

    from sklearn.metrics import cohen_kappa_score
    ref = json.loads((Path(__file__).parent / "reference" / "irrcac.json").read_text(encoding="utf-8"))
    rows = next(c["rows"] for c in ref["cases"] if c["name"] == "irrCAC raw_ben_gerry")
    res = cohen_kappa(rows)
    pairs = [r for r in rows if None not in r]
    assert res.n_items == len(pairs) == 11
    assert "1 items missing a rating dropped" in res.note
    assert res.value == pytest.approx(cohen_kappa_score([p[0] for p in pairs], [p[1] for p in pairs]))
