"""Privacy loss distributions (PLD): tight, pessimistic accounting of Gaussian mechanisms.

A mechanism's privacy is the pair of output laws ``(P, Q)`` on neighbouring data sets; its
*privacy loss* is ``L = log(dP/dQ)`` under ``P`` and its whole ``(epsilon, delta)`` curve is the
hockey-stick divergence ``delta(eps) = E_P[(1 - e^(eps - L))_+] + P(L = inf)``. Adaptive
composition adds independent losses (Dwork and Rothblum 2016; Sommer, Meiser, Mohammadi 2019),
so ``T`` steps convolve the one-step loss distribution ``T`` times (Koskela, Jalko, Honkela
2020, "Computing tight differential privacy guarantees using FFT"). This is the accountant
Opacus (PRV, Gopi, Lee, Wutschitz 2021) and Google's ``dp_accounting`` use; it is tighter than
Renyi DP, whose conversion to ``(epsilon, delta)`` loses up to ~1.5x in the noise.

What this module computes, and why every number is an upper bound:

1. **One step, both directions.** For the Poisson-subsampled Gaussian with rate ``q`` and
   noise multiplier ``sigma`` (sensitivity 1), the dominating pairs under add/remove-one are
   ``P = (1 - q) N(0, sigma^2) + q N(1, sigma^2)`` against ``Q = N(0, sigma^2)`` (remove) and
   the reverse (add) (Zhu, Dong, Wang 2022, "Optimal accounting of differential privacy via
   characteristic function", Theorem 11; Mironov, Talwar, Zhang 2019). Both are composed and
   the larger delta is reported. ``q = 1`` is the plain Gaussian: composed exactly in closed
   form (Balle and Wang 2018, Theorem 8), no discretisation.

   The grid step ``h`` (default 1e-4) is halved, from public numbers only, until one step's
   loss range spans :data:`MIN_STEP_POINTS` points (:func:`_refined_interval`: a grid
   coarser than one step's loss rounds every step up by a large fraction of itself), and
   doubled, rebuilding every step on the coarser grid, until the composition fits its FFT
   window (:data:`MAX_WINDOW`; :func:`_composed_direction`). The grids are nested powers of
   two of ``h``, so each coarser one dominates the finer one.
2. **Connect the dots** (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022, "Connect the
   dots: tighter discrete approximations of privacy loss distributions", Theorem 4.4). The
   one-step curve ``delta`` is evaluated exactly on the grid ``eps_i = i h``; as a function
   of ``t = e^eps`` it is convex, so the piecewise-linear interpolation through the grid
   values (and through ``(0, 1)`` below the grid, flat above it) lies above it. That
   interpolant is itself the hockey-stick curve of a discrete loss distribution on the grid
   (masses ``omega_i = t_i (s_(i+1) - s_i)`` from the slopes ``s`` of the interpolant, the
   top value as mass at infinity), so that discrete pair *dominates* the true one (its
   curve is pointwise larger) and, by Blackwell's theorem, so does every composition of such
   pairs. The masses are computed from interval probabilities in closed form (no second
   differences of ``delta``), every term non-negative.
3. **FFT composition with a rigorous window.** The ``T``-fold (or heterogeneous) sum is the
   inverse real FFT of the product of the one-step transforms raised to their counts, on a
   window ``[s_lo, s_hi]`` chosen by Chernoff bounds ``P(S >= s) <= e^(-lambda s) M(lambda)^T``
   so that at most :data:`TAIL_MASS` lies above or below it. Mass outside the window is
   dropped or wraps onto other losses, so both Chernoff bounds are added to the mass at
   infinity. The float64 round-off of the FFT is amplified by the power ``T`` (a relative
   ~1e-16 T); it is estimated from the result (its most negative value, or ``log2(n)`` ulps
   of the largest mass) and charged, times the window's width, to the mass at infinity, so
   that it cannot make the composed PLD optimistic at a delta of its order: there the PLD
   comes out loose, and :mod:`privlearn.accounting.tightest` states Renyi DP's bound.
4. ``epsilon(delta)`` is solved exactly on the composed distribution, in log space (``delta``
   is ``A - e^(eps - l) B`` between grid points; no ``e^loss``, which overflows above 709),
   checked against the directly summed ``delta`` and nudged up where round-off put it below,
   and is the larger of the two directions.

Speed: one epsilon evaluation at DP-SGD's scales (``q ~ 0.002``, ``T ~ 1e4``, ``h = 1e-4``)
costs a few hundredths of a second (two FFTs per direction), so :func:`calibrate_sigma_pld`
(about ten evaluations, bracketed by the RDP calibration, which is never smaller) sits inside
every fit. The results agree with ``dp_accounting``'s PLD accountant (connect-the-dots,
pessimistic) to well within 1% (``tests/test_pld.py``).

Not covered (the estimators keep Renyi DP there, and say so): sampling without replacement
(fixed-size batches, replace-one neighbours; no dominating pair in closed form), Laplace and
pure-DP events, noise multipliers below :data:`PLD_MIN_SIGMA`, and compositions that do not
fit the FFT window even on the grid :data:`MAX_INTERVAL` (:class:`PLDRangeError`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from scipy import fft as sfft
from scipy import signal, special

from .._checks import as_index, as_positive
from .accountant import PrivacyStatement, _Accountant, _unsupported
from .events import (
    Composed,
    Event,
    GaussianEvent,
    PoissonSampled,
    SelfComposed,
)
from .rdp import _as_delta

__all__ = [
    "CALIBRATION_INTERVAL",
    "MAX_STEPS",
    "PLDRangeError",
    "DEFAULT_INTERVAL",
    "PLD_MIN_SIGMA",
    "TAIL_MASS",
    "DiscretePLD",
    "PLDAccountant",
    "calibrate_sigma_pld",
    "compose_plds",
    "epsilon_for_sigma_pld",
    "epsilon_of_parts",
    "gaussian_parts",
    "gaussian_pld",
    "pure_pld",
]

#: Default grid step ``h`` of the privacy loss (dp_accounting's default is also 1e-4).
DEFAULT_INTERVAL = 1e-4
#: Coarsest grid step used while searching for sigma (:func:`calibrate_sigma_pld`).
CALIBRATION_INTERVAL = 4e-4
#: The calibration searches on the statement's grid, doubled (up to CALIBRATION_INTERVAL) until
#: the one-step grid (at the noise RDP calibrates, the largest searched) has at most this many
#: points.
FINE_SEARCH_GRID = 30_000
#: Smallest noise multiplier the PLD accountant takes (below it each step's losses reach the
#: hundreds and the grids millions of points; such runs have epsilons in the tens or more,
#: where RDP is as good: :mod:`privlearn.accounting.tightest` uses RDP there).
PLD_MIN_SIGMA = 0.2
#: Most steps the PLD accountant composes (its FFT powers' round-off grows with the count;
#: longer runs are accounted by Renyi DP).
MAX_STEPS = 1 << 40
#: Probability mass left outside the grids and windows (moved up, or added to infinity).
TAIL_MASS = 1e-20
#: Largest one-step grid; a finer one is coarsened (a coarser grid is still pessimistic).
MAX_GRID = 1 << 21
#: Largest composition window (FFT length) of a statement; a composition that needs more is
#: rebuilt on a coarser grid (still pessimistic: :func:`_composed_direction`).
MAX_WINDOW = 1 << 20
#: Largest composition window while calibrating (bounds each probe's time).
CALIBRATION_WINDOW = 1 << 19
#: Coarsest grid step the PLD accountant uses (a composition whose window would need a coarser
#: one is out of its range: :class:`PLDRangeError`, and the estimators use RDP).
MAX_INTERVAL = 0.05
#: Finest grid step, as a fraction of the requested one (the grid is refined by powers of two
#: until one step's losses span :data:`MIN_STEP_POINTS` grid points).
MIN_REFINE = 1.0 / 1024
#: Points the one-step loss range should span (a coarser grid cannot resolve a small step:
#: each step's loss would be rounded up by a large fraction of itself).
MIN_STEP_POINTS = 512
#: FFT round-off floor in ulps of the largest composed mass, times ``log2(n)``.
ROUNDOFF_ULPS = 8.0
_ULP = 2.0**-53


class PLDRangeError(ValueError):
    """A composition the PLD accountant cannot run within its limits (the FFT window, the
    grid): the tightest accountant (:mod:`privlearn.accounting.tightest`) falls back to Renyi
    DP and says so. ``window`` is the FFT length it would need (0 if not known)."""

    def __init__(self, message: str, window: int = 0) -> None:
        super().__init__(message)
        self.window = int(window)


@dataclass(frozen=True)
class DiscretePLD:
    """A discrete privacy loss distribution: ``pmf[i]`` at loss ``(offset + i) * interval``
    plus ``inf_mass`` at ``+inf``. It dominates the pair it was built from (module docstring).
    """

    interval: float
    offset: int
    pmf: np.ndarray
    inf_mass: float

    @property
    def losses(self) -> np.ndarray:
        """The grid of losses ``(offset + i) * interval``."""
        return (self.offset + np.arange(self.pmf.size)) * self.interval

    def delta(self, epsilon: float) -> float:
        """The hockey-stick divergence ``sum_(l > eps) pmf(l) (1 - e^(eps - l)) + inf_mass``."""
        # only the losses above epsilon (from one grid point below it, to be safe)
        start = min(self.pmf.size, max(0, math.floor(epsilon / self.interval) - self.offset - 1))
        lo = (self.offset + np.arange(start, self.pmf.size)) * self.interval
        above = lo > epsilon
        terms = self.pmf[start:][above] * -np.expm1(epsilon - lo[above])
        return float(min(1.0, np.sum(terms[::-1]) + self.inf_mass))

    def epsilon(self, delta: float) -> float:
        """The smallest ``eps >= 0`` with :meth:`delta` ``<= delta`` (``inf`` when the mass at
        infinity alone exceeds ``delta``).

        Computed in log space end to end (no ``e^loss``, which overflows above 709): with
        ``A_k = sum_(j > k) pmf_j + inf_mass`` and ``B_k = sum_(j > k) pmf_j e^(l_k - l_j)``
        (the recursion ``B_k = e^-h (pmf_(k+1) + B_(k+1))``, every factor below one), the curve
        is ``A_k - B_k`` at the grid point ``l_k`` and ``A_(k-1) - e^(eps - l_(k-1)) B_(k-1)``
        between ``l_(k-1)`` and ``l_k``. The result is checked against :meth:`delta` (summed
        directly) and nudged up along the curve (then up the grid) where round-off put it too
        low, so the reported epsilon is never below what this distribution supports.
        """
        if self.inf_mass >= delta:
            return math.inf
        lo = self.losses
        p = self.pmf
        n = p.size
        # suffix sums over j > k (reversed cumulative sums: small tail terms added first)
        a = np.concatenate([np.cumsum(p[::-1])[::-1][1:], [0.0]]) + self.inf_mass
        r = math.exp(-self.interval)
        c = signal.lfilter([r], [1.0, -r], p[::-1])  # c_i = B_(n-2-i)
        b = np.concatenate([c[: n - 1][::-1], [0.0]])
        d_grid = a - b  # delta at each grid point
        ok = np.nonzero(d_grid <= delta)[0]
        k = int(ok[0]) if ok.size else n - 1
        if k == 0:
            eps = float(lo[0])
        else:  # on [l_(k-1), l_k] the set {l > eps} is {j >= k}: delta = A - e^(eps - l) B
            aa, bb = a[k - 1], b[k - 1]
            eps = lo[k - 1] + math.log((aa - delta) / bb) if bb > 0.0 and aa > delta else lo[k]
            eps = float(min(max(eps, lo[k - 1]), lo[k]))
        eps = max(0.0, eps)
        slope = float(a[k - 1] - delta) if k > 0 else 0.0  # |d delta / d eps| at the solution
        for _ in range(4):  # round-off: nudge up along the curve's slope
            excess = self.delta(eps) - delta
            if excess <= 0.0:
                return eps
            step = 2.0 * excess / slope if slope > 0.0 else math.inf
            eps = eps + min(step, self.interval) + 4.0 * math.ulp(max(1.0, eps))
        step_j = 1
        while self.delta(eps) > delta:  # up the grid (the top point is always within delta)
            j = min(n - 1, int(np.searchsorted(lo, eps, side="right")) + step_j - 1)
            eps, step_j = max(eps, float(lo[j])), 2 * step_j
        return eps


def _interval_mass(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``Phi(b) - Phi(a)`` for ``a <= b`` (standard normal), accurate in both tails."""
    pos = a > 0.0
    out = np.empty_like(a)
    out[pos] = special.ndtr(-a[pos]) - special.ndtr(-b[pos])
    out[~pos] = special.ndtr(b[~pos]) - special.ndtr(a[~pos])
    return np.maximum(out, 0.0)


