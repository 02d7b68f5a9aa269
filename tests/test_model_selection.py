"""Private hyperparameter search: the accounting against the theorems' closed forms, and the
search end to end on a small synthetic problem."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privlearn.accounting import (
    DEFAULT_ORDERS,
    BudgetExceededError,
    PrivacyLedger,
    rdp_poisson_gaussian,
    rdp_pure_dp,
    rdp_to_delta,
    rdp_to_epsilon,
)
from privlearn.linear import DPSGDClassifier as _DPSGDClassifier
from privlearn.model_selection import (
    PrivateHyperparameterSearch,
    epsilon_repeat_pure,
    negative_binomial_gamma,
    negative_binomial_mean,
    negative_binomial_pmf,
    plan_repetition_epsilon,
    rdp_repeat_negative_binomial,
    rdp_repeat_poisson,
    repeat_epsilon,
    repetition_rdp,
    sample_repetitions,
)


def DPSGDClassifier(**kw):  # noqa: N802 - Song et al.'s pure-DP setting unless overridden
    # classes: the label set of the ``data`` fixture, declared public
    base = dict(mechanism="l2-laplace", batch_size=10, epochs=1, learning_rate="inv_sqrt",
                fit_intercept=False, clip_rows=False, classes=["a", "b"])  # fmt: skip
    return _DPSGDClassifier(**{**base, **kw})


ORDERS = np.array([1.5, 2.0, 3.0, 5.0, 8.0, 16.0, 32.0, 64.0])
BASE = rdp_poisson_gaussian(0.02, 1.2, ORDERS) * 500  # a DP-SGD-like curve


# ---- the distribution of K ----------------------------------------------------------------
@pytest.mark.parametrize("eta", [-0.5, 0.0, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("gamma", [0.05, 0.3])
def test_negative_binomial_pmf_and_mean(eta, gamma):
    k = np.arange(0, 5000)
    p = negative_binomial_pmf(k, eta, gamma)
    # independent: the negative binomial pmf conditioned on K >= 1 (scipy), eta > 0
    if eta > 0:
        ref = stats.nbinom.pmf(k, eta, gamma) / (1.0 - gamma**eta)
        ref[0] = 0.0
        np.testing.assert_allclose(p, ref, rtol=1e-10, atol=1e-300)
    if eta == 0.0:  # logarithmic distribution
        ref = stats.logser.pmf(k, 1.0 - gamma)
        np.testing.assert_allclose(p, ref, rtol=1e-10, atol=1e-300)
    assert p.sum() == pytest.approx(1.0, rel=1e-12)
    assert (k * p).sum() == pytest.approx(negative_binomial_mean(eta, gamma), rel=1e-10)


@pytest.mark.parametrize("eta", [0.0, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("mean", [1.5, 10.0, 200.0])
def test_gamma_inverts_the_mean(eta, mean):
    g = negative_binomial_gamma(eta, mean)
    assert negative_binomial_mean(eta, g) == pytest.approx(mean, rel=1e-9)
    if eta == 1.0:
        assert g == 1.0 / mean


@pytest.mark.parametrize(
    "kw",
    [
        dict(distribution="truncated_negative_binomial", eta=-0.5, mean=5.0),
        dict(distribution="truncated_negative_binomial", eta=0.0, mean=5.0),
        dict(distribution="truncated_negative_binomial", eta=0.5, mean=5.0),
        dict(distribution="truncated_negative_binomial", eta=1.0, mean=5.0),
        dict(distribution="truncated_negative_binomial", eta=3.0, mean=5.0),
        dict(distribution="poisson", mu=4.0),
    ],
)
def test_sampling_matches_the_distribution(kw):
    """Chi-square goodness of fit of 4000 draws against the exact pmf (bins 1..12 and the
    tail beyond; fixed seed, false-failure probability 1e-3 per case)."""
    kw = dict(kw)
    if kw["distribution"] == "poisson":
        pmf = lambda k: stats.poisson.pmf(k, kw["mu"])  # noqa: E731
        start = 0
    else:
        kw["gamma"] = negative_binomial_gamma(kw["eta"], kw.pop("mean"))
        pmf = lambda k: negative_binomial_pmf(k, kw["eta"], kw["gamma"])  # noqa: E731
        start = 1
    rng = np.random.default_rng(12345)
    ks = np.array([sample_repetitions(rng, **kw) for _ in range(4000)])
    assert ks.min() >= start
    bins = np.arange(start, 13)
    p = pmf(bins)
    observed = np.r_[[(ks == k).sum() for k in bins], (ks > bins[-1]).sum()]
    expected = np.r_[p, 1.0 - p.sum()] * ks.size
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_sampling_has_no_cap():
    """Theorem 2 covers K on all of {1, 2, ...}: the old sampler stopped at
    kmax = 50 E[K] / (1 + eta) + 200 and put the rest of the mass on kmax (up to 2e-3 of it
    for eta < 0), a distribution the theorem does not cover. Uniforms that keep K going
    (the largest double below 1) for 5000 steps now give K = 5001, far beyond that kmax."""
    g = negative_binomial_gamma(0.5, 5.0)  # hazard sampler; old kmax = 366

    def uniform(start, count):
        i = np.arange(start, start + count)
        return np.where(i < 5000, np.nextafter(1.0, 0.0), 0.0)

    assert sample_repetitions(
        uniform, distribution="truncated_negative_binomial", eta=0.5, gamma=g
    ) == 5001  # fmt: skip
    # the heavy tail of eta = -0.9 (E[K] = 3, P[K > k] ~ k^-0.9): the share of draws beyond
    # 10 matches the exact tail probability (binomial test, false failure 1e-3)
    g = negative_binomial_gamma(-0.9, 3.0)
    rng = np.random.default_rng(7)
    ks = np.array(
        [sample_repetitions(rng, distribution="truncated_negative_binomial", eta=-0.9, gamma=g)
         for _ in range(4000)]
    )  # fmt: skip
    tail = 1.0 - negative_binomial_pmf(np.arange(1, 11), -0.9, g).sum()
    assert 0.005 < tail < 0.05
    assert stats.binomtest(int((ks > 10).sum()), ks.size, tail).pvalue > 1e-3


def test_sampling_inverts_the_geometric():
    # inversion: geometric(0.2) has P[K=1] = 0.2
    for u, k in ((0.1999, 1), (0.2001, 2)):
        got = sample_repetitions(
            lambda s, c, u=u: np.full(c, u), distribution="truncated_negative_binomial",
            eta=1.0, gamma=0.2,
        )  # fmt: skip
        assert got == k
    with pytest.raises(TypeError, match="uniform"):
        sample_repetitions(0.5, distribution="poisson", mu=1.0)


# ---- Theorem 2 and Theorem 6 against their closed forms ----------------------------------
def _theorem2(orders, rdp, eta, gamma):
    """[PS22] Theorem 2 written out: min over lambdahat of the bound, then the min over
    larger orders (RDP is monotone in the order)."""
    mean = (
        eta * (1 - gamma) / (gamma * (1 - gamma**eta))
        if eta
        else (1 - gamma) / (gamma * math.log(1 / gamma))
    )
    raw = []
    for lam, eps in zip(orders, rdp):
        best = min(
            eps
            + (1 + eta) * (1 - 1 / lh) * eh
            + (1 + eta) * math.log(1 / gamma) / lh
            + math.log(mean) / (lam - 1)
            for lh, eh in zip(orders, rdp)
        )
        raw.append(best)
    return np.array([min(raw[i:]) for i in range(len(raw))])


def _theorem6(orders, rdp, mu):
    raw = []
    for lam, eps in zip(orders, rdp):
        eps_hat = math.log(1 + 1 / (lam - 1))
        delta_hat = rdp_to_delta(orders, rdp, eps_hat)[0]
        raw.append(eps + mu * delta_hat + math.log(mu) / (lam - 1))
    return np.array([min(raw[i:]) for i in range(len(raw))])


@pytest.mark.parametrize("eta", [-0.5, 0.0, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("gamma", [0.01, 0.1, 0.5])
def test_theorem2_closed_form(eta, gamma):
    got = rdp_repeat_negative_binomial(ORDERS, BASE, eta, gamma)
    np.testing.assert_allclose(got, _theorem2(ORDERS, BASE, eta, gamma), rtol=1e-12)


@pytest.mark.parametrize("mu", [0.5, 3.0, 30.0])
def test_theorem6_closed_form(mu):
    got = rdp_repeat_poisson(ORDERS, BASE, mu)
    np.testing.assert_allclose(got, np.maximum(_theorem6(ORDERS, BASE, mu), 0.0), rtol=1e-12)


def test_agrees_with_dp_accounting_where_installed():
    rdp_acc = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    o = np.array(DEFAULT_ORDERS)
    r = rdp_poisson_gaussian(0.01, 1.0, o) * 1000
    for eta in (0.0, 0.5, 1.0, 2.0):
        g = negative_binomial_gamma(eta, 10.0)
        ref = rdp_acc._compute_rdp_repeat_and_select(list(o), list(r), 10.0, eta)
        np.testing.assert_allclose(rdp_repeat_negative_binomial(o, r, eta, g), ref, rtol=1e-8)


def test_pure_bound_and_liu_talwar():
    assert epsilon_repeat_pure(0.5, 1.0) == pytest.approx(1.5)  # 3 eps, geometric K
    assert epsilon_repeat_pure(0.5, 0.0) == pytest.approx(1.0)
    # the pure bound is the limit of Theorem 2 at large orders
    o = np.array([2.0, 1e4, 1e6])
    r = rdp_pure_dp(0.5, o)
    big = rdp_repeat_negative_binomial(o, r, 1.0, 0.1)[-1]
    assert big == pytest.approx(1.5, abs=1e-4)
    eps, delta, order = repeat_epsilon(
        o, r, 1e-6, distribution="truncated_negative_binomial", eta=1.0, gamma=0.1,
        pure_epsilon=0.5,
    )  # fmt: skip
    assert (eps, delta, order) == (pytest.approx(1.5), 0.0, None)


def test_more_repetitions_cost_more():
    last = 0.0
    for mean in (2.0, 5.0, 20.0, 100.0):
        g = negative_binomial_gamma(1.0, mean)
        eps = rdp_to_epsilon(ORDERS, rdp_repeat_negative_binomial(ORDERS, BASE, 1.0, g), 1e-6)[0]
        assert eps > last
        last = eps
    last = 0.0
    for mu in (1.0, 5.0, 20.0, 100.0):
        eps = rdp_to_epsilon(ORDERS, rdp_repeat_poisson(ORDERS, BASE, mu), 1e-6)[0]
        assert eps > last
        last = eps


def test_plan_repetition_epsilon_hits_the_target():
    for kw in (
        dict(distribution="truncated_negative_binomial", eta=1.0, gamma=0.1),
        dict(distribution="poisson", mu=10.0),
    ):
        per = plan_repetition_epsilon(2.0, 1e-6, **kw)
        o = np.array(DEFAULT_ORDERS)
        total = repeat_epsilon(o, rdp_pure_dp(per, o), 1e-6, pure_epsilon=per, **kw)[0]
        assert total <= 2.0 and total == pytest.approx(2.0, rel=1e-6)


def test_repetition_rdp():
    c = np.array([[0.1, 0.5], [0.3, 0.2]])
    s = np.array([0.2, 0.2])
    np.testing.assert_allclose(repetition_rdp(c, s), [0.3, 0.5])
    np.testing.assert_allclose(repetition_rdp(c, s, "sequential"), [0.5, 0.7])
    with pytest.raises(ValueError, match="composition"):
        repetition_rdp(c, s, "other")
    with pytest.raises(ValueError, match="shape"):
        repetition_rdp(c, np.zeros(3))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: negative_binomial_mean(-1.0, 0.5), "eta"),
        (lambda: negative_binomial_mean(1.0, 1.0), "gamma"),
        (lambda: negative_binomial_gamma(1.0, 0.5), "mean"),
        (lambda: rdp_repeat_poisson(ORDERS, BASE, 0.0), "mu"),
        (lambda: epsilon_repeat_pure(-1.0, 1.0), "epsilon"),
        (lambda: repeat_epsilon(ORDERS, BASE, 1e-6, distribution="binomial"), "distribution"),
        (lambda: sample_repetitions(np.random.default_rng(), distribution="x"), "distribution"),
    ],
)
def test_accounting_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---- the search ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ [1.0, -1.0, 0.5, 0.0, 0.2] > 0, "b", "a")
    return X, y


def _gaussian(**kw):
    base = dict(mechanism="gaussian", sampling="fixed", batch_size=50, epochs=2, seed=0)
    base.update(kw)
    return DPSGDClassifier(**base)


def test_search_selects_a_good_configuration(data):
    X, y = data
    # epsilon 0.01 gives a model drowned in noise; epsilon 20 a good one
    search = PrivateHyperparameterSearch(
        _gaussian(), {"epsilon": [0.002, 20.0]}, score_epsilon=5.0, mean_repetitions=8.0,
        seed=3,
    ).fit(X, y)  # fmt: skip
    assert search.best_params_ == {"epsilon": 20.0}
    assert search.score(X, y) > 0.9
    assert search.best_estimator_.privacy_.epsilon == pytest.approx(20.0, rel=1e-3)
    assert not hasattr(search, "n_repetitions_")
    p = search.privacy_
    assert p.neighboring == "replace_one" and "Theorem 2" in p.theorem
    # the total equals the accounting functions applied to the candidates' curves
    o = np.array(p.orders)
    n_train = len(y) - 600  # replace-one candidates: a fixed-size validation split of 20%
    curves = [_curve(_gaussian(epsilon=e), n_train, X.shape[1], o) for e in (0.002, 20.0)]
    rep = repetition_rdp(curves, rdp_pure_dp(5.0, o))
    eps, _, order = repeat_epsilon(
        o, rep, 1e-6, distribution="truncated_negative_binomial", eta=1.0,
        gamma=negative_binomial_gamma(1.0, 8.0),
    )  # fmt: skip
    assert p.epsilon == pytest.approx(eps, rel=1e-12) and p.best_order == order
    assert p.delta == 1e-6
    assert "add/remove" not in str(p) and "replace-one" in str(p)


def _curve(est, n, d, orders):
    from privlearn.accounting import RDPAccountant

    est.fit(np.zeros((n, d)), np.resize(["a", "b"], n))
    acc = RDPAccountant(orders, neighboring=est.privacy_.statement.neighboring)
    for e in est.privacy_.statement.events:
        acc.compose(e)
    return acc.rdp


def test_pure_candidates_and_target_total(data):
    X, y = data
    search = PrivateHyperparameterSearch(
        DPSGDClassifier(batch_size=50, seed=0), {"eta0": [0.5, 1.0]}, epsilon=3.0,
        mean_repetitions=5.0, seed=1,
    ).fit(X, y)  # fmt: skip
    p = search.privacy_
    assert p.epsilon <= 3.0 and p.epsilon == pytest.approx(3.0, rel=1e-6)
    assert p.delta == 0.0 and p.repetition_epsilon == pytest.approx(1.0, rel=1e-6)
    assert p.candidate_epsilons == pytest.approx((1.0, 1.0), rel=1e-6)
    assert search.best_estimator_.privacy_.epsilon == pytest.approx(1.0, rel=1e-6)
    assert search.predict(X[:5]).shape == (5,)


def test_poisson_repetitions(data):
    X, y = data
    search = PrivateHyperparameterSearch(
        DPSGDClassifier(epsilon=0.5, batch_size=50, seed=0), {"eta0": [1.0]},
        repetitions="poisson", mean_repetitions=3.0, seed=2,
    ).fit(X, y)  # fmt: skip
    o = np.array(DEFAULT_ORDERS)
    want = rdp_to_epsilon(o, rdp_repeat_poisson(o, rdp_pure_dp(0.5, o), 3.0), 1e-6)[0]
    assert search.privacy_.epsilon == pytest.approx(want, rel=1e-12)
    assert "Theorem 6" in search.privacy_.theorem


def test_reproducible_with_a_seed(data):
    X, y = data
    kw = dict(score_epsilon=1.0, mean_repetitions=4.0, seed=7)
    grid = {"eta0": [0.1, 1.0], "alpha": [1e-4, 1e-2]}
    a = PrivateHyperparameterSearch(_gaussian(epsilon=2.0), grid, **kw).fit(X, y)
    b = PrivateHyperparameterSearch(_gaussian(epsilon=2.0), grid, **kw).fit(X, y)
    assert a.best_params_ == b.best_params_ and a.best_score_ == b.best_score_
    np.testing.assert_array_equal(a.best_estimator_.coef_, b.best_estimator_.coef_)
    assert a.privacy_ == b.privacy_


class _CountingClassifier(_DPSGDClassifier):
    fits = 0

    def fit(self, X, y):
        if np.any(X):  # a fit on the private rows (the stand-in is all zeros)
            type(self).fits += 1
        return super().fit(X, y)


def test_ledger_refuses_before_any_private_fit(data):
    X, y = data
    ledger = PrivacyLedger(1.0, 1e-5)
    _CountingClassifier.fits = 0
    search = PrivateHyperparameterSearch(
        _CountingClassifier(
            mechanism="l2-laplace", epsilon=0.5, batch_size=50, epochs=1,
            learning_rate="inv_sqrt", fit_intercept=False, clip_rows=False, seed=0,
            classes=["a", "b"],
        ),
        {"eta0": [0.5, 1.0]},
        mean_repetitions=5.0, seed=0, ledger=ledger,
    )  # fmt: skip
    with pytest.raises(BudgetExceededError):
        search.fit(X, y)
    assert _CountingClassifier.fits == 0 and len(ledger) == 0
    ok = PrivacyLedger(2.0, 1e-5)
    search.set_params(ledger=ok).fit(X, y)
    assert _CountingClassifier.fits >= 1
    assert ok.spent.epsilon == pytest.approx(search.privacy_.epsilon)


def test_pipeline_with_a_stateless_step(data):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Normalizer, StandardScaler

    X, y = data
    pipe = make_pipeline(Normalizer(), DPSGDClassifier(epsilon=1.0, batch_size=50, seed=0))
    search = PrivateHyperparameterSearch(
        pipe, {"dpsgdclassifier__eta0": [0.5, 1.0]}, mean_repetitions=3.0, seed=0
    ).fit(X, y)
    o = np.array(DEFAULT_ORDERS)
    want = repeat_epsilon(
        o, rdp_pure_dp(1.0, o), 1e-6, distribution="truncated_negative_binomial", eta=1.0,
        gamma=negative_binomial_gamma(1.0, 3.0), pure_epsilon=1.0,
    )  # fmt: skip
    assert search.privacy_.epsilon == pytest.approx(want[0], rel=1e-12) and want[0] <= 3.0
    bad = make_pipeline(StandardScaler(), DPSGDClassifier(epsilon=1.0, batch_size=50, seed=0))
    with pytest.raises(ValueError, match="learns from the data"):
        PrivateHyperparameterSearch(bad, {"dpsgdclassifier__eta0": [1.0]}, seed=0).fit(X, y)


def test_function_transformers_must_be_declared_row_wise(data):
    """X - X.mean(0) moves every row when one changes (both sensitivities break): the old
    search accepted any FunctionTransformer as stateless. Now it is refused, naming the step,
    unless the user declares it row-wise."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X, y = data
    ledger = _LedgerCounter()
    grid = {"dpsgdclassifier__eta0": [1.0]}
    centre = make_pipeline(
        FunctionTransformer(lambda Z: Z - Z.mean(0)), DPSGDClassifier(batch_size=50, seed=0)
    )
    with pytest.raises(ValueError, match="'functiontransformer' is a FunctionTransformer"):
        PrivateHyperparameterSearch(centre, grid, seed=0, ledger=ledger).fit(X, y)
    assert ledger.entries == []
    tanh = make_pipeline(FunctionTransformer(np.tanh), DPSGDClassifier(batch_size=50, seed=0))
    search = PrivateHyperparameterSearch(
        tanh, grid, seed=0, mean_repetitions=2.0, row_wise_steps=("functiontransformer",)
    ).fit(X, y)
    assert search.privacy_.epsilon > 0 and search.best_estimator_ is not None


