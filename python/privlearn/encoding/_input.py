"""Input handling for the encoders: categorical columns -> level indices, binary targets.

A column's levels are kept as a sorted numpy array (``categories_[j]``, NaN excluded); each
value maps to an index into a per-column table of ``K + 2`` slots::

    0 .. K-1   the known levels, in sorted order
    K          the missing value (NaN / None / pd.NA), when missing values are a level
    K + 1      any level not seen at fit time (always coded from zero counts)

Lookups go through :class:`pandas.Index`, whose hash tables handle strings, ints and floats.

Shared by the in-memory fit (:mod:`privlearn.encoding.impact`) and the Dask fit
(:mod:`privlearn.distributed.encoding`), with :func:`validate_data` (scikit-learn's feature
name and ``n_features_in_`` checks) for both.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.utils.multiclass import type_of_target

from privlearn._labels import label_codes

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data
except ImportError:  # pragma: no cover - older scikit-learn

    def validate_data(est: Any, X: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
        """scikit-learn's input validation (feature names, ``n_features_in_``)."""
        return est._validate_data(X, **kwargs)


#: Accepted ``target_type`` values of the encoders ("auto": scikit-learn's ``type_of_target``).
TARGET_TYPES = ("binary", "multiclass", "continuous", "auto")
#: Largest magnitude of a continuous outcome's bounds (public), and of the outcome itself when
#: no bounds are given: the level sums of up to ``2**36`` rows, their differences (cross-fitting,
#: jackknife) and the mean codes must stay finite in double precision with room to spare
#: (``-1e308`` gave infinite sums and NaN codes, and ``target_bounds=(-1e308, 1e308)`` a range
#: ``hi - lo`` that overflows).
TARGET_LIMIT = 1e250

__all__ = [
    "TARGET_LIMIT",
    "TARGET_TYPES",
    "as_binary_target",
    "as_continuous_target",
    "as_multiclass_target",
    "check_target_bounds",
    "resolve_target_type",
    "as_columns",
    "check_2d",
    "check_y",
    "factorize_column",
    "fit_levels",
    "level_indices",
    "missing_levels",
    "validate_data",
]


def as_columns(X: Any) -> tuple[list[np.ndarray], int]:
    """The columns of a 2-D ``X`` (numpy array, list of rows or DataFrame) as 1-D arrays.

    Raises
    ------
    TypeError
        For sparse matrices and for complex values.
    ValueError
        When ``X`` is not 2-D or has no rows or no columns.
    """
    if sparse.issparse(X):
        raise TypeError(
            "ImpactEncoder does not accept sparse input: pass a dense array or a DataFrame of "
            "categorical columns"
        )
    if isinstance(X, pd.DataFrame):
        n_rows, n_cols = X.shape
        columns = [X.iloc[:, j].to_numpy() for j in range(n_cols)]
    else:
        arr = np.asarray(X)
        if arr.ndim != 2:
            raise ValueError(_reshape_message(arr.shape))
        n_rows, n_cols = arr.shape
        columns = [arr[:, j] for j in range(n_cols)]
    if n_rows == 0:
        raise ValueError(
            f"Found array with 0 sample(s) (shape=({n_rows}, {n_cols})) while a "
            "minimum of 1 is required."
        )
    if n_cols == 0:
        raise ValueError(
            f"Found array with 0 feature(s) (shape=({n_rows}, {n_cols})) while a "
            "minimum of 1 is required."
        )
    for col in columns:
        if np.issubdtype(col.dtype, np.complexfloating):
            raise ValueError("Complex data not supported")
        # the distinct types of the first 1000 values (``map`` runs in C, no per-value frame)
        if col.dtype == object and any(issubclass(t, complex) for t in set(map(type, col[:1000]))):
            raise ValueError("Complex data not supported")
    return columns, n_rows


def _reshape_message(shape: tuple[int, ...]) -> str:
    return (
        f"Expected a 2-D array of categorical columns, got an array of shape {shape}. Reshape "
        "your data either using X.reshape(-1, 1) if it has a single column or "
        "X.reshape(1, -1) if it is a single row."
    )


