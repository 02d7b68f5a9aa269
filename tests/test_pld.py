"""The privacy-loss-distribution accountant (privlearn.accounting.pld): pessimistic one-step
discretisation, FFT composition, calibration; checked against the exact one-step curves,
Google's dp_accounting (PLD, same discretisation), Microsoft's prv_accountant (certified
bounds) and the closed-form composed Gaussian."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privlearn.accounting import (
    GaussianEvent,
    PLDAccountant,
    PoissonSampled,
    RDPAccountant,
    RDPLedger,
    SampledWithoutReplacement,
    UnsupportedEventError,
    accountant_for,
    calibrate_noise,
    calibrate_sigma,
    calibrate_sigma_pld,
    epsilon_for_sigma_pld,
    to_dp_accounting,
)
from privlearn.accounting.pld import (
    CALIBRATION_INTERVAL,
    _gaussian_delta_add,
    _gaussian_delta_remove,
    _plain_delta,
    compose_plds,
    epsilon_of_parts,
    gaussian_pld,
    pure_pld,
)

dpa = pytest.importorskip("dp_accounting")


def _dpa_epsilon(q: float, sigma: float, steps: int, delta: float, h: float = 1e-4) -> float:
    acc = dpa.pld.PLDAccountant(value_discretization_interval=h)
    event = dpa.GaussianDpEvent(sigma)
    if q < 1.0:
        event = dpa.PoissonSampledDpEvent(q, event)
    acc.compose(event, steps)
    return float(acc.get_epsilon(delta))


@pytest.mark.parametrize(
    ("q", "sigma"), [(0.002, 1.1), (0.01, 4.0), (0.1, 0.8), (0.3, 2.0), (0.002, 0.5)]
)
def test_one_step_discretisation_dominates_the_exact_curve(q: float, sigma: float) -> None:
    """Connect the dots: the discrete PLD's hockey stick equals the exact one on the grid and
    lies above it between grid points (both directions); the masses sum to one."""
    remove, add = gaussian_pld(sigma, q, interval=1e-3)
    rng = np.random.default_rng(0)
    for pld, exact in ((remove, _gaussian_delta_remove), (add, _gaussian_delta_add)):
        assert pld.pmf.min() >= 0.0
        assert pld.pmf.sum() + pld.inf_mass == pytest.approx(1.0, abs=1e-12)
        on_grid = pld.losses[:: max(1, pld.pmf.size // 40)]
        between = rng.uniform(pld.losses[0], pld.losses[-1], size=60)
        for eps in np.concatenate([on_grid, between, [0.0, 0.5, 1.0]]):
            true = exact(float(eps), q, 1.0 / sigma)
            got = pld.delta(float(eps))
            assert got >= true * (1 - 1e-9) - 1e-15, (eps, got, true)
        for eps in on_grid[1:-1]:
            true = exact(float(eps), q, 1.0 / sigma)
            assert pld.delta(float(eps)) == pytest.approx(true, rel=1e-6, abs=1e-14)


CASES = [
    # q, sigma, steps, delta: DP-SGD on adult (64/30162, 20 epochs), MNIST-like, a long run
    (64 / 30162, 1.114, 9426, 1e-6),
    (0.01, 4.0, 10_000, 1e-5),
    (1e-3, 1.0, 5_000, 1e-7),
    (0.1, 2.0, 100, 1e-5),
    (0.05, 0.7, 400, 1e-5),
]


@pytest.mark.parametrize(("q", "sigma", "steps", "delta"), CASES)
def test_epsilon_agrees_with_dp_accounting_and_prv_bounds(q, sigma, steps, delta) -> None:
    """Same discretisation as dp_accounting's PLD (connect the dots, 1e-4): within 1e-4
    relative; never below prv_accountant's certified lower bound and within its bounds; and
    well below the RDP epsilon."""
    ours = epsilon_for_sigma_pld(sigma, delta, q=q, steps=steps)
    theirs = _dpa_epsilon(q, sigma, steps, delta)
    assert ours == pytest.approx(theirs, rel=1e-4)
    rdp = RDPAccountant().compose(PoissonSampled(q, GaussianEvent(sigma)), steps)
    assert ours < rdp.get_epsilon(delta)
    prv = pytest.importorskip("prv_accountant")
    # what the deprecated prv_accountant.Accountant did, through the API it names instead
    acc = prv.PRVAccountant(
        prvs=[prv.PoissonSubsampledGaussianMechanism(q, sigma)],
        eps_error=0.01,
        delta_error=delta / 1000,
        max_self_compositions=[steps],
    )
    lower, _, upper = acc.compute_epsilon(delta, [steps])
    assert lower <= ours <= upper * 1.001


def test_finer_grids_are_tighter_and_every_grid_is_pessimistic() -> None:
    """A coarser grid never reports a smaller epsilon (each dominates the finer one's pair up
    to round-off); at adult's DP-SGD schedule 2e-4 is within 0.2% of the statement grid."""
    q, sigma, steps, delta = 64 / 30162, 1.114, 9426, 1e-6
    grids = (1e-3, CALIBRATION_INTERVAL, 2e-4, 1e-4, 5e-5)
    values = [epsilon_for_sigma_pld(sigma, delta, q=q, steps=steps, interval=h) for h in grids]
    assert all(a >= b * (1 - 1e-9) for a, b in zip(values, values[1:]))
    assert values[2] == pytest.approx(values[3], rel=2e-3)


