"""Exact per-level statistics of the impact encoder, shared by the in-memory fit
(:mod:`privlearn.encoding.impact`) and the Dask fit (:mod:`privlearn.distributed.encoding`).

What belongs here: the sums that turn rows into the per-level counts and outcome sums the
codes are computed from, in exact arithmetic (integer counts; int64 fixed-point sums of a
bounded outcome, :mod:`privlearn.fixed_point`), so that a statistic cannot depend on the
order of the rows or on how they are split into partitions. What does not: the codes and the
noise (:mod:`privlearn.encoding._codes`, the estimator's release step) and input handling
(:mod:`privlearn.encoding._input`).
"""

from __future__ import annotations

import numpy as np

from privlearn.fixed_point import fixed_point_exponent, fixed_point_parts, fixed_point_value

__all__ = ["int_sums", "level_stats"]


def level_stats(
    idx: np.ndarray, contrib: np.ndarray, size: int, bound: float | None = None
) -> np.ndarray:
    """Per slot, the sums of the rows' contributions (shape ``(size, m)``, float64; exact
    integers for counts).

    With ``bound`` (a continuous outcome with public bounds), the outcome column (column 1) is
    summed exactly in fixed point (:func:`fixed_point_parts`), so the sums do not depend on the
    order of the rows or on how they are split into partitions (the Dask fit adds the
    partitions' integer parts)."""
    out = np.empty((size, contrib.shape[1]), dtype=np.float64)
    for s in range(contrib.shape[1]):
        if bound is not None and s == 1:
            exp = fixed_point_exponent(bound)
            hi, lo = fixed_point_parts(contrib[:, s], exp)
            out[:, s] = fixed_point_value(int_sums(idx, hi, size), int_sums(idx, lo, size), exp)
        else:
            out[:, s] = np.bincount(idx, weights=contrib[:, s], minlength=size)
    return out


def int_sums(idx: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """Exact int64 sums of ``values`` per slot ``idx``."""
    out = np.zeros(size, dtype=np.int64)
    np.add.at(out, idx, values)
    return out
