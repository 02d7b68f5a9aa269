"""The run specification of private mini-batch SGD (``sgd_train``): Song, Chaudhuri, Sarwate
(2013) and Abadi et al. (2016).

What belongs here: the defaults, choices and bounds of ``sgd_train``'s arguments, the validated
:class:`SgdSpec` and :func:`prepare_sgd`, the step count, the result record :class:`SGDRun` and
the core's error for a non-finite iterate (``cpp/include/privlearn/linear/sgd.hpp``); also the
schedule and Gaussian-noise checks that the softmax trainer (SGD for ``K`` classes,
:mod:`privlearn._specs.softmax`) shares.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from privlearn._checks import as_index, as_real
from privlearn._design_matrix import as_design_matrix
from privlearn._losses import LOSSES
from privlearn._specs.arguments import (
    EPSILON_MAX,
    EPSILON_MIN,
    SCALE_MAX,
    SCALE_MIN,
    SIGMA_MAX,
    SIGMA_MIN,
    CoreArgs,
    as_targets,
    check_choices,
    check_key,
    check_keywords,
    has_rate,
)

__all__ = [
    "MECHANISMS",
    "SAMPLINGS",
    "SCHEDULES",
    "SGD_DEFAULTS",
    "SGDRun",
    "SgdSpec",
    "check_gaussian_noise",
    "check_sgd_iterate",
    "check_sgd_schedule",
    "prepare_sgd",
    "sgd_fields",
    "sgd_step_count",
]

MECHANISMS = ("none", "l2-laplace", "gaussian")
SAMPLINGS = ("disjoint", "poisson", "fixed")
SCHEDULES = ("inv_sqrt", "inv_lambda_t", "constant")

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


@dataclass(frozen=True)
class SGDRun:
    """Result of :func:`sgd_train`: final iterate, recorded iterates and step counts."""

    coef: np.ndarray
    path: np.ndarray  # (k, d) iterates recorded every ``record_every`` steps and at the end
    path_steps: np.ndarray  # (k,) steps done at each recorded iterate
    n_steps: int


def sgd_fields(kw: dict[str, Any], batch_upper: int, *, epsilon: bool) -> dict[str, Any]:
    """The converted numeric fields of an SGD spec (:class:`SgdSpec`, and
    :class:`~privlearn._specs.softmax.SoftmaxSpec` with ``epsilon=False``), checked in the order
    of the spec's fields; ``batch_upper`` bounds ``batch_size`` unless a positive ``rate`` is
    given."""
    fields: dict[str, Any] = dict(
        alpha=as_real(kw["alpha"], "alpha"),
        batch_size=as_index(
            kw["batch_size"], "batch_size", lower=1, upper=2**40 if has_rate(kw) else batch_upper
        ),
        epochs=as_index(kw["epochs"], "epochs", lower=1, upper=2**31),
        steps=as_index(kw["steps"], "steps", upper=2**32 - 1),
        eta0=as_real(kw["eta0"], "eta0"),
        clip=as_real(kw["clip"], "clip"),
    )
    if epsilon:
        fields["epsilon"] = as_real(kw["epsilon"], "epsilon")
    fields.update(
        sigma=as_real(kw["sigma"], "sigma"),
        radius=as_real(kw["radius"], "radius"),
        key=bytes(kw["key"]),
        batch_stream=as_index(kw["batch_stream"], "batch_stream", upper=2**64 - 1),
        noise_stream=as_index(kw["noise_stream"], "noise_stream", upper=2**64 - 1),
        record_every=as_index(kw["record_every"], "record_every", upper=2**62),
        rate=as_real(kw.get("rate", 0.0), "rate"),
    )
    return fields


@dataclass(frozen=True)
class SgdSpec(CoreArgs):
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

    # the core's SGD functions (``PRIVLEARN_SGD_ARGS`` in ``bind_linear.cpp``)
    _core_positional = (
        "loss", "mechanism", "sampling", "learning_rate", "alpha", "batch_size", "epochs",
        "steps", "eta0", "clip", "epsilon", "sigma", "radius", "key", "batch_stream",
        "noise_stream", "record_every",
    )  # fmt: skip
    _core_keywords = ("rate",)

    @classmethod
    def make(cls, n: int, **kw: Any) -> SgdSpec:
        check_choices(
            kw,
            (
                ("loss", LOSSES),
                ("mechanism", MECHANISMS),
                ("sampling", SAMPLINGS),
                ("learning_rate", SCHEDULES),
            ),
        )
        check_key(kw)
        spec = cls(
            loss=kw["loss"],
            mechanism=kw["mechanism"],
            sampling=kw["sampling"],
            learning_rate=kw["learning_rate"],
            **sgd_fields(kw, max(n, 1), epsilon=True),
        )
        spec._check()
        return spec

    def _check(self) -> None:
        """Bounds (the same as the core's, ``linear/losses.hpp``): alpha 0 or in
        [1e-12, 1e12]; eta0 in [1e-12, 1e12]; clip 0 or in [1e-12, 1e12]; sigma 0 or in
        [1e-6, 1e6]; epsilon in [1e-6, 1e6] or inf; rate 0 or in (0, 1] (Poisson only)."""
        check_sgd_schedule(self)
        if self.mechanism == "l2-laplace":
            if not (EPSILON_MIN <= self.epsilon <= EPSILON_MAX or self.epsilon == np.inf):
                raise ValueError(f"epsilon must lie in [1e-6, 1e6] or be inf, got {self.epsilon}")
            if self.sampling != "disjoint":
                raise ValueError(
                    "the l2-laplace mechanism is accounted by parallel composition over disjoint "
                    "batches: sampling must be 'disjoint'"
                )
        if self.mechanism == "gaussian":
            check_gaussian_noise(self)


def check_sgd_schedule(spec: Any) -> None:
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


def check_gaussian_noise(spec: Any) -> None:
    """A noise multiplier 0 or in [1e-6, 1e6], and then ``clip > 0``."""
    if not (spec.sigma == 0 or SIGMA_MIN <= spec.sigma <= SIGMA_MAX):
        raise ValueError(
            f"sigma (noise multiplier) must be 0 or lie in [1e-6, 1e6], got {spec.sigma}"
        )
    if spec.sigma > 0 and not spec.clip > 0:
        raise ValueError("the gaussian mechanism needs clip > 0 (its sensitivity)")


def check_sgd_iterate(w: np.ndarray) -> None:
    """The core's error for a non-finite SGD iterate (``sgd.cpp``), for the numpy twin and the
    distributed driver."""
    bad = np.flatnonzero(~np.isfinite(w))
    if bad.size:
        raise ValueError(
            f"the SGD iterate became non-finite (overflow at coefficient {bad[0]}): lower eta0 "
            "or alpha, clip the gradients, or scale X and y"
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
    y = as_targets(y, n)
    w0 = np.zeros(d) if w0 is None else np.ascontiguousarray(w0, dtype=np.float64).reshape(-1)
    if w0.shape[0] != d or not np.isfinite(w0).all():
        raise ValueError(f"w0 must be {d} finite values")
    if "batch_size" in kw and not isinstance(kw["batch_size"], bool):
        b = kw["batch_size"]
        if isinstance(b, (int, np.integer)) and b > n and not has_rate(kw):
            raise ValueError(f"batch_size ({b}) must be <= n_samples ({n})")
    return X, y, w0, SgdSpec.make(n, **kw)
