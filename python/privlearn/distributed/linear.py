"""Gaussian DP-SGD and DP-SCD (dual) on row-chunked ``dask.array`` data with Dask.distributed.

Each worker keeps its rows (and DP-SCD's dual variables) in place, in one long-lived actor per
worker; per step the driver broadcasts the iterate, every actor samples its own rows of the
Poisson batch, computes its clipped partial sum in int64 fixed point and returns it, and the
driver adds the partial sums, adds the noise once and updates the iterate
(:func:`privlearn._core.sgd_apply_units` / ``scd_apply_units``, the single-machine trainer's own
code). Three properties of the core make the result equal to the single-machine fit **bit for
bit** for any chunking and worker count (``sgd.hpp``, ``scd.hpp``):

- the Poisson sampler walks each block of 2**20 rows separately, addressed by block
  (``POISSON_LAYOUT_VERSION`` 2), so a worker samples exactly its part of the batch;
- the clipped contributions are bounded, so they are summed exactly in fixed point
  (``fixed_sum.hpp``): integer sums do not depend on how the rows are split;
- DP-SCD's per-row noise on the dual variables is addressed by the row's global index.

The guarantee and the accounting are those of the single-machine run. **The driver is
trusted**: it sees the workers' noiseless partial sums before it adds the noise (a site that does
not trust it needs secure aggregation, which privlearn does not provide).

Per-step synchronisation costs one actor round trip per step (measured: 0.5 ms in-process, 2.4 ms
between processes on one host, more across hosts), so distributed runs pay off with large
batches: see ``bench/python/bench_distributed.py`` for the projection.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from privlearn import _core
from privlearn._checks import as_threads
from privlearn._specs.arguments import check_keywords
from privlearn._specs.scd import (
    SCD_DEFAULTS,
    SCDRun,
    check_scd_result,
    prepare_scd_spec,
    scd_step_count,
)
from privlearn._specs.sgd import SGD_DEFAULTS, SGDRun, SgdSpec, check_sgd_iterate, sgd_step_count
from privlearn._specs.softmax import (
    SOFTMAX_DEFAULTS,
    SoftmaxRun,
    as_initial_weights,
    check_softmax_iterate,
    prepare_softmax_spec,
    softmax_step_count,
)
from privlearn.backends import DistributedRows
from privlearn.progress import as_verbose, progress_bar

__all__ = [
    "DaskRows",
    "as_dask_rows",
    "check_dense_chunks",
    "is_dask_array",
    "scd_train",
    "sgd_train",
    "softmax_sgd_train",
]


def is_dask_array(X: Any) -> bool:
    """Whether ``X`` is a ``dask.array.Array`` (without importing dask when it is not loaded)."""
    import sys

    da = sys.modules.get("dask.array")
    return da is not None and isinstance(X, da.Array)


def _sparse_kind(obj: Any) -> str | None:
    """``"scipy.sparse"`` or ``"sparse"`` (pydata) when ``obj`` is a sparse matrix/array of one
    of them, else ``None`` (without importing either library)."""
    import sys

    scipy_sparse = sys.modules.get("scipy.sparse")
    if scipy_sparse is not None and scipy_sparse.issparse(obj):
        return "scipy.sparse"
    module = type(obj).__module__ or ""
    if module == "sparse" or module.startswith("sparse."):
        return "sparse"
    return None


def sparse_chunks_message(name: str, kind: str, chunk_type: str) -> str:
    """The refusal of a dask array with sparse chunks: what is wrong and the two fixes."""
    densify = "b.todense()" if kind == "sparse" else "b.toarray()"
    return (
        f"{name} is a dask array with sparse chunks ({chunk_type}): a fit on Dask needs dense "
        f"numpy chunks. Densify the chunks ({name}.map_blocks(lambda b: {densify}, "
        f"dtype={name}.dtype)), or, if the data fit in memory, fit a scipy.sparse.csr_matrix "
        "directly (the in-memory fits accept CSR input)"
    )


def check_dense_chunks(X: Any, name: str = "X") -> None:
    """Refuse a ``dask.array`` whose chunks are not dense numpy arrays, from its ``_meta`` (the
    chunk type dask infers; nothing is computed): sparse chunks (``scipy.sparse`` matrices,
    pydata ``sparse`` arrays) raise ``TypeError`` naming the fixes, as do other array types
    (CuPy, ...). The workers check each chunk again (:func:`check_dense_chunk`) for a ``_meta``
    that does not tell the truth."""
    meta = getattr(X, "_meta", None)
    if meta is None or isinstance(meta, np.ndarray):
        return
    kind = _sparse_kind(meta)
    if kind is not None:
        raise TypeError(sparse_chunks_message(name, kind, f"{kind}.{type(meta).__name__}"))
    chunk_type = f"{type(meta).__module__}.{type(meta).__name__}"
    raise TypeError(
        f"{name} is a dask array with chunks of type {chunk_type}: a fit on Dask needs dense "
        f"numpy chunks (convert them with {name}.map_blocks(numpy.asarray))"
    )


def check_dense_chunk(block: Any, name: str = "X") -> None:
    """A worker's check of one chunk (its type, before any conversion): ``TypeError`` for a
    sparse chunk, as :func:`check_dense_chunks`."""
    if isinstance(block, np.ndarray):
        return
    kind = _sparse_kind(block)
    if kind is not None:
        raise TypeError(sparse_chunks_message(name, kind, f"{kind}.{type(block).__name__}"))


class DaskRows(DistributedRows):
    """A validated row-chunked design matrix on a Dask cluster (a
    :class:`~privlearn.backends.DistributedRows`): float64, one column chunk, known row
    chunks. ``shape`` and ``row_chunks`` are public (the chunk sizes are the workers' own
    business and never shape a release; the size itself is treated as the estimators say:
    private unless declared)."""

    def __init__(self, array: Any) -> None:
        self.array = array
        self.shape: tuple[int, int] = (int(array.shape[0]), int(array.shape[1]))
        self.row_chunks: tuple[int, ...] = tuple(int(c) for c in array.chunks[0])

    def map_rows(self, func: Any, n_columns: int) -> DaskRows:
        """``func`` applied to every chunk of rows (a per-row map: the result does not depend
        on the chunking when ``func`` treats each row on its own)."""
        out = self.array.map_blocks(
            func, dtype=np.float64, chunks=(self.array.chunks[0], (n_columns,))
        )
        return DaskRows(out)


def as_dask_rows(X: Any, name: str = "X") -> DaskRows:
    """Validate a ``dask.array`` design matrix: 2-D, real, known chunk sizes; rechunked to one
    column chunk and cast to float64 (lazily)."""
    if not is_dask_array(X):
        raise TypeError(f"{name} must be a dask.array.Array, got {type(X).__name__}")
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got {X.ndim} dimension(s)")
    check_dense_chunks(X, name)
    if any(math.isnan(c) for c in X.chunks[0]) or any(math.isnan(c) for c in X.chunks[1]):
        raise ValueError(
            f"{name} has unknown chunk sizes: call {name}.compute_chunk_sizes() first (the "
            "row offsets of every chunk address the random draws)"
        )
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"{name} must have at least one row and one column, got {X.shape}")
    if X.dtype.kind == "c":
        raise TypeError(f"{name} must be real, got complex values")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold numbers, got dtype {X.dtype}")
    if len(X.chunks[1]) != 1:
        X = X.rechunk({1: -1})
    if X.dtype != np.float64:
        X = X.astype(np.float64)
    return DaskRows(X)


def as_dask_target(y: Any, rows: DaskRows, name: str = "y", *, numeric: bool = True) -> Any:
    """``y`` (dask or numpy, 1-D, one value per row) as a dask array chunked like the rows of
    ``rows``: float64 when ``numeric`` (targets, +-1 labels), else as given (class labels)."""
    import dask.array as da

    if not is_dask_array(y):
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {y.shape}")
        y = da.from_array(y, chunks=(rows.row_chunks,))
    check_dense_chunks(y, name)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got {y.ndim} dimension(s)")
    if any(math.isnan(c) for c in y.chunks[0]):
        raise ValueError(f"{name} has unknown chunk sizes: call {name}.compute_chunk_sizes()")
    if y.shape[0] != rows.shape[0]:
        raise ValueError(f"{name} has {y.shape[0]} entries but X has {rows.shape[0]} rows")
    if tuple(y.chunks[0]) != rows.row_chunks:
        y = y.rechunk((rows.row_chunks,))
    if not numeric:
        return y
    if y.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold numbers, got dtype {y.dtype}")
    return y.astype(np.float64)


def _client(client: Any) -> Any:
    if client is not None:
        return client
    from distributed import get_client

    try:
        return get_client()
    except ValueError as err:
        raise RuntimeError(
            "no Dask client: start one (distributed.Client(...), or LocalCluster) before "
            "fitting on dask arrays, or pass client="
        ) from err


# ---- workers -----------------------------------------------------------------------------------
class _RowsWorker:
    """Actor holding one worker's chunks of rows: ``(offset, X, y)`` with global row offsets.
    Checks its rows once (finite X and y, labels) and then answers step requests."""

    def __init__(self, offsets: list[int], xs: list[np.ndarray], ys: list[np.ndarray]) -> None:
        self.chunks = []
        for offset, X, y in zip(offsets, xs, ys):
            check_dense_chunk(X, "X")
            check_dense_chunk(y, "y")
            X = np.ascontiguousarray(X, dtype=np.float64)
            y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
            self.chunks.append((int(offset), X, y))

    def check(self, labels: bool, n_classes: int = 0) -> tuple[int, str]:
        """``(global row, what)`` of the first bad value in this worker's rows, or ``(-1, "")``
        (the driver raises for the first one over all workers). ``labels``: y must be +-1;
        ``n_classes > 0``: y must hold integer class codes in ``[0, n_classes)``."""
        for offset, X, y in self.chunks:
            bad_x = ~np.isfinite(X).all(axis=1)
            bad_y = ~np.isfinite(y)
            if labels:
                bad_y |= (y != 1.0) & (y != -1.0)
            if n_classes > 0:
                with np.errstate(invalid="ignore"):
                    bad_y |= (y != np.floor(y)) | (y < 0) | (y >= n_classes)
            bad = np.flatnonzero(bad_x | bad_y)
            if bad.size:
                i = int(bad[0])
                return offset + i, "X" if bad_x[i] else "y"
        return -1, ""


class _SgdWorker(_RowsWorker):
    def setup(self, n_total: int, args: tuple, extra: dict) -> None:
        self.n_total, self.args, self.extra = n_total, args, extra

    def partial_sum(self, w: np.ndarray, t: int) -> np.ndarray:
        """This worker's clipped gradient sum of step ``t`` in fixed-point units."""
        total = np.zeros(w.shape[0], dtype=np.int64)
        for offset, X, y in self.chunks:
            total += _core.sgd_partial_sum_dense(
                X, y, w, t, offset, self.n_total, *self.args, **self.extra
            )
        return total


