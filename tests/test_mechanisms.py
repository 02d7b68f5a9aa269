"""Release mechanisms: distributions, lattice/grid structure, reproducibility, the ledger hook
and bad input.

Statistical tests use fixed seeds, so each is deterministic; the stated false-failure
probability is the chance that a correct sampler fails at that threshold for a seed chosen at
random (each KS / chi-square test rejects at p < 1e-4, each z-test at |z| > 4.5: about 1e-5).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import special, stats

from privlearn import mechanisms as M
from privlearn.mechanisms import _bits
from privlearn.mechanisms._bits import BitSource, make_stream
from privlearn.mechanisms.laplace import _uniform_full_precision

P_MIN = 1e-4  # KS / chi-square rejection threshold = false-failure probability per test
Z_MAX = 4.5  # z-test threshold, two-sided false-failure probability ~7e-6


def _chisquare_p(samples: np.ndarray, support: np.ndarray, probs: np.ndarray) -> float:
    """Chi-square goodness of fit of integer-coded ``samples`` against ``probs`` on
    ``support``; cells with expected count < 5 are pooled (and the mass outside ``support``
    joins the pooled cell)."""
    n = samples.size
    index = {int(v): i for i, v in enumerate(support)}
    observed = np.zeros(support.size + 1)
    for v, c in zip(*np.unique(samples, return_counts=True)):
        observed[index.get(int(v), support.size)] += c
    expected = np.append(probs, max(0.0, 1.0 - probs.sum())) * n
    small = expected < 5
    obs = np.append(observed[~small], observed[small].sum())
    exp = np.append(expected[~small], expected[small].sum())
    if exp[-1] == 0:
        assert obs[-1] == 0
        obs, exp = obs[:-1], exp[:-1]
    exp *= obs.sum() / exp.sum()
    return float(stats.chisquare(obs, exp).pvalue)


def _laplace_cdf(x: np.ndarray, scale: float) -> np.ndarray:
    return np.where(x < 0, 0.5 * np.exp(x / scale), 1.0 - 0.5 * np.exp(-x / scale))


# ---- snapping Laplace -----------------------------------------------------------------------
@pytest.mark.parametrize(("sensitivity", "epsilon"), [(1.0, 1.0), (3.0, 0.7), (0.01, 2.0)])
def test_snapping_parameters_calibration(sensitivity, epsilon):
    p = M.snapping_parameters(sensitivity, epsilon)
    assert p.guaranteed_epsilon <= epsilon
    assert p.guaranteed_epsilon > epsilon * (1 - 1e-9)
    assert p.noise_scale < p.bound < 2.0**46 * p.noise_scale  # Mironov's condition
    assert math.frexp(p.grid)[0] == 0.5 and p.noise_scale <= p.grid < 2 * p.noise_scale
    # the default bound costs at most 2**-10 of the budget
    assert p.noise_scale <= sensitivity / epsilon / (1 - 2.0**-10) * (1 + 1e-9)
    explicit = M.snapping_parameters(sensitivity, epsilon, bound=100 * p.noise_scale, size=7)
    expected = (sensitivity + 7 * 2.0**-49 * 100 * p.noise_scale) / epsilon
    assert explicit.noise_scale == pytest.approx(expected, rel=1e-11)
    assert explicit.noise_scale >= expected
    assert explicit.guaranteed_epsilon <= epsilon


def test_snapping_parameters_bound_errors():
    with pytest.raises(ValueError, match="must exceed the noise scale"):
        M.snapping_parameters(1.0, 1.0, bound=0.5)
    with pytest.raises(ValueError, match="2\\*\\*46"):
        M.snapping_parameters(1.0, 1.0, bound=2.0**50)
    with pytest.raises(ValueError, match="pass bound="):
        M.snapping_parameters(1.0, 1e-9, size=10**6)


def test_snapping_outputs_on_grid_and_within_bound():
    params = M.snapping_parameters(1.0, 1.0, bound=8.0, size=5000)
    values = np.linspace(-20.0, 20.0, 5000)  # many values beyond the bound: clamped
    out = M.laplace(values, 1.0, 1.0, seed=11, bound=8.0)
    assert out.shape == values.shape and out.dtype == np.float64
    assert np.abs(out).max() <= params.bound
    on_grid = out / params.grid == np.rint(out / params.grid)
    assert (on_grid | (np.abs(out) == params.bound)).all()
    assert (np.abs(out) == params.bound).any()  # clamping happened
    assert not np.signbit(out[out == 0.0]).any()  # no -0.0 (its sign would leak)
    # bound a multiple of the grid: every output is a grid point
    out = M.laplace(np.full(2000, 0.3), 1.0, 2.0, seed=3)
    grid = M.snapping_parameters(1.0, 2.0, size=2000).grid
    assert (out / grid == np.rint(out / grid)).all()


@pytest.mark.parametrize(("value", "sensitivity", "epsilon"), [(0.3, 1.0, 1.0), (-2.7, 3.0, 0.7)])
def test_snapping_matches_rounded_laplace_pmf(value, sensitivity, epsilon):
    n = 20000
    p = M.snapping_parameters(sensitivity, epsilon, size=n)
    out = M.laplace(np.full(n, value), sensitivity, epsilon, seed=5)
    k = np.rint(out / p.grid).astype(np.int64)
    support = np.arange(k.min() - 5, k.max() + 6)
    edges = (support[:, None] + np.array([-0.5, 0.5])) * p.grid - value
    probs = np.diff(_laplace_cdf(edges, p.noise_scale), axis=1).ravel()
    assert _chisquare_p(k, support, probs) > P_MIN


def test_secure_and_textbook_laplace_have_matching_spread():
    n = 20000
    sensitivity, epsilon = 2.0, 1.5
    p = M.snapping_parameters(sensitivity, epsilon, size=n)
    secure = M.laplace(np.zeros(n), sensitivity, epsilon, seed=21)
    # textbook Laplace with the same scale lambda, rounded to the same grid: same distribution
    textbook = M.laplace(
        np.zeros(n), sensitivity, sensitivity / p.noise_scale, seed=22, secure=False
    )
    assert np.var(textbook) == pytest.approx(2 * p.noise_scale**2, rel=Z_MAX * math.sqrt(5 / n))
    snapped_textbook = np.rint(textbook / p.grid).astype(np.int64)
    k = np.rint(secure / p.grid).astype(np.int64)
    values = np.union1d(k, snapped_textbook)
    table = np.array([[np.sum(k == v), np.sum(snapped_textbook == v)] for v in values])
    table = table[table.sum(axis=1) >= 10]
    assert stats.chi2_contingency(table).pvalue > P_MIN
    # variance with Sheppard's correction for the grid
    expected = 2 * p.noise_scale**2 + p.grid**2 / 12
    assert np.var(secure) == pytest.approx(expected, rel=Z_MAX * math.sqrt(6 / n))


def test_textbook_laplace_ks():
    out = M.laplace(np.full(20000, 1.0), 0.5, 2.0, seed=9, secure=False)
    assert stats.kstest(out - 1.0, stats.laplace(scale=0.25).cdf).pvalue > P_MIN


def test_snapping_uniform_has_full_resolution():
    # U* reaches far below 2**-53 (the resolution of a plain 53-bit uniform)
    u, negative = _uniform_full_precision(4, 200000)
    assert 0.0 < u.min() and u.max() < 1.0
    assert u.min() < 2.0**-12
    assert abs(negative.mean() - 0.5) < Z_MAX * 0.5 / math.sqrt(u.size)
    assert stats.kstest(u, "uniform").pvalue > P_MIN
    # exponent e: P(U* < 2**-k) = 2**-k
    for k in (1, 4, 8):
        frac = np.mean(u < 2.0**-k)
        assert abs(frac - 2.0**-k) < Z_MAX * math.sqrt(2.0**-k / u.size)


# ---- exact samplers ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "gamma",
    [
        Fraction(3, 10),
        Fraction(1),
        Fraction(17, 10),
        Fraction(2**71 + 12345, 3 * 2**70),
        Fraction(7, 3),
    ],
)
def test_bernoulli_exp_exact(gamma):
    source = BitSource(make_stream(2, 99))
    n = 40000
    num = np.full(n, gamma.numerator, dtype=object)
    hits = source.bernoulli_exp(num, gamma.denominator)
    p = math.exp(-float(gamma))
    assert abs(hits.mean() - p) < Z_MAX * math.sqrt(p * (1 - p) / n)


def test_bernoulli_fraction_large_denominator():
    source = BitSource(make_stream(3, 99))
    n = 40000
    den = 3 * 2**80 + 1
    num = np.full(n, den // 3, dtype=object)
    hits = source.bernoulli_fraction(num, den)
    assert abs(hits.mean() - 1 / 3) < Z_MAX * math.sqrt(2 / 9 / n)
    assert source.bernoulli_fraction(np.array([0, den], dtype=object), den).tolist() == [
        False,
        True,
    ]


# ---- discrete Laplace --------------------------------------------------------------------------
@pytest.mark.parametrize("scale", [0.5, 2.5, 7.0, Fraction(10, 3)])
def test_discrete_laplace_pmf(scale):
    n = 20000
    out = M.discrete_laplace(np.full(n, 5), scale, seed=31)
    assert out.dtype == np.int64 and out.shape == (n,)
    noise = out - 5
    t = float(scale)
    support = np.arange(-int(40 * t) - 5, int(40 * t) + 6)
    probs = (1 - math.exp(-1 / t)) / (1 + math.exp(-1 / t)) * np.exp(-np.abs(support) / t)
    assert _chisquare_p(noise, support, probs) > P_MIN


def test_discrete_laplace_scalar_and_shape():
    out = M.discrete_laplace(7, 1.0, seed=1)
    assert isinstance(out, int)
    arr = M.discrete_laplace(np.arange(12).reshape(3, 4), 1.0, seed=1)
    assert arr.shape == (3, 4) and arr.dtype == np.int64
    floats = M.discrete_laplace(np.array([1.0, 2.0]), 1.0, seed=1)
    assert floats.dtype == np.int64


# ---- Gaussian ----------------------------------------------------------------------------------
def _discrete_gaussian_pmf(support: np.ndarray, sigma: float) -> np.ndarray:
    wide = np.arange(-int(40 * sigma) - 10, int(40 * sigma) + 11)
    log_w = -(wide.astype(float) ** 2) / (2 * sigma**2)
    log_norm = special.logsumexp(log_w)
    return np.exp(-(support.astype(float) ** 2) / (2 * sigma**2) - log_norm)


@pytest.mark.parametrize("method", ["lattice", "discrete"])
@pytest.mark.parametrize(("sigma", "step"), [(0.8, 1.0), (1.0, 1.0), (3.0, 1.0), (1.3, 0.25)])
def test_gaussian_noise_is_the_exact_discrete_gaussian(sigma, step, method):
    """Issue 30 item 9: both methods add the exact discrete Gaussian N_Z(0, s**2) in lattice
    units, s**2 = noise_variance >= (sigma/step)**2 (the sampler's grid). At sigma/step = 1
    the old rounded Box-Muller normal (P(0) = 0.383 against 0.399) fails this test."""
    n = 40000
    privacy = M.gaussian_privacy(1.0, sigma, lattice_step=step, size=n)
    assert privacy.noise_variance >= (sigma / step) ** 2
    assert sigma / step <= privacy.noise_scale <= math.sqrt(privacy.noise_variance)
    out = M.gaussian(np.zeros(n), 1.0, sigma, seed=41, method=method, lattice_step=step)
    k = out / step
    assert (k == np.rint(k)).all()
    k = k.astype(np.int64)
    s = math.sqrt(privacy.noise_variance)
    support = np.arange(-int(10 * s) - 3, int(10 * s) + 4)
    assert _chisquare_p(k, support, _discrete_gaussian_pmf(support, s)) > P_MIN


def test_gaussian_noise_variance_is_the_smallest_valid_one():
    from privlearn.reference.random import discrete_gaussian_round_variance as round_up

    for sigma, step, expected in [(0.8, 1.0, 1), (1.0, 1.0, 1), (3.0, 1.0, 12), (1.3, 0.25, 28)]:
        assert M.gaussian_privacy(1.0, sigma, lattice_step=step).noise_variance == expected
        assert round_up(expected) == expected
    # the default step: at most 2**-11 relative variance above sigma**2
    p = M.gaussian_privacy(1.0, 2.5, size=1000)
    ratio = p.noise_variance / p.noise_scale**2
    assert 1.0 <= ratio <= 1.0 + 2.0**-11


def test_gaussian_draws_are_the_core_sampler_and_its_twin():
    """One discrete Gaussian in the package: the release's noise is draws 0..n-1 of the core's
    sampler on the mechanism's stream, and the numpy twin gives the same integers."""
    from privlearn import random as core_random
    from privlearn.reference import random as ref_random

    n, sigma, step = 300, 2.5, 2.0**-6
    values = np.linspace(-3.0, 3.0, n)
    out = M.gaussian(values, 1.0, sigma, seed=5, lattice_step=step)
    noise = np.rint(out / step) - np.rint(values / step)
    variance = M.gaussian_privacy(1.0, sigma, lattice_step=step, size=n).noise_variance
    core = core_random.Stream(5, stream=_bits.STREAM_GAUSSIAN).discrete_gaussian(0, n, variance)
    twin = ref_random.Stream(5, stream=_bits.STREAM_GAUSSIAN).discrete_gaussian(0, n, variance)
    np.testing.assert_array_equal(noise, core)
    np.testing.assert_array_equal(core, twin)


def test_gaussian_tail_mass_matches_the_pmf():
    """Beyond 4 sd at s**2 = 1: P(|Z| >= 4) = 2.68e-4 for the discrete Gaussian (the old
    rounded normal gave P(|N| >= 3.5) = 4.65e-4). 400k draws: about 107 expected."""
    n = 400_000
    out = M.gaussian(np.zeros(n), 1.0, 1.0, seed=77, lattice_step=1.0)
    support = np.arange(-60, 61)
    pmf = _discrete_gaussian_pmf(support, 1.0)
    p = float(pmf[np.abs(support) >= 4].sum())
    hits = int((np.abs(out) >= 4).sum())
    assert abs(hits - n * p) < Z_MAX * math.sqrt(n * p * (1 - p))


def _pack_digits(digits, n_blocks):
    """16-bit digits (low half of a word first) as whole ChaCha20-sized blocks of 32-bit words."""
    d = np.zeros(32 * n_blocks, dtype=np.uint32)
    d[: len(digits)] = digits
    return d[0::2] | (d[1::2] << np.uint32(16))


def test_gaussian_tail_beyond_nine_sd_is_reachable():
    """The exact sampler has no tail cut (the old Box-Muller normal stopped at 8.57 sd): at
    s**2 = 1 (t = 1) the digit string below yields Z = 10 (10 sd), in the core and in its twin.
    A decreasing run 5 > 3, stopped by 4, has even length 2 (von Neumann: an exponential trial
    that fails, or B(exp(-1)) that succeeds); the run 5, stopped by 7, has odd length 1. The
    proposal X = floor(E) = 10 is ten failed exponential trials and one that succeeds; the sign
    comes from the reservoir digit 0 (positive); the acceptance B(exp(-(10 - 1)**2 / 2)) is
    forty B(exp(-1)) successes and B(exp(-1/2)) decided by a first digit 2**15 (not below
    1/2: success)."""
    from privlearn import _core
    from privlearn.reference import random as ref_random

    even, odd = [5, 3, 4], [5, 7]
    script = even * 10 + odd + [0] + even * 40 + [2**15]
    assert len(script) == 154
    bits = ref_random._ScriptedDigits(script)
    assert ref_random._discrete_gaussian_draw(bits, 1, 0) == 10
    assert bits.used == 154
    assert _core.random_discrete_gaussian_scripted(_pack_digits(script, 5), 1, 0) == (10, 154)


@pytest.mark.parametrize("method", ["lattice", "discrete"])
def test_gaussian_outputs_on_lattice_with_right_spread(method):
    n = 20000
    sigma = 2.5
    values = np.random.default_rng(0).uniform(-50, 50, n)
    step = M.gaussian_privacy(1.0, sigma, size=n).lattice_step
    assert step == 2.0 ** (1 - 18 - math.ceil(math.log2(n) / 2))
    out = M.gaussian(values, 1.0, sigma, seed=43, method=method)
    assert (out / step == np.rint(out / step)).all()
    assert not np.signbit(out[out == 0.0]).any()
    noise = out - np.rint(values / step) * step
    assert np.var(noise) == pytest.approx(sigma**2, rel=Z_MAX * math.sqrt(2 / n))
    assert stats.kstest(noise, stats.norm(scale=sigma).cdf).pvalue > P_MIN


def test_gaussian_privacy_statement():
    p = M.gaussian_privacy(1.0, 2.0, lattice_step=2.0**-4, size=4)
    assert p.effective_sensitivity == 1.0 + 2 * 2.0**-4
    assert p.mu == pytest.approx(p.effective_sensitivity / 2.0)
    assert p.rho == pytest.approx(p.mu**2 / 2)
    # analytic Gaussian: mu = 1, delta = 1e-5 -> 4.3772 (DESIGN.md test vectors)
    assert M.analytic_gaussian_epsilon(1.0, 1e-5) == pytest.approx(4.3772, rel=1e-4)
    assert M.zcdp_epsilon(0.5, 1e-5) == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e5)))
    assert p.epsilon(1e-5, "discrete") == pytest.approx(M.zcdp_epsilon(p.rho, 1e-5))
    assert M.analytic_gaussian_epsilon(1e-3, 0.5) == 0.0


