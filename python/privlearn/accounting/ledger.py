"""A privacy budget with a hard cap: every spend is recorded with its label, and a spend that
would exceed the cap is refused before anything is released.

Mechanisms and estimators only need the duck-typed method ``spend(epsilon, delta=0.0,
label="")``; :class:`PrivacyLedger` is the reference implementation. Spends add up by basic
composition (Dwork & Roth 2014, Theorem 3.16): after spends ``(eps_i, delta_i)`` the data have
been used in a ``(sum eps_i, sum delta_i)``-DP way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

from .._checks import as_non_negative, as_real
from ..exceptions import BudgetExceededError

__all__ = ["Budget", "LedgerEntry", "PrivacyLedger"]

#: Relative slack allowed when comparing float sums with the cap: spending 0.1 ten times
#: against a cap of 1.0 must succeed although ``0.1 * 10`` need not round to exactly 1.0. A
#: spend is accepted when ``fsum(spent) + epsilon <= epsilon_cap * (1 + 1e-9)`` (and the same
#: for delta), so the recorded total can exceed the cap by at most one part in 1e9.
RTOL = 1e-9


class Budget(NamedTuple):
    """An ``(epsilon, delta)`` pair."""

    epsilon: float
    delta: float


@dataclass(frozen=True)
class LedgerEntry:
    """One recorded spend."""

    label: str
    epsilon: float
    delta: float


class PrivacyLedger:
    """A privacy budget ``(epsilon_cap, delta_cap)`` and the spends charged to it.

    Parameters
    ----------
    epsilon_cap : float
        Total epsilon allowed, finite and > 0.
    delta_cap : float, default 0.0
        Total delta allowed, in [0, 1).

    Examples
    --------
    >>> ledger = PrivacyLedger(1.0, 1e-6)
    >>> ledger.spend(0.4, label="counts")
    LedgerEntry(label='counts', epsilon=0.4, delta=0.0)
    >>> ledger.remaining.epsilon
    0.6
    """

    def __init__(self, epsilon_cap: float, delta_cap: float = 0.0) -> None:
        eps = as_real(epsilon_cap, "epsilon_cap")
        if not (math.isfinite(eps) and eps > 0.0):
            raise ValueError(f"epsilon_cap must be a finite number > 0, got {eps}")
        delta = as_real(delta_cap, "delta_cap")
        if not 0.0 <= delta < 1.0:
            raise ValueError(f"delta_cap must lie in [0, 1), got {delta}")
        self._cap = Budget(eps, delta)
        self._entries: list[LedgerEntry] = []

    @property
    def cap(self) -> Budget:
        """The caps ``(epsilon_cap, delta_cap)``."""
        return self._cap

    @property
    def entries(self) -> tuple[LedgerEntry, ...]:
        """Every recorded spend, in order."""
        return tuple(self._entries)

    @property
    def spent(self) -> Budget:
        """Total spent so far (exactly rounded sums)."""
        return Budget(
            math.fsum(e.epsilon for e in self._entries), math.fsum(e.delta for e in self._entries)
        )

    @property
    def remaining(self) -> Budget:
        """What is left of the caps (never negative)."""
        spent = self.spent
        return Budget(
            max(0.0, self._cap.epsilon - spent.epsilon), max(0.0, self._cap.delta - spent.delta)
        )

    def _validate(self, epsilon: Any, delta: Any, label: Any) -> tuple[float, float, str]:
        eps = as_non_negative(epsilon, "epsilon")
        d = as_real(delta, "delta")
        if not 0.0 <= d < 1.0:
            raise ValueError(f"delta must lie in [0, 1), got {d}")
        if not isinstance(label, str):
            raise TypeError(f"label must be a str, got {type(label).__name__}")
        return eps, d, label

    def _fits(self, eps: float, delta: float) -> bool:
        spent = self.spent
        eps_total = math.fsum([spent.epsilon, eps])
        delta_total = math.fsum([spent.delta, delta])
        eps_ok = eps_total <= self._cap.epsilon * (1.0 + RTOL)
        delta_ok = delta_total <= self._cap.delta * (1.0 + RTOL)
        return eps_ok and delta_ok

    def can_spend(self, epsilon: float, delta: float = 0.0) -> bool:
        """Whether :meth:`spend` would accept ``(epsilon, delta)`` now."""
        eps, d, _ = self._validate(epsilon, delta, "")
        return self._fits(eps, d)

    def spend(self, epsilon: float, delta: float = 0.0, label: str = "") -> LedgerEntry:
        """Charge ``(epsilon, delta)`` to the budget and record it under ``label``.

        Parameters
        ----------
        epsilon : float
            Finite, >= 0.
        delta : float, default 0.0
            In [0, 1).
        label : str, default ""
            What the spend was for (shown by ``str(ledger)``).

        Returns
        -------
        LedgerEntry
            The recorded entry.

        Raises
        ------
        BudgetExceededError
            When the spend would take the total above a cap (up to the relative tolerance
            :data:`RTOL`); nothing is recorded then.
        """
        eps, d, label = self._validate(epsilon, delta, label)
        if not self._fits(eps, d):
            spent = self.spent
            raise BudgetExceededError(
                f"spending (epsilon={eps:.6g}, delta={d:.6g})"
                + (f" for {label!r}" if label else "")
                + f" would exceed the privacy budget: spent (epsilon={spent.epsilon:.6g}, "
                f"delta={spent.delta:.6g}) of the cap (epsilon={self._cap.epsilon:.6g}, "
                f"delta={self._cap.delta:.6g})"
            )
        entry = LedgerEntry(label, eps, d)
        self._entries.append(entry)
        return entry

    def __sklearn_clone__(self) -> PrivacyLedger:
        """The ledger itself: scikit-learn's ``clone`` (``GridSearchCV``, ``cross_val_score``,
        a cloned ``Pipeline``) copies an estimator's parameters, and a copied ledger would let
        the clones spend a budget the user never sees. Every clone charges this one."""
        return self

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        spent = self.spent
        return (
            f"PrivacyLedger(epsilon_cap={self._cap.epsilon!r}, delta_cap={self._cap.delta!r}, "
            f"spent=({spent.epsilon:.6g}, {spent.delta:.6g}), entries={len(self._entries)})"
        )

    def __str__(self) -> str:
        spent, rem = self.spent, self.remaining
        labels = [e.label or "(unlabelled)" for e in self._entries]
        width = max([len("spend"), len("total spent"), *map(len, labels)])
        lines = [
            "Privacy ledger (basic composition)",
            f"{'#':>3}  {'spend':<{width}}  {'epsilon':>12}  {'delta':>12}",
        ]
        for i, (lab, e) in enumerate(zip(labels, self._entries), start=1):
            lines.append(f"{i:>3}  {lab:<{width}}  {e.epsilon:>12.6g}  {e.delta:>12.6g}")
        if not self._entries:
            lines.append(f"{'':>3}  {'(no spends)':<{width}}")
        rule = "-" * (3 + 2 + width + 2 + 12 + 2 + 12)
        lines += [
            rule,
            f"{'':>3}  {'total spent':<{width}}  {spent.epsilon:>12.6g}  {spent.delta:>12.6g}",
            f"{'':>3}  {'cap':<{width}}  {self._cap.epsilon:>12.6g}  {self._cap.delta:>12.6g}",
            f"{'':>3}  {'remaining':<{width}}  {rem.epsilon:>12.6g}  {rem.delta:>12.6g}",
        ]
        return "\n".join(lines)
