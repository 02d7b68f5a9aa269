"""Mechanism events: immutable descriptions of what a private algorithm did to the data.

The vocabulary follows Google's ``dp_accounting`` (``GaussianDpEvent``, ``PoissonSampledDpEvent``,
...), so that :func:`privlearn.accounting.bridge.to_dp_accounting` is a one-to-one translation,
plus :class:`DisjointBatches` for one pass over disjoint batches (Song, Chaudhuri, Sarwate 2013,
Theorem 1), which costs one application of the per-batch mechanism by parallel composition
(McSherry 2009, "Privacy integrated queries", Theorem 4).

Every event is a frozen dataclass that validates its parameters on construction and has a
readable ``str``. Events carry no accounting: an accountant
(:class:`~privlearn.accounting.RDPAccountant`, :class:`~privlearn.accounting.PureDPAccountant`)
turns them into a privacy guarantee and raises :class:`UnsupportedEventError` for an event it
cannot account for.

Noise parameters are *noise multipliers*: the noise scale divided by the sensitivity of the
query under the neighbouring relation in use (add/remove-one for Poisson sampling,
replace-one for sampling without replacement).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .._checks import as_index, as_non_negative, as_positive, as_real

__all__ = [
    "Composed",
    "DisjointBatches",
    "DiscreteGaussianEvent",
    "Event",
    "GaussianEvent",
    "LaplaceEvent",
    "PoissonSampled",
    "PureDPEvent",
    "SampledWithoutReplacement",
    "SelfComposed",
    "UnsupportedEventError",
]

_MAX_COUNT = 1 << 62


class UnsupportedEventError(ValueError):
    """An accountant was given an event (or a nesting of events) it cannot account for.

    The message names the event type. It is a :class:`ValueError`, so code that validates
    input generically still catches it.
    """


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _as_event(value: Any, name: str) -> Event:
    if not isinstance(value, Event):
        raise TypeError(f"{name} must be a privlearn.accounting event, got {type(value).__name__}")
    return value


class Event:
    """Base class of every mechanism event (a marker: events are frozen dataclasses)."""

    __slots__ = ()


@dataclass(frozen=True)
class GaussianEvent(Event):
    """The Gaussian mechanism: noise ``N(0, (noise_multiplier * sensitivity)^2)`` per coordinate.

    Parameters
    ----------
    noise_multiplier : float
        sigma / sensitivity (L2), finite and > 0.
    """

    noise_multiplier: float

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "noise_multiplier", as_positive(self.noise_multiplier, "noise_multiplier")
        )

    def __str__(self) -> str:
        return f"Gaussian(sigma={_fmt(self.noise_multiplier)})"


@dataclass(frozen=True)
class DiscreteGaussianEvent(Event):
    """The discrete Gaussian mechanism on a lattice: an integer-valued query (a sum held exactly
    in lattice units) plus i.i.d. noise ``N_Z(0, s2)`` per coordinate, with
    ``s2 >= (noise_multiplier * sensitivity)^2`` in lattice units (Canonne, Kamath, Steinke
    2020, "The discrete Gaussian for differential privacy", NeurIPS).

    Its Renyi divergence between neighbours is at most ``alpha / (2 noise_multiplier^2)`` for
    every order, the continuous Gaussian's curve (CKS20, Section 2: for an integer shift the
    discrete Gaussian is no worse than the continuous one, and the bound adds up over
    independent coordinates). Under subsampling, the continuous sampled Gaussian's exact
    one-dimensional reduction (Mironov, Talwar, Zhang 2019) does not apply to lattice noise,
    so the accountant uses bounds valid for any mechanism with this RDP curve: Zhu and Wang
    (2019) Theorem 6 for Poisson sampling, Wang, Balle, Kasiviswanathan (2019) Theorem 9 for
    sampling without replacement (:mod:`privlearn.accounting.rdp`).

    These general bounds are loose for subsampled lattice noise (at DP-SGD's settings they
    need 1.04x to 6x the continuous calibration's sigma). privlearn's estimators do not use
    this event: they account their lattice noise as the rounded continuous Gaussian plus an
    explicit slack (:mod:`privlearn.accounting.lattice`, :class:`LatticeSlack`), which costs no
    measurable noise.

    Parameters
    ----------
    noise_multiplier : float
        sigma / sensitivity (L2, in lattice units), finite and > 0.
    """

    noise_multiplier: float

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "noise_multiplier", as_positive(self.noise_multiplier, "noise_multiplier")
        )

    def __str__(self) -> str:
        return f"DiscreteGaussian(sigma={_fmt(self.noise_multiplier)})"


@dataclass(frozen=True)
class LaplaceEvent(Event):
    """The Laplace mechanism: noise ``Laplace(noise_multiplier * sensitivity)`` (L1 sensitivity).

    It is ``1 / noise_multiplier``-DP (Dwork, McSherry, Nissim, Smith 2006).

    Parameters
    ----------
    noise_multiplier : float
        scale / sensitivity, finite and > 0.
    """

    noise_multiplier: float

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "noise_multiplier", as_positive(self.noise_multiplier, "noise_multiplier")
        )

    def __str__(self) -> str:
        return f"Laplace(scale/sensitivity={_fmt(self.noise_multiplier)})"


@dataclass(frozen=True)
class PureDPEvent(Event):
    """Any epsilon-DP mechanism (exponential mechanism, Song et al.'s L2-Laplace noise, ...).

    Parameters
    ----------
    epsilon : float
        Finite and >= 0.
    """

    epsilon: float

    def __post_init__(self) -> None:
        eps = as_non_negative(self.epsilon, "epsilon")
        object.__setattr__(self, "epsilon", eps)

    def __str__(self) -> str:
        return f"PureDP(eps={_fmt(self.epsilon)})"


@dataclass(frozen=True)
class PoissonSampled(Event):
    """``event`` applied to a Poisson sample: each record is included independently with
    probability ``q``. Accounted under the add/remove-one neighbouring relation.

    Parameters
    ----------
    q : float
        Sampling probability in (0, 1].
    event : Event
        The mechanism applied to the sample.
    """

    q: float
    event: Event

    def __post_init__(self) -> None:
        q = as_real(self.q, "q")
        if not 0.0 < q <= 1.0:
            raise ValueError(f"q (sampling probability) must lie in (0, 1], got {q}")
        object.__setattr__(self, "q", q)
        _as_event(self.event, "event")

    def __str__(self) -> str:
        return f"PoissonSampled(q={_fmt(self.q)}, {self.event})"


@dataclass(frozen=True)
class SampledWithoutReplacement(Event):
    """``event`` applied to a uniformly random subset of exactly ``m`` of the ``n`` records.
    Accounted under the replace-one neighbouring relation (``n`` is public).

    Parameters
    ----------
    n : int
        Data set size, >= 1.
    m : int
        Batch size, 1 <= m <= n.
    event : Event
        The mechanism applied to the batch.
    """

    n: int
    m: int
    event: Event

    def __post_init__(self) -> None:
        n = as_index(self.n, "n", lower=1, upper=_MAX_COUNT)
        m = as_index(self.m, "m", lower=0, upper=_MAX_COUNT)
        if m < 1 or m > n:
            raise ValueError(f"m (batch size) must lie in [1, n] = [1, {n}], got {m}")
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "m", m)
        _as_event(self.event, "event")

    def __str__(self) -> str:
        return f"SampledWithoutReplacement(m={self.m} of n={self.n}, {self.event})"


@dataclass(frozen=True)
class DisjointBatches(Event):
    """One pass of ``event`` over disjoint batches that partition the data (each record is in
    exactly one batch): by parallel composition (McSherry 2009, Theorem 4) it costs one
    application of ``event`` (Song, Chaudhuri, Sarwate 2013, Section III, Theorem 1: "the
    privacy guarantee does not degrade across batches as the samples used in the batches are
    disjoint").

    Parameters
    ----------
    event : Event
        The mechanism applied to each batch.
    """

    event: Event

    def __post_init__(self) -> None:
        _as_event(self.event, "event")

    def __str__(self) -> str:
        return f"DisjointBatches({self.event})"


@dataclass(frozen=True)
class SelfComposed(Event):
    """``count`` adaptive repetitions of ``event`` (sequential composition).

    Parameters
    ----------
    event : Event
    count : int
        >= 0 (0 is a no-op).
    """

    event: Event
    count: int

    def __post_init__(self) -> None:
        _as_event(self.event, "event")
        object.__setattr__(self, "count", as_index(self.count, "count", upper=_MAX_COUNT))

    def __str__(self) -> str:
        return f"{self.count} x {self.event}"


@dataclass(frozen=True)
class Composed(Event):
    """Sequential (adaptive) composition of several events.

    Parameters
    ----------
    events : iterable of Event
        Stored as a tuple (so that the event is hashable).
    """

    events: tuple[Event, ...]

    def __post_init__(self) -> None:
        if isinstance(self.events, Event) or not isinstance(self.events, Iterable):
            raise TypeError(
                f"events must be an iterable of events, got {type(self.events).__name__}"
            )
        events = tuple(self.events)
        for i, e in enumerate(events):
            _as_event(e, f"events[{i}]")
        object.__setattr__(self, "events", events)

    def __str__(self) -> str:
        return "Composed[" + ", ".join(str(e) for e in self.events) + "]"
