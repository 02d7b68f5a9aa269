"""The private linear estimators at their edges: the dataset size (public or a noisy count),
what a fitted estimator holds, the caller's arrays, memory, and a property test over inputs."""

from __future__ import annotations

import math
import pickle
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import only_warnings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privlearn.accounting import (
    DEFAULT_DELTA,
    SIZE_EPSILON_FRACTION,
    PoissonSampled,
    SelfComposed,
    calibrate_noise,
)
from privlearn.exceptions import PrivacyLeakWarning, UndeclaredBoundWarning
from privlearn.linear import DPSCDClassifier, DPSCDRegressor, DPSGDClassifier, DPSGDRegressor
from privlearn.linear._statement import TrainingDiagnostics

INF = float("inf")


def _data(n: int, d: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True)) * 1.25
    w = np.linspace(1.0, -1.0, d)
    y = np.where(X @ w + 0.1 * rng.normal(size=n) > 0, 1, 0)
    return X, y, X @ w


#: The label set of ``_data``'s ``y``, declared public (as a user should; the fits that read it
#: from ``y`` are tested in tests/test_label_set.py).
BINARY = {"classes": [0, 1]}

# Every private estimator in its default form and in its other accounted forms.
ESTIMATORS = {
    "sgd-l2-laplace": (lambda **kw: DPSGDClassifier(mechanism="l2-laplace", **BINARY, **kw), "y"),
    "sgd-gaussian": (lambda **kw: DPSGDClassifier(mechanism="gaussian", **BINARY, **kw), "y"),
    "sgd-gaussian-fixed": (
        lambda **kw: DPSGDClassifier(mechanism="gaussian", sampling="fixed", **BINARY, **kw),
        "y",
    ),
    "sgd-regressor": (lambda **kw: DPSGDRegressor(**kw), "t"),
    "scd-dual": (lambda **kw: DPSCDClassifier(**BINARY, **kw), "y"),
    "scd-seq": (
        lambda **kw: DPSCDClassifier(variant="seq", sampling="fixed", **BINARY, **kw),
        "y",
    ),
    "scd-primal": (lambda **kw: DPSCDRegressor(variant="primal", **{"batch_size": 2, **kw}), "t"),
    "scd-regressor": (lambda **kw: DPSCDRegressor(**kw), "t"),
}


def _fit(name: str, n: int, **kw):
    make, target = ESTIMATORS[name]
    X, y, t = _data(n)
    est = make(seed=1, fit_intercept=True, **kw)
    if target == "y":
        return est.fit(X, y)
    # no target bound declared: estimated privately, which on few rows at its epsilon an
    # UndeclaredBoundWarning says (the defaults are what these tests check)
    with only_warnings(UndeclaredBoundWarning, match="no target_bounds"):
        return est.fit(X, t)


# ---- what a fitted estimator holds -----------------------------------------------------------
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_fitted_attributes_do_not_grow_with_n(name):
    """Nothing per training row is kept: no fitted attribute has length n, and the pickle of a
    fitted model is the same size for 500 and 20,000 rows."""
    small, large = _fit(name, 500), _fit(name, 20_000)
    for est in (small, large):
        n = 500 if est is small else 20_000
        for key, value in vars(est).items():
            if key.endswith("_") and hasattr(value, "__len__") and not isinstance(value, str):
                assert len(value) != n, f"{key} has one entry per training row"
        assert not hasattr(est, "diagnostics_")
        assert {k for k in vars(est) if k.endswith("_")} <= {
            "coef_", "intercept_", "n_features_in_", "privacy_", "n_steps_", "classes_",
            "row_projection_",
        }  # fmt: skip
    size_small, size_large = len(pickle.dumps(small)), len(pickle.dumps(large))
    assert abs(size_large - size_small) < 64, (size_small, size_large)


def test_diagnostics_are_opt_in_and_marked():
    fit = _fit("scd-dual", 300, epsilon=INF, diagnostics=True)
    diag = fit.diagnostics_
    assert isinstance(diag, TrainingDiagnostics) and diag.not_private
    assert diag.dual_coef.shape == (300,) and diag.objective_path.size > 10
    assert "NOT" in TrainingDiagnostics.__doc__ and "private" in TrainingDiagnostics.__doc__
    refit = fit.set_params(diagnostics=False).fit(*_data(300)[:2])
    assert not hasattr(refit, "diagnostics_")  # a refit without them drops the old ones


