"""The training data of a private linear fit: the input checks of ``fit``, the labels, the
row-norm precondition of the privacy proofs and the rows the trainer sees.

What belongs here: :func:`_check_fit_data` (scikit-learn's checks, float64 / canonical CSR, or
a back-end's distributed rows), the label sets of binary and one-vs-rest problems
(:func:`_binary_labels`, :func:`_class_tasks`), the row-norm check (:func:`_check_row_norms`)
and the per-row map the trainer's rows go through (:func:`_training_rows`: projection onto a
ball, the intercept column). Distributed data are reached through :mod:`privlearn.backends`
only (never a back-end module). What does not: the parameter checks (:mod:`._params`) and the
prediction API (:mod:`._prediction`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_X_y

from privlearn import _core
from privlearn._checks import check_sparse_structure
from privlearn._design_matrix import (
    RowView,
    _all_finite,
    as_design_matrix,
    row_norms,
    scaled_row_norms,
)
from privlearn._labels import check_classification_target, label_codes
from privlearn.backends import DistributedBackend, DistributedRows, backend_for, backend_for_array

try:  # scikit-learn >= 1.2 (the name is private, but it is what validate_data calls)
    from sklearn.utils.validation import _check_feature_names
except ImportError:  # pragma: no cover - older scikit-learn

    def _check_feature_names(estimator: Any, X: Any, *, reset: bool) -> None:
        estimator._check_feature_names(X, reset=reset)


__all__ = ["ROW_NORM_TOLERANCE"]

#: Rows may exceed the unit norm by this relative rounding tolerance (``x / ||x||`` computed in
#: floating point can have norm ``1 + 1 ulp``).
ROW_NORM_TOLERANCE = 1e-12


#: What a label error says instead of the labels read from ``y`` (private data, issue 30 item 5).
_NOT_QUOTED = "the labels read from y are not quoted: they are private data"
#: scikit-learn's wording for a y of a single class (its estimator checks look for it).
_ONE_CLASS = "; y holds 1 class"


# ---- the row-norm precondition and the trainer's rows ------------------------------------------
def _check_finite_rows(X: Any, norms: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """The finiteness check of a dense ``X`` whose check :func:`_check_fit_data` left to the
    fit (``check_finite=False``), in one read of ``X`` (issue 32, item 2): fused with the row
    norms when the fit needs them (``norms``: returns their ``(scale, root)``,
    :func:`~privlearn._design_matrix.scaled_row_norms`), else the plain check. A CSR ``X``
    (checked by :func:`_check_fit_data`) gets its row norms from one pass of the core over its
    values when the fit needs them (numpy's would make two temporaries of its size); a
    distributed ``X`` is checked elsewhere (None)."""
    if sp.issparse(X):
        if not norms:
            return None
        sq = _core.csr_row_squares(X.data, X.indices, X.indptr, X.shape[1])
        return scaled_row_norms(X, squares=sq, structure_checked=True)
    if not isinstance(X, np.ndarray):
        return None
    if norms:
        # one read of X in the core: finiteness and the plain sums of squares (the order of
        # its dot_sq); the rare rows outside the plain range are rescaled in numpy
        return scaled_row_norms(X, squares=_core.finite_row_squares(X))
    if not _all_finite(X):
        raise ValueError("X contains NaN or infinite values")
    return None


def _check_row_norms(
    X: Any,
    bound: float,
    scaling: float | None,
    reason: str,
    norms: tuple[np.ndarray, np.ndarray] | None = None,
) -> None:
    """Raise ``ValueError`` naming the first row with ``||x_i|| > bound`` (up to rounding). The
    message quotes the row's index and the public bound only: never its norm or how many rows
    violate (values computed from the private rows; issue 30, item 5).

    ``scaling`` is the estimator's ``intercept_scaling`` when an intercept column is appended
    (then ``bound = sqrt(1 - scaling^2)``), else ``None``; ``reason`` says which privacy proof
    needs the bound. ``X`` may be a back-end's :class:`~privlearn.backends.DistributedRows`
    (the norms are computed where the rows are; only the count and the first violation come
    back). ``norms``: the rows' ``(scale, root)`` when already computed.
    """
    limit = bound * (1.0 + ROW_NORM_TOLERANCE)
    if norms is not None:
        with np.errstate(over="ignore"):
            bad = np.flatnonzero(norms[0] * norms[1] > limit)
        if bad.size == 0:
            return
        i = int(bad[0])
    elif isinstance(X, DistributedRows):
        count, i, _ = _backend(X).rows_above(X, row_norms, limit)
        if count == 0:
            return
    else:
        norms = row_norms(X)
        bad = np.flatnonzero(norms > limit)
        if bad.size == 0:
            return
        i = int(bad[0])
    if scaling is None:
        what = f"row {i} of X has L2 norm > 1"
    else:
        what = (
            f"row {i} of X has L2 norm > sqrt(1 - intercept_scaling^2) = {bound:.6g} (the row "
            f"augmented with intercept_scaling={scaling:g} must have norm <= 1)"
        )
    raise ValueError(
        f"{what} (the first such row; its norm and the number of such rows are not quoted: "
        f"they are private data): {reason}. Scale the data with public bounds, or pass "
        "clip_rows=True to project each row onto the unit ball (a per-row map: no privacy cost)."
    )


def _training_rows(
    X: Any,
    bound: float | None,
    scaling: float | None,
    *,
    view: bool = False,
    norms: tuple[np.ndarray, np.ndarray] | None = None,
) -> Any:
    """The rows the trainer sees: each row projected onto the ball of radius ``bound`` (when not
    None; a per-row map, so no privacy cost), then the constant intercept column of value
    ``scaling`` (when not None). At most one new array is made, and none when nothing changes;
    the caller's ``X`` is never written to. With ``view=True`` (a trainer that takes one) a
    dense or CSR ``X`` gives a :class:`~privlearn._design_matrix.RowView` instead of the new
    array: the projection's factors and the intercept are applied by the core as it reads each
    row, with the same bits (issue 32, item 2: no copy of X); ``norms``: the rows' ``(scale,
    root)`` when already computed (:func:`_check_finite_rows`). On a back-end's
    :class:`~privlearn.backends.DistributedRows` the same map runs on every block of rows
    (lazily): each row gets the same bits for any split."""
    if isinstance(X, DistributedRows):
        if bound is None and scaling is None:
            return X
        width = X.shape[1] + (scaling is not None)
        return X.map_rows(lambda b: _training_rows(b, bound, scaling), width)
    shrink = None
    if bound is not None:
        # ||x_i|| = scale * root, also beyond DBL_MAX
        scale, root = scaled_row_norms(X) if norms is None else norms
        with np.errstate(over="ignore"):
            big = scale * root > bound
        if big.any():
            # bound / ||x_i|| = (bound / scale) / root for the rows outside the ball: finite
            # and > 0 for every finite row (a row of 1e308's is projected, not zeroed).
            shrink = np.ones(X.shape[0])
            shrink[big] = (bound / scale[big]) / root[big]
    if shrink is None and scaling is None:
        return X
    out = RowView(X, shrink, scaling)  # the trainer reads the rows in place, or their matrix
    if view:
        return out
    return as_design_matrix(out.materialize()) if sp.issparse(X) else out.materialize()


# ---- fit data and labels ------------------------------------------------------------------------
def _check_fit_data(
    X: Any, y: Any, estimator: Any, *, y_numeric: bool, check_finite: bool = True
) -> tuple[np.ndarray | sp.csr_matrix | DistributedRows, Any]:
    """scikit-learn's checks (2-D, non-empty, finite, real, 1-D y of matching length; the
    feature names of a DataFrame become ``feature_names_in_``), then
    float64 C-contiguous or canonical CSR. A back-end's array X (a ``dask.array``:
    :mod:`privlearn.backends`) gives its :class:`~privlearn.backends.DistributedRows` and a y
    split like its rows (checked lazily: shapes and chunks now, values on the workers).
    ``check_finite=False``: a dense X's finiteness is left to the caller
    (:func:`_check_finite_rows`, before X is used)."""
    # feature_names_in_ from a DataFrame with string column names (removed otherwise), as
    # scikit-learn's estimators keep it; predict then checks the names it is given. A plain
    # ndarray has none: the attribute is removed as scikit-learn would, without its data-frame
    # probe (a tenth of a small fit)
    if type(X) is np.ndarray:
        if hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_
    else:
        _check_feature_names(estimator, X, reset=True)
    dist = backend_for_array(X)
    if dist is not None:
        rows = dist.as_rows(X)
        return rows, dist.as_target(y, rows, numeric=y_numeric)
    if _plain_fit_data(X, y):  # what check_X_y would hand back unchanged (issue 32, item 2)
        return as_design_matrix(X, check_finite=check_finite, structure_checked=True), y
    check_sparse_structure(X)  # before scikit-learn converts (and indexes) a malformed matrix
    checked = X
    # X's finiteness is checked once, by as_design_matrix (one read, no temporary): scikit-learn's
    # own pass over X would be a second full read of the data (issue 32, item 2)
    X, y = check_X_y(
        X,
        y,
        accept_sparse="csr",
        dtype=np.float64,
        y_numeric=y_numeric,
        estimator=estimator,
        ensure_all_finite=False,
    )
    # the structure check is not repeated when scikit-learn handed back the matrix it ran on
    return as_design_matrix(X, check_finite=check_finite, structure_checked=X is checked), y


def _plain_fit_data(X: Any, y: Any) -> bool:
    """Whether scikit-learn's ``check_X_y`` (as :func:`_check_fit_data` calls it) would return
    ``X`` and ``y`` as they are: a non-empty 2-D C-contiguous float64 ndarray ``X`` and a 1-D
    integer, boolean or finite float ndarray ``y`` of one entry per row. Its own checks of such
    input (a data-frame probe of each argument, two array validations) were about a quarter of
    a small fit's time; any other input, every one it refuses included, still goes to it."""
    if type(X) is not np.ndarray or type(y) is not np.ndarray:
        return False
    if X.ndim != 2 or X.dtype != np.float64 or not X.flags.c_contiguous or 0 in X.shape:
        return False
    if y.ndim != 1 or y.shape[0] != X.shape[0] or y.dtype.kind not in "biuf":
        return False
    return y.dtype.kind != "f" or bool(np.isfinite(y).all())


