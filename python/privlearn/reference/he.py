"""Pure-numpy twin of the CKKS-like slot kernels of the C++ core (``privlearn._core.he_*``).

Each function repeats the core's floating-point operations in the same order, and draws the
simulated CKKS error from the same ChaCha20 addresses through :mod:`privlearn.reference.random`,
so results are bit-identical to the core's (see ``cpp/include/privlearn/he/slots.hpp``):

- slot ``j`` of ciphertext ``c`` in operation ``op_id`` uses
  ``r = raw(op_id * 2**40 + c * 2**17 + j)``;
- the draw is ``z = 2 * (h0 + h1 + h2 + h3) - 4 * 65535`` with ``h_k`` the 16-bit fields of
  ``r`` (a centred Irwin-Hall(4) variable, integer arithmetic only), and the slot gets
  ``+ z * scale``.

A batch is a ``(n_ct, slots)`` float64 array: row ``c`` holds the slots of ciphertext ``c``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from privlearn.reference.random import Stream

__all__ = [
    "OP_STRIDE",
    "CT_STRIDE",
    "NOISE_VARIANCE",
    "noise_draws",
    "he_noise",
    "he_binary",
    "he_scalar",
    "he_rotate",
    "he_rotate_sum",
    "he_sum_rows",
    "he_bound_mul",
    "he_max_abs",
]

#: Noise addresses per operation and per ciphertext (as ``_core.he_op_stride`` / ``he_ct_stride``).
OP_STRIDE = 1 << 40
CT_STRIDE = 1 << 17
#: Variance of the integer draw ``z`` (four independent uniforms on {0..65535}, doubled, centred).
NOISE_VARIANCE = 4.0 * 4.0 * (65536.0**2 - 1.0) / 12.0
_MASK16 = np.uint64(0xFFFF)


def _batch(a: np.ndarray, name: str = "a") -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"{name} must be a 2-d (n_ct, slots) array, got {a.ndim} dimensions")
    return a


def noise_draws(key: bytes, stream: int, op_id: int, n_ct: int, slots: int) -> np.ndarray:
    """The integer-valued draws ``z`` of one operation as a ``(n_ct, slots)`` float64 array."""
    s = Stream(key=key, stream=stream)
    z = np.empty((n_ct, slots))
    for c in range(n_ct):
        r = s.raws(op_id * OP_STRIDE + c * CT_STRIDE, slots)
        total = (r & _MASK16) + ((r >> np.uint64(16)) & _MASK16)
        total = total + ((r >> np.uint64(32)) & _MASK16) + (r >> np.uint64(48))
        z[c] = (2 * total.astype(np.int64) - 4 * 65535).astype(np.float64)
    return z


def _add_noise(v: np.ndarray, key: bytes, stream: int, op_id: int, scale: float) -> np.ndarray:
    if scale == 0.0:
        return v
    z = noise_draws(key, stream, op_id, v.shape[0], v.shape[1])
    return v + z * scale


def he_noise(
    a: np.ndarray, key: bytes, stream: int, op_id: int, scale: float, n_threads: int = 0
) -> np.ndarray:
    """``a + z * scale`` (the seeded error of one operation)."""
    a = _batch(a)
    return _add_noise(a.copy(), key, stream, op_id, scale)


def he_binary(
    a: np.ndarray,
    b: np.ndarray,
    op: str,
    factor: float,
    key: bytes,
    stream: int,
    op_id: int,
    scale: float,
    n_threads: int = 0,
) -> np.ndarray:
    """``((a op b) * factor) + z * scale``; ``b`` has 1 or ``n_ct`` rows."""
    a, b = _batch(a), _batch(b, "b")
    if b.shape[1] != a.shape[1]:
        raise ValueError("a and b have different slot counts")
    if b.shape[0] not in (1, a.shape[0]):
        raise ValueError(f"second operand must have 1 or n_ct rows, got {b.shape[0]}")
    if op == "add":
        v = a + b
    elif op == "sub":
        v = a - b
    elif op == "mul":
        v = a * b
    else:
        raise ValueError(f"op must be 'add', 'sub' or 'mul', got '{op}'")
    if factor != 1.0:
        v = v * factor
    return _add_noise(v, key, stream, op_id, scale)


def he_scalar(
    a: np.ndarray,
    op: str,
    c: float,
    factor: float,
    key: bytes,
    stream: int,
    op_id: int,
    scale: float,
    n_threads: int = 0,
) -> np.ndarray:
    """``((a op c) * factor) + z * scale`` with a scalar ``c`` (op ``'add'`` or ``'mul'``)."""
    a = _batch(a)
    if op == "add":
        v = a + c
    elif op == "mul":
        v = a * c
    else:
        raise ValueError(f"scalar op must be 'add' or 'mul', got '{op}'")
    if factor != 1.0:
        v = v * factor
    return _add_noise(v, key, stream, op_id, scale)


def he_rotate(
    a: np.ndarray, k: int, key: bytes, stream: int, op_id: int, scale: float, n_threads: int = 0
) -> np.ndarray:
    """Left rotation of every ciphertext's slots by ``k`` (slot ``j`` gets slot ``j + k``)."""
    a = _batch(a)
    return _add_noise(np.roll(a, -k, axis=1), key, stream, op_id, scale)


def he_rotate_sum(
    a: np.ndarray,
    steps: Sequence[int],
    key: bytes,
    stream: int,
    op_id: int,
    scale: float,
    n_threads: int = 0,
) -> np.ndarray:
    """For each step ``s_i`` (operation ``op_id + i``): ``a <- a + (rotate(a, s_i) + z scale)``."""
    a = _batch(a).copy()
    for i, s in enumerate(steps):
        r = _add_noise(np.roll(a, -int(s), axis=1), key, stream, op_id + i, scale)
        a = a + r
    return a


def he_sum_rows(a: np.ndarray, n_threads: int = 0) -> np.ndarray:
    """Sum of the ciphertexts of a batch, added in order: a ``(1, slots)`` array."""
    a = _batch(a)
    out = a[0:1].copy()
    for c in range(1, a.shape[0]):
        out = out + a[c : c + 1]
    return out


def he_bound_mul(
    a: np.ndarray,
    ea: np.ndarray,
    b: np.ndarray,
    eb: np.ndarray,
    factor: float,
    fixed: float,
    n_threads: int = 0,
) -> np.ndarray:
    """Per-slot error bound of a product: ``(|a| eb + (|b| + eb) ea) * factor
    + |factor - 1| (|a| + ea)(|b| + eb) + fixed`` (the second term only when ``factor != 1``)."""
    a, ea, b, eb = _batch(a), _batch(ea, "ea"), _batch(b, "b"), _batch(eb, "eb")
    if ea.shape != a.shape or eb.shape != b.shape or b.shape[1] != a.shape[1]:
        raise ValueError("he_bound_mul: operand and bound shapes differ")
    aa, ab = np.abs(a), np.abs(b)
    e = aa * eb + (ab + eb) * ea
    if factor != 1.0:
        e = e * factor
        e = e + abs(factor - 1.0) * ((aa + ea) * (ab + eb))
    return e + fixed


def he_max_abs(a: np.ndarray, n_threads: int = 0) -> float:
    """``max |a|`` over all entries (0 for an empty array)."""
    a = np.asarray(a, dtype=np.float64)
    return float(np.max(np.abs(a))) if a.size else 0.0
