"""Statistics fed from a coded table (Prepared.from_codes, what `prefval status` passes from answer columns) and
at_least_one_correct from a float array: the same values and intervals as from the items x raters labels, and the
`krippendorff` package's alpha, on hand-made tables with missing ratings and units with a single rating."""
from __future__ import annotations

import numpy as np
import pytest

from reports.stats import (at_least_one_correct, fleiss_kappa, gwet_ac1, krippendorff_alpha, percent_agreement)
from reports.stats._prep import Prepared

CATS = ["keep", "drop", "unsure"]

# items x raters codes: -1 = no answer. Units 3 and 6 have a single rating, unit 5 none, unit 7 one category only.
CODES = np.array([
    [0, 0, 1, -1],
    [1, 1, 1, 1],
    [0, 2, -1, 0],
    [-1, 2, -1, -1],
    [0, 1, 2, 0],
    [-1, -1, -1, -1],
    [1, -1, -1, -1],
    [2, 2, -1, 2],
    [0, 0, 0, 1],
])


def _labels(codes):
    return [[CATS[k] if k >= 0 else None for k in row] for row in codes]


@pytest.mark.parametrize("fn", [
    lambda r, c: fleiss_kappa(r, categories=c, ci=True, n_boot=200, seed=4),
    lambda r, c: gwet_ac1(r, categories=c, ci=True, n_boot=200, seed=4),
    lambda r, c: percent_agreement(r, ci=True, n_boot=200, seed=4),
    lambda r, c: krippendorff_alpha(r, "nominal", categories=c, ci=True, n_boot=200, seed=4),
])
@pytest.mark.usefixtures("intervals_from_few_items")
def test_coded_table_gives_the_same_result_as_labels(fn):
    coded = fn(Prepared.from_codes(CODES, CATS), CATS)
    labels = fn(_labels(CODES), CATS)
    assert coded.value is not None and coded.ci_low is not None
    assert (coded.value, coded.ci_low, coded.ci_high, coded.n_items, coded.n_raters, coded.note, coded.extra) == \
        (labels.value, labels.ci_low, labels.ci_high, labels.n_items, labels.n_raters, labels.note, labels.extra)


def test_coded_table_alpha_matches_the_krippendorff_package():
    import krippendorff

    # reliability data: raters x units, NaN for missing; the package's nominal alpha
    data = np.where(CODES.T >= 0, CODES.T, np.nan).astype(float)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    got = krippendorff_alpha(Prepared.from_codes(CODES, CATS), "nominal", categories=CATS)
    assert got.value == pytest.approx(expected, abs=1e-12)


def test_fleiss_from_codes_by_hand():
    """Two raters, two units: (keep, keep) and (keep, drop); a third unit with one keep. p_a over units with two
    ratings = (1 + 0) / 2; category shares over units with >= 1 rating: keep (1 + 1/2 + 1) / 3 = 5/6, drop 1/6;
    p_e = 25/36 + 1/36 = 26/36; kappa = (1/2 - 26/36) / (1 - 26/36) = -0.8."""
    got = fleiss_kappa(Prepared.from_codes([[0, 0], [0, 1], [0, -1]], ["keep", "drop"]), categories=["keep", "drop"])
    assert got.value == pytest.approx(-0.8) and got.extra["n_items_single_rating"] == 1


def test_from_codes_refuses_bad_tables():
    with pytest.raises(ValueError, match="outside -1..1"):
        Prepared.from_codes([[0, 2]], ["keep", "drop"])
    with pytest.raises(ValueError, match="2-D"):
        Prepared.from_codes([0, 1], ["keep", "drop"])
    with pytest.raises(ValueError, match="twice"):
        Prepared.from_codes([[0, 1]], ["keep", "keep"])
    with pytest.raises(ValueError, match="integers"):
        Prepared.from_codes([[0.5, 1]], ["keep", "drop"])
    with pytest.raises(ValueError, match="coded over"):
        fleiss_kappa(Prepared.from_codes([[0, 1]], ["keep", "drop"]), categories=["drop", "keep"])


def test_at_least_one_correct_from_an_array_equals_lists():
    rows = [[True, False, None], [False, False, None], [None, None, None], [False, True, True], [None, False, None]]
    arr = np.array([[np.nan if x is None else float(x) for x in r] for r in rows])
    a = at_least_one_correct(arr, ci=True, n_boot=300, seed=9)
    b = at_least_one_correct(rows, ci=True, n_boot=300, seed=9)
    # 4 rated items, 2 with a correct rating
    assert a.value == 0.5 and a.n_items == 4 and a.n_raters == 3
    assert (a.value, a.ci_low, a.ci_high, a.note, a.extra) == (b.value, b.ci_low, b.ci_high, b.note, b.extra)
    with pytest.raises(ValueError, match="item 1"):
        at_least_one_correct(np.array([[1.0, np.nan], [0.5, 0.0]]))