@pytest.mark.parametrize(
    "est, kw, exc, match",
    [
        (DPSGDClassifier(mechanism="gaussian", batch_size=50),
         dict(score_epsilon=1.0), ValueError, "n_samples= on the search"),
        (DPSGDClassifier(), dict(mean_repetitions=1e5), ValueError, "at most 1000"),
        (DPSGDClassifier(), dict(n_samples=2999), ValueError, "n_samples=2999"),
        (DPSGDClassifier(), dict(row_wise_steps=("nope",)), ValueError, "row_wise_steps"),
        (DPSGDClassifier(), dict(row_wise_steps="abc"), TypeError, "row_wise_steps"),
        (DPSGDClassifier(), dict(epsilon=1.0, score_epsilon=5.0), ValueError, "exceeds"),
        (DPSGDClassifier(), dict(epsilon=1.0, score_epsilon=5.0, composition="sequential"),
         ValueError, "leaves nothing"),
        (DPSGDClassifier(ledger=PrivacyLedger(10.0)), {}, ValueError, "reveal"),
        (DPSGDClassifier(), dict(ledger=object()), TypeError, "spend"),
        (DPSGDClassifier(), dict(repetitions="geometric"), ValueError, "repetitions"),
        (DPSGDClassifier(), dict(mean_repetitions=1.0), ValueError, "mean_repetitions"),
        (DPSGDClassifier(), dict(eta=-2.0), ValueError, "eta"),
        (DPSGDClassifier(), dict(validation_fraction=1.0), ValueError, "validation_fraction"),
        (DPSGDClassifier(), dict(delta=0.0), ValueError, "delta"),
        (DPSGDClassifier(), dict(score_epsilon=-1.0), ValueError, "score_epsilon"),
        (DPSGDClassifier(n_samples=3000), {}, ValueError, "n_samples"),
        (DPSGDClassifier(epsilon=float("inf")), {}, ValueError, "not private"),
        (_gaussian(epsilon=1.0), {}, ValueError, "score_epsilon is required"),
        (_gaussian(epsilon=1.0), dict(epsilon=0.5, score_epsilon=0.4), ValueError,
         "nothing is left for training"),
        (_gaussian(epsilon=1.0), dict(epsilon=0.0), ValueError, "epsilon must be finite"),
        (_gaussian(epsilon=1.0), dict(epsilon=float("nan")), ValueError, "epsilon"),
        (_gaussian(epsilon=1.0), dict(epsilon="1"), TypeError, "epsilon"),
        (_gaussian(epsilon=1.0), dict(epsilon=1.0, eta=float("nan")), ValueError, "eta"),
        (_gaussian(epsilon=1.0), dict(epsilon=1.0, repetitions="poisson", mean_repetitions=0.0),
         ValueError, "mean_repetitions"),
    ],
)  # fmt: skip
def test_search_bad_input(data, est, kw, exc, match):
    X, y = data
    with pytest.raises(exc, match=match):
        PrivateHyperparameterSearch(est, {"eta0": [1.0]}, seed=0, **kw).fit(X, y)


