"""The run specification of softmax (multinomial logistic) regression by Gaussian DP-SGD
(``softmax_sgd_train``; Abadi et al. 2016 with the whole per-example gradient clipped).

What belongs here: the defaults and choices of ``softmax_sgd_train``'s arguments, the class
labels and initial weights it accepts, the validated :class:`SoftmaxSpec` and
:func:`prepare_softmax`, the step count, the result record :class:`SoftmaxRun` and the core's
error for a non-finite iterate (``cpp/include/privlearn/linear/softmax.hpp``). The checks it
shares with binary SGD come from :mod:`privlearn._specs.sgd`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from privlearn._checks import as_index
from privlearn._design_matrix import as_design_matrix
from privlearn._specs.arguments import CoreArgs, check_choices, check_key, check_keywords
from privlearn._specs.sgd import (
    SCHEDULES,
    SGD_DEFAULTS,
    check_gaussian_noise,
    check_sgd_schedule,
    sgd_fields,
)

__all__ = [
    "SOFTMAX_DEFAULTS",
    "SOFTMAX_SAMPLINGS",
    "SoftmaxRun",
    "SoftmaxSpec",
    "as_class_labels",
    "as_initial_weights",
    "check_softmax_iterate",
    "prepare_softmax",
    "prepare_softmax_spec",
    "softmax_step_count",
]

SOFTMAX_SAMPLINGS = ("poisson", "fixed")

#: :data:`~privlearn._specs.sgd.SGD_DEFAULTS` but Poisson sampling, without ``loss`` (always the
#: log loss), ``mechanism`` (always Gaussian) and ``epsilon`` (the noise is ``sigma``).
SOFTMAX_DEFAULTS: dict[str, Any] = {
    **{k: v for k, v in SGD_DEFAULTS.items() if k not in ("loss", "mechanism", "epsilon")},
    "sampling": "poisson",
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
class SoftmaxSpec(CoreArgs):
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

    # the core's softmax SGD functions (``PRIVLEARN_SOFTMAX_ARGS`` in ``bind_linear.cpp``)
    _core_positional = (
        "sampling", "learning_rate", "alpha", "batch_size", "epochs", "steps", "eta0", "clip",
        "sigma", "radius", "key", "batch_stream", "noise_stream", "record_every",
    )  # fmt: skip
    _core_keywords = ("rate",)


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
        raise ValueError(  # the row's index only: never the label, a private value
            f"the label of row {bad[0]} is outside [0, n_classes = {n_classes})"
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
    check_choices(kw, (("sampling", SOFTMAX_SAMPLINGS), ("learning_rate", SCHEDULES)))
    check_key(kw)
    spec = SoftmaxSpec(
        n_classes=n_classes,
        sampling=kw["sampling"],
        learning_rate=kw["learning_rate"],
        **sgd_fields(kw, n, epsilon=False),
    )
    check_sgd_schedule(spec)
    check_gaussian_noise(spec)
    steps = softmax_step_count(n, spec)
    if steps >= 2**32:
        raise ValueError("too many SGD steps (>= 2^32)")
    if steps * d * n_classes > 2**62:
        raise ValueError(
            "too many steps for the noise address space (steps * d * n_classes > 2^62)"
        )
    return spec


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