# ---- the dataset size ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["sgd-gaussian", "scd-dual"])
def test_noisy_count_plans_the_schedule_and_is_accounted(name):
    """Add/remove-one fits spend SIZE_EPSILON_FRACTION of epsilon on an exact discrete-Laplace
    count; T, q (and lambda N for DP-SCD) come from it, the total meets the target."""
    epsilon, n, b = 1.0, 2000, 50
    fit = _fit(name, n, epsilon=epsilon, batch_size=b, epochs=2)
    p = fit.privacy_
    size = p.size
    assert size.source == "noisy_count" and not size.public
    assert size.epsilon == pytest.approx(SIZE_EPSILON_FRACTION * epsilon)
    assert size.value != n  # the count is noisy (P(noise = 0) = tanh(0.025) ~ 2.5%: seed 1)
    steps = math.ceil(2 * size.value / b)
    assert p.steps == fit.n_steps_ == steps
    q = b / size.value
    assert p.statement.events[0].event == PoissonSampled(q, p.statement.events[0].event.event)
    assert p.epsilon <= epsilon and p.epsilon == pytest.approx(epsilon, rel=1e-3)
    assert p.delta == DEFAULT_DELTA
    sigma = calibrate_noise(epsilon - size.epsilon, DEFAULT_DELTA, q=q, steps=steps)
    assert sigma == pytest.approx(getattr(p, "noise_multiplier", None) or p.sigma, rel=1e-12)
    text = str(p)
    assert "noisy count" in text and "add_remove" in text and "basic composition" in text


@pytest.mark.parametrize("name", ["sgd-gaussian", "scd-dual"])
def test_public_size_is_checked_and_stated(name):
    fit = _fit(name, 1000, n_samples=1000, batch_size=50)
    assert fit.privacy_.size.source == "public" and fit.privacy_.size.epsilon == 0.0
    assert fit.n_steps_ == 1000 // 50 * fit.epochs
    assert "dataset size treated as public" in str(fit.privacy_)
    with pytest.raises(ValueError, match="n_samples=999 was declared"):
        _fit(name, 1000, n_samples=999)


@pytest.mark.parametrize("name", ["sgd-l2-laplace", "sgd-gaussian-fixed", "scd-seq"])
def test_replace_one_fits_say_the_size_is_shared(name):
    p = _fit(name, 400, batch_size=20).privacy_
    assert p.neighboring == "replace_one" and p.size.source == "replace_one"
    assert "replace-one neighbours share it" in str(p)


def test_no_default_depends_on_n():
    """The default delta is one public number, the same for every estimator and every n."""
    for name in ("sgd-gaussian", "scd-dual", "scd-primal"):
        deltas = {_fit(name, n).privacy_.delta for n in (300, 3000)}
        assert deltas == {DEFAULT_DELTA}


def test_batch_larger_than_the_data_is_not_an_error_when_the_size_is_private():
    """Refusing batch_size > n would release whether n >= batch_size; with a noisy count the
    Poisson rate is min(1, b / n~)."""
    fit = _fit("sgd-gaussian", 40, batch_size=100)
    (event,) = fit.privacy_.statement.events
    event = event.event if isinstance(event, SelfComposed) else event
    assert isinstance(event, PoissonSampled) and 0.0 < event.q <= 1.0
    with pytest.raises(ValueError, match="must be <= n_samples"):
        _fit("sgd-gaussian", 40, batch_size=100, n_samples=40)


# ---- the caller's arrays and memory ----------------------------------------------------------
@pytest.mark.parametrize("name", ["sgd-l2-laplace", "sgd-gaussian", "scd-dual"])
def test_caller_arrays_are_never_written(name):
    X, y, _ = _data(200)
    X[3] *= 10.0  # outside the unit ball: clip_rows projects the trainer's copy
    dense = X.copy()
    dense.setflags(write=False)
    csr = sp.csr_matrix(X)
    # unsorted indices and a duplicate entry, read-only arrays
    csr = sp.csr_matrix((csr.data[::-1].copy(), csr.indices[::-1].copy(), csr.indptr.copy()))
    csr.has_sorted_indices = False
    for arr in (csr.data, csr.indices, csr.indptr):
        arr.setflags(write=False)
    before = (csr.data.copy(), csr.indices.copy(), csr.indptr.copy())
    make, _ = ESTIMATORS[name]
    for Xin in (dense, csr):
        make(seed=0, clip_rows=True, fit_intercept=True).fit(Xin, y)
    np.testing.assert_array_equal(dense, X)
    for got, want in zip((csr.data, csr.indices, csr.indptr), before):
        np.testing.assert_array_equal(got, want)


