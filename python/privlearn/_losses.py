"""Losses and training objectives of the linear models, as numpy functions of the margin.

What belongs here: a loss ``l(z, y)`` of the margin ``z = x^T w`` and label ``y``, its
derivative or convex conjugate, and the objectives built from them (primal, dual, softmax), the
same formulas as ``cpp/include/privlearn/linear/losses.hpp``. Pure numpy: the core wrappers, the
numpy reference, the estimators' diagnostics and the reproductions all read them. Not here:
input checks (:mod:`privlearn._design_matrix`) or a trainer's arguments (:mod:`privlearn._specs`).

``log_loss`` ``log(1 + exp(-y z))``, ``hinge`` ``max(0, 1 - y z)``, ``squared``
``(z - y)^2 / 2``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "LOSSES",
    "dual_objective",
    "loss_derivative",
    "loss_value",
    "neg_conjugate",
    "objective",
    "softmax_objective",
]

LOSSES = ("log_loss", "hinge", "squared")


def loss_value(loss: str, z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-example loss."""
    if loss == "log_loss":
        return np.logaddexp(0.0, -y * z)
    if loss == "hinge":
        return np.maximum(0.0, 1.0 - y * z)
    return 0.5 * (z - y) ** 2


def loss_derivative(loss: str, z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """d loss / d z (a subgradient for the hinge), the same formulas as the core."""
    if loss == "log_loss":
        with np.errstate(over="ignore"):
            return -y / (1.0 + np.exp(y * z))
    if loss == "hinge":
        return np.where(y * z < 1.0, -y, 0.0)
    return z - y


def objective(X: Any, y: np.ndarray, W: np.ndarray, loss: str, alpha: float) -> np.ndarray:
    """``(alpha/2)||w||^2 + mean_i loss(x_i^T w, y_i)`` for each row ``w`` of ``W`` (or one w)."""
    W = np.atleast_2d(np.asarray(W, dtype=np.float64))
    Z = np.asarray(X @ W.T)  # (n, k)
    losses = loss_value(loss, Z, np.asarray(y, dtype=np.float64)[:, None]).mean(axis=0)
    return 0.5 * alpha * np.einsum("ij,ij->i", W, W) + losses


def neg_conjugate(loss: str, alpha: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``-l*(-alpha_i)`` per example (``-inf`` outside the dual domain)."""
    if loss == "squared":
        return -(0.5 * alpha * alpha - alpha * y)
    b = y * alpha
    inside = (b >= 0.0) & (b <= 1.0)
    if loss == "hinge":
        return np.where(inside, b, -np.inf)
    bc = np.clip(b, 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = np.where(bc > 0, bc * np.log(bc), 0.0) + np.where(
            bc < 1, (1 - bc) * np.log1p(-bc), 0.0
        )
    return np.where(inside, -ent, -np.inf)


def dual_objective(X: Any, y: np.ndarray, loss: str, alpha: float, a: np.ndarray) -> float:
    """``D(a) = (1/N) sum_i -l*_i(-a_i) - ||X^T a||^2 / (2 lambda N^2)``."""
    n = X.shape[0]
    u = np.asarray(X.T @ a).reshape(-1)
    return float(neg_conjugate(loss, a, y).mean() - u @ u / (2.0 * alpha * n * n))


def softmax_objective(X: Any, y: np.ndarray, W: np.ndarray, alpha: float) -> float:
    """``(alpha/2)||W||_F^2 + (1/n) sum_i -log softmax(x_i^T W)_{y_i}`` (labels in [0, K))."""
    from scipy.special import logsumexp

    W = np.asarray(W, dtype=np.float64)
    Z = np.asarray(X @ W)
    y = np.asarray(y, dtype=np.int64)
    nll = logsumexp(Z, axis=1) - Z[np.arange(Z.shape[0]), y]
    return float(0.5 * alpha * np.sum(W * W) + nll.mean())
