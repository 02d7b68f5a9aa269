"""The run specification of the quadratic-gradient optimizers (``quadgrad_train``): Chiang,
"Privacy-preserving logistic regression training with a faster gradient variant", Sections
3.2-3.3 and Algorithm 1; the baseline NAG is Kim, Song, Kim, Lee, Cheon (2018a).

What belongs here: the optimizers and defaults of ``quadgrad_train``, the validated
:class:`QuadgradSpec` and :func:`prepare_quadgrad`, the checks of its inputs (labels in
{-1, +1}, real vectors, ``B_bar``, the magnitude of ``X`` the optimizers can take in double
precision) and of its outputs (a computed ``B_bar``, the trained coefficients), and the result
record :class:`QuadgradRun`; used by the core wrapper (:mod:`privlearn.linear.quadgrad`), the
numpy twin (:mod:`privlearn.reference.quadgrad`) and the packed HE trainers
(:mod:`privlearn.he`). The schedules are :mod:`privlearn._specs.quadgrad_schedules`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from privlearn._checks import as_index, as_real
from privlearn._design_matrix import as_design_matrix
from privlearn._specs.quadgrad_schedules import Schedule, resolve_schedule

__all__ = [
    "MAX_ABS_SUM",
    "MAX_ITER_LIMIT",
    "OPTIMIZERS",
    "QUADGRAD_DEFAULTS",
    "QuadgradRun",
    "QuadgradSpec",
    "check_bbar",
    "check_computed_bbar",
    "check_labels",
    "check_magnitude",
    "check_trained_coef",
    "prepare_quadgrad",
    "real_vector",
    "reject_complex",
]

OPTIMIZERS = ("nag", "adagrad", "adam", "gd")
#: Largest accepted ``max_iter`` (a guard against typos; each iteration is a full pass).
MAX_ITER_LIMIT = 1 << 24


@dataclass(frozen=True)
class QuadgradRun:
    """Result of ``quadgrad_train``.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
        Final iterate ``beta`` (``V`` for NAG), in the columns of ``X`` as given.
    loglik_path : ndarray of shape (n_iter + 1,)
        ``l(beta)`` at the starting point and after each iteration.
    bbar : ndarray of shape (n_features,)
        ``diag(B_bar)`` used by the enhanced optimizers (empty for the plain ones).
    n_iter : int
    schedule : Schedule
        The step-factor schedule used.
    """

    coef: np.ndarray
    loglik_path: np.ndarray
    bbar: np.ndarray
    n_iter: int
    schedule: Schedule


@dataclass(frozen=True)
class QuadgradSpec:
    """Validated arguments of ``quadgrad_train`` (both backends)."""

    optimizer: str
    enhanced: bool
    max_iter: int
    schedule: Schedule
    epsilon: float
    nag_alpha0: float
    adam_beta1: float
    adam_beta2: float
    adaptive_eps: float


def reject_complex(values: Any, name: str) -> Any:
    """Return ``values`` unchanged; a complex array (dense or sparse) is a ``TypeError``.

    ``np.asarray(values, dtype=float64)`` would silently drop the imaginary part.
    """
    dtype = getattr(values, "dtype", None)
    if dtype is None:
        try:
            dtype = np.asarray(values).dtype
        except (TypeError, ValueError):
            return values  # left to the caller's own conversion and its error
    if np.dtype(dtype).kind == "c":
        raise TypeError(f"{name} must be real, got complex values (dtype {dtype})")
    return values


def real_vector(values: Any, name: str, d: int) -> np.ndarray:
    """``values`` as a finite float64 vector of length ``d``, or a clear error naming it."""
    reject_complex(values, name)
    try:
        v = np.array(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of real numbers") from None
    if v.shape != (d,):
        raise ValueError(f"{name} must have shape ({d},), got {np.shape(values)}")
    if not np.isfinite(v).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return v


def _positive(value: Any, name: str) -> float:
    v = as_real(value, name, numbers_only=True)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {v}")
    return v


def _unit_interval(value: Any, name: str) -> float:
    v = as_real(value, name, numbers_only=True)
    if not 0.0 <= v < 1.0:
        raise ValueError(f"{name} must lie in [0, 1), got {v}")
    return v


def check_labels(y: Any, n: int) -> np.ndarray:
    """``y`` as float64 of length ``n`` with values in {-1, +1}."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}")
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but X has {n} rows")
    if not np.issubdtype(y.dtype, np.number) or np.issubdtype(y.dtype, np.complexfloating):
        raise ValueError(f"y must be numeric with values in {{-1, +1}}, got dtype {y.dtype}")
    y = y.astype(np.float64)
    bad = ~((y == 1.0) | (y == -1.0))
    if bad.any():  # the offending label is a private value: never quoted (issue 30, item 5)
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"y must contain only -1 and +1 (map the classes first); row {i} holds another value"
        )
    return y