def test_plain_gaussian_is_exact() -> None:
    """q = 1: T Gaussian steps are one Gaussian with sigma / sqrt(T), accounted by the closed
    form (Balle and Wang 2018, Theorem 8); dp_accounting agrees."""
    acc = PLDAccountant().compose(GaussianEvent(5.0), count=10)
    eps = acc.get_epsilon(1e-5)
    mu = math.sqrt(10) / 5.0
    assert _plain_delta(eps, mu) <= 1e-5 < _plain_delta(eps - 1e-9, mu)
    assert eps == pytest.approx(_dpa_epsilon(1.0, 5.0, 10, 1e-5), rel=1e-6)
    assert acc.get_delta(eps) == pytest.approx(1e-5, rel=1e-6)


@pytest.mark.parametrize(
    ("epsilon", "delta", "q", "steps"),
    [
        (1.0, 1e-6, 64 / 30162, 9426),  # DP-SGD default on adult
        (3.0, 1e-6, 64 / 30162, 9426),
        (0.5, 1e-5, 0.05, 400),
        (2.0, 1e-5, 0.1, 200),
        (1.0, 1e-5, 1.0, 30),  # full batches (DP-SCD primal)
    ],
)
def test_calibrated_sigma_is_right_by_dp_accounting(epsilon, delta, q, steps) -> None:
    """The calibrated sigma meets the target by dp_accounting's PLD (never optimistic, up to
    its discretisation), is within 1% of it (sigma / 1.01 misses it), and is below RDP's."""
    sigma = calibrate_sigma_pld(epsilon, delta, q=q, steps=steps)
    assert _dpa_epsilon(q, sigma, steps, delta) <= epsilon * (1 + 1e-6)
    assert _dpa_epsilon(q, sigma / 1.01, steps, delta) > epsilon
    assert sigma < calibrate_sigma(epsilon, delta, q=q, steps=steps)
    assert calibrate_noise(epsilon, delta, q=q, steps=steps) == sigma


def test_rdp_is_kept_for_sampling_without_replacement() -> None:
    """Fixed-size batches (replace-one): the PLD accountant refuses them (no dominating pair
    in closed form) and the tightest accountant of that sampler is RDP."""
    event = SampledWithoutReplacement(1000, 50, GaussianEvent(1.0))
    with pytest.raises(UnsupportedEventError):
        PLDAccountant().compose(event, 10)
    with pytest.raises(UnsupportedEventError, match="replace-one"):
        PLDAccountant(neighboring="replace_one")
    assert isinstance(accountant_for("replace_one"), RDPAccountant)
    assert isinstance(accountant_for("add_remove"), PLDAccountant)
    rdp = calibrate_sigma(1.0, 1e-5, q=0.05, steps=100, sampling="without_replacement", n=1000)
    got = calibrate_noise(1.0, 1e-5, q=0.05, steps=100, sampling="without_replacement", n=1000)
    assert got == rdp


def test_statement_shows_rdp_beside() -> None:
    acc = PLDAccountant().compose(PoissonSampled(0.01, GaussianEvent(1.0)), count=1000)
    st = acc.statement(1e-5)
    rdp = RDPAccountant().compose(PoissonSampled(0.01, GaussianEvent(1.0)), count=1000)
    assert st.accountant == "pld" and st.epsilon < st.rdp_epsilon
    assert st.rdp_epsilon == pytest.approx(rdp.get_epsilon(1e-5), rel=1e-12)
    assert "pld accountant" in str(st) and "RDP accountant: epsilon" in str(st)


def test_pure_spend_is_randomized_response() -> None:
    """A pure epsilon-DP spend composes as randomized response (the worst pure mechanism): at
    least dp_accounting's Laplace PLD of the same epsilon, and exact for one spend."""
    rr = pure_pld(0.5)
    assert rr.delta(0.5) == 0.0 and rr.epsilon(1e-9) == pytest.approx(0.5, abs=1e-4)
    ours = epsilon_of_parts({}, {0.5: 10}, 1e-5)
    acc = dpa.pld.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dpa.LaplaceDpEvent(2.0), 10)
    assert ours >= acc.get_epsilon(1e-5) - 1e-3
    assert ours < 5.0  # well below basic composition


