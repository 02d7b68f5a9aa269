"""Feature and row preprocessing with explicit privacy semantics.

Two kinds of step live here:

- **Per-row** steps (:func:`normalize_rows`, :func:`project_to_ball`) and **data-independent**
  steps (:func:`random_projection`) touch each row using only that row and public parameters.
  They leak nothing and preserve differential privacy of anything computed afterwards;
  Song, Chaudhuri, Sarwate 2013 use exactly these (projection onto the unit ball, random
  projection to low dimension).
- **Per-feature** scaling (:func:`maxabs_scale`, :func:`minmax_scale`) needs bounds for each
  column. With PUBLIC bounds (domain knowledge, a public schema) it is per-row as well. When
  the bounds are computed from the data, every output row depends on every input row and no
  DP guarantee computed later covers that step: the functions then emit
  :class:`~privlearn.exceptions.PrivacyLeakWarning`.

Row norms are guaranteed to be ``<= radius`` as computed by :func:`row_norms` in float64
(``numpy.linalg.norm`` for dense input): a row scaled onto the sphere that ends up one rounding
error outside is pulled back by a few ulps, so the DP preconditions of the estimators
(``||x_i|| <= 1``) hold exactly.

Dense inputs are returned as C-contiguous float64 arrays; sparse inputs (to the functions that
preserve sparsity) are converted to CSR and returned as :class:`scipy.sparse.csr_matrix`. The
input is never modified. A sparse input whose stored structure is malformed (an index out of
range or negative, a non-monotone ``indptr``, mismatched array lengths) raises ``ValueError``.
"""

from __future__ import annotations

import warnings
from typing import Any, Union

import numpy as np
import scipy.sparse as sp

from .._checks import as_real, check_sparse_structure
from ..exceptions import PrivacyLeakWarning

__all__ = [
    "maxabs_scale",
    "minmax_scale",
    "normalize_rows",
    "project_to_ball",
    "random_projection",
    "random_projection_matrix",
    "row_norms",
]

ArrayOrCSR = Union[np.ndarray, sp.csr_matrix]

_SHRINK = 1.0 - 2.0**-52  # one ulp below 1 (for values in [0.5, 1))


def _check_matrix(X: Any, name: str = "X", *, accept_sparse: bool) -> ArrayOrCSR:
    """Validate a 2-D finite numeric matrix; return a float64 copy (C-contiguous or CSR)."""
    if sp.issparse(X):
        if not accept_sparse:
            raise TypeError(
                f"{name} is a sparse matrix, which this function does not accept (it would "
                "destroy sparsity); convert it with X.toarray() first"
            )
        if X.dtype.kind not in "biuf":
            raise TypeError(f"{name} must be a real numeric matrix, got dtype {X.dtype}")
        check_sparse_structure(X, name)  # before scipy's kernels index with the indices
        out = sp.csr_matrix(X, dtype=np.float64, copy=True)
        if out.ndim != 2:
            raise ValueError(f"{name} must be 2-dimensional, got shape {out.shape}")
        if not np.isfinite(out.data).all():
            raise ValueError(f"{name} contains NaN or infinite values")
        out.sum_duplicates()
        return out
    arr = np.asarray(X)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be 2-dimensional (n_samples, n_features), got shape {arr.shape}"
        )
    out = np.array(arr, dtype=np.float64, order="C", copy=True)
    if not np.isfinite(out).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return out


def _check_positive_real(value: Any, name: str) -> float:
    value = as_real(value, name, numbers_only=True)
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be positive and finite, got {value}")
    return value