def check_2d(X: Any) -> None:
    """Raise the scikit-learn style ``ValueError`` for a non-2-D array-like ``X``."""
    if isinstance(X, pd.DataFrame):
        return
    shape = np.asarray(X).shape
    if len(shape) != 2:
        raise ValueError(_reshape_message(shape))


def _missing(col: np.ndarray) -> np.ndarray:
    if col.dtype.kind in "iub":
        return np.zeros(col.shape[0], dtype=bool)
    return np.asarray(pd.isna(col), dtype=bool)


def fit_levels(col: np.ndarray, name: str, handle_missing: str) -> np.ndarray:
    """The sorted distinct non-missing values of ``col`` (its levels)."""
    miss = _missing(col)
    if miss.any() and handle_missing == "error":
        raise ValueError(
            f"column {name} has missing values (NaN/None); set "
            "handle_missing='level' to code them as their own level"
        )
    values = col[~miss] if miss.any() else col
    return _sorted_levels(pd.unique(values), name)


def _sorted_levels(uniques: Any, name: str) -> np.ndarray:
    try:
        order = np.argsort(uniques, kind="stable")
    except TypeError:
        kinds = sorted({type(v).__name__ for v in uniques})
        raise TypeError(
            f"column {name} mixes values of types {', '.join(kinds)}; encode each column with "
            "values of one type (e.g. all str or all int)"
        ) from None
    levels = np.asarray(uniques)[order]
    if levels.dtype.kind in "fc" and not np.isfinite(levels).all():
        raise ValueError(f"column {name} holds infinite values; categories must be finite")
    return levels


def factorize_column(
    col: np.ndarray, name: str, handle_missing: str
) -> tuple[np.ndarray, np.ndarray]:
    """``(levels, slots)`` in one hashing pass: the same as :func:`fit_levels` followed by
    :func:`level_indices` on the same column, about twice as fast."""
    if handle_missing == "error" and _missing(col).any():
        raise ValueError(
            f"column {name} has missing values (NaN/None); set "
            "handle_missing='level' to code them as their own level"
        )
    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    uniques = np.asarray(uniques)
    levels = _sorted_levels(uniques, name)
    if len(levels) and not np.array_equal(levels, uniques):
        order = np.argsort(uniques, kind="stable")
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        slots = np.where(codes >= 0, rank[np.maximum(codes, 0)], len(levels))
    else:
        slots = np.where(codes >= 0, codes, len(levels)).astype(np.int64)
    return levels, np.asarray(slots, dtype=np.int64)


def level_indices(
    col: np.ndarray, levels: np.ndarray, name: str, handle_missing: str
) -> np.ndarray:
    """Slot of each value of ``col`` in the column's table (see the module docstring).

    One hashing pass over the column (:func:`pandas.factorize`, whose ``-1`` codes are the
    values :func:`pandas.isna` flags); the few distinct values are then looked up among the
    levels, so the per-row work is a single integer gather."""
    k = len(levels)
    if handle_missing == "error" and _missing(col).any():
        raise ValueError(
            f"column {name} has missing values (NaN/None); set "
            "handle_missing='level' to code them as their own level"
        )
    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    found = _positions(levels, uniques)
    # slot per distinct value, then the missing slot k at the end for the -1 (NA) codes
    table = np.append(np.where(found < 0, k + 1, found), k)
    return table[codes]


