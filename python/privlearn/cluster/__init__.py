"""Differentially private k-means clustering.

- :class:`DPKMeans` with ``method="lsh"`` (the default) -- a private LSH prefix-tree coreset
  (:mod:`~privlearn.cluster.lsh_coreset`, after Chang, Ghazi, Kumar & Manurangsi 2021) on a
  private scale (:mod:`~privlearn.cluster.private_scale`), one Gaussian-DP release.
- :class:`DPKMeans` -- Chaturvedi, Nguyen & Xu (2021), grid max cover with an efficient
  exponential mechanism, proxy data set and noisy averaging (``method="maxcover"``), or the
  Balcan et al. (2017) baseline (``method="balcan"``).
- :mod:`~privlearn.cluster.maxcover` -- the private greedy max cover and its accounting
  (Gupta et al. 2010; the Renyi-DP plan of a whole fit, :func:`plan_maxcover`).

Under add/remove-one neighbours the number of rows is private: ``DPKMeans`` plans its schedule
from a declared public size (``n_samples=``) or a noisy count, states both in ``privacy_``
(:class:`KMeansPrivacyStatement`) and keeps training labels and cost only as opt-in,
non-private :class:`KMeansDiagnostics`.
"""

from __future__ import annotations

from privlearn.cluster._statement import KMeansDiagnostics, KMeansPrivacyStatement
from privlearn.cluster.balcan import default_levels
from privlearn.cluster.estimator import (
    DEFAULT_SPLIT,
    MAX_CLUSTERS,
    MAX_GRID_FACTOR,
    PAPER_SPLIT,
    DPKMeans,
    proxy_counts,
    proxy_threshold,
)
from privlearn.cluster.lsh_coreset import LSH_SPLIT, LSHSchedule, gdp_mu
from privlearn.cluster.maxcover import (
    MaxCoverPlan,
    MaxCoverResult,
    bounded_range_rho,
    default_picks,
    default_radii,
    greedy_cover_epsilon,
    maxcover_candidates,
    maxcover_pick_epsilon,
    maxcover_privacy,
    plan_maxcover,
)
from privlearn.cluster.private_scale import PrivateScale

__all__ = [
    "DEFAULT_SPLIT",
    "DPKMeans",
    "KMeansDiagnostics",
    "KMeansPrivacyStatement",
    "LSHSchedule",
    "LSH_SPLIT",
    "MAX_CLUSTERS",
    "MAX_GRID_FACTOR",
    "PAPER_SPLIT",
    "MaxCoverPlan",
    "MaxCoverResult",
    "PrivateScale",
    "bounded_range_rho",
    "default_levels",
    "default_picks",
    "default_radii",
    "gdp_mu",
    "greedy_cover_epsilon",
    "maxcover_candidates",
    "maxcover_pick_epsilon",
    "maxcover_privacy",
    "plan_maxcover",
    "proxy_counts",
    "proxy_threshold",
]
