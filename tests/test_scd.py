"""DP-SCD (Damaskinos et al. 2021): ``scd_train`` (core vs numpy reference), the dual steps
against the paper's local subproblem, the estimators ``DPSCDRegressor`` / ``DPSCDClassifier``,
their privacy accounting, an audit, oracles and input validation.

Oracles: with privacy off (``epsilon = inf``) the estimators reach scikit-learn's optimum of
the same objective ``(lambda/2)||theta||^2 + (1/N) sum_i loss``: Ridge with
``alpha_ridge = lambda N``, LinearSVC(hinge, dual) and LogisticRegression with
``C = 1 / (lambda N)``.

The audit uses fixed seeds (deterministic); for seeds chosen at random a correct mechanism
fails the GDP audit with probability at most ``alpha = 1e-6`` (see :mod:`privlearn.audit`).
The statistical test of Remark 1 uses fixed seeds too; at random its false-failure
probability is below 1e-4 (two 4.5-sigma bounds per coordinate, a Bonferroni sum).
"""

from __future__ import annotations

import contextlib
import inspect
import math
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar
from scipy.special import ndtr
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.svm import LinearSVC

from privlearn import _core
from privlearn import audit as A
from privlearn._losses import dual_objective, objective
from privlearn.accounting import (
    DEFAULT_DELTA,
    GaussianEvent,
    PoissonSampled,
    RDPAccountant,
    SampledWithoutReplacement,
    SelfComposed,
    accountant_for,
    calibrate_noise,
    epsilon_for_sigma,
    epsilon_of_noise,
    lattice_statement,
)
from privlearn.accounting.pld import CALIBRATION_INTERVAL, epsilon_for_sigma_pld
from privlearn.exceptions import LargeDeltaWarning, UndeclaredBoundWarning
from privlearn.linear import DPSCDClassifier as _DPSCDClassifier
from privlearn.linear import DPSCDPrivacy, scd_train
from privlearn.linear import DPSCDRegressor as _DPSCDRegressor
from privlearn.linear.scd_estimators import ALPHA_JITTER
from privlearn.random import Stream, key_from_seed
from privlearn.reference.linear import _dual_step
from privlearn.reference.linear import scd_train as scd_train_ref

# This module tests DP-SCD in the paper's configuration (5 epochs, C = 0.5, no intercept, rows
# checked, not projected). The estimators' defaults are chosen by experiment instead
# (bench/python/bench_defaults.py) and tested in tests/test_linear_edges.py.
_PAPER_SCD = dict(epochs=5, clip=0.5, clip_rows=False, fit_intercept=False)


def DPSCDClassifier(**kw):  # noqa: N802 - stands for the class with the paper's settings
    """The label set {-1, +1} of this module's data is declared public (``classes``); the tests
    of other labels, or of the label set read from y, pass their own ``classes``."""
    return _DPSCDClassifier(**{**_PAPER_SCD, "classes": (-1, 1), **kw})


def DPSCDRegressor(**kw):  # noqa: N802
    return _DPSCDRegressor(**{**_PAPER_SCD, **kw})


def _private_bound(expected: bool = True):  # type: ignore[no-untyped-def]
    """A private regressor fit without a declared target bound estimates it privately and says
    so (``UndeclaredBoundWarning``): asserted where a test fits such a regressor."""
    if not expected:
        return contextlib.nullcontext()
    return pytest.warns(UndeclaredBoundWarning, match="no target_bounds")


INF = float("inf")
RTOL = 1e-10
ATOL = 1e-12
AUDIT_ALPHA = 1e-6
#: fits per side of the GDP audit (power in its docstring)
AUDIT_N = 500
LOSSES = ("squared", "hinge", "log_loss")


def _data(n: int = 120, d: int = 6, seed: int = 0, density: float | None = None):
    """Rows with norm in [0.2, 1] (the paper's normalised rows), labels in {-1, +1}, and a
    real target."""
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


def _target(loss: str, y: np.ndarray, t: np.ndarray) -> np.ndarray:
    return t if loss == "squared" else y


def _assert_runs_equal(a, b, rtol: float = RTOL) -> None:
    np.testing.assert_allclose(a.coef, b.coef, rtol=rtol, atol=ATOL)
    np.testing.assert_allclose(a.v, b.v, rtol=rtol, atol=ATOL)
    np.testing.assert_allclose(a.dual_coef, b.dual_coef, rtol=rtol, atol=ATOL)
    np.testing.assert_allclose(a.primal_path, b.primal_path, rtol=rtol, atol=ATOL)
    np.testing.assert_allclose(a.dual_path, b.dual_path, rtol=rtol, atol=ATOL)
    np.testing.assert_array_equal(a.path_steps, b.path_steps)
    assert a.n_steps == b.n_steps


# ---- scd_train: core vs numpy reference ------------------------------------------------------
TRAIN_CASES = [(v, loss) for v in ("dual", "seq", "scd", "primal") for loss in LOSSES]
TRAIN_CASES.remove(("primal", "hinge"))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("variant, loss", TRAIN_CASES)
def test_scd_train_core_matches_reference(variant, loss, sparse):
    X, y, t = _data(n=60, d=5, seed=3, density=0.5 if sparse else None)
    Xin = sp.csr_matrix(X) if sparse else X
    private = variant != "scd"
    kw = dict(
        loss=loss,
        variant=variant,
        alpha=0.02,
        batch_size=2 if variant == "primal" else 8,
        epochs=2,
        clip=0.5 if private else 0.0,
        noise_std=0.3 if private else 0.0,
        record_every=3,
    )
    samplings = ("poisson", "fixed") if variant in ("dual", "seq") else ("poisson",)
    for sampling in samplings:
        for seed in (0, 1):
            key = key_from_seed(seed)
            ref = scd_train_ref(Xin, _target(loss, y, t), key=key, sampling=sampling, **kw)
            assert ref.n_steps > 0 and ref.path_steps[-1] == ref.n_steps
            for n_threads in (1, 2, 4):
                core = scd_train(
                    Xin, _target(loss, y, t), key=key, n_threads=n_threads, sampling=sampling, **kw
                )
                _assert_runs_equal(core, ref)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("sampling", ["poisson", "fixed"])
def test_scd_train_bit_identical_across_threads_large_batch(sampling, sparse):
    """Dual batches of about 1200 rows are summed into v in 5 blocks of 256: the blocked,
    ordered reduction gives the same bits for any thread count."""
    X, y, t = _data(n=3000, d=20, seed=5, density=0.3 if sparse else None)
    Xin = sp.csr_matrix(X) if sparse else X
    batch = Stream(key=key_from_seed(9), stream=1).poisson_sample(0, 3000, 0.4)
    assert batch.size >= 1100  # the parallel path (>= 4 reduction blocks) is taken
    for loss in LOSSES:
        kw = dict(loss=loss, sampling=sampling, batch_size=1200, epochs=2, alpha=1e-3)
        kw.update(clip=0.5, noise_std=0.7)
        runs = [
            scd_train(Xin, _target(loss, y, t), key=key_from_seed(9), n_threads=k, **kw)
            for k in (1, 2, 4)
        ]
        for other in runs[1:]:
            np.testing.assert_array_equal(runs[0].v, other.v)
            np.testing.assert_array_equal(runs[0].dual_coef, other.dual_coef)


