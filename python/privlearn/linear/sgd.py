"""Private mini-batch SGD on the C++ core: the function behind the DP-SGD estimators.

Song, Chaudhuri, Sarwate (2013), "Stochastic gradient descent with differentially private
updates" (mechanism ``"l2-laplace"``), and Abadi et al. (2016), "Deep learning with differential
privacy", Algorithm 1 (mechanism ``"gaussian"``). The numpy twin is
:func:`privlearn.reference.linear.sgd_train`.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from privlearn import _core
from privlearn._checks import as_threads
from privlearn._specs.sgd import SGD_DEFAULTS, SGDRun, prepare_sgd
from privlearn.linear._kernels import dense_or_csr

__all__ = ["sgd_train"]


def sgd_train(
    X: Any, y: Any, *, key: bytes, w0: Any = None, n_threads: int | None = None, **kw: Any
) -> SGDRun:
    """Run private mini-batch SGD and return the iterates (no privacy accounting here).

    Minimises ``(alpha/2)||w||^2 + (1/n) sum_i loss(x_i^T w, y_i)``. Step ``t`` (0-based):
    ``w <- Pi_R(w - eta_t (alpha w + (sum_{i in B_t} g_i + noise_t) / m_t))`` with ``g_i`` the
    (clipped) per-example gradient and ``m_t`` the batch size (disjoint / fixed) or the expected
    lot size ``batch_size`` (Poisson). The exact random addresses are documented in
    ``cpp/include/privlearn/linear/sgd.hpp``.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1} for ``log_loss`` / ``hinge``, targets for ``squared``.
    key : bytes
        32-byte ChaCha20 key (see :class:`privlearn.random.Stream`).
    w0 : ndarray, optional
        Starting point (zeros by default).
    n_threads : int or None
        Threads for the batch gradient; results do not depend on it. ``None`` (the default
        thread count), ``-1`` (all cores) or an integer in ``[1, max(4 * cores, 256)]``.
    loss : {"log_loss", "hinge", "squared"}, default "log_loss"
    mechanism : {"l2-laplace", "gaussian", "none"}, default "l2-laplace"
        ``"l2-laplace"``: noise of density prop. to ``exp(-(epsilon/(2C))||z||)`` per step
        (Song et al. 2013, eq. 3; ``C = clip`` or 1 when not clipping); ``"gaussian"``:
        noise of standard deviation ``sigma clip`` added to the summed clipped gradients (Abadi
        et al. 2016), as the exact discrete Gaussian on the lattice ``clip 2^-k`` on the exact
        fixed-point sum (:func:`privlearn.random.noise_lattice`).
    sampling : {"disjoint", "poisson", "fixed"}, default "disjoint"
        One permutation per pass cut into consecutive batches; Poisson with rate ``rate`` (or
        ``batch_size / n``); or ``batch_size`` rows without replacement per step.
    learning_rate : {"inv_sqrt", "inv_lambda_t", "constant"}, default "inv_sqrt"
        ``eta0 / sqrt(t + 1)``, ``1 / (alpha (t + 1))`` or ``eta0``.
    alpha : float, default 1e-4
        L2 regularisation ``lambda``: 0 or in ``[1e-12, 1e12]``.
    batch_size, epochs, steps : int
        ``steps > 0`` overrides ``ceil(epochs n / batch_size)`` for Poisson / fixed sampling.
    eta0, clip, epsilon, sigma, radius : float
        ``eta0`` in ``[1e-12, 1e12]``; ``clip`` 0 (no clipping) or in ``[1e-12, 1e12]``;
        ``epsilon`` in ``[1e-6, 1e6]`` or ``inf`` (no noise); ``sigma`` (noise multiplier) 0
        (no noise) or in ``[1e-6, 1e6]``; ``radius = 0`` does not project (Song et al. project
        onto the ball of radius ``1 / alpha``). The bounds keep every product the step forms
        finite. Clipping is ``sign(c) min(|c|, clip / ||x_i||)`` on the loss derivative ``c``
        with an overflow-safe norm: each example contributes at most ``clip`` for every finite
        input, a NaN derivative contributes 0.
    rate : float, default 0
        Poisson sampling rate in ``(0, 1]`` (``sampling="poisson"`` only), for schedules that
        must not depend on the private ``n`` (pass a public or noisy size's rate with
        ``steps``). 0 means ``batch_size / n``. The summed gradient is still divided by
        ``batch_size`` (the expected lot size), which may then exceed ``n``.
    batch_stream, noise_stream : int, default 1, 2
        Stream ids of the batch selection and the noise.
    record_every : int, default 0
        Keep the iterate every ``record_every`` steps and at the end.

    Returns
    -------
    SGDRun

    Raises
    ------
    TypeError
        For an unknown keyword argument.
    ValueError
        For invalid inputs or parameters, or when the iterate becomes non-finite (overflow)
        instead of returning it.
    """
    X, y, w0, spec = prepare_sgd(X, y, w0, key=key, **{**SGD_DEFAULTS, **kw})
    args, extra = spec.core_args(as_threads(n_threads))
    # prepare_sgd has checked a CSR X (indices in range, values finite): the core need not
    # check it again (an O(nnz) pass)
    csr = functools.partial(_core.sgd_train_csr, check_structure=False)
    w, path, path_steps, steps = dense_or_csr(
        X, _core.sgd_train_dense, csr, y, w0, *args, view=True, **extra
    )
    return SGDRun(
        coef=np.asarray(w),
        path=np.asarray(path).reshape(-1, X.shape[1]),
        path_steps=np.asarray(path_steps, dtype=np.int64),
        n_steps=int(steps),
    )
