"""A privacy budget with a hard cap: every spend is recorded with its label, and a spend that
would exceed the cap is refused before anything is released.

Mechanisms and estimators only need the duck-typed method ``spend(epsilon, delta=0.0,
label="")``; :class:`PrivacyLedger` is the reference implementation. Spends add up by basic
composition (Dwork & Roth 2014, Theorem 3.16): after spends ``(eps_i, delta_i)`` the data have
been used in a ``(sum eps_i, sum delta_i)``-DP way.

Three rules make the cap mean what it says:

- **One owner.** A ledger lives in the process that created it. It cannot be pickled (so a
  joblib process pool, ``multiprocessing`` or ``cross_val_score(..., n_jobs=2)`` cannot carry a
  copy whose charges never come back), a process forked from its owner cannot charge it, and
  ``copy.copy``, ``copy.deepcopy`` and scikit-learn's ``clone`` return the ledger itself.
- **Atomic charges.** Checking a spend against the cap and recording it happen under one lock:
  fits charging one ledger from several threads never exceed the cap together.
- **One neighbouring relation.** A spend may say under which relation its guarantee holds
  (``neighboring="add_remove"`` or ``"replace_one"``); guarantees under different relations do
  not add up, so a ledger refuses a spend whose relation differs from the one it holds.
"""

from __future__ import annotations

import inspect
import math
import os
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .._checks import as_non_negative, as_real
from ..exceptions import BudgetExceededError
from .accountant import NEIGHBORING_RELATIONS, RDPAccountant
from .events import Event, UnsupportedEventError
from .rdp import DEFAULT_ORDERS, rdp_to_epsilon

__all__ = ["Budget", "LedgerEntry", "PrivacyLedger", "RDPLedger"]

#: Relative slack allowed when comparing float sums with the cap: spending 0.1 ten times
#: against a cap of 1.0 must succeed although ``0.1 * 10`` need not round to exactly 1.0. A
#: spend is accepted when ``fsum(spent) + epsilon <= epsilon_cap * (1 + 1e-9)`` (and the same
#: for delta), so the recorded total can exceed the cap by at most one part in 1e9.
RTOL = 1e-9

#: How many calling frames :meth:`PrivacyLedger.__sklearn_clone__` looks through for a
#: scikit-learn search (a clone of a nested Pipeline is about 15 frames below the search).
_SEARCH_FRAMES = 64


class Budget(NamedTuple):
    """An ``(epsilon, delta)`` pair."""

    epsilon: float
    delta: float


@dataclass(frozen=True)
class LedgerEntry:
    """One recorded spend.

    Attributes
    ----------
    label : str
    epsilon : float
    delta : float
    neighboring : str or None
        The neighbouring relation the spend's guarantee holds under (``"add_remove"``,
        ``"replace_one"``), or None when the caller did not state it.
    """

    label: str
    epsilon: float
    delta: float
    neighboring: str | None = None


class _ExactSum:
    """A running sum of floats kept exactly as non-overlapping partials (Shewchuk 1997,
    "Adaptive precision floating-point arithmetic", the grow-expansion that ``math.fsum``
    uses): adding a value costs O(number of partials), at most about 40 for doubles, and
    :attr:`value` is the exactly rounded sum of everything added."""

    __slots__ = ("_partials", "value")

    def __init__(self) -> None:
        self._partials: list[float] = []
        self.value = 0.0

    def add(self, x: float) -> None:
        partials = self._partials
        i = 0
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                partials[i] = lo
                i += 1
            x = hi
        partials[i:] = [x]
        self.value = math.fsum(partials)

    def plus(self, x: float) -> float:
        """The exactly rounded sum with ``x`` added (inf on overflow); nothing is recorded."""
        try:
            return math.fsum([*self._partials, x])
        except OverflowError:
            return math.inf