# ---- estimators: core vs numpy reference ------------------------------------------------------
EST_CASES = {
    "ridge-dual-poisson": lambda **kw: DPSCDRegressor(epsilon=1.0, **kw),
    "ridge-dual-fixed-intercept": lambda **kw: DPSCDRegressor(
        epsilon=2.0, sampling="fixed", fit_intercept=True, clip_rows=True, **kw
    ),
    "ridge-primal": lambda **kw: DPSCDRegressor(epsilon=1.0, variant="primal", **kw),
    "ridge-seq-inf": lambda **kw: DPSCDRegressor(epsilon=INF, variant="seq", **kw),
    "log-dual-poisson": lambda **kw: DPSCDClassifier(epsilon=1.0, **kw),
    "log-primal": lambda **kw: DPSCDClassifier(epsilon=2.0, variant="primal", **kw),
    "log-scd": lambda **kw: DPSCDClassifier(epsilon=INF, variant="scd", **kw),
    "hinge-dual-fixed": lambda **kw: DPSCDClassifier(
        loss="hinge", epsilon=1.0, sampling="fixed", clip=0.3, **kw
    ),
    "hinge-seq-fixed": lambda **kw: DPSCDClassifier(
        loss="hinge", epsilon=3.0, variant="seq", sampling="fixed", **kw
    ),
    "hinge-scd": lambda **kw: DPSCDClassifier(loss="hinge", epsilon=INF, variant="scd", **kw),
    # the hidden dual state (issue 20): jitter off, and a large jitter (the default, 0.75, is
    # in the dual-poisson cases above)
    "hinge-dual-poisson-nojitter": lambda **kw: DPSCDClassifier(
        loss="hinge", epsilon=1.0, alpha_jitter=0.0, **kw
    ),
    "log-dual-poisson-jitter3": lambda **kw: DPSCDClassifier(epsilon=1.0, alpha_jitter=3.0, **kw),
}


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("case", sorted(EST_CASES))
def test_estimator_core_matches_reference(case, sparse):
    X, y, t = _data(n=80, d=5, seed=11, density=0.6 if sparse else None)
    Xin = sp.csr_matrix(X) if sparse else X
    target = t if case.startswith("ridge") else y
    batch = 2 if "primal" in case else 7
    common = dict(batch_size=batch, epochs=2, alpha=1e-2, seed=4, diagnostics=True)
    ridge = case.startswith("ridge") and not case.endswith("-inf")  # private: bound estimated
    with _private_bound(ridge):
        ref = EST_CASES[case](backend="reference", **common).fit(Xin, target)
    for n_threads in (1, 2, 4):
        with _private_bound(ridge):
            core = EST_CASES[case](backend="core", n_threads=n_threads, **common)
            core.fit(Xin, target)
        np.testing.assert_allclose(core.coef_, ref.coef_, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(core.intercept_, ref.intercept_, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(
            core.diagnostics_.dual_coef, ref.diagnostics_.dual_coef, rtol=RTOL, atol=ATOL
        )
        np.testing.assert_allclose(
            core.diagnostics_.objective_path, ref.diagnostics_.objective_path, rtol=RTOL
        )
        np.testing.assert_allclose(
            core.diagnostics_.duality_gap_path,
            ref.diagnostics_.duality_gap_path,
            rtol=RTOL,
            atol=1e-11,
        )
        np.testing.assert_array_equal(
            core.diagnostics_.objective_steps, ref.diagnostics_.objective_steps
        )
        assert core.privacy_ == ref.privacy_
        assert core.n_steps_ == ref.n_steps_


def test_estimator_bit_identical_across_threads():
    X, y, t = _data(n=3000, d=10, seed=2)
    for make, target in (
        (lambda **kw: DPSCDRegressor(batch_size=1200, **kw), t),
        (lambda **kw: DPSCDClassifier(loss="hinge", sampling="fixed", batch_size=1100, **kw), y),
    ):
        with _private_bound(target is t):
            fits = [
                make(epochs=2, seed=3, n_threads=k, diagnostics=True).fit(X, target)
                for k in (1, 2, 4)
            ]
        for other in fits[1:]:
            np.testing.assert_array_equal(fits[0].coef_, other.coef_)
            np.testing.assert_array_equal(
                fits[0].diagnostics_.dual_coef, other.diagnostics_.dual_coef
            )


def test_dense_and_csr_fits_agree():
    X, y, _ = _data(n=150, d=8, seed=6, density=0.4)
    kw = dict(
        epsilon=1.0, batch_size=10, epochs=2, seed=1, fit_intercept=True, clip_rows=True,
        diagnostics=True,
    )  # fmt: skip
    a = DPSCDClassifier(**kw).fit(X, y)
    b = DPSCDClassifier(**kw).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(
        a.diagnostics_.dual_coef, b.diagnostics_.dual_coef, rtol=RTOL, atol=ATOL
    )


# ---- the dual step against the paper's local subproblem G*_j (eq. 8) --------------------------
# Convex conjugates l*(u) = sup_z (u z - l(z)) of the losses as functions of the margin z (label
# y in {-1, +1} for hinge / logistic), derived from the definition; checked numerically below.
# Computed in extended precision (np.longdouble) so that the numerical minimiser is not limited
# by float64 rounding of G* (which resolves the argmin only to ~sqrt(eps) ~ 1.5e-8).
LD = np.longdouble
_BETA_MIN = 1e-4  # the logistic dual variable is kept in [1e-4, 1 - 1e-4] (scd.hpp)


def _conjugate(loss: str, u, y):
    """``l*(u)``: squared ``u y + u^2/2``; hinge ``u y`` on ``u y in [-1, 0]``; logistic
    ``b log b + (1-b) log(1-b)`` with ``b = -u y in [0, 1]``; ``+inf`` outside the domain."""
    if loss == "squared":
        return u * y + u * u / 2
    b = -u * y
    if not 0 <= b <= 1:
        return LD(np.inf)
    if loss == "hinge":
        return -b
    return (b * np.log(b) if b > 0 else LD(0)) + ((1 - b) * np.log1p(-b) if b < 1 else LD(0))


def _loss(loss: str, z: float, y: float) -> float:
    if loss == "squared":
        return 0.5 * (z - y) ** 2
    if loss == "hinge":
        return max(0.0, 1.0 - y * z)
    return float(np.logaddexp(0.0, -y * z))


@pytest.mark.parametrize("loss", LOSSES)
def test_conjugates_match_a_numerical_supremum(loss):
    for y in (1.0, -1.0) if loss != "squared" else (0.7, -1.3):
        for b in (0.05, 0.3, 0.5, 0.9):
            u = -b * y  # inside the dual domain of every loss
            if loss == "hinge":  # sup of a piecewise linear function: attained at y z = 1
                sup = max(u * z - _loss(loss, z, y) for z in (y * 1.0, y * 1.0 + 1e-3 * y))
            else:
                res = minimize_scalar(lambda z, u=u, y=y: _loss(loss, z, y) - u * z, tol=1e-12)
                sup = -res.fun
            assert float(_conjugate(loss, LD(u), LD(y))) == pytest.approx(sup, rel=1e-9, abs=1e-12)


def _local_subproblem(loss, a_j, v, x_j, y_j, lam, n, s):
    """G*_j(alpha_j, zeta, v, x_j) of eq. (8), with ``s`` (``L``, or 1 for sequential steps) in
    front of ``||x_j||^2 zeta^2``, as a function of zeta (extended precision)."""
    a_j, y_j, lam, n, s = LD(a_j), LD(y_j), LD(lam), LD(n), LD(s)
    v, x_j = v.astype(LD), x_j.astype(LD)
    vv, xv, xx = v @ v, x_j @ v, x_j @ x_j

    def G(zeta):
        zeta = LD(zeta)
        quad = (vv + 2 * xv * zeta + s * xx * zeta * zeta) / (2 * lam * n * n)
        return _conjugate(loss, -a_j - zeta, y_j) / n + quad

    return G


def _argmin(G, lo: float, hi: float) -> float:
    """Bounded 1-D minimisation, repeated around the first answer so that fminbound's relative
    stopping rule (sqrt(eps) |x|) does not limit the precision."""
    opts = {"xatol": 1e-15}
    x0 = float(minimize_scalar(G, bounds=(lo, hi), method="bounded", options=opts).x)
    r = minimize_scalar(
        lambda w: G(LD(x0) + LD(w)), bounds=(lo - x0, hi - x0), method="bounded", options=opts
    )
    return x0 + float(r.x)


def _dual_domain(loss: str, a_j: float, y_j: float) -> tuple[float, float]:
    """zeta with y_j (alpha_j + zeta) in [0, 1] (hinge, logistic); a wide box for ridge."""
    if loss == "squared":
        return -50.0, 50.0
    return min(0.0, y_j) - a_j, max(0.0, y_j) - a_j


def _transitions(loss: str, variant: str, newton_steps: int = 1):
    """(state before a step, the step) for a few steps of an unscaled, noiseless run: the runs
    with T and T + 1 steps share their first T steps (same random addresses)."""
    X, y, t = _data(n=40, d=4, seed=1)
    target = _target(loss, y, t)
    n, lam, L = 40, 0.05, 8
    for seed in (0, 1, 2):
        key = key_from_seed(seed)
        kw = dict(
            loss=loss,
            variant=variant,
            sampling="fixed",
            alpha=lam,
            batch_size=L,
            newton_steps=newton_steps,
        )
        for steps in (1, 3, 7, 12):
            before = scd_train(X, target, key=key, steps=steps, **kw)
            after = scd_train(X, target, key=key, steps=steps + 1, **kw)
            if variant == "dual":
                batch, s = Stream(key=key, stream=1).choice_without_replacement(steps, n, L), L
            else:  # scd: example perm[k] of the epoch's permutation, s = 1
                epoch, k = divmod(steps, n)
                batch, s = Stream(key=key, stream=1).permutation(epoch, n)[k : k + 1], 1
            for j in batch:
                zeta = after.dual_coef[j] - before.dual_coef[j]
                yield X, target, before, j, zeta, dict(lam=lam, n=n, s=s)


@pytest.mark.parametrize("variant", ["dual", "scd"])
@pytest.mark.parametrize("loss", ["squared", "hinge"])
def test_closed_form_step_is_the_minimiser_of_the_local_subproblem(loss, variant):
    """Ridge and hinge: scd_train's step (and the reference's ``_dual_step``) is the exact
    argmin of G*_j over the dual domain (Algorithm 1, Step 7)."""
    count = 0
    for X, target, before, j, zeta, p in _transitions(loss, variant):
        a_j, y_j = before.dual_coef[j], target[j]
        G = _local_subproblem(loss, a_j, before.v, X[j], y_j, p["lam"], p["n"], p["s"])
        numeric = _argmin(G, *_dual_domain(loss, a_j, y_j))
        assert abs(zeta - numeric) < 1e-8, (j, zeta, numeric)
        z = X[j] @ before.v / (p["lam"] * p["n"])
        ref = _dual_step(
            loss, np.array([a_j]), np.array([y_j]), np.array([X[j] @ X[j]]), np.array([z]),
            p["s"], p["lam"] * p["n"],
        )  # fmt: skip
        assert ref[0] == pytest.approx(zeta, rel=1e-12, abs=1e-14)
        count += 1
    assert count >= 12


def test_logistic_newton_step_decreases_the_local_subproblem_and_converges():
    """Logistic: the step is one Newton step in beta = y (alpha + zeta) on G*_j, from
    beta0 = clip(y alpha, 1e-4, 1 - 1e-4). It decreases G*_j, and iterating the same update
    converges to the numerical minimiser."""
    count = 0
    for X, y, before, j, zeta, p in _transitions("log_loss", "dual"):
        a_j, y_j, lam, n, s = before.dual_coef[j], y[j], p["lam"], p["n"], p["s"]
        G = _local_subproblem("log_loss", a_j, before.v, X[j], y_j, lam, n, s)
        # d/d beta of n G*_j = logit(beta) + y z + c (beta - y a_j), with z = x^T v / (lambda n)
        # and c = s ||x||^2 / (lambda n); the second derivative is 1 / (beta (1 - beta)) + c.
        z, c = X[j] @ before.v / (lam * n), s * (X[j] @ X[j]) / (lam * n)

        def newton(beta: float, a_j=a_j, y_j=y_j, z=z, c=c) -> float:
            g = math.log(beta / (1 - beta)) + y_j * z + c * (beta - y_j * a_j)
            h = 1 / (beta * (1 - beta)) + c
            return min(max(beta - g / h, _BETA_MIN), 1 - _BETA_MIN)

        beta0 = min(max(y_j * a_j, _BETA_MIN), 1 - _BETA_MIN)
        beta1 = newton(beta0)
        assert y_j * beta1 - a_j == pytest.approx(zeta, rel=1e-12, abs=1e-14)
        zeta0 = y_j * beta0 - a_j  # 0 once alpha_j is inside [1e-4, 1 - 1e-4]
        assert G(zeta) < G(zeta0) or zeta == zeta0
        beta = beta1
        for _ in range(60):
            beta = newton(beta)
        numeric = _argmin(G, *_dual_domain("log_loss", a_j, y_j))
        assert _BETA_MIN < y_j * (a_j + numeric) < 1 - _BETA_MIN  # the clip is inactive
        assert abs((y_j * beta - a_j) - numeric) < 1e-8
        count += 1
    assert count >= 12


@pytest.mark.parametrize("variant", ["dual", "scd"])
def test_logistic_newton_steps_reach_the_exact_minimiser(variant):
    """``newton_steps=k`` iterates the clipped Newton step k times inside the kernel: with enough
    iterations the logistic step is the exact argmin of G*_j (an exact SDCA step)."""
    count = 0
    for X, y, before, j, zeta, p in _transitions("log_loss", variant, newton_steps=40):
        a_j, y_j = before.dual_coef[j], y[j]
        G = _local_subproblem("log_loss", a_j, before.v, X[j], y_j, p["lam"], p["n"], p["s"])
        numeric = _argmin(G, *_dual_domain("log_loss", a_j, y_j))
        assert abs(zeta - numeric) < 1e-8, (j, zeta, numeric)
        count += 1
    assert count >= 12


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("variant", ["dual", "seq", "scd"])
def test_newton_steps_core_matches_reference(variant, sparse):
    X, y, t = _data(n=60, d=5, seed=4, density=0.5 if sparse else None)
    Xin = sp.csr_matrix(X) if sparse else X
    private = variant != "scd"
    kw = dict(
        loss="log_loss",
        variant=variant,
        alpha=0.02,
        batch_size=8,
        epochs=2,
        clip=0.5 if private else 0.0,
        noise_std=0.3 if private else 0.0,
        record_every=3,
        newton_steps=5,
    )
    key = key_from_seed(7)
    ref = scd_train_ref(Xin, y, key=key, **kw)
    one = scd_train_ref(Xin, y, key=key, **{**kw, "newton_steps": 1})
    assert not np.allclose(ref.dual_coef, one.dual_coef)  # the option does something
    for n_threads in (1, 2):
        _assert_runs_equal(scd_train(Xin, y, key=key, n_threads=n_threads, **kw), ref)


@pytest.mark.parametrize("variant", ["dual", "seq", "scd"])
def test_core_rechecks_rows_it_visits(variant):
    """The kernel itself (called without the Python layer's check) refuses a non-finite row
    when it visits it, naming the row."""
    X, y, t = _data(n=20, d=3)
    X[7, 2] = np.nan
    key = key_from_seed(0)
    args = ("squared", variant, True, 0.1, 20 if variant != "scd" else 1, 1, 0, 0.0, 0.0, key)
    with pytest.raises(ValueError, match="row 7"):
        _core.scd_train_dense(X, t, *args, 1, 2, 0, 1)
    csr = sp.csr_matrix(np.nan_to_num(X, nan=1.0))
    csr.data[csr.indptr[7]] = np.inf  # bypass scipy: a stored inf in row 7
    with pytest.raises(ValueError, match="non-finite"):
        _core.scd_train_csr(
            csr.data, csr.indices.astype(np.int64), csr.indptr.astype(np.int64), 3, t, *args, 1, 2,
            0, 1,
        )  # fmt: skip


# ---- Remark 1: consistency of v and X^T alpha in expectation -----------------------------------
@pytest.mark.parametrize("sampling", ["poisson", "fixed"])
def test_v_and_x_alpha_are_consistent_in_expectation(sampling):
    """With noise, v != X^T alpha, but v - X^T alpha = sum_t (eta_v,t - X_B_t^T eta_alpha,t) has
    mean 0 (Remark 1) and, since every coordinate of alpha receives N(0, s^2) at every step
    (lazily; the returned alpha includes the outstanding noise), variance
    T s^2 (1 + ||X[:, k]||^2) per coordinate k."""
    X, _, t = _data(n=30, d=3, seed=4)
    L, s, runs = 10, 0.5, 2000
    kw = dict(loss="squared", sampling=sampling, alpha=0.1, batch_size=L, epochs=2)
    diffs = np.array(
        [
            (r.v - X.T @ r.dual_coef)
            for r in (
                scd_train(X, t, key=key_from_seed(seed), clip=0.5, noise_std=s, **kw)
                for seed in range(runs)
            )
        ]
    )
    steps = 6
    mean, se = diffs.mean(axis=0), diffs.std(axis=0, ddof=1) / math.sqrt(runs)
    assert np.all(np.abs(mean) < 4.5 * se), (mean, se)
    predicted = steps * s**2 * (1 + (X**2).sum(axis=0))
    ratio = diffs.var(axis=0, ddof=1) / predicted
    assert np.all(np.abs(ratio - 1) < 4.5 * math.sqrt(2 / (runs - 1)) * 1.5), ratio
    # without noise they agree to rounding
    r = scd_train(X, t, key=key_from_seed(0), clip=0.5, **kw)
    np.testing.assert_allclose(r.v, X.T @ r.dual_coef, atol=1e-12)


# ---- privacy: the estimators call the trainer with the noise they account for -----------------
PRIVACY_CASES = {
    # variant, sampling, sensitivity / C, neighbouring, accounted as
    "dual-poisson": ("dual", "poisson", 1.0, "add_remove", "poisson"),  # hidden alpha, issue 20
    "dual-fixed": ("dual", "fixed", 2 * math.sqrt(2), "replace_one", "without_replacement"),
    "seq-fixed": ("seq", "fixed", 2 * math.sqrt(20 * 21), "replace_one", "without_replacement"),
    "primal": ("primal", "poisson", 2 * math.sqrt(2 * 3), "add_remove", None),
}


@pytest.mark.parametrize("case", sorted(PRIVACY_CASES))
def test_accountant_meets_the_target(case):
    variant, sampling, sens_per_c, neighboring, accounted = PRIVACY_CASES[case]
    X, _, t = _data(n=400, d=5, seed=1)
    n, target, delta, C, epochs = 400, 1.5, 1e-5, 0.7, 3
    L = 2 if variant == "primal" else 20
    reg = DPSCDRegressor(
        epsilon=target, delta=delta, variant=variant, sampling=sampling, batch_size=L,
        epochs=epochs, clip=C, alpha=1e-2, seed=0, n_samples=n, diagnostics=True,
        target_bounds=(-10.0, 10.0), target_scale=False,  # public: the budget is training's
    ).fit(X, t)  # fmt: skip
    p = reg.privacy_
    if variant == "primal":  # Section 3.2: q = 1, T = ceil(epochs M / L)
        q, steps = 1.0, math.ceil(epochs * 5 / L)
        sigma = calibrate_noise(target, delta, q=1.0, steps=steps)  # PLD, exact for q = 1
        events = (SelfComposed(GaussianEvent(sigma), steps),)
    else:
        q, steps = L / n, math.ceil(epochs * n / L)
        # the tightest accountant of the sampler: PLD for Poisson batches, RDP for fixed ones
        sigma = calibrate_noise(target, delta, q=q, steps=steps, sampling=accounted, n=n)
        inner = GaussianEvent(sigma)
        event = PoissonSampled(q, inner) if sampling == "poisson" else (
            SampledWithoutReplacement(n, L, inner)
        )  # fmt: skip
        events = (SelfComposed(event, steps),)
        if sampling == "poisson":  # calibrate_sigma_pld's tolerance on its search grid
            smaller = sigma / (1 + 1e-3)
            eps_smaller = epsilon_for_sigma_pld(
                smaller, delta, q=q, steps=steps, interval=CALIBRATION_INTERVAL
            )
        else:
            smaller = sigma / (1 + 1e-4)  # calibrate_sigma's tolerance
            eps_smaller = epsilon_for_sigma(
                smaller, delta, q=q, steps=steps, sampling=accounted, n=n
            )
        assert eps_smaller > target
    assert p.sigma == sigma
    assert p.epsilon <= target and p.epsilon == pytest.approx(target, rel=5e-3)
    accountant = "rdp" if accounted == "without_replacement" else "pld"
    assert p.delta == delta and p.accountant == accountant and p.neighboring == neighboring
    assert p.steps == reg.n_steps_ == steps and p.sampling_rate == q and p.batch_size == L
    assert p.clip == C and p.sensitivity == pytest.approx(sens_per_c * C, rel=1e-15)
    assert p.noise_std == pytest.approx(sigma * sens_per_c * C, rel=1e-15)
    assert p.statement.events == events and p.statement.neighboring == neighboring
    replay = accountant_for(neighboring).compose(events[0].event, count=steps)
    if p.statement.lattice is None:
        assert replay.get_epsilon(delta) == p.epsilon
    else:  # the dual variant's v noise is on the lattice: the rounded Gaussian + its slack
        assert variant == "dual" and 0.0 < 2 * p.statement.lattice.log_ratio < 1e-12
        assert lattice_statement(replay, p.statement.lattice, delta).epsilon == p.epsilon
    rdp = RDPAccountant(neighboring=neighboring).compose(events[0].event, count=steps)
    if accountant == "pld":  # RDP shown beside, never tighter
        assert p.statement.rdp_epsilon == pytest.approx(rdp.get_epsilon(delta), rel=1e-9)
        assert p.statement.rdp_epsilon > p.epsilon
    assert p.private and f"variant '{variant}'" in str(p) and f"{accountant} accountant" in str(p)
    hidden = {}
    if case == "dual-poisson":  # no noise on alpha, the default jitter (issue 20)
        hidden = dict(hidden_alpha=True, alpha_jitter=ALPHA_JITTER * sigma * C)
        assert "alpha: hidden" in p.noise and f"{ALPHA_JITTER:g} sigma C" in p.noise
    run = scd_train(
        X, t, key=key_from_seed(0), loss="squared", variant=variant, sampling=sampling,
        alpha=1e-2, batch_size=L, epochs=epochs, clip=C, noise_std=p.noise_std, **hidden,
    )  # fmt: skip
    np.testing.assert_array_equal(reg.coef_, run.coef)
    np.testing.assert_array_equal(reg.diagnostics_.dual_coef, run.dual_coef)


def test_dual_poisson_noise_is_sigma_c_on_v_only():
    """Algorithm 1 with Poisson batches and a hidden dual state (issue 20): noise
    N(0, sigma^2 C^2) on v only (sensitivity C; the paper's Lemma 1 has sqrt(2) C because it
    releases alpha too), the same sigma as before."""
    X, y, _ = _data(n=200, d=4, seed=3)
    with pytest.warns(LargeDeltaWarning, match="delta=0.001 is larger than 1/"):
        clf = DPSCDClassifier(
            epsilon=0.5, delta=1e-3, batch_size=20, epochs=2, clip=0.3, n_samples=200
        ).fit(X, y)
    p = clf.privacy_
    assert p.sensitivity == 0.3 and p.noise_std == pytest.approx(p.sigma * 0.3, rel=1e-15)
    assert p.sigma == calibrate_noise(0.5, 1e-3, q=0.1, steps=20)


@pytest.mark.parametrize("sampling", ["poisson", "fixed"])
def test_noise_multiplier_reports_epsilon(sampling):
    X, y, _ = _data(n=300, d=4, seed=2)
    clf = DPSCDClassifier(
        epsilon=None, noise_multiplier=1.3, delta=None, sampling=sampling, batch_size=15,
        epochs=2, seed=0, n_samples=300,
    ).fit(X, y)  # fmt: skip
    p = clf.privacy_
    accounted = "poisson" if sampling == "poisson" else "without_replacement"
    expected = epsilon_of_noise(1.3, DEFAULT_DELTA, q=15 / 300, steps=40, sampling=accounted, n=300)
    assert p.epsilon == pytest.approx(expected, rel=1e-9)  # + the lattice slack (~1e-13)
    assert p.delta == DEFAULT_DELTA  # delta=None: the one default, not a function of n
    assert p.sigma == 1.3
    sens = 1.0 if sampling == "poisson" else 2 * math.sqrt(2)  # Poisson: hidden alpha
    assert p.noise_std == pytest.approx(1.3 * sens * 0.5)


@pytest.mark.parametrize("variant", ["dual", "seq", "scd", "primal"])
def test_infinite_epsilon_is_plain_scd(variant):
    """epsilon = inf: no noise and no scaling (clip is passed to the trainer as 0)."""
    X, _, t = _data(n=80, d=3, seed=4)
    L = 2 if variant == "primal" else 10
    reg = DPSCDRegressor(
        epsilon=INF, variant=variant, batch_size=L, epochs=3, alpha=0.1, clip=0.01, seed=5
    ).fit(X, t)  # fmt: skip
    p = reg.privacy_
    assert not p.private and p.accountant == "none" and p.statement is None
    assert math.isinf(p.epsilon) and p.noise_std == 0.0 and p.clip == 0.0
    assert "not private" in str(p)
    run = scd_train(
        X, t, key=key_from_seed(5), variant=variant, batch_size=1 if variant == "scd" else L,
        epochs=3, alpha=0.1,
    )  # fmt: skip
    np.testing.assert_array_equal(reg.coef_, run.coef)
    assert reg.n_steps_ == run.n_steps


def test_paths_are_the_training_objectives():
    X, y, _ = _data(n=300, d=4, seed=7)
    clf = DPSCDClassifier(
        loss="hinge", epsilon=2.0, batch_size=5, epochs=3, alpha=0.01, seed=1, n_samples=300,
        diagnostics=True,
    ).fit(X, y)  # fmt: skip
    assert clf.n_steps_ == 180
    steps = clf.diagnostics_.objective_steps
    assert steps[-1] == clf.n_steps_ and np.all(np.diff(steps) > 0)
    assert (
        clf.diagnostics_.objective_path.shape
        == clf.diagnostics_.duality_gap_path.shape
        == steps.shape
    )
    last = objective(X, y, clf.coef_.ravel(), "hinge", 0.01)[0]
    assert clf.diagnostics_.objective_path[-1] == pytest.approx(last, rel=1e-12)
    gap = last - dual_objective(X, y, "hinge", 0.01, clf.diagnostics_.dual_coef)
    assert clf.diagnostics_.duality_gap_path[-1] == pytest.approx(
        gap, rel=1e-12
    )  # inf when outside
    few = clone(clf).set_params(record_every=60).fit(X, y)
    np.testing.assert_array_equal(few.diagnostics_.objective_steps, [60, 120, 180])
    # no noise: the gap is a true duality gap, >= 0 and shrinking
    plain = DPSCDRegressor(
        epsilon=INF, batch_size=5, epochs=5, alpha=0.05, seed=0, diagnostics=True
    )
    plain.fit(X, X @ [1.0, 2.0, 0.0, -1.0])
    gaps = plain.diagnostics_.duality_gap_path
    assert np.all(gaps >= -1e-12) and gaps[-1] < gaps[0]
    # primal variant: no dual variables
    with _private_bound():
        primal = DPSCDRegressor(variant="primal", batch_size=2, seed=0, diagnostics=True)
        primal.fit(X, y)
    assert primal.diagnostics_.dual_coef.size == 0 and np.all(
        np.isnan(primal.diagnostics_.duality_gap_path)
    )


# ---- oracles: privacy off, same objective as scikit-learn -----------------------------------
N_ORACLE, LAM_ORACLE = 200, 1e-2


def _oracle_data():
    return _data(n=N_ORACLE, d=5, seed=21)


def _check_oracle(model, X, target, loss, w_star):
    f_star = objective(X, target, w_star, loss, LAM_ORACLE)[0]
    w = np.asarray(model.coef_).ravel()
    assert model.diagnostics_.duality_gap_path[-1] < 1e-6
    assert abs(objective(X, target, w, loss, LAM_ORACLE)[0] - f_star) < 1e-6
    np.testing.assert_allclose(w, w_star, atol=1e-5)


ORACLE_RUNS = [("scd", 1, 100), ("dual", 10, 300)]  # variant, batch size, epochs


@pytest.mark.parametrize("variant, batch, epochs", ORACLE_RUNS)
def test_oracle_ridge(variant, batch, epochs):
    X, _, t = _oracle_data()
    ridge = Ridge(alpha=LAM_ORACLE * N_ORACLE, fit_intercept=False, tol=1e-14).fit(X, t)
    reg = DPSCDRegressor(
        epsilon=INF, variant=variant, sampling="fixed", batch_size=batch, epochs=epochs,
        alpha=LAM_ORACLE, seed=0, diagnostics=True,
    ).fit(X, t)  # fmt: skip
    _check_oracle(reg, X, t, "squared", ridge.coef_)
    np.testing.assert_allclose(reg.coef_, ridge.coef_, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("variant, batch, epochs", ORACLE_RUNS)
def test_oracle_linear_svc(variant, batch, epochs):
    X, y, _ = _oracle_data()
    svc = LinearSVC(
        loss="hinge", dual=True, C=1 / (LAM_ORACLE * N_ORACLE), fit_intercept=False, tol=1e-14,
        max_iter=10**7,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # liblinear may report max_iter; its answer is checked
        svc.fit(X, y)
    clf = DPSCDClassifier(
        loss="hinge", epsilon=INF, variant=variant, sampling="fixed", batch_size=batch,
        epochs=epochs, alpha=LAM_ORACLE, seed=0, diagnostics=True,
    ).fit(X, y)  # fmt: skip
    _check_oracle(clf, X, y, "hinge", svc.coef_.ravel())


@pytest.mark.parametrize("variant, batch, epochs", ORACLE_RUNS)
def test_oracle_logistic_regression(variant, batch, epochs):
    """The logistic dual starts at beta = 1e-4 (the clip of the Newton step)."""
    X, y, _ = _oracle_data()
    lr = LogisticRegression(
        C=1 / (LAM_ORACLE * N_ORACLE), fit_intercept=False, tol=1e-14, max_iter=100_000
    ).fit(X, y)
    clf = DPSCDClassifier(
        loss="log_loss", epsilon=INF, variant=variant, sampling="fixed", batch_size=batch,
        epochs=epochs, alpha=LAM_ORACLE, seed=0, diagnostics=True,
    ).fit(X, y)  # fmt: skip
    _check_oracle(clf, X, y, "log_loss", lr.coef_.ravel())
    np.testing.assert_allclose(clf.predict_proba(X)[:, 1], lr.predict_proba(X)[:, 1], atol=1e-6)


def test_oracle_with_intercept_column():
    """fit_intercept appends a column of value intercept_scaling whose weight is regularised:
    the same problem as Ridge without intercept on the augmented matrix."""
    X, _, t = _oracle_data()
    s = 0.5
    X = X * math.sqrt(1 - s**2)
    Xa = np.hstack([X, np.full((N_ORACLE, 1), s)])
    ridge = Ridge(alpha=LAM_ORACLE * N_ORACLE, fit_intercept=False, tol=1e-14).fit(Xa, t + 1.0)
    reg = DPSCDRegressor(
        epsilon=INF, variant="scd", epochs=100, alpha=LAM_ORACLE, fit_intercept=True,
        intercept_scaling=s, seed=0,
    ).fit(X, t + 1.0)  # fmt: skip
    w = np.append(reg.coef_, reg.intercept_ / s)
    np.testing.assert_allclose(w, ridge.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(reg.predict(X), Xa @ ridge.coef_, rtol=1e-9, atol=1e-12)


# ---- privacy audit of one DP-SCD step -----------------------------------------------------------
# Algorithm 1, one step (T = 1) on a fixed batch of all N = 3 rows (q = 1, so no amplification:
# the accountant's event is exactly GaussianEvent(sigma), i.e. (1/sigma)-GDP), M = 1, ridge with
# lambda = 1 (lambda N = 3), C = 1, alpha = v = 0: zeta_j = y_j / (1 + ||x_j||^2), scaled to
# |zeta_j| <= 1. D and D' differ in the label of row 0 (a replace-one pair): zeta_0 = +1 on D and
# -1 on D' (y_0 = +-5), the other rows are the same. The release (alpha_0, alpha_1, alpha_2, v)
# then moves by (-2, 0, 0, -2): norm 2 sqrt(2) C = the sensitivity used for fixed batches. The
# statistic u = ((1 - alpha_0) + (v_D - v)) / sqrt(2) / (2 sqrt(2)) -- the release projected on
# the unit direction of the difference, in units of the sensitivity -- is N(0, sigma^2) on D
# and N(1, sigma^2) on D' (the noise std is sigma times the sensitivity).
AUDIT_X = np.array([[1.0], [0.5], [-0.3]])
AUDIT_Y0 = np.array([5.0, 1.0, -1.0])
AUDIT_Y1 = np.array([-5.0, 1.0, -1.0])
AUDIT_V0 = 1.0 + 0.5 * (1.0 / 1.25) + (-0.3) * (-1.0 / 1.09)


def _audit_model(**kw) -> DPSCDRegressor:
    return DPSCDRegressor(
        sampling="fixed",
        batch_size=3,
        epochs=1,
        alpha=1.0,
        clip=1.0,
        delta=1e-3,
        diagnostics=True,
        target_bounds=(-5.0, 5.0),  # public, holds every target: y as given (issue 22)
        target_scale=False,
        **kw,
    )


def _audit_outputs(sigma: float, y: np.ndarray, seeds: range) -> np.ndarray:
    model = _audit_model(epsilon=None, noise_multiplier=sigma)
    out = []
    for seed in seeds:
        model.set_params(seed=seed).fit(AUDIT_X, y)
        v = model.coef_[0] * 3.0  # coef = v / (lambda N)
        out.append(((1.0 - model.diagnostics_.dual_coef[0]) + (AUDIT_V0 - v)) / 4.0)
    return np.array(out)


def test_audit_one_dual_step_fixed_batch():
    """Audit the (1/sigma)-GDP claim of one DP-SCD step with ``AUDIT_N`` fits per side, and a
    broken twin with half the noise (true mu = 2 / sigma) claiming the same.

    Power: at the threshold 1/2 the twin's error rates are ``Phi(-1/sigma)`` (sigma = 0.904 for
    epsilon 4), so ``AUDIT_N = 500`` fits per side refute it with probability
    ``A.gaussian_dp_audit_power(...)`` = 0.9999999 (GDP lower bound 1.54 at the expected counts
    against the claim 1.11; 1.87 with 2,000 fits per side, the former size). A correct step fails
    with probability at most ``AUDIT_ALPHA``."""
    claim = _audit_model(epsilon=4.0, seed=0).fit(AUDIT_X, AUDIT_Y0).privacy_
    sigma = claim.sigma
    assert claim.steps == 1 and claim.sampling_rate == 1.0
    assert claim.sensitivity == pytest.approx(2 * math.sqrt(2))
    # the (epsilon, delta) claim follows from mu-GDP with mu = 1/sigma (exact conversion):
    mu = 1 / sigma
    e = claim.epsilon
    delta_mu = ndtr(-e / mu + mu / 2) - math.exp(e) * ndtr(-e / mu - mu / 2)
    assert delta_mu <= claim.delta
    n = AUDIT_N
    assert A.gaussian_dp_audit_power(ndtr(-mu), ndtr(-mu), n, n, mu) >= 0.9999
    # calibrated fit == fit with the same noise multiplier
    same = _audit_model(epsilon=None, noise_multiplier=sigma, seed=0).fit(AUDIT_X, AUDIT_Y0)
    calibrated = _audit_model(epsilon=4.0, seed=0).fit(AUDIT_X, AUDIT_Y0)
    np.testing.assert_array_equal(same.coef_, calibrated.coef_)
    np.testing.assert_array_equal(same.diagnostics_.dual_coef, calibrated.diagnostics_.dual_coef)
    noiseless = _audit_model(epsilon=INF).fit(AUDIT_X, AUDIT_Y0)
    assert noiseless.diagnostics_.dual_coef[0] == 2.5  # not scaled at epsilon = inf
    o0 = _audit_outputs(sigma, AUDIT_Y0, range(n))
    o1 = _audit_outputs(sigma, AUDIT_Y1, range(n, 2 * n))
    tol = 5 * sigma / math.sqrt(n)  # 5 standard errors of a mean
    assert abs(np.mean(o0)) < tol and abs(np.mean(o1) - 1.0) < tol
    assert np.std(o0) == pytest.approx(sigma, rel=5 / math.sqrt(2 * n))
    result = A.audit_gaussian_dp(o0, o1, 1.0, sigma, alpha=AUDIT_ALPHA)
    assert result.passed, str(result)
    # broken: half the noise (e.g. the add/remove sensitivity sqrt(2) C used with fixed batches)
    b0 = _audit_outputs(sigma / 2, AUDIT_Y0, range(10**6, 10**6 + n))
    b1 = _audit_outputs(sigma / 2, AUDIT_Y1, range(2 * 10**6, 2 * 10**6 + n))
    broken = A.audit_gaussian_dp(b0, b1, 1.0, sigma, alpha=AUDIT_ALPHA)
    assert not broken.passed, str(broken)


# ---- labels, prediction, sklearn API ----------------------------------------------------------
def test_any_two_labels_and_prediction():
    X, y, _ = _data(n=200, d=4, seed=9)
    labels = np.where(y > 0, "spam", "ham")
    kw = dict(epsilon=INF, variant="scd", epochs=20, alpha=1e-2, seed=0, diagnostics=True)
    clf = DPSCDClassifier(**kw, classes=["ham", "spam"]).fit(X, labels)
    assert clf.classes_.tolist() == ["ham", "spam"]
    assert clf.coef_.shape == (1, 4) and clf.intercept_.shape == (1,)
    assert clf.n_features_in_ == 4 and clf.diagnostics_.dual_coef.shape == (200,)
    ref = DPSCDClassifier(**kw).fit(X, y)
    np.testing.assert_array_equal(clf.coef_, ref.coef_)  # classes_[1] is +1
    dec = clf.decision_function(X)
    np.testing.assert_array_equal(clf.predict(X), np.where(dec > 0, "spam", "ham"))
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-dec)))
    assert clf.score(X, labels) > 0.8
    hinge = DPSCDClassifier(loss="hinge", **kw, classes=["ham", "spam"]).fit(X, labels)
    assert not hasattr(hinge, "predict_proba")
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :3])
    reg = DPSCDRegressor(**kw).fit(X, y)
    assert reg.coef_.shape == (4,) and reg.intercept_ == 0.0
    np.testing.assert_allclose(reg.predict(X), X @ reg.coef_)