class _SoftmaxWorker(_RowsWorker):
    def setup(self, n_total: int, n_classes: int, args: tuple, extra: dict) -> None:
        self.n_total, self.n_classes, self.args, self.extra = n_total, n_classes, args, extra
        self.labels = [y.astype(np.int64) for _, _, y in self.chunks]

    def partial_sum(self, w: np.ndarray, t: int) -> np.ndarray:
        """This worker's clipped gradient sum of step ``t`` (fixed-point units, class after
        class; ``w`` the flattened ``(d, K)`` iterate)."""
        total = np.zeros(w.shape[0], dtype=np.int64)
        for (offset, X, _), labels in zip(self.chunks, self.labels):
            total += _core.softmax_partial_sum_dense(
                X, labels, w, self.n_classes, t, offset, self.n_total, *self.args, **self.extra
            )
        return total


class _ScdWorker(_RowsWorker):
    def setup(self, n_total: int, args: tuple, extra: dict) -> None:
        self.n_total, self.args, self.extra = n_total, args, extra
        self.alpha = [np.zeros(X.shape[0]) for _, X, _ in self.chunks]
        self.last = [np.zeros(X.shape[0], dtype=np.int64) for _, X, _ in self.chunks]

    def partial_step(self, v: np.ndarray, t: int) -> tuple[np.ndarray, int]:
        """This worker's part of step ``t``: ``(update sum in fixed-point units, first
        non-finite row or -1)``; its dual variables are updated in place."""
        total = np.zeros(v.shape[0], dtype=np.int64)
        bad = -1
        for (offset, X, y), alpha, last in zip(self.chunks, self.alpha, self.last):
            units, b = _core.scd_partial_step_dense(
                X, y, alpha, last, v, t, offset, self.n_total, *self.args, **self.extra
            )
            total += units
            if bad < 0 <= b:
                bad = int(b)
        return total, bad

    def dual_variables(self, steps: int) -> list[tuple[int, np.ndarray]]:
        """The final alpha of this worker's chunks (with the outstanding catch-up noise)."""
        out = []
        for (offset, _, _), alpha, last in zip(self.chunks, self.alpha, self.last):
            a = alpha.copy()
            _core.scd_finish_alpha(a, last, steps, offset, self.n_total, *self.args, **self.extra)
            out.append((offset, a))
        return out


