"""Pure-numpy twins of every core routine, with the same signatures as the core-backed modules.

The reference depends on numpy and scipy only (never on ``privlearn._core``); tests check the
core against it to ``rtol=1e-10`` (exactly, for random words).
"""

from __future__ import annotations

from privlearn.reference import linear, parallel, random

__all__ = ["linear", "parallel", "random"]
