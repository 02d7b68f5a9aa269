"""Pure-numpy ChaCha20 counter-based streams: the reference twin of :mod:`privlearn.random`.

The ChaCha20 block function (RFC 8439, Section 2.3) is vectorised over blocks: the state is a
``(16, n_blocks)`` array of ``uint32`` and every quarter round acts on whole rows. The transforms
repeat the core's arithmetic operation by operation, so words and raw draws agree exactly and
floating-point draws agree to the last few ulps (the math library's: numpy's log / sin / cos
here, the core's own Box-Muller kernels and the C library's log there).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privlearn._checks import as_index
from privlearn._stream_base import (
    DIRECTION_OFFSET,
    GAMMA_SUM_MAX_SHAPE,
    POISSON_BLOCK,
    SEED_STREAM,
    StreamBase,
)

__all__ = [
    "Stream",
    "chacha20_block",
    "chacha20_blocks",
    "discrete_gaussian_round_variance",
    "discrete_gaussian_scale_bits",
    "key_from_seed",
    "noise_lattice",
    "round_shift_even",
]

_SIGMA = np.array([0x61707865, 0x3320646E, 0x79622D32, 0x6B206574], dtype=np.uint32)
_TWO_PI = 2.0 * np.pi
_U32 = np.uint64(0xFFFFFFFF)
_M53 = 2.0**-53


def _rotl(v: np.ndarray, n: int) -> np.ndarray:
    return (v << np.uint32(n)) | (v >> np.uint32(32 - n))


def _quarter(x: np.ndarray, a: int, b: int, c: int, d: int) -> None:
    """RFC 8439 Section 2.1 quarter round on rows a, b, c, d of the state (in place)."""
    x[a] += x[b]
    x[d] = _rotl(x[d] ^ x[a], 16)
    x[c] += x[d]
    x[b] = _rotl(x[b] ^ x[c], 12)
    x[a] += x[b]
    x[d] = _rotl(x[d] ^ x[a], 8)
    x[c] += x[d]
    x[b] = _rotl(x[b] ^ x[c], 7)


def _key_words(key: bytes) -> np.ndarray:
    return np.frombuffer(key, dtype="<u4").astype(np.uint32)


def chacha20_blocks(key: bytes, counters: np.ndarray, stream: int) -> np.ndarray:
    """ChaCha20 blocks for an array of 64-bit counters: ``(len(counters), 16)`` uint32."""
    counters = np.asarray(counters, dtype=np.uint64)
    nb = counters.shape[0]
    s = np.empty((16, nb), dtype=np.uint32)
    s[0:4] = _SIGMA[:, None]
    s[4:12] = _key_words(key)[:, None]
    s[12] = (counters & _U32).astype(np.uint32)
    s[13] = (counters >> np.uint64(32)).astype(np.uint32)
    s[14] = np.uint32(stream & 0xFFFFFFFF)
    s[15] = np.uint32(stream >> 32)
    x = s.copy()
    with np.errstate(over="ignore"):
        for _ in range(10):
            _quarter(x, 0, 4, 8, 12)
            _quarter(x, 1, 5, 9, 13)
            _quarter(x, 2, 6, 10, 14)
            _quarter(x, 3, 7, 11, 15)
            _quarter(x, 0, 5, 10, 15)
            _quarter(x, 1, 6, 11, 12)
            _quarter(x, 2, 7, 8, 13)
            _quarter(x, 3, 4, 9, 14)
        x += s
    return np.ascontiguousarray(x.T)


def chacha20_block(key: bytes, counter: int, stream: int) -> np.ndarray:
    """RFC 8439 block function: 16 ``uint32`` words (as :func:`privlearn.random.chacha20_block`)."""
    counter = as_index(counter, "counter", upper=(1 << 64) - 1)
    stream = as_index(stream, "stream", upper=(1 << 64) - 1)
    if not isinstance(key, (bytes, bytearray, memoryview)) or len(bytes(key)) != 32:
        raise ValueError("key must be exactly 32 bytes")
    return chacha20_blocks(bytes(key), np.array([counter], dtype=np.uint64), stream)[0]


def key_from_seed(seed: int) -> bytes:
    """The 32-byte key that ``Stream(seed=seed)`` uses: words 0-7 of the ChaCha20 block with the
    all-zero key, counter ``seed`` and stream ``SEED_STREAM``, little-endian."""
    seed = as_index(seed, "seed", upper=(1 << 64) - 1)
    words = chacha20_blocks(bytes(32), np.array([seed], dtype=np.uint64), SEED_STREAM)[0, :8]
    return words.astype("<u4").tobytes()


def _combine(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return lo.astype(np.uint64) | (hi.astype(np.uint64) << np.uint64(32))


def _unit(raw: np.ndarray) -> np.ndarray:
    return (raw >> np.uint64(11)).astype(np.float64) * _M53


def _std_exponential(raw: np.ndarray) -> np.ndarray:
    return -np.log(1.0 - _unit(raw))


def _box_muller(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r = np.sqrt(-2.0 * np.log(1.0 - _unit(a)))
    t = _TWO_PI * _unit(b)
    return r * np.cos(t), r * np.sin(t)


# ---- discrete Gaussian (exact, Python integers) -------------------------------------------
# The twin of the core's sampler (cpp/include/privlearn/random.hpp, "Discrete Gaussian"):
# Canonne, Kamath, Steinke (2020), Algorithm 3, with the discrete Laplace proposal drawn as
# floor(t E) for an exact exponential E and every Bernoulli(exp(-x)) decided by von Neumann's
# (1951) decreasing runs of lazy uniforms, on the 16-bit digit string of the draw. Every
# comparison is exact (Python integers), so the core and this twin agree bit for bit.

_DG_BLOCKS = 256
_DG_INDEX_LIMIT = 1 << 56
_DG_MAX_VARIANCE = 1 << 100
_DG_LAZY_DIGITS = 64


class _DigitReservoir:
    """A draw's 16-bit digit string (``digit``, from a subclass) and ``bit``: single bits,
    least significant first, from a reservoir digit taken from the string when empty
    (random.hpp, "Discrete Gaussian")."""

    __slots__ = ("_left", "_reservoir")

    def __init__(self) -> None:
        self._reservoir, self._left = 0, 0

    def digit(self) -> int:
        raise NotImplementedError

    def bit(self) -> int:
        if self._left == 0:
            self._reservoir, self._left = self.digit(), 16
        b = self._reservoir & 1
        self._reservoir >>= 1
        self._left -= 1
        return b


class _DrawDigits(_DigitReservoir):
    """The 16-bit digit string of draw ``index``: the words of blocks ``(index << 8) + b`` in
    order, each as its low then its high half (``first``: the 16 words of block ``b = 0``)."""

    __slots__ = ("_digits", "_id", "_index", "_key", "_pos", "_stream")

    def __init__(self, key: bytes, stream: int, index: int, first: np.ndarray) -> None:
        super().__init__()
        self._key, self._stream, self._index = key, stream, index
        self._digits = _halves(first)
        self._id, self._pos = 0, 0

    def digit(self) -> int:
        if self._pos == 32:
            self._id += 1
            if self._id == _DG_BLOCKS:
                raise RuntimeError("discrete_gaussian: a draw used all its 131072 random bits")
            words = chacha20_block(self._key, (self._index << 8) + self._id, self._stream)
            self._digits = _halves(words)
            self._pos = 0
        w = self._digits[self._pos]
        self._pos += 1
        return w


class _ScriptedDigits(_DigitReservoir):
    """A digit string given in advance (tests of rare paths; the core's
    ``random_discrete_gaussian_scripted``): ``used`` counts the digits taken; RuntimeError
    when they run out, as in the core."""

    __slots__ = ("_digits", "used")

    def __init__(self, digits: list[int]) -> None:
        super().__init__()
        self._digits, self.used = [int(w) for w in digits], 0

    def digit(self) -> int:
        if self.used == len(self._digits):
            raise RuntimeError("discrete_gaussian: the scripted words ran out")
        self.used += 1
        return self._digits[self.used - 1]


def _halves(words: np.ndarray) -> list[int]:
    out = []
    for w in words:
        out += [int(w) & 0xFFFF, int(w) >> 16]
    return out


def _lazy_digit(bits: _DigitReservoir, v: list[int], j: int) -> int:
    """Digit ``j`` of the lazy uniform ``v`` (a list of its digits so far), drawn if missing."""
    if j == _DG_LAZY_DIGITS:
        raise RuntimeError("discrete_gaussian: a comparison was undecided after 1024 bits")
    if len(v) == j:
        v.append(bits.digit())
    return v[j]


def _lazy_less(bits: _DigitReservoir, a: list[int], b: list[int]) -> bool:
    """``a < b`` for lazy uniforms: digits compared in order, a's missing digit drawn first."""
    j = 0
    while True:
        da = _lazy_digit(bits, a, j)
        db = _lazy_digit(bits, b, j)
        if da != db:
            return da < db
        j += 1


