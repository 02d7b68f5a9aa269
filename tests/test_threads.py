"""The thread policy (issue 14): how many threads a parallel region gets, the OpenMP wait
policy set by ``import privlearn``, and results that never depend on the thread count.

The policy is observed from outside: GNU OpenMP starts its pool threads (``n - 1`` of them, kept
for the life of the process) on the first region that runs on ``n`` threads, so the number of
threads of a fresh process (``/proc/self/task``) says whether a call opened a 2-thread region.
Speed is never asserted here (``bench/python/bench_threads.py`` measures it).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import WORKER_THREAD_ENV

from privlearn import parallel

LINUX_TASKS = os.path.isdir("/proc/self/task")
TWO_CORES = hasattr(os, "sched_getaffinity") and len(os.sched_getaffinity(0)) >= 2
needs_pool = pytest.mark.skipif(
    not (parallel.has_openmp() and LINUX_TASKS and TWO_CORES),
    reason="needs OpenMP, Linux /proc and at least 2 usable cores",
)


def _run_python(code: str, env: dict[str, str | None] | None = None, timeout: float = 120.0):
    """Run ``code`` in a fresh interpreter with ``env`` changes (None removes a variable).

    The thread caps that tests/conftest.py sets in an xdist worker are removed: these tests
    observe the thread pool of a process with the user's environment."""
    child_env = dict(os.environ)
    for k, v in {**WORKER_THREAD_ENV, **(env or {})}.items():
        if v is None:
            child_env.pop(k, None)
        else:
            child_env[k] = v
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"the subprocess hung for more than {timeout} s")
    assert proc.returncode == 0, err[-3000:]
    return out, err


# A fresh process: threads before any call, after small calls with n_threads=2 (microseconds of
# work each), after a mid-size call (~5 ms of normals) and after a large one (~50 ms).
_POOL_PROBE = """
import json, os
import numpy as np
from privlearn import _core
from privlearn.linear import scd_train
from privlearn.random import Stream

def tasks():
    return len(os.listdir("/proc/self/task"))

s = Stream(seed=1)
X = np.random.default_rng(0).normal(size=(3000, 20)) / 5
out = {"base": tasks()}
_core.blocked_column_sum(np.ones((4096, 8)), 2)
s.normal(0, 5000, n_threads=2)
scd_train(X, np.ones(3000), key=bytes(32), batch_size=1000, steps=3, n_threads=2)
out["small"] = tasks()
s.normal(0, 1_600_000, n_threads=2)  # 3 ns a normal by the policy's cost (random.cpp)
out["mid"] = tasks()
s.normal(0, 16_000_000, n_threads=2)
out["large"] = tasks()
print(json.dumps(out))
"""


def _pool_probe(env: dict[str, str | None]) -> dict[str, int]:
    out, _ = _run_python(_POOL_PROBE, {"GOMP_SPINCOUNT": None, **env})
    return json.loads(out.strip().splitlines()[-1])


@needs_pool
def test_small_work_runs_on_one_thread_large_work_on_two():
    t = _pool_probe({"PRIVLEARN_MIN_THREAD_WORK_NS": None, "OMP_WAIT_POLICY": None})
    assert t["small"] == t["base"], t  # no OpenMP thread was started for microseconds of work
    assert t["mid"] == t["base"] + 1, t  # 5 ms: 2 threads with passive waiting (0.25 ms/thread)
    assert t["large"] == t["base"] + 1, t


@needs_pool
def test_spinning_threads_need_more_work():
    # OMP_WAIT_POLICY set by the user to something other than PASSIVE: threads spin, and the
    # policy asks 6.5 ms per thread: the 5 ms call stays on one thread, the 50 ms one does not
    t = _pool_probe({"PRIVLEARN_MIN_THREAD_WORK_NS": None, "OMP_WAIT_POLICY": "ACTIVE"})
    assert t["small"] == t["base"] and t["mid"] == t["base"], t
    assert t["large"] == t["base"] + 1, t


