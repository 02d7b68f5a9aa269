"""DP k-means at the edges of its guarantee (Chaturvedi, Nguyen & Xu 2021; Balcan et al. 2017
baseline): the private data-set size, what a fitted estimator keeps, and bad input.

Under add/remove-one neighbours the number of rows is private, so the schedule (number of
radii and of picks per radius, Balcan et al.'s grid depth) must come from a declared public
size or from a noisy count. The audits below fit on a data set of 256 rows and on its
neighbour with one more row, where ``default_radii``/``default_picks``/``default_levels``
change (``ceil(log2(n) / 4)`` jumps at ``n = 256``): an estimator that plans with the exact
``n`` releases a different number of candidates on the two sides with certainty, and the
Clopper-Pearson lower bound on epsilon exceeds the claim (about 3.4 > 2); planned from a
noisy count the two sides look alike.

All draws use fixed seeds (deterministic). At random seeds a correct estimator fails each
audit with probability at most ``2 alpha = 2e-4`` (:func:`privlearn.audit.audit_pure_dp`).
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from privlearn import audit as A
from privlearn.accounting import DEFAULT_DELTA, SIZE_EPSILON_FRACTION
from privlearn.cluster import DPKMeans, default_picks, default_radii
from privlearn.cluster.balcan import default_levels

EPS = 2.0  # claimed epsilon of the audited fits
N_DRAWS = 300  # fits per side and method
ALPHA = 1e-4


def _mixture(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(3, 5))
    centres *= 3.0 / np.linalg.norm(centres, axis=1, keepdims=True)
    return centres[rng.integers(0, 3, size=n)] + rng.normal(scale=0.3, size=(n, 5))


# ---- (a) the audit: n = 256 against n = 257 --------------------------------------------------
def _n_candidates(method: str, n: int, seed0: int) -> np.ndarray:
    # all rows equal: the Balcan et al. histogram counts are then large enough that its
    # number of levels alone decides whether any cell passes the stability threshold
    X = np.zeros((n, 4))
    out = np.empty(N_DRAWS, dtype=np.int64)
    with threadpool_limits(1):  # scikit-learn's KMeans: no thread start-up per tiny fit
        for i in range(N_DRAWS):
            model = DPKMeans(
                2, EPS, method=method, radius=1.0, lloyd_steps=0, n_threads=1, seed=seed0 + i
            )
            out[i] = model.fit(X).n_candidates_
    return out


# The events are fixed by the mechanisms' form, not by looking at the draws: max cover picks
# 3 radii x 8 = 24 points when the planning size is <= 256 and 4 x 10 = 40 above (distinct
# grid points: the uniform part of every pick makes repeats improbable); Balcan et al. keep
# cells only with 4 levels (with 5, the threshold exceeds the count) and pad to k = 2.
EVENTS = {"maxcover": 32, "balcan": 2}


@pytest.mark.parametrize("method", ["maxcover", "balcan"])
def test_audit_size_private_schedule(method: str) -> None:
    d0 = _n_candidates(method, 256, 0)
    d1 = _n_candidates(method, 257, 10**6)  # D' = D plus one row

    def event(c: np.ndarray) -> np.ndarray:
        return c > EVENTS[method]

    res = A.audit_pure_dp(d0, d1, event, EPS, DEFAULT_DELTA, ALPHA)
    assert res.passed, res
    assert res.epsilon_lower < EPS
    # the statistic really moves with the noisy count on both sides (the audit has power:
    # planned with the exact n it is constant on each side and the bound is about 3.4)
    for k, n in ((res.k0, res.n0), (res.k1, res.n1)):
        assert 0.1 * n < k < 0.9 * n, res


def test_audit_would_catch_an_exact_size_schedule() -> None:
    """Power check: the same statistic on schedules planned with the exact n refutes the
    claim. Here the size is declared public, so the two sides differ in a public input and
    no guarantee is broken; planning with the exact n under a private size (the old default)
    gave exactly these draws."""

    def draws(n: int, seed0: int) -> np.ndarray:
        X = np.zeros((n, 4))
        with threadpool_limits(1):
            return np.array(
                [
                    DPKMeans(
                        2,
                        EPS,
                        radius=1.0,
                        lloyd_steps=0,
                        n_threads=1,
                        seed=seed0 + i,
                        n_samples=n,
                        method="maxcover",
                    )
                    .fit(X)
                    .n_candidates_
                    for i in range(150)
                ]
            )

    res = A.audit_pure_dp(draws(256, 0), draws(257, 10**6), lambda c: c > 32, EPS, 0.0, ALPHA)
    assert not res.passed, res  # 150 of 150 against 0 of 150: epsilon >= log(0.936 / 0.064)
    assert res.epsilon_lower > EPS


# ---- (b) a declared public size ------------------------------------------------------------
def test_declared_size_mismatch_raises() -> None:
    X = _mixture(300, 0)
    with pytest.raises(ValueError, match="n_samples=299"):
        DPKMeans(3, 1.0, radius=5.0, clip=True, n_samples=299, seed=0, method="maxcover").fit(X)
    with pytest.raises(ValueError, match="n_samples=301"):
        DPKMeans(3, 1.0, method="balcan", radius=5.0, clip=True, n_samples=301).fit(X)


@pytest.mark.parametrize("method", ["maxcover", "balcan"])
def test_declared_size_is_public_and_free(method: str) -> None:
    X = _mixture(300, 1)
    model = DPKMeans(3, 1.0, method=method, radius=5.0, clip=True, n_samples=300, seed=0)
    model.fit(X)
    st = model.privacy_
    assert st.epsilon == pytest.approx(1.0, rel=1e-12)
    assert st.delta == pytest.approx(DEFAULT_DELTA, rel=1e-12)
    assert st.neighboring == "add_remove"
    assert "treated as public" in st.dataset_size and "n_samples=300" in st.public_inputs
    assert "treated as public" in str(st) and "add/remove-one" in str(st)
    assert model.dataset_size_.source == "public"
    assert not any("row count" in e.label for e in model.ledger_.entries)
    if method == "maxcover":
        assert model.radii_ == default_radii(300) and model.picks_ == default_picks(3, 300)
        first = model.ledger_.entries[0]  # the whole fit, composed by Renyi DP (issue 21)
        assert first.label == "max cover fit (Renyi DP)"
        assert first.epsilon == pytest.approx(1.0, rel=1e-12)
    else:
        assert model.n_levels_ == default_levels(300, 4)


@pytest.mark.parametrize("method", ["maxcover", "balcan"])
def test_private_size_budget_split(method: str) -> None:
    X = _mixture(500, 2)
    model = DPKMeans(3, 0.8, method=method, radius=5.0, clip=True, seed=3).fit(X)
    st = model.privacy_
    assert st.epsilon == pytest.approx(0.8, rel=1e-12)  # the count is inside the budget
    assert st.delta == pytest.approx(DEFAULT_DELTA, rel=1e-12)
    size = model.dataset_size_
    assert size.source == "noisy_count"
    assert size.epsilon == pytest.approx(SIZE_EPSILON_FRACTION * 0.8, rel=1e-12)
    count = [e for e in model.ledger_.entries if e.label == "noisy row count"]
    assert len(count) == 1 and count[0].epsilon == pytest.approx(0.04, rel=1e-12)
    assert "noisy count" in st.dataset_size and "noisy count" in str(st)
    rest = 0.8 * (1 - SIZE_EPSILON_FRACTION)
    if method == "maxcover":
        assert model.radii_ == default_radii(size.value)
        assert model.picks_ == default_picks(3, size.value)
        cover = [e for e in model.ledger_.entries if e.label == "max cover fit (Renyi DP)"][0]
        assert cover.epsilon == pytest.approx(rest, rel=1e-12)
    else:
        assert model.n_levels_ == default_levels(size.value, 4)
    for name in ("method=", "n_clusters=3", "epsilon=0.8", "delta=1e-06", "radius=5"):
        assert any(p.startswith(name) for p in st.public_inputs), (name, st.public_inputs)


def test_no_count_when_the_schedule_does_not_need_the_size() -> None:
    X = _mixture(400, 4)
    model = DPKMeans(
        3,
        1.0,
        radius=5.0,
        clip=True,
        radii=[1.0, 0.5],
        picks=6,
        seed=0,
        lloyd_steps=0,
        method="maxcover",
    ).fit(X)
    assert model.dataset_size_ is None
    assert model.privacy_.epsilon == pytest.approx(1.0, rel=1e-12)
    assert "not used" in model.privacy_.dataset_size
    assert model.ledger_.entries[0].label == "max cover fit (Renyi DP)"
    assert model.ledger_.entries[0].epsilon == pytest.approx(1.0, rel=1e-12)
    assert len(model.ledger_.entries) == 1
    assert model.radii_ == [1.0, 0.5] and model.picks_ == 6
    assert "picks=6" in model.privacy_.public_inputs


def test_more_clusters_than_rows_under_a_private_size() -> None:
    # refusing k > n would reveal the size: the fit runs (a warning comes from the noisy
    # count only); with a public size the refusal is fine
    X = _mixture(6, 5)
    with pytest.warns(UserWarning, match="noisy row count"):
        model = DPKMeans(8, 1.0, radius=5.0, clip=True, seed=0, method="maxcover").fit(X)
    assert model.cluster_centers_.shape == (8, 5)
    with pytest.raises(ValueError, match="n_clusters"):
        DPKMeans(8, 1.0, radius=5.0, clip=True, n_samples=6, method="maxcover").fit(X)


# ---- (c) what a fitted estimator keeps ------------------------------------------------------
def _sizes(value: object) -> list[int]:
    """Lengths and array dimensions of a value and of the containers inside it."""
    out: list[int] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, np.ndarray):
            out += list(v.shape)
        elif isinstance(v, (list, tuple, dict, set)):
            out.append(len(v))
            stack += list(v.values()) if isinstance(v, dict) else list(v)
    return out


@pytest.mark.parametrize("method", ["maxcover", "balcan"])
def test_fitted_attributes_do_not_depend_on_n(method: str) -> None:
    n = 1237
    X = _mixture(n, 6)
    model = DPKMeans(3, 1.0, method=method, radius=5.0, clip=True, seed=1).fit(X)
    fitted = {k: v for k, v in vars(model).items() if k.endswith("_")}
    for name in ("labels_", "inertia_", "maxcover_", "diagnostics_"):
        assert name not in fitted
    for name, value in fitted.items():
        assert n not in _sizes(value), name
    assert n not in _sizes(model.ledger_.entries) and n not in _sizes(model.privacy_.events)
    # predict / transform / score / fit_predict work without stored training labels
    X_new = _mixture(50, 7)
    assert model.predict(X_new).shape == (50,)
    assert model.transform(X_new).shape == (50, 3)
    assert math.isfinite(model.score(X_new))
    labels = model.fit_predict(X)
    assert labels.shape == (n,) and not hasattr(model, "labels_")


@pytest.mark.parametrize("method", ["maxcover", "balcan"])
def test_pickle_size_does_not_grow_with_n(method: str) -> None:
    def size(n: int, diagnostics: bool = False) -> int:
        X = _mixture(n, 8)
        model = DPKMeans(
            3, 1.0, method=method, radius=5.0, clip=True, seed=2, diagnostics=diagnostics
        )
        return len(pickle.dumps(model.fit(X)))

    small, large = size(1000), size(20_000)
    assert abs(large - small) < 256, (small, large)  # a few digits of the noisy count
    # the opt-in diagnostics do hold per-row data (so the check above has teeth)
    assert size(20_000, diagnostics=True) > large + 8 * 19_000


def test_diagnostics_are_opt_in_and_dropped_on_refit() -> None:
    X = _mixture(800, 9)
    model = DPKMeans(
        3, 1.0, radius=5.0, clip=True, seed=0, diagnostics=True, method="maxcover"
    ).fit(X)
    diag = model.diagnostics_
    assert "NOT PRIVATE" in type(diag).__doc__
    assert diag.n_samples == 800 and diag.labels.shape == (800,)
    assert diag.inertia == pytest.approx(-model.score(X), rel=1e-9)
    assert diag.maxcover is not None
    model.set_params(diagnostics=False).fit(X)
    assert not hasattr(model, "diagnostics_")


# ---- (d) bad input -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"epsilon": "1"}, TypeError, "epsilon"),
        ({"epsilon": None}, TypeError, "epsilon"),
        ({"epsilon": float("nan")}, ValueError, "epsilon"),
        ({"epsilon": -1.0}, ValueError, "epsilon"),
        ({"delta": "1e-6"}, TypeError, "delta"),
        ({"delta": 1.0}, ValueError, "delta"),
        ({"picks": 2.5}, TypeError, "picks"),
        ({"picks": 0}, ValueError, "picks"),
        ({"n_threads": 0}, ValueError, "n_threads"),
        ({"n_threads": -5}, ValueError, "n_threads"),
        ({"n_threads": 2.0}, TypeError, "n_threads"),
        ({"n_threads": 10**9}, ValueError, "n_threads"),
        ({"n_clusters": True}, TypeError, "n_clusters"),
        ({"n_clusters": 2.0}, TypeError, "n_clusters"),
        ({"radius": "1"}, TypeError, "radius"),
        ({"radius": math.inf}, ValueError, "radius"),
        ({"grid_factor": float("nan")}, ValueError, "grid_factor"),
        ({"grid_factor": "1"}, TypeError, "grid_factor"),
        ({"radii": []}, ValueError, "radii"),
        ({"radii": [0.5, 5.0]}, ValueError, "radius"),
        ({"radii": "0.5"}, TypeError, "radii"),
        ({"radii": ["0.5"]}, TypeError, "radii"),
        ({"radii": 0.5}, TypeError, "radii"),
        ({"lloyd_steps": -1}, ValueError, "lloyd_steps"),
        ({"lloyd_steps": 1.5}, TypeError, "lloyd_steps"),
        ({"proj_dim": 0}, ValueError, "proj_dim"),
        ({"proj_dim": 17}, ValueError, "proj_dim"),
        ({"seed": -1}, ValueError, "seed"),
        ({"seed": 1.5}, TypeError, "seed"),
        ({"clip": "yes"}, TypeError, "clip"),
        ({"diagnostics": 1}, TypeError, "diagnostics"),
        ({"n_samples": "10"}, TypeError, "n_samples"),
        ({"n_samples": 0}, ValueError, "n_samples"),
        ({"n_samples": 10.0}, TypeError, "n_samples"),
        ({"budget_split": [("maxcover", 1.0)]}, TypeError, "budget_split"),
        ({"budget_split": {"maxcover": "0.3"}}, TypeError, "budget_split"),
        ({"budget_split": {"maxcover": float("nan")}}, ValueError, "budget_split"),
        ({"method": None}, ValueError, "method"),
        ({"backend": ["core"]}, ValueError, "backend"),
    ],
)
def test_bad_parameters(kwargs: dict, exc: type, match: str) -> None:
    X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(10, 2))
    params = {"n_clusters": 2, "radius": 1.0, "seed": 0, "method": "maxcover", **kwargs}
    with pytest.raises(exc, match=match):
        DPKMeans(**params).fit(X)


# ---- the lattice slack of the Gaussian releases (issue 30, item 4 leftover) -------------------
def test_release_slack_bounds_every_default_lattice_release() -> None:
    from privlearn.cluster._lattice_slack import NOISE_MU_FACTOR, release_slack
    from privlearn.mechanisms.gaussian import gaussian_privacy

    bound = release_slack(1, 1e-6, 1.0)
    for sens, sigma, size in [(1.0, 20.0, 1), (1.0, 28.0, 97), (4.0, 3e-3, 20), (7.0, 1e5, 3000)]:
        g = gaussian_privacy(sens, sigma, size=size)
        one = g.slack(1e-6, 1.0)
        assert one.log_ratio <= bound.log_ratio and one.tail <= bound.tail
        assert g.noise_mu <= g.mu * NOISE_MU_FACTOR
    assert 1e-11 < bound.log_ratio < 1e-9  # about 1e-10 per release
    assert 40 * bound.log_ratio <= release_slack(40, 1e-6, 1.0).log_ratio < 50 * bound.log_ratio


def test_lsh_statement_adds_the_lattice_slack() -> None:
    """The LSH fit composes its Gaussians by ``mu``: the statement is the analytic conversion
    of the rounded continuous Gaussians (``mu * NOISE_MU_FACTOR``) plus ``2 N eta`` of its
    releases, still within the requested epsilon (the former statement, the analytic epsilon
    of ``mu`` alone, left the slack out)."""
    import re

    from privlearn.cluster._lattice_slack import (
        NOISE_MU_FACTOR,
        gdp_lattice_epsilon,
        release_slack,
    )
    from privlearn.mechanisms.gaussian import analytic_gaussian_epsilon

    X = np.random.default_rng(0).normal(size=(600, 3))
    model = DPKMeans(3, 1.0, radius=5.0, clip=True, seed=0).fit(X)
    text = model.privacy_.accountant
    assert "lattice slack" in text
    mu = float(re.search(r"mu=([0-9.e+-]+)", text).group(1))
    releases = int(re.search(r"noise of (\d+) releases", text).group(1))
    eps = model.privacy_.epsilon
    exact = gdp_lattice_epsilon(mu, releases, DEFAULT_DELTA)
    cont = analytic_gaussian_epsilon(mu * NOISE_MU_FACTOR, DEFAULT_DELTA)
    assert exact >= cont + 1.9 * release_slack(releases, DEFAULT_DELTA, 1.0).log_ratio
    assert exact <= eps <= 1.0
    # where the slack exceeds the margin of the rounded Gaussians the exact value is reported
    assert gdp_lattice_epsilon(1e-5, 10**6, 1e-6) > analytic_gaussian_epsilon(1e-5, 1e-6)


def test_maxcover_plan_adds_the_lattice_slack() -> None:
    from privlearn.cluster import DEFAULT_SPLIT
    from privlearn.cluster.maxcover import plan_maxcover

    kw = dict(n_picks=40, n_radii=4, split=DEFAULT_SPLIT, lloyd_steps=2, radius=1.0)
    bare = plan_maxcover(1.0, 1e-6, d=5, **kw)
    lattice = plan_maxcover(1.0, 1e-6, d=5, gaussian_releases=3 * 8, **kw)
    assert lattice.eps_pick == bare.eps_pick and lattice.rounds == bare.rounds
    assert lattice.epsilon == bare.epsilon <= 1.0  # the calibrated mu value is the larger
    tiny = plan_maxcover(1e-4, 1e-6, d=5, gaussian_releases=10**6, **kw)
    tiny_bare = plan_maxcover(1e-4, 1e-6, d=5, **kw)
    assert tiny.epsilon > tiny_bare.epsilon  # there the slack decides: the exact value
