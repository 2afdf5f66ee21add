"""Turning an items x raters table of labels into integer codes and per-item category counts.

Shared by every agreement statistic so that all of them read ratings the same way:

* ``ratings`` is a sequence of items, each a sequence of the raters' ratings (items x raters);
  ``None``, float NaN and the empty (or blank) string mean "missing". A 2-D numpy array or any
  object with ``to_numpy()`` (e.g. a DataFrame) is accepted as well.
* ``categories`` (optional) declares the scale in order; it fixes the category order (and so the
  weights of weighted/ordinal statistics), keeps unused categories in the computation, and any
  rating outside it raises ``ValueError`` naming the value.
* Without ``categories``: numbers are sorted numerically, text labels keep the order in which they
  first appear (fine for nominal statistics; ordered statistics then raise ``ValueError``).
"""
from __future__ import annotations

import math
from itertools import chain
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Prepared", "prepare", "is_missing", "agreement_weights", "weights_basis", "pair_agreement"]


def is_missing(x) -> bool:
    """True for None, NaN (float or numpy) and blank strings."""
    if x is None:
        return True
    if isinstance(x, str):
        return x.strip() == ""
    if isinstance(x, (float, np.floating)):
        return math.isnan(x)
    return False


def _is_number(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating, np.bool_))


def _plain(x):
    """numpy scalars -> Python scalars so labels print and compare plainly."""
    return x.item() if isinstance(x, np.generic) else x


@dataclass
class Prepared:
    """Coded ratings: ``codes`` (items x raters, int64, -1 = missing) and the ordered ``categories``.

    ``values`` holds the categories as floats when they are all numbers (else None); ``declared``
    tells whether the scale came from the caller. ``counts`` is the items x categories matrix of how
    many raters put each item in each category (built lazily).
    """

    codes: np.ndarray
    categories: list
    values: np.ndarray | None
    declared: bool
    _counts: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_items(self) -> int:
        return int(self.codes.shape[0])

    @property
    def n_raters(self) -> int:
        return int(self.codes.shape[1]) if self.codes.ndim == 2 else 0

    @property
    def q(self) -> int:
        return len(self.categories)

    @property
    def counts(self) -> np.ndarray:
        if self._counts is None:
            n, q = self.n_items, max(self.q, 1)
            rows = np.broadcast_to(np.arange(n)[:, None], self.codes.shape)
            ok = self.codes >= 0
            flat = rows[ok] * q + self.codes[ok]
            self._counts = np.bincount(flat, minlength=n * q).reshape(n, q).astype(np.float64)
        return self._counts

    @classmethod
    def from_codes(cls, codes, categories) -> "Prepared":
        """A table already coded: ``codes`` items x raters of integers, -1 for a missing rating, k >= 0 for
        ``categories[k]`` (the declared scale, in order). What callers with answers in columns (e.g. `prefval
        status` on 100k items) pass instead of an items x raters table of labels: every statistic gives the same
        result as from the labels ``[[categories[k] if k >= 0 else None for k in row] for row in codes]`` with
        ``categories`` declared. Raises ValueError for a code outside -1..len(categories)-1, a table that is not
        2-D, or duplicate or blank categories."""
        codes = np.asarray(codes)
        if codes.ndim != 2:
            raise ValueError(f"codes must be 2-D (items x raters), got shape {codes.shape}")
        if codes.size and not np.issubdtype(codes.dtype, np.integer):
            raise ValueError(f"codes must be integers, got {codes.dtype}")
        cats = [_plain(c) for c in categories]
        seen = set()
        for c in cats:
            if is_missing(c):
                raise ValueError(f"declared categories contain a blank/missing entry: {c!r}")
            if c in seen:
                raise ValueError(f"declared categories contain {c!r} twice")
            seen.add(c)
        codes = codes.astype(np.int64)
        if codes.size and (codes.min() < -1 or codes.max() >= len(cats)):
            bad = int(codes[(codes < -1) | (codes >= len(cats))][0])
            raise ValueError(f"code {bad} is outside -1..{len(cats) - 1} ({len(cats)} categories)")
        values = None
        if cats and all(_is_number(c) for c in cats):
            values = np.array([float(c) for c in cats], dtype=np.float64)
        return cls(codes=codes, categories=cats, values=values, declared=True)

    def require_order(self, what: str) -> None:
        """Raise ValueError when ``what`` needs an ordered scale but the labels are undeclared text."""
        if self.values is None and not self.declared:
            raise ValueError(
                f"{what} needs ordered categories, but the ratings are text labels; "
                "pass categories=[...] in scale order"
            )