def test_heterogeneous_composition_matches_dp_accounting() -> None:
    """Three different fits composed (what a ledger does) agree with dp_accounting composing
    the same events; the ledger reports it."""
    fits = [(0.01, 1.5, 1000), (0.02, 2.0, 500), (1.0, 8.0, 20)]
    parts = {(q, s): t for q, s, t in fits}
    ours = epsilon_of_parts(parts, {}, 1e-5)
    acc = dpa.pld.PLDAccountant(value_discretization_interval=1e-4)
    for q, s, t in fits:
        event = dpa.GaussianDpEvent(s) if q >= 1 else dpa.PoissonSampledDpEvent(
            q, dpa.GaussianDpEvent(s)
        )  # fmt: skip
        acc.compose(event, t)
    assert ours == pytest.approx(acc.get_epsilon(1e-5), rel=1e-3)
    ledger = RDPLedger(10.0, 1e-5)
    for q, s, t in fits:
        inner = GaussianEvent(s)
        ledger.spend_events([PoissonSampled(q, inner) if q < 1 else inner] * t)
    assert ledger.spent.epsilon == pytest.approx(ours, rel=1e-9)
    rdp = RDPAccountant()
    for q, s, t in fits:
        rdp.compose(PoissonSampled(q, GaussianEvent(s)) if q < 1 else GaussianEvent(s), t)
    assert ours < rdp.get_epsilon(1e-5)


def test_composition_window_keeps_the_mass() -> None:
    remove, _ = gaussian_pld(1.0, 0.01)
    composed = compose_plds([(remove, 1000)])
    assert composed.pmf.sum() + composed.inf_mass == pytest.approx(1.0, abs=1e-9)
    assert composed.inf_mass < 1e-12


@pytest.mark.parametrize("estimator", ["sgd", "sgd-multinomial", "scd", "scd-ovr"])
def test_estimator_epsilon_recomputed_by_dp_accounting(estimator: str) -> None:
    """A fitted estimator's privacy_.epsilon is recomputed independently by dp_accounting's
    PLD from the stated events (plus the stated lattice slack, ~1e-13)."""
    from privlearn.linear import DPSCDClassifier, DPSGDClassifier

    rng = np.random.default_rng(0)
    n = 2000
    X = rng.normal(size=(n, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    k = 3 if estimator.endswith(("multinomial", "ovr")) else 2
    y = rng.integers(0, k, size=n)
    kw = dict(epsilon=1.0, delta=1e-5, epochs=2, n_samples=n, classes=list(range(k)), seed=0)
    if estimator.startswith("sgd"):
        est = DPSGDClassifier(batch_size=64, **kw)
    else:
        est = DPSCDClassifier(batch_size=50, **kw)
    p = est.fit(X, y).privacy_
    st = p.statement
    assert st.accountant == "pld" and p.epsilon <= 1.0
    acc = dpa.pld.PLDAccountant(value_discretization_interval=1e-4)
    for event in st.events:
        acc.compose(to_dp_accounting(event))
    theirs = acc.get_epsilon(1e-5)
    assert p.epsilon == pytest.approx(theirs, rel=1e-4)
    assert st.rdp_epsilon > p.epsilon


def test_tiny_noise_is_left_to_rdp() -> None:
    """Below PLD_MIN_SIGMA (epsilons in the tens or more) the PLD accountant refuses the event
    with a clear error and the estimators use RDP; an estimator at epsilon 1e4 states it."""
    from privlearn.accounting.pld import PLD_MIN_SIGMA
    from privlearn.linear import DPSCDRegressor

    with pytest.raises(UnsupportedEventError, match="floor"):
        PLDAccountant().compose(PoissonSampled(0.01, GaussianEvent(PLD_MIN_SIGMA / 2)), 10)
    acc = accountant_for("add_remove", PLD_MIN_SIGMA / 2)
    st = acc.compose(PoissonSampled(0.01, GaussianEvent(PLD_MIN_SIGMA / 2)), 10).statement(1e-5)
    rdp = RDPAccountant().compose(PoissonSampled(0.01, GaussianEvent(PLD_MIN_SIGMA / 2)), 10)
    assert st.accountant == "rdp" and st.epsilon == rdp.get_epsilon(1e-5)
    assert "floor" in st.note and st.pld_epsilon == math.inf
    rdp = calibrate_sigma(1e4, 1e-5, q=0.5, steps=4)
    assert rdp < PLD_MIN_SIGMA and calibrate_noise(1e4, 1e-5, q=0.5, steps=4) == rdp
    assert calibrate_sigma_pld(30.0, 1e-5, q=0.5, steps=4) >= PLD_MIN_SIGMA
    fit = DPSCDRegressor(epsilon=1e4, seed=0, batch_size=1).fit(np.zeros((2, 3)), np.zeros(2))
    assert fit.privacy_.accountant == "rdp" and fit.privacy_.epsilon <= 1e4
