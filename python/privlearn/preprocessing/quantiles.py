"""Differentially private quantiles by the exponential mechanism (Smith 2011).

For one column ``x_1 <= ... <= x_n`` clipped to a PUBLIC range ``[lower, upper]``, the sorted
points together with ``z_0 = lower`` and ``z_{n+1} = upper`` cut the range into ``n + 1``
intervals ``I_i = [z_i, z_{i+1}]``. Every point of ``I_i`` has exactly ``i`` data points
below it, so the utility of releasing a point of ``I_i`` as the ``q``-quantile is
``u_i = -|i - q n|``. The mechanism picks ``I_i`` with probability proportional to
``|I_i| exp(epsilon u_i / 2)`` and returns a uniform point of it: the output has density
proportional to ``exp(epsilon u(y) / 2)`` on ``[lower, upper]``, the continuous exponential
mechanism of McSherry & Talwar (2007) with the rank utility of Smith (2011, Section 3:
"Privacy-preserving statistical estimation with optimal convergence rates", STOC 2011);
Gillenwater, Joseph & Kulesza (2021, "Differentially private quantiles", ICML, Section 3)
restate it as the single-quantile building block of JointExp.

Sampling is done in log space with the Gumbel-max trick (the transform of
:func:`privlearn.mechanisms.exponential`): logits ``epsilon u_i / 2 + log |I_i|`` over the
intervals of positive length (an empty interval has probability 0, exactly), plus one
uniform for the position inside the chosen interval. Randomness comes from
:class:`privlearn.random.Stream`: one key per call (from ``seed``, or from the operating
system when ``seed=None``) and one stream id per released quantile, so the quantiles of
a call use independent draws whose addresses do not depend on the data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privlearn._checks import as_real
from privlearn.accounting import PrivacyStatement, PureDPAccountant, PureDPEvent
from privlearn.mechanisms._bits import as_seed, spend
from privlearn.random import Stream

__all__ = [
    "PreprocessingPrivacy",
    "check_bounds",
    "check_epsilon",
    "check_levels",
    "dp_quantiles",
    "quantile_statement",
]

#: Stream ids of this module: ``"prep"`` in ASCII, then the index of the released quantile.
STREAM_QUANTILE = 0x7072657000000000
_MAX_SELECTIONS = 1 << 32


@dataclass(frozen=True)
class PreprocessingPrivacy(PrivacyStatement):
    """The ``privacy_`` of a private preprocessing fit: a pure-DP
    :class:`~privlearn.accounting.PrivacyStatement` that also names the mechanism, the budget
    split and every public input.

    Attributes
    ----------
    mechanism : str
        What was run (``"exponential-mechanism quantiles (Smith 2011)"``, or ``"none"``).
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
        raise ValueError(f"x must be finite (no NaN or inf); x[{i}, {j}] is {arr[i, j]}")
    return arr, one_d


# ---- the mechanism ---------------------------------------------------------------------------
def _select(
    column: np.ndarray, levels: np.ndarray, epsilon: float, lo: float, hi: float, streams: list
) -> np.ndarray:
    """One exponential-mechanism draw per level for one (unclipped) column; ``streams[k]`` is
    the stream of level ``k`` (None when ``epsilon`` is inf)."""
    z = np.empty(column.size + 2)
    z[0], z[-1] = lo, hi
    z[1:-1] = np.sort(np.clip(column, lo, hi))
    lengths = np.diff(z)
    keep = np.flatnonzero(lengths > 0.0)  # hi > lo, so at least one interval has length > 0
    log_len = np.log(lengths[keep])
    n = column.size
    out = np.empty(levels.size)
    for k, q in enumerate(levels):
        if math.isinf(epsilon):
            out[k] = np.quantile(z[1:-1], q) if n else 0.5 * (lo + hi)
            continue
        logits = -0.5 * epsilon * np.abs(keep - q * n) + log_len
        raw = streams[k].raws(0, keep.size + 1)
        # Gumbels from raws 1..m exactly as privlearn.mechanisms.exponential makes them:
        # u = (k + 1/2) 2**-52 from 52 bits lies strictly inside (0, 1)
        u = ((raw[1:] >> np.uint64(12)).astype(np.float64) + 0.5) * 2.0**-52
        pick = keep[int(np.argmax(logits - np.log(-np.log(u))))]
        position = float(raw[0] >> np.uint64(11)) * 2.0**-53  # uniform in [0, 1)
        out[k] = min(z[pick] + position * lengths[pick], z[pick + 1])
    return out


def _streams(seed: int | None, count: int) -> list:
    base = Stream(seed, stream=STREAM_QUANTILE)
    return [base.substream(STREAM_QUANTILE | s) for s in range(count)]


