"""Counter-based random streams (ChaCha20) backed by the C++ core.

The same API, with the same draws, is implemented in pure numpy by
:mod:`privlearn.reference.random`; see :class:`Stream` for the address layout and transforms.

Examples
--------
>>> from privlearn.random import Stream
>>> s = Stream(seed=7, stream=1)
>>> z = s.normal(start=0, n=5)                 # draws 0..4
>>> bool((s.normal(start=3, n=2) == z[3:]).all())  # any draw can be recomputed by address
True
"""

from __future__ import annotations

import numpy as np

from privlearn import _core
from privlearn._checks import as_index
from privlearn._stream_base import POISSON_BLOCK, POISSON_LAYOUT_VERSION, StreamBase

__all__ = [
    "POISSON_BLOCK",
    "POISSON_LAYOUT_VERSION",
    "Stream",
    "chacha20_block",
    "key_from_seed",
    "lattice_noise_description",
    "noise_lattice",
]


def chacha20_block(key: bytes, counter: int, stream: int) -> np.ndarray:
    """The RFC 8439 ChaCha20 block function (20 rounds) as 16 ``uint32`` words.

    Parameters
    ----------
    key : bytes
        32-byte key.
    counter : int
        64-bit block counter (state words 12-13, low word first).
    stream : int
        64-bit stream id / nonce (state words 14-15). The RFC's 96-bit nonce layout maps to
        ``counter = word12 | word13 << 32`` and ``stream = word14 | word15 << 32``.
    """
    counter = as_index(counter, "counter", upper=(1 << 64) - 1)
    stream = as_index(stream, "stream", upper=(1 << 64) - 1)
    return _core.chacha20_block(_check_key(key), counter, stream)


def key_from_seed(seed: int) -> bytes:
    """The 32-byte key that ``Stream(seed=seed)`` uses."""
    return _core.key_from_seed(as_index(seed, "seed", upper=(1 << 64) - 1))


def noise_lattice(sigma: float, dim: int) -> tuple[int, int, int]:
    """The lattice of the exact Gaussian-mechanism noise on a fixed-point sum (the core's
    ``random::noise_lattice``; twin: :func:`privlearn.reference.random.noise_lattice`).

    For noise multiplier ``sigma`` (noise standard deviation / L2 sensitivity ``bound``) over
    ``dim`` coordinates of a sum held exactly in units of ``bound * 2**-30``
    (:mod:`privlearn.fixed_point`), returns ``(frac_bits, shift, variance)``: the noisy sum is
    released as the integer vector ``round_half_even(S / 2**shift) + Y`` in units of
    ``bound * 2**-frac_bits`` with ``Y`` i.i.d. ``N_Z(0, variance)`` (exact discrete Gaussian,
    :meth:`Stream.discrete_gaussian`). ``shift = max(0, e - 15)`` where
    ``2**(e-1) <= sigma < 2**e`` (so ``shift = 0`` and no rounding for ``sigma < 2**15``),
    ``frac_bits = 30 - shift``, and ``variance = ceil(sigma (2**frac_bits + r))**2`` rounded up
    to a multiple of the sampler's ``t``, with ``r = 0`` when ``shift = 0`` and
    ``ceil(sqrt(dim))`` otherwise (the extra L2 sensitivity of rounding, paid with more noise).
    The release is accounted as the rounded continuous Gaussian (a post-processing of the
    continuous Gaussian mechanism on the integer sum) plus a computed slack for the distance
    between the discrete and the rounded Gaussian: see :mod:`privlearn.accounting.lattice`.
    """
    if not isinstance(sigma, (int, float, np.floating, np.integer)) or isinstance(sigma, bool):
        raise TypeError(f"sigma must be a real number, got {type(sigma).__name__}")
    dim = as_index(dim, "dim", lower=1, upper=1 << 62)
    frac_bits, shift, lo, hi = _core.noise_lattice(float(sigma), dim)
    return int(frac_bits), int(shift), int(lo) | (int(hi) << 64)


def lattice_noise_description(sigma: float, bound: str = "C") -> str:
    """How the Gaussian noise of multiplier ``sigma`` is released, for privacy statements: the
    exact discrete Gaussian on the lattice ``bound * 2**-k`` (:func:`noise_lattice`)."""
    frac_bits = noise_lattice(sigma, 1)[0]
    return (
        f"discrete Gaussian on the lattice {bound}*2^-{frac_bits}, sampled exactly (Canonne, "
        f"Kamath, Steinke 2020) and added to the exact fixed-point sum; floating point only "
        f"after the noise"
    )


def _check_key(key: bytes) -> bytes:
    if not isinstance(key, (bytes, bytearray, memoryview)):
        raise TypeError(f"key must be bytes, got {type(key).__name__}")
    key = bytes(key)
    if len(key) != 32:
        raise ValueError(f"key must be exactly 32 bytes, got {len(key)}")
    return key


class Stream(StreamBase):
    __doc__ = StreamBase.__doc__

    @staticmethod
    def _key_from_seed(seed: int) -> bytes:
        return _core.key_from_seed(seed)

    def _words(self, start: int, n: int, n_threads: int) -> np.ndarray:
        return _core.random_words(self._key, self._stream, start, n, n_threads)

    def _raws(self, start: int, n: int, n_threads: int) -> np.ndarray:
        return _core.random_raws(self._key, self._stream, start, n, n_threads)

    def _uniform(self, start: int, n: int, n_threads: int) -> np.ndarray:
        return _core.random_uniform(self._key, self._stream, start, n, n_threads)

    def _normal(self, start: int, n: int, n_threads: int) -> np.ndarray:
        return _core.random_normal(self._key, self._stream, start, n, n_threads)

    def _discrete_gaussian(self, start: int, n: int, variance: int, n_threads: int) -> np.ndarray:
        return _core.random_discrete_gaussian(
            self._key, self._stream, start, n, variance & ((1 << 64) - 1), variance >> 64, n_threads
        )

    def _exponential(self, start: int, n: int, scale: float, n_threads: int) -> np.ndarray:
        return _core.random_exponential(self._key, self._stream, start, n, scale, n_threads)

    def _laplace(self, start: int, n: int, scale: float, n_threads: int) -> np.ndarray:
        return _core.random_laplace(self._key, self._stream, start, n, scale, n_threads)

    def _gamma(self, start: int, n: int, shape: float, scale: float, n_threads: int) -> np.ndarray:
        return _core.random_gamma(self._key, self._stream, start, n, shape, scale, n_threads)

    def _l2_laplace(
        self, start: int, n: int, dim: int, epsilon: float, n_threads: int
    ) -> np.ndarray:
        return _core.random_l2_laplace(self._key, self._stream, start, n, dim, epsilon, n_threads)

    def _choice(self, index: int, population: int, k: int) -> np.ndarray:
        return _core.choice_without_replacement(self._key, self._stream, index, population, k)

    def _poisson_sample(
        self, index: int, population: int, q: float, start: int, stop: int
    ) -> np.ndarray:
        return _core.poisson_sample(self._key, self._stream, index, population, q, start, stop)

    def _poisson_mask(self, index: int, population: int, q: float, n_threads: int) -> np.ndarray:
        return _core.poisson_mask(self._key, self._stream, index, population, q, n_threads)
