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

from privlearn._checks import as_index, as_real, check_sparse_structure

__all__ = [
    "LOSSES",
    "MECHANISMS",
    "SAMPLINGS",
    "SCHEDULES",
    "SGDRun",
    "SgdSpec",
    "as_design_matrix",
    "check_keywords",
    "clip_coefficients",
    "row_norms",
    "scaled_norm",
    "scaled_row_norms",
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
    "SOFTMAX_DEFAULTS",
    "SOFTMAX_SAMPLINGS",
    "SoftmaxRun",
    "SoftmaxSpec",
    "as_class_labels",
    "prepare_softmax",
    "softmax_objective",
    "softmax_step_count",
]

LOSSES = ("log_loss", "hinge", "squared")

# ---- parameter bounds (the same as cpp/include/privlearn/linear/losses.hpp) -----------------
#: alpha (> 0), eta0, clip (> 0) lie in [SCALE_MIN, SCALE_MAX]; noise_std in [0, SCALE_MAX].
SCALE_MIN, SCALE_MAX = 1e-12, 1e12
#: Gaussian noise multiplier sigma (> 0).
SIGMA_MIN, SIGMA_MAX = 1e-6, 1e6
#: l2-laplace epsilon (or +inf).
EPSILON_MIN, EPSILON_MAX = 1e-6, 1e6
#: n_scale (> 0).
N_SCALE_MAX = float(2**53)
#: Plain sums of squares at least this large (and finite) are used as is (see scaled_row_norms).
_PLAIN_SQUARES_MIN = 2.0**-900
_DBL_MAX = np.finfo(np.float64).max
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


