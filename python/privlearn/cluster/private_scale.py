"""A private scale for DP k-means: a centre ``c`` and a radius ``r`` of the data, released with
Gaussian noise, so that later steps clip rows to ``B(c, r)`` instead of the public ball
``B(0, R)`` and their noise (proportional to the clipping radius) shrinks when ``R`` is loose.

Two releases, both Gaussian mechanisms under add/remove-one neighbours:

1. :func:`private_centre` -- the noisy mean: a noisy row count (sensitivity 1) and a noisy
   coordinate sum (L2 sensitivity ``R``), centre = noisy sum / max(noisy count, floor),
   projected into ``B(0, R)`` (the noisy averaging of Nissim, Stemmer & Vadhan 2016, with a
   Gaussian count).
2. :func:`private_radius` -- a radius of the distances ``||x_i - c||`` to the *released*
   centre, read off a noisy histogram on a public geometric lattice (every row falls in one
   bin: L2 sensitivity 1): by default the smallest edge beyond which the noisy histogram
   shows no more rows than its own noise (a private maximum, up to ``O(1/mu)`` rows), or a
   quantile. The released radius is a lattice point.

Each release is ``mu_i``-GDP (Dong, Roth & Su 2022, "Gaussian differential privacy", JRSS B;
Theorem 2.7: the Gaussian mechanism with sensitivity ``Delta`` and noise ``sigma`` is
``Delta/sigma``-GDP), and the adaptive composition of ``mu_i``-GDP mechanisms is
``sqrt(sum mu_i**2)``-GDP (ibid., Corollary 3.3). So the scale composes *exactly* with the
other Gaussian releases of a fit: a caller with total budget ``mu`` gives this step ``mu_s``
and the rest ``sqrt(mu**2 - mu_s**2)``. The ``mu`` returned is what the lattice Gaussian
(:func:`privlearn.mechanisms.gaussian`) actually spent, lattice inflation included, and is at
most the ``mu`` given. ``(epsilon, delta)`` follows by the analytic Gaussian conversion
(Balle & Wang 2018, Theorem 8; :func:`privlearn.mechanisms.gaussian.analytic_gaussian_epsilon`).

The computation is split into exact *statistics* (integers, computable on any partition of the
rows and added: :class:`CentreStatistics`, :func:`radius_histogram`) and the *release* (noise
on the driver, :func:`release_scale`), so a Dask fit equals the single-machine fit bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privlearn._checks import as_index, as_positive, as_real
from privlearn.cluster._ball import clip_rows, project_ball
from privlearn.cluster._inputs import check_data
from privlearn.fixed_point import fixed_point_exponent, fixed_point_parts, fixed_point_value
from privlearn.mechanisms import gaussian
from privlearn.mechanisms._bits import as_seed
from privlearn.mechanisms.gaussian import analytic_gaussian_epsilon, gaussian_privacy
from privlearn.random import Stream

__all__ = [
    "DEFAULT_CENTRE_SHARE",
    "DEFAULT_QUANTILE",
    "DEFAULT_TAIL_SD",
    "CentreStatistics",
    "PrivateScale",
    "RadiusLattice",
    "centre_statistics",
    "default_count_share",
    "private_centre",
    "private_radius",
    "private_scale",
    "radius_histogram",
    "release_scale",
]

# stream ids of the sub-seeds (one purpose each; "scale" | k)
_STREAM_SCALE = 0x7363616C65000001
_STREAM_CENTRE = 0x7363616C65000002
_STREAM_RADIUS = 0x7363616C65000003

#: The quantile of the distances to the centre that the fraction rule of
#: :func:`private_radius` (``quantile=``) was tuned with (see its Notes); no longer the default.
DEFAULT_QUANTILE = 0.98
#: Default rule of :func:`private_radius`: an edge passes when the noisy count beyond it is at
#: most this many standard deviations of its own noise (a private maximum of the distances).
DEFAULT_TAIL_SD = 3.0
#: Default share of ``mu**2`` that :func:`private_scale` gives the centre (the rest goes to
#: the radius).
DEFAULT_CENTRE_SHARE = 0.5
#: Entries per block of rows (4 MiB of float64: temporaries such as ``X - c`` stay small).
_BLOCK_ENTRIES = 1 << 19


def _block_rows(X: np.ndarray) -> int:
    return max(1, _BLOCK_ENTRIES // max(1, X.shape[1]))


def _sq_distances(X: np.ndarray, centre: np.ndarray | None = None) -> np.ndarray:
    """``||x_i - centre||**2`` (``||x_i||**2`` without a centre) with the bits of
    ``privlearn.cluster._ball.row_sq_norms(X - centre)``: per row
    ``(((y_0**2 + y_1**2) + y_2**2) + ...)`` in column order, so each row's value does not
    depend on the other rows (a row partition gets the bits of the whole), computed on
    transposed blocks so that every step reads contiguous memory."""
    out = np.empty(X.shape[0])
    step = _block_rows(X)
    for start in range(0, X.shape[0], step):
        T = X[start : start + step].T
        T = T - centre[:, None] if centre is not None else np.ascontiguousarray(T)
        acc = T[0] * T[0]
        for j in range(1, T.shape[0]):
            acc += T[j] * T[j]
        out[start : start + step] = acc
    return out


def _checked_rows(X: Any, radius: float, clip: bool) -> np.ndarray:
    """``clip_rows(check_data(X), radius, clip)`` (privlearn.cluster._inputs and _ball): the
    same per-row map and errors; the norms are computed by :func:`_sq_distances` (faster on wide
    data, same bits) and ``clip_rows`` runs only when a row lies outside the ball."""
    X = check_data(X)
    if (np.sqrt(_sq_distances(X)) > radius).any():
        X = clip_rows(X, radius, clip)
    return X


def _sub_seed(seed: int | None, stream: int, index: int) -> int:
    """A 63-bit seed from ``seed``'s ChaCha20 stream ``stream`` (independent per index;
    ``seed=None``: a key from the operating system)."""
    return int(Stream(seed, stream=stream).raws(index, 1)[0] >> np.uint64(1))


def _check_mu(mu: Any) -> float:
    mu = as_positive(mu, "mu")
    if mu > 64.0:
        raise ValueError(f"mu must lie in (0, 64] (a GDP parameter), got {mu}")
    return mu


def _sigma_for(sensitivity: float, mu: float, size: int) -> float:
    """Smallest ``sigma`` (up to 1e-12 relative) with
    ``gaussian_privacy(sensitivity, sigma, size=size).mu <= mu (1 - 1e-12)``: the lattice
    inflation of the sensitivity (``sqrt(size) * step``, at most ``2**-12 sigma``) is paid out
    of ``mu``, and the slack keeps ``hypot`` of the parts of a split budget within the whole
    despite rounding.

    Raises
    ------
    ValueError
        When ``mu`` is too small to cover the lattice inflation (``mu <~ 2**-12``).
    """
    target = mu * (1.0 - 1e-12)
    sigma = sensitivity / target
    for _ in range(64):
        privacy = gaussian_privacy(sensitivity, sigma, size=size)
        if privacy.mu <= target:
            return sigma
        sigma = privacy.effective_sensitivity / target * (1.0 + 1e-12)
    raise ValueError(
        f"mu={mu:.6g} is too small for a Gaussian release of {size} numbers: the lattice of "
        "privlearn.mechanisms.gaussian takes up to 2**-12 of mu itself; give this step more mu"
    )


def default_count_share(n_features: int) -> float:
    """``1 / (1 + sqrt(d))``: the share of the centre's ``mu**2`` spent on the row count.

    The centre ``S/N`` has error about ``||mean|| sd(N) / n`` from the count and
    ``R sqrt(d) / (mu_S n)`` from the sum. Minimising the sum of their squares under
    ``mu_N**2 + mu_S**2 = mu**2`` gives ``mu_N**2 / mu_S**2 = ||mean|| / (R sqrt(d))``; with the
    worst case ``||mean|| = R`` (``||mean||`` is private), ``mu_N**2 = mu**2 / (1 + sqrt(d))``.
    Spending this share costs the sum at most ``1 / sqrt(1 - share) - 1`` of its accuracy
    (1.8% at d = 784, 14% at d = 10), and a mean of norm ``< R`` makes the count's error
    smaller still.
    """
    d = as_index(n_features, "n_features", lower=1, upper=1 << 40)
    return 1.0 / (1.0 + math.sqrt(d))


# ---- the centre ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class CentreStatistics:
    """Exact statistics of rows in ``B(0, radius)``: the row count and the fixed-point parts
    (:func:`privlearn.fixed_point.fixed_point_parts`, scale from the public ``radius``) of the
    coordinate sum. Integer sums are exact: the statistics of a row partition add (``+``) up
    to those of the whole, bit for bit.

    Attributes
    ----------
    count : int
    hi, lo : numpy.ndarray of int64, shape (d,)
    radius : float
        The public bound ``R`` the fixed-point scale is derived from.
    """

    count: int
    hi: np.ndarray
    lo: np.ndarray
    radius: float

    def __add__(self, other: CentreStatistics) -> CentreStatistics:
        if not isinstance(other, CentreStatistics):
            return NotImplemented
        if other.radius != self.radius or other.hi.shape != self.hi.shape:
            raise ValueError(
                "statistics of different shapes or radii cannot be added: "
                f"(d={self.hi.shape[0]}, R={self.radius}) vs (d={other.hi.shape[0]}, "
                f"R={other.radius})"
            )
        return CentreStatistics(
            self.count + other.count, self.hi + other.hi, self.lo + other.lo, self.radius
        )

    @property
    def n_features(self) -> int:
        return int(self.hi.shape[0])

    def total(self) -> np.ndarray:
        """The exact coordinate sum (float64, a deterministic function of the integers)."""
        return fixed_point_value(self.hi, self.lo, fixed_point_exponent(self.radius))


def centre_statistics(X: Any, radius: float, *, clip: bool = False) -> CentreStatistics:
    """The :class:`CentreStatistics` of the rows of ``X``.

    Parameters
    ----------
    X : array_like of shape (n, d)
        Rows in ``B(0, radius)``; a row further out raises ``ValueError`` unless ``clip``
        (rows within the rounding tolerance of ``_ball.ROW_NORM_TOLERANCE`` are projected).
    radius : float
        The public bound ``R > 0``.
    clip : bool, default=False
        Project rows outside the ball onto it (a per-row map: privacy is preserved).
    """
    radius = _check_radius(radius)
    return _centre_statistics(_checked_rows(X, radius, bool(clip)), radius)


def _centre_statistics(X: np.ndarray, radius: float) -> CentreStatistics:
    """:func:`centre_statistics` of checked rows, in blocks (the fixed-point parts of one
    block at a time: two int64 copies of ``_BLOCK`` rows, not of ``X``)."""
    exp = fixed_point_exponent(radius)
    hi = np.zeros(X.shape[1], dtype=np.int64)
    lo = np.zeros(X.shape[1], dtype=np.int64)
    step = _block_rows(X)
    for start in range(0, X.shape[0], step):
        h, low = fixed_point_parts(X[start : start + step], exp)
        hi += h.sum(axis=0)
        lo += low.sum(axis=0)
    return CentreStatistics(int(X.shape[0]), hi, lo, radius)


def _check_radius(radius: Any) -> float:
    radius = as_positive(radius, "radius")
    if radius > 2.0**500:
        raise ValueError(f"radius must be at most 2**500, got {radius}")
    return radius


@dataclass(frozen=True)
class CentreRelease:
    """What :func:`private_centre` released.

    Attributes
    ----------
    centre : numpy.ndarray, shape (d,)
        ``noisy_sum / max(noisy_count, count_floor)`` projected into ``B(0, R)``.
    noisy_count : float
        The noisy row count (a lattice point; usable downstream as the private size).
    noisy_sum : numpy.ndarray, shape (d,)
    count_sd, sum_sd : float
        The noise standard deviations (public: functions of ``mu``, ``R`` and ``d``).
    mu_count, mu_sum, mu : float
        GDP of each release and ``hypot`` of both (lattice inflation included).
    """

    centre: np.ndarray
    noisy_count: float
    noisy_sum: np.ndarray
    count_sd: float
    sum_sd: float
    mu_count: float
    mu_sum: float
    mu: float


def private_centre(
    stats: CentreStatistics,
    mu: float,
    seed: int | None = None,
    *,
    count_share: float | None = None,
) -> CentreRelease:
    """A private centre of rows in ``B(0, R)``: Gaussian noisy count and sum.

    Parameters
    ----------
    stats : CentreStatistics
        Exact statistics (:func:`centre_statistics`, possibly added over partitions).
    mu : float
        GDP budget of this release, ``0 < mu <= 64``.
    seed : int or None
        Secret randomness: an int makes the release reproducible; ``None`` takes the key from
        the operating system.
    count_share : float in (0, 1), optional
        Share of ``mu**2`` spent on the count; default :func:`default_count_share`.

    Returns
    -------
    CentreRelease
        The centre, the noisy count and sum, and ``mu`` spent (``<= mu``).

    Notes
    -----
    Under add/remove-one neighbours the count moves by 1 and the sum by one row, of norm at
    most ``R`` (the fixed-point truncation is towards zero, so no row's norm grows): the count
    with noise ``sigma_N`` is ``mu_N``-GDP and the sum with noise ``sigma_S`` per coordinate is
    ``mu_S``-GDP (Dong, Roth & Su 2022, Theorem 2.7), together ``hypot(mu_N, mu_S)``-GDP
    (Corollary 3.3). Both are released on the lattice of :func:`privlearn.mechanisms.gaussian`;
    the centre is a post-processing. The divisor's floor ``max(1, 2 sigma_N)`` is public: when
    the noisy count is within two standard deviations of 0 the sum is shrunk towards the
    origin instead of being blown up (then projected into ``B(0, R)``). The size ``n`` is never
    used.
    """
    if not isinstance(stats, CentreStatistics):
        raise TypeError(f"stats must be CentreStatistics, got {type(stats).__name__}")
    mu = _check_mu(mu)
    d = stats.n_features
    share = default_count_share(d) if count_share is None else _check_share(count_share)
    seed = as_seed(seed)
    sum_ = stats.total()
    mu_n, mu_s = mu * math.sqrt(share), mu * math.sqrt(1.0 - share)
    sigma_n = _sigma_for(1.0, mu_n, 1)
    sigma_s = _sigma_for(stats.radius, mu_s, d)
    spent_n = gaussian_privacy(1.0, sigma_n, size=1).mu
    spent_s = gaussian_privacy(stats.radius, sigma_s, size=d).mu
    noisy_count = float(
        gaussian(float(stats.count), 1.0, sigma_n, _sub_seed(seed, _STREAM_CENTRE, 0))
    )
    noisy_sum = np.asarray(
        gaussian(sum_, stats.radius, sigma_s, _sub_seed(seed, _STREAM_CENTRE, 1)), dtype=np.float64
    )
    floor = max(1.0, 2.0 * sigma_n)
    centre = project_ball((noisy_sum / max(noisy_count, floor))[None, :], stats.radius)[0]
    return CentreRelease(
        centre=_frozen(centre),
        noisy_count=noisy_count,
        noisy_sum=_frozen(noisy_sum),
        count_sd=sigma_n,
        sum_sd=sigma_s,
        mu_count=spent_n,
        mu_sum=spent_s,
        mu=math.hypot(spent_n, spent_s),
    )


def _check_share(share: Any) -> float:
    share = as_real(share, "share")
    if not 0.0 < share < 1.0:
        raise ValueError(f"a budget share must lie in (0, 1), got {share}")
    return share


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64, copy=True)
    a.setflags(write=False)
    return a


# ---- the radius ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class RadiusLattice:
    """The public geometric lattice of candidate radii.

    Edges ``e_j = upper * 2**(-j / bins_per_octave)``, ``j = 0 .. n_edges - 1``. Bin ``i < J``
    (``J = n_edges - 1``) holds the distances in ``(e_{i+1}, e_i]`` (bin 0 also anything above
    ``upper``, which only rounding can produce), bin ``J`` holds ``[0, e_J]``.

    Attributes
    ----------
    upper : float
        Public bound on every distance (``2R`` for rows and centre in ``B(0, R)``).
    bins_per_octave : int, default=8
        Lattice resolution: consecutive candidates differ by ``2**(1/bins_per_octave)``
        (9% for 8).
    n_edges : int, default=97
        Number of edges (12 octaves for the defaults: down to ``upper / 4096``).
    """

    upper: float
    bins_per_octave: int = 8
    n_edges: int = 97

    def __post_init__(self) -> None:
        object.__setattr__(self, "upper", _check_radius(self.upper))
        object.__setattr__(
            self,
            "bins_per_octave",
            as_index(self.bins_per_octave, "bins_per_octave", lower=1, upper=64),
        )
        object.__setattr__(self, "n_edges", as_index(self.n_edges, "n_edges", lower=2, upper=4096))

    @property
    def edges(self) -> np.ndarray:
        """``e_0 > e_1 > ... > e_J`` (float64; public)."""
        j = np.arange(self.n_edges, dtype=np.float64)
        return self.upper * np.exp2(-j / self.bins_per_octave)

    def bins(self, distances: np.ndarray) -> np.ndarray:
        """Bin index of every distance (int64 in ``[0, J]``): the number of edges
        ``e_1 .. e_J`` that are ``>= t``."""
        ascending = self.edges[1:][::-1]
        below = np.searchsorted(ascending, distances, side="left")
        return (ascending.size - below).astype(np.int64)


def radius_histogram(
    X: Any, centre: Any, lattice: RadiusLattice, *, radius: float | None = None, clip: bool = False
) -> np.ndarray:
    """Exact counts (int64, shape ``(n_edges,)``) of the distances ``||x_i - centre||`` per
    bin of ``lattice``; counts of a row partition add up to those of the whole.

    Each row's distance is summed over the coordinates in order (no blocked reduction), so it
    does not depend on the other rows. ``radius`` (optional): check (or with ``clip`` project)
    the rows into ``B(0, radius)`` first, as :func:`centre_statistics` does.
    """
    if not isinstance(lattice, RadiusLattice):
        raise TypeError(f"lattice must be a RadiusLattice, got {type(lattice).__name__}")
    X = check_data(X)
    if radius is not None:
        X = _checked_rows(X, _check_radius(radius), bool(clip))
    c = np.asarray(centre, dtype=np.float64)
    if c.shape != (X.shape[1],) or not np.isfinite(c).all():
        raise ValueError(
            f"centre must be a finite vector of shape ({X.shape[1]},), got shape {c.shape}"
        )
    dist = np.sqrt(_sq_distances(X, c))
    return np.bincount(lattice.bins(dist), minlength=lattice.n_edges).astype(np.int64)


@dataclass(frozen=True)
class RadiusRelease:
    """What :func:`private_radius` released: ``radius`` (an edge of the lattice, public), its
    index ``j``, the noisy histogram, its per-bin noise sd and the ``mu`` spent."""

    radius: float
    index: int
    noisy_histogram: np.ndarray
    histogram_sd: float
    mu: float


def private_radius(
    histogram: Any,
    lattice: RadiusLattice,
    mu: float,
    seed: int | None = None,
    *,
    quantile: float | None = None,
    tail_sd: float = DEFAULT_TAIL_SD,
) -> RadiusRelease:
    """A private radius: the smallest lattice edge beyond which (by a noisy histogram) no more
    rows lie than the histogram's noise (default), or at most a fraction ``1 - quantile``.

    Parameters
    ----------
    histogram : array_like of int, shape (n_edges,)
        Exact bin counts (:func:`radius_histogram`, possibly added over partitions).
    lattice : RadiusLattice
        The public candidate radii.
    mu : float
        GDP budget of this release, ``0 < mu <= 64``.
    seed : int or None
        Secret randomness (``None``: key from the operating system).
    quantile : float in (0, 1) or None, default=None
        ``None``: the noise rule below. A number: the fraction rule (target fraction of rows
        within the radius; 0.98 was the default before issue 30).
    tail_sd : float > 0, default=3.0
        The noise rule's allowance, in standard deviations of a tail sum.

    Returns
    -------
    RadiusRelease
        ``radius = e_j`` with ``j`` the largest index such that for every ``1 <= j' <= j`` the
        noisy count beyond ``e_{j'}`` (noisy bins ``0 .. j'-1`` summed, noise sd
        ``sigma sqrt(j')``) is at most ``tail_sd * sigma * sqrt(j')`` (noise rule) or at most
        ``(1 - quantile)`` times the noisy total (fraction rule); ``j = 0``
        (``radius = upper``) when already ``e_1`` fails.

    Notes
    -----
    Every row is in exactly one bin, so adding or removing a row moves the histogram by 1 in
    L2 norm: Gaussian noise ``sigma`` per bin is ``1/sigma``-GDP (Dong, Roth & Su 2022,
    Theorem 2.7), with the lattice inflation of :func:`privlearn.mechanisms.gaussian`
    counted in the returned ``mu``. The radius is a post-processing of the noisy histogram and
    always one of the public edges: no floating-point arithmetic touches a private value.
    Scanning from the top and stopping at the first failure makes the rule monotone: a deep
    edge that passes by chance after a failure is not taken.

    Choice of the rule (issue 30). Clipping to ``B(c, r)`` moves the rows beyond ``r``: a
    bias, concentrated on the clusters far from the centre, that no amount of budget removes;
    the noise of later steps grows linearly in ``r``. The fraction rule clips a fixed share of
    the rows (2% at 0.98) whatever the budget: a cluster of fewer rows far from the centre
    (mis-keyed values in a clinical table, 1.4% of 70,000 rows) was pulled onto the sphere,
    an epsilon-independent floor of the k-means cost (1.2x the optimum at epsilon 1 to 1000).
    The noise rule clips only about ``tail_sd * sigma * sqrt(j)`` rows (``sigma = 1/mu``):
    a number of rows of the order of the later steps' count noise, so the bias shrinks with
    the noise and vanishes as ``mu`` grows (the released radius then covers every row). At
    small ``(1 - quantile) n`` the fraction rule also fails at a large edge by noise alone
    (radius 1.5x the quantile and more), and with ``(1 - quantile) n`` far below the noise its
    tail sums above the data are a random walk of noise that stays under the threshold for
    ``j`` edges with probability about ``C(2j, j) / 4^j ~ 1/sqrt(pi j)`` (Sparre Andersen): a
    radius below the data by chance is rare, not impossible; the noise rule's tests fail by
    chance with probability about ``1 - Phi(tail_sd)`` each. A radius that still comes out too
    large is harmless to :class:`~privlearn.cluster.DPKMeans`, which falls back to the public
    ball when the released radius is not below it.
    """
    if not isinstance(lattice, RadiusLattice):
        raise TypeError(f"lattice must be a RadiusLattice, got {type(lattice).__name__}")
    hist = np.asarray(histogram)
    if hist.shape != (lattice.n_edges,) or not np.issubdtype(hist.dtype, np.integer):
        raise ValueError(
            f"histogram must be an integer array of shape ({lattice.n_edges},) (one count per "
            f"bin of the lattice), got dtype {hist.dtype} and shape {hist.shape}"
        )
    if (hist < 0).any():
        raise ValueError("histogram counts must be >= 0")
    mu = _check_mu(mu)
    quantile = None if quantile is None else _check_quantile(quantile)
    tail_sd = _check_tail_sd(tail_sd)
    seed = as_seed(seed)
    size = lattice.n_edges
    sigma = _sigma_for(1.0, mu, size)
    spent = gaussian_privacy(1.0, sigma, size=size).mu
    noisy = np.asarray(
        gaussian(hist.astype(np.float64), 1.0, sigma, _sub_seed(seed, _STREAM_RADIUS, 0)),
        dtype=np.float64,
    )
    tails = np.cumsum(noisy)[:-1]  # tails[j - 1]: noisy rows beyond e_j, j = 1 .. J
    if quantile is None:
        ok = tails <= tail_sd * sigma * np.sqrt(np.arange(1.0, size))
    else:
        ok = tails <= (1.0 - quantile) * float(noisy.sum())
    index = int(np.argmin(ok)) if not ok.all() else size - 1
    return RadiusRelease(
        radius=float(lattice.edges[index]),
        index=index,
        noisy_histogram=_frozen(noisy),
        histogram_sd=sigma,
        mu=spent,
    )


def _check_tail_sd(tail_sd: Any) -> float:
    tail_sd = as_real(tail_sd, "tail_sd")
    if not (math.isfinite(tail_sd) and tail_sd > 0.0):
        raise ValueError(f"tail_sd must be a finite number > 0, got {tail_sd}")
    return tail_sd


def _check_quantile(quantile: Any) -> float:
    quantile = as_real(quantile, "quantile")
    if not 0.0 < quantile < 1.0:
        raise ValueError(f"quantile must lie in (0, 1), got {quantile}")
    return quantile


# ---- both ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PrivateScale:
    """A released centre and radius (both private) and what they cost.

    Attributes
    ----------
    centre : numpy.ndarray, shape (d,)
        Read-only.
    radius : float
        A point of the public lattice (:class:`RadiusLattice`).
    mu : float
        GDP of the whole release: ``hypot(centre.mu, radius_release.mu)`` (``<=`` the budget).
    bound : float
        The public bound ``R``.
    quantile : float or None
        The fraction rule's quantile, or ``None`` (the noise rule, ``tail_sd``).
    lattice : RadiusLattice
    centre_release : CentreRelease
    radius_release : RadiusRelease
    """

    centre: np.ndarray
    radius: float
    mu: float
    bound: float
    quantile: float | None
    lattice: RadiusLattice
    centre_release: CentreRelease = field(repr=False)
    radius_release: RadiusRelease = field(repr=False)
    tail_sd: float = DEFAULT_TAIL_SD

    def epsilon(self, delta: float) -> float:
        """``epsilon`` of the ``(epsilon, delta)``-DP guarantee of this release alone
        (analytic Gaussian conversion of ``mu``-GDP, Balle & Wang 2018, Theorem 8)."""
        return analytic_gaussian_epsilon(self.mu, delta)

    def describe(self) -> str:
        """The privacy statement of this release (one paragraph)."""
        c, r = self.centre_release, self.radius_release
        if self.quantile is None:
            rule = (
                f"the smallest lattice edge beyond which the noisy count is at most "
                f"{self.tail_sd:g} sd of its noise at every edge above"
            )
        else:
            rule = f"at most {1 - self.quantile:.3g} of the noisy total beyond it"
        return (
            f"private scale: {self.mu:.6g}-GDP under add/remove-one neighbours (Dong, Roth & Su "
            f"2022, Corollary 3.3: Gaussian releases compose as sqrt(sum mu_i^2)): "
            f"noisy count (sensitivity 1, sd {c.count_sd:.4g}, mu {c.mu_count:.4g}), noisy sum "
            f"(L2 sensitivity R={self.bound:g}, sd {c.sum_sd:.4g} per coordinate, mu "
            f"{c.mu_sum:.4g}), noisy histogram of the distances to the released centre on the "
            f"public lattice {self.lattice.upper:g}*2^(-j/{self.lattice.bins_per_octave}), j < "
            f"{self.lattice.n_edges} (sensitivity 1, sd {r.histogram_sd:.4g} per bin, mu "
            f"{r.mu:.4g}); centre = noisy sum / max(noisy count, floor) projected into "
            f"B(0, R); radius = the lattice edge {self.radius:.6g} (j={r.index}): {rule}. "
            f"Lattice Gaussian (privlearn.mechanisms.gaussian), inflation included; public "
            f"inputs: R, d, the lattice, the rule and the budget split; the size n is not used."
        )

    def transform(self, X: Any) -> np.ndarray:
        """``X - centre`` with rows projected into ``B(0, radius)`` (a per-row map: rows of
        the result have L2 norm at most ``radius``). Never writes to ``X``."""
        X = check_data(X)
        if X.shape[1] != self.centre.shape[0]:
            raise ValueError(f"X has {X.shape[1]} columns, the scale {self.centre.shape[0]}")
        return project_ball(X - self.centre, self.radius)

    def inverse_transform(self, Y: Any) -> np.ndarray:
        """``Y + centre`` (e.g. centres found in the transformed space)."""
        Y = np.asarray(Y, dtype=np.float64)
        return Y + self.centre


def private_scale(
    X: Any,
    radius: float,
    mu: float,
    seed: int | None = None,
    *,
    quantile: float | None = None,
    tail_sd: float = DEFAULT_TAIL_SD,
    centre_share: float = DEFAULT_CENTRE_SHARE,
    count_share: float | None = None,
    lattice: RadiusLattice | None = None,
    clip: bool = False,
) -> PrivateScale:
    """Release a private centre and radius of ``X`` (rows in ``B(0, radius)``).

    The centre first (:func:`private_centre`, ``centre_share * mu**2``), then the radius of
    the distances to the released centre (:func:`private_radius`, the rest of ``mu**2``, on
    ``RadiusLattice(2 * radius)`` unless ``lattice`` is given). The two releases compose
    adaptively: ``mu`` spent ``= hypot(mu_centre, mu_radius) <= mu``. The same as
    :func:`release_scale` on ``centre_statistics(X, radius)`` and
    ``radius_histogram(X, ., .)``.

    Parameters
    ----------
    X : array_like of shape (n, d)
        Never written to.
    radius : float
        Public bound ``R`` on the row norms.
    mu : float
        GDP budget of the whole release, ``0 < mu <= 64``.
    seed : int or None
        Secret randomness (an int: reproducible; ``None``: key from the operating system).
    quantile : float in (0, 1) or None, default=None
    tail_sd : float > 0, default=3.0
        The radius rule (:func:`private_radius`): ``None``, the smallest edge with no more
        rows beyond it than ``tail_sd`` sd of the histogram's noise; a number, the fraction
        rule.
    centre_share : float in (0, 1), default=0.5
        Share of ``mu**2`` for the centre.
    count_share : float in (0, 1), optional
        Share of the centre's ``mu**2`` for its count (default :func:`default_count_share`).
    lattice : RadiusLattice, optional
        Default ``RadiusLattice(2 * radius)``.
    clip : bool, default=False
        Project rows outside ``B(0, radius)`` onto it instead of raising.

    Returns
    -------
    PrivateScale
    """
    radius = _check_radius(radius)
    plan = _plan(
        radius, mu, seed, quantile=quantile, tail_sd=tail_sd, centre_share=centre_share,
        count_share=count_share, lattice=lattice,
    )  # fmt: skip
    X = _checked_rows(X, radius, bool(clip))
    return plan.release(_centre_statistics(X, radius), lambda c, lat: radius_histogram(X, c, lat))


def release_scale(
    stats: CentreStatistics,
    histogram: Callable[[np.ndarray, RadiusLattice], Any],
    mu: float,
    seed: int | None = None,
    *,
    quantile: float | None = None,
    tail_sd: float = DEFAULT_TAIL_SD,
    centre_share: float = DEFAULT_CENTRE_SHARE,
    count_share: float | None = None,
    lattice: RadiusLattice | None = None,
) -> PrivateScale:
    """:func:`private_scale` from statistics: the entry point of a distributed fit.

    Parameters
    ----------
    stats : CentreStatistics
        The exact statistics of all rows (e.g. the sum over partitions of
        :func:`centre_statistics`).
    histogram : callable
        ``histogram(centre, lattice)`` returns the exact :func:`radius_histogram` of all rows
        for the released ``centre`` (e.g. summed over partitions); called once, after the
        centre is released.
    mu, seed, quantile, tail_sd, centre_share, count_share, lattice
        As in :func:`private_scale` (``R = stats.radius``).

    Returns
    -------
    PrivateScale
        Bit for bit the release of :func:`private_scale` on the same rows and seed.
    """
    if not isinstance(stats, CentreStatistics):
        raise TypeError(f"stats must be CentreStatistics, got {type(stats).__name__}")
    if not callable(histogram):
        raise TypeError("histogram must be a callable histogram(centre, lattice)")
    plan = _plan(
        stats.radius, mu, seed, quantile=quantile, tail_sd=tail_sd,
        centre_share=centre_share, count_share=count_share, lattice=lattice,
    )  # fmt: skip
    return plan.release(stats, histogram)


@dataclass(frozen=True)
class _Plan:
    """Checked parameters of one release (everything public, fixed before the data)."""

    radius: float
    mu_centre: float
    mu_radius: float
    seed: int
    quantile: float | None
    tail_sd: float
    count_share: float | None
    lattice: RadiusLattice

    def release(
        self, stats: CentreStatistics, histogram: Callable[[np.ndarray, RadiusLattice], Any]
    ) -> PrivateScale:
        share = self.count_share
        if share is None:
            share = default_count_share(stats.n_features)
        # every noise scale is found (or refused) before anything is released
        _sigma_for(1.0, self.mu_centre * math.sqrt(share), 1)
        _sigma_for(self.radius, self.mu_centre * math.sqrt(1.0 - share), stats.n_features)
        c = private_centre(
            stats, self.mu_centre, _sub_seed(self.seed, _STREAM_SCALE, 1), count_share=share
        )
        hist = histogram(c.centre, self.lattice)
        r = private_radius(
            hist, self.lattice, self.mu_radius, _sub_seed(self.seed, _STREAM_SCALE, 2),
            quantile=self.quantile, tail_sd=self.tail_sd,
        )  # fmt: skip
        return PrivateScale(
            centre=c.centre,
            radius=r.radius,
            mu=math.hypot(c.mu, r.mu),
            bound=self.radius,
            quantile=self.quantile,
            lattice=self.lattice,
            centre_release=c,
            radius_release=r,
            tail_sd=self.tail_sd,
        )


def _plan(
    radius: float,
    mu: Any,
    seed: Any,
    *,
    quantile: Any,
    tail_sd: Any,
    centre_share: Any,
    count_share: Any,
    lattice: Any,
) -> _Plan:
    mu = _check_mu(mu)
    quantile = None if quantile is None else _check_quantile(quantile)
    tail_sd = _check_tail_sd(tail_sd)
    centre_share = _check_share(centre_share)
    if count_share is not None:
        count_share = _check_share(count_share)
    if lattice is None:
        lattice = RadiusLattice(2.0 * radius)
    elif not isinstance(lattice, RadiusLattice):
        raise TypeError(f"lattice must be a RadiusLattice, got {type(lattice).__name__}")
    seed = as_seed(seed)
    if seed is None:  # one OS key for both releases
        seed = _sub_seed(None, _STREAM_SCALE, 0)
    mu_c, mu_r = mu * math.sqrt(centre_share), mu * math.sqrt(1.0 - centre_share)
    _sigma_for(1.0, mu_r, lattice.n_edges)
    return _Plan(radius, mu_c, mu_r, seed, quantile, tail_sd, count_share, lattice)
