"""numpy twin of the deterministic blocked reduction (``cpp/include/privlearn/parallel.hpp``)."""

from __future__ import annotations

import numpy as np

__all__ = ["REDUCE_BLOCK", "blocked_column_sum"]

#: Rows per reduction block (``parallel::kReduceBlock`` in the core).
REDUCE_BLOCK = 256


def blocked_column_sum(X: np.ndarray, n_threads: int | None = None) -> np.ndarray:
    """Column sums of ``X``: rows summed in order inside blocks of ``REDUCE_BLOCK`` rows, then
    the block sums added in block order (the core's thread-independent reduction order).

    ``n_threads`` is accepted for signature compatibility and ignored.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    if not np.isfinite(X).all():
        raise ValueError("X contains a non-finite value")
    out = np.zeros(X.shape[1])
    for lo in range(0, X.shape[0], REDUCE_BLOCK):
        # cumsum is a strictly sequential sum, matching the core's in-block loop
        out = out + np.cumsum(X[lo : lo + REDUCE_BLOCK], axis=0)[-1]
    return out