def _fix_scaled(
    sq: np.ndarray, mx: np.ndarray, scaled_sq: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    plain = (sq >= _PLAIN_SQUARES_MIN) & (sq <= _DBL_MAX)
    pos = mx > 0
    scale = np.where(plain, 1.0, np.where(pos, mx, 0.0))
    root = np.where(plain, np.sqrt(np.where(plain, sq, 0.0)), np.sqrt(scaled_sq))
    return scale, np.where(plain | pos, root, 0.0)


def scaled_row_norms(X: Any) -> tuple[np.ndarray, np.ndarray]:
    """Row norms as ``scale * root`` without overflow or underflow of the squares.

    The rule of the core (``ScaledNorm`` in ``cpp/include/privlearn/rows.hpp``): when the plain
    sum of squares of a row lies in ``[2**-900, DBL_MAX]`` it is used (``scale = 1``,
    ``root = sqrt(sum)``); otherwise ``scale = max_k |x_k|`` and
    ``root = sqrt(sum_k (x_k / scale)**2)``. Zero rows give ``scale = root = 0``.

    Parameters
    ----------
    X : ndarray of shape (n, d) or scipy.sparse CSR matrix
        Finite values.

    Returns
    -------
    scale, root : ndarray of shape (n,)
    """
    if sp.issparse(X):
        check_sparse_structure(X)
        X = sp.csr_matrix(X)
        if not X.has_canonical_format:  # duplicates must be summed first (on a copy)
            X = X.copy()
            X.sum_duplicates()
        data = np.asarray(X.data, dtype=np.float64)
        n = X.shape[0]
        counts = np.diff(X.indptr)
        row_of = np.repeat(np.arange(n), counts)
        with np.errstate(over="ignore", under="ignore"):
            sq = np.bincount(row_of, weights=data * data, minlength=n)
        bad = ~((sq >= _PLAIN_SQUARES_MIN) & (sq <= _DBL_MAX))
        mx = np.zeros(n)
        scaled_sq = np.zeros(n)
        if bad.any():
            np.maximum.at(mx, row_of, np.abs(data))
            denom = mx[row_of]
            with np.errstate(under="ignore", invalid="ignore", divide="ignore"):
                r = np.where(denom > 0, data / np.where(denom > 0, denom, 1.0), 0.0)
                scaled_sq = np.bincount(row_of, weights=r * r, minlength=n)
        return _fix_scaled(sq, mx, scaled_sq)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[None, :]
    with np.errstate(over="ignore", under="ignore"):
        sq = np.einsum("ij,ij->i", X, X)
    bad = ~((sq >= _PLAIN_SQUARES_MIN) & (sq <= _DBL_MAX))
    mx = np.zeros(X.shape[0])
    scaled_sq = np.zeros(X.shape[0])
    if bad.any():
        Xb = X[bad]
        mb = np.abs(Xb).max(axis=1) if Xb.shape[1] else np.zeros(Xb.shape[0])
        with np.errstate(under="ignore", invalid="ignore", divide="ignore"):
            r = Xb / np.where(mb > 0, mb, 1.0)[:, None]
            scaled_sq[bad] = np.einsum("ij,ij->i", r, r)
        mx[bad] = mb
    return _fix_scaled(sq, mx, scaled_sq)


def row_norms(X: Any) -> np.ndarray:
    """L2 norm of every row of a dense or CSR matrix, overflow-safe.

    Rows are scaled by their largest absolute entry when the plain sum of squares would
    overflow (norms >= ~1.34e154) or lose precision in subnormals, so e.g. a row
    ``(1e300, 0)`` has norm ``1e300`` (the plain formula gives ``inf`` and a projection
    ``x / ||x||`` would then zero the row). Only norms beyond ``DBL_MAX`` (e.g. four entries
    of ``1e308``) are ``inf``; to project such rows divide by the max-abs first, see
    :func:`scaled_row_norms`.

    Parameters
    ----------
    X : ndarray of shape (n, d) or scipy.sparse matrix

    Returns
    -------
    ndarray of shape (n,)
    """
    scale, root = scaled_row_norms(X)
    with np.errstate(over="ignore"):
        return scale * root


def scaled_norm(w: np.ndarray) -> tuple[float, float]:
    """``(scale, root)`` of one vector with the rule of :func:`scaled_row_norms`."""
    scale, root = scaled_row_norms(np.asarray(w, dtype=np.float64).reshape(1, -1))
    return float(scale[0]), float(root[0])


def clip_coefficients(
    c: np.ndarray, scale: np.ndarray, root: np.ndarray, clip: float
) -> np.ndarray:
    """Per-example clipping on the loss derivative, as ``clip_coefficient`` in the core.

    ``sign(c) * min(|c|, C / ||x_i||)`` with ``C / ||x_i|| = (C / scale) / root``: every
    contribution ``c_i x_i`` then has norm ``<= C`` for every finite row, even when ``c_i`` is
    infinite. A NaN derivative, a zero row, or an infinite ``c_i`` on a row so short that
    ``C / ||x_i||`` overflows too, contribute 0 (any contribution of norm ``<= C`` keeps the
    privacy proof).
    """
    c = np.asarray(c, dtype=np.float64)
    ok = ~np.isnan(c) & (root > 0)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        limit = (clip / np.where(ok, scale, 1.0)) / np.where(ok, root, 1.0)
        a = np.abs(c)
        m = np.where(a <= limit, a, limit)
    ok &= np.isfinite(m)
    return np.where(ok, np.copysign(np.where(ok, m, 0.0), c), 0.0)


def check_keywords(kw: dict[str, Any], allowed: Any, func: str) -> None:
    """``TypeError`` naming every keyword of ``kw`` not in ``allowed``."""
    unknown = sorted(set(kw) - set(allowed))
    if unknown:
        names = ", ".join(repr(k) for k in unknown)
        raise TypeError(
            f"{func}() got unexpected keyword argument(s) {names}; "
            f"valid keywords: {', '.join(sorted(allowed))}"
        )


def as_design_matrix(X: Any, name: str = "X") -> np.ndarray | sp.csr_matrix:
    """C-contiguous float64 ndarray or canonical CSR (int64 indices), all values finite.

    Never writes to the caller's arrays: a sparse input is copied only when it needs
    canonicalising (another format or dtype, duplicate entries, unsorted indices); otherwise
    the result shares the caller's (possibly read-only) arrays. Complex input is a TypeError
    (converting it would silently drop the imaginary part). A sparse input's stored structure
    is checked first (:func:`~privlearn._checks.check_sparse_structure`: indices in range,
    ``indptr`` monotone, lengths consistent), so a malformed matrix is a ValueError before
    scipy's or the core's kernels index with it; callers that append columns (the intercept)
    do so after this check, on the validated matrix.
    """
    check_sparse_structure(X, name)  # before anything indexes with the stored indices
    if np.iscomplexobj(X.data if sp.issparse(X) else X):
        raise TypeError(f"{name} must hold real numbers, got a complex array")
    if sp.issparse(X):
        if X.format != "csr" or X.dtype != np.float64:
            X = sp.csr_matrix(X, dtype=np.float64)  # new arrays
        else:  # a new wrapper around the caller's arrays: nothing below writes to them
            X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=X.shape, copy=False)
        if not X.has_canonical_format:
            # the conversion above may still share indices / indptr with the caller
            X = X.copy()
            X.sum_duplicates()  # also sorts the indices (on our copy only)
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
    rate: float = 0.0

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
            batch_size=as_index(
                kw["batch_size"],
                "batch_size",
                lower=1,
                upper=2**40 if _has_rate(kw) else max(n, 1),
            ),
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
            rate=as_real(kw.get("rate", 0.0), "rate"),
        )
        spec._check()
        return spec

    def core_args(self, n_threads: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The trailing positional and keyword arguments of the core's SGD functions
        (``PRIVLEARN_SGD_ARGS`` in ``bind_linear.cpp``)."""
        args = (
            self.loss,
            self.mechanism,
            self.sampling,
            self.learning_rate,
            self.alpha,
            self.batch_size,
            self.epochs,
            self.steps,
            self.eta0,
            self.clip,
            self.epsilon,
            self.sigma,
            self.radius,
            self.key,
            self.batch_stream,
            self.noise_stream,
            self.record_every,
            n_threads,
        )
        return args, {"rate": self.rate}

    def _check(self) -> None:
        """Bounds (the same as the core's, ``linear/losses.hpp``): alpha 0 or in
        [1e-12, 1e12]; eta0 in [1e-12, 1e12]; clip 0 or in [1e-12, 1e12]; sigma 0 or in
        [1e-6, 1e6]; epsilon in [1e-6, 1e6] or inf; rate 0 or in (0, 1] (Poisson only)."""
        _check_sgd_schedule(self)
        if self.mechanism == "l2-laplace":
            if not (EPSILON_MIN <= self.epsilon <= EPSILON_MAX or self.epsilon == np.inf):
                raise ValueError(f"epsilon must lie in [1e-6, 1e6] or be inf, got {self.epsilon}")
            if self.sampling != "disjoint":
                raise ValueError(
                    "the l2-laplace mechanism is accounted by parallel composition over disjoint "
                    "batches: sampling must be 'disjoint'"
                )
        if self.mechanism == "gaussian":
            _check_gaussian_noise(self)


def _check_sgd_schedule(spec: Any) -> None:
    """The checks every SGD trainer's spec shares (``check_sgd_schedule`` in ``sgd.hpp``):
    alpha, the schedule, eta0, clip, radius and the Poisson rate."""
    if not (spec.alpha == 0 or SCALE_MIN <= spec.alpha <= SCALE_MAX):
        raise ValueError(f"alpha must be 0 or lie in [1e-12, 1e12], got {spec.alpha}")
    if spec.learning_rate == "inv_lambda_t" and spec.alpha <= 0:
        raise ValueError("learning_rate 'inv_lambda_t' needs alpha > 0")
    if not SCALE_MIN <= spec.eta0 <= SCALE_MAX:
        raise ValueError(f"eta0 must lie in [1e-12, 1e12], got {spec.eta0}")
    if not (spec.clip == 0 or SCALE_MIN <= spec.clip <= SCALE_MAX):
        raise ValueError(f"clip must be 0 (no clipping) or lie in [1e-12, 1e12], got {spec.clip}")
    if not spec.radius >= 0:
        raise ValueError(f"radius must be >= 0 (0 = no projection), got {spec.radius}")
    if not (spec.rate == 0 or 0 < spec.rate <= 1):
        raise ValueError(f"rate must lie in (0, 1] (0 = batch_size / n), got {spec.rate}")
    if spec.rate > 0 and spec.sampling != "poisson":
        raise ValueError("rate is the Poisson sampling rate: it needs sampling 'poisson'")


def _check_gaussian_noise(spec: Any) -> None:
    """A noise multiplier 0 or in [1e-6, 1e6], and then ``clip > 0``."""
    if not (spec.sigma == 0 or SIGMA_MIN <= spec.sigma <= SIGMA_MAX):
        raise ValueError(
            f"sigma (noise multiplier) must be 0 or lie in [1e-6, 1e6], got {spec.sigma}"
        )
    if spec.sigma > 0 and not spec.clip > 0:
        raise ValueError("the gaussian mechanism needs clip > 0 (its sensitivity)")


def _has_rate(kw: dict[str, Any]) -> bool:
    """Whether a positive ``rate`` was given (then ``batch_size`` may exceed n)."""
    r = kw.get("rate", 0.0)
    try:
        return float(r) > 0
    except (TypeError, ValueError):
        return False


def check_sgd_iterate(w: np.ndarray) -> None:
    """The core's error for a non-finite SGD iterate (``sgd.cpp``), for the numpy twin and the
    distributed driver."""
    bad = np.flatnonzero(~np.isfinite(w))
    if bad.size:
        raise ValueError(
            f"the SGD iterate became non-finite (overflow at coefficient {bad[0]}): lower eta0 "
            "or alpha, clip the gradients, or scale X and y"
        )


def check_softmax_iterate(w: np.ndarray, n_classes: int) -> None:
    """The core's error for a non-finite softmax iterate (``softmax.cpp``; ``w`` flattened
    row-major), for the numpy twin and the distributed driver."""
    bad = np.flatnonzero(~np.isfinite(np.asarray(w).reshape(-1)))
    if bad.size:
        j, c = divmod(int(bad[0]), n_classes)
        raise ValueError(
            f"the softmax SGD iterate became non-finite (overflow at W[{j}, {c}]): lower eta0 "
            "or alpha, clip the gradients, or scale X"
        )


def check_scd_result(vec: np.ndarray, what: str) -> None:
    """The core's error for a non-finite DP-SCD ``what`` (``scd.cpp``), for the numpy twin and
    the distributed driver."""
    bad = np.flatnonzero(~np.isfinite(vec))
    if bad.size:
        raise ValueError(
            f"DP-SCD produced a non-finite {what} (overflow at entry {bad[0]}): scale X and y, "
            "raise alpha, or set clip > 0 to bound the updates"
        )


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
    """Validate the inputs of :func:`sgd_train` once for both backends.

    ``kw`` holds ``key`` and the keywords of :data:`SGD_DEFAULTS`; any other keyword raises
    ``TypeError``.
    """
    check_keywords(kw, {"key", *SGD_DEFAULTS}, "sgd_train")
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
        if isinstance(b, (int, np.integer)) and b > n and not _has_rate(kw):
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
    "rate": 0.0,
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
    "rate": 0.0,
    "n_scale": 0.0,
    "hidden_alpha": False,
    "alpha_jitter": 0.0,
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
    rate: float = 0.0
    n_scale: float = 0.0
    hidden_alpha: bool = False
    alpha_jitter: float = 0.0

    @property
    def poisson(self) -> bool:
        return self.sampling == "poisson"

    def n_eff(self, n: int) -> float:
        """``N'`` of ``lambda N'``: ``n_scale``, or the true ``n`` when ``n_scale = 0``."""
        return self.n_scale if self.n_scale > 0 else float(n)

    def core_args(self, n_threads: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The trailing positional and keyword arguments of the core's DP-SCD functions
        (``PRIVLEARN_SCD_ARGS`` in ``bind_linear.cpp``)."""
        args = (
            self.loss,
            self.variant,
            self.poisson,
            self.alpha,
            self.batch_size,
            self.epochs,
            self.steps,
            self.clip,
            self.noise_std,
            self.key,
            self.batch_stream,
            self.noise_stream,
            self.record_every,
            n_threads,
        )
        extra = {
            "newton_steps": self.newton_steps,
            "rate": self.rate,
            "n_scale": self.n_scale,
            "hidden_alpha": self.hidden_alpha,
            "alpha_jitter": self.alpha_jitter,
        }
        return args, extra


def prepare_scd(
    X: Any, y: Any, **kw: Any
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray, ScdSpec]:
    """Validate the inputs of :func:`scd_train` once for both backends.

    ``kw`` holds ``key`` and the keywords of :data:`SCD_DEFAULTS`; any other keyword raises
    ``TypeError``. Bounds (the core's, ``linear/losses.hpp``): alpha in [1e-12, 1e12]; clip 0
    or in [1e-12, 1e12]; noise_std in [0, 1e12]; rate 0 or in (0, 1] (Poisson dual / seq);
    n_scale 0 or in [1, 2**53].
    """
    check_keywords(kw, {"key", *SCD_DEFAULTS}, "scd_train")
    X = as_design_matrix(X)
    n, m = X.shape
    y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but X has {n} rows")
    if not np.isfinite(y).all():
        raise ValueError("y contains NaN or infinite values")
    spec = prepare_scd_spec(n, m, **kw)
    if spec.loss != "squared" and not np.isin(y, (-1.0, 1.0)).all():
        raise ValueError("labels must be -1 or +1 for the log_loss and hinge losses")
    return X, y, spec


def prepare_scd_spec(n: int, m: int, **kw: Any) -> ScdSpec:
    """The validated :class:`ScdSpec` of a run on ``n`` rows and ``m`` columns (no data read;
    the data checks are :func:`prepare_scd`'s)."""
    check_keywords(kw, {"key", *SCD_DEFAULTS}, "scd_train")
    for name, choices in (
        ("loss", LOSSES),
        ("variant", SCD_VARIANTS),
        ("sampling", ("poisson", "fixed")),
    ):
        if kw[name] not in choices:
            raise ValueError(f"{name} must be one of {choices}, got {kw[name]!r}")
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
        batch_size=as_index(
            kw["batch_size"], "batch_size", lower=1, upper=2**40 if _has_rate(kw) else units
        ),
        epochs=as_index(kw["epochs"], "epochs", lower=1, upper=2**31),
        steps=as_index(kw["steps"], "steps", upper=2**32 - 1),
        clip=as_real(kw["clip"], "clip"),
        noise_std=as_real(kw["noise_std"], "noise_std"),
        key=bytes(key),
        batch_stream=as_index(kw["batch_stream"], "batch_stream", upper=2**64 - 2),
        noise_stream=as_index(kw["noise_stream"], "noise_stream", upper=2**64 - 3),
        record_every=as_index(kw["record_every"], "record_every", upper=2**62),
        newton_steps=as_index(kw["newton_steps"], "newton_steps", lower=1, upper=100),
        rate=as_real(kw["rate"], "rate"),
        n_scale=as_real(kw["n_scale"], "n_scale"),
        hidden_alpha=_as_flag(kw["hidden_alpha"], "hidden_alpha"),
        alpha_jitter=as_real(kw["alpha_jitter"], "alpha_jitter"),
    )
    if not SCALE_MIN <= spec.alpha <= SCALE_MAX:
        raise ValueError(f"alpha (lambda) must lie in [1e-12, 1e12], got {spec.alpha}")
    if not (spec.clip == 0 or SCALE_MIN <= spec.clip <= SCALE_MAX):
        raise ValueError(f"clip must be 0 (no scaling) or lie in [1e-12, 1e12], got {spec.clip}")
    if not 0 <= spec.noise_std <= SCALE_MAX:
        raise ValueError(f"noise_std must lie in [0, 1e12], got {spec.noise_std}")
    if not (spec.rate == 0 or 0 < spec.rate <= 1):
        raise ValueError(f"rate must lie in (0, 1] (0 = batch_size / N), got {spec.rate}")
    if spec.rate > 0 and not (spec.poisson and spec.variant in ("dual", "seq")):
        raise ValueError(
            "rate is the Poisson sampling rate of the dual / seq variants: it needs "
            "sampling 'poisson'"
        )
    if not (spec.n_scale == 0 or 1 <= spec.n_scale <= N_SCALE_MAX):
        raise ValueError(f"n_scale must be 0 (= N) or lie in [1, 2**53], got {spec.n_scale}")
    if spec.variant == "scd" and (spec.clip > 0 or spec.noise_std > 0):
        raise ValueError("the 'scd' variant is the non-private baseline: no clip, no noise")
    if not 0 <= spec.alpha_jitter <= SCALE_MAX:
        raise ValueError(f"alpha_jitter must lie in [0, 1e12], got {spec.alpha_jitter}")
    if spec.alpha_jitter > 0 and spec.variant not in ("dual", "seq"):
        raise ValueError(
            "alpha_jitter needs variant 'dual' or 'seq' (it perturbs the dual variables)"
        )
    if spec.hidden_alpha and not (spec.variant == "dual" and spec.poisson):
        raise ValueError(
            "hidden_alpha (no per-step noise on alpha) needs variant 'dual' with Poisson "
            "batches: the hidden-state argument does not cover seq or fixed batches"
        )
    return spec