def test_seed_reproducibility():
    X, y, _ = _data(n=100, d=3, seed=1)
    a = DPSCDClassifier(batch_size=10, seed=7).fit(X, y).coef_
    b = DPSCDClassifier(batch_size=10, seed=7).fit(X, y).coef_
    c = DPSCDClassifier(batch_size=10, seed=8).fit(X, y).coef_
    d = DPSCDClassifier(batch_size=10).fit(X, y).coef_  # key from the operating system
    e = DPSCDClassifier(batch_size=10).fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c) and not np.array_equal(d, e)


def test_clip_rows_projects_onto_the_unit_ball():
    X, _, t = _data(n=60, d=3, seed=3)
    X[5] *= 4.0
    X[17] *= 2.5
    projected = X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    with _private_bound():
        a = DPSCDRegressor(clip_rows=True, batch_size=10, seed=2).fit(X, t)
    with _private_bound():
        b = DPSCDRegressor(batch_size=10, seed=2).fit(projected, t)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    s = 0.6  # with an intercept column the rows are projected onto sqrt(1 - s^2)
    c = DPSCDRegressor(clip_rows=True, fit_intercept=True, intercept_scaling=s, batch_size=10)
    with _private_bound():
        c.set_params(seed=2).fit(X, t)
    inner = X * np.minimum(1.0, math.sqrt(1 - s**2) / np.linalg.norm(X, axis=1, keepdims=True))
    d = DPSCDRegressor(fit_intercept=True, intercept_scaling=s, batch_size=10, seed=2)
    with _private_bound():
        d.fit(inner, t)
    np.testing.assert_allclose(c.coef_, d.coef_, rtol=1e-12)
    assert c.intercept_ == pytest.approx(d.intercept_, rel=1e-12)


