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

from privlearn._design_matrix import RowView

__all__ = ["dense_or_csr"]


def dense_or_csr(
    X: Any,
    dense: Callable[..., Any],
    csr: Callable[..., Any],
    *args: Any,
    view: bool = False,
    **kw: Any,
) -> Any:
    """``csr(X.data, X.indices, X.indptr, n_cols, *args, **kw)`` for a canonical CSR ``X``,
    else ``dense(X, *args, **kw)`` for a C-contiguous float64 ndarray.

    ``view=True`` for the kernels that take a view of the rows (``sgd_train_dense`` / ``_csr``,
    ``scd_train_dense`` / ``_csr``, ``softmax_sgd_train_dense`` / ``_csr``: keywords
    ``row_scale``, ``intercept``) and, dense, skip their own finiteness pass on request
    (``check_finite``): a :class:`~privlearn._design_matrix.RowView` is then passed as its
    ``X`` (or its CSR arrays) and the view's keywords, and every dense ``X`` with
    ``check_finite=False`` (it was checked by
    :func:`~privlearn._design_matrix.as_design_matrix`: one pass over ``X``, issue 32 item 2).
    Otherwise a RowView is materialised first."""
    if isinstance(X, RowView):
        if view:
            kw = dict(kw, row_scale=X.row_scale, intercept=X.intercept)
            X = X.X
        else:
            X = X.materialize()
    if sp.issparse(X):
        return csr(X.data, X.indices, X.indptr, X.shape[1], *args, **kw)
    if view:
        kw = dict(kw, check_finite=False)
    return dense(X, *args, **kw)