def _lazy_less_ratio(bits: _DigitReservoir, v: list[int], a: int, b: int) -> bool:
    """``v < a / b`` (0 < a < b): the base-2**16 digits of a / b against v's digits."""
    r, j = a, 0
    while True:
        dv = _lazy_digit(bits, v, j)
        digit, r = divmod(r << 16, b)
        if dv != digit:
            return dv < digit
        if r == 0:
            return False
        j += 1


def _decreasing_run(bits: _DigitReservoir, first: list[int]) -> int:
    """``max{k : V_1 > ... > V_k}`` for ``V_1 = first`` and fresh lazy uniforms after it."""
    prev, n = first, 1
    while True:
        nxt = [bits.digit()]
        if not _lazy_less(bits, nxt, prev):
            return n
        n += 1
        prev = nxt


def _floor_scaled_exponential(bits: _DigitReservoir, m: int) -> int:
    """``floor(2**m E)``, E ~ Exp(1) exactly (von Neumann 1951)."""
    k = 0
    while True:
        head = [bits.digit()]
        if _decreasing_run(bits, head) % 2 == 1:
            break
        k += 1
        if k >= ((1 << 62) >> m):
            raise RuntimeError("discrete_gaussian: the Laplace proposal exceeded 2^62")
    digits = (m + 15) // 16
    top = 0
    for j in range(digits):
        top = (top << 16) | _lazy_digit(bits, head, j)
    return (k << m) | (top >> (16 * digits - m))


