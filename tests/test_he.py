"""CKKS-like slot-layout simulator and packed encrypted LR training (privlearn.he).

Oracles: a plaintext float64 evaluation of the same packed algorithm (``clear_logreg``) for the
noise-free simulator; real CKKS (SEAL through TenSEAL) for the noisy one; the HE standard's
security table for the security estimate. Core (C++) vs numpy twin: bit-identical results.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privlearn import _core
from privlearn.data import load_helr
from privlearn.he import (
    HE_STANDARD_MAX_LOG_Q,
    CKKSParams,
    CostModel,
    DepthExhaustedError,
    PackedLayout,
    Simulator,
    bbar_diagonal,
    clear_logreg,
    estimate_security,
    plan_logreg,
    train_logreg,
)
from privlearn.random import key_from_seed
from privlearn.reference import he as R

# few slots keep the tests fast: 2^12 of the 2^13 of a 2^14 ring, 14 levels of 30 bits
SMALL = CKKSParams(log_n=14, log_q=470, log_p=30, log_special=60, ks_digit_bits=50, slots=4096)


def _scaled(X: np.ndarray) -> np.ndarray:
    lo, hi = X.min(axis=0), X.max(axis=0)
    return (X - lo) / np.where(hi > lo, hi - lo, 1.0)


def _synthetic(n: int = 150, d: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    w = rng.normal(size=d)
    y = np.where(X @ w - 0.5 * w.sum() + 0.3 * rng.normal(size=n) > 0, 1, 0)
    return X, y


@pytest.fixture(scope="module")
def lbw(data_home):
    path = data_home / "helr" / "lbw.txt"
    if not path.exists():
        pytest.skip("lbw not found")
    X, y = load_helr("lbw", data_home)
    return _scaled(X), y


def test_lbw_present(require_data):
    require_data("helr/lbw.txt")


# ---- kernels: core vs numpy twin, bit for bit ------------------------------------------------
def _kernel_cases(seed: int) -> tuple[np.ndarray, list[tuple[str, tuple]], list[np.ndarray]]:
    """The kernel calls of one seed and what the numpy twin returns for each."""
    rng = np.random.default_rng(seed)
    key = key_from_seed(seed + 11)
    a = rng.normal(size=(64, 16384))  # at the parallel threshold (2^20 slot values)
    b1 = rng.normal(size=(1, 16384))
    ea = np.abs(rng.normal(size=a.shape)) * 1e-6
    eb = np.abs(rng.normal(size=b1.shape)) * 1e-6
    cases = [
        ("he_noise", (a, key, 3, 5, 1e-6)),
        ("he_binary", (a, a[::-1].copy(), "add", 1.0, key, 3, 6, 0.0)),
        ("he_binary", (a, b1, "mul", 1.0 + 2.0**-20, key, 3, 7, 1e-7)),
        ("he_binary", (a, b1, "sub", 1.0, key, 9, 8, 1e-9)),
        ("he_scalar", (a, "mul", 0.123, 1.0, key, 3, 9, 1e-7)),
        ("he_scalar", (a, "add", -2.5, 0.99, key, 3, 10, 0.0)),
        ("he_rotate", (a, 37, key, 3, 11, 1e-8)),
        ("he_rotate", (a, -5, key, 3, 12, 0.0)),
        ("he_rotate_sum", (a, [1, 2, 4, -8, 512], key, 3, 13, 1e-8)),
        ("he_sum_rows", (a,)),
        ("he_bound_mul", (a, ea, b1, eb, 1.0, 1e-9)),
        ("he_bound_mul", (a, ea, a, ea, 1.0 - 2.0**-21, 0.0)),
    ]
    return a, cases, [getattr(R, name)(*args) for name, args in cases]


@pytest.fixture(scope="module")
def kernel_twins() -> dict[int, tuple]:
    """Seed -> :func:`_kernel_cases`, filled on first use: the numpy twin (about 1.5 CPU-s a
    seed, ~95% of a test) runs once per seed, not once per thread count (issue 32 item 4)."""
    return {}


@pytest.mark.parametrize("seed", [0, 7])
@pytest.mark.parametrize("n_threads", [1, 2, 4])
def test_kernels_bit_identical(seed, n_threads, kernel_twins):
    if seed not in kernel_twins:
        kernel_twins[seed] = _kernel_cases(seed)
    a, cases, wants = kernel_twins[seed]
    t = {"n_threads": n_threads}
    for (name, args), want in zip(cases, wants):
        got = getattr(_core, name)(*args, **t)
        assert got.shape == want.shape, name
        assert np.array_equal(got, want), name
    assert _core.he_max_abs(a, **t) == R.he_max_abs(a) == np.abs(a).max()


def test_kernel_semantics():
    a = np.arange(16.0).reshape(2, 8)
    key = key_from_seed(1)
    # left rotation: slot j gets slot j + k
    assert np.array_equal(_core.he_rotate(a, 3, key, 0, 0, 0.0), np.roll(a, -3, axis=1))
    s = _core.he_rotate_sum(a, [1, 2, 4], key, 0, 0, 0.0)
    assert np.array_equal(s, np.tile(a.sum(axis=1, keepdims=True), (1, 8)))
    assert np.array_equal(_core.he_sum_rows(a), a.sum(axis=0, keepdims=True))
    assert _core.he_op_stride == R.OP_STRIDE and _core.he_ct_stride == R.CT_STRIDE


def test_noise_draws_distribution():
    z = R.noise_draws(key_from_seed(5), 1, 0, 8, 16384).ravel()
    # integer-valued, centred, variance as documented (Irwin-Hall(4) of 16-bit uniforms)
    assert np.array_equal(z, np.round(z))
    se_mean = math.sqrt(R.NOISE_VARIANCE / z.size)
    assert abs(z.mean()) < 5 * se_mean
    assert abs(z.var() / R.NOISE_VARIANCE - 1.0) < 0.02
    assert np.abs(z).max() <= 4 * 65535
    # different operations draw different values
    z2 = R.noise_draws(key_from_seed(5), 1, 1, 1, 16384).ravel()
    assert not np.array_equal(z[:16384], z2)


def test_kernel_bad_input():
    key = key_from_seed(0)
    with pytest.raises(ValueError, match="2-d"):
        _core.he_rotate(np.zeros(8), 1, key, 0, 0, 0.0)
    with pytest.raises(ValueError, match="power of two"):
        _core.he_rotate(np.zeros((1, 6)), 1, key, 0, 0, 0.0)
    with pytest.raises(ValueError, match="rows"):
        _core.he_binary(np.zeros((3, 8)), np.zeros((2, 8)), "add", 1.0, key, 0, 0, 0.0)
    with pytest.raises(ValueError, match="op must be"):
        _core.he_binary(np.zeros((1, 8)), np.zeros((1, 8)), "div", 1.0, key, 0, 0, 0.0)
    with pytest.raises(ValueError, match="32 bytes"):
        _core.he_noise(np.zeros((1, 8)), b"short", 0, 0, 1.0)
    with pytest.raises(ValueError, match="address space"):
        _core.he_noise(np.zeros((1, 8)), key, 0, 1 << 40, 1.0)


# ---- simulator: noise model, levels -------------------------------------------------------
def test_fresh_encryption_error_matches_model():
    sim = Simulator(SMALL, seed=3)
    vals = np.zeros((8, SMALL.slots))
    ct = sim.encrypt(vals)
    err = sim.decrypt(ct)
    n = SMALL.ring_degree
    h = SMALL.secret_weight
    v = (
        SMALL.sigma**2 * (2 * n / 3 + h + 1) / 2.0 ** (2 * SMALL.log_special)
        + (1 + h) / 12
        + 1 / 12
    )
    std = math.sqrt(n * v / 2) / 2.0**SMALL.log_p
    assert abs(err.std() / std - 1.0) < 0.03
    assert np.abs(err).max() <= sim.error_bound(ct)  # 6 sigma bound; draws stay within 3.5
    exact = Simulator(SMALL, noise=False).encrypt(vals)
    assert np.array_equal(exact.data, vals)


def test_levels_scale_and_counters():
    p = CKKSParams(log_n=13, log_q=290, log_p=30, log_special=60, ks_digit_bits=50)
    sim = Simulator(p, seed=1)
    rng = np.random.default_rng(0)
    a = sim.encrypt(rng.uniform(-1, 1, size=(2, p.slots)))
    b = sim.encrypt(rng.uniform(-1, 1, size=(1, p.slots)), scale_bits=40)
    c = sim.mul(a, b)  # factor b at 40 bits: consumes 40 bits, keeps a's scale
    assert (c.mod_bits, c.scale_bits) == (p.log_q - 40, 30)
    d = sim.mul_const(a, 0.5)
    assert d.mod_bits == p.log_q - 30
    e = sim.add(c, d)  # aligned to the lower level by a mod switch
    assert e.mod_bits == p.log_q - 40
    assert sim.counts["mod_switches"] == 2
    r = sim.rotate_sum(e, [1, 2, -3])
    assert sim.counts["rotations"] == 6 and sim.rotation_keys == {1, 2, p.slots - 3}
    assert sim.counts["ct_ct_mult"] == 2 and sim.counts["ct_pt_mult"] == 2
    assert sim.counts["rescales"] == 4 and sim.counts["key_switches"] == 2 + 6
    assert r.error is not None and sim.error_bound(r) > 0
    x = a
    for _ in range(p.levels):
        x = sim.mul_const(x, 1.0)
    with pytest.raises(DepthExhaustedError):
        sim.mul_const(x, 1.0)
    with pytest.raises(ValueError, match="scales differ"):
        sim.add(a, sim.encrypt(np.zeros((1, p.slots)), scale_bits=40))
    with pytest.raises(ValueError, match="identity"):
        sim.rotate(a, p.slots)


def test_error_bound_holds_for_random_circuits():
    p = SMALL
    rng = np.random.default_rng(4)
    for seed in range(3):
        vals = [rng.uniform(-2, 2, size=(3, p.slots)) for _ in range(2)]
        out = []
        for noise in (True, False):
            sim = Simulator(p, seed=seed, noise=noise)
            a, b = (sim.encrypt(v) for v in vals)
            x = sim.mul(a, b)
            x = sim.rotate_sum(x, [1, 2, 4])
            x = sim.mul_plain(x, (np.arange(p.slots) % 8 == 0)[None, :].astype(float))
            x = sim.add(sim.mul(x, x), sim.mul_const(a, 0.37))
            x = sim.sum_cts(x)
            out.append((sim.decrypt(x), x))
        (noisy, ct), (exact, _) = out
        dev = np.abs(noisy - exact)
        assert dev.max() > 0
        assert np.all(dev <= ct.error)


# ---- packed training --------------------------------------------------------------------------
def test_layout():
    lay = PackedLayout(n=10, d1=5, slots=64)
    assert (lay.d_pad, lay.rows_per_ct, lay.n_ct) == (8, 8, 2)
    Z = np.arange(50.0).reshape(10, 5)
    packed = lay.pack(Z)
    assert packed.shape == (2, 64)
    assert np.array_equal(packed.reshape(16, 8)[:10, :5], Z)
    assert np.all(packed.reshape(16, 8)[10:] == 0) and np.all(packed.reshape(16, 8)[:, 5:] == 0)
    assert np.array_equal(
        lay.replicate(np.arange(5.0)).reshape(8, 8)[:, :5], np.tile(np.arange(5.0), (8, 1))
    )
    assert lay.mask().sum() == 8
    with pytest.raises(ValueError, match="slots"):
        PackedLayout(n=1, d1=100, slots=64).check()


def test_bbar_and_clear_algorithm():
    X, y = _synthetic()
    X1 = np.column_stack([np.ones(len(X)), X])
    H = -0.25 * X1.T @ X1
    bbar = bbar_diagonal(X1)
    assert np.allclose(1.0 / bbar, 1e-8 + np.abs(H).sum(axis=1))
    # the clear algorithm's first NAG step by hand (V = W = 0: u = 0, p(0) = 0.5)
    ys = np.where(y == 1, 1.0, -1.0)
    Z = ys[:, None] * X1
    g = Z.T @ np.full(len(X), 0.5 * 2.0)  # N_0 = 1 + 0.9^0 = 2
    a0, a1 = 0.01, 0.5 * (1 + math.sqrt(1 + 4 * 0.01**2))
    eta = (1 - a0) / a1
    want = (1 - eta) * (bbar * g)
    assert np.allclose(clear_logreg(X, y, iterations=1), want, rtol=1e-12)


@pytest.mark.parametrize("enhanced", [True, False])
@pytest.mark.parametrize("degree", [3, 5, 7])
def test_noise_free_simulator_equals_clear_evaluation(enhanced, degree):
    X, y = _synthetic(n=300, d=6, seed=degree)
    plan = plan_logreg(*X.shape, enhanced=enhanced, sigmoid_degree=degree, params=SMALL)
    assert plan.iterations >= 1
    for backend in ("simulator", "reference"):
        rep = train_logreg(
            X,
            y,
            enhanced=enhanced,
            sigmoid_degree=degree,
            params=SMALL,
            noise=False,
            backend=backend,
            record_path=True,
        )
        assert rep.iterations == plan.iterations
        V, path = clear_logreg(
            X,
            y,
            enhanced=enhanced,
            iterations=rep.iterations,
            sigmoid_degree=degree,
            return_path=True,
        )
        np.testing.assert_allclose(rep.coef_, V, rtol=1e-10, atol=1e-13)
        for got, want in zip(rep.beta_path, path):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)
        assert rep.error_bound == 0.0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_noisy_core_equals_reference_bitwise(seed):
    X, y = _synthetic(n=700, d=9, seed=seed)  # 16 columns, 256 rows/ct: 3 ciphertexts
    reps = [
        train_logreg(X, y, params=SMALL, seed=seed, backend="simulator", n_threads=t)
        for t in (1, 2, 4)
    ]
    ref = train_logreg(X, y, params=SMALL, seed=seed, backend="reference")
    assert reps[0].layout.n_ct == 3
    for rep in reps:
        assert np.array_equal(rep.coef_, ref.coef_)
        assert rep.error_bound == ref.error_bound
        assert rep.op_counts == ref.op_counts
    other = train_logreg(X, y, params=SMALL, seed=seed + 100)
    assert not np.array_equal(other.coef_, ref.coef_)
    # the noise is there, and the tracked bound covers it
    exact = train_logreg(X, y, params=SMALL, noise=False)
    dev = np.abs(ref.coef_ - exact.coef_)
    assert 0 < dev.max() <= ref.error_bound
    both = train_logreg(X, y, params=SMALL, seed=seed, compare_exact=True)
    assert both.error_realized == dev.max()
    text = both.summary()
    assert "enhanced NAG" in text and "realised CKKS error" in text and "3 data ciphertexts" in text
    proba = both.predict_proba(X)
    assert proba.shape == (len(X),) and np.all((proba > 0) & (proba < 1))


def test_planner_matches_run_and_depth_exhaustion():
    X, y = _synthetic(n=200, d=7)
    for enhanced in (True, False):
        plan = plan_logreg(*X.shape, enhanced=enhanced, params=SMALL)
        rep = train_logreg(X, y, enhanced=enhanced, params=SMALL, seed=0)
        assert rep.iterations == plan.iterations >= 1
        assert rep.levels == plan.levels and rep.mod_bits == plan.mod_bits
        assert rep.op_counts == plan.op_counts
        assert rep.est_learn_seconds == pytest.approx(plan.est_learn_seconds, rel=1e-12)
        with pytest.raises(DepthExhaustedError):
            train_logreg(
                X, y, enhanced=enhanced, params=SMALL, seed=0, iterations=plan.iterations + 1
            )
        with pytest.raises(DepthExhaustedError):
            plan_logreg(*X.shape, enhanced=enhanced, params=SMALL, iterations=plan.iterations + 1)
        fixed = plan_logreg(*X.shape, enhanced=enhanced, params=SMALL, iterations=plan.iterations)
        assert fixed.iterations == plan.iterations


def test_modulus_per_iteration_paper_parameters():
    # log_p = 30 per rescale; B-bar at 40 bits costs 40 more (Chiang Section 5)
    base = plan_logreg(1000, 8, enhanced=False)
    enh = plan_logreg(1000, 8, enhanced=True)
    assert np.all(np.diff(base.mod_bits) == -180)  # ZV, mask, 3 for degree 5, NAG
    assert np.all(np.diff(enh.mod_bits) == -220)
    p = CKKSParams()
    assert base.iterations == (p.log_q - p.log_q0) // 180
    assert enh.iterations == (p.log_q - p.log_q0 - 40 + 220 - 220) // 220
    deg3 = plan_logreg(1000, 8, enhanced=False, sigmoid_degree=3)
    assert np.all(np.diff(deg3.mod_bits) == -150)
    # storage as in the paper's tables: one ciphertext (+ one for B-bar) at log q = 1200
    assert base.storage_bytes / 1e9 == pytest.approx(0.0197, abs=1e-4)
    assert enh.storage_bytes / 1e9 == pytest.approx(0.0393, abs=1e-4)
    # d' = 16 in 32768 slots (2048 rows): 4 + 4 column steps, 11 row steps
    assert base.op_counts["rotation_keys"] == 4 + 4 + 11


def test_cost_model_fit_and_scaling():
    rows = [
        {
            "op": k,
            "log_n": ln,
            "mod_bits": b,
            "seconds": c * (2**ln * ln) / (2**15 * 15) * (b / 100) ** e,
        }
        for k, (c, e) in {"mul": (0.02, 1.7), "rotate": (0.015, 1.5), "add": (1e-4, 1.0)}.items()
        for ln in (13, 14, 15)
        for b in (100, 200, 400)
    ]
    m = CostModel.fit(rows)
    assert m.coefficients["mul"][0] == pytest.approx(0.02, rel=1e-9)
    assert m.coefficients["mul"][1] == pytest.approx(1.7, rel=1e-9)
    assert (
        m.seconds("rotate", 16, 1200) > m.seconds("rotate", 15, 1200) > m.seconds("rotate", 15, 600)
    )
    X, y = _synthetic(n=100, d=3)
    one = train_logreg(X, y, enhanced=False, params=SMALL, iterations=1, seed=0)
    two = train_logreg(X, y, enhanced=False, params=SMALL, iterations=2, seed=0)
    assert 0 < one.est_learn_seconds < two.est_learn_seconds


# ---- security table -----------------------------------------------------------------------------
def test_security_estimate_reproduces_table():
    for secret, table in HE_STANDARD_MAX_LOG_Q.items():
        for log_n, qs in table.items():
            for lam, q in zip((128, 192, 256), qs):
                assert estimate_security(log_n, q, secret) == pytest.approx(lam, abs=1e-9)
            assert estimate_security(log_n, qs[0] + 20, secret) < 128
    paper = CKKSParams()
    assert 80 <= paper.security_bits <= 95  # Kim et al. 2018a quote 80 bits
    assert paper.slots == 32768 and paper.levels == 38
    assert CKKSParams(log_n=15, log_q=440, log_special=440).security_bits == pytest.approx(
        128, abs=1
    )


def test_bad_input():
    X, y = _synthetic(n=50, d=3)
    with pytest.raises(ValueError, match="binary"):
        train_logreg(X, np.arange(50) % 3, params=SMALL)
    with pytest.raises(ValueError, match="binary"):
        train_logreg(X, np.ones(50), params=SMALL)
    with pytest.raises(ValueError, match=r"\{0, 1\}"):
        train_logreg(X, np.where(y == 1, 5, 2), params=SMALL)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        train_logreg(Xn, y, params=SMALL)
    with pytest.raises(ValueError, match="NaN"):
        train_logreg(X, np.where(y == 1, np.nan, 0.0), params=SMALL)
    for deg in (4, 9, True):
        with pytest.raises(ValueError, match="sigmoid_degree"):
            train_logreg(X, y, sigmoid_degree=deg, params=SMALL)
    with pytest.raises(ValueError, match="optimizer"):
        train_logreg(X, y, optimizer="adam", params=SMALL)
    with pytest.raises(ValueError, match="security"):
        CKKSParams(log_n=13, log_q=1200)
    with pytest.raises(ValueError, match="security"):
        CKKSParams(log_n=14, log_q=800, log_special=800)
    with pytest.raises(ValueError, match="slots"):
        CKKSParams(log_n=13, log_q=290, log_special=60, ks_digit_bits=50, slots=8192)
    with pytest.raises(ValueError, match="log_n"):
        CKKSParams(log_n=18)
    with pytest.raises(ValueError, match="special modulus"):
        CKKSParams(log_n=14, log_q=300, log_special=60)
    with pytest.raises(ValueError, match="slots"):
        train_logreg(
            np.zeros((4, 40)),
            [0, 1, 0, 1],
            params=CKKSParams(log_n=13, log_q=290, log_special=60, ks_digit_bits=50, slots=32),
        )
    with pytest.raises(ValueError, match="shape"):
        train_logreg(X, y[:-1], params=SMALL)
    with pytest.raises(ValueError, match="backend"):
        train_logreg(X, y, params=SMALL, backend="heaan")
    with pytest.raises(ValueError, match="positive"):
        plan_logreg(0, 3, params=SMALL)
    with pytest.raises(TypeError):
        train_logreg(X, y, params={"log_n": 13})


# ---- real CKKS cross-check ---------------------------------------------------------------------
def test_error_model_against_seal():
    """Slot errors of single operations, simulator vs SEAL, same parameters."""
    pytest.importorskip("tenseal")
    from privlearn.he import tenseal_params
    from privlearn.he._tenseal import TenSEALEngine

    params = tenseal_params(log_n=13, levels=2, log_p=40, log_q0=60, log_special=60)
    v = np.random.default_rng(0).uniform(-1, 1, size=(1, params.slots))
    std = {}
    for name, eng in (("seal", TenSEALEngine(params, seed=3)), ("sim", Simulator(params, seed=3))):
        a = eng.encrypt(v)
        fresh = eng.decrypt(a) - v
        rot = eng.decrypt(eng.rotate(a, 5)) - np.roll(v, -5, axis=1)
        half = eng.decrypt(eng.mul_const(a, 0.5)) - 0.5 * v  # mostly the RNS factor 2^40/q
        std[name] = (fresh.std(), rot.std(), half.std())
    fresh, rot, half = (s / r for s, r in zip(std["sim"], std["seal"]))
    assert 0.9 < fresh < 1.1  # public-key encryption at QP, divided by P, as SEAL does
    assert 0.25 < rot < 4  # SEAL's key-switching error varies with the key realisation
    assert 0.95 < half < 1.05


@pytest.mark.parametrize("enhanced", [True, False])
def test_tenseal_cross_check_lbw(lbw, enhanced):
    pytest.importorskip("tenseal")
    from privlearn.he import tenseal_params

    X, y = lbw
    params = tenseal_params(log_n=14, levels=7, log_p=40, log_q0=60, log_special=60)
    assert params.security_bits >= 128
    assert plan_logreg(*X.shape, enhanced=enhanced, params=params).iterations == 1
    real = train_logreg(
        X, y, enhanced=enhanced, iterations=1, params=params, backend="tenseal", seed=5
    )
    sim = train_logreg(X, y, enhanced=enhanced, iterations=1, params=params, seed=0)
    exact = train_logreg(X, y, enhanced=enhanced, iterations=1, params=params, noise=False)
    assert real.op_counts == sim.op_counts
    assert real.levels == sim.levels and real.mod_bits == sim.mod_bits
    assert real.error_bound is None
    bound = sim.error_bound
    # real CKKS and the simulator land within the simulator's bound of the exact result ...
    assert np.abs(real.coef_ - exact.coef_).max() <= bound
    assert np.abs(sim.coef_ - exact.coef_).max() <= bound
    # ... and carry errors of the same order (the simulator is not noise-free or far noisier)
    ratio = np.abs(sim.coef_ - exact.coef_).max() / np.abs(real.coef_ - exact.coef_).max()
    assert 0.1 < ratio < 10
    np.testing.assert_allclose(
        real.coef_, clear_logreg(X, y, enhanced=enhanced, iterations=1), rtol=1e-3, atol=1e-6
    )


# ---- reproduction tables ---------------------------------------------------------------------
def test_quadgrad_tables_quick(require_data, tmp_path):
    import csv

    from privlearn.experiments.quadgrad.tables import run_tables

    home = require_data("helr/lbw.txt", "helr/edin.txt")
    paths = run_tables(tmp_path, quick=True, data_home=home)
    assert {p.name for p in paths} == {"tables_1_2.csv", "tables_1_2_planner.csv", "tables_1_2.md"}
    rows = list(csv.DictReader((tmp_path / "tables_1_2.csv").open()))
    assert {(r["dataset"], r["method"]) for r in rows} == {
        (d, m) for d in ("lbw", "edin") for m in ("enhanced", "baseline")
    }
    for r in rows:
        # the simulated CKKS error does not change the classifier much
        assert abs(float(r["sim_accuracy"]) - float(r["clear_accuracy"])) <= 2.0
        assert abs(float(r["sim_auc"]) - float(r["clear_auc"])) <= 0.02
        # and the models are about as good as the paper's (same data, same algorithm)
        assert abs(float(r["sim_auc"]) - float(r["paper_auc"])) <= 0.05
        assert float(r["storage_gb"]) == pytest.approx(float(r["paper_storage_gb"]), abs=0.003)
        assert int(r["iterations"]) == (4 if r["method"] == "enhanced" else 7)
    plan = list(csv.DictReader((tmp_path / "tables_1_2_planner.csv").open()))
    got = {(r["dataset"], r["method"]): int(r["planner_iterations"]) for r in plan}
    assert got[("lbw", "enhanced")] == 5 and got[("lbw", "baseline")] == 6
    text = (tmp_path / "tables_1_2.md").read_text()
    assert "89.52" in text and "Why the counts differ" in text


def test_tenseal_two_iterations_lbw(lbw):
    """Two baseline iterations need 12 levels: 25-bit primes fit them in SEAL's 438-bit limit
    at log_n = 14. The errors are then large (25-bit scale, dense ternary secret), and the
    simulator predicts their size."""
    pytest.importorskip("tenseal")
    from privlearn.he import tenseal_params

    X, y = lbw
    params = tenseal_params(log_n=14, levels=12, log_p=25, log_q0=40, log_special=40)
    kw = dict(enhanced=False, iterations=2, params=params)
    assert plan_logreg(*X.shape, enhanced=False, params=params).iterations == 2
    real = train_logreg(X, y, **kw, backend="tenseal", seed=5)  # seeded SEAL: deterministic
    sim = train_logreg(X, y, **kw, seed=1)
    exact = train_logreg(X, y, **kw, noise=False)
    assert real.op_counts == sim.op_counts and real.mod_bits == sim.mod_bits
    dev_real = np.abs(real.coef_ - exact.coef_).max()
    dev_sim = np.abs(sim.coef_ - exact.coef_).max()
    assert max(dev_real, dev_sim) <= sim.error_bound
    assert 0.2 < dev_sim / dev_real < 5


# ---- bad input to the simulator and the security estimate (issue 19) ---------------------------
@pytest.mark.parametrize("backend", ["core", "reference"])
def test_simulator_refuses_non_finite_plaintexts(backend):
    sim = Simulator(SMALL, seed=0, backend=backend)
    slots = SMALL.slots
    for bad in (np.nan, np.inf, -np.inf):
        v = np.zeros((1, slots))
        v[0, 7] = bad
        with pytest.raises(ValueError, match="NaN or infinite"):
            sim.encrypt(v)
    with pytest.raises(TypeError, match="real numbers"):
        sim.encrypt(np.zeros((1, slots)) + 1j)
    ct = sim.encrypt(np.ones((1, slots)))
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match="finite"):
            sim.add_const(ct, bad)
        with pytest.raises(ValueError, match="finite"):
            sim.mul_const(ct, bad)
        with pytest.raises(ValueError, match="NaN or infinite"):
            sim.mul_plain(ct, np.full((1, slots), bad))
    with pytest.raises(TypeError, match="c must be a real number"):
        sim.add_const(ct, "1")
    with pytest.raises(ValueError, match=r"plain must have shape \(1, 4096\)"):
        sim.mul_plain(ct, np.ones((3, slots)))
    assert sim.counts["ct_pt_mult"] == 0  # nothing was counted for the refused operations


@pytest.mark.parametrize("backend", ["core", "reference"])
def test_simulator_validates_levels(backend):
    sim = Simulator(SMALL, seed=0, backend=backend)
    ct = sim.encrypt(np.ones((1, SMALL.slots)))
    for bad in (-5, 0, SMALL.log_q0 - 1):
        with pytest.raises(ValueError, match=r"mod_bits \(.*\) must be >= log_q0"):
            sim.mod_switch(ct, bad)
    with pytest.raises(ValueError, match="cannot mod-switch up"):
        sim.mod_switch(ct, SMALL.log_q + 1)
    for bad in (100.5, "100", True, None):
        with pytest.raises(TypeError, match="mod_bits must be an int"):
            sim.mod_switch(ct, bad)
    low = sim.mod_switch(ct, SMALL.log_q0)  # the lowest valid level is accepted
    assert low.mod_bits == SMALL.log_q0
    for bad in (0, -3, SMALL.log_q + 1):
        with pytest.raises(ValueError, match="scale_bits"):
            sim.encrypt(np.ones((1, SMALL.slots)), scale_bits=bad)
        with pytest.raises(ValueError, match="scale_bits"):
            sim.mul_const(ct, 2.0, scale_bits=bad)
    with pytest.raises(TypeError, match="scale_bits"):
        sim.mul_const(ct, 2.0, scale_bits=30.5)
    with pytest.raises(TypeError, match="rotation step must be an int"):
        sim.rotate(ct, 1.5)
    with pytest.raises(TypeError, match="rotation step must be an int"):
        sim.rotate_sum(ct, [1, 2.0])
    with pytest.raises(TypeError, match="must be a Ciphertext"):
        sim.decrypt(np.ones((1, SMALL.slots)))
    with pytest.raises(TypeError, match="must be a Ciphertext"):
        sim.add(ct, np.ones((1, SMALL.slots)))


def test_estimate_security_never_negative():
    """The linear extrapolation used to go negative for large moduli (-14.3 bits at
    log_n = 16, log_qp = 10^5): now refused beyond twice the 128-bit maximum, capped at 256
    above the table, and always in [44, 256] where it answers."""
    for secret, table in HE_STANDARD_MAX_LOG_Q.items():
        for log_n in range(10, 18):
            q128 = table[min(log_n, 15)][0] * 2.0 ** max(0, log_n - 15)
            for log_qp in np.geomspace(0.01, 2 * q128, 60)[:-1]:
                bits = estimate_security(log_n, float(log_qp), secret)
                assert 44.0 <= bits <= 256.0, (secret, log_n, log_qp, bits)
            for log_qp in (2.01 * q128, 1e5, 1e300):
                with pytest.raises(ValueError, match="beyond the HE security table"):
                    estimate_security(log_n, log_qp, secret)
    assert estimate_security(15, 1.0) == 256.0  # capped: a lower bound above the table
    for bad in (-1.0, 0.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="log_qp must be a finite number > 0"):
            estimate_security(16, bad)
    for bad_n in (9, 18, -1):
        with pytest.raises(ValueError, match="log_n must lie in"):
            estimate_security(bad_n, 100.0)
    with pytest.raises(TypeError, match="log_n must be an int"):
        estimate_security(16.0, 100.0)
    with pytest.raises(TypeError, match="log_qp must be a real number"):
        estimate_security(16, "100")
    with pytest.raises(ValueError, match="secret"):
        estimate_security(16, 100.0, secret="binary")
    with pytest.raises(ValueError, match="no estimate"):
        CKKSParams(log_n=10, log_q=200)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("backend", ["core", "reference"])
def test_huge_features_raise_instead_of_nan_coefficients(backend):
    """``X * 1e100`` used to give NaN coefficients (the sigmoid polynomial's powers overflow),
    ``X * 1e154`` too (``X^T X`` overflows in ``B-bar``); both now raise, as values that CKKS
    cannot encode under the modulus do."""
    X, y = _synthetic(n=60, d=3)
    trainer = "simulator" if backend == "core" else backend
    for scale, match in ((1e100, "overflowed double precision"), (1e154, "too large")):
        with pytest.raises(ValueError, match=match):
            train_logreg(X * scale, y, params=SMALL, iterations=1, seed=0, backend=trainer)
    with pytest.raises(ValueError, match="too large"):
        train_logreg(X * 1e154, y, params=SMALL, iterations=1, seed=0, enhanced=False,
                     backend=trainer)  # fmt: skip
    with pytest.raises(ValueError, match="too large"):
        clear_logreg(X * 1e154, y, iterations=2)
    sim = Simulator(SMALL, seed=0, backend=backend)
    with pytest.raises(ValueError, match="too large to encode at scale 2\\^30 under a 470-bit"):
        sim.encrypt(np.full((1, SMALL.slots), 1e150))
    assert np.isfinite(sim.decrypt(sim.encrypt(np.full((1, SMALL.slots), 1e100)))).all()
