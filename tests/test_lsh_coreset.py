"""The LSH prefix-tree coreset of ``DPKMeans(method="lsh")`` (issue 21).

Kernels: the C++ ``lsh_codes`` / ``clipped_cluster_sums`` against their numpy twins (bit for
bit), their input checks; the planning helpers (``gdp_mu``, ``lattice_sigma``,
``LSHSchedule.plan``, ``lsh_split``); the tree (``grow_tree``, ``cell_labels``) on hand-made
codes with exact counts. Estimator: an oracle against scikit-learn at ``epsilon = inf``,
recovery of separated blobs with privacy on, the privacy statement (one ``mu``-GDP release,
Dong, Roth & Su 2022; the analytic conversion of Balle & Wang 2018, Theorem 8), independence of
the private size ``n``, reproducibility, validation before any spend.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from conftest import only_warnings
from scipy.stats import norm
from sklearn.base import clone
from sklearn.cluster import KMeans

import privlearn.cluster.estimator as est_mod
from privlearn import _core
from privlearn.accounting import PrivacyLedger
from privlearn.cluster import DPKMeans
from privlearn.cluster.lsh_coreset import (
    LATTICE_MU_SLACK,
    LSH_SPLIT,
    LSHSchedule,
    cell_labels,
    gdp_mu,
    grow_tree,
    lattice_sigma,
    lsh_split,
)
from privlearn.fixed_point import fixed_point_exponent, fixed_point_value
from privlearn.mechanisms.gaussian import analytic_gaussian_epsilon
from privlearn.reference import cluster as ref


# ---- kernels: C++ core vs numpy twin ---------------------------------------------------------
@pytest.mark.parametrize(("n", "d", "depth"), [(1, 1, 1), (257, 3, 20), (500, 7, 62), (300, 2, 64)])
def test_lsh_codes_core_matches_numpy_twin(n, d, depth):
    rng = np.random.default_rng(n + d + depth)
    X = rng.normal(size=(n, d)) * 3.0
    centre = rng.normal(size=d)
    H = rng.normal(size=(depth, d))
    t = rng.normal(size=depth) * 0.1
    want = ref.lsh_codes(X, centre, H, t)
    for threads in (1, 2):
        got = _core.lsh_codes(X, centre, H, t, threads)
        assert got.dtype == np.uint64
        np.testing.assert_array_equal(got, want)
    if depth < 64:
        assert int(want.max()) < (1 << depth)


def test_lsh_codes_bits_are_the_hyperplane_sides():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 4))
    H = rng.normal(size=(5, 4))
    codes = _core.lsh_codes(X, np.zeros(4), H, np.zeros(5), 1)
    for j in range(5):  # bit depth - 1 - j is the side of hyperplane j
        bit = (codes >> np.uint64(4 - j)) & np.uint64(1)
        np.testing.assert_array_equal(bit.astype(bool), X @ H[j] > 0.0)


def _sums_inputs(seed: int, n: int = 400, d: int = 5, cells: int = 7):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 1.5  # many rows outside the ball of radius 2: clipped
    centre = rng.normal(size=d) * 0.2
    labels = rng.integers(-1, cells, size=n)
    return X, labels, cells, centre, 2.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clipped_cluster_sums_core_matches_numpy_twin(seed):
    X, labels, cells, centre, r = _sums_inputs(seed)
    e = fixed_point_exponent(r)
    assert (np.linalg.norm(X - centre, axis=1) > r).sum() > 50  # the clipping is exercised
    want = ref.clipped_cluster_sums(X, labels, cells, centre, r, e)
    for threads in (1, 2):
        got = _core.clipped_cluster_sums(X, labels, cells, centre, r, e, threads)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == np.int64
            np.testing.assert_array_equal(g, w)


def test_clipped_cluster_sums_skip_label_minus_one_and_add_over_a_partition():
    X, labels, cells, centre, r = _sums_inputs(3)
    e = fixed_point_exponent(r)
    whole = _core.clipped_cluster_sums(X, labels, cells, centre, r, e, 1)
    assert int(whole[0].sum()) == int((labels >= 0).sum())
    kept = labels >= 0
    only = _core.clipped_cluster_sums(X[kept], labels[kept], cells, centre, r, e, 1)
    for a, b in zip(whole, only, strict=True):
        np.testing.assert_array_equal(a, b)  # the -1 rows contribute nothing
    part = np.random.default_rng(9).random(X.shape[0]) < 0.4
    s1 = _core.clipped_cluster_sums(X[part], labels[part], cells, centre, r, e, 1)
    s2 = _core.clipped_cluster_sums(X[~part], labels[~part], cells, centre, r, e, 1)
    for a, b, c in zip(whole, s1, s2, strict=True):
        np.testing.assert_array_equal(a, b + c)  # exact integer sums


def test_clipped_cluster_sums_project_far_rows_onto_the_ball():
    centre = np.array([1.0, -1.0])
    X = np.array([[101.0, -1.0], [1.0, 0.5], [1.0, -1.0 - 1e6]])
    r = 2.0
    e = fixed_point_exponent(r)
    counts, hi, lo = _core.clipped_cluster_sums(X, np.array([0, 1, 2]), 3, centre, r, e, 1)
    np.testing.assert_array_equal(counts, [1, 1, 1])
    sums = fixed_point_value(hi, lo, e)
    np.testing.assert_allclose(sums[0], [2.0, 0.0], atol=1e-12)  # clipped, direction kept
    np.testing.assert_allclose(sums[1], [0.0, 1.5], atol=1e-12)  # inside: unchanged
    np.testing.assert_allclose(sums[2], [0.0, -2.0], atol=1e-12)
    assert (np.linalg.norm(sums, axis=1) <= r).all()


def test_lsh_codes_bad_input_raises_value_error():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    c = np.zeros(3)
    for fn in (_core.lsh_codes, ref.lsh_codes):
        for depth in (0, 65):
            with pytest.raises(ValueError, match="code length"):
                fn(X, c, rng.normal(size=(depth, 3)), np.zeros(depth), 1)
    for H, t, cc in [
        (rng.normal(size=(4, 2)), np.zeros(4), c),  # H has the wrong width
        (rng.normal(size=(4, 3)), np.zeros(3), c),  # thresholds of the wrong length
        (rng.normal(size=(4, 3)), np.zeros(4), np.zeros(2)),  # centre of the wrong length
    ]:
        with pytest.raises(ValueError):
            _core.lsh_codes(X, cc, H, t, 1)


def test_clipped_cluster_sums_bad_input_raises_value_error():
    X, labels, cells, centre, r = _sums_inputs(4, n=30)
    e = fixed_point_exponent(r)
    for fn in (_core.clipped_cluster_sums, ref.clipped_cluster_sums):
        for bad in (np.where(labels == 0, cells, labels), np.where(labels == 0, -2, labels)):
            with pytest.raises(ValueError, match="label"):
                fn(X, bad, cells, centre, r, e, 1)
    bad_calls = [
        (X, labels[:10], cells, centre, r, e),  # one label per row
        (X, labels, cells, centre[:2], r, e),  # centre per column
        (X, labels, cells, centre, 0.0, e),
        (X, labels, cells, centre, -1.0, e),
        (X, labels, cells, centre, math.nan, e),
    ]
    for args in bad_calls:
        with pytest.raises(ValueError):
            _core.clipped_cluster_sums(*args, 1)


# ---- planning ---------------------------------------------------------------------------------
def _delta_of(eps: float, mu: float) -> float:
    """delta(eps) of mu-GDP (Dong, Roth & Su 2022, Corollary 2.13)."""
    return float(norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2))


@pytest.mark.parametrize(("eps", "delta"), [(0.1, 1e-6), (1.0, 1e-6), (2.0, 0.1), (8.0, 1e-9)])
def test_gdp_mu_inverts_the_analytic_gaussian_conversion(eps, delta):
    mu = gdp_mu(eps, delta)
    got = analytic_gaussian_epsilon(mu, delta)
    assert got <= eps  # rounded down: never above the target
    assert got == pytest.approx(eps, rel=1e-9)
    assert _delta_of(eps, mu) == pytest.approx(delta, rel=1e-6)
    assert _delta_of(eps, mu * 1.01) > delta  # the largest such mu
    dp_accounting = pytest.importorskip("dp_accounting")
    # a Gaussian of noise multiplier 1/mu is mu-GDP: dp_accounting's analytic epsilon agrees
    assert dp_accounting.get_epsilon_gaussian(1.0 / mu, delta) == pytest.approx(eps, rel=1e-3)


@pytest.mark.parametrize(
    ("eps", "delta"), [(0.0, 1e-6), (-1.0, 1e-6), (math.inf, 1e-6), (math.nan, 1e-6),
                       (1.0, 0.0), (1.0, 1.0), (1.0, -0.1)]
)  # fmt: skip
def test_gdp_mu_refuses_bad_budgets(eps, delta):
    with pytest.raises(ValueError):
        gdp_mu(eps, delta)


def test_lattice_sigma():
    assert lattice_sigma(3.0, 0.5) == 3.0 / (0.5 - LATTICE_MU_SLACK)
    assert lattice_sigma(1.0, 1.0) > 1.0  # the lattice's share makes the noise larger
    for mu in (LATTICE_MU_SLACK, 0.0, -1.0):
        with pytest.raises(ValueError, match="lattice"):
            lattice_sigma(1.0, mu)


def test_schedule_plan_noise_thresholds_and_mu():
    s = LSHSchedule.plan(
        0.6, 0.3, 0.5, 2.0, depth=9, threshold_sd=3.0, cell_threshold_sd=2.0, max_nodes=17,
        branch_sd=2.0, dim=4,
    )  # fmt: skip
    assert s.depth == 9 and s.max_nodes == 17
    assert s.sigma_tree == lattice_sigma(1.0, 0.6 / 3.0)
    assert s.sigma_count == lattice_sigma(1.0, 0.3)
    assert s.sigma_sum == lattice_sigma(2.0, 0.5)
    assert s.threshold == 3.0 * s.sigma_tree
    assert s.cell_threshold == 2.0 * s.sigma_count
    assert s.branch_threshold == pytest.approx(2.0 * s.sigma_sum * 2.0 / 2.0)
    assert s.mu == pytest.approx(math.sqrt(0.36 + 0.09 + 0.25))
    # the schedule's mu bounds the composed GDP of its releases (sensitivities 1, 1, radius)
    actual = math.sqrt(9 / s.sigma_tree**2 + 1 / s.sigma_count**2 + (2.0 / s.sigma_sum) ** 2)
    assert actual <= s.mu
    with pytest.raises(ValueError):  # a level's share below the lattice's
        LSHSchedule.plan(
            1e-3, 0.3, 0.5, 1.0, depth=62, threshold_sd=3.0, cell_threshold_sd=3.0, max_nodes=8
        )


def test_lsh_split_validation_and_dropped_shares():
    full = lsh_split(None, private_scale=True, lloyd_steps=1)
    assert full == pytest.approx(LSH_SPLIT)
    no_scale = lsh_split(None, private_scale=False, lloyd_steps=1)
    assert "scale" not in no_scale and math.fsum(no_scale.values()) == pytest.approx(1.0)
    ratio = LSH_SPLIT["tree"] / LSH_SPLIT["sums"]
    assert no_scale["tree"] / no_scale["sums"] == pytest.approx(ratio)
    bare = lsh_split(None, private_scale=False, lloyd_steps=0)
    assert set(bare) == {"tree", "counts", "sums"}
    assert math.fsum(bare.values()) == pytest.approx(1.0)
    over = dict(scale=0.1, tree=0.4, counts=0.1, sums=0.2, lloyd=0.2)
    assert lsh_split(over, private_scale=True, lloyd_steps=2) == pytest.approx(over)
    with pytest.raises(ValueError, match="unknown"):
        lsh_split({"average": 0.5}, private_scale=True, lloyd_steps=1)
    with pytest.raises(ValueError, match="sum to 1"):
        lsh_split({"tree": 0.9}, private_scale=True, lloyd_steps=1)
    with pytest.raises(ValueError):
        lsh_split({**over, "tree": 0.0, "sums": 0.6}, private_scale=True, lloyd_steps=1)
    with pytest.raises(ValueError):
        lsh_split({**over, "tree": math.nan}, private_scale=True, lloyd_steps=1)


# ---- the tree ---------------------------------------------------------------------------------
# 3-bit codes; exact counts per prefix:
#   level 1: 0 -> 4 (codes 0-3), 1 -> 6 (codes 4-7)
#   level 2: 0 -> 4, 1 -> 0, 2 -> 2, 3 -> 4
#   level 3: 0 -> 3, 1 -> 1, 5 -> 2, 6 -> 1, 7 -> 3
CODES = np.array([0, 0, 0, 1, 5, 5, 6, 7, 7, 7], dtype=np.uint64)


def _exact(threshold: float, branch: float = 0.0, max_nodes: int = 100) -> LSHSchedule:
    return LSHSchedule(
        depth=3, sigma_tree=0.0, sigma_count=0.0, sigma_sum=0.0, threshold=threshold,
        cell_threshold=1.0, max_nodes=max_nodes, mu=0.0, branch_threshold=branch,
    )  # fmt: skip


def _no_seeds():
    raise AssertionError("epsilon = inf draws no noise")


def _tree(schedule: LSHSchedule) -> list[dict[int, float]]:
    kept, noisy = grow_tree(CODES, schedule, _no_seeds)
    return [
        dict(zip(map(int, k), map(float, v), strict=True)) for k, v in zip(kept, noisy, strict=True)
    ]


def test_grow_tree_exact_prefix_counts():
    assert _tree(_exact(1.0)) == [
        {0: 0.0},
        {0: 4.0, 1: 6.0},
        {0: 4.0, 2: 2.0, 3: 4.0},
        {0: 3.0, 1: 1.0, 5: 2.0, 6: 1.0, 7: 3.0},
    ]


def test_grow_tree_threshold_branch_threshold_and_cap():
    assert _tree(_exact(2.0))[3] == {0: 3.0, 5: 2.0, 7: 3.0}
    # only nodes with count >= 3 branch: prefix 2 (count 2) is kept but has no children
    assert _tree(_exact(1.0, branch=3.0)) == [
        {0: 0.0},
        {0: 4.0, 1: 6.0},
        {0: 4.0, 2: 2.0, 3: 4.0},
        {0: 3.0, 1: 1.0, 6: 1.0, 7: 3.0},
    ]
    # at most one node per level: the largest count wins, ties by the smaller prefix
    assert _tree(_exact(1.0, max_nodes=1)) == [{0: 0.0}, {1: 6.0}, {3: 4.0}, {7: 3.0}]
    # a level whose parents are all gone releases nothing
    assert _tree(_exact(7.0)) == [{0: 0.0}, {}, {}, {}]


def test_cell_labels_pick_the_deepest_kept_prefix():
    kept = [np.array([0], np.uint64), np.array([0, 1], np.uint64),
            np.array([0, 2, 3], np.uint64), np.array([0, 7], np.uint64)]  # fmt: skip
    # cells: root 0 | level 1: 1, 2 | level 2: 3, 4, 5 | level 3: 6, 7
    codes = np.arange(8, dtype=np.uint64)
    np.testing.assert_array_equal(cell_labels(codes, kept, 3), [6, 3, 1, 1, 4, 4, 5, 7])
    only_root = [kept[0]] + [np.zeros(0, np.uint64)] * 3
    np.testing.assert_array_equal(cell_labels(codes, only_root, 3), np.zeros(8))


def test_tree_cells_partition_the_rows():
    rng = np.random.default_rng(5)
    codes = np.sort(rng.integers(0, 1 << 12, size=3000).astype(np.uint64))
    sched = LSHSchedule(
        depth=12, sigma_tree=0.0, sigma_count=0.0, sigma_sum=0.0, threshold=5.0,
        cell_threshold=1.0, max_nodes=50, mu=0.0, branch_threshold=20.0,
    )  # fmt: skip
    kept, _ = grow_tree(codes, sched, _no_seeds)
    n_cells = sum(k.size for k in kept)
    labels = cell_labels(codes, kept, 12)
    assert labels.min() >= 0 and labels.max() < n_cells
    assert np.bincount(labels, minlength=n_cells).sum() == codes.size
    assert all(k.size <= 50 for k in kept)


# ---- the estimator ----------------------------------------------------------------------------
TRUE = np.array([[0.5, 0.5], [-0.5, 0.5], [0.0, -0.5]])


def _blobs(n_per: int, seed: int = 0, sd: float = 0.05) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(c, sd, size=(n_per, 2)) for c in TRUE])
    return X[rng.permutation(X.shape[0])]


def _match(centres: np.ndarray) -> np.ndarray:
    """Distance of each true centre to its nearest fitted centre."""
    return np.linalg.norm(TRUE[:, None, :] - centres[None, :, :], axis=2).min(axis=1)


def test_epsilon_inf_matches_scikit_learn_cost():
    X = _blobs(1000, seed=1, sd=0.08)
    ours = DPKMeans(3, epsilon=math.inf, radius=1.0, seed=0).fit(X)
    sk = KMeans(3, n_init=10, random_state=0).fit(X)
    assert -ours.score(X) <= 1.03 * sk.inertia_
    assert ours.method == "lsh" and ours.privacy_.epsilon == math.inf


def test_private_fit_recovers_separated_blobs():
    X = _blobs(7000, seed=2)
    est = DPKMeans(3, epsilon=1.0, radius=1.0, seed=3).fit(X)
    assert _match(est.cluster_centers_).max() < 0.05, est.cluster_centers_


def test_statement_is_one_gdp_release_within_the_budget():
    X = _blobs(500, seed=4)
    for kw in ({}, dict(private_scale=False, lloyd_steps=0), dict(lloyd_steps=3, max_depth=7)):
        est = DPKMeans(3, epsilon=1.5, delta=1e-5, radius=1.0, seed=1, **kw).fit(X)
        st = est.privacy_
        assert st.epsilon <= 1.5 and st.delta == 1e-5
        (event,) = st.events
        mu = 1.0 / event.noise_multiplier
        assert st.epsilon == pytest.approx(analytic_gaussian_epsilon(mu, 1e-5), rel=1e-12)
        text_mu = float(re.search(r"mu=([0-9.eE+-]+)", st.accountant).group(1))
        assert text_mu == pytest.approx(mu, rel=1e-5)
        assert mu <= gdp_mu(1.5, 1e-5) * (1 + 1e-12)
        assert est.ledger_.spent.epsilon <= 1.5


def _recording(monkeypatch) -> dict[str, list]:
    seen: dict[str, list] = {"H": [], "schedule": []}
    real_h, real_tree = est_mod.lsh_hyperplanes, est_mod.grow_tree

    def hyperplanes(*args, **kwargs):
        H, t = real_h(*args, **kwargs)
        seen["H"].append(H.copy())
        return H, t

    def tree(codes, schedule, seeds):
        seen["schedule"].append(schedule)
        return real_tree(codes, schedule, seeds)

    monkeypatch.setattr(est_mod, "lsh_hyperplanes", hyperplanes)
    monkeypatch.setattr(est_mod, "grow_tree", tree)
    return seen


def test_nothing_depends_on_the_number_of_rows(monkeypatch):
    seen = _recording(monkeypatch)
    X_small, X_large = _blobs(300, seed=5), _blobs(1234, seed=6)
    fits = [DPKMeans(3, epsilon=1.0, radius=1.0, seed=11).fit(X) for X in (X_small, X_large)]
    np.testing.assert_array_equal(seen["H"][0], seen["H"][1])  # same hyperplanes
    # the plan is a function of public inputs and the released radius (its cell-sum noise
    # scales with it); with the public ball it is the same for both sizes
    for X in (X_small, X_large):
        DPKMeans(3, epsilon=1.0, radius=1.0, seed=11, private_scale=False).fit(X)
    assert seen["schedule"][2] == seen["schedule"][3]  # same public plan
    for a, b in [(seen["schedule"][0], seen["schedule"][1])]:
        assert (a.depth, a.sigma_tree, a.sigma_count, a.threshold) == (
            b.depth, b.sigma_tree, b.sigma_count, b.threshold
        )  # fmt: skip
    for est in fits:
        assert est.dataset_size_ is None
        assert "not used" in est.privacy_.dataset_size
        assert not any(p.startswith("n_samples") for p in est.privacy_.public_inputs)
    assert fits[0].privacy_.public_inputs == fits[1].privacy_.public_inputs
    assert fits[0].privacy_.epsilon == fits[1].privacy_.epsilon
    assert not any(str(n) in " ".join(f.privacy_.public_inputs) for f in fits for n in (900, 3702))


def test_seed_reproduces_the_fit_and_x_is_not_written():
    X = _blobs(800, seed=7)
    X0 = X.copy()
    X.flags.writeable = False
    a = DPKMeans(3, epsilon=1.0, radius=1.0, seed=21).fit(X)
    b = DPKMeans(3, epsilon=1.0, radius=1.0, seed=21).fit(X)
    c = DPKMeans(3, epsilon=1.0, radius=1.0, seed=22).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.n_candidates_ == b.n_candidates_
    assert not np.array_equal(a.cluster_centers_, c.cluster_centers_)
    np.testing.assert_array_equal(X, X0)
    Xw = X0.copy()
    DPKMeans(3, epsilon=1.0, radius=1.0, seed=21).fit(Xw)
    np.testing.assert_array_equal(Xw, X0)


def test_clone_and_params():
    est = DPKMeans(4, max_depth=7, private_scale=False)
    assert est.get_params()["max_depth"] == 7 and est.get_params()["private_scale"] is False
    cl = clone(est)
    assert cl.get_params() == est.get_params()
    cl.set_params(max_depth=3, private_scale=True)
    assert (cl.max_depth, cl.private_scale) == (3, True)
    assert DPKMeans().get_params()["method"] == "lsh"
    assert DPKMeans().get_params()["max_depth"] is None


@pytest.mark.parametrize(
    ("kw", "exc"),
    [
        (dict(max_depth=0), ValueError),
        (dict(max_depth=63), ValueError),
        (dict(max_depth=2.5), TypeError),
        (dict(max_depth="3"), TypeError),
        (dict(max_depth=True), TypeError),
        (dict(private_scale="yes"), TypeError),
        (dict(private_scale=1), TypeError),
        (dict(method="maxcover", max_depth=3), ValueError),
        (dict(method="maxcover", private_scale=True), ValueError),
        (dict(budget_split={"average": 1.0}), ValueError),
        (dict(budget_split={"tree": 0.9}), ValueError),
        (dict(epsilon=1e-4), ValueError),
    ],
)
def test_bad_parameters_raise_before_any_spend(kw, exc):
    ledger = PrivacyLedger(10.0, 1e-3)
    with pytest.raises(exc):
        DPKMeans(2, radius=1.0, ledger=ledger, **kw).fit(_blobs(20))
    assert ledger.spent.epsilon == 0.0 and ledger.spent.delta == 0.0


def test_tiny_epsilon_names_the_lattice_share():
    with pytest.raises(ValueError, match=r"too small for method='lsh'.*lattice"):
        DPKMeans(2, epsilon=1e-4, radius=1.0).fit(_blobs(20))


# ---- kernel input checks (unreachable from DPKMeans, whose exponent is always
# ---- fixed_point_exponent(radius) and whose rows are checked finite) ----
def test_clipped_cluster_sums_refuses_an_exponent_too_small_for_the_radius():
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError):
        _core.clipped_cluster_sums(X, np.zeros(20, np.int64), 1, np.zeros(3), 4.0, -20, 1)


def test_clipped_cluster_sums_refuses_non_finite_rows():
    X = np.random.default_rng(0).normal(size=(20, 3))
    X[1, 0] = np.nan
    with pytest.raises(ValueError):
        _core.clipped_cluster_sums(X, np.zeros(20, np.int64), 1, np.zeros(3), 1.0, 2, 1)


def test_estimator_refuses_non_finite_rows_before_the_kernels():
    X = _blobs(50)
    X[3, 1] = np.nan
    ledger = PrivacyLedger(10.0, 1e-3)
    with pytest.raises(ValueError):
        DPKMeans(3, radius=1.0, ledger=ledger).fit(X)
    assert ledger.spent.epsilon == 0.0


def test_fit_does_not_depend_on_the_thread_count():
    X = _blobs(2000, seed=8)
    a = DPKMeans(3, epsilon=1.0, radius=1.0, seed=4, n_threads=1).fit(X)
    b = DPKMeans(3, epsilon=1.0, radius=1.0, seed=4, n_threads=2).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.n_candidates_ == b.n_candidates_ and a.tree_levels_ == b.tree_levels_


def test_nearest_centres_core_equals_twin_and_breaks_ties_low() -> None:
    rng = np.random.default_rng(7)
    X = rng.normal(size=(500, 12))
    C = rng.normal(size=(9, 12))
    C[6] = C[2]  # a tie: the lower index wins
    got = _core.nearest_centres(X, C, 2)
    assert np.array_equal(got, ref.nearest_centres(X, C))
    brute = np.argmin(((X[:, None, :] - C[None]) ** 2).sum(-1), axis=1)
    assert np.array_equal(got, brute)
    assert not (got == 6).any()
    with pytest.raises(ValueError):
        _core.nearest_centres(X, np.ascontiguousarray(C[:, :3]), 1)
    X[4, 0] = np.inf
    with pytest.raises(ValueError):
        _core.nearest_centres(X, C, 1)


# ---- issue 30, item 7 ----
def test_lloyd_round_keeps_the_coreset_centre_of_a_nearly_empty_cluster():
    """(b) A cluster with 2 rows and count noise sd 19.5 kept its noisy mean whenever the
    noisy count was >= 1 (about half the draws): pure noise on the clipping sphere. Now its
    noisy count must clear ``lloyd_keep_threshold`` (post-processing), else the previous
    (coreset) centre stays."""
    from privlearn.cluster._seeds import SeedSource
    from privlearn.cluster.lsh_coreset import (
        LLOYD_KEEP_SD,
        gaussian_centres,
        lloyd_keep_threshold,
    )
    from privlearn.fixed_point import fixed_point_parts

    rng = np.random.default_rng(0)
    d, r, sig_n, sig_s = 4, 1.0, 19.5, 9.7
    rows = [rng.uniform(-0.2, 0.2, size=(3000, d)), rng.uniform(-0.2, 0.2, size=(2, d))]
    exp = fixed_point_exponent(r)
    parts = [fixed_point_parts(x, exp) for x in rows]
    stats = (
        np.array([3000, 2]),
        np.stack([h.sum(axis=0) for h, _ in parts]),
        np.stack([lo.sum(axis=0) for _, lo in parts]),
    )
    keep = lloyd_keep_threshold(sig_n, sig_s, d, r)
    assert keep == max(LLOYD_KEEP_SD * sig_n, 2.0 * sig_s * math.sqrt(d) / r)
    assert lloyd_keep_threshold(0.0, 0.0, d, r) == 1.0  # epsilon = inf: any row
    fallback = np.array([[0.0] * d, [0.5] * d])
    moved_old = 0
    for seed in range(40):
        new = gaussian_centres(
            stats, np.zeros(d), r, sig_n, sig_s, SeedSource(seed), fallback, keep
        )
        np.testing.assert_array_equal(new[1], fallback[1])  # never replaced by noise
        assert np.linalg.norm(new[0] - rows[0].mean(axis=0)) < 0.05  # the big one moves
        old = gaussian_centres(stats, np.zeros(d), r, sig_n, sig_s, SeedSource(seed), fallback)
        moved_old += not np.array_equal(old[1], fallback[1])
    assert moved_old >= 10  # the former rule (noisy count >= 1) replaced it often


def _far_cluster_table(n: int = 20000, seed: int = 0) -> np.ndarray:
    """A bulk of rows plus 2% in a small cluster far from it (a stand-in for the issue's
    70k x 5 clinical table: mis-keyed values)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(0.0, 0.05, size=(n, 5)) + np.array([0.5, 0.6, 0.35, 0.5, 0.3])
    far = rng.random(n) < 0.02
    X[far, 4] += 0.56
    return X


