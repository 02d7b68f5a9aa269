"""DP-SGD: ``sgd_train`` (core vs numpy reference), the estimators ``DPSGDClassifier`` /
``DPSGDRegressor``, their privacy accounting, audits and input validation.

Oracles: with privacy off (``epsilon = inf``) the estimators reach scikit-learn's optimum of
the same objective, ``(alpha/2)||w||^2 + (1/n) sum_i loss``: LogisticRegression and LinearSVC
with ``C = 1 / (n alpha)``, Ridge with ``alpha_ridge = n alpha`` (Ridge minimises
``||y - Xw||^2 + a||w||^2``, twice ``n`` times ours when ``a = n alpha``).

The privacy audits use fixed seeds (deterministic); for seeds chosen at random a correct
mechanism fails a pure-DP audit with probability at most ``2 alpha = 2e-6`` and a GDP audit
with probability at most ``alpha = 1e-6`` (see :mod:`privlearn.audit`).
"""

from __future__ import annotations

import contextlib
import math
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import ndtr
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.svm import LinearSVC

from privlearn import audit as A
from privlearn._losses import objective
from privlearn.accounting import (
    DEFAULT_DELTA,
    DisjointBatches,
    GaussianEvent,
    PoissonSampled,
    PureDPEvent,
    SampledWithoutReplacement,
    SelfComposed,
    calibrate_noise,
    epsilon_for_sigma,
    epsilon_of_noise,
)
from privlearn.accounting.pld import CALIBRATION_INTERVAL, epsilon_for_sigma_pld
from privlearn.exceptions import PrivacyLeakWarning, UndeclaredBoundWarning
from privlearn.linear import DPSGDClassifier as _DPSGDClassifier
from privlearn.linear import DPSGDPrivacy, sgd_train
from privlearn.linear import DPSGDRegressor as _DPSGDRegressor
from privlearn.random import key_from_seed
from privlearn.reference.linear import sgd_train as sgd_train_ref

# This module tests the papers' mechanisms in their original configuration: Song et al.'s
# l2-laplace update with batch 10, one pass, no intercept, rows checked (not projected). The
# estimators' defaults are chosen by experiment instead (bench/python/bench_defaults.py) and are
# tested in tests/test_linear_edges.py; here the original settings are pinned.
_PAPER_SGD = dict(
    batch_size=10, epochs=1, learning_rate="inv_sqrt", fit_intercept=False, diagnostics=False
)


def DPSGDClassifier(**kw):  # noqa: N802 - stands for the class with the paper's settings
    """The label set {-1, +1} of this module's data is declared public (``classes``); the tests
    of other labels, or of the label set read from y, pass their own ``classes``."""
    return _DPSGDClassifier(
        **{**_PAPER_SGD, "mechanism": "l2-laplace", "clip_rows": False, "classes": (-1, 1), **kw}
    )


def DPSGDRegressor(**kw):  # noqa: N802
    return _DPSGDRegressor(**{**_PAPER_SGD, **kw})


INF = float("inf")
RTOL = 1e-10
ATOL = 1e-12
AUDIT_ALPHA = 1e-6


