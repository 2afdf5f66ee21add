"""Checking a StatResult field by field against hand-worked values."""
from __future__ import annotations

import pytest

from reports.stats.result import StatResult


def check(r: StatResult, metric, value, ci_low, ci_high, n_items, n_raters, note="", p_value=None, extra=None):
    """Every field of r against hand-worked values (floats to 1e-6 relative)."""
    assert (r.metric, r.ci_low, r.ci_high, r.n_items, r.n_raters, r.note, r.p_value) == (
        metric, ci_low, ci_high, n_items, n_raters, note, p_value)
    assert r.value == pytest.approx(value)
    assert r.extra == (extra or {})
