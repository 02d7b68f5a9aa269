"""Calling a C++ core kernel on a validated design matrix: the binding's dense entry point for an
ndarray, its CSR entry point (``data, indices, indptr, n_cols`` in place of ``X``) for a sparse
matrix.

What belongs here: how the core wrappers of :mod:`privlearn.linear` hand ``X`` to a kernel
(``python/bindings/bind_linear.cpp`` and ``bind_quadgrad.cpp`` define each kernel twice, as
``<name>_dense`` and ``<name>_csr``). Not here: converting or checking ``X``
(:func:`privlearn._design_matrix.as_design_matrix`, done before).
"""

from __future__ import annotations

from typing import Any, Callable

import scipy.sparse as sp

__all__ = ["dense_or_csr"]


def dense_or_csr(
    X: Any, dense: Callable[..., Any], csr: Callable[..., Any], *args: Any, **kw: Any
) -> Any:
    """``csr(X.data, X.indices, X.indptr, n_cols, *args, **kw)`` for a canonical CSR ``X``,
    else ``dense(X, *args, **kw)`` for a C-contiguous float64 ndarray."""
    if sp.issparse(X):
        return csr(X.data, X.indices, X.indptr, X.shape[1], *args, **kw)
    return dense(X, *args, **kw)
