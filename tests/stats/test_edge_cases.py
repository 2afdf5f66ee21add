"""Degenerate and malformed inputs: undefined results carry a reason, bad input raises ValueError."""
import json
import math

import pytest

from reports.stats import (StatResult, cohen_kappa, compute_agreement, fleiss_kappa, gwet_ac1,
                           gwet_ac2, krippendorff_alpha, percent_agreement, unanimity_rate)

ALL_ONE = [["yes", "yes", "yes"]] * 6


def test_all_one_category_kappas_undefined_ac1_is_one():
    for res in (fleiss_kappa(ALL_ONE), cohen_kappa([r[:2] for r in ALL_ONE]), krippendorff_alpha(ALL_ONE)):
        assert res.value is None
        assert "undefined" in res.note and "'yes'" in res.note
        assert res.ci_low is None and res.ci_high is None
    assert gwet_ac1(ALL_ONE).value == 1.0
    assert "limit 1" in gwet_ac1(ALL_ONE).note
    # with a declared second category p_e = 0 and AC1 = p_a = 1 without any convention
    declared = gwet_ac1(ALL_ONE, categories=["yes", "no"])
    assert declared.value == 1.0 and declared.extra["p_e"] == 0.0
    # kappa stays undefined even with the declared category (all ratings still in one)
    assert fleiss_kappa(ALL_ONE, categories=["yes", "no"]).value is None
    assert percent_agreement(ALL_ONE).value == 1.0
    assert unanimity_rate(ALL_ONE).value == 1.0


def test_one_rater():
    rows = [["a"], ["b"], ["a"]]
    for fn in (percent_agreement, unanimity_rate, fleiss_kappa, gwet_ac1, krippendorff_alpha, cohen_kappa):
        res = fn(rows)
        assert res.value is None
        assert "one rater" in res.note


def test_second_rater_column_empty():
    rows = [["a", None], ["b", None], ["a", None]]
    for fn in (cohen_kappa, fleiss_kappa, gwet_ac1, krippendorff_alpha, percent_agreement):
        res = fn(rows)
        assert res.value is None and "one rater" in res.note


def test_no_overlap():
    rows = [["a", None], [None, "b"], ["b", None], [None, "a"]]
    for fn in (percent_agreement, fleiss_kappa, gwet_ac1, krippendorff_alpha, unanimity_rate):
        res = fn(rows)
        assert res.value is None and "no overlap" in res.note
    res = cohen_kappa(rows)
    assert res.value is None and "no item was rated by both" in res.note


def test_fewer_than_two_pairable_items_for_cohen():
    res = cohen_kappa([["a", "b"], ["a", None], [None, "b"]])
    assert res.value is None and "fewer than 2" in res.note


def test_no_items():
    for fn in (percent_agreement, fleiss_kappa, gwet_ac1, krippendorff_alpha, cohen_kappa):
        res = fn([])
        assert res.value is None and "undefined" in res.note


def test_missing_markers_none_nan_empty_string():
    a = [["x", "x", None], ["x", "y", float("nan")], ["y", "y", ""], ["y", "x", "  "]]
    b = [["x", "x", None], ["x", "y", None], ["y", "y", None], ["y", "x", None]]
    assert fleiss_kappa(a).value == fleiss_kappa(b).value
    assert cohen_kappa([r[:2] for r in a]).n_items == 4


def test_rating_outside_declared_categories_names_value():
    with pytest.raises(ValueError, match="'maybe'"):
        fleiss_kappa([["yes", "maybe"], ["no", "no"]], categories=["yes", "no"])
    with pytest.raises(ValueError, match="7"):
        gwet_ac2([[1, 2], [3, 7]], "linear", categories=[1, 2, 3, 4, 5])


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="twice"):
        gwet_ac1([["a", "b"]], categories=["a", "a"])
    with pytest.raises(ValueError, match="mix numbers and text"):
        fleiss_kappa([[1, "a"], [2, "b"]])
    with pytest.raises(ValueError, match="item 1 has 3 ratings"):
        fleiss_kappa([[1, 2], [1, 2, 3]])
    with pytest.raises(ValueError, match="exactly 2 rater"):
        cohen_kappa([[1, 2, 3], [1, 2, 3]])
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha([[1, 2]], "cardinal")
    with pytest.raises(ValueError, match="ratio-level alpha needs numeric"):
        krippendorff_alpha([["a", "b"], ["a", "a"]], "ratio", categories=["a", "b"])
    with pytest.raises(ValueError, match="ordered categories"):
        gwet_ac2([["a", "b"], ["a", "a"]], "linear")
    with pytest.raises(ValueError, match="weights"):
        gwet_ac2([[1, 2]], "cubic")
    with pytest.raises(ValueError, match="unknown metric"):
        compute_agreement("cronbach", [[1, 2]])


def test_label_types_bools_ints_floats_strings():
    bools = [[True, True], [False, False], [True, False], [False, False]]
    ints = [[1, 1], [0, 0], [1, 0], [0, 0]]
    assert cohen_kappa(bools).value == pytest.approx(cohen_kappa(ints).value)
    floats = [[1.5, 1.5], [2.5, 2.5], [1.5, 2.5]]
    assert krippendorff_alpha(floats, "interval").value is not None
    strs = [["b", "b"], ["a", "a"], ["b", "a"], ["a", "a"]]
    assert cohen_kappa(strs).value == pytest.approx(cohen_kappa(ints).value)


def test_numbers_sorted_numerically_not_as_text():
    rows = [[2, 10], [10, 10], [9, 10], [2, 2], [9, 9]]
    res = cohen_kappa(rows, "linear")
    assert res.extra["categories"] == [2, 9, 10]


def test_result_never_nan_and_json_shape():
    res = StatResult("x", float("nan"), float("inf"), None, 3, 2, "n")
    assert res.value is None and res.ci_low is None
    d = fleiss_kappa([[1, 2], [2, 2], [1, 1]]).to_json_dict()
    assert set(d) == {"metric", "value", "ci_low", "ci_high", "n_items", "n_raters", "note"}
    json.dumps(d)
    assert isinstance(d["value"], float) and not math.isnan(d["value"])


def test_single_item_rated_once_among_pairs_is_ignored_but_counted():
    rows = [["a", "a"], ["b", "b"], ["a", None]]
    res = percent_agreement(rows)
    assert res.value == 1.0 and res.n_items == 2 and res.extra["n_items_fewer_than_2"] == 1


def test_percent_agreement_two_raters_is_share_of_agreeing_items():
    rows = [["a", "a"], ["a", "b"], ["b", "b"], ["b", "a"], ["a", "a"]]
    assert percent_agreement(rows).value == pytest.approx(3 / 5)


def test_percent_agreement_pairwise_definition_three_raters():
    # item 1: pairs (a,a),(a,b),(a,b) -> 1/3 agree; item 2: all agree -> 1
    res = percent_agreement([["a", "a", "b"], ["c", "c", "c"]])
    assert res.value == pytest.approx((1 / 3 + 1) / 2)
    assert "pairwise" in res.note
    assert unanimity_rate([["a", "a", "b"], ["c", "c", "c"]]).value == 0.5
