"""Privacy accounting: published test vectors, independent oracles (numerical integration,
exact high-precision forward differences), agreement with Google's dp_accounting, properties
(hypothesis), the ledger's hard cap and bad input.

dp_accounting is a declared test dependency; the tests that need it skip cleanly without it.
"""

from __future__ import annotations

import decimal
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

from privlearn.accounting import (
    DEFAULT_ORDERS,
    BudgetExceededError,
    Composed,
    DisjointBatches,
    Event,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampled,
    PrivacyLedger,
    PrivacyStatement,
    PureDPAccountant,
    PureDPEvent,
    RDPAccountant,
    SampledWithoutReplacement,
    SelfComposed,
    UnsupportedEventError,
    advanced_composition,
    amplify_poisson,
    amplify_without_replacement,
    basic_composition,
    calibrate_laplace_scale,
    calibrate_sigma,
    epsilon_for_sigma,
    epsilon_pld,
    parallel_composition,
    rdp_gaussian,
    rdp_laplace,
    rdp_poisson_gaussian,
    rdp_pure_dp,
    rdp_to_delta,
    rdp_to_epsilon,
    rdp_without_replacement_gaussian,
    to_dp_accounting,
)
from privlearn.accounting import ledger as ledger_module

try:
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant as dpa_rdp
except ImportError:  # pragma: no cover - dp_accounting is a test dependency
    dp_accounting = None
    dpa_rdp = None

needs_dpa = pytest.mark.skipif(dp_accounting is None, reason="dp_accounting is not installed")

ORDERS = np.array(DEFAULT_ORDERS)
INT_ORDERS = ORDERS[ORDERS == np.floor(ORDERS)]
FRAC_ORDERS = ORDERS[ORDERS != np.floor(ORDERS)]


def poisson_epsilon(q, sigma, steps, delta=1e-5):
    acc = RDPAccountant().compose(PoissonSampled(q, GaussianEvent(sigma)), count=steps)
    return acc.get_epsilon_and_order(delta)


# ---- published test vectors (DESIGN.md) -----------------------------------------------------
@pytest.mark.parametrize(
    ("q", "sigma", "steps", "expected", "order"),
    [
        (0.01, 4.0, 10000, 1.0355, None),
        (0.01, 1.1, 10000, 5.6320, None),
        (256 / 60000, 1.1, 14063, 2.5967, None),
        (0.04, 1.5, 2250, 7.3291, 3.9),
        (1.0, 1.0, 1, 4.7285, None),
    ],
)
def test_rdp_test_vectors(q, sigma, steps, expected, order):
    eps, best = poisson_epsilon(q, sigma, steps)
    assert eps == pytest.approx(expected, rel=1e-3)
    if order is not None:
        assert best == pytest.approx(order)


def test_fractional_order_is_exact_not_absolute_sum():
    # the signed series; adding absolute values of the alternating terms gives 2.7267e-3
    assert rdp_poisson_gaussian(0.1, 2.0, 1.5) == pytest.approx(2.098935e-3, rel=1e-6)
    assert rdp_poisson_gaussian(0.1, 2.0, 1.5) == pytest.approx(2.0989345957101767e-3, rel=1e-10)


def test_without_replacement_test_vector():
    acc = RDPAccountant().compose(
        SampledWithoutReplacement(60000, 600, GaussianEvent(4.0)), count=10000
    )
    assert acc.get_epsilon(1e-5) == pytest.approx(2.2211, rel=1e-3)
    assert acc.neighboring == "replace_one"


def test_calibrate_sigma_test_vector():
    sigma = calibrate_sigma(1.0, 1e-5, q=0.01, steps=10000)
    assert sigma == pytest.approx(4.1258, abs=1e-3)
    assert epsilon_for_sigma(sigma, 1e-5, q=0.01, steps=10000) <= 1.0
    assert epsilon_for_sigma(sigma * (1 - 2e-4), 1e-5, q=0.01, steps=10000) > 1.0


@pytest.mark.parametrize(
    ("eps", "q", "steps", "sampling", "n"),
    [
        (8.0, 0.01, 10000, "poisson", None),
        (0.5, 0.04, 2250, "poisson", None),
        (2.0, 1.0, 10, "poisson", None),
        (1.0, 0.01, 10000, "without_replacement", 60000),
        (4.0, 256 / 60000, 14063, "without_replacement", 60000),
    ],
)
def test_calibrate_sigma_brackets_the_target(eps, q, steps, sampling, n):
    kw = dict(q=q, steps=steps, sampling=sampling, n=n)
    sigma = calibrate_sigma(eps, 1e-5, **kw)
    assert epsilon_for_sigma(sigma, 1e-5, **kw) <= eps
    assert epsilon_for_sigma(sigma * (1 - 2e-4), 1e-5, **kw) > eps


