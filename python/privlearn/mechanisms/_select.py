"""Exact sampling of ``P(i) ∝ m_i exp(-gamma_i)`` (integer multiplicities ``m_i >= 1``, exact
rational exponents ``gamma_i >= 0``): the exponential mechanism with no floating-point step
between the utilities and the choice.

The sampler (used by :func:`privlearn.mechanisms.exponential` and
:func:`privlearn.preprocessing.dp_quantiles`) is a rejection sampler whose proposal has dyadic
weights and whose acceptance is an exact Bernoulli trial:

1. *Proposal.* ``k_i`` is an integer with ``0 <= k_i <= gamma_i / ln 2`` (from a
   floating-point estimate of ``gamma_i`` lowered by a rigorous error bound, capped at
   :data:`LEVEL_CAP`); candidate ``i`` is proposed with probability
   ``∝ m_i 2**-k_i`` by one uniform integer below ``sum_i m_i 2**(LEVEL_CAP - k_i)`` (exact
   rejection on 64-bit ChaCha20 draws).
2. *Acceptance* with probability ``exp(-x_i)``, ``x_i = gamma_i - k_i ln 2 >= 0`` (so that
   ``m_i 2**-k_i exp(-x_i) = m_i exp(-gamma_i)``): for ``k_i = 0`` this is Canonne, Kamath &
   Steinke (2020), Algorithm 1, on the rational ``gamma_i``; otherwise ``x_i = a + y`` with a
   dyadic ``a = floor(x_lo 2**64) 2**-64`` (``x_lo`` a rational lower bound of ``x_i``) and
   ``0 <= y < 2**-60``: an exact ``Bernoulli(exp(-a))`` (CKS Algorithm 1) times
   ``Bernoulli(exp(-y))`` by CKS Algorithm 1 for ``y <= 1`` (``K = 1``; while
   ``Bernoulli(y/K)``: ``K += 1``; success iff ``K`` odd), each ``Bernoulli(y/K)`` decided by
   comparing fresh random bits with nested rational intervals around ``y/K`` (``ln 2`` from
   its series ``sum_j 1/(j 2**j)`` with a bounded tail) until the bits decide it.

Every accepted index therefore has probability exactly ``m_i exp(-gamma_i) / Z``: no
candidate is lost to underflow or to the range of a floating-point noise variable (the
Gumbel-max sampler this replaces could not choose a candidate more than about 40 below the
best logit). The expected number of proposals is about 2 at most: the acceptance is about
``exp(-ln 2) = 1/2`` or more (``x_i`` exceeds ``ln 2`` only by the float error margins), except
for capped candidates, whose total proposal mass is below ``sum_i m_i 2**-LEVEL_CAP`` of the
whole (the best candidate has ``gamma = 0``, level 0).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from privlearn.mechanisms._bits import BitSource

__all__ = [
    "LEVEL_CAP",
    "ExactSelector",
    "WordSource",
    "bernoulli_exp_rational",
    "bernoulli_exp_shifted",
    "ln2_bounds",
]

#: Largest proposal level ``k``: candidates with ``gamma_i > LEVEL_CAP ln 2`` are proposed at
#: ``2**-LEVEL_CAP`` and accepted with ``exp(-(gamma_i - LEVEL_CAP ln 2))`` (still exact).
LEVEL_CAP = 128
_PER_LN2 = (1.0 - 2.0**-40) / math.log(2.0)  # a little below 1/ln 2: floor stays below
_A_BITS = 64  # the dyadic part a of x has 64 fractional bits


@lru_cache(maxsize=64)
def _ln2_floor(bits: int) -> int:
    """``L = sum_{j<=bits} floor(2**(bits-j) / j)``: ``L <= 2**bits ln 2 < L + bits + 1``
    (every floor loses less than 1; the tail of ``ln 2 = sum_{j>=1} 1/(j 2**j)`` after
    ``bits`` terms is below ``1 / ((bits + 1) 2**bits)``)."""
    return sum((1 << (bits - j)) // j for j in range(1, bits + 1))


def ln2_bounds(bits: int) -> tuple[Fraction, Fraction]:
    """Rational ``(lo, hi)`` with ``lo <= ln 2 < hi`` and ``hi - lo = (bits + 1) 2**-bits``."""
    low = _ln2_floor(bits)
    return Fraction(low, 1 << bits), Fraction(low + bits + 1, 1 << bits)


class WordSource:
    """The 64-bit draws ``raw(0), raw(1), ...`` of a :class:`BitSource`, in order, fetched
    in chunks of 8, 16, ... up to 64 (one core call per chunk, not per word)."""

    _CHUNK = 64

    def __init__(self, source: BitSource) -> None:
        self._source = source
        self._buffer: list[int] = []
        self._next = 0
        self._chunk = 8  # doubles up to _CHUNK: a short selection reads few words

    def word(self) -> int:
        """The next 64-bit draw as a Python int."""
        if self._next == len(self._buffer):
            self._buffer = self._source.raws(self._chunk).tolist()
            self._chunk = min(2 * self._chunk, self._CHUNK)
            self._next = 0
        w = self._buffer[self._next]
        self._next += 1
        return w


def _bernoulli_ratio(words: WordSource, num: int, den: int) -> bool:
    """Bernoulli(num / den), ``0 <= num <= den`` (exact): the base-``2**64`` digits of
    ``num / den`` against fresh 64-bit draws; the first draw that differs from its digit
    decides (below: success); once the expansion ends the answer is failure."""
    if num >= den:
        return True
    while num:
        num <<= 64
        digit, num = divmod(num, den)
        x = words.word()
        if x != digit:
            return x < digit
    return False


def bernoulli_exp_rational(words: WordSource, num: int, den: int) -> bool:
    """Bernoulli(exp(-num/den)) for integers ``num >= 0``, ``den >= 1`` (exact): Canonne,
    Kamath & Steinke (2020), Algorithm 1 (``floor(num/den)`` Bernoulli(exp(-1)) trials that
    must all succeed, then Bernoulli(exp(-f)) for the fraction ``f`` by ``K = 1``; while
    ``Bernoulli(f / K)``: ``K += 1``; success iff ``K`` odd)."""
    whole, frac = divmod(num, den)
    for _ in range(whole):
        if not _bernoulli_exp_unit(words, 1, 1):
            return False
    return _bernoulli_exp_unit(words, frac, den)


def _bernoulli_exp_unit(words: WordSource, num: int, den: int) -> bool:
    """Bernoulli(exp(-num/den)) for ``0 <= num/den <= 1`` (CKS 2020, Algorithm 1)."""
    k = 1
    while _bernoulli_ratio(words, num, den * k):
        k += 1
    return k % 2 == 1


def _bernoulli_between(words: WordSource, bounds: Callable[[int], tuple[int, int, int]]) -> bool:
    """Bernoulli(z) for a real ``z`` in ``[0, 1]`` known through ``bounds(p) = (lo, hi, d)``,
    ``lo / d <= z <= hi / d``, whose width shrinks to 0 as ``p`` grows (``z`` irrational here,
    so the bounds eventually isolate it from any dyadic point). A uniform ``V`` in ``[0, 1)``
    is revealed 64 bits at a time: ``V < z`` is certain once ``(w + 1) 2**-b <= lo / d`` and
    ``V >= z`` once ``w 2**-b >= hi / d``."""
    w, b, p = 0, 0, 96
    while True:
        w = (w << 64) | words.word()
        b += 64
        lo, hi, d = bounds(p)
        if (w + 1) * d <= lo << b:
            return True
        if w * d >= hi << b:
            return False
        p *= 2


def bernoulli_exp_shifted(words: WordSource, g: int, e: int, k: int) -> bool:
    """Bernoulli(exp(-(gamma - k ln 2))) for a rational ``gamma = g / e >= 0`` (integers,
    ``e >= 1``) and an integer ``0 <= k <= gamma / ln 2`` (exact; see the module notes).
    Raises RuntimeError if ``k ln 2 > gamma`` (a proposal bound that does not hold: never,
    with the margins used).

    With ``l_p = floor-sum bound of 2**p ln 2`` (:func:`_ln2_floor`),
    ``x = gamma - k ln 2`` lies in ``[(g 2**p - k (l_p + p + 1) e) / (e 2**p),
    (g 2**p - k l_p e) / (e 2**p)]``; all arithmetic is on integers."""
    if k == 0:
        return bernoulli_exp_rational(words, g, e)
    p = 96 + k.bit_length()
    while True:
        low = _ln2_floor(p)
        x_lo = (g << p) - k * (low + p + 1) * e  # over e 2**p
        if x_lo >= 0:
            break
        if (g << p) - k * low * e < 0:
            raise RuntimeError("exact selection: a proposal level exceeds gamma / ln 2")
        p *= 2
    a = (x_lo << _A_BITS) // (e << p)  # a / 2**64 <= x: the dyadic part of x
    if not bernoulli_exp_rational(words, a, 1 << _A_BITS):
        return False
    # y = x - a 2**-64 = (g 2**q - a e 2**(q-64) - k e (2**q ln 2)) / (e 2**q), in [0, 2**-60)
    kk = 1
    while True:

        def bounds(prec: int, kk: int = kk) -> tuple[int, int, int]:
            q = max(prec + 8 + k.bit_length(), _A_BITS)
            low = _ln2_floor(q)
            base = (g << q) - ((a * e) << (q - _A_BITS))
            d = (e << q) * kk
            return max(base - k * (low + q + 1) * e, 0), min(base - k * low * e, d), d

        if not _bernoulli_between(words, bounds):
            return kk % 2 == 1
        kk += 1


def _below_big(words: WordSource, bound: int) -> int:
    """A uniform integer in ``[0, bound)`` (``bound >= 1``, any size): ``bit_length(bound)``
    random bits from 64-bit draws, rejected while ``>= bound`` (acceptance above 1/2)."""
    nbits = bound.bit_length()
    count = (nbits + 63) // 64
    while True:
        x = 0
        for _ in range(count):
            x = (x << 64) | words.word()
        x >>= count * 64 - nbits
        if x < bound:
            return x


class ExactSelector:
    """Samples ``i`` with probability exactly ``m_i exp(-gamma_i) / sum_j m_j exp(-gamma_j)``.

    Parameters
    ----------
    multiplicity : array_like of int
        ``m_i >= 1``; a list of Python ints may hold any sizes (a numpy array: ``sum_i m_i <=
        2**62``).
    gamma_lower : array_like of float
        Lower bounds of ``gamma_i`` from floating point, made rigorous by the caller's error
        bound (generous is fine: lower values only lower the proposal levels); a non-finite
        one gives level 0.
    gamma_exact : callable
        ``i -> (g, e)``: ``gamma_i = g / e >= 0`` exactly (integers, ``e >= 1``); called once
        per proposal.
    """

    _SMALL = 256  # up to this many candidates the set-up runs in plain Python (faster)

    def __init__(
        self,
        multiplicity: Any,
        gamma_lower: Any,
        gamma_exact: Callable[[int], tuple[int, int]],
    ) -> None:
        self._gamma_exact = gamma_exact
        size = len(gamma_lower)
        # plain Python also where the multiplicities do not fit int64 (a huge implicit class)
        huge = not isinstance(multiplicity, np.ndarray) and sum(multiplicity) >= 1 << 62
        if size <= self._SMALL or huge:
            mult = [int(v) for v in multiplicity]
            level = [
                min(math.floor(max(x, 0.0) * _PER_LN2), LEVEL_CAP) if math.isfinite(x) else 0
                for x in (float(v) for v in gamma_lower)
            ]
            order = sorted(range(size), key=level.__getitem__)  # stable
            sorted_level = [level[i] for i in order]
            cum = list(itertools.accumulate(mult[i] for i in order))
            firsts = [0] + [j for j in range(1, size) if sorted_level[j] != sorted_level[j - 1]]
        else:  # numpy: the per-draw lookups below work on arrays and lists alike
            with np.errstate(invalid="ignore", over="ignore"):
                lower = np.maximum(np.asarray(gamma_lower, dtype=np.float64), 0.0)
                lev = np.floor(lower * _PER_LN2)
            # an estimate that overflowed proves nothing: level 0 is valid for every gamma >= 0
            lev = np.minimum(np.nan_to_num(lev, nan=0.0, posinf=0.0), LEVEL_CAP).astype(np.uint8)
            idx = np.argsort(lev, kind="stable")  # a radix sort on 8-bit levels
            srt = lev[idx]
            level, order = lev, idx
            cum = np.cumsum(np.asarray(multiplicity, dtype=np.int64)[idx])
            firsts = [0, *(np.flatnonzero(srt[1:] != srt[:-1]) + 1).tolist()]
            sorted_level = srt
        self._level, self._order, self._cum = level, order, cum
        # per distinct level (ascending): its multiplicities form cum[first - 1] .. cum[last]
        self._levels = [int(sorted_level[f]) for f in firsts]
        self._base = [int(cum[f - 1]) if f else 0 for f in firsts]
        self._block_end: list[int] = []
        total = 0
        for lev_k, base, end in zip(self._levels, self._base, [*self._base[1:], int(cum[-1])]):
            total += (end - base) << (LEVEL_CAP - lev_k)
            self._block_end.append(total)
        self._total = total

    def draw(self, words: WordSource) -> int:
        """One exact draw, from the next draws of ``words``."""
        while True:
            u = _below_big(words, self._total)
            block = bisect.bisect_right(self._block_end, u)
            start = self._block_end[block - 1] if block else 0
            offset = (u - start) >> (LEVEL_CAP - self._levels[block])
            target = self._base[block] + offset
            if isinstance(self._cum, list):
                pos = bisect.bisect_right(self._cum, target)
            else:
                pos = int(np.searchsorted(self._cum, target, side="right"))
            i = int(self._order[pos])
            if bernoulli_exp_shifted(words, *self._gamma_exact(i), int(self._level[i])):
                return i
