"""Shared machinery of the release mechanisms: stream ids, argument checks, the ledger hook and
exact integer samplers (Canonne, Kamath & Steinke 2020, Algorithms 1-2: the discrete Laplace)
driven by ChaCha20. The discrete Gaussian has one sampler in the package, the core's
(:meth:`privlearn.random.Stream.discrete_gaussian`, twin :mod:`privlearn.reference.random`).

Everything here is vectorised over the entries of a release: a rejection loop runs on the
still-active entries only, so the number of Python-level rounds grows like the logarithm of the
number of entries, never like the number of entries.
"""

from __future__ import annotations

import inspect
from fractions import Fraction
from typing import Any

import numpy as np

from privlearn._checks import as_index, as_positive
from privlearn.random import Stream

__all__ = [
    "BitSource",
    "STREAM_DISCRETE",
    "STREAM_EXPONENTIAL",
    "STREAM_GAUSSIAN",
    "STREAM_L2_LAPLACE",
    "STREAM_SNAP_EXPONENT",
    "STREAM_SNAP_EXPONENT_TAIL",
    "STREAM_SNAP_MANTISSA",
    "STREAM_TEXTBOOK_LAPLACE",
    "as_real_array",
    "as_seed",
    "as_rational",
    "make_stream",
    "sample_discrete_laplace",
    "spend",
]

# One stream id per purpose ("mech" in ASCII, then a purpose number): a call with an int seed
# draws every random quantity from its own stream, and two mechanisms called with the same seed
# draw independent noise.
_MECH = 0x6D65636800000000
STREAM_TEXTBOOK_LAPLACE = _MECH | 1
STREAM_SNAP_MANTISSA = _MECH | 2
STREAM_SNAP_EXPONENT = _MECH | 3
STREAM_SNAP_EXPONENT_TAIL = _MECH | 4
STREAM_DISCRETE = _MECH | 5
STREAM_GAUSSIAN = _MECH | 6
STREAM_L2_LAPLACE = _MECH | 7
STREAM_EXPONENTIAL = _MECH | 8

_U64_MAX = np.uint64(0xFFFFFFFFFFFFFFFF)
_SMALL = 1 << 62  # denominators below this are handled in uint64 arithmetic


def as_seed(seed: Any) -> int | None:
    """``None`` or an int in ``[0, 2**64)``; checked before any budget is spent."""
    return None if seed is None else as_index(seed, "seed", upper=(1 << 64) - 1)


def make_stream(seed: int | None, stream: int) -> Stream:
    """The ChaCha20 stream for one purpose of one call (``seed=None``: key from the OS)."""
    return Stream(as_seed(seed), stream=stream)


def spend(
    ledger: Any, epsilon: float, delta: float, label: str, neighboring: str | None = None
) -> None:
    """Charge ``ledger`` (duck-typed: ``ledger.spend(epsilon, delta, label=...)``) before any
    noise is drawn; an exception (e.g. a budget refusal) propagates and nothing is released.

    ``neighboring`` (``"add_remove"``, ``"replace_one"`` or None) is the relation the spend's
    guarantee holds under, when the caller knows it: it is passed as ``neighboring=`` to a
    ledger whose ``spend`` accepts it (:class:`~privlearn.accounting.PrivacyLedger` refuses a
    relation other than the one it holds), and left out for a duck-typed ledger that predates
    relations."""
    if ledger is None:
        return
    spender = getattr(ledger, "spend", None)
    if not callable(spender):
        raise TypeError(f"ledger must have a spend(epsilon, delta, label) method, got {ledger!r}")
    if neighboring is not None and _accepts_neighboring(spender):
        spender(float(epsilon), float(delta), label=label, neighboring=neighboring)
    else:
        spender(float(epsilon), float(delta), label=label)


def _accepts_neighboring(spender: Any) -> bool:
    """Whether ``spender`` takes a ``neighboring`` keyword (or any keyword)."""
    try:
        params = inspect.signature(spender).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        p.kind is inspect.Parameter.VAR_KEYWORD
        or (p.name == "neighboring" and p.kind is not inspect.Parameter.POSITIONAL_ONLY)
        for p in params
    )


def as_real_array(value: Any, name: str) -> np.ndarray:
    """``value`` as a float64 array (any shape) with only finite entries."""
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(
            f"{name} must be a number or an array of numbers, got {type(value).__name__}"
        )
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a number or an array of numbers: {exc}") from None
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)
    ):
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        bad = np.flatnonzero(~np.isfinite(arr.ravel()))[0]
        raise ValueError(f"{name} must be finite; entry {bad} is {arr.ravel()[bad]}")
    return arr


