"""The CKKS-like slot-layout simulator: ciphertexts as slot values plus CKKS bookkeeping.

Nothing is encrypted. A :class:`Ciphertext` is a batch of ``n_ct`` ciphertexts sharing their
metadata: the slot values (a ``(n_ct, slots)`` float64 array), the remaining modulus bits, the
scale (bits) and a tracked bound on the CKKS error in the slot values. Operations consume
modulus exactly as CKKS does: a multiplication by a factor encoded at scale ``2**s`` is followed
by a rescale by ``s`` bits (HEAAN's power-of-two moduli, Cheon, Kim, Kim, Song 2017, Section
3.3), operands at different levels are first mod-switched to the lower one, and a rescale below
``log_q0`` bits raises :class:`DepthExhaustedError`.

Error model (``noise=True``). Each operation adds the average-case error of real CKKS, in slot
units, as seeded draws (see :mod:`privlearn.reference.he` for the draw and its addresses):

==========================  ===================================================================
fresh encryption            ``sigma^2 (2N/3 + h + 1) / P^2 + (1 + h) / 12 + 1 / 12``: the
                            public-key error ``v e + e0 + e1 s`` (ternary ``v``) of an
                            encryption at modulus ``QP`` divided by ``P`` (as SEAL does), the
                            rounding of that division, and the encoding rounding
rescale by ``2^r``          ``(1 + h) / 12`` (rounding of both components, ``tau0 + tau1 s``)
key switching (relin,       ``digits N sigma^2 2^(2(w - log P)) / 3 + (1 + h) / 12`` (the
rotation)                   decomposed ``d e / P`` term, digits in ``[0, 2^w)``, and the
                            mod-down rounding)
plaintext encoding          ``1 / 12`` per coefficient, times the other factor
==========================  ===================================================================

A coefficient error of variance ``V`` becomes, after the canonical embedding, a slot error whose
real part has variance ``N V / 2`` (divided by the scale squared). These are the estimates of
Cheon-Kim-Kim-Song 2017 (Lemmas 1-3, turned from high-probability bounds into variances) and of
the average-case analysis of Costache, Curtis, Hales, Murphy, Ogilvie, Player 2020 ("On the
precision loss in approximate homomorphic encryption"); Kim, Papadimitriou, Polyakov 2021
("Approximate homomorphic encryption with reduced approximation error") analyse the same error
sources for RNS implementations. ``h`` is the secret's Hamming weight, ``w`` the key-switching
digit size and ``P`` the special modulus. Constants are encoded exactly as CKKS does (rounded
to the scale's grid).

The tracked bound is kept per slot: it adds ``6 sigma`` of every error draw and propagates
worst-case through the arithmetic (sums add bounds, rotations move them with the slots, products
use the actual slot magnitudes: ``|a b - a' b'| <= |a'| e_b + (|b'| + e_b) e_a``). Keeping it
per slot matters: a mask zeroes the error of the masked slots, so the replication that follows
does not multiply it. (The simulator's own draws never exceed 3.5 sigma; for real CKKS a
6-sigma excursion of a Gaussian slot error has probability about 2e-9.)

Checked against SEAL (through TenSEAL, ``tests/test_he.py``): the fresh-encryption error matches
to a few percent; the key-switching error of SEAL's RNS decomposition varies by an order of
magnitude between key realisations, and the model's value lies inside that range.

``noise=False`` gives exact arithmetic (no draws, no constant rounding, no RNS factors), so the
simulator reproduces a plaintext evaluation of the same packed algorithm.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from privlearn._checks import as_index, as_real, as_threads
from privlearn.he._cost import CostModel, default_cost_model
from privlearn.he._params import CKKSParams, DepthExhaustedError
from privlearn.reference.he import NOISE_VARIANCE

__all__ = ["Ciphertext", "Simulator", "BOUND_SIGMAS", "COUNTER_NAMES"]

#: Standard deviations of each error draw added to the tracked bound.
BOUND_SIGMAS = 6.0
#: Names of the operation counters.
COUNTER_NAMES = (
    "ct_ct_mult",
    "ct_pt_mult",
    "rotations",
    "rescales",
    "key_switches",
    "mod_switches",
    "additions",
    "encryptions",
    "decryptions",
)
_Z_STD = math.sqrt(NOISE_VARIANCE)
#: Stream id of the simulated CKKS error ("ckks err").
NOISE_STREAM = 0x636B6B7320657272


class Ciphertext:
    """A batch of ``n_ct`` ciphertexts with shared metadata (see the module docstring).

    ``data`` holds the slot values (``(n_ct, slots)`` array) for the simulator, or real
    ciphertexts for a real-CKKS engine; ``error`` the per-slot error bound (same shape) when
    tracked, else None.
    """

    __slots__ = ("data", "n_ct", "mod_bits", "scale_bits", "error")

    def __init__(self, data: Any, n_ct: int, mod_bits: int, scale_bits: int, error: Any):
        self.data = data
        self.n_ct = n_ct
        self.mod_bits = mod_bits
        self.scale_bits = scale_bits
        self.error = error

    def __repr__(self) -> str:
        return (
            f"Ciphertext(n_ct={self.n_ct}, mod_bits={self.mod_bits}, scale_bits="
            f"{self.scale_bits}, error={self.error})"
        )


def _check_ct(ct: Any, name: str) -> Ciphertext:
    if not isinstance(ct, Ciphertext):
        raise TypeError(f"{name} must be a Ciphertext, got {type(ct).__name__}")
    return ct


def _finite_slots(values: Any, name: str) -> np.ndarray:
    """A float64 array of real, finite slot values (CKKS encodes real numbers: a NaN or an
    infinity has no encoding, and a complex value would lose its imaginary part)."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    arr = np.atleast_2d(arr.astype(np.float64, copy=False))
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values, which CKKS cannot encode")
    return arr


