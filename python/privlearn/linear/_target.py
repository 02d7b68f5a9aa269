"""The target bound of the private regressors (issue 22): declared public, or estimated
privately with a small, stated share of the budget.

A least-squares regressor's updates scale with the target: DP-SGD clips each example's
gradient ``(x^T w - y) x`` to ``C`` (Abadi et al. 2016, Algorithm 1) and DP-SCD scales each
dual step to ``|zeta| <= C`` (Damaskinos et al. 2021, Algorithm 1, Step 8), so the privacy
holds for any ``y``, but a raw target of a few hundred (diabetes) or of about 2000 (release
years) makes nearly every clipped step point the same way and the model cannot fit. Both
regressors therefore train on ``y' = (clip(y, lo, hi) - c) / s`` with ``c = (lo + hi) / 2`` and
``s = (hi - lo) / 2`` (``y'`` in ``[-1, 1]``), and map the model back
(``coef_ = s w``, ``intercept_ = s b + c``). ``[lo, hi]`` is

* declared PUBLIC (``target_bounds=(lo, hi)``): chosen without looking at the private data
  (a domain range: a score's scale, a year range); nothing is spent, values of ``y`` outside
  it are clipped into it (enforced in code, not an error);
* otherwise PRIVATE: a share ``target_fraction`` of ``epsilon`` buys two exponential-mechanism
  quantiles of ``y`` (Smith 2011, on the public lattice of
  :func:`privlearn.preprocessing.dp_quantiles`) at the levels :data:`TARGET_LEVELS`, and
  ``[lo, hi]`` are Tukey's fences ``Q1 - k IQR, Q3 + k IQR`` (``k`` =
  :data:`FENCE_FACTOR``) of the two released quartiles, a post-processing. The quartiles are
  searched in the public range ``target_range=(a, b)`` when given, else on
  ``asinh(y)`` in ``[-asinh(1e9), asinh(1e9)]`` (a fixed, data-independent per-row map: any
  scale up to 1e9 without a declared range). The two quantiles, ``epsilon_b / 2`` each, are
  ``epsilon_b``-DP under add/remove-one and under replace-one neighbours alike (the rank
  utility moves by at most 1 either way).

The bound, its source and its epsilon are part of the estimator's ``privacy_``
(:class:`TargetBound`, ``privacy_.target``); the total epsilon is the basic composition of the
bound's share, the noisy count's share (if any) and the training part.

Small data: the exponential mechanism needs roughly ``epsilon_b n / 8 >> log(range / spread)``
to find the quartiles inside a wide search range, so a private bound on a few hundred rows at
``epsilon <= 1`` is coarse; declare ``target_bounds`` (or a tight ``target_range``) there.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from privlearn._checks import as_real
from privlearn.backends import backend_for_array
from privlearn.exceptions import UndeclaredBoundWarning
from privlearn.preprocessing.quantiles import dp_quantiles

__all__ = [
    "TARGET_PARAMS_DOC",
    "DEFAULT_TARGET_EPSILON",
    "FENCE_FACTOR",
    "TARGET_FRACTION",
    "TARGET_LEVELS",
    "TARGET_LIMIT",
    "TargetBound",
    "TargetSpec",
    "WARN_EPSILON_ROWS",
    "check_target",
    "warn_undeclared",
]

#: The target parameters of the regressors' docstrings (DPSGDRegressor, DPSCDRegressor).
TARGET_PARAMS_DOC = """    target_bounds : (float, float) or None, default=None
        A PUBLIC bound ``(lo, hi)`` of the target, fixed without looking at the data (a
        domain range), with ``|lo|, |hi| <= 1e150``
        (:data:`~privlearn.linear._target.TARGET_LIMIT`: the rescaled model must stay
        finite). ``y`` is clipped into it (enforced, not an error) and the model is trained
        on ``(clip(y) - c) / s``, ``c = (lo + hi) / 2``, ``s = (hi - lo) / 2``, then mapped
        back (``coef_ = s w``, ``intercept_ = s b + c``). Nothing is spent on it.
        ``None``: the bound is estimated PRIVATELY with ``target_fraction`` of ``epsilon``:
        two exponential-mechanism quartiles of ``y`` (Smith 2011, on a public lattice,
        :func:`privlearn.preprocessing.dp_quantiles`) and the fences
        ``Q1 - 1.5 IQR, Q3 + 1.5 IQR``; on small data (a few hundred rows at epsilon <= 1)
        that bound is coarse, declare one (an
        :class:`~privlearn.exceptions.UndeclaredBoundWarning` says so when neither
        ``target_bounds`` nor ``target_range`` is given and the bound's epsilon times the
        planned size, public or the released noisy count, is below
        :data:`~privlearn.linear._target.WARN_EPSILON_ROWS`). ``epsilon=inf``: ``y`` as given.
        ``privacy_.target`` and ``str(privacy_)`` say which bound was used, its source and
        the budget split.
    target_range : (float, float) or None, default=None
        Private bound only: the PUBLIC range the quartiles are searched in (values outside
        are clipped into it first; ends within ``[-1e150, 1e150]``). ``None``: ``asinh(y)``
        over ``|y| <= 1e9``.
    target_fraction : float, default=0.1
        Private bound only: its share of ``epsilon`` (basic composition with the training
        part and the noisy count), in (0, 1); with ``noise_multiplier=`` the bound spends
        0.05.
    target_scale : bool, default=True
        Train on ``(clip(y) - c) / s`` (in ``[-1, 1]``) and map the model back. False: ``y``
        is only clipped into the bound and the model is trained on its scale (the objective
        of the paper's experiments, for a target already of order one).
"""

#: Default share of ``epsilon`` spent on a private target bound (chosen by
#: ``bench/python/workflow_regression.py``).
TARGET_FRACTION = 0.1
#: Epsilon of a private target bound when the noise is given as ``noise_multiplier`` (no target
#: epsilon to take a share of).
DEFAULT_TARGET_EPSILON = 0.05
#: The quantile levels a private bound releases (the quartiles).
TARGET_LEVELS = (0.25, 0.75)
#: ``k`` of the fences ``Q1 - k IQR, Q3 + k IQR`` (Tukey's 1.5).
FENCE_FACTOR = 1.5
#: Without ``target_range`` the quartiles are searched on ``asinh(y)`` in
#: ``[-ASINH_LIMIT, ASINH_LIMIT]``: ``|y|`` up to 1e9.
ASINH_LIMIT = math.asinh(1e9)
#: Resolution of the public lattice of the private quartiles (``2**bits`` cells).
TARGET_LATTICE_BITS = 24
#: An undeclared private bound is announced (:class:`~privlearn.exceptions.UndeclaredBoundWarning`)
#: only when ``epsilon_b m < WARN_EPSILON_ROWS`` for the bound's epsilon ``epsilon_b`` and the
#: size ``m`` the run is planned with, when that size is public (declared, fixed by replace-one
#: neighbours) or a noisy count the statement releases: the exponential mechanism finds a
#: quartile when ``epsilon_b m / 8`` (half the budget times the rank gap ``m / 4`` between the
#: quartile and the fence) well exceeds ``log(2**TARGET_LATTICE_BITS) ~ 16.6``; four times that
#: is ``8 * 4 * 16.6 ~ 532`` (about 5,300 rows at epsilon 1). Above it the private bound is about
#: as good as a declared one (issue 31: at 44-56k rows it equalled the declared bound) and the
#: warning said nothing. Without a usable size (the schedule does not use one) it is issued.
WARN_EPSILON_ROWS = 32.0 * TARGET_LATTICE_BITS * math.log(2.0)
#: Largest magnitude of either end of ``target_bounds`` / ``target_range`` (issue 30, item 4):
#: the model is trained on a target in ``[-1, 1]`` and mapped back by the scale
#: ``s = (hi - lo) / 2 <= TARGET_LIMIT``, so every iterate below ``1e158`` in magnitude maps to a
#: finite ``coef_`` (the iterates of a fit within the public parameter ranges stay far below
#: it), and the squared loss of a target ``|y| <= TARGET_LIMIT`` (``y^2 <= 1e300``) is finite.
#: Wider bounds are refused before anything is spent, naming this range.
TARGET_LIMIT = 1e150


@dataclass(frozen=True)
class TargetBound:
    """How the target entered a regressor's fit (``privacy_.target``).

    Attributes
    ----------
    lower, upper : float
        The bound ``y`` was clipped into before training.
    source : str
        ``"declared"`` (public ``target_bounds``), ``"private"`` (estimated with ``epsilon``)
        or ``"not_private"`` (``epsilon=inf`` without ``target_bounds``: ``y`` is used as
        given, ``lower = -inf``, ``upper = inf``, the plain objective).
    epsilon : float
        The budget the bound spent (0 unless private; part of ``privacy_.epsilon``).
    search : str or None
        Private: the public range the quartiles were searched in.
    center, scale : float
        ``y' = (clip(y) - center) / scale`` was the training target.
    quartiles : tuple of float or None
        Private: the two released quartiles the fences were computed from.
    """

    lower: float
    upper: float
    source: str
    epsilon: float = 0.0
    search: str | None = None
    center: float = 0.0
    scale: float = 1.0
    quartiles: tuple[float, float] | None = None

    def statement_line(self) -> str:
        """The statement's line on the target bound."""
        rng = f"[{self.lower:.6g}, {self.upper:.6g}]"
        if self.source == "declared":
            return (
                f"  target bound {rng}: declared public (target_bounds=), y clipped into it; "
                "nothing spent"
            )
        if self.source == "private":
            lo, hi = TARGET_LEVELS
            return (
                f"  target bound {rng}: PRIVATE, epsilon {self.epsilon:.6g} (exponential-"
                f"mechanism quantiles {lo:g}/{hi:g} of y on a public lattice, Smith 2011, "
                f"searched in {self.search}; fences Q1 - {FENCE_FACTOR:g} IQR, Q3 + "
                f"{FENCE_FACTOR:g} IQR), y clipped into it"
            )
        return "  target: y used as given, no bound (not private)"


@dataclass(frozen=True)
class TargetSpec:
    """The validated target parameters of one fit (checked before any budget is spent)."""

    bounds: tuple[float, float] | None
    search: tuple[float, float] | None
    fraction: float
    scale: bool = True

    def epsilon(self, epsilon: float | None) -> float:
        """The bound's share of the budget: 0 when declared or not private."""
        if self.bounds is not None or (epsilon is not None and math.isinf(epsilon)):
            return 0.0
        if epsilon is None:  # noise given as a multiplier
            return DEFAULT_TARGET_EPSILON
        return self.fraction * epsilon

    def resolve(
        self,
        y: Any,
        epsilon: float,
        *,
        neighboring: str | None,
        seed: int | None,
        fit_intercept: bool,
        size: Any = None,
    ) -> TargetBound:
        """The bound of this fit: declared, or drawn privately (``epsilon > 0``), or the exact
        range of ``y`` for a non-private fit. A distributed ``y`` (a dask array) is gathered on
        the (trusted) driver for the two quantiles only. ``size`` (a
        :class:`~privlearn.accounting.size.DatasetSize`, the size the run is planned with)
        decides whether an undeclared search range is announced (:func:`warn_undeclared`)."""
        if self.bounds is not None:
            lo, hi = self.bounds
            return _finish(lo, hi, "declared", 0.0, None, fit_intercept, None, self.scale)
        if epsilon == 0.0:  # a non-private fit: the plain objective on y as given
            return TargetBound(-math.inf, math.inf, "not_private")
        dist = backend_for_array(y)
        values = np.asarray(y if dist is None else dist.gather(y), dtype=np.float64)
        # The rank utility moves by at most 1 when a row is added, removed or replaced (a
        # replacement moves every rank by at most 1 and leaves q n as it is), so the quartiles
        # are epsilon-DP under either neighbouring relation.
        run_eps = epsilon
        if self.search is not None:
            q = dp_quantiles(
                values, TARGET_LEVELS, run_eps, self.search, seed=seed,
                lattice_bits=TARGET_LATTICE_BITS,
            )  # fmt: skip
            where = f"the declared target_range [{self.search[0]:g}, {self.search[1]:g}]"
        else:
            if warn_undeclared(epsilon, size):
                warnings.warn(
                    "no target_bounds or target_range declared: the target's bound is "
                    "estimated privately over |y| <= 1e9 from target_fraction of epsilon, "
                    "which needs thousands of rows at epsilon ~1 (on a few hundred rows the "
                    "model can be far worse than the mean); declare target_bounds=(lo, hi) or "
                    "target_range=(lo, hi)",
                    UndeclaredBoundWarning,
                    stacklevel=4,
                )
            u = dp_quantiles(
                np.arcsinh(values), TARGET_LEVELS, run_eps, (-ASINH_LIMIT, ASINH_LIMIT),
                seed=seed, lattice_bits=TARGET_LATTICE_BITS,
            )  # fmt: skip
            q = np.sinh(u)
            where = "asinh(y) in [-asinh(1e9), asinh(1e9)]"
        q1, q3 = float(min(q)), float(max(q))
        iqr = q3 - q1
        if not iqr > 0.0:  # both quartiles on one lattice point: widen by a public margin
            iqr = max(abs(q1), 1.0) * 1e-3
        lo, hi = q1 - FENCE_FACTOR * iqr, q3 + FENCE_FACTOR * iqr
        if self.search is not None:
            lo, hi = max(lo, self.search[0]), min(hi, self.search[1])
        return _finish(lo, hi, "private", epsilon, where, fit_intercept, (q1, q3), self.scale)


def warn_undeclared(epsilon: float, size: Any) -> bool:
    """Whether a private bound searched over the wide default range is announced: when the
    planned size is unknown to the schedule, or ``epsilon * m < WARN_EPSILON_ROWS`` for the
    planned size ``m`` (:data:`WARN_EPSILON_ROWS`). ``m`` is public (declared, fixed by the
    relation) or the released noisy count, never the exact private size: the decision is a
    post-processing of what the statement states."""
    value = getattr(size, "value", None)
    if value is None or getattr(size, "source", None) == "not_private":
        return True
    return epsilon * float(value) < WARN_EPSILON_ROWS


def _finish(
    lo: float,
    hi: float,
    source: str,
    epsilon: float,
    search: str | None,
    fit_intercept: bool,
    quartiles: tuple[float, float] | None = None,
    scale: bool = True,
) -> TargetBound:
    if not scale:  # target_scale=False: clipped only, trained on the scale of y
        lo, hi, epsilon = float(lo), float(hi), float(epsilon)
        return TargetBound(lo, hi, source, epsilon, search, 0.0, 1.0, quartiles)
    if fit_intercept:
        center, scale = 0.5 * lo + 0.5 * hi, 0.5 * hi - 0.5 * lo
    else:  # no intercept: the model must stay linear through 0, so the target is only scaled
        center, scale = 0.0, max(abs(lo), abs(hi))
    return TargetBound(
        float(lo), float(hi), source, float(epsilon), search, center, scale, quartiles
    )


def _pair(value: Any, name: str) -> tuple[float, float]:
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be a pair (lo, hi) of finite numbers, got {value!r}")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a pair (lo, hi) of finite numbers, got {value!r}"
        ) from None
    if arr.shape != (2,):
        raise ValueError(
            f"{name} must be a pair (lo, hi) of finite numbers, got shape {arr.shape}: {value!r}"
        )
    lo, hi = (as_real(v, name, numbers_only=True) for v in arr)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"{name} must be finite, got ({lo}, {hi})")
    if not lo < hi:
        raise ValueError(f"{name}=({lo}, {hi}) is reversed or empty: it must satisfy lo < hi")
    if not (abs(lo) <= TARGET_LIMIT and abs(hi) <= TARGET_LIMIT):
        raise ValueError(
            f"{name}=({lo:g}, {hi:g}) is wider than the fit's arithmetic carries: both ends "
            f"must lie in [-{TARGET_LIMIT:g}, {TARGET_LIMIT:g}] (the model is trained on a "
            "target in [-1, 1] and mapped back by the scale (hi - lo) / 2, and the squared loss "
            "squares the target: both must stay finite in float64); rescale y (e.g. to other "
            "units) and declare a bound in that range"
        )
    return lo, hi


