"""The privacy guarantee holds at the numeric edges: overflow cannot bypass clipping, parameters
that overflow the arithmetic are refused, DP-SCD's dual variables get noise at every step
(lazily), data-independent schedules (``rate``, ``n_scale``), unknown keywords, thread counts
and fork(), huge Gamma shapes, and inputs that must never be written to.

Crashes and hangs are exercised in subprocesses with a timeout. Statistical checks use fixed
seeds (deterministic); their false-failure probability at random seeds is stated where used.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp

from privlearn import _core
from privlearn._checks import as_threads, max_threads
from privlearn._design_matrix import as_design_matrix, row_norms
from privlearn.linear import scd_train, sgd_train
from privlearn.random import Stream
from privlearn.reference import linear as ref
from privlearn.reference.random import Stream as RefStream
from privlearn.reference.random import key_from_seed

DBL_MAX = np.finfo(np.float64).max
KEY = key_from_seed(7)
TRAINERS_SGD = {"core": sgd_train, "reference": ref.sgd_train}
TRAINERS_SCD = {"core": scd_train, "reference": ref.scd_train}


def _run_python(code: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (its own process group); on timeout kill the whole
    group (forked children included) and fail."""
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"the subprocess hung for more than {timeout} s")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _data(n: int = 40, d: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True) * 1.1
    w = rng.normal(size=d)
    return X, X @ w + 0.1 * rng.normal(size=n), np.where(X @ w > 0, 1.0, -1.0)


