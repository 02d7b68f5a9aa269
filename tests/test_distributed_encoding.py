"""ImpactEncoder on dask DataFrames: equal to the single-machine fit bit for bit."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from privlearn.encoding import ImpactEncoder  # noqa: E402
from privlearn.exceptions import PrivacyLeakWarning  # noqa: E402

N = 120


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            processes=False, n_workers=2, threads_per_worker=1, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def _data(n: int = N, seed: int = 0) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": rng.choice(list("abcdefgh"), n).astype(object),
            "b": rng.integers(0, 15, n),
            "c": rng.choice([0.5, 1.5, 2.5, np.nan], n),
        }
    )
    X.loc[::11, "a"] = None
    ys = {
        "binary": rng.choice(["no", "yes"], n),
        "multiclass": rng.integers(0, 4, n),
        "continuous": rng.normal(1.0, 2.0, n),
    }
    return X, ys


def _split(X: pd.DataFrame, y: np.ndarray, sizes: list[int]):
    """A dask frame and series whose partitions are exactly ``sizes`` rows."""
    bounds = np.cumsum([0, *sizes])
    parts = [X.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    yparts = [pd.Series(y[a:b], index=X.index[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    ddf = dd.from_delayed([_delayed(p) for p in parts], meta=X.iloc[:0], verify_meta=False)
    dy = dd.from_delayed([_delayed(p) for p in yparts], meta=yparts[0].iloc[:0])
    return ddf, dy


def _delayed(obj):
    import dask

    return dask.delayed(lambda v: v)(obj)


def _params(kind: str, mode: str) -> dict:
    kw: dict = {"target_type": kind, "mode": mode, "seed": 7}
    if mode == "laplace":
        kw["epsilon"] = 1.5
    if kind == "continuous":
        kw["target_bounds"] = (-1.0, 4.0)
    return kw


def _assert_same_fit(a: ImpactEncoder, b: ImpactEncoder) -> None:
    for name in ("categories_", "counts_", "codes_"):
        for u, v in zip(getattr(a, name), getattr(b, name), strict=True):
            assert u.dtype == v.dtype
            np.testing.assert_array_equal(u, v)
    if a.pvalues_ is None:
        assert b.pvalues_ is None
    else:
        for u, v in zip(a.pvalues_, b.pvalues_, strict=True):
            np.testing.assert_array_equal(u, v)
    if a.classes_ is None:
        assert b.classes_ is None
    else:
        np.testing.assert_array_equal(a.classes_, b.classes_)
    assert a.privacy_ == b.privacy_
    assert list(a.feature_names_in_) == list(b.feature_names_in_)


@contextlib.contextmanager
def _warns_undeclared(kind: str, mode: str) -> Iterator[None]:
    """The Laplace fits of ``_fit_both`` read the level set (no ``categories=``) and, for a class
    outcome, the label set (no ``classes=``) from the data, on one machine and on dask alike:
    each says so with a PrivacyLeakWarning. The other modes promise nothing and say nothing."""
    with contextlib.ExitStack() as stack:
        if mode == "laplace":
            if kind != "continuous":
                stack.enter_context(pytest.warns(PrivacyLeakWarning, match="read the label set"))
            stack.enter_context(pytest.warns(PrivacyLeakWarning, match="pass categories="))
        yield


def _fit_both(kind, mode, sizes, n=N):
    X, ys = _data(n)
    y = ys[kind]
    ref = ImpactEncoder(**_params(kind, mode))
    with _warns_undeclared(kind, mode):
        want = ref.fit_transform(X, y)
    ddf, dy = _split(X, y, sizes)
    enc = ImpactEncoder(**_params(kind, mode))
    with _warns_undeclared(kind, mode):
        got = enc.fit_transform(ddf, dy)
    return ref, want, enc, got, X


@pytest.mark.parametrize("kind", ["binary", "multiclass", "continuous"])
@pytest.mark.parametrize("mode", ["naive", "laplace", "jackknife"])
def test_uneven_partitions_equal_single_machine(client, kind, mode):
    ref, want, enc, got, X = _fit_both(kind, mode, [5, 0, 61, 1, 53])
    _assert_same_fit(ref, enc)
    assert isinstance(got, dd.DataFrame)
    out = got.compute()
    np.testing.assert_array_equal(out.to_numpy(), want)
    assert list(out.columns) == list(ref.get_feature_names_out())
    if mode == "laplace":  # the noise is really there (and equal)
        exact = ImpactEncoder(**_params(kind, "naive")).fit(X, _data()[1][kind])
        assert any(not np.array_equal(u, v) for u, v in zip(exact.counts_, enc.counts_))


@pytest.mark.parametrize("kind", ["binary", "continuous"])
def test_one_row_partitions(client, kind):
    ref, want, enc, got, _ = _fit_both(kind, "laplace", [1] * 24, n=24)
    _assert_same_fit(ref, enc)
    np.testing.assert_array_equal(got.compute().to_numpy(), want)


def test_given_categories_significance_and_counts_code(client):
    X, ys = _data()
    cats = [list("abcdefghij"), list(range(20)), [0.5, 1.5, 2.5, 9.0]]
    kw = dict(
        code="counts",
        mode="laplace",
        epsilon=2.0,
        categories=cats,
        classes=["no", "yes"],
        significance=0.5,
    )
    ref = ImpactEncoder(seed=3, **kw).fit(X, ys["binary"])
    ddf, dy = _split(X, ys["binary"], [40, 40, 40])
    enc = ImpactEncoder(seed=3, **kw).fit(ddf, dy)
    _assert_same_fit(ref, enc)
    new = X.iloc[::-1].reset_index(drop=True)
    np.testing.assert_array_equal(
        enc.transform(dd.from_pandas(new, npartitions=4)).compute().to_numpy(), ref.transform(new)
    )


def test_dask_array_target(client):
    X, ys = _data()
    ddf = dd.from_pandas(X, npartitions=3)
    lengths = ddf.map_partitions(len).compute().tolist()
    dy = da.from_array(ys["multiclass"], chunks=(tuple(lengths),))
    enc = ImpactEncoder(target_type="multiclass", mode="naive").fit(ddf, dy)
    ref = ImpactEncoder(target_type="multiclass", mode="naive").fit(X, ys["multiclass"])
    _assert_same_fit(ref, enc)


@settings(max_examples=10, deadline=None)
@given(cuts=st.lists(st.integers(0, N), min_size=0, max_size=6))
def test_hypothesis_partitions(client, cuts):
    bounds = sorted({0, N, *cuts})
    sizes = [b - a for a, b in zip(bounds[:-1], bounds[1:])]
    ref, want, enc, got, _ = _fit_both("continuous", "laplace", sizes)
    _assert_same_fit(ref, enc)
    np.testing.assert_array_equal(got.compute().to_numpy(), want)


def test_fixed_point_sums_do_not_depend_on_order():
    X, ys = _data()
    kw = _params("continuous", "naive")
    a = ImpactEncoder(**kw).fit(X, ys["continuous"])
    perm = np.random.default_rng(1).permutation(N)
    b = ImpactEncoder(**kw).fit(X.iloc[perm], ys["continuous"][perm])
    for u, v in zip(a.counts_, b.counts_):
        np.testing.assert_array_equal(u, v)


def test_refused_modes_and_bad_input(client):
    X, ys = _data()
    ddf, dy = _split(X, ys["binary"], [60, 60])
    with pytest.raises(NotImplementedError, match="split"):
        ImpactEncoder(mode="split").fit(ddf, dy)
    with pytest.raises(NotImplementedError, match="cross"):
        ImpactEncoder(mode="cross").fit_transform(ddf, dy)
    with pytest.raises(NotImplementedError, match="groups"):
        ImpactEncoder(mode="jackknife").fit_transform(ddf, dy, groups=dy)
    ImpactEncoder(mode="cross").fit(ddf, dy)  # fit (codes from all rows) is fine
    with pytest.raises(ValueError, match="auto"):
        ImpactEncoder(target_type="auto").fit(ddf, dy)
    ddc, dyc = _split(X, ys["continuous"], [60, 60])
    with pytest.raises(ValueError, match="target_bounds"):
        ImpactEncoder(target_type="continuous", mode="naive").fit(ddc, dyc)
    # X and y partitioned differently
    with pytest.raises(ValueError, match="partitioned differently"):
        ImpactEncoder(mode="naive").fit(ddf, dd.from_pandas(pd.Series(ys["binary"]), 3))
    _, dy_bad = _split(X, ys["binary"], [50, 70])
    with pytest.raises(ValueError, match="partitioned differently"):
        ImpactEncoder(mode="naive").fit(ddf, dy_bad)
    # unknown chunk sizes of a dask array y
    dyu = da.from_array(ys["binary"], chunks=60)
    dyu = dyu[dyu == dyu]
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        ImpactEncoder(mode="naive").fit(ddf, dyu)
    with pytest.raises(TypeError, match="dask Series or dask array"):
        ImpactEncoder(mode="naive").fit(ddf, ys["binary"])
    with pytest.raises(TypeError, match="DataFrame"):
        ImpactEncoder(mode="naive").fit(da.from_array(X.to_numpy(), chunks=(60, 3)), dy)
    with pytest.raises(ValueError, match="missing"):
        ImpactEncoder(mode="naive", handle_missing="error").fit(ddf, dy)
    one = np.where(ys["binary"] == "yes", "no", ys["binary"])
    _, dy1 = _split(X, one, [60, 60])
    with pytest.raises(ValueError, match="only 1 class"):
        ImpactEncoder(mode="naive").fit(ddf, dy1)


def test_caller_data_untouched(client):
    X, ys = _data()
    before = X.copy()
    y = ys["continuous"].copy()
    ddf, dy = _split(X, y, [30, 90])
    ImpactEncoder(**_params("continuous", "jackknife")).fit_transform(ddf, dy).compute()
    pd.testing.assert_frame_equal(X, before)
    np.testing.assert_array_equal(y, ys["continuous"])


# ---- sparse chunks (issue 22) ----
def test_sparse_chunks_are_refused_before_any_charge(client):
    """A dask array with sparse chunks (X or y) is refused with a TypeError naming the sparse
    chunks and the fixes, before the ledger is charged."""
    sp = pytest.importorskip("scipy.sparse")
    from privlearn.accounting import PrivacyLedger

    X, ys = _data()
    ddf, dy = _split(X, ys["multiclass"], [60, 60])
    ledger = PrivacyLedger(10.0)
    codes = np.stack([X["b"].to_numpy(), ys["multiclass"]], axis=1).astype(float)
    Xs = da.from_array(codes, chunks=(60, 2)).map_blocks(sp.csr_matrix)
    with pytest.raises(TypeError, match=r"X is a dask array with sparse chunks"):
        ImpactEncoder(mode="laplace", ledger=ledger).fit(Xs, dy)
    ys_sparse = da.from_array(ys["multiclass"][:, None].astype(float), chunks=(60, 1))
    ys_sparse = ys_sparse.map_blocks(sp.csr_matrix)
    with pytest.raises(TypeError, match=r"y is a dask array with sparse chunks"):
        ImpactEncoder(mode="laplace", ledger=ledger, target_type="multiclass").fit(ddf, ys_sparse)
    assert ledger.spent.epsilon == 0.0