def as_rational(value: Any, name: str, *, upper: float = 2.0**40) -> Fraction:
    """A positive number as an exact ``Fraction`` (a float converts exactly), at most ``upper``."""
    if isinstance(value, Fraction):
        if not 0 < value <= upper:
            raise ValueError(f"{name} must lie in (0, {upper:g}], got {value}")
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        value = int(value)
        if not 0 < value <= upper:
            raise ValueError(f"{name} must lie in (0, {upper:g}], got {value}")
        return Fraction(value)
    x = as_positive(value, name)
    if x > upper:
        raise ValueError(f"{name} must be at most {upper:g}, got {x}")
    return Fraction(x)


# ---------------------------------------------------------------------------------------------
class BitSource:
    """Consumes the 64-bit draws ``raw(0), raw(1), ...`` of one stream in order.

    Every draw is used at most once within a call; the draws an entry receives depend on the
    order of the rejection rounds, which is deterministic, so an int seed reproduces a call.
    """

    def __init__(self, stream: Stream):
        self._stream = stream
        self._position = 0

    def raws(self, n: int) -> np.ndarray:
        """The next ``n`` raw 64-bit draws (uint64)."""
        out = self._stream.raws(self._position, n)
        self._position += n
        return out

    def bits(self, n: int) -> np.ndarray:
        """``n`` fair coin flips (bool): the lowest bit of fresh raw draws."""
        return (self.raws(n) & np.uint64(1)).astype(bool)

    def below(self, m: np.ndarray) -> np.ndarray:
        """Uniform integers in ``[0, m_i)`` for each ``1 <= m_i <= 2**62`` (uint64), by exact
        rejection: a raw draw ``x`` is accepted iff ``x < 2**64 - (2**64 mod m)``, then
        ``x mod m`` is uniform."""
        m = np.asarray(m, dtype=np.uint64)
        out = np.empty(m.shape, dtype=np.uint64)
        # 2**64 mod m == (2**64 - m) mod m, computed with uint64 wrap-around
        accept_max = _U64_MAX - ((np.zeros_like(m) - m) % m)
        todo = np.arange(m.size)
        while todo.size:
            x = self.raws(todo.size)
            ok = x <= accept_max[todo]
            out[todo[ok]] = x[ok] % m[todo[ok]]
            todo = todo[~ok]
        return out

    def bernoulli_fraction(self, num: np.ndarray, den: int) -> np.ndarray:
        """Bernoulli(num_i / den) for integers ``0 <= num_i <= den`` (exact).

        A denominator below 2**62 uses one uniform integer: ``below(den) < num``. A larger one
        compares a uniform real ``0.x1 x2 ...`` (base-2**64 digits ``x_j`` = fresh raw draws)
        with the base-2**64 expansion of ``num/den``, digit by digit, in exact integer
        arithmetic (one digit suffices with probability ``1 - 2**-64``).
        """
        num = np.asarray(num)
        n = num.shape[0]
        den = int(den)
        if n == 0:
            return np.zeros(0, dtype=bool)
        if den < _SMALL:
            return self.below(np.full(n, den, dtype=np.uint64)) < num.astype(np.uint64)
        rem = num.astype(object)
        out = np.zeros(n, dtype=bool)
        todo = np.arange(n)
        while todo.size:
            shifted = rem[todo] * (1 << 64)
            digit = shifted // den
            rem[todo] = shifted - digit * den
            x = self.raws(todo.size).astype(object)
            out[todo[(x < digit).astype(bool)]] = True
            # equal digits: still undecided, unless the expansion of num/den has ended (then the
            # uniform real, which has infinitely many digits left, exceeds num/den)
            undecided = ((x == digit) & (rem[todo] != 0)).astype(bool)
            todo = todo[undecided]
        return out

    def bernoulli_exp_unit(self, num: np.ndarray | None, den: int, n: int) -> np.ndarray:
        """``n`` draws of Bernoulli(exp(-gamma_i)) for ``gamma_i = num_i/den`` in ``[0, 1]``
        (``num=None``: ``gamma = 1``): Canonne, Kamath & Steinke (2020), Algorithm 1, case
        ``gamma <= 1``.

        ``K = 1``; repeat: draw ``A ~ Bernoulli(gamma/K)``, stop if ``A = 0``, else ``K += 1``;
        return ``[K odd]``. ``Bernoulli(gamma/K)`` is the product of independent
        ``Bernoulli(1/K)`` and ``Bernoulli(gamma)`` draws (exact, and keeps integers small).
        """
        k = np.ones(n, dtype=np.int64)
        odd = np.zeros(n, dtype=bool)
        todo = np.arange(n)
        while todo.size:
            a = self.below(k[todo].astype(np.uint64)) == 0  # Bernoulli(1/K)
            if num is not None:
                a &= self.bernoulli_fraction(num[todo], den)  # Bernoulli(gamma)
            stop = todo[~a]
            odd[stop] = (k[stop] % 2) == 1
            todo = todo[a]
            k[todo] += 1
        return odd

    def bernoulli_exp_minus_one(self, n: int) -> np.ndarray:
        """``n`` draws of Bernoulli(exp(-1)) (Algorithm 1 with ``gamma = 1``)."""
        return self.bernoulli_exp_unit(None, 1, n)

    def bernoulli_exp(self, num: np.ndarray, den: int) -> np.ndarray:
        """Bernoulli(exp(-num_i/den)) for any rational ``num_i/den >= 0``: CKS 2020 Algorithm 1
        (``floor(gamma)`` Bernoulli(exp(-1)) trials that must all succeed, then
        Bernoulli(exp(-(gamma - floor(gamma))))."""
        num = np.asarray(num, dtype=object)
        n = num.shape[0]
        whole = (num // den).astype(object)
        frac = num - whole * den
        ok = np.ones(n, dtype=bool)
        rounds = 0
        todo = np.flatnonzero((whole > 0).astype(bool))
        while todo.size:
            ok[todo] = self.bernoulli_exp_minus_one(todo.size)
            rounds += 1
            todo = todo[ok[todo] & (whole[todo] > rounds).astype(bool)]
        todo = np.flatnonzero(ok)
        if todo.size:
            ok[todo] = self.bernoulli_exp_unit(frac[todo], den, todo.size)
        return ok

    def geometric_exp_minus_one(self, n: int) -> np.ndarray:
        """Number of successes of Bernoulli(exp(-1)) before the first failure (int64):
        ``P(V = v) = (1 - 1/e) e^{-v}``."""
        v = np.zeros(n, dtype=np.int64)
        todo = np.arange(n)
        while todo.size:
            a = self.bernoulli_exp_minus_one(todo.size)
            todo = todo[a]
            v[todo] += 1
        return v


def sample_discrete_laplace(source: BitSource, n: int, scale: Fraction) -> np.ndarray:
    """``n`` draws of the discrete Laplace distribution with scale ``t/s = scale``:
    ``P(Z = z) = (1 - e^{-1/scale}) / (1 + e^{-1/scale}) * e^{-|z|/scale}`` (int64).

    Canonne, Kamath & Steinke (2020), Algorithm 2, all in integers: ``U`` uniform in
    ``{0..t-1}``; reject unless ``Bernoulli(exp(-U/t))``; ``V`` geometric; ``X = U + tV``;
    ``Y = floor(X/s)``; a fair sign ``B``; reject ``B = 1, Y = 0``; return ``(1 - 2B) Y``.
    """
    t, s = scale.numerator, scale.denominator
    if t >= _SMALL:
        raise ValueError(f"scale numerator too large for the exact sampler: {scale}")
    out = np.zeros(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        u = source.below(np.full(todo.size, t, dtype=np.uint64)).astype(np.int64)
        keep = source.bernoulli_exp_unit(u, t, todo.size)  # D ~ Bernoulli(exp(-U/t))
        retry = todo[~keep]
        todo, u = todo[keep], u[keep]
        v = source.geometric_exp_minus_one(todo.size)
        if todo.size and int(v.max()) < (_SMALL // t) - 1:
            x = u + t * v
            y = x // s if s < _SMALL else np.zeros_like(x)
        else:  # V > 2**9 at the very least (probability < e**-512), or nothing to do
            y = np.array([(int(a) + t * int(b)) // s for a, b in zip(u, v)], dtype=np.int64)
        negative = source.bits(todo.size)
        accept = ~(negative & (y == 0))
        out[todo[accept]] = np.where(negative[accept], -y[accept], y[accept])
        todo = np.sort(np.concatenate([retry, todo[~accept]]))
    return out
