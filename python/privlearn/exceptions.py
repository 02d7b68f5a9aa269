"""Warnings and errors shared across privlearn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = [
    "BudgetExceededError",
    "DataIntegrityError",
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
    search in (``target_range=``). Issued from the parameters and the planned size (declared
    public, or the noisy count the statement releases) alone, never from the data: only where
    that size is small for the bound's epsilon
    (:data:`~privlearn.linear._target.WARN_EPSILON_ROWS`)."""


class DataIntegrityError(ValueError):
    """A data file is not the published file its loader expects: its SHA-256 does not match
    the digest pinned in :data:`privlearn.data.SOURCES` (or, for a copy embedded in the
    package, the digest in ``privlearn/data/embedded/README.md``).

    Raised by the loaders of :mod:`privlearn.data` *before* the file is parsed, so a changed,
    truncated or other version of a data set never yields a silently different result. The
    message names the file, its pinned digest and the command that fetches a verified copy
    (``privlearn datasets download NAME``); it quotes nothing computed from the file's rows.

    Attributes
    ----------
    path : pathlib.Path
        The file that failed verification.
    relative : str
        The file relative to the data folder (e.g. ``"adult/adult.data"``).
    dataset : str
        The data set (``privlearn datasets download`` name), e.g. ``"adult"``.
    expected : str
        The pinned SHA-256 (hex) the file should have.
    """

    def __init__(self, message: str, *, path: Any, relative: str, dataset: str, expected: str):
        super().__init__(message)
        self.path = Path(path)
        self.relative = relative
        self.dataset = dataset
        self.expected = expected

    def __reduce__(self) -> tuple[Any, ...]:  # picklable (worker processes) with its fields
        return (
            _rebuild_integrity_error,
            (str(self), self.path, self.relative, self.dataset, self.expected),
        )


def _rebuild_integrity_error(
    message: str, path: Any, relative: str, dataset: str, expected: str
) -> DataIntegrityError:
    return DataIntegrityError(
        message, path=path, relative=relative, dataset=dataset, expected=expected
    )