def _finite_const(c: Any, name: str = "c") -> float:
    value = as_real(c, name, numbers_only=True)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number (CKKS cannot encode it), got {value}")
    return value


def _rotation(k: Any) -> int:
    """A rotation step: an int (bools, floats and strings are refused)."""
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"a rotation step must be an int, got {type(k).__name__}")
    return int(k)


def _kernels(backend: str) -> Any:
    if backend == "core":
        from privlearn import _core

        return _core
    if backend == "reference":
        from privlearn.reference import he

        return he
    raise ValueError(f"backend must be 'core' or 'reference', got {backend!r}")


class Simulator:
    """CKKS-like slot-layout simulator (see the module docstring).

    Parameters
    ----------
    params : CKKSParams
    noise : bool, default=True
        Add the seeded CKKS error after each operation (and round constants as CKKS encodes
        them). ``False``: exact arithmetic.
    seed : int or None, default=None
        Seed of the error draws (``None``: fresh OS entropy).
    backend : {"core", "reference"}, default="core"
        The C++ kernels or their numpy twin (bit-identical results).
    dry : bool, default=False
        Track levels, counters and cost only (no slot values): the planner's mode.
    cost_model : CostModel, optional
        Default: the calibrated model (:func:`privlearn.he._cost.default_cost_model`).
    n_threads : int, optional
        Threads of the C++ kernels (results do not depend on it): ``None`` for the default,
        ``-1`` for all cores, or a positive int (0, other negatives and floats are errors).
    """

    def __init__(
        self,
        params: CKKSParams,
        *,
        noise: bool = True,
        seed: int | None = None,
        backend: str = "core",
        dry: bool = False,
        cost_model: CostModel | None = None,
        n_threads: int | None = None,
    ):
        if not isinstance(params, CKKSParams):
            raise TypeError(f"params must be a CKKSParams, got {type(params).__name__}")
        self.params = params
        self.noise = bool(noise)
        self.dry = bool(dry)
        self.backend = backend
        self._k = None if self.dry else self._make_kernels(backend)
        from privlearn.reference.random import Stream

        self._key = Stream(seed=seed).key
        self._n_threads = as_threads(n_threads)
        self.cost_model = default_cost_model() if cost_model is None else cost_model
        self.counts: Counter[str] = Counter({k: 0 for k in COUNTER_NAMES})
        self.rotation_keys: set[int] = set()
        self.est_seconds = 0.0
        self._op_id = 0

    def _make_kernels(self, backend: str) -> Any:
        return _kernels(backend)

    # ---- error model ---------------------------------------------------------------------
    def _slot_std(self, coef_var: float, scale_bits: float) -> float:
        n = self.params.ring_degree
        return math.sqrt(n * coef_var / 2.0) / 2.0**scale_bits

    def _fresh_var(self) -> float:
        # public-key encryption at the key-switching modulus QP, then division by P (SEAL,
        # HEAAN with P ~ Q): the RLWE terms shrink by P, the rounding of the division remains
        p = self.params
        n = p.ring_degree
        rlwe = p.sigma**2 * (2.0 * n / 3.0 + p.secret_weight + 1.0) * 2.0 ** (-2 * p.log_special)
        return rlwe + self._rescale_var() + 1.0 / 12.0

    def _rescale_var(self) -> float:
        return (1.0 + self.params.secret_weight) / 12.0

    def _ks_var(self, mod_bits: int) -> float:
        p = self.params
        w = mod_bits if p.ks_digit_bits is None else min(mod_bits, p.ks_digit_bits)
        digits = math.ceil(mod_bits / w)
        # digits are non-negative representatives in [0, 2^w): second moment 2^(2w) / 3
        decomposed = digits * p.ring_degree * p.sigma**2 * 2.0 ** (2.0 * (w - p.log_special)) / 3
        return decomposed + self._rescale_var()

    # ---- bookkeeping ---------------------------------------------------------------------
    def _charge(self, kind: str, mod_bits: int, n_ct: int, times: int = 1) -> None:
        self.est_seconds += (
            times * n_ct * self.cost_model.seconds(kind, self.params.log_n, mod_bits)
        )

    def _ids(self, k: int = 1) -> int:
        first = self._op_id
        self._op_id += k
        return first

    def _after_rescale(self, mod_bits: int, bits: int) -> int:
        new = mod_bits - bits
        if new < self.params.log_q0:
            raise DepthExhaustedError(
                f"rescale by {bits} bits needs {bits} more modulus bits than the "
                f"{mod_bits - self.params.log_q0} left above log_q0 = {self.params.log_q0} "
                f"(log_q = {self.params.log_q})"
            )
        return new

    def _rescale_factor(self, mod_bits: int, bits: int) -> float:
        """The RNS factor ``2**bits / prime`` of a rescale at ``mod_bits`` (1 for HEAAN)."""
        p = self.params
        if p.primes is None or not self.noise:
            return 1.0
        if bits != p.log_p:
            raise ValueError(f"an RNS chain rescales by log_p = {p.log_p} bits only, not {bits}")
        index = (p.log_q - mod_bits) // p.log_p
        return 2.0**bits / p.primes[index]

    def _scale(self, scale_bits: Any) -> int:
        """``scale_bits`` (default ``log_p``) as an int in ``[1, log_q]``."""
        p = self.params
        if scale_bits is None:
            return p.log_p
        return as_index(scale_bits, "scale_bits", lower=1, upper=p.log_q)

    def _encode_const(self, c: float, scale_bits: int) -> float:
        if not self.noise:
            return float(c)
        s = 2.0**scale_bits
        return float(np.rint(c * s) / s)

    def _max_abs(self, ct: Ciphertext) -> float:
        return float(self._k.he_max_abs(ct.data, self._n_threads))

    def _align(self, a: Ciphertext, b: Ciphertext) -> tuple[Ciphertext, Ciphertext]:
        bits = min(a.mod_bits, b.mod_bits)
        return self.mod_switch(a, bits), self.mod_switch(b, bits)

    def _noise_args(self, std: float) -> tuple[bytes, int, int, float]:
        scale = std / _Z_STD if self.noise else 0.0
        return self._key, NOISE_STREAM, self._ids(), scale

    # ---- error bounds (per slot; None when not tracked) --------------------------------------
    @property
    def tracks_error(self) -> bool:
        """Whether per-slot error bounds are tracked (simulation with noise on)."""
        return self.noise and not self.dry

    def _full(self, like: Ciphertext, value: float) -> np.ndarray:
        return np.full((1, self.params.slots), float(value))

    def _e_add(self, ea: Any, eb: Any, extra: float = 0.0) -> Any:
        if not self.tracks_error:
            return None
        k = self._k
        e = k.he_binary(ea, eb, "add", 1.0, self._key, 0, 0, 0.0, self._n_threads)
        if extra:
            e = k.he_scalar(e, "add", extra, 1.0, self._key, 0, 0, 0.0, self._n_threads)
        return e

    def _e_mul(self, a: Ciphertext, b_vals: Any, eb: Any, factor: float, fixed: float) -> Any:
        if not self.tracks_error:
            return None
        return self._k.he_bound_mul(a.data, a.error, b_vals, eb, factor, fixed, self._n_threads)

    # ---- operations ----------------------------------------------------------------------
    def encrypt(self, values: np.ndarray, scale_bits: int | None = None) -> Ciphertext:
        """Fresh encryption of a ``(n_ct, slots)`` array (or one row) at the full modulus."""
        p = self.params
        s = self._scale(scale_bits)
        values = _finite_slots(values, "values")
        if values.ndim != 2 or values.shape[1] != p.slots:
            raise ValueError(f"values must have {p.slots} slots per ciphertext, got {values.shape}")
        top = float(np.max(np.abs(values))) if values.size else 0.0
        if top > 0.0 and math.log2(top) + s >= p.log_q - 1:
            raise ValueError(
                f"values up to {top:.3g} are too large to encode at scale 2^{s} under a "
                f"{p.log_q}-bit modulus (|v| 2^scale must stay below 2^{p.log_q - 1}): scale the "
                "data down"
            )
        n_ct = values.shape[0]
        std = self._slot_std(self._fresh_var(), s)
        self.counts["encryptions"] += n_ct
        self._charge("encrypt", p.log_q, n_ct)
        data = self._v_encrypt(values, s, std)
        err = np.full(values.shape, BOUND_SIGMAS * std) if self.tracks_error else None
        return Ciphertext(data, n_ct, p.log_q, s, err)

    def decrypt(self, ct: Ciphertext) -> np.ndarray | None:
        """The slot values ``(n_ct, slots)`` (with the accumulated error); None in a dry run."""
        _check_ct(ct, "ct")
        self.counts["decryptions"] += ct.n_ct
        self._charge("decrypt", ct.mod_bits, ct.n_ct)
        if self.dry:
            return None
        return self._v_decrypt(ct)

    def mod_switch(self, ct: Ciphertext, mod_bits: int) -> Ciphertext:
        """Drop modulus down to ``mod_bits`` (no error, no scale change).

        ``mod_bits`` must be an int in ``[log_q0, ct.mod_bits]``: a switch up is impossible and
        one below ``log_q0`` leaves too little modulus to decrypt.
        """
        _check_ct(ct, "ct")
        if isinstance(mod_bits, (bool, np.bool_)) or not isinstance(mod_bits, (int, np.integer)):
            raise TypeError(f"mod_bits must be an int, got {type(mod_bits).__name__}")
        mod_bits = int(mod_bits)
        if mod_bits > ct.mod_bits:
            raise ValueError(f"cannot mod-switch up (from {ct.mod_bits} to {mod_bits} bits)")
        if mod_bits < self.params.log_q0:
            raise ValueError(
                f"mod_bits ({mod_bits}) must be >= log_q0 = {self.params.log_q0}, the modulus "
                "decryption needs"
            )
        if mod_bits == ct.mod_bits:
            return ct
        self.counts["mod_switches"] += ct.n_ct
        data = self._v_mod_switch(ct, mod_bits)
        return Ciphertext(data, ct.n_ct, mod_bits, ct.scale_bits, ct.error)

    def _add(self, a: Ciphertext, b: Ciphertext, op: str) -> Ciphertext:
        _check_ct(a, "a")
        _check_ct(b, "b")
        if a.scale_bits != b.scale_bits:
            raise ValueError(f"scales differ: 2^{a.scale_bits} vs 2^{b.scale_bits}")
        if b.n_ct not in (1, a.n_ct):
            raise ValueError("operands have incompatible ciphertext counts")
        a, b = self._align(a, b)
        self.counts["additions"] += a.n_ct
        self._charge("add", a.mod_bits, a.n_ct)
        data = self._v_add(a, b, op)
        return Ciphertext(data, a.n_ct, a.mod_bits, a.scale_bits, self._e_add(a.error, b.error))

    def add(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """a + b (aligned to the lower level; ``b`` may be a single ciphertext, broadcast)."""
        return self._add(a, b, "add")

    def sub(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """a - b."""
        return self._add(a, b, "sub")

    def add_const(self, a: Ciphertext, c: float) -> Ciphertext:
        """a + c, with c encoded at a's scale (no level consumed)."""
        _check_ct(a, "a")
        c = _finite_const(c)
        c_enc = self._encode_const(c, a.scale_bits)
        self.counts["additions"] += a.n_ct
        self._charge("add", a.mod_bits, a.n_ct)
        data = self._v_add_const(a, c, c_enc)
        err = None
        if self.tracks_error:
            err = self._k.he_scalar(
                a.error, "add", abs(c_enc - c), 1.0, self._key, 0, 0, 0.0, self._n_threads
            )
        return Ciphertext(data, a.n_ct, a.mod_bits, a.scale_bits, err)

    def mul(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """a * b (ciphertext x ciphertext), relinearised, rescaled by b's scale bits.

        ``b`` is the factor: the product has scale ``2^(s_a + s_b)`` and the rescale removes
        ``s_b`` bits (e.g. 40 for a ``B-bar`` encrypted at 40 bits), leaving a's scale.
        """
        _check_ct(a, "a")
        _check_ct(b, "b")
        if b.n_ct not in (1, a.n_ct):
            raise ValueError("operands have incompatible ciphertext counts")
        a, b = self._align(a, b)
        bits = self._after_rescale(a.mod_bits, b.scale_bits)
        factor = self._rescale_factor(a.mod_bits, b.scale_bits)
        std = math.hypot(
            self._slot_std(self._ks_var(a.mod_bits), a.scale_bits + b.scale_bits),
            self._slot_std(self._rescale_var(), a.scale_bits),
        )
        self.counts["ct_ct_mult"] += a.n_ct
        self.counts["key_switches"] += a.n_ct
        self.counts["rescales"] += a.n_ct
        self._charge("mul", a.mod_bits, a.n_ct)
        err = self._e_mul(a, b.data, b.error, factor, BOUND_SIGMAS * std)
        data = self._v_mul(a, b, factor, std)
        return Ciphertext(data, a.n_ct, bits, a.scale_bits, err)

    def mul_plain(
        self, a: Ciphertext, plain: np.ndarray, scale_bits: int | None = None
    ) -> Ciphertext:
        """a * plain (a ``(1, slots)`` plaintext vector encoded at ``2^scale_bits``), rescaled."""
        _check_ct(a, "a")
        s = self._scale(scale_bits)
        plain = _finite_slots(plain, "plain")
        if (
            plain.ndim != 2
            or plain.shape[1] != self.params.slots
            or plain.shape[0]
            not in (
                1,
                a.n_ct,
            )
        ):
            raise ValueError(
                f"plain must have shape (1, {self.params.slots}) or ({a.n_ct}, "
                f"{self.params.slots}), got {plain.shape}"
            )
        bits = self._after_rescale(a.mod_bits, s)
        factor = self._rescale_factor(a.mod_bits, s)
        self.counts["ct_pt_mult"] += a.n_ct
        self.counts["rescales"] += a.n_ct
        self._charge("mul_plain", a.mod_bits, a.n_ct)
        std, err = 0.0, None
        if not self.dry:
            ma = self._max_abs(a)
            std = math.hypot(
                ma * self._slot_std(1.0 / 12.0, s),
                self._slot_std(self._rescale_var(), a.scale_bits),
            )
            err = self._e_mul(a, plain, np.zeros_like(plain), factor, BOUND_SIGMAS * std)
        data = self._v_mul_plain(a, plain, s, factor, std)
        return Ciphertext(data, a.n_ct, bits, a.scale_bits, err)

    def mul_const(self, a: Ciphertext, c: float, scale_bits: int | None = None) -> Ciphertext:
        """a * c with the constant encoded at ``2^scale_bits`` (rounded), rescaled."""
        _check_ct(a, "a")
        c = _finite_const(c)
        s = self._scale(scale_bits)
        c_enc = self._encode_const(c, s)
        bits = self._after_rescale(a.mod_bits, s)
        factor = self._rescale_factor(a.mod_bits, s)
        std = self._slot_std(self._rescale_var(), a.scale_bits)
        self.counts["ct_pt_mult"] += a.n_ct
        self.counts["rescales"] += a.n_ct
        self._charge("mul_plain", a.mod_bits, a.n_ct)
        err = None
        if self.tracks_error:
            err = self._e_mul(
                a,
                self._full(a, c_enc),
                self._full(a, abs(c_enc - c)),
                factor,
                BOUND_SIGMAS * std,
            )
        data = self._v_mul_const(a, c, c_enc, s, factor, std)
        return Ciphertext(data, a.n_ct, bits, a.scale_bits, err)

    def rotate(self, a: Ciphertext, k: int) -> Ciphertext:
        """Left rotation of every ciphertext's slots by ``k`` (key switching)."""
        _check_ct(a, "a")
        k = _rotation(k)
        std = self._slot_std(self._ks_var(a.mod_bits), a.scale_bits)
        self._count_rotations(a, [k])
        data = self._v_rotate(a, int(k), std)
        err = None
        if self.tracks_error:
            err = self._k.he_rotate(a.error, int(k), self._key, 0, 0, 0.0, self._n_threads)
            err = self._k.he_scalar(
                err, "add", BOUND_SIGMAS * std, 1.0, self._key, 0, 0, 0.0, self._n_threads
            )
        return Ciphertext(data, a.n_ct, a.mod_bits, a.scale_bits, err)

    def rotate_sum(self, a: Ciphertext, steps: Sequence[int]) -> Ciphertext:
        """For each step s in order: ``a <- a + rotate(a, s)`` (sum over slot strides)."""
        _check_ct(a, "a")
        steps = [_rotation(s) for s in steps]
        std = self._slot_std(self._ks_var(a.mod_bits), a.scale_bits)
        self._count_rotations(a, steps)
        self.counts["additions"] += a.n_ct * len(steps)
        self._charge("add", a.mod_bits, a.n_ct, len(steps))
        data = self._v_rotate_sum(a, steps, std)
        err = None
        if self.tracks_error:
            # e <- e + rot(e) + f per step, i.e. R(e) + (2^k - 1) f for a constant f
            err = self._k.he_rotate_sum(a.error, steps, self._key, 0, 0, 0.0, self._n_threads)
            extra = (2.0 ** len(steps) - 1.0) * BOUND_SIGMAS * std
            err = self._k.he_scalar(err, "add", extra, 1.0, self._key, 0, 0, 0.0, self._n_threads)
        return Ciphertext(data, a.n_ct, a.mod_bits, a.scale_bits, err)

    def sum_cts(self, a: Ciphertext) -> Ciphertext:
        """The sum of the batch's ciphertexts (one ciphertext)."""
        _check_ct(a, "a")
        self.counts["additions"] += a.n_ct - 1
        self._charge("add", a.mod_bits, a.n_ct - 1)
        data = self._v_sum_cts(a)
        err = self._k.he_sum_rows(a.error, self._n_threads) if self.tracks_error else None
        return Ciphertext(data, 1, a.mod_bits, a.scale_bits, err)

    def error_bound(self, ct: Ciphertext, slots: Any = None) -> float | None:
        """The tracked bound on the error of ``ct``'s slots (max over ``slots`` of ciphertext 0,
        default all); 0 without noise, None for dry runs and real CKKS."""
        if self.dry:
            return None
        if not self.noise:
            return 0.0
        if ct.error is None:
            return None
        e = ct.error[0] if slots is None else ct.error[0, slots]
        return float(np.max(e))

    def _count_rotations(self, a: Ciphertext, steps: list[int]) -> None:
        slots = self.params.slots
        for k in steps:
            if k % slots == 0:
                raise ValueError(f"rotation by {k} is the identity on {slots} slots")
            self.rotation_keys.add(k % slots)
        self.counts["rotations"] += a.n_ct * len(steps)
        self.counts["key_switches"] += a.n_ct * len(steps)
        self._charge("rotate", a.mod_bits, a.n_ct, len(steps))

    # ---- slot arithmetic (overridden by real-CKKS engines) ---------------------------------
    def _v_encrypt(self, values: np.ndarray, scale_bits: int, std: float) -> Any:
        if self.dry:
            self._ids()
            return None
        return self._k.he_noise(values, *self._noise_args(std), self._n_threads)

    def _v_decrypt(self, ct: Ciphertext) -> np.ndarray:
        return np.array(ct.data, copy=True)

    def _v_mod_switch(self, ct: Ciphertext, mod_bits: int) -> Any:
        return ct.data

    def _v_add(self, a: Ciphertext, b: Ciphertext, op: str) -> Any:
        if self.dry:
            return None
        return self._k.he_binary(a.data, b.data, op, 1.0, self._key, 0, 0, 0.0, self._n_threads)

    def _v_add_const(self, a: Ciphertext, c: float, c_enc: float) -> Any:
        if self.dry:
            return None
        return self._k.he_scalar(a.data, "add", c_enc, 1.0, self._key, 0, 0, 0.0, self._n_threads)

    def _v_mul(self, a: Ciphertext, b: Ciphertext, factor: float, std: float) -> Any:
        args = self._noise_args(std)
        if self.dry:
            return None
        return self._k.he_binary(a.data, b.data, "mul", factor, *args, self._n_threads)

    def _v_mul_plain(
        self, a: Ciphertext, plain: np.ndarray, scale_bits: int, factor: float, std: float
    ) -> Any:
        args = self._noise_args(std)
        if self.dry:
            return None
        return self._k.he_binary(a.data, plain, "mul", factor, *args, self._n_threads)

    def _v_mul_const(
        self, a: Ciphertext, c: float, c_enc: float, scale_bits: int, factor: float, std: float
    ) -> Any:
        args = self._noise_args(std)
        if self.dry:
            return None
        return self._k.he_scalar(a.data, "mul", c_enc, factor, *args, self._n_threads)

    def _v_rotate(self, a: Ciphertext, k: int, std: float) -> Any:
        args = self._noise_args(std)
        if self.dry:
            return None
        return self._k.he_rotate(a.data, k, *args, self._n_threads)

    def _v_rotate_sum(self, a: Ciphertext, steps: list[int], std: float) -> Any:
        first = self._ids(len(steps))
        if self.dry:
            return None
        scale = std / _Z_STD if self.noise else 0.0
        return self._k.he_rotate_sum(
            a.data, steps, self._key, NOISE_STREAM, first, scale, self._n_threads
        )

    def _v_sum_cts(self, a: Ciphertext) -> Any:
        if self.dry:
            return None
        return self._k.he_sum_rows(a.data, self._n_threads)
