"""The target bound of the private regressors (issue 22, item 7): declared public or
estimated privately, ``y`` clipped into it, the statement saying which; bad bounds refused
before any budget is spent; the default regressors beat the mean predictor on diabetes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from privlearn.accounting import PrivacyLedger
from privlearn.linear import DPSCDRegressor, DPSGDRegressor
from privlearn.linear._target import TARGET_FRACTION, check_target

REGRESSORS = {"sgd": DPSGDRegressor, "scd": DPSCDRegressor}


def _data(n: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = 0.4 * rng.normal(size=(n, 3)) / math.sqrt(3)
    y = 150.0 + X @ np.array([200.0, -100.0, 50.0]) + 10.0 * rng.normal(size=n)
    return X, y


def _diabetes_unit_rows() -> tuple[np.ndarray, np.ndarray]:
    """diabetes with each feature mapped from its (public, scikit-learn-scaled) range onto
    ``[-1, 1] / sqrt(d)``: rows in the unit ball; the raw target."""
    X, y = load_diabetes(return_X_y=True)
    lo, hi = X.min(axis=0), X.max(axis=0)
    return (X - (lo + hi) / 2) / ((hi - lo) / 2) / math.sqrt(X.shape[1]), y


@pytest.mark.parametrize("name", list(REGRESSORS))
def test_declared_bound_is_used_and_stated(name):
    X, y = _data()
    ledger = PrivacyLedger(10.0, 1e-3)
    est = REGRESSORS[name](epsilon=1.0, seed=0, target_bounds=(0, 300), ledger=ledger).fit(X, y)
    t = est.privacy_.target
    assert (t.lower, t.upper, t.source, t.epsilon) == (0.0, 300.0, "declared", 0.0)
    assert (t.center, t.scale) == (150.0, 150.0)
    assert est.privacy_.epsilon == pytest.approx(1.0)
    assert "target bound [0, 300]: declared public" in str(est.privacy_)
    assert len(ledger.entries) == 1  # nothing spent on a declared bound
    assert est.get_params()["target_bounds"] == (0, 300)


@pytest.mark.parametrize("name", list(REGRESSORS))
def test_private_bound_spends_its_share_and_is_stated(name):
    X, y = _data(n=3000)
    ledger = PrivacyLedger(10.0, 1e-3)
    est = REGRESSORS[name](epsilon=2.0, seed=1, ledger=ledger).fit(X, y)
    t = est.privacy_.target
    assert t.source == "private"
    assert t.epsilon == pytest.approx(TARGET_FRACTION * 2.0)
    assert est.privacy_.epsilon == pytest.approx(2.0)  # the total: bound + count + training
    # the fences of the private quartiles cover the bulk of y (3000 rows: the quartiles are
    # accurate) and are far tighter than the search range
    assert t.lower < np.quantile(y, 0.05) and t.upper > np.quantile(y, 0.95)
    assert t.upper - t.lower < 10 * (y.max() - y.min())
    text = str(est.privacy_)
    assert "PRIVATE, epsilon 0.2" in text and "budget split" in text
    (entry,) = ledger.entries  # one charge: the statement's total, the bound's share included
    assert entry.epsilon == pytest.approx(est.privacy_.epsilon)


def test_private_bound_in_a_declared_search_range():
    X, y = _data(n=2000)
    est = DPSGDRegressor(epsilon=1.0, seed=2, target_range=(0.0, 1000.0)).fit(X, y)
    t = est.privacy_.target
    assert t.source == "private" and "target_range [0, 1000]" in t.search
    assert 0.0 <= t.lower < t.upper <= 1000.0


@pytest.mark.parametrize("name", list(REGRESSORS))
def test_y_outside_a_declared_bound_is_clipped(name):
    """The clip is enforced in code: a fit on y with far outliers equals, bit for bit, the
    fit on y clipped into the bound by hand (same seed)."""
    X, y = _data()
    wild = y.copy()
    wild[:5] = [1e12, -1e12, 1e300, -5e3, 7e3]
    kw = dict(epsilon=1.0, seed=3, target_bounds=(0.0, 300.0), n_samples=len(y))
    a = REGRESSORS[name](**kw).fit(X, wild)
    b = REGRESSORS[name](**kw).fit(X, np.clip(wild, 0.0, 300.0))
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.intercept_ == b.intercept_
    assert np.isfinite(a.coef_).all()


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"target_bounds": (1.0, 1.0)}, "reversed or empty"),
        ({"target_bounds": (2.0, 1.0)}, "reversed or empty"),
        ({"target_bounds": (0.0, math.inf)}, "finite"),
        ({"target_bounds": (math.nan, 1.0)}, "finite"),
        ({"target_bounds": (0.0, 1.0, 2.0)}, "pair"),
        ({"target_bounds": [[0.0, 1.0]]}, "pair"),
        ({"target_bounds": "ab"}, "pair"),
        ({"target_bounds": 3.0}, "pair"),
        ({"target_bounds": (-1e308, 1e308)}, r"must lie in \[-1e\+150, 1e\+150\]"),
        ({"target_range": (5.0, 0.0)}, "target_range"),
        ({"target_bounds": (0, 1), "target_range": (0, 2)}, "not both"),
        ({"target_fraction": 0.0}, "target_fraction"),
        ({"target_fraction": 1.0}, "target_fraction"),
    ],
)
@pytest.mark.parametrize("name", list(REGRESSORS))
def test_bad_target_parameters_refused_before_any_spend(name, kw, match):
    X, y = _data(n=200)
    ledger = PrivacyLedger(10.0, 1e-3)
    with pytest.raises(ValueError, match=match):
        REGRESSORS[name](epsilon=1.0, seed=0, ledger=ledger, **kw).fit(X, y)
    assert ledger.entries == [] or len(ledger.entries) == 0
    assert ledger.spent[0] == 0.0


def test_check_target_values():
    spec = check_target((1, 2), None, 0.25)
    assert spec.bounds == (1.0, 2.0) and spec.epsilon(1.0) == 0.0
    spec = check_target(None, None, 0.25)
    assert spec.epsilon(2.0) == 0.5 and spec.epsilon(math.inf) == 0.0


def test_not_private_uses_y_as_given():
    """epsilon=inf without a declared bound: the plain objective on y (no clip, no scaling),
    so the non-private fit is the ordinary least-squares SGD."""
    X, y = _data(n=300)
    est = DPSGDRegressor(epsilon=math.inf, seed=0).fit(X, y)
    t = est.privacy_.target
    assert (t.lower, t.upper, t.source, t.center, t.scale) == (
        -math.inf,
        math.inf,
        "not_private",
        0.0,
        1.0,
    )
    assert "not private" in t.statement_line()
    declared = DPSGDRegressor(epsilon=math.inf, seed=0, target_bounds=(0, 300)).fit(X, y)
    assert declared.privacy_.target.source == "declared"


def test_no_intercept_scales_without_centring():
    X, y = _data(n=400)
    est = DPSGDRegressor(epsilon=1.0, seed=0, target_bounds=(-50, 300), fit_intercept=False)
    t = est.fit(X, y).privacy_.target
    assert (t.center, t.scale) == (0.0, 300.0)
    assert est.intercept_ == 0.0


@pytest.mark.parametrize("name", list(REGRESSORS))
def test_core_and_reference_agree_with_a_target_bound(name):
    """The target map happens before the trainers: the C++ core and its numpy twin still
    agree (rtol 1e-10) on the whole estimator."""
    X, y = _data(n=300)
    kw = dict(epsilon=1.0, seed=4, target_bounds=(0.0, 300.0), n_samples=300, epochs=2)
    a = REGRESSORS[name](backend="core", **kw).fit(X, y)
    b = REGRESSORS[name](backend="reference", **kw).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-10)


@pytest.mark.parametrize("name", list(REGRESSORS))
def test_defaults_beat_the_mean_on_diabetes_at_epsilon_3(name):
    """Raw target, declared public bound (0, 400) of the progression score, the default
    hyperparameters: held-out R^2 clearly above the mean predictor's (about 0 or below)."""
    X, y = _diabetes_unit_rows()
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.25, random_state=0)
    scores = [
        r2_score(yb, REGRESSORS[name](epsilon=3.0, seed=s, target_bounds=(0, 400)).fit(Xa, ya)
                 .predict(Xb))
        for s in range(3)
    ]  # fmt: skip
    mean_r2 = r2_score(yb, np.full(len(yb), ya.mean()))
    assert np.mean(scores) > mean_r2 + 0.15, (scores, mean_r2)


