"""Optional bridge to Google's ``dp_accounting`` package (``pip install dp-accounting``).

- :func:`to_dp_accounting` translates a privlearn event into a ``dp_accounting.DpEvent``;
- :func:`epsilon_pld` computes epsilon with dp_accounting's privacy-loss-distribution (PLD)
  accountant (Koskela et al. 2020; Doroshenko et al. 2022, "Connect the dots"), which is
  tighter than RDP and is meant for reports.

privlearn itself never needs dp_accounting; these functions import it on first use and raise
an :class:`ImportError` naming the ``dp-accounting`` package when it is missing.
"""

from __future__ import annotations

import importlib
from typing import Any

from .accountant import PrivacyStatement, _relation_of
from .events import (
    Composed,
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
from .rdp import _as_delta

__all__ = ["epsilon_pld", "pld_statement", "to_dp_accounting"]


def _dp_accounting() -> Any:
    try:
        return importlib.import_module("dp_accounting")
    except ImportError as exc:  # pragma: no cover - exercised only without the package
        raise ImportError(
            "this function needs the optional 'dp-accounting' package "
            "(pip install dp-accounting, or pip install 'privlearn[test]')"
        ) from exc


def to_dp_accounting(event: Event) -> Any:
    """The ``dp_accounting.DpEvent`` equivalent to a privlearn event.

    ``GaussianEvent`` -> ``GaussianDpEvent``, ``LaplaceEvent`` -> ``LaplaceDpEvent``,
    ``PureDPEvent(eps)`` -> ``EpsilonDeltaDpEvent(eps, 0)`` (in dp_accounting versions that
    have it; :class:`UnsupportedEventError` otherwise), ``PoissonSampled`` ->
    ``PoissonSampledDpEvent``, ``SampledWithoutReplacement`` ->
    ``SampledWithoutReplacementDpEvent``, ``SelfComposed`` -> ``SelfComposedDpEvent``,
    ``Composed`` -> ``ComposedDpEvent``; ``DisjointBatches(e)`` becomes the translation of
    ``e`` (one pass over disjoint batches costs one application, by parallel composition).

    Parameters
    ----------
    event : Event

    Returns
    -------
    dp_accounting.DpEvent

    Raises
    ------
    ImportError
        When dp_accounting is not installed.
    """
    dpa = _dp_accounting()
    return _convert(event, dpa)


def _convert(event: Event, dpa: Any) -> Any:
    if isinstance(event, GaussianEvent):
        return dpa.GaussianDpEvent(event.noise_multiplier)
    if isinstance(event, LaplaceEvent):
        return dpa.LaplaceDpEvent(event.noise_multiplier)
    if isinstance(event, PureDPEvent):
        cls = getattr(dpa, "EpsilonDeltaDpEvent", None) or getattr(
            dpa.dp_event, "EpsilonDeltaDpEvent", None
        )
        if cls is None:
            raise UnsupportedEventError(
                "PureDPEvent: this version of dp_accounting has no EpsilonDeltaDpEvent"
            )
        return cls(event.epsilon, 0.0)
    if isinstance(event, PoissonSampled):
        return dpa.PoissonSampledDpEvent(event.q, _convert(event.event, dpa))
    if isinstance(event, SampledWithoutReplacement):
        return dpa.SampledWithoutReplacementDpEvent(event.n, event.m, _convert(event.event, dpa))
    if isinstance(event, SelfComposed):
        return dpa.SelfComposedDpEvent(_convert(event.event, dpa), event.count)
    if isinstance(event, Composed):
        return dpa.ComposedDpEvent([_convert(e, dpa) for e in event.events])
    if isinstance(event, DisjointBatches):
        return _convert(event.event, dpa)
    if isinstance(event, Event):
        raise UnsupportedEventError(f"to_dp_accounting cannot translate {type(event).__name__}")
    raise TypeError(f"event must be a privlearn.accounting event, got {type(event).__name__}")


def _pld_accountant(event: Event, value_discretization_interval: float) -> Any:
    dpa = _dp_accounting()
    relation = _relation_of(event)
    rel = dpa.NeighboringRelation
    neighboring = rel.REPLACE_ONE if relation == "replace_one" else rel.ADD_OR_REMOVE_ONE
    acc = dpa.pld.PLDAccountant(
        neighboring_relation=neighboring,
        value_discretization_interval=value_discretization_interval,
    )
    dp_event = _convert(event, dpa)
    if not acc.supports(dp_event):
        raise UnsupportedEventError(
            f"dp_accounting's PLD accountant cannot account for {type(event).__name__} ({event})"
        )
    acc.compose(dp_event)
    return acc


def epsilon_pld(
    event: Event, delta: float, *, value_discretization_interval: float = 1e-4
) -> float:
    """Epsilon of ``event`` at ``delta`` by dp_accounting's PLD accountant.

    The privacy loss distribution is discretised pessimistically (so the result is an upper
    bound, up to the discretisation interval) and composed by FFT; for the subsampled Gaussian
    it is tighter than the RDP bound (e.g. 0.947 vs 1.036 for q = 0.01, sigma = 4, 10000 steps,
    delta = 1e-5). The neighbouring relation is add/remove-one, or replace-one when the event
    samples without replacement (which dp_accounting's PLD accountant does not support: that
    raises :class:`UnsupportedEventError`).

    Parameters
    ----------
    event : Event
    delta : float
        In (0, 1).
    value_discretization_interval : float, default 1e-4
        dp_accounting's discretisation of the privacy loss (smaller: tighter and slower).

    Returns
    -------
    float

    Raises
    ------
    ImportError
        When dp_accounting is not installed.
    UnsupportedEventError
        When dp_accounting's PLD accountant does not support the event.
    """
    delta = _as_delta(delta)
    return float(_pld_accountant(event, value_discretization_interval).get_epsilon(delta))


def pld_statement(
    event: Event, delta: float, *, value_discretization_interval: float = 1e-4
) -> PrivacyStatement:
    """A :class:`PrivacyStatement` computed by :func:`epsilon_pld`."""
    eps = epsilon_pld(event, delta, value_discretization_interval=value_discretization_interval)
    return PrivacyStatement(
        epsilon=eps,
        delta=float(delta),
        accountant="pld (dp_accounting)",
        events=(event,),
        neighboring=_relation_of(event),
    )