def _as_relation(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value not in NEIGHBORING_RELATIONS:
        raise ValueError(
            f"neighboring must be None or one of {sorted(NEIGHBORING_RELATIONS)}, got {value!r}"
        )
    return value


def _relation_name(relation: str | None) -> str:
    return "unstated" if relation is None else NEIGHBORING_RELATIONS[relation]


def _closed_ledger(cls: type, state: dict[str, Any]) -> Any:
    """Rebuild a pickled closed ledger (see :meth:`PrivacyLedger.close`)."""
    ledger = cls.__new__(cls)
    ledger.__setstate__(state)
    return ledger


def _calling_search() -> Any:
    """The scikit-learn search (``BaseSearchCV``: ``GridSearchCV``, ``RandomizedSearchCV``,
    ``HalvingGridSearchCV``, ...) among the calling frames' ``self``, or None."""
    module = sys.modules.get("sklearn.model_selection._search")
    if module is None:  # no search was ever imported, so none can be calling
        return None
    base = module.BaseSearchCV
    frame = inspect.currentframe()
    try:
        depth = 0
        while frame is not None and depth < _SEARCH_FRAMES:
            owner = frame.f_locals.get("self")
            if isinstance(owner, base):
                return owner
            frame = frame.f_back
            depth += 1
        return None
    finally:
        del frame


class PrivacyLedger:
    """A privacy budget ``(epsilon_cap, delta_cap)`` and the spends charged to it.

    Spends add up by basic composition (Dwork & Roth 2014, Theorem 3.16). The totals are kept
    as exact running sums, so ``k`` spends cost O(k) and :attr:`spent` is the exactly rounded
    sum of the recorded spends.

    Parameters
    ----------
    epsilon_cap : float
        Total epsilon allowed, finite and > 0.
    delta_cap : float, default 0.0
        Total delta allowed, in [0, 1).
    neighboring : {"add_remove", "replace_one"} or None, default None
        The neighbouring relation of every guarantee charged here; None takes it from the first
        spend that states one.

    Notes
    -----
    **One owner.** A ledger belongs to the process that created it. Pickling it raises
    ``TypeError`` (so do joblib process pools, ``multiprocessing`` and
    ``cross_val_score(..., n_jobs=2)``, which pickle their arguments: their charges would land
    on a copy the caller never sees), and a process forked from the owner cannot charge it.
    ``copy.copy``, ``copy.deepcopy`` and scikit-learn's ``clone`` return the ledger itself, so
    a cloned estimator or ``Pipeline`` charges the one budget. Run fits that share a ledger in
    the owner's process (``n_jobs=1``) or in threads (joblib's ``backend="threading"``).

    **Atomic charges.** :meth:`spend` checks the cap and records the spend under one lock, so
    threads charging one ledger together never exceed the cap.

    **One neighbouring relation.** Guarantees under add/remove-one and under replace-one
    neighbours do not add up. A spend that states a relation (``neighboring=``) different
    from the one the ledger holds raises :class:`~privlearn.accounting.UnsupportedEventError`
    before anything is recorded. An ``(eps, delta)``-DP guarantee under add/remove-one implies
    ``(2 eps, (1 + e^eps) delta)``-DP under replace-one (group privacy for the two rows a
    replacement changes; Dwork & Roth 2014, Theorem 2.2 and its approximate-DP form), which a
    caller can charge to a replace-one ledger instead. A spend that states no relation
    (``neighboring=None``: a caller that predates relations) is accepted and shown as
    "unstated"; the total then holds only if that spend's guarantee holds under the ledger's
    relation.

    **Searches.** scikit-learn's searches (``GridSearchCV``, ``RandomizedSearchCV``,
    ``HalvingGridSearchCV``) select on non-private validation scores and turn a refused
    charge into a NaN score. Cloning a ledger for one raises ``TypeError`` naming
    :class:`~privlearn.model_selection.PrivateHyperparameterSearch`, before any charge.

    Examples
    --------
    >>> ledger = PrivacyLedger(1.0, 1e-6)
    >>> ledger.spend(0.4, label="counts")
    LedgerEntry(label='counts', epsilon=0.4, delta=0.0, neighboring=None)
    >>> ledger.remaining.epsilon
    0.6
    """

    _composition = "basic composition"

    def __init__(
        self, epsilon_cap: float, delta_cap: float = 0.0, *, neighboring: str | None = None
    ) -> None:
        eps = as_real(epsilon_cap, "epsilon_cap")
        if not (math.isfinite(eps) and eps > 0.0):
            raise ValueError(f"epsilon_cap must be a finite number > 0, got {eps}")
        delta = as_real(delta_cap, "delta_cap")
        if not 0.0 <= delta < 1.0:
            raise ValueError(f"delta_cap must lie in [0, 1), got {delta}")
        self._cap = Budget(eps, delta)
        self._neighboring = _as_relation(neighboring)
        self._entries: list[LedgerEntry] = []
        self._eps_sum = _ExactSum()
        self._delta_sum = _ExactSum()
        self._lock = threading.RLock()
        self._owner = os.getpid()
        self._closed = False

    # ---- one owner --------------------------------------------------------------------------
    def _one_owner_message(self, what: str) -> str:
        name = type(self).__name__
        return (
            f"a {name} has one owner and cannot be {what}: a copy in another process (joblib "
            "process pools, multiprocessing, cross_val_score(..., n_jobs=2)) would spend a "
            f"budget whose charges never reach the owner's {name}. Run the fits that share it "
            "in this process (n_jobs=1) or in threads (joblib backend='threading'); charges "
            "from threads are atomic. To save a fitted estimator, set its ledger=None first "
            "(estimator.set_params(ledger=None))"
        )

    def close(self) -> None:
        """Close the ledger for good: it keeps its record (entries, totals, ``str``) but refuses
        every further charge, so a copy can spend nothing and a closed ledger may be pickled
        (a fitted estimator's own record of its spends, e.g. ``DPKMeans.ledger_``)."""
        with self._lock:
            self._closed = True

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (no charge is accepted any more)."""
        return self._closed

    def _check_owner(self) -> None:
        if self._closed:
            raise TypeError(
                f"this {type(self).__name__} is closed: it is the record of a finished fit's "
                "spends and accepts no further charge"
            )
        pid = os.getpid()
        if pid != self._owner:
            raise TypeError(
                self._one_owner_message(
                    f"charged from process {pid} (it belongs to process {self._owner}, which "
                    "this process was forked from)"
                )
            )

    def __reduce_ex__(self, protocol: Any) -> Any:
        if self._closed:  # a record that can spend nothing: copies are harmless
            return (_closed_ledger, (type(self), self.__getstate__()))
        raise TypeError(self._one_owner_message("pickled"))

    def __reduce__(self) -> Any:
        return self.__reduce_ex__(2)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    def __copy__(self) -> PrivacyLedger:
        """The ledger itself (one owner; see the class notes)."""
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> PrivacyLedger:
        """The ledger itself (one owner; see the class notes)."""
        return self

    def __sklearn_clone__(self) -> PrivacyLedger:
        """The ledger itself: scikit-learn's ``clone`` (``cross_val_score``, a cloned
        ``Pipeline``) copies an estimator's parameters, and a copied ledger would let the
        clones spend a budget the user never sees. Every clone charges this one.

        Raises
        ------
        TypeError
            When a scikit-learn search (``BaseSearchCV``: ``GridSearchCV``,
            ``RandomizedSearchCV``, ``HalvingGridSearchCV``) clones it: the search selects on
            non-private validation scores and would turn a refused charge into a NaN score.
            The search clones its estimator before it fits anything, so nothing is charged.
        """
        search = _calling_search()
        if search is not None:
            name = type(search).__name__
            raise TypeError(
                f"{name} cannot run an estimator that charges a {type(self).__name__}: it "
                "selects hyperparameters on non-private validation scores (the selection "
                "itself is not covered by any privacy statement) and turns a refused charge "
                "into a NaN score. Use privlearn.model_selection.PrivateHyperparameterSearch, "
                "which selects privately within a stated budget. Nothing was charged."
            )
        return self

    # ---- state ------------------------------------------------------------------------------
    @property
    def cap(self) -> Budget:
        """The caps ``(epsilon_cap, delta_cap)``."""
        return self._cap

    @property
    def neighboring(self) -> str | None:
        """The neighbouring relation the ledger holds (None until a spend states one)."""
        return self._neighboring

    @property
    def entries(self) -> tuple[LedgerEntry, ...]:
        """Every recorded spend, in order."""
        with self._lock:
            return tuple(self._entries)

    @property
    def spent(self) -> Budget:
        """Total spent so far (exactly rounded sums)."""
        with self._lock:
            return Budget(self._eps_sum.value, self._delta_sum.value)

    @property
    def remaining(self) -> Budget:
        """What is left of the caps (never negative)."""
        spent = self.spent
        return Budget(
            max(0.0, self._cap.epsilon - spent.epsilon), max(0.0, self._cap.delta - spent.delta)
        )

    # ---- charging ---------------------------------------------------------------------------
    def _validate(self, epsilon: Any, delta: Any, label: Any) -> tuple[float, float, str]:
        eps = as_non_negative(epsilon, "epsilon")
        d = as_real(delta, "delta")
        if not 0.0 <= d < 1.0:
            raise ValueError(f"delta must lie in [0, 1), got {d}")
        if not isinstance(label, str):
            raise TypeError(f"label must be a str, got {type(label).__name__}")
        return eps, d, label

    def _check_relation(self, relation: str | None, label: str) -> None:
        """Refuse a spend stated under another relation than the ledger's (under the lock)."""
        if self._holds(relation):
            return
        held = str(self._neighboring)
        what = f"the spend {label!r}" if label else "this spend"
        hint = (
            "an (eps, delta)-DP guarantee under add/remove-one implies (2 eps, (1 + e^eps) "
            "delta)-DP under replace-one (group privacy for two rows): charge it converted, "
            "with neighboring='replace_one'"
            if relation == "add_remove"
            else "a replace-one guarantee says nothing about adding or removing a row: keep "
            "it in a ledger under replace-one (converting add/remove-one spends by "
            "(2 eps, (1 + e^eps) delta))"
        )
        raise UnsupportedEventError(
            f"{what} holds under {NEIGHBORING_RELATIONS[relation]} neighbours but this "
            f"{type(self).__name__} holds spends under {NEIGHBORING_RELATIONS[held]} "
            f"neighbours, and the two guarantees do not add up; {hint}. Nothing was charged."
        )

    def _record(self, entry: LedgerEntry) -> None:
        self._entries.append(entry)
        if entry.neighboring is not None:
            self._neighboring = entry.neighboring

    def _fits(self, eps: float, delta: float) -> bool:
        eps_ok = self._eps_sum.plus(eps) <= self._cap.epsilon * (1.0 + RTOL)
        delta_ok = self._delta_sum.plus(delta) <= self._cap.delta * (1.0 + RTOL)
        return eps_ok and delta_ok

    def can_spend(
        self, epsilon: float, delta: float = 0.0, *, neighboring: str | None = None
    ) -> bool:
        """Whether :meth:`spend` would accept ``(epsilon, delta)`` (under ``neighboring``) now;
        another thread may charge in between: only :meth:`spend` checks and records
        atomically."""
        eps, d, _ = self._validate(epsilon, delta, "")
        relation = _as_relation(neighboring)
        with self._lock:
            self._check_owner()
            return self._holds(relation) and self._fits(eps, d)

    def _holds(self, relation: str | None) -> bool:
        held = self._neighboring
        return relation is None or held is None or relation == held

    def spend(
        self,
        epsilon: float,
        delta: float = 0.0,
        label: str = "",
        *,
        neighboring: str | None = None,
    ) -> LedgerEntry:
        """Charge ``(epsilon, delta)`` to the budget and record it under ``label``.

        The check against the cap and the record happen atomically (under the ledger's lock).

        Parameters
        ----------
        epsilon : float
            Finite, >= 0.
        delta : float, default 0.0
            In [0, 1).
        label : str, default ""
            What the spend was for (shown by ``str(ledger)``).
        neighboring : {"add_remove", "replace_one"} or None, default None
            The neighbouring relation the spend's guarantee holds under; None: not stated.

        Returns
        -------
        LedgerEntry
            The recorded entry.

        Raises
        ------
        BudgetExceededError
            When the spend would take the total above a cap (up to the relative tolerance
            :data:`RTOL`); nothing is recorded then.
        UnsupportedEventError
            When ``neighboring`` differs from the relation the ledger holds.
        TypeError
            When called from a process forked from the ledger's owner.
        """
        eps, d, label = self._validate(epsilon, delta, label)
        relation = _as_relation(neighboring)
        with self._lock:
            self._check_owner()
            self._check_relation(relation, label)
            if not self._fits(eps, d):
                spent = self.spent
                raise BudgetExceededError(
                    f"spending (epsilon={eps:.6g}, delta={d:.6g})"
                    + (f" for {label!r}" if label else "")
                    + f" would exceed the privacy budget: spent (epsilon={spent.epsilon:.6g}, "
                    f"delta={spent.delta:.6g}) of the cap (epsilon={self._cap.epsilon:.6g}, "
                    f"delta={self._cap.delta:.6g})"
                )
            entry = LedgerEntry(label, eps, d, relation)
            self._eps_sum.add(eps)
            self._delta_sum.add(d)
            self._record(entry)
            return entry

    # ---- display ----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        spent = self.spent
        return (
            f"{type(self).__name__}(epsilon_cap={self._cap.epsilon!r}, "
            f"delta_cap={self._cap.delta!r}, neighboring={self._neighboring!r}, "
            f"spent=({spent.epsilon:.6g}, {spent.delta:.6g}), entries={len(self._entries)})"
        )

    def __str__(self) -> str:
        with self._lock:
            entries = list(self._entries)
            spent, rem = self.spent, self.remaining
            held = self._neighboring
        labels = [e.label or "(unlabelled)" for e in entries]
        relations = [_relation_name(e.neighboring) for e in entries]
        width = max([len("spend"), len("total spent"), *map(len, labels)])
        rwidth = max([len("relation"), *map(len, relations)])
        held_text = (
            f"{NEIGHBORING_RELATIONS[held]} neighbours"
            if held is not None
            else "neighbouring relation not stated"
        )
        lines = [
            f"Privacy ledger ({self._composition}; {held_text})",
            f"{'#':>3}  {'spend':<{width}}  {'relation':<{rwidth}}  {'epsilon':>12}  {'delta':>12}",
        ]
        for i, (lab, rel, e) in enumerate(zip(labels, relations, entries), start=1):
            lines.append(
                f"{i:>3}  {lab:<{width}}  {rel:<{rwidth}}  {e.epsilon:>12.6g}  {e.delta:>12.6g}"
            )
        if not entries:
            lines.append(f"{'':>3}  {'(no spends)':<{width}}")
        pad = " " * rwidth
        rule = "-" * (3 + 2 + width + 2 + rwidth + 2 + 12 + 2 + 12)
        lines += [
            rule,
            f"{'':>3}  {'total spent':<{width}}  {pad}  {spent.epsilon:>12.6g}  "
            f"{spent.delta:>12.6g}",
            f"{'':>3}  {'cap':<{width}}  {pad}  {self._cap.epsilon:>12.6g}  "
            f"{self._cap.delta:>12.6g}",
            f"{'':>3}  {'remaining':<{width}}  {pad}  {rem.epsilon:>12.6g}  {rem.delta:>12.6g}",
        ]
        return "\n".join(lines)