def test_target_scale_false_only_clips():
    """``target_scale=False``: y clipped into the bound, the model trained on y's scale
    (centre 0, scale 1); a non-bool is a TypeError before anything is spent."""
    X, y = _data(n=300)
    est = DPSGDRegressor(epsilon=1.0, seed=0, target_bounds=(0, 300), target_scale=False)
    t = est.fit(X, y).privacy_.target
    assert (t.lower, t.upper, t.center, t.scale) == (0.0, 300.0, 0.0, 1.0)
    ledger = PrivacyLedger(10.0, 1e-3)
    with pytest.raises(TypeError, match="target_scale"):
        DPSGDRegressor(target_scale="yes", ledger=ledger).fit(X, y)
    assert ledger.spent[0] == 0.0


def test_undeclared_target_bound_warns_from_the_parameters_alone() -> None:
    """Without target_bounds or target_range the private bound's wide default search is
    announced (UndeclaredBoundWarning); a declared bound or range is silent."""
    import warnings

    from privlearn.exceptions import UndeclaredBoundWarning
    from privlearn.linear import DPSGDRegressor

    rng = np.random.default_rng(0)
    X = rng.uniform(-0.3, 0.3, size=(400, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) * 100 + 150
    with pytest.warns(UndeclaredBoundWarning, match="target_bounds"):
        DPSGDRegressor(epsilon=1.0, epochs=1, seed=0).fit(X, y)
    for kw in ({"target_bounds": (0, 400)}, {"target_range": (0, 1000)}):
        with warnings.catch_warnings():
            warnings.simplefilter("error", UndeclaredBoundWarning)
            DPSGDRegressor(epsilon=1.0, epochs=1, seed=0, **kw).fit(X, y)
