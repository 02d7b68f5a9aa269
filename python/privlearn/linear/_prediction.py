"""The scikit-learn prediction API of the private linear models (as scikit-learn's
``linear_model/_base.py``): :class:`LinearModelBase` (prediction input checks,
``X @ coef + intercept``, the common tags), :class:`LinearClassifierMixin` (binary and
one-vs-rest ``decision_function`` / ``predict`` / ``predict_proba``) and
:class:`LinearRegressorMixin`.

What belongs here: what a FITTED linear model does with new rows. What does not: fitting (the
plan in :mod:`._base`, the training data in :mod:`._rows`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, log_expit, softmax
from sklearn.base import BaseEstimator
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_array, check_is_fitted

from privlearn._checks import check_sparse_structure
from privlearn._design_matrix import as_design_matrix
from privlearn.linear._rows import _check_feature_names, _training_rows

__all__ = [
    "BinaryLinearClassifierMixin",
    "LinearClassifierMixin",
    "LinearModelBase",
    "LinearRegressorMixin",
]


class LinearModelBase(BaseEstimator):
    """Prediction helpers of a fitted linear model with ``coef_``, ``intercept_`` and
    ``n_features_in_`` (input checks, ``X @ coef + intercept``) and the common tags."""

    def _set_coef(self, coef: np.ndarray, intercept: float) -> None:  # pragma: no cover
        raise NotImplementedError

    def _validate_X_predict(self, X: Any) -> np.ndarray | sp.csr_matrix:
        """The checked rows to predict on, after :meth:`_transform_rows` (the same public
        per-row map the training rows went through)."""
        check_is_fitted(self, "coef_")
        _check_feature_names(self, X, reset=False)  # warns or raises as scikit-learn does
        check_sparse_structure(X)
        X = as_design_matrix(check_array(X, accept_sparse="csr", dtype=np.float64, estimator=self))
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input"
            )
        return self._transform_rows(X)

    def _transform_rows(self, X: Any) -> Any:
        """The public per-row map of training applied to prediction rows: with
        ``row_projection_ = r`` (set by a fit that projected its rows, ``clip_rows``), each
        row of norm > ``r`` is scaled onto the ball of radius ``r``, exactly as in training;
        otherwise (``None`` or absent) the rows are used as given."""
        radius = getattr(self, "row_projection_", None)
        if radius is None:
            return X
        return _training_rows(X, float(radius), None)

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


class LinearClassifierMixin:
    """``decision_function`` / ``predict`` / ``predict_proba`` (``loss="log_loss"`` only) of a
    linear classifier with ``classes_``: binary (``coef_`` of shape ``(1, d)``, ``classes_[1]``
    is ``+1``) or, where the estimator sets ``_multiclass = True``, one-vs-rest over ``K > 2``
    classes (``coef_`` of shape ``(K, d)``).

    Put it before scikit-learn's ``ClassifierMixin`` in the bases, so that its tags are set
    after ``ClassifierMixin`` has created the classifier tags."""

    classes_: np.ndarray
    loss: str
    _multiclass = False
    #: How ``K > 2`` scores become probabilities: ``"ovr"`` (each class's logistic probability,
    #: normalised) or ``"softmax"`` (a multinomial model).
    _multiclass_proba = "ovr"

    def _set_coef(self, coef: np.ndarray, intercept: Any) -> None:
        self.coef_ = np.atleast_2d(coef)
        self.intercept_ = np.atleast_1d(np.asarray(intercept, dtype=np.float64))

    def decision_function(self, X: Any) -> np.ndarray:
        """``X @ coef_.T + intercept_``: binary, positive values predict ``classes_[1]``;
        multiclass, the largest column predicts its class.

        Returns
        -------
        ndarray of shape (n_samples,) (binary) or (n_samples, n_classes)
        """
        X = self._validate_X_predict(X)  # type: ignore[attr-defined]
        scores = np.asarray(X @ np.asarray(self.coef_).T) + self.intercept_
        return scores.reshape(-1) if scores.shape[1] == 1 else scores

    def predict(self, X: Any) -> np.ndarray:
        """Class labels: binary, ``classes_[1]`` where the decision function is > 0;
        multiclass, the class of the largest score."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0.0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]

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
        Multiclass: the softmax of the scores (a multinomial model) or, one-vs-rest, each
        class's logistic probability normalised to sum to 1 (computed in log space: every row
        is finite and sums to 1, also when every class's probability underflows).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p = expit(scores)
            return np.column_stack([1.0 - p, p])
        if self._multiclass_proba == "softmax":
            return softmax(scores, axis=1)
        # one-vs-rest: sigma(s_k) / sum_j sigma(s_j), normalised in log space (the softmax of
        # the log-sigmoids), so that rows whose every sigma(s_k) underflows to 0 (all scores
        # below about -745) stay finite and sum to 1 instead of giving 0 / 0
        return softmax(log_expit(scores), axis=1)

    def __sklearn_tags__(self) -> Any:  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        if getattr(tags, "classifier_tags", None) is not None:
            tags.classifier_tags.multi_class = self._multiclass
        return tags

    def _more_tags(self) -> dict[str, Any]:  # scikit-learn < 1.6
        return {"binary_only": not self._multiclass, "non_deterministic": self.seed is None}  # type: ignore


#: The binary-only name of :class:`LinearClassifierMixin` (``_multiclass = False``).
BinaryLinearClassifierMixin = LinearClassifierMixin


class LinearRegressorMixin:
    """``predict`` of a linear regressor (``coef_`` of shape ``(n_features,)``)."""

    def _set_coef(self, coef: np.ndarray, intercept: float) -> None:
        self.coef_ = coef
        self.intercept_ = intercept

    def predict(self, X: Any) -> np.ndarray:
        """``X @ coef_ + intercept_``."""
        return self._linear(X)  # type: ignore[attr-defined]