def _data(n: int = 120, d: int = 6, seed: int = 0, density: float | None = None):
    """Rows with norm in [0.2, 1] (Song et al.'s condition), labels in {-1, +1}, and a target."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if density is not None:
        X = X * (rng.random((n, d)) < density)
        X[np.linalg.norm(X, axis=1) == 0, 0] = 1.0
    X = X / np.linalg.norm(X, axis=1, keepdims=True) * rng.uniform(0.2, 1.0, size=(n, 1))
    w = rng.normal(size=d)
    y = np.where(X @ w + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    t = X @ w + 0.1 * rng.normal(size=n)
    return X, y, t


# ---- sgd_train: core vs numpy reference ------------------------------------------------------
SGD_CASES = {
    "l2-laplace": dict(mechanism="l2-laplace", sampling="disjoint", epsilon=1.0, radius=50.0),
    "l2-laplace-clip": dict(mechanism="l2-laplace", sampling="disjoint", epsilon=0.5, clip=0.3),
    "gaussian-poisson": dict(mechanism="gaussian", sampling="poisson", sigma=1.1, clip=0.5),
    "gaussian-fixed": dict(mechanism="gaussian", sampling="fixed", sigma=0.7, clip=1.0),
    "none-poisson": dict(mechanism="none", sampling="poisson"),
}


@pytest.mark.parametrize("n_threads", [1, 2, 4])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("case", sorted(SGD_CASES))
def test_sgd_train_core_matches_reference(case, sparse, n_threads):
    X, y, t = _data(n=90, d=7, seed=3, density=0.5 if sparse else None)
    Xin = sp.csr_matrix(X) if sparse else X
    loss = "squared" if case.startswith("gaussian-fixed") else "log_loss"
    target = t if loss == "squared" else y
    kw = dict(
        SGD_CASES[case],
        loss=loss,
        batch_size=8,
        epochs=2,
        learning_rate="inv_sqrt",
        eta0=0.5,
        alpha=1e-2,
        record_every=3,
    )
    for seed in (0, 1):
        key = key_from_seed(seed)
        a = sgd_train(Xin, target, key=key, n_threads=n_threads, **kw)
        b = sgd_train_ref(Xin, target, key=key, **kw)
        np.testing.assert_allclose(a.coef, b.coef, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(a.path, b.path, rtol=RTOL, atol=ATOL)
        np.testing.assert_array_equal(a.path_steps, b.path_steps)
        assert a.n_steps == b.n_steps


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("case", ["l2-laplace", "gaussian-poisson", "gaussian-fixed"])
def test_sgd_train_bit_identical_across_threads_large_batch(case, sparse):
    """A batch of 600 rows (> 256) is summed in several blocks: the blocked, ordered reduction
    gives the same bits for any thread count."""
    X, y, _ = _data(n=1500, d=20, seed=5, density=0.3 if sparse else None)
    Xin = sp.csr_matrix(X) if sparse else X
    kw = dict(SGD_CASES[case], loss="hinge", batch_size=600, epochs=2, alpha=1e-3)
    runs = [sgd_train(Xin, y, key=key_from_seed(9), n_threads=k, **kw).coef for k in (1, 2, 4)]
    for other in runs[1:]:
        np.testing.assert_array_equal(runs[0], other)


# ---- estimators: core vs numpy reference ------------------------------------------------------
EST_CASES = {
    "l2-laplace": lambda **kw: DPSGDClassifier(mechanism="l2-laplace", epsilon=1.0, **kw),
    "l2-laplace-hinge-intercept": lambda **kw: DPSGDClassifier(
        loss="hinge",
        epsilon=2.0,
        epsilon_split="per_pass",
        fit_intercept=True,
        clip_rows=True,
        **kw,
    ),
    "gaussian-poisson": lambda **kw: DPSGDClassifier(mechanism="gaussian", epsilon=1.0, **kw),
    "gaussian-fixed": lambda **kw: DPSGDClassifier(
        mechanism="gaussian", sampling="fixed", epsilon=2.0, clip=0.5, **kw
    ),
    "regressor": lambda **kw: DPSGDRegressor(epsilon=1.0, fit_intercept=True, **kw),
}


@pytest.mark.parametrize("n_threads", [1, 2, 4])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("case", sorted(EST_CASES))
def test_estimator_core_matches_reference(case, sparse, n_threads):
    X, y, t = _data(n=100, d=5, seed=11, density=0.6 if sparse else None)
    Xin = sp.csr_matrix(X) if sparse else X
    target = t if case == "regressor" else y
    common = dict(batch_size=7, epochs=2, alpha=1e-2, seed=4, n_threads=n_threads, diagnostics=True)
    # the regressor's target bound is estimated privately (no bound declared), as it warns
    warns = case == "regressor"
    with pytest.warns(UndeclaredBoundWarning) if warns else contextlib.nullcontext():
        core = EST_CASES[case](backend="core", **common).fit(Xin, target)
    with pytest.warns(UndeclaredBoundWarning) if warns else contextlib.nullcontext():
        ref = EST_CASES[case](backend="reference", **common).fit(Xin, target)
    np.testing.assert_allclose(core.coef_, ref.coef_, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(core.intercept_, ref.intercept_, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(
        core.diagnostics_.objective_path, ref.diagnostics_.objective_path, rtol=RTOL
    )
    np.testing.assert_array_equal(
        core.diagnostics_.objective_steps, ref.diagnostics_.objective_steps
    )
    assert core.privacy_ == ref.privacy_
    assert core.n_steps_ == ref.n_steps_


@pytest.mark.parametrize("mechanism", ["l2-laplace", "gaussian"])
def test_estimator_bit_identical_across_threads(mechanism):
    X, y, _ = _data(n=1200, d=10, seed=2)
    fits = [
        DPSGDClassifier(mechanism=mechanism, batch_size=400, epochs=2, seed=3, n_threads=k)
        .fit(X, y)
        .coef_
        for k in (1, 2, 4)
    ]
    for other in fits[1:]:
        np.testing.assert_array_equal(fits[0], other)


def test_dense_and_csr_fits_agree():
    X, y, _ = _data(n=150, d=8, seed=6, density=0.4)
    kw = dict(epsilon=1.0, batch_size=10, epochs=2, seed=1, fit_intercept=True, clip_rows=True)
    a = DPSGDClassifier(**kw).fit(X, y)
    b = DPSGDClassifier(**kw).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(sp.csr_matrix(X)))


# ---- the estimators call the trainer with the noise they account for -------------------------
@pytest.mark.parametrize(
    "split, clip, eps_pass, total, core_clip",
    [
        ("total", 1.0, 0.5 / 3, 0.5, 0.0),
        ("per_pass", 1.0, 0.5, 1.5, 0.0),
        ("total", 0.0, 0.5 / 3, 0.5, 0.0),
        ("total", 0.25, 0.5 / 3, 0.5, 0.25),
    ],
)
def test_l2_laplace_epsilon_split_and_noise(split, clip, eps_pass, total, core_clip):
    X, y, _ = _data(n=60, d=4, seed=8)
    clf = DPSGDClassifier(
        epsilon=0.5, epochs=3, epsilon_split=split, clip=clip, alpha=0.05, seed=12
    ).fit(X, y)
    run = sgd_train(
        X,
        y,
        key=key_from_seed(12),
        mechanism="l2-laplace",
        sampling="disjoint",
        epsilon=eps_pass,
        clip=core_clip,
        radius=1.0 / 0.05,
        alpha=0.05,
        batch_size=10,
        epochs=3,
    )
    np.testing.assert_array_equal(clf.coef_.ravel(), run.coef)
    p = clf.privacy_
    assert p.epsilon == pytest.approx(total, rel=1e-15)
    assert p.delta == 0.0 and p.accountant == "pure" and p.neighboring == "replace_one"
    assert p.epsilon_per_pass == pytest.approx(eps_pass, rel=1e-15) and p.passes == 3
    c = core_clip if core_clip else 1.0
    assert p.clip == c and p.sensitivity == 2 * c
    assert p.noise_scale == pytest.approx(2 * c / eps_pass)
    assert p.statement.events == (SelfComposed(DisjointBatches(PureDPEvent(eps_pass)), 3),)
    assert p.steps == clf.n_steps_ == 3 * 6
    assert "l2-laplace" in str(p) and f"epsilon_split='{split}'" in str(p)


@pytest.mark.parametrize("sampling", ["poisson", "fixed"])
def test_gaussian_accountant_meets_the_target(sampling):
    """privacy_.epsilon is the accountant's epsilon for `steps` compositions of the sampled
    Gaussian event; it meets the target and is within calibrate_sigma's tolerance of it."""
    X, y, _ = _data(n=400, d=5, seed=1)
    target, delta, b, epochs = 1.5, 1e-5, 20, 3
    clf = DPSGDClassifier(
        mechanism="gaussian",
        sampling=sampling,
        epsilon=target,
        delta=delta,
        batch_size=b,
        epochs=epochs,
        clip=0.7,
        seed=0,
        n_samples=400,  # declared public: the schedule uses n itself
    ).fit(X, y)
    p = clf.privacy_
    n, steps, q = 400, math.ceil(epochs * 400 / b), b / 400
    acc_sampling = "poisson" if sampling == "poisson" else "without_replacement"
    # the tightest accountant of the sampler: PLD for Poisson batches, RDP for fixed ones
    sigma_event = calibrate_noise(target, delta, q=q, steps=steps, sampling=acc_sampling, n=n)
    assert p.epsilon <= target
    assert p.epsilon == pytest.approx(target, rel=5e-3)
    if sampling == "poisson":  # calibrate_sigma_pld's tolerance (1e-3) on its search grid
        smaller = sigma_event / (1 + 1e-3)
        eps_smaller = epsilon_for_sigma_pld(
            smaller, delta, q=q, steps=steps, interval=CALIBRATION_INTERVAL
        )
    else:  # calibrate_sigma's tolerance: sigma / (1 + 1e-4) would miss the target
        smaller = sigma_event / (1 + 1e-4)
        eps_smaller = epsilon_for_sigma(
            smaller, delta, q=q, steps=steps, sampling=acc_sampling, n=n
        )
    assert eps_smaller > target
    assert p.steps == clf.n_steps_ == steps
    accountant = "pld" if sampling == "poisson" else "rdp"
    assert p.delta == delta and p.accountant == accountant and p.clip == 0.7
    if sampling == "poisson":
        # add/remove-one: sensitivity C, the trainer's sigma is the event's
        assert p.neighboring == "add_remove" and p.sensitivity == 0.7
        assert p.noise_multiplier == sigma_event
        assert p.statement.events == (
            SelfComposed(PoissonSampled(q, GaussianEvent(sigma_event)), steps),
        )
    else:
        # replace-one: the summed clipped gradients move by up to 2C, so the trainer adds
        # twice the event's noise multiplier (noise std / sensitivity)
        assert p.neighboring == "replace_one" and p.sensitivity == 1.4
        assert p.noise_multiplier == 2 * sigma_event
        event = SampledWithoutReplacement(n, b, GaussianEvent(sigma_event))
        assert p.statement.events == (SelfComposed(event, steps),)
    assert p.noise_scale == pytest.approx(p.noise_multiplier * 0.7)
    run = sgd_train(
        X,
        y,
        key=key_from_seed(0),
        mechanism="gaussian",
        sampling=sampling,
        sigma=p.noise_multiplier,
        clip=0.7,
        batch_size=b,
        epochs=epochs,
    )
    np.testing.assert_array_equal(clf.coef_.ravel(), run.coef)


