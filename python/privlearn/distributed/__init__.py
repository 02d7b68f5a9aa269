"""Fits on data beyond one machine: Dask.distributed back-ends of the private estimators.

The estimators accept ``dask.array`` / ``dask.dataframe`` input and run on the workers that hold
the data (:func:`sgd_train` and :func:`scd_train` are the distributed twins of
:func:`privlearn.linear.sgd_train` / :func:`~privlearn.linear.scd_train`); the result equals
the single-machine fit bit for bit for any chunking and worker count.
The driver (the process that calls ``fit``) is trusted: it sees the noiseless partial sums of
the workers and adds the noise once (sites that do not trust it need secure aggregation, which
is out of scope).

The estimators never import this package: they call :class:`DaskBackend` through
:mod:`privlearn.backends`, which imports this package (and so registers the back-end) the
first time it is given a dask collection.
"""

from __future__ import annotations

from privlearn.backends import register_backend
from privlearn.distributed.backend import DaskBackend
from privlearn.distributed.linear import (
    DaskRows,
    as_dask_rows,
    is_dask_array,
    scd_train,
    sgd_train,
    softmax_sgd_train,
)

__all__ = [
    "DaskBackend",
    "DaskRows",
    "as_dask_rows",
    "is_dask_array",
    "scd_train",
    "sgd_train",
    "softmax_sgd_train",
]

#: The back-end the estimators reach through privlearn.backends (registered on import).
DASK_BACKEND = register_backend(DaskBackend())

# The Dask back-ends of DPKMeans (privlearn.distributed.kmeans) and ImpactEncoder
# (privlearn.distributed.encoding) import dask; the estimators load them on dask input only.