def test_get_set_params_and_clone():
    clf = DPSCDClassifier(loss="hinge", epsilon=2.0, batch_size=32, seed=3)
    params = clf.get_params()
    assert params["loss"] == "hinge" and params["batch_size"] == 32
    assert set(params) >= {
        "epsilon", "delta", "noise_multiplier", "variant", "sampling", "clip", "alpha",
        "epochs", "clip_rows", "fit_intercept", "n_threads", "seed", "backend",
    }  # fmt: skip
    assert params["delta"] is None and params["variant"] == "dual"  # None: DEFAULT_DELTA
    clf.set_params(epochs=4, variant="seq")
    assert clf.epochs == 4 and clf.variant == "seq"
    twin = clone(clf)
    assert twin.get_params() == clf.get_params() and twin is not clf
    assert clone(DPSCDRegressor(clip=0.25)).get_params()["clip"] == 0.25
    X, y, _ = _data(n=80, d=3)
    fitted = DPSCDClassifier(batch_size=10, seed=1).fit(X, y)
    assert isinstance(fitted.privacy_, DPSCDPrivacy)
    assert not hasattr(clone(fitted), "coef_")


# check_regressors_train needs R^2 > 0.5 on unnormalised rows (norm ~3); clip_rows=True projects
# each of them onto the unit ball, a different regression problem (the row-norm precondition of
# Lemma 1 is the reason, not a bug).
_REGRESSOR_XFAIL = {
    "check_regressors_train": "clip_rows=True projects the check's unnormalised rows onto the "
    "unit ball (Lemma 1 needs ||x_i|| <= 1), which changes the regression problem"
}


