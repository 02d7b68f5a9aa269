"""Argument checks shared by every public function: each raises a ValueError or TypeError that
names the argument and what was wrong. Pure Python (the numpy reference may use it)."""

from __future__ import annotations

import operator
import os
from typing import Any

import numpy as np

__all__ = ["as_index", "as_positive", "as_probability", "as_threads"]


def as_index(value: Any, name: str, *, upper: int, lower: int = 0) -> int:
    """An integer in ``[lower, upper]``; bools, floats and strings raise ``TypeError``."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got bool")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}") from None
    if value < lower or value > upper:
        raise ValueError(f"{name} must lie in [{lower}, {upper}], got {value}")
    return value


def _as_real(value: Any, name: str) -> float:
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}") from None


def as_positive(value: Any, name: str) -> float:
    """A finite float > 0."""
    value = _as_real(value, name)
    if not (np.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def as_probability(value: Any, name: str) -> float:
    """A float in ``[0, 1]``."""
    value = _as_real(value, name)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {value}")
    return value


def as_threads(n_threads: Any) -> int:
    """Thread request for the core: ``None`` -> 0 (the core's default: ``OMP_NUM_THREADS`` or
    all cores), ``-1`` -> all cores, ``k >= 1`` -> ``k``."""
    if n_threads is None:
        return 0
    n = as_index(n_threads, "n_threads", lower=-1, upper=1 << 16)
    if n == -1:
        return os.cpu_count() or 1
    if n == 0:
        raise ValueError("n_threads must be None, -1 or a positive integer, got 0")
    return n