def test_search_refuses_regressors_and_empty_grids(data):
    from privlearn.linear import DPSGDRegressor

    X, y = data
    with pytest.raises(TypeError, match="classifier"):
        PrivateHyperparameterSearch(DPSGDRegressor(), {"eta0": [1.0]}).fit(X, y)
    with pytest.raises(ValueError, match="candidate"):
        PrivateHyperparameterSearch(DPSGDClassifier(), []).fit(X, y)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError, match="fit first"):
        PrivateHyperparameterSearch(DPSGDClassifier(), {"eta0": [1.0]}).predict(X)


def test_private_size_candidates_are_planned_from_the_declared_size(data):
    """Default Gaussian DP-SGD (Poisson, add/remove-one, private size): a schedule from a
    noisy count would make the total depend on the count (a-posteriori epsilon), so the search
    refuses it unless the size is declared public; then every candidate is planned from the
    public expected training size and the total is the same for every seed."""
    X, y = data
    est = DPSGDClassifier(mechanism="gaussian", epsilon=1.0, seed=0)
    grid = {"batch_size": [50, 200]}
    kw = dict(score_epsilon=0.5, mean_repetitions=2.0)
    ledger = PrivacyLedger(20.0, 1e-4)
    with pytest.raises(ValueError, match="n_samples= on the search"):
        PrivateHyperparameterSearch(est, grid, seed=1, ledger=ledger, **kw).fit(X, y)
    assert len(ledger) == 0  # refused before any charge (the old search charged its count)
    searches = [
        PrivateHyperparameterSearch(est, grid, seed=s, n_samples=len(y), **kw).fit(X, y)
        for s in (1, 2)
    ]
    p = searches[0].privacy_
    assert p.size is not None and p.size.value == 3000 - 600 and p.neighboring == "add_remove"
    assert searches[1].privacy_.epsilon == p.epsilon  # a-priori: no count, no seed
    chosen = searches[0].best_estimator_.privacy_
    assert chosen.size.value == p.size.value and chosen.epsilon <= 1.0
    assert "n_samples=3000, declared" in str(p)
    assert searches[0].score(X, y) > 0.8


