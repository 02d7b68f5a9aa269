"""Privacy audits: every mechanism passes an audit of its stated guarantee on neighbouring
inputs, and the audit catches a deliberately broken version (half the required noise).

Each audit uses fixed seeds, so the tests are deterministic. For a seed chosen at random, a
correct mechanism fails a pure-DP audit with probability at most ``2 alpha = 2e-6`` (symmetric
test) and a GDP audit with probability at most ``alpha = 1e-6``. Sample sizes: 2,000 draws per
side for the Laplace-type and Gaussian mechanisms; 20,000 for the exponential mechanism and the
3-dimensional L2 Laplace, whose worst-case events are rarer (their ``epsilon`` is attained only
in a limit), so the Clopper-Pearson bounds need more draws to separate ``epsilon`` from
``2 epsilon``.
"""

from __future__ import annotations

import math
from dataclasses import FrozenInstanceError

import numpy as np
import pytest
from scipy import stats

from privlearn import audit as A
from privlearn import mechanisms as M

ALPHA = 1e-6
N = 2000
N_LARGE = 20000
EPSILONS = [0.5, 1.0, 2.0]


def _pair(release, n: int, neighbour_value: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Independent draws on ``D`` (value 0) and ``D'`` (value ``Delta = 1``)."""
    return release(np.zeros(n), 101), release(np.full(n, neighbour_value), 202)


# Laplace-type mechanisms with Delta = 1: release(values, epsilon, seed) and a fixed event.
# The events are chosen from the mechanism's form before looking at any draw: for noise around
# 0 vs 1 the privacy loss is largest in the tails, ``output > 1`` (``> 1/2`` on the snapping
# grid, whose step can exceed 1).
PURE = {
    "snapping": (lambda v, e, s: M.laplace(v, 1.0, e, seed=s), A.ThresholdEvent(0.5)),
    "textbook": (lambda v, e, s: M.laplace(v, 1.0, e, seed=s, secure=False), A.ThresholdEvent(1.0)),
    "discrete_laplace": (
        lambda v, e, s: M.discrete_laplace(v.astype(np.int64), 1.0 / e, seed=s),
        A.ThresholdEvent(0.5),
    ),
    "l2_laplace_1d": (
        lambda v, e, s: M.l2_laplace(v[:, None], 1.0, e, seed=s)[:, 0],
        A.ThresholdEvent(1.0),
    ),
}


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("name", sorted(PURE))
def test_pure_dp_mechanism_passes_and_broken_fails(name, epsilon):
    mechanism, event = PURE[name]
    o0, o1 = _pair(lambda v, s: mechanism(v, epsilon, s), N)
    result = A.audit_pure_dp(o0, o1, event, epsilon, alpha=ALPHA)
    assert result.passed, str(result)
    assert 0.0 <= result.epsilon_lower <= epsilon
    # broken: calibrated for 2 epsilon (half the noise) but claiming epsilon
    b0, b1 = _pair(lambda v, s: mechanism(v, 2 * epsilon, s), N)
    broken = A.audit_pure_dp(b0, b1, event, epsilon, alpha=ALPHA)
    assert not broken.passed, str(broken)
    assert broken.epsilon_lower > epsilon


def _cone(outputs: np.ndarray) -> np.ndarray:
    """Outputs at distance > 1 from 0 within the cone ``cos(angle to e1) > 0.9``: there the
    privacy loss of the L2 Laplace approaches ``0.9 epsilon``."""
    norm = np.linalg.norm(outputs, axis=1)
    return (outputs[:, 0] > 0.9 * norm) & (norm > 1.0)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_l2_laplace_3d_audit(epsilon):
    e1 = np.array([1.0, 0.0, 0.0])

    def draws(eps):
        return (
            M.l2_laplace(np.zeros((N_LARGE, 3)), 1.0, eps, seed=303),
            M.l2_laplace(np.tile(e1, (N_LARGE, 1)), 1.0, eps, seed=404),
        )

    result = A.audit_pure_dp(*draws(epsilon), _cone, epsilon, alpha=ALPHA)
    assert result.passed, str(result)
    broken = A.audit_pure_dp(*draws(2 * epsilon), _cone, epsilon, alpha=ALPHA)
    assert not broken.passed, str(broken)


@pytest.mark.parametrize("form", ["explicit", "remainder"])
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_exponential_mechanism_audit(epsilon, form):
    """Neighbouring score vectors (every score moves by at most Delta = 1): on D the target
    scores 0 and 8 others score 1; on D' the target scores 1 and the others 0. The event is
    "the target is selected"."""

    def draws(eps):
        if form == "explicit":
            d0 = M.exponential(np.r_[0.0, np.ones(8)], eps, 1.0, seed=505, size=N_LARGE)
            d1 = M.exponential(np.r_[1.0, np.zeros(8)], eps, 1.0, seed=606, size=N_LARGE)
        else:
            rem = math.log(8.0)
            d0 = M.exponential([0.0], eps, 1.0, seed=505, size=N_LARGE, remainder=(rem, 1.0))
            d1 = M.exponential([1.0], eps, 1.0, seed=606, size=N_LARGE, remainder=(rem, 0.0))
        return d0, d1

    def target(out):
        return out == 0

    result = A.audit_pure_dp(*draws(epsilon), target, epsilon, alpha=ALPHA)
    assert result.passed, str(result)
    # broken: the factor 2 of the exponent dropped (probabilities ∝ exp(eps * score / Delta)
    # for non-monotonic scores), i.e. calibrated for 2 epsilon
    broken = A.audit_pure_dp(*draws(2 * epsilon), target, epsilon, alpha=ALPHA)
    assert not broken.passed, str(broken)


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("method", ["lattice", "discrete"])
def test_gaussian_mechanism_gdp_audit(method, mu):
    sigma = 1.0 / mu

    def draws(s):
        return _pair(lambda v, seed: M.gaussian(v, 1.0, s, seed=seed, method=method), N)

    stated = M.gaussian_privacy(1.0, sigma, size=N)
    result = A.audit_gaussian_dp(
        *draws(sigma), stated.effective_sensitivity, sigma, threshold=0.5, alpha=ALPHA
    )
    assert result.passed, str(result)
    assert result.mu_claim == pytest.approx(stated.mu)
    broken = A.audit_gaussian_dp(
        *draws(sigma / 2), stated.effective_sensitivity, sigma, threshold=0.5, alpha=ALPHA
    )
    assert not broken.passed, str(broken)
    assert broken.mu_lower > stated.mu


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_split_selection_audit(epsilon):
    """The event is chosen on half of the draws and audited on the other half."""

    def draws(eps):
        return _pair(lambda v, s: M.laplace(v, 1.0, eps, seed=s), 2 * N)

    result, event = A.audit_pure_dp_split(*draws(epsilon), epsilon, alpha=ALPHA)
    assert result.passed, str(result)
    assert result.n0 == N and result.n1 == N
    assert isinstance(event, A.ThresholdEvent)
    broken, _ = A.audit_pure_dp_split(*draws(2 * epsilon), epsilon, alpha=ALPHA)
    assert not broken.passed, str(broken)


# ---- the audit machinery itself ---------------------------------------------------------------
def test_clopper_pearson_matches_scipy_exact_interval():
    for k, n in [(0, 50), (7, 50), (50, 50), (312, 2000)]:
        lo, hi = A.clopper_pearson(k, n, alpha=1e-3)
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=1 - 1e-3, method="exact")
        assert lo == pytest.approx(ci.low, abs=1e-12)
        assert hi == pytest.approx(ci.high, abs=1e-12)


