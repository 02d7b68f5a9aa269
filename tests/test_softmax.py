"""Softmax (multinomial logistic) regression by Gaussian DP-SGD: ``softmax_sgd_train`` (core vs
numpy reference, thread independence), the non-private optimum against scikit-learn, the K = 2
reduction to the binary trainer, overflow-safe clipping, the noise addresses and bad input.

Objective: ``(alpha/2)||W||_F^2 + (1/n) sum_i -log softmax(x_i^T W)_{y_i}``, the same as
scikit-learn's multinomial ``LogisticRegression(C = 1 / (n alpha), fit_intercept=False)``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression

from privlearn import _core
from privlearn._losses import softmax_objective
from privlearn.linear import sgd_train
from privlearn.linear.softmax import softmax_sgd_train
from privlearn.random import key_from_seed
from privlearn.reference.linear import softmax_sgd_train as softmax_sgd_train_ref
from privlearn.reference.random import Stream, noise_lattice

RTOL = 1e-10
ATOL = 1e-12
BACKENDS = {"core": softmax_sgd_train, "reference": softmax_sgd_train_ref}


def _data(n: int = 120, d: int = 5, k: int = 3, seed: int = 0, density: float | None = None):
    """Rows with norm in [0.2, 1], labels in [0, k) from a noisy linear model."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if density is not None:
        X = X * (rng.random((n, d)) < density)
        X[np.linalg.norm(X, axis=1) == 0, 0] = 1.0
    X = X / np.linalg.norm(X, axis=1, keepdims=True) * rng.uniform(0.2, 1.0, size=(n, 1))
    W = 3.0 * rng.normal(size=(d, k))
    y = np.argmax(X @ W + 0.3 * rng.normal(size=(n, k)), axis=1)
    return X, y


# ---- core vs numpy reference -----------------------------------------------------------------
CASES = {
    "poisson-noise": dict(sampling="poisson", sigma=1.1, clip=0.5),
    "poisson-plain": dict(sampling="poisson"),
    "poisson-rate-steps": dict(sampling="poisson", rate=0.2, steps=9, sigma=0.8, clip=1.0),
    "fixed-noise": dict(sampling="fixed", sigma=0.7, clip=0.3, radius=0.4, record_every=4),
    "fixed-plain": dict(sampling="fixed", learning_rate="constant", eta0=0.3, clip=0.2),
    "fixed-inv-lambda": dict(sampling="fixed", learning_rate="inv_lambda_t", alpha=0.5),
}


