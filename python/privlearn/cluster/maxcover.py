"""Private candidate centres by greedy max cover on grids (Chaturvedi, Nguyen & Xu 2021,
Algorithm 3 and Claims 4.1-4.2) and the privacy accounting of the adaptive greedy sequence
(Gupta, Ligett, McSherry, Roth & Talwar 2010, Theorem 6.1, unweighted set cover)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from privlearn._checks import as_index, as_positive

__all__ = [
    "MaxCoverResult",
    "count_offsets",
    "default_picks",
    "default_radii",
    "greedy_cover_epsilon",
    "maxcover_candidates",
    "maxcover_pick_epsilon",
    "maxcover_privacy",
]

_MAX_OFFSETS = 50_000_000


@dataclass(frozen=True)
class MaxCoverResult:
    """Output of :func:`maxcover_candidates`.

    Attributes
    ----------
    centers : numpy.ndarray, shape (n_radii * picks, p)
        The picked grid points, radius by radius, in pick order (the private output).
    level : numpy.ndarray of int64
        Radius index of each pick.
    covered : numpy.ndarray of int64
        Points newly covered by each pick. **Not private** (a function of the data): for
        tests and diagnostics only, never released by the estimators.
    remainder : numpy.ndarray of uint8
        1 where the pick came from the uniform part of the mixture (Claim 4.2).
    n_grid : numpy.ndarray of int64
        Grid points with non-zero cover, per radius (not private; diagnostics).
    n_offsets : numpy.ndarray of int64
        Size of the offset set (Claim 4.1) per radius (data-independent).
    """

    centers: np.ndarray
    level: np.ndarray
    covered: np.ndarray
    remainder: np.ndarray
    n_grid: np.ndarray
    n_offsets: np.ndarray


def count_offsets(p: int, rho: float, limit: int = _MAX_OFFSETS) -> int:
    """Size of the offset set of Claim 4.1, ``{z in Z^p : sum_j dist(z_j, [0, 1])**2 <=
    rho**2}`` (the grid points within ``rho`` grid units of a cell), counted without listing
    it; the count stops at the first value above ``limit`` (which it then returns).

    The core's ``grid_offsets(p, rho, max_offsets)`` lists the same set (and fails above
    ``max_offsets``); this count is cheap and needs no data, so an estimator can refuse a
    grid that is too fine before it spends any budget. Per coordinate ``dist(z, [0, 1])**2``
    takes each value ``k**2``, ``k = 0, 1, ...``, for two integers ``z``; the sums are integers,
    so ``sum <= rho**2`` iff ``sum <= floor(rho**2)``.
    """
    p = as_index(p, "p", lower=1, upper=64)
    rho = float(rho)
    if not (math.isfinite(rho) and rho > 0.0):
        raise ValueError(f"rho must be a finite number > 0, got {rho}")
    limit = as_index(limit, "limit", lower=1, upper=1 << 62)
    cache: dict[tuple[int, int], int] = {}

    def count(dim: int, budget: int) -> int:
        if dim == 1:
            return 2 * (math.isqrt(budget) + 1)
        key = (dim, budget)
        if key in cache:
            return cache[key]
        total = 0
        for k in range(math.isqrt(budget) + 1):
            total += 2 * count(dim - 1, budget - k * k)
            if total > limit:
                break
        cache[key] = total
        return total

    return min(count(p, math.floor(rho * rho)), limit + 1)


def greedy_cover_epsilon(eps_pick: float, delta: float) -> float:
    """``epsilon`` of one private greedy (max / set) cover run whose picks use weights
    ``exp(eps_pick * cover)``, at failure probability ``delta``.

    Gupta, Ligett, McSherry, Roth & Talwar (2010), "Differentially private combinatorial
    optimization", Theorem 6.1 (unweighted set cover): the whole adaptive sequence of picks is
    ``(epsilon, delta)``-DP with ``eps_pick = epsilon / (2 ln(e / delta))``, i.e.
    ``epsilon = 2 eps_pick ln(e / delta)``, for ``delta <= 1/2``, whatever the number of picks
    (Chaturvedi et al. 2021, Lemma 6.2, adapt the same argument). Neighbours: add/remove one.
    """
    eps_pick = as_positive(eps_pick, "eps_pick")
    delta = as_positive(delta, "delta")
    if not delta <= 0.5:
        raise ValueError(f"delta must lie in (0, 1/2] for the greedy cover bound, got {delta}")
    return 2.0 * eps_pick * (1.0 + math.log(1.0 / delta))


def maxcover_privacy(eps_pick: float, delta: float, n_radii: int) -> tuple[float, float]:
    """``(epsilon, delta)`` of ``n_radii`` independent greedy cover runs (one per radius), each
    :func:`greedy_cover_epsilon` at ``delta / n_radii``, composed by basic composition
    (Dwork & Roth 2014, Theorem 3.16)."""
    n_radii = as_index(n_radii, "n_radii", lower=1, upper=1 << 20)
    delta = as_positive(delta, "delta")
    return n_radii * greedy_cover_epsilon(eps_pick, delta / n_radii), delta


def maxcover_pick_epsilon(epsilon: float, delta: float, n_radii: int) -> float:
    """Per-pick ``eps_pick`` so that :func:`maxcover_privacy` spends exactly ``(epsilon,
    delta)``: ``eps_pick = (epsilon / L) / (2 ln(e L / delta))`` with ``L = n_radii``."""
    epsilon = as_positive(epsilon, "epsilon")
    delta = as_positive(delta, "delta")
    n_radii = as_index(n_radii, "n_radii", lower=1, upper=1 << 20)
    d = delta / n_radii
    if not d <= 0.5:
        raise ValueError(f"delta / n_radii must be <= 1/2, got {d}")
    return (epsilon / n_radii) / (2.0 * (1.0 + math.log(1.0 / d)))


def default_radii(n: int, *, growth: float = 2.0, n_radii: int | None = None) -> list[float]:
    """Threshold radii ``1, 1/growth, 1/growth**2, ...`` (``n_radii`` of them, in the unit ball).

    The paper (Section 4, "threshold radii") lets ``r_i`` grow geometrically (factor
    ``1 + alpha``) from about ``1/n`` to the diameter, i.e. ``L = O(log n)`` radii. Every radius
    is one greedy run and the runs compose, so the per-pick parameter shrinks like
    ``1/(L log(L/delta))``; below the typical spacing of the points the covers are so small that
    the picks are essentially uniform over the (huge) grid and only dilute the budget. The
    default therefore keeps ``L = ceil(log2(n) / 4) + 1`` radii, down to ``2**-(L-1)``: 5 radii
    for ``n = 50,000``, 6 for ``n = 10**6``. Growth 2 (``alpha = 1``).

    Parameters
    ----------
    n : int
        The planning size. Under add/remove-one neighbours the exact number of rows is private
        and ``L`` shapes the release, so pass a declared public size or a noisy count
        (:func:`privlearn.accounting.resolve_size`), as :class:`~privlearn.cluster.DPKMeans`
        does; the exact ``n`` makes the number of radii (and so the number of candidates) a
        deterministic function of the private size.
    growth : float, default=2.0
        Ratio of consecutive radii (``> 1``).
    n_radii : int, optional
        Overrides ``L``.
    """
    n = as_index(n, "n", lower=1, upper=1 << 40)
    growth = as_positive(growth, "growth")
    if not growth > 1.0:
        raise ValueError(f"growth must be > 1, got {growth}")
    if n_radii is None:
        n_radii = math.ceil(math.log2(max(n, 2)) / 4.0) + 1
    n_radii = as_index(n_radii, "n_radii", lower=1, upper=64)
    return [growth ** (-i) for i in range(n_radii)]


def default_picks(n_clusters: int, n: int) -> int:
    """Picks per radius: the bicriteria ``O(k log n)`` of Lemma 2.7 / Lemma 5.1, taken as
    ``k * ceil(log2(n) / 2)`` (at least ``k``).

    ``n`` is the planning size: a declared public size or a noisy count, never the exact
    private number of rows (see :func:`default_radii`).
    """
    n_clusters = as_index(n_clusters, "n_clusters", lower=1, upper=1 << 31)
    n = as_index(n, "n", lower=1, upper=1 << 62)
    return max(n_clusters, n_clusters * math.ceil(math.log2(max(n, 2)) / 2.0))


def maxcover_candidates(
    Y: Any,
    radii: list[float],
    *,
    eps_pick: float,
    key: bytes,
    stream: int = 0,
    picks: int,
    grid_factor: float = 1.0,
    backend: str = "core",
    n_threads: int | None = None,
    max_offsets: int = _MAX_OFFSETS,
) -> MaxCoverResult:
    """Private greedy max cover over grids of radii ``radii`` (Algorithm 3, per radius).

    Parameters
    ----------
    Y : array_like, shape (n, p)
        Points in the closed unit ball of ``R^p`` (``p <= 16``).
    radii : list of float
        Threshold radii in ``(0, 4]``.
    eps_pick : float
        Per-pick parameter: grid point ``g`` is drawn with probability ``∝ exp(eps_pick * c(g))``
        where ``c(g)`` counts the still-uncovered points within the radius (sensitivity 1,
        monotone). ``inf``: the non-private greedy. See :func:`maxcover_pick_epsilon`.
    key, stream : bytes, int
        ChaCha20 key and stream id of the picks (addresses in ``cluster/maxcover.hpp``).
    picks : int
        Picks per radius (bicriteria: more than ``k``; :func:`default_picks`).
    grid_factor : float, default=1.0
        Grid unit ``u = grid_factor * r / sqrt(p)``: the nearest grid point to any location is
        within ``u sqrt(p) / 2 = grid_factor * r / 2`` (the snapping error, a fraction of
        ``r``), and a point is within ``r`` of about ``V_p (sqrt(p) / grid_factor)**p`` grid
        points (Claim 4.1's "polynomially many").
    backend : {"core", "reference"}
        C++ core, or the numpy twin (same picks; small inputs only).

    Notes
    -----
    For each radius ``r``: the offset set ``{z : sum_j dist(z_j, [0, 1])**2 <= (r/u)**2}``
    (Claim 4.1, in an exact form) enumerates, for every point, the grid points within ``r``
    (exact distance check after enumeration). All points start uncovered; each pick draws from
    the exponential mechanism over the *whole* grid cube ``{-m..m}**p * u`` (``m =
    floor((1 + r)/u) + 1``, astronomically many points for small ``r``) exactly, as the mixture
    of a uniform draw over the cube (weight ``(2m+1)**p``) and the grid points with non-zero
    cover, weights ``expm1(eps_pick * c)`` (Claim 4.2), in log space by Gumbel-max over cover
    classes; the points the pick covers are marked covered.
    """
    if backend not in ("core", "reference"):
        raise ValueError(f"backend must be 'core' or 'reference', got {backend!r}")
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    if Y.ndim != 2 or Y.shape[0] < 1 or not 1 <= Y.shape[1] <= 16:
        raise ValueError(f"Y must be a 2-D array with 1..16 columns, got shape {Y.shape}")
    radii = [float(r) for r in radii]
    picks = as_index(picks, "picks", lower=1, upper=1 << 31)
    threads = 0 if n_threads is None else int(n_threads)
    args = (Y, radii, float(grid_factor), picks, float(eps_pick), key, int(stream))
    if backend == "core":
        from privlearn import _core

        out = _core.maxcover_candidates(*args, max_offsets=max_offsets, n_threads=threads)
    else:
        from privlearn.reference import cluster as ref

        out = ref.maxcover_candidates(*args, max_offsets=max_offsets)
    centers, level, covered, remainder, n_grid, n_offsets = out
    return MaxCoverResult(
        np.asarray(centers),
        np.asarray(level),
        np.asarray(covered),
        np.asarray(remainder),
        np.asarray(n_grid),
        np.asarray(n_offsets),
    )
