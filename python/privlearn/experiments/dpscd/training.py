"""One run of the DP-SCD reproduction: its seed, its noise and the fit.

Belongs here: the noise multiplier of a private run (:func:`_sigma`, the RDP accountant), the
seed of a run (:func:`_run_seed`: a function of task, method, epsilon, configuration, phase and
run index only), one job (:class:`_Job`) and training it with the C++ core and scoring it on
validation and test (:func:`_fit`). Not here: tuning, selection and the final runs
(:mod:`.simulation`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from privlearn._losses import objective
from privlearn.experiments.dpscd.data import Split
from privlearn.experiments.dpscd.settings import _TAG, DELTA, LAMBDA, TASKS, Config, Task
from privlearn.experiments.runs import derive_seed
from privlearn.linear.scd_estimators import ALPHA_JITTER


@lru_cache(maxsize=4096)
def _sigma(epsilon: float, n: int, L: int, epochs: int) -> float:
    """Noise multiplier of ``T = ceil(epochs n / L)`` Poisson-subsampled Gaussian steps."""
    if math.isinf(epsilon):
        return 0.0
    from privlearn.accounting import calibrate_sigma

    steps = -(-(epochs * n) // L)
    return float(calibrate_sigma(epsilon, DELTA, q=L / n, steps=steps))


def _eps_label(epsilon: float) -> str:
    return "inf" if math.isinf(epsilon) else f"{epsilon:g}"


def _run_seed(task: str, method: str, epsilon: float, config: Config, phase: str, r: int) -> int:
    """The seed of one run: a function of (task, method, epsilon, configuration, phase, run)."""
    return derive_seed(_TAG, task, method, f"eps={_eps_label(epsilon)}", config.label, phase, r)


@dataclass(frozen=True)
class _Job:
    task: str
    method: str
    epsilon: float
    config: Config
    phase: str  # "tune", "final" or "fig3"
    run: int
    record: bool = False

    @property
    def seed(self) -> int:
        return _run_seed(self.task, self.method, self.epsilon, self.config, self.phase, self.run)


@dataclass
class _Out:
    val: float
    test: float
    diverged: bool
    sigma: float
    noise_std: float
    path: tuple[np.ndarray, np.ndarray] | None = None  # (epochs, objective)


def _metric(task: Task, X: np.ndarray, y: np.ndarray, coef: np.ndarray) -> float:
    z = X @ coef
    if task.metric == "mse":
        return float(np.mean((z - y) ** 2))
    return float(np.mean(np.where(z >= 0.0, 1.0, -1.0) == y))


def _worst(task: Task) -> float:
    return math.inf if task.metric == "mse" else 0.0


def _fit(job: _Job, split: Split, epochs: int) -> _Out:
    """Train one run of ``job`` on ``split.X_train`` and evaluate it on validation and test."""
    from privlearn.linear import scd_train, sgd_train
    from privlearn.random import key_from_seed

    task = TASKS[job.task]
    X, y = split.X_train, split.y_train
    n = X.shape[0]
    cfg = job.config
    key = key_from_seed(job.seed)
    sigma = noise_std = 0.0
    record = 0
    if job.method == "SCD":
        if job.record:
            record = n
        res = scd_train(
            X, y, key=key, n_threads=1, loss=task.loss, variant="scd", alpha=LAMBDA,
            epochs=epochs, record_every=record,
        )  # fmt: skip
        coef, unit = res.coef, 1.0 / n
    elif job.method in ("DP-SCD", "SeqDP-SCD"):
        sigma = _sigma(job.epsilon, n, cfg.L, epochs)
        hidden: dict[str, Any] = {}
        if job.method == "DP-SCD":
            # v noise sigma C, hidden alpha (issue 20; Lemma 1 of the paper: sqrt(2) sigma C)
            noise_std = sigma * cfg.C
            if noise_std > 0:
                hidden = dict(hidden_alpha=True, alpha_jitter=ALPHA_JITTER * noise_std)
        else:
            noise_std = 2.0 * cfg.C * math.sqrt(cfg.L * (cfg.L + 1.0)) * sigma  # Appendix C
        steps = -(-(epochs * n) // cfg.L)
        if job.record:
            record = max(1, steps // epochs)
        res = scd_train(
            X, y, key=key, n_threads=1, loss=task.loss,
            variant="dual" if job.method == "DP-SCD" else "seq", sampling="poisson",
            alpha=LAMBDA, batch_size=cfg.L, epochs=epochs, clip=cfg.C, noise_std=noise_std,
            record_every=record, **hidden,
        )  # fmt: skip
        coef, unit = res.coef, cfg.L / n
    elif job.method in ("SGD", "DP-SGD"):
        private = job.method == "DP-SGD"
        sigma = _sigma(job.epsilon, n, cfg.L, epochs) if private else 0.0
        noise_std = sigma * cfg.C
        steps = -(-(epochs * n) // cfg.L)
        if job.record:
            record = max(1, steps // epochs)
        sres = sgd_train(
            X, y, key=key, n_threads=1, loss=task.loss,
            mechanism="gaussian" if private else "none", sampling="poisson",
            learning_rate="constant", eta0=cfg.eta, alpha=LAMBDA, batch_size=cfg.L,
            epochs=epochs, clip=cfg.C if private else 0.0, sigma=sigma, record_every=record,
        )  # fmt: skip
        coef, unit = sres.coef, cfg.L / n
    else:  # pragma: no cover - methods are validated by simulate()
        raise ValueError(job.method)

    diverged = not bool(np.all(np.isfinite(coef)))
    if diverged:
        val = test = _worst(task)
    else:
        val = _metric(task, split.X_val, split.y_val, coef)
        test = _metric(task, split.X_test, split.y_test, coef)
    path = None
    if job.record:
        if job.method in ("SGD", "DP-SGD"):
            W = sres.path
            steps_arr = sres.path_steps
            chunk = max(1, 8_000_000 // max(n, 1))
            with np.errstate(over="ignore", invalid="ignore"):
                obj = np.concatenate(
                    [
                        objective(X, y, W[i : i + chunk], task.loss, LAMBDA)
                        for i in range(0, len(W), chunk)
                    ]
                )
        else:
            steps_arr = res.path_steps
            obj = res.primal_path
        start = float(objective(X, y, np.zeros(X.shape[1]), task.loss, LAMBDA)[0])
        ep = np.concatenate([[0.0], np.asarray(steps_arr, dtype=np.float64) * unit])
        path = (ep, np.concatenate([[start], np.asarray(obj, dtype=np.float64)]))
    return _Out(val, test, diverged, sigma, noise_std, path)
