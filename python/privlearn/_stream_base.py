"""The `Stream` API shared by the C++ backend (:mod:`privlearn.random`) and the numpy reference
(:mod:`privlearn.reference.random`): key handling, argument checks and documentation live here
once; each backend implements the ``_``-prefixed primitives.

This module is pure Python + numpy (the reference may import it: it never touches ``_core``).
"""

from __future__ import annotations

import abc
import os
from typing import Any

import numpy as np

from privlearn._checks import as_index as _as_index
from privlearn._checks import as_positive as _as_positive
from privlearn._checks import as_probability
from privlearn._checks import as_threads as _as_threads

__all__ = [
    "StreamBase",
    "SEED_STREAM",
    "ROW_COUNT",
    "ROW_LENGTH",
    "DIRECTION_OFFSET",
    "GAMMA_SUM_MAX_SHAPE",
    "POISSON_BLOCK",
    "POISSON_LAYOUT_VERSION",
]

#: Stream id used to expand an integer seed into a key (see ``key_from_seed``).
SEED_STREAM = 0x6465657320796B70
#: Row-addressed draws: ``row(i, j)`` exists for ``i < ROW_COUNT`` and ``j < ROW_LENGTH``.
ROW_COUNT = 1 << 32
ROW_LENGTH = 1 << 35
#: ``l2_laplace`` takes its direction normals from ``row(i, DIRECTION_OFFSET + ...)``.
DIRECTION_OFFSET = 1 << 34
#: Integer ``gamma`` shapes up to this are sums of exponentials; larger ones use Marsaglia-Tsang.
GAMMA_SUM_MAX_SHAPE = 1 << 16
#: ``poisson_sample`` walks each block of ``POISSON_BLOCK`` elements separately (layout 2).
POISSON_BLOCK = 1 << 20
#: Version of the Poisson sampler's address layout: 1 = one walk from element 0 (until
#: privlearn 0.1, issue 14), 2 = one walk per block of ``POISSON_BLOCK`` elements, block ``b``
#: reading ``row(index, b * 2**21 + j)``. Models fitted with Poisson batches differ between the
#: two layouts (same distribution, different draws).
POISSON_LAYOUT_VERSION = 2

_U64 = 1 << 64


def _check_span(start: int, n: int, limit: int, what: str) -> None:
    if start + n > limit:
        raise ValueError(f"{what}: start + n = {start + n} exceeds the address space ({limit})")