def test_gaussian_lattice_epsilon_adds_the_slack():
    """The GDP statement of the exact discrete Gaussian: the analytic Gaussian epsilon of the
    noise's own mu at the delta the lattice slack leaves, plus 2 N eta; the zCDP statement
    where that is smaller (a coarse lattice). On the default lattice the 2**-16 variance
    inflation pays for the slack: the statement stays below the analytic epsilon of the
    requested mu, which callers that compose by mu (DPKMeans) rely on."""
    delta = 1e-5
    p = M.gaussian_privacy(1.0, 2.0, size=10)
    assert p.noise_mu < p.mu * (1 - 7e-6)
    base = M.analytic_gaussian_epsilon(p.noise_mu, delta)
    slack = p.slack(delta, base)
    assert slack.coordinates == 10 and slack.scale == p.noise_scale
    assert p.noise_scale**2 <= p.noise_variance
    assert 0.0 < slack.log_ratio < 1e-9 and slack.tail < 1e-20 * delta
    extra = p.epsilon(delta) - base - 2.0 * slack.log_ratio
    assert 0.0 <= extra < 1e-8
    for sigma, size, d in [(1.0, 1, 1e-6), (0.3, 1000, 1e-9), (66.7, 5, 1.67e-7)]:
        q = M.gaussian_privacy(1.0, sigma, size=size)
        assert q.epsilon(d) <= M.analytic_gaussian_epsilon(q.mu, d)
    coarse = M.gaussian_privacy(1.0, 1.0, lattice_step=1.0)
    assert coarse.noise_variance == 1 and coarse.noise_mu == coarse.mu == 2.0
    assert coarse.epsilon(delta) == coarse.epsilon(delta, "discrete")
    assert coarse.epsilon(delta) == pytest.approx(M.zcdp_epsilon(coarse.rho, delta))


