"""The exact power of an audit (:func:`privlearn.audit.pure_dp_audit_power`,
:func:`privlearn.audit.gaussian_dp_audit_power`): the probability that the audit refutes the
claim, for given event probabilities and numbers of draws. Checked against a brute-force sum
over every pair of counts (the audit functions themselves on each pair) and against
simulation; the audits of this suite size themselves with these functions (issue 32, item 4).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import ndtr

from privlearn import audit as A


def _brute_pure(p0, p1, n0, n1, eps, delta, alpha, symmetric):  # type: ignore[no-untyped-def]
    """Sum of P(K0 = a) P(K1 = b) over the pairs the audit itself refutes."""
    total = 0.0
    for a in range(n0 + 1):
        for b in range(n1 + 1):
            res = A.audit_pure_dp(
                np.arange(n0) < a,
                np.arange(n1) < b,
                lambda o: o,
                eps,
                delta,
                alpha,
                symmetric=symmetric,
            )
            if not res.passed:
                total += stats.binom.pmf(a, n0, p0) * stats.binom.pmf(b, n1, p1)
    return total


@pytest.mark.parametrize(
    "p0, p1, n0, n1, eps, delta, alpha, symmetric",
    [
        (0.5, math.exp(-1.0) / 2, 30, 25, 0.5, 0.0, 0.05, True),
        (0.3, 0.05, 20, 30, 0.4, 0.01, 0.1, True),
        (0.1, 0.6, 25, 25, 0.3, 0.0, 0.05, False),
        (0.1, 0.6, 25, 25, 0.3, 0.0, 0.05, True),
        (0.0, 1.0, 10, 12, 0.2, 0.0, 0.2, True),
    ],
)
def test_pure_dp_power_equals_the_sum_over_all_counts(p0, p1, n0, n1, eps, delta, alpha, symmetric):
    power = A.pure_dp_audit_power(p0, p1, n0, n1, eps, delta, alpha, symmetric=symmetric)
    assert power == pytest.approx(
        _brute_pure(p0, p1, n0, n1, eps, delta, alpha, symmetric), abs=1e-12
    )


def _brute_gdp(fpr, fnr, n0, n1, mu, alpha):  # type: ignore[no-untyped-def]
    total = 0.0
    for fp in range(n0 + 1):
        for fn in range(n1 + 1):
            out0 = np.where(np.arange(n0) < fp, 1.0, 0.0)  # above the threshold 1/2: positives
            out1 = np.where(np.arange(n1) < fn, 0.0, 1.0)  # at or below it: false negatives
            if not A.audit_gaussian_dp(out0, out1, 1.0, 1.0 / mu, alpha=alpha).passed:
                total += stats.binom.pmf(fp, n0, fpr) * stats.binom.pmf(fn, n1, fnr)
    return total


@pytest.mark.parametrize(
    "fpr, fnr, n0, n1, mu, alpha",
    [(ndtr(-1.0), ndtr(-1.0), 30, 30, 1.0, 0.05), (0.2, 0.35, 25, 40, 0.5, 0.1)],
)
def test_gaussian_power_equals_the_sum_over_all_counts(fpr, fnr, n0, n1, mu, alpha):
    power = A.gaussian_dp_audit_power(fpr, fnr, n0, n1, mu, alpha)
    assert power == pytest.approx(_brute_gdp(fpr, fnr, n0, n1, mu, alpha), abs=1e-12)


def test_power_matches_simulated_audits():
    """Large n (the vectorised path): the exact power against 2,000 simulated audits."""
    rng = np.random.default_rng(7)
    n, eps, alpha, reps = 300, 0.5, 0.01, 2000
    p0, p1 = 0.5, math.exp(-1.0) / 2
    power = A.pure_dp_audit_power(p0, p1, n, n, eps, alpha=alpha)
    hits = 0
    for a, b in zip(rng.binomial(n, p0, reps), rng.binomial(n, p1, reps)):
        hits += not A.audit_pure_dp(
            np.arange(n) < a, np.arange(n) < b, lambda o: o, eps, 0.0, alpha
        ).passed
    assert 0.3 < power < 0.9  # an informative case, neither certain nor hopeless
    assert abs(hits / reps - power) < 5 * math.sqrt(power * (1 - power) / reps)


def test_power_is_small_for_a_kept_claim_and_grows_with_the_draws():
    # a mechanism exactly at its claim: false-failure probability at most 2 alpha
    p0, p1 = 0.5, math.exp(-1.0) / 2
    for n in (100, 1000, 5000):
        assert A.pure_dp_audit_power(p0, p1, n, n, 1.0, alpha=1e-3) <= 2e-3
        assert A.gaussian_dp_audit_power(ndtr(-0.5), ndtr(-0.5), n, n, 1.0, 1e-3) <= 1e-3
    # twice the claim: the power grows with the draws
    q = math.exp(-2.0) / 2
    powers = [A.pure_dp_audit_power(0.5, q, n, n, 1.0) for n in (200, 500, 1000, 2000)]
    assert powers == sorted(powers) and powers[0] < 0.5 < 0.9997 < powers[-1]


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: A.pure_dp_audit_power(1.5, 0.1, 10, 10, 1.0), ValueError, "p0"),
        (lambda: A.pure_dp_audit_power(0.5, -0.1, 10, 10, 1.0), ValueError, "p1"),
        (lambda: A.pure_dp_audit_power(0.5, 0.1, 0, 10, 1.0), ValueError, "n0"),
        (lambda: A.pure_dp_audit_power(0.5, 0.1, 10, 10**8, 1.0), ValueError, "n1"),
        (lambda: A.pure_dp_audit_power(0.5, 0.1, 10.0, 10, 1.0), TypeError, "n0"),
        (lambda: A.pure_dp_audit_power(0.5, 0.1, 10, 10, -1.0), ValueError, "epsilon_claim"),
        (lambda: A.pure_dp_audit_power(0.5, 0.1, 10, 10, 1.0, 1.0), ValueError, "delta"),
        (lambda: A.pure_dp_audit_power(0.5, 0.1, 10, 10, 1.0, alpha=0.0), ValueError, "alpha"),
        (lambda: A.gaussian_dp_audit_power(0.5, 2.0, 10, 10, 1.0), ValueError, "fnr"),
        (lambda: A.gaussian_dp_audit_power(0.5, 0.5, 10, True, 1.0), TypeError, "n1"),
        (lambda: A.gaussian_dp_audit_power(0.5, 0.5, 10, 10, math.inf), ValueError, "mu_claim"),
    ],
)
def test_power_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