def _gaussian_delta_remove(eps: float, q: float, mu: float) -> float:
    """``delta(eps)`` of ``P = (1-q) N(0,1) + q N(mu,1)`` against ``Q = N(0,1)``."""
    g = math.expm1(eps) + q  # e^eps - (1 - q)
    if g <= 0.0:
        return -math.expm1(eps)
    z = (math.log(g / q) + mu * mu / 2.0) / mu
    la = float(special.log_ndtr(-(z - mu)))
    r = mu * z - mu * mu / 2.0 + float(special.log_ndtr(-z)) - la
    return q * math.exp(la) * -math.expm1(r)


def _gaussian_delta_add(eps: float, q: float, mu: float) -> float:
    """``delta(eps)`` of ``P = N(0,1)`` against ``Q = (1-q) N(0,1) + q N(mu,1)``."""
    g = math.expm1(-eps) + q  # e^-eps - (1 - q)
    if g <= 0.0:
        return 0.0
    z = (math.log(g / q) + mu * mu / 2.0) / mu
    lb = float(special.log_ndtr(z - mu))
    r = mu * z - mu * mu / 2.0 + float(special.log_ndtr(z)) - lb
    return math.exp(eps) * q * math.exp(lb) * math.expm1(r)


def _search_up(f: Any, start: float, target: float) -> float:
    """An ``x >= start`` with ``f(x) <= target`` (``f`` decreasing), within 1/4096 of the
    doubling step above the smallest such ``x`` (found by doubling, then bisection)."""
    x = max(start, 1e-3)
    for _ in range(200):
        if f(x) <= target:
            break
        x *= 2.0
    else:
        raise ValueError("the privacy loss has no finite range at this tail mass")
    lo = x / 2.0 if x > start else 0.0  # f(lo) > target (or lo is below the start)
    for _ in range(12):  # narrow [lo, x] to ~1/4096 of its width (a shorter grid)
        mid = 0.5 * (lo + x)
        if f(mid) <= target:
            x = mid
        else:
            lo = mid
    return x


