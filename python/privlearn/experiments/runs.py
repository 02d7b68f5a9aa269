"""How the reproductions seed and schedule their runs.

Belongs here: the rule that gives every run its own seed (:func:`derive_seed`), the thread
pool that runs many seeds at once (:func:`parallel_map`) and the BLAS thread limit every
reproduction runs under (:func:`one_blas_thread`). Not here: what a run computes (each
paper's package) or how its numbers are written (:mod:`privlearn.experiments.tables`).
"""

from __future__ import annotations

import contextlib
import hashlib
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Callable, TypeVar

__all__ = ["derive_seed", "one_blas_thread", "parallel_map"]

T = TypeVar("T")
R = TypeVar("R")


def derive_seed(*parts: Any) -> int:
    """A 64-bit seed that depends only on ``parts`` (e.g. paper, data set, setting, run index).

    The parts are joined with ``"/"`` and hashed with SHA-256, so the seed of one run does not
    depend on which other runs are done, nor on their order.
    """
    text = "/".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with every BLAS library (numpy's and scipy's OpenBLAS, MKL) on one thread.

    The reproductions call BLAS on small problems (scikit-learn's L-BFGS-B on a few dozen
    coefficients, products of a few thousand rows) from the several threads of
    :func:`parallel_map`; there an OpenBLAS team spins on its cores for every call and costs
    several times the CPU time of the work (issue 32: ``privlearn reproduce impact --quick``
    took 31 CPU-seconds with two BLAS threads, 12 with one). Parallelism comes from
    :func:`parallel_map` and the core's OpenMP instead. The results do not change: the quick
    runs write the same numbers either way (only the timing columns differ).

    threadpoolctl limits the libraries loaded when the block starts, so scipy's own OpenBLAS
    (loaded by ``scipy.linalg``, used by its L-BFGS-B) is loaded first.
    """
    import scipy.linalg  # noqa: F401  (loads scipy's BLAS, so that the limit reaches it)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def parallel_map(
    fn: Callable[[T], R],
    items: Sequence[T],
    *,
    n_jobs: int | None = None,
    desc: str = "",
    progress: bool = True,
) -> list[R]:
    """``[fn(x) for x in items]`` on a thread pool, in input order, with progress reports.

    Worth it when ``fn`` spends its time in code that releases the GIL (the C++ core, large
    numpy operations). Progress is a tqdm bar when stderr is a terminal, else a printed line
    about every 10% of the items.

    ``n_jobs=None``: the core's default thread count (:func:`privlearn.parallel.get_num_threads`:
    ``OMP_NUM_THREADS``, else every core), at most 8. A caller that capped its threads (a test
    worker under pytest-xdist sets ``OMP_NUM_THREADS=1``) gets no more threads here: on a
    loaded machine extra threads only add contention (issue 32 item 4: the quick k-means
    reproduction took 35 CPU-seconds on two threads, 25 on one, with the same results).
    """
    n = len(items)
    if n_jobs is None:
        from privlearn.parallel import get_num_threads

        n_jobs = min(get_num_threads(), 8)
    n_jobs = max(1, min(int(n_jobs), n))
    bar = None
    if progress and sys.stderr.isatty():
        try:
            from tqdm.auto import tqdm

            bar = tqdm(total=n, desc=desc, leave=False)
        except ImportError:  # pragma: no cover - tqdm is a dependency
            bar = None
    results: list[Any] = [None] * n
    step = max(1, n // 10)

    def report(done: int) -> None:
        if bar is not None:
            bar.update(1)
        elif progress and (done % step == 0 or done == n):
            print(f"{desc}: {done}/{n}", flush=True)

    try:
        if n_jobs == 1:
            for i, item in enumerate(items):
                results[i] = fn(item)
                report(i + 1)
        else:
            with ThreadPoolExecutor(max_workers=n_jobs) as pool:
                futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
                done = 0
                for fut in as_completed(futures):
                    results[futures[fut]] = fut.result()
                    done += 1
                    report(done)
    finally:
        if bar is not None:
            bar.close()
    return results