def _start_workers(client: Any, rows: DaskRows, y: Any, cls: type) -> list[Any]:
    """One actor of ``cls`` per worker that holds chunks, given its chunks (where they are).
    Returns ``[(actor, future)]``: the future keeps the actor alive on its worker (dask drops
    an actor once no future refers to it), so the caller holds the list for the whole run."""
    from distributed import futures_of, wait

    X = client.persist(rows.array)
    y = client.persist(y)
    x_futures = futures_of(X)
    y_futures = futures_of(y)
    wait(x_futures + y_futures)
    x_by_key = {f.key: f for f in x_futures}
    y_by_key = {f.key: f for f in y_futures}
    x_keys = [k[0] for k in X.__dask_keys__()]  # one column chunk: [[key], [key], ...]
    y_keys = list(y.__dask_keys__())
    offsets = np.concatenate([[0], np.cumsum(rows.row_chunks)[:-1]]).astype(int)
    who_has = client.who_has([x_by_key[k] for k in x_keys])
    groups: dict[str, list[int]] = defaultdict(list)
    for i, k in enumerate(x_keys):
        holders = sorted(who_has.get(k, ()))
        groups[holders[0] if holders else ""].append(i)
    actors = []
    for worker, idx in sorted(groups.items()):
        fut = client.submit(
            cls,
            [int(offsets[i]) for i in idx],
            [x_by_key[x_keys[i]] for i in idx],
            [y_by_key[y_keys[i]] for i in idx],
            actor=True,
            workers=[worker] if worker else None,
            pure=False,
        )
        actors.append((fut.result(), fut))
    return actors


