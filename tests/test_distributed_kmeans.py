"""DPKMeans (max cover and the LSH coreset) on row-chunked dask arrays: equal to the
single-machine fit bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
pytest.importorskip("hypothesis")
from conftest import only_warnings  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from privlearn.cluster import DPKMeans  # noqa: E402
from privlearn.exceptions import PrivacyLeakWarning  # noqa: E402


def _said(kw):
    """What a fit here says: radius=None reads the data radius from the private rows (a
    PrivacyLeakWarning, on one machine and on dask alike); anything else, nothing."""
    if "radius" in kw and kw["radius"] is None:
        return pytest.warns(PrivacyLeakWarning, match="radius=None")
    return only_warnings()


N = 90


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            processes=False, n_workers=2, threads_per_worker=1, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def _data(n: int = N, d: int = 3, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-0.6, 0.6, size=(3, d))
    X = centres[rng.integers(0, 3, n)] + rng.normal(0, 0.08, size=(n, d))
    return X / (1.01 * np.linalg.norm(X, axis=1).max())


def _fit_both(X, chunks, **kw):
    kw = {"n_clusters": 3, "seed": 11, "radius": 1.0, "method": "maxcover", **kw}
    with _said(kw):
        a = DPKMeans(**kw).fit(X)
    with _said(kw):
        b = DPKMeans(**kw).fit(da.from_array(X, chunks=(tuple(chunks), X.shape[1])))
    return a, b


def _assert_same(a: DPKMeans, b: DPKMeans) -> None:
    assert a.cluster_centers_.dtype == b.cluster_centers_.dtype
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.privacy_ == b.privacy_
    assert a.n_candidates_ == b.n_candidates_
    assert (a.radii_, a.picks_, a.radius_, a.proj_dim_) == (
        b.radii_,
        b.picks_,
        b.radius_,
        b.proj_dim_,
    )
    assert a.dataset_size_ == b.dataset_size_


@pytest.mark.parametrize(
    "kw",
    [
        {"epsilon": 2.0},  # noisy count plans the schedule
        {"epsilon": 1.0, "n_samples": N, "lloyd_steps": 2},  # declared public size
        {"epsilon": np.inf},  # the non-private greedy: every pick covers points
        {"epsilon": 4.0, "radius": None},  # radius from the data (max of chunk maxima)
    ],
)
def test_uneven_chunks_equal_single_machine(client, kw):
    a, b = _fit_both(_data(), [7, 50, 1, 32], **kw)
    _assert_same(a, b)


def test_one_row_chunks(client):
    X = _data(n=16)
    a, b = _fit_both(X, [1] * 16, epsilon=np.inf, n_clusters=2)
    _assert_same(a, b)


def test_high_dimension_clip_and_reference_backend(client):
    X = _data(n=60, d=20) * 1.3  # some rows outside the unit ball: clipped
    a, b = _fit_both(X, [25, 35], epsilon=3.0, clip=True, backend="reference", proj_dim=3)
    _assert_same(a, b)


@settings(max_examples=8, deadline=None)
@given(cuts=st.lists(st.integers(1, N - 1), min_size=0, max_size=5))
def test_hypothesis_chunks(client, cuts):
    bounds = sorted({0, N, *cuts})
    a, b = _fit_both(_data(), [y - x for x, y in zip(bounds[:-1], bounds[1:])], epsilon=2.0)
    _assert_same(a, b)


# ---- method="lsh" (the default) on dask input (issue 21) ----
def _fit_both_lsh(X, chunks, **kw):
    with _said(kw):
        a = DPKMeans(**kw).fit(X)
    with _said(kw):
        b = DPKMeans(**kw).fit(da.from_array(X, chunks=(tuple(chunks), X.shape[1])))
    return a, b


def _assert_same_lsh(a: DPKMeans, b: DPKMeans) -> None:
    assert a.cluster_centers_.dtype == b.cluster_centers_.dtype
    assert np.array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.privacy_ == b.privacy_
    assert (a.n_candidates_, a.tree_levels_, a.radius_) == (
        b.n_candidates_,
        b.tree_levels_,
        b.radius_,
    )
    assert np.array_equal(a.scale_centre_, b.scale_centre_)
    assert a.scale_radius_ == b.scale_radius_


@pytest.mark.parametrize(
    "kw",
    [
        {"epsilon": 2.0},
        {"epsilon": 1.0, "lloyd_steps": 2},
        {"epsilon": np.inf},  # not private: exact cell means and Lloyd rounds
        {"epsilon": 4.0, "radius": None},  # radius from the data (max of chunk maxima)
        {"epsilon": 3.0, "clip": True},  # rows outside the ball clipped on the workers
    ],
)
def test_lsh_uneven_chunks_equal_single_machine(client, kw):
    X = _data(n=300, d=5, seed=3) * (1.3 if kw.get("clip") else 1.0)
    kw = {"method": "lsh", "n_clusters": 3, "seed": 7, "radius": 1.0, **kw}
    a, b = _fit_both_lsh(X, [7, 150, 1, 0, 142], **kw)
    assert a.method == "lsh"
    _assert_same_lsh(a, b)


def test_lsh_is_the_default_on_dask(client):
    # 600 rows: the tree releases several cells for every seed tried (3-7 over seeds 0-11;
    # at 200 rows some seeds release a single cell, which would not test a real tree)
    X = _data(n=600, d=4, seed=5)
    a, b = _fit_both_lsh(X, [180, 181, 239], n_clusters=4, seed=2, radius=1.0)
    assert a.tree_levels_ is not None and a.radii_ is None  # the LSH coreset, not max cover
    assert a.n_candidates_ > 1  # a real tree: several cells released
    _assert_same_lsh(a, b)
    c, d = _fit_both_lsh(X, [1] * 40 + [560], n_clusters=4, seed=2, radius=1.0)  # 1-row chunks
    _assert_same_lsh(a, d)
    _assert_same_lsh(c, d)


@settings(max_examples=5, deadline=None)
@given(cuts=st.lists(st.integers(1, N - 1), min_size=0, max_size=5))
def test_lsh_hypothesis_chunks(client, cuts):
    bounds = sorted({0, N, *cuts})
    chunks = [y - x for x, y in zip(bounds[:-1], bounds[1:])]
    a, b = _fit_both_lsh(_data(), chunks, n_clusters=3, seed=4, radius=1.0, epsilon=2.0)
    _assert_same_lsh(a, b)


def test_lsh_seed_changes_the_fit(client):
    X = _data(n=200, d=4, seed=5)
    a, b = _fit_both_lsh(X, [100, 100], n_clusters=3, seed=1, radius=1.0, epsilon=1.0)
    c, d = _fit_both_lsh(X, [100, 100], n_clusters=3, seed=2, radius=1.0, epsilon=1.0)
    _assert_same_lsh(a, b)
    _assert_same_lsh(c, d)
    assert not np.array_equal(b.cluster_centers_, d.cluster_centers_)  # the noise is seeded


def test_bad_input(client):
    X = _data()
    dX = da.from_array(X, chunks=(30, 3))
    with pytest.raises(NotImplementedError, match="balcan"):
        DPKMeans(method="balcan", radius=1.0, seed=0).fit(dX)
    with pytest.raises(ValueError, match="diagnostics"):
        DPKMeans(radius=1.0, diagnostics=True, seed=0).fit(dX)
    unknown = dX[dX[:, 0] > -10]
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        DPKMeans(radius=1.0, seed=0).fit(unknown)
    outside = r"rows outside the public ball B\(0, radius=1.0\).*clip=True.*larger public radius"
    with pytest.raises(ValueError, match=outside):
        DPKMeans(radius=1.0, seed=0).fit(
            da.from_array(np.where(np.arange(N)[:, None] == 40, 2.0, X), chunks=(30, 3))
        )
    bad = X.copy()
    bad[61, 1] = np.nan
    with pytest.raises(ValueError, match="must be finite") as info:
        DPKMeans(radius=1.0, seed=0).fit(da.from_array(bad, chunks=(30, 3)))
    assert "61" not in str(info.value)  # no row of the private data is quoted
    with pytest.raises(TypeError, match="real numbers"):
        DPKMeans(radius=1.0, seed=0).fit(da.from_array(X.astype(str), chunks=(30, 3)))


def test_caller_array_untouched(client):
    X = _data() * 1.5
    before = X.copy()
    with only_warnings():
        DPKMeans(n_clusters=3, radius=1.0, clip=True, seed=0).fit(da.from_array(X, chunks=(40, 3)))
        DPKMeans(n_clusters=3, radius=1.0, clip=True, seed=0, method="maxcover").fit(
            da.from_array(X, chunks=(40, 3))
        )
    np.testing.assert_array_equal(X, before)


def test_needs_a_distributed_client(monkeypatch):
    def no_client():
        raise ValueError("No clients found")

    monkeypatch.setattr(distributed, "get_client", no_client)
    with pytest.raises(ValueError, match="distributed Client"):
        DPKMeans(radius=1.0, seed=0).fit(da.from_array(_data(), chunks=(30, 3)))


# ---- sparse chunks (issue 22) ----
@pytest.mark.parametrize("method", ["lsh", "maxcover"])
def test_sparse_chunks_are_refused_before_any_charge(client, method):
    """Sparse chunks used to fail on the workers with numpy's "setting an array element with a
    sequence."; they are refused from the array's meta (nothing computed), naming the fixes,
    before a shared ledger is charged."""
    sp = pytest.importorskip("scipy.sparse")
    from privlearn.accounting import PrivacyLedger

    X = _data()
    ledger = PrivacyLedger(10.0, 1e-3)
    for Xs in [
        da.from_array(X, chunks=(30, 3)).map_blocks(sp.csr_matrix),
        da.from_array(sp.csr_matrix(X), chunks=(30, 3)),
    ]:
        with pytest.raises(TypeError, match=r"sparse chunks \(scipy\.sparse\.csr_matrix\)"):
            DPKMeans(radius=1.0, seed=0, method=method, ledger=ledger).fit(Xs)
    assert ledger.spent.epsilon == 0.0
    # a meta that hides them: the first pass on the workers names them the same way
    lying = da.from_array(X, chunks=(30, 3)).map_blocks(sp.csr_matrix, meta=np.empty((0, 0)))
    with pytest.raises(TypeError, match="sparse chunks"):
        DPKMeans(radius=1.0, seed=0, method=method).fit(lying)
    # the named fix (densified chunks) fits as in memory
    dense = da.from_array(X, chunks=(30, 3)).map_blocks(sp.csr_matrix)
    dense = dense.map_blocks(lambda b: b.toarray(), dtype=dense.dtype)
    with only_warnings():
        a = DPKMeans(n_clusters=3, radius=1.0, seed=4, method=method).fit(X)
        b = DPKMeans(n_clusters=3, radius=1.0, seed=4, method=method).fit(dense)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)


# ---- progress (issue 22) ----
@pytest.mark.parametrize("method", ["lsh", "maxcover"])
def test_dask_fit_progress_bar(client, capsys, monkeypatch, method):
    """A Dask fit shows a tqdm bar of its rounds on the workers (verbose=1 on a terminal,
    verbose=2 always), none with verbose=0; the centres and statement are bit-identical."""
    import sys

    dX = da.from_array(_data(), chunks=(30, 3))
    kw = dict(n_clusters=3, radius=1.0, seed=5, method=method)
    with only_warnings():
        capsys.readouterr()
        quiet = DPKMeans(verbose=0, **kw).fit(dX)
        assert capsys.readouterr().err == ""
        DPKMeans(verbose=1, **kw).fit(dX)  # the capture is no terminal: no bar
        assert "DPKMeans on dask" not in capsys.readouterr().err
        monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
        shown = DPKMeans(verbose=1, **kw).fit(dX)
        err = capsys.readouterr().err
        monkeypatch.undo()
        forced = DPKMeans(verbose=2, **kw).fit(dX)
        err2 = capsys.readouterr().err
    assert "DPKMeans on dask" in err and "round" in err, err[-300:]
    assert "DPKMeans on dask" in err2
    for fit in (shown, forced):
        np.testing.assert_array_equal(fit.cluster_centers_, quiet.cluster_centers_)
        assert fit.privacy_ == quiet.privacy_
    with pytest.raises(ValueError, match="verbose must lie in"):
        DPKMeans(verbose=-2, **kw).fit(dX)
