"""What a private linear fit states: the size it is planned with, the worst-case privacy
statement of a run planned from a noisy count, the statement's closing lines, and what it keeps
outside the statement.

What belongs here: the private dataset size of a run (declared, fixed by the relation, or a
noisy count, :func:`_plan_size`), the a-priori worst case over the noisy count
(:func:`_worst_case_statement`, :func:`_worst_case_poisson`), the wording every linear
statement shares (:func:`_statement_lines`, :data:`SEED_SECRET`), the refusal to release a
non-finite model (:func:`_finite_coef`) and the non-private :class:`TrainingDiagnostics`.
What does not: the family-specific plans and statements (DP-SGD in :mod:`.estimators`, DP-SCD
in :mod:`.scd_estimators`) and the accountants themselves (:mod:`privlearn.accounting`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from privlearn.accounting.size import (
    SIZE_EPSILON_FRACTION,
    DatasetSize,
    public_size,
    resolve_size,
)

__all__ = [
    "COUNT_MARGIN",
    "DEFAULT_COUNT_EPSILON",
    "SEED_SECRET",
    "WORST_CASE_GRID_RATIO",
    "WORST_CASE_ORDERS",
    "TrainingDiagnostics",
]

#: Epsilon of the noisy row count when the noise is given as ``noise_multiplier`` (no target
#: epsilon to take :data:`~privlearn.accounting.size.SIZE_EPSILON_FRACTION` of).
DEFAULT_COUNT_EPSILON = 0.05


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
    A count below :func:`trusted_count` (its noise margin) is replaced by ``floor``, so a
    tiny epsilon plans the public floor's schedule instead of one drawn from the noise.
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
    if size.value is not None and size.value < trusted_count(count_eps):
        # a count below its noise margin cannot tell the data from data of `floor` rows: the
        # public floor's plan (issue 30, item 8; post-processing of the count)
        size = dataclasses.replace(size, value=floor)
    return size, train_eps


#: A noisy count ``n~`` plans a schedule only when ``n~ >= COUNT_MARGIN / epsilon_n``, the
#: margin that the count's discrete-Laplace noise exceeds with probability at most ``1e-3``
#: (``P(Z >= t) <= exp(-epsilon_n t)``); a smaller count is replaced by the public floor (the
#: batch size: rate 1, ``epochs`` steps). A tiny epsilon then gives one stable plan: on data
#: below the margin every seed but a ``1e-3`` share plans the floor's schedule, and where the
#: margin exceeds the public cap of the count no seed plans anything else (issue 30, item 8:
#: at epsilon 1e-5 on 41 rows the schedules ranged over 1 to 116,576 steps and 2 of 6 seeds
#: were refused). At epsilon 1 (a count of epsilon 0.05) the margin is 138 rows.
COUNT_MARGIN = math.log(1e3)


def trusted_count(count_epsilon: float) -> float:
    """The smallest noisy count (:data:`COUNT_MARGIN` ``/ count_epsilon``) a schedule is
    planned from; a smaller count plans the public floor's schedule."""
    return COUNT_MARGIN / count_epsilon


