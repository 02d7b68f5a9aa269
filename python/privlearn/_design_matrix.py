"""The design matrix ``X`` of the linear models: its checks, its row norms and per-example
clipping by them.

What belongs here: converting and validating ``X`` (dense C-contiguous float64 or canonical
CSR, finite), the overflow-safe row norms of the core's ``ScaledNorm`` rule
(``cpp/include/privlearn/rows.hpp``) and what is computed from them row by row (the clipping
coefficient of the loss derivative). Pure numpy: the core wrappers, the numpy reference, the
quadratic-gradient trainers and the estimators' row precondition all use it. Not here: the
privacy precondition on the rows and its error text (:mod:`privlearn.linear`), losses
(:mod:`privlearn._losses`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from privlearn._checks import check_sparse_structure

__all__ = [
    "RowView",
    "as_design_matrix",
    "clip_coefficients",
    "row_norms",
    "scaled_norm",
    "scaled_row_norms",
]

#: Plain sums of squares at least this large (and finite) are used as is (see scaled_row_norms).
_PLAIN_SQUARES_MIN = 2.0**-900
_DBL_MAX = np.finfo(np.float64).max


def _all_finite(a: np.ndarray) -> bool:
    """Whether every entry is finite, in one read of ``a`` and no temporary.

    NaN and +-inf always make the sum non-finite; a finite array whose sum overflows falls back
    to the exact elementwise test.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(np.sum(a)):
            return True
    return bool(np.isfinite(a).all())