def test_audit_pure_dp_formula_and_result_fields():
    o0 = np.r_[np.ones(100), np.zeros(900)]  # K0 = 100 of 1000
    o1 = np.r_[np.ones(600), np.zeros(400)]  # K1 = 600 of 1000

    def event(o):
        return o > 0.5

    result = A.audit_pure_dp(o0, o1, event, 1.0, alpha=1e-3)
    l1 = stats.beta.ppf(5e-4, 600, 401)
    u0 = stats.beta.isf(5e-4, 101, 900)
    assert result.k0 == 100 and result.k1 == 600 and result.n0 == result.n1 == 1000
    assert result.p1_lower == pytest.approx(l1) and result.p0_upper == pytest.approx(u0)
    assert result.epsilon_lower == pytest.approx(math.log(l1 / u0))
    assert result.passed == (l1 <= math.e * u0)
    assert not result.passed  # true ratio 6 > e
    text = str(result)
    assert "FAILED" in text and "600/1000" in text
    with pytest.raises(FrozenInstanceError):
        result.passed = True  # type: ignore[misc]
    # symmetric direction: swapping D and D' gives the same lower bound
    swapped = A.audit_pure_dp(o1, o0, event, 1.0, alpha=1e-3)
    assert swapped.epsilon_lower == pytest.approx(result.epsilon_lower)
    one_way = A.audit_pure_dp(o1, o0, event, 1.0, alpha=1e-3, symmetric=False)
    assert one_way.passed and one_way.epsilon_lower == 0.0
    # delta absorbs the excess
    assert A.audit_pure_dp(o0, o1, event, 1.0, delta=0.5, alpha=1e-3).passed