def _check_rows(actors: list[Any], labels: bool, n_classes: int = 0) -> None:
    found = [r for r in (a.check(labels, n_classes).result() for a in actors) if r[0] >= 0]
    if not found:
        return
    row, what = min(found)
    if what == "X":
        raise ValueError(f"X contains NaN or infinite values (row {row})")
    if n_classes > 0:
        raise ValueError(
            f"y must hold integer class labels in [0, n_classes = {n_classes}) (row {row})"
        )
    if labels:
        raise ValueError(f"labels must be -1 or +1 for this loss, and finite (row {row} of y)")
    raise ValueError(f"y contains NaN or infinite values (row {row})")


@contextmanager
def _workers(
    client: Any,
    rows: DaskRows,
    y: Any,
    cls: type,
    setup: tuple,
    *,
    labels: bool = False,
    n_classes: int = 0,
) -> Iterator[list[Any]]:
    """The actors of a run: started where the chunks are, their rows checked, ``setup(*setup)``
    called on each; dropped (with the futures that keep them alive) when the run ends."""
    held = _start_workers(client, rows, y, cls)
    actors = [a for a, _ in held]
    try:
        _check_rows(actors, labels, n_classes)
        for f in [a.setup(*setup) for a in actors]:
            f.result()
        yield actors
    finally:
        del actors, held


def _summed_units(parts: list[Any], size: int) -> np.ndarray:
    """The exact int64 sum of the workers' fixed-point partial sums (any order)."""
    units = np.zeros(size, dtype=np.int64)
    for p in parts:
        units += p.result()
    return units


# ---- trainers ----------------------------------------------------------------------------------
_LOADING = "loading the rows onto the workers"  # the bar's note until the first step


def _gradient_steps(
    client: Any,
    rows: DaskRows,
    y: Any,
    worker: type,
    setup: tuple,
    w: np.ndarray,
    steps: int,
    apply: Any,
    desc: str,
    verbose: int,
    n_classes: int = 0,
) -> np.ndarray:
    """The driver's loop of a distributed DP-SGD run (binary or multinomial): per step ``t``,
    the workers' fixed-point partial sums at the iterate ``w``, added exactly, then
    ``w = apply(w, units, t)`` (the core's noise and update, as the single-machine trainer);
    a bar of the steps as ``verbose`` says. Returns the last iterate."""
    bar = progress_bar(verbose, steps, f"{desc} on dask", "step")
    try:
        bar.set_postfix_str(_LOADING)
        with _workers(client, rows, y, worker, setup, n_classes=n_classes) as actors:
            bar.set_postfix_str("")
            for t in range(steps):
                units = _summed_units([a.partial_sum(w, t) for a in actors], w.shape[0])
                w = apply(w, units, t)
                bar.update()
    finally:
        bar.close()
    return w