def test_target_total_is_privacy_epsilon_when_a_candidate_total_is_not_its_epsilon(data):
    """l2-laplace with epsilon_split="per_pass" spends epochs * epsilon: the old search set
    every candidate's epsilon to the per-repetition budget and reported 5x the target."""
    X, y = data
    est = DPSGDClassifier(batch_size=50, epochs=5, epsilon_split="per_pass", seed=0)
    search = PrivateHyperparameterSearch(
        est, {"eta0": [0.5, 1.0]}, epsilon=1.0, mean_repetitions=2.0, seed=0
    ).fit(X, y)
    p = search.privacy_
    assert p.epsilon <= 1.0 and p.epsilon == pytest.approx(1.0, rel=1e-6)
    per = plan_repetition_epsilon(
        1.0, 1e-6, distribution="truncated_negative_binomial", eta=1.0,
        gamma=negative_binomial_gamma(1.0, 2.0),
    )  # fmt: skip
    assert max(p.candidate_epsilons) <= per
    assert search.best_estimator_.privacy_.epsilon == pytest.approx(per, rel=1e-9)
    assert search.best_estimator_.privacy_.epsilon_per_pass == pytest.approx(per / 5, rel=1e-9)


def test_sequential_composition_meets_the_target(data):
    """With composition="sequential" training and score add up; the old search gave each the
    whole per-repetition epsilon and spent about twice the target."""
    X, y = data
    ledger = PrivacyLedger(1.0, 1e-5)
    search = PrivateHyperparameterSearch(
        DPSGDClassifier(batch_size=50, seed=0), {"eta0": [1.0]}, epsilon=1.0,
        composition="sequential", mean_repetitions=2.0, seed=0, ledger=ledger,
    ).fit(X, y)  # fmt: skip
    p = search.privacy_
    # the pure bound of the repetition is the target; the RDP route may be tighter
    assert 0.8 < p.epsilon <= 1.0
    assert epsilon_repeat_pure(p.repetition_epsilon, 1.0) == pytest.approx(1.0, rel=1e-6)
    assert p.repetition_epsilon == pytest.approx(
        p.score_epsilon + max(p.candidate_epsilons), rel=1e-12
    )
    assert ledger.spent.epsilon == p.epsilon