@needs_pool
def test_policy_off_opens_regions_for_small_work():
    # the measurement switch: every region gets the requested count (as before issue 14)
    t = _pool_probe({"PRIVLEARN_MIN_THREAD_WORK_NS": "0", "OMP_WAIT_POLICY": None})
    assert t["small"] == t["base"] + 1, t


def test_import_sets_passive_wait_policy_and_libgomp_reads_it():
    code = """
    import os
    import privlearn.parallel
    print(os.environ["OMP_WAIT_POLICY"])
    """
    out, err = _run_python(code, {"OMP_WAIT_POLICY": None, "OMP_DISPLAY_ENV": "TRUE"})
    assert out.strip() == "PASSIVE"
    if parallel.has_openmp():  # libgomp prints the values it uses when it is loaded
        assert "OMP_WAIT_POLICY = 'PASSIVE'" in err, err[-2000:]
    out, err = _run_python(code, {"OMP_WAIT_POLICY": "ACTIVE", "OMP_DISPLAY_ENV": "TRUE"})
    assert out.strip() == "ACTIVE"  # the user's choice wins
    if parallel.has_openmp():
        assert "OMP_WAIT_POLICY = 'ACTIVE'" in err, err[-2000:]


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"OMP_WAIT_POLICY": "PASSIVE"}, parallel.MIN_THREAD_WORK_NS),
        ({"OMP_WAIT_POLICY": " passive "}, parallel.MIN_THREAD_WORK_NS),
        ({"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": "0"}, parallel.MIN_THREAD_WORK_NS),
        ({"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": "10000"}, 6.5e6),
        ({"OMP_WAIT_POLICY": "ACTIVE"}, 6.5e6),
        ({"OMP_WAIT_POLICY": None}, 6.5e6),
        ({"PRIVLEARN_MIN_THREAD_WORK_NS": "0"}, 0.0),
        ({"PRIVLEARN_MIN_THREAD_WORK_NS": "2.5e6"}, 2.5e6),
        ({"OMP_WAIT_POLICY": "PASSIVE", "PRIVLEARN_MIN_THREAD_WORK_NS": "-1"}, 2.5e5),
        ({"OMP_WAIT_POLICY": "PASSIVE", "PRIVLEARN_MIN_THREAD_WORK_NS": "x"}, 2.5e5),
    ],
)
def test_min_thread_work_ns(monkeypatch, env, expected):
    for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "PRIVLEARN_MIN_THREAD_WORK_NS"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        if v is not None:
            monkeypatch.setenv(k, v)
    assert parallel.min_thread_work_ns() == expected
    assert parallel.MIN_THREAD_WORK_NS == 2.5e5 and parallel.MIN_THREAD_WORK_SPIN_NS == 6.5e6


