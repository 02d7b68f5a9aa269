"""Quadratic-gradient optimizers for logistic regression, in the clear, on the C++ core.

Chiang, "Privacy-preserving logistic regression training with a faster gradient variant"
(Sections 3.2-3.3, Algorithm 1), with the baseline NAG of Kim, Song, Kim, Lee, Cheon (2018a)
and the simplified fixed Hessian of Bonte & Vercauteren (2018). The numpy twin is
:mod:`privlearn.reference.quadgrad` (same signatures).

The model maximises the log-likelihood ``l(beta) = -sum_i ln(1 + exp(-y_i beta^T x_i))``,
``y_i in {-1, +1}``, with the full-batch gradient ``g = sum_i (1 - sigma(y_i beta^T x_i)) y_i x_i``.
The quadratic gradient is ``G = B_bar g`` with the diagonal
``B_bar_kk = 1 / (epsilon + sum_j |H_bar_kj|)``, ``H_bar = -X^T X / 4`` (Definition 3.2).

Where the paper's text and its Algorithm 1 disagree we follow the algorithm box:

* Enhanced NAG step: Algorithm 1 line 32 uses ``(1 + gamma_t) G`` with
  ``gamma_t = 10 / ((1 + t) n)``; the experiments paragraph of Section 3.3 writes the learning
  rate as ``1 + 10 / (1 + t)``. We use the box's ``1 + 10 / ((1 + t) n)``, the same
  ``gamma_t`` as the baseline, whose gradient is a sum over the ``n`` rows (Kim et al. use
  ``10 / (1 + t)`` on the mean gradient). ``t`` is the 0-based iteration (the box leaves it
  implicit).
* NAG smoothing: the box evaluates the gradient at ``V`` and sets
  ``w_tmp = V + step; V = (1 - eta) w_tmp + eta W; W = w_tmp`` with
  ``eta = (1 - alpha_0) / alpha_1`` and Kim et al.'s ``alpha`` recursion from ``alpha_0 = 0.01``;
  equations (3)-(4) name the variables differently (``gamma_t`` for the smoothing weight,
  ``eta_t`` for the learning rate). The returned iterate is ``V`` (line 36).
* ``B_bar``: lines 2-7 accumulate ``epsilon + sum_j |H_bar_ij|`` into ``B_bar`` and line 28
  multiplies by it, omitting the reciprocal of Definition 3.2 (``B_bar_kk = 1 / |B_tilde_kk|``).
  Here the box cannot be followed literally (it multiplies the gradient by ``~n d / 4`` and
  diverges at once); we use Definition 3.2's reciprocal.
* Adagrad and Adam: the paper writes the updates as descent (``beta - ...``) for a maximisation
  problem; we take the ascent direction (``beta + ...``), as the figures (increasing
  log-likelihood) require.

Row sums of ``|X^T X|``: when every feature is >= 0 (min-max scaled data, the paper's setting)
every entry of ``X^T X`` is >= 0 and ``sum_j |(X^T X)_kj| = (X^T (X 1))_k``, computed in
``O(nnz)``; otherwise ``X^T X`` is formed (``O(n d^2)`` time, ``O(d^2)`` memory).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_array, check_is_fitted

from privlearn import _core
from privlearn._checks import as_real, as_threads, check_sparse_structure
from privlearn._design_matrix import as_design_matrix
from privlearn._specs.quadgrad import (
    OPTIMIZERS,
    QuadgradRun,
    check_bbar,
    check_computed_bbar,
    check_labels,
    check_trained_coef,
    prepare_quadgrad,
    real_vector,
    reject_complex,
)
from privlearn._specs.quadgrad_schedules import Schedule
from privlearn.linear._base import store_params
from privlearn.linear._kernels import dense_or_csr
from privlearn.linear._params import BACKENDS
from privlearn.linear._rows import _binary_labels, _check_feature_names, _check_fit_data

__all__ = [
    "QuadraticGradientLogisticRegression",
    "Schedule",
    "fixed_hessian_diagonal",
    "logistic_loglik_gradient",
    "quadgrad_bbar",
    "quadgrad_train",
]


def quadgrad_train(
    X: Any,
    y: Any,
    *,
    optimizer: str = "nag",
    enhanced: bool = True,
    max_iter: int = 10,
    schedule: Any = None,
    beta0: Any = None,
    bbar: Any = None,
    epsilon: float = 1e-8,
    nag_alpha0: float = 0.01,
    adam_beta1: float = 0.9,
    adam_beta2: float = 0.999,
    adaptive_eps: float = 1e-8,
    n_threads: int | None = None,
) -> QuadgradRun:
    """Train logistic regression with NAG, Adagrad or Adam, plain or with the quadratic
    gradient (Chiang, Section 3.3 and Algorithm 1), full batch.

    With ``t = 0, 1, ...`` the 0-based iteration, ``r_t = schedule(t, n)`` and ``u = g`` (plain)
    or ``u = G = B_bar g`` (enhanced):

    * ``"nag"``: gradient at ``V``; ``w_tmp = V + r_t u``; ``V = (1 - eta_t) w_tmp + eta_t W``;
      ``W = w_tmp``; ``eta_t = (1 - alpha_t) / alpha_{t+1}``, ``alpha_0 = nag_alpha0``,
      ``alpha_{t+1} = (1 + sqrt(1 + 4 alpha_t^2)) / 2`` (Algorithm 1; Kim et al. 2018a).
    * ``"adagrad"``: ``a += u^2``; ``beta += r_t u / (adaptive_eps + sqrt(a))``.
    * ``"adam"``: ``m = b1 m + (1 - b1) u``, ``v = b2 v + (1 - b2) u^2``,
      ``beta += r_t m_hat / (sqrt(v_hat) + adaptive_eps)`` with the bias corrections
      ``m_hat = m / (1 - b1^(t+1))``, ``v_hat = v / (1 - b2^(t+1))`` (Kingma & Ba).
    * ``"gd"``: ``beta += r_t u``, the raw gradient (``lr g``) and raw quadratic-gradient
      (``LR G``) ascent of the paper's Figure 4.

    See the module docstring for where the paper's text and its Algorithm 1 differ.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        The rows ``x_i`` as used: put the intercept column of ones in ``X`` yourself (the
        estimator :class:`QuadraticGradientLogisticRegression` does it for you). The paper
        min-max scales the features to ``[0, 1]`` first.
    y : ndarray of shape (n_samples,)
        Labels in ``{-1, +1}``.
    optimizer : {"nag", "adagrad", "adam", "gd"}, default "nag"
    enhanced : bool, default True
        Step along the quadratic gradient ``G`` (True) or the gradient ``g`` (False).
    max_iter : int, default 10
        Number of iterations (full passes); >= 1.
    schedule : None, "paper", "he", float or Schedule, default None
        Step factor ``r_t``. ``None``/``"paper"``: the paper's setting for the optimizer
        (:func:`privlearn._specs.quadgrad_schedules.default_schedule`: NAG
        ``10 / ((1 + t) n)`` plain, ``1 + 10 / ((1 + t) n)`` enhanced; Adagrad 0.01 / 1.01;
        Adam 0.001 / 1.001; gd 0.015 / 1.5);
        ``"he"``: ``1 + 0.9^t`` (the paper's encrypted runs); a number: constant; or any
        :class:`Schedule` (e.g. ``Schedule.exponential(A, gamma)`` = ``1 + A gamma^t``).
    beta0 : ndarray of shape (n_features,), optional
        Starting point (zeros, as in Algorithm 1, by default).
    bbar : ndarray of shape (n_features,), optional
        A precomputed ``diag(B_bar)`` (see :func:`quadgrad_bbar`); computed from ``X`` when
        omitted. Ignored by the plain optimizers.
    epsilon : float, default 1e-8
        The ``epsilon`` of ``B_tilde`` (Definition 3.2).
    nag_alpha0, adam_beta1, adam_beta2, adaptive_eps : float
        NAG's ``alpha_0`` (0.01), Adam's ``beta_1`` (0.9) and ``beta_2`` (0.999), and the
        ``epsilon`` of the Adagrad / Adam denominators (1e-8).
    n_threads : int or None
        Threads of the gradient pass; the result does not depend on it (deterministic blocked
        reduction).

    Returns
    -------
    QuadgradRun
        ``coef`` (final iterate), ``loglik_path`` (``l`` at the start and after each
        iteration), ``bbar``, ``n_iter``, ``schedule``.
    """
    threads = as_threads(n_threads)
    X, y, beta, spec = prepare_quadgrad(
        X,
        y,
        beta0,
        optimizer=optimizer,
        enhanced=enhanced,
        max_iter=max_iter,
        schedule=schedule,
        epsilon=epsilon,
        nag_alpha0=nag_alpha0,
        adam_beta1=adam_beta1,
        adam_beta2=adam_beta2,
        adaptive_eps=adaptive_eps,
    )
    b = check_bbar(bbar, X.shape[1])
    if spec.enhanced and b is None:  # computed here to refuse an overflowed Gram (as the twin)
        b = _bbar(X, spec.epsilon, threads)
    s = spec.schedule
    args = (
        spec.optimizer,
        spec.enhanced,
        spec.max_iter,
        s.kind,
        s.base,
        s.scale,
        s.decay,
        spec.epsilon,
        spec.nag_alpha0,
        spec.adam_beta1,
        spec.adam_beta2,
        spec.adaptive_eps,
        np.empty(0) if b is None else b,
        threads,
    )
    coef, path, bb, iters = dense_or_csr(
        X, _core.quadgrad_train_dense, _core.quadgrad_train_csr, y, beta, *args
    )
    return QuadgradRun(
        coef=check_trained_coef(coef),
        loglik_path=np.asarray(path),
        bbar=np.asarray(bb),
        n_iter=int(iters),
        schedule=s,
    )


def quadgrad_bbar(X: Any, *, epsilon: float = 1e-8, n_threads: int | None = None) -> np.ndarray:
    """``diag(B_bar)``: ``1 / (epsilon + sum_j |(X^T X)_kj| / 4)`` (Definition 3.2 with the
    Boehning-Lindsay bound ``H_bar = -X^T X / 4``); see the module docstring for the formula
    used on non-negative data."""
    threads = as_threads(n_threads)
    eps = _epsilon(epsilon, positive=True)
    X = as_design_matrix(reject_complex(X, "X"))
    return _bbar(X, eps, threads)


def _bbar(X: Any, eps: float, threads: int) -> np.ndarray:
    """``diag(B_bar)`` of a validated design matrix, refused when ``X^T X`` overflows."""
    b = dense_or_csr(X, _core.quadgrad_bbar_dense, _core.quadgrad_bbar_csr, eps, threads)
    return check_computed_bbar(b)


def logistic_loglik_gradient(
    X: Any, y: Any, beta: Any, n_threads: int | None = None
) -> tuple[float, np.ndarray]:
    """``(l(beta), g)``: the log-likelihood and its gradient (paper Section 2.3) in one fused,
    deterministic pass over the rows."""
    threads = as_threads(n_threads)
    X = as_design_matrix(reject_complex(X, "X"))
    y = check_labels(y, X.shape[0])
    beta = real_vector(beta, "beta", X.shape[1])
    kernels = (_core.logistic_loglik_gradient_dense, _core.logistic_loglik_gradient_csr)
    ll, g = dense_or_csr(X, *kernels, y, beta, threads)
    return float(ll), np.asarray(g)


def fixed_hessian_diagonal(A: Any, epsilon: float = 1e-8) -> np.ndarray:
    """Lemma 3.1: ``diag(B)`` with ``B_kk = -epsilon - sum_i |A_ki|``, a diagonal lower bound
    ``B <= A`` (Loewner order) of any symmetric ``A``."""
    reject_complex(A, "A")
    try:
        A = np.ascontiguousarray(A, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("A must be a matrix of real numbers") from None
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be a square matrix, got shape {A.shape}")
    return np.asarray(_core.fixed_hessian_diagonal(A, _epsilon(epsilon, positive=False)))


def _epsilon(value: Any, *, positive: bool) -> float:
    """``epsilon`` as a finite float (``> 0``, or ``>= 0`` when not ``positive``)."""
    eps = as_real(value, "epsilon", numbers_only=True)
    if not (math.isfinite(eps) and (eps > 0.0 if positive else eps >= 0.0)):
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"epsilon must be a finite number {bound}, got {eps}")
    return eps


def _add_intercept(X: Any) -> Any:
    """``[1, X]``: the constant column first, as the paper's ``x = (1, x_1, ..., x_d)``."""
    ones = np.ones((X.shape[0], 1))
    if sp.issparse(X):
        return as_design_matrix(sp.hstack([sp.csr_matrix(ones), X], format="csr"))
    return np.ascontiguousarray(np.hstack([ones, X]))


class QuadraticGradientLogisticRegression(ClassifierMixin, BaseEstimator):
    """Logistic regression trained by NAG, Adagrad or Adam, plain or enhanced with the quadratic
    gradient (Chiang, "Privacy-preserving logistic regression training with a faster gradient
    variant", Section 3.3 and Algorithm 1). Not private: this is the clear-text counterpart of
    the encrypted training in :mod:`privlearn.he`.

    Parameters
    ----------
    optimizer : {"nag", "adagrad", "adam", "gd"}, default "nag"
        ``"gd"`` is plain gradient ascent (the paper's Figure 4).
    enhanced : bool, default True
        Use the quadratic gradient ``G = B_bar g`` (True) or the plain gradient (False).
    max_iter : int, default 30
        Full-batch iterations (there is no convergence test: the paper compares methods at a
        fixed iteration count).
    schedule : None, "paper", "he", float or Schedule, default None
        Step factor (see :func:`quadgrad_train`); ``None`` is the paper's setting.
    fit_intercept : bool, default True
        Prepend a column of ones (the paper's ``x = (1, x_1, ..., x_d)``); its weight is
        ``intercept_``. It is part of ``X^T X`` and so of ``B_bar``.
    epsilon : float, default 1e-8
        The ``epsilon`` of ``B_tilde``.
    backend : {"core", "reference"}, default "core"
        The C++ core or its numpy twin (same results to ``rtol=1e-10``).
    n_threads : int or None, default None
        Threads of the gradient pass (results do not depend on it).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        Weights of the features (without the intercept), scikit-learn layout.
    intercept_ : ndarray of shape (1,)
        Weight of the intercept column (0 when ``fit_intercept=False``).
    beta_ : ndarray of shape (n_features + 1,) or (n_features,)
        The paper's ``beta``: intercept first, then ``coef_`` (just ``coef_`` without intercept).
    loglik_path_ : ndarray of shape (max_iter + 1,)
        Log-likelihood ``l(beta)`` on the training data at the start (``beta = 0``) and after
        each iteration.
    bbar_ : ndarray
        ``diag(B_bar)`` (intercept first; empty for the plain optimizers).
    n_iter_ : int
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the positive class (``y = +1``).
    n_features_in_ : int

    Notes
    -----
    Like the paper, the estimator does not scale the features; ``B_bar`` and the step sizes
    assume features of order one (the paper min-max scales to ``[0, 1]``: use
    ``sklearn.preprocessing.MinMaxScaler`` in a pipeline). Features so large that ``X^T X`` or
    the squared gradients would overflow double precision (a column or row sum of ``|x|``
    above ``2^499``, about ``1.6e150``, with the intercept column) raise ``ValueError`` on both
    backends, as does a fit whose iterate overflows: the model is never NaN.
    """

    def __init__(
        self,
        optimizer: str = "nag",
        enhanced: bool = True,
        max_iter: int = 30,
        schedule: Any = None,
        fit_intercept: bool = True,
        epsilon: float = 1e-8,
        backend: str = "core",
        n_threads: int | None = None,
    ) -> None:
        store_params(self, locals())

    def fit(self, X: Any, y: Any) -> QuadraticGradientLogisticRegression:
        """Fit on ``X`` (dense or CSR) and ``y`` (any two classes)."""
        if not isinstance(self.optimizer, str) or self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {self.backend!r}")
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise TypeError(
                f"fit_intercept must be a bool, got {type(self.fit_intercept).__name__}"
            )
        as_threads(self.n_threads)  # validated for both backends (the reference ignores it)
        X, y = _check_fit_data(X, y, self, y_numeric=False)
        classes, y_internal = _binary_labels(y)
        Xa = _add_intercept(X) if self.fit_intercept else X
        if self.backend == "core":
            train = quadgrad_train
        else:
            from privlearn.reference.quadgrad import quadgrad_train as train
        run = train(
            Xa,
            y_internal,
            optimizer=self.optimizer,
            enhanced=self.enhanced,
            max_iter=self.max_iter,
            schedule=self.schedule,
            epsilon=self.epsilon,
            n_threads=self.n_threads,
        )
        beta = run.coef
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        self.beta_ = beta
        if self.fit_intercept:
            self.coef_ = beta[1:].reshape(1, -1)
            self.intercept_ = np.array([beta[0]])
        else:
            self.coef_ = beta.reshape(1, -1)
            self.intercept_ = np.array([0.0])
        self.loglik_path_ = run.loglik_path
        self.bbar_ = run.bbar
        self.n_iter_ = run.n_iter
        self.schedule_ = run.schedule
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """``X @ coef_.T + intercept_``: positive values predict ``classes_[1]``.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "coef_")
        check_sparse_structure(X)  # before scikit-learn converts a CSC / COO matrix
        _check_feature_names(self, X, reset=False)  # warns or raises as scikit-learn does
        X = as_design_matrix(check_array(X, accept_sparse="csr", dtype=np.float64, estimator=self))
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input"
            )
        return np.asarray(X @ self.coef_[0]).reshape(-1) + float(self.intercept_[0])

    def predict_proba(self, X: Any) -> np.ndarray:
        """``[1 - sigma(f(x)), sigma(f(x))]`` for ``classes_``.

        Returns
        -------
        ndarray of shape (n_samples, 2)
        """
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict(self, X: Any) -> np.ndarray:
        """Class labels: ``classes_[1]`` where the decision function is > 0."""
        positive = self.decision_function(X) > 0.0  # checks fitted first
        return self.classes_[positive.astype(np.intp)]

    def __sklearn_tags__(self) -> Any:  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        if getattr(tags, "classifier_tags", None) is not None:
            tags.classifier_tags.multi_class = False
        return tags

    def _more_tags(self) -> dict[str, Any]:  # scikit-learn < 1.6
        return {"binary_only": True}
