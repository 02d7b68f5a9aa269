"""Argument checks shared by every public function: each raises a ValueError or TypeError that
names the argument and what was wrong. Pure Python (the numpy reference may use it)."""

from __future__ import annotations

import numbers
import operator
import os
from typing import Any

import numpy as np

__all__ = [
    "as_index",
    "as_non_negative",
    "as_positive",
    "as_probability",
    "as_real",
    "as_threads",
    "max_threads",
]


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


def as_real(
    value: Any, name: str, *, allow_bool: bool = False, numbers_only: bool = False
) -> float:
    """``float(value)``, or ``TypeError("<name> must be a real number, got <type>")``.

    ``None``, ``str`` and ``bytes`` are rejected, and so is ``bool`` unless ``allow_bool``.
    Anything else ``float()`` accepts (numpy scalars, 0-d arrays, objects with ``__float__``)
    is converted, unless ``numbers_only``: then only instances of :class:`numbers.Real`
    (Python and numpy integers and floats, ``Fraction``) are, and numpy bools are rejected.
    The value is not range-checked: NaN and infinities pass through.
    """
    bad = isinstance(value, (str, bytes)) or value is None
    bad = bad or (isinstance(value, bool) and not allow_bool)
    bad = bad or (numbers_only and not isinstance(value, numbers.Real))
    if bad:
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}") from None


def as_non_negative(value: Any, name: str) -> float:
    """A finite float >= 0; bools raise ``TypeError``."""
    value = as_real(value, name)
    if not (np.isfinite(value) and value >= 0.0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return value


def as_positive(value: Any, name: str) -> float:
    """A finite float > 0 (``True``/``False`` are accepted as 1.0/0.0)."""
    value = as_real(value, name, allow_bool=True)
    if not (np.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def as_probability(value: Any, name: str) -> float:
    """A float in ``[0, 1]`` (``True``/``False`` are accepted as 1.0/0.0)."""
    value = as_real(value, name, allow_bool=True)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {value}")
    return value


def max_threads() -> int:
    """Largest ``n_threads`` accepted: ``max(4 * os.cpu_count(), 256)`` (the core's
    ``parallel::max_threads``). Larger requests crash GNU OpenMP (it keeps per-thread team
    state on the stack and aborts when thread creation fails), so they are refused."""
    return max(4 * (os.cpu_count() or 1), 256)


def as_threads(n_threads: Any) -> int:
    """Thread request for the core: ``None`` -> 0 (the core's default: ``OMP_NUM_THREADS`` or
    all cores), ``-1`` -> all cores, ``k`` in ``[1, max_threads()]`` -> ``k``.

    Raises
    ------
    TypeError
        For bools, floats and other non-integers.
    ValueError
        For 0, negatives other than -1, and counts above :func:`max_threads`.
    """
    if n_threads is None:
        return 0
    n = as_index(n_threads, "n_threads", lower=-(1 << 62), upper=1 << 62)
    if n == -1:
        return os.cpu_count() or 1
    limit = max_threads()
    if n < 1 or n > limit:
        raise ValueError(
            f"n_threads must be None, -1 or an integer in [1, {limit}] "
            f"(max(4 x cores, 256)), got {n}"
        )
    return n
