"""How every statistic reads an items x raters table (reports/stats/_prep.py): codes, category order, missing
markers, weights, and each input error with its exact message (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reports.stats._prep import agreement_weights, is_missing, pair_agreement, prepare, weights_basis


def test_missing_markers():
    assert [is_missing(v) for v in (None, float("nan"), np.float32("nan"), "", "  ", 0, 0.0, "0", False)] == \
        [True, True, True, True, True, False, False, False, False]


def test_codes_and_category_order():
    p = prepare([["b", "a", None], ["a", "", "c"]])
    assert p.categories == ["b", "a", "c"] and not p.declared and p.values is None  # first-appearance order
    assert p.codes.tolist() == [[0, 1, -1], [1, -1, 2]]
    assert (p.n_items, p.n_raters, p.q) == (2, 3, 3)
    assert p.counts.tolist() == [[1, 1, 0], [0, 1, 1]]
    nums = prepare([[10, 2], [2.5, None]])
    assert nums.categories == [2, 2.5, 10] and nums.values.tolist() == [2.0, 2.5, 10.0]  # numerically sorted
    assert nums.codes.tolist() == [[2, 0], [1, -1]]
    declared = prepare([["lo", "hi"]], categories=["lo", "mid", "hi"])
    assert declared.declared and declared.categories == ["lo", "mid", "hi"] and declared.codes.tolist() == [[0, 2]]
    assert declared.counts.tolist() == [[1, 0, 1]]
    assert prepare(declared) is declared  # already coded
    empty = prepare([])
    assert (empty.n_items, empty.n_raters, empty.q, empty.codes.shape) == (0, 0, 0, (0, 0))


def test_arrays_frames_and_iterators_read_alike():
    rows = [[1, 2], [2, 2], [np.nan, 1]]
    lists = prepare([[1, 2], [2, 2], [None, 1]])
    rows_as_iterators = iter([iter(r) for r in [[1, 2], [2, 2], [None, 1]]])
    for same in (prepare(np.array(rows)), prepare(pd.DataFrame(rows)), prepare(rows_as_iterators)):
        assert same.codes.tolist() == lists.codes.tolist() and same.categories == lists.categories
    text = prepare(np.array([["x", "y"], ["y", ""]], dtype=object))
    assert text.categories == ["x", "y"] and text.codes.tolist() == [[0, 1], [1, -1]]


@pytest.mark.parametrize("ratings, categories, message", [
    ([["a", "b"], ["a"]], None, "item 1 has 1 ratings but item 0 has 2; use None for a missing rating so every "
                                "item has one slot per rater"),
    (["ab", "cd"], None, "item 0: expected a sequence of ratings (one per rater), got a string"),
    (np.array([1, 2, 3]), None, "ratings must be 2-D (items x raters), got shape (3,)"),
    ([[1, "a"]], None, "ratings mix numbers and text labels (e.g. 1 and 'a'); pass categories=[...] to declare the "
                       "scale"),
    ([["a", "z"]], ["a", "b"], "rating 'z' (item 0) is not one of the declared categories ['a', 'b']"),
    ([["a"], ["b"], ["z"]], ["a", "b"], "rating 'z' (item 2) is not one of the declared categories ['a', 'b']"),
    ([["a"]], ["a", "a"], "declared categories contain 'a' twice"),
    ([["a"]], ["a", " "], "declared categories contain a blank/missing entry: ' '"),
])
def test_input_errors(ratings, categories, message):
    with pytest.raises(ValueError) as info:
        prepare(ratings, categories)
    assert str(info.value) == message


def test_recoding_refused_and_order_required():
    p = prepare([["a", "b"]], categories=["a", "b"])
    with pytest.raises(ValueError, match=r"^ratings were coded over \['a', 'b'\], not \['b', 'a'\]$"):
        prepare(p, ["b", "a"])
    assert prepare(p, ["a", "b"]) is p
    with pytest.raises(ValueError, match=r"^ordinal alpha needs ordered categories, but the ratings are text labels; "
                                         r"pass categories=\[\.\.\.\] in scale order$"):
        prepare([["a", "b"]]).require_order("ordinal alpha")
    prepare([[1, 2]]).require_order("x")  # numbers are ordered
    prepare([["a", "b"]], ["a", "b"]).require_order("x")  # declared text is ordered


def test_weights():
    assert agreement_weights(3, None).tolist() == np.eye(3).tolist()
    assert agreement_weights(2, "identity").tolist() == [[1, 0], [0, 1]]
    assert agreement_weights(2, "none").tolist() == [[1, 0], [0, 1]]
    assert agreement_weights(3, "linear").tolist() == [[1, 0.5, 0], [0.5, 1, 0.5], [0, 0.5, 1]]
    assert agreement_weights(3, "quadratic").tolist() == [[1, 0.75, 0], [0.75, 1, 0.75], [0, 0.75, 1]]
    # by value: 1, 2, 5 (span 4): linear 1 - |d|/4
    assert agreement_weights(3, "linear", np.array([1.0, 2.0, 5.0])).tolist() == [[1, 0.75, 0], [0.75, 1, 0.25],
                                                                                  [0, 0.25, 1]]
    assert agreement_weights(1, "linear").tolist() == [[1.0]]
    given = agreement_weights(2, [[1, 0.2], [0.2, 1]])
    assert given.dtype == np.float64 and given.tolist() == [[1, 0.2], [0.2, 1]]
    with pytest.raises(ValueError, match=r"^weight matrix is 2x3 but there are 2 categories$"):
        agreement_weights(2, np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"^weights must be None, 'linear', 'quadratic' or a matrix, got 'cubic'$"):
        agreement_weights(2, "cubic")
    nums, text = prepare([[1, 2]]), prepare([["a", "b"]], ["a", "b"])
    assert [weights_basis(nums, k) for k in (None, "identity", "none")] == ["", "", ""]
    assert weights_basis(nums, "linear") == "linear weights by value"
    assert weights_basis(text, "quadratic") == "quadratic weights by category position"
    assert weights_basis(text, np.eye(2)) == "weights from the user's matrix"


def test_pair_agreement_by_hand():
    counts = np.array([[2.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    share, n = pair_agreement(counts)
    # (2,1,0): 2*1 / (3*2) = 1/3; one rating and none: 0; (1,1,1): 0
    assert n.tolist() == [3, 1, 0, 3] and share.tolist() == pytest.approx([1 / 3, 0, 0, 0])
    w = agreement_weights(3, "linear")
    wshare, _ = pair_agreement(counts, w)
    # (2,1,0) weighted: k=0: 2 (2 + 0.5 - 1) = 3, k=1: 1 (1 + 1 - 1) = 1 -> 4/6; (1,1,1): each k: (sum_l w n_l - 1)
    # k=0: 1 + 0.5 + 0 - 1 = 0.5, k=1: 0.5 + 1 + 0.5 - 1 = 1, k=2: 0.5 -> 2/6
    assert wshare.tolist() == pytest.approx([4 / 6, 0, 0, 2 / 6])
