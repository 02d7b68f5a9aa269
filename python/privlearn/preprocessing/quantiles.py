"""Differentially private quantiles by the exponential mechanism (Smith 2011), released on a
public lattice.

For one column clipped to a PUBLIC range ``[lower, upper]`` the candidate outputs are the
``G + 1`` points of a PUBLIC lattice, ``G = 2**lattice_bits``::

    p(j) = lower + j * ((upper - lower) / G)   for j = 0 .. G - 1 (capped at upper),
    p(G) = upper,

each computed in floating point from the integer ``j`` and the public range only, so the set
of values the mechanism can output does not depend on the data. The utility of lattice point
``j`` as the ``q``-quantile is ``u(j) = -|rank(j) - q n|`` with
``rank(j) = #{i : x_i <= p(j)}`` (clipped data, exact float comparisons), and the mechanism
releases ``p(j)`` with probability ``∝ exp(epsilon u(j) / 2)``: the exponential mechanism of
McSherry & Talwar (2007) over a finite, data-independent range, with the rank utility of
Smith (2011, Section 3: "Privacy-preserving statistical estimation with optimal convergence
rates", STOC 2011); Gillenwater, Joseph & Kulesza (2021, "Differentially private quantiles",
ICML, Section 3) restate its continuous version as the building block of JointExp.

Why a lattice. The textbook sampler picks an interval between consecutive sorted data points
and returns ``z_i + U (z_{i+1} - z_i)`` in doubles; which doubles that expression can produce
depends on the low bits of the data points ``z_i`` (Mironov 2012, "On significance of the
least significant bits for differential privacy", CCS, applied here to the uniform draw), so
an output can be impossible on one data set and likely on its neighbour, which no finite
epsilon covers. Here the data only decide WHICH public lattice point is output.

Sampling, with no floating point on the data beyond exact comparisons:

1. every clipped point is snapped to ``s_i = min{j : p(j) >= x_i}`` (an integer; exact
   comparisons against the lattice, so ``s_i <= j`` iff ``x_i <= p(j)``);
2. with ``s_(1) <= ... <= s_(n)`` sorted, ``a = (0, s_(1), ..., s_(n), G + 1)``, the lattice
   points of rank ``r`` are the integers of ``[a_r, a_{r+1})``: run ``r`` holds
   ``c_r = a_{r+1} - a_r`` of them (an exact integer; the ``c_r`` sum to ``G + 1``);
3. run ``r`` is chosen with probability exactly ``∝ c_r exp(-gamma_r)``,
   ``gamma_r = epsilon (|r - q n| - min_s |s - q n|) / 2`` an exact rational (runs with
   ``c_r = 0`` excluded), by the package's exact exponential-mechanism sampler
   (:mod:`privlearn.mechanisms._select`: a dyadic proposal ``∝ c_r 2**-k_r`` and an exact
   ``Bernoulli(exp(-(gamma_r - k_r ln 2)))``), then a uniform lattice index of the run by
   exact integer rejection sampling on 64-bit ChaCha20 draws.
   Together: ``P(j) ∝ exp(epsilon u(j) / 2)``, exactly.

Randomness comes from :class:`privlearn.random.Stream`: one key per call (from ``seed``, or
from the operating system when ``seed=None``) and one stream id per released quantile (its
run selection reads ``raw(0 ..)`` in order, its lattice index ``raw(2**62 ..)``), so the
quantiles of a call use independent draws.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from privlearn._checks import as_index, as_real
from privlearn.accounting import PrivacyStatement, PureDPAccountant, PureDPEvent
from privlearn.mechanisms._bits import BitSource, as_seed, spend
from privlearn.mechanisms._select import ExactSelector, WordSource
from privlearn.random import Stream

__all__ = [
    "DEFAULT_LATTICE_BITS",
    "PreprocessingPrivacy",
    "check_bounds",
    "check_epsilon",
    "check_lattice_bits",
    "check_levels",
    "dp_quantiles",
    "lattice_points",
    "quantile_statement",
]

#: Stream ids of this module: ``"prep"`` in ASCII, then the index of the released quantile.
STREAM_QUANTILE = 0x7072657000000000
#: The lattice index inside the chosen run reads ``raw(2**62 + t)`` of the quantile's stream
#: (the run selection reads ``raw(0), raw(1), ...``: a few dozen per quantile).
_LATTICE_DRAWS = 1 << 62
_MAX_SELECTIONS = 1 << 32
#: Default ``lattice_bits``: ``2**32`` cells per public range (a spacing of
#: ``(upper - lower) * 2.3e-10``, far below any statistical error of a private quantile).
DEFAULT_LATTICE_BITS = 32
_MAX_LATTICE_BITS = 52  # j <= 2**52 is exact in float64, and so is the count 2**52 + 1
_PYTHON_RUNS = 256  # up to this many runs the selection is set up in plain Python


@dataclass(frozen=True)
class PreprocessingPrivacy(PrivacyStatement):
    """The ``privacy_`` of a private preprocessing fit: a pure-DP
    :class:`~privlearn.accounting.PrivacyStatement` that also names the mechanism, the budget
    split and every public input.

    Attributes
    ----------
    mechanism : str
        What was run (``"exponential-mechanism quantiles on a public lattice (Smith 2011)"``,
        or ``"none"``).
    epsilon_per_quantile : float or None
        Epsilon of each released quantile (basic composition over all of them gives
        ``epsilon``); None when nothing was estimated.
    public_inputs : tuple of str
        ``name=value`` of the inputs the guarantee takes as given: they are not protected,
        and the guarantee holds only if they were not chosen by looking at the private data.
    released : str
        What the fitted object holds that depends on the data.
    """

    mechanism: str = ""
    epsilon_per_quantile: float | None = None
    public_inputs: tuple[str, ...] = field(default_factory=tuple)
    released: str = ""

    @property
    def private(self) -> bool:
        """Whether the guarantee is a finite epsilon."""
        return math.isfinite(self.epsilon)

    def __str__(self) -> str:
        lines = [super().__str__()]
        if self.mechanism:
            lines.append(f"mechanism: {self.mechanism}")
        if self.epsilon_per_quantile is not None:
            lines.append(
                f"epsilon per quantile: {self.epsilon_per_quantile:.6g} (basic composition)"
            )
        if self.public_inputs:
            lines.append("public inputs: " + ", ".join(self.public_inputs))
        if self.released:
            lines.append(f"released: {self.released}")
        lines.append(
            "secret: the rows, the noise and the seed (secret randomness: an int seed makes "
            "runs reproducible for research; whoever knows it knows the noise -- not a release "
            "setting)"
        )
        return "\n".join(lines)


# ---- argument checks (shared with the transformers) ------------------------------------------
def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """A float ``> 0``; ``inf`` (no privacy) is allowed, NaN and ``<= 0`` are not."""
    value = as_real(epsilon, name)
    if math.isnan(value) or value <= 0.0:
        raise ValueError(f"{name} must be > 0 (or inf for no privacy), got {value}")
    return value


def check_levels(levels: Any, name: str = "qs") -> np.ndarray:
    """Quantile levels as a 1-D float64 array (a scalar becomes one level) in ``[0, 1]``."""
    if isinstance(levels, (str, bytes)) or levels is None:
        raise TypeError(f"{name} must be a number or a sequence of numbers in [0, 1]")
    arr = np.asarray(levels)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers in [0, 1], got dtype {arr.dtype}")
    arr = np.atleast_1d(arr.astype(np.float64))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a scalar or a non-empty 1-D sequence, got {arr.shape}")
    bad = ~((arr >= 0.0) & (arr <= 1.0))  # NaN fails both comparisons
    if bad.any():
        raise ValueError(f"{name} must lie in [0, 1], got {arr[bad][0]}")
    return arr


def check_bounds(bounds: Any, n_features: int, name: str = "bounds") -> tuple[np.ndarray, ...]:
    """PUBLIC ``(lower, upper)``: two scalars, or two length-``n_features`` sequences (one
    range per feature); finite, with ``lower < upper`` for every feature."""
    if bounds is None:
        raise ValueError(
            f"{name} is required: a public range (lower, upper), global or per feature, "
            "fixed without looking at the private data"
        )
    if isinstance(bounds, (str, bytes)):
        raise TypeError(f"{name} must be a pair (lower, upper), got {type(bounds).__name__}")
    try:
        lower, upper = bounds
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a pair (lower, upper), got {bounds!r}") from None
    out = []
    for side, value in (("lower", lower), ("upper", upper)):
        arr = np.asarray(value)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{name}: {side} must be real number(s), got dtype {arr.dtype}")
        arr = arr.astype(np.float64)
        if arr.ndim == 0:
            arr = np.full(n_features, float(arr))
        if arr.shape != (n_features,):
            raise ValueError(
                f"{name}: {side} must be a scalar or have shape ({n_features},), got {arr.shape}"
            )
        if not np.isfinite(arr).all():
            j = int(np.flatnonzero(~np.isfinite(arr))[0])
            raise ValueError(f"{name}: {side} must be finite, feature {j} has {arr[j]}")
        out.append(arr)
    lo, hi = out
    if not (lo < hi).all():
        j = int(np.flatnonzero(~(lo < hi))[0])
        raise ValueError(
            f"{name}: need lower < upper for every feature; feature {j} has "
            f"lower={lo[j]!r}, upper={hi[j]!r}"
        )
    if not np.isfinite(hi - lo).all():
        raise ValueError(f"{name}: upper - lower overflows float64")
    return lo, hi


def check_lattice_bits(value: Any, name: str = "lattice_bits") -> int:
    """An int in ``[1, 52]``: the public lattice has ``2**value + 1`` points per range."""
    return as_index(value, name, lower=1, upper=_MAX_LATTICE_BITS)


def _check_column_data(x: Any) -> tuple[np.ndarray, bool]:
    """``x`` as a float64 ``(n, d)`` array (never the caller's buffer: only read), and whether
    it was 1-D."""
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"x must be a 1-D or 2-D array of numbers, got {type(x).__name__}")
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"x must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim not in (1, 2):
        raise ValueError(f"x must be 1-D (n,) or 2-D (n, d), got shape {arr.shape}")
    one_d = arr.ndim == 1
    arr = arr.reshape(-1, 1) if one_d else arr
    if arr.shape[1] == 0:
        raise ValueError("x has no columns")
    arr = arr.astype(np.float64, copy=False)
    finite = np.isfinite(arr)
    if not finite.all():
        i, j = (int(v) for v in np.argwhere(~finite)[0])
        raise ValueError(f"x must be finite; x[{i}, {j}] is NaN or infinite")
    return arr, one_d


# ---- the mechanism ---------------------------------------------------------------------------
def _lattice(j: np.ndarray, lo: Any, hi: Any, cells: int) -> np.ndarray:
    """``p(j)`` for int64 indices ``0 <= j <= cells`` (``lo``, ``hi``: scalars or per-column
    arrays that broadcast against ``j``): a function of ``j`` and the public range only,
    monotone non-decreasing in ``j``, with ``p(0) = lo`` and ``p(cells) = hi``."""
    step = (hi - lo) / cells  # cells is a power of two: exact unless subnormal
    p = np.minimum(lo + j.astype(np.float64) * step, hi)
    return np.where(j >= cells, hi, p)


def lattice_points(
    indices: Any, bounds: tuple[float, float], lattice_bits: int = DEFAULT_LATTICE_BITS
) -> np.ndarray:
    """The public lattice of :func:`dp_quantiles` on one range: ``p(j)`` for each index.

    Parameters
    ----------
    indices : array_like of int
        Lattice indices ``0 <= j <= 2**lattice_bits``.
    bounds : (float, float)
        One public range ``(lower, upper)``.
    lattice_bits : int, default=32
        ``G = 2**lattice_bits`` cells.

    Returns
    -------
    numpy.ndarray
        ``lower + j * ((upper - lower) / G)`` in float64, capped at ``upper``, and exactly
        ``upper`` for ``j = G``.
    """
    bits = check_lattice_bits(lattice_bits)
    lo, hi = (float(v[0]) for v in check_bounds(bounds, 1))
    j = np.asarray(indices)
    if j.dtype.kind not in "iu":
        raise TypeError(f"indices must be integers, got dtype {j.dtype}")
    j = j.astype(np.int64)
    cells = 1 << bits
    if j.size and (j.min() < 0 or j.max() > cells):
        raise ValueError(f"indices must lie in [0, {cells}]")
    return _lattice(j, lo, hi, cells)


def _snap(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, cells: int) -> np.ndarray:
    """``s = min{j : p(j) >= x}`` for every entry of the clipped ``(n, d)`` array ``x``
    (column ``c`` on the lattice of ``[lo[c], hi[c]]``), int64, by exact comparisons with the
    lattice: a guess from the arithmetic, checked, and a binary search where it is wrong."""
    step = (hi - lo) / cells
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        guess = np.ceil((x - lo) / step)  # 0/0 (a subnormal range) gives NaN: searched below
    guess[~(guess >= 0.0)] = 0.0
    s = np.minimum(guess, float(cells)).astype(np.int64)
    ok = _lattice(s, lo, hi, cells) >= x
    below = _lattice(np.maximum(s - 1, 0), lo, hi, cells) < x
    ok &= (s == 0) | below
    bad = ~ok
    if bad.any():  # invariant: p(high) >= x (p(cells) = hi >= x) and p(low - 1) < x
        xb = x[bad]
        lob = np.broadcast_to(lo, x.shape)[bad]
        hib = np.broadcast_to(hi, x.shape)[bad]
        low = np.zeros(xb.size, dtype=np.int64)
        high = np.full(xb.size, cells, dtype=np.int64)
        while (active := low < high).any():
            mid = (low + high) // 2
            above = _lattice(mid, lob, hib, cells) >= xb
            high = np.where(active & above, mid, high)
            low = np.where(active & ~above, mid + 1, low)
        s[bad] = high
    return s


def _uniform_below(stream: Stream, count: int) -> int:
    """A uniform integer in ``[0, count)``, ``1 <= count <= 2**62``, from the draws
    ``raw(2**62 + t)``, ``t = 0, 1, ...`` of ``stream``, by exact rejection: ``x`` is accepted
    iff ``x < 2**64 - (2**64 mod count)``, then ``x mod count`` is uniform."""
    limit = (1 << 64) - (1 << 64) % count
    t = 0
    while True:
        x = int(stream.raws(_LATTICE_DRAWS + t, 1)[0])
        if x < limit:
            return x % count
        t += 1


def _run_selector(
    counts: np.ndarray, keep: np.ndarray, n: int, q: float, epsilon: float
) -> ExactSelector:
    """The exact sampler of run ``keep[i]`` with probability ``∝ c exp(-gamma)``,
    ``gamma = epsilon (|r - q n| - d_min) / 2`` (exact rationals from the float ``q`` and
    ``epsilon``; ``d_min`` the smallest ``|r - q n|`` over the kept runs).

    With ``q = Q / 2**a`` and ``epsilon = E / 2**b`` (floats are dyadic):
    ``gamma = E (|r 2**a - Q n| - D_min) / 2**(a + b + 1)``, all integers. The proposal
    levels come from float estimates in plain Python (a run list of ``n + 1`` at most)."""
    q_num, q_den = q.as_integer_ratio()
    e_num, e_den = epsilon.as_integer_ratio()
    qn, t = q_num * n, q * n
    runs = keep.tolist()
    # float |r - q n|: absolute error below 2**-50 (n + r + 1); the exact minimiser of
    # |r - q n| over the runs is a neighbour of the float one (or itself). Lower bounds of
    # gamma: the float value less a generous bound on its rounding errors.
    if len(runs) <= _PYTHON_RUNS:  # plain Python is faster than numpy on a few runs
        dist = [abs(r - t) for r in runs]
        nearest = min(range(len(runs)), key=dist.__getitem__)
    else:
        dist_arr = np.abs(keep - t)
        nearest = int(np.argmin(dist_arr))
    d_min = min(abs(r * q_den - qn) for r in runs[max(nearest - 2, 0) : nearest + 3])
    shift, half, tol = d_min / q_den, 0.5 * epsilon, 2.0**-44
    if len(runs) <= _PYTHON_RUNS:
        lower: Any = [
            half * (d - shift) * (1.0 - tol) - tol * epsilon * (r + n + 1.0)
            for r, d in zip(runs, dist)
        ]
    else:
        lower = half * (dist_arr - shift) * (1.0 - tol) - tol * epsilon * (keep + (n + 1.0))
    den = 2 * e_den * q_den

    def gamma_exact(i: int) -> tuple[int, int]:
        return e_num * (abs(runs[i] * q_den - qn) - d_min), den

    return ExactSelector(counts[keep], lower, gamma_exact)


def _select(
    counts: np.ndarray,
    starts: np.ndarray,
    n: int,
    levels: np.ndarray,
    epsilon: float,
    base: Stream,
    first: int,
) -> np.ndarray:
    """Lattice indices (int64), one exponential-mechanism draw per level, for one column given
    the sizes ``counts[r]`` and first indices ``starts[r]`` of its runs of rank ``r``; quantile
    ``k`` draws from the substream of ``base`` with index ``first + k``."""
    keep = np.flatnonzero(counts > 0)  # runs with no lattice point have probability 0, exactly
    out = np.empty(levels.size, dtype=np.int64)
    for k, q in enumerate(levels):
        stream = base.substream(STREAM_QUANTILE | (first + k))
        selector = _run_selector(counts, keep, n, float(q), epsilon)
        run = int(keep[selector.draw(WordSource(BitSource(stream)))])
        # a uniform lattice index of rank `run`: exact integers only
        out[k] = int(starts[run]) + _uniform_below(stream, int(counts[run]))
    return out


def dp_quantiles(
    x: Any,
    qs: float | Sequence[float] | np.ndarray,
    epsilon: float,
    bounds: tuple[Any, Any],
    seed: int | None = None,
    ledger: Any = None,
    *,
    lattice_bits: int = DEFAULT_LATTICE_BITS,
) -> np.ndarray:
    """Differentially private quantiles of each column (Smith 2011, exponential mechanism),
    released on a public lattice.

    Parameters
    ----------
    x : array_like, shape (n,) or (n, d)
        The private data, one row per individual (never modified). Values outside ``bounds``
        are clipped to them. Must be finite.
    qs : float or sequence of float
        Quantile levels in ``[0, 1]`` (public).
    epsilon : float
        Total privacy budget of the call, ``> 0``; it is split evenly over the
        ``len(qs) * d`` released quantiles (basic composition: each is
        ``epsilon / (len(qs) d)``-DP). ``inf`` returns the exact (non-private) quantiles of
        the clipped data (``numpy.quantile``, linear interpolation, not on the lattice); it
        cannot be charged to a ledger.
    bounds : (lower, upper)
        PUBLIC range of the data: two scalars, or two length-``d`` sequences. Finite, with
        ``lower < upper``. They must not be derived from the private data.
    seed : int or None, default=None
        ``None`` keys the randomness from the operating system (for a release); an int makes
        the call reproducible (for research: the seed is part of the secret randomness, and
        whoever knows it knows the noise).
    ledger : object, optional
        ``ledger.spend(epsilon, 0.0, label="dp_quantiles")`` (e.g. a
        :class:`privlearn.accounting.PrivacyLedger`) is called after the input checks and
        before any statistic of ``x`` is computed: a refused spend releases nothing.
    lattice_bits : int, default=32
        PUBLIC resolution: each range ``[lower_j, upper_j]`` is cut into ``G = 2**lattice_bits``
        equal cells and every released value is one of the ``G + 1`` lattice points
        ``lower_j + i (upper_j - lower_j) / G`` (:func:`lattice_points`), in ``[1, 52]``.

    Returns
    -------
    numpy.ndarray
        Shape ``(len(qs),)`` for 1-D ``x`` and ``(len(qs), d)`` for 2-D ``x`` (a scalar ``qs``
        drops the first axis), like ``numpy.quantile(x, qs, axis=0)``. Each value is a point of
        the public lattice of its column, in ``[lower_j, upper_j]``; the quantiles of one
        column are drawn independently, so they need not be sorted.

    Notes
    -----
    *Mechanism.* Per column and level ``q``: clip to ``[lower, upper]``; release the lattice
    point ``p(j)`` with probability ``∝ exp(eps_q u(j) / 2)``, ``u(j) = -|rank(j) - q n|``,
    ``rank(j) = #{i : x_i <= p(j)}`` (Smith 2011, Section 3, on a finite range; Gillenwater,
    Joseph & Kulesza 2021, Section 3). It is sampled as a run of lattice points of equal rank,
    weighted by its number of points, then a uniform point of the run by exact integer
    rejection sampling (see the module notes); the run is selected by an exact sampler on
    rational exponents, so no exponential is evaluated in floating point whatever
    ``eps_q n`` and every lattice point keeps its positive probability.

    *Privacy statement.* ``(epsilon, 0)``-DP under add/remove-one neighbours (one row added to
    or removed from ``x``), for the exact sampler; see the floating-point note below. Public
    inputs: ``bounds``, ``qs``, ``lattice_bits``, the number of columns ``d`` and
    ``epsilon``; the seed is secret randomness. The size ``n`` is not public: it enters only
    through the utility, inside the mechanism, and nothing else (the set of possible
    outputs, the number of draws released, any error) depends on it; ``n = 0`` is allowed
    (the output is then uniform on the lattice). Proof: the range of the mechanism, the
    ``G + 1`` lattice points, is a function of the public inputs. Adding a row ``x*``
    changes every ``rank(j)`` by ``[x* <= p(j)]``, 0 or 1, and ``q n`` by ``q``, so every
    ``u(j)`` moves by at most ``max(q, 1 - q) <= 1`` (sensitivity 1); the exponential
    mechanism ``P(j) ∝ exp(eps_q u(j) / 2)`` over a fixed finite range is then
    ``eps_q``-DP (McSherry & Talwar 2007, Theorem 6; Dwork & Roth 2014, Theorem 3.10), the
    release ``p(j)`` is post-processing, and the ``len(qs) d`` draws compose to ``epsilon``.

    *Floating point.* The data reach the output only through integers: the snapped indices
    (exact comparisons ``x_i <= p(j)``), the run sizes ``c_r`` and the chosen lattice index.
    Releasing a double computed from the data, ``z_i + U (z_{i+1} - z_i)``, as the textbook
    sampler does, lets the low bits of the output depend on the data (Mironov 2012): for
    the median of 20 vs 21 points in ``(-1, 1)`` an event impossible on one side has
    probability 0.5 on the other, an empirical epsilon of at least 7.9 against a claim of 1
    (issue 19; ``tests/test_privacy_audits.py`` keeps that audit, 5.5 with its draws). The
    choice of the run is exact as well (issue 30): the exponents
    ``eps_q (|r - q n| - d_min) / 2`` are rationals computed exactly from the float inputs
    ``eps_q`` and ``q``, and the sampler realises ``P(r) ∝ c_r exp(-gamma_r)`` with exact
    Bernoulli trials (:mod:`privlearn.mechanisms._select`); floating point only guides its
    proposal. The Gumbel-max sampler it replaces could never choose a run trailing the best
    by more than about 40.3 in log-weight (its 52-bit uniforms bounded the Gumbels) and
    rounded ``q n``; both slacks are gone. ``eps_q`` is ``epsilon / (len(qs) d)`` rounded
    down, so the shares never add up to more than ``epsilon``.

    Examples
    --------
    >>> import numpy as np
    >>> from privlearn.preprocessing import dp_quantiles
    >>> x = np.random.default_rng(0).uniform(0.0, 10.0, size=(10_000, 2))
    >>> med = dp_quantiles(x, 0.5, epsilon=1.0, bounds=(0.0, 10.0), seed=0)
    >>> bool(np.all(np.abs(med - 5.0) < 0.2))
    True
    >>> j = med * 2**32 / 10.0                      # the lattice index of each output
    >>> bool(np.all(j == np.round(j)))
    True
    """
    levels = check_levels(qs)
    epsilon = check_epsilon(epsilon)
    seed = as_seed(seed)
    bits = check_lattice_bits(lattice_bits)
    arr, one_d = _check_column_data(x)
    n, d = arr.shape
    lo, hi = check_bounds(bounds, d)
    count = levels.size * d
    if count > _MAX_SELECTIONS:
        raise ValueError(f"too many quantiles requested: {count} > {_MAX_SELECTIONS}")
    if math.isinf(epsilon):
        if ledger is not None:
            raise ValueError("epsilon=inf is not private and cannot be charged to a ledger")
        clipped = np.clip(arr, lo, hi)
        out = (
            np.quantile(clipped, levels, axis=0)
            if n
            else np.tile(0.5 * (lo + hi), (levels.size, 1))
        )
    else:
        spend(ledger, epsilon, 0.0, "dp_quantiles")
        base = Stream(seed, stream=STREAM_QUANTILE)
        per = epsilon / count
        while Fraction(per) * count > Fraction(epsilon):  # the shares never exceed epsilon
            per = math.nextafter(per, 0.0)
        cells = 1 << bits
        # a_0 = 0, a_r = s_(r) (sorted snapped indices), a_{n+1} = G + 1, per column: the
        # lattice points of rank r are the integers of [a_r, a_{r+1})
        starts = np.empty((n + 2, d), dtype=np.int64)
        starts[0], starts[-1] = 0, cells + 1
        starts[1:-1] = np.sort(_snap(np.clip(arr, lo, hi), lo, hi, cells), axis=0)
        counts = np.diff(starts, axis=0)  # exact integers summing to G + 1 per column
        index = np.empty((levels.size, d), dtype=np.int64)
        for j in range(d):
            index[:, j] = _select(
                counts[:, j], starts[:-1, j], n, levels, per, base, j * levels.size
            )
        out = _lattice(index, lo, hi, cells)
    if one_d:
        out = out[:, 0]
    if np.ndim(qs) == 0:
        out = out[0]
    return out


def quantile_statement(
    epsilon: float, n_quantiles: int, public_inputs: tuple[str, ...], released: str
) -> PreprocessingPrivacy:
    """The :class:`PreprocessingPrivacy` of ``n_quantiles`` exponential-mechanism quantiles
    sharing ``epsilon`` evenly (``n_quantiles = 0``: nothing estimated, epsilon 0)."""
    if n_quantiles == 0:
        return PreprocessingPrivacy(
            epsilon=0.0,
            delta=0.0,
            accountant="pure",
            neighboring="add_remove",
            mechanism="none (public bounds only)",
            public_inputs=public_inputs,
            released=released,
        )
    if math.isinf(epsilon):
        return PreprocessingPrivacy(
            epsilon=math.inf,
            delta=0.0,
            accountant="none",
            neighboring=None,
            mechanism="exact quantiles (epsilon=inf): NOT private",
            public_inputs=public_inputs,
            released=released,
        )
    per = epsilon / n_quantiles
    accountant = PureDPAccountant(neighboring="add_remove")
    accountant.compose(PureDPEvent(per), count=n_quantiles)
    base = accountant.statement()
    return PreprocessingPrivacy(
        epsilon=epsilon,  # the budget the caller set and the ledger was charged
        delta=0.0,
        accountant=base.accountant,
        events=base.events,
        neighboring="add_remove",
        mechanism="exponential-mechanism quantiles on a public lattice (Smith 2011)",
        epsilon_per_quantile=per,
        public_inputs=public_inputs,
        released=released,
    )