# ---- L2 Laplace ----------------------------------------------------------------------------------
def test_l2_laplace_radius_gamma_and_uniform_direction():
    n, d, sensitivity, epsilon = 20000, 5, 2.0, 0.5
    centre = np.arange(d, dtype=float)
    out = M.l2_laplace(np.tile(centre, (n, 1)), sensitivity, epsilon, seed=51)
    z = out - centre
    radius = np.linalg.norm(z, axis=1)
    gamma = stats.gamma(a=d, scale=sensitivity / epsilon)
    assert stats.kstest(radius, gamma.cdf).pvalue > P_MIN
    direction = z / radius[:, None]
    assert np.abs(direction.mean(axis=0)).max() < Z_MAX * math.sqrt(1 / d / n)
    single = M.l2_laplace(centre, sensitivity, epsilon, seed=51)
    assert single.shape == (d,)
    np.testing.assert_array_equal(single, out[0])


# ---- exponential mechanism ---------------------------------------------------------------------
@pytest.mark.parametrize("monotonic", [False, True])
def test_exponential_frequencies_match_softmax(monotonic):
    scores = np.array([0.0, 1.0, 2.0, 3.5, -1.0])
    epsilon, sensitivity = 1.3, 0.7
    n = 50000
    picks = M.exponential(scores, epsilon, sensitivity, seed=61, monotonic=monotonic, size=n)
    coef = epsilon / sensitivity if monotonic else epsilon / (2 * sensitivity)
    probs = special.softmax(coef * scores)
    assert _chisquare_p(picks, np.arange(scores.size), probs) > P_MIN


