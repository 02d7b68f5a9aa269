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

import numpy as np

from .._checks import as_non_negative, as_real
from ..exceptions import BudgetExceededError

__all__ = ["Budget", "LedgerEntry", "PrivacyLedger", "RDPLedger"]

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

    _composition = "basic composition"

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
            f"Privacy ledger ({self._composition})",
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


class RDPLedger(PrivacyLedger):
    """A privacy budget whose spends compose by Renyi DP: several Gaussian fits cost less
    together than the sum of their epsilons.

    Each spend adds an RDP curve at the ``orders`` (Mironov 2017, Proposition 1: RDP composes
    by addition): the events of a fit (:meth:`spend_events`, e.g. a DP-SGD fit's ``T`` Poisson-
    subsampled Gaussian steps) or, for a pure ``epsilon``-DP spend (:meth:`spend` with
    ``delta = 0``), the bound ``min(eps, alpha eps^2 / 2)`` of
    :func:`~privlearn.accounting.rdp_pure_dp`. A spend with ``delta > 0`` and no events cannot
    be put in RDP form: it is added by basic composition. The total is

        ``eps = eps_rdp(delta_cap - sum delta_i) + sum eps_i``

    (the RDP part converted at the delta the other spends leave, with the tight conversion of
    :func:`~privlearn.accounting.rdp_to_epsilon`, plus the approximate spends), at ``delta_cap``.
    A spend that would take ``eps`` above ``epsilon_cap`` raises before it is recorded.
    The events of every spend must share one neighbouring relation (an RDP curve under
    add/remove-one does not compose with one under replace-one): a mismatch raises
    :class:`~privlearn.accounting.UnsupportedEventError`.

    A fit whose Gaussian noise is released on a lattice (DP-SGD) is charged by its events,
    those of the rounded continuous Gaussian, with its lattice slack (``spend_events(...,
    slack=...)``, :mod:`privlearn.accounting.lattice`): the slacks of all such spends add
    (``nu = sum N eta``, ``tail = sum N tau``), the RDP part is converted at
    ``(delta_cap - (1 + exp(epsilon_cap + nu)) tail) exp(-nu) - sum delta_i`` and ``2 nu`` is
    added to the total epsilon (the hybrid argument over all the spends' noise coordinates).

    Parameters
    ----------
    epsilon_cap : float
        Total epsilon allowed, finite and > 0.
    delta_cap : float
        Total delta, in (0, 1): the delta the RDP total is converted at.
    orders : array_like, optional
        RDP orders (default :data:`~privlearn.accounting.DEFAULT_ORDERS`).

    Examples
    --------
    >>> from privlearn.accounting import GaussianEvent, PoissonSampled, RDPLedger
    >>> ledger = RDPLedger(2.0, 1e-5)
    >>> step = PoissonSampled(0.01, GaussianEvent(1.5))
    >>> for _ in range(3):
    ...     _ = ledger.spend_events([step] * 1000, label="fit")
    >>> round(ledger.spent.epsilon, 3) < 3 * 0.75  # each fit alone is about (0.75, 1e-5)-DP
    True
    """

    _composition = "Renyi DP composition; per-spend epsilons shown alone"

    def __init__(self, epsilon_cap: float, delta_cap: float, orders: Any = None) -> None:
        super().__init__(epsilon_cap, delta_cap)
        if not self.cap.delta > 0.0:
            raise ValueError("an RDP ledger converts at delta_cap: it must lie in (0, 1)")
        from .accountant import RDPAccountant
        from .rdp import DEFAULT_ORDERS

        self._accountant = RDPAccountant(DEFAULT_ORDERS if orders is None else orders)
        self._approx: list[Budget] = []
        self._slack: Any = None  # the lattice slacks of the spends, combined

    def _total(self, rdp: Any, approx: list[Budget], slack: Any = None) -> Budget:
        from .rdp import rdp_to_epsilon

        eps_approx = math.fsum(b.epsilon for b in approx)
        delta_left = self.cap.delta
        nu = 0.0
        if slack is not None:  # lattice noise: the rounded Gaussian's RDP plus the slack
            nu = slack.log_ratio
            eps_bound = self.cap.epsilon * (1.0 + RTOL)  # a larger total is refused anyway
            delta_left = (delta_left - slack.tail_term(eps_bound + nu)) * math.exp(-nu)
        delta_left -= math.fsum(b.delta for b in approx)
        if not delta_left > 0.0:
            return Budget(math.inf, self.cap.delta)
        eps_rdp = 0.0
        if np.any(rdp > 0.0):
            eps_rdp = rdp_to_epsilon(self._accountant.orders, rdp, delta_left)[0]
        return Budget(eps_rdp + eps_approx + 2.0 * nu, self.cap.delta)

    def _with(self, slack: Any) -> Any:
        if slack is None:
            return self._slack
        return slack if self._slack is None else self._slack.combine(slack)

    @property
    def spent(self) -> Budget:
        """Total spent so far: RDP part at the delta left, plus the approximate spends."""
        if not self._entries:
            return Budget(0.0, 0.0)
        return self._total(self._accountant.rdp, self._approx, self._slack)

    def can_spend(self, epsilon: float, delta: float = 0.0) -> bool:
        """Whether :meth:`spend` would accept ``(epsilon, delta)`` now."""
        from .rdp import rdp_pure_dp

        eps, d, _ = self._validate(epsilon, delta, "")
        if d == 0.0:
            curve = self._accountant.rdp + np.asarray(rdp_pure_dp(eps, self._accountant.orders))
            total = self._total(curve, self._approx, self._slack)
        else:
            total = self._total(
                self._accountant.rdp, [*self._approx, Budget(eps, d)], self._slack
            )
        return total.epsilon <= self.cap.epsilon * (1.0 + RTOL)

    def _charge(
        self, rdp: Any, approx: Budget | None, entry: LedgerEntry, slack: Any = None
    ) -> LedgerEntry:
        approx_list = self._approx + ([approx] if approx is not None else [])
        total = self._total(self._accountant.rdp + rdp, approx_list, self._with(slack))
        if not total.epsilon <= self.cap.epsilon * (1.0 + RTOL):
            spent = self.spent
            raise BudgetExceededError(
                f"spending {entry.label or 'this'} (alone: epsilon={entry.epsilon:.6g}, "
                f"delta={entry.delta:.6g}) would exceed the privacy budget: the RDP total would "
                f"be epsilon={total.epsilon:.6g} at delta={self.cap.delta:.6g}, spent "
                f"epsilon={spent.epsilon:.6g} of the cap epsilon={self.cap.epsilon:.6g}"
            )
        self._entries.append(entry)
        if approx is not None:
            self._approx.append(approx)
        self._slack = self._with(slack)
        return entry

    def spend(self, epsilon: float, delta: float = 0.0, label: str = "") -> LedgerEntry:
        """Charge a pure ``epsilon``-DP spend (``delta = 0``, as its RDP bound) or an
        ``(epsilon, delta)`` spend (by basic composition); see the class docstring."""
        from .rdp import rdp_pure_dp

        eps, d, label = self._validate(epsilon, delta, label)
        entry = LedgerEntry(label, eps, d)
        if d == 0.0:
            curve = np.asarray(rdp_pure_dp(eps, self._accountant.orders))
            entry = self._charge(curve, None, entry)
            self._accountant.compose(_pure_event(eps))
            return entry
        return self._charge(np.zeros_like(self._accountant.rdp), Budget(eps, d), entry)

    def spend_events(self, events: Any, label: str = "", slack: Any = None) -> LedgerEntry:
        """Charge the RDP of ``events`` (privlearn accounting events, composed in order: e.g.
        ``privacy_.statement.events`` of a fit), with the fit's
        :class:`~privlearn.accounting.LatticeSlack` when its noise is on a lattice
        (``privacy_.statement.lattice``). Returns the entry, whose ``epsilon`` is the events'
        own epsilon at ``delta_cap`` (for display; without the slack)."""
        from .lattice import LatticeSlack

        if slack is not None and not isinstance(slack, LatticeSlack):
            raise TypeError(f"slack must be a LatticeSlack or None, got {type(slack).__name__}")
        from .accountant import RDPAccountant
        from .rdp import rdp_to_epsilon

        if not isinstance(label, str):
            raise TypeError(f"label must be a str, got {type(label).__name__}")
        trial = RDPAccountant(self._accountant.orders, neighboring=self._accountant.neighboring)
        for event in events:
            trial.compose(event)
        curve = trial.rdp
        alone = rdp_to_epsilon(self._accountant.orders, curve, self.cap.delta)[0]
        entry = self._charge(curve, None, LedgerEntry(label, alone, self.cap.delta), slack)
        for event in events:
            self._accountant.compose(event)
        return entry


def _pure_event(epsilon: float) -> Any:
    from .events import PureDPEvent

    return PureDPEvent(epsilon)