def _as_flag(value: Any, name: str) -> bool:
    """A strict bool (``True``/``False`` or a numpy bool), else ``TypeError``."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


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


# ---- softmax (multinomial logistic) regression by Gaussian DP-SGD -----------------------------
SOFTMAX_SAMPLINGS = ("poisson", "fixed")

SOFTMAX_DEFAULTS: dict[str, Any] = {
    "sampling": "poisson",
    "learning_rate": "inv_sqrt",
    "alpha": 1e-4,
    "batch_size": 10,
    "epochs": 1,
    "steps": 0,
    "eta0": 1.0,
    "clip": 0.0,
    "sigma": 0.0,
    "radius": 0.0,
    "batch_stream": 1,
    "noise_stream": 2,
    "record_every": 0,
    "rate": 0.0,
}


@dataclass(frozen=True)
class SoftmaxRun:
    """Result of :func:`softmax_sgd_train`: final ``(d, K)`` iterate, recorded iterates (each
    flattened row-major to ``d * K`` entries) and step counts."""

    coef: np.ndarray  # (d, K)
    path: np.ndarray  # (k, d * K)
    path_steps: np.ndarray  # (k,)
    n_steps: int


@dataclass(frozen=True)
class SoftmaxSpec:
    """Validated arguments of :func:`softmax_sgd_train` (both backends)."""

    n_classes: int
    sampling: str
    learning_rate: str
    alpha: float
    batch_size: int
    epochs: int
    steps: int
    eta0: float
    clip: float
    sigma: float
    radius: float
    key: bytes
    batch_stream: int
    noise_stream: int
    record_every: int
    rate: float = 0.0

    def core_args(self, n_threads: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The trailing positional and keyword arguments of the core's softmax SGD functions
        (``PRIVLEARN_SOFTMAX_ARGS`` in ``bind_linear.cpp``)."""
        args = (
            self.sampling,
            self.learning_rate,
            self.alpha,
            self.batch_size,
            self.epochs,
            self.steps,
            self.eta0,
            self.clip,
            self.sigma,
            self.radius,
            self.key,
            self.batch_stream,
            self.noise_stream,
            self.record_every,
            n_threads,
        )
        return args, {"rate": self.rate}


