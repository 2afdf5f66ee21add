"""Agreement statistics for prefval reports.

Every statistic returns a :class:`StatResult` (value None plus a reason when undefined, optional
95% percentile bootstrap interval over items). Inputs follow one convention: ``ratings`` is items x
raters with None/NaN/"" for missing; ``categories`` optionally declares the ordered scale.
Only numpy is imported here; scipy, the ``krippendorff`` package and friends load on first use.
"""
from .alpha import krippendorff_alpha
from .correlation import kendall, pearson, spearman
from .fleiss import fleiss_kappa
from .gwet import gwet_ac1, gwet_ac2
from .kappa import cohen_kappa
from .pairwise import percent_agreement, unanimity_rate
from .rates import (TIE_RULES, aar_minus_mr, accuracy_vs_chance, appropriate_application_rate,
                    at_least_one_correct, majority_vote, majority_vote_first_non_discard, misapplication_rate,
                    strict_majority, win_loss_tie)
from .result import StatResult

__all__ = [
    "StatResult", "percent_agreement", "unanimity_rate", "cohen_kappa", "fleiss_kappa",
    "krippendorff_alpha", "gwet_ac1", "gwet_ac2", "pearson", "spearman", "kendall",
    "majority_vote", "majority_vote_first_non_discard", "TIE_RULES", "strict_majority", "at_least_one_correct", "accuracy_vs_chance",
    "win_loss_tie", "misapplication_rate", "appropriate_application_rate", "aar_minus_mr",
    "AGREEMENT_METRICS", "compute_agreement",
]

AGREEMENT_METRICS = (
    "percent_agreement", "cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic",
    "fleiss_kappa", "krippendorff_alpha", "gwet_ac1", "gwet_ac2_linear", "gwet_ac2_quadratic",
    "unanimity_rate",
)


def compute_agreement(metric: str, ratings, *, categories=None, level: str = "nominal",
                      ci: bool = False, n_boot: int = 1000, seed: int = 0) -> StatResult:
    """Dispatch by metric name (one of AGREEMENT_METRICS), as used by ``prefval stats agreement``.

    ratings: items x raters, None for missing. ``level`` only applies to krippendorff_alpha.
    Raises ValueError for an unknown metric name (and whatever the chosen statistic raises).
    """
    kw = dict(ci=ci, n_boot=n_boot, seed=seed)
    if metric == "percent_agreement":
        return percent_agreement(ratings, **kw)
    if metric == "unanimity_rate":
        return unanimity_rate(ratings, **kw)
    if metric.startswith("cohen_kappa"):
        w = {"cohen_kappa": None, "cohen_kappa_linear": "linear",
             "cohen_kappa_quadratic": "quadratic"}.get(metric, "?")
        if w != "?":
            return cohen_kappa(ratings, weights=w, categories=categories, **kw)
    if metric == "fleiss_kappa":
        return fleiss_kappa(ratings, categories=categories, **kw)
    if metric == "krippendorff_alpha":
        return krippendorff_alpha(ratings, level=level, categories=categories, **kw)
    if metric == "gwet_ac1":
        return gwet_ac1(ratings, categories=categories, **kw)
    if metric in ("gwet_ac2_linear", "gwet_ac2_quadratic"):
        return gwet_ac2(ratings, weights=metric.rsplit("_", 1)[1], categories=categories, **kw)
    raise ValueError(f"unknown metric {metric!r}; choose one of {', '.join(AGREEMENT_METRICS)}")