class StreamBase(abc.ABC):
    """A ChaCha20 counter-based random stream: ``(key, stream id)`` addresses every draw.

    Parameters
    ----------
    seed : int or None, default=None
        ``None`` draws a fresh 256-bit key from the operating system (``os.urandom``, i.e.
        getrandom on Linux): the right default for a private release. An int in
        ``[0, 2**64)`` is expanded deterministically to a key (the first 8 words of the ChaCha20
        block with the all-zero key, counter ``seed`` and stream ``SEED_STREAM``), for
        reproducible research runs.
    key : bytes, optional
        An explicit 32-byte key (mutually exclusive with ``seed``).
    stream : int, default=0
        64-bit stream id. Use one stream id per logical random quantity (batch selection, noise,
        ...): draws of different methods on the same stream share the address space.

    Notes
    -----
    Addresses (identical in the C++ core and the numpy reference, so either reproduces the
    other's draws exactly, for any thread count):

    - ``word(w)`` is word ``w % 16`` of the ChaCha20 block with counter ``w // 16`` (RFC 8439
      block function, 20 rounds; state words 12-13 hold the 64-bit counter, 14-15 the stream).
    - ``raw(j) = word(2j) | word(2j+1) << 32``; ``uniform(j) = (raw(j) >> 11) * 2**-53``.
    - ``normal(i)``: Box-Muller on ``uniform(2p), uniform(2p+1)`` with ``p = i // 2``:
      ``r = sqrt(-2 log(1 - u1))``, ``theta = 2 pi u2``; even ``i`` gives ``r cos theta``, odd
      ``i`` gives ``r sin theta``. The core evaluates log, sin and cos with its own vector
      kernels (``cpp/src/box_muller.cpp``, fdlibm's method, within 3 ulps of the exact value;
      numpy's are within 2-3 ulps), so its normals and the reference's agree to ~1e-15
      relative rather than bit for bit.
    - ``exponential(j) = -log(1 - uniform(j)) * scale``; ``laplace(j)`` is the same magnitude
      with the sign taken from the lowest bit of ``raw(j)`` (set = negative).
    - Row-addressed draws (variable length): ``row(i, j)`` is the 64-bit draw from words
      ``2(j % 8), 2(j % 8) + 1`` of block ``i * 2**32 + j // 8``. ``gamma``, ``l2_laplace``,
      ``choice_without_replacement``, ``poisson_sample`` and ``poisson_mask`` use row
      ``start + k`` (or ``index``).
    """

    def __init__(self, seed: int | None = None, *, key: bytes | None = None, stream: int = 0):
        if seed is not None and key is not None:
            raise ValueError("give either seed or key, not both")
        if key is not None:
            if not isinstance(key, (bytes, bytearray, memoryview)):
                raise TypeError(f"key must be bytes, got {type(key).__name__}")
            key = bytes(key)
            if len(key) != 32:
                raise ValueError(f"key must be exactly 32 bytes, got {len(key)}")
            self._key = key
        elif seed is not None:
            self._key = self._key_from_seed(_as_index(seed, "seed", upper=_U64 - 1))
        else:
            self._key = os.urandom(32)
        self._stream = _as_index(stream, "stream", upper=_U64 - 1)
        self.seed = seed

    # ---- identity ------------------------------------------------------------------------
    @property
    def key(self) -> bytes:
        """The 32-byte ChaCha20 key (treat it as a secret for a private release)."""
        return self._key

    @property
    def stream(self) -> int:
        """The 64-bit stream id."""
        return self._stream

    def substream(self, stream: int) -> StreamBase:
        """The same key with another stream id (an independent stream)."""
        return type(self)(key=self._key, stream=stream)

    def __repr__(self) -> str:
        origin = f"seed={self.seed}" if self.seed is not None else "key=<secret>"
        return f"{type(self).__name__}({origin}, stream={self._stream})"

    # ---- public API: validation, then the backend primitive ------------------------------
    def words(self, start: int, n: int, *, n_threads: int | None = None) -> np.ndarray:
        """ChaCha20 output words ``start .. start + n - 1`` as ``uint32``."""
        start = _as_index(start, "start", upper=_U64 - 1)
        n = _as_index(n, "n", upper=_U64 - 1)
        _check_span(start, n, _U64 - 1, "words")
        return self._words(start, n, _as_threads(n_threads))

    def raws(self, start: int, n: int, *, n_threads: int | None = None) -> np.ndarray:
        """64-bit draws ``raw(start) .. raw(start + n - 1)`` as ``uint64``."""
        start, n = self._span(start, n, (_U64 - 1) >> 1, "raws")
        return self._raws(start, n, _as_threads(n_threads))

    def uniform(self, start: int, n: int, *, n_threads: int | None = None) -> np.ndarray:
        """Uniform doubles in ``[0, 1)`` with 53 random bits."""
        start, n = self._span(start, n, (_U64 - 1) >> 1, "uniform")
        return self._uniform(start, n, _as_threads(n_threads))

    def normal(self, start: int, n: int, *, n_threads: int | None = None) -> np.ndarray:
        """Standard normal draws by Box-Muller (both branches used: see Notes)."""
        start, n = self._span(start, n, (_U64 - 1) >> 2, "normal")
        return self._normal(start, n, _as_threads(n_threads))

    def discrete_gaussian(
        self, start: int, n: int, variance: int, *, n_threads: int | None = None
    ) -> np.ndarray:
        """Exact discrete Gaussian draws ``N_Z(0, variance)`` (int64) at addresses
        ``start`` to ``start + n - 1`` (Canonne, Kamath, Steinke 2020, Algorithm 3, with a
        discrete Laplace proposal ``floor(t E)`` and every ``Bernoulli(exp(-x))`` decided by von
        Neumann's 1951 decreasing runs of lazy uniforms).

        ``variance`` is an int in ``[1, 2**100]`` and a multiple of ``t = 2**m``,
        ``m = floor(variance.bit_length() / 2)`` (round it up with
        :func:`privlearn.reference.random.discrete_gaussian_round_variance`). Draw ``i`` reads
        the 16-bit digits of blocks ``i * 2**8 + b`` (``b < 256``, ``i < 2**56``), each word's
        low half first; every comparison is decided exactly (the core's floating-point
        shortcut only decides the cases it can prove). The core and the numpy reference give
        the same integers; the full specification is in ``cpp/include/privlearn/random.hpp``.
        """
        start, n = self._span(start, n, 1 << 56, "discrete_gaussian")
        if isinstance(variance, bool) or not isinstance(variance, (int, np.integer)):
            raise TypeError(f"variance must be an int, got {type(variance).__name__}")
        variance = int(variance)
        if not 1 <= variance <= 1 << 100:
            raise ValueError(f"variance must be an integer in [1, 2**100], got {variance}")
        m = variance.bit_length() // 2
        if variance % (1 << m):
            raise ValueError(
                f"variance must be a multiple of t = 2**{m} (round it up with "
                "discrete_gaussian_round_variance)"
            )
        return self._discrete_gaussian(start, n, variance, _as_threads(n_threads))

    def exponential(
        self, start: int, n: int, scale: float = 1.0, *, n_threads: int | None = None
    ) -> np.ndarray:
        """Exponential draws with mean ``scale`` by inversion."""
        start, n = self._span(start, n, (_U64 - 1) >> 1, "exponential")
        return self._exponential(start, n, _as_positive(scale, "scale"), _as_threads(n_threads))

    def laplace(
        self, start: int, n: int, scale: float = 1.0, *, n_threads: int | None = None
    ) -> np.ndarray:
        """Laplace(0, scale) draws: a random sign times an exponential (textbook floating point;
        the privacy core adds floating-point-safe release mechanisms on top)."""
        start, n = self._span(start, n, (_U64 - 1) >> 1, "laplace")
        return self._laplace(start, n, _as_positive(scale, "scale"), _as_threads(n_threads))

    def gamma(
        self,
        start: int,
        n: int,
        shape: float,
        scale: float = 1.0,
        *,
        n_threads: int | None = None,
    ) -> np.ndarray:
        """Gamma(shape, scale) draws, draw ``k`` from row ``start + k``.

        Integer shapes up to ``GAMMA_SUM_MAX_SHAPE`` (``2**16``) are a sum of ``shape``
        exponentials (``row(i, 0..shape-1)``, summed in order; O(shape) per draw); other
        shapes, including integers above ``2**16`` (O(1) expected per draw, so a shape of
        ``2**34`` costs no more than ``2**17``), use Marsaglia & Tsang (2000): attempt ``m``
        takes a Box-Muller
        (cosine) normal from ``row(i, o+3m), row(i, o+3m+1)`` and a uniform from
        ``row(i, o+3m+2)``; ``shape < 1`` draws Gamma(shape + 1) and multiplies by
        ``(1 - uniform(row(i, 0)))**(1/shape)`` (then ``o = 1``, else ``o = 0``).
        """
        start, n = self._span(start, n, ROW_COUNT, "gamma")
        return self._gamma(
            start,
            n,
            _as_positive(shape, "shape"),
            _as_positive(scale, "scale"),
            _as_threads(n_threads),
        )

    def l2_laplace(
        self, start: int, n: int, dim: int, epsilon: float, *, n_threads: int | None = None
    ) -> np.ndarray:
        """``(n, dim)`` noise vectors with density proportional to ``exp(-(epsilon/2) ||z||)``.

        The noise of Song, Chaudhuri & Sarwate (2013), Section 3 ("Differentially private
        updates"): radius ``Gamma(dim, 2/epsilon)`` (``gamma`` on row ``start + k``: a sum of
        exponentials for ``dim <= 2**16``, Marsaglia-Tsang above, whose draws therefore differ
        from releases made before that threshold existed) times a uniform direction (``dim``
        Box-Muller normals from ``row(i, DIRECTION_OFFSET + ...)``, divided by their norm).
        """
        start, n = self._span(start, n, ROW_COUNT, "l2_laplace")
        dim = _as_index(dim, "dim", upper=DIRECTION_OFFSET)
        if dim < 1:
            raise ValueError("dim must be >= 1")
        return self._l2_laplace(
            start, n, dim, _as_positive(epsilon, "epsilon"), _as_threads(n_threads)
        )

    def choice_without_replacement(self, index: int, population: int, k: int) -> np.ndarray:
        """``k`` distinct ints from ``range(population)`` (int64), from row ``index``.

        Partial Fisher-Yates: for ``j = 0..k-1`` draw ``r`` uniform in ``[0, population - j)``
        (exact rejection: a draw ``x`` is rejected when ``x >= 2**64 - (2**64 mod m)``, else
        ``r = x mod m``; draws consumed in order from the row), swap positions ``j`` and ``j+r``
        and emit position ``j``. The order is random; ``k == population`` is a uniformly random
        permutation.
        """
        index = _as_index(index, "index", upper=ROW_COUNT - 1)
        population = _as_index(population, "population", upper=(1 << 62))
        k = _as_index(k, "k", upper=_U64)
        if k > population:
            raise ValueError(f"k must be <= population, got k={k}, population={population}")
        return self._choice(index, population, k)

    def permutation(self, index: int, n: int) -> np.ndarray:
        """A uniformly random permutation of ``range(n)`` from row ``index``."""
        return self.choice_without_replacement(index, n, n)

    def poisson_sample(
        self, index: int, population: int, q: float, *, start: int = 0, stop: int | None = None
    ) -> np.ndarray:
        """Sorted int64 indices of a Poisson subsample (each element kept with probability
        ``q``), in time proportional to the sample, from row ``index``.

        Geometric gaps, one walk per block of :data:`POISSON_BLOCK` elements (address layout
        :data:`POISSON_LAYOUT_VERSION`): block ``b`` reads ``x_j = log(1 - uniform(row(index,
        b * 2**21 + j))) / log1p(-q)`` and its next kept element is ``pos + floor(x_j) + 1``
        (``pos`` starts at ``b * 2**20 - 1``) until the block's end. Used by DP-SGD and DP-SCD
        with Poisson sampling, where the mask form costs ``population`` draws per step.

        ``start`` / ``stop`` return only the kept elements in ``[start, stop)``, walking only the
        blocks that meet the range: exactly the whole sample's elements there (a worker holding
        rows ``[start, stop)`` samples its part of the batch).
        """
        index = _as_index(index, "index", upper=ROW_COUNT - 1)
        population = _as_index(population, "population", upper=(1 << 34) - 1)
        stop = population if stop is None else _as_index(stop, "stop", upper=population)
        start = _as_index(start, "start", upper=stop)
        return self._poisson_sample(index, population, as_probability(q, "q"), start, stop)

    def poisson_mask(
        self, index: int, population: int, q: float, *, n_threads: int | None = None
    ) -> np.ndarray:
        """Boolean mask with element ``e`` included iff ``uniform(row(index, e)) < q``
        (independent inclusion with probability ``q``: Poisson subsampling)."""
        index = _as_index(index, "index", upper=ROW_COUNT - 1)
        population = _as_index(population, "population", upper=ROW_LENGTH)
        q = as_probability(q, "q")
        return self._poisson_mask(index, population, q, _as_threads(n_threads))

    @staticmethod
    def _span(start: Any, n: Any, limit: int, what: str) -> tuple[int, int]:
        start = _as_index(start, "start", upper=limit)
        n = _as_index(n, "n", upper=limit)
        _check_span(start, n, limit, what)
        return start, n

    # ---- backend primitives ----------------------------------------------------------------
    @staticmethod
    @abc.abstractmethod
    def _key_from_seed(seed: int) -> bytes: ...

    @abc.abstractmethod
    def _words(self, start: int, n: int, n_threads: int) -> np.ndarray: ...

    @abc.abstractmethod
    def _raws(self, start: int, n: int, n_threads: int) -> np.ndarray: ...

    @abc.abstractmethod
    def _uniform(self, start: int, n: int, n_threads: int) -> np.ndarray: ...

    @abc.abstractmethod
    def _normal(self, start: int, n: int, n_threads: int) -> np.ndarray: ...

    @abc.abstractmethod
    def _discrete_gaussian(
        self, start: int, n: int, variance: int, n_threads: int
    ) -> np.ndarray: ...

    @abc.abstractmethod
    def _exponential(self, start: int, n: int, scale: float, n_threads: int) -> np.ndarray: ...

    @abc.abstractmethod
    def _laplace(self, start: int, n: int, scale: float, n_threads: int) -> np.ndarray: ...

    @abc.abstractmethod
    def _gamma(
        self, start: int, n: int, shape: float, scale: float, n_threads: int
    ) -> np.ndarray: ...

    @abc.abstractmethod
    def _l2_laplace(
        self, start: int, n: int, dim: int, epsilon: float, n_threads: int
    ) -> np.ndarray: ...

    @abc.abstractmethod
    def _choice(self, index: int, population: int, k: int) -> np.ndarray: ...

    @abc.abstractmethod
    def _poisson_sample(
        self, index: int, population: int, q: float, start: int, stop: int
    ) -> np.ndarray: ...

    @abc.abstractmethod
    def _poisson_mask(
        self, index: int, population: int, q: float, n_threads: int
    ) -> np.ndarray: ...