def test_exponential_remainder_with_huge_log_count():
    scores = np.array([0.0, 5.0, 10.0])
    epsilon, sensitivity = 2.0, 1.0  # logit = score
    rem = M.Remainder(log_count=300.0, score=-295.0)  # logit -295 + 300 = 5
    n = 50000
    picks = M.exponential(scores, epsilon, sensitivity, seed=62, remainder=rem, size=n)
    logits = np.array([0.0, 5.0, 10.0, -295.0 + 300.0])
    log_p = logits - special.logsumexp(logits)
    coded = np.where(picks == M.REMAINDER, 3, picks)
    assert _chisquare_p(coded, np.arange(4), np.exp(log_p)) > P_MIN
    np.testing.assert_allclose(
        M.exponential_log_probabilities(scores, epsilon, sensitivity, remainder=rem), log_p
    )
    # a remainder that dominates: R = e**300 candidates at the top score
    always = M.exponential(scores, 1.0, 1.0, seed=1, remainder=(300.0, 10.0), size=100)
    assert (always == M.REMAINDER).all()
    only = M.exponential([], 1.0, 1.0, seed=1, remainder=(0.0, 0.0))
    assert only == M.REMAINDER


@pytest.mark.parametrize("offset", [1e4, -1e4])
def test_exponential_stable_for_large_scores(offset):
    base = np.array([0.0, 0.5, 1.0, 2.0])
    n = 50000
    picks = M.exponential(offset + base, 2.0, 1.0, seed=63, size=n)
    assert _chisquare_p(picks, np.arange(4), special.softmax(base)) > P_MIN
    rem_picks = M.exponential(offset + base, 2.0, 1.0, seed=64, size=n, remainder=(250.0, offset))
    logits = np.append(base, 250.0)
    coded = np.where(rem_picks == M.REMAINDER, 4, rem_picks)
    assert _chisquare_p(coded, np.arange(5), special.softmax(logits)) > P_MIN