def dp_quantiles(
    x: Any,
    qs: float | Sequence[float] | np.ndarray,
    epsilon: float,
    bounds: tuple[Any, Any],
    seed: int | None = None,
    ledger: Any = None,
) -> np.ndarray:
    """Differentially private quantiles of each column (Smith 2011, exponential mechanism).

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
        the clipped data (``numpy.quantile``, linear interpolation); it cannot be charged to
        a ledger.
    bounds : (lower, upper)
        PUBLIC range of the data: two scalars, or two length-``d`` sequences. Finite, with
        ``lower < upper``. They must not be derived from the private data.
    seed : int or None, default=None
        ``None`` keys the randomness from the operating system (for a release); an int makes
        the call reproducible (for research: whoever knows the seed knows the noise).
    ledger : object, optional
        ``ledger.spend(epsilon, 0.0, label="dp_quantiles")`` (e.g. a
        :class:`privlearn.accounting.PrivacyLedger`) is called after the input checks and
        before any statistic of ``x`` is computed: a refused spend releases nothing.

    Returns
    -------
    numpy.ndarray
        Shape ``(len(qs),)`` for 1-D ``x`` and ``(len(qs), d)`` for 2-D ``x`` (a scalar ``qs``
        drops the first axis), like ``numpy.quantile(x, qs, axis=0)``. Each value lies in
        ``[lower_j, upper_j]``; the quantiles of one column are drawn independently, so they
        need not be sorted.

    Notes
    -----
    *Mechanism.* Per column and level ``q``: clip to ``[lower, upper]``, sort, cut the range
    into the ``n + 1`` intervals between consecutive points (``lower`` and ``upper``
    included), pick interval ``i`` with probability ``∝ |I_i| exp(eps_q u_i / 2)`` where
    ``u_i = -|i - q n|``, and return a uniform point of it (Smith 2011, Section 3;
    Gillenwater, Joseph & Kulesza 2021, Section 3). Interval selection is Gumbel-max in log
    space, so no exponential overflows whatever ``eps_q n``.

    *Privacy statement.* ``(epsilon, 0)``-DP under add/remove-one neighbours (one row added to
    or removed from ``x``). Public inputs: ``bounds``, ``qs``, the number of columns ``d``
    and ``epsilon``. The size ``n`` is not public: it enters only through the utility, inside
    the mechanism, and nothing else (the number of draws released, the schedule, any error)
    depends on it; ``n = 0`` is allowed (the output is then uniform on the range). Proof: for
    any output ``y``, adding a row changes the rank ``#{x_i < y}`` by 0 or 1 and ``q n`` by
    ``q``, so ``u(y)`` changes by at most ``max(q, 1 - q) <= 1``; the density
    ``∝ exp(eps_q u(y) / 2)`` is therefore ``eps_q``-DP (McSherry & Talwar 2007, Theorem 6;
    Dwork & Roth 2014, Theorem 3.10), and the ``len(qs) d`` draws compose to ``epsilon``.
    Floating point: the Gumbels lie in about ``[-3.6, 36.7]`` (see
    :func:`privlearn.mechanisms.exponential`), so read the guarantee with a ``delta`` of the
    order of ``1e-16``.

    Examples
    --------
    >>> import numpy as np
    >>> from privlearn.preprocessing import dp_quantiles
    >>> x = np.random.default_rng(0).uniform(0.0, 10.0, size=(10_000, 2))
    >>> med = dp_quantiles(x, 0.5, epsilon=1.0, bounds=(0.0, 10.0), seed=0)
    >>> bool(np.all(np.abs(med - 5.0) < 0.2))
    True
    """
    levels = check_levels(qs)
    epsilon = check_epsilon(epsilon)
    seed = as_seed(seed)
    arr, one_d = _check_column_data(x)
    n, d = arr.shape
    lo, hi = check_bounds(bounds, d)
    count = levels.size * d
    if count > _MAX_SELECTIONS:
        raise ValueError(f"too many quantiles requested: {count} > {_MAX_SELECTIONS}")
    if math.isinf(epsilon):
        if ledger is not None:
            raise ValueError("epsilon=inf is not private and cannot be charged to a ledger")
        streams: list = [None] * count
    else:
        spend(ledger, epsilon, 0.0, "dp_quantiles")
        streams = _streams(seed, count)
    per = epsilon / count
    out = np.empty((levels.size, d))
    for j in range(d):
        out[:, j] = _select(
            arr[:, j], levels, per, lo[j], hi[j], streams[j * levels.size : (j + 1) * levels.size]
        )
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
        mechanism="exponential-mechanism quantiles (Smith 2011)",
        epsilon_per_quantile=per,
        public_inputs=public_inputs,
        released=released,
    )
