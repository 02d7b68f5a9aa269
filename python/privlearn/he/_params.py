"""CKKS parameters and the HomomorphicEncryption.org security table."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CKKSParams",
    "DepthExhaustedError",
    "HE_STANDARD_MAX_LOG_Q",
    "estimate_security",
]


class DepthExhaustedError(RuntimeError):
    """A CKKS operation needs more modulus than the ciphertext has left.

    Raised by a rescale (after a multiplication) that would take a ciphertext's modulus below
    ``log_q0`` bits: real CKKS would then decrypt to garbage. :func:`privlearn.he.plan_logreg`
    tells in advance how many iterations fit.
    """


#: Largest log2(q) (the whole key-switching modulus Q*P) for 128/192/256-bit classical security,
#: from the HomomorphicEncryption.org security standard (Albrecht et al., "Homomorphic
#: Encryption Security Standard", 2018, Tables 1-2), per secret distribution and log2(N).
HE_STANDARD_MAX_LOG_Q: dict[str, dict[int, tuple[int, int, int]]] = {
    "uniform": {
        10: (29, 21, 16),
        11: (56, 39, 31),
        12: (111, 77, 60),
        13: (220, 154, 120),
        14: (440, 307, 239),
        15: (883, 613, 478),
    },
    "ternary": {
        10: (27, 19, 14),
        11: (54, 37, 29),
        12: (109, 75, 58),
        13: (218, 152, 118),
        14: (438, 305, 237),
        15: (881, 611, 476),
    },
}
_LEVELS = (128.0, 192.0, 256.0)
#: Below this estimate the extrapolation of the table is not trusted: such parameters are refused.
MIN_SECURITY = 64.0


def estimate_security(log_n: int, log_qp: float, secret: str = "ternary") -> float:
    """Estimated classical security (bits) of RLWE with ring degree ``2**log_n`` and modulus
    ``2**log_qp``, by interpolating the HE standard's table.

    The table gives, for each ``N`` in ``2**10 .. 2**15``, the largest ``log q`` at 128, 192 and
    256 bits. Security is close to a function of ``x = N / log q`` alone (the table's ``log q``
    doubles with ``N``), so we interpolate linearly in ``x`` between the three tabulated points;
    rings larger than ``2**15`` use the ``2**15`` row scaled by ``N / 2**15``. For the paper's
    HEAAN parameters (``log_n = 16``, ``log q = 1200`` and a key-switching modulus ``P ~ Q``,
    i.e. ``log qp = 2400``) this gives about 89 bits; Kim et al. 2018a (and Chiang, Section 5)
    quote 80 bits from the 2017 LWE estimator.

    Outside the table, two documented rules (so the estimate is never negative or inflated):

    - **Larger moduli** (below 128 bits): the 128-192 segment is extrapolated linearly up to
      ``log_qp = 2 x`` the table's 128-bit maximum for the ring (the estimate there is 44 to 58
      bits, depending on the row); a larger modulus raises ``ValueError``: the table says
      nothing about it and a straight line would soon give negative bits.
    - **Smaller moduli** (above 256 bits): the estimate is capped at 256, the table's highest
      level. Security only grows as the modulus shrinks, so 256 is a lower bound there.

    Parameters
    ----------
    log_n : int
        log2 of the ring degree, in ``[10, 17]`` (the table starts at ``2**10``).
    log_qp : float
        log2 of the whole modulus ``Q P``: a finite number ``> 0``.
    secret : {"ternary", "uniform"}

    Returns
    -------
    float
        Estimated bits, in ``[~44, 256]``.
    """
    if not isinstance(secret, str) or secret not in HE_STANDARD_MAX_LOG_Q:
        raise ValueError(f"secret must be 'uniform' or 'ternary', got {secret!r}")
    log_n = _as_int(log_n, "log_n", 10, 17)
    if isinstance(log_qp, bool) or not isinstance(log_qp, numbers.Real):
        raise TypeError(f"log_qp must be a real number, got {type(log_qp).__name__}")
    log_qp = float(log_qp)
    if not (math.isfinite(log_qp) and log_qp > 0.0):
        raise ValueError(f"log_qp must be a finite number > 0, got {log_qp}")
    table = HE_STANDARD_MAX_LOG_Q[secret]
    row_n = min(log_n, 15)
    n = 2.0**log_n
    xs = [2.0**row_n / q for q in table[row_n]]
    x = n / log_qp
    if x < 0.5 * xs[0]:
        raise ValueError(
            f"log_qp = {log_qp:g} is beyond the HE security table for log_n = {log_n}: more "
            f"than twice the 128-bit maximum ({2.0 * n / xs[0]:g} bits), where the table gives "
            "no estimate (use a larger ring or a smaller modulus)"
        )
    if x <= xs[1]:
        x0, x1, l0, l1 = xs[0], xs[1], _LEVELS[0], _LEVELS[1]
    else:
        x0, x1, l0, l1 = xs[1], xs[2], _LEVELS[1], _LEVELS[2]
    return min(_LEVELS[2], l0 + (x - x0) * (l1 - l0) / (x1 - x0))


def _as_int(value: Any, name: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int,)) and not hasattr(value, "__index__"):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    value = int(value)
    if not lo <= value <= hi:
        raise ValueError(f"{name} must lie in [{lo}, {hi}], got {value}")
    return value


@dataclass(frozen=True)
class CKKSParams:
    """Parameters of a CKKS instance, as used by the slot-layout simulator.

    Parameters
    ----------
    log_n : int, default=16
        log2 of the ring degree N (10..17); a ciphertext has ``N / 2`` complex slots.
    log_q : int, default=1200
        Bits of the fresh ciphertext modulus Q (HEAAN's ``logQ``).
    log_p : int, default=30
        Bits of the scale (HEAAN's ``logp``, the precision of encoded values): data, weights and
        constants are encoded at scale ``2**log_p`` and a multiplication by such a factor is
        followed by a rescale that consumes ``log_p`` modulus bits.
    log_q0 : int, optional
        Modulus bits that must remain for decryption (the base modulus): a rescale that would go
        below it raises :class:`DepthExhaustedError`. Default ``log_p + 20`` (room for values of
        magnitude up to ``2**20`` at full precision).
    log_special : int, optional
        Bits of the special (key-switching) modulus P. Default ``log_q``: HEAAN's key switching
        with ``P ~ Q`` (Kim et al. 2018a's setting). Security is estimated for ``log_q +
        log_special``.
    ks_digit_bits : int, optional
        Bits per digit of the key-switching decomposition (RNS: one prime per digit). Default:
        one digit holding the whole modulus (HEAAN).
    sigma : float, default=3.2
        Standard deviation of the RLWE error.
    hamming_weight : int or None, default=64
        Number of non-zero (+-1) coefficients of the secret key (HEAAN's sparse secret, as in Kim
        et al. 2018a). ``None`` means a uniform ternary secret (SEAL/TenSEAL), about ``2N/3``
        non-zeros.
    slots : int, optional
        Slots used (a power of two <= ``N / 2``; default ``N / 2``). More slots than the ring
        has raises ``ValueError``.
    primes : tuple of int, optional
        An RNS chain of rescaling primes, in the order they are dropped (e.g. SEAL's). When
        given, every rescale must be by ``log_p`` bits and divides the values' scale by the
        prime instead of ``2**log_p``; the scale is then reset to ``2**log_p`` as TenSEAL does,
        so the slot values pick up the factor ``2**log_p / prime`` (modelled exactly). Default:
        power-of-two moduli (HEAAN), exact rescaling.

    Raises
    ------
    ValueError
        Out-of-range values, or parameters whose estimated security falls below 64 bits
        (beyond what the HE standard's table supports; see :func:`estimate_security`).
    """

    log_n: int = 16
    log_q: int = 1200
    log_p: int = 30
    log_q0: int | None = None
    log_special: int | None = None
    ks_digit_bits: int | None = None
    sigma: float = 3.2
    hamming_weight: int | None = 64
    slots: int | None = None
    primes: tuple[int, ...] | None = None
    security_bits: float = field(init=False)

    def __post_init__(self) -> None:
        log_n = _as_int(self.log_n, "log_n", 10, 17)
        log_q = _as_int(self.log_q, "log_q", 20, 10_000)
        log_p = _as_int(self.log_p, "log_p", 10, 60)
        log_q0 = log_p + 20 if self.log_q0 is None else _as_int(self.log_q0, "log_q0", 1, log_q)
        if log_q0 < log_p + 1:
            raise ValueError(f"log_q0 ({log_q0}) must exceed log_p ({log_p})")
        if log_q0 + log_p > log_q:
            raise ValueError(
                f"log_q ({log_q}) leaves no level: it must be at least log_q0 + log_p = "
                f"{log_q0 + log_p}"
            )
        log_special = (
            log_q
            if self.log_special is None
            else _as_int(self.log_special, "log_special", 1, 10_000)
        )
        ks_digit = (
            None
            if self.ks_digit_bits is None
            else _as_int(self.ks_digit_bits, "ks_digit_bits", 1, 10_000)
        )
        digit = log_q if ks_digit is None else ks_digit
        if digit > log_special:
            raise ValueError(
                f"key-switching digits of {digit} bits need a special modulus of at least as many "
                f"bits (log_special = {log_special}); set ks_digit_bits <= log_special"
            )
        sigma = float(self.sigma)
        if not (math.isfinite(sigma) and sigma > 0):
            raise ValueError(f"sigma must be a finite number > 0, got {self.sigma}")
        n = 1 << log_n
        hw = self.hamming_weight
        if hw is not None:
            hw = _as_int(hw, "hamming_weight", 1, n)
        slots = n // 2 if self.slots is None else _as_int(self.slots, "slots", 1, 1 << 40)
        if slots > n // 2:
            raise ValueError(
                f"slots ({slots}) exceeds the N/2 = {n // 2} slots of a ring of degree 2^{log_n}"
            )
        if slots & (slots - 1):
            raise ValueError(f"slots must be a power of two, got {slots}")
        primes = self.primes
        if primes is not None:
            primes = tuple(int(p) for p in primes)
            if any(p < 2 for p in primes):
                raise ValueError("primes must be integers >= 2")
            if len(primes) * log_p + log_q0 != log_q:
                raise ValueError(
                    f"an RNS chain of {len(primes)} {log_p}-bit primes needs log_q = log_q0 + "
                    f"{len(primes)} * log_p = {log_q0 + len(primes) * log_p}, got {log_q}"
                )
        secret = "ternary"
        try:
            security: float | None = estimate_security(log_n, log_q + log_special, secret)
        except ValueError:
            security = None  # more than twice the table's 128-bit modulus: no estimate
        if security is None or security < MIN_SECURITY:
            est = (
                "more than twice the table's 128-bit modulus, where it gives no estimate"
                if security is None
                else f"estimated {security:.0f} bits < {MIN_SECURITY:.0f}"
            )
            raise ValueError(
                f"log_n = {log_n} with log(QP) = {log_q + log_special} bits is beyond the HE "
                f"security table: {est} (use a larger ring or a smaller modulus)"
            )
        for name, value in (
            ("log_n", log_n),
            ("log_q", log_q),
            ("log_p", log_p),
            ("log_q0", log_q0),
            ("log_special", log_special),
            ("ks_digit_bits", ks_digit),
            ("sigma", sigma),
            ("hamming_weight", hw),
            ("slots", slots),
            ("primes", primes),
            ("security_bits", security),
        ):
            object.__setattr__(self, name, value)

    @property
    def ring_degree(self) -> int:
        """N = 2**log_n."""
        return 1 << self.log_n

    @property
    def secret_weight(self) -> float:
        """Expected number of non-zero secret coefficients (``hamming_weight`` or ``2N/3``)."""
        n = self.ring_degree
        return float(self.hamming_weight) if self.hamming_weight is not None else 2.0 * n / 3.0

    @property
    def levels(self) -> int:
        """Rescales by ``log_p`` bits available to a fresh ciphertext."""
        return (self.log_q - self.log_q0) // self.log_p

    def ciphertext_bytes(self, mod_bits: int | None = None) -> float:
        """Size of one ciphertext (two ring elements mod ``2**mod_bits``)."""
        bits = self.log_q if mod_bits is None else mod_bits
        return 2.0 * self.ring_degree * bits / 8.0

    def key_bytes(self) -> float:
        """Size of one key-switching key (relinearisation or one rotation)."""
        digits = 1 if self.ks_digit_bits is None else math.ceil(self.log_q / self.ks_digit_bits)
        return digits * 2.0 * self.ring_degree * (self.log_q + self.log_special) / 8.0
