"""Shared pieces of the private k-means algorithms: input checks, the data-independent
Johnson-Lindenstrauss map, nearest-centre assignment, private noisy averaging
(Nissim, Stemmer & Vadhan 2016 as used by Chaturvedi et al. 2021, Algorithm 1) and one
differentially private Lloyd step."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize
from scipy.spatial import cKDTree

from privlearn._checks import as_index
from privlearn.accounting import PrivacyLedger, PrivacyStatement
from privlearn.exceptions import PrivacyLeakWarning
from privlearn.fixed_point import fixed_point_exponent, fixed_point_parts, fixed_point_value
from privlearn.mechanisms import discrete_laplace, gaussian
from privlearn.mechanisms.gaussian import analytic_gaussian_epsilon, gaussian_privacy
from privlearn.random import Stream

__all__ = [
    "KMeansDiagnostics",
    "KMeansPrivacyStatement",
    "SeedSource",
    "assign",
    "check_data",
    "jl_project",
    "kmeans_cost",
    "cluster_sums",
    "noisy_average",
    "noisy_centres",
    "noisy_centres_planned",
    "resolve_radius",
]

# stream ids of the estimator's own randomness (one purpose each)
STREAM_JL = 0x6B6D65616E730001  # "kmeans" | 1
STREAM_PICKS = 0x6B6D65616E730002
STREAM_SEEDS = 0x6B6D65616E730003
STREAM_INIT = 0x6B6D65616E730004
STREAM_SIZE = 0x6B6D65616E730005  # the noisy row count (kept apart: other noise unchanged)


@dataclass(frozen=True)
class KMeansPrivacyStatement(PrivacyStatement):
    """A :class:`~privlearn.accounting.PrivacyStatement` that also names how the data-set size
    was treated and every public input the guarantee takes as given.

    Attributes
    ----------
    dataset_size : str
        :meth:`privlearn.accounting.DatasetSize.describe` of the size the schedule used (a
        declared public size, a noisy count and its epsilon, or "not used").
    public_inputs : tuple of str
        The quantities the guarantee treats as public (``name=value``): they are not
        protected, and the guarantee holds only if they were not chosen by looking at the
        private data.
    """

    dataset_size: str = ""
    public_inputs: tuple[str, ...] = ()

    def __str__(self) -> str:
        lines = [super().__str__()]
        if self.dataset_size:
            lines.append(f"dataset size: {self.dataset_size}")
        if self.public_inputs:
            lines.append("public inputs: " + ", ".join(self.public_inputs))
        lines.append(
            "secret: the rows, the noise and the seed (secret randomness: an int seed makes "
            "runs reproducible for research; whoever knows it knows the noise -- not a release "
            "setting)"
        )
        return "\n".join(lines)


@dataclass(frozen=True)
class KMeansDiagnostics:
    """Diagnostics of one :class:`~privlearn.cluster.DPKMeans` fit. **NOT PRIVATE.**

    Every field is computed on the raw training data and is *not* covered by the fit's
    privacy statement: pickling, logging or publishing this object releases it. It is only
    created with ``DPKMeans(diagnostics=True)``, for experiments on non-sensitive data.

    Attributes
    ----------
    n_samples : int
        The exact number of training rows.
    labels : numpy.ndarray of int64, shape (n_samples,)
        Nearest released centre of every training row.
    inertia : float
        k-means cost of the training data at the released centres.
    maxcover : MaxCoverResult or None
        The greedy's picks together with their exact covers and grid sizes (max cover only).
    """

    n_samples: int
    labels: np.ndarray
    inertia: float
    maxcover: Any = None


class SeedSource:
    """Independent 63-bit sub-seeds for the mechanisms of one fit (from the fit's key), so that
    ``seed=None`` means OS entropy everywhere and an int seed reproduces the whole fit."""

    def __init__(self, seed: int | None) -> None:
        self.stream = Stream(seed, stream=0)
        self._seeds = self.stream.substream(STREAM_SEEDS)
        self._next = 0

    def __call__(self) -> int:
        value = int(self._seeds.raws(self._next, 1)[0] >> np.uint64(1))
        self._next += 1
        return value

    def substream(self, stream: int) -> Stream:
        return self.stream.substream(stream)  # type: ignore[return-value]

    def seed_for(self, stream: int) -> int:
        """A 63-bit seed from its own stream (independent of the ``__call__`` sequence)."""
        return int(self.substream(stream).raws(0, 1)[0] >> np.uint64(1))


#: Largest number of entries a sparse ``X`` may have once densified (DPKMeans works on dense
#: rows: its JL map, grid and averages read every coordinate).
MAX_DENSE_ENTRIES = 1 << 31

#: Relative slack of the radius check: a row of norm in ``(radius, radius * (1 + tol)]`` is
#: taken to be in the ball up to rounding (float32 data normalised to the radius: the float32
#: rounding of each entry, ``2**-24`` relative, shows in the float64 norm) and projected onto
#: the ball exactly as ``clip=True`` would (a per-row map); a row further out is an error (or
#: is clipped with ``clip=True``). The sensitivity stays ``radius``.
ROW_NORM_TOLERANCE = 1e-6


def check_data(X: Any, name: str = "X") -> np.ndarray:
    """``X`` as a C-contiguous float64 2-D array with finite entries (else ValueError).

    A scipy sparse matrix is checked (indices in range: ``check_format(full_check=True)``)
    and densified (at most :data:`MAX_DENSE_ENTRIES` entries); a pandas DataFrame with
    nullable columns (``Float64``, ``Int64``, ...) is converted when it holds no missing value
    (``pd.NA``), which raises a ``ValueError`` naming the row.
    """
    if isinstance(X, (str, bytes)) or X is None:
        raise TypeError(f"{name} must be a 2-D array of numbers, got {type(X).__name__}")
    X = _from_sparse(X, name)
    X = _from_pandas(X, name)
    try:
        arr = np.asarray(X)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a 2-D array of numbers: {exc}") from None
    if (
        arr.dtype == object
        or not (np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_))
        or np.issubdtype(arr.dtype, np.complexfloating)
    ):
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got {arr.ndim}-D")
    if arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"{name} must have at least one row and one column, got {arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.isfinite(arr).all():
        row = int(np.flatnonzero(~np.isfinite(arr).all(axis=1))[0])
        raise ValueError(f"{name} must be finite (NaN or inf in row {row})")
    return arr


def _from_sparse(X: Any, name: str) -> Any:
    """A scipy sparse ``X`` as a dense array (structure checked first: a malformed matrix
    would make scipy read out of bounds)."""
    from scipy import sparse

    if not sparse.issparse(X):
        return X
    shape = tuple(X.shape)
    if len(shape) != 2:
        raise ValueError(
            f"{name} must be 2-D (n_samples, n_features), got a {len(shape)}-D sparse array"
        )
    if X.dtype == object or not (
        np.issubdtype(X.dtype, np.number) or np.issubdtype(X.dtype, np.bool_)
    ) or np.issubdtype(X.dtype, np.complexfloating):
        raise TypeError(f"{name} must hold real numbers, got a sparse matrix of dtype {X.dtype}")
    if shape[0] * shape[1] > MAX_DENSE_ENTRIES:
        raise ValueError(
            f"{name} is a sparse {X.format.upper()} matrix of shape {shape}: DPKMeans works on "
            f"dense rows and densifies it, but {shape[0] * shape[1]} entries exceed "
            f"{MAX_DENSE_ENTRIES}; reduce the dimension first"
        )
    if hasattr(X, "check_format"):
        try:
            X.check_format(full_check=True)
        except ValueError as exc:
            raise ValueError(
                f"{name} is a malformed sparse {X.format.upper()} matrix: {exc}"
            ) from None
    return X.toarray()


def _from_pandas(X: Any, name: str) -> Any:
    """A pandas DataFrame (or Series) as float64, nullable extension columns included; missing
    values (``pd.NA`` / ``NaN``) raise a ValueError naming the first such row."""
    if not (hasattr(X, "isna") and hasattr(X, "to_numpy") and hasattr(X, "dtypes")):
        return X
    missing = np.asarray(X.isna())
    if missing.any():
        row = int(np.flatnonzero(missing.reshape(missing.shape[0], -1).any(axis=1))[0])
        raise ValueError(f"{name} has missing values (NA or NaN) in row {row}")
    try:
        return X.to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must hold real numbers: {exc}") from None


def resolve_radius(
    X: np.ndarray, radius: float | None, clip: bool, stacklevel: int = 4
) -> tuple[np.ndarray, float]:
    """The public radius ``Lambda`` and ``X`` inside ``B(0, Lambda)``.

    ``radius=None`` takes ``max ||x_i||`` from the data with a :class:`PrivacyLeakWarning`.
    Rows outside the ball raise ``ValueError`` unless ``clip=True``, which projects them onto
    the ball (a per-row map: privacy is preserved).
    """
    if radius is None:
        warn_data_radius(stacklevel)
        radius = data_radius(float(np.sqrt(row_sq_norms(X)).max()))
    radius = float(radius)
    if not (math.isfinite(radius) and radius > 0.0):
        raise ValueError(f"radius must be a finite number > 0, got {radius}")
    return clip_rows(X, radius, clip), radius


def warn_data_radius(stacklevel: int) -> None:
    """The :class:`PrivacyLeakWarning` of ``radius=None``."""
    warnings.warn(
        "radius=None: the data radius max ||x|| is computed from the private data and is "
        "not covered by the privacy guarantee; pass a public bound",
        PrivacyLeakWarning,
        stacklevel=stacklevel,
    )


def data_radius(max_norm: float) -> float:
    """The radius taken from the data: ``max ||x_i||`` (1 when every row is 0)."""
    return max_norm if max_norm > 0 else 1.0


def row_sq_norms(X: np.ndarray) -> np.ndarray:
    """``||x_i||**2`` of every row, summed over the columns in order: every row's value is
    the same whatever the other rows (no blocked or pairwise reduction), so a partition of
    the rows gets the bits of the whole array (the Dask fit relies on it)."""
    out = X[:, 0] * X[:, 0]
    for j in range(1, X.shape[1]):
        out += X[:, j] * X[:, j]
    return out


def clip_rows(X: np.ndarray, radius: float, clip: bool, first_row: int = 0) -> np.ndarray:
    """``X`` with rows of norm above ``radius`` projected onto the ball (``clip=True``) or a
    ``ValueError`` naming the first such row (numbered from ``first_row``) with its norm in
    full precision. Rows within :data:`ROW_NORM_TOLERANCE` (relative) of the radius are
    rounding, not data: they are projected in both cases. Never writes to ``X``: a copy is
    made when a row changes."""
    norms = np.sqrt(row_sq_norms(X))
    outside = norms > radius
    if outside.any():
        if not clip:
            far = norms > radius * (1.0 + ROW_NORM_TOLERANCE)
            if far.any():
                row = int(np.flatnonzero(far)[0])
                raise ValueError(
                    f"row {first_row + row} has norm {float(norms[row])!r} > radius={radius!r} "
                    f"(relative excess {norms[row] / radius - 1.0:.3g}, above the rounding "
                    f"tolerance {ROW_NORM_TOLERANCE:g}); pass clip=True to project such rows "
                    "onto the ball"
                )
        X = X.copy()
        X[outside] *= (radius / norms[outside])[:, None]
    return X


def project_ball(Y: np.ndarray, r: float = 1.0) -> np.ndarray:
    """Rows of ``Y`` projected onto the closed ball of radius ``r`` (rows inside unchanged)."""
    norms = np.sqrt(row_sq_norms(Y))
    scale = np.where(norms > r, r / np.maximum(norms, 1e-300), 1.0)
    out = Y * scale[:, None]
    # guard against rounding just above r
    norms2 = row_sq_norms(out)
    bad = norms2 > r * r
    if bad.any():
        out[bad] *= np.nextafter(1.0, 0.0) ** 4
    return out


def jl_project(
    X: np.ndarray, radius: float, p: int, stream: Stream
) -> tuple[np.ndarray, np.ndarray]:
    """``Y = X G / radius`` with ``G`` a data-independent ``(d, p)`` Gaussian matrix of entries
    ``N(0, 1/p)`` (Johnson-Lindenstrauss), rows projected (not rescaled) into the unit ball.
    Returns ``(Y, G)``."""
    G = jl_matrix(X.shape[1], p, stream)
    return project_rows(X, G, radius), G


def jl_matrix(d: int, p: int, stream: Stream) -> np.ndarray:
    """The data-independent ``(d, p)`` Gaussian map of :func:`jl_project`."""
    return stream.normal(0, d * p).reshape(d, p) / math.sqrt(p)


def project_rows(X: np.ndarray, G: np.ndarray, radius: float) -> np.ndarray:
    """``project_ball(X G / radius)`` with the product summed over ``d`` in order, row by row
    (not by BLAS, whose blocking may depend on the number of rows): a partition of the rows
    gets the bits of the whole array. Blocks of rows keep the work in cache."""
    out = np.empty((X.shape[0], G.shape[1]))
    step = 1 << 14
    for lo in range(0, X.shape[0], step):
        Xb = X[lo : lo + step]
        acc = Xb[:, 0:1] * G[0]
        for j in range(1, X.shape[1]):
            acc += Xb[:, j : j + 1] * G[j]
        out[lo : lo + step] = acc / radius
    return project_ball(out)


#: Rows (and centres) whose largest absolute entry is at most this are assigned by a k-d tree
#: on plain squared distances, which cannot overflow (``d * (2 * 2**400)**2 < 2**1024``).
_ASSIGN_SAFE = 2.0**400

#: Entries per block of :func:`assign` (rows times columns): 8 MiB of float64.
_ASSIGN_BLOCK_ENTRIES = 1 << 20


def assign(points: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """Index of the nearest centre of every point (ties: lowest index), always in
    ``[0, len(centers))``.

    A k-d tree of the centres answers each point on its own (no blocked matrix products, whose
    rounding may depend on the number of points), so a partition of the points gets the same
    labels as the whole array. Points or centres with entries above ``2**400`` (whose squared
    distances would overflow to ``inf``: the tree then answers "no neighbour") are assigned by
    :func:`_assign_scaled`, also row by row."""
    points = np.asarray(points, dtype=np.float64)
    centers = np.asarray(centers, dtype=np.float64)
    labels = np.empty(points.shape[0], dtype=np.int64)
    if points.shape[0] == 0:
        return labels
    if centers.size and float(np.abs(centers).max()) > _ASSIGN_SAFE:
        labels[:] = _assign_scaled(points, centers)
        return labels
    # by blocks of rows: the temporaries (|x|, the easy rows' copy) are a block's, not X's
    hard = np.empty(points.shape[0], dtype=bool)
    tree = cKDTree(centers)
    step = max(1, _ASSIGN_BLOCK_ENTRIES // max(1, points.shape[1]))
    for lo in range(0, points.shape[0], step):
        block = points[lo : lo + step]
        hb = hard[lo : lo + step]
        hb[:] = np.abs(block).max(axis=1) > _ASSIGN_SAFE
        if hb.any():
            easy = ~hb
            if easy.any():
                labels[lo : lo + step][easy] = tree.query(block[easy], k=1)[1]
        else:
            labels[lo : lo + step] = tree.query(block, k=1)[1]
    if hard.any():  # rare: all of them at once, as before
        labels[hard] = _assign_scaled(points[hard], centers)
    return labels


def _assign_scaled(points: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """Nearest centre without overflow: ``argmin_j |c_j|**2 - 2 <x, c_j>`` (the squared
    distance less ``|x|**2``, and less ``min_j |c_j|**2``), scaled per row by
    ``2**-(e_x + e_c)`` (exact powers of two, ``e_x`` and ``e_c`` the binary exponents of the
    row's and of the centres' largest entries), so the dot products are at most ``d`` in
    magnitude."""
    e_c = int(np.frexp(float(np.abs(centers).max()))[1]) if centers.size else 0
    Cs = np.ldexp(centers, -e_c)  # |entries| < 1
    e_x = np.frexp(np.abs(points).max(axis=1))[1]
    Xs = np.ldexp(points, -e_x[:, None])  # |entries| < 1
    c_max = np.abs(Cs).max(axis=1)
    safe = np.where(c_max > 0, c_max, 1.0)
    c_norm = c_max * np.linalg.norm(Cs / safe[:, None], axis=1)  # |c_j| 2**-e_c, no underflow
    # |c|**2 2**-(e_x + e_c) = (|c| 2**-e_c)**2 * 2**(e_c - e_x), less the same term of the
    # smallest centre (a constant per row: the argmin is unchanged), so that centres of equal
    # norm are told apart by <x, c> even when |c|**2 dwarfs it (huge centres, ordinary rows);
    # a term that overflows to inf belongs to a centre that cannot be the nearest
    sq = c_norm * c_norm
    with np.errstate(over="ignore"):
        first = np.ldexp((sq - sq.min())[None, :], (e_c - e_x)[:, None])
    score = first - 2.0 * (Xs @ Cs.T)
    return np.argmin(score, axis=1).astype(np.int64)


def kmeans_cost(X: np.ndarray, centers: np.ndarray) -> float:
    """``sum_i min_j ||x_i - c_j||**2`` (the k-means objective, Section 2.1)."""
    from sklearn.metrics import pairwise_distances_argmin_min

    from privlearn.parallel import fork_safe_threads

    with fork_safe_threads():  # scikit-learn's OpenMP reduction: one thread after fork()
        _, dist = pairwise_distances_argmin_min(X, centers)
    return float(np.dot(dist, dist))


def gaussian_sigma(sensitivity: float, epsilon: float, delta: float, size: int) -> float:
    """Smallest ``sigma`` (up to 1e-9 relative) such that :func:`privlearn.mechanisms.gaussian`
    with this sensitivity, ``size`` entries and the default lattice is ``(epsilon, delta)``-DP
    (analytic Gaussian, Balle & Wang 2018).

    Raises
    ------
    ValueError
        When no ``sigma`` reaches ``(epsilon, delta)``: the default lattice adds up to
        ``2**-12`` to ``mu = Delta / sigma``, so a target ``mu`` below that cannot be met.
        :class:`~privlearn.cluster.DPKMeans` calls it before any budget is spent.
    """

    def excess(mu: float) -> float:
        return analytic_gaussian_epsilon(mu, delta) - epsilon

    hi = 1.0
    while excess(hi) < 0.0:
        hi *= 2.0
    mu = float(optimize.brentq(excess, 1e-12, hi, xtol=1e-15, rtol=1e-12))
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


def noisy_average(
    X: np.ndarray,
    labels: np.ndarray,
    n_clusters: int,
    radius: float,
    epsilon: float,
    delta: float,
    seeds: SeedSource,
    ledger: PrivacyLedger | None,
    label: str,
) -> np.ndarray:
    """Private centres of the clusters ``{x_i : labels_i = j}`` (rows in ``B(0, radius)``):
    :func:`noisy_centres` of the exact :func:`cluster_sums`."""
    n_clusters = as_index(n_clusters, "n_clusters", lower=1, upper=1 << 31)
    stats = cluster_sums(X, labels, n_clusters, radius)
    return noisy_centres(stats, radius, epsilon, delta, seeds, ledger, label)


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
    n_clusters, d = hi.shape
    sums = fixed_point_value(hi, lo, fixed_point_exponent(radius))
    if math.isinf(epsilon):
        centers = np.zeros((n_clusters, d))
        nz = counts > 0
        centers[nz] = sums[nz] / counts[nz, None]
        return centers
    if ledger is not None:
        ledger.spend(epsilon, delta, label=label)
    noisy_counts = np.asarray(discrete_laplace(counts, 2.0 / epsilon, seeds()), dtype=np.float64)
    sigma = gaussian_sigma(radius, epsilon / 2.0, delta, d)
    centers = np.empty((n_clusters, d))
    for j in range(n_clusters):
        noisy_sum = np.asarray(gaussian(sums[j], radius, sigma, seeds()), dtype=np.float64)
        centers[j] = noisy_sum / max(noisy_counts[j], 1.0)
    return project_ball(centers, radius)


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
    The mechanisms and the order of the random draws are those of :func:`noisy_centres`
    (which calibrates its own noise and charges a ledger); nothing is charged here. Clusters
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