def _poisson_gaussian_pld(q: float, sigma: float, h: float, direction: str) -> DiscretePLD:
    """Connect-the-dots discretisation of one Poisson-subsampled Gaussian step."""
    mu = 1.0 / sigma
    if direction == "remove":
        l_min = math.log1p(-q)
        i_lo = math.floor(l_min / h) - 1
        top = _search_up(lambda e: _gaussian_delta_remove(e, q, mu), 1.0, TAIL_MASS)
        i_hi = math.ceil(top / h)
    else:
        i_hi = math.ceil(-math.log1p(-q) / h) + 1
        # lower end: P(L <= eps_0) <= TAIL_MASS (that mass is lumped at eps_0: sound anyway)
        z_tail = -float(special.ndtri(TAIL_MASS))
        lo_loss = -math.log1p(q * math.expm1(mu * z_tail - mu * mu / 2.0))
        i_lo = math.floor(lo_loss / h) - 1
    if i_hi - i_lo + 1 > MAX_GRID:  # coarsen (still dominating; nested grids)
        factor = 2 ** math.ceil(math.log2((i_hi - i_lo + 1) / MAX_GRID))
        return _poisson_gaussian_pld(q, sigma, h * factor, direction)
    idx = np.arange(i_lo, i_hi + 1)
    eps = idx * h
    t = np.exp(eps)
    # z-boundaries of {L <= eps_i} and the interval masses of I_j = (eps_(j-1), eps_j]
    if direction == "remove":
        g = np.expm1(eps) + q
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(g > 0.0, (np.log(np.where(g > 0, g, 1.0) / q) + mu * mu / 2) / mu, -np.inf)
        za, zb = z[:-1], z[1:]  # I_j <-> z in (za, zb]
        dphi = _interval_mass(za, zb)
        dphi_mu = _interval_mass(za - mu, zb - mu)
        # (t - (1 - q)) / q at the interval ends: e^(mu z - mu^2/2) where z is finite, and the
        # (negative) exact value below the support's lower end
        ea, eb = g[:-1] / q, g[1:] / q
        a_mass = q * np.maximum(dphi_mu - ea * dphi, 0.0)  # P(I) - t_(j-1) Q(I)
        b_mass = q * np.maximum(eb * dphi - dphi_mu, 0.0)  # t_j Q(I) - P(I)
        q_above_top = float(special.ndtr(-z[-1]))
        p_below_bottom = 0.0
        inf_mass = _gaussian_delta_remove(float(eps[-1]), q, mu)
    else:
        g = np.expm1(-eps) + q
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(g > 0.0, (np.log(np.where(g > 0, g, 1.0) / q) + mu * mu / 2) / mu, -np.inf)
        # L decreasing in z: I_j <-> z in [z_j, z_(j-1))
        za, zb = z[1:], z[:-1]
        dphi = _interval_mass(za, zb)
        dphi_mu = _interval_mass(za - mu, zb - mu)
        # (e^-eps - (1 - q)) / q at eps_(j-1) and eps_j (negative above the support's top)
        e_prev, e_next = g[:-1] / q, g[1:] / q
        a_mass = t[:-1] * q * np.maximum(e_prev * dphi - dphi_mu, 0.0)
        b_mass = t[1:] * q * np.maximum(dphi_mu - e_next * dphi, 0.0)
        q_above_top = 0.0
        p_below_bottom = float(special.ndtr(-z[0]))
        inf_mass = 0.0
    dt = t[:-1] * np.expm1(h)  # t_j - t_(j-1), j = 1..k
    pmf = np.empty(idx.size)
    pmf[:-1] = t[:-1] * b_mass / dt
    pmf[-1] = t[-1] * q_above_top
    pmf[1:] += t[1:] * a_mass / dt
    pmf[0] += p_below_bottom
    pmf = np.maximum(pmf, 0.0)
    return DiscretePLD(h, int(i_lo), pmf, float(inf_mass))