def test_no_epsilon_independent_floor_from_the_private_scale():
    """(c) With the 0.98-quantile radius the far 2% were clipped onto the sphere around the
    private centre, and the default cost 1.2x the optimum at k = 2 for every epsilon
    (``private_scale=False``: 1.000). Now the radius covers them once the noise is small."""
    X = _far_cluster_table(5000)
    opt = KMeans(2, n_init=10, random_state=0).fit(X).inertia_
    for seed in range(1):
        est = DPKMeans(2, epsilon=1000.0, radius=2.0, seed=seed).fit(X)
        assert -est.score(X) <= 1.01 * opt
        dist = np.linalg.norm(X - est.scale_centre_, axis=1)
        assert (dist <= est.scale_radius_).all()  # nothing clipped at epsilon = 1000
        assert est.scale_radius_ < 2.0  # and still below the public radius


def test_private_radius_never_above_the_public_radius():
    """(a) A released radius at or above the public one (noise) falls back to the public
    ball ``B(0, radius)``: no clipping, and the same sensitivity as ``private_scale=False``."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-0.5, 0.5, size=(60, 3))  # few rows: the radius is mostly noise
    for seed in range(8):
        # nothing to say: scikit-learn's "distinct clusters" warning about the padded internal
        # points (few rows: fewer noisy cell means than k) stays inside the fit
        with only_warnings():
            est = DPKMeans(2, epsilon=0.3, radius=1.0, seed=seed).fit(X)
        assert est.scale_radius_ <= 1.0
        if est.scale_radius_ == 1.0:
            np.testing.assert_array_equal(est.scale_centre_, np.zeros(3))