def check_target(bounds: Any, search: Any, fraction: Any, scale: Any = True) -> TargetSpec:
    """Validate ``target_bounds``, ``target_range``, ``target_fraction`` and ``target_scale``
    (a ValueError or TypeError naming the problem, before anything is charged)."""
    if not isinstance(scale, (bool, np.bool_)):
        raise TypeError(f"target_scale must be a bool, got {type(scale).__name__}")
    b = None if bounds is None else _pair(bounds, "target_bounds")
    s = None if search is None else _pair(search, "target_range")
    if b is not None and s is not None:
        raise ValueError(
            "give target_bounds (a public bound: nothing is spent) or target_range (the public "
            "range a private bound is searched in), not both"
        )
    f = as_real(fraction, "target_fraction", numbers_only=True)
    if not 0.0 < f < 1.0:
        raise ValueError(f"target_fraction must lie in (0, 1), got {f}")
    return TargetSpec(b, s, f, bool(scale))


def scaled_target(y: Any, bound: TargetBound) -> Any:
    """``(clip(y, lower, upper) - center) / scale``, elementwise (lazily on a dask ``y``)."""
    lo, hi, c, s = bound.lower, bound.upper, bound.center, bound.scale

    def f(b: Any) -> np.ndarray:
        return np.ascontiguousarray((np.clip(np.asarray(b, dtype=np.float64), lo, hi) - c) / s)

    dist = backend_for_array(y)
    if dist is not None:
        return dist.map_values(y, f)
    return f(y)