class _LedgerCounter:
    """A ledger that records every charge (and caps nothing)."""

    def __init__(self):
        self.entries = []

    def spend(self, epsilon, delta=0.0, label=""):
        self.entries.append((epsilon, delta, label))


def test_one_charge_whatever_k(data):
    """Papernot & Steinke need K hidden: the user's ledger gets exactly one entry, the whole
    search's guarantee, for every seed (K differs); a ledger on a candidate (which the old
    search charged for its dry runs and for every repetition) is refused before anything is
    fitted or charged."""
    X, y = data[0][:400], data[1][:400]
    est = DPSGDClassifier(batch_size=50, seed=0)
    records = []
    for seed in range(6):
        ledger = _LedgerCounter()
        search = PrivateHyperparameterSearch(
            est, {"eta0": [0.5, 1.0]}, epsilon=1.0, mean_repetitions=3.0, seed=seed,
            ledger=ledger,
        ).fit(X, y)  # fmt: skip
        assert ledger.entries == [
            (search.privacy_.epsilon, search.privacy_.delta, "PrivateHyperparameterSearch.fit")
        ]
        records.append(ledger.entries[0])
    assert len(set(records)) == 1
    own = _LedgerCounter()
    for bad in (
        DPSGDClassifier(batch_size=50, ledger=own),
        __import__("sklearn.pipeline").pipeline.make_pipeline(
            DPSGDClassifier(batch_size=50, ledger=own)
        ),
    ):
        with pytest.raises(ValueError, match="reveal"):
            PrivateHyperparameterSearch(bad, {}, seed=0).fit(X, y)
    with pytest.raises(ValueError, match="reveal K"):
        PrivateHyperparameterSearch(est, {"ledger": [own]}, seed=0).fit(X, y)
    assert own.entries == []


def test_configuration_errors_raise_before_any_charge(data):
    """Every candidate is planned (dry runs on a public stand-in) before the one charge: a
    bad candidate anywhere in the grid raises with the ledger untouched."""
    X, y = data
    ledger = _LedgerCounter()
    for grid, match in (
        ({"epsilon": [1.0, float("inf")]}, "not private"),
        ({"clip": [1.0, -1.0]}, "clip"),
        ({"mechanism": ["l2-laplace", "gaussian"], "sampling": [None]}, "relation|n_samples"),
    ):
        with pytest.raises(ValueError, match=match):
            PrivateHyperparameterSearch(
                DPSGDClassifier(batch_size=50, seed=0), grid, score_epsilon=1.0, seed=0,
                ledger=ledger,
            ).fit(X, y)  # fmt: skip
    assert ledger.entries == []


def test_epsilon_is_a_priori_for_replace_one_candidates(data):
    """Fixed-size batches (replace-one): the curve depends on the training size. The old
    per-row split made that size, hence the reported epsilon, change with the seed on
    identical data; the fixed-size split makes it a function of n alone."""
    X, y = data
    grid = {"batch_size": [50, 100]}
    eps = {
        PrivateHyperparameterSearch(
            _gaussian(epsilon=1.0), grid, score_epsilon=0.5, mean_repetitions=2.0, seed=s
        ).fit(X, y).privacy_.epsilon
        for s in (1, 2, 3)
    }  # fmt: skip
    assert len(eps) == 1


