"""The Dask back-end: :class:`DaskBackend`, the :class:`privlearn.backends.DistributedBackend`
that :mod:`privlearn.distributed` registers on import.

What belongs here: the adapter between the interface the estimators call and the Dask
implementations (:mod:`privlearn.distributed.linear` for the linear trainers and their rows,
:mod:`privlearn.distributed.kmeans` for :class:`~privlearn.cluster.DPKMeans`,
:mod:`privlearn.distributed.encoding` for :class:`~privlearn.encoding.ImpactEncoder`), and the
few lazy dask computations a linear fit needs on the driver (row checks, label sets, target
maps). The algorithms themselves live in those modules. The k-means and encoding modules
import dask at import time, so they are loaded on their first use only.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from privlearn.backends import DistributedBackend, DistributedRows
from privlearn.distributed import linear as _linear

__all__ = ["DaskBackend"]


class DaskBackend(DistributedBackend):
    """Fits on ``dask.array`` / ``dask.dataframe`` input with Dask.distributed: the result
    equals the single-machine fit bit for bit for any chunking and worker count. The driver is
    trusted (it sees the workers' noiseless partial sums)."""

    name = "dask"

    # ---- input ---------------------------------------------------------------------------------
    def handles(self, obj: Any) -> bool:
        """A dask collection (array, data frame, series, delayed, ...) or a :class:`DaskRows`;
        dask is not imported when it is not loaded (then no dask collection exists)."""
        if isinstance(obj, _linear.DaskRows):
            return True
        dask = sys.modules.get("dask")
        return dask is not None and bool(dask.is_dask_collection(obj))

    def is_array(self, obj: Any) -> bool:
        return _linear.is_dask_array(obj)

    def check_dense_chunks(self, X: Any, name: str = "X") -> None:
        _linear.check_dense_chunks(X, name)

    # ---- linear fits ---------------------------------------------------------------------------
    def as_rows(self, X: Any, name: str = "X") -> DistributedRows:
        return _linear.as_dask_rows(X, name)

    def as_target(
        self, y: Any, rows: DistributedRows, name: str = "y", *, numeric: bool = True
    ) -> Any:
        return _linear.as_dask_target(y, rows, name, numeric=numeric)  # type: ignore[arg-type]

    def rows_above(
        self, rows: DistributedRows, row_values: Callable[[np.ndarray], np.ndarray], limit: float
    ) -> tuple[int, int, float]:
        """The values are computed on the workers; only the count, the first index and its
        value come back."""
        import dask
        import dask.array as da

        array = rows.array  # type: ignore[attr-defined]
        values = array.map_blocks(row_values, drop_axis=1, dtype=np.float64)
        bad = values > limit
        count, first = dask.compute(bad.sum(), da.argmax(bad))
        if count == 0:
            return 0, -1, float("nan")
        i = int(first)
        return int(count), i, float(values[i].compute())

    def distinct(self, y: Any) -> np.ndarray:
        import dask.array as da

        return np.asarray(da.unique(y).compute())

    def outside(self, y: Any, classes: np.ndarray) -> np.ndarray:
        """One pass on the workers; the foreign values are gathered only when there are some."""
        import pandas as pd

        inside = y.map_blocks(
            lambda b: np.asarray(pd.Index(classes).get_indexer(np.asarray(b))) >= 0, dtype=bool
        )
        if int((~inside).sum().compute()) == 0:
            return np.empty(0, dtype=y.dtype)
        return np.asarray(y[~inside].compute())

    def map_values(self, y: Any, func: Callable[[np.ndarray], np.ndarray]) -> Any:
        return y.map_blocks(func, dtype=np.float64)

    def gather(self, y: Any) -> np.ndarray:
        return np.asarray(y.compute())

    def sgd_train(self, X: Any, y: Any, **kwargs: Any) -> Any:
        return _linear.sgd_train(X, y, **kwargs)

    def softmax_sgd_train(self, X: Any, y: Any, **kwargs: Any) -> Any:
        return _linear.softmax_sgd_train(X, y, **kwargs)

    def scd_train(self, X: Any, y: Any, **kwargs: Any) -> Any:
        return _linear.scd_train(X, y, **kwargs)

    # ---- k-means -------------------------------------------------------------------------------
    def kmeans_rows(self, X: Any, verbose: int = 1) -> Any:
        from privlearn.distributed.kmeans import DaskRows

        return DaskRows(X, verbose=verbose)

    # ---- impact coding -------------------------------------------------------------------------
    def impact_fit(self, enc: Any, X: Any, y: Any, groups: Any = None) -> Any:
        from privlearn.distributed.encoding import fit_dask

        return fit_dask(enc, X, y, groups)

    def impact_transform(self, enc: Any, X: Any) -> Any:
        from privlearn.distributed.encoding import transform_dask

        return transform_dask(enc, X)

    def impact_fit_transform(self, enc: Any, X: Any, y: Any, groups: Any = None) -> Any:
        from privlearn.distributed.encoding import fit_transform_dask

        return fit_transform_dask(enc, X, y, groups)
