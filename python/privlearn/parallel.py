"""Thread control of the C++ core and its deterministic blocked reduction.

Every parallel routine of the core sums over rows in fixed blocks of ``REDUCE_BLOCK`` rows and
adds the block sums in order, so its result does not depend on the number of threads
(DESIGN.md, "Randomness"). The numpy twin is :mod:`privlearn.reference.parallel`.

How many threads a call uses
----------------------------
``n_threads`` (or the default, :func:`get_num_threads`) is a ceiling, not an order. Each
parallel region of the core estimates its work (in nanoseconds of one thread) and uses
``min(n_threads, cores, floor(work / MIN_THREAD_WORK_NS))`` threads, at least one.

A region ends in a barrier, and on a loaded machine (another process busy on one of the cores)
a thread is descheduled for a scheduler time slice while the others wait for it there: a
second thread only pays where each thread's share of the work is large next to that wait. So a
DP-SCD or DP-SGD step (a batch of a thousand rows: tens of microseconds) runs on one thread,
and a pass over a large data set or ten million random draws on all of them.
``MIN_THREAD_WORK_NS`` (0.25 ms; 6.5 ms when OpenMP threads spin instead of sleeping, see
:func:`min_thread_work_ns`) was measured with ``bench/python/bench_threads.py --calibrate``
(see ``cpp/include/privlearn/parallel.hpp``). Results never depend on the thread count.

The environment variable ``PRIVLEARN_MIN_THREAD_WORK_NS``, read once when the core is first
used, replaces it (``0`` switches the policy off: every region gets the requested count; for
measurements). ``import privlearn`` also sets ``OMP_WAIT_POLICY=PASSIVE`` unless it is already
set (see ``privlearn/__init__.py``).

fork()
------
OpenMP thread pools do not survive ``fork()``. In a forked child (os.fork, multiprocessing's
``fork`` start method, joblib's ``multiprocessing`` backend) every region of the core runs on
one thread (the core's ``pthread_atfork`` mark), and the OpenMP code privlearn calls in
scikit-learn runs under :func:`fork_safe_threads` (one thread): a fit after a fork completes,
with the same results.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator

import numpy as np

from privlearn import _core
from privlearn._checks import as_threads

__all__ = [
    "MIN_THREAD_WORK_NS",
    "MIN_THREAD_WORK_SPIN_NS",
    "REDUCE_BLOCK",
    "blocked_column_sum",
    "fork_safe_threads",
    "get_num_threads",
    "has_openmp",
    "in_forked_child",
    "min_thread_work_ns",
    "threads_for",
    "set_num_threads",
    "thread_limit",
]

#: Rows per reduction block.
REDUCE_BLOCK: int = _core.reduce_block

#: Minimum work per thread of a parallel region, in nanoseconds of one thread, when OpenMP
#: threads wait passively (``OMP_WAIT_POLICY=PASSIVE``, set by ``import privlearn``), and when
#: they spin: ``parallel::kMinThreadWorkNs`` and ``kMinThreadWorkSpinNs`` in
#: ``cpp/include/privlearn/parallel.hpp`` (exported by the core).
MIN_THREAD_WORK_NS: float = float(_core.MIN_THREAD_WORK_NS)
MIN_THREAD_WORK_SPIN_NS: float = float(_core.MIN_THREAD_WORK_SPIN_NS)

_ENV_MIN_WORK = "PRIVLEARN_MIN_THREAD_WORK_NS"


def _passive_waiting() -> bool:
    policy = "".join(os.environ.get("OMP_WAIT_POLICY", "").split()).lower()
    if policy != "passive":
        return False
    spin = os.environ.get("GOMP_SPINCOUNT", "").strip()
    try:
        return not spin or float(spin) == 0.0
    except ValueError:
        return False


def min_thread_work_ns() -> float:
    """Minimum work per thread (ns of one thread) the core's thread policy uses.

    ``PRIVLEARN_MIN_THREAD_WORK_NS`` when it holds a finite number >= 0 (``0``: the policy is
    off); else :data:`MIN_THREAD_WORK_NS` when the environment makes OpenMP threads wait
    passively (``OMP_WAIT_POLICY=PASSIVE`` and ``GOMP_SPINCOUNT`` unset or 0), else
    :data:`MIN_THREAD_WORK_SPIN_NS`. The core reads the environment once, at its first parallel
    call; this function reads it now (the same answer unless the environment changed since).
    """
    measured = MIN_THREAD_WORK_NS if _passive_waiting() else MIN_THREAD_WORK_SPIN_NS
    text = os.environ.get(_ENV_MIN_WORK, "").strip()
    try:
        value = float(text) if text else math.nan
    except ValueError:
        value = math.nan
    return value if math.isfinite(value) and value >= 0.0 else measured


def threads_for(n_threads: int | None, work_ns: float) -> int:
    """Threads the core's policy gives a parallel region of ``work_ns`` nanoseconds (of one
    thread) when asked for ``n_threads`` (``None``: the default): at most ``n_threads``, the
    cores, and one per :func:`min_thread_work_ns` of work; at least one."""
    return int(_core.threads_for(as_threads(n_threads), float(work_ns)))


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


def in_forked_child() -> bool:
    """True in a process created by ``fork()`` from a process that had imported privlearn.

    The C++ core keeps its own mark (a ``pthread_atfork`` handler) and runs every region on
    one thread there; :func:`fork_safe_threads` does the same for OpenMP code privlearn calls
    in other libraries.
    """
    import privlearn

    return bool(privlearn._FORK_STATE["forked_child"])


@contextlib.contextmanager
def fork_safe_threads() -> Iterator[None]:
    """Run third-party OpenMP code (scikit-learn's ``KMeans`` and pairwise reductions) safely
    in a forked child: there it runs under ``threadpoolctl.threadpool_limits(1, "openmp")``.

    A runtime's thread pool does not survive ``fork()``: a child whose parent used scikit-learn's
    OpenMP (e.g. a :class:`~privlearn.cluster.DPKMeans` fit, whose proxy k-means is
    scikit-learn's) deadlocks at its next multi-threaded region (multiprocessing's ``fork``
    start method, joblib's ``multiprocessing`` backend, a bare ``os.fork()``). One thread opens
    no team, so the child runs; results do not depend on the thread count. Outside a forked
    child this is a no-op (scikit-learn keeps its own thread count).
    """
    if not in_forked_child():
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="openmp"):
        yield


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