def _check_bound(value: Any, n_features: int, name: str) -> np.ndarray:
    """A scalar or a length-n_features vector of finite reals -> float64 vector."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be a real number or array, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.ndim == 0:
        arr = np.full(n_features, float(arr))
    if arr.shape != (n_features,):
        raise ValueError(
            f"{name} must be a scalar or have shape ({n_features},), got shape {arr.shape}"
        )
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _leak_warning(function: str, what: str, argument: str) -> None:
    warnings.warn(
        f"{function} computed {what} from the data itself: the result depends on every row, "
        "which leaks privacy outside any DP accounting. Pass public bounds "
        f"({argument}) to avoid this.",
        PrivacyLeakWarning,
        stacklevel=3,
    )


def row_norms(X: Any) -> np.ndarray:
    """Euclidean norm of every row of a dense array or sparse matrix.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)

    Returns
    -------
    ndarray of shape (n_samples,), float64
    """
    X = _check_matrix(X, accept_sparse=True)
    return _row_norms(X)


def _row_norms(X: ArrayOrCSR) -> np.ndarray:
    if sp.issparse(X):
        sq = np.zeros(X.shape[0])
        starts = X.indptr[:-1]
        filled = np.diff(X.indptr) > 0
        if filled.any():
            # Rows without stored entries are skipped, so each segment is exactly one row.
            sq[filled] = np.add.reduceat(X.data * X.data, starts[filled])
        return np.sqrt(sq)
    return np.linalg.norm(X, axis=1)


def _scale_rows(X: ArrayOrCSR, scale: np.ndarray) -> ArrayOrCSR:
    """Multiply row i by scale[i] in place (X is our own copy) and return X."""
    if sp.issparse(X):
        X.data *= np.repeat(scale, np.diff(X.indptr))
    else:
        X *= scale[:, None]
    return X


def _shrink_to_radius(X: ArrayOrCSR, rows: np.ndarray, radius: float) -> ArrayOrCSR:
    """Pull the given rows inside the closed ball if rounding left them a few ulps outside."""
    for _ in range(64):  # each pass shrinks by one ulp; a handful always suffices
        if rows.size == 0:
            break
        norms = _row_norms(X)
        rows = rows[norms[rows] > radius]
        if rows.size == 0:
            break
        scale = np.ones(X.shape[0])
        scale[rows] = _SHRINK
        _scale_rows(X, scale)
    return X


def normalize_rows(X: Any) -> ArrayOrCSR:
    """Scale every row to unit L2 norm; all-zero rows stay zero.

    A per-row operation: it uses nothing but the row itself, so it leaks nothing. DP-SCD
    (Damaskinos et al. 2021) assumes ``||x_i|| = 1`` for every example.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)

    Returns
    -------
    ndarray (C-contiguous float64) or csr_matrix of the same shape
        Rows of norm 1 (at most 1 and within a few ulps of it) or 0.
    """
    X = _check_matrix(X, accept_sparse=True)
    norms = _row_norms(X)
    nonzero = norms > 0
    scale = np.ones_like(norms)
    scale[nonzero] = 1.0 / norms[nonzero]
    _scale_rows(X, scale)
    return _shrink_to_radius(X, np.flatnonzero(nonzero), 1.0)


def project_to_ball(X: Any, radius: float = 1.0) -> ArrayOrCSR:
    """Project every row onto the closed L2 ball of the given radius.

    Rows with norm ``> radius`` are scaled onto the sphere of that radius; the others are left
    unchanged. A per-row operation (no privacy leak), used by Song, Chaudhuri, Sarwate 2013
    ("projecting each row to the unit ball") to meet the ``||x|| <= 1`` assumption of their
    DP-SGD analysis, and by Chaturvedi, Nguyen, Xu 2021 (projecting instead of rescaling
    preserves privacy).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    radius : float, default 1.0
        Radius of the ball (> 0).

    Returns
    -------
    ndarray (C-contiguous float64) or csr_matrix of the same shape
        Every row has norm ``<= radius``.
    """
    radius = _check_positive_real(radius, "radius")
    X = _check_matrix(X, accept_sparse=True)
    norms = _row_norms(X)
    outside = norms > radius
    scale = np.ones_like(norms)
    scale[outside] = radius / norms[outside]
    _scale_rows(X, scale)
    return _shrink_to_radius(X, np.flatnonzero(outside), radius)


def maxabs_scale(X: Any, max_abs: Any = None, *, clip: bool = True) -> ArrayOrCSR:
    """Divide every feature by a bound on its absolute value, mapping it into ``[-1, 1]``.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Sparse input stays sparse (the scaling preserves zeros).
    max_abs : float or array-like of shape (n_features,), optional
        PUBLIC bound(s) on ``|x_j|`` (> 0). When omitted, the per-feature maximum of ``|X|`` is
        computed from the data (an all-zero feature is left unchanged) and a
        :class:`~privlearn.exceptions.PrivacyLeakWarning` is emitted.
    clip : bool, default True
        Clip the result to ``[-1, 1]``: values beyond a public bound are clamped, so the output
        honours the bound whatever the data. Has no effect with data-derived bounds.

    Returns
    -------
    ndarray (C-contiguous float64) or csr_matrix of the same shape
    """
    X = _check_matrix(X, accept_sparse=True)
    n_features = X.shape[1]
    if max_abs is None:
        if X.shape[0] == 0:
            raise ValueError("cannot compute feature bounds from an empty X")
        _leak_warning("maxabs_scale", "the per-feature maximum |x|", "max_abs=...")
        if sp.issparse(X):
            bound = np.asarray(abs(X).max(axis=0).todense()).ravel()
        else:
            bound = np.abs(X).max(axis=0)
        bound = np.where(bound > 0, bound, 1.0)
    else:
        bound = _check_bound(max_abs, n_features, "max_abs")
        if not (bound > 0).all():
            raise ValueError("max_abs must be positive for every feature")
    if sp.issparse(X):
        X.data /= bound[X.indices]
        if clip:
            np.clip(X.data, -1.0, 1.0, out=X.data)
        return X
    X /= bound
    if clip:
        np.clip(X, -1.0, 1.0, out=X)
    return X


def minmax_scale(X: Any, lower: Any = None, upper: Any = None, *, clip: bool = True) -> np.ndarray:
    """Map every feature linearly from ``[lower_j, upper_j]`` onto ``[0, 1]``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Dense only: the shift by ``lower`` destroys sparsity.
    lower, upper : float or array-like of shape (n_features,), optional
        PUBLIC bounds with ``upper > lower``; give both or neither. When omitted, the
        per-feature minimum and maximum are computed from the data (a constant feature maps to
        0) and a :class:`~privlearn.exceptions.PrivacyLeakWarning` is emitted.
    clip : bool, default True
        Clip the result to ``[0, 1]`` (values outside public bounds are clamped).

    Returns
    -------
    ndarray of shape (n_samples, n_features), C-contiguous float64
    """
    X = _check_matrix(X, accept_sparse=False)
    n_features = X.shape[1]
    if (lower is None) != (upper is None):
        raise ValueError("give both lower and upper public bounds, or neither")
    if lower is None:
        if X.shape[0] == 0:
            raise ValueError("cannot compute feature bounds from an empty X")
        _leak_warning("minmax_scale", "the per-feature minimum and maximum", "lower=, upper=")
        lo = X.min(axis=0)
        hi = X.max(axis=0)
        span = hi - lo
        span = np.where(span > 0, span, 1.0)
    else:
        lo = _check_bound(lower, n_features, "lower")
        hi = _check_bound(upper, n_features, "upper")
        if not (hi > lo).all():
            j = int(np.flatnonzero(~(hi > lo))[0])
            raise ValueError(
                f"upper must exceed lower for every feature; feature {j} has "
                f"lower={lo[j]}, upper={hi[j]}"
            )
        span = hi - lo
    X -= lo
    X /= span
    if clip:
        np.clip(X, 0.0, 1.0, out=X)
    return X


def _check_n_components(n_components: Any) -> int:
    if isinstance(n_components, (bool, np.bool_)) or not isinstance(
        n_components, (int, np.integer)
    ):
        raise TypeError(f"n_components must be an int, got {type(n_components).__name__}")
    if n_components < 1:
        raise ValueError(f"n_components must be >= 1, got {n_components}")
    return int(n_components)


def random_projection_matrix(
    n_features: int, n_components: int, seed: int | np.random.Generator | None = None
) -> np.ndarray:
    """The Gaussian projection matrix used by :func:`random_projection`.

    Entries are i.i.d. ``N(0, 1/n_components)``, drawn as
    ``numpy.random.default_rng(seed).standard_normal((n_features, n_components))
    / sqrt(n_components)``, so ``E ||x R||^2 = ||x||^2`` (Johnson-Lindenstrauss scaling).

    Parameters
    ----------
    n_features : int
        Input dimension (>= 1).
    n_components : int
        Output dimension (>= 1).
    seed : int or numpy.random.Generator, optional
        ``None`` draws fresh OS entropy.

    Returns
    -------
    ndarray of shape (n_features, n_components), float64
    """
    if isinstance(n_features, (bool, np.bool_)) or not isinstance(n_features, (int, np.integer)):
        raise TypeError(f"n_features must be an int, got {type(n_features).__name__}")
    if n_features < 1:
        raise ValueError(f"n_features must be >= 1, got {n_features}")
    n_components = _check_n_components(n_components)
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((int(n_features), n_components))
    matrix /= np.sqrt(n_components)
    return matrix


def random_projection(
    X: Any, n_components: int, seed: int | np.random.Generator | None = None
) -> np.ndarray:
    """Project the rows of ``X`` to ``n_components`` dimensions with a Gaussian random matrix.

    Computes ``X @ R`` with ``R = random_projection_matrix(n_features, n_components, seed)``.
    ``R`` does not depend on the data, so the step preserves differential privacy (Song,
    Chaudhuri, Sarwate 2013 reduce KDDCup99 to d = 9 and MNIST to d = 15 this way). ``R``
    depends only on ``(n_features, n_components, seed)``: calling this on a training and a
    test set with the same integer seed projects both with the same matrix.

    Row norms are preserved only in expectation; re-apply :func:`project_to_ball` if a later
    step needs ``||x|| <= 1``.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    n_components : int
        Output dimension (>= 1).
    seed : int or numpy.random.Generator, optional
        Seed of ``R`` (``None``: fresh OS entropy, so the projection is not reproducible).

    Returns
    -------
    ndarray of shape (n_samples, n_components), C-contiguous float64
        Dense also for sparse input (the projection is dense).
    """
    n_components = _check_n_components(n_components)
    X = _check_matrix(X, accept_sparse=True)
    matrix = random_projection_matrix(X.shape[1], n_components, seed)
    out = X @ matrix
    return np.ascontiguousarray(out, dtype=np.float64)