def test_mean_repetitions_cap_is_public():
    from privlearn.model_selection.tuning import MAX_SEARCH_MEAN_REPETITIONS

    assert MAX_SEARCH_MEAN_REPETITIONS == 1000.0


def test_noise_multiplier_candidates_report_an_a_priori_epsilon(data):
    """Issue 19, item 7 inside the search: Poisson DP-SGD with a noise multiplier planned from
    a noisy count reported epsilon(n~) (old search: 9.09, 9.23, 9.19 for seeds 1, 2, 3 on the
    same data). Without a public size the search now refuses; with n_samples the total is the
    same for every seed."""
    X, y = data
    est = DPSGDClassifier(mechanism="gaussian", epsilon=None, noise_multiplier=1.0, seed=0)
    kw = dict(score_epsilon=0.5, mean_repetitions=2.0)
    with pytest.raises(ValueError, match="a-posteriori"):
        PrivateHyperparameterSearch(est, {"batch_size": [50, 100]}, seed=1, **kw).fit(X, y)
    eps = {
        PrivateHyperparameterSearch(
            est, {"batch_size": [50, 100]}, seed=s, n_samples=len(y), **kw
        ).fit(X, y).privacy_.epsilon
        for s in (1, 2, 3)
    }  # fmt: skip
    assert len(eps) == 1 and math.isfinite(eps.pop())


# ---- a total budget for every candidate kind (issue 22) ------------------------------------
def _gaussian_poisson(**kw):
    base = dict(mechanism="gaussian", batch_size=50, epochs=2, seed=0, classes=["a", "b"])
    return DPSGDClassifier(**{**base, **kw})


def _dp_accounting_total(grid_steps, sigmas, score_eps, eta, mean, delta):
    """The search's total computed with Google's dp_accounting: each Gaussian candidate's RDP
    by its RDP accountant (Poisson-subsampled Gaussian, add/remove-one), the max over
    candidates and the pure score curve min(e, alpha e^2 / 2), Papernot-Steinke Theorem 2
    (their implementation) and dp_accounting's RDP -> (eps, delta) conversion."""
    dpa = pytest.importorskip("dp_accounting")
    rdp_acc = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    orders = [float(a) for a in DEFAULT_ORDERS]
    curves = []
    for (q, steps), sigma in zip(grid_steps, sigmas):
        acc = rdp_acc.RdpAccountant(orders)
        acc.compose(
            dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)
        )
        curves.append(np.asarray(acc._rdp))
    o = np.asarray(orders)
    rep = np.maximum(np.max(curves, axis=0), np.minimum(score_eps, 0.5 * o * score_eps**2))
    total = rdp_acc._compute_rdp_repeat_and_select(orders, list(rep), mean, eta)
    return rdp_acc.compute_epsilon(orders, list(total), delta)[0]