def _bernoulli_exp_one(bits: _DigitReservoir) -> bool:
    """Bernoulli(exp(-1)): an even decreasing run from a fresh uniform."""
    return _decreasing_run(bits, [bits.digit()]) % 2 == 0


def _bernoulli_exp_fraction(bits: _DigitReservoir, a: int, b: int) -> bool:
    """Bernoulli(exp(-a / b)), 0 <= a < b: an even run a/b > V_1 > ... > V_n (von Neumann)."""
    if a == 0:
        return True
    head = [bits.digit()]
    if not _lazy_less_ratio(bits, head, a, b):
        return True
    return _decreasing_run(bits, head) % 2 == 0


def _discrete_gaussian_draw(bits: _DigitReservoir, s2: int, m: int) -> int:
    """One draw of N_Z(0, s2) (CKS 2020, Algorithm 3 with t = 2^m)."""
    c, den = s2 >> m, 2 * s2
    while True:
        x = _floor_scaled_exponential(bits, m)
        negative = bits.bit()
        if negative and x == 0:
            continue
        whole, rest = divmod((x - c) ** 2, den)
        accept = True
        while whole > 0 and accept:
            accept = _bernoulli_exp_one(bits)
            whole -= 1
        if accept:
            accept = _bernoulli_exp_fraction(bits, rest, den)
        if accept:
            return -x if negative else x


def discrete_gaussian_scale_bits(variance: int) -> int:
    """``m`` with ``t = 2**m`` the discrete Laplace scale of the sampler: ``floor(bitlen / 2)``."""
    return int(variance).bit_length() // 2


def discrete_gaussian_round_variance(variance: int) -> int:
    """The smallest valid sampler variance >= ``variance`` (a multiple of its ``t``)."""
    s2 = max(int(variance), 1)
    while True:
        mask = (1 << discrete_gaussian_scale_bits(s2)) - 1
        r = (s2 + mask) & ~mask
        if r == s2:
            return s2
        s2 = r