@needs_dpa
@pytest.mark.parametrize(
    ("q", "sigma", "steps", "expected"),
    [
        (0.01, 4.0, 10000, 0.9470),
        (0.01, 1.1, 10000, 5.1926),
        (256 / 60000, 1.1, 14063, 2.3818),
    ],
)
def test_pld_test_vectors(q, sigma, steps, expected):
    event = SelfComposed(PoissonSampled(q, GaussianEvent(sigma)), steps)
    assert epsilon_pld(event, 1e-5) == pytest.approx(expected, rel=1e-2)
    # and PLD is tighter than RDP
    assert epsilon_pld(event, 1e-5) < poisson_epsilon(q, sigma, steps)[0]


@needs_dpa
def test_pld_exact_gaussian():
    assert epsilon_pld(GaussianEvent(1.0), 1e-5) == pytest.approx(4.3772, rel=1e-3)


# ---- independent oracles ---------------------------------------------------------------------
def rdp_by_quadrature(q, sigma, alpha):
    """log(A_alpha)/(alpha-1) with A_alpha - 1 = E_mu0[(1 + x)^alpha - 1 - alpha x],
    x = q (mu1/mu0 - 1), integrated numerically (Mironov, Talwar, Zhang 2019, eq. for A_alpha)."""
    z0 = sigma * sigma * math.log(1 / q - 1) + 0.5
    norm = math.log(sigma * math.sqrt(2 * math.pi))

    def f(z):
        x = q * math.expm1((2 * z - 1) / (2 * sigma * sigma))
        log_phi = -0.5 * (z / sigma) ** 2 - norm
        big = alpha * math.log1p(x)
        if big > 30.0:  # avoid overflow; the subtracted terms are then negligible
            return math.exp(big + log_phi) - alpha * x * math.exp(log_phi)
        return math.exp(log_phi) * max(math.expm1(big) - alpha * x, 0.0)

    pts = sorted({-40 * sigma, 0.0, z0, alpha, 40 * sigma + alpha})
    total = sum(
        integrate.quad(f, lo, hi, epsabs=0, epsrel=1e-13, limit=200)[0]
        for lo, hi in zip(pts[:-1], pts[1:])
    )
    return math.log1p(total) / (alpha - 1)


@pytest.mark.parametrize("q", [1e-3, 0.01, 0.1, 0.5])
@pytest.mark.parametrize("sigma", [0.7, 1.1, 2.0, 5.0])
def test_poisson_rdp_matches_numerical_integration(q, sigma):
    alphas = [1.1, 1.5, 2.0, 2.5, 4.7, 7.3, 10.0]
    mine = rdp_poisson_gaussian(q, sigma, alphas)
    ref = np.array([rdp_by_quadrature(q, sigma, a) for a in alphas])
    np.testing.assert_allclose(mine, ref, rtol=1e-9)


