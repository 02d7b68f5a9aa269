"""Thread control of the C++ core and its deterministic blocked reduction.

Every parallel routine of the core sums over rows in fixed blocks of ``REDUCE_BLOCK`` rows and
adds the block sums in order, so its result does not depend on the number of threads
(DESIGN.md, "Randomness"). The numpy twin is :mod:`privlearn.reference.parallel`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np

from privlearn import _core
from privlearn._checks import as_threads

__all__ = [
    "REDUCE_BLOCK",
    "blocked_column_sum",
    "get_num_threads",
    "has_openmp",
    "set_num_threads",
    "thread_limit",
]

#: Rows per reduction block.
REDUCE_BLOCK: int = _core.reduce_block


def has_openmp() -> bool:
    """True when the core was compiled with OpenMP (otherwise every routine runs serially)."""
    return bool(_core.has_openmp)


def get_num_threads() -> int:
    """Threads a core routine uses when called with ``n_threads=None``."""
    return int(_core.default_threads())


def set_num_threads(n_threads: int | None) -> None:
    """Set the default thread count (``None`` restores ``OMP_NUM_THREADS`` / all cores)."""
    _core.set_default_threads(as_threads(n_threads))


@contextlib.contextmanager
def thread_limit(n_threads: int | None) -> Iterator[None]:
    """Temporarily change the default thread count (not thread-safe across Python threads)."""
    previous = _core.default_threads()
    set_num_threads(n_threads)
    try:
        yield
    finally:
        _core.set_default_threads(previous)


def blocked_column_sum(X: np.ndarray, n_threads: int | None = None) -> np.ndarray:
    """Column sums of ``X`` by the deterministic blocked reduction.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite values; converted once to C-contiguous float64.
    n_threads : int or None
        ``None`` for the default, ``-1`` for all cores.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    return _core.blocked_column_sum(X, as_threads(n_threads))
