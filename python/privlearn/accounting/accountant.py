"""Stateful privacy accountants: compose events, then ask for epsilon (or delta).

In the style of Google's ``dp_accounting``::

    acc = RDPAccountant()
    acc.compose(PoissonSampled(0.01, GaussianEvent(4.0)), count=10_000)
    acc.get_epsilon(1e-5)                      # 1.0355...
    print(acc.statement(1e-5))

- :class:`RDPAccountant` keeps the Renyi-DP curve at a fixed set of orders (the moments
  accountant of Abadi et al. 2016, generalised by Mironov 2017) and converts it with the tight
  Canonne-Kamath-Steinke / Balle et al. 2020 formula. It accounts for Gaussian, Laplace and
  pure-DP events, Poisson-subsampled and without-replacement-subsampled Gaussians, disjoint
  batches, and compositions of these.
- :class:`PureDPAccountant` adds epsilons (basic composition), takes the single-batch cost for
  disjoint batches (parallel composition) and applies amplification by subsampling to pure-DP
  events; it refuses Gaussian events.

The neighbouring relation is part of the guarantee: Poisson sampling is accounted under
add/remove-one, sampling without replacement under replace-one. An accountant fixes its
relation (given, or taken from the first sampled event) and refuses an event that needs the
other one: a mismatch is an :class:`UnsupportedEventError`, never a silent wrong number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._checks import as_index
from . import pure as _pure
from .events import (
    Composed,
    DiscreteGaussianEvent,
    DisjointBatches,
    Event,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampled,
    PureDPEvent,
    SampledWithoutReplacement,
    SelfComposed,
    UnsupportedEventError,
)
from .rdp import (
    DEFAULT_ORDERS,
    _as_delta,
    _as_orders,
    _rdp_laplace,
    _rdp_poisson,
    _rdp_poisson_discrete,
    _rdp_pure,
    _rdp_to_epsilon,
    _rdp_wor,
    _rdp_wor_discrete,
    rdp_to_delta,
)

__all__ = ["NEIGHBORING_RELATIONS", "PrivacyStatement", "PureDPAccountant", "RDPAccountant"]

#: Accepted neighbouring relations and their names in statements.
NEIGHBORING_RELATIONS: dict[str, str] = {
    "add_remove": "add/remove-one",
    "replace_one": "replace-one",
}

_MAX_COUNT = 1 << 62


@dataclass(frozen=True)
class PrivacyStatement:
    """What a private computation spent: ``(epsilon, delta)``-DP, by which accountant, for
    which events, under which neighbouring relation. Estimators expose one as ``privacy_``.

    Attributes
    ----------
    epsilon : float
    delta : float
    accountant : str
        ``"rdp"``, ``"pure"``, ``"pld"``, ...
    events : tuple of Event
        The composed mechanism events, in order.
    best_order : float or None
        The RDP order that gave epsilon (RDP accountant only).
    neighboring : str or None
        ``"add_remove"`` or ``"replace_one"`` (None when no event fixed it).
    lattice : LatticeSlack or None
        Noise released on a lattice: the events are those of the rounded continuous Gaussian
        and ``(epsilon, delta)`` include this slack
        (:func:`~privlearn.accounting.lattice_statement`).
    rdp_epsilon : float or None
        The Renyi-DP accountant's epsilon for the same events at the same delta, shown beside
        a tighter accountant's (``"pld"``), or None.
    pld_epsilon : float or None
        The PLD accountant's epsilon for the same events at the same delta (``inf`` where it
        could not run), shown beside Renyi DP's when RDP is the tighter (the tightest
        accountant, :class:`~privlearn.accounting.tightest.TightestAccountant`), or None.
    note : str or None
        Why this accountant bounds the statement (e.g. the PLD was out of its range), or None.
    """

    epsilon: float
    delta: float
    accountant: str
    events: tuple[Event, ...] = field(default_factory=tuple)
    best_order: float | None = None
    neighboring: str | None = None
    lattice: Any = None
    rdp_epsilon: float | None = None
    pld_epsilon: float | None = None
    note: str | None = None

    def __str__(self) -> str:
        head = f"({self.epsilon:.6g}, {self.delta:.6g})-DP"
        details = [f"{self.accountant} accountant"]
        if self.best_order is not None:
            details.append(f"best order {self.best_order:g}")
        if self.neighboring is not None:
            details.append(f"{NEIGHBORING_RELATIONS.get(self.neighboring, self.neighboring)}")
        if self.rdp_epsilon is not None and self.accountant != "rdp":
            details.append(f"RDP accountant: epsilon {self.rdp_epsilon:.6g}")
        if self.pld_epsilon is not None and self.accountant != "pld":
            details.append(f"PLD accountant: epsilon {self.pld_epsilon:.6g}")
        if self.lattice is not None:
            details.append("of the rounded Gaussian + lattice slack")
        lines = [f"{head} [{'; '.join(details)}]"]
        if self.note:
            lines.append(self.note)
        if self.lattice is not None:
            lines.append(str(self.lattice))
        if self.events:
            lines.append("events:")
            lines += [f"  {e}" for e in self.events]
        return "\n".join(lines)


def _as_neighboring(value: Any) -> str | None:
    if value is None:
        return None
    if value not in NEIGHBORING_RELATIONS:
        raise ValueError(
            f"neighboring must be None or one of {sorted(NEIGHBORING_RELATIONS)}, got {value!r}"
        )
    return str(value)


def _relation_of(event: Event) -> str | None:
    """The neighbouring relation an event requires (None: any), or UnsupportedEventError."""
    found: set[str] = set()
    stack = [event]
    while stack:
        e = stack.pop()
        if isinstance(e, PoissonSampled):
            found.add("add_remove")
            stack.append(e.event)
        elif isinstance(e, SampledWithoutReplacement):
            found.add("replace_one")
            stack.append(e.event)
        elif isinstance(e, (DisjointBatches, SelfComposed)):
            stack.append(e.event)
        elif isinstance(e, Composed):
            stack.extend(e.events)
    if len(found) > 1:
        raise UnsupportedEventError(
            f"{type(event).__name__} mixes PoissonSampled (add/remove-one neighbours) and "
            "SampledWithoutReplacement (replace-one neighbours); account for them separately"
        )
    return found.pop() if found else None


class _Accountant:
    """Shared bookkeeping: composed events and the neighbouring relation."""

    _name = "base"

    def __init__(self, neighboring: str | None = None) -> None:
        self._neighboring = _as_neighboring(neighboring)
        self._events: list[tuple[Event, int]] = []

    @property
    def neighboring(self) -> str | None:
        """The neighbouring relation, once fixed (``"add_remove"`` or ``"replace_one"``)."""
        return self._neighboring

    @property
    def events(self) -> tuple[Event, ...]:
        """The composed events, in order (``SelfComposed`` where ``count > 1``)."""
        return tuple(e if c == 1 else SelfComposed(e, c) for e, c in self._events)

    def _check(self, event: Any, count: Any) -> tuple[Event, int, str | None]:
        if not isinstance(event, Event):
            raise TypeError(
                f"event must be a privlearn.accounting event, got {type(event).__name__}"
            )
        count = as_index(count, "count", upper=_MAX_COUNT)
        relation = _relation_of(event)
        if relation is not None and self._neighboring not in (None, relation):
            raise UnsupportedEventError(
                f"{type(event).__name__} needs {NEIGHBORING_RELATIONS[relation]} neighbours but "
                f"this {type(self).__name__} accounts under "
                f"{NEIGHBORING_RELATIONS[str(self._neighboring)]} neighbours: the batch sampler "
                "and the accountant must agree"
            )
        return event, count, relation

    def _record(self, event: Event, count: int, relation: str | None) -> None:
        if relation is not None:
            self._neighboring = relation
        self._events.append((event, count))

    def supports(self, event: Event) -> bool:
        """Whether :meth:`compose` would accept ``event`` now (it does not compose it)."""
        try:
            self._check(event, 1)
            self._cost(event)
        except (UnsupportedEventError, TypeError):
            return False
        return True

    def _cost(self, event: Event) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError


class RDPAccountant(_Accountant):
    """Renyi-DP (moments) accountant.

    Parameters
    ----------
    orders : array_like, default DEFAULT_ORDERS
        RDP orders alpha > 1 (dp_accounting's defaults: 1.1..10.9 step 0.1, 11..63, 128, 256,
        512, 1024).
    neighboring : {"add_remove", "replace_one"} or None, default None
        The neighbouring relation; None takes it from the first sampled event.

    Notes
    -----
    RDP composes additively at each order (Mironov 2017, Proposition 1); epsilon is obtained
    with :func:`~privlearn.accounting.rdp_to_epsilon`. Per-event RDP:

    - ``GaussianEvent(s)``: ``alpha / (2 s^2)`` (Mironov 2017, Table II);
    - ``LaplaceEvent(b)``: exact (Mironov 2017, Proposition 6);
    - ``PureDPEvent(eps)``: ``min(eps, alpha eps^2 / 2)`` (Bun, Steinke 2016, Proposition 3.3);
    - ``PoissonSampled(q, G)``: :func:`~privlearn.accounting.rdp_poisson_gaussian`;
    - ``SampledWithoutReplacement(n, m, G)``:
      :func:`~privlearn.accounting.rdp_without_replacement_gaussian`;
    - ``DisjointBatches(e)``: the RDP of ``e`` (parallel composition);
    - ``SelfComposed`` / ``Composed``: sums.

    ``G`` may be a Gaussian or a composition of Gaussians applied to the same batch, which is
    one Gaussian with ``sigma_eff = (sum_i sigma_i^-2)^(-1/2)`` (rescale each coordinate by its
    sigma: the mean shifts by a vector of norm at most ``sqrt(sum sigma_i^-2)``).
    """

    _name = "rdp"

    def __init__(self, orders: Any = DEFAULT_ORDERS, neighboring: str | None = None) -> None:
        super().__init__(neighboring)
        a = np.atleast_1d(_as_orders(orders)).copy()
        a.setflags(write=False)
        self._orders = a
        self._rdp = np.zeros(a.shape)

    @property
    def orders(self) -> np.ndarray:
        """The RDP orders (read-only)."""
        return self._orders

    @property
    def rdp(self) -> np.ndarray:
        """The accumulated RDP at each order (a copy)."""
        return self._rdp.copy()

    def _cost(self, event: Event) -> np.ndarray:
        return _event_rdp(event, self._orders)

    def compose(self, event: Event, count: int = 1) -> RDPAccountant:
        """Add ``count`` adaptive repetitions of ``event``; returns ``self``.

        Raises
        ------
        UnsupportedEventError
            For an event this accountant cannot handle, or one whose neighbouring relation
            differs from the accountant's. Nothing is composed then.
        """
        event, count, relation = self._check(event, count)
        cost = self._cost(event)
        if count:
            self._rdp = self._rdp + _scale(cost, count)
        self._record(event, count, relation)
        return self

    def get_epsilon_and_order(self, delta: float) -> tuple[float, float]:
        """``(epsilon, best_order)`` for the composed events at ``delta`` in (0, 1)."""
        return _rdp_to_epsilon(self._orders, self._rdp, _as_delta(delta))

    def get_epsilon(self, delta: float) -> float:
        """Epsilon for the composed events at ``delta`` in (0, 1)."""
        return self.get_epsilon_and_order(delta)[0]

    def get_delta_and_order(self, epsilon: float) -> tuple[float, float]:
        """``(delta, best_order)`` for the composed events at ``epsilon`` >= 0."""
        return rdp_to_delta(self._orders, self._rdp, epsilon)

    def get_delta(self, epsilon: float) -> float:
        """Delta for the composed events at ``epsilon`` >= 0."""
        return self.get_delta_and_order(epsilon)[0]

    def statement(self, delta: float) -> PrivacyStatement:
        """The :class:`PrivacyStatement` at ``delta``."""
        eps, order = self.get_epsilon_and_order(delta)
        return PrivacyStatement(
            epsilon=eps,
            delta=float(delta),
            accountant=self._name,
            events=self.events,
            best_order=order,
            neighboring=self._neighboring,
        )

    def __repr__(self) -> str:
        return (
            f"RDPAccountant({self._orders.size} orders, {len(self._events)} events, "
            f"neighboring={self._neighboring!r})"
        )


class PureDPAccountant(_Accountant):
    """Pure-DP accountant: basic composition of epsilons.

    Parameters
    ----------
    neighboring : {"add_remove", "replace_one"} or None, default None
        The neighbouring relation; None takes it from the first sampled event.

    Notes
    -----
    Per-event epsilon: ``PureDPEvent(eps)``: eps; ``LaplaceEvent(b)``: ``1/b`` (Dwork et al.
    2006); ``SelfComposed`` / ``Composed``: sums (basic composition, Dwork & Roth 2014,
    Theorem 3.16); ``DisjointBatches(e)``: the epsilon of ``e`` (parallel composition, the max
    over identical parts; McSherry 2009, Theorem 4); ``PoissonSampled(q, e)``:
    ``log(1 + q (e^eps - 1))`` and ``SampledWithoutReplacement(n, m, e)``:
    ``log(1 + (m/n)(e^eps - 1))`` (Balle, Barthe, Gaboardi 2018, Table 1). Gaussian events
    have no pure-DP guarantee and raise :class:`UnsupportedEventError`.
    """

    _name = "pure"

    def __init__(self, neighboring: str | None = None) -> None:
        super().__init__(neighboring)
        self._terms: list[float] = []

    def _cost(self, event: Event) -> float:
        return _event_epsilon(event)

    def compose(self, event: Event, count: int = 1) -> PureDPAccountant:
        """Add ``count`` adaptive repetitions of ``event``; returns ``self``.

        Raises
        ------
        UnsupportedEventError
            For a Gaussian (or other non-pure) event, or a neighbouring-relation mismatch.
        """
        event, count, relation = self._check(event, count)
        cost = self._cost(event)
        self._terms.append(count * cost)
        self._record(event, count, relation)
        return self

    @property
    def epsilon(self) -> float:
        """The total epsilon (exactly rounded sum)."""
        return math.fsum(self._terms)

    def get_epsilon(self, delta: float = 0.0) -> float:
        """The total epsilon; it is a valid ``(epsilon, delta)`` bound for every ``delta >= 0``,
        which is accepted for interface compatibility with :class:`RDPAccountant`."""
        d = float(delta)
        if not 0.0 <= d < 1.0:
            raise ValueError(f"delta must lie in [0, 1), got {delta}")
        return self.epsilon

    def statement(self, delta: float = 0.0) -> PrivacyStatement:
        """The :class:`PrivacyStatement` (pure DP: ``delta`` is what you report, default 0)."""
        return PrivacyStatement(
            epsilon=self.get_epsilon(delta),
            delta=float(delta),
            accountant=self._name,
            events=self.events,
            neighboring=self._neighboring,
        )

    def __repr__(self) -> str:
        return (
            f"PureDPAccountant(epsilon={self.epsilon:.6g}, {len(self._events)} events, "
            f"neighboring={self._neighboring!r})"
        )


# ---- per-event costs ------------------------------------------------------------------------
def _scale(rdp: np.ndarray, count: int) -> np.ndarray:
    """count * rdp with 0 * inf = 0."""
    if count == 0:
        return np.zeros_like(rdp)
    return count * rdp


def _unsupported(event: Event, accountant: str, why: str = "") -> UnsupportedEventError:
    msg = f"{accountant} cannot account for a {type(event).__name__} event ({event})"
    return UnsupportedEventError(msg + (f": {why}" if why else ""))


def _effective_sigma(event: Event, outer: Event) -> float:
    """Noise multiplier of the single Gaussian equivalent to ``event`` on one batch (continuous
    or discrete: both have the RDP curve ``alpha / (2 sigma^2)``, which is all that composes)."""
    if isinstance(event, (GaussianEvent, DiscreteGaussianEvent)):
        return event.noise_multiplier
    if isinstance(event, SelfComposed):
        if event.count == 0:
            return math.inf
        return _effective_sigma(event.event, outer) / math.sqrt(event.count)
    if isinstance(event, Composed):
        inv = math.fsum(_effective_sigma(e, outer) ** -2.0 for e in event.events)
        return math.inf if inv == 0.0 else inv**-0.5
    raise _unsupported(
        outer,
        "RDPAccountant",
        f"the sampled mechanism must be a GaussianEvent or DiscreteGaussianEvent (or a "
        f"composition of them), got {type(event).__name__}",
    )


def _has_discrete(event: Event) -> bool:
    """Whether a sampled mechanism contains lattice (discrete Gaussian) noise: then only the
    general subsampling bounds apply
    (:func:`privlearn.accounting.rdp.rdp_poisson_discrete_gaussian`)."""
    if isinstance(event, DiscreteGaussianEvent):
        return True
    if isinstance(event, SelfComposed):
        return _has_discrete(event.event)
    if isinstance(event, Composed):
        return any(_has_discrete(e) for e in event.events)
    return False


def _event_rdp(event: Event, orders: np.ndarray) -> np.ndarray:
    """RDP curve of one event at ``orders``."""
    if isinstance(event, (GaussianEvent, DiscreteGaussianEvent)):
        return orders / (2.0 * event.noise_multiplier**2)
    if isinstance(event, LaplaceEvent):
        return _rdp_laplace(1.0 / event.noise_multiplier, orders)
    if isinstance(event, PureDPEvent):
        return _rdp_pure(event.epsilon, orders)
    if isinstance(event, PoissonSampled):
        sigma = _effective_sigma(event.event, event)
        if math.isinf(sigma):
            return np.zeros(orders.shape)
        if _has_discrete(event.event):
            return _rdp_poisson_discrete(event.q, sigma, orders)
        return _rdp_poisson(event.q, sigma, orders)
    if isinstance(event, SampledWithoutReplacement):
        sigma = _effective_sigma(event.event, event)
        if math.isinf(sigma):
            return np.zeros(orders.shape)
        if _has_discrete(event.event):
            return _rdp_wor_discrete(event.m / event.n, sigma, orders)
        return _rdp_wor(event.m / event.n, sigma, orders)
    if isinstance(event, DisjointBatches):
        return _event_rdp(event.event, orders)
    if isinstance(event, SelfComposed):
        return _scale(_event_rdp(event.event, orders), event.count)
    if isinstance(event, Composed):
        total = np.zeros(orders.shape)
        for e in event.events:
            total = total + _event_rdp(e, orders)
        return total
    raise _unsupported(event, "RDPAccountant")


def _event_epsilon(event: Event) -> float:
    """Pure-DP epsilon of one event."""
    if isinstance(event, PureDPEvent):
        return event.epsilon
    if isinstance(event, LaplaceEvent):
        return _pure.laplace_epsilon(event.noise_multiplier)
    if isinstance(event, PoissonSampled):
        return _pure.amplify_poisson(_event_epsilon(event.event), event.q)
    if isinstance(event, SampledWithoutReplacement):
        return _pure.amplify_without_replacement(_event_epsilon(event.event), event.n, event.m)
    if isinstance(event, DisjointBatches):
        return _event_epsilon(event.event)
    if isinstance(event, SelfComposed):
        return event.count * _event_epsilon(event.event) if event.count else 0.0
    if isinstance(event, Composed):
        return math.fsum(_event_epsilon(e) for e in event.events)
    why = (
        "it has no pure-DP guarantee"
        if isinstance(event, (GaussianEvent, DiscreteGaussianEvent))
        else ""
    )
    raise _unsupported(event, "PureDPAccountant", why)