@pytest.mark.parametrize("sampling", ["poisson", "fixed"])
def test_gaussian_noise_multiplier_reports_epsilon(sampling):
    X, _, t = _data(n=300, d=4, seed=2)
    reg = DPSGDRegressor(
        epsilon=None,
        noise_multiplier=1.3,
        sampling=sampling,
        batch_size=15,
        epochs=2,
        seed=0,
        n_samples=300,
        target_bounds=(-100.0, 100.0),  # declared: the statement is the training part only
    ).fit(X, t)
    p = reg.privacy_
    acc_sampling = "poisson" if sampling == "poisson" else "without_replacement"
    sigma_event = 1.3 if sampling == "poisson" else 0.65
    expected = epsilon_of_noise(
        sigma_event, DEFAULT_DELTA, q=15 / 300, steps=40, sampling=acc_sampling, n=300
    )
    assert p.epsilon == pytest.approx(expected, rel=1e-9)  # + the lattice slack (~1e-13)
    assert p.delta == DEFAULT_DELTA == 1e-6  # the documented default, not a function of n
    assert p.noise_multiplier == 1.3


@pytest.mark.parametrize("mechanism", ["l2-laplace", "gaussian"])
def test_infinite_epsilon_is_plain_sgd(mechanism):
    X, y, _ = _data(n=80, d=3, seed=4)
    clf = DPSGDClassifier(mechanism=mechanism, epsilon=INF, epochs=2, alpha=0.1, seed=5).fit(X, y)
    p = clf.privacy_
    assert not p.private and p.mechanism == "none" and p.statement is None
    assert math.isinf(p.epsilon) and "not private" in str(p)
    sampling = "disjoint" if mechanism == "l2-laplace" else "poisson"
    run = sgd_train(
        X,
        y,
        key=key_from_seed(5),
        mechanism="none",
        sampling=sampling,
        alpha=0.1,
        epochs=2,
        clip=1.0 if mechanism == "gaussian" else 0.0,
        radius=10.0 if mechanism == "l2-laplace" else 0.0,
    )
    np.testing.assert_array_equal(clf.coef_.ravel(), run.coef)


