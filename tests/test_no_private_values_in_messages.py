"""No exception, warning or log line quotes a value computed from the private rows.

Issue 30, item 5: an error message is a release like any other (it reaches logs, notebooks and
bug reports), so a precondition that fails on the private rows must say *which* precondition
failed and how to fix it in terms of public inputs only, never the offending norm, value, label,
level or count. Each case below plants a distinctive value in otherwise ordinary data, triggers
the check that refuses it, and asserts that none of the planted value's spellings appears in
the exception, in any warning or in any log record the call produced.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

# A value whose decimal spellings cannot appear by accident in a message about public inputs.
SECRET = 7345.918273645
SECRET_TOKENS = ("7345", "7.345", "7.34592", "7.3459")
SECRET_LABEL = 918273
SECRET_LEVEL = "ZQXJ-SECRET-LEVEL"


def _texts(call: Callable[[], Any], caplog: pytest.LogCaptureFixture) -> list[str]:
    """Run ``call``; return the exception's text, every warning's text and every log line."""
    texts: list[str] = []
    with warnings.catch_warnings(record=True) as seen, caplog.at_level(logging.DEBUG):
        warnings.simplefilter("always")
        try:
            call()
        except Exception as exc:  # the refusal under test
            texts.append(f"{type(exc).__name__}: {exc}")
            cause = exc.__cause__ or exc.__context__
            while cause is not None:
                texts.append(f"{type(cause).__name__}: {cause}")
                cause = cause.__cause__ or cause.__context__
    texts.extend(str(w.message) for w in seen)
    texts.extend(record.getMessage() for record in caplog.records)
    return texts


def _assert_clean(texts: list[str], tokens: tuple[str, ...]) -> None:
    assert texts, "the call neither raised nor warned: the precondition was not checked"
    for text in texts:
        for token in tokens:
            assert token not in text, f"a private value ({token!r}) is quoted in: {text}"


def _rows(n: int = 40, d: int = 3, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X / (2.0 * np.linalg.norm(X, axis=1, keepdims=True))


def _labels(n: int = 40) -> np.ndarray:
    return np.where(np.arange(n) % 2 == 0, 1, 0)


def _row_too_long() -> np.ndarray:
    X = _rows()
    X[7] = [SECRET, 0.0, 0.0]
    return X


@pytest.mark.parametrize("method", ["lsh", "maxcover", "balcan"])
def test_kmeans_row_outside_the_radius(method: str, caplog: pytest.LogCaptureFixture) -> None:
    from privlearn.cluster import DPKMeans

    est = DPKMeans(n_clusters=2, epsilon=1.0, method=method, radius=1.0, seed=0)
    _assert_clean(_texts(lambda: est.fit(_row_too_long()), caplog), SECRET_TOKENS)


@pytest.mark.parametrize("name", ["DPSGDClassifier", "DPSCDClassifier"])
def test_linear_row_outside_the_unit_ball(name: str, caplog: pytest.LogCaptureFixture) -> None:
    import privlearn.linear as linear

    est = getattr(linear, name)(epsilon=1.0, n_samples=40, classes=[0, 1], seed=0)
    _assert_clean(_texts(lambda: est.fit(_row_too_long(), _labels()), caplog), SECRET_TOKENS)


@pytest.mark.parametrize("name", ["DPSGDClassifier", "DPSCDClassifier"])
def test_linear_label_outside_the_declared_classes(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    import privlearn.linear as linear

    y = _labels()
    y[5] = SECRET_LABEL
    est = getattr(linear, name)(epsilon=1.0, n_samples=40, classes=[0, 1], seed=0)
    _assert_clean(_texts(lambda: est.fit(_rows(), y), caplog), (str(SECRET_LABEL),))


@pytest.mark.parametrize("name", ["DPSGDRegressor", "DPSCDRegressor"])
def test_regression_target_outside_its_bounds(name: str, caplog: pytest.LogCaptureFixture) -> None:
    import privlearn.linear as linear

    y = np.linspace(-1.0, 1.0, 40)
    y[3] = SECRET
    est = getattr(linear, name)(epsilon=1.0, n_samples=40, target_bounds=(-1.0, 1.0), seed=0)
    texts = _texts(lambda: est.fit(_rows(), y), caplog)
    for text in texts:  # refusing or clipping are both fine; quoting the value is not
        for token in SECRET_TOKENS:
            assert token not in text, f"a private value ({token!r}) is quoted in: {text}"


def test_scaler_value_outside_its_public_bounds(caplog: pytest.LogCaptureFixture) -> None:
    from privlearn.preprocessing import DPFeatureScaler

    X = np.random.default_rng(1).uniform(0.0, 1.0, size=(40, 2))
    X[9, 1] = SECRET
    est = DPFeatureScaler(epsilon=1.0, bounds=[(0.0, 1.0), (0.0, 1.0)], seed=0)
    texts = _texts(lambda: est.fit(X).transform(X), caplog)
    for text in texts:
        for token in SECRET_TOKENS:
            assert token not in text, f"a private value ({token!r}) is quoted in: {text}"


def test_impact_encoder_level_outside_the_declared_categories(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from privlearn.encoding import ImpactEncoder

    levels = np.array([["a"], ["b"]] * 20, dtype=object)
    levels[11, 0] = SECRET_LEVEL
    est = ImpactEncoder(epsilon=1.0, categories=[["a", "b"]], seed=0)
    texts = _texts(lambda: est.fit(levels, _labels()).transform(levels), caplog)
    for text in texts:
        assert SECRET_LEVEL not in text, f"a private level is quoted in: {text}"


def test_tabular_values_the_schema_does_not_know(caplog: pytest.LogCaptureFixture) -> None:
    from privlearn.tabular import PrivateTabularClassifier, Schema

    schema = Schema.from_dict(
        {
            "columns": {
                "age": {"type": "numeric", "range": [0, 120]},
                "sex": {"type": "categorical", "levels": ["F", "M"]},
            },
            "target": {"name": "y", "classes": [0, 1]},
        }
    )
    frame = pd.DataFrame({"age": np.linspace(20, 80, 60), "sex": ["F", "M"] * 30})
    frame.loc[4, "sex"] = SECRET_LEVEL
    frame.loc[6, "age"] = SECRET
    y = pd.Series(np.arange(60) % 2, name="y")
    est = PrivateTabularClassifier(schema, epsilon=1.0, seed=0)
    texts = _texts(lambda: est.fit(frame, y).predict(frame), caplog)
    for text in texts:
        assert SECRET_LEVEL not in text, f"a private level is quoted in: {text}"
        for token in SECRET_TOKENS:
            assert token not in text, f"a private value ({token!r}) is quoted in: {text}"
    y_bad = y.copy()
    y_bad[2] = SECRET_LABEL
    est = PrivateTabularClassifier(schema, epsilon=1.0, seed=0)
    _assert_clean(_texts(lambda: est.fit(frame, y_bad), caplog), (str(SECRET_LABEL),))