# ---- 1. overflow cannot bypass clipping ------------------------------------------------------
@pytest.mark.parametrize("sparse", [False, True])
def test_sgd_clipping_survives_huge_rows_and_targets(sparse):
    X, t, _ = _data()
    X[3] = 0.0
    X[3, 0] = 1e300  # ||x||^2 overflows
    t[5] = DBL_MAX  # the squared loss derivative overflows to -inf after a step
    X[7] = 1e308  # every entry near DBL_MAX: ||x|| itself exceeds DBL_MAX
    Xin = sp.csr_matrix(X) if sparse else X
    kw = dict(
        loss="squared",
        mechanism="gaussian",
        sampling="poisson",
        batch_size=10,
        steps=30,
        clip=1.0,
        sigma=0.5,
        alpha=1e-3,
        eta0=0.5,
        learning_rate="constant",
    )
    runs = {b: f(Xin, t, key=KEY, **kw) for b, f in TRAINERS_SGD.items()}
    for run in runs.values():
        assert np.isfinite(run.coef).all()
    np.testing.assert_allclose(runs["core"].coef, runs["reference"].coef, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("backend", ["core", "reference"])
def test_sgd_one_clipped_example_has_norm_clip(backend):
    # x = 1e308 * ones: ||x|| = 2e308 > DBL_MAX, yet the clipped gradient has norm C exactly
    X = np.full((1, 4), 1e308)
    run = TRAINERS_SGD[backend](
        X,
        np.array([1.0]),
        key=KEY,
        loss="log_loss",
        mechanism="gaussian",
        sampling="fixed",
        batch_size=1,
        steps=1,
        clip=0.25,
        sigma=0.0,
        alpha=0.0,
        eta0=1.0,
        learning_rate="constant",
    )
    # the clipped contribution is summed in fixed point, truncated toward zero (units of
    # C * 2**-30): never above C, at most a few units below
    norm = np.linalg.norm(run.coef)
    assert 0.25 * (1 - 1e-8) < norm <= 0.25
    assert (run.coef > 0).all()


@pytest.mark.parametrize("backend", ["core", "reference"])
def test_sgd_infinite_derivative_is_clipped_to_c(backend):
    # y = -DBL_MAX with a margin of +1e308 overflows c = z - y to +inf: the contribution must be
    # +C x / ||x||, not NaN
    X = np.array([[1.0, 0.0]])
    run = TRAINERS_SGD[backend](
        X,
        np.array([-DBL_MAX]),
        key=KEY,
        w0=np.array([1e308, 0.0]),
        loss="squared",
        mechanism="gaussian",
        sampling="fixed",
        batch_size=1,
        steps=1,
        clip=2.0,
        sigma=0.0,
        alpha=0.0,
        eta0=1.0,
        learning_rate="constant",
    )
    assert run.coef[0] == pytest.approx(1e308 - 2.0, rel=1e-15)
    assert run.coef[1] == 0.0


@pytest.mark.parametrize("variant", ["dual", "seq", "primal"])
def test_scd_scaling_survives_dbl_max_targets(variant):
    X, t, _ = _data(n=30, d=6)
    t[[2, 9, 11]] = DBL_MAX
    kw = dict(
        variant=variant, loss="squared", alpha=1e-2, batch_size=3, epochs=2, clip=0.5, noise_std=0.1
    )
    runs = {b: f(X, t, key=KEY, **kw) for b, f in TRAINERS_SCD.items()}
    for run in runs.values():
        assert np.isfinite(run.coef).all() and np.isfinite(run.dual_coef).all()
    np.testing.assert_allclose(runs["core"].coef, runs["reference"].coef, rtol=1e-10, atol=1e-12)


# the overflow is handled (a clipped step or a clear error): numpy's RuntimeWarning is not
# passed on from the reference twin either
@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_scd_primal_step_is_at_most_c():
    X = np.ones((3, 1))
    t = np.full(3, DBL_MAX)  # the gradient sum overflows to -inf
    for f in TRAINERS_SCD.values():
        run = f(X, t, key=KEY, variant="primal", alpha=1e-3, batch_size=1, steps=1, clip=0.75)
        assert run.coef[0] == pytest.approx(0.75, rel=1e-15)


# the overflow is handled (a clipped step or a clear error): numpy's RuntimeWarning is not
# passed on from the reference twin either
@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("backend", ["core", "reference"])
def test_overflowing_run_raises_instead_of_returning_nonfinite(backend):
    X = np.full((4, 2), 1e300)
    t = np.full(4, 1e300)
    with pytest.raises(ValueError, match="non-finite"):
        TRAINERS_SGD[backend](
            X, t, key=KEY, loss="squared", mechanism="none", batch_size=2, epochs=3, alpha=0.0
        )
    with pytest.raises(ValueError, match="non-finite"):
        TRAINERS_SCD[backend](
            np.ones((4, 1)),
            np.full(4, DBL_MAX),
            key=KEY,
            variant="primal",
            loss="squared",
            alpha=1e-12,
            batch_size=1,
            epochs=1,
        )


SGD_BAD = [
    dict(alpha=1e300),
    dict(alpha=1e-320),
    dict(eta0=1e308),
    dict(eta0=0.0),
    dict(mechanism="gaussian", clip=np.inf, sigma=1.0),
    dict(clip=1e13),
    dict(mechanism="gaussian", clip=1.0, sigma=1e-300),
    dict(mechanism="gaussian", clip=1.0, sigma=1e300),
    dict(epsilon=1e126),
    dict(epsilon=1e-300),
    dict(epsilon=np.nan),
    dict(sampling="poisson", mechanism="none", rate=1.5),
    dict(sampling="poisson", mechanism="none", rate=-0.1),
    dict(mechanism="none", rate=0.5),  # rate needs Poisson sampling
]


@pytest.mark.parametrize("bad", SGD_BAD)
@pytest.mark.parametrize("backend", ["core", "reference"])
def test_sgd_rejects_overflowing_parameters(backend, bad):
    X, _, y = _data()
    with pytest.raises(ValueError):
        TRAINERS_SGD[backend](X, y, key=KEY, **bad)


SCD_BAD = [
    dict(alpha=1e300),
    dict(alpha=1e-320),
    dict(clip=np.inf, noise_std=1.0),
    dict(noise_std=np.inf),
    dict(noise_std=1e300),
    dict(rate=2.0),
    dict(n_scale=0.5),
    dict(n_scale=np.inf),
    dict(sampling="fixed", rate=0.1),
    dict(noise_stream=2**64 - 2),
]


@pytest.mark.parametrize("bad", SCD_BAD)
@pytest.mark.parametrize("backend", ["core", "reference"])
def test_scd_rejects_overflowing_parameters(backend, bad):
    X, t, _ = _data()
    with pytest.raises(ValueError):
        TRAINERS_SCD[backend](X, t, key=KEY, batch_size=5, **bad)


def _core_sgd_args(**over):
    args = dict(
        loss="log_loss",
        mechanism="gaussian",
        sampling="poisson",
        schedule="constant",
        lam=1e-3,
        batch_size=5,
        epochs=1,
        steps=3,
        eta0=1.0,
        clip=1.0,
        epsilon=1.0,
        sigma=1.0,
        radius=0.0,
        key=KEY,
        batch_stream=1,
        noise_stream=2,
        record_every=0,
        n_threads=1,
    )
    args.update(over)
    return args


def _core_scd_args(**over):
    args = dict(
        loss="squared",
        variant="dual",
        poisson=True,
        lam=1e-3,
        batch_size=5,
        epochs=1,
        steps=3,
        clip=1.0,
        noise_std=1.0,
        key=KEY,
        batch_stream=1,
        noise_stream=2,
        record_every=0,
        n_threads=1,
    )
    args.update(over)
    return args


@pytest.mark.parametrize(
    "over",
    [
        dict(lam=1e300),
        dict(lam=1e-320),
        dict(eta0=1e308),
        dict(clip=np.inf),
        dict(sigma=1e-300),
        dict(sigma=1e300),
        dict(mechanism="l2-laplace", sampling="disjoint", epsilon=1e126),
        dict(rate=1.5),
        dict(n_threads=65536),
    ],
)
def test_core_sgd_validates_bounds_too(over):
    X, _, y = _data()
    with pytest.raises(ValueError):
        _core.sgd_train_dense(X, y, np.zeros(X.shape[1]), **_core_sgd_args(**over))


@pytest.mark.parametrize(
    "over",
    [
        dict(lam=1e300),
        dict(lam=1e-320),
        dict(clip=np.inf),
        dict(noise_std=np.inf),
        dict(noise_std=1e300),
        dict(rate=1.5),
        dict(n_scale=0.5),
        dict(n_threads=65536),
    ],
)
def test_core_scd_validates_bounds_too(over):
    X, t, _ = _data()
    with pytest.raises(ValueError):
        _core.scd_train_dense(X, t, **_core_scd_args(**over))


@pytest.mark.parametrize("sparse", [False, True])
def test_row_norms_are_overflow_safe(sparse):
    X = np.array(
        [
            [1e300, 0.0, 0.0],
            [1e200, -1e200, 0.0],
            [0.0, 0.0, 0.0],
            [1e-200, 1e-200, 0.0],
            [3.0, 4.0, 0.0],
            [DBL_MAX, 0.0, 0.0],
            [5e-324, 0.0, 0.0],
        ]
    )
    got = row_norms(sp.csr_matrix(X) if sparse else X)
    want = [1e300, np.sqrt(2) * 1e200, 0.0, np.sqrt(2) * 1e-200, 5.0, DBL_MAX, 5e-324]
    np.testing.assert_allclose(got, want, rtol=1e-15)
    # a projection x / max(1, ||x||) keeps the direction of a huge row (not zeroed)
    proj = X[0] / max(1.0, got[0])
    assert proj[0] == pytest.approx(1.0)


# ---- 2. DP-SCD: every coordinate of alpha gets noise at every step ---------------------------
@pytest.mark.parametrize(
    "variant,sampling",
    [("dual", "poisson"), ("dual", "fixed"), ("seq", "poisson"), ("seq", "fixed")],
)
@pytest.mark.parametrize("sparse", [False, True])
def test_dual_noise_core_matches_reference_any_threads(variant, sampling, sparse):
    X, t, y = _data(n=50, d=4, seed=3)
    Xin = sp.csr_matrix(X) if sparse else X
    kw = dict(
        variant=variant,
        sampling=sampling,
        loss="hinge",
        alpha=1e-2,
        batch_size=6,
        epochs=3,
        clip=0.5,
        noise_std=0.3,
        record_every=5,
    )
    r = ref.scd_train(Xin, y, key=KEY, **kw)
    for threads in (1, 2, 4):
        c = scd_train(Xin, y, key=KEY, n_threads=threads, **kw)
        np.testing.assert_allclose(c.coef, r.coef, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(c.dual_coef, r.dual_coef, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(c.dual_path, r.dual_path, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("variant", ["dual", "seq"])
def test_every_dual_coordinate_has_noise_of_every_step(variant):
    # Updates are negligible (clip 1e-12), so alpha_j is its noise: N(0, T noise_std^2) for
    # every row, sampled often or never. Old code: variance = (times sampled) noise_std^2,
    # about T L / N = T / 20 here. Fixed seed; at random seeds the 4.5-sigma bound on the
    # sample variance of 2000 draws fails with probability < 1e-4.
    n, T = 2000, 40
    X = np.zeros((n, 2))
    X[:, 0] = 0.5
    res = scd_train(
        X,
        np.zeros(n),
        key=KEY,
        variant=variant,
        batch_size=100,
        steps=T,
        clip=1e-12,
        noise_std=1.0,
        alpha=1.0,
    )
    z = res.dual_coef / np.sqrt(T)
    assert abs(z.var() - 1.0) < 4.5 * np.sqrt(2.0 / n)
    assert abs(z.mean()) < 4.5 / np.sqrt(n)


def test_dual_noise_is_addressed_by_row_not_batch_position():
    # A row's noise does not depend on which other rows share its batch: the noise it has
    # received by the end of a one-step run (the step's noise, delivered at the end since
    # no later visit comes) is normal(noise_stream + 2, T N + j) with T = 1.
    n = 12
    X = np.zeros((n, 1))
    for sampling in ("poisson", "fixed"):
        res = scd_train(
            X,
            np.zeros(n),
            key=KEY,
            variant="dual",
            sampling=sampling,
            batch_size=n if sampling == "fixed" else 4,
            rate=1.0 if sampling == "poisson" else 0.0,
            steps=1,
            clip=1e-12,
            noise_std=1.0,
            alpha=1.0,
        )
        want = RefStream(key=KEY, stream=4)._normal_at(n + np.arange(n))
        np.testing.assert_allclose(res.dual_coef, want, rtol=1e-12)


def test_reference_normal_at_matches_normal():
    s = RefStream(key=KEY, stream=9)
    idx = np.array([0, 1, 2, 5, 8, 33, 1 << 40, (1 << 40) + 1])
    want = np.array([s.normal(int(i), 1)[0] for i in idx])
    np.testing.assert_array_equal(s._normal_at(idx), want)
    # the core's own log / sin / cos kernels (box_muller.cpp) agree with numpy's within ulps
    np.testing.assert_allclose(Stream(key=KEY, stream=9).normal(33, 1), s.normal(33, 1), rtol=1e-14)


# ---- 3. data-independent schedules: rate and n_scale -----------------------------------------
def test_sgd_rate_default_is_bit_identical():
    X, _, y = _data(n=60)
    kw = dict(mechanism="gaussian", sampling="poisson", batch_size=6, steps=20, clip=1.0, sigma=0.7)
    base = sgd_train(X, y, key=KEY, **kw)
    for extra in (dict(rate=0.0), dict(rate=6 / 60)):
        np.testing.assert_array_equal(sgd_train(X, y, key=KEY, **kw, **extra).coef, base.coef)


@pytest.mark.parametrize("sparse", [False, True])
def test_sgd_rate_core_matches_reference(sparse):
    X, _, y = _data(n=60)
    Xin = sp.csr_matrix(X) if sparse else X
    # batch_size (the expected lot size) may exceed n when the rate comes from a public size
    kw = dict(
        mechanism="gaussian",
        sampling="poisson",
        batch_size=80,
        rate=0.37,
        steps=15,
        clip=1.0,
        sigma=0.7,
    )
    c = sgd_train(Xin, y, key=KEY, n_threads=2, **kw)
    r = ref.sgd_train(Xin, y, key=KEY, **kw)
    np.testing.assert_allclose(c.coef, r.coef, rtol=1e-10, atol=1e-13)
    base = sgd_train(Xin, y, key=KEY, **{**kw, "rate": 0.2, "batch_size": 12})
    assert not np.array_equal(base.coef, c.coef)


@pytest.mark.parametrize("variant", ["dual", "seq", "primal"])
def test_scd_defaults_bit_identical(variant):
    X, t, _ = _data(n=40, d=6)
    kw = dict(variant=variant, batch_size=4, epochs=2, clip=0.5, noise_std=0.2)
    base = scd_train(X, t, key=KEY, **kw)
    extras = [dict(rate=0.0, n_scale=0.0), dict(n_scale=40.0)]
    if variant != "primal":
        extras.append(dict(rate=4 / 40))
    for extra in extras:
        run = scd_train(X, t, key=KEY, **kw, **extra)
        np.testing.assert_array_equal(run.coef, base.coef)
        np.testing.assert_array_equal(run.dual_coef, base.dual_coef)


@pytest.mark.parametrize("variant", ["dual", "seq", "primal"])
@pytest.mark.parametrize("sparse", [False, True])
def test_scd_rate_n_scale_core_matches_reference(variant, sparse):
    X, t, _ = _data(n=40, d=6)
    Xin = sp.csr_matrix(X) if sparse else X
    kw = dict(
        variant=variant,
        batch_size=4,
        steps=12,
        clip=0.5,
        noise_std=0.2,
        n_scale=57.5,
        record_every=4,
    )
    if variant != "primal":
        kw.update(rate=0.23, batch_size=50)
    c = scd_train(Xin, t, key=KEY, n_threads=2, **kw)
    r = ref.scd_train(Xin, t, key=KEY, **kw)
    np.testing.assert_allclose(c.coef, r.coef, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(c.v, r.v, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(c.coef, c.v / (1e-4 * 57.5), rtol=1e-15)
    np.testing.assert_allclose(c.primal_path, r.primal_path, rtol=1e-10)


def test_scd_n_scale_changes_lambda_n():
    X, t, _ = _data(n=40, d=6)
    kw = dict(variant="scd", epochs=30, batch_size=1)
    a = scd_train(X, t, key=KEY, alpha=1e-2, **kw)
    b = scd_train(X, t, key=KEY, alpha=1e-2 * 2, n_scale=20.0, **kw)
    # lambda N' = 0.02 * 20 = 0.01 * 40: the same closed forms, the same model
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-12)


# ---- 4. unknown keywords -----------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["core", "reference"])
def test_unknown_keywords_raise_type_error(backend):
    X, t, y = _data()
    with pytest.raises(TypeError, match="epsilonn"):
        TRAINERS_SGD[backend](X, y, key=KEY, epsilonn=1e-3)
    with pytest.raises(TypeError, match="'foo'.*'noise'|'noise'.*'foo'"):
        TRAINERS_SCD[backend](X, t, key=KEY, noise=1.0, foo=2)


# ---- 5. threads and fork -----------------------------------------------------------------------
def test_as_threads_bounds():
    assert as_threads(None) == 0 and as_threads(1) == 1
    assert as_threads(max_threads()) == max_threads()
    for bad in (0, -2, max_threads() + 1, 65536, 40000, 2**40):
        with pytest.raises(ValueError, match="n_threads"):
            as_threads(bad)
    with pytest.raises(TypeError):
        as_threads(True)


@pytest.mark.parametrize("n_threads", [65536, 40000])
def test_huge_thread_counts_are_errors_not_crashes(n_threads):
    code = f"""
    import numpy as np
    from privlearn import _core
    from privlearn.linear import sgd_train
    from privlearn.random import Stream
    X = np.ones((600, 3)) / 2; y = np.ones(600)
    for call in (
        lambda: sgd_train(X, y, key=bytes(32), n_threads={n_threads}),
        lambda: _core.blocked_column_sum(np.ones((4000, 3)), {n_threads}),
        lambda: _core.sgd_train_dense(X, y, np.zeros(3), "log_loss", "none", "fixed",
            "constant", 0.0, 600, 1, 1, 1.0, 0.0, 1.0, 0.0, 0.0, bytes(32), 1, 2, 0,
            {n_threads}),
        lambda: Stream(seed=1).normal(0, 10**6, n_threads={n_threads}),
    ):
        try:
            call()
        except ValueError as e:
            assert "n_threads" in str(e), e
        else:
            raise SystemExit("no error")
    print("ok")
    """
    proc = _run_python(code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "ok" in proc.stdout


def test_forked_child_runs_parallel_kernels():
    code = """
    import os, sys
    import numpy as np
    from privlearn import _core
    from privlearn.linear import scd_train
    from privlearn.random import Stream
    X = np.ones((200000, 4))
    want = _core.blocked_column_sum(X, 2)  # the parent's OpenMP pool now exists
    Stream(seed=1).normal(0, 2_000_000, n_threads=2)
    pid = os.fork()
    if pid == 0:
        got = _core.blocked_column_sum(X, 2)
        z = Stream(seed=1).normal(0, 2_000_000, n_threads=2)
        Xs = np.random.default_rng(0).normal(size=(3000, 5)) / 5
        scd_train(Xs, np.ones(3000), key=bytes(32), batch_size=1000, steps=2, n_threads=2)
        os._exit(0 if np.array_equal(got, want) and z.size == 2_000_000 else 3)
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status))
    """
    proc = _run_python(code, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_multiprocessing_fork_pool_works():
    code = """
    import multiprocessing as mp
    import numpy as np
    from privlearn import _core

    def work(k):
        return float(_core.blocked_column_sum(np.ones((100000, 2)) * k, 2)[0])

    if __name__ == "__main__":
        work(1)
        with mp.get_context("fork").Pool(2) as pool:
            out = pool.map(work, [1, 2, 3])
        assert out == [100000.0, 200000.0, 300000.0], out
        print("ok")
    """
    proc = _run_python(code, timeout=60)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr[-2000:]


# ---- 6. Gamma with a huge integer shape -----------------------------------------------------
def test_gamma_huge_integer_shape_is_fast_and_matches_reference():
    code = """
    from privlearn.random import Stream
    print(Stream(seed=3).gamma(0, 4, 2**34)[0])
    """
    proc = _run_python(code, timeout=60)  # the sum of 2**34 exponentials took minutes
    assert proc.returncode == 0, proc.stderr[-2000:]
    for shape in (2**16 + 1, 2**20, 2**34, 1e12):
        c = Stream(seed=3, stream=4).gamma(0, 50, shape, 0.5)
        r = RefStream(seed=3, stream=4).gamma(0, 50, shape, 0.5)
        np.testing.assert_allclose(c, r, rtol=1e-10)
        # Gamma(k, 1/2) has mean k/2 and sd sqrt(k)/2; 50 draws: 6-sigma bound on the mean
        assert abs(c.mean() - shape / 2) < 6 * np.sqrt(shape) / 2 / np.sqrt(50)


@pytest.mark.parametrize("shape", [1, 7, 64, 784, 2**16])
def test_gamma_small_integer_shapes_are_still_sums_of_exponentials(shape):
    s = RefStream(seed=5, stream=2)
    raw = s._row_raws(np.arange(3, dtype=np.uint64), 0, shape)
    e = -np.log(1.0 - (raw >> np.uint64(11)).astype(np.float64) * 2.0**-53)
    want = np.cumsum(e, axis=1)[:, -1] * 1.5
    np.testing.assert_array_equal(s.gamma(0, 3, shape, 1.5), want)
    np.testing.assert_allclose(Stream(seed=5, stream=2).gamma(0, 3, shape, 1.5), want, rtol=1e-12)


def test_song_noise_radius_for_mnist_dimension_unchanged():
    # d = 784 <= 2**16: the L2-Laplace radius is still the sum of 784 exponentials
    d, eps = 784, 0.5
    z = Stream(seed=11, stream=2).l2_laplace(0, 2, d, eps)
    s = RefStream(seed=11, stream=2)
    np.testing.assert_allclose(np.linalg.norm(z, axis=1), s.gamma(0, 2, d, 2 / eps), rtol=1e-12)
    big = 2**16 + 2
    zc = Stream(seed=11, stream=2).l2_laplace(0, 2, big, eps)
    zr = s.l2_laplace(0, 2, big, eps)
    np.testing.assert_allclose(zc, zr, rtol=1e-10, atol=1e-12)


# ---- 7. inputs are never written to ---------------------------------------------------------
def _messy_csr() -> sp.csr_matrix:
    # duplicates (0.1 + 0.2 at (0, 1)) and unsorted indices in row 1
    data = np.array([0.1, 0.2, 0.3, 0.0, 0.0])
    data[3], data[4] = 0.25, -0.25
    indices = np.array([1, 1, 0, 2, 0])
    indptr = np.array([0, 3, 5])
    X = sp.csr_matrix((data, indices, indptr), shape=(2, 3))
    X.data[:] = [0.1, 0.2, 0.3, 0.05, -0.05]  # sum 0.6
    return X


def test_as_design_matrix_never_mutates_the_callers_csr():
    X = _messy_csr()
    before = (X.data.copy(), X.indices.copy(), X.indptr.copy())
    out = as_design_matrix(X)
    np.testing.assert_array_equal(X.data, before[0])
    np.testing.assert_array_equal(X.indices, before[1])
    np.testing.assert_array_equal(X.indptr, before[2])
    assert X.nnz == 5 and X.data.sum() == pytest.approx(0.6)
    assert out.has_canonical_format and out.nnz == 4
    np.testing.assert_allclose(out.toarray(), X.toarray())


def test_row_norms_sum_duplicates_without_mutating():
    X = _messy_csr()
    data = X.data.copy()
    np.testing.assert_allclose(row_norms(X), np.linalg.norm(X.toarray(), axis=1), rtol=1e-15)
    np.testing.assert_array_equal(X.data, data)


def test_fitting_does_not_mutate_and_read_only_csr_works():
    X = _messy_csr()
    X = sp.vstack([X] * 10, format="csr")
    X.has_sorted_indices = False
    for arr in (X.data, X.indices, X.indptr):
        arr.setflags(write=False)
    y = np.tile([1.0, -1.0], 10)
    nnz, total = X.nnz, X.data.sum()
    for f in (sgd_train, ref.sgd_train):
        f(X, y, key=KEY, batch_size=4)
    for f in (scd_train, ref.scd_train):
        f(X, y, key=KEY, loss="hinge", batch_size=4)
    assert X.nnz == nnz and X.data.sum() == total


def test_canonical_csr_is_not_copied():
    X = sp.random(20, 5, density=0.5, format="csr", random_state=0)
    X.sort_indices()
    X.indices = X.indices.astype(np.int64)
    X.indptr = X.indptr.astype(np.int64)
    out = as_design_matrix(X)
    assert np.shares_memory(out.data, X.data)


def test_core_ready_csr_is_used_as_is_and_still_checked():
    """A canonical csr_matrix with scipy's int32 or int64 indices (what a fit hands to its
    trainer) is passed on as is: no wrapper and no cast of the indices on any trainer call
    (issue 32: the core takes int32 indices); its values are still checked, and so is its
    shape."""
    X = sp.random(20, 5, density=0.5, format="csr", random_state=0)
    X.sort_indices()
    X.indices = X.indices.astype(np.int64)  # (scipy's constructor would pick int32)
    X.indptr = X.indptr.astype(np.int64)
    assert X.has_canonical_format
    out = as_design_matrix(X)
    assert out is X and out.indices.dtype == np.int64
    bad = X.copy()
    bad.data[3] = np.nan
    with pytest.raises(ValueError, match="X contains NaN or infinite values"):
        as_design_matrix(bad)
    empty = sp.csr_matrix((0, 5))
    empty.indices = empty.indices.astype(np.int64)
    empty.indptr = empty.indptr.astype(np.int64)
    with pytest.raises(ValueError, match="at least one row and one column"):
        as_design_matrix(empty)
    # scipy's own int32 arrays: used as is, the caller's index arrays shared (no copy)
    native = sp.csr_matrix(X.toarray())
    assert native.indices.dtype == np.int32 and native.has_canonical_format
    assert as_design_matrix(native) is native
    # a matrix of another kind is still canonicalised on a new wrapper (here: index arrays of
    # two dtypes, set by hand: scipy's constructor makes them one), the caller's untouched
    other = sp.csr_matrix(X.toarray())
    other.indptr = other.indptr.astype(np.int64)
    converted = as_design_matrix(other)
    assert converted is not other
    assert converted.indices.dtype == converted.indptr.dtype
    assert converted.indices.dtype in (np.int32, np.int64)
    assert other.indices.dtype == np.int32 and other.indptr.dtype == np.int64