def test_total_budget_plans_gaussian_candidates(data):
    """Issue 22, item 5: epsilon= is the search's total for Gaussian (PLD-calibrated) DP-SGD
    candidates. The planned noise multipliers, put through dp_accounting's RDP accountant and
    its implementation of Papernot-Steinke Theorem 2, give the requested total (the old search
    refused: 'pure-DP candidates only')."""
    X, y = data
    n, m = len(y), len(y) - round(0.2 * len(y))
    grid = {"batch_size": [50, 200], "eta0": [0.5, 2.0]}
    search = PrivateHyperparameterSearch(
        _gaussian_poisson(), grid, epsilon=1.0, eta=0.0, mean_repetitions=3.0, n_samples=n,
        seed=3,
    ).fit(X, y)  # fmt: skip
    p = search.privacy_
    assert p.epsilon <= 1.0 and p.epsilon == pytest.approx(1.0, abs=1e-6)
    assert p.target_epsilon == 1.0 and p.delta == pytest.approx(1e-6)
    sigmas = p.planned_noise
    assert len(sigmas) == 4 and all(s is not None and s > 0 for s in sigmas)
    # the same schedule gets the same noise, whatever its learning rate; larger batches
    # (larger sampling rate) need more noise
    grid_list = search.candidates_
    by_b = {c["batch_size"]: s for c, s in zip(grid_list, sigmas)}
    assert all(math.isclose(s, by_b[c["batch_size"]]) for c, s in zip(grid_list, sigmas))
    assert by_b[200] > by_b[50]
    schedule = [(b / m, -(-2 * m // b)) for b in (50, 200)]
    assert search.best_estimator_.n_steps_ in [s for _, s in schedule]
    ref = _dp_accounting_total(schedule, [by_b[50], by_b[200]], p.score_epsilon, 0.0, 3.0, p.delta)
    assert ref == pytest.approx(1.0, rel=2e-3)  # independent accountant, its own orders' rounding
    text = str(p)
    assert "total epsilon 1 requested (spent 1 at delta 1e-06)" in text
    assert "noise_multiplier=" in text
    assert "accountant:" in text and "Theorem 2" in text
    assert len(p.plan) == 4


def test_total_budget_is_monotone_in_the_noise(data):
    X, y = data
    sigmas = []
    for eps in (0.5, 1.0, 3.0):
        s = PrivateHyperparameterSearch(
            _gaussian_poisson(), {"batch_size": [100]}, epsilon=eps, mean_repetitions=2.0,
            n_samples=len(y), seed=0,
        ).fit(X, y)  # fmt: skip
        assert s.privacy_.epsilon == pytest.approx(eps, abs=1e-6)
        sigmas.append(s.privacy_.planned_noise[0])
    assert sigmas[0] > sigmas[1] > sigmas[2]


def test_total_budget_pure_candidates_keep_the_old_plan(data):
    """Pure candidates: the per-repetition epsilon and the (2 + eta) eps bound as before."""
    X, y = data
    p = PrivateHyperparameterSearch(
        DPSGDClassifier(batch_size=50, seed=0), {"eta0": [0.5, 1.0]}, epsilon=1.5, seed=0,
    ).fit(X, y).privacy_  # fmt: skip
    per = plan_repetition_epsilon(
        1.5, 1e-6, distribution="truncated_negative_binomial", eta=1.0, gamma=0.1
    )
    assert p.candidate_epsilons == pytest.approx((per, per), rel=1e-9)
    assert p.delta == 0.0 and p.epsilon == pytest.approx(1.5, rel=1e-9)
    assert p.planned_noise == (None, None) and all("(pure)" in s for s in p.plan)


def test_total_budget_mixed_candidates(data):
    """A Gaussian candidate (fixed-size batches, replace-one) beside a pure one: both planned
    from one total by the RDP route (the pure (2 + eta) eps bound does not apply to the
    mixture), and the pure one gets less than it would alone."""
    X, y = data
    grid = [
        {"mechanism": ["gaussian"], "sampling": ["fixed"]},
        {"mechanism": ["l2-laplace"], "sampling": ["disjoint"]},
    ]
    ledger = PrivacyLedger(2.0, 1e-5)
    search = PrivateHyperparameterSearch(
        DPSGDClassifier(batch_size=50, seed=0), grid, epsilon=2.0, delta=1e-5,
        mean_repetitions=3.0, seed=0, ledger=ledger,
    ).fit(X, y)  # fmt: skip
    p = search.privacy_
    assert p.epsilon <= 2.0 and p.epsilon == pytest.approx(2.0, abs=1e-6)
    assert p.delta == 1e-5 and p.neighboring == "replace_one"
    assert p.planned_noise[0] is not None and p.planned_noise[1] is None
    assert "noise_multiplier=" in p.plan[0] and "(pure)" in p.plan[1]
    per = plan_repetition_epsilon(
        2.0, 1e-5, distribution="truncated_negative_binomial", eta=1.0,
        gamma=negative_binomial_gamma(1.0, 3.0),
    )  # fmt: skip
    assert 0 < p.candidate_epsilons[1] < per
    # the total is Theorem 2 (written out above) on the repetition curve, tightly converted
    g = negative_binomial_gamma(1.0, 3.0)
    o = np.asarray(p.orders)
    ref = rdp_to_epsilon(o, _theorem2(o, np.asarray(p.repetition_rdp), 1.0, g), 1e-5)[0]
    assert ref == pytest.approx(p.epsilon, rel=1e-9)
    assert len(ledger) == 1  # charged once, with the total


def test_total_budget_refuses_a_grid_that_sets_the_noise(data):
    X, y = data
    ledger = PrivacyLedger(5.0, 1e-4)
    with pytest.raises(ValueError, match="must not set noise_multiplier"):
        PrivateHyperparameterSearch(
            _gaussian_poisson(epsilon=None), {"noise_multiplier": [1.0, 2.0]}, epsilon=1.0,
            n_samples=len(y), ledger=ledger,
        ).fit(X, y)  # fmt: skip
    with pytest.raises(ValueError, match="nothing is left for training"):
        PrivateHyperparameterSearch(
            _gaussian_poisson(), {"batch_size": [50]}, epsilon=0.2, score_epsilon=0.2,
            n_samples=len(y), ledger=ledger,
        ).fit(X, y)  # fmt: skip
    assert len(ledger) == 0


def _guide_block(marker: str) -> str:
    """The python code block of the user guide that follows ``marker``."""
    from pathlib import Path

    text = (Path(__file__).parents[1] / "docs/user_guide/preprocessing_tuning.rst").read_text()
    rest = text[text.index(marker) :]
    rest = rest[rest.index(".. code-block:: python") :].split("\n")[2:]
    lines = []
    for line in rest:
        if line.strip() and not line.startswith("   "):
            break
        lines.append(line[3:])
    return "\n".join(lines)


def test_user_guide_search_example_runs_as_written(require_data, monkeypatch):
    """The documented search on adult (issue 22, item 5), run as written on a quarter of the
    rows (load_adult subsampled; everything else verbatim): the search's total is the
    requested one, scaler + search fit the ledger's cap, and the model is useful."""
    from sklearn.metrics import roc_auc_score

    import privlearn.data

    home = require_data("adult/adult.data", "adult/adult.test")
    full = privlearn.data.load_adult

    def quarter(subset="train", **kw):
        out = full(subset, data_home=home, **kw)
        return (out[0][::4], out[1][::4], *out[2:])

    monkeypatch.setattr(privlearn.data, "load_adult", quarter)
    code = _guide_block("the recommended workflow on a real table")
    assert "epsilon=0.85 * total" in code and "PrivateHyperparameterSearch(" in code
    ns: dict = {}
    exec(compile(code, "preprocessing_tuning.rst", "exec"), ns)
    search, ledger = ns["search"], ns["ledger"]
    p = search.privacy_
    assert p.epsilon <= 0.85 and p.epsilon == pytest.approx(0.85, abs=1e-6)
    assert p.target_epsilon == 0.85 and len(p.planned_noise) == 4
    assert ledger.spent.epsilon <= 1.0 + 1e-12
    auc = roc_auc_score(ns["y_test"], search.decision_function(ns["Z_test"]))
    assert auc > 0.75


def test_total_budget_plans_dpscd_candidates(data):
    """DP-SCD (the other Gaussian default): its noise multiplier is planned from the total as
    well, and the fitted candidates report the planned multiplier."""
    from privlearn.linear import DPSCDClassifier

    X, y = data
    search = PrivateHyperparameterSearch(
        DPSCDClassifier(classes=["a", "b"], epochs=2, seed=0), {"batch_size": [50, 200]},
        epsilon=1.0, eta=0.0, mean_repetitions=2.0, n_samples=len(y), seed=0,
    ).fit(X, y)  # fmt: skip
    p = search.privacy_
    assert p.epsilon <= 1.0 and p.epsilon == pytest.approx(1.0, abs=1e-6)
    assert all(s is not None for s in p.planned_noise) and len(set(p.planned_noise)) == 2
    best = search.best_estimator_.privacy_
    assert any(math.isclose(best.sigma, s, rel_tol=1e-12) for s in p.planned_noise)


def test_total_budget_keeps_a_pure_step_inside_a_gaussian_candidate(data):
    """A pipeline candidate (private scaler, pure, then Gaussian DP-SGD): the plan moves only
    the Gaussian step's noise; the scaler keeps its own epsilon, which is part of the total."""
    from sklearn.pipeline import make_pipeline

    from privlearn.preprocessing import DPFeatureScaler

    X, y = data
    pipe = make_pipeline(
        DPFeatureScaler(epsilon=0.1, bounds=(-1.0, 1.0), seed=0),
        _gaussian_poisson(batch_size=100),
    )
    grid = {"dpsgdclassifier__eta0": [1.0, 2.0]}
    kw = dict(mean_repetitions=2.0, n_samples=len(y), seed=0)
    with_scaler = PrivateHyperparameterSearch(pipe, grid, epsilon=2.0, **kw).fit(X, y)
    alone = PrivateHyperparameterSearch(
        _gaussian_poisson(batch_size=100), {"eta0": [1.0, 2.0]}, epsilon=2.0, **kw
    ).fit(X, y)
    assert with_scaler.privacy_.epsilon == pytest.approx(2.0, abs=1e-6)
    assert with_scaler.best_estimator_[0].privacy_.epsilon == 0.1
    # the scaler's share leaves the Gaussian step more noise than without it
    assert with_scaler.privacy_.planned_noise[0] > alone.privacy_.planned_noise[0]


# ---- issue 30: errors in the user's terms, planning cost -------------------------------------
def test_row_wise_steps_none_means_none(data):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Normalizer

    X, y = data
    pipe = make_pipeline(Normalizer(), _gaussian())
    grid = {"dpsgdclassifier__eta0": [1.0]}
    kw = dict(score_epsilon=1.0, mean_repetitions=2.0, seed=0)
    a = PrivateHyperparameterSearch(pipe, grid, row_wise_steps=None, **kw).fit(X, y)
    b = PrivateHyperparameterSearch(pipe, grid, row_wise_steps=(), **kw).fit(X, y)
    assert a.privacy_.epsilon == b.privacy_.epsilon
    np.testing.assert_array_equal(a.best_estimator_[-1].coef_, b.best_estimator_[-1].coef_)
    with pytest.raises(TypeError, match="row_wise_steps must be a tuple of pipeline step names"):
        PrivateHyperparameterSearch(pipe, grid, row_wise_steps=5, **kw).fit(X, y)


def test_a_pure_step_that_uses_the_whole_total_is_explained(data):
    """A DPFeatureScaler at its default epsilon 1 inside a search with total 1 used to fail
    with 'no noise multiplier meets the total'; the error now says the scaler's share alone
    reaches the total and how much it may spend, and nothing is charged."""
    from sklearn.pipeline import make_pipeline

    from privlearn.preprocessing import DPFeatureScaler

    X, y = data
    pipe = make_pipeline(DPFeatureScaler(bounds=(-1.0, 1.0), seed=0), _gaussian_poisson())
    ledger = PrivacyLedger(5.0, 1e-4)
    with pytest.raises(ValueError, match=r"pure-DP step\(s\) \(DPFeatureScaler\)") as err:
        PrivateHyperparameterSearch(
            pipe, {"dpsgdclassifier__eta0": [1.0, 2.0]}, epsilon=1.0, n_samples=len(y),
            ledger=ledger, seed=0,
        ).fit(X, y)  # fmt: skip
    assert "less than" in str(err.value) and "raise the search's epsilon" in str(err.value)
    assert len(ledger) == 0


def test_planning_cost_does_not_grow_with_inert_grid_values(data, monkeypatch):
    """Issue 30, item 8: the search planned every grid value with three dry fits (100 learning
    rates on 400 rows: 7.5 s, 1,000: 74 s). Values of parameters that never enter a privacy
    statement (INERT_PARAMS) share one plan: the dry fits do not grow with the grid, their
    stand-in has the public training size (not the random split's), and the total is the
    one planned for a single value."""
    from privlearn.model_selection import tuning

    X, y = data
    X, y = X[:400], y[:400]
    calls: list[int] = []
    real = tuning._dry_fit

    def counting(est, rows, d, labels):
        calls.append(rows)
        return real(est, rows, d, labels)

    monkeypatch.setattr(tuning, "_dry_fit", counting)
    totals = []
    for values in (1, 200):
        calls.clear()
        grid = {"eta0": list(np.linspace(0.1, 2.0, values)), "batch_size": [50, 100]}
        s = PrivateHyperparameterSearch(
            _gaussian_poisson(), grid, epsilon=1.0, mean_repetitions=2.0, n_samples=len(y),
            seed=0,
        ).fit(X, y)  # fmt: skip
        totals.append((s.privacy_.epsilon, sorted(set(s.privacy_.planned_noise))))
        n_calls = len(calls)
        assert set(calls) == {len(y) - 80}  # the public training size
        if values == 1:
            few = n_calls
    assert n_calls == few <= 3 * 2  # per distinct batch_size, whatever the number of eta0
    assert totals[0] == totals[1]


def test_search_parameters_refused_in_public_terms(data):
    X, y = data
    kw = dict(score_epsilon=1.0, mean_repetitions=2.0, seed=0)
    grid = {"eta0": [1.0]}
    for bad, match in [
        (dict(eta=1e308), r"must lie in \(-1, 1e\+06\]"),
        (dict(orders=[1e300]), "orders must be at most"),
        (dict(score_epsilon=1e-300), "discrete Laplace scale"),
        (dict(eta=-1 + 1e-12, mean_repetitions=10.0), "has mean 10"),
    ]:
        ledger = PrivacyLedger(1e6, 0.5)
        with pytest.raises(ValueError, match=match):
            PrivateHyperparameterSearch(_gaussian(), grid, ledger=ledger, **{**kw, **bad}).fit(X, y)
        assert len(ledger) == 0
    # a tiny eta is a valid shape (it used to divide by zero)
    s = PrivateHyperparameterSearch(_gaussian(), grid, eta=1e-300, **kw).fit(X, y)
    assert math.isfinite(s.privacy_.epsilon)
    # the private size is not quoted when it differs from the declared one
    with pytest.raises(ValueError, match="another number of rows") as err:
        PrivateHyperparameterSearch(_gaussian(), grid, n_samples=len(y) + 1, **kw).fit(X, y)
    assert str(len(y)) not in str(err.value)