class _ScriptedWords:
    """Feeds fixed 64-bit words to the exact selector (in place of ChaCha20 draws)."""

    def __init__(self, words):
        self._words = list(words)
        self.used = 0

    def word(self) -> int:
        w = self._words[self.used]
        self.used += 1
        return w


def test_exponential_candidate_trailing_by_45_is_reachable():
    """Issue 30 item 9: the Gumbel-max sampler could not choose a candidate whose logit trails
    by more than about 40 (its 52-bit uniforms bounded the Gumbels). The exact sampler
    proposes it with probability 2**64 / (2**128 + 2**64) (level 64 = floor(45 / ln 2)) and
    accepts it with exp(-(45 - 64 ln 2)), so P = e**-45 / (1 + e**-45) exactly; the words
    below (uniform = 2**128, then two acceptance words) select it."""
    from privlearn.mechanisms.exponential import _selector

    sel = _selector(np.array([0.0, -45.0]), 2.0, 1.0, False, None)
    assert sel._levels == [0, 64]
    assert sel._block_end == [1 << 128, (1 << 128) + (1 << 64)]
    top = (1 << 64) - 1
    words = _ScriptedWords([1 << 63, 0, 0, top, top])
    assert sel.draw(words) == 1 and words.used == 5
    # log of (proposal ratio x acceptance) is exactly the logit gap
    assert -64 * math.log(2) - (45 - 64 * math.log(2)) == pytest.approx(-45.0, abs=1e-12)


