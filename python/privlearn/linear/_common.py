"""Helpers shared by the private linear estimators (DP-SGD in :mod:`.estimators`, DP-SCD in
:mod:`.scd_estimators`): parameter checks, the row-norm precondition, the seed -> key rule and
the scikit-learn prediction API of a linear model (binary classifier or regressor)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.base import BaseEstimator
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, check_X_y

from privlearn._checks import as_index, as_real
from privlearn._linear_common import as_design_matrix

__all__ = [
    "ACCOUNTED_AS",
    "NEIGHBORING",
    "BACKENDS",
    "PATH_POINTS",
    "ROW_NORM_TOLERANCE",
    "BinaryLinearClassifierMixin",
    "LinearModelBase",
    "LinearRegressorMixin",
]

#: Rows may exceed the unit norm by this relative rounding tolerance (``x / ||x||`` computed in
#: floating point can have norm ``1 + 1 ulp``).
ROW_NORM_TOLERANCE = 1e-12
#: Default number of recorded iterates of the (non-private) objective diagnostic.
PATH_POINTS = 150
#: How each batch sampler is accounted (``calibrate_sigma(sampling=...)``) and which neighbouring
#: relation that bound is for: Poisson subsampling is add/remove-one, fixed-size batches without
#: replacement are replace-one (the sampler and the accountant must agree).
ACCOUNTED_AS = {"poisson": "poisson", "fixed": "without_replacement"}
NEIGHBORING = {"poisson": "add_remove", "fixed": "replace_one"}

BACKENDS = ("core", "reference")


# ---- parameter checks ---------------------------------------------------------------------------
def _choice(value: Any, name: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def _finite_positive(value: Any, name: str) -> float:
    v = as_real(value, name, numbers_only=True)
    if not (math.isfinite(v) and v > 0.0):
        raise ValueError(f"{name} must be a finite number > 0, got {v}")
    return v


def _epsilon(value: Any) -> float:
    eps = as_real(value, "epsilon", numbers_only=True)
    if not eps > 0.0:  # also rejects NaN
        raise ValueError(f"epsilon must be > 0 (float('inf') for a non-private fit), got {eps}")
    return eps


def _seed(seed: Any) -> int | None:
    if seed is None:
        return None
    return as_index(seed, "seed", upper=(1 << 64) - 1)


# ---- rows and data ------------------------------------------------------------------------------
def _row_norms(X: np.ndarray | sp.csr_matrix) -> np.ndarray:
    if sp.issparse(X):
        return np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).reshape(-1))
    return np.linalg.norm(X, axis=1)


def _check_row_norms(X: Any, bound: float, scaling: float | None, reason: str) -> None:
    """Raise ``ValueError`` naming the first row with ``||x_i|| > bound`` (up to rounding).

    ``scaling`` is the estimator's ``intercept_scaling`` when an intercept column is appended
    (then ``bound = sqrt(1 - scaling^2)``), else ``None``; ``reason`` says which privacy proof
    needs the bound.
    """
    norms = _row_norms(X)
    bad = np.flatnonzero(norms > bound * (1.0 + ROW_NORM_TOLERANCE))
    if bad.size == 0:
        return
    i = int(bad[0])
    if scaling is None:
        what = f"row {i} of X has L2 norm {norms[i]:.6g} > 1"
    else:
        what = (
            f"row {i} of X has L2 norm {norms[i]:.6g} > sqrt(1 - intercept_scaling^2) = "
            f"{bound:.6g} (the row augmented with intercept_scaling={scaling:g} must have "
            f"norm <= 1)"
        )
    raise ValueError(
        f"{what} ({bad.size} such rows): {reason}. Scale the data with public bounds, or pass "
        "clip_rows=True to project each row onto the unit ball (a per-row map: no privacy cost)."
    )


def _scale_rows(X: np.ndarray | sp.csr_matrix, scale: np.ndarray) -> Any:
    if sp.issparse(X):
        return as_design_matrix(sp.diags(scale) @ X)
    return np.ascontiguousarray(X * scale[:, None])


def _project_rows(X: Any, bound: float) -> Any:
    """Project every row onto the ball of radius ``bound`` (a per-row map: no privacy cost)."""
    norms = _row_norms(X)
    big = norms > bound
    if big.any():
        X = _scale_rows(X, np.where(big, bound / np.where(big, norms, 1.0), 1.0))
    return X


def _append_column(X: Any, value: float) -> Any:
    """``[X, value]``: the constant intercept column (dense or CSR)."""
    column = np.full((X.shape[0], 1), value)
    if sp.issparse(X):
        return as_design_matrix(sp.hstack([X, sp.csr_matrix(column)], format="csr"))
    return np.ascontiguousarray(np.hstack([X, column]))


def _check_fit_data(
    X: Any, y: Any, estimator: Any, *, y_numeric: bool
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray]:
    """scikit-learn's checks (2-D, non-empty, finite, real, 1-D y of matching length), then
    float64 C-contiguous or canonical CSR."""
    X, y = check_X_y(
        X, y, accept_sparse="csr", dtype=np.float64, y_numeric=y_numeric, estimator=estimator
    )
    return as_design_matrix(X), y


def _binary_labels(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(classes, y_internal)``: exactly two classes, ``classes[1]`` mapped to ``+1``."""
    check_classification_targets(y)
    classes = np.unique(y)
    if classes.size != 2:
        raise ValueError(
            f"Only binary classification is supported: y must contain exactly 2 classes, "
            f"got {classes.size} class(es): {classes[:10].tolist()}"
        )
    return classes, np.where(y == classes[1], 1.0, -1.0)


