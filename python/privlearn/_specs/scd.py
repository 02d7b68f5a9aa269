"""The run specification of DP-SCD (``scd_train``): Damaskinos, Mendler-Duenner, Guerraoui,
Papandreou, Parnell, "Differentially Private Stochastic Coordinate Descent" (AAAI 2021).

What belongs here: the defaults, variants and bounds of ``scd_train``'s arguments, the validated
:class:`ScdSpec` and :func:`prepare_scd`, the step count ``T`` of each variant, the result record
:class:`SCDRun` and the core's error for a non-finite result
(``cpp/include/privlearn/linear/scd.hpp``). The dual objective is in :mod:`privlearn._losses`.
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
    N_SCALE_MAX,
    SCALE_MAX,
    SCALE_MIN,
    CoreArgs,
    as_flag,
    as_targets,
    check_choices,
    check_key,
    check_keywords,
    has_rate,
)

__all__ = [
    "SCD_DEFAULTS",
    "SCD_VARIANTS",
    "SCDRun",
    "ScdSpec",
    "check_scd_result",
    "prepare_scd",
    "prepare_scd_spec",
    "scd_step_count",
]

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
class ScdSpec(CoreArgs):
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

    # the core's DP-SCD functions (``PRIVLEARN_SCD_ARGS`` in ``bind_linear.cpp``)
    _core_positional = (
        "loss", "variant", "poisson", "alpha", "batch_size", "epochs", "steps", "clip",
        "noise_std", "key", "batch_stream", "noise_stream", "record_every",
    )  # fmt: skip
    _core_keywords = ("newton_steps", "rate", "n_scale", "hidden_alpha", "alpha_jitter")


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
    y = as_targets(y, n)
    spec = prepare_scd_spec(n, m, **kw)
    if spec.loss != "squared" and not np.isin(y, (-1.0, 1.0)).all():
        raise ValueError("labels must be -1 or +1 for the log_loss and hinge losses")
    return X, y, spec


def prepare_scd_spec(n: int, m: int, **kw: Any) -> ScdSpec:
    """The validated :class:`ScdSpec` of a run on ``n`` rows and ``m`` columns (no data read;
    the data checks are :func:`prepare_scd`'s)."""
    check_keywords(kw, {"key", *SCD_DEFAULTS}, "scd_train")
    check_choices(
        kw, (("loss", LOSSES), ("variant", SCD_VARIANTS), ("sampling", ("poisson", "fixed")))
    )
    if kw["variant"] == "primal" and kw["loss"] == "hinge":
        raise ValueError("the primal variant supports the squared and logistic losses only")
    key = check_key(kw)
    units = m if kw["variant"] == "primal" else n
    spec = ScdSpec(
        loss=kw["loss"],
        variant=kw["variant"],
        sampling=kw["sampling"],
        alpha=as_real(kw["alpha"], "alpha"),
        batch_size=as_index(
            kw["batch_size"], "batch_size", lower=1, upper=2**40 if has_rate(kw) else units
        ),
        epochs=as_index(kw["epochs"], "epochs", lower=1, upper=2**31),
        steps=as_index(kw["steps"], "steps", upper=2**32 - 1),
        clip=as_real(kw["clip"], "clip"),
        noise_std=as_real(kw["noise_std"], "noise_std"),
        key=key,
        batch_stream=as_index(kw["batch_stream"], "batch_stream", upper=2**64 - 2),
        noise_stream=as_index(kw["noise_stream"], "noise_stream", upper=2**64 - 3),
        record_every=as_index(kw["record_every"], "record_every", upper=2**62),
        newton_steps=as_index(kw["newton_steps"], "newton_steps", lower=1, upper=100),
        rate=as_real(kw["rate"], "rate"),
        n_scale=as_real(kw["n_scale"], "n_scale"),
        hidden_alpha=as_flag(kw["hidden_alpha"], "hidden_alpha"),
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


def scd_step_count(n: int, m: int, spec: ScdSpec) -> int:
    """T: ``steps`` if given, else ``epochs * N`` (scd), ``ceil(epochs * M / L)`` (primal) or
    ``ceil(epochs * N / L)`` (dual, seq)."""
    if spec.steps > 0:
        return spec.steps
    if spec.variant == "scd":
        return spec.epochs * n
    units = m if spec.variant == "primal" else n
    return -(-(spec.epochs * units) // spec.batch_size)


def check_scd_result(vec: np.ndarray, what: str) -> None:
    """The core's error for a non-finite DP-SCD ``what`` (``scd.cpp``), for the numpy twin and
    the distributed driver."""
    bad = np.flatnonzero(~np.isfinite(vec))
    if bad.size:
        raise ValueError(
            f"DP-SCD produced a non-finite {what} (overflow at entry {bad[0]}): scale X and y, "
            "raise alpha, or set clip > 0 to bound the updates"
        )