@pytest.mark.parametrize(
    ("gamma", "k"),
    [(Fraction(45), 64), (Fraction(3, 2), 2), (Fraction(7, 10), 1), (Fraction(1, 3), 0)],
)
def test_exact_selection_acceptance_is_exp_minus_gamma_plus_k_ln2(gamma, k):
    from privlearn.mechanisms._select import WordSource, bernoulli_exp_shifted

    words = WordSource(BitSource(make_stream(4, 99)))
    n = 20000
    hits = sum(
        bernoulli_exp_shifted(words, gamma.numerator, gamma.denominator, k) for _ in range(n)
    )
    p = math.exp(-(float(gamma) - k * math.log(2)))
    assert abs(hits / n - p) < Z_MAX * math.sqrt(p * (1 - p) / n)


def test_exact_selection_refuses_a_level_above_gamma():
    from privlearn.mechanisms._select import WordSource, bernoulli_exp_shifted, ln2_bounds

    lo, hi = ln2_bounds(200)
    assert lo < Fraction(math.log(2)) + Fraction(1, 2**52) and hi - lo < Fraction(1, 2**190)
    words = WordSource(BitSource(make_stream(4, 98)))
    with pytest.raises(RuntimeError, match="proposal level"):
        bernoulli_exp_shifted(words, 69, 100, 1)  # 0.69 < ln 2


def test_exponential_small_instance_matches_exact_probabilities():
    """A tiny instance with a trailing candidate of probability 2.5e-3: chi-square of 40,000
    draws against the exact softmax, and a z-test on the trailing candidate."""
    scores = np.array([0.0, -3.0, -6.0, -12.0])
    n = 40000
    picks = M.exponential(scores, 1.0, 1.0, seed=65, size=n)  # logits = scores / 2
    probs = special.softmax(scores / 2.0)
    assert _chisquare_p(picks, np.arange(4), probs) > P_MIN
    p = probs[3]
    assert abs((picks == 3).sum() - n * p) < Z_MAX * math.sqrt(n * p * (1 - p))


def test_exponential_returns_int():
    pick = M.exponential([1.0, 2.0], 1.0, 1.0, seed=3)
    assert isinstance(pick, int) and pick in (0, 1)


# ---- reproducibility --------------------------------------------------------------------------
RELEASES = {
    "laplace": lambda seed: M.laplace(np.zeros(50), 1.0, 1.0, seed=seed),
    "textbook": lambda seed: M.laplace(np.zeros(50), 1.0, 1.0, seed=seed, secure=False),
    "discrete_laplace": lambda seed: M.discrete_laplace(np.zeros(50, dtype=int), 3.0, seed=seed),
    "lattice": lambda seed: M.gaussian(np.zeros(50), 1.0, 1.0, seed=seed),
    "discrete_gaussian": lambda seed: M.gaussian(
        np.zeros(50), 1.0, 3.0, seed=seed, method="discrete"
    ),
    "l2_laplace": lambda seed: M.l2_laplace(np.zeros((10, 5)), 1.0, 1.0, seed=seed),
    "exponential": lambda seed: M.exponential(np.zeros(20), 1.0, 1.0, seed=seed, size=50),
}


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_reproducible_with_int_seed_and_fresh_without(name):
    release = RELEASES[name]
    np.testing.assert_array_equal(release(1234), release(1234))
    assert not np.array_equal(release(1234), release(1235))
    assert not np.array_equal(release(None), release(None))


