"""The step-factor schedules of the quadratic-gradient optimizers: :class:`Schedule` (public as
:class:`privlearn.linear.Schedule`) and the paper's defaults.

Chiang, "Privacy-preserving logistic regression training with a faster gradient variant",
Section 3.3 and Algorithm 1; the baseline NAG schedule is Kim, Song, Kim, Lee, Cheon (2018a).
What belongs here: a schedule ``r_t`` of the iteration, how a ``schedule=`` argument resolves
to one, and the paper's per-optimizer defaults; used by the core wrapper, the numpy twin and
the packed HE trainers alike. The rest of ``quadgrad_train``'s arguments are
:mod:`privlearn._specs.quadgrad`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from privlearn._checks import as_real

__all__ = ["SCHEDULE_KINDS", "Schedule", "default_schedule", "resolve_schedule"]

SCHEDULE_KINDS = ("constant", "exponential", "inverse_time")


@dataclass(frozen=True)
class Schedule:
    """Step factor ``r_t`` of iteration ``t = 0, 1, ...`` for ``n`` training examples.

    ``kind="constant"``: ``r_t = base``; ``"exponential"``: ``r_t = base + scale * decay**t``
    (the paper's recommendation ``1 + A gamma^t``, Section 3.3; ``1 + 0.9^t`` in its encrypted
    runs, Section 5); ``"inverse_time"``: ``r_t = base + scale / ((1 + t) n)`` (Kim et al.
    2018a's ``gamma_t = 10 / ((1 + t) n)``; Algorithm 1 line 32 uses ``1 + gamma_t``).

    For the plain optimizers ``r_t`` is the learning rate on the gradient ``g``; for the enhanced
    ones it is ``N_t``, the learning rate on the quadratic gradient ``G`` (Definition 3.2).
    """

    kind: str
    base: float
    scale: float = 0.0
    decay: float = 0.9

    def __post_init__(self) -> None:
        if self.kind not in SCHEDULE_KINDS:
            raise ValueError(f"schedule kind must be one of {SCHEDULE_KINDS}, got {self.kind!r}")
        for name in ("base", "scale", "decay"):
            value = as_real(getattr(self, name), f"schedule {name}", numbers_only=True)
            if not math.isfinite(value):
                raise ValueError(f"schedule {name} must be finite, got {value}")
            object.__setattr__(self, name, value)
        if self.base < 0 or self.scale < 0:
            raise ValueError(
                f"schedule base and scale must be >= 0, got base={self.base}, scale={self.scale}"
            )
        if self.kind == "exponential" and not 0.0 < self.decay <= 1.0:
            raise ValueError(f"schedule decay must lie in (0, 1], got {self.decay}")
        if self.base + self.scale <= 0.0:
            raise ValueError("the schedule's step factor must be > 0")

    @classmethod
    def constant(cls, rate: float) -> Schedule:
        """``r_t = rate``."""
        return cls("constant", rate, 0.0)

    @classmethod
    def exponential(cls, A: float = 1.0, gamma: float = 0.9, base: float = 1.0) -> Schedule:
        """``r_t = base + A * gamma**t`` (default ``1 + 0.9^t``, the paper's encrypted runs)."""
        return cls("exponential", base, A, gamma)

    @classmethod
    def inverse_time(cls, A: float = 10.0, base: float = 0.0) -> Schedule:
        """``r_t = base + A / ((1 + t) n)`` (default Kim et al.'s ``10 / ((1 + t) n)``)."""
        return cls("inverse_time", base, A)

    def __call__(self, t: int, n: int) -> float:
        """``r_t`` for iteration ``t`` (0-based) and ``n`` examples (the core's formula)."""
        if self.kind == "constant":
            return self.base
        if self.kind == "exponential":
            return self.base + self.scale * math.pow(self.decay, float(t))
        return self.base + self.scale / (float(t + 1) * float(n))


def default_schedule(optimizer: str, enhanced: bool) -> Schedule:
    """The paper's settings (Section 3.3, "Performance Evaluation", and Algorithm 1).

    ======== ========================================= ================================
    optimizer plain                                     enhanced
    ======== ========================================= ================================
    nag      ``10 / ((1 + t) n)`` (Kim et al. 2018a)   ``1 + 10 / ((1 + t) n)`` (Alg. 1)
    adagrad  ``0.01``                                  ``1 + 0.01``
    adam     ``alpha = 0.001``                         ``alpha = 1 + 0.001``
    gd       ``0.015`` (Figure 4a's middle value)      ``1.5`` (Figure 4b's middle)
    ======== ========================================= ================================
    """
    if optimizer == "nag":
        return Schedule.inverse_time(10.0, 1.0 if enhanced else 0.0)
    if optimizer == "adagrad":
        return Schedule.constant(1.01 if enhanced else 0.01)
    if optimizer == "gd":
        return Schedule.constant(1.5 if enhanced else 0.015)
    return Schedule.constant(1.001 if enhanced else 0.001)


def resolve_schedule(schedule: Any, optimizer: str, enhanced: bool) -> Schedule:
    """``None`` / ``"paper"``: :func:`default_schedule`; ``"he"`` or ``"1+0.9^t"``:
    ``Schedule.exponential(1, 0.9, 1)``; a positive number: a constant rate; a
    :class:`Schedule`: itself."""
    if schedule is None or (isinstance(schedule, str) and schedule == "paper"):
        return default_schedule(optimizer, enhanced)
    if isinstance(schedule, Schedule):
        return schedule
    if isinstance(schedule, str):
        if schedule.replace(" ", "") in ("he", "1+0.9^t"):
            return Schedule.exponential(1.0, 0.9, 1.0)
        raise ValueError(
            f"schedule must be None, 'paper', 'he' ('1+0.9^t'), a positive number or a "
            f"privlearn.linear.Schedule, got {schedule!r}"
        )
    rate = as_real(schedule, "schedule", numbers_only=True)
    if not (math.isfinite(rate) and rate > 0):
        raise ValueError(f"a constant schedule must be a finite number > 0, got {rate}")
    return Schedule.constant(rate)