def test_objective_path_is_the_training_objective():
    X, y, _ = _data(n=500, d=4, seed=7)
    clf = DPSGDClassifier(
        epsilon=2.0, batch_size=5, epochs=3, alpha=0.01, seed=1, diagnostics=True
    ).fit(X, y)
    assert clf.n_steps_ == 300
    assert 100 <= clf.diagnostics_.objective_path.size <= 201
    steps = clf.diagnostics_.objective_steps
    assert steps[-1] == clf.n_steps_ and np.all(np.diff(steps) > 0)
    last = objective(X, y, clf.coef_.ravel(), "log_loss", 0.01)[0]
    assert clf.diagnostics_.objective_path[-1] == pytest.approx(last, rel=1e-12)
    few = clone(clf).set_params(record_every=100).fit(X, y)
    np.testing.assert_array_equal(few.diagnostics_.objective_steps, [100, 200, 300])


# ---- oracles: privacy off, same objective as scikit-learn -----------------------------------
def _oracle_data(n: int = 1000, d: int = 5):
    X, y, t = _data(n=n, d=d, seed=21)
    return X, y, t


@pytest.mark.parametrize("schedule", ["inv_lambda_t", "constant"])
def test_oracle_logistic_regression(schedule):
    X, y, _ = _oracle_data()
    n, alpha = X.shape[0], 1e-2
    lr = LogisticRegression(C=1 / (n * alpha), fit_intercept=False, tol=1e-12, max_iter=10_000)
    f_star = objective(X, y, lr.fit(X, y).coef_.ravel(), "log_loss", alpha)[0]
    kw = {"constant": dict(eta0=0.5, batch_size=100), "inv_lambda_t": dict(batch_size=50)}
    clf = DPSGDClassifier(
        epsilon=INF,
        alpha=alpha,
        learning_rate=schedule,
        epochs=100,
        seed=0,
        n_threads=1,
        **kw[schedule],
    ).fit(X, y)
    gap = objective(X, y, clf.coef_.ravel(), "log_loss", alpha)[0] - f_star
    assert -1e-9 < gap < 1e-3
    assert np.mean(clf.predict(X) == lr.predict(X)) > 0.99


