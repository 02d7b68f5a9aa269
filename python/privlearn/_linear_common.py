"""Pieces shared by the core-backed linear models and their numpy twins (pure numpy: the
reference may import this module).

Losses as functions of the margin ``z = x^T w`` and label ``y`` (``cpp/.../linear/losses.hpp``):
``log_loss`` ``log(1 + exp(-y z))``, ``hinge`` ``max(0, 1 - y z)``, ``squared`` ``(z - y)^2 / 2``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from privlearn._checks import as_index, as_real

__all__ = [
    "LOSSES",
    "MECHANISMS",
    "SAMPLINGS",
    "SCHEDULES",
    "SGDRun",
    "SgdSpec",
    "as_design_matrix",
    "loss_derivative",
    "loss_value",
    "objective",
    "prepare_sgd",
    "prepare_scd",
    "SCDRun",
    "ScdSpec",
    "SCD_DEFAULTS",
    "SCD_VARIANTS",
    "scd_step_count",
    "dual_objective",
    "neg_conjugate",
    "SGD_DEFAULTS",
    "sgd_step_count",
]

LOSSES = ("log_loss", "hinge", "squared")
MECHANISMS = ("none", "l2-laplace", "gaussian")
SAMPLINGS = ("disjoint", "poisson", "fixed")
SCHEDULES = ("inv_sqrt", "inv_lambda_t", "constant")


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


def _all_finite(a: np.ndarray) -> bool:
    """Whether every entry is finite, in one read of ``a`` and no temporary.

    NaN and +-inf always make the sum non-finite; a finite array whose sum overflows falls back
    to the exact elementwise test.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(np.sum(a)):
            return True
    return bool(np.isfinite(a).all())