def sgd_train(
    X: Any,
    y: Any,
    *,
    key: bytes,
    w0: Any = None,
    n_threads: int | None = None,
    client: Any = None,
    verbose: int = 1,
    **kw: Any,
) -> SGDRun:
    """:func:`privlearn.linear.sgd_train` on a row-chunked ``dask.array`` (Gaussian or no
    noise, Poisson sampling, ``clip > 0``): the same arguments and, bit for bit, the same
    result for any chunking and number of workers.

    Parameters
    ----------
    X : dask.array.Array or DaskRows of shape (n_samples, n_features)
        Known chunk sizes (rows may be chunked arbitrarily).
    y : dask.array.Array or array-like of shape (n_samples,)
    key, w0, n_threads, **kw
        As :func:`privlearn.linear.sgd_train` (``sampling="poisson"``, ``clip > 0``, the
        ``gaussian`` or ``none`` mechanism; ``record_every`` must be 0). ``n_threads`` applies
        to each worker's partial sums.
    client : distributed.Client, optional
        The cluster (default: the current client).
    verbose : int, default=1
        A tqdm bar of the steps on stderr: 0 none, 1 when stderr is a terminal, 2 always. It
        does not change the result.

    Returns
    -------
    SGDRun
        ``coef`` and ``n_steps`` (no recorded path).

    Notes
    -----
    The driver is trusted: it sees the noiseless batch gradient sums.
    """
    check_keywords(kw, set(SGD_DEFAULTS), "sgd_train")
    rows = X if isinstance(X, DaskRows) else as_dask_rows(X)
    n, d = rows.shape
    y = as_dask_target(y, rows)
    w = np.zeros(d) if w0 is None else np.ascontiguousarray(w0, dtype=np.float64).reshape(-1)
    if w.shape[0] != d or not np.isfinite(w).all():
        raise ValueError(f"w0 must be {d} finite values")
    spec = SgdSpec.make(n, key=key, **{**SGD_DEFAULTS, **kw})
    if spec.record_every != 0:
        raise ValueError("a distributed run records no path: record_every must be 0")
    args, extra = spec.core_args(as_threads(n_threads))
    _core.sgd_check_distributed(n, d, *args, **extra)
    steps = sgd_step_count(n, spec)
    verbose = as_verbose(verbose)
    client = _client(client)

    def apply(w: np.ndarray, units: np.ndarray, t: int) -> np.ndarray:
        return _core.sgd_apply_units(w, units, t, *args, **extra)

    setup = (n, args, extra)
    w = _gradient_steps(client, rows, y, _SgdWorker, setup, w, steps, apply, "DP-SGD", verbose)
    check_sgd_iterate(w)
    return SGDRun(
        coef=np.asarray(w),
        path=np.empty((0, d)),
        path_steps=np.empty(0, dtype=np.int64),
        n_steps=steps,
    )


def softmax_sgd_train(
    X: Any,
    y: Any,
    *,
    key: bytes,
    n_classes: int,
    W0: Any = None,
    n_threads: int | None = None,
    client: Any = None,
    verbose: int = 1,
    **kw: Any,
) -> SoftmaxRun:
    """:func:`privlearn.linear.softmax.softmax_sgd_train` (multinomial Gaussian DP-SGD, Poisson
    sampling, ``clip > 0``) on a row-chunked ``dask.array``: the same arguments and, bit for
    bit, the same result for any chunking and number of workers.

    Parameters
    ----------
    X, y, key, n_classes, W0, n_threads, **kw
        As :func:`privlearn.linear.softmax.softmax_sgd_train` (``y``: integer class codes in
        ``[0, n_classes)``); ``record_every`` must be 0.
    client : distributed.Client, optional
        The cluster (default: the current client).
    verbose : int, default=1
        A tqdm bar of the steps on stderr: 0 none, 1 when stderr is a terminal, 2 always. It
        does not change the result.

    Returns
    -------
    SoftmaxRun
        ``coef`` (``(d, n_classes)``) and ``n_steps`` (no recorded path).
    """
    rows = X if isinstance(X, DaskRows) else as_dask_rows(X)
    n, d = rows.shape
    y = as_dask_target(y, rows)
    spec = prepare_softmax_spec(n, d, key=key, n_classes=n_classes, **{**SOFTMAX_DEFAULTS, **kw})
    k = spec.n_classes
    w = as_initial_weights(W0, d, k).reshape(-1)
    args, extra = spec.core_args(as_threads(n_threads))
    _core.softmax_check_distributed(n, d, k, *args, **extra)
    steps = softmax_step_count(n, spec)
    verbose = as_verbose(verbose)
    client = _client(client)

    def apply(w: np.ndarray, units: np.ndarray, t: int) -> np.ndarray:
        return _core.softmax_apply_units(w, units, d, k, t, *args, **extra)

    setup = (n, k, args, extra)
    desc = "DP-SGD (multinomial)"
    w = _gradient_steps(client, rows, y, _SoftmaxWorker, setup, w, steps, apply, desc, verbose, k)
    check_softmax_iterate(w, k)
    return SoftmaxRun(
        coef=np.asarray(w).reshape(d, k),
        path=np.empty((0, d * k)),
        path_steps=np.empty(0, dtype=np.int64),
        n_steps=steps,
    )