@pytest.mark.parametrize("n_threads", [1, 2, 4])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_core_matches_reference(case, sparse, n_threads):
    X, y = _data(n=90, d=6, k=4, seed=3, density=0.5 if sparse else None)
    Xin = sp.csr_matrix(X) if sparse else X
    kw = {"batch_size": 20, "epochs": 3, "alpha": 1e-3, **CASES[case]}
    key = key_from_seed(11)
    W0 = np.random.default_rng(1).normal(size=(6, 4)) * 0.1
    a = softmax_sgd_train(Xin, y, key=key, n_classes=4, W0=W0, n_threads=n_threads, **kw)
    b = softmax_sgd_train_ref(Xin, y, key=key, n_classes=4, W0=W0, **kw)
    assert a.coef.shape == (6, 4)
    assert a.n_steps == b.n_steps
    np.testing.assert_allclose(a.coef, b.coef, rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(a.path_steps, b.path_steps)
    np.testing.assert_allclose(a.path, b.path, rtol=RTOL, atol=ATOL)
    if a.path.shape[0]:
        assert a.path.shape[1] == 24
        np.testing.assert_array_equal(a.path[-1], a.coef.ravel())
    if n_threads > 1:  # bit-identical across thread counts
        c = softmax_sgd_train(Xin, y, key=key, n_classes=4, W0=W0, n_threads=1, **kw)
        np.testing.assert_array_equal(a.coef, c.coef)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("sampling", ["poisson", "fixed"])
def test_large_batches_are_thread_independent(sampling, sparse):
    """Batches of > 4 reduction blocks (256 rows each), so the parallel region really opens."""
    X, y = _data(n=2400, d=7, k=5, seed=5, density=0.6 if sparse else None)
    Xin = sp.csr_matrix(X) if sparse else X
    kw = dict(sampling=sampling, batch_size=1600, steps=4, sigma=1.0, clip=0.7, alpha=1e-3)
    key = key_from_seed(2)
    runs = [
        softmax_sgd_train(Xin, y, key=key, n_classes=5, n_threads=t, **kw).coef for t in (1, 2, 4)
    ]
    np.testing.assert_array_equal(runs[0], runs[1])
    np.testing.assert_array_equal(runs[0], runs[2])
    ref = softmax_sgd_train_ref(Xin, y, key=key, n_classes=5, **kw).coef
    np.testing.assert_allclose(runs[0], ref, rtol=RTOL, atol=ATOL)


def test_w0_is_not_modified_and_seeds_differ():
    X, y = _data()
    W0 = np.ones((5, 3))
    before = W0.copy()
    kw = dict(sampling="poisson", sigma=1.0, clip=1.0, batch_size=30, epochs=2)
    a = softmax_sgd_train(X, y, key=key_from_seed(1), n_classes=3, W0=W0, **kw)
    b = softmax_sgd_train(X, y, key=key_from_seed(2), n_classes=3, W0=W0, **kw)
    np.testing.assert_array_equal(W0, before)
    assert not np.array_equal(a.coef, b.coef)


# ---- the non-private optimum (scikit-learn) --------------------------------------------------
def _sklearn_optimum(X, y, alpha):
    n = X.shape[0]
    lr = LogisticRegression(C=1 / (n * alpha), fit_intercept=False, tol=1e-12, max_iter=10_000)
    return lr.fit(X, y).coef_.T  # (d, K), multinomial (lbfgs default for K > 2)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_full_batch_reaches_sklearn_optimum(sparse):
    X, y = _data(n=150, d=4, k=3, seed=7, density=0.7 if sparse else None)
    alpha = 0.01
    W_star = _sklearn_optimum(X, y, alpha)
    f_star = softmax_objective(X, y, W_star, alpha)
    Xin = sp.csr_matrix(X) if sparse else X
    run = softmax_sgd_train(
        Xin,
        y,
        key=key_from_seed(0),
        n_classes=3,
        sampling="fixed",
        batch_size=150,  # the whole data set: gradient descent, linear convergence
        learning_rate="constant",
        eta0=1.0,
        alpha=alpha,
        steps=4000,
    )
    f = softmax_objective(X, y, run.coef, alpha)
    assert f >= f_star - 1e-10
    assert f - f_star < 1e-9
    np.testing.assert_allclose(run.coef, W_star, atol=1e-4)


def test_mini_batch_sgd_gets_close_to_sklearn_optimum():
    X, y = _data(n=200, d=4, k=3, seed=8)
    alpha = 0.01
    f_star = softmax_objective(X, y, _sklearn_optimum(X, y, alpha), alpha)
    run = softmax_sgd_train(
        X,
        y,
        key=key_from_seed(4),
        n_classes=3,
        sampling="poisson",
        batch_size=20,
        learning_rate="constant",
        eta0=0.05,
        alpha=alpha,
        epochs=300,
    )
    f = softmax_objective(X, y, run.coef, alpha)
    assert f - f_star < 2e-3
    f0 = softmax_objective(X, y, np.zeros((4, 3)), alpha)
    assert f - f_star < 1e-2 * (f0 - f_star)


# ---- K = 2: the binary logistic trainer ------------------------------------------------------
@pytest.mark.parametrize("schedule", ["inv_sqrt", "inv_lambda_t"])
@pytest.mark.parametrize("sampling", ["poisson", "fixed"])
@pytest.mark.parametrize("clip", [0.0, 0.4])
def test_two_classes_is_binary_logistic_sgd(sampling, schedule, clip):
    """From W0 = 0 every per-example gradient has columns summing to 0, so W[:, 0] = -W[:, 1]
    and v = W[:, 1] - W[:, 0] follows binary logistic SGD on labels 2y - 1 with step 2 eta,
    regularisation alpha / 2, and clip C / sqrt(2) (||p - e_y|| = sqrt(2) |p_1 - [y = 1]|).
    With clipping the binary trainer sums in fixed point (units of C * 2**-30, truncated), so
    the two agree to about 1e-9 relative there, not to the last bit."""
    X, y = _data(n=100, d=5, k=2, seed=9)
    alpha = 0.05
    kw = dict(sampling=sampling, batch_size=15, epochs=4, learning_rate=schedule)
    run = softmax_sgd_train(
        X, y, key=key_from_seed(3), n_classes=2, alpha=alpha, eta0=0.5, clip=clip, **kw
    )
    binary = sgd_train(
        X,
        2.0 * y - 1.0,
        key=key_from_seed(3),
        loss="log_loss",
        mechanism="none",
        alpha=alpha / 2,
        eta0=1.0,
        clip=clip / np.sqrt(2.0),
        **kw,
    )
    np.testing.assert_allclose(run.coef[:, 0], -run.coef[:, 1], rtol=1e-12, atol=1e-14)
    rtol = 1e-9 if clip == 0 else 1e-7
    np.testing.assert_allclose(run.coef[:, 1] - run.coef[:, 0], binary.coef, rtol=rtol)


# ---- clipping and overflow -------------------------------------------------------------------
@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_huge_row_is_clipped_to_exactly_clip(backend, sparse):
    X = np.zeros((1, 4))
    X[0, 0] = 1e300
    Xin = sp.csr_matrix(X) if sparse else X
    run = BACKENDS[backend](
        Xin,
        [1],
        key=key_from_seed(0),
        n_classes=3,
        sampling="fixed",
        batch_size=1,
        steps=1,
        learning_rate="constant",
        eta0=1.0,
        alpha=0.0,
        clip=0.25,
    )
    # p = (1/3, 1/3, 1/3), r = (1/3, -2/3, 1/3): W = -clip * e_0 r^T / ||r||
    r = np.array([1.0, -2.0, 1.0]) / 3.0
    expected = np.zeros((4, 3))
    expected[0] = -0.25 * r / np.linalg.norm(r)
    # the clipped gradient is summed in fixed point (units of C * 2**-30, truncated toward
    # zero): within a unit per entry of the exact value, and never beyond C in norm
    assert np.isfinite(run.coef).all()
    np.testing.assert_allclose(run.coef, expected, rtol=0, atol=0.25 * 2.0**-30)
    assert 0.25 * (1 - 1e-8) < np.linalg.norm(run.coef) <= 0.25


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_huge_and_infinite_scores_stay_finite(sparse):
    """Rows of norm ~1e300 and a start whose scores are ~1e300 or +-inf (one overflowing product
    per score, so the value does not depend on the summation order or on FMA): every clipped
    contribution is finite, core and reference agree."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    X[:5] *= 1e300
    X[5] = [1e300, 0.0, 0.0]  # scores (inf, 0, 0): p = e_0
    X[6] = [0.0, 1e300, 0.0]  # scores (0, 0, -inf)
    y = rng.integers(0, 3, size=40)
    W0 = np.array([[1e10, 0.0, 0.0], [0.0, 0.0, -1e10], [0.0, 1e300, 0.0]])
    Xin = sp.csr_matrix(X) if sparse else X
    kw = dict(sampling="fixed", batch_size=10, epochs=3, clip=1.0, sigma=0.5, alpha=1e-3)
    a = softmax_sgd_train(Xin, y, key=key_from_seed(5), n_classes=3, W0=W0, **kw)
    b = softmax_sgd_train_ref(Xin, y, key=key_from_seed(5), n_classes=3, W0=W0, **kw)
    assert np.isfinite(a.coef).all()
    np.testing.assert_allclose(a.coef, b.coef, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_cancelling_overflows_are_finite_under_clipping(backend, sparse):
    """x^T w = 1e310 - 1e310 is NaN (inf - inf) or inf (fused multiply-add), depending on the
    summation; either way a clipped run stays finite (a NaN score contributes 0)."""
    X = np.array([[1e300, 1e300], [0.5, -0.2]])
    W0 = np.array([[1e10, 0.0], [-1e10, 0.0]])
    run = BACKENDS[backend](
        sp.csr_matrix(X) if sparse else X,
        [1, 0],
        key=key_from_seed(0),
        n_classes=2,
        W0=W0,
        sampling="fixed",
        batch_size=2,
        steps=3,
        alpha=0.0,
        clip=1.0,
    )
    assert np.isfinite(run.coef).all()


def test_reference_coefficients_nan_and_infinite_scores():
    """The rules of softmax.hpp on explicit scores: +inf maxima share the mass, all -inf is
    uniform, a NaN score gives 0 under clipping and NaN without."""
    from privlearn.reference.linear import _softmax_coefficients

    inf, nan = np.inf, np.nan
    Z = np.array([[inf, 0.0, inf], [-inf, -inf, -inf], [1.0, nan, 0.0], [1e308, -1e308, 0.0]])
    labels = np.array([1, 0, 2, 0])
    A = _softmax_coefficients(Z, labels, None, None, 0.0)
    np.testing.assert_array_equal(A[0], [0.5, -1.0, 0.5])
    np.testing.assert_allclose(A[1], [1 / 3 - 1, 1 / 3, 1 / 3], rtol=1e-15)
    assert np.isnan(A[2]).all()
    np.testing.assert_array_equal(A[3], [0.0, 0.0, 0.0])
    one = np.ones(4)
    A = _softmax_coefficients(Z, labels, one, one, 0.1)
    np.testing.assert_array_equal(A[2], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(np.linalg.norm(A[:2], axis=1), 0.1, rtol=1e-15)


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_non_finite_iterate_raises(backend):
    X = np.array([[1e300, 0.0], [0.0, 1e300]])  # no clipping: a step of ~1e312 overflows W
    with pytest.raises(ValueError, match="non-finite"):
        BACKENDS[backend](
            X,
            [0, 1],
            key=key_from_seed(0),
            n_classes=2,
            sampling="fixed",
            batch_size=2,
            steps=1,
            eta0=1e12,
        )


# ---- the noise addresses ---------------------------------------------------------------------
@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("sampling", ["poisson", "fixed"])
def test_noise_addresses(backend, sampling):
    """With X = 0 every gradient sum is 0, so W = -eta sum_t C 2^-k Z_t / L with the exact
    lattice noise Z_t[j, c] = discrete_gaussian(t d K + c d + j) on noise_stream (entries class
    after class; variance and k from noise_lattice(sigma, d K))."""
    n, d, k, steps = 12, 3, 4, 5
    sigma, clip, eta, b = 0.9, 0.6, 0.3, 4
    key = key_from_seed(21)
    run = BACKENDS[backend](
        np.zeros((n, d)),
        np.arange(n) % k,
        key=key,
        n_classes=k,
        sampling=sampling,
        batch_size=b,
        steps=steps,
        learning_rate="constant",
        eta0=eta,
        alpha=0.0,
        sigma=sigma,
        clip=clip,
        noise_stream=7,
    )
    noise = Stream(key=key, stream=7)
    frac_bits, shift, variance = noise_lattice(sigma, d * k)
    assert (frac_bits, shift) == (30, 0)
    W = np.zeros((d, k))
    for t in range(steps):
        Z = noise.discrete_gaussian(t * d * k, d * k, variance).reshape(k, d).T
        W = W - eta * ((Z.astype(float) * math.ldexp(clip, -frac_bits)) / b)
    np.testing.assert_allclose(run.coef, W, rtol=1e-13, atol=0)


# ---- bad input -------------------------------------------------------------------------------
def _call(backend, **kw):
    X, y = _data(n=30, d=3, k=3)
    args = dict(key=key_from_seed(0), n_classes=3)
    args.update(kw)
    Xin = args.pop("X", X)
    yin = args.pop("y", y)
    return BACKENDS[backend](Xin, yin, **args)


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(y=np.r_[np.zeros(29), 3]), "outside"),
        (dict(y=np.r_[np.zeros(29), -1]), "outside"),
        (dict(y=np.r_[np.zeros(29), 0.5]), "integer"),
        (dict(y=np.r_[np.zeros(29), np.nan]), "NaN"),
        (dict(y=np.zeros(7)), "entries"),
        (dict(n_classes=1), "n_classes"),
        (dict(W0=np.zeros((3, 2))), "W0"),
        (dict(W0=np.full((3, 3), np.inf)), "W0"),
        (dict(sampling="disjoint"), "sampling"),
        (dict(sigma=1.0), "clip > 0"),
        (dict(alpha=-1.0), "alpha"),
        (dict(eta0=0.0), "eta0"),
        (dict(clip=1e-20), "clip"),
        (dict(sigma=1e9, clip=1.0), "sigma"),
        (dict(rate=0.5, sampling="fixed"), "rate"),
        (dict(rate=1.5), "rate"),
        (dict(batch_size=31), "batch_size"),
        (dict(learning_rate="inv_lambda_t", alpha=0.0), "inv_lambda_t"),
        (dict(learning_rate="adam"), "learning_rate"),
        (dict(radius=-1.0), "radius"),
        (dict(key=b"short"), "key"),
        (dict(X=np.full((30, 3), np.nan)), "NaN"),
    ],
)
def test_bad_input_value_errors(backend, kw, match):
    with pytest.raises(ValueError, match=match):
        _call(backend, **kw)


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_bad_input_type_errors(backend):
    with pytest.raises(TypeError, match="lossy"):
        _call(backend, lossy=1)
    with pytest.raises(TypeError, match="mechanism"):
        _call(backend, mechanism="gaussian")  # not a keyword: sigma = 0 is no noise
    with pytest.raises(TypeError, match="labels"):
        _call(backend, y=np.array(["a"] * 30))
    with pytest.raises(TypeError, match="labels"):
        _call(backend, y=np.ones(30, dtype=bool))
    with pytest.raises(TypeError, match="n_classes"):
        _call(backend, n_classes=3.0)
    with pytest.raises(TypeError):
        _call(backend, n_classes=None)


def test_integral_float_labels_are_accepted():
    X, y = _data(n=30, d=3, k=3)
    kw = dict(key=key_from_seed(0), n_classes=3, batch_size=5)
    a = softmax_sgd_train(X, y.astype(np.float64), **kw)
    b = softmax_sgd_train(X, y.astype(np.uint8), **kw)
    np.testing.assert_array_equal(a.coef, b.coef)


def test_core_rechecks_labels_and_parameters():
    """The C++ layer re-checks what the Python layer validated (std::invalid_argument)."""
    X, y = _data(n=30, d=3, k=3)
    y = y.astype(np.int64)
    W0 = np.zeros((3, 3))
    args = ("fixed", "inv_sqrt", 1e-4, 5, 1, 0, 1.0, 0.0, 0.0, 0.0, key_from_seed(0), 1, 2, 0, 1)
    _core.softmax_sgd_train_dense(X, y, W0, *args)  # fine
    bad = y.copy()
    bad[4] = 3
    with pytest.raises(ValueError, match="the label of row 4 is outside"):
        _core.softmax_sgd_train_dense(X, bad, W0, *args)
    with pytest.raises(ValueError, match="n_classes >= 2"):
        _core.softmax_sgd_train_dense(X, np.zeros(30, np.int64), np.zeros((3, 1)), *args)
    with pytest.raises(ValueError, match="sampling"):
        _core.softmax_sgd_train_dense(X, y, W0, "disjoint", *args[1:])
    with pytest.raises(ValueError, match="sigma"):
        sig = args[:7] + (1.0, 1e9) + args[9:]
        _core.softmax_sgd_train_dense(X, y, W0, *sig)
    with pytest.raises(ValueError, match="n_threads|threads"):
        _core.softmax_sgd_train_dense(X, y, W0, *args[:-1], 10**6)
