"""Private preprocessing: DP quantiles (Smith 2011), DPFeatureScaler, UnitBallProjector."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.pipeline import Pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from privlearn.accounting import PrivacyLedger
from privlearn.audit import ThresholdEvent, audit_pure_dp, audit_pure_dp_split
from privlearn.exceptions import BudgetExceededError, PrivacyLeakWarning
from privlearn.linear import DPSGDClassifier
from privlearn.preprocessing import (
    DPFeatureScaler,
    PreprocessingPrivacy,
    UnitBallProjector,
    dp_quantiles,
    lattice_points,
)


def _raw(n: int = 3000, seed: int = 0) -> np.ndarray:
    """Raw, unscaled features on very different scales (an age, an income, a count)."""
    rng = np.random.default_rng(seed)
    return np.column_stack(
        [
            rng.normal(40.0, 12.0, n),
            rng.lognormal(10.0, 0.6, n),
            rng.poisson(3.0, n).astype(float),
        ]
    )


_BOUNDS = ([0.0, 0.0, 0.0], [100.0, 2e5, 20.0])


# ---- dp_quantiles: correctness ----------------------------------------------------------------
def test_quantiles_infinite_epsilon_equal_numpy():
    X = _raw()
    qs = [0.0, 0.1, 0.5, 0.9, 1.0]
    got = dp_quantiles(X, qs, math.inf, _BOUNDS)
    want = np.quantile(np.clip(X, *_BOUNDS), qs, axis=0)
    np.testing.assert_allclose(got, want, rtol=0, atol=0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_quantiles_large_epsilon_close_to_numpy(seed):
    X = _raw(seed=seed)
    qs = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
    got = dp_quantiles(X, qs, 500.0, _BOUNDS, seed=seed)
    assert got.shape == (5, 3)
    # continuous columns: the released value has rank within 1% of the rows of the target
    ranks = (X[None, :, :2] < got[:, None, :2]).mean(axis=1)
    np.testing.assert_allclose(ranks, np.broadcast_to(qs[:, None], ranks.shape), atol=0.01)
    # the count column has ties: the mechanism releases a point of a gap between two
    # consecutive values, the gap next to numpy's quantile (whose value is an integer)
    want = np.quantile(X[:, 2], qs, method="inverted_cdf")
    assert (np.abs(got[:, 2] - want) < 1.0).all(), (got[:, 2], want)


def test_quantiles_moderate_epsilon_rank_error_small():
    x = np.random.default_rng(5).uniform(0.0, 10.0, 20_000)
    med = np.array([dp_quantiles(x, 0.5, 1.0, (0.0, 10.0), seed=s) for s in range(50)])
    ranks = (x[None, :] < med[:, None]).mean(axis=1)
    assert np.abs(ranks - 0.5).max() < 0.01  # |rank error| ~ log(n)/eps rows out of 20,000


def test_quantiles_shapes_range_and_reproducibility():
    x = np.arange(100.0)
    assert np.ndim(dp_quantiles(x, 0.5, 1.0, (0, 200), seed=3)) == 0
    assert dp_quantiles(x, [0.5], 1.0, (0, 200), seed=3).shape == (1,)
    assert dp_quantiles(x[:, None], 0.5, 1.0, (0, 200), seed=3).shape == (1,)
    a = dp_quantiles(x, [0.1, 0.9], 1.0, (0, 200), seed=3)
    b = dp_quantiles(x, [0.1, 0.9], 1.0, (0, 200), seed=3)
    c = dp_quantiles(x, [0.1, 0.9], 1.0, (0, 200), seed=4)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    # seed=None: fresh OS entropy each call
    d = [float(dp_quantiles(x, 0.5, 1.0, (0, 200))) for _ in range(3)]
    assert len(set(d)) == 3
    # values outside the public range are clipped; the output stays inside it
    wild = np.concatenate([x, [1e300, -1e300]])
    out = dp_quantiles(wild, [0.0, 1.0], 0.1, (-5.0, 150.0), seed=1)
    assert ((out >= -5.0) & (out <= 150.0)).all()


def test_quantiles_no_data_dependent_errors():
    # n = 0 and all-equal columns are valid inputs: the output is still a draw in the range
    empty = dp_quantiles(np.empty(0), 0.5, 1.0, (0.0, 1.0), seed=0)
    assert 0.0 <= empty <= 1.0
    same = dp_quantiles(np.full(50, 0.25), [0.1, 0.9], 1.0, (0.0, 1.0), seed=0)
    assert ((same >= 0.0) & (same <= 1.0)).all()


def test_quantiles_never_write_input():
    X = _raw(200)
    X.setflags(write=False)
    before = X.copy()
    dp_quantiles(X, [0.2, 0.8], 1.0, _BOUNDS, seed=0)
    assert np.array_equal(X, before)


# ---- dp_quantiles: empirical privacy audit ----------------------------------------------------
# D: one low point at 0.1 and 19 high points at 0.95 in the public range [0, 1]; level q = 0.05,
# so q n = 1 and the interval [0, 0.1) (rank 0) is slightly off target. D' adds one adversarial
# row at 0 (add/remove-one neighbours): every rank moves by one, the utility of the short
# interval below 0.1 rises by 1 - q and that of the long interval above it falls by 1 - q,
# which is the worst case of the exponential mechanism (privacy loss close to epsilon). The
# event "output <= 0.1" is fixed by this construction, before any draw is made.
_AUDIT_D = np.array([0.1] + [0.95] * 19)
_AUDIT_D1 = np.append(_AUDIT_D, 0.0)
_AUDIT_EVENT = ThresholdEvent(0.1, above=False)
_AUDIT_DRAWS = 10_000


def _audit_draws(noise_epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """``_AUDIT_DRAWS`` independent draws per side, each with ``noise_epsilon``: one call on
    that many copies of the column, the budget split evenly (every column has its own
    stream), one seed per side."""
    n = _AUDIT_DRAWS
    eps = noise_epsilon * n
    out0 = dp_quantiles(np.repeat(_AUDIT_D[:, None], n, axis=1), 0.05, eps, (0, 1), seed=0)
    out1 = dp_quantiles(np.repeat(_AUDIT_D1[:, None], n, axis=1), 0.05, eps, (0, 1), seed=1)
    return out0, out1


def test_audit_quantile_respects_claimed_epsilon():
    """Clopper-Pearson lower bound on epsilon <= the claim (false failure <= 2e-6)."""
    out0, out1 = _audit_draws(1.0)
    result = audit_pure_dp(out0, out1, _AUDIT_EVENT, epsilon_claim=1.0)
    assert result.passed, str(result)
    assert result.epsilon_lower <= 1.0
    assert result.epsilon_lower > 0.4  # the construction is tight enough to be informative
    # an event chosen on a selection split (audit on the other half) agrees
    split, _ = audit_pure_dp_split(out0, out1, epsilon_claim=1.0)
    assert split.passed, str(split)


def test_audit_catches_a_broken_quantile():
    """A mechanism using twice the epsilon in its noise while claiming the original fails."""
    out0, out1 = _audit_draws(2.0)  # noise for epsilon = 2, claimed epsilon = 1
    result = audit_pure_dp(out0, out1, _AUDIT_EVENT, epsilon_claim=1.0)
    assert not result.passed, str(result)
    assert result.epsilon_lower > 1.2


# ---- dp_quantiles: the public lattice (issue 19) -----------------------------------------------
def _on_lattice(y: np.ndarray, lo: np.ndarray, hi: np.ndarray, bits: int) -> np.ndarray:
    """Whether each released value is a point ``lo + j (hi - lo) / 2**bits`` (capped at ``hi``;
    ``hi`` itself for ``j = 2**bits``) of the public lattice, recomputed here from ``j``."""
    cells = 2**bits
    step = (hi - lo) / cells
    j = np.clip(np.round((y - lo) / step), 0, cells)
    ok = np.zeros(np.shape(y), dtype=bool)
    for shift in (-1, 0, 1):  # the rounding of (y - lo) / step may be off by one
        jj = np.clip(j + shift, 0, cells)
        point = np.where(jj == cells, hi, np.minimum(lo + jj * step, hi))
        ok |= point == y
    return ok


def test_quantiles_outputs_lie_on_the_public_lattice():
    """Whatever the data, every release is a point of the lattice fixed by the public range
    and ``lattice_bits``: two neighbours with data points whose low bits differ (the attack of
    Mironov 2012 on the uniform draw inside a data interval) have the same output set."""
    D = np.r_[np.full(10, -0.5), np.full(10, 0.5)]
    neighbours = [D, np.append(D, 3 * 2.0**-60), np.append(D, 0.1), np.append(D, -1e-300)]
    for bits in (4, 20, 32, 52):
        for data in neighbours:
            y = dp_quantiles(
                np.repeat(data[:, None], 50, axis=1),
                [0.1, 0.5, 0.9],
                150.0,
                (-1.0, 1.0),
                seed=bits,
                lattice_bits=bits,
            )
            assert _on_lattice(y, -1.0, 1.0, bits).all(), (bits, y[~_on_lattice(y, -1, 1, bits)])
    # per-column ranges that are not powers of two, a range far from 0, a tiny one
    lo = np.array([0.0, -3.7, 1e6, 0.0])
    hi = np.array([2e5, 11.3, 1e6 + 1e-6, 1e-300])
    X = np.random.default_rng(3).uniform(lo, hi, size=(500, 4))
    for bits in (8, 32):
        y = dp_quantiles(X, [0.05, 0.5, 0.95], 12.0, (lo, hi), seed=1, lattice_bits=bits)
        assert _on_lattice(y, lo, hi, bits).all()
        assert ((y >= lo) & (y <= hi)).all()
    # lattice_points is the same lattice
    j = np.array([0, 1, 2**31, 2**32 - 1, 2**32])
    np.testing.assert_array_equal(
        lattice_points(j, (-3.7, 11.3)), np.r_[-3.7 + j[:-1] * ((11.3 - -3.7) / 2**32), 11.3]
    )
    # the released set is data-independent: with 2 cells there are 3 possible outputs
    y = dp_quantiles(
        np.repeat(D[:, None], 300, axis=1), 0.5, 300.0, (-1.0, 1.0), seed=0, lattice_bits=1
    )
    assert set(np.unique(y)) <= {-1.0, 0.0, 1.0} and len(np.unique(y)) == 3


def test_scaler_ranges_lie_on_the_public_lattice():
    X = _raw(800)
    lo, hi = np.array(_BOUNDS[0]), np.array(_BOUNDS[1])
    sc = DPFeatureScaler(epsilon=1.0, bounds=_BOUNDS, quantile_features=[0, 1], seed=4).fit(X)
    assert _on_lattice(sc.lower_[:2], lo[:2], hi[:2], 32).all()
    assert _on_lattice(sc.upper_[:2], lo[:2], hi[:2], 32).all()
    assert (sc.lower_[2], sc.upper_[2]) == (0.0, 20.0)  # public bounds, not estimated
    coarse = DPFeatureScaler(epsilon=1.0, bounds=_BOUNDS, lattice_bits=6, seed=4).fit(X)
    assert _on_lattice(np.r_[coarse.lower_, coarse.upper_], np.r_[lo, lo], np.r_[hi, hi], 6).all()
    assert "lattice_bits=6" in str(coarse.privacy_) and "lattice" in coarse.privacy_.released


def test_snap_is_the_first_lattice_point_at_or_above_each_value():
    from privlearn.preprocessing.quantiles import _lattice, _snap

    rng = np.random.default_rng(7)
    # ranges where arithmetic guesses are off: duplicated lattice points (spacing below one
    # ulp of the range), a subnormal spacing, a zero spacing, 52 bits
    cases = [
        (0.0, 1.0, 4),
        (1e6, 1e6 + 1e-6, 32),
        (0.0, 1e-300, 8),
        (0.0, 5e-324, 20),
        (-3.0, 7.0, 52),
        (-1.0, 1.0, 1),
    ]
    for lo, hi, bits in cases:
        cells = 1 << bits
        on = _lattice(rng.integers(0, cells + 1, 100), lo, hi, cells)
        x = np.clip(np.r_[rng.uniform(lo, hi, 300), lo, hi, on, np.nextafter(on, hi)], lo, hi)
        s = _snap(x[:, None], np.array([lo]), np.array([hi]), cells)[:, 0]
        assert ((s >= 0) & (s <= cells)).all()
        assert (_lattice(s, lo, hi, cells) >= x).all(), (lo, hi, bits)
        assert ((s == 0) | (_lattice(np.maximum(s - 1, 0), lo, hi, cells) < x)).all()


def _lattice_probabilities(x, q, epsilon, bits, strict=False):
    """The exact law of the release: ``P(j) ∝ exp(epsilon u(j) / 2)`` over the ``2**bits + 1``
    points of ``[0, 1]``, ``u(j) = -|rank(j) - q n|``, ``rank(j) = #{x_i <= p(j)}`` (or
    ``< p(j)`` when ``strict``: the other convention, to show the test tells them apart)."""
    points = np.arange(2**bits + 1) / 2**bits
    below = x[None, :] < points[:, None] if strict else x[None, :] <= points[:, None]
    utility = -np.abs(below.sum(axis=1) - q * x.size)
    w = np.exp(0.5 * epsilon * (utility - utility.max()))
    return points, w / w.sum()


def test_quantile_distribution_equals_the_lattice_exponential_mechanism():
    """Chi-square goodness of fit of 8,000 draws (fixed seed) against the exact probabilities;
    the rank convention ``x_i <= p(j)`` matters where a data point sits on the lattice."""
    from scipy.stats import chisquare

    x = np.array([0.2, 0.5, 0.55, 0.9])  # 0.5 is the lattice point j = 8 of 16 cells
    draws = 8000
    y = dp_quantiles(
        np.repeat(x[:, None], draws, axis=1), 0.5, 2.0 * draws, (0.0, 1.0), seed=11, lattice_bits=4
    )  # 2.0 per quantile
    points, prob = _lattice_probabilities(x, 0.5, 2.0, 4)
    assert np.isin(y, points).all()
    observed = (y[:, None] == points[None, :]).sum(axis=0)
    fit = chisquare(observed, prob * draws)
    assert fit.pvalue > 1e-3, (observed, np.round(prob * draws))
    _, wrong = _lattice_probabilities(x, 0.5, 2.0, 4, strict=True)
    assert chisquare(observed, wrong * draws).pvalue < 1e-6  # the test has power


def test_quantile_trailing_points_get_their_exact_probability():
    """Issue 30 item 9: the run selection is exact. Six points in (0, 0.3], q = 0, 3.0 per
    quantile, 5 lattice points: P = (1, e**-7.5, e**-9, e**-9, e**-9) / Z, so the four
    trailing points together have probability 9.1e-4 (about 15 of 16,000 draws): a z-test
    (|z| < 4.5) and a chi-square on the trailing mass."""
    from scipy.stats import chisquare

    x = np.array([0.05, 0.1, 0.15, 0.2, 0.25, 0.3])
    draws = 16000
    y = dp_quantiles(
        np.repeat(x[:, None], draws, axis=1), 0.0, 3.0 * draws, (0.0, 1.0), seed=12, lattice_bits=2
    )
    points, prob = _lattice_probabilities(x, 0.0, 3.0, 2)
    assert prob[0] == pytest.approx(1.0 / (1.0 + math.exp(-7.5) + 3.0 * math.exp(-9.0)))
    observed = (y[:, None] == points[None, :]).sum(axis=0)
    assert observed.sum() == draws
    trailing = 1.0 - prob[0]
    z = (draws - observed[0] - draws * trailing) / math.sqrt(draws * trailing * (1 - trailing))
    assert abs(z) < 4.5, (observed, prob * draws)
    pooled = np.array([observed[0], observed[1:].sum()])
    assert chisquare(pooled, np.array([prob[0], trailing]) * draws).pvalue > 1e-4


def test_run_selector_exponents_are_exact():
    """The run selection's exponents: gamma_r = eps (|r - q n| - d_min) / 2 as exact
    rationals of the float inputs, and the float lower bounds that set the proposal levels
    never exceed them."""
    from fractions import Fraction

    from privlearn.preprocessing.quantiles import _run_selector

    rng = np.random.default_rng(3)
    for n, q, eps in [(7, 0.3, 0.7), (1000, 0.1 + 0.2, 1e-3), (10**6, 0.999, 25.0), (5, 0.0, 3.0)]:
        counts = rng.integers(0, 5, size=n + 1)
        counts[rng.integers(0, n + 1)] = 7
        keep = np.flatnonzero(counts > 0)
        sel = _run_selector(counts, keep, n, q, eps)
        qn = Fraction(q) * n
        near = np.searchsorted(keep, float(qn))
        d_min = min(abs(int(r) - qn) for r in keep[max(near - 3, 0) : near + 3])
        for i in rng.integers(0, keep.size, size=20).tolist() + [int(near) - 1, int(near)]:
            i = min(max(i, 0), keep.size - 1)
            g, e = sel._gamma_exact(i)
            assert Fraction(g, e) == Fraction(eps) / 2 * (abs(int(keep[i]) - qn) - d_min)
            assert sel._level[i] * math.log(2) <= float(Fraction(g, e)) * (1 + 1e-12)


def test_quantile_on_empty_data_is_uniform_on_the_lattice():
    from scipy.stats import chisquare

    y = dp_quantiles(np.empty((0, 3000)), 0.3, 3000.0, (-2.0, 2.0), seed=5, lattice_bits=3)
    points = -2.0 + np.arange(9) * 0.5
    observed = (y[:, None] == points[None, :]).sum(axis=0)
    assert observed.sum() == 3000
    assert chisquare(observed).pvalue > 1e-3


# ---- DPFeatureScaler ---------------------------------------------------------------------------
def test_scaler_rows_in_unit_ball_and_ranges_inside_bounds():
    X = _raw(4000)
    for feature_range in ("symmetric", "nonnegative"):
        sc = DPFeatureScaler(epsilon=1.0, bounds=_BOUNDS, feature_range=feature_range, seed=0)
        sc.fit(X)
        Z = sc.transform(X)
        assert Z.shape == X.shape and Z.dtype == np.float64
        assert np.linalg.norm(Z, axis=1).max() <= 1.0
        half = 1.0 / math.sqrt(3)
        low = -half if feature_range == "symmetric" else 0.0
        assert Z.min() >= low - 1e-15 and Z.max() <= half + 1e-15
        assert (sc.lower_ <= sc.upper_).all()
        assert (sc.lower_ >= np.array(_BOUNDS[0])).all()
        assert (sc.upper_ <= np.array(_BOUNDS[1])).all()
        # new data far outside every range still lands in the ball
        wild = np.array([[1e308, -1e308, 1e10], [-1.0, 5e5, -3.0]])
        assert np.linalg.norm(sc.transform(wild), axis=1).max() <= 1.0


def test_scaler_unit_ball_many_features_exact():
    rng = np.random.default_rng(1)
    X = 3.0 * rng.choice([-1.0, 1.0], size=(500, 97))  # every row clips to a corner
    sc = DPFeatureScaler(epsilon=math.inf, bounds=(-1.0, 1.0), quantile_range=(0.0, 1.0)).fit(X)
    norms = np.linalg.norm(sc.transform(X), axis=1)
    assert norms.max() <= 1.0  # exactly, after the rounding pull-back
    assert norms.min() > 1.0 - 1e-12  # the corners lie on the sphere


def test_scaler_infinite_epsilon_matches_numpy_quantiles():
    X = _raw(2000)
    sc = DPFeatureScaler(epsilon=math.inf, bounds=_BOUNDS, quantile_range=(0.1, 0.9)).fit(X)
    want = np.quantile(X, [0.1, 0.9], axis=0)
    np.testing.assert_allclose(sc.lower_, want[0])
    np.testing.assert_allclose(sc.upper_, want[1])
    assert not sc.privacy_.private


def test_scaler_privacy_statement():
    sc = DPFeatureScaler(epsilon=0.6, bounds=_BOUNDS, quantile_range=(0.02, 0.98), seed=7)
    sc.fit(_raw(500))
    p = sc.privacy_
    assert isinstance(p, PreprocessingPrivacy)
    assert (p.epsilon, p.delta, p.neighboring) == (0.6, 0.0, "add_remove")
    assert p.epsilon_per_quantile == pytest.approx(0.6 / 6)  # 3 features x 2 quantiles
    text = str(p)
    needles = ("add/remove-one", "quantile_range=(0.02, 0.98)", "secret randomness", "Smith 2011")
    for needle in needles:
        assert needle in text, text
    assert "feature 1: [0, 200000]" in text
    assert "seed=7" not in text  # the seed is secret randomness: never printed in a release
    # fitted state: only what the guarantee covers
    fitted = {k for k in vars(sc) if k.endswith("_") and not k.startswith("_")}
    assert fitted == {"lower_", "upper_", "privacy_", "n_features_in_"}


def test_scaler_public_features_cost_nothing():
    X = np.column_stack([_raw(1000), np.random.default_rng(0).integers(0, 2, (1000, 4))])
    lo = [0.0, 0.0, 0.0, 0, 0, 0, 0]
    hi = [100.0, 2e5, 20.0, 1, 1, 1, 1]
    sc = DPFeatureScaler(epsilon=0.3, bounds=(lo, hi), quantile_features=[0, 1, 2], seed=0)
    sc.fit(X)
    assert sc.privacy_.epsilon_per_quantile == pytest.approx(0.3 / 6)
    np.testing.assert_array_equal(sc.lower_[3:], 0.0)
    np.testing.assert_array_equal(sc.upper_[3:], 1.0)
    none = DPFeatureScaler(bounds=(lo, hi), quantile_features=[], ledger=PrivacyLedger(0.1))
    none.fit(X)
    assert none.privacy_.epsilon == 0.0 and len(none.ledger) == 0
    Z = none.transform(X)
    np.testing.assert_array_equal(np.unique(Z[:, 3:]), [-1 / math.sqrt(7), 1 / math.sqrt(7)])


def test_scaler_never_writes_input_and_returns_new_array():
    X = _raw(300)
    X.setflags(write=False)
    before = X.copy()
    sc = DPFeatureScaler(epsilon=1.0, bounds=_BOUNDS, seed=0)
    Z = sc.fit_transform(X)
    assert np.array_equal(X, before) and not np.shares_memory(Z, X)


def test_scaler_sorted_ranges_and_degenerate_feature():
    # epsilon tiny: the two quantile draws are nearly uniform on the range and may cross
    X = np.full((20, 1), 0.5)
    for seed in range(20):
        sc = DPFeatureScaler(epsilon=1e-3, bounds=(0.0, 1.0), seed=seed).fit(X)
        assert sc.lower_[0] <= sc.upper_[0]
    sc.lower_[:] = sc.upper_[:] = 0.3  # a degenerate range maps to the centre
    assert np.array_equal(sc.transform(X), np.zeros((20, 1)))


# ---- ledger ------------------------------------------------------------------------------------
def test_ledger_charged_before_data_and_refuses_last_fit():
    ledger = PrivacyLedger(epsilon_cap=1.0)
    X = _raw(500)
    first = DPFeatureScaler(epsilon=0.4, bounds=_BOUNDS, seed=0, ledger=ledger).fit(X)
    second = DPFeatureScaler(epsilon=0.4, bounds=_BOUNDS, seed=1, ledger=ledger).fit(X)
    assert ledger.spent.epsilon == pytest.approx(0.8)
    assert [e.label for e in ledger.entries] == ["DPFeatureScaler.fit"] * 2
    last = DPFeatureScaler(epsilon=0.4, bounds=_BOUNDS, seed=2, ledger=ledger)
    X.setflags(write=False)
    before = X.copy()
    with pytest.raises(BudgetExceededError):
        last.fit(X)
    assert np.array_equal(X, before)
    assert not hasattr(last, "privacy_") and not hasattr(last, "lower_")
    assert ledger.spent.epsilon == pytest.approx(0.8) and len(ledger) == 2
    assert first.privacy_.epsilon == second.privacy_.epsilon == 0.4
    # dp_quantiles charges the same ledger before computing anything
    with pytest.raises(BudgetExceededError):
        dp_quantiles(X, 0.5, 0.3, _BOUNDS, ledger=ledger)
    dp_quantiles(X, 0.5, 0.2, _BOUNDS, ledger=ledger, seed=0)
    assert ledger.spent.epsilon == pytest.approx(1.0)


def test_ledger_spend_precedes_any_statistic(monkeypatch):
    """The spend happens before the mechanism touches the data (order of calls)."""
    import privlearn.preprocessing.scalers as scalers

    calls = []

    class Recorder:
        def spend(self, epsilon, delta, label=""):
            calls.append(("spend", epsilon, delta, label))

    real = scalers.dp_quantiles

    def spy(*args, **kwargs):
        calls.append(("quantiles",))
        return real(*args, **kwargs)

    monkeypatch.setattr(scalers, "dp_quantiles", spy)
    DPFeatureScaler(epsilon=0.5, bounds=_BOUNDS, seed=0, ledger=Recorder()).fit(_raw(100))
    assert calls == [("spend", 0.5, 0.0, "DPFeatureScaler.fit"), ("quantiles",)]


def test_ledger_refuses_infinite_epsilon():
    with pytest.raises(ValueError, match="not private"):
        DPFeatureScaler(epsilon=math.inf, bounds=_BOUNDS, ledger=PrivacyLedger(1.0)).fit(_raw())
    with pytest.raises(ValueError, match="not private"):
        dp_quantiles(_raw(), 0.5, math.inf, _BOUNDS, ledger=PrivacyLedger(1.0))


# ---- a failed refit changes nothing (issue 19) -------------------------------------------------
def _fitted_state(est):
    return {k: v for k, v in vars(est).items() if k.endswith("_") and not k.startswith("_")}


def _assert_same_state(before, est):
    after = _fitted_state(est)
    assert set(after) == set(before), set(after) ^ set(before)
    for name, value in before.items():
        assert after[name] is value, name  # the very same objects: nothing reassigned


def test_failed_refit_leaves_the_scaler_as_it_was(monkeypatch):
    pd = pytest.importorskip("pandas")
    import privlearn.preprocessing.scalers as scalers

    X = pd.DataFrame(_raw(300), columns=["age", "income", "count"])
    ledger = PrivacyLedger(epsilon_cap=0.5)
    sc = DPFeatureScaler(epsilon=0.4, bounds=_BOUNDS, seed=0, ledger=ledger).fit(X)
    before = _fitted_state(sc)
    assert set(before) == {"n_features_in_", "feature_names_in_", "lower_", "upper_", "privacy_"}
    Z = sc.transform(X)

    # a refused ledger charge on data of another shape, without column names
    with pytest.raises(BudgetExceededError):
        sc.set_params(bounds=(0.0, 1.0)).fit(np.random.default_rng(0).uniform(size=(40, 5)))
    _assert_same_state(before, sc)
    assert ledger.spent.epsilon == pytest.approx(0.4)
    np.testing.assert_array_equal(sc.transform(X), Z)  # still usable, and the same map

    # bad input found after validate_data has seen the new X (bounds of the wrong length)
    sc.set_params(bounds=([0.0, 0.0], [1.0, 1.0]), ledger=None)
    with pytest.raises(ValueError, match=r"shape \(5,\)"):
        sc.fit(np.zeros((10, 5)))
    _assert_same_state(before, sc)

    # bad parameters, bad data
    for params in ({"lattice_bits": 0}, {"quantile_features": [7]}, {"epsilon": -1.0}):
        with pytest.raises(ValueError):
            sc.set_params(bounds=_BOUNDS, **params).fit(X)
        sc.set_params(lattice_bits=32, quantile_features=None, epsilon=0.4)
        _assert_same_state(before, sc)
    with pytest.raises(ValueError, match="NaN"):
        sc.fit(np.full((5, 3), np.nan))
    _assert_same_state(before, sc)

    # a failure, or an interrupt, inside the mechanism
    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(scalers, "dp_quantiles", boom)
    with pytest.raises(KeyboardInterrupt):
        sc.fit(_raw(50))
    _assert_same_state(before, sc)
    monkeypatch.undo()

    # a successful refit replaces everything together
    sc.fit(_raw(300))
    assert "feature_names_in_" not in vars(sc) and sc.lower_ is not before["lower_"]

    # an estimator that was never fitted stays unfitted
    fresh = DPFeatureScaler(epsilon=0.4, bounds=(0.0, 1.0), seed=0, ledger=ledger)
    with pytest.raises(BudgetExceededError):
        fresh.fit(_raw(20))
    assert _fitted_state(fresh) == {}


# ---- bad input ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"bounds": None}, ValueError, "bounds is required"),
        ({"bounds": (1.0, 0.0)}, ValueError, "lower < upper"),
        ({"bounds": (0.0, 0.0)}, ValueError, "lower < upper"),
        ({"bounds": (0.0, math.inf)}, ValueError, "must be finite"),
        ({"bounds": (math.nan, 1.0)}, ValueError, "must be finite"),
        ({"bounds": ([0.0, 0.0], [1.0, 1.0])}, ValueError, r"shape \(3,\)"),
        ({"bounds": "0,1"}, TypeError, "pair"),
        ({"bounds": (0.0, 1.0, 2.0)}, TypeError, "pair"),
        ({"epsilon": 0.0}, ValueError, "epsilon must be > 0"),
        ({"epsilon": -1.0}, ValueError, "epsilon must be > 0"),
        ({"epsilon": math.nan}, ValueError, "epsilon must be > 0"),
        ({"epsilon": "1"}, TypeError, "epsilon"),
        ({"quantile_range": (-0.1, 0.9)}, ValueError, r"\[0, 1\]"),
        ({"quantile_range": (0.1, 1.5)}, ValueError, r"\[0, 1\]"),
        ({"quantile_range": (0.9, 0.1)}, ValueError, "q_low < q_high"),
        ({"quantile_range": 0.5}, TypeError, "pair"),
        ({"feature_range": "unit"}, ValueError, "feature_range"),
        ({"quantile_features": [0, 3]}, ValueError, "quantile_features"),
        ({"quantile_features": [0, 0]}, ValueError, "repeated"),
        ({"seed": -1}, ValueError, "seed"),
        ({"seed": 1.5}, TypeError, "seed"),
        ({"lattice_bits": 0}, ValueError, "lattice_bits"),
        ({"lattice_bits": 53}, ValueError, "lattice_bits"),
        ({"lattice_bits": 8.0}, TypeError, "lattice_bits"),
        ({"lattice_bits": True}, TypeError, "lattice_bits"),
    ],
)
def test_scaler_bad_parameters(params, error, match):
    kwargs = {"epsilon": 1.0, "bounds": (0.0, 100.0), "seed": 0, **params}
    with pytest.raises(error, match=match):
        DPFeatureScaler(**kwargs).fit(_raw(50))


def test_bad_data():
    X = _raw(50)
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DPFeatureScaler(bounds=_BOUNDS, seed=0).fit(X)
    with pytest.raises(ValueError, match="finite"):
        dp_quantiles(X, 0.5, 1.0, _BOUNDS)
    with pytest.raises(ValueError, match="NaN"):
        UnitBallProjector().fit(X)
    with pytest.raises(TypeError, match="(?i)sparse"):
        DPFeatureScaler(bounds=_BOUNDS, seed=0).fit(sp.csr_matrix(_raw(20)))
    with pytest.raises(TypeError, match="real numbers"):
        dp_quantiles(np.array(["a", "b"]), 0.5, 1.0, (0, 1))
    with pytest.raises(ValueError, match=r"1-D \(n,\) or 2-D"):
        dp_quantiles(np.zeros((2, 2, 2)), 0.5, 1.0, (0, 1))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        dp_quantiles(np.zeros(5), [0.5, np.nan], 1.0, (0, 1))
    for bits, error in ((0, ValueError), (53, ValueError), (2.5, TypeError), (None, TypeError)):
        with pytest.raises(error, match="lattice_bits"):
            dp_quantiles(np.zeros(5), 0.5, 1.0, (0, 1), lattice_bits=bits)
    with pytest.raises(ValueError, match="radius"):
        UnitBallProjector(radius=0.0).fit(_raw(10))
    sc = DPFeatureScaler(bounds=_BOUNDS, seed=0).fit(_raw(50))
    with pytest.raises(ValueError, match="features"):
        sc.transform(_raw(5)[:, :2])


# ---- UnitBallProjector -------------------------------------------------------------------------
def test_unit_ball_projector_dense_and_sparse():
    X = _raw(200)
    X.setflags(write=False)
    before = X.copy()
    proj = UnitBallProjector(radius=2.0).fit(X)
    assert proj.n_features_in_ == 3 and not hasattr(proj, "privacy_")
    Z = proj.transform(X)
    assert np.array_equal(X, before)
    assert np.linalg.norm(Z, axis=1).max() <= 2.0
    inside = np.array([[0.3, 0.4, 0.0]])
    assert np.array_equal(proj.transform(inside), inside)
    S = proj.transform(sp.csr_matrix(X))
    assert sp.issparse(S)
    np.testing.assert_allclose(S.toarray(), Z)


# ---- scikit-learn API --------------------------------------------------------------------------
@parametrize_with_checks(
    [
        DPFeatureScaler(bounds=(-5.0, 5.0), seed=0),
        DPFeatureScaler(bounds=(-5.0, 5.0)),  # seed=None: tagged non-deterministic
        DPFeatureScaler(bounds=(0.0, 10.0), feature_range="nonnegative", seed=1),
        UnitBallProjector(),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_non_deterministic_tag():
    assert DPFeatureScaler(bounds=(0, 1)).__sklearn_tags__().non_deterministic
    assert not DPFeatureScaler(bounds=(0, 1), seed=0).__sklearn_tags__().non_deterministic


# ---- from raw data to a private model ----------------------------------------------------------
def test_pipeline_raw_synthetic_to_dpsgd_without_leak_warning():
    rng = np.random.default_rng(3)
    X = _raw(6000, seed=3)
    logit = 0.24 * (X[:, 0] - 40.0) + 4.5 * (np.log(X[:, 1]) - 10.0) - 0.9 * (X[:, 2] - 3.0)
    y = (logit + rng.logistic(size=len(X)) > 0).astype(int)  # non-private logistic: 0.87
    ledger = PrivacyLedger(epsilon_cap=1.5, delta_cap=1e-5)
    pipe = Pipeline(
        [
            ("scale", DPFeatureScaler(epsilon=0.5, bounds=_BOUNDS, seed=0, ledger=ledger)),
            (
                "clf",
                DPSGDClassifier(
                    mechanism="gaussian",
                    epsilon=1.0,
                    batch_size=128,
                    epochs=5,
                    eta0=20.0,
                    seed=0,
                    classes=[0, 1],  # the public label set (read from y it would warn)
                ),
            ),
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        pipe.fit(X[:4000], y[:4000])
        acc = pipe.score(X[4000:], y[4000:])
    assert acc > 0.75, acc
    assert ledger.spent.epsilon == pytest.approx(0.5)


def test_pipeline_adult_raw_to_dpsgd_without_leak_warning(require_data):
    from privlearn.data import load_adult

    home = require_data("adult/adult.data", "adult/adult.test")
    X, y = load_adult("train", data_home=home)
    Xt, yt = load_adult("test", data_home=home)
    # public schema: the 6 raw numeric columns get domain ranges, the one-hot columns (0, 1)
    lo = np.zeros(X.shape[1])
    hi = np.ones(X.shape[1])
    lo[:6] = [0, 0, 1, 0, 0, 0]
    hi[:6] = [100, 1.5e6, 16, 1e5, 5000, 100]
    pipe = Pipeline(
        [
            (
                "scale",
                DPFeatureScaler(
                    epsilon=0.5, bounds=(lo, hi), quantile_features=np.arange(6), seed=0
                ),
            ),
            (
                "clf",
                DPSGDClassifier(
                    mechanism="gaussian",
                    epsilon=1.0,
                    batch_size=256,
                    epochs=5,
                    eta0=50.0,
                    learning_rate="inv_sqrt",
                    fit_intercept=False,
                    seed=0,
                    classes=[-1, 1],  # load_adult's labels, a public input
                ),
            ),
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        pipe.fit(X, y)
    acc = pipe.score(Xt, yt)
    majority = max(np.mean(yt == 1), np.mean(yt == -1))
    assert acc > majority + 0.04, (acc, majority)  # about 0.845 vs 0.764
    assert pipe["scale"].privacy_.epsilon == 0.5