def scd_train(
    X: Any,
    y: Any,
    *,
    key: bytes,
    n_threads: int | None = None,
    client: Any = None,
    return_dual: bool = False,
    verbose: int = 1,
    **kw: Any,
) -> SCDRun:
    """:func:`privlearn.linear.scd_train` (``variant="dual"``, Poisson batches, ``clip > 0``)
    on a row-chunked ``dask.array``: the same arguments and, bit for bit, the same result for
    any chunking and number of workers. The dual variables stay on the workers.

    Parameters
    ----------
    X, y, key, n_threads, **kw
        As :func:`privlearn.linear.scd_train`; ``record_every`` must be 0.
    client : distributed.Client, optional
        The cluster (default: the current client).
    return_dual : bool, default=False
        Gather the final dual variables into ``dual_coef`` (n values; a diagnostic, not
        released by the estimators). Otherwise ``dual_coef`` is empty.
    verbose : int, default=1
        A tqdm bar of the steps on stderr: 0 none, 1 when stderr is a terminal, 2 always. It
        does not change the result.

    Returns
    -------
    SCDRun
    """
    check_keywords(kw, set(SCD_DEFAULTS), "scd_train")
    rows = X if isinstance(X, DaskRows) else as_dask_rows(X)
    n, m = rows.shape
    y = as_dask_target(y, rows)
    spec = prepare_scd_spec(n, m, key=key, **{**SCD_DEFAULTS, **kw})
    args, extra = spec.core_args(as_threads(n_threads))
    _core.scd_check_distributed(n, m, *args, **extra)
    steps = scd_step_count(n, m, spec)
    verbose = as_verbose(verbose)
    client = _client(client)
    v = np.zeros(m)
    alpha = np.empty(0)
    labels = spec.loss != "squared"
    bar = progress_bar(verbose, steps, "DP-SCD on dask", "step")
    try:
        bar.set_postfix_str(_LOADING)
        with _workers(client, rows, y, _ScdWorker, (n, args, extra), labels=labels) as actors:
            bar.set_postfix_str("")
            for t in range(steps):
                results = [p.result() for p in [a.partial_step(v, t) for a in actors]]
                bad = [b for _, b in results if b >= 0]
                if bad:
                    raise ValueError(
                        f"row {min(bad)} of X contains NaN or infinite values or has a squared "
                        "norm beyond DBL_MAX (DP-SCD assumes ||x_j|| <= 1: scale the rows), or "
                        "v overflowed"
                    )
                units = np.zeros(m, dtype=np.int64)
                for u, _ in results:
                    units += u
                v = _core.scd_apply_units(v, units, t, *args, **extra)
                bar.update()
            if return_dual:
                alpha = np.empty(n)
                for part in [a.dual_variables(steps) for a in actors]:
                    for offset, a in part.result():
                        alpha[offset : offset + a.shape[0]] = a
    finally:
        bar.close()
    check_scd_result(v, "coefficient")
    return SCDRun(
        coef=v / (spec.alpha * spec.n_eff(n)),
        dual_coef=alpha,
        v=v,
        path_steps=np.empty(0, dtype=np.int64),
        primal_path=np.empty(0),
        dual_path=np.empty(0),
        n_steps=steps,
    )
