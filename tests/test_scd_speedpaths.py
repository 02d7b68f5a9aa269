"""The fast paths of the DP-SCD core (issue 32, items 1 and 5) compute exactly what the plain
loops did: the permutation drawn 8 ChaCha20 blocks at a time, the SDCA loop that skips
exactly-zero updates, and the dual step's fixed-point update sum through int32 for small
terms. Each is compared with the numpy twin (rtol 1e-10, or exactly for integer outputs) and
across thread counts (bit for bit), on inputs that exercise both sides of every branch.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from privlearn import _core
from privlearn._design_matrix import RowView
from privlearn._specs.scd import SCD_DEFAULTS, prepare_scd_spec
from privlearn.linear import scd_train
from privlearn.random import key_from_seed
from privlearn.reference.linear import scd_train as scd_train_ref
from privlearn.reference.random import Stream as RefStream

RTOL = 1e-10
ATOL = 1e-12


def _assert_runs_equal(a, b, rtol: float = RTOL) -> None:
    np.testing.assert_allclose(a.coef, b.coef, rtol=rtol, atol=ATOL)
    np.testing.assert_allclose(a.dual_coef, b.dual_coef, rtol=rtol, atol=ATOL)
    np.testing.assert_allclose(a.primal_path, b.primal_path, rtol=rtol, atol=ATOL)
    np.testing.assert_allclose(a.dual_path, b.dual_path, rtol=rtol, atol=ATOL)
    np.testing.assert_array_equal(a.path_steps, b.path_steps)


def _assert_bit_identical(a, b) -> None:
    for u, w in ((a.coef, b.coef), (a.dual_coef, b.dual_coef), (a.primal_path, b.primal_path)):
        np.testing.assert_array_equal(u, w)


# ---- choice_without_replacement: raws drawn in chunks ---------------------------------------
# chunks of 1024 raws (sizes on both sides of a chunk), the dense (k >= population / 4) and
# sparse tables, and rows on both sides of 2^28 (beyond it the core falls back to a cursor).
CHOICE_SIZES = [(1, 1), (7, 7), (1023, 1023), (1024, 1024), (1025, 1025), (2500, 2049),
                (3000, 750), (3000, 749), (4000, 37)]  # fmt: skip


@pytest.mark.parametrize("population, k", CHOICE_SIZES)
@pytest.mark.parametrize("index", [0, 5, 2**28 - 1, 2**28, 2**32 - 1])
def test_choice_without_replacement_matches_twin(population, k, index):
    key = key_from_seed(11)
    core = _core.choice_without_replacement(key, 3, index, population, k)
    ref = RefStream(key=key, stream=3).choice_without_replacement(index, population, k)
    np.testing.assert_array_equal(core, ref)
    assert len(np.unique(core)) == k and core.min() >= 0 and core.max() < population


# ---- SDCA (variant "scd"): zero updates skipped ----------------------------------------------


def _normal_unit_rows(rng: np.random.Generator, n: int, d: int, sparse: bool, density: float):
    """Gaussian rows scaled to unit norm; with ``sparse``, about ``density`` of the entries
    kept (a row left empty gets a 1 in column 0)."""
    X = rng.normal(size=(n, d))
    if sparse:
        X *= rng.random((n, d)) < density
        X[np.linalg.norm(X, axis=1) == 0, 0] = 1.0
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _separable(n: int, d: int, seed: int, sparse: bool):
    """Rows of norm <= 1 with a wide margin for most points: after an epoch most hinge dual
    variables sit at a bound (0 or 1) and their updates are exactly zero."""
    rng = np.random.default_rng(seed)
    X = _normal_unit_rows(rng, n, d, sparse, density=0.3)
    X *= rng.uniform(0.3, 1.0, size=(n, 1))
    w = rng.normal(size=d)
    y = np.where(X @ w > 0, 1.0, -1.0)
    y[rng.random(n) < 0.1] *= -1.0  # some points on the wrong side: alpha at the upper bound
    return (sp.csr_matrix(X) if sparse else X), y


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_sdca_hinge_with_zero_updates_matches_twin(sparse):
    X, y = _separable(150, 6, seed=4, sparse=sparse)
    n = X.shape[0]
    # 3 epochs and a partial fourth (the permutation of epoch 3 is cut), objectives recorded
    kw = dict(variant="scd", loss="hinge", alpha=0.05, steps=3 * n + 41, record_every=37)
    key = key_from_seed(2)
    ref = scd_train_ref(X, y, key=key, **kw)
    margin = y * ref.dual_coef
    # the skipped branch is exercised: many dual variables at each bound after 3 epochs
    assert np.sum(margin == 0.0) > 10 and np.sum(margin == 1.0) > 5
    runs = [scd_train(X, y, key=key, n_threads=t, **kw) for t in (1, 2)]
    _assert_runs_equal(runs[0], ref)
    _assert_bit_identical(runs[0], runs[1])


@pytest.mark.parametrize("loss", ["squared", "log_loss"])
def test_sdca_other_losses_across_epochs_match_twin(loss):
    X, y = _separable(90, 5, seed=6, sparse=False)
    t = X @ np.arange(1.0, 6.0)
    target = t if loss == "squared" else y
    kw = dict(variant="scd", loss=loss, alpha=0.02, epochs=3, record_every=50, newton_steps=3,
              batch_size=10)  # fmt: skip
    key = key_from_seed(9)
    _assert_runs_equal(scd_train(X, target, key=key, **kw), scd_train_ref(X, target, key=key, **kw))


# ---- dual step: fixed-point sum of small terms through int32 ---------------------------------


def _mixed_norms(n: int, d: int, seed: int, sparse: bool):
    """Unit-ball rows (the int32 path) and a fifth of the rows with norm 3 to 40 (terms beyond
    2^31 units once an update is clipped to C: the general path)."""
    rng = np.random.default_rng(seed)
    X = _normal_unit_rows(rng, n, d, sparse, density=0.5)
    big = rng.random(n) < 0.2
    X[big] *= rng.uniform(3.0, 40.0, size=(int(big.sum()), 1))
    X[~big] *= rng.uniform(0.2, 1.0, size=(int((~big).sum()), 1))
    y = np.where(X @ rng.normal(size=d) > 0, 1.0, -1.0)
    return (sp.csr_matrix(X) if sparse else X), y


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("noise_std", [0.0, 0.4])
@pytest.mark.parametrize("loss", ["squared", "hinge", "log_loss"])
def test_dual_fixed_point_paths_match_twin(sparse, noise_std, loss):
    X, y = _mixed_norms(200, 7, seed=8, sparse=sparse)
    target = (X @ np.linspace(-1.0, 1.0, 7)) if loss == "squared" else y
    kw = dict(variant="dual", loss=loss, alpha=0.01, batch_size=40, epochs=2, clip=0.5,
              noise_std=noise_std, record_every=4)  # fmt: skip
    key = key_from_seed(5)
    ref = scd_train_ref(X, target, key=key, **kw)
    runs = [scd_train(X, target, key=key, n_threads=t, **kw) for t in (1, 2, 4)]
    _assert_runs_equal(runs[0], ref)
    for other in runs[1:]:
        _assert_bit_identical(runs[0], other)


def test_dual_fixed_point_sum_large_batch_bit_identical_across_threads():
    """Batches of ~1500 rows, enough for the fixed-point sum to run on several threads."""
    X, y = _mixed_norms(3000, 30, seed=1, sparse=False)
    kw = dict(variant="dual", loss="hinge", alpha=1e-3, batch_size=1500, steps=3, clip=1.0,
              noise_std=0.5, hidden_alpha=True, alpha_jitter=0.2)  # fmt: skip
    key = key_from_seed(3)
    runs = [scd_train(X, y, key=key, n_threads=t, **kw) for t in (1, 2, 4)]
    for other in runs[1:]:
        _assert_bit_identical(runs[0], other)
    _assert_runs_equal(runs[0], scd_train_ref(X, y, key=key, **kw))


# ---- dual step with lattice noise: the next batch prefetched, v's noise drawn ahead ----------
# scd_train samples batch t + 1 at step t (its rows requested into cache during step t) and
# draws v's discrete Gaussian noise for up to 64 steps at once (at most 8192 draws, at least
# one step): the released bits are those of one step at a time, the distributed pieces'
# (scd_partial_step_dense + scd_apply_units, one call per step). Step counts on both sides of
# a block (64 steps of 7 columns; 1 step of 9000 columns) and empty batches (tiny rate).
AHEAD_CASES = [(300, 7, 5, 0.0, 130), (300, 7, 5, 0.0, 64), (40, 9000, 3, 0.0, 5),
               (300, 7, 1, 0.001, 140)]  # fmt: skip


def _unit_rows(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True) * rng.uniform(1.0, 1.5, size=(n, 1))
    return X, np.where(X @ rng.normal(size=d) > 0, 1.0, -1.0)


@pytest.mark.parametrize("n, d, batch_size, rate, steps", AHEAD_CASES)
@pytest.mark.parametrize("hidden", [True, False], ids=["hidden", "lazy"])
def test_dual_lattice_noise_ahead_equals_step_by_step_release(
    n, d, batch_size, rate, steps, hidden
):
    X, y = _unit_rows(n, d, seed=4)
    kw = dict(variant="dual", loss="log_loss", alpha=1e-3, batch_size=batch_size, rate=rate,
              steps=steps, clip=0.05, noise_std=0.04, hidden_alpha=hidden,
              alpha_jitter=0.01)  # fmt: skip
    key = key_from_seed(21)
    run = scd_train(X, y, key=key, n_threads=1, **kw)
    args, extra = prepare_scd_spec(n, d, key=key, **{**SCD_DEFAULTS, **kw}).core_args(1)
    v, alpha, last = np.zeros(d), np.zeros(n), np.zeros(n, dtype=np.int64)
    for t in range(steps):
        units, bad = _core.scd_partial_step_dense(X, y, alpha, last, v, t, 0, n, *args, **extra)
        assert bad == -1
        v = _core.scd_apply_units(v, units, t, *args, **extra)
    _core.scd_finish_alpha(alpha, last, steps, 0, n, *args, **extra)
    assert run.n_steps == steps
    np.testing.assert_array_equal(run.v, v)
    np.testing.assert_array_equal(run.dual_coef, alpha)


@pytest.mark.parametrize("kind", ["dense", "view", "csr"])
def test_dual_lattice_noise_ahead_across_threads_and_twin(kind):
    """Noise blocks of 64 steps x 20 columns (1280 draws, shared by threads when n_threads > 1;
    70 steps: a second, partial block), CSR rows (their extents prefetched a step ahead) and a
    RowView."""
    X, y = _unit_rows(200, 20, seed=6)
    if kind == "csr":
        X = sp.csr_matrix(X * (np.random.default_rng(1).random(X.shape) < 0.4))
    elif kind == "view":
        X = RowView(X * 0.8, np.linspace(0.5, 1.0, 200), 0.5)
    kw = dict(variant="dual", loss="hinge", alpha=1e-3, batch_size=20, steps=70, clip=0.1,
              noise_std=0.08, hidden_alpha=True, alpha_jitter=0.02)  # fmt: skip
    key = key_from_seed(8)
    runs = [scd_train(X, y, key=key, n_threads=t, **kw) for t in (1, 2, 4)]
    for other in runs[1:]:
        _assert_bit_identical(runs[0], other)
    Xr = X.materialize() if kind == "view" else X
    _assert_runs_equal(runs[0], scd_train_ref(Xr, y, key=key, **kw))


# ---- the core's own checks of y: one pass, the messages built only on failure -----------------


def _core_call(y: np.ndarray, loss: str) -> None:
    X, _ = _unit_rows(6, 3, seed=2)
    kw = dict(SCD_DEFAULTS, loss=loss, batch_size=2, key=key_from_seed(1))
    args, extra = prepare_scd_spec(6, 3, **kw).core_args(1)
    _core.scd_train_dense(X, y, *args, **extra)


@pytest.mark.parametrize("loss", ["hinge", "log_loss"])
def test_core_rejects_bad_labels_and_nonfinite_targets(loss):
    y = np.array([1.0, -1.0, 1.0, 1.0, -1.0, -1.0])
    _core_call(y, loss)
    bad = y.copy()
    bad[3] = 0.5
    with pytest.raises(ValueError, match="labels must be -1 or \\+1 for this loss"):
        _core_call(bad, loss)
    _core_call(bad, "squared")  # any finite target for ridge
    bad[4] = np.nan  # a non-finite entry is reported first, as before, wherever it lies
    with pytest.raises(ValueError, match="y contains NaN or infinite values") as info:
        _core_call(bad, loss)
    assert "nan" not in str(info.value)  # the private value is never quoted
    with pytest.raises(ValueError, match="y contains NaN or infinite values") as info:
        _core_call(np.where(np.arange(6) == 5, np.inf, y), "squared")
    assert "inf " not in str(info.value) and not str(info.value).endswith("inf")


# ---- a CSR X checked once: scd_train calls the core with check_structure=False ----------------


def test_csr_core_call_without_its_own_check_is_identical_and_python_still_checks():
    X, y = _unit_rows(60, 9, seed=3)
    X = sp.csr_matrix(X * (np.random.default_rng(2).random(X.shape) < 0.5))
    X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    kw = dict(SCD_DEFAULTS, loss="hinge", batch_size=10, epochs=2, clip=0.1, noise_std=0.05,
              hidden_alpha=True, alpha_jitter=0.01, key=key_from_seed(4))  # fmt: skip
    args, extra = prepare_scd_spec(60, 9, **kw).core_args(1)
    arrays = (X.data, X.indices, X.indptr, 9, y)
    checked = _core.scd_train_csr(*arrays, *args, **extra)
    trusted = _core.scd_train_csr(*arrays, *args, **extra, check_structure=False)
    for a, b in zip(checked, trusted):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    run = scd_train(X, y, n_threads=1, **kw)
    np.testing.assert_array_equal(run.v, np.asarray(checked[1]))
    # the Python layer checks what the core then does not: values, then indices
    bad = X.copy()
    bad.data[2] = np.nan
    with pytest.raises(ValueError, match="X contains NaN or infinite values"):
        scd_train(bad, y, **kw)
    bad = X.copy()
    bad.indices[3] = 9 + 5
    with pytest.raises(ValueError, match="index"):
        scd_train(bad, y, **kw)
    with pytest.raises(ValueError, match="CSR column index out of range"):  # the core's default
        _core.scd_train_csr(bad.data, bad.indices, bad.indptr, 9, y, *args, **extra)