def as_design_matrix(X: Any, name: str = "X") -> np.ndarray | sp.csr_matrix:
    """C-contiguous float64 ndarray or canonical CSR (int64 indices), all values finite."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sum_duplicates()
        if not _all_finite(X.data):
            raise ValueError(f"{name} contains NaN or infinite values")
        X.indices = X.indices.astype(np.int64, copy=False)
        X.indptr = X.indptr.astype(np.int64, copy=False)
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
        if not _all_finite(X):
            raise ValueError(f"{name} contains NaN or infinite values")
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {X.shape}")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"{name} must have at least one row and one column, got {X.shape}")
    return X


@dataclass(frozen=True)
class SGDRun:
    """Result of :func:`sgd_train`: final iterate, recorded iterates and step counts."""

    coef: np.ndarray
    path: np.ndarray  # (k, d) iterates recorded every ``record_every`` steps and at the end
    path_steps: np.ndarray  # (k,) steps done at each recorded iterate
    n_steps: int


@dataclass(frozen=True)
class SgdSpec:
    """Validated arguments of :func:`sgd_train` (both backends)."""

    loss: str
    mechanism: str
    sampling: str
    learning_rate: str
    alpha: float
    batch_size: int
    epochs: int
    steps: int
    eta0: float
    clip: float
    epsilon: float
    sigma: float
    radius: float
    key: bytes
    batch_stream: int
    noise_stream: int
    record_every: int

    @classmethod
    def make(cls, n: int, **kw: Any) -> SgdSpec:
        for name, choices in (
            ("loss", LOSSES),
            ("mechanism", MECHANISMS),
            ("sampling", SAMPLINGS),
            ("learning_rate", SCHEDULES),
        ):
            if kw[name] not in choices:
                raise ValueError(f"{name} must be one of {choices}, got {kw[name]!r}")
        key = kw["key"]
        if not isinstance(key, (bytes, bytearray)) or len(key) != 32:
            raise ValueError("key must be 32 bytes")
        spec = cls(
            loss=kw["loss"],
            mechanism=kw["mechanism"],
            sampling=kw["sampling"],
            learning_rate=kw["learning_rate"],
            alpha=as_real(kw["alpha"], "alpha"),
            batch_size=as_index(kw["batch_size"], "batch_size", lower=1, upper=max(n, 1)),
            epochs=as_index(kw["epochs"], "epochs", lower=1, upper=2**31),
            steps=as_index(kw["steps"], "steps", upper=2**32 - 1),
            eta0=as_real(kw["eta0"], "eta0"),
            clip=as_real(kw["clip"], "clip"),
            epsilon=as_real(kw["epsilon"], "epsilon"),
            sigma=as_real(kw["sigma"], "sigma"),
            radius=as_real(kw["radius"], "radius"),
            key=bytes(key),
            batch_stream=as_index(kw["batch_stream"], "batch_stream", upper=2**64 - 1),
            noise_stream=as_index(kw["noise_stream"], "noise_stream", upper=2**64 - 1),
            record_every=as_index(kw["record_every"], "record_every", upper=2**62),
        )
        spec._check()
        return spec

    def _check(self) -> None:
        if not (np.isfinite(self.alpha) and self.alpha >= 0):
            raise ValueError(f"alpha must be finite and >= 0, got {self.alpha}")
        if self.learning_rate == "inv_lambda_t" and self.alpha <= 0:
            raise ValueError("learning_rate 'inv_lambda_t' needs alpha > 0")
        if not (np.isfinite(self.eta0) and self.eta0 > 0):
            raise ValueError(f"eta0 must be a finite number > 0, got {self.eta0}")
        if not self.clip >= 0:
            raise ValueError(f"clip must be >= 0 (0 = no clipping), got {self.clip}")
        if not self.radius >= 0:
            raise ValueError(f"radius must be >= 0 (0 = no projection), got {self.radius}")
        if self.mechanism == "l2-laplace":
            if not self.epsilon > 0:
                raise ValueError(f"epsilon must be > 0, got {self.epsilon}")
            if self.sampling != "disjoint":
                raise ValueError(
                    "the l2-laplace mechanism is accounted by parallel composition over disjoint "
                    "batches: sampling must be 'disjoint'"
                )
        if self.mechanism == "gaussian":
            if not (np.isfinite(self.sigma) and self.sigma >= 0):
                raise ValueError(f"sigma must be finite and >= 0, got {self.sigma}")
            if self.sigma > 0 and not self.clip > 0:
                raise ValueError("the gaussian mechanism needs clip > 0 (its sensitivity)")


def sgd_step_count(n: int, spec: SgdSpec) -> int:
    """Steps implied by the sampling: ``epochs * ceil(n / b)`` for disjoint batches, else
    ``steps`` or ``ceil(epochs * n / batch_size)``."""
    if spec.sampling == "disjoint":
        return spec.epochs * (-(-n // spec.batch_size))
    if spec.steps > 0:
        return spec.steps
    return -(-(spec.epochs * n) // spec.batch_size)


def prepare_sgd(
    X: Any, y: Any, w0: Any, **kw: Any
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray, np.ndarray, SgdSpec]:
    """Validate the inputs of :func:`sgd_train` once for both backends."""
    X = as_design_matrix(X)
    n, d = X.shape
    y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but X has {n} rows")
    if not np.isfinite(y).all():
        raise ValueError("y contains NaN or infinite values")
    w0 = np.zeros(d) if w0 is None else np.ascontiguousarray(w0, dtype=np.float64).reshape(-1)
    if w0.shape[0] != d or not np.isfinite(w0).all():
        raise ValueError(f"w0 must be {d} finite values")
    if "batch_size" in kw and not isinstance(kw["batch_size"], bool):
        b = kw["batch_size"]
        if isinstance(b, (int, np.integer)) and b > n:
            raise ValueError(f"batch_size ({b}) must be <= n_samples ({n})")
    return X, y, w0, SgdSpec.make(n, **kw)


SGD_DEFAULTS: dict[str, Any] = {
    "loss": "log_loss",
    "mechanism": "l2-laplace",
    "sampling": "disjoint",
    "learning_rate": "inv_sqrt",
    "alpha": 1e-4,
    "batch_size": 10,
    "epochs": 1,
    "steps": 0,
    "eta0": 1.0,
    "clip": 0.0,
    "epsilon": 1.0,
    "sigma": 0.0,
    "radius": 0.0,
    "batch_stream": 1,
    "noise_stream": 2,
    "record_every": 0,
}


# ---- DP-SCD (Damaskinos et al. 2021) ---------------------------------------------------------
SCD_VARIANTS = ("dual", "seq", "scd", "primal")

SCD_DEFAULTS: dict[str, Any] = {
    "loss": "squared",
    "variant": "dual",
    "sampling": "poisson",
    "alpha": 1e-4,
    "batch_size": 100,
    "epochs": 1,
    "steps": 0,
    "clip": 0.0,
    "noise_std": 0.0,
    "batch_stream": 1,
    "noise_stream": 2,
    "record_every": 0,
    "newton_steps": 1,
}


@dataclass(frozen=True)
class SCDRun:
    """Result of :func:`scd_train`: ``coef = v / (lambda N)`` is the released model."""

    coef: np.ndarray
    dual_coef: np.ndarray  # alpha (empty for the primal variant)
    v: np.ndarray
    path_steps: np.ndarray
    primal_path: np.ndarray  # P(theta) of the released model at each recorded step
    dual_path: np.ndarray  # D(alpha) (NaN for the primal variant)
    n_steps: int


@dataclass(frozen=True)
class ScdSpec:
    """Validated arguments of :func:`scd_train` (both backends)."""

    loss: str
    variant: str
    sampling: str
    alpha: float
    batch_size: int
    epochs: int
    steps: int
    clip: float
    noise_std: float
    key: bytes
    batch_stream: int
    noise_stream: int
    record_every: int
    newton_steps: int

    @property
    def poisson(self) -> bool:
        return self.sampling == "poisson"


def prepare_scd(
    X: Any, y: Any, **kw: Any
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray, ScdSpec]:
    """Validate the inputs of :func:`scd_train` once for both backends."""
    X = as_design_matrix(X)
    n, m = X.shape
    y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but X has {n} rows")
    if not np.isfinite(y).all():
        raise ValueError("y contains NaN or infinite values")
    for name, choices in (
        ("loss", LOSSES),
        ("variant", SCD_VARIANTS),
        ("sampling", ("poisson", "fixed")),
    ):
        if kw[name] not in choices:
            raise ValueError(f"{name} must be one of {choices}, got {kw[name]!r}")
    if kw["loss"] != "squared" and not np.isin(y, (-1.0, 1.0)).all():
        raise ValueError("labels must be -1 or +1 for the log_loss and hinge losses")
    if kw["variant"] == "primal" and kw["loss"] == "hinge":
        raise ValueError("the primal variant supports the squared and logistic losses only")
    key = kw["key"]
    if not isinstance(key, (bytes, bytearray)) or len(key) != 32:
        raise ValueError("key must be 32 bytes")
    units = m if kw["variant"] == "primal" else n
    spec = ScdSpec(
        loss=kw["loss"],
        variant=kw["variant"],
        sampling=kw["sampling"],
        alpha=as_real(kw["alpha"], "alpha"),
        batch_size=as_index(kw["batch_size"], "batch_size", lower=1, upper=units),
        epochs=as_index(kw["epochs"], "epochs", lower=1, upper=2**31),
        steps=as_index(kw["steps"], "steps", upper=2**32 - 1),
        clip=as_real(kw["clip"], "clip"),
        noise_std=as_real(kw["noise_std"], "noise_std"),
        key=bytes(key),
        batch_stream=as_index(kw["batch_stream"], "batch_stream", upper=2**64 - 2),
        noise_stream=as_index(kw["noise_stream"], "noise_stream", upper=2**64 - 2),
        record_every=as_index(kw["record_every"], "record_every", upper=2**62),
        newton_steps=as_index(kw["newton_steps"], "newton_steps", lower=1, upper=100),
    )
    if not (np.isfinite(spec.alpha) and spec.alpha > 0):
        raise ValueError(f"alpha (lambda) must be finite and > 0, got {spec.alpha}")
    if not spec.clip >= 0:
        raise ValueError(f"clip must be >= 0 (0 = no scaling), got {spec.clip}")
    if not (np.isfinite(spec.noise_std) and spec.noise_std >= 0):
        raise ValueError(f"noise_std must be finite and >= 0, got {spec.noise_std}")
    if spec.variant == "scd" and (spec.clip > 0 or spec.noise_std > 0):
        raise ValueError("the 'scd' variant is the non-private baseline: no clip, no noise")
    return X, y, spec


def scd_step_count(n: int, m: int, spec: ScdSpec) -> int:
    """T: ``steps`` if given, else ``epochs * N`` (scd), ``ceil(epochs * M / L)`` (primal) or
    ``ceil(epochs * N / L)`` (dual, seq)."""
    if spec.steps > 0:
        return spec.steps
    if spec.variant == "scd":
        return spec.epochs * n
    units = m if spec.variant == "primal" else n
    return -(-(spec.epochs * units) // spec.batch_size)


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