# Every kernel with a parallel region, on n_threads = 1, 2, 3; prints a digest per thread count.
_KERNELS = """
import hashlib, json, math, sys
import numpy as np
import scipy.sparse as sp
from privlearn import _core
from privlearn.cluster import maxcover_candidates
from privlearn.linear import quadgrad_train, scd_train, sgd_train
from privlearn.random import Stream

SIZE = int(sys.argv[1]) if len(sys.argv) > 1 else 1
rng = np.random.default_rng(0)
n = 20_000 * SIZE
X = rng.normal(size=(n, 12))
X /= 1.5 * np.linalg.norm(X, axis=1, keepdims=True)
y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
Xs = sp.random(n, 40, density=0.1, format="csr", random_state=1)
Xs = sp.csr_matrix(Xs.multiply(1.0 / (1e-9 + np.sqrt(Xs.multiply(Xs).sum(axis=1)))))
Y = rng.normal(size=(5_000 * SIZE, 3))
Y /= 1.2 * np.linalg.norm(Y, axis=1, keepdims=True)
ct = rng.normal(size=(8, 1 << 15))
s = Stream(seed=7)
key = bytes(range(32))

def digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(np.asarray(a, dtype=np.float64)).tobytes())
    return h.hexdigest()[:16]

def run(t):
    out = {}
    out["normal"] = digest(s.normal(0, 300_000 * SIZE, n_threads=t))
    out["words"] = digest(s.words(0, 300_000 * SIZE, n_threads=t).astype(np.float64))
    out["laplace"] = digest(s.laplace(5, 200_000 * SIZE, 2.0, n_threads=t))
    out["gamma"] = digest(s.gamma(0, 50_000 * SIZE, 3.5, n_threads=t))
    out["l2_laplace"] = digest(s.l2_laplace(0, 2000 * SIZE, 30, 1.0, n_threads=t))
    out["poisson_mask"] = digest(s.poisson_mask(3, 500_000 * SIZE, 0.01, n_threads=t))
    out["column_sum"] = digest(_core.blocked_column_sum(X, t))
    out["sgd"] = digest(sgd_train(X, y, key=key, mechanism="gaussian", sampling="poisson",
        batch_size=2000, epochs=1, clip=1.0, sigma=1.0, n_threads=t).coef)
    out["scd"] = digest(scd_train(X, X[:, 1], key=key, loss="squared", variant="dual",
        sampling="poisson", batch_size=4000, epochs=1, clip=1.0, noise_std=1.0,
        n_threads=t).coef)
    out["scd_csr"] = digest(scd_train(Xs, y, key=key, loss="log_loss", variant="dual",
        sampling="poisson", batch_size=4000, epochs=1, clip=1.0, noise_std=1.0,
        n_threads=t).coef)
    q = quadgrad_train(np.abs(X), y, optimizer="nag", enhanced=True, max_iter=3, n_threads=t)
    out["quadgrad"] = digest(q.coef, q.loglik_path)
    qs = quadgrad_train(Xs, y, optimizer="adam", enhanced=True, max_iter=2, n_threads=t)
    out["quadgrad_csr"] = digest(qs.coef, qs.loglik_path)
    coords, ptr, grid = _core.grid_cover(Y, 0.3, 0.3 / math.sqrt(3), n_threads=t)
    out["grid_cover"] = digest(coords, ptr, grid)
    mc = maxcover_candidates(Y, [0.5, 0.25], eps_pick=2.0, key=key, picks=6, n_threads=t)
    out["maxcover"] = digest(mc.centers, mc.covered)
    out["he_noise"] = digest(_core.he_noise(ct, key, 1, 2, 0.5, t))
    out["he_binary"] = digest(_core.he_binary(ct, ct[:1], "mul", 0.5, key, 1, 3, 0.5, t))
    out["he_rotate_sum"] = digest(_core.he_rotate_sum(ct, [1, 2, 4], key, 1, 4, 0.5, t))
    out["he_sum_rows"] = digest(_core.he_sum_rows(ct, t))
    out["he_max_abs"] = digest([_core.he_max_abs(ct, t)])
    return out

print(json.dumps({t: run(t) for t in (1, 2, 3)}))
"""


def _kernel_digests(env: dict[str, str | None], size: int = 1) -> dict[str, dict[str, str]]:
    out, _ = _run_python(_KERNELS.replace("sys.argv[1]", str(size)), env, timeout=300)
    return json.loads(out.strip().splitlines()[-1])


def test_results_identical_for_1_2_3_threads_policy_off_and_on():
    # policy off: every region really runs on the requested 1, 2 or 3 threads (3 > cores too)
    off = _kernel_digests({"PRIVLEARN_MIN_THREAD_WORK_NS": "0"})
    # policy on (the default): the same problems, mostly on fewer threads
    on = _kernel_digests({"PRIVLEARN_MIN_THREAD_WORK_NS": None})
    for digests in (off, on):
        assert digests["1"] == digests["2"] == digests["3"], digests
    assert off["1"] == on["1"]
    assert len(off["1"]) == 19