def test_mechanisms_draw_from_distinct_streams():
    ids = [
        _bits.STREAM_TEXTBOOK_LAPLACE,
        _bits.STREAM_SNAP_MANTISSA,
        _bits.STREAM_SNAP_EXPONENT,
        _bits.STREAM_SNAP_EXPONENT_TAIL,
        _bits.STREAM_DISCRETE,
        _bits.STREAM_GAUSSIAN,
        _bits.STREAM_L2_LAPLACE,
        _bits.STREAM_EXPONENTIAL,
    ]
    assert len(set(ids)) == len(ids)


# ---- ledger ------------------------------------------------------------------------------------
class Refused(Exception):
    """Stands in for privlearn.exceptions.BudgetExceededError."""


class FakeLedger:
    def __init__(self, log: list, refuse: bool = False):
        self.log = log
        self.refuse = refuse
        self.calls: list[tuple[float, float, str]] = []

    def spend(self, epsilon, delta=0.0, label=""):
        self.log.append("spend")
        self.calls.append((epsilon, delta, label))
        if self.refuse:
            raise Refused(f"{label}: {epsilon}")


LEDGER_CASES = {
    "laplace": (lambda L: M.laplace(1.0, 1.0, 0.5, seed=1, ledger=L), (0.5, 0.0, "laplace")),
    "textbook": (
        lambda L: M.laplace([1.0, 2.0], 1.0, 0.5, seed=1, secure=False, ledger=L),
        (0.5, 0.0, "laplace"),
    ),
    "discrete_laplace": (
        lambda L: M.discrete_laplace([3, 4], 4.0, seed=1, ledger=L),
        (0.25, 0.0, "discrete_laplace"),
    ),
    "discrete_laplace_eps": (
        lambda L: M.discrete_laplace([3, 4], 4.0, seed=1, ledger=L, epsilon=0.5),
        (0.5, 0.0, "discrete_laplace"),
    ),
    "l2_laplace": (
        lambda L: M.l2_laplace([1.0, 2.0], 1.0, 0.7, seed=1, ledger=L),
        (0.7, 0.0, "l2_laplace"),
    ),
    "exponential": (
        lambda L: M.exponential([1.0, 2.0], 0.3, 1.0, seed=1, size=4, ledger=L),
        (1.2, 0.0, "exponential"),
    ),
    "gaussian": (
        lambda L: M.gaussian(1.0, 1.0, 1.0, seed=1, delta=1e-5, lattice_step=2.0**-20, ledger=L),
        (M.gaussian_privacy(1.0, 1.0, lattice_step=2.0**-20).epsilon(1e-5), 1e-5, "gaussian"),
    ),
    "discrete_gaussian": (
        lambda L: M.gaussian(
            1.0, 1.0, 1.0, seed=1, delta=1e-5, method="discrete", lattice_step=1.0, ledger=L
        ),
        (M.zcdp_epsilon(2.0, 1e-5), 1e-5, "gaussian"),
    ),
}


class _RecordingStream(_bits.Stream):
    log: list = []

    def __init__(self, *args, **kwargs):
        type(self).log.append("stream")
        super().__init__(*args, **kwargs)


@pytest.mark.parametrize("name", sorted(LEDGER_CASES))
def test_ledger_charged_before_noise(name, monkeypatch):
    release, (epsilon, delta, label) = LEDGER_CASES[name]
    log: list = []
    monkeypatch.setattr(_RecordingStream, "log", log)
    monkeypatch.setattr(_bits, "Stream", _RecordingStream)
    ledger = FakeLedger(log)
    release(ledger)
    assert len(ledger.calls) == 1
    got_eps, got_delta, got_label = ledger.calls[0]
    assert got_eps == pytest.approx(epsilon, rel=1e-12)
    assert got_delta == delta and got_label == label
    assert log[0] == "spend" and "stream" in log[1:]


@pytest.mark.parametrize("name", sorted(LEDGER_CASES))
def test_refusing_ledger_releases_nothing(name, monkeypatch):
    release, _ = LEDGER_CASES[name]
    log: list = []
    monkeypatch.setattr(_RecordingStream, "log", log)
    monkeypatch.setattr(_bits, "Stream", _RecordingStream)
    with pytest.raises(Refused):
        release(FakeLedger(log, refuse=True))
    assert log == ["spend"]  # no stream was ever created: no noise drawn


def test_bad_input_never_charges_the_ledger():
    log: list = []
    ledger = FakeLedger(log)
    with pytest.raises(ValueError):
        M.laplace(float("nan"), 1.0, 1.0, ledger=ledger)
    with pytest.raises(TypeError):
        M.laplace(1.0, 1.0, 1.0, seed=1.5, ledger=ledger)
    with pytest.raises(ValueError, match="delta is required"):
        M.gaussian(1.0, 1.0, 1.0, ledger=ledger)
    with pytest.raises(TypeError, match="spend"):
        M.laplace(1.0, 1.0, 1.0, ledger=object())  # no spend(): refused, nothing drawn
    assert ledger.calls == []