def test_oracle_linear_svc_hinge():
    X, y, _ = _oracle_data()
    n, alpha = X.shape[0], 1e-2
    svc = LinearSVC(
        loss="hinge", C=1 / (n * alpha), fit_intercept=False, dual=True, tol=1e-10,
        max_iter=200_000,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # liblinear may stop at max_iter; its objective is used
        svc.fit(X, y)
    f_svc = objective(X, y, svc.coef_.ravel(), "hinge", alpha)[0]
    clf = DPSGDClassifier(
        loss="hinge", epsilon=INF, alpha=alpha, learning_rate="inv_lambda_t", batch_size=50,
        epochs=200, seed=0, n_threads=1,
    ).fit(X, y)  # fmt: skip
    f = objective(X, y, clf.coef_.ravel(), "hinge", alpha)[0]
    assert abs(f - f_svc) < 1e-3


def test_oracle_logistic_with_intercept_column():
    """fit_intercept appends a column of value intercept_scaling whose weight is regularised:
    the same problem as LogisticRegression without intercept on the augmented matrix."""
    X, y, _ = _oracle_data()
    X = X + 0.2  # an offset the intercept must absorb (the Gaussian mechanism has no row bound)
    n, alpha, s = X.shape[0], 1e-2, 0.8
    Xa = np.hstack([X, np.full((n, 1), s)])
    lr = LogisticRegression(C=1 / (n * alpha), fit_intercept=False, tol=1e-12, max_iter=10_000)
    w_star = lr.fit(Xa, y).coef_.ravel()
    clf = DPSGDClassifier(
        mechanism="gaussian", epsilon=INF, clip=0.0, alpha=alpha, learning_rate="inv_lambda_t",
        batch_size=50, epochs=100, fit_intercept=True, intercept_scaling=s, seed=0, n_threads=1,
        diagnostics=True,
    ).fit(X, y)  # fmt: skip
    w = np.append(clf.coef_.ravel(), clf.intercept_[0] / s)
    gap = objective(Xa, y, w, "log_loss", alpha)[0] - objective(Xa, y, w_star, "log_loss", alpha)[0]
    assert -1e-9 < gap < 1e-3
    np.testing.assert_allclose(clf.decision_function(X), Xa @ w, rtol=1e-12)
    assert clf.diagnostics_.objective_path[-1] == pytest.approx(
        objective(Xa, y, w, "log_loss", alpha)[0]
    )


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_oracle_ridge(fit_intercept):
    X, _, t = _oracle_data()
    n, alpha = X.shape[0], 1e-2
    Xa = np.hstack([X, np.ones((n, 1))]) if fit_intercept else X
    ridge = Ridge(alpha=n * alpha, fit_intercept=False, tol=1e-12).fit(Xa, t + 0.5)
    reg = DPSGDRegressor(
        epsilon=INF, clip=0.0, alpha=alpha, learning_rate="inv_sqrt", eta0=2.0, batch_size=50,
        epochs=100, fit_intercept=fit_intercept, seed=0, n_threads=1,
    ).fit(X, t + 0.5)  # fmt: skip
    w = np.append(reg.coef_, reg.intercept_) if fit_intercept else reg.coef_
    gap = (
        objective(Xa, t + 0.5, w, "squared", alpha)[0]
        - objective(Xa, t + 0.5, ridge.coef_, "squared", alpha)[0]
    )
    assert -1e-9 < gap < 1e-3


# ---- privacy audits ---------------------------------------------------------------------------
# One Song update, d = 1, b = n = 3, w0 = 0, eta = 1, hinge loss: every example has y x_i < 1 at
# w = 0, so its gradient is -y_i x_i and the released iterate is w1 = -(sum_i g_i + Z) / 3 (the
# projection radius 1/alpha = 1e4 is never reached). D and D' differ in the label of row 0:
# sum_i g_i = -1.8 on D and 0.2 on D' (a change of 2 = the sensitivity 2C), so w1 is centred at
# 0.6 on D and at -1/15 on D'. Event fixed from this form: w1 > 0.6 (the centre of D's output),
# where the privacy loss is largest: P_D = 1/2 and P_D' = exp(-epsilon) / 2 exactly.
AUDIT_X = np.array([[1.0], [0.5], [-0.3]])
AUDIT_Y0 = np.array([1, 1, -1])
AUDIT_Y1 = np.array([-1, 1, -1])
#: the noiseless w1 on D and on D'
AUDIT_CENTRE = {0: 1.8 / 3, 1: -0.2 / 3}
#: Draws per side of each Song audit: the fewest for which a mechanism run at twice the claimed
#: epsilon is refuted with probability >= 0.9997 (``A.pure_dp_audit_power``, asserted below).
SONG_N = {0.5: 2000, 1.0: 1000}
#: Draws per side of the GDP audits below: half the noise is refuted with probability
#: >= 0.99999 (``A.gaussian_dp_audit_power``, asserted in each test).
GDP_N = 500
#: The least power to catch a 2x violation that every audit of this module must have.
MIN_POWER = 0.9997
#: Seeds per side on which a derived broken twin is checked against real fits.
TWIN_CHECK = 25
# The audits fit with classes=None (the label set read from y, as fit warns): the declared
# label set costs about 0.3 ms more per fit, a third of these tiny fits.


def _song_outputs(epsilon: float, y: np.ndarray, seeds: range) -> np.ndarray:
    clf = DPSGDClassifier(
        loss="hinge", epsilon=epsilon, batch_size=3, learning_rate="constant", eta0=1.0,
        alpha=1e-4, classes=None,
    )  # fmt: skip
    with pytest.warns(PrivacyLeakWarning, match="label set"):  # classes not declared
        return np.array([clf.set_params(seed=s).fit(AUDIT_X, y).coef_[0, 0] for s in seeds])


@pytest.mark.parametrize("epsilon", [0.5, 1.0])
def test_audit_song_update(epsilon):
    """Audit Song et al.'s update at its claimed epsilon with ``SONG_N[epsilon]`` fits per side,
    and its broken twin (the same update run at ``2 epsilon``) claiming epsilon.

    Power: the twin's event probabilities are exactly ``1/2`` on D and ``exp(-2 epsilon) / 2``
    on D', so the audit refutes it with probability ``A.pure_dp_audit_power(...)`` = 0.99980
    (epsilon 0.5, 2,000 fits per side; 1,000 give only 0.67) and 0.99980 (epsilon 1, 1,000 fits
    per side): at the expected counts the Clopper-Pearson lower bound is 0.66 > 0.5 and
    1.30 > 1. A correct
    mechanism fails with probability at most ``2 AUDIT_ALPHA``.

    The twin costs no fits of its own: its noise is exactly half the audited one (the radius is
    ``Gamma(1, 2 / epsilon)``, the same uniform words for the same seed), so its output is
    ``c + (w1 - c) / 2`` for the centre ``c``; that identity is checked against real fits at
    ``2 epsilon`` on ``TWIN_CHECK`` seeds per side."""
    n = SONG_N[epsilon]
    assert A.pure_dp_audit_power(0.5, math.exp(-2 * epsilon) / 2, n, n, epsilon) >= MIN_POWER
    with pytest.warns(PrivacyLeakWarning, match="label set"):
        claim = DPSGDClassifier(epsilon=epsilon, batch_size=3, classes=None)
        claim = claim.fit(AUDIT_X, AUDIT_Y0).privacy_
    assert claim.epsilon == epsilon
    event = A.ThresholdEvent(0.6)
    o0 = _song_outputs(epsilon, AUDIT_Y0, range(0, n))
    o1 = _song_outputs(epsilon, AUDIT_Y1, range(n, 2 * n))
    assert abs(np.median(o0) - 0.6) < 0.1  # the event is where the form says it is
    result = A.audit_pure_dp(o0, o1, event, claim.epsilon, alpha=AUDIT_ALPHA)
    assert result.passed, str(result)
    # broken: the mechanism gets 2 epsilon (half the noise scale) while epsilon is claimed
    b0 = AUDIT_CENTRE[0] + (o0 - AUDIT_CENTRE[0]) / 2
    b1 = AUDIT_CENTRE[1] + (o1 - AUDIT_CENTRE[1]) / 2
    for side, (y, b, first) in enumerate([(AUDIT_Y0, b0, 0), (AUDIT_Y1, b1, n)]):
        real = _song_outputs(2 * epsilon, y, range(first, first + TWIN_CHECK))
        np.testing.assert_allclose(b[:TWIN_CHECK], real, rtol=1e-12, atol=1e-14, err_msg=side)
    broken = A.audit_pure_dp(b0, b1, event, epsilon, alpha=AUDIT_ALPHA)
    assert not broken.passed, str(broken)
    assert broken.epsilon_lower > epsilon


def test_audit_gaussian_fixed_batch_uses_replace_one_sensitivity():
    """One Gaussian step on a fixed batch of all n = 3 rows (q = 1): replacing row 0 moves the
    summed clipped gradient by 2C. The accountant's event is GaussianEvent(sigma / 2), i.e.
    mu-GDP with mu = 2 / sigma: audit that claim on u = -3 w1 - sum_D g (centred at 0 on D and
    at 2 on D'), rescaled by 1/2 so that the claimed sensitivity is 1.

    Power: the broken twin (half the noise, true mu = 2 mu_claim = 2) has error rates
    ``Phi(-1)`` at the threshold 1/2, so ``GDP_N = 500`` fits per side refute it with
    probability ``A.gaussian_dp_audit_power(...)`` = 0.99999 (GDP lower bound 1.35 at the
    expected counts against the claim 1; 1.67 with 2,000 fits per side, the former size)."""

    def outputs(sigma: float, y: np.ndarray, seeds: range) -> np.ndarray:
        clf = DPSGDClassifier(
            mechanism="gaussian", sampling="fixed", epsilon=None, noise_multiplier=sigma,
            loss="hinge", batch_size=3, learning_rate="constant", alpha=0.0, clip=1.0,
            classes=None,
        )  # fmt: skip
        with pytest.warns(PrivacyLeakWarning, match="label set"):
            w1 = np.array([clf.set_params(seed=s).fit(AUDIT_X, y).coef_[0, 0] for s in seeds])
        return (-3.0 * w1 + 1.8) / 2.0

    sigma, n = 2.0, GDP_N
    with pytest.warns(PrivacyLeakWarning, match="label set"):
        clf = DPSGDClassifier(
            mechanism="gaussian", sampling="fixed", epsilon=None, noise_multiplier=sigma,
            batch_size=3, classes=None,
        ).fit(AUDIT_X, AUDIT_Y0)  # fmt: skip
    (event,) = clf.privacy_.statement.events
    sigma_event = event.event.noise_multiplier
    assert sigma_event == sigma / 2
    mu = 1.0 / sigma_event
    assert A.gaussian_dp_audit_power(ndtr(-mu), ndtr(-mu), n, n, mu) >= MIN_POWER
    o0 = outputs(sigma, AUDIT_Y0, range(n))
    o1 = outputs(sigma, AUDIT_Y1, range(n, 2 * n))
    assert abs(np.mean(o1) - 1.0) < 5 * sigma_event / math.sqrt(n)
    result = A.audit_gaussian_dp(o0, o1, 1.0, sigma_event, alpha=AUDIT_ALPHA)
    assert result.passed, str(result)
    # broken: half the noise (the add/remove sensitivity C used for a replace-one sampler)
    b0 = outputs(sigma / 2, AUDIT_Y0, range(10**6, 10**6 + n))
    b1 = outputs(sigma / 2, AUDIT_Y1, range(2 * 10**6, 2 * 10**6 + n))
    broken = A.audit_gaussian_dp(b0, b1, 1.0, sigma_event, alpha=AUDIT_ALPHA)
    assert not broken.passed, str(broken)


# ---- labels, prediction, sklearn API ----------------------------------------------------------
def test_any_two_labels_and_prediction():
    X, y, _ = _data(n=200, d=4, seed=9)
    labels = np.where(y > 0, "spam", "ham")
    clf = DPSGDClassifier(epsilon=INF, epochs=5, alpha=1e-2, seed=0, classes=["ham", "spam"])
    clf.fit(X, labels)
    assert clf.classes_.tolist() == ["ham", "spam"]
    assert clf.coef_.shape == (1, 4) and clf.intercept_.shape == (1,)
    assert clf.n_features_in_ == 4
    ref = DPSGDClassifier(epsilon=INF, epochs=5, alpha=1e-2, seed=0).fit(X, y)
    np.testing.assert_array_equal(clf.coef_, ref.coef_)  # classes_[1] is +1
    dec = clf.decision_function(X)
    np.testing.assert_array_equal(clf.predict(X), np.where(dec > 0, "spam", "ham"))
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-dec)))
    assert clf.score(X, labels) > 0.8
    hinge = DPSGDClassifier(loss="hinge", epsilon=INF, seed=0, classes=["ham", "spam"])
    hinge.fit(X, labels)
    assert not hasattr(hinge, "predict_proba")
    with pytest.raises(AttributeError, match="predict_proba"):
        hinge.predict_proba(X)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :3])