def test_results_identical_for_thread_counts_large_regions():
    # regions large enough for 2 threads under the default policy: the same bits as 1 thread
    from privlearn.random import Stream

    s = Stream(seed=11)
    ref = s.normal(0, 3_000_000, n_threads=1)
    for t in (2, 3, None):
        assert np.array_equal(s.normal(0, 3_000_000, n_threads=t), ref)
    X = np.random.default_rng(2).normal(size=(400_000, 6))
    want = parallel.blocked_column_sum(X, n_threads=1)
    for t in (2, 3):
        assert np.array_equal(parallel.blocked_column_sum(X, n_threads=t), want)
    # and the sum is the blocked one (block sums of 256 rows, added in order)
    blocks = np.add.reduceat(X, np.arange(0, X.shape[0], parallel.REDUCE_BLOCK), axis=0)
    acc = np.zeros(X.shape[1])
    for b in blocks:
        acc = acc + b
    np.testing.assert_allclose(want, acc, rtol=1e-12, atol=1e-9)


def test_huge_thread_request_is_still_an_error_for_small_work():
    # n_threads is validated even when the policy would run the call on one thread
    from privlearn import _core

    with pytest.raises(ValueError, match="n_threads"):
        _core.blocked_column_sum(np.ones((1000, 2)), 10**6)


def test_policy_is_exported_by_the_core():
    """privlearn.parallel reads the core's constants and asks the core's policy: one thread for
    a region below the per-thread minimum, at most the request (a ceiling) above it."""
    from privlearn import _core

    assert parallel.MIN_THREAD_WORK_NS == _core.MIN_THREAD_WORK_NS
    assert parallel.MIN_THREAD_WORK_SPIN_NS == _core.MIN_THREAD_WORK_SPIN_NS
    floor = _core.min_thread_work_ns()
    assert parallel.threads_for(2, 0.5 * floor) == 1
    assert parallel.threads_for(1, 1e12) == 1
    if parallel.has_openmp() and floor > 0 and os.cpu_count() and os.cpu_count() >= 2:
        assert parallel.threads_for(2, 10 * floor) == 2


# ---- fork(): fit -> os.fork() -> fit, per estimator family (issue 19) ----------------------------
# OpenMP thread pools do not survive fork(): a child that opens a multi-threaded region of a
# runtime its parent used deadlocks. The core guards its own regions (a pthread_atfork mark:
# one thread in a forked child); privlearn.parallel.fork_safe_threads runs scikit-learn's
# OpenMP code (DPKMeans's proxy KMeans) on one thread there. Each scenario runs in a fresh
# interpreter with the thread policy off (PRIVLEARN_MIN_THREAD_WORK_NS=0: every core region of
# the parent opens a 2-thread team, so its pool exists); the parent fits, forks, the child
# fits, and the parent waits for the child with a deadline (SIGKILL and exit 9 if it hangs).
_FORK_FITS = """
import os, signal, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")

rng = np.random.default_rng(0)
X = rng.normal(size=(4000, 6))
X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
y = np.where(X[:, 0] > 0, 1.0, -1.0)

def fit(family):
    if family == "sgd":
        from privlearn.linear import sgd_train
        out = sgd_train(X, y, key=bytes(32), mechanism="gaussian", sampling="poisson",
                        sigma=1.0, clip=1.0, batch_size=500, epochs=2, n_threads=2).coef
    elif family == "scd":
        from privlearn.linear import scd_train
        out = scd_train(X, y, key=bytes(32), batch_size=1000, steps=4, n_threads=2).coef
    elif family == "quadgrad":
        from privlearn.linear import quadgrad_train
        out = quadgrad_train(X, y, max_iter=3, n_threads=2).coef
    elif family == "kmeans":
        from privlearn.cluster import DPKMeans
        est = DPKMeans(4, 1.0, method="maxcover", radius=1.0, n_samples=4000, seed=1, n_threads=2)
        out = est.fit(X)
        out = out.cluster_centers_
    assert np.all(np.isfinite(out)), family
    return out

PARENT, CHILD, DEADLINE = {parent!r}, {child!r}, {deadline!r}
for family in PARENT:
    fit(family)
pid = os.fork()
if pid == 0:
    try:
        for family in CHILD:
            fit(family)
    except BaseException as exc:
        print("child failed:", repr(exc), file=sys.stderr, flush=True)
        os._exit(2)
    os._exit(0)
end = time.monotonic() + DEADLINE
while True:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        sys.exit(os.waitstatus_to_exitcode(status))
    if time.monotonic() > end:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        print("the forked child hung", file=sys.stderr, flush=True)
        sys.exit(9)
    time.sleep(0.01)
"""