def gaussian_pld(
    noise_multiplier: float,
    q: float = 1.0,
    *,
    interval: float = DEFAULT_INTERVAL,
) -> tuple[DiscretePLD, DiscretePLD]:
    """The pessimistic discrete PLDs (remove, add) of one Poisson-subsampled Gaussian step
    (sensitivity 1, add/remove-one neighbours).

    Parameters
    ----------
    noise_multiplier : float
        ``sigma > 0``.
    q : float, default 1
        Sampling rate in ``(0, 1)`` (``q = 1``: the plain Gaussian, whose two directions are
        the same distribution).
    interval : float, default 1e-4
        Grid step ``h`` of the loss.

    Returns
    -------
    (DiscretePLD, DiscretePLD)
        The remove and add directions.
    """
    sigma = as_positive(noise_multiplier, "noise_multiplier")
    q = _as_rate(q)
    h = as_positive(interval, "interval")
    if q >= 1.0:
        # the plain Gaussian: L ~ N(mu^2/2, mu^2) under P; same in both directions
        mu = 1.0 / sigma
        i_lo = math.floor((mu * mu / 2 - 40 * mu - 1) / h)
        i_hi = math.ceil((mu * mu / 2 + 40 * mu + 1) / h)
        if i_hi - i_lo + 1 > MAX_GRID:
            h *= 2 ** math.ceil(math.log2((i_hi - i_lo + 1) / MAX_GRID))
            i_lo = math.floor((mu * mu / 2 - 40 * mu - 1) / h)
            i_hi = math.ceil((mu * mu / 2 + 40 * mu + 1) / h)
        eps = np.arange(i_lo, i_hi + 1) * h
        d = _plain_delta(eps, mu)
        pld = _from_curve(eps, d, h)
        return pld, pld
    return (
        _poisson_gaussian_pld(q, sigma, h, "remove"),
        _poisson_gaussian_pld(q, sigma, h, "add"),
    )


def _from_curve(eps: np.ndarray, d: np.ndarray, h: float) -> DiscretePLD:
    """Connect-the-dots masses from an exact delta curve (used for the plain Gaussian, whose
    grid is coarse enough for second differences)."""
    t = np.exp(eps)
    slopes = np.empty(eps.size + 1)
    slopes[0] = (d[0] - 1.0) / t[0]
    slopes[1:-1] = np.diff(d) / (t[:-1] * np.expm1(h))
    slopes[-1] = 0.0
    pmf = np.maximum(t * np.diff(slopes), 0.0)
    return DiscretePLD(h, int(round(eps[0] / h)), pmf, float(d[-1]))


def _plain_delta(eps: Any, mu: float) -> Any:
    """Exact ``delta(eps)`` of the Gaussian mechanism with ``mu = sensitivity / sigma`` (Balle
    and Wang 2018, Theorem 8): ``Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)``, in log
    space (vectorised)."""
    e = np.asarray(eps, dtype=float)
    la = special.log_ndtr(-e / mu + mu / 2.0)
    lb = special.log_ndtr(-e / mu - mu / 2.0)
    r = np.minimum(e + lb - la, 0.0)
    out = np.maximum(np.exp(la) * -np.expm1(r), 0.0)
    return out if out.ndim else float(out)


def _plain_epsilon(mu: float, delta: float) -> float:
    """The exact smallest ``eps >= 0`` with ``delta(eps) <= delta`` for the Gaussian mechanism
    with ``mu = sensitivity / sigma`` (bisection to 1e-12; rounded up)."""
    if _plain_delta(0.0, mu) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while _plain_delta(hi, mu) > delta:
        lo, hi = hi, 2.0 * hi
        if hi > 1e6:
            return math.inf
    for _ in range(200):
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
        mid = 0.5 * (lo + hi)
        if _plain_delta(mid, mu) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def _as_rate(q: Any) -> float:
    q = as_positive(q, "q")
    if q > 1.0:
        raise ValueError(f"q must lie in (0, 1], got {q!r}")
    return float(q)


def _log_mgfs(pld: DiscretePLD, lams: np.ndarray) -> np.ndarray:
    """``log sum pmf(l) e^(lam l)`` over the finite part, for each ``lam`` (-inf when it is
    empty)."""
    keep = pld.pmf > 0.0
    if not keep.any():
        return np.full(lams.shape, -np.inf)
    p = pld.pmf[keep]
    losses = pld.losses[keep]
    top = np.where(lams > 0.0, lams * losses[-1], lams * losses[0])  # the largest exponent
    a = np.exp(lams[:, None] * losses[None, :] - top[:, None])
    return np.log(a @ p) + top


#: The ``lam > 0`` tried in the Chernoff bounds of the window (any value gives a valid bound).
_LAMBDAS = np.array([0.3, 1.0, 3.0, 10.0, 30.0, 100.0])


