"""numpy twin of the quadratic-gradient optimizers (``cpp/include/privlearn/linear/quadgrad.hpp``).

Same signatures as :mod:`privlearn.linear.quadgrad`; core and reference agree to ``rtol=1e-10``
(the sums are added in a different order, so not bit for bit).
"""

from __future__ import annotations

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
    """``sum_j |(X^T X)_kj|`` for every column ``k``.

    Non-negative ``X``: ``X^T (X 1)`` (every entry of ``X^T X`` is >= 0); otherwise ``X^T X`` is
    formed. ``n_threads`` is accepted for signature compatibility and ignored.
    """
    X = as_design_matrix(X)
    values = X.data if sp.issparse(X) else X
    with np.errstate(over="ignore", invalid="ignore"):  # inf / NaN sums are the caller's to refuse
        if values.size == 0 or values.min() >= 0.0:
            row_sums = np.asarray(X.sum(axis=1)).reshape(-1)
            return np.asarray(X.T @ row_sums).reshape(-1)
        gram = X.T @ X
        gram = gram.toarray() if sp.issparse(gram) else gram
        return np.abs(gram).sum(axis=1)


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


def _loglik_gradient(X: Any, y: np.ndarray, beta: np.ndarray) -> tuple[float, np.ndarray]:
    z = y * np.asarray(X @ beta).reshape(-1)
    e = np.exp(-np.abs(z))
    pos = z >= 0.0
    s = np.where(pos, e / (1.0 + e), 1.0 / (1.0 + e))  # 1 - sigma(z)
    ll = np.where(pos, -np.log1p(e), z - np.log1p(e))
    grad = np.asarray(X.T @ (s * y)).reshape(-1)
    return float(ll.sum()), grad


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
            v = spec.adam_beta2 * v + (1.0 - spec.adam_beta2) * u * u
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