@pytest.mark.parametrize(
    "make, xfail",
    [
        (
            lambda: DPSCDClassifier(
                epsilon=INF, clip_rows=True, batch_size=5, seed=0, classes=None
            ),
            None,
        ),
        (
            lambda: DPSCDClassifier(
                epsilon=10.0, clip_rows=True, batch_size=10, alpha=1e-2, seed=0, classes=None
            ),
            None,
        ),
        (lambda: DPSCDRegressor(clip_rows=True, batch_size=5, seed=0), _REGRESSOR_XFAIL),
    ],
)
def test_sklearn_check_estimator(make, xfail):
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "expected_failed_checks" in inspect.signature(check_estimator).parameters:
            check_estimator(make(), expected_failed_checks=xfail)  # scikit-learn >= 1.6
            return
        for estimator, check in check_estimator(make(), generate_only=True):
            if getattr(check, "func", check).__name__ not in (xfail or {}):
                check(estimator)


# ---- bad input ------------------------------------------------------------------------------
def test_row_norm_above_one_is_rejected():
    X, y, _ = _data(n=30, d=3, seed=0)
    X[3] *= 3.0 / np.linalg.norm(X[3])
    X[7] *= 2.0 / np.linalg.norm(X[7])
    msg = r"row 3 of X has L2 norm > 1 \(the first such row; its norm .*Lemma 1.*clip_rows=True"
    for variant in ("dual", "primal"):
        with pytest.raises(ValueError, match=msg):
            DPSCDClassifier(variant=variant, batch_size=2).fit(X, y)
    with pytest.raises(ValueError, match=msg):
        DPSCDRegressor(batch_size=5).fit(sp.csr_matrix(X), y)
    with pytest.raises(ValueError, match="row 3"):
        DPSCDClassifier(epsilon=INF, variant="scd").fit(X, y)  # the same code path
    DPSCDClassifier(clip_rows=True, batch_size=5).fit(X, y)
    Z = np.array([[0.9, 0.0], [0.0, 0.5], [0.3, 0.3]])
    with pytest.raises(ValueError, match=r"row 0 of X has L2 norm > sqrt\(1 - intercept"):
        DPSCDClassifier(fit_intercept=True, batch_size=1, classes=(0, 1)).fit(Z, [0, 1, 1])