# ---- bad input -----------------------------------------------------------------------------------
BAD = [
    (lambda: M.laplace(1.0, 1.0, 0.0), ValueError, "epsilon"),
    (lambda: M.laplace(1.0, 1.0, -1.0), ValueError, "epsilon"),
    (lambda: M.laplace(1.0, -1.0, 1.0), ValueError, "sensitivity"),
    (lambda: M.laplace([1.0, np.nan], 1.0, 1.0), ValueError, "value"),
    (lambda: M.laplace([1.0, np.inf], 1.0, 1.0), ValueError, "value"),
    (lambda: M.laplace("1.0", 1.0, 1.0), TypeError, "value"),
    (lambda: M.laplace(1.0, 1.0, 1.0, bound=-3.0), ValueError, "bound"),
    (lambda: M.laplace(1.0, 1.0, 1.0, bound=0.5), ValueError, "bound"),
    (lambda: M.laplace(1.0, 1.0, 1.0, secure="yes"), TypeError, "secure"),
    (lambda: M.laplace(1.0, 1.0, float("nan")), ValueError, "epsilon"),
    (lambda: M.laplace(1.0, 1.0, 1.0, seed=-1), ValueError, "seed"),
    (lambda: M.discrete_laplace([1.5], 1.0), ValueError, "counts"),
    (lambda: M.discrete_laplace(["a"], 1.0), TypeError, "counts"),
    (lambda: M.discrete_laplace([1], 0.0), ValueError, "scale"),
    (lambda: M.discrete_laplace([1], -2.0), ValueError, "scale"),
    (lambda: M.discrete_laplace([1], float("nan")), ValueError, "scale"),
    (lambda: M.discrete_laplace([1], 2.0**41), ValueError, "scale"),
    (lambda: M.discrete_laplace([1], 2.0, epsilon=0.1), ValueError, "epsilon"),
    (lambda: M.discrete_laplace([np.nan], 2.0), ValueError, "counts"),
    (lambda: M.gaussian(1.0, 1.0, 0.0), ValueError, "sigma"),
    (lambda: M.gaussian(1.0, 1.0, -1.0), ValueError, "sigma"),
    (lambda: M.gaussian(1.0, 0.0, 1.0), ValueError, "sensitivity"),
    (lambda: M.gaussian(1.0, 1.0, 1.0, method="exact"), ValueError, "method"),
    (lambda: M.gaussian(1.0, 1.0, 1.0, lattice_step=0.3), ValueError, "power of two"),
    (lambda: M.gaussian(1.0, 1.0, 1.0, lattice_step=2.0**-50), ValueError, "too fine"),
    (lambda: M.gaussian(1e20, 1.0, 1.0), ValueError, "too large"),
    (lambda: M.gaussian(1.0, 1.0, 1.0, delta=1.5), ValueError, "delta"),
    (lambda: M.gaussian([np.nan], 1.0, 1.0), ValueError, "value"),
    (lambda: M.l2_laplace(np.zeros((2, 2, 2)), 1.0, 1.0), ValueError, "vector"),
    (lambda: M.l2_laplace(np.zeros(3), 1.0, 0.0), ValueError, "epsilon"),
    (lambda: M.l2_laplace(np.zeros(3), -1.0, 1.0), ValueError, "sensitivity"),
    (lambda: M.l2_laplace([np.nan, 1.0], 1.0, 1.0), ValueError, "vector"),
    (lambda: M.exponential([], 1.0, 1.0), ValueError, "empty"),
    (lambda: M.exponential([[1.0]], 1.0, 1.0), ValueError, "1-D"),
    (lambda: M.exponential([1.0, np.nan], 1.0, 1.0), ValueError, "scores"),
    (lambda: M.exponential([1.0], 0.0, 1.0), ValueError, "epsilon"),
    (lambda: M.exponential([1.0], 1.0, -1.0), ValueError, "sensitivity"),
    (lambda: M.exponential([1.0], 1.0, 1.0, remainder=(-1.0, 0.0)), ValueError, "log_remainder"),
    (lambda: M.exponential([1.0], 1.0, 1.0, remainder=(1.0, np.inf)), ValueError, "remainder_s"),
    (lambda: M.exponential([1.0], 1.0, 1.0, remainder=3.0), TypeError, "remainder"),
    (lambda: M.exponential([1.0], 1.0, 1.0, size=0), ValueError, "size"),
    (lambda: M.exponential([1.0], 1.0, 1.0, monotonic=None), TypeError, "monotonic"),
]


@pytest.mark.parametrize(("call", "error", "match"), BAD)
def test_bad_input_raises_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        call()
