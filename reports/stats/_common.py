"""Small shared pieces: reasons for undefined results, rater counts, feature matrices."""
from __future__ import annotations

import numpy as np

from ._prep import Prepared

TOL = 1e-12  # a chance agreement within TOL of 1 makes a kappa-type ratio 0/0


def raters_used(codes: np.ndarray) -> int:
    """Number of rater columns with at least one rating."""
    if codes.size == 0:
        return 0
    return int((codes >= 0).any(axis=0).sum())


def overlap_reason(prep: Prepared, n_pairable: int) -> str | None:
    """Why no pairwise statistic can be computed, or None when at least one item is pairable."""
    if prep.n_items == 0:
        return "undefined: no items"
    if raters_used(prep.codes) < 2:
        return "undefined: only one rater gave ratings; agreement needs at least two"
    if n_pairable == 0:
        return "undefined: no item was rated by two or more raters (no overlap)"
    return None


def cats_text(prep: Prepared) -> str:
    """Short description of the category set for notes, e.g. "3 declared categories [..]"."""
    shown = prep.categories if len(prep.categories) <= 12 else prep.categories[:12] + ["..."]
    src = "declared" if prep.declared else "observed"
    return f"{prep.q} {src} categories {shown}"


def safe_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num/den with NaN where den is 0 (used inside vectorised replicate evaluations)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out