def test_seed_reproducibility():
    X, y, _ = _data(n=100, d=3, seed=1)
    a = DPSGDClassifier(seed=7).fit(X, y).coef_
    b = DPSGDClassifier(seed=7).fit(X, y).coef_
    c = DPSGDClassifier(seed=8).fit(X, y).coef_
    d = DPSGDClassifier().fit(X, y).coef_  # key from the operating system
    e = DPSGDClassifier().fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c) and not np.array_equal(d, e)


def test_clip_rows_projects_onto_the_unit_ball():
    X, y, _ = _data(n=60, d=3, seed=3)
    X[5] *= 4.0
    X[17] *= 2.5
    projected = X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    a = DPSGDClassifier(clip_rows=True, seed=2).fit(X, y)
    b = DPSGDClassifier(seed=2).fit(projected, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    # with an intercept column s the feature part is projected onto sqrt(1 - s^2)
    s = 0.6
    c = DPSGDClassifier(clip_rows=True, fit_intercept=True, intercept_scaling=s, seed=2)
    c.fit(X, y)
    r = math.sqrt(1 - s**2)
    inner = X * np.minimum(1.0, r / np.linalg.norm(X, axis=1, keepdims=True))
    d = DPSGDClassifier(fit_intercept=True, intercept_scaling=s, seed=2).fit(inner, y)
    np.testing.assert_allclose(c.coef_, d.coef_, rtol=1e-12)
    np.testing.assert_allclose(c.intercept_, d.intercept_, rtol=1e-12)


def test_get_set_params_and_clone():
    clf = DPSGDClassifier(mechanism="gaussian", epsilon=2.0, batch_size=32, seed=3)
    params = clf.get_params()
    assert params["mechanism"] == "gaussian" and params["batch_size"] == 32
    assert set(params) >= {"epsilon", "delta", "noise_multiplier", "epsilon_split", "clip_rows"}
    clf.set_params(epochs=4, loss="hinge")
    assert clf.epochs == 4 and clf.loss == "hinge"
    twin = clone(clf)
    assert twin.get_params() == clf.get_params() and twin is not clf
    reg = DPSGDRegressor(clip=0.5)
    assert clone(reg).get_params()["clip"] == 0.5
    X, y, _ = _data(n=80, d=3)
    fitted = DPSGDClassifier(seed=1).fit(X, y)
    assert isinstance(fitted.privacy_, DPSGDPrivacy)
    assert not hasattr(clone(fitted), "coef_")


@pytest.mark.parametrize(
    "make",
    [
        lambda: DPSGDClassifier(clip_rows=True, seed=0, classes=None),
        lambda: DPSGDClassifier(mechanism="gaussian", epsilon=INF, seed=0, epochs=5, classes=None),
        # check_regressors_train fits 200 rows at epsilon 1 and wants R^2 > 0.5: its target is
        # standardised, so (-5, 5) is a public bound; a private one cannot be found on 200 rows
        # with 10% of epsilon 1 (issue 22, docs/user_guide/dpsgd.rst)
        lambda: DPSGDRegressor(seed=0, target_bounds=(-5.0, 5.0)),
    ],
)
def test_sklearn_check_estimator(make):
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(make())


# ---- bad input ------------------------------------------------------------------------------
def test_row_norm_above_one_is_rejected():
    X, y, _ = _data(n=30, d=3, seed=0)
    X[3] *= 3.0 / np.linalg.norm(X[3])
    X[7] *= 2.0 / np.linalg.norm(X[7])
    msg = r"row 3 of X has L2 norm > 1 \(the first such row; its norm .*clip_rows=True"
    with pytest.raises(ValueError, match=msg):
        DPSGDClassifier().fit(X, y)
    with pytest.raises(ValueError, match=msg):
        DPSGDClassifier().fit(sp.csr_matrix(X), y)
    with pytest.raises(ValueError, match="row 3"):
        DPSGDClassifier(epsilon=INF).fit(X, y)  # the same code path
    DPSGDClassifier(clip_rows=True).fit(X, y)
    DPSGDClassifier(mechanism="gaussian").fit(X, y)  # clipping bounds the gradient instead
    # with an intercept the augmented row [x, s] must have norm <= 1
    Z = np.array([[0.9, 0.0], [0.0, 0.5], [0.3, 0.3]])
    with pytest.raises(ValueError, match=r"row 0 of X has L2 norm > sqrt\(1 - intercept"):
        DPSGDClassifier(fit_intercept=True, batch_size=1, classes=(0, 1)).fit(Z, [0, 1, 1])
    with pytest.raises(ValueError, match="intercept_scaling must be < 1"):
        DPSGDClassifier(fit_intercept=True, intercept_scaling=1.0).fit(X, y)


def test_bad_labels():
    X, y, _ = _data(n=30, d=3)
    with pytest.raises(ValueError, match="at least 2 classes; y holds 1 class .the labels read"):
        DPSGDClassifier(classes=None).fit(X, np.ones(30))
    with pytest.raises(ValueError, match="more than 2 classes need the multinomial model"):
        with pytest.warns(PrivacyLeakWarning, match="read the label set"):
            DPSGDClassifier(classes=None).fit(X, np.arange(30) % 3)
    with pytest.raises(ValueError, match="Unknown label type"):
        DPSGDClassifier(classes=None).fit(X, np.linspace(0, 1, 30))
    with pytest.raises(ValueError, match="NaN"):
        DPSGDClassifier(classes=None).fit(X, np.where(y > 0, 1.0, np.nan))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        DPSGDClassifier(classes=None).fit(X, y[:-1])


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input(bad):
    X, y, t = _data(n=30, d=3)
    X[4, 1] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        DPSGDClassifier().fit(X, y)
    with pytest.raises(ValueError, match="NaN|infinity"):
        DPSGDClassifier().fit(sp.csr_matrix(X), y)
    X[4, 1] = 0.0
    t[2] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        DPSGDRegressor().fit(X, t)


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(epsilon=0.0), "epsilon must be > 0"),
        (dict(epsilon=-1.0), "epsilon must be > 0"),
        (dict(epsilon=np.nan), "epsilon must be > 0"),
        (dict(mechanism="gaussian", delta=0.0), re.escape("delta must lie in (0, 1)")),
        (dict(mechanism="gaussian", delta=1.0), re.escape("delta must lie in (0, 1)")),
        (dict(mechanism="gaussian", delta=-1e-5), re.escape("delta must lie in (0, 1)")),
        (dict(delta=1e-5), "pure epsilon-DP: delta must be None or 0"),
        (dict(batch_size=31), re.escape("batch_size (31) must be <= n_samples = 30")),
        (dict(mechanism="laplace"), "mechanism must be one of"),
        (dict(loss="squared"), "loss must be one of"),
        (dict(sampling="shuffle"), "sampling must be one of"),
        (dict(backend="gpu"), "backend must be one of"),
        (dict(epsilon_split="half"), "epsilon_split must be one of"),
        (dict(learning_rate="optimal"), "learning_rate must be one of"),
        (dict(sampling="poisson"), "does not match mechanism='l2-laplace'"),
        (dict(mechanism="gaussian", sampling="disjoint"), "does not match mechanism='gaussian'"),
        (dict(noise_multiplier=1.0, epsilon=None), "noise_multiplier is a parameter of the gau"),
        (dict(mechanism="gaussian", noise_multiplier=1.0), "not both: set epsilon=None"),
        (dict(mechanism="gaussian", epsilon=None), "epsilon is None: give epsilon"),
        (dict(mechanism="gaussian", epsilon=None, noise_multiplier=0.0), "noise_multiplier"),
        (dict(mechanism="gaussian", clip=0.0), "needs clip > 0"),
        (dict(clip=-1.0), "clip must be 0 \\(no clipping\\) or in"),
        (dict(mechanism="gaussian", clip=math.inf), "clip must be 0 \\(no clipping\\) or in"),
        (dict(alpha=0.0), "alpha must be in"),
        (dict(alpha=-1.0), "alpha must be in"),
        (dict(alpha=1e300), "alpha must be in"),
        (dict(mechanism="gaussian", alpha=1e-320), "alpha must be 0 or in"),
        (dict(eta0=0.0), "eta0 must lie in"),
        (dict(eta0=1e308), "eta0 must lie in"),
        (dict(epsilon=1e126), "epsilon must be <="),
        (dict(mechanism="gaussian", epsilon=None, noise_multiplier=1e-300), "noise_multiplier"),
        (dict(mechanism="gaussian", epsilon=None, noise_multiplier=1e300), "noise_multiplier"),
        (dict(mechanism="gaussian", n_samples=31), "n_samples=31 was declared"),
        (dict(epochs=0), "epochs must lie in"),
        (dict(batch_size=0), "batch_size must lie in"),
        (dict(record_every=0), "record_every must lie in"),
    ],
)
def test_bad_parameters_raise_value_error(params, match):
    X, y, _ = _data(n=30, d=3)
    with pytest.raises(ValueError, match=match):
        DPSGDClassifier(**params).fit(X, y)


