"""The discrete Laplace (two-sided geometric) mechanism on integers, sampled exactly
(Canonne, Kamath & Steinke 2020, Algorithms 1-2)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from privlearn._checks import as_positive
from privlearn.mechanisms._bits import (
    STREAM_DISCRETE,
    BitSource,
    as_rational,
    as_seed,
    make_stream,
    sample_discrete_laplace,
    spend,
)

__all__ = ["MAX_DISCRETE_SCALE", "as_counts", "discrete_laplace"]

#: Largest accepted scale: noise of this size is already far beyond any meaningful count.
MAX_DISCRETE_SCALE = 2.0**40
_INT64_MAX = np.iinfo(np.int64).max
_MAX_COUNT = 1 << 62


def as_counts(counts: Any, name: str = "counts") -> np.ndarray:
    """``counts`` as an int64 array: integer dtypes, or floats with integral finite values."""
    if isinstance(counts, (str, bytes)) or counts is None:
        raise TypeError(f"{name} must be an integer or an array of integers")
    arr = np.asarray(counts)
    if np.issubdtype(arr.dtype, np.bool_) or arr.dtype == object:
        raise TypeError(f"{name} must hold integers, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.integer):
        if arr.size and (arr.max() > _MAX_COUNT or arr.min() < -_MAX_COUNT):
            raise ValueError(f"{name} must lie in [-2**62, 2**62]")
        return arr.astype(np.int64)
    if not np.issubdtype(arr.dtype, np.floating):
        raise TypeError(f"{name} must hold integers, got dtype {arr.dtype}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite integers (found NaN or inf)")
    if (arr != np.round(arr)).any() or (np.abs(arr) > _MAX_COUNT).any():
        raise ValueError(f"{name} must hold integral values (at most 2**62 in magnitude)")
    return arr.astype(np.int64)


def discrete_laplace(
    counts: Any,
    scale: float | Fraction,
    seed: int | None = None,
    *,
    ledger: Any = None,
    epsilon: float | None = None,
) -> int | np.ndarray:
    """Release integer ``counts`` with exact discrete Laplace (two-sided geometric) noise.

    Parameters
    ----------
    counts : int or array_like of int
        The counts (an integer dtype, or floats holding integers); noise is independent per
        entry.
    scale : float or fractions.Fraction
        ``t > 0``, at most ``2**40``: ``P(noise = z) = (1 - e^{-1/t}) / (1 + e^{-1/t})
        * e^{-|z|/t}``. A float is converted exactly (``Fraction(t)``), so the sampled
        distribution is the one with exactly this scale.
    seed : int or None, default=None
        ``None``: key from the operating system; an int: reproducible.
    ledger : object, optional
        ``ledger.spend(epsilon, 0.0, label="discrete_laplace")`` before any noise is drawn.
    epsilon : float, optional
        The privacy cost charged to the ledger: default ``1/t`` (counts of L1 sensitivity 1).
        For sensitivity ``k`` pass ``k/t``; a value below ``1/t`` is refused, since integer
        counts that change at all change by at least 1.

    Returns
    -------
    int or numpy.ndarray
        An int for scalar ``counts``, else an int64 array of the same shape.

    Notes
    -----
    Canonne, Kamath & Steinke (2020), "The discrete Gaussian for differential privacy",
    Algorithm 2 with ``scale = t/s`` in lowest terms, using exact Bernoulli(exp(-gamma)) draws
    (their Algorithm 1) in rational arithmetic and uniform integers from ChaCha20 64-bit draws
    by exact rejection: no floating point is involved, so the release has no floating-point
    side channel.

    *Privacy statement*: for integer-valued counts of L1 sensitivity ``k`` the release is
    ``(k/t)``-DP (the geometric mechanism; the privacy loss of one entry is
    ``(|z - c'| - |z - c|)/t <= |c - c'|/t``). Scale ``t`` gives ``(1/t)``-DP for sensitivity 1.
    """
    values = as_counts(counts)
    exact_scale = as_rational(scale, "scale", upper=MAX_DISCRETE_SCALE)
    floor_epsilon = 1.0 / float(exact_scale)
    if epsilon is None:
        charge = floor_epsilon
    else:
        charge = as_positive(epsilon, "epsilon")
        if charge < floor_epsilon * (1.0 - 1e-12):
            raise ValueError(
                f"epsilon={charge} understates the privacy loss of scale {float(exact_scale)}: "
                f"integer counts of sensitivity >= 1 cost at least 1/scale = {floor_epsilon}"
            )
    seed = as_seed(seed)
    spend(ledger, charge, 0.0, "discrete_laplace")
    source = BitSource(make_stream(seed, STREAM_DISCRETE))
    noise = sample_discrete_laplace(source, values.size, exact_scale).reshape(values.shape)
    if (np.abs(noise) > _INT64_MAX - _MAX_COUNT).any():  # |noise| > 2**62: never in practice
        raise OverflowError("counts + noise would overflow int64")
    out = values + noise
    return int(out) if out.ndim == 0 else out