def test_clip_rows_projects_huge_rows_instead_of_zeroing_them():
    from privlearn._design_matrix import row_norms
    from privlearn.linear._rows import _training_rows

    big = 1.5e308
    X = np.array([[1e300, 0, 0], [3e200, 4e200, 0], [0.3, 0.4, 0], [0, 0, 0], [big, big, big]])
    want = [1e300, 5e200, 0.5, 0.0, np.inf]  # the last norm is beyond DBL_MAX
    np.testing.assert_allclose(row_norms(X), want, rtol=1e-15)
    np.testing.assert_allclose(row_norms(sp.csr_matrix(X)), want, rtol=1e-15)
    out = _training_rows(X, 1.0, 0.5)
    third = 1 / math.sqrt(3)
    expected = [[1, 0, 0], [0.6, 0.8, 0], [0.3, 0.4, 0], [0, 0, 0], [third, third, third]]
    np.testing.assert_allclose(out[:, :3], expected, rtol=1e-15)
    np.testing.assert_array_equal(out[:, 3], 0.5)
    out_csr = _training_rows(sp.csr_matrix(X), 1.0, 0.5)
    np.testing.assert_allclose(out_csr.toarray(), out, rtol=1e-15)


@pytest.mark.parametrize("name", ["sgd-gaussian", "scd-dual"])
def test_peak_memory_is_at_most_one_copy_of_X(name):
    """clip_rows + fit_intercept make one new array (the trainer's rows); nothing else of X's
    size is allocated by the default fit (numpy allocations are traced; the C++ core reads X in
    place)."""
    X, y, _ = _data(40_000, d=25, seed=3)
    X[::7] *= 3.0  # rows to project
    make, _ = ESTIMATORS[name]
    est = make(seed=0, clip_rows=True, fit_intercept=True, batch_size=200)
    # The accountant's working memory (the privacy loss distributions, a few MB whatever the
    # data's size) is cached per schedule: a first fit (same seed, so the same noisy count and
    # schedule) warms it, the second is measured.
    make(seed=0, clip_rows=True, fit_intercept=True, batch_size=200).fit(X, y)
    tracemalloc.start()
    try:
        est.fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    extra = peak / X.nbytes
    assert extra < 1.25, f"peak {extra:.2f} x the size of X"


# ---- a property test over the estimators' inputs ---------------------------------------------
_FLOATS = st.one_of(
    st.floats(-1e3, 1e3),
    st.sampled_from([0.0, 1e-320, 1e300, -1e300, 1.7976931348623157e308]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(ESTIMATORS)),
    rows=st.lists(st.lists(_FLOATS, min_size=3, max_size=3), min_size=2, max_size=12),
    targets=st.lists(_FLOATS, min_size=12, max_size=12),
    epsilon=st.sampled_from([0.5, 1.0, 1e4, INF, 1e126, -1.0]),
    clip_rows=st.booleans(),
)
def test_any_input_gives_a_finite_model_or_a_clear_error(name, rows, targets, epsilon, clip_rows):
    """Whatever the (finite) data and parameters: a model with finite coefficients, or a
    ValueError / TypeError with a message; never a crash, never NaN."""
    X = np.array(rows, dtype=np.float64)
    n = X.shape[0]
    t = np.array(targets[:n])
    y = np.arange(n) % 2
    make, target = ESTIMATORS[name]
    est = make(epsilon=epsilon, batch_size=1, seed=0)
    if "clip_rows" in est.get_params():
        est.set_params(clip_rows=clip_rows)
    try:
        with only_warnings(UndeclaredBoundWarning, match="no target_bounds"):
            est.fit(X, y if target == "y" else t)
    except (ValueError, TypeError) as err:
        assert str(err)
        return
    assert np.isfinite(est.coef_).all() and np.isfinite(est.intercept_).all()


