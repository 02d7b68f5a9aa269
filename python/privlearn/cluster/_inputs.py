"""The training data as the k-means fits take it: ``X`` converted and checked
(:func:`check_data`: arrays, scipy sparse, pandas) and the public radius resolved
(:func:`resolve_radius`, with the :class:`~privlearn.exceptions.PrivacyLeakWarning` of a radius
taken from the data).

Belongs here: checks and conversions of user input that come before any budget is spent. Not
here: the parameter checks of :class:`~privlearn.cluster.DPKMeans` (its ``_params``).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from privlearn.cluster._ball import clip_rows, row_sq_norms
from privlearn.exceptions import PrivacyLeakWarning

__all__ = ["MAX_DENSE_ENTRIES", "check_data", "data_radius", "resolve_radius", "warn_data_radius"]

#: Largest number of entries a sparse ``X`` may have once densified (DPKMeans works on dense
#: rows: its JL map, grid and averages read every coordinate).
MAX_DENSE_ENTRIES = 1 << 31


def check_data(X: Any, name: str = "X") -> np.ndarray:
    """``X`` as a C-contiguous float64 2-D array with finite entries (else ValueError).

    A scipy sparse matrix is checked (indices in range: ``check_format(full_check=True)``)
    and densified (at most :data:`MAX_DENSE_ENTRIES` entries); a pandas DataFrame with
    nullable columns (``Float64``, ``Int64``, ...) is converted when it holds no missing value
    (``pd.NA``), which raises a ``ValueError`` (naming no row: messages quote public inputs
    only).
    """
    if isinstance(X, (str, bytes)) or X is None:
        raise TypeError(f"{name} must be a 2-D array of numbers, got {type(X).__name__}")
    X = _from_sparse(X, name)
    X = _from_pandas(X, name)
    try:
        arr = np.asarray(X)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a 2-D array of numbers: {exc}") from None
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(
            f"Complex data not supported: {name} must hold real numbers, got dtype {arr.dtype}"
        )
    if arr.dtype == object:  # numbers stored as objects (as scikit-learn accepts them)
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must hold real numbers: {exc}") from None
    if not (np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)):
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != 2:
        hint = " (Reshape your data: X.reshape(-1, 1) for one feature)" if arr.ndim == 1 else ""
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got {arr.ndim}-D{hint}")
    if arr.shape[0] < 1:
        raise ValueError(
            f"{name} has 0 sample(s) (shape={arr.shape}) while a minimum of 1 is required."
        )
    if arr.shape[1] < 1:
        raise ValueError(
            f"{name} has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required."
        )
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.isfinite(arr).all():
        raise ValueError(
            f"{name} must be finite: it holds NaN or inf; remove or impute those entries first"
        )
    return arr


def _from_sparse(X: Any, name: str) -> Any:
    """A scipy sparse ``X`` as a dense array (structure checked first: a malformed matrix
    would make scipy read out of bounds)."""
    from scipy import sparse

    if not sparse.issparse(X):
        return X
    shape = tuple(X.shape)
    if len(shape) != 2:
        raise ValueError(
            f"{name} must be 2-D (n_samples, n_features), got a {len(shape)}-D sparse array"
        )
    if (
        X.dtype == object
        or not (np.issubdtype(X.dtype, np.number) or np.issubdtype(X.dtype, np.bool_))
        or np.issubdtype(X.dtype, np.complexfloating)
    ):
        raise TypeError(f"{name} must hold real numbers, got a sparse matrix of dtype {X.dtype}")
    if shape[0] * shape[1] > MAX_DENSE_ENTRIES:
        raise ValueError(
            f"{name} is a sparse {X.format.upper()} matrix of shape {shape}: DPKMeans works on "
            f"dense rows and densifies it, but {shape[0] * shape[1]} entries exceed "
            f"{MAX_DENSE_ENTRIES}; reduce the dimension first"
        )
    if hasattr(X, "check_format"):
        try:
            X.check_format(full_check=True)
        except ValueError as exc:
            raise ValueError(
                f"{name} is a malformed sparse {X.format.upper()} matrix: {exc}"
            ) from None
    return X.toarray()


def _from_pandas(X: Any, name: str) -> Any:
    """A pandas DataFrame (or Series) as float64, nullable extension columns included; missing
    values (``pd.NA`` / ``NaN``) raise a ValueError."""
    if not (hasattr(X, "isna") and hasattr(X, "to_numpy") and hasattr(X, "dtypes")):
        return X
    missing = np.asarray(X.isna())
    if missing.any():
        raise ValueError(f"{name} has missing values (NA or NaN); remove or impute them first")
    try:
        return X.to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must hold real numbers: {exc}") from None


def resolve_radius(
    X: np.ndarray, radius: float | None, clip: bool, stacklevel: int = 4
) -> tuple[np.ndarray, float]:
    """The public radius ``Lambda`` and ``X`` inside ``B(0, Lambda)``.

    ``radius=None`` takes ``max ||x_i||`` from the data with a :class:`PrivacyLeakWarning`.
    Rows outside the ball raise ``ValueError`` unless ``clip=True``, which projects them onto
    the ball (a per-row map: privacy is preserved).
    """
    if radius is None:
        warn_data_radius(stacklevel)
        radius = data_radius(float(np.sqrt(row_sq_norms(X)).max()))
    radius = float(radius)
    if not (math.isfinite(radius) and radius > 0.0):
        raise ValueError(f"radius must be a finite number > 0, got {radius}")
    return clip_rows(X, radius, clip), radius


def warn_data_radius(stacklevel: int) -> None:
    """The :class:`PrivacyLeakWarning` of ``radius=None``."""
    warnings.warn(
        "radius=None: the data radius max ||x|| is computed from the private data and is "
        "not covered by the privacy guarantee; pass a public bound",
        PrivacyLeakWarning,
        stacklevel=stacklevel,
    )


def data_radius(max_norm: float) -> float:
    """The radius taken from the data: ``max ||x_i||`` (1 when every row is 0)."""
    return max_norm if max_norm > 0 else 1.0