def _fix_scaled(
    sq: np.ndarray, mx: np.ndarray, scaled_sq: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    plain = (sq >= _PLAIN_SQUARES_MIN) & (sq <= _DBL_MAX)
    pos = mx > 0
    scale = np.where(plain, 1.0, np.where(pos, mx, 0.0))
    root = np.where(plain, np.sqrt(np.where(plain, sq, 0.0)), np.sqrt(scaled_sq))
    return scale, np.where(plain | pos, root, 0.0)


def scaled_row_norms(
    X: Any,
    *,
    check_finite: bool = False,
    squares: np.ndarray | None = None,
    structure_checked: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Row norms as ``scale * root`` without overflow or underflow of the squares.

    The rule of the core (``ScaledNorm`` in ``cpp/include/privlearn/rows.hpp``): when the plain
    sum of squares of a row lies in ``[2**-900, DBL_MAX]`` it is used (``scale = 1``,
    ``root = sqrt(sum)``); otherwise ``scale = max_k |x_k|`` and
    ``root = sqrt(sum_k (x_k / scale)**2)``. Zero rows give ``scale = root = 0``.

    Parameters
    ----------
    X : ndarray of shape (n, d) or scipy.sparse CSR matrix
        Finite values, or any values with ``check_finite=True``.
    check_finite : bool
        Raise ``ValueError("X contains NaN or infinite values")`` for a non-finite entry of a
        dense ``X``, found in the same read of ``X`` as the norms (issue 32, item 2): a NaN or
        infinite entry makes its row's plain sum of squares non-finite, and only such rows
        (also those of finite entries whose squares overflow) are read again, exactly.
    squares : ndarray of shape (n,), optional
        The plain sums of squares of the rows, already computed: of a dense ``X`` the core's
        ``finite_row_squares`` (in the order of its ``dot_sq``), of a CSR ``X`` its
        ``csr_row_squares`` (stored order); computed here (``np.einsum``, ``np.bincount``)
        otherwise.
    structure_checked : bool
        The caller checked a sparse ``X``'s stored structure already (a fit's matrix from
        :func:`as_design_matrix`): its O(nnz) check is not repeated.

    Returns
    -------
    scale, root : ndarray of shape (n,)
    """
    if sp.issparse(X):
        if not structure_checked:
            check_sparse_structure(X)
        if type(X) is not sp.csr_matrix:  # (a new wrapper would recompute the canonical flag)
            X = sp.csr_matrix(X)
        if not X.has_canonical_format:  # duplicates must be summed first (on a copy)
            X = X.copy()
            X.sum_duplicates()
        data = np.asarray(X.data, dtype=np.float64)
        n = X.shape[0]
        counts = np.diff(X.indptr)
        row_of = None
        if squares is not None:
            sq = np.asarray(squares, dtype=np.float64)
        else:
            row_of = np.repeat(np.arange(n), counts)
            with np.errstate(over="ignore", under="ignore"):
                sq = np.bincount(row_of, weights=data * data, minlength=n)
        bad = ~((sq >= _PLAIN_SQUARES_MIN) & (sq <= _DBL_MAX))
        if not bad.any():  # every row in the plain range (as for a dense X below)
            return np.ones(n), np.sqrt(sq)
        if row_of is None:
            row_of = np.repeat(np.arange(n), counts)
        mx = np.zeros(n)
        np.maximum.at(mx, row_of, np.abs(data))
        denom = mx[row_of]
        with np.errstate(under="ignore", invalid="ignore", divide="ignore"):
            r = np.where(denom > 0, data / np.where(denom > 0, denom, 1.0), 0.0)
            scaled_sq = np.bincount(row_of, weights=r * r, minlength=n)
        return _fix_scaled(sq, mx, scaled_sq)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[None, :]
    if squares is not None:
        sq = np.asarray(squares, dtype=np.float64)
    else:
        with np.errstate(over="ignore", under="ignore"):
            sq = np.einsum("ij,ij->i", X, X)
    bad = ~((sq >= _PLAIN_SQUARES_MIN) & (sq <= _DBL_MAX))
    if not bad.any():  # every row in the plain range: what _fix_scaled gives, without its passes
        return np.ones(X.shape[0]), np.sqrt(sq)
    mx = np.zeros(X.shape[0])
    scaled_sq = np.zeros(X.shape[0])
    Xb = X[bad]
    if check_finite and not np.isfinite(Xb).all():
        raise ValueError("X contains NaN or infinite values")
    mb = np.abs(Xb).max(axis=1) if Xb.shape[1] else np.zeros(Xb.shape[0])
    with np.errstate(under="ignore", invalid="ignore", divide="ignore"):
        r = Xb / np.where(mb > 0, mb, 1.0)[:, None]
        scaled_sq[bad] = np.einsum("ij,ij->i", r, r)
    mx[bad] = mb
    return _fix_scaled(sq, mx, scaled_sq)


def row_norms(X: Any) -> np.ndarray:
    """L2 norm of every row of a dense or CSR matrix, overflow-safe.

    Rows are scaled by their largest absolute entry when the plain sum of squares would
    overflow (norms >= ~1.34e154) or lose precision in subnormals, so e.g. a row
    ``(1e300, 0)`` has norm ``1e300`` (the plain formula gives ``inf`` and a projection
    ``x / ||x||`` would then zero the row). Only norms beyond ``DBL_MAX`` (e.g. four entries
    of ``1e308``) are ``inf``; to project such rows divide by the max-abs first, see
    :func:`scaled_row_norms`.

    Parameters
    ----------
    X : ndarray of shape (n, d) or scipy.sparse matrix

    Returns
    -------
    ndarray of shape (n,)
    """
    scale, root = scaled_row_norms(X)
    with np.errstate(over="ignore"):
        return scale * root


def scaled_norm(w: np.ndarray) -> tuple[float, float]:
    """``(scale, root)`` of one vector with the rule of :func:`scaled_row_norms`."""
    scale, root = scaled_row_norms(np.asarray(w, dtype=np.float64).reshape(1, -1))
    return float(scale[0]), float(root[0])


def clip_coefficients(
    c: np.ndarray, scale: np.ndarray, root: np.ndarray, clip: float
) -> np.ndarray:
    """Per-example clipping on the loss derivative, as ``clip_coefficient`` in the core.

    ``sign(c) * min(|c|, C / ||x_i||)`` with ``C / ||x_i|| = (C / scale) / root``: every
    contribution ``c_i x_i`` then has norm ``<= C`` for every finite row, even when ``c_i`` is
    infinite. A NaN derivative, a zero row, or an infinite ``c_i`` on a row so short that
    ``C / ||x_i||`` overflows too, contribute 0 (any contribution of norm ``<= C`` keeps the
    privacy proof).
    """
    c = np.asarray(c, dtype=np.float64)
    ok = ~np.isnan(c) & (root > 0)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        limit = (clip / np.where(ok, scale, 1.0)) / np.where(ok, root, 1.0)
        a = np.abs(c)
        m = np.where(a <= limit, a, limit)
    ok &= np.isfinite(m)
    return np.where(ok, np.copysign(np.where(ok, m, 0.0), c), 0.0)


class RowView:
    """The rows ``(s_i x_i, c)`` of a checked dense or CSR ``X`` without copying it (issue 32,
    item 2): each row scaled by ``row_scale[i]`` (a projection onto a ball; ``None``: no
    scaling) and the constant intercept column ``c`` appended (``intercept``; ``None``: no
    column).

    The core trainers that take it (``sgd_train_dense`` / ``_csr``, ``scd_train_dense`` /
    ``_csr``, keywords ``row_scale`` and ``intercept``: ``DenseRows`` and ``CsrRows`` in
    ``cpp/include/privlearn/rows.hpp``) read ``X`` in place and form each entry ``s_i * x_ik``
    as numpy's copy does, so the result is bit for bit the one on :meth:`materialize`'s matrix
    (for CSR, the intercept is each row's last stored entry, as in the canonical matrix). Made
    only from an ``X`` that :func:`as_design_matrix` has checked (C-contiguous float64 or
    canonical CSR, finite), which it then passes through unchanged. Never writes to ``X``.

    Parameters
    ----------
    X : ndarray of shape (n, d) or scipy.sparse.csr_matrix
        C-contiguous float64 or canonical CSR, finite (checked by the caller).
    row_scale : ndarray of shape (n,) or None
        Finite factors ``> 0``.
    intercept : float or None
        The intercept column's value.
    """

    ndim = 2
    dtype = np.dtype(np.float64)

    def __init__(
        self, X: np.ndarray | sp.csr_matrix, row_scale: np.ndarray | None, intercept: float | None
    ):
        self.X = X
        self.row_scale = None if row_scale is None else np.ascontiguousarray(row_scale, float)
        self.intercept = None if intercept is None else float(intercept)

    @property
    def shape(self) -> tuple[int, int]:
        n, d = self.X.shape
        return n, d + (self.intercept is not None)

    @property
    def nbytes(self) -> int:
        """The bytes of the materialised matrix (what the view saves)."""
        n, m = self.shape
        if sp.issparse(self.X):
            nnz = self.X.nnz + (n if self.intercept is not None else 0)
            return nnz * (8 + self.X.indices.itemsize) + (n + 1) * self.X.indptr.itemsize
        return n * m * 8

    def __getitem__(self, rows: slice) -> np.ndarray | sp.csr_matrix:
        """A block of consecutive rows, materialised (``view[a:b]``: the diagnostics' blocks)."""
        if not isinstance(rows, slice):
            raise TypeError("a RowView is indexed by a slice of rows only")
        s = None if self.row_scale is None else self.row_scale[rows]
        return RowView(self.X[rows], s, self.intercept).materialize()

    def materialize(self) -> np.ndarray | sp.csr_matrix:
        """The matrix ``[s_i x_i, c]`` itself: a new array, or for a CSR ``X`` a new canonical
        CSR matrix (sharing ``X``'s index arrays when no column is appended)."""
        X, s = self.X, self.row_scale
        if sp.issparse(X):
            return self._materialize_csr()
        if self.intercept is None:
            return np.ascontiguousarray(X * s[:, None]) if s is not None else X.copy()
        out = np.empty(self.shape)
        out[:, :-1] = X
        out[:, -1] = self.intercept
        if s is not None:
            out[:, :-1] *= s[:, None]
        return out

    def _materialize_csr(self) -> sp.csr_matrix:
        X, s = self.X, self.row_scale
        data = X.data if s is None else X.data * np.repeat(s, np.diff(X.indptr))
        if self.intercept is None:  # new values, X's index arrays (never written)
            data = data.copy() if s is None else data
            return sp.csr_matrix((data, X.indices, X.indptr), shape=X.shape)
        n, d = X.shape
        # scipy's index dtype for the new shape and entries (int32 below 2^31, as scipy's
        # constructor would pick; the core takes it without a copy)
        big = max(X.nnz + n, d + 1) > np.iinfo(np.int32).max
        index = np.int64 if big else np.int32
        indptr = np.zeros(n + 1, dtype=index)
        np.cumsum(np.diff(X.indptr) + 1, out=indptr[1:])
        last = indptr[1:] - 1  # position of each row's intercept entry
        keep = np.ones(indptr[-1], dtype=bool)
        keep[last] = False
        new_data = np.empty(indptr[-1])
        new_indices = np.empty(indptr[-1], dtype=index)
        new_data[keep], new_indices[keep] = data, X.indices
        new_data[last], new_indices[last] = self.intercept, d
        return sp.csr_matrix((new_data, new_indices, indptr), shape=(n, d + 1))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.materialize()
        return out if dtype is None else out.astype(dtype, copy=False)


#: The index dtypes of a core-ready CSR matrix (scipy's: int32 below 2^31 stored entries).
_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def _core_ready_csr(X: Any) -> bool:
    """Whether a sparse ``X`` (structure checked) is a ``csr_matrix`` of float64 values with
    scipy's index arrays (``indices`` and ``indptr`` both int32, or both int64: the core takes
    either without copying the indices) in canonical format (sorted, no duplicates; scipy's
    own flag, computed on first use, as scipy's kernels use it)."""
    return (
        type(X) is sp.csr_matrix
        and X.dtype == np.float64
        and X.indices.dtype in _INDEX_DTYPES
        and X.indptr.dtype == X.indices.dtype
        and X.ndim == 2
        and bool(X.has_canonical_format)
    )


def as_design_matrix(
    X: Any, name: str = "X", *, check_finite: bool = True, structure_checked: bool = False
) -> np.ndarray | sp.csr_matrix:
    """C-contiguous float64 ndarray or canonical CSR (scipy's int32 or int64 indices), all
    values finite.

    Never writes to the caller's arrays: a sparse input is copied only when it needs
    canonicalising (another format or dtype, duplicate entries, unsorted indices); otherwise
    the result shares the caller's (possibly read-only) arrays. Complex input is a TypeError
    (converting it would silently drop the imaginary part). A sparse input's stored structure
    is checked first (:func:`~privlearn._checks.check_sparse_structure`: indices in range,
    ``indptr`` monotone, lengths consistent), so a malformed matrix is a ValueError before
    scipy's or the core's kernels index with it; callers that append columns (the intercept)
    do so after this check, on the validated matrix. ``check_finite=False`` leaves the
    finiteness of a dense ``X`` to the caller (who must check it before use: the fit's one
    pass over X, fused with the row norms where it needs them; a sparse ``X`` is checked here).
    ``structure_checked=True``: the caller ran ``check_sparse_structure`` on this very matrix
    object just before (the fit's checks), so its O(nnz) pass is not repeated.
    """
    if isinstance(X, RowView):  # made from a checked X (see RowView)
        return X
    if not structure_checked:
        check_sparse_structure(X, name)  # before anything indexes with the stored indices
    if np.iscomplexobj(X.data if sp.issparse(X) else X):
        raise TypeError(f"{name} must hold real numbers, got a complex array")
    if sp.issparse(X):
        # A csr_matrix that is already what the core takes (scipy's own canonical CSR, and a
        # fit's checked matrix handed to the trainer) is used as is, sharing the caller's
        # arrays: the wrapper below would recompute the canonical flag (issue 32: the core takes
        # int32 indices, so a fit no longer copies them to int64).
        if not _core_ready_csr(X):
            if X.format != "csr" or X.dtype != np.float64:
                X = sp.csr_matrix(X, dtype=np.float64)  # new arrays
            else:  # a new wrapper around the caller's arrays: nothing below writes to them
                X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=X.shape, copy=False)
            if not X.has_canonical_format:
                # the conversion above may still share indices / indptr with the caller
                X = X.copy()
                X.sum_duplicates()  # also sorts the indices (on our copy only)
        if not _all_finite(X.data):
            raise ValueError(f"{name} contains NaN or infinite values")
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
        if check_finite and not _all_finite(X):
            raise ValueError(f"{name} contains NaN or infinite values")
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {X.shape}")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"{name} must have at least one row and one column, got {X.shape}")
    return X
