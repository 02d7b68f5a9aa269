"""Private noisy averaging of clusters (Nissim, Stemmer & Vadhan 2016 in the form of
Chaturvedi, Nguyen & Xu 2021, Algorithm 1): the exact integer cluster statistics
(:func:`cluster_sums`), the calibration of their Gaussian (:func:`gaussian_sigma`) and the
noisy centres (:func:`noisy_centres`, :func:`noisy_centres_planned`); one private Lloyd round
is :func:`cluster_sums` at the nearest centres followed by :func:`noisy_centres`.

Belongs here: the release of cluster centres from counts and sums, and its accounting
events. Not here: the assignment of rows to centres (:mod:`privlearn.cluster._assignment`).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import optimize

from privlearn.accounting import Composed, GaussianEvent, LaplaceEvent, PrivacyLedger
from privlearn.cluster._ball import project_ball
from privlearn.cluster._seeds import SeedSource
from privlearn.fixed_point import fixed_point_exponent, fixed_point_parts, fixed_point_value
from privlearn.mechanisms import discrete_laplace, gaussian
from privlearn.mechanisms.gaussian import analytic_gaussian_epsilon, gaussian_privacy

__all__ = [
    "analytic_mu",
    "average_events",
    "cluster_sums",
    "gaussian_sigma",
    "noisy_centres",
    "noisy_centres_planned",
]


def analytic_mu(epsilon: float, delta: float, rtol: float) -> float:
    """The ``mu`` at which ``mu``-GDP is exactly ``(epsilon, delta)``-DP (the analytic Gaussian
    conversion, Balle & Wang 2018, Theorem 8), by Brent's method to ``rtol`` relative (not
    rounded in either direction: callers round as their guarantee needs)."""

    def excess(mu: float) -> float:
        return analytic_gaussian_epsilon(mu, delta) - epsilon

    hi = 1.0
    while excess(hi) < 0.0:
        hi *= 2.0
    return float(optimize.brentq(excess, 1e-12, hi, xtol=1e-15, rtol=rtol))


@functools.lru_cache(maxsize=1024, typed=True)
def gaussian_sigma(sensitivity: float, epsilon: float, delta: float, size: int) -> float:
    """Smallest ``sigma`` (up to 1e-9 relative) such that :func:`privlearn.mechanisms.gaussian`
    with this sensitivity, ``size`` entries and the default lattice is ``(epsilon, delta)``-DP
    (analytic Gaussian, Balle & Wang 2018).

    A function of public inputs only: the last 1,024 answers are kept, so the refits of one
    schedule (an audit's hundreds of fits) calibrate each Gaussian step once (issue 32 item 4).

    Raises
    ------
    ValueError
        When no ``sigma`` reaches ``(epsilon, delta)``: the default lattice adds up to
        ``2**-12`` to ``mu = Delta / sigma``, so a target ``mu`` below that cannot be met.
        :class:`~privlearn.cluster.DPKMeans` calls it before any budget is spent.
    """

    mu = analytic_mu(epsilon, delta, rtol=1e-12)
    sigma = sensitivity / mu
    for _ in range(60):  # account for the lattice step's inflation of the sensitivity
        eff = gaussian_privacy(sensitivity, sigma, size=size).effective_sensitivity
        if gaussian_privacy(sensitivity, sigma, size=size).epsilon(delta) <= epsilon:
            return sigma
        sigma = eff / mu * (1.0 + 1e-9)
    raise ValueError(
        f"epsilon={epsilon:.6g} is too small for delta={delta:.6g} in this Gaussian step "
        f"({size} released coordinates): it needs mu = Delta / sigma = {mu:.3g}, too small next "
        "to the share of mu the Gaussian's lattice takes itself (up to 2**-12, "
        "privlearn.mechanisms.gaussian); raise epsilon or delta, or spread the budget over "
        "fewer steps"
    )


#: Rows whose fixed-point parts :func:`cluster_sums` holds at once (two int64 copies of a
#: block, not of ``X``: the extra memory of a fit stays a fraction of ``X``).
_SUM_BLOCK = 8192


def cluster_sums(
    X: np.ndarray, labels: np.ndarray, n_clusters: int, radius: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact per-cluster statistics ``(counts, hi, lo)`` (int64): the row counts and the
    fixed-point parts (:func:`fixed_point_parts`, scale from the public ``radius``) of the
    coordinate sums. Integer sums are exact, so partial results of any partition of the rows
    add up to the same integers (the Dask fit adds them on the driver)."""
    exp = fixed_point_exponent(radius)
    counts = np.bincount(labels, minlength=n_clusters).astype(np.int64)
    hi_sum = np.zeros((n_clusters, X.shape[1]), dtype=np.int64)
    lo_sum = np.zeros((n_clusters, X.shape[1]), dtype=np.int64)
    for start in range(0, X.shape[0], _SUM_BLOCK):  # the parts of one block at a time
        hi, lo = fixed_point_parts(X[start : start + _SUM_BLOCK], exp)
        np.add.at(hi_sum, labels[start : start + _SUM_BLOCK], hi)
        np.add.at(lo_sum, labels[start : start + _SUM_BLOCK], lo)
    return counts, hi_sum, lo_sum


def noisy_centres(
    stats: tuple[np.ndarray, np.ndarray, np.ndarray],
    radius: float,
    epsilon: float,
    delta: float,
    seeds: SeedSource,
    ledger: PrivacyLedger | None,
    label: str,
) -> np.ndarray:
    """Private centres from the exact statistics ``(counts, hi, lo)`` of :func:`cluster_sums`.

    Per cluster: the count with exact discrete Laplace noise of scale ``2/epsilon``
    (``epsilon/2``-DP, sensitivity 1 under add/remove) and the coordinate sum with Gaussian
    noise calibrated to ``(epsilon/2, delta)`` (L2 sensitivity ``radius``; the fixed-point
    truncation is towards zero, so no row's norm grows); the centre is
    ``noisy_sum / max(noisy_count, 1)`` projected onto the ball. This is the noisy averaging of
    Nissim, Stemmer & Vadhan (2016) in the form of Chaturvedi et al. (2021), Algorithm 1: a
    Laplace-noised count and a Gaussian-noised sum. Clusters are disjoint, so by parallel
    composition (McSherry 2009; Theorem 2.5) the whole release is ``(epsilon, delta)``-DP,
    charged once to ``ledger``. ``epsilon = inf``: exact means (empty clusters: the origin).
    """
    counts, hi, lo = stats
    if math.isinf(epsilon):
        n_clusters, d = hi.shape
        sums = fixed_point_value(hi, lo, fixed_point_exponent(radius))
        centers = np.zeros((n_clusters, d))
        nz = counts > 0
        centers[nz] = sums[nz] / counts[nz, None]
        return centers
    if ledger is not None:
        ledger.spend(epsilon, delta, label=label)
    sigma = gaussian_sigma(radius, epsilon / 2.0, delta, hi.shape[1])
    return noisy_centres_planned(stats, radius, 2.0 / epsilon, sigma, seeds)


def average_events(epsilon: float, delta: float, radius: float, d: int) -> Composed:
    """The accounting events of :func:`noisy_centres` at ``(epsilon, delta)``: discrete Laplace
    counts (scale ``2/epsilon``) and Gaussian sums (``sigma / radius`` per unit sensitivity)."""
    sigma = gaussian_sigma(radius, epsilon / 2.0, delta, d)
    return Composed((LaplaceEvent(2.0 / epsilon), GaussianEvent(sigma / radius)))


def noisy_centres_planned(
    stats: tuple[np.ndarray, np.ndarray, np.ndarray],
    radius: float,
    count_scale: float,
    sigma: float,
    seeds: SeedSource,
) -> np.ndarray:
    """Private centres from the exact statistics of :func:`cluster_sums` with the noise given
    (calibrated by the caller's accountant, e.g. :func:`privlearn.cluster.maxcover.
    plan_maxcover`): per cluster the count plus exact discrete Laplace noise of scale
    ``count_scale`` (``1 / count_scale``-DP) and the sum plus lattice Gaussian noise ``sigma``
    (:func:`privlearn.mechanisms.gaussian`, sensitivity ``radius``: ``mu``-GDP with the
    lattice's ``mu``), the centre ``noisy_sum / max(noisy_count, 1)`` projected onto the ball.
    :func:`noisy_centres` calibrates its own noise, charges a ledger and calls this one;
    nothing is charged here. Clusters
    are disjoint: one row changes one count and one sum (parallel composition)."""
    counts, hi, lo = stats
    n_clusters, d = hi.shape
    sums = fixed_point_value(hi, lo, fixed_point_exponent(radius))
    noisy_counts = np.asarray(discrete_laplace(counts, count_scale, seeds()), dtype=np.float64)
    centers = np.empty((n_clusters, d))
    for j in range(n_clusters):
        noisy_sum = np.asarray(gaussian(sums[j], radius, sigma, seeds()), dtype=np.float64)
        centers[j] = noisy_sum / max(noisy_counts[j], 1.0)
    return project_ball(centers, radius)