# ---- prediction API -----------------------------------------------------------------------------
class LinearModelBase(BaseEstimator):
    """Prediction helpers of a fitted linear model with ``coef_``, ``intercept_`` and
    ``n_features_in_`` (input checks, ``X @ coef + intercept``) and the common tags."""

    def _set_coef(self, coef: np.ndarray, intercept: float) -> None:  # pragma: no cover
        raise NotImplementedError

    def _validate_X_predict(self, X: Any) -> np.ndarray | sp.csr_matrix:
        check_is_fitted(self, "coef_")
        X = as_design_matrix(check_array(X, accept_sparse="csr", dtype=np.float64, estimator=self))
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input"
            )
        return X

    def _linear(self, X: Any) -> np.ndarray:
        X = self._validate_X_predict(X)
        coef = np.asarray(self.coef_, dtype=np.float64).reshape(-1)
        intercept = float(np.asarray(self.intercept_).reshape(-1)[0])
        return np.asarray(X @ coef).reshape(-1) + intercept

    def __sklearn_tags__(self) -> Any:  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = self.seed is None
        return tags


class BinaryLinearClassifierMixin:
    """``decision_function`` / ``predict`` / ``predict_proba`` (``loss="log_loss"`` only) of a
    binary linear classifier with ``classes_`` (``classes_[1]`` is ``+1``).

    Put it before scikit-learn's ``ClassifierMixin`` in the bases, so that its tags are set
    after ``ClassifierMixin`` has created the classifier tags."""

    classes_: np.ndarray
    loss: str

    def _set_coef(self, coef: np.ndarray, intercept: float) -> None:
        self.coef_ = coef.reshape(1, -1)
        self.intercept_ = np.array([intercept])

    def decision_function(self, X: Any) -> np.ndarray:
        """``X @ coef_.T + intercept_``: positive values predict ``classes_[1]``.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._linear(X)  # type: ignore[attr-defined]

    def predict(self, X: Any) -> np.ndarray:
        """Class labels: ``classes_[1]`` where the decision function is > 0."""
        positive = self.decision_function(X) > 0.0
        return self.classes_[positive.astype(np.intp)]

    def _has_proba(self) -> bool:
        if self.loss != "log_loss":
            raise AttributeError(
                f"predict_proba is only available for loss='log_loss' (the logistic model); "
                f"loss={self.loss!r} has no probabilistic interpretation"
            )
        return True

    @available_if(_has_proba)
    def predict_proba(self, X: Any) -> np.ndarray:
        """Probabilities of ``classes_`` under the logistic model (``loss="log_loss"`` only;
        for ``"hinge"`` the attribute does not exist and accessing it raises AttributeError).

        Returns
        -------
        ndarray of shape (n_samples, 2)
        """
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def __sklearn_tags__(self) -> Any:  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        if getattr(tags, "classifier_tags", None) is not None:
            tags.classifier_tags.multi_class = False
        return tags

    def _more_tags(self) -> dict[str, Any]:  # scikit-learn < 1.6
        return {"binary_only": True, "non_deterministic": self.seed is None}  # type: ignore


class LinearRegressorMixin:
    """``predict`` of a linear regressor (``coef_`` of shape ``(n_features,)``)."""

    def _set_coef(self, coef: np.ndarray, intercept: float) -> None:
        self.coef_ = coef
        self.intercept_ = intercept

    def predict(self, X: Any) -> np.ndarray:
        """``X @ coef_ + intercept_``."""
        return self._linear(X)  # type: ignore[attr-defined]