def wor_bound_exact(gamma, sigma, alpha):
    """The same WBK19 bound with the forward differences computed in 150-digit decimals."""
    with decimal.localcontext(decimal.Context(prec=150)):
        tau = decimal.Decimal(1) / (decimal.Decimal(sigma) ** 2)
        kmax = 2 * ((alpha + 1) // 2)
        s = [(decimal.Decimal(i * (i - 1)) / 2 * tau).exp() for i in range(kmax + 1)]
        log_delta = {
            k: float(sum(((-1) ** (k - i)) * math.comb(k, i) * s[i] for i in range(k + 1)).ln())
            for k in range(2, kmax + 1, 2)
        }
    eps2 = 1 / sigma**2
    terms = [2 * math.log(gamma) + math.log(math.comb(alpha, 2))]
    terms[0] += min(math.log(4 * math.expm1(eps2)), eps2 + math.log(2))
    for j in range(3, alpha + 1):
        general = math.log(2) + (j - 1) * j / (2 * sigma**2)
        tight = math.log(4) + 0.5 * (log_delta[2 * (j // 2)] + log_delta[2 * ((j + 1) // 2)])
        terms.append(j * math.log(gamma) + math.log(math.comb(alpha, j)) + min(general, tight))
    m = max(terms)
    log_sum = m + math.log(sum(math.exp(t - m) for t in terms))
    bound = np.logaddexp(0.0, log_sum) / (alpha - 1)
    return min(bound, alpha / (2 * sigma**2))  # never above the unsampled Gaussian


@pytest.mark.parametrize(("gamma", "sigma"), [(0.01, 1.1), (0.1, 8.0), (0.3, 8.0), (0.05, 30.0)])
def test_without_replacement_matches_exact_forward_differences(gamma, sigma):
    # large sigma is where the signed sums cancel catastrophically in float64
    alphas = [2, 3, 5, 12, 33, 64]
    n = 1000
    mine = rdp_without_replacement_gaussian(n, round(gamma * n), sigma, alphas)
    ref = np.array([wor_bound_exact(gamma, sigma, a) for a in alphas])
    np.testing.assert_allclose(mine, ref, rtol=1e-9)
    assert np.all(mine >= ref * (1 - 1e-12))  # an upper bound of the exact bound


def test_without_replacement_fractional_orders_interpolate_the_cgf():
    whole = rdp_without_replacement_gaussian(1000, 10, 2.0, [3.0, 4.0])
    k3, k4 = 2 * whole[0], 3 * whole[1]
    frac = rdp_without_replacement_gaussian(1000, 10, 2.0, 3.25)
    assert frac == pytest.approx((0.75 * k3 + 0.25 * k4) / 2.25, rel=1e-14)
    # between 1 and 2: K(1) = 0, so eps'(1.5) = (0.5 * K(2)) / 0.5 = K(2) = eps'(2)
    below_two = rdp_without_replacement_gaussian(1000, 10, 2.0, [1.5, 2.0])
    assert below_two[0] == pytest.approx(below_two[1], rel=1e-14)


def test_laplace_rdp_closed_form():
    eps = 0.7
    for a in [1.1, 2.0, 5.5, 40.0]:
        direct = math.log(
            a / (2 * a - 1) * math.exp((a - 1) * eps) + (a - 1) / (2 * a - 1) * math.exp(-a * eps)
        ) / (a - 1)
        assert rdp_laplace(1 / eps, a) == pytest.approx(direct, rel=1e-12)
    assert rdp_laplace(1 / eps, math.inf) == pytest.approx(eps)


# ---- agreement with dp_accounting ------------------------------------------------------------
@needs_dpa
def test_default_orders_are_dp_accountings():
    np.testing.assert_array_equal(ORDERS, np.array(dpa_rdp.DEFAULT_RDP_ORDERS))


@needs_dpa
@pytest.mark.parametrize("q", [1e-3, 0.01, 256 / 60000, 0.1, 0.5])
@pytest.mark.parametrize(("sigma", "steps"), [(0.8, 100), (1.1, 14063), (4.0, 10000)])
def test_poisson_integer_orders_agree_with_dp_accounting(q, sigma, steps):
    event = PoissonSampled(q, GaussianEvent(sigma))
    ours = RDPAccountant(INT_ORDERS).compose(event, steps).rdp
    theirs = dpa_rdp.RdpAccountant(list(INT_ORDERS))
    theirs.compose(dp_accounting.SelfComposedDpEvent(to_dp_accounting(event), steps))
    np.testing.assert_allclose(ours, theirs.rdp, rtol=1e-8)


@needs_dpa
@pytest.mark.parametrize("q", [1e-3, 0.01, 0.1])
@pytest.mark.parametrize("sigma", [0.9, 2.0, 6.0])
def test_poisson_fractional_orders_versus_dp_accounting(q, sigma):
    # dp_accounting sums the absolute values of the alternating terms (the 2.7267e-3 of the
    # test vector), an upper bound of the exact value: ours is never above it, and equal
    # wherever its terms do not alternate in a significant way (checked by quadrature above)
    orders = list(FRAC_ORDERS[::7])
    ours = rdp_poisson_gaussian(q, sigma, orders)
    theirs = dpa_rdp.RdpAccountant(orders)
    theirs.compose(to_dp_accounting(PoissonSampled(q, GaussianEvent(sigma))))
    assert np.all(ours <= theirs.rdp * (1 + 1e-8))
    exact = [rdp_by_quadrature(q, sigma, a) for a in orders[:4]]
    np.testing.assert_allclose(ours[:4], exact, rtol=1e-9)


@needs_dpa
def test_fractional_gap_with_dp_accounting_is_the_absolute_sum():
    theirs = dpa_rdp.RdpAccountant([1.5])
    theirs.compose(to_dp_accounting(PoissonSampled(0.1, GaussianEvent(2.0))))
    assert theirs.rdp[0] == pytest.approx(2.7267e-3, rel=1e-4)


@needs_dpa
@pytest.mark.parametrize(("m", "sigma"), [(60, 0.8), (600, 1.1), (600, 4.0), (3000, 2.0)])
def test_without_replacement_agrees_with_dp_accounting(m, sigma):
    orders = [1.5, 2.0, 3.0, 4.5, 7.0, 12.0, 20.0, 33.0, 64.0, 300.0, 1024.0]
    event = SampledWithoutReplacement(60000, m, GaussianEvent(sigma))
    ours = RDPAccountant(orders).compose(event, 100).rdp
    theirs = dpa_rdp.RdpAccountant(orders, dp_accounting.NeighboringRelation.REPLACE_ONE)
    theirs.compose(dp_accounting.SelfComposedDpEvent(to_dp_accounting(event), 100))
    np.testing.assert_allclose(ours, theirs.rdp, rtol=1e-8)
    # dp_accounting refuses this event under add/remove-one, as privlearn does for Poisson
    assert not dpa_rdp.RdpAccountant(orders).supports(to_dp_accounting(event))


@needs_dpa
@pytest.mark.parametrize("scale", [0.3, 1.0, 5.0])
def test_laplace_agrees_with_dp_accounting(scale):
    ours = RDPAccountant().compose(LaplaceEvent(scale), 7).rdp
    theirs = dpa_rdp.RdpAccountant()
    theirs.compose(dp_accounting.SelfComposedDpEvent(to_dp_accounting(LaplaceEvent(scale)), 7))
    np.testing.assert_allclose(ours, theirs.rdp, rtol=1e-8)


@needs_dpa
def test_conversion_agrees_with_dp_accounting():
    rng = np.random.default_rng(3)
    for _ in range(20):
        rdp = np.sort(rng.uniform(0, 0.5, ORDERS.size)) * rng.uniform(0.1, 30)
        delta = 10 ** rng.uniform(-10, -2)
        eps_ours = rdp_to_epsilon(ORDERS, rdp, delta)
        eps_theirs = dpa_rdp.compute_epsilon(ORDERS, rdp, delta)
        assert eps_ours[0] == pytest.approx(eps_theirs[0], rel=1e-12, abs=1e-15)
        assert eps_ours[1] == eps_theirs[1]
        target = eps_ours[0] + 0.1
        d_ours = rdp_to_delta(ORDERS, rdp, target)
        d_theirs = dpa_rdp.compute_delta(ORDERS, rdp, target)
        assert d_ours[0] == pytest.approx(d_theirs[0], rel=1e-10)


@needs_dpa
def test_bridge_translates_every_event():
    g = GaussianEvent(1.5)
    event = Composed(
        [
            SelfComposed(PoissonSampled(0.01, g), 10),
            DisjointBatches(LaplaceEvent(2.0)),
            SelfComposed(Composed([g, g]), 3),
        ]
    )
    dpe = to_dp_accounting(event)
    assert isinstance(dpe, dp_accounting.ComposedDpEvent)
    assert isinstance(dpe.events[0].event, dp_accounting.PoissonSampledDpEvent)
    assert isinstance(dpe.events[1], dp_accounting.LaplaceDpEvent)
    ours = RDPAccountant(INT_ORDERS).compose(event).rdp
    theirs = dpa_rdp.RdpAccountant(list(INT_ORDERS))
    theirs.compose(dpe)
    np.testing.assert_allclose(ours, theirs.rdp, rtol=1e-8)
    wor = to_dp_accounting(SampledWithoutReplacement(100, 10, g))
    assert isinstance(wor, dp_accounting.SampledWithoutReplacementDpEvent)
    assert (wor.source_dataset_size, wor.sample_size) == (100, 10)


@needs_dpa
def test_pld_refuses_what_dp_accounting_cannot_do():
    with pytest.raises(UnsupportedEventError, match="SampledWithoutReplacement"):
        epsilon_pld(SampledWithoutReplacement(100, 10, GaussianEvent(1.0)), 1e-5)


def test_bridge_names_the_missing_package(monkeypatch):
    from privlearn.accounting import bridge

    def missing(name, *args, **kwargs):
        raise ImportError(f"No module named {name!r}")

    monkeypatch.setattr(bridge.importlib, "import_module", missing)
    with pytest.raises(ImportError, match="dp-accounting"):
        to_dp_accounting(GaussianEvent(1.0))
    with pytest.raises(ImportError, match="dp-accounting"):
        epsilon_pld(GaussianEvent(1.0), 1e-5)


def test_works_without_dp_accounting():
    code = (
        "import sys; sys.modules['dp_accounting'] = None\n"
        "from privlearn.accounting import *\n"
        "acc = RDPAccountant().compose(PoissonSampled(0.01, GaussianEvent(4.0)), 10000)\n"
        "assert abs(acc.get_epsilon(1e-5) - 1.0355) < 1e-3\n"
        "assert abs(calibrate_sigma(1.0, 1e-5, q=0.01, steps=10000) - 4.1258) < 1e-3\n"
        "try:\n    epsilon_pld(GaussianEvent(1.0), 1e-5)\nexcept ImportError as e:\n"
        "    assert 'dp-accounting' in str(e)\nelse:\n    raise SystemExit('no ImportError')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


# ---- special cases ---------------------------------------------------------------------------
def test_poisson_special_cases():
    assert np.all(rdp_poisson_gaussian(0.0, 1.0, ORDERS) == 0)
    np.testing.assert_allclose(rdp_poisson_gaussian(1.0, 2.0, ORDERS), ORDERS / 8.0, rtol=1e-15)
    out = rdp_poisson_gaussian(0.1, 1.0, [2.0, math.inf, 1.5])
    assert out[1] == math.inf and np.isfinite(out[[0, 2]]).all()
    assert rdp_poisson_gaussian(0.0, 1.0, math.inf) == 0
    # scalar in, 0-d array out; shapes are preserved
    assert np.ndim(rdp_poisson_gaussian(0.1, 1.0, 2.5)) == 0
    assert rdp_poisson_gaussian(0.1, 1.0, [2.5, 3.0]).shape == (2,)
    # tiny q keeps full relative precision: RDP ~ C(alpha,2) q^2 (e^{1/sigma^2} - 1)/(alpha-1)
    tiny = rdp_poisson_gaussian(1e-9, 1.0, [2.0, 2.5])
    approx = np.array([1.0, 2.5 * 1.5 / 2 / 1.5]) * 1e-18 * math.expm1(1.0)
    np.testing.assert_allclose(tiny, approx, rtol=1e-6)


def test_without_replacement_special_cases():
    np.testing.assert_allclose(
        rdp_without_replacement_gaussian(50, 50, 2.0, ORDERS), ORDERS / 8.0, rtol=1e-15
    )
    assert np.all(rdp_without_replacement_gaussian(50, 0, 2.0, ORDERS) == 0)
    assert rdp_without_replacement_gaussian(50, 5, 2.0, math.inf) == math.inf


def test_simple_mechanisms():
    np.testing.assert_allclose(rdp_gaussian(2.0, [2.0, 4.0]), [0.25, 0.5])
    np.testing.assert_allclose(rdp_pure_dp(0.1, [2.0, 1e6]), [0.01, 0.1])
    # Laplace RDP: below the pure-DP bound, tends to eps
    r = rdp_laplace(2.0, ORDERS)
    assert np.all(r <= rdp_pure_dp(0.5, ORDERS) + 1e-15)
    assert np.all(np.diff(r) >= 0)


def test_conversion_edge_cases():
    assert rdp_to_epsilon([2.0, 3.0], [0.0, 0.0], 1e-5) == (0.0, 2.0)
    eps, order = rdp_to_epsilon([2.0, math.inf], [5.0, 0.3], 1e-5)
    assert (eps, order) == (0.3, math.inf)
    assert rdp_to_epsilon([2.0], [math.inf], 0.5)[0] == math.inf
    assert rdp_to_delta([2.0, math.inf], [5.0, 0.3], 0.3)[0] == 0.0
    assert rdp_to_delta([2.0], [math.inf], 1.0)[0] == 1.0
    # the formula itself, at one order
    a, r, d = 5.0, 0.2, 1e-6
    expected = r + math.log1p(-1 / a) - (math.log(d) + math.log(a)) / (a - 1)
    assert rdp_to_epsilon([a], [r], d)[0] == pytest.approx(expected, rel=1e-15)
    # delta -> epsilon -> delta round trip
    rdp = 100 * rdp_poisson_gaussian(0.05, 1.0, ORDERS)
    eps, _ = rdp_to_epsilon(ORDERS, rdp, 1e-6)
    assert rdp_to_delta(ORDERS, rdp, eps)[0] == pytest.approx(1e-6, rel=1e-9)


# ---- accountants and statements --------------------------------------------------------------
def test_accountant_composition_rules():
    g = GaussianEvent(2.0)
    acc = RDPAccountant()
    acc.compose(g, 3).compose(DisjointBatches(g)).compose(Composed([g, SelfComposed(g, 2)]))
    np.testing.assert_allclose(acc.rdp, 7 * ORDERS / 8.0, rtol=1e-14)
    # a composition of Gaussians on one Poisson batch is one Gaussian with sigma_eff
    two = RDPAccountant().compose(PoissonSampled(0.02, Composed([g, g])))
    one = RDPAccountant().compose(PoissonSampled(0.02, GaussianEvent(2.0 / math.sqrt(2))))
    np.testing.assert_allclose(two.rdp, one.rdp, rtol=1e-12)
    three = RDPAccountant().compose(PoissonSampled(0.02, SelfComposed(g, 2)))
    np.testing.assert_allclose(three.rdp, one.rdp, rtol=1e-12)
    # count 0 is a no-op
    assert RDPAccountant().compose(g, 0).get_epsilon(1e-5) == 0.0
    assert len(acc.events) == 3 and str(acc.events[0]) == "3 x Gaussian(sigma=2)"


def test_pure_accountant():
    acc = PureDPAccountant()
    acc.compose(LaplaceEvent(2.0), 3)  # 3 * 0.5
    acc.compose(DisjointBatches(PureDPEvent(0.25)))  # parallel: one batch's cost
    acc.compose(PoissonSampled(0.1, PureDPEvent(1.0)))
    expected = 1.5 + 0.25 + math.log1p(0.1 * math.expm1(1.0))
    assert acc.epsilon == pytest.approx(expected, rel=1e-15)
    assert acc.get_epsilon(1e-5) == acc.epsilon
    with pytest.raises(UnsupportedEventError, match="GaussianEvent"):
        acc.compose(GaussianEvent(1.0))
    assert acc.epsilon == pytest.approx(expected)  # nothing composed
    wor = PureDPAccountant().compose(SampledWithoutReplacement(10, 2, PureDPEvent(1.0)))
    assert wor.epsilon == pytest.approx(amplify_without_replacement(1.0, 10, 2))
    assert amplify_poisson(1.0, 1.0) == pytest.approx(1.0)
    assert str(acc.statement()).startswith("(")


def test_unsupported_events_are_named():
    with pytest.raises(UnsupportedEventError, match="PoissonSampled.*LaplaceEvent"):
        RDPAccountant().compose(PoissonSampled(0.1, LaplaceEvent(1.0)))
    with pytest.raises(UnsupportedEventError, match="SampledWithoutReplacement"):
        RDPAccountant().compose(SampledWithoutReplacement(10, 2, PureDPEvent(1.0)))

    class Exotic(Event):  # an event no accountant knows
        def __str__(self):
            return "Exotic()"

    for acc in (RDPAccountant(), PureDPAccountant()):
        with pytest.raises(UnsupportedEventError, match="Exotic"):
            acc.compose(Exotic())
        assert not acc.supports(Exotic())
    assert issubclass(UnsupportedEventError, ValueError)


def test_neighbouring_relation_mismatch_is_an_error():
    g = GaussianEvent(1.0)
    acc = RDPAccountant().compose(PoissonSampled(0.1, g))
    assert acc.neighboring == "add_remove"
    with pytest.raises(UnsupportedEventError, match="replace-one"):
        acc.compose(SampledWithoutReplacement(100, 10, g))
    assert len(acc.events) == 1
    fixed = RDPAccountant(neighboring="replace_one")
    with pytest.raises(UnsupportedEventError, match="add/remove"):
        fixed.compose(PoissonSampled(0.1, g))
    with pytest.raises(UnsupportedEventError, match="mixes"):
        RDPAccountant().compose(
            Composed([PoissonSampled(0.1, g), SampledWithoutReplacement(100, 10, g)])
        )
    with pytest.raises(ValueError, match="neighboring"):
        RDPAccountant(neighboring="swap")


def test_statement():
    acc = RDPAccountant().compose(PoissonSampled(0.01, GaussianEvent(4.0)), 10000)
    st_ = acc.statement(1e-5)
    assert isinstance(st_, PrivacyStatement)
    assert st_.epsilon == pytest.approx(1.0355, rel=1e-3) and st_.best_order == 17.0
    text = str(st_)
    assert "1.03549" in text and "1e-05" in text and "add/remove-one" in text
    assert "10000 x PoissonSampled(q=0.01, Gaussian(sigma=4))" in text


def test_event_validation_and_str():
    assert str(LaplaceEvent(2.0)) == "Laplace(scale/sensitivity=2)"
    assert str(PureDPEvent(0.5)) == "PureDP(eps=0.5)"
    assert str(DisjointBatches(PureDPEvent(1))) == "DisjointBatches(PureDP(eps=1))"
    assert (
        str(SampledWithoutReplacement(100, 10, GaussianEvent(1)))
        == "SampledWithoutReplacement(m=10 of n=100, Gaussian(sigma=1))"
    )
    assert str(Composed([GaussianEvent(1), PureDPEvent(1)])) == (
        "Composed[Gaussian(sigma=1), PureDP(eps=1)]"
    )
    e = Composed([GaussianEvent(1.0)])
    assert e.events == (GaussianEvent(1.0),) and hash(e) == hash(Composed((GaussianEvent(1),)))
    with pytest.raises(TypeError, match="event"):
        PoissonSampled(0.1, 1.0)
    with pytest.raises(TypeError, match="events"):
        Composed([GaussianEvent(1.0), "x"])


# ---- pure-DP composition ---------------------------------------------------------------------
def test_pure_composition_functions():
    assert basic_composition([0.1, 0.2, 0.3]) == (pytest.approx(0.6), 0.0)
    assert basic_composition([1, 1], [1e-6, 2e-6]) == (2.0, pytest.approx(3e-6))
    assert parallel_composition([0.1, 0.5, 0.2], [0, 1e-6, 0]) == (0.5, 1e-6)
    eps, delta = advanced_composition(0.1, 1e-7, 100, 1e-5)
    expected = math.sqrt(200 * math.log(1e5)) * 0.1 + 100 * 0.1 * math.expm1(0.1)
    assert eps == pytest.approx(expected, rel=1e-15) and delta == pytest.approx(1e-5 + 1e-5)
    # for many small steps advanced beats basic
    assert advanced_composition(0.01, 0.0, 10000, 1e-6)[0] < 0.01 * 10000
    assert calibrate_laplace_scale(0.5, 2.0, count=3) == pytest.approx(12.0)
    with pytest.raises(ValueError, match="delta_prime"):
        advanced_composition(0.1, 0.0, 10, 0.0)
    with pytest.raises(ValueError, match="same length"):
        basic_composition([0.1], [0.0, 0.0])
    with pytest.raises(ValueError, match="epsilons"):
        parallel_composition([])


# ---- ledger ----------------------------------------------------------------------------------
def test_ledger_records_and_refuses():
    ledger = PrivacyLedger(1.0, 1e-6)
    for i in range(10):
        ledger.spend(0.1, label=f"step {i}")  # 10 x 0.1 reaches the cap within the tolerance
    assert ledger.spent.epsilon == pytest.approx(1.0) and len(ledger) == 10
    with pytest.raises(BudgetExceededError, match="would exceed"):
        ledger.spend(1e-6, label="one too many")
    assert len(ledger.entries) == 10  # nothing recorded
    assert ledger.remaining == (0.0, 1e-6)
    ledger.spend(0.0, 5e-7, "delta only")
    with pytest.raises(BudgetExceededError):
        ledger.spend(0.0, 6e-7)
    text = str(ledger)
    assert "step 9" in text and "delta only" in text and "total spent" in text
    assert "cap" in text and "remaining" in text
    assert issubclass(BudgetExceededError, RuntimeError)
    empty = PrivacyLedger(0.5)
    assert "(no spends)" in str(empty) and empty.remaining.epsilon == 0.5
    with pytest.raises(BudgetExceededError):
        empty.spend(0.1, 1e-9)  # delta cap 0


@settings(max_examples=60, deadline=None)
@given(
    cap=st.floats(0.01, 10.0),
    delta_cap=st.sampled_from([0.0, 1e-6, 1e-3]),
    spends=st.lists(
        st.tuples(st.floats(0.0, 3.0), st.sampled_from([0.0, 0.0, 1e-7, 4e-4])), max_size=30
    ),
)
def test_ledger_never_exceeds_its_cap(cap, delta_cap, spends):
    ledger = PrivacyLedger(cap, delta_cap)
    for eps, delta in spends:
        before = ledger.entries
        fits = ledger.can_spend(eps, delta)
        try:
            ledger.spend(eps, delta, "x")
        except BudgetExceededError:
            assert not fits and ledger.entries == before
        else:
            assert fits and len(ledger.entries) == len(before) + 1
        spent = ledger.spent
        assert spent.epsilon <= cap * (1 + ledger_module.RTOL)
        assert spent.delta <= delta_cap * (1 + ledger_module.RTOL)


# ---- monotonicity properties -----------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(
    q=st.floats(1e-4, 1.0),
    sigma=st.floats(0.4, 20.0),
    steps=st.integers(1, 100000),
    factor=st.floats(1.01, 3.0),
    sampling=st.sampled_from(["poisson", "without_replacement"]),
)
def test_epsilon_monotone(q, sigma, steps, factor, sampling):
    n = 10000
    if sampling == "without_replacement":
        q = max(1, round(q * n)) / n
    kw = dict(q=q, steps=steps, sampling=sampling, n=n)
    eps = epsilon_for_sigma(sigma, 1e-5, **kw)
    tol = 1e-9 * eps + 1e-12
    assert epsilon_for_sigma(sigma * factor, 1e-5, **kw) <= eps + tol  # decreasing in sigma
    more_steps = dict(kw, steps=steps + 1 + steps // 2)
    assert epsilon_for_sigma(sigma, 1e-5, **more_steps) >= eps - tol  # increasing in steps
    if q < 1:
        q2 = min(1.0, q * factor)
        if sampling == "without_replacement":
            q2 = min(n, round(q2 * n) + 1) / n
        assert epsilon_for_sigma(sigma, 1e-5, **dict(kw, q=q2)) >= eps - tol  # increasing in q


event_strategy = st.one_of(
    st.builds(GaussianEvent, st.floats(0.3, 20.0)),
    st.builds(LaplaceEvent, st.floats(0.3, 20.0)),
    st.builds(PureDPEvent, st.floats(0.0, 2.0)),
    st.builds(PoissonSampled, st.floats(1e-3, 1.0), st.builds(GaussianEvent, st.floats(0.5, 10))),
)


@settings(max_examples=40, deadline=None)
@given(first=st.lists(event_strategy, min_size=1, max_size=4), more=event_strategy)
def test_composition_is_monotone(first, more):
    acc = RDPAccountant()
    for e in first:
        acc.compose(e)
    before = acc.rdp
    eps_before = acc.get_epsilon(1e-6)
    acc.compose(more)
    assert np.all(acc.rdp >= before)
    assert acc.get_epsilon(1e-6) >= eps_before
    # composing one by one equals composing the Composed event
    together = RDPAccountant().compose(Composed([*first, more]))
    np.testing.assert_allclose(together.rdp, acc.rdp, rtol=1e-12)


# ---- bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: rdp_poisson_gaussian(1.5, 1.0, 2.0), "q"),
        (lambda: rdp_poisson_gaussian(-0.1, 1.0, 2.0), "q"),
        (lambda: rdp_poisson_gaussian(math.nan, 1.0, 2.0), "q"),
        (lambda: rdp_poisson_gaussian(0.1, 0.0, 2.0), "sigma"),
        (lambda: rdp_poisson_gaussian(0.1, -1.0, 2.0), "sigma"),
        (lambda: rdp_poisson_gaussian(0.1, math.nan, 2.0), "sigma"),
        (lambda: rdp_poisson_gaussian(0.1, 1.0, 1.0), "orders"),
        (lambda: rdp_poisson_gaussian(0.1, 1.0, [2.0, math.nan]), "orders"),
        (lambda: rdp_poisson_gaussian(0.1, 1.0, []), "orders"),
        (lambda: rdp_without_replacement_gaussian(10, 11, 1.0, 2.0), "m"),
        (lambda: rdp_without_replacement_gaussian(0, 0, 1.0, 2.0), "n"),
        (lambda: rdp_to_epsilon([2.0], [0.1], 0.0), "delta"),
        (lambda: rdp_to_epsilon([2.0], [0.1], 1.0), "delta"),
        (lambda: rdp_to_epsilon([2.0], [0.1], math.nan), "delta"),
        (lambda: rdp_to_epsilon([2.0], [-0.1], 1e-5), "rdp"),
        (lambda: rdp_to_epsilon([2.0, 3.0], [0.1], 1e-5), "rdp"),
        (lambda: rdp_to_delta([2.0], [0.1], -1.0), "epsilon"),
        (lambda: PoissonSampled(0.0, GaussianEvent(1.0)), "q"),
        (lambda: PoissonSampled(1.01, GaussianEvent(1.0)), "q"),
        (lambda: PoissonSampled(math.nan, GaussianEvent(1.0)), "q"),
        (lambda: GaussianEvent(0.0), "noise_multiplier"),
        (lambda: GaussianEvent(math.nan), "noise_multiplier"),
        (lambda: LaplaceEvent(-1.0), "noise_multiplier"),
        (lambda: PureDPEvent(-0.1), "epsilon"),
        (lambda: PureDPEvent(math.inf), "epsilon"),
        (lambda: SelfComposed(GaussianEvent(1.0), -1), "count"),
        (lambda: SampledWithoutReplacement(10, 11, GaussianEvent(1.0)), "m"),
        (lambda: SampledWithoutReplacement(10, 0, GaussianEvent(1.0)), "m"),
        (lambda: RDPAccountant().compose(GaussianEvent(1.0), -2), "count"),
        (lambda: RDPAccountant().get_epsilon(0.0), "delta"),
        (lambda: RDPAccountant().get_epsilon(1.5), "delta"),
        (lambda: RDPAccountant(orders=[0.5, 2.0]), "orders"),
        (lambda: calibrate_sigma(0.0, 1e-5, q=0.01, steps=10), "epsilon"),
        (lambda: calibrate_sigma(1.0, 0.0, q=0.01, steps=10), "delta"),
        (lambda: calibrate_sigma(1.0, 1e-5, q=0.0, steps=10), "q"),
        (lambda: calibrate_sigma(1.0, 1e-5, q=1.5, steps=10), "q"),
        (lambda: calibrate_sigma(1.0, 1e-5, q=0.01, steps=-1), "steps"),
        (lambda: calibrate_sigma(1.0, 1e-5, q=0.01, steps=0), "steps"),
        (lambda: calibrate_sigma(1.0, 1e-5, q=0.01, steps=10, sampling="shuffle"), "sampling"),
        (
            lambda: calibrate_sigma(1.0, 1e-5, q=0.01, steps=10, sampling="without_replacement"),
            "n",
        ),
        (
            lambda: calibrate_sigma(
                1.0, 1e-5, q=0.0123, steps=10, sampling="without_replacement", n=100
            ),
            "q \\* n",
        ),
        (lambda: PrivacyLedger(0.0), "epsilon_cap"),
        (lambda: PrivacyLedger(1.0, 1.0), "delta_cap"),
        (lambda: PrivacyLedger(1.0).spend(-0.1), "epsilon"),
        (lambda: PrivacyLedger(1.0).spend(math.nan), "epsilon"),
        (lambda: PrivacyLedger(1.0).spend(0.1, -1e-9), "delta"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: rdp_poisson_gaussian("0.1", 1.0, 2.0), "q"),
        (lambda: GaussianEvent("1"), "noise_multiplier"),
        (lambda: SelfComposed(GaussianEvent(1.0), 2.5), "count"),
        (lambda: SelfComposed(GaussianEvent(1.0), True), "count"),
        (lambda: RDPAccountant().compose("gaussian"), "event"),
        (lambda: PrivacyLedger(1.0).spend(0.1, label=3), "label"),
        (lambda: PrivacyLedger(1.0).spend(None), "epsilon"),
    ],
)
def test_bad_types_name_the_argument(call, name):
    with pytest.raises(TypeError, match=name):
        call()


def test_rdp_pure_dp_of_zero_epsilon_is_zero_at_every_order_including_infinity():
    """0 * inf at order inf gave NaN, which a ledger read as 'nothing spent' (issue 19)."""
    from privlearn.accounting import rdp_pure_dp

    curve = rdp_pure_dp(0.0, [1.5, 2.0, 64.0, float("inf")])
    assert np.array_equal(curve, np.zeros(4))