def _to_rows(ratings):
    if hasattr(ratings, "to_numpy") and not isinstance(ratings, np.ndarray):
        ratings = ratings.to_numpy()
    if isinstance(ratings, np.ndarray):
        if ratings.ndim != 2:
            raise ValueError(f"ratings must be 2-D (items x raters), got shape {ratings.shape}")
        return ratings
    rows = ratings if isinstance(ratings, list) else list(ratings)
    for i, r in enumerate(rows):
        if isinstance(r, (str, bytes)):
            raise ValueError(f"item {i}: expected a sequence of ratings (one per rater), got a string")
    if rows:
        try:
            lengths = set(map(len, rows))
        except TypeError:  # rows given as iterators
            rows = [list(r) for r in rows]
            lengths = set(map(len, rows))
        width = len(rows[0])
        if len(lengths) > 1:
            i = next(i for i, r in enumerate(rows) if len(r) != width)
            raise ValueError(
                f"item {i} has {len(rows[i])} ratings but item 0 has {width}; "
                "use None for a missing rating so every item has one slot per rater"
            )
    return rows


def prepare(ratings, categories=None) -> Prepared:
    """Code an items x raters table; see the module docstring for the conventions.

    ``ratings`` may also be a Prepared table (returned as it is, e.g. coded once by the CLI).

    Raises ValueError for ragged rows, duplicate or blank declared categories, a rating outside the
    declared categories (naming the value and its item), or a mix of numbers and text labels
    without declared categories.
    """
    if isinstance(ratings, Prepared):
        if categories is not None and list(categories) != list(ratings.categories):
            raise ValueError(f"ratings were coded over {ratings.categories!r}, not {list(categories)!r}")
        return ratings
    rows = _to_rows(ratings)
    if isinstance(rows, np.ndarray):
        n, r = rows.shape
        if rows.dtype.kind in "fiub":
            arr = rows.astype(np.float64) if rows.dtype.kind == "f" else rows
            uniq, inv = np.unique(arr, return_inverse=True)  # NaNs sort last
            uniq_labels = [_plain(u) for u in uniq]
            inv = inv.reshape(-1)
        else:
            flat = rows.reshape(-1).tolist()
            lut_keys = list(dict.fromkeys(flat))
            pos = {k: i for i, k in enumerate(lut_keys)}
            inv = np.fromiter(map(pos.__getitem__, flat), dtype=np.int64, count=len(flat))
            uniq_labels = lut_keys
    else:
        n = len(rows)
        r = len(rows[0]) if n else 0
        flat = list(chain.from_iterable(rows))
        lut_keys = list(dict.fromkeys(flat))  # first-appearance order; NaN objects kept by identity
        pos = {}
        for i, k in enumerate(lut_keys):
            pos.setdefault(k, i)
        inv = np.fromiter(map(pos.__getitem__, flat), dtype=np.int64, count=len(flat))
        uniq_labels = lut_keys

    # map each distinct label to a category code
    missing = np.array([is_missing(u) for u in uniq_labels], dtype=bool)
    present = [_plain(u) for u, m in zip(uniq_labels, missing) if not m]
    code_of_uniq = np.full(len(uniq_labels), -1, dtype=np.int64)

    if categories is not None:
        cats = [_plain(c) for c in categories]
        index: dict = {}
        for c in cats:
            if is_missing(c):
                raise ValueError(f"declared categories contain a blank/missing entry: {c!r}")
            if c in index:
                raise ValueError(f"declared categories contain {c!r} twice")
            index[c] = len(index)
        for j, u in enumerate(uniq_labels):
            if missing[j]:
                continue
            u = _plain(u)
            if u not in index:
                where = int(np.flatnonzero(inv == j)[0]) // max(r, 1)
                raise ValueError(
                    f"rating {u!r} (item {where}) is not one of the declared categories {cats!r}"
                )
            code_of_uniq[j] = index[u]
        declared = True
    else:
        nums = [_is_number(u) for u in present]
        if present and not all(nums):
            if any(nums):
                a = next(u for u, k in zip(present, nums) if k)
                b = next(u for u, k in zip(present, nums) if not k)
                raise ValueError(
                    f"ratings mix numbers and text labels (e.g. {a!r} and {b!r}); "
                    "pass categories=[...] to declare the scale"
                )
        if present and all(nums):
            cats = sorted(set(present))
        else:
            cats = list(dict.fromkeys(present))
        index = {c: i for i, c in enumerate(cats)}
        for j, u in enumerate(uniq_labels):
            if not missing[j]:
                code_of_uniq[j] = index[_plain(u)]
        declared = False

    codes = code_of_uniq[inv].reshape(n, r) if n and r else np.zeros((n, r), dtype=np.int64)
    values = None
    if cats and all(_is_number(c) for c in cats):
        values = np.array([float(c) for c in cats], dtype=np.float64)
    return Prepared(codes=codes, categories=cats, values=values, declared=declared)