def _binary_labels(
    y: np.ndarray, classes: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(classes, y_internal)``: exactly two classes, ``classes[1]`` mapped to ``+1``.

    ``classes`` (optional) is a declared public label set (sorted, as
    :func:`privlearn._labels.declared_classes` returns it): it must hold exactly two labels,
    every label of ``y`` must belong to it (a label outside raises ValueError naming it) and a
    declared class may be absent from ``y``. Without it the two classes are read from ``y``."""
    if classes is not None:
        check_classification_target(y)
        return _declared_binary(y, classes)
    classes = _distinct_labels(y)
    return _binary_from(y, classes)


def _declared_binary(y: np.ndarray, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_binary_labels` with a declared set, ``y``'s target type already checked."""
    if classes.size != 2:
        raise ValueError(
            f"Only binary classification is supported: classes must declare exactly 2 "
            f"labels, got {classes.size}: {classes[:10].tolist()}"
        )
    codes = label_codes(y, classes)
    return classes, np.where(codes == 1, 1.0, -1.0)


def _distinct_labels(y: np.ndarray) -> np.ndarray:
    """``np.unique(y)`` after scikit-learn's target-type check (a 1-D classification target).

    A numeric ``y`` is checked on its distinct labels (for a 1-D array its type -- binary,
    multiclass, continuous -- is that of its distinct values), so ``y`` is read once, by
    ``np.unique`` (issue 32, item 2); other dtypes are checked on ``y`` first (an object array
    of unorderable labels gets scikit-learn's error, not ``np.unique``'s)."""
    if y.ndim == 1 and y.dtype.kind in "biuf":
        found = _unique_small_ints(y)
        if found is None:
            found = np.unique(y)
        check_classification_target(found)
        return found
    check_classification_target(y)
    return np.unique(y)


#: Widest range of an integer y whose distinct labels are counted (np.bincount) instead of
#: hashed (np.unique, ~30x slower on 1e5 labels).
_COUNTED_RANGE = 1 << 16


def _unique_small_ints(y: np.ndarray) -> np.ndarray | None:
    """``np.unique(y)`` (same values and dtype) for a signed or narrow unsigned integer ``y``
    whose labels span at most :data:`_COUNTED_RANGE` values, from its minimum, maximum and
    label counts; None otherwise."""
    if y.size == 0 or y.dtype.kind not in "iu" or (y.dtype.kind == "u" and y.dtype.itemsize >= 8):
        return None
    lo, hi = int(y.min()), int(y.max())
    if hi - lo >= _COUNTED_RANGE:
        return None
    counts = np.bincount(np.subtract(y, lo, dtype=np.int64))
    return (np.flatnonzero(counts) + lo).astype(y.dtype)


def _binary_from(y: np.ndarray, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_binary_labels` with the distinct labels of ``y`` read (``classes``)."""
    if classes.size != 2:
        raise ValueError(
            "Only binary classification is supported: y must contain exactly 2 classes"
            f"{_ONE_CLASS if classes.size == 1 else ''} ({_NOT_QUOTED})"
        )
    return classes, np.where(y == classes[1], 1.0, -1.0)


def _check_distributed_labels(dist: DistributedBackend, y: Any, classes: np.ndarray) -> None:
    """Refuse a distributed ``y`` holding a label outside the declared ``classes`` (one pass
    where the data are; the foreign labels are gathered only to name them in the error)."""
    foreign = dist.outside(y, classes)
    if foreign.size:
        label_codes(foreign, classes)  # raises, naming them


def _one_vs_rest(positive: Any) -> Any:
    """The block map ``y -> +1 where y == positive, else -1`` (float64)."""

    def labels(block: Any) -> np.ndarray:
        return np.where(np.asarray(block) == positive, 1.0, -1.0)

    return labels


def _backend(rows: DistributedRows) -> DistributedBackend:
    """The registered back-end of a distributed row set."""
    dist = backend_for(rows)
    if dist is None:  # pragma: no cover - a row set is made by a registered back-end
        raise TypeError(f"no registered back-end handles {type(rows).__name__}")
    return dist


def _class_tasks(
    y: Any, multiclass: bool, classes: np.ndarray | None = None
) -> tuple[np.ndarray, list[Any]]:
    """``(classes, tasks)``: one {-1, +1} label vector per binary problem. Two classes give one
    problem (``classes[1]`` is ``+1``, as :func:`_binary_labels`); ``K > 2`` classes give the
    ``K`` one-vs-rest problems (class ``k`` is ``+1`` in problem ``k``) when ``multiclass``.

    ``classes`` (optional) is the declared public label set (checked by
    :func:`privlearn._labels.declared_classes`): the classes and ``K`` are then that set,
    never read from ``y``; a label of ``y`` outside it raises ValueError naming it (before
    anything is charged); a declared class absent from ``y`` still gets its problem (all
    ``-1``). Without it the classes are read from ``y`` (outside the guarantee: the caller
    states it). A back-end's ``y`` (a dask array) gives lazy label vectors of that back-end
    (the classes, or the membership check, run where the data are)."""
    dist = backend_for_array(y)
    if dist is not None:
        if classes is None:
            found = dist.distinct(y)
            check_classification_target(found)
        else:
            _check_distributed_labels(dist, y, classes)
            found = classes
        if found.size < 2 or (found.size > 2 and not multiclass):
            more = " or more" if multiclass else ""
            if classes is not None:
                raise ValueError(
                    f"classes must declare exactly 2 classes{more}, got {classes.size}: "
                    f"{classes[:10].tolist()}"
                )
            one = _ONE_CLASS if found.size == 1 else ""
            raise ValueError(f"y must contain exactly 2 classes{more}{one} ({_NOT_QUOTED})")
        if found.size == 2:
            return found, [dist.map_values(y, _one_vs_rest(found[1]))]
        return found, [dist.map_values(y, _one_vs_rest(c)) for c in found]
    if classes is not None:
        check_classification_target(y)
        if classes.size == 2 or not multiclass:
            classes, y_internal = _declared_binary(y, classes)
            return classes, [y_internal]
        codes = label_codes(y, classes)
        return classes, [np.where(codes == k, 1.0, -1.0) for k in range(classes.size)]
    # the labels read from y: one np.unique (the target type checked on its result), then one
    # pass for the {-1, +1} vector of a binary problem (issue 32, item 2)
    found = _distinct_labels(y)
    if found.size == 2 or not multiclass:
        found, y_internal = _binary_from(y, found)
        return found, [y_internal]
    if found.size < 2:
        # "one class" says no more than the refusal itself (fewer than 2 classes: exactly 1)
        raise ValueError(f"y must contain at least 2 classes{_ONE_CLASS} ({_NOT_QUOTED})")
    return found, [np.where(y == c, 1.0, -1.0) for c in found]
