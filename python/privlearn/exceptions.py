"""Warnings and errors shared across privlearn."""

from __future__ import annotations

__all__ = [
    "BudgetExceededError",
    "LargeDeltaWarning",
    "PrivacyLeakWarning",
    "UndeclaredBoundWarning",
]


class PrivacyLeakWarning(UserWarning):
    """A step computed something from the private data outside any privacy accounting.

    Raised, for example, when features are scaled with statistics (max, min, norms) computed
    from the data itself instead of public bounds: the scaled data then depends on every row,
    so a differential-privacy guarantee computed afterwards does not cover that step.
    """


class BudgetExceededError(RuntimeError):
    """A privacy spend was refused because it would exceed the budget's cap.

    Raised by :meth:`privlearn.accounting.PrivacyLedger.spend` *before* anything is recorded
    or released, so the budget and the data stay as they were.
    """


class LargeDeltaWarning(UserWarning):
    """``delta`` is larger than ``1 / (10 n)`` for the public or noisy size ``n``: a mechanism
    that publishes one row in the clear with probability ``delta`` would satisfy the statement
    (the usual rule is ``delta << 1 / n``). Keyed on the declared or noisy size, never on the
    exact private ``n``."""


class UndeclaredBoundWarning(UserWarning):
    """A range the fit needs was neither declared nor narrowed, so it is estimated privately
    from a wide public default (for example a regressor's target bound searched over
    ``|y| <= 1e9``). The guarantee holds; the utility may not: such an estimate needs thousands
    of rows at epsilon around 1, and on a few hundred rows the fitted model can be far worse
    than predicting a constant. Declare the bound (``target_bounds=``) or a public range to
    search in (``target_range=``). Issued from the parameters alone, never from the data."""
