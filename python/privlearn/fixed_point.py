"""Exact sums of bounded float values in fixed point (numpy side), so that a sum does not
depend on the order or the grouping of its terms: a distributed fit adds its partitions' sums
and gets the single-machine sum bit for bit.

A value ``v`` with ``|v| < 2**e`` (``e = fixed_point_exponent(bound)``) is truncated toward zero
(so ``|v|`` never grows and sensitivity bounds still hold) to a multiple of
``2**(e - FIXED_BITS)`` and split into two int64 parts of 26 bits, whose integer sums over up
to ``2**36`` rows fit in int64. Used by the impact coder (continuous outcomes) and DP k-means
(cluster sums); the C++ core's one-word variant for clipped gradients is
``cpp/include/privlearn/fixed_sum.hpp``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["FIXED_BITS", "fixed_point_exponent", "fixed_point_parts", "fixed_point_value"]

#: Fraction bits kept below the bound's binade.
FIXED_BITS = 52
_HALF_BITS = 26
_HALF_MASK = (1 << _HALF_BITS) - 1


def fixed_point_exponent(bound: float) -> int:
    """``e`` with ``|v| < 2**e`` for every ``|v| <= bound`` (one binade of headroom)."""
    return math.frexp(float(bound))[1] + 1


def fixed_point_parts(values: np.ndarray, exp: int) -> tuple[np.ndarray, np.ndarray]:
    """``(hi, lo)`` int64 with ``trunc(v * 2**(FIXED_BITS - exp)) = hi * 2**26 + lo``,
    ``0 <= lo < 2**26`` and ``|hi| <= 2**26``: sums of up to ``2**36`` rows of either part fit
    in int64, and integer sums are exact whatever the order or grouping of the rows."""
    q = np.trunc(np.ldexp(np.asarray(values, dtype=np.float64), FIXED_BITS - exp))
    q = q.astype(np.int64)
    return q >> _HALF_BITS, q & _HALF_MASK


def fixed_point_value(hi: np.ndarray, lo: np.ndarray, exp: int) -> np.ndarray:
    """The float64 value of summed fixed-point parts (a deterministic function of the integer
    sums: correctly rounded while ``|hi| < 2**53``)."""
    hi = np.asarray(hi, dtype=np.int64)
    lo = np.asarray(lo, dtype=np.int64)
    hi = hi + (lo >> _HALF_BITS)
    lo = lo & _HALF_MASK
    total = np.ldexp(hi.astype(np.float64), _HALF_BITS) + lo.astype(np.float64)
    return np.ldexp(total, exp - FIXED_BITS)