def missing_levels(seen: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """The values of ``seen`` that are not among ``levels`` (a hash lookup, not a sort)."""
    if not len(seen):
        return seen
    return seen[_positions(levels, seen) < 0]


def _positions(levels: np.ndarray, values: Any) -> np.ndarray:
    """Position of each of ``values`` among the distinct ``levels`` (-1: not a level), int64.

    Two object arrays of ``str`` are matched as they are: ``pd.Index`` would first copy both
    into Arrow strings (pandas >= 3 infers ``str``), which costs more than the lookup and
    gives the same positions."""
    values = np.asarray(values)
    if (
        levels.dtype == object
        and values.dtype == object
        and pd.api.types.infer_dtype(levels, skipna=False) == "string"
        and pd.api.types.infer_dtype(values, skipna=False) == "string"
    ):
        index = pd.Index(levels, dtype=object)
        found = index.get_indexer(pd.Index(values, dtype=object))
    else:
        found = pd.Index(levels).get_indexer(values)
    return np.asarray(found, dtype=np.int64)


def as_binary_target(
    y: Any, n_rows: int, classes: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(classes, y01)``: the two sorted classes and ``y`` as 0/1 int64 (1 = ``classes[1]``).

    ``classes``: the declared public label set (sorted, from
    :func:`privlearn._labels.declared_classes`), which must hold exactly two labels; every
    label of ``y`` must belong to it, and one of them may be absent from ``y``. ``None``: the
    two classes are read from ``y``.

    Raises
    ------
    ValueError
        When ``y`` is missing, not 1-D, of the wrong length, holds NaN, does not have
        exactly two distinct values (without ``classes``), or holds a label outside
        ``classes``.
    """
    arr = check_y(y, n_rows, "a binary outcome", "binary")
    if classes is not None:
        if len(classes) != 2:
            raise ValueError(
                f"target_type='binary' needs exactly two declared classes, got {len(classes)}: "
                f"{list(classes[:5])}; use target_type='multiclass' for more"
            )
        return classes, label_codes(arr, classes)
    classes, y01 = np.unique(arr, return_inverse=True)
    if len(classes) == 1:
        raise ValueError(
            "ImpactEncoder needs a binary target, but y has only 1 class: the codes compare "
            "each level with the prevalence of both outcomes (declare classes= to code an "
            "outcome whose other class may be absent)"
        )
    if len(classes) != 2:  # the labels read from y are private: not quoted
        raise ValueError(
            "ImpactEncoder needs a binary target with exactly two classes, but y has more; "
            "use target_type='multiclass' (or 'continuous') for such an outcome"
        )
    return classes, y01.astype(np.int64).ravel()


def check_y(y: Any, n_rows: int, what: str, must: str | None = None) -> np.ndarray:
    """``y`` as a 1-D array of length ``n_rows`` without NaN, inf or complex values; ``what``
    names the outcome in the errors (``must``, if given, says what it must be)."""
    must = what if must is None else must
    if y is None:
        raise ValueError(
            "ImpactEncoder requires y to be passed, but the target y is None: impact codes are "
            f"learned from {what}"
        )
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"y must be 1-D ({what}), got shape {arr.shape}")
    if arr.shape[0] != n_rows:
        raise ValueError(
            "X and y have inconsistent numbers of samples (one outcome per row of X is needed)"
        )
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError("Complex data not supported")
    if np.asarray(pd.isna(arr)).any():
        raise ValueError(f"y contains NaN or None; the outcome must be {must} with no missing")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError(f"y contains infinity; the outcome must be {must}")
    return arr


def resolve_target_type(
    target_type: Any, y: Any, n_rows: int, classes: np.ndarray | None = None
) -> str:
    """The target type a fit uses: ``target_type`` itself; for ``"auto"`` with declared
    ``classes``, ``"binary"`` (two classes) or ``"multiclass"`` (a function of the public
    label set only); else for ``"auto"`` the one
    :func:`sklearn.utils.multiclass.type_of_target` infers from ``y`` (``"binary"``,
    ``"multiclass"`` or ``"continuous"``; any other inferred type is an error)."""
    if not isinstance(target_type, str) or target_type not in TARGET_TYPES:
        raise ValueError(f"target_type must be one of {TARGET_TYPES}, got {target_type!r}")
    if classes is not None and target_type == "continuous":
        raise ValueError(
            "classes= declares the label set of a binary or multiclass outcome; a continuous "
            "outcome has no classes (declare its range with target_bounds=)"
        )
    if target_type != "auto":
        return target_type
    if classes is not None:
        return "binary" if len(classes) == 2 else "multiclass"
    arr = check_y(y, n_rows, "a binary, multiclass or continuous outcome")
    try:
        inferred = type_of_target(arr, input_name="y", raise_unknown=True)
    except TypeError:  # scikit-learn < 1.6: no raise_unknown
        inferred = type_of_target(arr, input_name="y")
        if inferred == "unknown":
            raise ValueError(
                "Unknown label type: pass target_type explicitly"
            ) from None  # the values of y are private: not quoted
    if inferred not in ("binary", "multiclass", "continuous"):
        raise ValueError(
            f"target_type='auto' inferred {inferred!r} from y; ImpactEncoder codes binary, "
            "multiclass or continuous outcomes (1-D y): pass target_type explicitly"
        )
    return inferred


def as_multiclass_target(
    y: Any, n_rows: int, classes: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(classes, codes)``: the sorted classes and ``y`` as their indices (int64).

    ``classes``: the declared public label set (sorted, at least two labels); every label of
    ``y`` must belong to it, and declared classes may be absent from ``y``. ``None``: the
    classes are read from ``y``.

    Raises
    ------
    ValueError
        When ``y`` is missing, not 1-D, of the wrong length, holds NaN, has fewer than two
        distinct values (without ``classes``), or holds a label outside ``classes``.
    """
    arr = check_y(y, n_rows, "a multiclass outcome")
    if classes is not None:
        return classes, label_codes(arr, classes)
    if arr.dtype.kind == "f" and (arr != np.round(arr)).any():
        raise ValueError(
            "target_type='multiclass' needs class labels, but y holds non-integral floats: "
            "use target_type='continuous' for a numeric outcome"
        )
    classes, codes = np.unique(arr, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(
            "ImpactEncoder needs at least two classes, but y has only 1 class: the codes compare "
            "each level with the class frequencies (declare classes= for a public label set)"
        )
    return classes, codes.astype(np.int64).ravel()


def as_continuous_target(y: Any, n_rows: int, limit: float | None = None) -> np.ndarray:
    """``y`` as float64 (1-D, finite; with ``limit``, at most ``limit`` in magnitude).

    Raises
    ------
    ValueError
        When ``y`` is missing, not 1-D, of the wrong length, not numeric, not finite, or
        beyond ``limit`` (the message quotes the public limit only, never a value of ``y``).
    """
    arr = check_y(y, n_rows, "a continuous outcome")
    if arr.dtype.kind not in "biuf":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"target_type='continuous' needs a numeric y, got values of dtype {arr.dtype}"
            ) from None
        if not np.isfinite(arr).all():
            raise ValueError("y contains NaN or infinity; the outcome must be finite")
    arr = np.asarray(arr, dtype=np.float64)
    if limit is not None and arr.size and not np.abs(arr).max() <= limit:
        raise ValueError(
            f"y holds values beyond +-{limit:g}, too large for the level sums and codes in "
            f"double precision; pass target_bounds=(lo, hi) with |lo|, |hi| <= {limit:g} "
            "(y is clipped to them) or rescale y"
        )
    return arr


def check_target_bounds(bounds: Any) -> tuple[float, float]:
    """``(lo, hi)`` as finite floats with ``lo < hi`` and ``|lo|, |hi| <= TARGET_LIMIT``."""
    try:
        lo, hi = bounds
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        raise ValueError(
            f"target_bounds must be a pair (lo, hi) of finite numbers, got {bounds!r}"
        ) from None
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"target_bounds must be finite, got ({lo}, {hi})")
    if not lo < hi:
        raise ValueError(
            f"target_bounds=({lo}, {hi}) is reversed or empty: it must satisfy lo < hi"
        )
    if max(abs(lo), abs(hi)) > TARGET_LIMIT:
        raise ValueError(
            f"target_bounds=({lo:g}, {hi:g}) is too wide for double precision: the level "
            f"sums and codes need -{TARGET_LIMIT:g} <= lo < hi <= {TARGET_LIMIT:g} "
            "(rescale the outcome, e.g. to other units, to use wider bounds)"
        )
    return lo, hi
