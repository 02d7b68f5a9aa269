"""Differentially private stochastic coordinate descent on the C++ core.

Damaskinos, Mendler-Duenner, Guerraoui, Papandreou, Parnell, "Differentially Private Stochastic
Coordinate Descent", AAAI 2021: Algorithm 1 (``variant="dual"``), SeqDP-SCD (``"seq"``), the
non-private SDCA baseline (``"scd"``) and the primal variant of Section 3.2 (``"primal"``). The
numpy twin is :func:`privlearn.reference.linear.scd_train`.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from privlearn import _core
from privlearn._checks import as_threads
from privlearn._design_matrix import RowView
from privlearn._specs.scd import SCD_DEFAULTS, SCDRun, prepare_scd
from privlearn.linear._kernels import dense_or_csr

__all__ = ["scd_train"]


def scd_train(X: Any, y: Any, *, key: bytes, n_threads: int | None = None, **kw: Any) -> SCDRun:
    """Run (DP-)SCD and return the dual variables, the released model and diagnostics.

    No accounting happens here: ``noise_std`` is the standard deviation of the Gaussian noise
    added to every released coordinate; the estimators derive it from (epsilon, delta):
    ``sigma C`` for Algorithm 1 with Poisson batches and ``hidden_alpha=True`` (only ``v`` is
    released, the dual state stays hidden; :mod:`privlearn.linear.scd_estimators`, issue 20),
    ``2 sqrt(2) sigma C`` with fixed batches, ``2 C sqrt(L (L + 1)) sigma`` for SeqDP-SCD and
    primal.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (N, M)
        Rows normalised (``||x_i|| <= 1``) for the privacy analysis (checked by the estimators).
    y : ndarray of shape (N,)
        Targets (``squared``) or labels in {-1, +1} (``log_loss``, ``hinge``).
    key : bytes
        32-byte ChaCha20 key.
    n_threads : int or None
        Threads for the batch updates of ``"dual"``; results do not depend on it. ``None``,
        ``-1`` (all cores) or an integer in ``[1, max(4 * cores, 256)]``.
    loss : {"squared", "hinge", "log_loss"}, default "squared"
        Ridge regression, SVM (hinge, box-constrained dual) or logistic regression.
    variant : {"dual", "seq", "scd", "primal"}, default "dual"
    sampling : {"poisson", "fixed"}, default "poisson"
        Batches of the dual variants: Poisson with rate ``rate`` (or ``batch_size / N``) or
        ``batch_size`` rows without replacement.
    alpha : float, default 1e-4
        ``lambda``, in ``[1e-12, 1e12]``.
    batch_size, epochs, steps : int
        ``L``; ``T = ceil(epochs N / L)`` (``epochs M / L`` for primal, ``epochs N`` for scd)
        unless ``steps > 0``.
    clip : float, default 0
        ``C`` in ``[1e-12, 1e12]``: every update becomes ``sign(zeta) min(|zeta|, C)``
        (exact for an infinite ``zeta``; a NaN update becomes 0). 0 = no scaling.
    noise_std : float, default 0
        In ``[0, 1e12]``. With ``noise_std > 0`` (dual, seq; unless ``hidden_alpha``) every
        coordinate of ``alpha``
        receives fresh ``N(0, noise_std**2)`` at every step, as the accounting (the subsampled
        Gaussian mechanism on ``[alpha; v]`` per step) requires: that hypothetical mechanism,
        which releases the whole noisy ``(alpha, v)`` every step, is an adaptive composition of
        subsampled Gaussians, and this algorithm, which releases only ``v``, is its
        post-processing. The noise is added lazily with the same distribution: when row ``j``
        is sampled at step ``t`` it first gets ``N(0, (t - last_j) noise_std**2)``, the noise
        of every step since its previous visit (one draw per visit), then its update. The
        returned ``dual_coef`` includes the outstanding noise. Dual variant with ``clip > 0``
        and ``noise_std / clip <= 2^39``: ``v``'s noise is exact, the discrete Gaussian on the
        lattice ``clip 2^-k`` added to the exact fixed-point sum ``X_B^T zeta`` (noise
        multiplier ``noise_std / clip``, :func:`privlearn.random.noise_lattice`; draws
        ``t m + k`` of ``noise_stream``), and
        converted to float only then; elsewhere it is Box-Muller.
    hidden_alpha : bool, default False
        Dual variant with Poisson batches only: ``alpha`` receives no per-step noise at all
        (only ``v`` is noised). Sound when ``alpha`` is never released: each row's ``alpha_j``
        is a function of its own row, its own sampling bits and jitter and the released ``v``
        history, so the hidden-state argument (:mod:`privlearn.linear.scd_estimators`) bounds
        each step by the subsampled Gaussian of sensitivity ``C`` on ``v`` alone. The returned
        ``dual_coef`` then carries no privacy noise.
    alpha_jitter : float, default 0
        In ``[0, 1e12]`` (dual, seq): the standard deviation of ``N(0, alpha_jitter**2)`` added
        to ``alpha_j`` of every batch row after its update (one draw per visit, address
        ``t N + j`` of ``noise_stream + 1``). An algorithmic knob: a per-record perturbation of
        the hidden state, free for privacy under ``hidden_alpha``.
    batch_stream, noise_stream : int, default 1, 2
        Stream ids: batches; noise on ``v`` (``noise_stream``), the jitter on ``alpha``
        (``noise_stream + 1``) and the per-step noise on ``alpha`` (``noise_stream + 2``),
        addressed by row index and step. Exact addresses in
        ``cpp/include/privlearn/linear/scd.hpp``.
    record_every : int, default 0
        Record ``P(theta)`` and ``D(alpha)`` every ``record_every`` steps and at the end (a
        non-private diagnostic computed on the training data).
    newton_steps : int, default 1
        Newton iterations of the logistic dual step (dual variants). 1 is the paper's step (one
        clipped Newton step in ``beta = y_j (alpha_j + zeta)`` from
        ``clip(y_j alpha_j, 1e-4, 1 - 1e-4)``; from ``alpha = 0`` it moves ``beta`` by only about
        ``1e-3``). ``k > 1`` solves the same one-dimensional problem by up to ``k`` Newton steps
        in the log-odds ``logit(beta)``, where the derivative of the stationarity condition lies
        in ``[1, 1 + c/4]``: a few steps give the exact coordinate minimiser (exact SDCA). Privacy
        does not depend on it: every update is scaled to ``|zeta| <= C`` first.
    rate : float, default 0
        Poisson sampling rate in ``(0, 1]`` of the dual / seq variants (0 = ``batch_size / N``),
        for schedules that must not depend on the private ``N``; ``batch_size`` (``L``, also
        ``sigma'`` of ``"dual"``) may then exceed ``N``.
    n_scale : float, default 0
        ``N'`` used in ``lambda N'`` everywhere (the dual closed forms, ``z_j``, the released
        ``coef = v / (lambda N')``, the primal gradient ``(1/N') sum_i ... + lambda theta``): a
        public or noisy size, 0 or in ``[1, 2**53]``. 0 means the true ``N``. The recorded
        objectives keep the true ``N`` (diagnostics).

    Returns
    -------
    SCDRun

    Raises
    ------
    TypeError
        For an unknown keyword argument.
    ValueError
        For invalid inputs or parameters, or when ``v``, ``theta`` or ``alpha`` becomes
        non-finite (overflow) instead of returning it.
    """
    X, y, spec = prepare_scd(X, y, key=key, **{**SCD_DEFAULTS, **kw})
    if spec.variant == "primal" and isinstance(X, RowView):  # the core reads X by columns
        X = X.materialize()
    args, extra = spec.core_args(as_threads(n_threads))
    # prepare_scd has checked a CSR X (indices in range, values finite): the core need not
    # check it again (an O(nnz) pass, about half the floor X.T @ (X @ w) per call)
    csr = functools.partial(_core.scd_train_csr, check_structure=False)
    out = dense_or_csr(X, _core.scd_train_dense, csr, y, *args, view=True, **extra)
    alpha, v, path_steps, primal_path, dual_path, steps = out
    v = np.asarray(v)
    return SCDRun(
        coef=v / (spec.alpha * spec.n_eff(X.shape[0])),
        dual_coef=np.asarray(alpha),
        v=v,
        path_steps=np.asarray(path_steps, dtype=np.int64),
        primal_path=np.asarray(primal_path, dtype=np.float64),
        dual_path=np.asarray(dual_path, dtype=np.float64),
        n_steps=int(steps),
    )
