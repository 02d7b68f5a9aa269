"""Gaussian mechanisms released on a power-of-two lattice: rounded Gaussian noise ("lattice")
or the exact discrete Gaussian of Canonne, Kamath & Steinke (2020) ("discrete")."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import optimize, special

from privlearn._checks import as_positive
from privlearn.mechanisms._bits import (
    STREAM_GAUSSIAN,
    BitSource,
    as_real_array,
    as_seed,
    make_stream,
    sample_discrete_gaussian,
    spend,
)

__all__ = [
    "GaussianPrivacy",
    "analytic_gaussian_epsilon",
    "gaussian",
    "gaussian_privacy",
    "zcdp_epsilon",
]

_METHODS = ("lattice", "discrete")
#: Default lattice step: ``2**(floor(log2 sigma) - 12 - ceil(log2(size)/2))``, so the rounding
#: adds at most ``2**-12`` to ``mu = Delta_eff / sigma``.
_DEFAULT_STEP_BITS = 12
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
        ``effective_sensitivity / sigma``: the release is ``mu``-GDP (lattice method, up to the
        floating-point normal sampler) and ``mu**2 / 2``-zCDP (both methods).
    rho : float
        ``mu**2 / 2``: the zero-concentrated DP parameter (Rényi DP ``(alpha, alpha rho)`` for
        every order ``alpha > 1``).
    """

    lattice_step: float
    effective_sensitivity: float
    mu: float
    rho: float

    def epsilon(self, delta: float, method: str = "lattice") -> float:
        """``epsilon`` of an ``(epsilon, delta)`` guarantee: the analytic Gaussian conversion
        of ``mu``-GDP for ``"lattice"``, the zCDP conversion for ``"discrete"``."""
        if method == "lattice":
            return analytic_gaussian_epsilon(self.mu, delta)
        if method == "discrete":
            return zcdp_epsilon(self.rho, delta)
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")


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
        ``2**(floor(log2 sigma) - 12 - ceil(log2(size)/2))``.
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
    return GaussianPrivacy(lattice_step=step, effective_sensitivity=effective, mu=mu, rho=rho)


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
        ``"lattice"``: a floating-point Gaussian draw rounded to the lattice. ``"discrete"``:
        the exact discrete Gaussian (CKS 2020, Algorithm 3) on the lattice.
    lattice_step : float or None, default=None
        The lattice ``2**k * Z``: a power of two. ``None``:
        ``2**(floor(log2 sigma) - 12 - ceil(log2(size)/2))`` (``size`` = number of entries),
        so rounding adds at most ``2**-12`` to ``mu``. Requires ``sigma <= 2**40 step`` and
        ``|value| <= 2**51 step``.
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
    the lattice and ``Z`` an integer noise variable: ``rint(sigma * N / step)`` with ``N`` a
    Box-Muller normal (lattice), or ``Z ~ N_Z(0, (sigma/step)**2)`` (discrete). Lattice
    arithmetic is exact in double precision, so the output set does not depend on the input
    and the low-order-bit attack on floating-point noise (Mironov 2012) does not apply.

    Rounding moves each entry by at most ``step/2``, so neighbouring inputs differ on the
    lattice by at most ``Delta_eff = Delta + sqrt(size) * step`` in L2 norm (per entry
    ``|a_i - b_i| + step``): the sensitivity is inflated by the lattice step.

    *Privacy statement, lattice*: for an exact normal ``N`` the output equals
    ``step * rint((x_L + sigma N) / step)``, a post-processing of the Gaussian mechanism with
    sensitivity ``Delta_eff``: ``mu``-GDP with ``mu = Delta_eff / sigma`` (Dong, Roth & Su
    2022), hence ``(epsilon, delta)``-DP by the analytic Gaussian formula (Balle & Wang 2018,
    Theorem 8). The normal is a floating-point Box-Muller draw from 53-bit uniforms: its tail is
    cut at ``|N| <= sqrt(106 ln 2) ≈ 8.57``, so the guarantee holds up to events of probability
    below ``1e-16`` (for ``mu <= 1``) and the floating-point approximation of the normal.

    *Privacy statement, discrete*: exact. Canonne, Kamath & Steinke (2020), Section 2 (the
    discrete Gaussian satisfies concentrated DP; Rényi divergences of independent entries add):
    adding ``N_Z(0, sigma_Z**2)`` to integer vectors whose shift
    has L2 norm at most ``Delta_Z`` is ``(Delta_Z**2 / (2 sigma_Z**2))``-zCDP; in lattice units
    ``Delta_Z = Delta_eff / step``, ``sigma_Z = sigma / step``, so the release is ``rho``-zCDP
    with ``rho = Delta_eff**2 / (2 sigma**2)``, i.e. ``(alpha, alpha rho)``-RDP for all
    ``alpha > 1`` and ``(rho + 2 sqrt(rho log(1/delta)), delta)``-DP (Bun & Steinke 2016).

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
    if sigma / step > _MAX_SIGMA_STEPS:
        raise ValueError(
            f"lattice_step={step} is too fine for sigma={sigma}: sigma / step must be <= 2**40"
        )
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
    if method == "lattice":
        normal = make_stream(seed, STREAM_GAUSSIAN).normal(0, values.size)
        noise = np.rint(sigma * normal / step)
    else:
        sigma_units = Fraction(sigma / step)  # exact: division by a power of two
        source = BitSource(make_stream(seed, STREAM_GAUSSIAN))
        noise = sample_discrete_gaussian(source, values.size, sigma_units**2).astype(np.float64)
    # "+ 0.0" turns -0.0 into +0.0 (a signed zero would carry information beyond the lattice)
    out = ((units + noise) * step + 0.0).reshape(values.shape)
    return float(out) if out.ndim == 0 else out
