"""Accounting for Gaussian noise released exactly on a lattice: the continuous accountant of the
rounded Gaussian plus a small, explicitly computed slack.

DP-SGD adds the exact discrete Gaussian ``N_Z(0, s^2)`` (``s``: the noise standard deviation in
lattice units, ``s^2`` the sampler's integer variance parameter) to an exact integer sum ``S``
(:func:`privlearn.random.noise_lattice`). The argument, step by step:

1. **Rounded Gaussian = continuous Gaussian, post-processed.** For ``Y ~ N(0, s^2 I)``,
   releasing ``S + round(Y)`` equals releasing ``round(S + Y)`` because ``S`` is an integer
   vector. A run whose lattice noise were the rounded Gaussian
   ``r(k) = Phi((k + 1/2)/s) - Phi((k - 1/2)/s)`` is therefore a post-processing of the
   continuous (Poisson- or fixed-size-subsampled) Gaussian mechanism, with the same L2
   sensitivity in lattice units: the continuous RDP accountant applies unchanged (Mironov,
   Talwar, Zhang 2019 for the sampled Gaussian).
2. **Pointwise closeness.** Let ``p(k) = exp(-k^2/(2 s^2)) / Z`` with
   ``Z = sum_j exp(-j^2/(2 s^2))`` and ``phi_s`` the N(0, s^2) density. By Poisson summation
   ``theta = Z / (sqrt(2 pi) s) = 1 + 2 sum_{m>=1} exp(-2 pi^2 s^2 m^2) >= 1``, so
   ``p(k) = phi_s(k) / theta``. And ``r(k) = phi_s(k) I(k)`` with
   ``I(k) = int_{-1/2}^{1/2} exp(-(2 k u + u^2)/(2 s^2)) du``; Jensen's inequality gives
   ``I(k) >= exp(-1/(24 s^2)) >= exp(-1/(8 s^2))`` and dropping ``u^2`` gives
   ``I(k) <= sinh(a)/a <= exp(a^2/6)`` with ``a = k/(2 s^2)``, i.e.
   ``I(k) <= exp(k^2/(24 s^4))``. Hence for ``|k| <= K``::

       |log p(k) - log r(k)| <= eta(s, K) = log(theta) + 1/(8 s^2) + K^2/(24 s^4).

3. **Tails.** For an integer ``K``, ``P_p(|k| > K) <= erfc(K/(s sqrt 2)) = tau`` (the terms
   decrease, so ``sum_{k>K} exp(-k^2/(2 s^2)) <= int_K^inf exp(-x^2/(2 s^2)) dx``, and
   ``Z >= sqrt(2 pi) s``); and ``P_r(|k| > K) = P(|Y| > K + 1/2) <= tau`` as well.
4. **Hybrid over the whole run.** The ``N`` noise coordinates of a fit (steps x dimension x
   tasks) are drawn i.i.d., independently of the data and of the batch sampling, and the
   transcript is a function of the data, the batches and the noise. For any set ``A`` of noise
   vectors, ``p^N(A) <= exp(N eta) r^N(A) + N tau`` (split ``A`` on the box ``|k_i| <= K``)
   and the same with ``p`` and ``r`` exchanged. So if the rounded run is
   ``(eps, delta)``-DP, the lattice run is

       ``(eps + 2 N eta,  exp(N eta) delta + (1 + exp(eps + N eta)) N tau)``-DP.

   The same holds for several fits composed together (a ledger): ``N eta`` and ``N tau`` add.

At DP-SGD's scales the slack is negligible: on the ``C 2^-30`` lattice ``s`` is about
``2^30 sigma``, and ``eta`` is about 6e-12 per coordinate at ``s = 2^20`` (sigma = 1e-3) and
5e-18 at ``s = 2^30`` (sigma = 1), with ``K`` about 12 ``s``; the calibrated noise is the
continuous calibration's (the slack is far below the calibration tolerance). The
slack is computed, never assumed: :func:`lattice_slack` picks the smallest integer ``K`` with
``(1 + e^(eps + 1)) N tau <= TAIL_FRACTION * delta`` (tail probabilities in log space, no
underflow), and
:func:`calibrate_lattice_sigma` refuses a slack above :data:`MAX_SLACK_FRACTION` of the target.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import special

from .._checks import as_index, as_non_negative, as_positive

__all__ = [
    "MAX_SLACK_FRACTION",
    "TAIL_FRACTION",
    "LatticeSlack",
    "calibrate_lattice_sigma",
    "lattice_epsilon",
    "lattice_slack",
    "lattice_statement",
]

#: The tail term ``N tau`` is made at most this fraction of the target delta.
TAIL_FRACTION = 1e-20
#: Largest accepted slack, as a fraction of the target: ``2 N eta <= MAX_SLACK_FRACTION * eps``
#: and ``delta - (delta of the continuous part) <= MAX_SLACK_FRACTION * delta``.
MAX_SLACK_FRACTION = 0.01


def _log_theta(s: float) -> float:
    """``log(theta)``, ``theta = 1 + 2 sum_{m>=1} exp(-2 pi^2 s^2 m^2)`` (an upper bound:
    the series is summed until its terms vanish in float64 and its remainder is bounded by a
    geometric series)."""
    c = 2.0 * math.pi**2 * s * s
    if c < 1.0:  # sum_{m>=1} exp(-c m^2) <= int_0^inf exp(-c x^2) dx = sqrt(pi / c) / 2
        return math.log1p(math.sqrt(math.pi / c))
    total, m = 0.0, 1
    while True:
        term = math.exp(-c * m * m)
        if term == 0.0 or term < 1e-300:
            break
        total += term
        m += 1
    # remainder sum_{j>=m} exp(-c j^2) <= exp(-c m^2) / (1 - exp(-c (2m+1))) <= 2 exp(-c m^2)
    total += 2.0 * math.exp(-c * m * m) + 1e-300
    return math.log1p(2.0 * total)


def _log_tau(s: float, k: int) -> float:
    """``log erfc(K / (s sqrt 2)) = log 2 + log Phi(-K/s)`` (scipy's log_ndtr: no underflow)."""
    return math.log(2.0) + float(special.log_ndtr(-k / s))


def _eta(s: float, k: int) -> float:
    """``eta(s, K) = log(theta) + 1/(8 s^2) + K^2/(24 s^4)``, rounded up a few ulps."""
    value = _log_theta(s) + 1.0 / (8.0 * s * s) + (k / (s * s)) ** 2 / 24.0
    return value * (1.0 + 1e-12)


@dataclass(frozen=True)
class LatticeSlack:
    """The distance between lattice noise (exact discrete Gaussian) and the rounded continuous
    Gaussian over the ``coordinates`` noise draws of a run (see the module docstring).

    Attributes
    ----------
    scale : float
        ``s``: the noise standard deviation parameter in lattice units (``sqrt`` of the
        sampler's variance), a lower bound of it where it is not an integer square.
    coordinates : int
        ``N``: the number of noise coordinates drawn (steps x dimension x tasks).
    bound : int
        ``K``: the coordinate box ``|k| <= K`` on which the two laws are compared.
    eta : float
        Per-coordinate bound on ``|log p(k) - log r(k)|`` for ``|k| <= K``.
    log_tau : float
        ``log erfc(K / (s sqrt 2))``: a bound on each law's mass outside the box.
    """

    scale: float
    coordinates: int
    bound: int
    eta: float
    log_tau: float

    @property
    def log_ratio(self) -> float:
        """``N eta``: the log-likelihood-ratio bound over the whole run, on the box."""
        return self.coordinates * self.eta

    @property
    def tail(self) -> float:
        """``N tau``: the probability bound of leaving the box, over the whole run."""
        return math.exp(math.log(self.coordinates) + self.log_tau) * (1.0 + 1e-12)

    def epsilon(self, epsilon_continuous: float) -> float:
        """Epsilon of the lattice run: ``eps + 2 N eta``."""
        return epsilon_continuous + 2.0 * self.log_ratio

    def tail_term(self, epsilon: float) -> float:
        """``(1 + exp(epsilon)) N tau`` (log space: no overflow; inf when it exceeds 1e300)."""
        if self.tail == 0.0:
            return 0.0
        log_term = float(np.logaddexp(0.0, epsilon)) + math.log(self.tail)
        return math.exp(log_term) if log_term < 690.0 else math.inf

    def delta(self, epsilon_continuous: float, delta_continuous: float) -> float:
        """Delta of the lattice run: ``exp(N eta) delta + (1 + exp(eps + N eta)) N tau``."""
        nu = self.log_ratio
        return math.exp(nu) * delta_continuous + self.tail_term(epsilon_continuous + nu)

    def continuous_target(self, epsilon: float, delta: float) -> tuple[float, float]:
        """The ``(eps_c, delta_c)`` a continuous accountant must meet for the lattice run to be
        ``(epsilon, delta)``-DP (the inverse of :meth:`epsilon` and :meth:`delta`; ``delta_c``
        lowered by 1e-12 relative against rounding)."""
        nu = self.log_ratio
        eps_c = epsilon - 2.0 * nu
        delta_c = (delta - self.tail_term(eps_c + nu)) * math.exp(-nu) * (1.0 - 1e-12)
        return eps_c, delta_c

    def bound_with(self, other: LatticeSlack) -> LatticeSlack:
        """A slack bounding both ``self`` and ``other`` (same run, two noise scales): the larger
        ``eta`` and ``tau``, the smaller scale."""
        return LatticeSlack(
            scale=min(self.scale, other.scale),
            coordinates=max(self.coordinates, other.coordinates),
            bound=max(self.bound, other.bound),
            eta=max(self.eta, other.eta),
            log_tau=max(self.log_tau, other.log_tau),
        )

    def combine(self, other: LatticeSlack) -> LatticeSlack:
        """The slack of two runs composed: ``N eta`` and ``N tau`` add (returned as one
        pseudo-slack with ``coordinates = 1``)."""
        tail = self.tail + other.tail
        return LatticeSlack(
            scale=min(self.scale, other.scale),
            coordinates=1,
            bound=max(self.bound, other.bound),
            eta=(self.log_ratio + other.log_ratio) * (1.0 + 1e-12),
            log_tau=math.log(tail) if tail > 0.0 else -math.inf,
        )

    def __str__(self) -> str:
        return (
            f"lattice slack: N = {self.coordinates} coordinates at s = {self.scale:.6g} lattice "
            f"units, |k| <= K = {self.bound}: eps + {2.0 * self.log_ratio:.3g}, "
            f"delta x exp({self.log_ratio:.3g}) + (1 + e^eps') x {self.tail:.3g}"
        )


def lattice_slack(
    scale: float, coordinates: int, delta: float, epsilon: float = 1.0
) -> LatticeSlack:
    """The :class:`LatticeSlack` of ``coordinates`` discrete Gaussian draws of scale ``scale``
    (lattice units), with the smallest integer box ``K`` such that ``(1 + e^(epsilon + 1)) N
    tau`` is at most :data:`TAIL_FRACTION` ``* delta`` (the module docstring derives the
    bounds).

    Parameters
    ----------
    scale : float
        ``s > 0``, in lattice units (a lower bound of the true value is sound: the slack
        decreases with ``s``).
    coordinates : int
        ``N >= 1``, the number of noise coordinates of the run (an upper bound is sound).
    delta : float
        The target delta, in (0, 1).
    epsilon : float, default 1
        About the run's epsilon (the tail term is multiplied by ``1 + e^eps``; any value is
        sound, a good one keeps the tail term small).
    """
    s = as_positive(scale, "scale")
    n = as_index(coordinates, "coordinates", lower=1, upper=1 << 62)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    eps = min(as_non_negative(epsilon, "epsilon"), 700.0)  # "about": capping stays sound
    target = math.log(TAIL_FRACTION * delta) - math.log(n) - float(np.logaddexp(0.0, eps + 1.0))
    lo, hi = 0, max(1, math.ceil(s))
    while _log_tau(s, hi) > target:
        lo, hi = hi, 2 * hi
    while hi - lo > 1:  # smallest K with log tau(K) <= target (log tau decreases in K)
        mid = (lo + hi) // 2
        if _log_tau(s, mid) <= target:
            hi = mid
        else:
            lo = mid
    return LatticeSlack(scale=s, coordinates=n, bound=hi, eta=_eta(s, hi), log_tau=_log_tau(s, hi))


def calibrate_lattice_sigma(
    epsilon: float,
    delta: float,
    slack_of: Any,
    calibrate: Any,
    epsilon_of: Any,
    *,
    max_fraction: float = MAX_SLACK_FRACTION,
) -> tuple[float, LatticeSlack]:
    """Calibrate a lattice-noise run: ``sigma0 = calibrate(epsilon, delta)`` (the continuous
    accountant), then ``sigma = calibrate(eps_c, delta_c)`` at the target less the slack of
    ``sigma0``'s lattice scale (:meth:`LatticeSlack.continuous_target`) unless ``sigma0`` meets
    it already, repeated with the
    larger slack until the slack of ``sigma`` is no larger than the one calibrated for (the
    slack decreases with the lattice scale; ``sigma`` may come out a hair below ``sigma0``
    within the calibration tolerance, or the lattice be coarsened).

    Parameters
    ----------
    epsilon, delta : float
        The target of the lattice run.
    slack_of : callable
        ``sigma -> LatticeSlack`` of the run with noise multiplier ``sigma``.
    calibrate : callable
        ``(eps, delta) -> sigma``: the continuous calibration (e.g. a closure over
        :func:`~privlearn.accounting.calibrate_sigma`).
    epsilon_of : callable
        ``(sigma, delta) -> eps``: the continuous accountant (e.g. a closure over
        :func:`~privlearn.accounting.epsilon_for_sigma`). When ``sigma0`` already meets the
        reduced target (its calibration tolerance, ``rtol``, is far above a negligible slack)
        it is kept, so the lattice run gets exactly the continuous calibration's noise.
    max_fraction : float
        Refuse (``ValueError``) a slack above this fraction of ``epsilon`` or ``delta``.

    Returns
    -------
    (sigma, slack) : the noise multiplier and the slack of its lattice.
    """
    sigma = calibrate(epsilon, delta)
    slack = slack_of(sigma)
    _check_fraction(slack, epsilon, delta, max_fraction)
    eps_c, delta_c = slack.continuous_target(epsilon, delta)
    if delta_c > 0.0 and epsilon_of(sigma, delta_c) <= eps_c:
        return sigma, slack
    for _ in range(8):
        _check_fraction(slack, epsilon, delta, max_fraction)
        eps_c, delta_c = slack.continuous_target(epsilon, delta)
        sigma = calibrate(eps_c, delta_c)
        new_slack = slack_of(sigma)
        if new_slack.log_ratio <= slack.log_ratio and new_slack.tail <= slack.tail:
            # sigma meets (eps_c, delta_c): with any slack no larger than `slack`, the lattice
            # run meets (epsilon, delta); `slack` is reported (a valid, larger bound)
            return sigma, slack
        slack = slack.bound_with(new_slack)
    raise ValueError("the lattice-noise calibration did not settle (slack grows with sigma)")


def _check_fraction(slack: LatticeSlack, epsilon: float, delta: float, fraction: float) -> None:
    eps_c, delta_c = slack.continuous_target(epsilon, delta)
    if not (epsilon - eps_c <= fraction * epsilon and delta - delta_c <= fraction * delta):
        raise ValueError(
            f"the lattice noise's slack is too large for the target ({slack}): the noise is "
            f"too small on its lattice or the run too long (more than {fraction:g} of "
            "epsilon or delta); use a larger noise multiplier or a smaller target precision"
        )


def lattice_epsilon(
    continuous: Callable[[float], float], slack: LatticeSlack, delta: float
) -> float:
    """The epsilon of a lattice-noise run at ``delta``: ``continuous(delta_c)`` (the continuous
    epsilon of the rounded Gaussian run at ``delta_c``) is taken at the continuous delta that
    ``slack`` leaves, ``delta_c = (delta - (1 + e^(eps_c + nu)) N tau) e^-nu``, and raised by
    ``2 N eta``. The tail term depends on ``eps_c``, so ``delta_c`` is iterated (from
    ``eps_c = 0``; the tail is ~1e-20 delta) until :meth:`LatticeSlack.delta` is at most
    ``delta``. Raises ValueError when the slack leaves no delta."""
    nu, eps_c = slack.log_ratio, 0.0
    for _ in range(8):
        delta_c = (delta - slack.tail_term(eps_c + nu)) * math.exp(-nu) * (1.0 - 1e-12)
        if not delta_c > 0.0:
            break
        eps_c = continuous(delta_c)
        if not math.isfinite(eps_c):
            break
        if slack.delta(eps_c, delta_c) <= delta:
            return slack.epsilon(eps_c)
    raise ValueError(f"the lattice noise's slack leaves no delta at {delta!r} ({slack})")


def lattice_statement(accountant: Any, slack: LatticeSlack, delta: float) -> Any:
    """The :class:`~privlearn.accounting.PrivacyStatement` of a lattice-noise run at ``delta``:
    ``accountant`` (an :class:`~privlearn.accounting.RDPAccountant` holding the events of the
    rounded continuous Gaussian) converted by :func:`lattice_epsilon`; the statement reports
    ``delta`` (an upper bound of :meth:`LatticeSlack.delta`) and carries the slack
    (``lattice``)."""
    last: list[Any] = []

    def continuous(delta_c: float) -> float:
        last[:] = [accountant.statement(delta_c)]
        return float(last[0].epsilon)

    eps = lattice_epsilon(continuous, slack, delta)
    return replace(last[0], epsilon=eps, delta=float(delta), lattice=slack)
