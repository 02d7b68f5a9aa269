"""Gaussian DP-SGD and dual DP-SCD on Dask (privlearn.distributed.linear): the distributed fit
equals the single-machine fit bit for bit for any chunking and worker count, and the estimators
report the same ``privacy_``."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from privlearn.distributed.linear import scd_train as dist_scd_train  # noqa: E402
from privlearn.distributed.linear import sgd_train as dist_sgd_train  # noqa: E402
from privlearn.distributed.linear import (  # noqa: E402
    softmax_sgd_train as dist_softmax_train,
)
from privlearn.exceptions import PrivacyLeakWarning, UndeclaredBoundWarning  # noqa: E402
from privlearn.linear import (  # noqa: E402
    DPSCDClassifier,
    DPSCDRegressor,
    DPSGDClassifier,
    DPSGDRegressor,
    scd_train,
    sgd_train,
)
from privlearn.linear.softmax import softmax_sgd_train  # noqa: E402
from privlearn.random import key_from_seed  # noqa: E402

LABELS_READ = "read the label set from the private labels y"


def _warns_labels_read():
    """The fits below read the label set from y on purpose (the distributed label scan):
    each says so with a PrivacyLeakWarning."""
    return pytest.warns(PrivacyLeakWarning, match=LABELS_READ)


SGD_KW = dict(
    loss="log_loss",
    mechanism="gaussian",
    sampling="poisson",
    learning_rate="constant",
    batch_size=20,
    epochs=2,
    clip=0.5,
    sigma=1.0,
    eta0=0.5,
)
SOFTMAX_KW = dict(
    sampling="poisson",
    learning_rate="constant",
    batch_size=20,
    epochs=2,
    clip=0.5,
    sigma=1.0,
    eta0=0.5,
)
SCD_KW = dict(
    loss="log_loss",
    variant="dual",
    sampling="poisson",
    batch_size=20,
    epochs=2,
    clip=0.1,
    noise_std=0.1,
    alpha=1e-2,
)


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            processes=False, n_workers=2, threads_per_worker=1, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def _data(n=200, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _chunked(X, y, chunks):
    return da.from_array(X, chunks=(chunks, X.shape[1])), da.from_array(y, chunks=(chunks,))


CHUNKINGS = {
    "one-chunk": lambda n: (n,),
    "one-row-chunks": lambda n: (1,) * n,
    "uneven": lambda n: (1, 6, n - 50, 43),
}


@pytest.mark.parametrize("chunking", sorted(CHUNKINGS))
def test_sgd_equals_single_machine_bit_for_bit(client, chunking):
    n = 60 if chunking == "one-row-chunks" else 200
    X, y = _data(n=n)
    ref = sgd_train(X, y, key=key_from_seed(1), **SGD_KW)
    Xd, yd = _chunked(X, y, CHUNKINGS[chunking](n))
    run = dist_sgd_train(Xd, yd, key=key_from_seed(1), **SGD_KW)
    assert run.n_steps == ref.n_steps
    np.testing.assert_array_equal(run.coef, ref.coef)
    assert not np.array_equal(run.coef, sgd_train(X, y, key=key_from_seed(2), **SGD_KW).coef)


@pytest.mark.parametrize("chunking", sorted(CHUNKINGS))
def test_scd_equals_single_machine_bit_for_bit(client, chunking):
    n = 60 if chunking == "one-row-chunks" else 200
    X, y = _data(n=n, seed=1)
    ref = scd_train(X, y, key=key_from_seed(3), **SCD_KW)
    Xd, yd = _chunked(X, y, CHUNKINGS[chunking](n))
    run = dist_scd_train(Xd, yd, key=key_from_seed(3), return_dual=True, **SCD_KW)
    np.testing.assert_array_equal(run.v, ref.v)
    np.testing.assert_array_equal(run.coef, ref.coef)
    np.testing.assert_array_equal(run.dual_coef, ref.dual_coef)  # per-row noise by row index


@pytest.mark.parametrize("chunking", sorted(CHUNKINGS))
def test_softmax_equals_single_machine_bit_for_bit(client, chunking):
    n = 60 if chunking == "one-row-chunks" else 200
    X, _ = _data(n=n, seed=5)
    y = np.random.default_rng(5).integers(0, 3, size=n)
    ref = softmax_sgd_train(X, y, key=key_from_seed(7), n_classes=3, **SOFTMAX_KW)
    Xd, yd = _chunked(X, y, CHUNKINGS[chunking](n))
    run = dist_softmax_train(Xd, yd, key=key_from_seed(7), n_classes=3, **SOFTMAX_KW)
    assert run.coef.shape == (5, 3)
    np.testing.assert_array_equal(run.coef, ref.coef)


@given(cuts=st.lists(st.integers(1, 299), min_size=1, max_size=5, unique=True))
@settings(max_examples=8, deadline=None)
def test_any_chunk_boundaries_give_the_same_fit(client, cuts):
    X, y = _data(n=300, seed=2)
    bounds = [0, *sorted(cuts), 300]
    chunks = tuple(b - a for a, b in zip(bounds[:-1], bounds[1:]))
    Xd, yd = _chunked(X, y, chunks)
    ref = sgd_train(X, y, key=key_from_seed(4), **SGD_KW)
    np.testing.assert_array_equal(
        dist_sgd_train(Xd, yd, key=key_from_seed(4), **SGD_KW).coef, ref.coef
    )
    ref_scd = scd_train(X, y, key=key_from_seed(5), **SCD_KW)
    np.testing.assert_array_equal(
        dist_scd_train(Xd, yd, key=key_from_seed(5), **SCD_KW).v, ref_scd.v
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda: DPSGDClassifier(seed=3, epochs=2),
        lambda: DPSGDClassifier(seed=3, epochs=2, n_samples=300),
        lambda: DPSCDClassifier(seed=3, epochs=2),
        lambda: DPSGDRegressor(seed=3, epochs=2),
        lambda: DPSCDRegressor(seed=3, epochs=2),
    ],
    ids=["sgd-clf", "sgd-clf-public-n", "scd-clf", "sgd-reg", "scd-reg"],
)
def test_estimators_fit_dask_arrays_identically(client, make):
    rng = np.random.default_rng(7)
    X = 0.4 * rng.normal(size=(300, 4))
    w = rng.normal(size=4)
    regression = "reg" in str(type(make())).lower()
    y = X @ w + 0.1 * rng.normal(size=300) if regression else np.where(X @ w > 0, "yes", "no")

    def warned():  # the undeclared public input is read (privately or not) on the workers too
        if regression:
            return pytest.warns(UndeclaredBoundWarning, match="no target_bounds")
        return _warns_labels_read()

    with warned():
        single = make().fit(X, y)
    for chunks in [(300,), (1, 2, 297), (100, 100, 100)]:
        Xd = da.from_array(X, chunks=(chunks, 4))
        yd = da.from_array(y, chunks=(chunks,))
        with warned():
            dist = make().fit(Xd, yd)
        np.testing.assert_array_equal(dist.coef_, single.coef_)
        np.testing.assert_array_equal(dist.intercept_, single.intercept_)
        assert dist.privacy_ == single.privacy_
        assert dist.n_steps_ == single.n_steps_
        np.testing.assert_array_equal(dist.predict(X), single.predict(X))
        if not regression:
            np.testing.assert_array_equal(dist.classes_, single.classes_)


def test_multinomial_dpsgd_on_dask(client):
    """K > 2 classes: the softmax model (one Gaussian budget), fitted on the workers."""
    rng = np.random.default_rng(9)
    X = 0.4 * rng.normal(size=(240, 3))
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, size=240)]
    with _warns_labels_read():
        single = DPSGDClassifier(seed=2, epochs=2).fit(X, y)
    with _warns_labels_read():
        dist = DPSGDClassifier(seed=2, epochs=2).fit(
            da.from_array(X, chunks=((7, 233), 3)), da.from_array(y, chunks=((7, 233),))
        )
    assert dist.coef_.shape == (3, 3)
    np.testing.assert_array_equal(dist.coef_, single.coef_)
    np.testing.assert_array_equal(dist.intercept_, single.intercept_)
    assert dist.privacy_ == single.privacy_
    np.testing.assert_array_equal(dist.predict_proba(X), single.predict_proba(X))


def test_one_vs_rest_dpscd_on_dask(client):
    rng = np.random.default_rng(8)
    X = 0.4 * rng.normal(size=(240, 3))
    y = rng.integers(0, 3, size=240)
    with _warns_labels_read():
        single = DPSCDClassifier(seed=1, epochs=1).fit(X, y)
    with _warns_labels_read():
        dist = DPSCDClassifier(seed=1, epochs=1).fit(
            da.from_array(X, chunks=((50, 190), 3)), da.from_array(y, chunks=((50, 190),))
        )
    np.testing.assert_array_equal(dist.coef_, single.coef_)
    assert dist.privacy_ == single.privacy_


def test_row_norm_errors_name_the_row_on_dask(client):
    X = np.full((50, 2), 0.1)
    X[37] = [3.0, 4.0]
    y = np.where(np.arange(50) % 2 == 0, 1, 0)
    Xd, yd = da.from_array(X, chunks=(10, 2)), da.from_array(y, chunks=10)
    with pytest.raises(ValueError, match=r"row 37 of X has L2 norm > 1 \(the first such row"):
        DPSCDClassifier(seed=1, clip_rows=False, fit_intercept=False, classes=[0, 1]).fit(Xd, yd)
    with pytest.raises(ValueError, match=r"row 37 of X has L2 norm > 1"):
        DPSCDClassifier(seed=1, clip_rows=False, fit_intercept=False, classes=[0, 1]).fit(X, y)
    # clip_rows projects the row on every chunk as on one machine
    a = DPSCDClassifier(seed=1, epochs=1, classes=[0, 1]).fit(X, y)
    b = DPSCDClassifier(seed=1, epochs=1, classes=[0, 1]).fit(Xd, yd)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_bad_dask_input_is_refused_clearly(client):
    X, y = _data(n=40)
    Xd, yd = _chunked(X, y, (20, 20))
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        dist_sgd_train(Xd[Xd[:, 0] > -10], yd, key=key_from_seed(1), **SGD_KW)
    with pytest.raises(ValueError, match="y has 39 entries but X has 40 rows"):
        dist_sgd_train(Xd, yd[:39], key=key_from_seed(1), **SGD_KW)
    with pytest.raises(ValueError, match="sampling 'poisson' and clip > 0"):
        dist_sgd_train(Xd, yd, key=key_from_seed(1), **{**SGD_KW, "sampling": "fixed"})
    with pytest.raises(ValueError, match="variant 'dual'"):
        dist_scd_train(Xd, yd, key=key_from_seed(1), **{**SCD_KW, "variant": "seq"})
    Xbad = X.copy()
    Xbad[23, 1] = np.nan
    with pytest.raises(ValueError, match=r"NaN or infinite values \(row 23\)"):
        dist_sgd_train(da.from_array(Xbad, chunks=(20, 5)), yd, key=key_from_seed(1), **SGD_KW)
    ybad = y.copy()
    ybad[5] = 0.5
    with pytest.raises(ValueError, match=r"-1 or \+1.*row 5"):
        dist_scd_train(Xd, da.from_array(ybad, chunks=20), key=key_from_seed(1), **SCD_KW)
    with pytest.raises(ValueError, match="diagnostics"):
        DPSGDClassifier(diagnostics=True, classes=[-1, 1]).fit(Xd, yd)
    with pytest.raises(ValueError, match="backend"):
        DPSGDClassifier(backend="reference", classes=[-1, 1]).fit(Xd, yd)
    with pytest.raises(ValueError, match="disjoint|poisson"):
        DPSGDClassifier(mechanism="l2-laplace", batch_size=10, classes=[-1, 1]).fit(Xd, yd)
    with pytest.raises(ValueError, match=r"integer class labels in \[0, n_classes = 3\) \(row 7\)"):
        codes = np.arange(40) % 3
        dist_softmax_train(
            Xd,
            da.from_array(np.where(np.arange(40) == 7, 3, codes), chunks=20),
            key=key_from_seed(1),
            n_classes=3,
            **SOFTMAX_KW,
        )


def test_process_cluster_smoke():
    """Workers in separate processes (the data and the actors live there) give the same fit."""
    X, y = _data(n=120, seed=4)
    ref = sgd_train(X, y, key=key_from_seed(6), **SGD_KW)
    with (
        distributed.LocalCluster(
            processes=True, n_workers=2, threads_per_worker=1, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        Xd, yd = _chunked(X, y, (50, 70))
        run = dist_sgd_train(Xd, yd, key=key_from_seed(6), client=c, **SGD_KW)
    np.testing.assert_array_equal(run.coef, ref.coef)


# ---- sparse chunks (issue 22) ----
def _sparse_chunked(X, chunks):
    sp = pytest.importorskip("scipy.sparse")
    return da.from_array(X, chunks=(chunks, X.shape[1])).map_blocks(sp.csr_matrix)


@pytest.mark.parametrize(
    "make",
    [
        lambda ledger: DPSGDClassifier(seed=3, epochs=1, ledger=ledger),
        lambda ledger: DPSCDClassifier(seed=3, epochs=1, ledger=ledger),
        lambda ledger: DPSGDRegressor(seed=3, epochs=1, ledger=ledger),
        lambda ledger: DPSCDRegressor(seed=3, epochs=1, ledger=ledger),
    ],
    ids=["sgd-clf", "scd-clf", "sgd-reg", "scd-reg"],
)
def test_sparse_chunks_are_refused_before_any_charge(client, make):
    """A dask array of scipy.sparse chunks used to fail on the workers with numpy's "setting an
    array element with a sequence."; it is refused from its meta, naming the two fixes, before
    the ledger is charged."""
    from privlearn.accounting import PrivacyLedger

    X, y = _data(n=60)
    ledger = PrivacyLedger(10.0, 1e-3)
    Xs = _sparse_chunked(X, (30, 30))
    with pytest.raises(TypeError, match=r"sparse chunks \(scipy\.sparse\.csr_matrix\)") as err:
        make(ledger).fit(Xs, da.from_array(y, chunks=30))
    assert "toarray()" in str(err.value) and "csr_matrix" in str(err.value)
    assert ledger.spent.epsilon == 0.0 and ledger.spent.delta == 0.0


def test_sparse_chunks_refused_by_the_trainers(client):
    sp = pytest.importorskip("scipy.sparse")
    X, y = _data(n=40)
    Xs = da.from_array(sp.csr_matrix(X), chunks=(20, 5))  # from a CSR matrix: sparse meta too
    for train, kw in [(dist_sgd_train, SGD_KW), (dist_scd_train, SCD_KW)]:
        with pytest.raises(TypeError, match="sparse chunks"):
            train(Xs, da.from_array(y, chunks=20), key=key_from_seed(1), **kw)
    ys = da.from_array(y[:, None], chunks=(20, 1)).map_blocks(sp.csr_matrix)
    with pytest.raises(TypeError, match="y is a dask array with sparse chunks"):
        dist_sgd_train(_chunked(X, y, 20)[0], ys, key=key_from_seed(1), **SGD_KW)
    # a meta that hides the sparse chunks: the workers refuse them with the same message
    lying = _chunked(X, y, 20)[0].map_blocks(sp.csr_matrix, meta=np.empty((0, 0)))
    with pytest.raises(TypeError, match="sparse chunks"):
        dist_sgd_train(lying, da.from_array(y, chunks=20), key=key_from_seed(1), **SGD_KW)


def test_densified_sparse_chunks_fit_as_in_memory(client):
    """The fix the refusal names (densify the chunks) gives the in-memory fit bit for bit."""
    X, y = _data(n=60, seed=3)
    Xs = _sparse_chunked(X, (25, 35))
    dense = Xs.map_blocks(lambda b: b.toarray(), dtype=Xs.dtype)
    kw = dict(seed=5, epochs=1, classes=[-1.0, 1.0])
    single = DPSGDClassifier(**kw).fit(X, y)
    dist = DPSGDClassifier(**kw).fit(dense, da.from_array(y, chunks=(25, 35)))
    np.testing.assert_array_equal(dist.coef_, single.coef_)


# ---- progress (issue 22) ----
@pytest.mark.parametrize(
    "make",
    [
        lambda v: DPSGDClassifier(seed=3, epochs=2, classes=[-1.0, 1.0], verbose=v),
        lambda v: DPSCDRegressor(seed=3, epochs=2, target_bounds=(-1.0, 1.0), verbose=v),
    ],
    ids=["sgd-clf", "scd-reg"],
)
def test_dask_fit_progress_bar(client, capsys, monkeypatch, make):
    """A Dask fit shows a tqdm bar of its steps on stderr (verbose=1 on a terminal, verbose=2
    always), none with verbose=0; the fit is bit-identical either way."""
    X, y = _data(n=120, seed=6)
    Xd, yd = _chunked(X, y, (50, 70))
    capsys.readouterr()
    quiet = make(0).fit(Xd, yd)
    out = capsys.readouterr()
    assert out.err == "" and out.out == ""
    # verbose=1: tqdm's rule, a bar only when stderr is a terminal (the capture is not one)
    make(1).fit(Xd, yd)
    assert "step" not in capsys.readouterr().err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    shown = make(1).fit(Xd, yd)
    err = capsys.readouterr().err
    assert "on dask" in err and f"/{shown.n_steps_} [" in err and "step" in err, err[-300:]
    monkeypatch.undo()
    forced = make(2).fit(Xd, yd)
    assert f"/{forced.n_steps_} [" in capsys.readouterr().err
    for fit in (shown, forced):
        np.testing.assert_array_equal(fit.coef_, quiet.coef_)
        np.testing.assert_array_equal(fit.intercept_, quiet.intercept_)
        assert fit.privacy_ == quiet.privacy_


def test_progress_of_the_trainers_and_bad_verbose(client, capsys):
    X, y = _data(n=80, seed=7)
    Xd, yd = _chunked(X, y, 40)
    quiet = dist_scd_train(Xd, yd, key=key_from_seed(2), verbose=0, **SCD_KW)
    assert capsys.readouterr().err == ""
    loud = dist_scd_train(Xd, yd, key=key_from_seed(2), verbose=2, **SCD_KW)
    assert "DP-SCD on dask" in capsys.readouterr().err
    np.testing.assert_array_equal(loud.v, quiet.v)
    codes = np.arange(80) % 3
    dist_softmax_train(
        Xd, da.from_array(codes, chunks=40), key=key_from_seed(2), n_classes=3, verbose=2,
        **SOFTMAX_KW,
    )  # fmt: skip
    assert "multinomial" in capsys.readouterr().err
    with pytest.raises(ValueError, match="verbose must lie in"):
        DPSGDClassifier(verbose=-1, classes=[-1.0, 1.0]).fit(Xd, yd)
    with pytest.raises(TypeError, match="verbose must be an integer"):
        DPSGDClassifier(verbose="yes", classes=[-1.0, 1.0]).fit(X, y)