def test_complex_input_is_refused_by_the_trainers():
    from privlearn.linear import scd_train, sgd_train
    from privlearn.random import Stream

    X = np.ones((4, 2)) + 1j
    y = np.array([1.0, -1.0, 1.0, -1.0])
    key = Stream(0).key
    for train in (sgd_train, scd_train):
        with pytest.raises(TypeError, match="complex"):
            train(X, y, key=key)
        with pytest.raises(TypeError, match="complex"):
            train(sp.csr_matrix(X), y, key=key)


# ---- one budget across fits --------------------------------------------------------------------
def test_a_ledger_shared_by_three_fits_refuses_the_fourth():
    from privlearn.accounting import PrivacyLedger
    from privlearn.exceptions import BudgetExceededError

    X, y, t = _data(300)
    ledger = PrivacyLedger(epsilon_cap=3.0, delta_cap=3e-6)
    fits = [
        DPSGDClassifier(mechanism="gaussian", epsilon=1.0, seed=0, ledger=ledger, **BINARY).fit(
            X, y
        ),
        DPSCDClassifier(epsilon=1.0, seed=0, ledger=ledger, **BINARY).fit(X, y),
    ]
    with pytest.warns(UndeclaredBoundWarning, match="no target_bounds"):  # 300 rows: few for it
        fits.append(DPSGDRegressor(epsilon=1.0, seed=0, ledger=ledger).fit(X, t))
    assert [e.epsilon for e in ledger.entries] == [1.0, 1.0, 1.0]
    assert ledger.spent.delta == pytest.approx(3 * DEFAULT_DELTA)
    assert all(f.privacy_.epsilon <= 1.0 for f in fits)  # the ledger holds the targets
    fourth = DPSCDRegressor(epsilon=0.5, seed=0, ledger=ledger)
    with pytest.raises(BudgetExceededError, match="would exceed the privacy budget"):
        fourth.fit(X, t)
    assert not hasattr(fourth, "coef_") and len(ledger) == 3
    # a non-private fit spends nothing
    DPSGDClassifier(epsilon=INF, seed=0, ledger=ledger).fit(X, y)
    assert len(ledger) == 3


def test_a_noise_multiplier_fit_charges_its_planned_total_once():
    """With a noise multiplier and a noisy count the whole a-priori total (count + worst case
    of the training part) is known before anything is drawn: one charge, exactly privacy_."""
    from privlearn.accounting import PrivacyLedger

    X, y, _ = _data(500)
    ledger = PrivacyLedger(epsilon_cap=100.0, delta_cap=1e-3)
    fit = DPSGDClassifier(
        mechanism="gaussian", epsilon=None, noise_multiplier=1.0, seed=0, ledger=ledger, **BINARY
    ).fit(X, y)
    (entry,) = ledger.entries
    assert fit.privacy_.size.source == "noisy_count" and fit.privacy_.worst_case
    assert entry.epsilon == fit.privacy_.epsilon and entry.delta == fit.privacy_.delta


def test_cloned_estimators_charge_the_same_ledger():
    """scikit-learn's clone (GridSearchCV, cross_val_score) must not copy the budget away."""
    from sklearn.base import clone

    from privlearn.accounting import PrivacyLedger

    ledger = PrivacyLedger(epsilon_cap=2.0, delta_cap=1e-5)
    est = DPSCDClassifier(epsilon=1.0, seed=0, ledger=ledger, **BINARY)
    twin = clone(est)
    assert twin.ledger is ledger
    X, y, _ = _data(200)
    twin.fit(X, y)
    assert len(ledger) == 1


# ---- multiclass: one-vs-rest DP-SCD ------------------------------------------------------------
ABC = ["a", "b", "c"]  # the label set of _three_classes


def _three_classes(n: int = 600, seed: int = 0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.6, 0.0], [-0.3, 0.5], [-0.3, -0.5]])
    labels = rng.integers(0, 3, size=n)
    X = centres[labels] + 0.15 * rng.normal(size=(n, 2))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    return X, np.array(["a", "b", "c"])[labels]


