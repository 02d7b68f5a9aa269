"""Leftovers of issue 30/31: each test failed on the code before its fix."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from privlearn.accounting.size import public_size
from privlearn.exceptions import UndeclaredBoundWarning


# ---- item 2: a declared size that does not match is refused without the private row count ----
def test_a_wrong_declared_size_is_refused_without_quoting_the_row_count() -> None:
    with pytest.raises(ValueError, match="n_samples=500 was declared") as info:
        public_size(500, 4817)
    assert "4817" not in str(info.value)


def test_a_linear_fit_with_a_wrong_declared_size_does_not_quote_the_rows() -> None:
    from privlearn.linear import DPSGDClassifier

    rng = np.random.default_rng(1)
    X = rng.uniform(-0.5, 0.5, size=(733, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="n_samples=700") as info:
        DPSGDClassifier(epsilon=1.0, n_samples=700, seed=0, classes=[0, 1]).fit(X, y)
    assert "733" not in str(info.value)


# ---- item 4: the search's mean_repetitions message names the search's own cap ----------------
@pytest.mark.parametrize(
    "repetitions, mean", [("truncated_negative_binomial", 0.5), ("poisson", -1)]
)
def test_the_search_names_its_own_repetition_cap(repetitions: str, mean: float) -> None:
    from privlearn.linear import DPSGDClassifier
    from privlearn.model_selection import PrivateHyperparameterSearch
    from privlearn.model_selection.tuning import MAX_SEARCH_MEAN_REPETITIONS

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    search = PrivateHyperparameterSearch(
        DPSGDClassifier(epsilon=1.0), {"epsilon": [1.0]}, repetitions=repetitions,
        mean_repetitions=mean,
    )  # fmt: skip
    with pytest.raises(ValueError, match="mean_repetitions must lie in") as info:
        search.fit(X, y)
    msg = str(info.value)
    assert f"{MAX_SEARCH_MEAN_REPETITIONS:g}]" in msg and "100000" not in msg


def test_the_repetition_functions_keep_their_own_cap() -> None:
    from privlearn.model_selection.repetitions import (
        MAX_MEAN_REPETITIONS,
        negative_binomial_gamma,
    )

    assert negative_binomial_gamma(1.0, 5000.0) == pytest.approx(1 / 5000.0)
    with pytest.raises(ValueError, match=f"{MAX_MEAN_REPETITIONS:g}]"):
        negative_binomial_gamma(1.0, 2 * MAX_MEAN_REPETITIONS)


# ---- item 5 (issue 31): the undeclared-bound warning only where it carries information -------
def _regression(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.3, 0.3, size=(n, 3))
    return X, X @ np.array([1.0, -2.0, 0.5]) * 100 + 150


@pytest.mark.parametrize("kw", [{"n_samples": 8000}, {}])
def test_no_undeclared_bound_warning_on_large_data(kw: dict) -> None:
    """8000 rows at epsilon 1 (bound epsilon 0.1, 0.1 * 8000 = 800 > 532): the private bound
    works there; no warning, whether the size is declared or a noisy count."""
    from privlearn.linear import DPSGDRegressor

    X, y = _regression(8000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UndeclaredBoundWarning)
        fit = DPSGDRegressor(epsilon=1.0, epochs=1, seed=0, **kw).fit(X, y)
    assert fit.privacy_.target.source == "private"


def test_the_undeclared_bound_warning_stays_on_small_data_without_private_values() -> None:
    from privlearn.linear import DPSCDRegressor, DPSGDRegressor

    X, y = _regression(300)
    y[7] = 98765.4321  # a planted private value
    for est in (DPSGDRegressor(epsilon=1.0, epochs=1, seed=0), DPSCDRegressor(epsilon=1.0)):
        with pytest.warns(UndeclaredBoundWarning, match="target_bounds") as record:
            est.fit(X, y)
        for w in record:
            text = str(w.message)
            assert "300" not in text and "98765" not in text


def test_the_warning_decision_reads_only_the_planned_size() -> None:
    from privlearn.accounting.size import DatasetSize
    from privlearn.linear._target import WARN_EPSILON_ROWS, warn_undeclared

    assert warn_undeclared(0.1, DatasetSize(None, "unused"))
    assert warn_undeclared(0.1, None)
    m = int(WARN_EPSILON_ROWS / 0.1)
    assert warn_undeclared(0.1, DatasetSize(m - 10, "noisy_count", 0.05, (128, 10**6)))
    assert not warn_undeclared(0.1, DatasetSize(m + 10, "noisy_count", 0.05, (128, 10**6)))
    assert not warn_undeclared(0.1, DatasetSize(m + 10, "public"))
    # an exact (not private) size never silences it: it is not a released number
    assert warn_undeclared(0.1, DatasetSize(10**9, "not_private"))


# ---- item 3: the Dask encoder refuses an unbounded continuous outcome by the same rule --------
@pytest.mark.parametrize("mode", ["naive", "jackknife"])
def test_the_dask_encoder_refuses_an_unbounded_outcome_like_the_in_memory_one(mode: str) -> None:
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    from privlearn.encoding import ImpactEncoder
    from privlearn.encoding._input import TARGET_LIMIT

    X = pd.DataFrame({"a": list("abcab" * 4)})
    y = pd.Series(np.r_[3.5e300, np.ones(19)])
    rule = f"target_bounds=(lo, hi) with |lo|, |hi| <= {TARGET_LIMIT:g} (y is clipped to them)"
    messages = []
    for Xi, yi in ((X, y), (dd.from_pandas(X, npartitions=2), dd.from_pandas(y, npartitions=2))):
        enc = ImpactEncoder(mode=mode, target_type="continuous")
        with pytest.raises(ValueError, match="target_bounds") as info:
            enc.fit_transform(Xi, yi)
        messages.append(str(info.value))
    for msg in messages:
        assert rule in msg and "3.5e+300" not in msg
    # the same bounded fit goes through on both paths, code for code
    enc = ImpactEncoder(mode=mode, target_type="continuous", target_bounds=(0.0, 2.0))
    mem = enc.fit_transform(X, y)
    dist = ImpactEncoder(mode=mode, target_type="continuous", target_bounds=(0.0, 2.0))
    out = dist.fit_transform(dd.from_pandas(X, npartitions=2), dd.from_pandas(y, npartitions=2))
    np.testing.assert_allclose(np.asarray(out.compute()), np.asarray(mem), rtol=1e-12)


# ---- item 1: a noise-multiplier fit from a noisy count states the tightest worst case --------
def test_the_worst_case_over_the_count_takes_the_tightest_bound() -> None:
    """Before: Renyi DP alone (``accountant='rdp'``, 9.87 for this schedule). After: on each
    cell of the count's range the smaller of the PLD's and Renyi DP's bound; still above the
    exact or PLD epsilon of every planned size we check."""
    from privlearn.accounting import GaussianEvent, PLDAccountant, PoissonSampled
    from privlearn.accounting.pld import _plain_epsilon
    from privlearn.linear._statement import _worst_case_poisson, _worst_case_tightest

    sigma, b, epochs, floor, cap, delta = 1.0, 20, 2, 20, 5000, 1e-6
    eps, rdp_eps, accountant, order, evaluated = _worst_case_tightest(
        sigma, b, epochs, 1, floor, cap, delta
    )
    assert accountant == "pld" and order is None and 1 <= evaluated
    assert eps < 0.97 * _worst_case_poisson(sigma, b, epochs, 1, floor, cap, delta)[0]
    assert rdp_eps <= _worst_case_poisson(sigma, b, epochs, 1, floor, cap, delta)[0]
    # sound: at or above the exact epsilon at q = 1 and the PLD's (fine grid) at other sizes
    assert eps >= _plain_epsilon(np.sqrt(epochs) / sigma, delta)
    for m in [21, 22, 25, 30, 40, 41, 77, 333, 4999]:
        acc = PLDAccountant().compose(
            PoissonSampled(b / m, GaussianEvent(sigma)), count=-(-(epochs * m) // b)
        )
        assert eps >= acc.get_epsilon(delta) * (1 - 1e-3), m


def test_a_noise_multiplier_fit_from_a_count_names_the_tightest_accountant() -> None:
    from privlearn.linear import DPSGDClassifier

    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(400, 3))
    y = (X[:, 0] > 0).astype(int)
    fit = DPSGDClassifier(epochs=2, epsilon=None, noise_multiplier=1.5, classes=[0, 1], seed=0).fit(
        X, y
    )
    p = fit.privacy_
    assert p.worst_case and p.size.source == "noisy_count"
    st = p.statement
    assert st.accountant == "pld" and st.rdp_epsilon > st.epsilon
    assert "smaller of the PLD's and Renyi DP's epsilon" in str(p)
    assert p.epsilon == pytest.approx(st.epsilon + p.size.epsilon, rel=1e-12)
    # the same statement for another count (a function of public inputs only)
    other = DPSGDClassifier(
        epochs=2, epsilon=None, noise_multiplier=1.5, classes=[0, 1], seed=5
    ).fit(X, y)
    assert other.privacy_.size.value != p.size.value
    assert other.privacy_.epsilon == p.epsilon


def test_the_worst_case_keeps_renyi_dp_below_the_pld_floor() -> None:
    from privlearn.linear._statement import _worst_case_poisson, _worst_case_tightest

    eps, rdp_eps, accountant, order, evaluated = _worst_case_tightest(0.15, 20, 2, 1, 20, 400, 1e-6)
    assert accountant == "rdp" and evaluated == 0 and order is not None
    assert eps == rdp_eps <= _worst_case_poisson(0.15, 20, 2, 1, 20, 400, 1e-6)[0]
