"""Shared features for the Fleiss-type coefficients (Fleiss kappa, Gwet AC1/AC2).

Per item i with n_i >= 1 ratings: [1{n_i>=2}, p_a,i * 1{n_i>=2}, 1, n_i1/n_i, ..., n_iq/n_i].
Summed over (resampled) items they give p_a (mean over items with n_i >= 2) and the category
prevalences pi_k (mean over items with n_i >= 1 of n_ik/n_i), the conventions of Gwet (2014),
Handbook of Inter-Rater Reliability, 4th ed., ch. 2 and of irrCAC's ``CAC.fleiss``/``CAC.gwet``.
"""
from __future__ import annotations

import numpy as np

from ._prep import Prepared, pair_agreement


def fleiss_features(prep: Prepared, w: np.ndarray | None):
    """(features, n_pairable, n_single) for the items with at least one rating."""
    counts = prep.counts
    n_i = counts.sum(axis=1)
    keep = n_i >= 1
    counts, n_i = counts[keep], n_i[keep]
    share, _ = pair_agreement(counts, w)
    has2 = (n_i >= 2).astype(np.float64)
    props = counts / n_i[:, None] if counts.size else counts
    feats = np.column_stack([has2, share * has2, np.ones(len(n_i)), props])
    return feats, int(has2.sum()), int(len(n_i) - has2.sum())


def split_sums(s: np.ndarray):
    """From B x (3+q) feature sums: p_a (B,), pi (B x q)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        pa = s[:, 1] / s[:, 0]
        pi = s[:, 3:] / s[:, 2:3]
    return pa, pi
