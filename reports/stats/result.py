"""The one result type every agreement / rate statistic in ``reports.stats`` returns."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["StatResult", "clean_float"]


def clean_float(x: Any) -> float | None:
    """Return ``x`` as a plain float, or None when it is None, NaN or infinite."""
    if x is None:
        return None
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        return None
    return x


@dataclass(frozen=True)
class StatResult:
    """One statistic with its bootstrap interval and the conditions it was computed under.

    Fields: ``metric`` (name), ``value`` (None when undefined — then ``note`` gives the reason),
    ``ci_low``/``ci_high`` (95% percentile bootstrap over items, None when not asked for or not
    computable), ``n_items``/``n_raters`` (what the statistic actually used), ``note`` (the
    definition applied, dropped data, dropped bootstrap replicates, or why the value is undefined),
    ``p_value`` (only for tests/correlations) and ``extra`` (counts and side figures).

    Floats are normalised on construction: NaN and infinities become None, numpy scalars
    become Python floats, so a result never carries NaN.
    """

    metric: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n_items: int
    n_raters: int
    note: str = ""
    p_value: float | None = None
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("value", "ci_low", "ci_high", "p_value"):
            object.__setattr__(self, name, clean_float(getattr(self, name)))
        object.__setattr__(self, "n_items", int(self.n_items))
        object.__setattr__(self, "n_raters", int(self.n_raters))

    @property
    def defined(self) -> bool:
        """True when ``value`` is not None."""
        return self.value is not None

    def to_json_dict(self) -> dict:
        """The JSON shape used by ``prefval stats``: the seven core keys, plus ``p_value`` if set."""
        out = {
            "metric": self.metric,
            "value": self.value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "n_items": self.n_items,
            "n_raters": self.n_raters,
            "note": self.note,
        }
        if self.p_value is not None:
            out["p_value"] = self.p_value
        return out