def check_discrete_gaussian_variance(variance: Any) -> int:
    """Validate a sampler variance: an int in ``[1, 2**100]``, a multiple of its ``t``."""
    if isinstance(variance, bool) or not isinstance(variance, (int, np.integer)):
        raise TypeError(f"variance must be an int, got {type(variance).__name__}")
    s2 = int(variance)
    if not 1 <= s2 <= _DG_MAX_VARIANCE:
        raise ValueError(f"variance must be an integer in [1, 2**100], got {s2}")
    if s2 & ((1 << discrete_gaussian_scale_bits(s2)) - 1):
        raise ValueError(
            "variance must be a multiple of t = 2**floor(bit_length / 2): round it up with "
            "discrete_gaussian_round_variance"
        )
    return s2


def round_shift_even(s: int, shift: int) -> int:
    """``s / 2**shift`` rounded half to even (exact integers)."""
    if shift <= 0:
        return int(s)
    q = int(s) >> shift
    rem = int(s) - (q << shift)
    half = 1 << (shift - 1)
    if rem > half or (rem == half and q & 1):
        q += 1
    return q


def noise_lattice(sigma: float, dim: int) -> tuple[int, int, int]:
    """``(frac_bits, shift, variance)`` of the lattice noise for noise multiplier ``sigma`` over
    ``dim`` coordinates (the twin of the core's ``noise_lattice``; see
    :func:`privlearn.random.noise_lattice`)."""
    sigma = float(sigma)
    if not 0.0 < sigma <= 2.0**40:
        raise ValueError(
            f"the noise multiplier of the lattice noise must lie in (0, 2^40], got {sigma}"
        )
    dim = int(dim)
    if dim < 1:
        raise ValueError("the noise needs at least one coordinate")
    f, e = math.frexp(sigma)
    shift = max(0, e - 15)
    frac_bits = 30 - shift
    r = math.isqrt(dim - 1) + 1 if shift > 0 else 0  # ceil(sqrt(dim))
    p = int(math.ldexp(f, 53)) * ((1 << frac_bits) + r)
    ex = e - 53
    if ex >= 0:
        ceil_x = p << ex
    elif -ex >= 120:
        ceil_x = 1
    else:
        ceil_x = -((-p) >> (-ex))
    ceil_x = max(ceil_x, 1)
    return frac_bits, shift, discrete_gaussian_round_variance(ceil_x * ceil_x)


def discrete_gaussian_at(key: bytes, stream: int, start: int, n: int, variance: int) -> np.ndarray:
    """Draws ``start`` to ``start + n - 1`` of N_Z(0, variance) (int64), exactly as the core."""
    s2 = check_discrete_gaussian_variance(variance)
    if start < 0 or n < 0 or start + n > _DG_INDEX_LIMIT:
        raise ValueError("discrete_gaussian: start + n exceeds the address space (2^56)")
    out = np.zeros(n, dtype=np.int64)
    if n == 0:
        return out
    m = discrete_gaussian_scale_bits(s2)
    idx = np.arange(start, start + n, dtype=np.uint64)
    first = chacha20_blocks(key, idx << np.uint64(8), stream)
    for k in range(n):
        out[k] = _discrete_gaussian_draw(_DrawDigits(key, stream, start + k, first[k]), s2, m)
    return out


