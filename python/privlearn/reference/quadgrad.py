"""numpy twin of the quadratic-gradient optimizers (``cpp/include/privlearn/linear/quadgrad.hpp``).

Same signatures as :mod:`privlearn.linear.quadgrad`. The log-likelihood and its gradient repeat the
core's arithmetic operation for operation (its dot products, its ``exp`` and ``ln(1 + e)`` in
plain arithmetic, its blocked sums in its order), and ``B_bar`` repeats the
core's fixed-order blocked ``X^T X`` and row sums, so the two agree to the last bit on the same
input, and the runs to ``rtol=1e-10`` in the tests.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp

from privlearn._design_matrix import as_design_matrix
from privlearn._specs.quadgrad import (
    QuadgradRun,
    check_bbar,
    check_computed_bbar,
    check_labels,
    check_trained_coef,
    prepare_quadgrad,
)

__all__ = [
    "fixed_hessian_diagonal",
    "gram_abs_row_sums",
    "logistic_loglik_gradient",
    "quadgrad_bbar",
    "quadgrad_train",
]


def gram_abs_row_sums(X: Any, n_threads: int | None = None) -> np.ndarray:
    """``sum_j |(X^T X)_kj|`` for every column ``k``, in the core's order of the sums.

    Non-negative ``X``: ``X^T (X 1)`` (every entry of ``X^T X`` is >= 0), the row sums added
    entry by entry and the rows in the core's blocked order; otherwise ``X^T X`` is formed by
    blocks of rows, each block's products added row by row, the blocks in order, and each
    row of ``|X^T X|`` summed in column order. ``n_threads`` is accepted for signature
    compatibility and ignored.
    """
    X = as_design_matrix(X)
    values = X.data if sp.issparse(X) else X
    with np.errstate(over="ignore", invalid="ignore"):  # inf / NaN sums are the caller's to refuse
        if values.size == 0 or values.min() >= 0.0:
            if sp.issparse(X):
                return _csr_blocked_gradient(X, _csr_dots(X, np.ones(X.shape[1])))
            sums = np.zeros(X.shape[0])
            for k in range(X.shape[1]):
                sums = sums + X[:, k]
            return _blocked_rows_sum(sums[:, None] * X)
        gram = _blocked_gram(X)
        out = np.zeros(X.shape[1])
        for j in range(X.shape[1]):
            out = out + np.abs(gram[:, j])
        return out


def _blocked_gram(X: Any) -> np.ndarray:
    """``X^T X`` as the core forms it (``blocked_gram``): per block of ``REDUCE_BLOCK`` rows,
    the products ``x_ia x_ib`` added row by row from 0, the block matrices added in block
    order (the core forms the upper triangle and mirrors it: the products commute, so the
    full matrix here has the same bits). Blocks are processed a chunk at a time."""
    n, d = X.shape
    n_blocks = -(-n // REDUCE_BLOCK)
    chunk = max(1, (1 << 21) // max(1, d * d))
    gram = np.zeros((d, d))
    for first in range(0, n_blocks, chunk):
        lo = first * REDUCE_BLOCK
        hi = min(n, (first + chunk) * REDUCE_BLOCK)
        rows = X[lo:hi]
        rows = rows.toarray() if sp.issparse(rows) else np.asarray(rows)
        m = -(-(hi - lo) // REDUCE_BLOCK)
        padded = np.zeros((m * REDUCE_BLOCK, d))
        padded[: hi - lo] = rows
        blocks = padded.reshape(m, REDUCE_BLOCK, d)
        acc = np.zeros((m, d, d))
        for r in range(min(REDUCE_BLOCK, hi - lo)):
            acc = acc + blocks[:, r, :, None] * blocks[:, r, None, :]
        for b in range(m):
            gram = gram + acc[b]
    return gram


def quadgrad_bbar(X: Any, *, epsilon: float = 1e-8, n_threads: int | None = None) -> np.ndarray:
    """``diag(B_bar)``: ``1 / (epsilon + sum_j |(X^T X)_kj| / 4)`` (Definition 3.2 with
    ``H_bar = -X^T X / 4``)."""
    eps = float(epsilon)
    if not (np.isfinite(eps) and eps > 0):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon}")
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below
        b = 1.0 / (eps + 0.25 * gram_abs_row_sums(X))
    return check_computed_bbar(b)


def logistic_loglik_gradient(
    X: Any, y: Any, beta: Any, n_threads: int | None = None
) -> tuple[float, np.ndarray]:
    """``(l(beta), g)`` with ``l = -sum_i ln(1 + exp(-y_i beta^T x_i))`` and
    ``g = sum_i (1 - sigma(y_i beta^T x_i)) y_i x_i`` (the paper's Section 2.3)."""
    X = as_design_matrix(X)
    y = check_labels(y, X.shape[0])
    beta = np.asarray(beta, dtype=np.float64).reshape(-1)
    if beta.shape != (X.shape[1],):
        raise ValueError(f"beta must have shape ({X.shape[1]},), got {beta.shape}")
    return _loglik_gradient(X, y, beta)


#: Rows per block of the core's deterministic reduction (``parallel::kReduceBlock``).
REDUCE_BLOCK = 256
_EXP_LN2_HI = 6.93147180369123816490e-01  # ln 2 to 32 bits
_EXP_LN2_LO = 1.90821492927058770002e-10  # ln 2 - _EXP_LN2_HI
_INV_LN2 = 1.4426950408889634
_ROUND_SHIFT = 6755399441055744.0  # 1.5 * 2^52


def _exp_nonpositive(x: np.ndarray) -> np.ndarray:
    """``exp(x)`` for ``x <= 0``, operation for operation as the core's ``exp_nonpositive``:
    ``x`` clamped to >= -1000, ``k = rint(x / ln 2)`` by the ``1.5 * 2^52`` shift,
    ``r = (x - k ln2_hi) - k ln2_lo``, ``q = sum_{m=0}^{13} r^m / m!`` (Horner), then ``q 2^k``
    rounded once (``q 2^(k + 1000) 2^-1000`` below ``2^-1021``)."""
    x = np.where(x < -1000.0, -1000.0, x)
    k = (x * _INV_LN2 + _ROUND_SHIFT) - _ROUND_SHIFT
    r = (x - k * _EXP_LN2_HI) - k * _EXP_LN2_LO
    q = np.full_like(r, 1.0 / math.factorial(13))
    for m in range(12, -1, -1):
        q = 1.0 / math.factorial(m) + r * q
    ki = np.where(k == k, k, 0.0).astype(np.int64)
    normal = ki >= -1021
    return np.where(
        normal,
        q * np.ldexp(1.0, np.where(normal, ki, 0)),
        (q * np.ldexp(1.0, np.where(normal, 0, ki + 1000))) * np.ldexp(1.0, -1000),
    )


_LN2_HI = 0.6931471805599453  # the double nearest ln 2
_LN2_LO = 2.3190468138462996e-17  # ln 2 - _LN2_HI
_SQRT2 = 1.4142135623730951


def _log1p_unit(e: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``ln(1 + e)`` for ``e`` in [0, 1] with ``u = 1 + e`` (rounded), operation for operation as
    the core's ``log1p_unit``: ``c = e - (u - 1)``, ``u = 2^k (1 + f)`` (``k = 1`` when
    ``u > sqrt 2``), ``ln(1 + f) = f - s (f - R)`` with ``s = f / (2 + f)`` and
    ``R = sum_{m=1}^{10} 2 s^(2m) / (2m + 1)`` (Horner), then
    ``k ln2_hi + (ln(1 + f) + (c / u + k ln2_lo))``."""
    c = e - (u - 1.0)
    big = u > _SQRT2
    k = np.where(big, 1.0, 0.0)
    f = np.where(big, u * 0.5 - 1.0, u - 1.0)
    s = f / (2.0 + f)
    s2 = s * s
    r = np.full_like(s, 2.0 / 21.0)
    for m in (19, 17, 15, 13, 11, 9, 7, 5, 3):
        r = 2.0 / m + s2 * r
    r = s2 * r
    log_f = f - s * (f - r)
    return k * _LN2_HI + (log_f + (c / u + k * _LN2_LO))


def _dense_dots(X: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """``x_i^T beta`` in the core's order (``dense_logistic_block``): four lane sums over the
    columns below ``d4 = d - d % 4`` (lane ``l``: columns ``l, l + 4, ...`` in order, from 0),
    combined as ``(p0 + p1) + (p2 + p3)``, then the columns ``d4 .. d - 1`` added in order."""
    n, d = X.shape
    d4 = d - d % 4
    lanes = np.zeros((n, 4))
    for k in range(0, d4, 4):
        lanes = lanes + X[:, k : k + 4] * beta[k : k + 4]
    t = (lanes[:, 0] + lanes[:, 1]) + (lanes[:, 2] + lanes[:, 3])
    for k in range(d4, d):
        t = t + X[:, k] * beta[k]
    return t


def _csr_dots(X: sp.csr_matrix, beta: np.ndarray) -> np.ndarray:
    """``x_i^T beta`` in the core's order (``CsrRows::dot``): the stored entries of each row
    added in storage order, from 0 (``np.add.at`` adds in index order)."""
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    out = np.zeros(X.shape[0])
    np.add.at(out, rows, X.data * beta[X.indices])
    return out


def _blocked_rows_sum(values: np.ndarray) -> np.ndarray:
    """The core's deterministic reduction of per-row vectors ``values`` (n, m): each block of
    ``REDUCE_BLOCK`` rows summed row by row from 0, the block sums added in block order to 0
    (``reduce_blocks`` in ``cpp/src/quadgrad.cpp``). Padding rows are 0 and add nothing."""
    n, m = values.shape
    n_blocks = -(-n // REDUCE_BLOCK)
    padded = np.zeros((n_blocks * REDUCE_BLOCK, m))
    padded[:n] = values
    blocks = padded.reshape(n_blocks, REDUCE_BLOCK, m)
    acc = np.zeros((n_blocks, m))
    for r in range(min(REDUCE_BLOCK, n)):
        acc = acc + blocks[:, r, :]
    out = np.zeros(m)
    for b in range(n_blocks):
        out = out + acc[b]
    return out


def _csr_blocked_gradient(X: sp.csr_matrix, w: np.ndarray) -> np.ndarray:
    """``sum_i w_i x_i`` of CSR rows in the core's order: per block, the stored entries added in
    storage order (row order for each column) from 0, then the block sums in block order. A
    column's skipped zeros would add ``±0`` to a sum that is never ``-0``: no change."""
    n, d = X.shape
    out = np.zeros(d)
    for lo in range(0, n, REDUCE_BLOCK):
        hi = min(n, lo + REDUCE_BLOCK)
        a, b = X.indptr[lo], X.indptr[hi]
        rows = np.repeat(np.arange(lo, hi), np.diff(X.indptr[lo : hi + 1]))
        acc = np.zeros(d)
        np.add.at(acc, X.indices[a:b], w[rows] * X.data[a:b])
        out = out + acc
    return out


def _loglik_gradient(X: Any, y: np.ndarray, beta: np.ndarray) -> tuple[float, np.ndarray]:
    """``(l(beta), g)`` with the core's arithmetic, operation for operation (the same dot
    products, the core's ``exp`` and ``ln(1 + e)`` in plain arithmetic, the same
    blocked sums in the same order), so that the two agree to the last bit: a coordinate of
    ``g`` that is a sum of large terms cancelling to almost nothing is rounding noise, and any
    other order of the sums gives other noise, which Adam and Adagrad (steps of size ``r_t``
    whatever the gradient's scale) turn into different iterates."""
    sparse = sp.issparse(X)
    dots = _csr_dots(X, beta) if sparse else _dense_dots(X, beta)
    z = y * dots
    pos = z >= 0.0
    e = _exp_nonpositive(np.where(pos, -z, z))
    u = 1.0 + e
    log1p_e = _log1p_unit(e, u)
    s = np.where(pos, e, 1.0) / u  # 1 - sigma(z)
    ll = np.where(pos, -log1p_e, z - log1p_e)
    w = s * y
    if sparse:
        grad = _csr_blocked_gradient(X, w)
        total = _blocked_rows_sum(ll[:, None])[0]
    else:
        sums = _blocked_rows_sum(np.concatenate([w[:, None] * X, ll[:, None]], axis=1))
        grad, total = sums[:-1], sums[-1]
    return float(total), grad


def quadgrad_train(
    X: Any,
    y: Any,
    *,
    optimizer: str = "nag",
    enhanced: bool = True,
    max_iter: int = 10,
    schedule: Any = None,
    beta0: Any = None,
    bbar: Any = None,
    epsilon: float = 1e-8,
    nag_alpha0: float = 0.01,
    adam_beta1: float = 0.9,
    adam_beta2: float = 0.999,
    adaptive_eps: float = 1e-8,
    n_threads: int | None = None,
) -> QuadgradRun:
    """The six optimizers in numpy; see :func:`privlearn.linear.quadgrad_train` for the
    arguments. ``n_threads`` is accepted for signature compatibility and ignored."""
    X, y, beta, spec = prepare_quadgrad(
        X,
        y,
        beta0,
        optimizer=optimizer,
        enhanced=enhanced,
        max_iter=max_iter,
        schedule=schedule,
        epsilon=epsilon,
        nag_alpha0=nag_alpha0,
        adam_beta1=adam_beta1,
        adam_beta2=adam_beta2,
        adaptive_eps=adaptive_eps,
    )
    n, d = X.shape
    b = check_bbar(bbar, d)
    if spec.enhanced:
        b = quadgrad_bbar(X, epsilon=spec.epsilon) if b is None else b
    else:
        b = np.empty(0)
    T = spec.max_iter
    path = np.empty(T + 1)
    W = beta.copy()
    m = np.zeros(d)
    v = np.zeros(d)
    alpha0 = spec.nag_alpha0
    alpha1 = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * alpha0 * alpha0))
    b1_pow = b2_pow = 1.0
    for t in range(T):
        path[t], g = _loglik_gradient(X, y, beta)
        u = b * g if spec.enhanced else g
        rate = spec.schedule(t, n)
        if spec.optimizer == "nag":
            eta = (1.0 - alpha0) / alpha1
            w_tmp = beta + rate * u
            beta = (1.0 - eta) * w_tmp + eta * W
            W = w_tmp
            alpha0 = alpha1
            alpha1 = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * alpha0 * alpha0))
        elif spec.optimizer == "gd":
            beta = beta + rate * u
        elif spec.optimizer == "adagrad":
            v = v + u * u
            beta = beta + rate * (u / (spec.adaptive_eps + np.sqrt(v)))
        else:
            m = spec.adam_beta1 * m + (1.0 - spec.adam_beta1) * u
            v = spec.adam_beta2 * v + (1.0 - spec.adam_beta2) * (u * u)  # the core's order
            b1_pow *= spec.adam_beta1
            b2_pow *= spec.adam_beta2
            m_hat = m / (1.0 - b1_pow)
            v_hat = v / (1.0 - b2_pow)
            beta = beta + rate * (m_hat / (np.sqrt(v_hat) + spec.adaptive_eps))
    path[T], _ = _loglik_gradient(X, y, beta)
    return QuadgradRun(
        coef=check_trained_coef(beta), loglik_path=path, bbar=b, n_iter=T, schedule=spec.schedule
    )


def fixed_hessian_diagonal(A: Any, epsilon: float = 1e-8) -> np.ndarray:
    """Lemma 3.1: ``diag(B)`` with ``B_kk = -epsilon - sum_i |A_ki|``; ``B <= A`` in the Loewner
    order for every symmetric ``A`` (Gershgorin)."""
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be a square matrix, got shape {A.shape}")
    if not np.isfinite(A).all():
        raise ValueError("A contains NaN or infinite values")
    if not np.array_equal(A, A.T):
        raise ValueError("A must be symmetric")
    eps = float(epsilon)
    if not (np.isfinite(eps) and eps >= 0):
        raise ValueError(f"epsilon must be finite and >= 0, got {epsilon}")
    return -eps - np.abs(A).sum(axis=1)
