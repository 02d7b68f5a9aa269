"""Real CKKS through TenSEAL's SEAL bindings (``tenseal.sealapi``): the simulator's check.

:class:`TenSEALEngine` runs the very same operation sequence as the simulator (it subclasses
:class:`~privlearn.he.Simulator` and replaces only the slot arithmetic), on SEAL ciphertexts:
``Evaluator.multiply`` + ``relinearize`` + ``rescale_to_next``, ``multiply_plain``,
``rotate_vector``, ``mod_switch_to_next``, ``add``. Op counters, levels and the cost estimate are
therefore those of the simulator, and decrypted results can be compared with it slot by slot.

SEAL uses an RNS chain of primes close to, not equal to, ``2**log_p``; like TenSEAL's own vectors
we reset the scale to ``2**log_p`` after every rescale, which multiplies the slot values by
``2**log_p / q``. :func:`tenseal_params` passes the chain's primes to :class:`CKKSParams`, so the
simulator models that factor exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privlearn.he._params import CKKSParams
from privlearn.he._sim import Ciphertext, Simulator

__all__ = ["TenSEALEngine", "tenseal_params"]


def _seal() -> Any:
    try:
        import tenseal.sealapi as seal
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "backend='tenseal' needs TenSEAL: pip install tenseal (or privlearn[test])"
        ) from exc
    return seal


def _bit_sizes(log_q0: int, levels: int, log_p: int, log_special: int) -> list[int]:
    return [log_q0] + [log_p] * levels + [log_special]


def tenseal_params(
    log_n: int = 14, levels: int = 7, log_p: int = 40, log_q0: int = 60, log_special: int = 60
) -> CKKSParams:
    """:class:`CKKSParams` matching a SEAL CKKS context with ``levels`` rescaling primes.

    The coefficient modulus is ``[log_q0, log_p x levels, log_special]`` bits
    (``CoeffModulus.Create``), SEAL's uniform ternary secret, key switching digit per prime.
    SEAL itself refuses chains beyond 128-bit security (e.g. more than 438 bits at
    ``log_n = 14``).
    """
    if isinstance(log_n, bool) or log_n not in (13, 14, 15):
        raise ValueError(f"the TenSEAL backend supports log_n 13-15, got {log_n!r}")
    if isinstance(levels, bool) or int(levels) < 1:
        raise ValueError(f"levels must be a positive int, got {levels!r}")
    seal = _seal()
    sizes = _bit_sizes(log_q0, int(levels), log_p, log_special)
    primes = [m.value() for m in seal.CoeffModulus.Create(1 << log_n, sizes)]
    chain = tuple(reversed(primes[1:-1]))  # SEAL drops the last data prime first
    return CKKSParams(
        log_n=log_n,
        log_q=log_q0 + int(levels) * log_p,
        log_p=log_p,
        log_q0=log_q0,
        log_special=log_special,
        ks_digit_bits=max(log_q0, log_p),
        hamming_weight=None,
        primes=chain,
    )


class TenSEALEngine(Simulator):
    """The simulator's operations on real SEAL ciphertexts (see the module docstring).

    Parameters
    ----------
    params : CKKSParams
        Made by :func:`tenseal_params` (it carries the RNS chain).
    seed : int or None, default=None
        Seeds SEAL's random generator (Blake2xb) for keys and encryption, for reproducible
        tests; ``None``: SEAL's default (OS entropy). A seeded run is not secure.
    """

    def __init__(self, params: CKKSParams, seed: int | None = None):
        if not isinstance(params, CKKSParams):
            raise TypeError(f"params must be a CKKSParams, got {type(params).__name__}")
        if params.log_n not in (13, 14, 15):
            raise ValueError(f"the TenSEAL backend supports log_n 13-15, got {params.log_n}")
        if params.primes is None:
            raise ValueError("the TenSEAL backend needs params from privlearn.he.tenseal_params")
        if params.slots != params.ring_degree // 2:
            raise ValueError("the TenSEAL backend uses all N/2 slots")
        super().__init__(params, noise=True, seed=0, backend="core")
        self.backend = "tenseal"
        seal = _seal()
        self._seal = seal
        n = params.ring_degree
        levels = len(params.primes)
        sizes = _bit_sizes(params.log_q0, levels, params.log_p, params.log_special)
        parms = seal.EncryptionParameters(seal.SCHEME_TYPE.CKKS)
        parms.set_poly_modulus_degree(n)
        parms.set_coeff_modulus(seal.CoeffModulus.Create(n, sizes))
        if seed is not None:
            from privlearn.reference.random import key_from_seed

            words = np.frombuffer(key_from_seed(int(seed)), dtype="<u8").tolist()
            parms.set_random_generator(seal.Blake2xbPRNGFactory(words + words))
        self._ctx = seal.SEALContext(parms, True, seal.SEC_LEVEL_TYPE.TC128)
        if not self._ctx.parameters_set():
            raise ValueError(f"SEAL refused the parameters: {self._ctx.parameters_error_message()}")
        keygen = seal.KeyGenerator(self._ctx)
        self._keygen = keygen
        pk = seal.PublicKey()
        keygen.create_public_key(pk)
        self._relin = seal.RelinKeys()
        keygen.create_relin_keys(self._relin)
        self._galois: dict[int, Any] = {}
        self._encryptor = seal.Encryptor(self._ctx, pk)
        self._decryptor = seal.Decryptor(self._ctx, keygen.secret_key())
        self._evaluator = seal.Evaluator(self._ctx)
        self._encoder = seal.CKKSEncoder(self._ctx)

    def prepare_rotations(self, steps: list[int]) -> None:
        """Generate the Galois keys of ``steps`` now (e.g. from a plan's ``rotation_steps``),
        so that key generation is not timed with the computation."""
        for k in steps:
            self._gk(int(k))

    @property
    def tracks_error(self) -> bool:
        return False

    def _max_abs(self, ct: Ciphertext) -> float:
        return 0.0

    def _make_kernels(self, backend: str) -> Any:
        return None

    # ---- helpers ---------------------------------------------------------------------------
    def _plain(self, values: Any, scale_bits: int, parms_id: Any) -> Any:
        pt = self._seal.Plaintext()
        if np.isscalar(values):
            self._encoder.encode(float(values), 2.0**scale_bits, pt)
        else:
            self._encoder.encode(list(map(float, values)), 2.0**scale_bits, pt)
        self._evaluator.mod_switch_to_inplace(pt, parms_id)
        return pt

    def _rescale(self, ct: Any, scale_bits: int) -> Any:
        self._evaluator.rescale_to_next_inplace(ct)
        ct.scale = 2.0**scale_bits
        return ct

    def _gk(self, k: int) -> Any:
        key = k % self.params.slots
        if key not in self._galois:
            gk = self._seal.GaloisKeys()
            elt = self._ctx.key_context_data().galois_tool().get_elt_from_step(int(k))
            self._keygen.create_galois_keys([elt], gk)
            self._galois[key] = (gk, int(k))
        return self._galois[key][0]

    def _cts(self, a: Ciphertext, b: Ciphertext) -> list[tuple[Any, Any]]:
        return [(x, b.data[0] if b.n_ct == 1 else b.data[i]) for i, x in enumerate(a.data)]

    # ---- slot arithmetic on SEAL ciphertexts -------------------------------------------------
    def _v_encrypt(self, values: np.ndarray, scale_bits: int, std: float) -> Any:
        self._ids()
        out = []
        for row in values:
            pt = self._seal.Plaintext()
            self._encoder.encode(list(map(float, row)), 2.0**scale_bits, pt)
            ct = self._seal.Ciphertext()
            self._encryptor.encrypt(pt, ct)
            out.append(ct)
        return out

    def _v_decrypt(self, ct: Ciphertext) -> np.ndarray:
        rows = []
        for c in ct.data:
            pt = self._seal.Plaintext()
            self._decryptor.decrypt(c, pt)
            rows.append(np.asarray(self._encoder.decode_double(pt), dtype=np.float64))
        return np.vstack(rows)

    def _v_mod_switch(self, ct: Ciphertext, mod_bits: int) -> Any:
        steps = (ct.mod_bits - mod_bits) // self.params.log_p
        out = []
        for c in ct.data:
            for _ in range(steps):
                r = self._seal.Ciphertext()
                self._evaluator.mod_switch_to_next(c, r)
                c = r
            out.append(c)
        return out

    def _v_add(self, a: Ciphertext, b: Ciphertext, op: str) -> Any:
        out = []
        for x, y in self._cts(a, b):
            r = self._seal.Ciphertext()
            (self._evaluator.add if op == "add" else self._evaluator.sub)(x, y, r)
            out.append(r)
        return out

    def _v_add_const(self, a: Ciphertext, c: float, c_enc: float) -> Any:
        out = []
        for x in a.data:
            r = self._seal.Ciphertext()
            self._evaluator.add_plain(x, self._plain(c, a.scale_bits, x.parms_id()), r)
            out.append(r)
        return out

    def _v_mul(self, a: Ciphertext, b: Ciphertext, factor: float, std: float) -> Any:
        self._ids()
        out = []
        for x, y in self._cts(a, b):
            r = self._seal.Ciphertext()
            self._evaluator.multiply(x, y, r)
            self._evaluator.relinearize_inplace(r, self._relin)
            out.append(self._rescale(r, a.scale_bits))
        return out

    def _v_mul_plain(
        self, a: Ciphertext, plain: np.ndarray, scale_bits: int, factor: float, std: float
    ) -> Any:
        self._ids()
        out = []
        for x in a.data:
            r = self._seal.Ciphertext()
            self._evaluator.multiply_plain(x, self._plain(plain[0], scale_bits, x.parms_id()), r)
            out.append(self._rescale(r, a.scale_bits))
        return out

    def _v_mul_const(
        self, a: Ciphertext, c: float, c_enc: float, scale_bits: int, factor: float, std: float
    ) -> Any:
        self._ids()
        out = []
        for x in a.data:
            r = self._seal.Ciphertext()
            self._evaluator.multiply_plain(x, self._plain(c, scale_bits, x.parms_id()), r)
            out.append(self._rescale(r, a.scale_bits))
        return out

    def _v_rotate(self, a: Ciphertext, k: int, std: float) -> Any:
        self._ids()
        out = []
        for x in a.data:
            r = self._seal.Ciphertext()
            self._evaluator.rotate_vector(x, int(k), self._gk(k), r)
            out.append(r)
        return out

    def _v_rotate_sum(self, a: Ciphertext, steps: list[int], std: float) -> Any:
        self._ids(len(steps))
        out = []
        for x in a.data:
            acc = x
            for k in steps:
                r = self._seal.Ciphertext()
                self._evaluator.rotate_vector(acc, int(k), self._gk(k), r)
                total = self._seal.Ciphertext()
                self._evaluator.add(acc, r, total)
                acc = total
            out.append(acc)
        return out

    def _v_sum_cts(self, a: Ciphertext) -> Any:
        acc = a.data[0]
        for x in a.data[1:]:
            total = self._seal.Ciphertext()
            self._evaluator.add(acc, x, total)
            acc = total
        return [acc]