def softmax_step_count(n: int, spec: SoftmaxSpec) -> int:
    """``steps`` if > 0, else ``ceil(epochs * n / batch_size)``."""
    if spec.steps > 0:
        return spec.steps
    return -(-(spec.epochs * n) // spec.batch_size)


def as_class_labels(y: Any, n: int, n_classes: int) -> np.ndarray:
    """Labels as int64 in ``[0, n_classes)``, one per row.

    Integer arrays, or real arrays whose values are all integral, are accepted; bools, other
    dtypes (strings, objects) raise ``TypeError``; non-integral, non-finite or out-of-range
    values raise ``ValueError``.
    """
    y = np.asarray(y)
    if y.dtype == np.bool_ or y.dtype.kind not in "iuf":
        raise TypeError(
            f"y must hold integer class labels in [0, {n_classes}), got dtype {y.dtype}"
        )
    y = y.reshape(-1)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but X has {n} rows")
    if y.dtype.kind == "f":
        if not np.isfinite(y).all():
            raise ValueError("y contains NaN or infinite values")
        if not (y == np.floor(y)).all():
            raise ValueError("y must hold integer class labels, got non-integral values")
    bad = np.flatnonzero((y < 0) | (y >= n_classes))
    if bad.size:
        raise ValueError(
            f"label {y[bad[0]]} of row {bad[0]} is outside [0, n_classes = {n_classes})"
        )
    return np.ascontiguousarray(y, dtype=np.int64)


def prepare_softmax(
    X: Any, y: Any, W0: Any, **kw: Any
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray, np.ndarray, SoftmaxSpec]:
    """Validate the inputs of :func:`softmax_sgd_train` once for both backends.

    ``kw`` holds ``key``, ``n_classes`` and the keywords of :data:`SOFTMAX_DEFAULTS`; any other
    keyword raises ``TypeError``. Bounds as :class:`SgdSpec` (``linear/losses.hpp``).
    """
    check_keywords(kw, {"key", "n_classes", *SOFTMAX_DEFAULTS}, "softmax_sgd_train")
    n_classes = as_index(kw["n_classes"], "n_classes", lower=2, upper=2**31)
    X = as_design_matrix(X)
    n, d = X.shape
    y = as_class_labels(y, n, n_classes)
    W0 = as_initial_weights(W0, d, n_classes)
    return X, y, W0, prepare_softmax_spec(n, d, **kw)


def as_initial_weights(W0: Any, d: int, n_classes: int) -> np.ndarray:
    """``W0`` as a finite float64 ``(d, n_classes)`` array (zeros when None)."""
    if W0 is None:
        return np.zeros((d, n_classes))
    W0 = np.ascontiguousarray(W0, dtype=np.float64)
    if W0.shape != (d, n_classes):
        raise ValueError(f"W0 must have shape ({d}, {n_classes}), got {W0.shape}")
    if not np.isfinite(W0).all():
        raise ValueError("W0 contains NaN or infinite values")
    return W0


def prepare_softmax_spec(n: int, d: int, **kw: Any) -> SoftmaxSpec:
    """The validated :class:`SoftmaxSpec` of a run on ``n`` rows and ``d`` columns (no data
    read; the data checks are :func:`prepare_softmax`'s)."""
    check_keywords(kw, {"key", "n_classes", *SOFTMAX_DEFAULTS}, "softmax_sgd_train")
    n_classes = as_index(kw["n_classes"], "n_classes", lower=2, upper=2**31)
    for name, choices in (("sampling", SOFTMAX_SAMPLINGS), ("learning_rate", SCHEDULES)):
        if kw[name] not in choices:
            raise ValueError(f"{name} must be one of {choices}, got {kw[name]!r}")
    key = kw["key"]
    if not isinstance(key, (bytes, bytearray)) or len(key) != 32:
        raise ValueError("key must be 32 bytes")
    spec = SoftmaxSpec(
        n_classes=n_classes,
        sampling=kw["sampling"],
        learning_rate=kw["learning_rate"],
        alpha=as_real(kw["alpha"], "alpha"),
        batch_size=as_index(
            kw["batch_size"], "batch_size", lower=1, upper=2**40 if _has_rate(kw) else n
        ),
        epochs=as_index(kw["epochs"], "epochs", lower=1, upper=2**31),
        steps=as_index(kw["steps"], "steps", upper=2**32 - 1),
        eta0=as_real(kw["eta0"], "eta0"),
        clip=as_real(kw["clip"], "clip"),
        sigma=as_real(kw["sigma"], "sigma"),
        radius=as_real(kw["radius"], "radius"),
        key=bytes(key),
        batch_stream=as_index(kw["batch_stream"], "batch_stream", upper=2**64 - 1),
        noise_stream=as_index(kw["noise_stream"], "noise_stream", upper=2**64 - 1),
        record_every=as_index(kw["record_every"], "record_every", upper=2**62),
        rate=as_real(kw["rate"], "rate"),
    )
    _check_sgd_schedule(spec)
    _check_gaussian_noise(spec)
    steps = softmax_step_count(n, spec)
    if steps >= 2**32:
        raise ValueError("too many SGD steps (>= 2^32)")
    if steps * d * n_classes > 2**62:
        raise ValueError(
            "too many steps for the noise address space (steps * d * n_classes > 2^62)"
        )
    return spec


def softmax_objective(X: Any, y: np.ndarray, W: np.ndarray, alpha: float) -> float:
    """``(alpha/2)||W||_F^2 + (1/n) sum_i -log softmax(x_i^T W)_{y_i}`` (labels in [0, K))."""
    from scipy.special import logsumexp

    W = np.asarray(W, dtype=np.float64)
    Z = np.asarray(X @ W)
    y = np.asarray(y, dtype=np.int64)
    nll = logsumexp(Z, axis=1) - Z[np.arange(Z.shape[0]), y]
    return float(0.5 * alpha * np.sum(W * W) + nll.mean())
