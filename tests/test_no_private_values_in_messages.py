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


def test_quadgrad_label_outside_minus_one_plus_one(caplog: pytest.LogCaptureFixture) -> None:
    """The quadratic-gradient trainer's label check, in Python and in the core, names the
    precondition, never the offending label."""
    from privlearn import _core
    from privlearn.linear import quadgrad_train

    X = _rows()
    y = np.where(_labels() == 1, 1.0, -1.0)
    y[6] = SECRET_LABEL
    _assert_clean(_texts(lambda: quadgrad_train(X, y, max_iter=2), caplog), (str(SECRET_LABEL),))
    zeros = np.zeros(X.shape[1])
    args = ("nag", True, 2, "constant", 0.1, 1.0, 0.0, 1e-8, 0.01, 0.9, 0.999, 1e-8, zeros, 1)
    texts = _texts(lambda: _core.quadgrad_train_dense(X, y, zeros, *args), caplog)
    assert any("only -1 and +1" in t for t in texts), texts
    _assert_clean(texts, (str(SECRET_LABEL),))


@pytest.mark.parametrize("planted", [np.inf, -np.inf, np.nan])
def test_non_finite_private_values_are_not_quoted(
    planted: float, caplog: pytest.LogCaptureFixture
) -> None:
    """A non-finite private value is refused without saying which kind it is (NaN, +inf or -inf:
    the sign of an overflow is itself information): the core's label and target checks, the
    exponential mechanism's scores (computed from the rows) and the quantiles' column data."""
    from privlearn import _core
    from privlearn._specs.sgd import SGD_DEFAULTS, prepare_sgd
    from privlearn.linear import scd_train, sgd_train
    from privlearn.mechanisms import exponential
    from privlearn.preprocessing import dp_quantiles

    spellings = ("nan", "inf")
    X = _rows()
    y = np.where(_labels() == 1, 1.0, -1.0)
    key = bytes(32)
    sgd_kw = dict(SGD_DEFAULTS, key=key, loss="squared", epochs=1, batch_size=8)
    X_, _, w0, spec = prepare_sgd(X, y, None, **sgd_kw)
    args, extra = spec.core_args(1)
    y[3] = planted

    def core_sgd() -> None:  # the core's own check, below the Python one
        _core.sgd_train_dense(X_, y, w0, *args, **extra)

    calls = [
        lambda: sgd_train(X, y, key=key, loss="squared", epochs=1, batch_size=8),
        core_sgd,
        lambda: scd_train(X, y, key=key, loss="squared", epochs=1),
        lambda: exponential(np.array([0.0, planted, 1.0]), 1.0, 1.0, seed=0),
        lambda: dp_quantiles(np.where(np.arange(40) == 9, planted, 0.5), 0.5, 1.0, (0.0, 1.0)),
    ]
    for call in calls:
        texts = _texts(call, caplog)
        assert any("NaN or infinite" in t for t in texts), texts  # refused for that value
        for text in texts:
            words = text.lower().replace("infinite", "").replace("nan or", "").split()
            assert not any(w.strip("(),.;:'") in spellings for w in words), text