class Stream(StreamBase):
    __doc__ = StreamBase.__doc__

    @staticmethod
    def _key_from_seed(seed: int) -> bytes:
        return key_from_seed(seed)

    # ---- sequential address space ----------------------------------------------------------
    def _blocks(self, first: int, count: int) -> np.ndarray:
        counters = np.uint64(first) + np.arange(count, dtype=np.uint64)
        return chacha20_blocks(self._key, counters, self._stream)

    def _words(self, start: int, n: int, n_threads: int) -> np.ndarray:
        if n == 0:
            return np.empty(0, dtype=np.uint32)
        first, last = start >> 4, (start + n - 1) >> 4
        flat = self._blocks(first, last - first + 1).reshape(-1)
        return flat[start - 16 * first : start - 16 * first + n].copy()

    def _raws(self, start: int, n: int, n_threads: int) -> np.ndarray:
        w = self._words(2 * start, 2 * n, n_threads)
        return _combine(w[0::2], w[1::2])

    def _uniform(self, start: int, n: int, n_threads: int) -> np.ndarray:
        return _unit(self._raws(start, n, n_threads))

    def _exponential(self, start: int, n: int, scale: float, n_threads: int) -> np.ndarray:
        return _std_exponential(self._raws(start, n, n_threads)) * scale

    def _laplace(self, start: int, n: int, scale: float, n_threads: int) -> np.ndarray:
        raw = self._raws(start, n, n_threads)
        e = _std_exponential(raw) * scale
        return np.where((raw & np.uint64(1)) == 1, -e, e)

    def _normal(self, start: int, n: int, n_threads: int) -> np.ndarray:
        if n == 0:
            return np.empty(0)
        first_pair, last_pair = start >> 1, (start + n - 1) >> 1
        raw = self._raws(2 * first_pair, 2 * (last_pair - first_pair + 1), n_threads)
        c, s = _box_muller(raw[0::2], raw[1::2])
        z = np.empty(2 * c.shape[0])
        z[0::2], z[1::2] = c, s
        return z[start - 2 * first_pair : start - 2 * first_pair + n]

    def _normal_at(self, indices: np.ndarray) -> np.ndarray:
        """``normal(i)`` for every address ``i`` in ``indices`` (any order), as ``normal(i, 1)``
        would give: the pair ``p = i // 2`` lives in words ``4 (p % 4) ..`` of block ``p // 4``.
        """
        i = np.asarray(indices, dtype=np.uint64).reshape(-1)
        if i.shape[0] == 0:
            return np.empty(0)
        p = i >> np.uint64(1)
        words = chacha20_blocks(self._key, p >> np.uint64(2), self._stream)
        o = (4 * (p & np.uint64(3))).astype(np.int64)
        rows = np.arange(i.shape[0])
        a = _combine(words[rows, o], words[rows, o + 1])
        b = _combine(words[rows, o + 2], words[rows, o + 3])
        c, s = _box_muller(a, b)
        return np.where((i & np.uint64(1)) == 0, c, s)

    def _discrete_gaussian(self, start: int, n: int, variance: int, n_threads: int) -> np.ndarray:
        return discrete_gaussian_at(self._key, self._stream, start, n, variance)

    # ---- row-addressed draws ---------------------------------------------------------------
    def _row_raws(self, rows: np.ndarray, offset: int, count: int) -> np.ndarray:
        """``row(i, offset .. offset + count - 1)`` for every i in ``rows``: (len(rows), count)."""
        rows = np.asarray(rows, dtype=np.uint64)
        if count == 0 or rows.shape[0] == 0:
            return np.empty((rows.shape[0], count), dtype=np.uint64)
        first, last = offset >> 3, (offset + count - 1) >> 3
        nb = last - first + 1
        counters = (
            (rows[:, None] << np.uint64(32)) + np.uint64(first) + np.arange(nb, dtype=np.uint64)
        )
        words = chacha20_blocks(self._key, counters.reshape(-1), self._stream)
        words = words.reshape(rows.shape[0], nb * 16)
        raw = _combine(words[:, 0::2], words[:, 1::2])
        lo = offset - 8 * first
        return raw[:, lo : lo + count]

    def _gamma_rows(self, rows: np.ndarray, shape: float, scale: float) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.uint64)
        if shape >= 1.0 and shape == np.floor(shape) and shape <= GAMMA_SUM_MAX_SHAPE:
            e = _std_exponential(self._row_raws(rows, 0, int(shape)))
            # cumsum: strictly sequential, the core's summation order
            return np.cumsum(e, axis=1)[:, -1] * scale
        # Marsaglia & Tsang (2000), vectorised over rows; attempt m uses 3 draws per row.
        a, boost, offset = shape, np.ones(rows.shape[0]), 0
        if a < 1.0:
            boost = np.power(1.0 - _unit(self._row_raws(rows, 0, 1)[:, 0]), 1.0 / shape)
            a, offset = a + 1.0, 1
        d = a - 1.0 / 3.0
        c = 1.0 / np.sqrt(9.0 * d)
        out = np.empty(rows.shape[0])
        pending = np.arange(rows.shape[0])
        attempt = 0
        while pending.size:
            raw = self._row_raws(rows[pending], offset + 3 * attempt, 3)
            x = np.sqrt(-2.0 * np.log(1.0 - _unit(raw[:, 0]))) * np.cos(_TWO_PI * _unit(raw[:, 1]))
            u = _unit(raw[:, 2])
            v = 1.0 + c * x
            ok = v > 0.0
            v = np.where(ok, v, 1.0)
            v = v * v * v
            with np.errstate(divide="ignore"):
                ok &= np.log(u) < 0.5 * x * x + d - d * v + d * np.log(v)
            g = d * v[ok]
            if offset == 1:
                g = g * boost[pending[ok]]
            out[pending[ok]] = g * scale
            pending = pending[~ok]
            attempt += 1
        return out

    def _gamma(self, start: int, n: int, shape: float, scale: float, n_threads: int) -> np.ndarray:
        return self._gamma_rows(np.arange(start, start + n, dtype=np.uint64), shape, scale)

    def _l2_laplace(
        self, start: int, n: int, dim: int, epsilon: float, n_threads: int
    ) -> np.ndarray:
        rows = np.arange(start, start + n, dtype=np.uint64)
        radius = self._gamma_rows(rows, float(dim), 2.0 / epsilon)
        n_pairs = (dim + 1) // 2
        raw = self._row_raws(rows, DIRECTION_OFFSET, 2 * n_pairs)
        c, s = _box_muller(raw[:, 0::2], raw[:, 1::2])
        z = np.empty((n, 2 * n_pairs))
        z[:, 0::2], z[:, 1::2] = c, s
        z = z[:, :dim]
        norm = np.sqrt(np.cumsum(z * z, axis=1)[:, -1]) if n else np.empty(0)
        bad = ~(norm > 0.0)
        factor = radius / np.where(bad, 1.0, norm)
        z = z * factor[:, None]
        if bad.any():  # probability ~2^-53 per pair: the core falls back to the first axis
            z[bad] = 0.0
            z[bad, 0] = radius[bad]
        return z

    def _choice(self, index: int, population: int, k: int) -> np.ndarray:
        out = np.empty(k, dtype=np.int64)
        if k == 0:
            return out
        swapped: dict[int, int] = {}
        buffer = self._row_raws(np.array([index]), 0, k)[0].tolist()
        used = 0
        for j in range(k):
            m = population - j
            t = (1 << 64) % m
            while True:
                if used == len(buffer):  # rejections (probability < m / 2^64 each) need more
                    buffer += self._row_raws(np.array([index]), used, 64)[0].tolist()
                x = buffer[used]
                used += 1
                if t == 0 or x < (1 << 64) - t:
                    break
            r = j + x % m
            vj, vr = swapped.get(j, j), swapped.get(r, r)
            swapped[r], swapped[j] = vj, vr
            out[j] = vr
        return out

    def _poisson_sample(
        self, index: int, population: int, q: float, start: int, stop: int
    ) -> np.ndarray:
        if q == 0.0 or start == stop:
            return np.empty(0, dtype=np.int64)
        if q == 1.0:
            return np.arange(start, stop, dtype=np.int64)
        # math.log is the C library's log, as in the core (numpy's SIMD log may differ by 1 ulp,
        # which could move a gap across an integer).
        log_keep = math.log1p(-q)
        chunk = max(64, int(q * min(POISSON_BLOCK, population) * 1.1) + 16)
        out: list[int] = []
        for b in range(start // POISSON_BLOCK, -(-stop // POISSON_BLOCK)):
            end = min(population, (b + 1) * POISSON_BLOCK)
            last = min(end, stop)
            pos, consumed, k, buffer = b * POISSON_BLOCK - 1, 0, 0, []
            while True:
                if k == len(buffer):  # the next draws of the block's walk
                    offset = b * 2 * POISSON_BLOCK + consumed
                    buffer, k = self._row_raws(np.array([index]), offset, chunk)[0].tolist(), 0
                x = math.log(1.0 - (buffer[k] >> 11) * _M53) / log_keep
                k += 1
                consumed += 1
                if not x < end - pos:
                    break
                pos += math.floor(x) + 1
                if pos >= last:
                    break
                if pos >= start:
                    out.append(pos)
        return np.array(out, dtype=np.int64)

    def _poisson_mask(self, index: int, population: int, q: float, n_threads: int) -> np.ndarray:
        return _unit(self._row_raws(np.array([index]), 0, population)[0]) < q