#: A ledger's spends as loss distributions: ``({(q, sigma): steps}, {epsilon: count})``.
_PLDParts = tuple[dict[tuple[float, float], int], dict[float, int]]


def _pure_curve(eps: float, orders: np.ndarray) -> np.ndarray:
    """``min(eps, alpha eps^2 / 2)`` (Bun & Steinke 2016, Proposition 3.3), 0 for ``eps = 0``
    at every order (also at alpha = inf, where the product would be NaN)."""
    if eps == 0.0:
        return np.zeros(orders.shape)
    with np.errstate(over="ignore"):
        return np.minimum(eps, 0.5 * orders * eps * eps)


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
    While every spend is a (Poisson-subsampled) Gaussian or a pure-DP spend, the ledger also
    composes the spends' privacy loss distributions (:mod:`privlearn.accounting.pld`; a pure
    spend as randomized response, which dominates every pure mechanism) and the total is the
    smaller of the two sound bounds, the PLD one in practice (three DP-SGD-like fits of
    ``PoissonSampled(0.01, Gaussian(1.5)) x 1000`` at ``delta = 1e-5``: 1.64 instead of RDP's
    1.80). A spend without a loss distribution (sampling without replacement) leaves RDP alone.
    A spend that would take ``eps`` above ``epsilon_cap`` raises before it is recorded.
    Every spend, by events or plain, must hold under one neighbouring relation (an RDP curve
    under add/remove-one does not compose with one under replace-one): the relation of the
    events' samplers or the ``neighboring=`` a spend states; a mismatch raises
    :class:`~privlearn.accounting.UnsupportedEventError`. The one-owner and atomic-charge
    rules of :class:`PrivacyLedger` hold here too.

    A fit whose Gaussian noise is released on a lattice (DP-SGD, DP-SCD) is charged by its
    events, those of the rounded continuous Gaussian, with its lattice slack (``spend_events(...,
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
    neighboring : {"add_remove", "replace_one"} or None, default None
        The neighbouring relation; None takes it from the first spend that fixes one.

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

    _composition = "Renyi DP or loss-distribution composition; per-spend epsilons shown alone"

    def __init__(
        self,
        epsilon_cap: float,
        delta_cap: float,
        orders: Any = None,
        *,
        neighboring: str | None = None,
    ) -> None:
        super().__init__(epsilon_cap, delta_cap, neighboring=neighboring)
        if not self.cap.delta > 0.0:
            raise ValueError("an RDP ledger converts at delta_cap: it must lie in (0, 1)")
        # An accountant checks the orders; its orders are the ledger's.
        self._orders = RDPAccountant(DEFAULT_ORDERS if orders is None else orders).orders
        self._rdp = np.zeros(self._orders.shape)
        self._approx_eps = _ExactSum()
        self._approx_delta = _ExactSum()
        self._spent = Budget(0.0, 0.0)
        self._slack: Any = None  # the lattice slacks of the spends, combined (LatticeSlack)
        # The same spends as privacy loss distributions ({(q, sigma): steps}, {eps: count}),
        # or None once a spend has none (e.g. sampling without replacement): see _total.
        self._pld: _PLDParts | None = ({}, {})

    def _total(
        self,
        rdp: np.ndarray,
        approx_eps: float,
        approx_delta: float,
        slack: Any = None,
        pld: _PLDParts | None = None,
    ) -> Budget:
        """The total at ``delta_cap``: the smaller of two sound bounds on the same composition,
        Renyi DP (``rdp``) and, when every spend has one, the privacy loss distribution
        (``pld``, :mod:`privlearn.accounting.pld`); approximate spends added to either."""
        if np.isnan(rdp).any():  # never composed: refuse rather than read NaN as 0
            return Budget(math.inf, self.cap.delta)

        def by_rdp(delta_c: float) -> float:
            return self._converted(rdp, delta_c, 0.0).epsilon

        eps = self._continuous_total(by_rdp, approx_delta, slack)
        if pld is not None and (pld[0] or pld[1]):
            from .pld import epsilon_of_parts

            def by_pld(delta_c: float) -> float:
                return epsilon_of_parts(pld[0], pld[1], delta_c) if delta_c > 0.0 else math.inf

            eps = min(eps, self._continuous_total(by_pld, approx_delta, slack))
        return Budget(eps + approx_eps, self.cap.delta)

    def _continuous_total(self, continuous: Any, approx_delta: float, slack: Any) -> float:
        """``continuous`` (delta -> epsilon of the composed events) at the delta the
        approximate spends leave; with lattice noise, converted by
        :func:`~privlearn.accounting.lattice.lattice_epsilon` (the rounded Gaussian's epsilon
        at the continuous delta the slack leaves, plus ``2 nu``)."""
        if slack is None:
            left = self.cap.delta - approx_delta
            return continuous(left) if left > 0.0 else math.inf
        from .lattice import lattice_epsilon

        try:
            return lattice_epsilon(lambda d: continuous(d - approx_delta), slack, self.cap.delta)
        except ValueError:  # no delta left: nothing more can be charged
            return math.inf

    def _converted(self, rdp: np.ndarray, delta_left: float, approx_eps: float) -> Budget:
        """The RDP part converted at ``delta_left`` plus ``approx_eps`` (inf when no delta is
        left)."""
        if not delta_left > 0.0:
            return Budget(math.inf, self.cap.delta)
        eps_rdp = 0.0
        if np.any(rdp > 0.0):
            eps_rdp = rdp_to_epsilon(self._orders, rdp, delta_left)[0]
        return Budget(eps_rdp + approx_eps, self.cap.delta)

    def _with(self, slack: Any) -> Any:
        """The ledger's combined lattice slack with ``slack`` added (one hybrid argument over
        the noise coordinates of every spend)."""
        if slack is None:
            return self._slack
        return slack if self._slack is None else self._slack.combine(slack)

    @property
    def spent(self) -> Budget:
        """Total spent so far: RDP part at the delta left, plus the approximate spends."""
        with self._lock:
            return self._spent

    def _pld_with(self, parts: _PLDParts | None) -> _PLDParts | None:
        """The ledger's loss-distribution parts with ``parts`` added (None if either is)."""
        if self._pld is None or parts is None:
            return None
        gauss, pure = dict(self._pld[0]), dict(self._pld[1])
        for key, c in parts[0].items():
            gauss[key] = gauss.get(key, 0) + c
        for key, c in parts[1].items():
            pure[key] = pure.get(key, 0) + c
        return gauss, pure

    def _trial(
        self,
        curve: np.ndarray,
        approx: Budget | None,
        slack: Any = None,
        parts: _PLDParts | None = None,
    ) -> tuple[np.ndarray, Budget]:
        rdp = self._rdp + curve
        if approx is None:
            eps_a, d_a = self._approx_eps.value, self._approx_delta.value
        else:
            eps_a, d_a = (
                self._approx_eps.plus(approx.epsilon),
                self._approx_delta.plus(approx.delta),
            )
        return rdp, self._total(rdp, eps_a, d_a, self._with(slack), self._pld_with(parts))

    def can_spend(
        self, epsilon: float, delta: float = 0.0, *, neighboring: str | None = None
    ) -> bool:
        """Whether :meth:`spend` would accept ``(epsilon, delta)`` (under ``neighboring``) now;
        another thread may charge in between: only :meth:`spend` checks and records
        atomically."""
        eps, d, _ = self._validate(epsilon, delta, "")
        relation = _as_relation(neighboring)
        with self._lock:
            self._check_owner()
            if not self._holds(relation):
                return False
            if d == 0.0:
                _, total = self._trial(_pure_curve(eps, self._orders), None, None, ({}, {eps: 1}))
            else:
                _, total = self._trial(np.zeros(self._orders.shape), Budget(eps, d), None, ({}, {}))
            return total.epsilon <= self.cap.epsilon * (1.0 + RTOL)

    def _charge(
        self,
        curve: np.ndarray,
        approx: Budget | None,
        entry: LedgerEntry,
        slack: Any = None,
        parts: _PLDParts | None = None,
    ) -> LedgerEntry:
        """Check and record one spend atomically (the caller holds no lock)."""
        with self._lock:
            self._check_owner()
            self._check_relation(entry.neighboring, entry.label)
            rdp, total = self._trial(curve, approx, slack, parts)
            if not total.epsilon <= self.cap.epsilon * (1.0 + RTOL):
                spent = self._spent
                raise BudgetExceededError(
                    f"spending {entry.label or 'this'} (alone: epsilon={entry.epsilon:.6g}, "
                    f"delta={entry.delta:.6g}) would exceed the privacy budget: the total "
                    f"would be epsilon={total.epsilon:.6g} at delta={self.cap.delta:.6g}, spent "
                    f"epsilon={spent.epsilon:.6g} of the cap epsilon={self.cap.epsilon:.6g}"
                )
            self._rdp = rdp
            if approx is not None:
                self._approx_eps.add(approx.epsilon)
                self._approx_delta.add(approx.delta)
            self._spent = total
            self._slack = self._with(slack)
            self._pld = self._pld_with(parts)
            self._record(entry)
            return entry

    def spend(
        self,
        epsilon: float,
        delta: float = 0.0,
        label: str = "",
        *,
        neighboring: str | None = None,
    ) -> LedgerEntry:
        """Charge a pure ``epsilon``-DP spend (``delta = 0``, as its RDP bound) or an
        ``(epsilon, delta)`` spend (by basic composition); see the class docstring.
        ``neighboring`` is the relation the spend's guarantee holds under (None: not
        stated); one that differs from the ledger's raises
        :class:`~privlearn.accounting.UnsupportedEventError`."""
        eps, d, label = self._validate(epsilon, delta, label)
        entry = LedgerEntry(label, eps, d, _as_relation(neighboring))
        if d == 0.0:
            return self._charge(_pure_curve(eps, self._orders), None, entry, None, ({}, {eps: 1}))
        return self._charge(np.zeros(self._orders.shape), Budget(eps, d), entry, None, ({}, {}))

    def spend_events(
        self, events: Any, label: str = "", *, neighboring: str | None = None, slack: Any = None
    ) -> LedgerEntry:
        """Charge the RDP of ``events`` (privlearn accounting events, composed in order: e.g.
        ``privacy_.statement.events`` of a fit; one event alone is accepted too).

        ``events`` is read once (a generator is composed exactly as priced); equal events are
        priced once and composed with their count. The events'
        relation is the one their samplers fix (``PoissonSampled``: add/remove-one;
        ``SampledWithoutReplacement``: replace-one) or ``neighboring``; it must agree with the
        ledger's, else :class:`~privlearn.accounting.UnsupportedEventError` and nothing is
        charged. ``slack`` is the fit's :class:`~privlearn.accounting.LatticeSlack` when its
        noise is on a lattice (``privacy_.statement.lattice``; the events are then those of the
        rounded continuous Gaussian). Returns the entry, whose ``epsilon`` is the events' own
        epsilon at ``delta_cap`` (for display; without the slack; the smaller of the RDP and
        loss-distribution bounds)."""
        from .lattice import LatticeSlack

        if slack is not None and not isinstance(slack, LatticeSlack):
            raise TypeError(f"slack must be a LatticeSlack or None, got {type(slack).__name__}")
        if not isinstance(label, str):
            raise TypeError(f"label must be a str, got {type(label).__name__}")
        relation = _as_relation(neighboring)
        if isinstance(events, Event):
            events = [events]
        elif not isinstance(events, Iterable) or isinstance(events, (str, bytes)):
            raise TypeError(
                f"events must be an iterable of privlearn accounting events, got "
                f"{type(events).__name__}"
            )
        # Read once; equal events are priced once and composed with their count (RDP adds
        # at every order, so the order of composition does not change the curve).
        counts: dict[Any, int] = {}
        unhashable: list[Event] = []
        for event in events:
            if not isinstance(event, Event):
                raise TypeError(
                    f"events must hold privlearn accounting events, got {type(event).__name__}"
                )
            try:
                counts[event] = counts.get(event, 0) + 1
            except TypeError:  # an event holding an unhashable field: composed on its own
                unhashable.append(event)
        trial = RDPAccountant(self._orders, neighboring=relation)
        for event, count in counts.items():
            trial.compose(event, count=count)
        for event in unhashable:
            trial.compose(event)
        from .pld import gaussian_parts

        parts: _PLDParts | None
        try:  # the same events as loss distributions, where they have one
            gauss: dict[tuple[float, float], int] = {}
            for event, count in [*counts.items(), *((e, 1) for e in unhashable)]:
                for key, c in gaussian_parts([event]).items():
                    gauss[key] = gauss.get(key, 0) + c * count
            parts = (gauss, {})
        except UnsupportedEventError:
            parts = None
        curve = trial.rdp
        if np.isnan(curve).any():
            raise ValueError("the events' RDP is NaN at some order; nothing was charged")
        alone = 0.0
        if np.any(curve > 0.0):
            alone = rdp_to_epsilon(self._orders, curve, self.cap.delta)[0]
        if parts is not None and parts[0]:
            from .pld import epsilon_of_parts

            alone = min(alone, epsilon_of_parts(parts[0], {}, self.cap.delta))
        entry = LedgerEntry(label, alone, self.cap.delta, trial.neighboring)
        return self._charge(curve, None, entry, slack, parts)
