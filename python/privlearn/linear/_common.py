"""Helpers shared by the private linear estimators (DP-SGD in :mod:`.estimators`, DP-SCD in
:mod:`.scd_estimators`): parameter checks, the row-norm precondition, the seed -> key rule and
the scikit-learn prediction API of a linear model (binary classifier or regressor)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.special import expit, log_expit, softmax
from sklearn.base import BaseEstimator
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, check_X_y

from privlearn._checks import as_index, as_real, check_sparse_structure
from privlearn._design_matrix import as_design_matrix, row_norms, scaled_row_norms
from privlearn._labels import label_codes
from privlearn.accounting.size import (
    DEFAULT_DELTA,
    SIZE_EPSILON_FRACTION,
    DatasetSize,
    public_size,
    resolve_size,
)
from privlearn.distributed.linear import (
    DaskRows,
    as_dask_rows,
    as_dask_target,
    is_dask_array,
)

try:  # scikit-learn >= 1.2 (the name is private, but it is what validate_data calls)
    from sklearn.utils.validation import _check_feature_names
except ImportError:  # pragma: no cover - older scikit-learn

    def _check_feature_names(estimator: Any, X: Any, *, reset: bool) -> None:
        estimator._check_feature_names(X, reset=reset)

__all__ = [
    "ACCOUNTED_AS",
    "NEIGHBORING",
    "BACKENDS",
    "PATH_POINTS",
    "ROW_NORM_TOLERANCE",
    "DEFAULT_COUNT_EPSILON",
    "BinaryLinearClassifierMixin",
    "LinearClassifierMixin",
    "TrainingDiagnostics",
    "LinearModelBase",
    "LinearRegressorMixin",
]

#: Rows may exceed the unit norm by this relative rounding tolerance (``x / ||x||`` computed in
#: floating point can have norm ``1 + 1 ulp``).
ROW_NORM_TOLERANCE = 1e-12
#: Default number of recorded iterates of the (non-private) objective diagnostic.
PATH_POINTS = 150
#: Epsilon of the noisy row count when the noise is given as ``noise_multiplier`` (no target
#: epsilon to take :data:`~privlearn.accounting.size.SIZE_EPSILON_FRACTION` of).
DEFAULT_COUNT_EPSILON = 0.05
#: Ranges of the numeric parameters: outside them the trainers' arithmetic overflows or
#: underflows (e.g. ``alpha = 1e300`` or a subnormal ``1e-320``, ``eta0 = 1e308``, a noise
#: multiplier of ``1e-300``), so they are refused with a ValueError instead.
ALPHA_RANGE = (1e-12, 1e6)
ETA0_RANGE = (1e-12, 1e6)
CLIP_RANGE = (1e-12, 1e12)
SIGMA_RANGE = (1e-6, 1e6)
INTERCEPT_SCALING_RANGE = (1e-6, 1e6)
#: Largest finite epsilon accepted (``inf`` is the non-private fit).
EPSILON_MAX = 1e4
#: Most passes a private linear fit accepts: more cannot help (each pass costs privacy, so
#: the noise per step grows with them) and only makes the run absurdly long.
MAX_EPOCHS = 10_000
#: Most steps (times one-vs-rest problems) a schedule may have; a longer public schedule is
#: refused (a schedule planned from a noisy count is clamped far below it,
#: :data:`~privlearn.accounting.size.MAX_PLANNED_STEPS`).
MAX_STEPS = 1 << 31
#: How each batch sampler is accounted (``calibrate_sigma(sampling=...)``) and which neighbouring
#: relation that bound is for: Poisson subsampling is add/remove-one, fixed-size batches without
#: replacement are replace-one (the sampler and the accountant must agree).
ACCOUNTED_AS = {"poisson": "poisson", "fixed": "without_replacement"}
NEIGHBORING = {"poisson": "add_remove", "fixed": "replace_one"}

BACKENDS = ("core", "reference")


# ---- parameter checks ---------------------------------------------------------------------------
def _choice(value: Any, name: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def _finite_positive(value: Any, name: str) -> float:
    v = as_real(value, name, numbers_only=True)
    if not (math.isfinite(v) and v > 0.0):
        raise ValueError(f"{name} must be a finite number > 0, got {v}")
    return v


def _epsilon(value: Any) -> float:
    eps = as_real(value, "epsilon", numbers_only=True)
    if not eps > 0.0:  # also rejects NaN
        raise ValueError(f"epsilon must be > 0 (float('inf') for a non-private fit), got {eps}")
    if math.isfinite(eps) and eps > EPSILON_MAX:
        raise ValueError(
            f"epsilon must be <= {EPSILON_MAX:g} (larger values promise nothing and make the "
            f"noise arithmetic underflow) or float('inf') for a non-private fit, got {eps}"
        )
    return eps


def _bounded(value: Any, name: str, bounds: tuple[float, float]) -> float:
    """A real number in the closed range ``bounds`` (ranges outside which the arithmetic of the
    trainers overflows or underflows)."""
    v = as_real(value, name, numbers_only=True)
    lo, hi = bounds
    if not lo <= v <= hi:  # also rejects NaN and inf
        raise ValueError(f"{name} must lie in [{lo:g}, {hi:g}], got {v}")
    return v


def _alpha(value: Any, *, positive: bool) -> float:
    """The L2 regularisation: 0 (where allowed) or in :data:`ALPHA_RANGE`."""
    alpha = as_real(value, "alpha", numbers_only=True)
    if alpha == 0.0 and not positive:
        return 0.0
    lo, hi = ALPHA_RANGE
    if not lo <= alpha <= hi:
        zero = "" if positive else "0 or "
        raise ValueError(f"alpha must be {zero}in [{lo:g}, {hi:g}], got {alpha}")
    return alpha


def _clip(value: Any) -> float:
    """A clipping norm: 0 (no clipping) or in :data:`CLIP_RANGE`."""
    clip = as_real(value, "clip", numbers_only=True)
    if clip == 0.0:
        return 0.0
    lo, hi = CLIP_RANGE
    if not lo <= clip <= hi:
        raise ValueError(f"clip must be 0 (no clipping) or in [{lo:g}, {hi:g}], got {clip}")
    return clip


def _seed(seed: Any) -> int | None:
    if seed is None:
        return None
    return as_index(seed, "seed", upper=(1 << 64) - 1)


def _delta(value: Any, *, pure: bool = False) -> float:
    """The target delta: ``None`` is :data:`~privlearn.accounting.size.DEFAULT_DELTA` (a fixed
    public number, never a function of the private ``n``); pure-DP mechanisms take 0."""
    if pure:
        if value is not None and as_real(value, "delta", numbers_only=True) != 0.0:
            raise ValueError(
                f"this mechanism is pure epsilon-DP: delta must be None or 0, got {value}"
            )
        return 0.0
    if value is None:
        return DEFAULT_DELTA
    delta = as_real(value, "delta", numbers_only=True)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    return delta


# ---- the private dataset size -------------------------------------------------------------------
def _plan_size(
    n: int,
    n_samples: Any,
    epsilon: float | None,
    *,
    add_remove: bool,
    seed: int | None,
    floor: int,
    cap: int | None = None,
    ledger: Any = None,
    dry: bool = False,
) -> tuple[DatasetSize, float | None]:
    """The size a fit is planned with, and the epsilon left for training.

    Under replace-one neighbours the size is fixed by the relation (both data sets have ``n``
    rows). Under add/remove-one it is private: a declared ``n_samples`` is used as is (and
    checked), otherwise :data:`~privlearn.accounting.size.SIZE_EPSILON_FRACTION` of ``epsilon``
    (or :data:`DEFAULT_COUNT_EPSILON` when the noise is given as a multiplier, ``epsilon is
    None``) buys an exact discrete-Laplace count clamped to ``>= floor``; the rest of the
    budget is returned for training (basic composition of the two parts); ``ledger`` (if given)
    is charged the count's epsilon before it is drawn. ``floor`` is the batch
    size: it must not exceed a public size (with a private size, refusing it would reveal
    whether ``n >= floor``; the sampling rate is then ``min(1, floor / n~)``). ``cap`` (public,
    :func:`~privlearn.accounting.size.planned_size_cap`) clamps the count from above.
    ``dry=True`` draws nothing: a stand-in count ``floor`` takes the count's place (a plan
    whose statement does not depend on the count's value, used to price a fit before it
    reads anything).
    """
    declared = public_size(n_samples, n)
    if declared is None and epsilon is not None and math.isinf(epsilon):
        declared = DatasetSize(n, "not_private")
    elif declared is None and not add_remove:
        declared = DatasetSize(n, "replace_one")
    if declared is not None:
        if declared.public and floor > n:
            raise ValueError(f"batch_size ({floor}) must be <= n_samples = {n}")
        return declared, epsilon
    count_eps = DEFAULT_COUNT_EPSILON if epsilon is None else SIZE_EPSILON_FRACTION * epsilon
    train_eps = None if epsilon is None else epsilon - count_eps
    if dry:
        top = floor if cap is None else max(floor, cap)
        return DatasetSize(floor, "noisy_count", count_eps, (floor, top)), train_eps
    size = resolve_size(n, epsilon=count_eps, seed=seed, floor=floor, cap=cap, ledger=ledger)
    return size, train_eps


def _epochs(value: Any) -> int:
    """The number of passes: an int in ``[1, MAX_EPOCHS]``, or an error that says why."""
    epochs = as_index(value, "epochs", lower=1, upper=1 << 62)
    if epochs > MAX_EPOCHS:
        raise ValueError(
            f"epochs={epochs} is more than {MAX_EPOCHS} passes: a private fit cannot gain from "
            "them (every pass costs privacy, so the noise per step grows with the passes) and "
            "the run would take very long; lower epochs"
        )
    return epochs


def _check_steps(steps: int, tasks: int) -> int:
    """``steps``, or a ValueError for a schedule of more than :data:`MAX_STEPS` steps."""
    if steps * max(1, tasks) > MAX_STEPS:
        raise ValueError(
            f"the schedule has {steps} steps x {tasks} problem(s), more than {MAX_STEPS}: lower "
            "epochs or raise batch_size (such a run cannot finish in reasonable time)"
        )
    return steps


def _worst_case_statement(
    sigma: float,
    batch_size: int,
    epochs: int,
    tasks: int,
    size: DatasetSize,
    delta: float,
    lattice: tuple[float, int] | None = None,
) -> tuple[Any, float]:
    """``(statement, total epsilon)`` of a Poisson-sampled Gaussian run planned from a noisy
    count with a given noise multiplier: the training epsilon is the worst case over the
    count's public range ``size.bounds`` (:func:`_worst_case_poisson`), plus the count's own
    epsilon (basic composition). ``lattice = (scale, coordinates)``: the noise is released on
    a lattice (:mod:`privlearn.accounting.lattice`): the worst case is converted at the
    continuous delta the slack of ``coordinates`` draws (an upper bound: the longest schedule
    in the range) leaves, and its epsilon raised by the slack, as in
    :func:`~privlearn.accounting.lattice.lattice_statement`."""
    from privlearn.accounting import PrivacyStatement
    from privlearn.accounting.lattice import lattice_epsilon, lattice_slack

    assert size.bounds is not None
    slack = None
    if lattice is None:
        eps, order = _worst_case_poisson(sigma, batch_size, epochs, tasks, *size.bounds, delta)
    else:
        about, order = _worst_case_poisson(
            sigma, batch_size, epochs, tasks, *size.bounds, delta
        )
        slack = lattice_slack(lattice[0], lattice[1], delta, about + 1.0)
        orders: list[float] = []

        def continuous(delta_c: float) -> float:
            eps_c, best = _worst_case_poisson(
                sigma, batch_size, epochs, tasks, *size.bounds, delta_c
            )
            orders[:] = [best]
            return eps_c

        eps = lattice_epsilon(continuous, slack, delta)
        order = orders[0]
    statement = PrivacyStatement(
        epsilon=eps,
        delta=delta,
        accountant="rdp",
        best_order=order,
        neighboring="add_remove",
        lattice=slack,
    )
    return statement, eps + size.epsilon


#: Ratio of the geometric grid of planned sizes on which :func:`_worst_case_poisson` bounds
#: the RDP curve of every count in ``[floor, cap]``.
WORST_CASE_GRID_RATIO = 1.05
#: RDP orders of the worst-case bound (fewer fractional orders than the accountant's default,
#: which only loosens the bound: any set of orders gives a valid conversion).
WORST_CASE_ORDERS = np.concatenate(
    [np.arange(11, 20) / 10.0, np.arange(8, 44) / 4.0, np.arange(11, 64), [128, 256, 512, 1024]]
).astype(np.float64)


def _worst_case_poisson(
    sigma: float,
    batch_size: int,
    epochs: int,
    tasks: int,
    floor: int,
    cap: int,
    delta: float,
) -> tuple[float, float]:
    """``(epsilon, best order)``: an upper bound of the epsilon at ``delta`` of ``tasks x T(m)``
    Poisson-subsampled Gaussian mechanisms (noise multiplier ``sigma``) with rate
    ``q(m) = min(1, batch_size / m)`` and ``T(m) = ceil(epochs m / batch_size)``, valid for
    EVERY planned size ``m`` in ``[floor, cap]`` (the worst case over the noisy count: an
    a-priori guarantee, a function of public inputs only).

    The per-step RDP of the Poisson-subsampled Gaussian is nondecreasing in ``q`` at every
    order (the Renyi divergence is jointly convex and zero at ``q = 0``, so
    ``D_a((1-q) P + q Q || P)`` is convex in ``q`` with minimum at 0), and ``T`` is
    nondecreasing in ``m``. On the cells ``[m_i, m_{i+1}]`` of a geometric grid (ratio
    :data:`WORST_CASE_GRID_RATIO`) every ``m`` of the cell therefore has the curve
    ``tasks T(m) rdp(q(m), a) <= tasks T(m_{i+1}) rdp(q(m_i), a)``; the maximum over the cells,
    order by order, bounds the RDP curve of every ``m`` in ``[floor, cap]``, and its tight
    RDP -> (epsilon, delta) conversion (Canonne, Kamath, Steinke 2020) bounds every epsilon.
    The grid stops early (and reports the bound below) once ``tasks T(cap) rdp(q(m_i), a)``,
    a bound for every ``m >= m_i``, raises the epsilon of the maximum so far by less than 0.1%:
    the epsilon of ``max(curve, tail)`` bounds every remaining cell.
    """
    return _worst_case_poisson_cached(
        float(sigma), int(batch_size), int(epochs), int(tasks), int(floor), int(cap), float(delta)
    )


@lru_cache(maxsize=64)
def _worst_case_poisson_cached(
    sigma: float, batch_size: int, epochs: int, tasks: int, floor: int, cap: int, delta: float
) -> tuple[float, float]:
    from privlearn.accounting.rdp import rdp_poisson_gaussian, rdp_to_epsilon

    orders = WORST_CASE_ORDERS
    grid = [max(1, floor)]
    while grid[-1] < cap:
        grid.append(min(cap, max(grid[-1] + 1, math.ceil(grid[-1] * WORST_CASE_GRID_RATIO))))
    curve = np.zeros(orders.shape)
    top_steps = tasks * (-(-(epochs * cap) // batch_size))
    cells = list(zip(grid, grid[1:])) if len(grid) > 1 else [(grid[0], grid[0])]
    for i, (lo, hi) in enumerate(cells):
        rdp = rdp_poisson_gaussian(min(1.0, batch_size / lo), sigma, orders)
        np.maximum(curve, tasks * (-(-(epochs * hi) // batch_size)) * rdp, out=curve)
        if i % 8 == 7 and i + 1 < len(cells):
            # every m >= lo has a curve <= T(cap) rdp(q(lo), a): the final curve is at most
            # max(curve, tail), so its epsilon bounds the worst case; stop when it adds < 0.1%
            bound = np.maximum(curve, top_steps * rdp)
            eps_bound, order_bound = rdp_to_epsilon(orders, bound, delta)
            if eps_bound <= 1.001 * rdp_to_epsilon(orders, curve, delta)[0]:
                return float(eps_bound), float(order_bound)
    eps, order = rdp_to_epsilon(orders, curve, delta)
    return float(eps), float(order)


#: How every statement words the seed: secret randomness, never a public input.
SEED_SECRET = (
    "the seed (secret randomness: an int seed makes runs reproducible for research; whoever "
    "knows it knows the noise -- not a release setting; seed=None, the default, draws it from "
    "the operating system)"
)


def _statement_lines(
    size: DatasetSize | None,
    epsilon: float,
    neighboring: str | None,
    *,
    worst_case: bool = False,
    public: tuple[str, ...] = (),
    released: str = "coef_, intercept_, n_steps_ (and privacy_)",
) -> list[str]:
    """The lines every private linear statement ends with: how the size entered the run (and
    the basic composition of a noisy count with the training part; ``worst_case``: the
    training part is the worst case over the counts), the neighbouring relation, then three
    lines: what is PUBLIC (declared inputs; ``public`` adds estimator-specific ones), what is
    RELEASED, what is SECRET (the data, the noise and the seed)."""
    lines = []
    if size is not None:
        lines.append(f"  {size.describe()}")
        if size.epsilon > 0.0:
            lines.append(
                f"  total = count {size.epsilon:.6g} + training {epsilon - size.epsilon:.6g} "
                "(basic composition)"
            )
        if worst_case and size.bounds is not None:
            lo, hi = size.bounds
            lines.append(
                f"  training epsilon: worst case over the noisy count in [{lo}, {hi}] (a-priori "
                "guarantee, the same for every count); declare n_samples= (a public size) or "
                "give epsilon= (noise calibrated for each count) for a tighter number"
            )
    items = ["the number of features", "the hyperparameters", *public]
    if size is not None and size.source == "public":
        items.append(f"the declared size n_samples={size.value}")
    lines += [
        f"  neighbouring relation: {neighboring}",
        f"  public: {', '.join(items)}",
        f"  released: {released}",
        f"  secret: the training rows, the noise and {SEED_SECRET}",
    ]
    return lines


@dataclass(frozen=True)
class TrainingDiagnostics:
    """NON-PRIVATE training diagnostics (the ``diagnostics_`` attribute, only with
    ``diagnostics=True``).

    Everything here is computed on the raw training rows without noise, so it is NOT covered
    by ``privacy_``: keep it away from anything you release (a pickled model with
    ``diagnostics_`` is not a private model). Delete it with ``del est.diagnostics_``.

    Attributes
    ----------
    objective_path : ndarray of shape (n_recorded,)
        The training objective at the recorded iterates (on the rows the trainer saw, after
        ``clip_rows`` and the intercept column).
    objective_steps : ndarray of shape (n_recorded,)
        Steps done at each recorded iterate.
    duality_gap_path : ndarray of shape (n_recorded,) or None
        DP-SCD: ``P(theta) - D(alpha)`` at the same steps (NaN for the primal variant).
    dual_coef : ndarray of shape (n_samples,) or None
        DP-SCD: the dual variables ``alpha``, one per training example (empty for the primal
        variant).
    """

    objective_path: np.ndarray
    objective_steps: np.ndarray
    duality_gap_path: np.ndarray | None = None
    dual_coef: np.ndarray | None = None

    not_private = True  # a marker for code that checks before releasing


# ---- rows and data ------------------------------------------------------------------------------
def _check_row_norms(X: Any, bound: float, scaling: float | None, reason: str) -> None:
    """Raise ``ValueError`` naming the first row with ``||x_i|| > bound`` (up to rounding).

    ``scaling`` is the estimator's ``intercept_scaling`` when an intercept column is appended
    (then ``bound = sqrt(1 - scaling^2)``), else ``None``; ``reason`` says which privacy proof
    needs the bound. ``X`` may be a :class:`~privlearn.distributed.linear.DaskRows` (the norms
    are computed on the workers; only the count and the first violation come back).
    """
    limit = bound * (1.0 + ROW_NORM_TOLERANCE)
    if isinstance(X, DaskRows):
        import dask
        import dask.array as da

        norms_d = X.array.map_blocks(row_norms, drop_axis=1, dtype=np.float64)
        bad_d = norms_d > limit
        count, first = dask.compute(bad_d.sum(), da.argmax(bad_d))
        if count == 0:
            return
        i, count = int(first), int(count)
        norm_i = float(norms_d[i].compute())
    else:
        norms = row_norms(X)
        bad = np.flatnonzero(norms > limit)
        if bad.size == 0:
            return
        i, count, norm_i = int(bad[0]), int(bad.size), float(norms[int(bad[0])])
    if scaling is None:
        what = f"row {i} of X has L2 norm {norm_i:.6g} > 1"
    else:
        what = (
            f"row {i} of X has L2 norm {norm_i:.6g} > sqrt(1 - intercept_scaling^2) = "
            f"{bound:.6g} (the row augmented with intercept_scaling={scaling:g} must have "
            f"norm <= 1)"
        )
    raise ValueError(
        f"{what} ({count} such rows): {reason}. Scale the data with public bounds, or pass "
        "clip_rows=True to project each row onto the unit ball (a per-row map: no privacy cost)."
    )


def _training_rows(X: Any, bound: float | None, scaling: float | None) -> Any:
    """The rows the trainer sees: each row projected onto the ball of radius ``bound`` (when not
    None; a per-row map, so no privacy cost), then the constant intercept column of value
    ``scaling`` (when not None). At most one new array is made, and none when nothing changes;
    the caller's ``X`` is never written to. On a :class:`DaskRows` the same map runs on every
    chunk (lazily): each row gets the same bits for any chunking."""
    if isinstance(X, DaskRows):
        if bound is None and scaling is None:
            return X
        width = X.shape[1] + (scaling is not None)
        return X.map_rows(lambda b: _training_rows(b, bound, scaling), width)
    shrink = None
    if bound is not None:
        scale, root = scaled_row_norms(X)  # ||x_i|| = scale * root, also beyond DBL_MAX
        with np.errstate(over="ignore"):
            big = scale * root > bound
        if big.any():
            # bound / ||x_i|| = (bound / scale) / root for the rows outside the ball: finite
            # and > 0 for every finite row (a row of 1e308's is projected, not zeroed).
            shrink = np.ones(X.shape[0])
            shrink[big] = (bound / scale[big]) / root[big]
    if sp.issparse(X):
        if shrink is None and scaling is None:
            return X
        data = X.data if shrink is None else X.data * np.repeat(shrink, np.diff(X.indptr))
        if scaling is None:
            out = sp.csr_matrix((data, X.indices, X.indptr), shape=X.shape)
            return as_design_matrix(out)
        n, d = X.shape
        counts = np.diff(X.indptr) + 1
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        last = indptr[1:] - 1  # position of each row's intercept entry
        keep = np.ones(indptr[-1], dtype=bool)
        keep[last] = False
        new_data = np.empty(indptr[-1])
        new_indices = np.empty(indptr[-1], dtype=np.int64)
        new_data[keep], new_indices[keep] = data, X.indices
        new_data[last], new_indices[last] = scaling, d
        return as_design_matrix(sp.csr_matrix((new_data, new_indices, indptr), shape=(n, d + 1)))
    if scaling is None:
        if shrink is None:
            return X
        return np.ascontiguousarray(X * shrink[:, None])
    out = np.empty((X.shape[0], X.shape[1] + 1))
    out[:, :-1] = X
    out[:, -1] = scaling
    if shrink is not None:
        out[:, :-1] *= shrink[:, None]
    return out


def _finite_coef(coef: Any, private: bool) -> np.ndarray:
    """The trained coefficients, or a ValueError instead of releasing a non-finite value."""
    w = np.asarray(coef, dtype=np.float64)
    if not np.isfinite(w).all():
        what = (
            "a private fit produced non-finite coefficients (this is a bug: clipping should "
            "bound every update); nothing is released"
            if private
            else "the fit diverged to non-finite coefficients (the data or the parameters "
            "overflow double precision: scale the data, lower eta0 or raise alpha)"
        )
        raise ValueError(what)
    return w


def _check_fit_data(
    X: Any, y: Any, estimator: Any, *, y_numeric: bool
) -> tuple[np.ndarray | sp.csr_matrix | DaskRows, Any]:
    """scikit-learn's checks (2-D, non-empty, finite, real, 1-D y of matching length; the
    feature names of a DataFrame become ``feature_names_in_``), then
    float64 C-contiguous or canonical CSR. A ``dask.array`` X gives a
    :class:`~privlearn.distributed.linear.DaskRows` and a dask y chunked like its rows (checked
    lazily: shapes and chunks now, values on the workers)."""
    # feature_names_in_ from a DataFrame with string column names (removed otherwise), as
    # scikit-learn's estimators keep it; predict then checks the names it is given
    _check_feature_names(estimator, X, reset=True)
    if is_dask_array(X):
        rows = as_dask_rows(X)
        return rows, as_dask_target(y, rows, numeric=y_numeric)
    check_sparse_structure(X)  # before scikit-learn converts (and indexes) a malformed matrix
    X, y = check_X_y(
        X, y, accept_sparse="csr", dtype=np.float64, y_numeric=y_numeric, estimator=estimator
    )
    return as_design_matrix(X), y


def _binary_labels(
    y: np.ndarray, classes: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(classes, y_internal)``: exactly two classes, ``classes[1]`` mapped to ``+1``.

    ``classes`` (optional) is a declared public label set (sorted, as
    :func:`privlearn._labels.declared_classes` returns it): it must hold exactly two labels,
    every label of ``y`` must belong to it (a label outside raises ValueError naming it) and a
    declared class may be absent from ``y``. Without it the two classes are read from ``y``."""
    check_classification_targets(y)
    if classes is not None:
        if classes.size != 2:
            raise ValueError(
                f"Only binary classification is supported: classes must declare exactly 2 "
                f"labels, got {classes.size}: {classes[:10].tolist()}"
            )
        codes = label_codes(y, classes)
        return classes, np.where(codes == 1, 1.0, -1.0)
    classes = np.unique(y)
    if classes.size != 2:
        raise ValueError(
            f"Only binary classification is supported: y must contain exactly 2 classes, "
            f"got {classes.size} class(es): {classes[:10].tolist()}"
        )
    return classes, np.where(y == classes[1], 1.0, -1.0)