def test_bad_labels():
    X, y, _ = _data(n=30, d=3)
    with pytest.raises(ValueError, match="at least 2 classes; y holds 1 class .the labels read"):
        DPSCDClassifier(batch_size=5, classes=None).fit(X, np.ones(30))
    # three classes: one-vs-rest (tests/test_linear_edges.py)
    three = DPSCDClassifier(batch_size=5, seed=0, classes=(0, 1, 2))
    assert three.fit(X, np.arange(30) % 3).coef_.shape == (3, 3)
    with pytest.raises(ValueError, match="Unknown label type"):
        DPSCDClassifier(batch_size=5, classes=None).fit(X, np.linspace(0, 1, 30))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        DPSCDClassifier(batch_size=5, classes=None).fit(X, y[:-1])


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input(bad):
    X, y, t = _data(n=30, d=3)
    X[4, 1] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        DPSCDClassifier(batch_size=5).fit(X, y)
    with pytest.raises(ValueError, match="NaN|infinity"):
        DPSCDClassifier(batch_size=5).fit(sp.csr_matrix(X), y)
    X[4, 1] = 0.0
    t[2] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        DPSCDRegressor(batch_size=5).fit(X, t)


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(batch_size=31, sampling="fixed"), re.escape("batch_size (31) must be <= n_sam")),
        (dict(batch_size=31, n_samples=30), re.escape("batch_size (31) must be <= n_samples")),
        (dict(n_samples=29), "n_samples=29 was declared"),
        (dict(variant="primal", batch_size=4), re.escape("batch_size (4) must be <= the num")),
        (dict(clip=0.0), "needs clip > 0"),
        (dict(clip=-1.0), re.escape("clip must be 0 (no clipping) or in")),
        (dict(clip=np.inf), re.escape("clip must be 0 (no clipping) or in")),
        (dict(alpha=0.0), "alpha must be in"),
        (dict(alpha=-1e-3), "alpha must be in"),
        (dict(alpha=np.inf), "alpha must be in"),
        (dict(alpha=1e300), "alpha must be in"),
        (dict(alpha=1e-320), "alpha must be in"),
        (dict(epsilon=1e126), "epsilon must be <="),
        (dict(epsilon=None, noise_multiplier=1e-300), "noise_multiplier must lie in"),
        (dict(epsilon=None, noise_multiplier=1e300), "noise_multiplier must lie in"),
        (dict(variant="scd"), "variant='scd' is the non-private SDCA baseline"),
        (dict(variant="scd", epsilon=None, noise_multiplier=1.0), "non-private SDCA"),
        (dict(variant="seq"), "variant='seq' with sampling='poisson' cannot be made private"),
        (dict(variant="primal", loss="hinge", batch_size=2), "squared and logistic losses"),
        (dict(epsilon=0.0), "epsilon must be > 0"),
        (dict(epsilon=-1.0), "epsilon must be > 0"),
        (dict(epsilon=np.nan), "epsilon must be > 0"),
        (dict(delta=0.0), re.escape("delta must lie in (0, 1)")),
        (dict(delta=1.0), re.escape("delta must lie in (0, 1)")),
        (dict(epsilon=None), "epsilon is None: give epsilon or noise_multiplier"),
        (dict(noise_multiplier=1.0), "not both: set epsilon=None"),
        (dict(epsilon=None, noise_multiplier=0.0), "noise_multiplier must lie in"),
        (dict(variant="sdca"), "variant must be one of"),
        (dict(sampling="shuffle"), "sampling must be one of"),
        (dict(loss="squared"), "loss must be one of"),
        (dict(backend="gpu"), "backend must be one of"),
        (dict(fit_intercept=True, intercept_scaling=1.0), "intercept_scaling must be < 1"),
        (dict(epochs=0), "epochs must lie in"),
        (dict(batch_size=0), "batch_size must lie in"),
        (dict(record_every=0), "record_every must lie in"),
        (dict(alpha_jitter=-0.1), "alpha_jitter must lie in"),
        (dict(alpha_jitter=np.nan), "alpha_jitter must lie in"),
        (dict(alpha_jitter=101.0), "alpha_jitter must lie in"),
    ],
)
def test_bad_parameters_raise_value_error(params, match):
    X, y, _ = _data(n=30, d=3)
    kw = {"batch_size": 5, **params}
    with pytest.raises(ValueError, match=match):
        DPSCDClassifier(**kw).fit(X, y)


