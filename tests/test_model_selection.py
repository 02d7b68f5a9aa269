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
    base = dict(mechanism="l2-laplace", batch_size=10, epochs=1, learning_rate="inv_sqrt",
                fit_intercept=False, clip_rows=False)  # fmt: skip
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


def test_sampling_matches_the_distribution():
    u = (np.arange(4000) + 0.5) / 4000  # a deterministic grid of quantiles
    for kw, mean in [
        (dict(distribution="truncated_negative_binomial", eta=1.0, gamma=0.2), 5.0),
        (dict(distribution="truncated_negative_binomial", eta=0.0, gamma=0.1), None),
        (dict(distribution="poisson", mu=4.0), 4.0),
    ]:
        ks = np.array([sample_repetitions(x, **kw) for x in u])
        if mean is None:
            mean = negative_binomial_mean(kw["eta"], kw["gamma"])
        assert ks.mean() == pytest.approx(mean, rel=0.02)
        if kw["distribution"] == "truncated_negative_binomial":
            assert ks.min() >= 1
    # inversion: geometric(0.2) has P[K=1] = 0.2
    assert sample_repetitions(0.1999, distribution="truncated_negative_binomial", eta=1.0,
                              gamma=0.2) == 1  # fmt: skip
    assert sample_repetitions(0.2001, distribution="truncated_negative_binomial", eta=1.0,
                              gamma=0.2) == 2  # fmt: skip


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
        (lambda: sample_repetitions(1.0, distribution="poisson", mu=1.0), "u"),
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
    n_train = int(np.sum(~_split(3, len(y), 0.2)))
    curves = [_curve(_gaussian(epsilon=e), n_train, X.shape[1], o) for e in (0.002, 20.0)]
    rep = repetition_rdp(curves, rdp_pure_dp(5.0, o))
    eps, _, order = repeat_epsilon(
        o, rep, 1e-6, distribution="truncated_negative_binomial", eta=1.0,
        gamma=negative_binomial_gamma(1.0, 8.0),
    )  # fmt: skip
    assert p.epsilon == pytest.approx(eps, rel=1e-12) and p.best_order == order
    assert p.delta == 1e-6
    assert "add/remove" not in str(p) and "replace-one" in str(p)


def _split(seed, n, frac):
    from privlearn.random import Stream

    return Stream(seed, stream=0x5E01).poisson_mask(0, n, frac)


def _curve(est, n, d, orders):
    from privlearn.accounting import RDPAccountant

    est.fit(np.zeros((n, d)), np.resize([0, 1], n))
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


@pytest.mark.parametrize(
    "est, kw, exc, match",
    [
        (DPSGDClassifier(mechanism="gaussian", batch_size=50),
         dict(score_epsilon=1.0, count_epsilon=0.0), ValueError, "count_epsilon"),
        (DPSGDClassifier(), dict(repetitions="geometric"), ValueError, "repetitions"),
        (DPSGDClassifier(), dict(mean_repetitions=1.0), ValueError, "mean_repetitions"),
        (DPSGDClassifier(), dict(eta=-2.0), ValueError, "eta"),
        (DPSGDClassifier(), dict(validation_fraction=1.0), ValueError, "validation_fraction"),
        (DPSGDClassifier(), dict(delta=0.0), ValueError, "delta"),
        (DPSGDClassifier(), dict(score_epsilon=-1.0), ValueError, "score_epsilon"),
        (DPSGDClassifier(n_samples=3000), {}, ValueError, "n_samples"),
        (DPSGDClassifier(epsilon=float("inf")), {}, ValueError, "not private"),
        (_gaussian(epsilon=1.0), {}, ValueError, "score_epsilon is required"),
        (_gaussian(epsilon=1.0), dict(epsilon=2.0, score_epsilon=1.0), ValueError, "pure-DP"),
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


def test_private_size_candidates_share_one_noisy_count_of_the_training_split(data):
    """Default Gaussian DP-SGD (Poisson, add/remove-one, private size): the search counts its
    training split once (count_epsilon, charged first), gives the count to every candidate
    (n_samples=DatasetSize, planned not re-counted) and adds its epsilon to the total."""
    from privlearn.accounting import PrivacyLedger

    X, y = data
    ledger = PrivacyLedger(20.0, 1e-4)
    est = DPSGDClassifier(mechanism="gaussian", epsilon=1.0, seed=0)
    search = PrivateHyperparameterSearch(
        est, {"batch_size": [50, 200]}, score_epsilon=0.5, mean_repetitions=3.0, seed=1,
        ledger=ledger,
    ).fit(X, y)  # fmt: skip
    p = search.privacy_
    assert p.size is not None and p.size.source == "noisy_count" and p.size.epsilon == 0.05
    n_train = int(np.sum(~_split(1, len(y), 0.2)))
    assert abs(p.size.value - n_train) < 200  # a noisy count of the training split
    count, rest = ledger.entries
    assert count.epsilon == 0.05 and p.epsilon == pytest.approx(count.epsilon + rest.epsilon)
    chosen = search.best_estimator_.privacy_
    assert chosen.size.source == "given" and chosen.size.value == p.size.value
    assert chosen.epsilon <= 1.0 and "drawn and accounted by the caller" in str(chosen)
    assert search.score(X, y) > 0.8
