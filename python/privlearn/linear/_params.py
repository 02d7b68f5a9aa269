"""Parameter checks of the private linear estimators (DP-SGD in :mod:`.estimators`, DP-SCD in
:mod:`.scd_estimators`, the quadratic-gradient model in :mod:`.quadgrad`).

What belongs here: the checks that turn a constructor parameter into a validated value (or a
ValueError / TypeError that names it) and the public ranges and tables they check against:
the numeric ranges outside which the trainers' arithmetic overflows, the caps on passes and
steps, the samplers' accounting and neighbouring relations, the ``backend`` choices. What does
not: anything that reads the data (:mod:`._rows`), the size a run is planned with and the
privacy statement (:mod:`._statement`), the prediction API (:mod:`._prediction`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privlearn._checks import as_index, as_real
from privlearn.accounting.size import DEFAULT_DELTA

__all__ = [
    "ACCOUNTED_AS",
    "ALPHA_RANGE",
    "BACKENDS",
    "CLIP_RANGE",
    "DELTA_MIN",
    "EPSILON_MAX",
    "EPSILON_MIN",
    "ETA0_RANGE",
    "INTERCEPT_SCALING_RANGE",
    "MAX_EPOCHS",
    "MAX_STEPS",
    "NEIGHBORING",
    "PATH_POINTS",
    "SIGMA_RANGE",
]

#: Default number of recorded iterates of the (non-private) objective diagnostic.
PATH_POINTS = 150
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
#: Smallest epsilon accepted: below it the noise scales of the fit's parts (the noisy count's
#: discrete Laplace at a twentieth of epsilon, the target bound's quantiles) exceed what the
#: exact samplers support (a scale of 2^40), and such a fit could only release noise.
EPSILON_MIN = 1e-9
#: Smallest delta accepted: below it (a subnormal double such as ``5e-324``) the accountants'
#: tail terms (a fraction of delta) underflow to 0 and their logarithms are undefined.
DELTA_MIN = 1e-300
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
    if eps < EPSILON_MIN:
        raise ValueError(
            f"epsilon must be >= {EPSILON_MIN:g} (below it the noise of the fit's noisy count "
            "and target bound exceeds what the exact samplers support, and the model would be "
            f"pure noise), got {eps:g}"
        )
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
    if delta < DELTA_MIN:
        raise ValueError(
            f"delta={delta:g} is below {DELTA_MIN:g}: the accountants' arithmetic (log of a "
            f"fraction of delta) underflows there; use a delta in [{DELTA_MIN:g}, 1)"
        )
    return delta


# ---- the schedule's caps ------------------------------------------------------------------------
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