_FAMILIES = ["sgd", "scd", "quadgrad", "kmeans"]


def _fork_scenario(parent: list[str], child: list[str], deadline: float = 60.0) -> None:
    code = _FORK_FITS.format(parent=parent, child=child, deadline=deadline)
    _run_python(code, {"PRIVLEARN_MIN_THREAD_WORK_NS": "0"}, timeout=deadline + 60.0)


@needs_pool
@pytest.mark.parametrize("family", _FAMILIES)
def test_fit_fork_fit_same_family(family):
    """fit -> os.fork() -> the same fit in the child: the child exits 0 (a hang is killed at
    the deadline and fails; DPKMeans hung in scikit-learn's OpenMP pool before issue 19)."""
    _fork_scenario([family], [family])


@needs_pool
def test_fit_fork_fit_every_family():
    """Every family fitted in the parent (core and scikit-learn pools both started), then every
    family in the child."""
    _fork_scenario(_FAMILIES, _FAMILIES)


def test_in_forked_child_is_marked_after_fork_only():
    code = """
    import os, sys
    from privlearn import parallel
    assert not parallel.in_forked_child()
    with parallel.fork_safe_threads():
        pass
    pid = os.fork()
    if pid == 0:
        from threadpoolctl import threadpool_info
        ok = parallel.in_forked_child()
        with parallel.fork_safe_threads():
            openmp = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "openmp"]
        os._exit(0 if ok and all(n == 1 for n in openmp) else 3)
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status))
    """
    _run_python(code, timeout=60)


_JOBLIB_AFTER_FIT = """
import warnings
import numpy as np
from joblib import Parallel, delayed
warnings.simplefilter("ignore")
from privlearn.cluster import DPKMeans
from privlearn.linear import sgd_train

rng = np.random.default_rng(0)
X = rng.normal(size=(3000, 4))
X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
y = np.where(X[:, 0] > 0, 1.0, -1.0)

def work(seed):
    est = DPKMeans(3, 1.0, method="maxcover", radius=1.0, n_samples=3000, seed=seed, n_threads=2)
    c = est.fit(X)
    w = sgd_train(X, y, key=bytes(32), mechanism="none", epochs=1, batch_size=300,
                  n_threads=2).coef
    return c.cluster_centers_.shape, bool(np.isfinite(w).all())

if __name__ == "__main__":
    want = work(5)  # the parent's core and scikit-learn pools exist now
    out = Parallel(n_jobs=2, backend={backend!r}, timeout=60)(delayed(work)(s) for s in (5, 6))
    assert out[0] == want and all(o[1] for o in out), out
    print("ok")
"""


@needs_pool
@pytest.mark.parametrize("backend", ["loky", "multiprocessing"])
def test_joblib_process_pool_after_a_fit(backend):
    """A joblib process pool after a fit in the parent: ``multiprocessing`` forks (the guard),
    ``loky`` starts fresh interpreters; both finish."""
    out, _ = _run_python(
        _JOBLIB_AFTER_FIT.format(backend=backend),
        {"PRIVLEARN_MIN_THREAD_WORK_NS": "0"},
        timeout=120,
    )
    assert "ok" in out
