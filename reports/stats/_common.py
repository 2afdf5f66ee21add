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


#: chance-corrected coefficients (Fleiss' and Cohen's kappa, Gwet's AC1/AC2, Krippendorff's alpha) estimate chance
#: agreement from the items' own category shares: from a single item that estimate is the item itself (one item rated
#: a/b gives Fleiss' kappa -1 exactly, whatever the raters do elsewhere), so they need at least this many items
MIN_ITEMS_CHANCE = 2


def overlap_reason(prep: Prepared, n_pairable: int, min_items: int = 1, what: str = "items") -> str | None:
    """Why no pairwise statistic can be computed, or None when at least `min_items` items (units) are pairable:
    "undefined: no items", "... only one rater ...", "... no overlap", or, for chance-corrected coefficients
    (min_items=MIN_ITEMS_CHANCE), "undefined: too few items (1 rated by two or more raters; ...)"."""
    if prep.n_items == 0:
        return f"undefined: no {what}"
    if raters_used(prep.codes) < 2:
        return "undefined: only one rater gave ratings; agreement needs at least two"
    if n_pairable == 0:
        return f"undefined: no {what[:-1]} was rated by two or more raters (no overlap)"
    if n_pairable < min_items:
        return (f"undefined: too few {what} ({n_pairable} rated by two or more raters; chance agreement is "
                f"estimated from the {what} themselves and needs at least {min_items})")
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
