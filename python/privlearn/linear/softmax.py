"""Multinomial (softmax) logistic regression by Gaussian DP-SGD on the C++ core.

Abadi et al. (2016), "Deep learning with differential privacy", Algorithm 1, with per-example
clipping of the whole ``(d, K)`` gradient (one clipping budget for all classes). The numpy twin
is :func:`privlearn.reference.linear.softmax_sgd_train`.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from privlearn import _core
from privlearn._checks import as_threads
from privlearn._specs.softmax import SOFTMAX_DEFAULTS, SoftmaxRun, prepare_softmax
from privlearn.linear._kernels import dense_or_csr

__all__ = ["softmax_sgd_train"]


def softmax_sgd_train(
    X: Any,
    y: Any,
    *,
    key: bytes,
    n_classes: int,
    W0: Any = None,
    n_threads: int | None = None,
    **kw: Any,
) -> SoftmaxRun:
    """Run Gaussian DP-SGD for softmax regression and return the iterates (no accounting here).

    Minimises ``(alpha/2)||W||_F^2 + (1/n) sum_i -log p_{i, y_i}`` with
    ``p_i = softmax(x_i^T W)`` (computed with the maximum score subtracted). The per-example
    gradient ``G_i = x_i (p_i - e_{y_i})^T`` has Frobenius norm ``||x_i|| ||p_i - e_{y_i}||``
    and is clipped as a whole to norm ``<= clip``. Step ``t`` (0-based):
    ``W <- Pi_R(W - eta_t (alpha W + (sum_{i in B_t} clip(G_i) + sigma clip Z_t) / m_t))`` with
    ``m_t`` the batch size (fixed) or the expected lot size ``batch_size`` (Poisson), ``Z_t``
    standard normal of shape ``(d, K)`` and ``Pi_R`` the projection onto the Frobenius ball.

    Random addresses (``cpp/include/privlearn/linear/softmax.hpp``): the batch of step ``t``
    is ``poisson_sample(t, n, q)`` or ``choice_without_replacement(t, n, batch_size)`` on
    ``batch_stream`` (as :func:`privlearn.linear.sgd_train`); the noise of step
    ``t`` is exact: the clipped gradient sum (class after class, entry ``e = k*d + j``) is held
    in fixed point and gets ``discrete_gaussian(t*d*K + e)`` on ``noise_stream`` on the lattice
    ``C 2^-k`` (:func:`privlearn.random.noise_lattice`), then converted to float.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    y : array of shape (n_samples,)
        Integer class labels in ``[0, n_classes)`` (real arrays with integral values are
        accepted).
    key : bytes
        32-byte ChaCha20 key (see :class:`privlearn.random.Stream`).
    n_classes : int
        ``K >= 2``.
    W0 : ndarray of shape (n_features, n_classes), optional
        Starting point (zeros by default).
    n_threads : int or None
        Threads for the batch gradient; results do not depend on it.
    sampling : {"poisson", "fixed"}, default "poisson"
    learning_rate : {"inv_sqrt", "inv_lambda_t", "constant"}, default "inv_sqrt"
        ``eta0 / sqrt(t + 1)``, ``1 / (alpha (t + 1))`` or ``eta0``.
    alpha : float, default 1e-4
        L2 regularisation ``lambda``: 0 or in ``[1e-12, 1e12]``.
    batch_size, epochs, steps : int
        ``steps > 0`` overrides ``ceil(epochs n / batch_size)``.
    eta0, clip, sigma, radius : float
        ``eta0`` in ``[1e-12, 1e12]``; ``clip`` 0 (no clipping) or in ``[1e-12, 1e12]``;
        ``sigma`` (noise multiplier) 0 (no noise) or in ``[1e-6, 1e6]``, needing ``clip > 0``;
        ``radius`` 0 (no projection) or the Frobenius radius. Clipping multiplies ``G_i`` by
        ``min(1, clip / (||x_i|| ||p_i - e_{y_i}||))`` with overflow-safe norms; an example
        whose scores are NaN contributes 0.
    rate : float, default 0
        Poisson sampling rate in ``(0, 1]`` (0 means ``batch_size / n``).
    batch_stream, noise_stream : int, default 1, 2
    record_every : int, default 0
        Keep the iterate (flattened row-major) every ``record_every`` steps and at the end.

    Returns
    -------
    SoftmaxRun

    Raises
    ------
    TypeError
        For an unknown keyword argument or labels that are not numbers.
    ValueError
        For invalid inputs or parameters (labels outside ``[0, n_classes)``, ``n_classes < 2``,
        ...), or when the iterate becomes non-finite (overflow) instead of returning it.
    """
    X, y, W0, spec = prepare_softmax(
        X, y, W0, key=key, n_classes=n_classes, **{**SOFTMAX_DEFAULTS, **kw}
    )
    args, extra = spec.core_args(as_threads(n_threads))
    # prepare_softmax has checked X (a CSR X's indices in range, every value finite): the core
    # need not check it again; a view of dense or CSR rows is read in place (no copy of X)
    csr = functools.partial(_core.softmax_sgd_train_csr, check_structure=False)
    W, path, path_steps, steps = dense_or_csr(
        X, _core.softmax_sgd_train_dense, csr, y, W0, *args, view=True, **extra
    )
    d, k = X.shape[1], spec.n_classes
    return SoftmaxRun(
        coef=np.asarray(W).reshape(d, k),
        path=np.asarray(path).reshape(-1, d * k),
        path_steps=np.asarray(path_steps, dtype=np.int64),
        n_steps=int(steps),
    )