def compose_plds(
    parts: Sequence[tuple[DiscretePLD, int]], *, max_window: int | None = None
) -> DiscretePLD:
    """The composition of ``count`` copies of each discrete PLD (all on the same interval), by
    FFT on a Chernoff window (module docstring, item 3).

    Parameters
    ----------
    parts : sequence of (DiscretePLD, int)
    max_window : int, optional
        Largest FFT length (default :data:`MAX_WINDOW`); a composition that needs more raises
        :class:`PLDRangeError` (:func:`_composed_direction` then rebuilds the steps on a
        coarser grid).

    Returns
    -------
    DiscretePLD
    """
    max_window = MAX_WINDOW if max_window is None else max_window
    parts = [(p, int(c)) for p, c in parts if int(c) > 0]
    if not parts:
        return DiscretePLD(DEFAULT_INTERVAL, 0, np.ones(1), 0.0)
    h = max(p.interval for p, _ in parts)
    parts = [(_regrid(p, h), c) for p, c in parts]
    log_keep = sum(c * math.log1p(-p.inf_mass) for p, c in parts if p.inf_mass < 1.0)
    if any(p.inf_mass >= 1.0 for p, _ in parts):
        return DiscretePLD(h, 0, np.zeros(1), 1.0)
    inf_mass = -math.expm1(log_keep)
    base = sum(c * p.offset for p, c in parts)
    lo_det = base  # the sum's smallest possible index
    hi_det = base + sum(c * (p.pmf.size - 1) for p, c in parts)
    log_tail = math.log(TAIL_MASS)
    # Chernoff window on the index scale (losses / h)
    pos = _LAMBDAS
    lams = np.concatenate([pos, -pos])
    lm = sum(c * _log_mgfs(p, lams) for p, c in parts)
    with np.errstate(over="ignore", invalid="ignore"):
        bounds = (lm - log_tail) / lams / h  # P(S >= b) <= tail (lam > 0); P(S <= b) (lam < 0)
    k = pos.size
    up, down = bounds[:k], bounds[k:]
    up, down = up[np.isfinite(up)], down[np.isfinite(down)]  # an overflowed bound is no bound
    s_hi = min(float(hi_det), float(np.min(up))) if up.size else float(hi_det)
    s_lo = max(float(lo_det), float(np.max(down))) if down.size else float(lo_det)
    k_hi = min(hi_det, math.ceil(s_hi))
    k_lo = max(lo_det, math.floor(s_lo))
    # Mass outside [k_lo, k_hi] (each side <= TAIL_MASS by Chernoff) is either dropped or
    # wrapped onto other losses by the circular convolution: both sides are counted at
    # infinity, so the result stays pessimistic whatever the wrap did.
    upper_tail = (TAIL_MASS if k_hi < hi_det else 0.0) + (TAIL_MASS if k_lo > lo_det else 0.0)
    width = k_hi - k_lo + 1
    longest = max(p.pmf.size for p, _ in parts)
    n = sfft.next_fast_len(max(width, longest), real=True)
    if n > max_window:
        raise PLDRangeError(
            f"the composed privacy loss needs an FFT window of {n} points (more than "
            f"{max_window}) on the grid {h:g}",
            window=n,
        )
    spec = np.ones(n // 2 + 1, dtype=complex)
    for p, c in parts:
        spec *= sfft.rfft(p.pmf, n) ** c
    r = sfft.irfft(spec, n)
    shift = (k_lo - base) % n
    r = np.roll(r, -shift)[:width]
    # FFT round-off (amplified by the powers): the most negative value is a sample of its
    # size; every point of the window is charged that much (or ~ log2(n) ulps of the largest
    # mass, whichever is larger) at infinity, so the error cannot make the PLD optimistic
    # where it matters (a delta of the round-off's order): there the PLD comes out loose and
    # the tightest accountant keeps RDP's bound.
    noise = max(-float(r.min()), ROUNDOFF_ULPS * math.log2(n) * _ULP * float(r.max()))
    roundoff = width * noise
    r = np.maximum(r, 0.0)
    return DiscretePLD(h, int(k_lo), r, float(min(1.0, inf_mass + upper_tail + roundoff)))


def _regrid(pld: DiscretePLD, h: float) -> DiscretePLD:
    """The same PLD on a coarser grid ``h`` (a multiple of its own): masses rounded up."""
    if pld.interval == h:
        return pld
    f = round(h / pld.interval)
    if not math.isclose(f * pld.interval, h, rel_tol=1e-12):
        raise ValueError("PLDs on incompatible grids")
    idx = pld.offset + np.arange(pld.pmf.size)
    up = -((-idx) // f)  # ceil(idx / f): rounding the loss up is pessimistic
    lo = int(up.min())
    out = np.zeros(int(up.max()) - lo + 1)
    np.add.at(out, up - lo, pld.pmf)
    return DiscretePLD(h, lo, out, pld.inf_mass)


def _check_floor(event: Event, sigma: float) -> None:
    if sigma < PLD_MIN_SIGMA:
        raise _unsupported(
            event,
            "pld",
            f"noise multiplier {sigma:.6g} is below the PLD accountant's floor {PLD_MIN_SIGMA} "
            "(use RDPAccountant)",
        )


def _unpack(event: Event) -> list[tuple[float, float, int]]:
    """``(q, sigma, count)`` triples of an event made of (subsampled) Gaussians."""
    if isinstance(event, GaussianEvent):
        _check_floor(event, event.noise_multiplier)
        return [(1.0, event.noise_multiplier, 1)]
    if isinstance(event, PoissonSampled):
        inner = event.event
        if isinstance(inner, GaussianEvent):
            _check_floor(event, inner.noise_multiplier)
            return [(event.q, inner.noise_multiplier, 1)]
        raise _unsupported(event, "pld", "only a Gaussian inside PoissonSampled")
    if isinstance(event, SelfComposed):
        return [(q, s, c * event.count) for q, s, c in _unpack(event.event)]
    if isinstance(event, Composed):
        return [t for e in event.events for t in _unpack(e)]
    raise _unsupported(
        event, "pld", "the PLD accountant handles Gaussian and Poisson-subsampled Gaussian events"
    )


class PLDAccountant(_Accountant):
    """Privacy-loss-distribution accountant for Gaussian and Poisson-subsampled Gaussian
    events under add/remove-one neighbours (module docstring). ``statement(delta)`` also
    reports the Renyi-DP epsilon of the same events (``rdp_epsilon``).

    Parameters
    ----------
    interval : float, default 1e-4
        Grid step of the privacy loss (smaller: tighter and slower).
    neighboring : {"add_remove"} or None
        Only add/remove-one is supported (the dominating pairs above).

    Examples
    --------
    >>> from privlearn.accounting import PLDAccountant, PoissonSampled, GaussianEvent
    >>> acc = PLDAccountant().compose(PoissonSampled(0.01, GaussianEvent(4.0)), count=10_000)
    >>> round(acc.get_epsilon(1e-5), 2)
    0.95
    """

    _name = "pld"

    def __init__(self, interval: float = DEFAULT_INTERVAL, neighboring: str | None = None):
        if neighboring == "replace_one":
            raise _unsupported(
                GaussianEvent(1.0), "pld", "replace-one neighbours: use RDPAccountant"
            )
        super().__init__(neighboring)
        self._interval = as_positive(interval, "interval")

    def _cost(self, event: Event) -> list[tuple[float, float, int]]:
        return _unpack(event)

    def compose(self, event: Event, count: int = 1) -> PLDAccountant:
        """Add ``count`` adaptive repetitions of ``event``; returns ``self``."""
        event, count, relation = self._check(event, count)
        if relation == "replace_one":
            raise _unsupported(event, "pld", "replace-one neighbours: use RDPAccountant")
        self._cost(event)
        self._record(event, count, relation)
        return self

    def _composed(self) -> tuple[DiscretePLD, DiscretePLD]:
        triples: dict[tuple[float, float], int] = {}
        for event, count in self._events:
            for q, s, c in _unpack(event):
                triples[(q, s)] = triples.get((q, s), 0) + c * count
        return _composed_plds(tuple(sorted(triples.items())), self._interval)

    def _plain_mu(self) -> float | None:
        """``mu = sqrt(sum count / sigma^2)`` when every event is a plain Gaussian (their
        composition is one Gaussian, accounted exactly), else None."""
        total = 0.0
        for event, count in self._events:
            for q, s, c in _unpack(event):
                if q < 1.0:
                    return None
                total += c * count / (s * s)
        return math.sqrt(total)

    def get_epsilon(self, delta: float) -> float:
        """Epsilon for the composed events at ``delta`` (the larger of the two directions)."""
        delta = _as_delta(delta)
        if not self._events:
            return 0.0
        mu = self._plain_mu()
        if mu is not None:
            return _plain_epsilon(mu, delta)
        return max(p.epsilon(delta) for p in self._composed())

    def get_delta(self, epsilon: float) -> float:
        """Delta for the composed events at ``epsilon``."""
        if not self._events:
            return 0.0
        mu = self._plain_mu()
        if mu is not None:
            return float(_plain_delta(float(epsilon), mu))
        return max(p.delta(float(epsilon)) for p in self._composed())

    def rdp_epsilon(self, delta: float) -> float:
        """Epsilon of the same events by the Renyi-DP accountant (shown beside the PLD's)."""
        from .accountant import RDPAccountant

        acc = RDPAccountant(neighboring=self._neighboring)
        for event, count in self._events:
            acc.compose(event, count)
        return acc.get_epsilon(delta)

    def statement(self, delta: float) -> PrivacyStatement:
        """The :class:`PrivacyStatement` at ``delta`` (with ``rdp_epsilon`` beside)."""
        return PrivacyStatement(
            epsilon=self.get_epsilon(delta),
            delta=float(delta),
            accountant=self._name,
            events=self.events,
            neighboring=self._neighboring,
            rdp_epsilon=self.rdp_epsilon(delta),
        )

    def __repr__(self) -> str:
        return f"PLDAccountant(interval={self._interval:g}, {len(self._events)} events)"


def pure_pld(epsilon: float, interval: float = DEFAULT_INTERVAL) -> DiscretePLD:
    """The PLD of randomized response with parameter ``epsilon``, which dominates every pure
    ``epsilon``-DP mechanism (Kairouz, Oh, Viswanath 2015, Theorem 2.4): mass
    ``e^eps / (1 + e^eps)`` at loss ``eps`` and ``1 / (1 + e^eps)`` at ``-eps``, both losses
    rounded up to the grid (pessimistic). Both directions are the same."""
    eps = float(epsilon)
    h = float(interval)
    i_hi = math.ceil(eps / h - 1e-12)
    i_lo = math.ceil(-eps / h - 1e-12)
    pmf = np.zeros(i_hi - i_lo + 1)
    pmf[-1] += 1.0 / (1.0 + math.exp(-eps))
    pmf[0] += 1.0 / (1.0 + math.exp(eps))
    return DiscretePLD(h, i_lo, pmf, 0.0)


def _refined_interval(triples: tuple[tuple[tuple[float, float], int], ...], h: float) -> float:
    """``h``, halved (at most ``1 / MIN_REFINE`` times) until the one-step loss range of every
    Poisson-subsampled Gaussian in ``triples`` spans :data:`MIN_STEP_POINTS` grid points: a grid
    coarser than one step's loss rounds every step up by a large fraction of itself (at
    ``q = 0.001, sigma = 100`` the range is ~1e-3: on the 1e-4 grid the composed epsilon came
    out 2.8x RDP's). A function of public numbers only; the finer grid is nested in ``h``'s."""
    finest = h * MIN_REFINE
    out = h
    for (q, s), _ in triples:
        if q >= 1.0:
            continue
        top = _search_up(partial(_gaussian_delta_remove, q=q, mu=1.0 / s), 1e-6, TAIL_MASS)
        span = top - math.log1p(-q)
        while span / out < MIN_STEP_POINTS and out > finest * (1 + 1e-9):
            out /= 2.0
    return out


@functools.lru_cache(maxsize=8)
def _composed_direction(
    triples: tuple[tuple[tuple[float, float], int], ...],
    interval: float,
    pures: tuple[tuple[float, int], ...],
    direction: str,
    max_window: int | None = None,
) -> DiscretePLD:
    """The composed PLD, in one direction (``"remove"`` or ``"add"``), of ``count`` steps of
    each ``(q, sigma)`` and of each pure ``epsilon`` spend (cached: a function of public
    numbers; the array is read-only).

    The grid is ``interval``, refined where the steps' losses are small
    (:func:`_refined_interval`) and coarsened by powers of two where the composition's window
    would exceed ``max_window`` (every step is then rebuilt, connect-the-dots, on the coarser
    grid: still pessimistic). :class:`PLDRangeError` when even :data:`MAX_INTERVAL` is too
    fine. The grid used is the result's ``interval``."""
    max_window = MAX_WINDOW if max_window is None else max_window
    h = _refined_interval(triples, interval) if not pures else interval
    for _ in range(64):
        try:
            out = _compose_on(triples, h, pures, direction, max_window)
        except PLDRangeError as exc:
            h *= 2.0 ** max(1, math.ceil(math.log2(max(exc.window, 2) / max_window)))
            if h > MAX_INTERVAL:
                raise PLDRangeError(
                    f"the composed privacy loss needs an FFT window of more than {max_window} "
                    f"points even on the grid {MAX_INTERVAL:g} (a very long run or one with "
                    "little noise): out of the PLD accountant's range"
                ) from None
            continue
        out.pmf.setflags(write=False)
        return out
    raise PLDRangeError("no grid found for the composition")  # pragma: no cover


def _compose_on(
    triples: tuple[tuple[tuple[float, float], int], ...],
    interval: float,
    pures: tuple[tuple[float, int], ...],
    direction: str,
    max_window: int,
) -> DiscretePLD:
    plain = [(s, c) for (q, s), c in triples if q >= 1.0]
    parts: list[tuple[DiscretePLD, int]] = []
    if plain:  # plain Gaussians compose exactly into one: sigma_eff^-2 = sum c / s^2
        s_eff = 1.0 / math.sqrt(sum(c / (s * s) for s, c in plain))
        parts.append((gaussian_pld(s_eff, 1.0, interval=interval)[0], 1))
    for (q, s), c in triples:
        if q < 1.0:
            parts.append((_poisson_gaussian_pld(q, s, interval, direction), c))
    for eps, c in pures:
        parts.append((pure_pld(eps, interval), c))
    return compose_plds(parts, max_window=max_window)


def _composed_plds(
    triples: tuple[tuple[tuple[float, float], int], ...],
    interval: float,
    pures: tuple[tuple[float, int], ...] = (),
) -> tuple[DiscretePLD, DiscretePLD]:
    """The composed (remove, add) PLDs (:func:`_composed_direction`)."""
    return (
        _composed_direction(triples, interval, pures, "remove"),
        _composed_direction(triples, interval, pures, "add"),
    )


def gaussian_parts(events: Sequence[Event]) -> dict[tuple[float, float], int]:
    """``{(q, sigma): count}`` of events made of (Poisson-subsampled) Gaussians, or
    :class:`UnsupportedEventError` for any other event."""
    out: dict[tuple[float, float], int] = {}
    for event in events:
        for q, s, c in _unpack(event):
            out[(q, s)] = out.get((q, s), 0) + c
    return out


def epsilon_of_parts(
    gaussians: dict[tuple[float, float], int],
    pures: dict[float, int],
    delta: float,
    interval: float = DEFAULT_INTERVAL,
) -> float:
    """Epsilon at ``delta`` of the composition of Gaussian steps ``{(q, sigma): count}`` and
    pure-DP spends ``{epsilon: count}`` by the PLD accountant (what a ledger composes; ``inf``
    when the composition is out of the PLD's range, :class:`PLDRangeError`)."""
    if not gaussians and not pures:
        return 0.0
    try:
        r, a = _composed_plds(
            tuple(sorted(gaussians.items())), float(interval), tuple(sorted(pures.items()))
        )
    except PLDRangeError:  # out of the PLD's range: no bound from it (the ledger keeps RDP's)
        return math.inf
    return max(r.epsilon(delta), a.epsilon(delta))


def epsilon_for_sigma_pld(
    sigma: float,
    delta: float,
    *,
    q: float,
    steps: int,
    interval: float = DEFAULT_INTERVAL,
) -> float:
    """Epsilon of ``steps`` Poisson-subsampled Gaussian steps (rate ``q``, noise multiplier
    ``sigma``) at ``delta``, by the PLD accountant (an upper bound)."""
    sigma = as_positive(sigma, "sigma")
    delta = _as_delta(delta)
    q = _as_rate(q)
    steps = as_index(steps, "steps", lower=1, upper=MAX_STEPS)
    return _epsilon_for_sigma_pld(sigma, delta, q, steps, float(interval))


@functools.lru_cache(maxsize=256)
def _epsilon_for_sigma_pld(
    sigma: float, delta: float, q: float, steps: int, interval: float
) -> float:
    acc = PLDAccountant(interval=interval)
    event: Event = GaussianEvent(sigma) if q >= 1.0 else PoissonSampled(q, GaussianEvent(sigma))
    acc.compose(event, steps)
    return acc.get_epsilon(delta)


def calibrate_sigma_pld(
    epsilon: float,
    delta: float,
    *,
    q: float,
    steps: int,
    rtol: float = 1e-3,
    interval: float = CALIBRATION_INTERVAL,
) -> float:
    """Smallest noise multiplier (within ``rtol``) such that ``steps`` Poisson-subsampled
    Gaussian steps are ``(epsilon, delta)``-DP by the PLD accountant.

    The bracket's upper end is the Renyi-DP calibration
    (:func:`~privlearn.accounting.calibrate_sigma`, an upper bound of the tight sigma; checked,
    and doubled if the discretised PLD needs more), the lower end is found by shrinking it;
    then the same safeguarded secant search on ``log sigma``. The returned sigma meets the
    target by the PLD accountant and ``sigma / (1 + rtol)`` does not, unless that would be
    below :data:`PLD_MIN_SIGMA`: the floor is then returned (it meets the target).

    Parameters
    ----------
    epsilon : float
        Target epsilon, > 0.
    delta : float
        Target delta in (0, 1).
    q : float
        Poisson sampling rate in (0, 1] (1: every step reads every row).
    steps : int
        Number of steps, >= 1.
    rtol : float, default 1e-3
        Relative width of the final bracket (in ``[1e-12, 1)``).
    interval : float, default 4e-4
        The coarsest grid step of the search (:data:`CALIBRATION_INTERVAL`). The search starts
        from the statements' grid (:data:`DEFAULT_INTERVAL`) and doubles it, up to
        ``interval``, while the one-step grid has more than :data:`FINE_SEARCH_GRID` points
        (small sigma). A coarser grid is still pessimistic (the noise comes out a hair larger,
        never smaller) and it is used only where each step's losses are large: epsilon moves
        by 0.03% at adult's DP-SGD schedule at eps 3 and by 0.2% at T ~ 1e5 with sigma 0.54.
        The statement is then computed on :data:`DEFAULT_INTERVAL`, so the stated epsilon
        comes out at or a hair below the target.

    Returns
    -------
    float
    """
    from .calibrate import _as_rtol

    target = as_positive(epsilon, "epsilon")
    delta = _as_delta(delta)
    q = _as_rate(q)
    steps = as_index(steps, "steps", lower=1, upper=MAX_STEPS)
    rtol = _as_rtol(rtol)
    return _calibrate(target, delta, q, steps, rtol, float(as_positive(interval, "interval")))


@functools.lru_cache(maxsize=256)
def _calibrate(
    target: float,
    delta: float,
    q: float,
    steps: int,
    rtol: float,
    interval: float,
    rdp_cap: bool = False,
) -> float:
    """:func:`calibrate_sigma_pld` without the checks. ``rdp_cap=True`` (the tightest
    calibration, :func:`~privlearn.accounting.calibrate_noise`): Renyi DP's sigma is returned
    as soon as the PLD needs more noise than it (the smaller of the two is what is used)."""
    from .calibrate import _shrink_bracket, calibrate_sigma

    def eps_of(s: float, h: float) -> float:
        if q >= 1.0:  # exact closed form
            return _plain_epsilon(math.sqrt(steps) / s, delta)
        key = (((q, s), steps),)
        probe = _composed_direction.__wrapped__  # probes are not cached (memory)
        worst = probe(key, h, (), "remove", CALIBRATION_WINDOW).epsilon(delta)
        if worst > target:  # the larger direction is above the target anyway
            return worst
        return max(worst, probe(key, h, (), "add", CALIBRATION_WINDOW).epsilon(delta))

    rdp = calibrate_sigma(target, delta, q=q, steps=steps)
    hi = max(rdp, PLD_MIN_SIGMA)  # below the floor the PLD is not run (it meets it or not)
    # The search grid: the statement's (DEFAULT_INTERVAL) where the one-step grid is small
    # (large sigma: cheap, and each step's loss is small, so a coarse grid would cost ~0.4% in
    # epsilon), ``interval`` where it is large (small sigma: the coarse grid costs < 0.1%).
    h = min(interval, DEFAULT_INTERVAL)
    if q < 1.0 and interval > DEFAULT_INTERVAL:
        top = _search_up(lambda e: _gaussian_delta_remove(e, q, 1.0 / hi), 1.0, TAIL_MASS)
        points = (top - math.log1p(-q)) / DEFAULT_INTERVAL
        while points > FINE_SEARCH_GRID and 2.0 * h <= interval * (1 + 1e-9):
            h, points = 2.0 * h, points / 2.0

    def gap(s: float) -> float:
        return eps_of(s, h) / target - 1.0

    g_hi = gap(hi)
    if rdp_cap and g_hi > 0.0:  # the PLD is looser than RDP here: RDP's sigma is the smaller
        return rdp
    for _ in range(20):
        if g_hi <= 0.0:
            break
        hi *= 1.25
        g_hi = gap(hi)
    else:  # pragma: no cover - the PLD is never far above RDP
        raise ValueError(f"no noise multiplier reaches epsilon={target} at delta={delta}")
    # the tight sigma is typically RDP's / 1.05..1.5: start the lower end at a guess from the
    # slope d log eps / d log sigma ~ -1 (a bracket is all that matters; it is checked)
    lo = max(PLD_MIN_SIGMA, hi / min(2.0, max(1.02, 1.0 + 1.2 * max(-g_hi, 0.0))))
    if lo >= hi:  # the noise is at the accountant's floor already
        return hi
    g_lo = gap(lo)
    for _ in range(_MAX_DOWN):  # a bounded number of probes (each costs up to two FFTs)
        if g_lo > 0.0:
            break
        hi, g_hi = lo, g_lo
        if lo <= PLD_MIN_SIGMA:  # meets the target at the floor: the floor is returned
            return hi
        lo = max(PLD_MIN_SIGMA, lo * 0.8)
        g_lo = gap(lo)
    else:  # no lower end within the probe budget: hi meets the target (sound, a bit loose)
        return hi
    return _shrink_bracket(gap, lo, g_lo, hi, g_hi, math.log1p(rtol))


#: Cap on the downward probes of :func:`_calibrate` (x0.8 each: 0.8^12 ~ 1/15 of RDP's sigma).
_MAX_DOWN = 12
