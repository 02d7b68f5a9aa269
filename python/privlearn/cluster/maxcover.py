"""Private candidate centres by greedy max cover on grids (Chaturvedi, Nguyen & Xu 2021,
Algorithm 3 and Claims 4.1-4.2) and the privacy accounting of the adaptive greedy sequence:
Gupta, Ligett, McSherry, Roth & Talwar 2010, Theorem 6.1 (unweighted set cover, the paper's
accounting), or every pick as a bounded-range choice composed by zCDP with the fit's other
stages (:func:`plan_maxcover`, Renyi DP; issue 21)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from privlearn._checks import as_index, as_positive
from privlearn.accounting.rdp import DEFAULT_ORDERS as _DEFAULT_ORDERS

__all__ = [
    "PLAN_ORDERS",
    "AverageRound",
    "MaxCoverPlan",
    "MaxCoverResult",
    "averaging_count_fraction",
    "bounded_range_rho",
    "class_selector",
    "plan_maxcover",
    "count_offsets",
    "default_picks",
    "default_radii",
    "greedy_cover_epsilon",
    "maxcover_candidates",
    "maxcover_pick_epsilon",
    "maxcover_privacy",
]

MAX_OFFSETS = 50_000_000
#: A pick's class draw reads the raw draws of its ChaCha20 row ``row``: ``raw(row * 2**35 + j)``
#: is ``row(row, j)`` (privlearn.random's row addressing), ``j`` below the member offset 2**34.
_ROW_SHIFT = 35


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


def class_selector(
    eps_pick: float, key: bytes, stream: int, p: int
) -> Callable[[int, int, int, list[int]], int]:
    """The exact class draw of a max-cover pick (issue 30, item 9): the function
    ``select(level, row, m, sizes) -> c`` that the core (and its numpy and Dask twins) call.

    Over the grid cube ``{-m..m}**p`` the exponential mechanism draws ``g`` with probability
    ``∝ exp(eps_pick c(g))`` (Gupta et al. 2010 weights, Chaturvedi et al. 2021 Claim 4.2).
    Grouped by cover, class ``c`` has ``N_c = sizes[c]`` members (``c >= 1``) and class 0
    the other ``(2m + 1)**p - sum_c N_c`` (an exact Python int, however large), so the class
    is drawn with probability ``N_c exp(-gamma_c) / Z``, ``gamma_c = eps_pick (c_max - c)``
    (``eps_pick`` as the exact rational value of the float), by
    :class:`privlearn.mechanisms._select.ExactSelector`: no floating-point step between the
    covers and the choice, and every non-empty class has positive probability (the
    Gumbel-max it replaces could not reach a class about 40 below the best logit). The draws
    are the raws of ChaCha20 row ``row`` of ``(key, stream)`` from its start (below the
    member offset ``2**34`` the member draw starts at).
    """
    from privlearn.mechanisms._bits import BitSource
    from privlearn.mechanisms._select import ExactSelector, WordSource
    from privlearn.random import Stream

    eps = Fraction(float(eps_pick))
    eps_f = float(eps_pick)
    source = Stream(key=key, stream=int(stream))

    def select(level: int, row: int, m: int, sizes: list[int]) -> int:
        del level
        top = len(sizes) - 1
        classes = [c for c in range(1, top + 1) if sizes[c] > 0]
        mult = [int(sizes[c]) for c in classes]
        n_zero = (2 * int(m) + 1) ** p - sum(mult)
        if n_zero > 0:
            classes.insert(0, 0)
            mult.insert(0, n_zero)
        best = classes[-1]

        def gamma_exact(i: int) -> tuple[int, int]:
            g = eps * (best - classes[i])
            return g.numerator, g.denominator

        # eps_f * k has a relative error below 2**-52: lowered by 2**-40 relative (and for 0)
        lower = [eps_f * (best - c) * (1.0 - 2.0**-40) for c in classes]
        bits = BitSource(source)
        bits._position = int(row) << _ROW_SHIFT
        return classes[ExactSelector(mult, lower, gamma_exact).draw(WordSource(bits))]

    return select


def count_offsets(p: int, rho: float, limit: int = MAX_OFFSETS) -> int:
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

    Kept, with :func:`default_radii`, under the Renyi-DP plan (:func:`plan_maxcover`, issue
    21), where fewer picks would each get more budget (``eps_pick`` grows like ``1 /
    sqrt(picks)``): measured on Google's synthetic benchmark (20,000 of its 100,000 rows,
    100-d, 64 Gaussians; epsilon 1, delta 1e-6, 2 seeds, the split (0.3, 0.1, 0.15, 0.45),
    proxy threshold ``ln(m) / eps_proxy``; loss = cost / n at k = 8 / 32 / 64),
    picks ``k``: 0.647 / 0.397 / 0.257, ``2k``: 0.647 / 0.385 / 0.180, ``4k``: 0.649 / 0.392 /
    0.156, this default (``8k`` here): 0.650 / 0.396 / 0.166; 3, 4 and 5 (default) radii at
    the default picks: 0.656 / 0.393 / 0.184, 0.653 / 0.389 / 0.168, 0.650 / 0.396 / 0.166;
    3 radii x ``2k``: 0.645 / 0.397 / 0.242. On the 8-Gaussian set (20,000 x 10) every
    schedule gave 0.024-0.025 at k = 32 and 64. More, cheaper picks cover more clusters;
    the greedy needs them at large ``k``.
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
    max_offsets: int = MAX_OFFSETS,
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
    floor((1 + r)/u) + 1``, astronomically many points for small ``r``) exactly: the cover
    class ``c`` (class 0 the grid points with zero cover, however many) by exact arithmetic
    (:func:`class_selector`), then a member uniformly (the ``j``-th grid point of the class
    in lexicographic order of its integer coordinates, ``j`` uniform; class 0: a uniform point
    of the cube, redrawn while its cover is non-zero); the points the pick covers are marked
    covered.

    Memory (issue 30, item 6): per radius the core keeps only the grid points with non-zero
    cover, as sorted packed keys (2-byte low parts under a directory of the high bits) with
    1-byte covers (wider only where a cover needs it), and recomputes a covered point's grid
    points from the offset set: about 3 bytes per grid point with non-zero cover (44 a point
    at the finest default radius on a 100,000 x 20 mixture) and no (point, grid point)
    incidence.
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
    select = None if math.isinf(eps_pick) else class_selector(eps_pick, key, stream, Y.shape[1])
    if backend == "core":
        from privlearn import _core

        out = _core.maxcover_candidates(
            *args, max_offsets=max_offsets, n_threads=threads, select=select
        )
    else:
        from privlearn.reference import cluster as ref

        out = ref.maxcover_candidates(*args, max_offsets=max_offsets, select=select)
    centers, level, covered, remainder, n_grid, n_offsets = out
    return MaxCoverResult(
        np.asarray(centers),
        np.asarray(level),
        np.asarray(covered),
        np.asarray(remainder),
        np.asarray(n_grid),
        np.asarray(n_offsets),
    )


# ---- tight composition of the whole max-cover fit (issue 21) --------------------------------
#: RDP orders of :func:`plan_maxcover`: dp_accounting's default orders and a geometric tail up
#: to 1e5 (small total ``rho`` puts the best order near ``1 + sqrt(log(1/delta) / rho)``).
PLAN_ORDERS: tuple[float, ...] = tuple(
    sorted(set(_DEFAULT_ORDERS) | {float(a) for a in np.geomspace(64.0, 1e5, 80)})
)


def bounded_range_rho(eps_pick: float, n_picks: int) -> float:
    """zCDP ``rho`` of ``n_picks`` adaptively composed greedy picks, each drawn with weights
    ``exp(eps_pick * c)`` from an uncovered-count ``c`` that adding one row raises by 0 or 1
    everywhere (monotone, sensitivity 1).

    Such a pick is ``eps_pick``-*bounded range* (the log-ratio of its output laws on
    neighbours lies in an interval of width ``eps_pick``: Durfee & Rogers 2019, Definition
    2.2 and Lemma 3.2 for monotone utilities), hence ``eps_pick**2 / 8``-zCDP (Cesar & Rogers
    2021, "Bounding, concentrating, and truncating: unifying privacy loss composition for data
    analytics", Lemma 3.2), and zCDP adds up under adaptive composition (Bun & Steinke 2016,
    Lemma 2.3): ``rho = n_picks eps_pick**2 / 8``.
    """
    eps_pick = as_positive(eps_pick, "eps_pick")
    n_picks = as_index(n_picks, "n_picks", lower=1, upper=1 << 40)
    return n_picks * eps_pick * eps_pick / 8.0


@dataclass(frozen=True)
class AverageRound:
    """One noisy averaging round of a max-cover fit (the averaging of Algorithm 1 or a DP
    Lloyd round): per cluster a count with discrete Laplace noise of scale ``count_scale``
    (``1 / count_scale``-DP) and a coordinate sum with lattice Gaussian noise ``sigma``
    (``mu``-GDP, :func:`privlearn.mechanisms.gaussian_privacy`); the clusters are disjoint, so
    the round costs one count and one sum (parallel composition)."""

    count_scale: float
    sigma: float
    mu: float


@dataclass(frozen=True)
class MaxCoverPlan:
    """Noise parameters of a whole max-cover fit and its composed ``(epsilon, delta)``
    (:func:`plan_maxcover`).

    Attributes
    ----------
    accountant : {"zcdp", "gupta"}
        How the greedy picks are accounted: ``"zcdp"``, every pick bounded range and all
        stages composed by Renyi DP (:func:`bounded_range_rho`); ``"gupta"``, the picks by
        Gupta et al.'s set-cover bound (:func:`maxcover_privacy`, ``(epsilon_picks,
        delta_picks)``) added by basic composition to the Renyi-DP composition of the other
        stages at ``delta - delta_picks``. The plan takes whichever gives the larger
        ``eps_pick`` for the same noise in the other stages.
    eps_pick : float
        Per-pick parameter of the exponential mechanism.
    eps_proxy : float
        The proxy counts' discrete Laplace noise has scale ``1 / eps_proxy``.
    rounds : tuple of AverageRound
        The noisy averaging, then each DP Lloyd round.
    epsilon, delta : float
        The composed guarantee (``epsilon`` at most the target).
    epsilon_zcdp, epsilon_gupta : float
        The composed epsilon with the picks accounted each way, each at its own ``eps_pick``
        (``inf`` where the Gupta bound does not apply); ``eps_pick_zcdp`` and
        ``eps_pick_gupta`` the per-pick parameters they allow.
    best_order : float
        The Renyi order of the conversion.
    """

    accountant: str
    eps_pick: float
    eps_proxy: float
    rounds: tuple[AverageRound, ...]
    epsilon: float
    delta: float
    epsilon_zcdp: float
    epsilon_gupta: float
    eps_pick_zcdp: float
    eps_pick_gupta: float
    best_order: float


def averaging_count_fraction(d: int) -> float:
    """Share of an averaging round's zCDP budget that goes to the counts:
    ``1 / (1 + sqrt(d / 2))``.

    A centre is ``noisy_sum / noisy_count``; its squared error is about ``(d R**2 / (2
    rho_sum) + |c|**2 / rho_count) / n_j**2`` (Gaussian sum, discrete Laplace count of
    variance ``1 / rho_count``, ``|c| <= R``), minimised over ``rho_sum + rho_count = rho``
    at ``rho_count / rho_sum = sqrt(2 |c|**2 / (d R**2)) <= sqrt(2 / d)``: a function of the
    public dimension only (0.5 at ``d = 2``, 0.12 at ``d = 100``)."""
    d = as_index(d, "d", lower=1, upper=1 << 40)
    return 1.0 / (1.0 + math.sqrt(d / 2.0))


def _pure_curve(eps: float, a: np.ndarray) -> np.ndarray:
    return np.minimum(eps, 0.5 * a * eps * eps)


def plan_maxcover(
    epsilon: float,
    delta: float,
    *,
    n_picks: int,
    n_radii: int,
    split: dict[str, float],
    lloyd_steps: int,
    radius: float,
    d: int,
    gaussian_releases: int = 0,
) -> MaxCoverPlan:
    """Calibrate every stage of a max-cover fit so that the whole fit is ``(epsilon,
    delta)``-DP by a tight accountant (Renyi DP; issue 21).

    The stages and their Renyi curves (orders :data:`PLAN_ORDERS`): the ``n_picks`` greedy
    picks (:func:`bounded_range_rho`, ``alpha rho_picks``), the proxy counts and every
    averaging count (pure ``eps``-DP: ``min(eps, alpha eps**2 / 2)``, :func:`privlearn.
    accounting.rdp_pure_dp`), every averaging sum (lattice Gaussian, ``alpha mu**2 / 2`` with
    the lattice's ``mu``). A total zCDP budget ``s`` is split by ``split`` (fractions
    ``maxcover``, ``proxy``, ``average``, ``lloyd``, the last over ``lloyd_steps`` rounds; in
    each round :func:`averaging_count_fraction` to the count): a stage with share ``rho``
    gets ``eps_pick = sqrt(8 rho / n_picks)``, ``eps = sqrt(2 rho)`` (counts) or ``sigma =
    radius / sqrt(2 rho)`` (sums). ``s`` is the largest (bisection, 1e-14 relative) whose
    composed curve converts (Canonne, Kamath & Steinke 2020 / Balle et al. 2020, the tight
    conversion of :func:`privlearn.accounting.rdp_to_epsilon`) to at most ``epsilon`` at
    ``delta``; ``s`` does not depend on ``n_picks`` (only ``eps_pick`` does).

    Then, for the same noise in the other stages, the Gupta et al. bound is tried for the
    picks (``delta_picks = delta * split["delta_maxcover"]``): the other stages convert at
    ``delta - delta_picks`` and the epsilon left goes to :func:`maxcover_pick_epsilon`. The
    larger ``eps_pick`` wins (``MaxCoverPlan.accountant``). Every input is public (the
    number of picks comes from the public schedule).

    The sums are exact discrete Gaussians (:func:`privlearn.mechanisms.gaussian`): the
    calibration composes them by their ``mu``; the composed ``epsilon`` reported is that of the
    rounded continuous Gaussians (``mu`` times
    :data:`~privlearn.cluster._lattice_slack.NOISE_MU_FACTOR`) plus the lattice slack of
    ``gaussian_releases`` calls (:func:`privlearn.cluster._lattice_slack.lattice_fit_epsilon`;
    ``k`` per averaging round in a fit, about ``1e-10`` each in ``epsilon``) is the formal
    proof; the plan reports the larger of it and the ``mu`` composition (the calibrated
    value, the larger wherever ``epsilon`` exceeds about ``1e-4``). ``0`` (the default, for a
    plan without a fit) reports the ``mu`` composition alone.

    The plan is a function of these public inputs only, and immutable: the last
    ``PLAN_CACHE_SIZE`` (256) plans are kept and a repeated call returns the same object (the
    refits of one schedule, e.g. an audit's hundreds of fits, calibrate once; issue 32 item 4).

    Raises
    ------
    ValueError
        When no budget reaches ``(epsilon, delta)`` (the Gaussian lattice alone costs more).
    """
    try:
        key = (epsilon, delta, n_picks, n_radii, tuple(sorted(split.items())), lloyd_steps)
        key += (radius, d, gaussian_releases)
        hash(key)
    except (TypeError, AttributeError):  # not hashable, split not a dict: checked uncached
        return _plan_maxcover.__wrapped__(
            epsilon, delta, n_picks, n_radii, split, lloyd_steps, radius, d, gaussian_releases
        )
    return _plan_maxcover(*key)


#: How many max-cover plans :func:`plan_maxcover` keeps (each a few hundred bytes).
PLAN_CACHE_SIZE = 256


@functools.lru_cache(maxsize=PLAN_CACHE_SIZE, typed=True)
def _plan_maxcover(
    epsilon: float,
    delta: float,
    n_picks: int,
    n_radii: int,
    split_items: Any,
    lloyd_steps: int,
    radius: float,
    d: int,
    gaussian_releases: int,
) -> MaxCoverPlan:
    """:func:`plan_maxcover` itself (``split_items``: the split's items, or the dict)."""
    split = dict(split_items)
    from privlearn.accounting import rdp_to_epsilon
    from privlearn.cluster._lattice_slack import NOISE_MU_FACTOR, lattice_fit_epsilon
    from privlearn.mechanisms.gaussian import gaussian_privacy

    epsilon = as_positive(epsilon, "epsilon")
    delta = as_positive(delta, "delta")
    n_picks = as_index(n_picks, "n_picks", lower=1, upper=1 << 40)
    n_radii = as_index(n_radii, "n_radii", lower=1, upper=1 << 20)
    lloyd_steps = as_index(lloyd_steps, "lloyd_steps", lower=0, upper=1 << 20)
    radius = as_positive(radius, "radius")
    a = np.asarray(PLAN_ORDERS)
    frac = averaging_count_fraction(d)
    shares = [split["average"]] + [split.get("lloyd", 0.0) / max(lloyd_steps, 1)] * lloyd_steps

    def stages(s: float, noise: float = 1.0) -> tuple[float, list[AverageRound], np.ndarray]:
        # noise: the factor on every Gaussian mu (1: as calibrated; NOISE_MU_FACTOR: the
        # rounded continuous Gaussians of the lattice statement)
        eps_proxy = math.sqrt(2.0 * split["proxy"] * s)
        curve = _pure_curve(eps_proxy, a)
        rounds = []
        for w in shares:
            eps_c = math.sqrt(2.0 * w * s * frac)
            sigma = radius / math.sqrt(2.0 * w * s * (1.0 - frac))
            mu = gaussian_privacy(radius, sigma, size=d).mu
            rounds.append(AverageRound(1.0 / eps_c, sigma, mu))
            curve = curve + _pure_curve(eps_c, a) + 0.5 * a * (noise * mu) ** 2
        return eps_proxy, rounds, curve

    def total(s: float) -> float:
        return rdp_to_epsilon(a, stages(s)[2] + a * split["maxcover"] * s, delta)[0]

    floor_s = 1e-200  # total() increases with s: if the least budget tried is too much, refuse
    if total(floor_s) > epsilon:  # at once (not after ~660 halvings, each pricing every round)
        raise ValueError(
            f"epsilon={epsilon:g}, delta={delta:g} are too small for the max-cover fit: "
            f"its Gaussian averages on {d} coordinates cannot be calibrated (their lattice "
            "alone costs more); raise epsilon or delta, or use fewer lloyd_steps"
        )
    hi = epsilon  # total(epsilon) > epsilon but for a huge delta: the conversion adds to rho
    for _ in range(64):
        if total(hi) > epsilon:
            break
        hi *= 2.0
    lo = hi / 2.0
    while total(lo) > epsilon:
        lo /= 2.0
        if lo < floor_s:  # not reached (total(floor_s) <= epsilon was checked); kept as a guard
            raise ValueError(
                f"epsilon={epsilon:g}, delta={delta:g} are too small for the max-cover fit: "
                f"its Gaussian averages on {d} coordinates cannot be calibrated (their lattice "
                "alone costs more); raise epsilon or delta, or use fewer lloyd_steps"
            )
    hi = max(hi, 2.0 * lo)
    while hi - lo > 1e-14 * hi:
        mid = 0.5 * (lo + hi)
        if total(mid) <= epsilon:
            lo = mid
        else:
            hi = mid
    s = lo
    eps_proxy, rounds, other = stages(s)
    rho_picks = split["maxcover"] * s
    eps_pick_z = math.sqrt(8.0 * rho_picks / n_picks)
    releases = as_index(gaussian_releases, "gaussian_releases", lower=0, upper=1 << 40)

    noise = stages(s, NOISE_MU_FACTOR)[2] - other  # the rounded Gaussians' curve, less

    def convert(curve: np.ndarray, at: float) -> float:
        eps = rdp_to_epsilon(a, curve, at)[0]
        if not releases:
            return eps
        exact = lattice_fit_epsilon(
            lambda dc: rdp_to_epsilon(a, curve + noise, dc)[0], releases, at
        )
        return max(eps, exact)

    order = rdp_to_epsilon(a, other + a * rho_picks, delta)[1]
    eps_z = convert(other + a * rho_picks, delta)
    # the Gupta et al. alternative, same noise elsewhere
    delta_g = delta * split.get("delta_maxcover", 0.5)
    eps_pick_g, eps_g_total = 0.0, math.inf
    if 0.0 < delta_g < delta and delta_g / n_radii <= 0.5:
        eps_other = convert(other, delta - delta_g)
        if eps_other < epsilon:
            eps_pick_g = maxcover_pick_epsilon(epsilon - eps_other, delta_g, n_radii)
            eps_g_total = eps_other + maxcover_privacy(eps_pick_g, delta_g, n_radii)[0]
    gupta = eps_pick_g > eps_pick_z
    return MaxCoverPlan(
        "gupta" if gupta else "zcdp",
        eps_pick_g if gupta else eps_pick_z,
        eps_proxy,
        tuple(rounds),
        eps_g_total if gupta else eps_z,
        delta,
        eps_z,
        eps_g_total,
        eps_pick_z,
        eps_pick_g,
        order,
    )