def agreement_weights(q: int, kind, values: np.ndarray | None = None) -> np.ndarray:
    """q x q agreement weights (Cohen 1968; Gwet 2014, Handbook 4th ed., ch. 3; irrCAC).

    ``kind``: None/"identity" (1 on the diagonal, 0 elsewhere), "linear"
    (1 - |x_k - x_l| / (x_max - x_min)), "quadratic" (1 - (x_k - x_l)^2 / (x_max - x_min)^2), or a
    q x q array of agreement weights given by the user (returned as float). ``values``: the numeric
    values of numeric labels; then x are those values (Gwet's definition, as irrCAC), otherwise x
    are the category positions 0..q-1 (ordered text labels). Raises ValueError for another kind or
    an array of the wrong shape.
    """
    if isinstance(kind, np.ndarray) or isinstance(kind, (list, tuple)):
        w = np.asarray(kind, dtype=np.float64)
        if w.shape != (q, q):
            raise ValueError(f"weight matrix is {w.shape[0]}x{w.shape[-1]} but there are {q} categories")
        return w
    if kind in (None, "identity", "none"):
        return np.eye(q)
    if kind not in ("linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear', 'quadratic' or a matrix, got {kind!r}")
    if q < 2:
        return np.ones((q, q))
    x = np.asarray(values, dtype=np.float64) if values is not None else np.arange(q, dtype=np.float64)
    span = float(x.max() - x.min())
    d = np.abs(x[:, None] - x[None, :]) / span
    return 1 - d if kind == "linear" else 1 - d**2


def weights_basis(prep: "Prepared", kind) -> str:
    """How the weights of ``kind`` were set, for notes: "by value", "by category position", "given"."""
    if kind is None or isinstance(kind, str) and kind in ("identity", "none"):
        return ""
    if not isinstance(kind, str):
        return "weights from the user's matrix"
    return (f"{kind} weights by value" if prep.values is not None
            else f"{kind} weights by category position")


def pair_agreement(counts: np.ndarray, w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per item: the (weighted) share of agreeing ordered rater pairs, and the number of ratings.

    ``counts`` is items x categories. With weights W the share is
    sum_k n_ik (sum_l w_kl n_il - 1) / (n_i (n_i - 1)) (the observed agreement p_a of Gwet 2014, Handbook 4th ed., ch. 2-3); items with
    fewer than 2 ratings get share 0 (callers mask them with ``n_i >= 2``).
    """
    n_i = counts.sum(axis=1)
    star = counts if w is None else counts @ w.T
    num = (counts * (star - 1)).sum(axis=1)
    den = n_i * (n_i - 1)
    share = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
    return share, n_i