def test_audit_gaussian_formula():
    o0 = np.r_[np.ones(300), np.zeros(700)]  # FPR: 300 of 1000 above 0.5
    o1 = np.r_[np.zeros(200), np.ones(800)]  # FNR: 200 of 1000 at or below 0.5
    result = A.audit_gaussian_dp(o0, o1, 1.0, 4.0, alpha=1e-3)
    fpr = stats.beta.isf(5e-4, 301, 700)
    fnr = stats.beta.isf(5e-4, 201, 800)
    gap = stats.norm.ppf(1 - fpr) - stats.norm.ppf(fnr)
    assert result.mu_lower == pytest.approx(max(0.0, gap))
    assert result.passed == (gap <= 0.25)
    assert result.false_positives == 300 and result.false_negatives == 200
    assert "GDP audit" in str(result)


def test_select_threshold_event_picks_tail_event():
    rng = np.random.default_rng(0)
    x0 = rng.laplace(0.0, 1.0, 4000)
    x1 = rng.laplace(1.0, 1.0, 4000)
    event = A.select_threshold_event(x0, x1)
    assert (event.above and event.threshold > 0.0) or (not event.above and event.threshold < 1.0)
    assert event(np.array([-10.0, 10.0])).tolist() == [not event.above, event.above]
    vector_event = A.ThresholdEvent(0.0, coordinate=1)
    assert vector_event(np.array([[5.0, -1.0], [-5.0, 1.0]])).tolist() == [False, True]


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: A.audit_pure_dp([1.0], [1.0], lambda o: o > 0, -1.0), ValueError, "epsilon"),
        (
            lambda: A.audit_pure_dp([1.0], [1.0], lambda o: o > 0, 1.0, alpha=0.0),
            ValueError,
            "alpha",
        ),
        (
            lambda: A.audit_pure_dp([1.0], [1.0], lambda o: o > 0, 1.0, delta=1.0),
            ValueError,
            "delta",
        ),
        (lambda: A.audit_pure_dp([], [1.0], lambda o: o > 0, 1.0), ValueError, "outputs_d0"),
        (lambda: A.audit_pure_dp([1.0], [1.0], lambda o: [True, False], 1.0), ValueError, "event"),
        (lambda: A.audit_pure_dp([1.0], [1.0], "not callable", 1.0), TypeError, "event"),
        (lambda: A.audit_gaussian_dp([1.0], [1.0], 0.0, 1.0), ValueError, "sensitivity"),
        (lambda: A.audit_gaussian_dp([1.0], [1.0], 1.0, -1.0), ValueError, "sigma"),
        (lambda: A.audit_gaussian_dp([[1.0]], [1.0], 1.0, 1.0), ValueError, "outputs_d0"),
        (lambda: A.audit_pure_dp_split([1.0], [1.0], 1.0), ValueError, "too few"),
        (lambda: A.select_threshold_event([1.0], [1.0], candidates=[]), ValueError, "candidates"),
    ],
)
def test_audit_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