# ---- the worst case over a noisy count ----------------------------------------------------------
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
    count's public range ``size.bounds`` by the tightest sound bound
    (:func:`_worst_case_tightest`: on each cell of the range the smaller of the PLD's and Renyi
    DP's epsilon), plus the count's own epsilon (basic composition). The statement names the
    accountant of the binding cell (``"pld"`` or ``"rdp"``) and shows Renyi DP's worst case
    beside it. ``lattice = (scale, coordinates)``: the noise is released on a lattice
    (:mod:`privlearn.accounting.lattice`): the worst case is converted at the continuous delta
    the slack of ``coordinates`` draws (an upper bound: the longest schedule in the range)
    leaves, and its epsilon raised by the slack, as in
    :func:`~privlearn.accounting.lattice.lattice_statement`."""
    from privlearn.accounting import PrivacyStatement
    from privlearn.accounting.lattice import lattice_epsilon, lattice_slack

    assert size.bounds is not None
    args = (sigma, batch_size, epochs, tasks, *size.bounds)
    slack = None
    if lattice is None:
        eps, rdp_eps, accountant, order, evaluated = _worst_case_tightest(*args, delta)
    else:
        about = _worst_case_tightest(*args, delta)[0]
        slack = lattice_slack(lattice[0], lattice[1], delta, about + 1.0)
        found: list[Any] = []

        def continuous(delta_c: float) -> float:
            found[:] = [_worst_case_tightest(*args, delta_c)]
            return found[0][0]

        eps = lattice_epsilon(continuous, slack, delta)
        _, rdp_eps, accountant, order, evaluated = found[0]
        rdp_eps = slack.epsilon(rdp_eps)  # Renyi DP's worst case, with the same slack
    lo, hi = size.bounds
    note = (
        f"worst case over the noisy count in [{lo}, {hi}]: the range is cut into cells (ratio "
        f"{WORST_CASE_GRID_RATIO:g}; each cell bounded by its largest step count at its "
        "largest rate) and each cell takes the smaller of the PLD's and Renyi DP's epsilon "
        f"(the PLD on the {evaluated} cell(s) with the largest Renyi-DP bounds, at most "
        f"{WORST_CASE_PLD_CELLS}); the largest cell bound is stated ({accountant})"
    )
    statement = PrivacyStatement(
        epsilon=eps,
        delta=delta,
        accountant=accountant,
        best_order=order if accountant == "rdp" else None,
        neighboring="add_remove",
        lattice=slack,
        rdp_epsilon=rdp_eps,
        note=note,
    )
    return statement, eps + size.epsilon


#: Most PLD compositions one worst case over the noisy count runs (each ~0.1-1 s): the cells
#: with the largest Renyi-DP bounds get the PLD's, the rest keep Renyi DP's (sound either way).
WORST_CASE_PLD_CELLS = 8
#: Grid step of the PLD in the worst case (coarser than the statements' ``1e-4``: pessimistic
#: still, four times fewer points; the binding cells are typically the closed-form ``q = 1``).
WORST_CASE_PLD_INTERVAL = 4e-4


def _worst_case_tightest(
    sigma: float,
    batch_size: int,
    epochs: int,
    tasks: int,
    floor: int,
    cap: int,
    delta: float,
) -> tuple[float, float, str, float | None, int]:
    """``(epsilon, Renyi-DP epsilon, accountant, order, PLD cells)``: an upper bound of the
    epsilon at ``delta`` of every planned size ``m`` in ``[floor, cap]`` (as
    :func:`_worst_case_poisson`) by the tightest sound bound.

    The range is cut into the cells ``[m_i, m_{i+1}]`` of :func:`_worst_case_poisson`'s grid;
    every ``m`` of a cell runs at most ``tasks T(m_{i+1})`` steps at a rate at most
    ``q(m_i)``, and both the Renyi-DP curve and the privacy loss distribution's hockey-stick
    curve of the Poisson-subsampled Gaussian are nondecreasing in the rate (a rate-``q`` step
    is the rate-``q'`` step, ``q' >= q``, run on a Poisson subsample of rate ``q / q'``, and
    subsampling couples neighbours to neighbours or equal sets) and in the number of steps. So
    each cell's epsilon is bounded by the Renyi-DP conversion and by the PLD's epsilon
    (:func:`~privlearn.accounting.pld.epsilon_for_sigma_pld`) of that one schedule, and by the
    smaller of the two. The cells past the first ``m_k`` whose tail bound (``T(cap)`` steps at
    ``q(m_k)``, valid for every ``m >= m_k``) is at most half the largest cell bound so far
    form one last cell. The PLD runs on the :data:`WORST_CASE_PLD_CELLS` cells with the largest
    Renyi-DP bounds (while those exceed the largest bound found); the result is the largest
    cell bound, and ``accountant`` names the bound that gives it. ``sigma`` below
    :data:`~privlearn.accounting.pld.PLD_MIN_SIGMA`: Renyi DP alone.
    """
    return _worst_case_tightest_cached(
        float(sigma), int(batch_size), int(epochs), int(tasks), int(floor), int(cap), float(delta)
    )


@lru_cache(maxsize=64)
def _worst_case_tightest_cached(
    sigma: float, batch_size: int, epochs: int, tasks: int, floor: int, cap: int, delta: float
) -> tuple[float, float, str, float | None, int]:
    from privlearn.accounting.pld import PLD_MIN_SIGMA, PLDRangeError, epsilon_for_sigma_pld
    from privlearn.accounting.rdp import rdp_poisson_gaussian, rdp_to_epsilon

    orders = WORST_CASE_ORDERS
    cells = _size_cells(floor, cap)
    top = -(-(epochs * cap) // batch_size)
    bounds: list[tuple[float, float, int, int]] = []  # (rdp epsilon, order, rows lo, steps)
    largest = 0.0
    for i, (lo, hi) in enumerate(cells):
        rdp = rdp_poisson_gaussian(min(1.0, batch_size / lo), sigma, orders)
        if i > 0 and i % 4 == 0:
            tail, tail_order = rdp_to_epsilon(orders, tasks * top * rdp, delta)
            if tail <= 0.5 * largest:  # one last cell [lo, cap]
                bounds.append((float(tail), float(tail_order), lo, tasks * top))
                break
        steps = tasks * (-(-(epochs * hi) // batch_size))
        eps, order = rdp_to_epsilon(orders, steps * rdp, delta)
        largest = max(largest, float(eps))
        bounds.append((float(eps), float(order), lo, steps))
    bounds.sort(key=lambda c: -c[0])
    rdp_eps = bounds[0][0]
    best, accountant, best_order, evaluated = -1.0, "rdp", None, 0
    for eps, order, lo, steps in bounds:  # by Renyi-DP bound, largest first
        if eps <= best:
            break  # every remaining cell is below the largest cell bound found
        pld = math.inf
        if sigma >= PLD_MIN_SIGMA and evaluated < WORST_CASE_PLD_CELLS:
            evaluated += 1
            try:
                pld = epsilon_for_sigma_pld(
                    sigma,
                    delta,
                    q=min(1.0, batch_size / lo),
                    steps=steps,
                    interval=WORST_CASE_PLD_INTERVAL,
                )
            except PLDRangeError:  # out of the PLD's range: Renyi DP's bound for this cell
                pld = math.inf
        # a cell without the PLD (none left to run) keeps Renyi DP's bound, the largest of
        # the remaining ones: the loop stops at the next cell
        cell = (pld, "pld", None) if pld < eps else (eps, "rdp", order)
        if cell[0] > best:
            best, accountant, best_order = cell
    return float(best), float(rdp_eps), accountant, best_order, evaluated


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
    curve = np.zeros(orders.shape)
    top_steps = tasks * (-(-(epochs * cap) // batch_size))
    cells = _size_cells(floor, cap)
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


def _size_cells(floor: int, cap: int) -> list[tuple[int, int]]:
    """The cells ``[m_i, m_{i+1}]`` of the geometric grid (ratio
    :data:`WORST_CASE_GRID_RATIO`) of planned sizes from ``floor`` to ``cap``: the one grid both
    worst-case bounds (:func:`_worst_case_poisson`, :func:`_worst_case_tightest`) walk."""
    grid = [max(1, floor)]
    while grid[-1] < cap:
        grid.append(min(cap, max(grid[-1] + 1, math.ceil(grid[-1] * WORST_CASE_GRID_RATIO))))
    return list(zip(grid, grid[1:])) if len(grid) > 1 else [(grid[0], grid[0])]


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
        if size.source == "noisy_count" and size.bounds is not None and size.epsilon > 0.0:
            lines.append(
                f"  a count below {trusted_count(size.epsilon):.6g} (its noise margin, "
                f"ln(1e3) / {size.epsilon:.6g}) plans the public floor's schedule "
                f"(n~ = {size.bounds[0]}); the count is capped at {size.bounds[1]} rows"
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
