"""numpy twin of the core's private mini-batch SGD (``cpp/include/privlearn/linear/sgd.hpp``).

Same signature and the same random draws as :func:`privlearn.linear.sgd_train`, so core and
reference models agree to ``rtol=1e-10``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from privlearn._linear_common import SGDRun, loss_derivative, prepare_sgd, sgd_step_count
from privlearn.reference.random import Stream

__all__ = ["sgd_train"]


def _learning_rate(schedule: str, eta0: float, alpha: float, step: int) -> float:
    s = float(step + 1)
    if schedule == "inv_sqrt":
        return eta0 / np.sqrt(s)
    if schedule == "inv_lambda_t":
        return 1.0 / (alpha * s)
    return eta0


def sgd_train(
    X: Any, y: Any, *, key: bytes, w0: Any = None, n_threads: int | None = None, **kw: Any
) -> SGDRun:
    """Private mini-batch SGD in numpy; see :func:`privlearn.linear.sgd_train` for the arguments.

    ``n_threads`` is accepted for signature compatibility and ignored.
    """
    from privlearn._linear_common import SGD_DEFAULTS

    X, y, w, spec = prepare_sgd(X, y, w0, key=key, **{**SGD_DEFAULTS, **kw})
    n, d = X.shape
    steps = sgd_step_count(n, spec)
    batches = Stream(key=spec.key, stream=spec.batch_stream)
    noises = Stream(key=spec.key, stream=spec.noise_stream)
    per_pass = -(-n // spec.batch_size)
    sparse = sp.issparse(X)
    perm = np.empty(0, dtype=np.int64)
    path, path_steps = [], []
    for t in range(steps):
        if spec.sampling == "disjoint":
            p, k = divmod(t, per_pass)
            if k == 0:
                perm = batches.permutation(p, n)
            rows = perm[k * spec.batch_size : (k + 1) * spec.batch_size]
        elif spec.sampling == "fixed":
            rows = batches.choice_without_replacement(t, n, spec.batch_size)
        else:
            rows = batches.poisson_sample(t, n, spec.batch_size / n)
        Xb = X[rows]
        c = loss_derivative(spec.loss, np.asarray(Xb @ w).reshape(-1), y[rows])
        if spec.clip > 0:
            norms = (
                np.sqrt(np.asarray(Xb.multiply(Xb).sum(axis=1)).reshape(-1))
                if sparse
                else np.linalg.norm(Xb, axis=1)
            )
            g = np.abs(c) * norms
            big = g > spec.clip
            c = np.where(big, c * (spec.clip / np.where(big, g, 1.0)), c)
        grad = np.asarray(Xb.T @ c).reshape(-1)
        if spec.mechanism == "l2-laplace" and np.isfinite(spec.epsilon):
            unit = spec.clip if spec.clip > 0 else 1.0
            grad = grad + unit * noises.l2_laplace(t, 1, d, spec.epsilon)[0]
        elif spec.mechanism == "gaussian" and spec.sigma > 0:
            grad = grad + (spec.sigma * spec.clip) * noises.normal(t * d, d)
        denom = float(spec.batch_size) if spec.sampling == "poisson" else float(len(rows))
        eta = _learning_rate(spec.learning_rate, spec.eta0, spec.alpha, t)
        w = w - eta * (spec.alpha * w + grad / denom)
        if spec.radius > 0 and np.isfinite(spec.radius):
            norm = np.linalg.norm(w)
            if norm > spec.radius:
                w = w * (spec.radius / norm)
        if spec.record_every > 0 and ((t + 1) % spec.record_every == 0 or t + 1 == steps):
            path.append(w)
            path_steps.append(t + 1)
    return SGDRun(
        coef=w,
        path=np.array(path).reshape(len(path), d),
        path_steps=np.array(path_steps, dtype=np.int64),
        n_steps=steps,
    )