def check_bbar(bbar: Any, d: int) -> np.ndarray | None:
    if bbar is None:
        return None
    reject_complex(bbar, "bbar")
    try:
        b = np.ascontiguousarray(bbar, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("bbar must be an array of real numbers") from None
    if b.shape != (d,):
        raise ValueError(f"bbar must have shape ({d},), got {b.shape}")
    if not (np.isfinite(b).all() and (b > 0).all()):
        raise ValueError("bbar must be finite and > 0")
    return b


_SCALE_HINT = (
    "scale the features first, e.g. to [0, 1] as the paper does "
    "(privlearn.data.minmax_scale or maxabs_scale with public bounds)"
)


#: Largest sum of ``|x|`` over a column or a row of ``X`` that ``quadgrad_train`` accepts: 2^499
#: (about 1.6e150). Then every Gram row sum ``sum_j |(X^T X)_kj| <= max_k c_k max_i r_i`` and every
#: squared gradient entry ``g_k^2 <= c_k^2`` is at most 2^998, and Adagrad's sum of up to
#: ``MAX_ITER_LIMIT = 2^24`` squares stays below ``DBL_MAX`` (~2^1024).
MAX_ABS_SUM = 2.0**499


def check_magnitude(X: Any) -> None:
    """Refuse a design matrix whose magnitude overflows the optimizers in double precision.

    Let ``c_k = sum_i |x_ik|`` (column sums) and ``r_i = sum_k |x_ik|`` (row sums). Both must be
    at most :data:`MAX_ABS_SUM` (2^499): finite but huge features (``|x| >~ 1e154``) used to
    overflow ``X^T X`` (``B_bar`` became 0 in the numpy twin, a silent all-zero model, and NaN in
    the core, where ``inf - inf`` appeared in another summation order) or the squared gradients
    of Adagrad / Adam (an infinite denominator: no step at all). The rule is a function of ``X``
    alone, so both backends refuse the same inputs, in O(nnz) before any training.
    """
    if sp.issparse(X):
        a = np.abs(X.data)
        with np.errstate(over="ignore"):
            cols = np.bincount(X.indices, weights=a, minlength=X.shape[1])
            row_of = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
            rows = np.bincount(row_of, weights=a, minlength=X.shape[0])
        c_max, r_max = float(cols.max(initial=0.0)), float(rows.max(initial=0.0))
    else:
        c_max = r_max = 0.0
        cols = np.zeros(X.shape[1])
        step = max(1, (1 << 20) // max(1, X.shape[1]))  # ~8 MB of |x| at a time
        with np.errstate(over="ignore"):
            for lo in range(0, X.shape[0], step):
                block = np.abs(X[lo : lo + step])
                cols += block.sum(axis=0)
                r_max = max(r_max, float(block.sum(axis=1).max()))
        c_max = float(cols.max())
    if not (c_max <= MAX_ABS_SUM and r_max <= MAX_ABS_SUM):
        what = "column" if not c_max <= MAX_ABS_SUM else "row"
        worst = c_max if what == "column" else r_max
        raise ValueError(
            f"X is too large in magnitude: a {what} sum of |x| is {worst:.3g}, above 2^499 "
            f"(~{MAX_ABS_SUM:.2g}), where X^T X or the squared gradients overflow double "
            f"precision; {_SCALE_HINT}"
        )


def check_computed_bbar(bbar: Any) -> np.ndarray:
    """``diag(B_bar)`` computed from ``X``, or a ValueError when its Gram row sums overflowed.

    ``B_bar_kk = 1 / (epsilon + sum_j |(X^T X)_kj| / 4)`` (Definition 3.2) is finite and
    ``> 0`` for every column exactly when the row sum is finite: every finite sum is at most
    ``DBL_MAX``, whose quarter's reciprocal is a positive double. Finite but huge features
    (``|x| >~ 1e154``) overflow ``X^T X``; the sum is then ``inf`` (so ``B_bar = 0`` and no
    step is ever taken: a silently wrong all-zero model) or ``NaN`` (``inf - inf``, depending
    on the summation order, so the backends used to disagree). Both backends refuse instead.
    """
    b = np.asarray(bbar, dtype=np.float64)
    bad = ~(np.isfinite(b) & (b > 0.0))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(
            "X is too large in magnitude: sum_j |(X^T X)_kj| overflows double precision for "
            f"column {k}, so B_bar (Definition 3.2) is not a positive number; {_SCALE_HINT}"
        )
    return b


def check_trained_coef(coef: Any) -> np.ndarray:
    """The final iterate of ``quadgrad_train``, or a ValueError instead of non-finite values.

    With finite inputs the iteration can still overflow double precision (features of huge
    magnitude with the plain-gradient step sizes, which assume features of order one); both
    backends refuse to return such a model rather than return NaN or infinite coefficients.
    """
    beta = np.asarray(coef, dtype=np.float64)
    if not np.isfinite(beta).all():
        raise ValueError(
            "the iteration overflowed double precision (non-finite coefficients): the "
            f"features are too large in magnitude for the step sizes; {_SCALE_HINT}"
        )
    return beta


def prepare_quadgrad(
    X: Any,
    y: Any,
    beta0: Any,
    *,
    optimizer: Any,
    enhanced: Any,
    max_iter: Any,
    schedule: Any,
    epsilon: Any,
    nag_alpha0: Any,
    adam_beta1: Any,
    adam_beta2: Any,
    adaptive_eps: Any,
) -> tuple[Any, np.ndarray, np.ndarray, QuadgradSpec]:
    """Validate and convert the arguments of ``quadgrad_train`` (both backends)."""
    if not isinstance(optimizer, str) or optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
    if not isinstance(enhanced, (bool, np.bool_)):
        raise TypeError(f"enhanced must be a bool, got {type(enhanced).__name__}")
    enhanced = bool(enhanced)
    if isinstance(max_iter, (int, np.integer)) and not isinstance(max_iter, bool) and max_iter < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter}")
    max_iter = as_index(max_iter, "max_iter", lower=1, upper=MAX_ITER_LIMIT)
    X = as_design_matrix(reject_complex(X, "X"))
    check_magnitude(X)
    n, d = X.shape
    y = check_labels(y, n)
    beta = np.zeros(d) if beta0 is None else real_vector(beta0, "beta0", d)
    spec = QuadgradSpec(
        optimizer=optimizer,
        enhanced=enhanced,
        max_iter=max_iter,
        schedule=resolve_schedule(schedule, optimizer, enhanced),
        epsilon=_positive(epsilon, "epsilon"),
        nag_alpha0=_positive(nag_alpha0, "nag_alpha0"),
        adam_beta1=_unit_interval(adam_beta1, "adam_beta1"),
        adam_beta2=_unit_interval(adam_beta2, "adam_beta2"),
        adaptive_eps=_positive(adaptive_eps, "adaptive_eps"),
    )
    return X, y, beta, spec


#: Defaults of the optional keyword arguments of ``quadgrad_train``.
QUADGRAD_DEFAULTS: dict[str, Any] = {
    "optimizer": "nag",
    "enhanced": True,
    "max_iter": 10,
    "schedule": None,
    "epsilon": 1e-8,
    "nag_alpha0": 0.01,
    "adam_beta1": 0.9,
    "adam_beta2": 0.999,
    "adaptive_eps": 1e-8,
}