@pytest.mark.parametrize(
    "params",
    [
        dict(batch_size=2.5),
        dict(epochs="3"),
        dict(epsilon="1"),
        dict(clip="0.5"),
        dict(fit_intercept="yes"),
        dict(clip_rows=1),
        dict(seed=1.5),
        dict(alpha_jitter="0.5"),
    ],
)
def test_bad_parameter_types_raise_type_error(params):
    X, y, _ = _data(n=30, d=3)
    with pytest.raises(TypeError):
        DPSCDClassifier(**{"batch_size": 5, **params}).fit(X, y)


def test_regressor_bad_input():
    X, _, t = _data(n=30, d=3)
    with pytest.raises(ValueError, match="batch_size"):
        DPSCDRegressor(sampling="fixed").fit(X, t)  # batch_size=100 > 30 (n public)
    # Poisson batches with a private size: no error that would reveal n < 100 (q = min(1, L/n~))
    with _private_bound():
        assert DPSCDRegressor(seed=0).fit(X, t).privacy_.sampling_rate <= 1.0
    with pytest.raises(ValueError, match="needs clip > 0"):
        DPSCDRegressor(clip=0.0, batch_size=5).fit(X, t)
    with pytest.raises(ValueError, match="2-D|2D"):
        DPSCDRegressor(batch_size=5).fit(X[:, 0], t)
    DPSCDRegressor(clip=0.0, epsilon=INF, batch_size=5).fit(X, t)  # clip unused without privacy


