"""The linear models keep ``feature_names_in_`` from a DataFrame, as scikit-learn's estimators
do, and check the names ``predict`` is given (issue 22, item 8)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from privlearn.linear import (
    DPSCDClassifier,
    DPSCDRegressor,
    DPSGDClassifier,
    DPSGDRegressor,
    QuadraticGradientLogisticRegression,
)

MODELS = {
    "sgd-reg": (lambda: DPSGDRegressor(seed=0, target_bounds=(-3, 3)), "reg"),
    "scd-reg": (lambda: DPSCDRegressor(seed=0, target_bounds=(-3, 3)), "reg"),
    "sgd-clf": (lambda: DPSGDClassifier(seed=0, classes=["n", "p"]), "clf"),
    "scd-clf": (lambda: DPSCDClassifier(seed=0, classes=["n", "p"]), "clf"),
    "quadgrad": (lambda: QuadraticGradientLogisticRegression(), "clf"),
}


def _data(kind: str) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame(0.3 * rng.normal(size=(300, 3)), columns=["age", "bmi", "bp"])
    t = X.to_numpy() @ np.array([1.0, 2.0, -1.0])
    return X, (t if kind == "reg" else np.where(t > 0, "p", "n"))


@pytest.mark.parametrize("name", list(MODELS))
def test_feature_names_kept_and_checked(name):
    make, kind = MODELS[name]
    X, y = _data(kind)
    est = make().fit(X, y)
    assert est.feature_names_in_.tolist() == ["age", "bmi", "bp"]
    assert est.n_features_in_ == 3
    pred = est.predict(X)
    assert pred.shape == (300,)
    # the same values in a frame with the same names: no warning, the same predictions
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(est.predict(X.copy()), pred)
    # reordered or renamed columns: scikit-learn's error
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict(X[["bp", "bmi", "age"]])
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict(X.rename(columns={"bp": "blood_pressure"}))
    # a plain array after a frame fit: scikit-learn's warning, and the same numbers
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        np.testing.assert_array_equal(est.predict(X.to_numpy()), pred)


@pytest.mark.parametrize("name", list(MODELS))
def test_array_fit_has_no_feature_names(name):
    make, kind = MODELS[name]
    X, y = _data(kind)
    est = make().fit(X, y).fit(X.to_numpy(), y)  # refit on an array drops the names
    assert not hasattr(est, "feature_names_in_")
    assert est.n_features_in_ == 3
    with pytest.warns(UserWarning, match="fitted without feature names"):
        est.predict(X)
