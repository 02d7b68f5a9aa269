"""Laplace-type mechanisms: the snapping mechanism (Mironov 2012), textbook Laplace, and the
L2 (K-norm) Laplace noise of Song, Chaudhuri & Sarwate (2013)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from privlearn._checks import as_positive
from privlearn.mechanisms._bits import (
    STREAM_L2_LAPLACE,
    STREAM_SNAP_EXPONENT,
    STREAM_SNAP_EXPONENT_TAIL,
    STREAM_SNAP_MANTISSA,
    STREAM_TEXTBOOK_LAPLACE,
    as_real_array,
    as_seed,
    make_stream,
    spend,
)

__all__ = ["SnappingParameters", "l2_laplace", "laplace", "snapping_parameters"]

#: Mironov (2012), Theorem 1: the floating-point error term of the snapping mechanism costs
#: ``FLOAT_SLACK * B / lambda`` of privacy per released number.
FLOAT_SLACK = 2.0**-49
#: Mironov's theorem needs ``lambda < B < 2**46 lambda``.
MAX_BOUND_RATIO = 2.0**46
#: Default bound: ``B = c * lambda`` with ``c = min(2**45, epsilon * 2**39 / size)``, so the
#: floating-point term costs at most ``2**-10 * epsilon`` of the budget.
_DEFAULT_SLACK_SHARE = 2.0**-10
_ROUND_UP = 1.0 + 2.0**-40  # absorbs rounding in the computation of lambda (more noise, never less)
_TAIL_WORDS = 16  # extra 64-bit words per entry for the exponent's (never needed) long tail


@dataclass(frozen=True)
class SnappingParameters:
    """Calibration of the snapping mechanism (see :func:`snapping_parameters`).

    Attributes
    ----------
    noise_scale : float
        ``lambda``: the Laplace scale of the noise before snapping.
    grid : float
        ``Lambda``: the smallest power of two ``>= lambda``; every output is a multiple of it
        (or ``±bound``).
    bound : float
        ``B``: inputs and outputs are clamped to ``[-B, B]``.
    epsilon : float
        The privacy guarantee, ``(sensitivity + size * 2**-49 * B) / lambda <= epsilon``.
    sensitivity : float
        L1 sensitivity of the released vector.
    size : int
        Number of released numbers (the floating-point term is paid once per number).
    """

    noise_scale: float
    grid: float
    bound: float
    epsilon: float
    sensitivity: float
    size: int

    @property
    def guaranteed_epsilon(self) -> float:
        """``(sensitivity + size * 2**-49 * bound) / noise_scale`` (``<= epsilon``)."""
        return (self.sensitivity + self.size * FLOAT_SLACK * self.bound) / self.noise_scale


def _power_of_two_ceil(x: float) -> float:
    mantissa, exponent = math.frexp(x)  # x = mantissa * 2**exponent, mantissa in [0.5, 1)
    return math.ldexp(1.0, exponent - 1) if mantissa == 0.5 else math.ldexp(1.0, exponent)


def snapping_parameters(
    sensitivity: float, epsilon: float, bound: float | None = None, size: int = 1
) -> SnappingParameters:
    """Calibrate Mironov's snapping mechanism so that it is ``epsilon``-DP.

    Mironov (2012), "On significance of the least significant bits for differential privacy",
    Section 5.2, Theorem 1: for a function of sensitivity 1 and ``lambda < B < 2**46 lambda``,
    the snapping mechanism ``clamp_B(round_Lambda(clamp_B(f(D)) + S lambda ln(U*)))`` is
    ``(1/lambda + 2**-49 B/lambda)``-DP. Its proof bounds the privacy loss by
    ``|f(D) - f(D')| / lambda`` (the Laplace part) plus the floating-point term, so for
    sensitivity ``Delta`` (all quantities in the units of ``f``) one number costs
    ``Delta/lambda + 2**-49 B/lambda``. A vector of ``size`` numbers with L1 sensitivity
    ``Delta`` gets independent noise per entry; the floating-point term is paid by every entry
    that may change, so the guarantee is ``epsilon = (Delta + size * 2**-49 B) / lambda``, and
    ``lambda = (Delta + size * 2**-49 B) / epsilon`` (rounded up).

    Parameters
    ----------
    sensitivity : float
        L1 sensitivity ``Delta > 0`` of the released value (vector).
    epsilon : float
        Target privacy parameter ``> 0``.
    bound : float or None, default=None
        ``B``: values are clamped to ``[-B, B]`` before and after the noise. ``None`` chooses
        ``B = c * lambda`` with ``c = min(2**45, epsilon * 2**39 / size)``, so the
        floating-point term costs at most ``2**-10 epsilon`` (0.1 % of the budget) and
        ``lambda = Delta / (epsilon - size * 2**-49 c)``; with ``epsilon = 1``, ``size = 1`` the
        bound is about ``5.5e11 * lambda``. An error asks for an explicit bound when ``c < 2``
        (tiny ``epsilon`` with a huge ``size``).
    size : int, default=1
        Number of released numbers.

    Returns
    -------
    SnappingParameters

    Raises
    ------
    ValueError
        If ``bound`` does not satisfy ``lambda < bound < 2**46 lambda`` (Mironov's condition).
    """
    sensitivity = as_positive(sensitivity, "sensitivity")
    epsilon = as_positive(epsilon, "epsilon")
    size = max(int(size), 1)
    if bound is None:
        ratio = min(MAX_BOUND_RATIO / 2.0, epsilon * 2.0**39 / size)
        if ratio < 2.0:
            raise ValueError(
                f"no default bound for epsilon={epsilon} with {size} released numbers: the "
                "floating-point term of the snapping mechanism would dominate; pass bound="
            )
        noise_scale = sensitivity / (epsilon - size * FLOAT_SLACK * ratio) * _ROUND_UP
        bound_value = ratio * noise_scale
    else:
        bound_value = as_positive(bound, "bound")
        noise_scale = (sensitivity + size * FLOAT_SLACK * bound_value) / epsilon * _ROUND_UP
        if not noise_scale < bound_value:
            raise ValueError(
                f"bound={bound_value} must exceed the noise scale lambda={noise_scale:.6g} "
                "(Mironov 2012, Theorem 1 needs lambda < B): widen the bound or raise epsilon"
            )
        if not bound_value < MAX_BOUND_RATIO * noise_scale:
            raise ValueError(
                f"bound={bound_value} must be below 2**46 * lambda = "
                f"{MAX_BOUND_RATIO * noise_scale:.6g} (Mironov 2012, Theorem 1)"
            )
    if not math.isfinite(noise_scale) or not math.isfinite(bound_value):
        raise ValueError("sensitivity / epsilon out of the floating-point range")
    return SnappingParameters(
        noise_scale=noise_scale,
        grid=_power_of_two_ceil(noise_scale),
        bound=bound_value,
        epsilon=epsilon,
        sensitivity=sensitivity,
        size=size,
    )


def _geometric_exponents(seed: int | None, n: int) -> np.ndarray:
    """``e >= 1`` with ``P(e = k) = 2**-k``: one plus the number of leading zero bits of a
    stream of random bits (64 per word; an all-zero word, probability ``2**-64``, continues in
    the tail stream)."""
    raw = make_stream(seed, STREAM_SNAP_EXPONENT).raws(0, n)
    high = (raw >> np.uint64(32)).astype(np.float64)  # < 2**32: exact in float64
    low = (raw & np.uint64(0xFFFFFFFF)).astype(np.float64)
    msb = np.where(high > 0, 31 + np.frexp(high)[1], np.frexp(low)[1] - 1)
    exponent = (64 - msb).astype(np.int64)  # 1 + leading zeros; raw == 0 gives 65
    zero = np.flatnonzero(raw == 0)
    if zero.size:
        tail = make_stream(seed, STREAM_SNAP_EXPONENT_TAIL)
        for i in zero:
            words = tail.raws(int(i) * _TAIL_WORDS, _TAIL_WORDS)
            extra = 0
            for word in words:  # 64 + 1024 bits go far below the smallest double
                if word:
                    extra += 64 - int(word).bit_length()
                    break
                extra += 64
            exponent[i] = 65 + extra
    return exponent


def _uniform_full_precision(seed: int | None, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``U*`` uniform over the doubles in ``(0, 1)`` at full resolution (each double ``d`` with
    probability = the length of ``[d, next double)``), and an independent random sign.

    ``U* = (1 + m 2**-52) 2**-e`` with ``e`` geometric (``P(e = k) = 2**-k``) and ``m`` 52
    uniform bits: Mironov (2012), Section 5.2. The sign is another bit of the mantissa word.
    """
    raw = make_stream(seed, STREAM_SNAP_MANTISSA).raws(0, n)
    negative = (raw & np.uint64(1)).astype(bool)
    mantissa = (raw >> np.uint64(12)).astype(np.float64) + 2.0**52  # exact: < 2**53
    u = np.ldexp(mantissa, -(52 + _geometric_exponents(seed, n)))
    # an exponent beyond the subnormal range (probability < 2**-1074) would round to 0
    return np.maximum(u, np.nextafter(0.0, 1.0)), negative


def _snap(values: np.ndarray, params: SnappingParameters, seed: int | None) -> np.ndarray:
    bound, grid = params.bound, params.grid
    x = np.clip(values.ravel(), -bound, bound)
    u, negative = _uniform_full_precision(seed, x.size)
    # LN(U*) by the C library's log (glibc: correctly rounded for almost all arguments);
    # Mironov's analysis assumes an accurately rounded logarithm, which numpy's SIMD log is not.
    log_u = np.fromiter(map(math.log, u.tolist()), dtype=np.float64, count=x.size)
    noise = params.noise_scale * log_u
    noise = np.where(negative, -noise, noise)
    y = x + noise
    snapped = np.rint(y / grid) * grid  # nearest multiple of the power of two Lambda (exact)
    # "+ 0.0" turns -0.0 into +0.0: the sign of a zero would reveal the sign of y
    return (np.clip(snapped, -bound, bound) + 0.0).reshape(values.shape)


def laplace(
    value: Any,
    sensitivity: float,
    epsilon: float,
    seed: int | None = None,
    *,
    secure: bool = True,
    bound: float | None = None,
    ledger: Any = None,
) -> float | np.ndarray:
    """Release ``value`` with Laplace noise: the snapping mechanism by default.

    Parameters
    ----------
    value : float or array_like
        The query answer, a number or an array (finite); noise is independent per entry.
    sensitivity : float
        L1 sensitivity ``Delta > 0`` of ``value`` (for an array: of the whole array).
    epsilon : float
        Privacy parameter ``> 0``.
    seed : int or None, default=None
        ``None`` keys the ChaCha20 streams from the operating system (use this for a real
        release); an int makes the call reproducible.
    secure : bool, default=True
        ``True``: Mironov's snapping mechanism (below). ``False``: textbook floating-point
        Laplace ``value + Lap(Delta/epsilon)`` by inversion, for research comparisons only.
    bound : float or None, default=None
        ``B`` of the snapping mechanism; ``None`` picks the default of
        :func:`snapping_parameters` (``B`` about ``epsilon * 2**39 / size`` noise scales).
        With ``secure=False`` a given bound only clamps the input to ``[-B, B]``.
    ledger : object, optional
        Duck-typed privacy ledger: ``ledger.spend(epsilon, 0.0, label="laplace")`` is called
        after validation and before any noise is drawn; if it raises, nothing is released.

    Returns
    -------
    float or numpy.ndarray
        A float for a scalar ``value``, else an array of the same shape.

    Notes
    -----
    **Snapping mechanism** (Mironov 2012, Section 5.2). With ``lambda`` and ``B`` from
    :func:`snapping_parameters` and ``Lambda`` the smallest power of two ``>= lambda``, each
    entry is ``clamp_B(round_Lambda(clamp_B(x) + S lambda ln(U*)))``: ``S`` a random sign,
    ``U*`` uniform over ``(0, 1)`` at full double resolution (geometric exponent, 52 random
    mantissa bits), ``round_Lambda`` the nearest multiple of ``Lambda`` (ties to even), all in
    IEEE double arithmetic. Outputs lie on the ``Lambda``-grid or at ``±B``, so the low-order
    bits that break textbook floating-point Laplace (Mironov 2012, Section 4) carry nothing.

    *Privacy statement*: by Mironov's Theorem 1 (stated there for sensitivity 1, ``size = 1``,
    ``lambda < B < 2**46 lambda``) the release is ``epsilon``-DP with
    ``epsilon = (Delta + size * 2**-49 * B) / lambda`` for a vector of ``size`` numbers with
    L1 sensitivity ``Delta``; ``lambda`` is calibrated so this equals the requested
    ``epsilon`` (see :func:`snapping_parameters`). The theorem assumes IEEE round-to-nearest
    arithmetic and an accurately rounded logarithm (the C library's ``log`` is used). The price
    is bias from clamping values outside ``[-B, B]`` and the extra variance of snapping
    (about ``Lambda**2 / 12``).

    **Textbook Laplace** (``secure=False``): ``value + Lap(Delta/epsilon)``, where the noise is
    ``-(Delta/epsilon) log(1 - u)`` with a random sign. It is ``epsilon``-DP in exact real
    arithmetic only; its floating-point implementation leaks the input through the set of
    reachable outputs (Mironov 2012, Section 4). Do not use it for a real release.
    """
    values = as_real_array(value, "value")
    sensitivity = as_positive(sensitivity, "sensitivity")
    epsilon = as_positive(epsilon, "epsilon")
    if not isinstance(secure, (bool, np.bool_)):
        raise TypeError(f"secure must be a bool, got {type(secure).__name__}")
    if secure:
        params = snapping_parameters(sensitivity, epsilon, bound, size=values.size)
    elif bound is not None:
        values = np.clip(values, -as_positive(bound, "bound"), as_positive(bound, "bound"))
    seed = as_seed(seed)
    spend(ledger, epsilon, 0.0, "laplace")
    if secure:
        out = _snap(values, params, seed)
    else:
        stream = make_stream(seed, STREAM_TEXTBOOK_LAPLACE)
        noise = stream.laplace(0, values.size, sensitivity / epsilon)
        out = values + noise.reshape(values.shape)
    return float(out) if out.ndim == 0 else out


def l2_laplace(
    vector: Any,
    sensitivity: float,
    epsilon: float,
    seed: int | None = None,
    *,
    ledger: Any = None,
) -> np.ndarray:
    """Release ``vector`` with the L2-norm Laplace noise of Song, Chaudhuri & Sarwate (2013).

    Parameters
    ----------
    vector : array_like, shape (d,) or (n, d)
        A vector, or ``n`` vectors each released with its own independent noise vector.
    sensitivity : float
        L2 sensitivity ``Delta > 0``: ``||f(D) - f(D')||_2 <= Delta`` (per row).
    epsilon : float
        Privacy parameter ``> 0`` (per row).
    seed : int or None, default=None
        ``None``: key from the operating system; an int: reproducible.
    ledger : object, optional
        ``ledger.spend(epsilon, 0.0, label="l2_laplace")`` before the noise is drawn (for
        ``n`` rows of a single release of an ``(n, d)`` query, pass a per-row ``epsilon``
        accordingly; the ledger is charged ``epsilon`` once).

    Returns
    -------
    numpy.ndarray
        Same shape as ``vector``.

    Notes
    -----
    Noise density ``∝ exp(-(epsilon/Delta) ||z||_2)`` (Song et al. 2013, Section 3, for their
    sensitivity; the K-norm mechanism of Hardt & Talwar 2010 with the L2 ball): radius
    ``Gamma(d, Delta/epsilon)`` times a uniform direction. :meth:`Stream.l2_laplace` draws the
    density ``∝ exp(-(eps'/2) ||z||)`` (sensitivity 2), so it is called with
    ``eps' = 2 epsilon / Delta``, which gives exactly the density above.

    *Privacy statement*: ``epsilon``-DP for a query of L2 sensitivity ``Delta`` in exact
    arithmetic (the privacy loss at ``z`` is ``(epsilon/Delta)(||z - f(D')|| - ||z - f(D)||)
    <= epsilon`` by the triangle inequality). The floating-point sampler is not snapped.
    """
    values = as_real_array(vector, "vector")
    if values.ndim not in (1, 2) or values.shape[-1] == 0:
        raise ValueError(f"vector must have shape (d,) or (n, d) with d >= 1, got {values.shape}")
    sensitivity = as_positive(sensitivity, "sensitivity")
    epsilon = as_positive(epsilon, "epsilon")
    seed = as_seed(seed)
    spend(ledger, epsilon, 0.0, "l2_laplace")
    rows = values.reshape(-1, values.shape[-1])
    stream = make_stream(seed, STREAM_L2_LAPLACE)
    noise = stream.l2_laplace(0, rows.shape[0], rows.shape[1], 2.0 * epsilon / sensitivity)
    return (rows + noise).reshape(values.shape)