# ---- the hidden dual state (issue 20) -----------------------------------------------------------
def test_hidden_dual_v_noise_has_std_sigma_c():
    """(a) The whole estimator, dual variant with Poisson batches: v's noise per coordinate and
    step has std sigma C (sensitivity C), not sqrt(2) sigma C (Lemma 1's [alpha; v]). Zero rows
    make every update move v by 0, so v after T steps is the sum of T noise draws."""
    n, d, C = 400, 800, 0.2
    X, t = np.zeros((n, d)), np.zeros(n)
    reg = DPSCDRegressor(
        epsilon=1.0, delta=1e-5, batch_size=40, epochs=1, clip=C, alpha=1e-2, n_samples=n, seed=3,
        target_bounds=(-1.0, 1.0), target_scale=False,  # public (issue 22): v as trained
    ).fit(X, t)  # fmt: skip
    p = reg.privacy_
    assert p.sensitivity == C and p.steps == 10
    v = reg.coef_ * (1e-2 * n)  # coef = v / (lambda N)
    ratio = v.std() / (math.sqrt(p.steps) * p.sigma * C)
    assert abs(ratio - 1.0) < 0.12, ratio  # 800 coordinates: standard error about 2.5%
    assert ratio < 0.85 * math.sqrt(2.0)  # far from the old sqrt(2)


def _arrays(obj, seen=None, depth=0):
    """Every ndarray reachable from ``obj`` through attributes, dataclass fields, tuples,
    lists and dicts (a few levels)."""
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 5:
        return
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        yield obj
    elif isinstance(obj, (tuple, list)):
        for item in obj:
            yield from _arrays(item, seen, depth + 1)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _arrays(item, seen, depth + 1)
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        for item in vars(obj).values():
            yield from _arrays(item, seen, depth + 1)


@pytest.mark.parametrize("backend", ["core", "reference"])
def test_fitted_estimator_holds_no_dual_variables_without_diagnostics(backend):
    """(b) alpha is never released: a fitted estimator holds nothing of length n (the dual
    variables, or anything per example) unless diagnostics=True, whose diagnostics_ is marked
    not private and changes nothing released."""
    n = 151
    X, y, _ = _data(n=n, d=4, seed=8)
    kw = dict(loss="hinge", epsilon=1.0, batch_size=15, n_samples=n, seed=2, backend=backend)
    clf = DPSCDClassifier(**kw).fit(X, y)
    assert not hasattr(clf, "diagnostics_")
    sizes = [a.shape for a in _arrays(clf)]
    assert sizes and all(n not in shape for shape in sizes), sizes
    diag = DPSCDClassifier(diagnostics=True, **kw).fit(X, y)
    assert diag.diagnostics_.not_private and diag.diagnostics_.dual_coef.shape == (n,)
    np.testing.assert_array_equal(diag.coef_, clf.coef_)
    np.testing.assert_array_equal(diag.intercept_, clf.intercept_)


@pytest.mark.parametrize("train", [scd_train, scd_train_ref], ids=["core", "reference"])
def test_hidden_alpha_gets_no_noise_and_jitter_only_at_visits(train):
    """hidden_alpha: no per-step noise on alpha (the hinge dual variables stay in their box
    y_j alpha_j in [0, 1], unvisited rows keep alpha_j = 0); alpha_jitter perturbs only the
    visited rows; the lazy noise of the other variants reaches every row."""
    X, y, _ = _data(n=300, d=4, seed=5)
    kw = dict(loss="hinge", alpha=1e-2, batch_size=3, steps=20, clip=0.2, noise_std=0.3,
              key=key_from_seed(1))  # fmt: skip
    hidden = train(X, y, hidden_alpha=True, **kw)
    b = y * hidden.dual_coef
    assert np.all((b >= 0.0) & (b <= 1.0))
    visited = hidden.dual_coef != 0.0
    assert 0 < visited.sum() < 100  # about 60 of 300 rows sampled
    jittered = train(X, y, hidden_alpha=True, alpha_jitter=0.05, **kw)
    np.testing.assert_array_equal(jittered.dual_coef[~visited], 0.0)
    assert np.all(jittered.dual_coef[visited] != hidden.dual_coef[visited])
    lazy = train(X, y, **kw)  # the default: fresh noise on every alpha_j every step
    assert np.all(lazy.dual_coef != 0.0)
    # the released v differs only through the noise on alpha (same v noise draws)
    assert not np.array_equal(hidden.v, lazy.v)


@pytest.mark.parametrize("sampling", ["poisson", "fixed"])
def test_alpha_jitter_core_matches_reference_seq_and_fixed(sampling):
    """(c) The jitter in the sequential and fixed-batch variants (trainer level, on top of
    their lazy per-step noise): core and reference agree at rtol 1e-10."""
    X, y, _ = _data(n=90, d=5, seed=6)
    for variant in ("dual", "seq"):
        kw = dict(loss="log_loss", variant=variant, sampling=sampling, alpha=1e-2,
                  batch_size=9, epochs=2, clip=0.3, noise_std=0.2, alpha_jitter=0.07,
                  key=key_from_seed(9))  # fmt: skip
        a, b = scd_train(X, y, **kw), scd_train_ref(X, y, **kw)
        np.testing.assert_allclose(a.v, b.v, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(a.dual_coef, b.dual_coef, rtol=RTOL, atol=ATOL)
        off = scd_train(X, y, **{**kw, "alpha_jitter": 0.0})
        assert not np.allclose(off.dual_coef, a.dual_coef)


@pytest.mark.parametrize("train", [scd_train, scd_train_ref], ids=["core", "reference"])
@pytest.mark.parametrize(
    "params, match",
    [
        (dict(variant="seq", hidden_alpha=True), "hidden_alpha .* needs variant 'dual'"),
        (dict(sampling="fixed", hidden_alpha=True), "hidden_alpha .* needs variant 'dual'"),
        (dict(variant="primal", alpha_jitter=0.1, batch_size=2), "alpha_jitter needs variant"),
        (dict(alpha_jitter=-1.0), "alpha_jitter must lie in"),
        (dict(alpha_jitter=2e12), "alpha_jitter must lie in"),
    ],
)
def test_hidden_alpha_and_jitter_validation(train, params, match):
    X, y, _ = _data(n=30, d=3)
    kw = {"loss": "log_loss", "batch_size": 5, "clip": 0.1, "noise_std": 0.1, **params}
    with pytest.raises(ValueError, match=match):
        train(X, y, key=key_from_seed(0), **kw)
    with pytest.raises(TypeError, match="hidden_alpha must be a bool"):
        train(X, y, key=key_from_seed(0), batch_size=5, hidden_alpha=1)


def test_core_refuses_hidden_alpha_outside_the_poisson_dual():
    """The kernel itself (without the Python checks) refuses hidden_alpha for seq / fixed."""
    X, _, t = _data(n=20, d=3)
    args = ("squared", "seq", True, 0.1, 5, 1, 0, 0.1, 0.1, key_from_seed(0), 1, 2, 0, 1)
    with pytest.raises(ValueError, match="hidden_alpha"):
        _core.scd_train_dense(X, t, *args, hidden_alpha=True)