def test_one_vs_rest_dp_scd_at_infinite_epsilon_is_sklearn_ovr():
    """epsilon = inf: the K binary problems are scikit-learn's one-vs-rest logistic regressions
    (same objective: lambda = 1 / (C n), no intercept)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier

    X, y = _three_classes()
    n, lam = X.shape[0], 1e-2
    ours = DPSCDClassifier(
        epsilon=INF, variant="scd", epochs=200, alpha=lam, seed=0, diagnostics=True,
        fit_intercept=False,
    ).fit(X, y)  # fmt: skip
    ovr = OneVsRestClassifier(
        LogisticRegression(C=1 / (lam * n), fit_intercept=False, tol=1e-12, max_iter=10_000)
    ).fit(X, y)
    assert ours.classes_.tolist() == ["a", "b", "c"] and ours.coef_.shape == (3, 2)
    want = np.vstack([e.coef_ for e in ovr.estimators_])
    np.testing.assert_allclose(ours.coef_, want, atol=1e-6)
    np.testing.assert_allclose(ours.predict_proba(X), ovr.predict_proba(X), atol=1e-6)
    np.testing.assert_array_equal(ours.predict(X), ovr.predict(X))
    assert len(ours.diagnostics_) == 3


def test_one_vs_rest_dp_scd_composes_the_classes_in_one_budget():
    X, y = _three_classes(6000)
    fit = DPSCDClassifier(
        epsilon=1.0, batch_size=200, epochs=2, alpha=1e-3, seed=0, n_samples=6000, classes=ABC
    ).fit(X, y)
    p = fit.privacy_
    assert p.tasks == 3 and "one-vs-rest: 3 binary problems" in str(p)
    (event,) = p.statement.events
    assert event.count == 3 * p.steps  # K x T mechanisms composed
    sigma = calibrate_noise(1.0, DEFAULT_DELTA, q=200 / 6000, steps=3 * p.steps)
    assert p.sigma == sigma and p.epsilon <= 1.0
    assert fit.score(X, y) > 0.9
    # a binary fit is unchanged by the multiclass code path (one problem, the default streams)
    two = y != "c"
    binary = DPSCDClassifier(epsilon=1.0, batch_size=50, seed=3, classes=ABC[:2]).fit(
        X[two], y[two]
    )
    assert binary.coef_.shape == (1, 2) and binary.privacy_.tasks == 1


# ---- multiclass: multinomial (softmax) Gaussian DP-SGD ----------------------------------------
def test_multinomial_dp_sgd_at_infinite_epsilon_reaches_sklearn_multinomial_optimum():
    from sklearn.linear_model import LogisticRegression

    from privlearn._losses import softmax_objective

    X, y = _three_classes(600, seed=2)
    n, lam = X.shape[0], 1e-2
    ours = DPSGDClassifier(
        mechanism="gaussian", epsilon=INF, clip=0.0, alpha=lam, learning_rate="inv_lambda_t",
        batch_size=50, epochs=200, seed=0, n_threads=1, fit_intercept=False,
    ).fit(X, y)  # fmt: skip
    lr = LogisticRegression(C=1 / (lam * n), fit_intercept=False, tol=1e-12, max_iter=10_000)
    lr.fit(X, y)
    codes = np.searchsorted(ours.classes_, y).astype(float)
    mine = softmax_objective(X, codes, ours.coef_.T, lam)
    best = softmax_objective(X, codes, lr.coef_.T, lam)
    assert -1e-9 < mine - best < 1e-4
    np.testing.assert_allclose(ours.predict_proba(X), lr.predict_proba(X), atol=5e-3)
    assert ours.coef_.shape == (3, 2) and ours.intercept_.shape == (3,)


def test_multinomial_dp_sgd_is_one_gaussian_budget_and_matches_the_twin():
    X, y = _three_classes(3000)
    kw = dict(mechanism="gaussian", epsilon=1.0, batch_size=100, epochs=3, seed=0,
              fit_intercept=True, n_samples=3000, classes=ABC)  # fmt: skip
    core = DPSGDClassifier(**kw).fit(X, y)
    ref = DPSGDClassifier(backend="reference", **kw).fit(X, y)
    np.testing.assert_allclose(core.coef_, ref.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(core.intercept_, ref.intercept_, rtol=1e-10, atol=1e-12)
    p = core.privacy_
    # the whole (d, K) gradient is one clipped contribution: the binary accounting, unchanged
    sigma = calibrate_noise(1.0, DEFAULT_DELTA, q=100 / 3000, steps=p.steps)
    assert p.noise_multiplier == sigma and p.steps == 90 and p.epsilon <= 1.0
    assert core.score(X, y) > 0.9
    np.testing.assert_allclose(core.predict_proba(X).sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="need the multinomial model"):
        DPSGDClassifier(mechanism="l2-laplace", seed=0, classes=ABC).fit(X, y)  # Song: binary


def test_an_rdp_ledger_composes_gaussian_fits_below_their_sum():
    from privlearn.accounting import PLDAccountant, RDPAccountant, RDPLedger
    from privlearn.exceptions import BudgetExceededError

    X, y, t = _data(2000)
    ledger = RDPLedger(epsilon_cap=1.6, delta_cap=1e-5)
    kw = dict(
        mechanism="gaussian",
        epsilon=1.0,
        delta=1e-5,
        n_samples=2000,
        batch_size=50,
        epochs=1,
        **BINARY,
    )
    fits = [DPSGDClassifier(seed=s, ledger=ledger, **kw).fit(X, y) for s in range(3)]
    # three (1, 1e-5) fits (each calibrated by its loss distribution) cost about 1.49 together
    # by their composed loss distributions (RDP would say more; basic composition: 3); a
    # fourth would bring the total to about 1.7
    replay, rdp = PLDAccountant(), RDPAccountant()
    for f in fits:
        for event in f.privacy_.statement.events:
            replay.compose(event)
            rdp.compose(event)
    assert ledger.spent.epsilon == pytest.approx(replay.get_epsilon(1e-5), rel=1e-9)
    assert 1.0 < ledger.spent.epsilon < 1.6 < rdp.get_epsilon(1e-5)
    with pytest.raises(BudgetExceededError, match="would exceed the privacy budget"):
        DPSGDClassifier(seed=9, ledger=ledger, **kw).fit(X, y)
    assert len(ledger) == 3
    # a pure-DP fit is an RDP curve too (min(eps, alpha eps^2 / 2)); a fit planned from a
    # noisy count has events that depend on the count, so it is charged its a-priori
    # (epsilon, delta) total instead (basic composition with the rest)
    mixed = RDPLedger(epsilon_cap=10.0, delta_cap=1e-5)
    DPSGDClassifier(epsilon=1.0, seed=0, ledger=mixed, **BINARY).fit(X, y)  # l2-laplace, pure
    scd = DPSCDClassifier(epsilon=1.0, seed=0, ledger=mixed, **BINARY).fit(X, y)  # count + Gauss
    assert [e.label for e in mixed.entries] == ["DPSGDClassifier.fit", "DPSCDClassifier.fit"]
    assert mixed.entries[-1].epsilon == scd.privacy_.epsilon == 1.0
    assert mixed.spent.epsilon <= 2.0 + 1e-9


# ---- defaults chosen by experiment -------------------------------------------------------------
def test_default_fits_on_unit_rows_are_sensible_models_at_epsilon_one():
    """The defaults (bench/python/bench_defaults.py) on rows of norm <= 1: an intercept, the
    Gaussian mechanism for DPSGDClassifier, DP-SCD's rows beyond the intercept's bound
    projected (no privacy cost; Gaussian DP-SGD keeps its rows and clips gradients), and a model
    clearly better than the majority class / the mean at epsilon 1."""
    rng = np.random.default_rng(5)
    n = 5000
    X = rng.normal(size=(n, 4))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))  # norms up to 1
    y = (X @ [1.0, -1.0, 0.5, 0.0] + 0.3 > 0).astype(int)  # needs the intercept
    t = 0.5 + 0.3 * X[:, 0] - 0.2 * X[:, 1]  # a target in [0, 1]
    for est in (DPSGDClassifier(seed=0, **BINARY), DPSCDClassifier(seed=0, **BINARY)):
        assert est.fit_intercept and est.clip_rows is None  # auto: project where needed
        est.fit(X, y)
        assert est.score(X, y) > 0.85 and est.privacy_.epsilon <= 1.0
    assert DPSGDClassifier().mechanism == "gaussian"
    for est in (DPSGDRegressor(seed=0), DPSCDRegressor(seed=0)):
        with pytest.warns(UndeclaredBoundWarning, match="no target_bounds"):  # few rows for it
            est.fit(X, t)
        mse = np.mean((est.predict(X) - t) ** 2)
        assert mse < 0.5 * np.var(t), type(est).__name__  # well below predicting the mean


def test_one_ledger_spans_every_private_estimator_and_transformer():
    """Scaler, linear models, k-means and the impact encoder all charge the same budget before
    they read the data; the fit the cap cannot cover is refused and fits nothing."""
    from privlearn.accounting import PrivacyLedger
    from privlearn.cluster import DPKMeans
    from privlearn.encoding import ImpactEncoder
    from privlearn.exceptions import BudgetExceededError
    from privlearn.preprocessing import DPFeatureScaler

    X, y, _ = _data(1000)
    ledger = PrivacyLedger(epsilon_cap=2.0, delta_cap=1e-5)
    DPFeatureScaler(epsilon=0.25, bounds=(-1.0, 1.0), seed=0, ledger=ledger).fit(X)
    DPSGDClassifier(epsilon=0.5, seed=0, ledger=ledger, **BINARY).fit(X, y)
    DPKMeans(n_clusters=2, epsilon=0.5, radius=1.0, seed=0, ledger=ledger, method="maxcover").fit(X)
    cats = np.random.default_rng(0).integers(0, 5, size=(1000, 1))
    enc = ImpactEncoder(mode="laplace", epsilon=0.5, categories=[np.arange(5)], seed=0, **BINARY)
    enc.set_params(ledger=ledger).fit(cats, y)
    assert [e.label for e in ledger.entries] == [
        "DPFeatureScaler.fit", "DPSGDClassifier.fit", "DPKMeans.fit", "ImpactEncoder.fit",
    ]  # fmt: skip
    assert ledger.spent.epsilon == pytest.approx(1.75)
    refused = DPSCDClassifier(epsilon=0.5, seed=0, ledger=ledger, **BINARY)
    with pytest.raises(BudgetExceededError):
        refused.fit(X, y)
    assert not hasattr(refused, "coef_") and len(ledger) == 4


@pytest.mark.parametrize(
    "make",
    [lambda: DPSGDClassifier(seed=0, epochs=2), lambda: DPSCDClassifier(seed=0, epochs=2)],
    ids=["dpsgd-default-multinomial", "dpscd-default-ovr"],
)
def test_default_classifiers_pass_sklearn_checks_with_multiclass(make):
    from sklearn.utils.estimator_checks import check_estimator

    assert make().__sklearn_tags__().classifier_tags.multi_class
    outcome: dict[str, list] = {"failed": [], "skipped": []}

    def record(estimator, check_name, exception, status, *_args, **_kwargs):
        if status in outcome:
            outcome[status].append((check_name, exception))

    # the checks draw their own labels (no classes= to declare): each private fit reads them
    with pytest.warns(PrivacyLeakWarning, match="read the label set from the private labels"):
        check_estimator(make(), on_skip=None, on_fail=None, callback=record)
    assert not outcome["failed"], outcome["failed"]
    # the one skip: the array API check needs SCIPY_ARRAY_API=1
    assert {name for name, _ in outcome["skipped"]} <= {"check_array_api_input"}, outcome


def test_clip_rows_auto_projects_only_where_the_proof_needs_it():
    from privlearn.linear._base import RowRule

    assert DPSGDClassifier()._clip_rows(RowRule(1.0, checked=False)) is False  # Gaussian
    assert DPSGDClassifier(mechanism="l2-laplace")._clip_rows(RowRule(1.0, checked=True))
    assert DPSCDClassifier()._clip_rows(RowRule(1.0, checked=True))
    with pytest.raises(TypeError, match="clip_rows must be a bool"):
        DPSCDClassifier(clip_rows="yes")._clip_rows(RowRule())
    X, y, _ = _data(300)
    X[0] *= 5.0  # a row of norm > 1: the Gaussian fit trains on it as it is
    kw = dict(epsilon=INF, clip=0.0, epochs=1, seed=0)
    auto = DPSGDClassifier(**kw).fit(X, y)
    projected = DPSGDClassifier(clip_rows=True, **kw).fit(X, y)
    assert not np.allclose(auto.coef_, projected.coef_)  # the auto fit saw the long row
