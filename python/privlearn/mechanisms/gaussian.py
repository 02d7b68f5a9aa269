"""The Gaussian mechanism released on a power-of-two lattice with exact discrete Gaussian noise
(Canonne, Kamath & Steinke 2020), the sampler the linear models use
(:meth:`privlearn.random.Stream.discrete_gaussian`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import optimize, special

from privlearn._checks import as_positive
from privlearn.accounting.lattice import LatticeSlack, lattice_epsilon, lattice_slack
from privlearn.mechanisms._bits import (
    STREAM_GAUSSIAN,
    as_real_array,
    as_seed,
    make_stream,
    spend,
)
from privlearn.reference.random import discrete_gaussian_round_variance

__all__ = [
    "GaussianPrivacy",
    "analytic_gaussian_epsilon",
    "gaussian",
    "gaussian_privacy",
    "zcdp_epsilon",
]

_METHODS = ("lattice", "discrete")
#: Default lattice step: ``2**(floor(log2 sigma) - 18 - ceil(log2(size)/2))``, so the rounding
#: adds at most ``2**-18`` to ``mu = Delta_eff / sigma`` and the discrete Gaussian's lattice
#: slack (``2 N eta``) stays near ``1e-10`` in epsilon.
_DEFAULT_STEP_BITS = 18
_MAX_SIGMA_STEPS = 2.0**40  # sigma / step: exact sampler and int64 headroom
_MAX_VALUE_STEPS = 2.0**51  # |value| / step: lattice arithmetic stays exact in float64


@dataclass(frozen=True)
class GaussianPrivacy:
    """The privacy statement of :func:`gaussian` for given parameters.

    Attributes
    ----------
    lattice_step : float
        The power of two ``2**k``; inputs are rounded to multiples of it.
    effective_sensitivity : float
        ``Delta + sqrt(size) * lattice_step``: the L2 sensitivity after rounding.
    mu : float
        ``effective_sensitivity / sigma``, for the requested ``sigma``: callers that compose
        Gaussian releases by their GDP ``mu`` use it. The noise actually drawn is slightly
        larger (``noise_mu <= mu / sqrt(1 + 2**-16)`` on fine lattices), which pays for the
        lattice slack of the exact discrete Gaussian wherever ``epsilon`` exceeds about
        ``1e-4`` (:meth:`epsilon` is then at most the analytic Gaussian epsilon of ``mu``).
    rho : float
        ``mu**2 / 2``: a zero-concentrated DP parameter of the release (Rényi DP
        ``(alpha, alpha rho)`` for every order ``alpha > 1``); ``noise_mu**2 / 2`` is tighter.
    size : int
        The number of released entries ``N`` (noise coordinates).
    noise_variance : int
        The discrete Gaussian's variance parameter in lattice units, ``s**2``: the smallest
        integer the exact sampler accepts (a multiple of its power-of-two Laplace scale) that
        is at least ``(sigma / lattice_step)**2`` and at least
        ``floor((sigma / lattice_step)**2 (1 + 2**-16))``.
    noise_scale : float
        A lower bound of ``s = sqrt(noise_variance)``, the scale the slack is computed at
        (sound: the slack decreases with the scale).
    noise_mu : float
        ``effective_sensitivity / (lattice_step * noise_scale)``: the GDP parameter of the
        rounded continuous Gaussian of the noise's scale (rounded up), at most ``mu``.
    """

    lattice_step: float
    effective_sensitivity: float
    mu: float
    rho: float
    size: int = 1
    noise_variance: int = 1
    noise_scale: float = 1.0
    noise_mu: float = 0.0

    def slack(self, delta: float, epsilon: float = 1.0) -> LatticeSlack:
        """The distance between this release's exact discrete Gaussian noise and the rounded
        continuous Gaussian of the same scale, over its ``size`` coordinates
        (:func:`privlearn.accounting.lattice.lattice_slack`): the release is
        ``(eps + 2 N eta, exp(N eta) delta + (1 + exp(eps + N eta)) N tau)``-DP wherever the
        ``noise_mu``-GDP Gaussian mechanism is ``(eps, delta)``-DP. Composing several releases
        adds their slacks (:meth:`LatticeSlack.combine`)."""
        return lattice_slack(self.noise_scale, self.size, _check_delta(delta), epsilon)

    def epsilon(self, delta: float, method: str = "lattice") -> float:
        """``epsilon`` of an ``(epsilon, delta)`` guarantee (both methods draw the same exact
        discrete Gaussian, so both statements are sound for either).

        ``"lattice"``: the smaller of (a) the analytic Gaussian conversion of ``noise_mu``-GDP
        at the delta the lattice slack leaves, plus ``2 N eta``
        (:func:`privlearn.accounting.lattice.lattice_epsilon`), and (b) the zCDP conversion;
        ``"discrete"``: the zCDP conversion of ``noise_mu**2 / 2`` alone (Bun & Steinke 2016,
        Proposition 1.3)."""
        delta = _check_delta(delta)
        zcdp = zcdp_epsilon(self.noise_mu**2 / 2.0, delta)
        if method == "discrete":
            return zcdp
        if method != "lattice":
            raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
        mu = self.noise_mu
        try:
            slack = self.slack(delta, analytic_gaussian_epsilon(mu, delta))
            gdp = lattice_epsilon(lambda d: analytic_gaussian_epsilon(mu, d), slack, delta)
        except ValueError:  # the slack leaves no delta (a very coarse lattice): zCDP only
            return zcdp
        return min(gdp, zcdp)


def _check_delta(delta: Any) -> float:
    delta = as_positive(delta, "delta")
    if not delta < 1.0:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    return delta


def analytic_gaussian_epsilon(mu: float, delta: float) -> float:
    """Smallest ``epsilon >= 0`` with ``delta(epsilon) <= delta`` for a ``mu``-GDP mechanism.

    Balle & Wang (2018), "Improving the Gaussian mechanism for differential privacy", Theorem 8:
    ``delta(epsilon) = Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2)``
    (evaluated in log space), solved by bracketing root search.
    """
    mu = as_positive(mu, "mu")
    delta = _check_delta(delta)

    def excess(eps: float) -> float:
        first = special.ndtr(-eps / mu + mu / 2.0)
        second = math.exp(eps + special.log_ndtr(-eps / mu - mu / 2.0))
        return first - second - delta

    if excess(0.0) <= 0.0:
        return 0.0
    hi = 1.0
    while excess(hi) > 0.0:
        hi *= 2.0
    return float(optimize.brentq(excess, 0.0, hi, xtol=1e-14, rtol=1e-12))


def zcdp_epsilon(rho: float, delta: float) -> float:
    """``epsilon = rho + 2 sqrt(rho log(1/delta))``: ``rho``-zCDP implies ``(epsilon, delta)``-DP
    (Bun & Steinke 2016, "Concentrated differential privacy", Proposition 1.3)."""
    rho = as_positive(rho, "rho")
    delta = _check_delta(delta)
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def _default_step(sigma: float, size: int) -> float:
    exponent = math.frexp(sigma)[1] - 1  # floor(log2 sigma)
    extra = math.ceil(math.log2(size) / 2.0) if size > 1 else 0
    return math.ldexp(1.0, exponent - _DEFAULT_STEP_BITS - extra)


def _check_step(step: Any) -> float:
    step = as_positive(step, "lattice_step")
    if math.frexp(step)[0] != 0.5:
        raise ValueError(f"lattice_step must be a power of two (2**k), got {step}")
    return step


def _noise_variance(sigma: float, step: float) -> int:
    """The sampler's variance for ``s0 = sigma / step``: ``max(ceil(s0**2),
    floor(s0**2 (1 + 2**-16)))`` rounded up to a variance the exact sampler accepts (exact
    rational arithmetic: ``step`` is a power of two). The ``2**-16`` inflation of fine
    lattices pays for the discrete Gaussian's lattice slack; coarse lattices (``s0**2`` below
    ``2**16``) get no inflation beyond the rounding."""
    ratio = Fraction(sigma) / Fraction(step)
    square = ratio * ratio
    ceiling = -(-square.numerator // square.denominator)
    inflated = math.floor(square * (1 + Fraction(1, 1 << 16)))
    return discrete_gaussian_round_variance(max(ceiling, inflated, 1))


def gaussian_privacy(
    sensitivity: float, sigma: float, *, lattice_step: float | None = None, size: int = 1
) -> GaussianPrivacy:
    """The privacy statement of :func:`gaussian` (see its Notes).

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity ``Delta > 0`` of the released value (vector).
    sigma : float
        Noise standard deviation ``> 0``.
    lattice_step : float or None
        A power of two; ``None`` gives the default
        ``2**(floor(log2 sigma) - 18 - ceil(log2(size)/2))``.
    size : int, default=1
        Number of released numbers.
    """
    sensitivity = as_positive(sensitivity, "sensitivity")
    sigma = as_positive(sigma, "sigma")
    size = max(int(size), 1)
    step = _default_step(sigma, size) if lattice_step is None else _check_step(lattice_step)
    effective = sensitivity + math.sqrt(size) * step
    mu = effective / sigma
    rho = mu * mu / 2.0
    if not math.isfinite(rho):
        raise ValueError(f"sigma={sigma} is too small for sensitivity={sensitivity}: mu overflows")
    if sigma / step > _MAX_SIGMA_STEPS:
        raise ValueError(
            f"lattice_step={step} is too fine for sigma={sigma}: sigma / step must be <= 2**40"
        )
    variance = _noise_variance(sigma, step)
    scale = max(math.sqrt(variance) * (1.0 - 2.0**-50), sigma / step)  # <= sqrt(variance)
    return GaussianPrivacy(
        lattice_step=step,
        effective_sensitivity=effective,
        mu=mu,
        rho=rho,
        size=size,
        noise_variance=variance,
        noise_scale=scale,
        noise_mu=min(effective / (step * scale) * (1.0 + 2.0**-50), mu),
    )


def gaussian(
    value: Any,
    sensitivity: float,
    sigma: float,
    seed: int | None = None,
    *,
    method: str = "lattice",
    lattice_step: float | None = None,
    delta: float | None = None,
    ledger: Any = None,
) -> float | np.ndarray:
    """Release ``value`` with Gaussian noise on a power-of-two lattice.

    Parameters
    ----------
    value : float or array_like
        The query answer (finite); noise is independent per entry.
    sensitivity : float
        L2 sensitivity ``Delta > 0`` of ``value`` (of the whole array).
    sigma : float
        Noise standard deviation ``> 0`` (the discrete Gaussian's parameter ``sigma``).
    seed : int or None, default=None
        ``None``: key from the operating system; an int: reproducible.
    method : {"lattice", "discrete"}, default="lattice"
        Which privacy statement the ledger is charged with (the draws are the same exact
        discrete Gaussian for both): ``"lattice"``, the ``mu``-GDP statement with its lattice
        slack (or the zCDP one where smaller); ``"discrete"``, the zCDP statement.
    lattice_step : float or None, default=None
        The lattice ``2**k * Z``: a power of two. ``None``:
        ``2**(floor(log2 sigma) - 18 - ceil(log2(size)/2))`` (``size`` = number of entries),
        so rounding adds at most ``2**-18`` to ``mu`` (the default was ``2**-12`` before the
        exact sampler: the finer lattice keeps its slack negligible). Requires
        ``sigma <= 2**40 step`` and ``|value| <= 2**51 step``.
    delta : float, optional
        With a ledger: the ``delta`` of the ``(epsilon, delta)`` charge (required then).
    ledger : object, optional
        ``ledger.spend(epsilon, delta, label="gaussian")`` before any noise is drawn, with
        ``epsilon = GaussianPrivacy.epsilon(delta, method)`` (see Notes).

    Returns
    -------
    float or numpy.ndarray
        A float for a scalar ``value``, else an array of the same shape; every entry is a
        multiple of the lattice step.

    Notes
    -----
    Each entry is ``x_L + step * Z`` with ``x_L = step * rint(x / step)`` the input rounded to
    the lattice and ``Z ~ N_Z(0, s**2)`` the exact discrete Gaussian on the integers
    (Canonne, Kamath & Steinke 2020, Algorithms 1-3), drawn by the package's one sampler,
    :meth:`privlearn.random.Stream.discrete_gaussian` (the C++ core; its numpy twin
    :mod:`privlearn.reference.random` gives the same integers), from the stream
    ``STREAM_GAUSSIAN`` of ``seed``, draw ``i`` for entry ``i``. ``s**2`` is
    :attr:`GaussianPrivacy.noise_variance`: ``(sigma / step)**2`` rounded up to an integer
    the sampler accepts (a multiple of its power-of-two Laplace scale ``t``, about
    ``sigma / step``), so the noise standard deviation is at least ``sigma`` and exceeds it by
    a relative ``2**-18`` at most with the default step. Every Bernoulli trial of the sampler
    is decided on integers, so the noise has exactly this law: no floating point touches it,
    its tails are not cut, the output set does not depend on the input and the low-order-bit
    attack on floating-point noise (Mironov 2012) does not apply.

    Rounding moves each entry by at most ``step/2``, so neighbouring inputs differ on the
    lattice by at most ``Delta_eff = Delta + sqrt(size) * step`` in L2 norm (per entry
    ``|a_i - b_i| + step``): the sensitivity is inflated by the lattice step.

    *Privacy statement, zCDP (exact)*: Canonne, Kamath & Steinke (2020), Theorem 4 for one
    coordinate, with the Rényi divergences of independent coordinates added: adding
    ``N_Z(0, s**2)`` to integer vectors whose shift has L2 norm at most ``Delta_Z`` is
    ``(Delta_Z**2 / (2 s**2))``-zCDP; in lattice units ``Delta_Z = Delta_eff / step`` and
    ``s >= sigma / step``, so the release is ``rho``-zCDP with
    ``rho = Delta_eff**2 / (2 sigma**2)``, i.e. ``(alpha, alpha rho)``-RDP for all
    ``alpha > 1`` and ``(rho + 2 sqrt(rho log(1/delta)), delta)``-DP (Bun & Steinke 2016).

    *Privacy statement, GDP with lattice slack*: with ``Y ~ N(0, s**2)`` continuous, the
    rounded release ``x_L + step * rint(Y)`` equals ``step * rint(x_L / step + Y)``, a
    post-processing of the Gaussian mechanism of sensitivity ``Delta_eff``: ``mu``-GDP with
    ``mu = Delta_eff / sigma`` (Dong, Roth & Su 2022), ``(eps, delta)``-DP by the analytic
    Gaussian formula (Balle & Wang 2018, Theorem 8). The exact discrete Gaussian and the
    rounded Gaussian are within a computed per-coordinate log-ratio ``eta`` on a box
    ``|Z| <= K`` outside of which both have mass at most ``tau``
    (:mod:`privlearn.accounting.lattice`), so the release is
    ``(eps + 2 N eta, exp(N eta) delta + (1 + exp(eps + N eta)) N tau)``-DP with
    ``N = size`` (:meth:`GaussianPrivacy.slack`, :meth:`GaussianPrivacy.epsilon`). With the
    default step ``N eta`` is about ``1e-10`` and ``N tau`` about ``1e-20 delta``.

    If the inputs are already lattice points (e.g. integer counts with ``step <= 1``) rounding
    is the identity and ``Delta`` itself may be used; the ledger is still charged with
    ``Delta_eff``.
    """
    values = as_real_array(value, "value")
    sensitivity = as_positive(sensitivity, "sensitivity")
    sigma = as_positive(sigma, "sigma")
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    privacy = gaussian_privacy(sensitivity, sigma, lattice_step=lattice_step, size=values.size)
    step = privacy.lattice_step
    if values.size and float(np.abs(values).max()) / step > _MAX_VALUE_STEPS:
        raise ValueError(
            f"value is too large for lattice_step={step}: |value| / step must be <= 2**51"
        )
    if delta is not None:
        delta = _check_delta(delta)
    seed = as_seed(seed)
    if ledger is not None:
        if delta is None:
            raise ValueError("delta is required with a ledger (the charge is (epsilon, delta))")
        spend(ledger, privacy.epsilon(delta, method), delta, "gaussian")
    units = np.rint(values.ravel() / step)  # exact: step is a power of two
    stream = make_stream(seed, STREAM_GAUSSIAN)
    noise = stream.discrete_gaussian(0, values.size, privacy.noise_variance).astype(np.float64)
    # "+ 0.0" turns -0.0 into +0.0 (a signed zero would carry information beyond the lattice)
    out = ((units + noise) * step + 0.0).reshape(values.shape)
    return float(out) if out.ndim == 0 else out