def _check_dask_labels(y: Any, classes: np.ndarray) -> None:
    """Refuse a dask ``y`` holding a label outside the declared ``classes`` (one pass on the
    workers; the foreign labels are gathered only to name them in the error)."""
    inside = y.map_blocks(
        lambda b: np.asarray(pd.Index(classes).get_indexer(np.asarray(b))) >= 0, dtype=bool
    )
    if int((~inside).sum().compute()) > 0:
        label_codes(np.asarray(y[~inside].compute()), classes)  # raises, naming them


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
    states it). A dask ``y`` gives lazy dask label vectors (the classes, or the membership
    check, run on the workers)."""
    if is_dask_array(y):
        import dask.array as da

        if classes is None:
            found = np.asarray(da.unique(y).compute())
            check_classification_targets(found)
        else:
            _check_dask_labels(y, classes)
            found = classes
        if found.size < 2 or (found.size > 2 and not multiclass):
            what = "classes must declare" if classes is not None else "y must contain"
            raise ValueError(
                f"{what} exactly 2 classes{' or more' if multiclass else ''}, got "
                f"{found.size}: {found[:10].tolist()}"
            )
        if found.size == 2:
            return found, [da.where(y == found[1], 1.0, -1.0)]
        return found, [da.where(y == c, 1.0, -1.0) for c in found]
    check_classification_targets(y)
    if classes is not None:
        if classes.size == 2 or not multiclass:
            classes, y_internal = _binary_labels(y, classes)
            return classes, [y_internal]
        codes = label_codes(y, classes)
        return classes, [np.where(codes == k, 1.0, -1.0) for k in range(classes.size)]
    found = np.unique(y)
    if found.size == 2 or not multiclass:
        found, y_internal = _binary_labels(y)
        return found, [y_internal]
    if found.size < 2:
        noun = "class" if found.size == 1 else "classes"
        raise ValueError(
            f"y must contain at least 2 classes, got {found.size} {noun}: {found.tolist()}"
        )
    return found, [np.where(y == c, 1.0, -1.0) for c in found]


# ---- prediction API -----------------------------------------------------------------------------
class LinearModelBase(BaseEstimator):
    """Prediction helpers of a fitted linear model with ``coef_``, ``intercept_`` and
    ``n_features_in_`` (input checks, ``X @ coef + intercept``) and the common tags."""

    def _set_coef(self, coef: np.ndarray, intercept: float) -> None:  # pragma: no cover
        raise NotImplementedError

    def _validate_X_predict(self, X: Any) -> np.ndarray | sp.csr_matrix:
        """The checked rows to predict on, after :meth:`_transform_rows` (the same public
        per-row map the training rows went through)."""
        check_is_fitted(self, "coef_")
        _check_feature_names(self, X, reset=False)  # warns or raises as scikit-learn does
        check_sparse_structure(X)
        X = as_design_matrix(check_array(X, accept_sparse="csr", dtype=np.float64, estimator=self))
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input"
            )
        return self._transform_rows(X)

    def _transform_rows(self, X: Any) -> Any:
        """The public per-row map of training applied to prediction rows: with
        ``row_projection_ = r`` (set by a fit that projected its rows, ``clip_rows``), each
        row of norm > ``r`` is scaled onto the ball of radius ``r``, exactly as in training;
        otherwise (``None`` or absent) the rows are used as given."""
        radius = getattr(self, "row_projection_", None)
        if radius is None:
            return X
        return _training_rows(X, float(radius), None)

    def _linear(self, X: Any) -> np.ndarray:
        X = self._validate_X_predict(X)
        coef = np.asarray(self.coef_, dtype=np.float64).reshape(-1)
        intercept = float(np.asarray(self.intercept_).reshape(-1)[0])
        return np.asarray(X @ coef).reshape(-1) + intercept

    def __sklearn_tags__(self) -> Any:  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = self.seed is None
        return tags


class LinearClassifierMixin:
    """``decision_function`` / ``predict`` / ``predict_proba`` (``loss="log_loss"`` only) of a
    linear classifier with ``classes_``: binary (``coef_`` of shape ``(1, d)``, ``classes_[1]``
    is ``+1``) or, where the estimator sets ``_multiclass = True``, one-vs-rest over ``K > 2``
    classes (``coef_`` of shape ``(K, d)``).

    Put it before scikit-learn's ``ClassifierMixin`` in the bases, so that its tags are set
    after ``ClassifierMixin`` has created the classifier tags."""

    classes_: np.ndarray
    loss: str
    _multiclass = False
    #: How ``K > 2`` scores become probabilities: ``"ovr"`` (each class's logistic probability,
    #: normalised) or ``"softmax"`` (a multinomial model).
    _multiclass_proba = "ovr"

    def _set_coef(self, coef: np.ndarray, intercept: Any) -> None:
        self.coef_ = np.atleast_2d(coef)
        self.intercept_ = np.atleast_1d(np.asarray(intercept, dtype=np.float64))

    def decision_function(self, X: Any) -> np.ndarray:
        """``X @ coef_.T + intercept_``: binary, positive values predict ``classes_[1]``;
        multiclass, the largest column predicts its class.

        Returns
        -------
        ndarray of shape (n_samples,) (binary) or (n_samples, n_classes)
        """
        X = self._validate_X_predict(X)  # type: ignore[attr-defined]
        scores = np.asarray(X @ np.asarray(self.coef_).T) + self.intercept_
        return scores.reshape(-1) if scores.shape[1] == 1 else scores

    def predict(self, X: Any) -> np.ndarray:
        """Class labels: binary, ``classes_[1]`` where the decision function is > 0;
        multiclass, the class of the largest score."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0.0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]

    def _has_proba(self) -> bool:
        if self.loss != "log_loss":
            raise AttributeError(
                f"predict_proba is only available for loss='log_loss' (the logistic model); "
                f"loss={self.loss!r} has no probabilistic interpretation"
            )
        return True

    @available_if(_has_proba)
    def predict_proba(self, X: Any) -> np.ndarray:
        """Probabilities of ``classes_`` under the logistic model (``loss="log_loss"`` only;
        for ``"hinge"`` the attribute does not exist and accessing it raises AttributeError).
        Multiclass: the softmax of the scores (a multinomial model) or, one-vs-rest, each
        class's logistic probability normalised to sum to 1 (computed in log space: every row
        is finite and sums to 1, also when every class's probability underflows).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p = expit(scores)
            return np.column_stack([1.0 - p, p])
        if self._multiclass_proba == "softmax":
            return softmax(scores, axis=1)
        # one-vs-rest: sigma(s_k) / sum_j sigma(s_j), normalised in log space (the softmax of
        # the log-sigmoids), so that rows whose every sigma(s_k) underflows to 0 (all scores
        # below about -745) stay finite and sum to 1 instead of giving 0 / 0
        return softmax(log_expit(scores), axis=1)

    def __sklearn_tags__(self) -> Any:  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        if getattr(tags, "classifier_tags", None) is not None:
            tags.classifier_tags.multi_class = self._multiclass
        return tags

    def _more_tags(self) -> dict[str, Any]:  # scikit-learn < 1.6
        return {"binary_only": not self._multiclass, "non_deterministic": self.seed is None}  # type: ignore


#: The binary-only name of :class:`LinearClassifierMixin` (``_multiclass = False``).
BinaryLinearClassifierMixin = LinearClassifierMixin


class LinearRegressorMixin:
    """``predict`` of a linear regressor (``coef_`` of shape ``(n_features,)``)."""

    def _set_coef(self, coef: np.ndarray, intercept: float) -> None:
        self.coef_ = coef
        self.intercept_ = intercept

    def predict(self, X: Any) -> np.ndarray:
        """``X @ coef_ + intercept_``."""
        return self._linear(X)  # type: ignore[attr-defined]