@pytest.mark.parametrize(
    "params",
    [
        dict(batch_size=2.5),
        dict(epochs="3"),
        dict(epsilon="1"),
        dict(fit_intercept="yes"),
        dict(clip_rows=1),
        dict(seed=1.5),
    ],
)
def test_bad_parameter_types_raise_type_error(params):
    X, y, _ = _data(n=30, d=3)
    with pytest.raises(TypeError):
        DPSGDClassifier(**params).fit(X, y)


def test_regressor_rejects_disjoint_sampling_and_unclipped_private_fit():
    X, _, t = _data(n=30, d=3)
    with pytest.raises(ValueError, match="does not match mechanism='gaussian'"):
        DPSGDRegressor(sampling="disjoint").fit(X, t)
    with pytest.raises(ValueError, match="needs clip > 0"):
        DPSGDRegressor(clip=0.0).fit(X, t)
    with pytest.raises(ValueError, match="2-D|2D"):
        DPSGDRegressor().fit(X[:, 0], t)


@pytest.mark.parametrize("d", [7, 4097], ids=["gathered-rows", "wide-rows-in-place"])
def test_dense_batch_chunks_match_reference_bit_for_bit(d):
    """The dense batch kernel (chunks of 16 rows; rows of <= 4096 columns copied into a buffer
    first, wider ones read in place) gives the numpy twin's coefficients bit for bit, with
    batches spanning several chunks, rows of mixed norms (some clipped) and for 1 and 2
    threads."""
    from privlearn.reference.linear import sgd_train as sgd_train_ref

    rng = np.random.default_rng(d)
    n = 120
    X = rng.normal(size=(n, d)) * rng.uniform(0.05, 3.0, size=(n, 1)) / math.sqrt(d)
    y = np.where(rng.normal(size=n) > 0, 1.0, -1.0)
    kw = dict(
        key=bytes(range(32)), mechanism="gaussian", sampling="poisson", batch_size=45, steps=5,
        sigma=0.9, clip=0.7, eta0=0.2, learning_rate="constant",
    )  # fmt: skip
    ref = sgd_train_ref(X, y, **kw).coef
    for threads in (1, 2):
        np.testing.assert_array_equal(sgd_train(X, y, n_threads=threads, **kw).coef, ref)
