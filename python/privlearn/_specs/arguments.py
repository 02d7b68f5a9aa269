"""What every trainer spec does with its arguments: the core's parameter bounds, the checks of
unknown keywords, choices, the key, strict flags and the targets, and the core's argument tuple.

What belongs here: a rule that two or more of the specs in :mod:`privlearn._specs` apply the same
way (bounds are those of ``cpp/include/privlearn/linear/losses.hpp``). A rule of one trainer
stays in that trainer's module.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "EPSILON_MAX",
    "EPSILON_MIN",
    "N_SCALE_MAX",
    "SCALE_MAX",
    "SCALE_MIN",
    "SIGMA_MAX",
    "SIGMA_MIN",
    "CoreArgs",
    "as_flag",
    "as_targets",
    "check_choices",
    "check_key",
    "check_keywords",
    "has_rate",
]

# ---- parameter bounds (the same as cpp/include/privlearn/linear/losses.hpp) -----------------
#: alpha (> 0), eta0, clip (> 0) lie in [SCALE_MIN, SCALE_MAX]; noise_std in [0, SCALE_MAX].
SCALE_MIN, SCALE_MAX = 1e-12, 1e12
#: Gaussian noise multiplier sigma (> 0).
SIGMA_MIN, SIGMA_MAX = 1e-6, 1e6
#: l2-laplace epsilon (or +inf).
EPSILON_MIN, EPSILON_MAX = 1e-6, 1e6
#: n_scale (> 0).
N_SCALE_MAX = float(2**53)


def check_keywords(kw: dict[str, Any], allowed: Any, func: str) -> None:
    """``TypeError`` naming every keyword of ``kw`` not in ``allowed``."""
    unknown = sorted(set(kw) - set(allowed))
    if unknown:
        names = ", ".join(repr(k) for k in unknown)
        raise TypeError(
            f"{func}() got unexpected keyword argument(s) {names}; "
            f"valid keywords: {', '.join(sorted(allowed))}"
        )


def check_choices(kw: dict[str, Any], choices: tuple[tuple[str, tuple[str, ...]], ...]) -> None:
    """``ValueError`` for the first ``(name, allowed)`` pair whose ``kw[name]`` is not allowed."""
    for name, allowed in choices:
        if kw[name] not in allowed:
            raise ValueError(f"{name} must be one of {allowed}, got {kw[name]!r}")


def check_key(kw: dict[str, Any]) -> bytes:
    """``kw["key"]`` as bytes: a 32-byte ChaCha20 key, else ``ValueError``."""
    key = kw["key"]
    if not isinstance(key, (bytes, bytearray)) or len(key) != 32:
        raise ValueError("key must be 32 bytes")
    return bytes(key)


def as_flag(value: Any, name: str) -> bool:
    """A strict bool (``True``/``False`` or a numpy bool), else ``TypeError``."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def as_targets(y: Any, n: int) -> np.ndarray:
    """``y`` as a C-contiguous float64 vector of ``n`` finite values (labels or targets: the
    trainer's loss decides which values it takes)."""
    y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but X has {n} rows")
    if not np.isfinite(y).all():
        raise ValueError("y contains NaN or infinite values")
    return y


def has_rate(kw: dict[str, Any]) -> bool:
    """Whether a positive ``rate`` was given (then ``batch_size`` may exceed n)."""
    r = kw.get("rate", 0.0)
    try:
        return float(r) > 0
    except (TypeError, ValueError):
        return False


class CoreArgs:
    """Mixin of the specs: the trailing arguments of the core's trainer functions.

    A spec lists, as class attributes, the names of its fields (or properties) that the core
    takes by position (``_core_positional``, followed by ``n_threads``) and by keyword
    (``_core_keywords``), in the order of the binding's argument macro (``bind_linear.cpp``).
    """

    _core_positional: tuple[str, ...] = ()
    _core_keywords: tuple[str, ...] = ()

    def core_args(self, n_threads: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The trailing positional and keyword arguments of the core's function."""
        args = tuple(getattr(self, name) for name in self._core_positional) + (n_threads,)
        return args, {name: getattr(self, name) for name in self._core_keywords}
