"""The view of the training rows (issue 32, item 2): the core's SGD and dual DP-SCD trainers read
``(s_i x_i, c)`` from the caller's X (``RowView``, ``DenseRows`` and ``CsrRows`` in ``rows.hpp``)
instead of a copy with the projection and the intercept column applied, with the same bits; a
fit makes no copy of X (nor, for CSR, of its int32 indices) and reads it once for the checks."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from privlearn import _core
from privlearn._design_matrix import RowView, as_design_matrix
from privlearn.linear import DPSCDClassifier, DPSGDClassifier
from privlearn.linear import _rows as rows_module
from privlearn.linear.scd import scd_train
from privlearn.linear.sgd import sgd_train

KEY = bytes(range(32))


def _data(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X *= rng.uniform(0.2, 1.3, size=(n, 1))  # some rows outside the unit ball
    y = np.where(X @ rng.standard_normal(d) > 0, 1.0, -1.0)
    return X, y


def _views(X: np.ndarray | sp.csr_matrix) -> list[RowView]:
    n = X.shape[0]
    shrink = np.where(np.arange(n) % 3 == 0, 0.7071067811865476, 1.0)
    return [
        RowView(X, None, 0.5),
        RowView(X, shrink, None),
        RowView(X, shrink, 1.0 / np.sqrt(2.0)),
        RowView(X, None, 0.0),  # an intercept of 0 (CSR: an explicit stored zero in each row)
    ]


def _csr_data(n: int, d: int, seed: int = 0, index=np.int32) -> tuple[sp.csr_matrix, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.4, format="csr", random_state=seed, data_rvs=rng.standard_normal)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    scale = rng.uniform(0.2, 1.3, size=n) / np.where(norms > 0, norms, 1.0)
    X = sp.csr_matrix(sp.diags(scale) @ X)  # some rows outside the unit ball, some empty
    X.sort_indices()
    X.indices, X.indptr = X.indices.astype(index), X.indptr.astype(index)
    y = np.where(np.arange(n) % 3 == 0, 1.0, -1.0)
    return X, y


def _arrays(X: sp.csr_matrix) -> list[np.ndarray]:
    return [X.data.copy(), X.indices.copy(), X.indptr.copy()]


# d + 1 columns a multiple of 4 (the intercept closes the last block of four) and not
@pytest.mark.parametrize("d", [1, 3, 4, 7, 10])
@pytest.mark.parametrize(
    "kw",
    [
        dict(mechanism="gaussian", sampling="poisson", batch_size=8, clip=1.0, sigma=1.0),
        dict(mechanism="l2-laplace", sampling="disjoint", batch_size=5, epsilon=1.0),
        dict(mechanism="gaussian", sampling="fixed", batch_size=8, clip=0.5, sigma=0.8),
        dict(mechanism="none", sampling="disjoint", batch_size=4),  # the unclipped sum
    ],
)
def test_sgd_view_bits(d: int, kw: dict) -> None:
    X, y = _data(120, d)
    before = X.copy()
    for v in _views(X):
        a = sgd_train(v, y, key=KEY, epochs=2, learning_rate="constant", eta0=0.5, **kw)
        b = sgd_train(
            v.materialize(), y, key=KEY, epochs=2, learning_rate="constant", eta0=0.5, **kw
        )
        assert a.coef.shape == (v.shape[1],)
        assert np.array_equal(a.coef, b.coef)
    assert np.array_equal(X, before)  # the caller's X is never written to


@pytest.mark.parametrize("d", [3, 4, 7])
@pytest.mark.parametrize("sampling", ["poisson", "fixed"])
def test_scd_view_bits(d: int, sampling: str) -> None:
    X, y = _data(150, d, seed=1)
    for v in _views(X):
        kw = dict(key=KEY, sampling=sampling, batch_size=10, epochs=2, clip=1.0, noise_std=0.3)
        a = scd_train(v, y, **kw)
        b = scd_train(v.materialize(), y, **kw)
        assert np.array_equal(a.v, b.v) and np.array_equal(a.dual_coef, b.dual_coef)
        # the primal variant reads X by columns: the view is materialised for it
        p = scd_train(v, y, key=KEY, variant="primal", batch_size=2, epochs=1, clip=1.0)
        q = scd_train(
            v.materialize(), y, key=KEY, variant="primal", batch_size=2, epochs=1, clip=1.0
        )
        assert np.array_equal(p.coef, q.coef)


def test_view_is_passed_through_and_materialized() -> None:
    X, _ = _data(6, 3)
    v = RowView(X, np.full(6, 0.5), 2.0)
    assert as_design_matrix(v) is v
    M = np.asarray(v)
    assert M.shape == (6, 4) == v.shape
    assert np.array_equal(M[:, :3], X * 0.5) and np.all(M[:, 3] == 2.0)
    assert np.array_equal(RowView(X, None, None).materialize(), X)


def test_core_refuses_bad_views() -> None:
    X, y = _data(10, 3)
    args = ("log_loss", "gaussian", "poisson", "constant", 1e-4, 2, 1, 0, 1.0, 1.0, 1.0, 1.0)
    rest = (0.0, KEY, 1, 2, 0, 1)
    w0 = np.zeros(4)
    with pytest.raises(ValueError, match="row_scale must have one entry per row"):
        _core.sgd_train_dense(X, y, w0, *args, *rest, row_scale=np.ones(3), intercept=1.0)
    with pytest.raises(ValueError, match="row_scale must hold finite factors > 0"):
        _core.sgd_train_dense(X, y, w0, *args, *rest, row_scale=np.zeros(10), intercept=1.0)
    with pytest.raises(ValueError, match="intercept must be finite"):
        _core.sgd_train_dense(X, y, w0, *args, *rest, intercept=float("nan"))
    bad = X.copy()
    bad[4, 1] = np.nan
    with pytest.raises(ValueError, match="non-finite value at row 4"):  # still checked by default
        _core.sgd_train_dense(bad, y, np.zeros(3), *args, *rest)


@pytest.mark.parametrize(
    "make",
    [
        lambda: DPSGDClassifier(epochs=2, verbose=0, seed=3, classes=[0, 1]),
        lambda: DPSGDClassifier(
            mechanism="l2-laplace", epochs=2, verbose=0, seed=3, classes=[0, 1]
        ),
        lambda: DPSGDClassifier(epochs=2, verbose=0, seed=3, classes=[0, 1], diagnostics=True),
        lambda: DPSCDClassifier(epochs=2, verbose=0, seed=3, classes=[0, 1]),
    ],
)
@pytest.mark.parametrize("sparse", [False, True])
def test_fit_uses_view_with_same_bits(make, sparse: bool, monkeypatch) -> None:
    """A default fit trains on a view (no copy of X; for scipy's CSR, no copy of its int32
    indices either) and gets the coefficients (and SGD's objective path) that the
    materialised rows give."""
    X, y = _csr_data(300, 7, seed=2) if sparse else _data(400, 6, seed=2)
    X = X / 1.3  # rows in the unit ball (Song et al. and DP-SCD project onto a smaller one)
    before = _arrays(X) if sparse else [X.copy()]
    _fit_on_view_and_rows(make, X, (y > 0).astype(int), monkeypatch)
    for old, new in zip(before, _arrays(X) if sparse else [X]):
        assert np.array_equal(old, new)  # the caller's arrays are never written to


def _fit_on_view_and_rows(make, X, y, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Fits make() on X twice, the trainer given the view, then the materialised rows; checks
    which it got, that a CSR view shares X's indices, and that both give the same bits."""
    sparse = sp.issparse(X)
    seen = []
    original = rows_module._training_rows
    materialise = [False]

    def spy(*a, **k):
        if materialise[0]:
            k["view"] = False
        out = original(*a, **k)
        seen.append(type(out).__name__)
        if sparse and isinstance(out, RowView):
            assert np.shares_memory(out.X.indices, X.indices)
        return out

    monkeypatch.setattr("privlearn.linear._base._training_rows", spy)
    a = make().fit(X, y)
    materialise[0] = True
    b = make().fit(X, y)
    assert seen == ["RowView", "csr_matrix" if sparse else "ndarray"]
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)
    if a.diagnostics:
        p, q = a.diagnostics_.objective_path, b.diagnostics_.objective_path
        assert p.size > 1 and np.array_equal(p, q)


def test_fit_reads_labels_once_and_refuses_nan_in_one_pass(monkeypatch) -> None:
    """Nothing declared: the labels are read by one counting pass (no np.unique over y, no
    scikit-learn target scan over y); X is read once by the checks (DP-SCD: the core's pass of
    row norms carries the finiteness check); a non-finite X is still refused naming X, both
    ways."""
    from privlearn import _design_matrix
    from privlearn.exceptions import PrivacyLeakWarning
    from privlearn.linear import _rows

    X, y = _data(300, 5, seed=4)
    X = X / 1.3
    y01 = (y > 0).astype(np.int64)
    unique_sizes, einsums, sums, squares = [], [], [], []
    real_squares = _core.finite_row_squares

    def finite_row_squares(a):
        squares.append(a.size)
        return real_squares(a)

    monkeypatch.setattr(_core, "finite_row_squares", finite_row_squares)
    real_unique, real_einsum, real_all_finite = np.unique, np.einsum, _design_matrix._all_finite

    class _NP:  # numpy as _rows sees it, counting np.unique's input sizes
        def __getattr__(self, name):
            return getattr(np, name)

        def unique(self, a, *args, **kw):
            unique_sizes.append(np.asarray(a).size)
            return real_unique(a, *args, **kw)

    def einsum(*a, **k):
        einsums.append(a[0])
        return real_einsum(*a, **k)

    def all_finite(a):
        sums.append(a.size)
        return real_all_finite(a)

    monkeypatch.setattr(_rows, "np", _NP())
    monkeypatch.setattr(_design_matrix.np, "einsum", einsum)
    monkeypatch.setattr(_design_matrix, "_all_finite", all_finite)
    monkeypatch.setattr(_rows, "_all_finite", all_finite)
    for cls in (DPSGDClassifier, DPSCDClassifier):
        unique_sizes.clear(), einsums.clear(), sums.clear(), squares.clear()
        with pytest.warns(PrivacyLeakWarning, match="read the label set"):
            est = cls(epochs=1, verbose=0, seed=0).fit(X, y01)
        assert est.classes_.tolist() == [0, 1]
        assert max(unique_sizes, default=0) <= 2  # only the distinct labels, never y
        assert einsums == []
        if cls is DPSCDClassifier:  # the core's pass gives the row norms and checks finiteness
            assert squares == [X.size] and sums == []
        else:
            assert squares == [] and sums == [X.size]  # one finiteness pass, no norms
        bad = X.copy()
        bad[7, 2] = np.inf
        with pytest.raises(ValueError, match="X contains NaN or infinite values"):
            cls(epochs=1, verbose=0, seed=0, classes=[0, 1]).fit(bad, y01)


@pytest.mark.parametrize("d", [1, 3, 4, 5, 8, 11])
def test_finite_row_squares(d: int) -> None:
    """The core's one pass of checks: the plain sums of squares in dot_sq's order (four partial
    sums over k mod 4), and a ValueError naming X, quoting no value, for NaN or inf."""
    rng = np.random.default_rng(d)
    X = rng.standard_normal((9, d)) * 10.0 ** rng.integers(-3, 3, size=(9, 1))
    q = np.zeros((9, 4))
    for k in range(d - d % 4):
        q[:, k % 4] += X[:, k] * X[:, k]
    for k in range(d - d % 4, d):
        q[:, 0] += X[:, k] * X[:, k]
    expected = (q[:, 0] + q[:, 1]) + (q[:, 2] + q[:, 3])
    assert np.array_equal(_core.finite_row_squares(X), expected)
    for bad in (np.nan, np.inf, -np.inf):
        Y = X.copy()
        Y[6, d - 1] = bad
        with pytest.raises(ValueError, match=r"^X contains NaN or infinite values$"):
            _core.finite_row_squares(Y)
    big = np.full((2, d), 1e300)  # finite entries whose squares overflow: no error, inf
    assert np.all(np.isinf(_core.finite_row_squares(big)))


# ---- CSR rows: the same view (CsrRows in rows.hpp), scipy's int32 indices without a copy ----
@pytest.mark.parametrize("index", [np.int32, np.int64])
@pytest.mark.parametrize("d", [1, 4, 9])
@pytest.mark.parametrize(
    "kw",
    [
        dict(mechanism="gaussian", sampling="poisson", batch_size=8, clip=1.0, sigma=1.0),
        dict(mechanism="l2-laplace", sampling="disjoint", batch_size=5, epsilon=1.0),
        dict(mechanism="none", sampling="disjoint", batch_size=4),  # the unclipped sum
    ],
)
def test_sgd_csr_view_bits(index, d: int, kw: dict) -> None:
    X, y = _csr_data(90, d, index=index)
    before = _arrays(X)
    for v in _views(X):
        M = v.materialize()
        assert sp.issparse(M) and M.shape == v.shape and M.has_canonical_format
        a = sgd_train(v, y, key=KEY, epochs=2, learning_rate="constant", eta0=0.5, **kw)
        b = sgd_train(M, y, key=KEY, epochs=2, learning_rate="constant", eta0=0.5, **kw)
        assert a.coef.shape == (v.shape[1],)
        assert np.array_equal(a.coef, b.coef)
    for old, new in zip(before, _arrays(X)):
        assert np.array_equal(old, new) and old.dtype == new.dtype  # never written to


@pytest.mark.parametrize("index", [np.int32, np.int64])
@pytest.mark.parametrize("variant", ["dual", "seq"])
def test_scd_csr_view_bits(index, variant: str) -> None:
    X, y = _csr_data(120, 6, seed=1, index=index)
    for v in _views(X):
        kw = dict(key=KEY, variant=variant, batch_size=10, epochs=2, clip=1.0, noise_std=0.3)
        a = scd_train(v, y, **kw)
        b = scd_train(v.materialize(), y, **kw)
        assert np.array_equal(a.v, b.v) and np.array_equal(a.dual_coef, b.dual_coef)
    v = _views(X)[2]  # the primal variant reads X by columns: the view is materialised
    p = scd_train(v, y, key=KEY, variant="primal", batch_size=2, epochs=1, clip=1.0)
    q = scd_train(v.materialize(), y, key=KEY, variant="primal", batch_size=2, epochs=1, clip=1.0)
    assert np.array_equal(p.coef, q.coef)


def test_csr_view_materializes_as_dense_view() -> None:
    X, _ = _csr_data(40, 5, seed=3)
    for v in _views(X):
        dense = RowView(X.toarray(), v.row_scale, v.intercept)
        assert np.array_equal(v.materialize().toarray(), dense.materialize())
        assert np.array_equal(v[7:19].toarray(), dense[7:19])  # the diagnostics' blocks
        assert v.nbytes > 0


def test_core_takes_scipy_index_dtypes_and_refuses_others() -> None:
    """The core takes scipy's int32 arrays as they are (no copy of the indices by
    as_design_matrix) and int64 ones (converted once, each index checked first); any other
    index dtype is a TypeError naming it, an index beyond int32 a ValueError, and a view is
    refused by the primal DP-SCD (it reads X by columns)."""
    X, y = _csr_data(30, 4, seed=5)
    assert X.indices.dtype == np.int32 and X.has_canonical_format
    assert as_design_matrix(X) is X  # scipy's own canonical CSR: no new arrays
    args = ("log_loss", "gaussian", "poisson", "constant", 1e-4, 4, 1, 0, 1.0, 1.0, 1.0, 1.0)
    rest = (0.0, KEY, 1, 2, 0, 1)

    def run(indices, indptr, n_cols=4, **kw):
        w0 = np.zeros(n_cols + ("intercept" in kw))
        out = _core.sgd_train_csr(X.data, indices, indptr, n_cols, y, w0, *args, *rest, **kw)
        return np.asarray(out[0])

    base = run(X.indices, X.indptr)
    assert np.array_equal(base, run(X.indices.astype(np.int64), X.indptr.astype(np.int64)))
    assert np.array_equal(base, run(X.indices.astype(np.int64), X.indptr))
    assert np.array_equal(base, run(X.indices.astype(np.int16), X.indptr))  # a safe cast
    for bad in (X.indices.astype(np.float64), X.indices.astype(np.uint64)):
        with pytest.raises(
            TypeError, match=f"CSR indices must be an int32 or int64 array, got dtype {bad.dtype}"
        ):
            run(bad, X.indptr)
    with pytest.raises(
        TypeError, match="CSR indptr must be an int32 or int64 array, got dtype uint64"
    ):
        run(X.indices, X.indptr.astype(np.uint64))
    huge = X.indices.astype(np.int64)
    huge[3] += 2**32  # would wrap to the same column through int32
    with pytest.raises(ValueError, match="CSR column index out of range at position 3"):
        run(huge, X.indptr)
    with pytest.raises(ValueError, match="must be 1-D arrays"):
        run(X.indices.reshape(1, -1), X.indptr)
    with pytest.raises(ValueError, match="number of columns must lie in"):
        run(X.indices, X.indptr, n_cols=2**31)
    with pytest.raises(ValueError, match="row_scale must hold finite factors > 0"):
        run(X.indices, X.indptr, row_scale=np.zeros(30), intercept=1.0)
    with pytest.raises(ValueError, match="intercept must be finite"):
        run(X.indices, X.indptr, intercept=float("inf"))
    scd_args = ("hinge", "primal", True, 1e-3, 2, 1, 0, 1.0, 0.0, KEY, 1, 2, 0, 1)
    with pytest.raises(ValueError, match="primal variant reads X by columns"):
        _core.scd_train_csr(X.data, X.indices, X.indptr, 4, y, *scd_args, intercept=1.0)


def test_csr_row_squares_match_numpy_and_feed_the_norms() -> None:
    """A CSR fit's row norms from one pass of the core (``csr_row_squares``: stored order, the
    bits of numpy's ``np.bincount`` of the squared values), the rare rows outside the plain
    range still rescaled in numpy; the extents are checked, the indices are not read."""
    from privlearn._design_matrix import scaled_row_norms

    X, _ = _csr_data(50, 7, seed=6)
    X.data[X.indptr[3] : X.indptr[4]] *= 1e200  # a row whose squares overflow
    X.data[X.indptr[5] : X.indptr[6]] *= 1e-200  # a row whose squares underflow
    counts = np.diff(X.indptr)
    with np.errstate(over="ignore", under="ignore"):
        squared = X.data * X.data
    expected = np.bincount(np.repeat(np.arange(50), counts), squared, minlength=50)
    for index in (np.int32, np.int64):
        sq = _core.csr_row_squares(X.data, X.indices.astype(index), X.indptr.astype(index), 7)
        assert np.array_equal(sq, expected)
    via_core = scaled_row_norms(X, squares=_core.csr_row_squares(X.data, X.indices, X.indptr, 7))
    for a, b in zip(via_core, scaled_row_norms(X)):
        assert np.array_equal(a, b)
    assert via_core[0][3] > 1.0 and via_core[0][5] > 0.0  # rescaled rows: finite norms
    bad = X.indptr.copy()
    bad[10], bad[11] = bad[11], bad[10]
    with pytest.raises(ValueError, match="CSR indptr is not non-decreasing"):
        _core.csr_row_squares(X.data, X.indices, bad, 7)
    with pytest.raises(ValueError, match="CSR indptr is inconsistent"):
        _core.csr_row_squares(X.data[:-1], X.indices[:-1], X.indptr, 7)


def test_csr_view_materialize_never_shares_values() -> None:
    X, _ = _csr_data(20, 4, seed=7)
    M = RowView(X, None, None).materialize()
    assert np.array_equal(M.toarray(), X.toarray()) and not np.shares_memory(M.data, X.data)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("diagnostics", [False, True])
def test_multiclass_fit_uses_view_with_same_bits(sparse: bool, diagnostics: bool, monkeypatch):
    """The softmax trainer reads a view of dense or CSR rows in place (no copy of X for the
    intercept column: the core's dot products take dot_fixed's order on the view and on the
    materialised matrix alike); the coefficients (and the objective path) are those of the
    materialised rows. Without diagnostics the view is never materialised."""
    X, _ = _csr_data(300, 6, seed=8) if sparse else _data(300, 6, seed=8)
    made: list[int] = []
    materialize = RowView.materialize

    def counting(self):  # type: ignore[no-untyped-def]
        made.append(1)
        return materialize(self)

    monkeypatch.setattr(RowView, "materialize", counting)

    def make() -> DPSGDClassifier:
        return DPSGDClassifier(
            epochs=2, verbose=0, seed=5, classes=[0, 1, 2], diagnostics=diagnostics
        )

    _fit_on_view_and_rows(make, X / 1.3, np.arange(300) % 3, monkeypatch)
    if not diagnostics:  # (the diagnostics read the rows block by block, materialised)
        assert made == [1]  # only the second fit's, which asks for the materialised rows


def test_csr_fit_checks_the_stored_structure_once(monkeypatch) -> None:
    """A CSR fit runs the O(nnz) structure check once: ``_check_fit_data`` checks the matrix
    before scikit-learn indexes it, and ``as_design_matrix`` does not repeat it on the very
    matrix scikit-learn hands back (issue 32, item 2); a malformed matrix is still refused."""
    import privlearn._checks as _checks
    from privlearn import _design_matrix

    calls: list[int] = []
    real = _checks.check_sparse_structure

    def counting(X, name="X"):  # type: ignore[no-untyped-def]
        if sp.issparse(X):
            calls.append(X.nnz)
        real(X, name)

    monkeypatch.setattr(rows_module, "check_sparse_structure", counting)
    monkeypatch.setattr(_design_matrix, "check_sparse_structure", counting)
    rng = np.random.default_rng(3)
    X = sp.random(200, 6, density=0.4, format="csr", random_state=4) * 0.3
    y = rng.integers(0, 2, 200)
    DPSGDClassifier(epsilon=1.0, n_samples=200, classes=[0, 1], epochs=1, seed=0).fit(X, y)
    assert len(calls) == 1
    calls.clear()  # DP-SCD needs the row norms: the core's squares, without a second check
    DPSCDClassifier(epsilon=1.0, n_samples=200, classes=[0, 1], epochs=1, seed=0).fit(X, y)
    assert len(calls) == 1
    bad = X.copy()
    bad.indices[3] = 99  # a column beyond the shape
    with pytest.raises(ValueError, match="index"):
        DPSGDClassifier(epsilon=1.0, n_samples=200, classes=[0, 1], epochs=1, seed=0).fit(bad, y)


def test_plain_fit_data_is_what_check_x_y_returns_unchanged() -> None:
    """The fit's shortcut around scikit-learn's check_X_y is taken only for input it would hand
    back as is (same values, dtype and shape), and never for input it changes or refuses."""
    from sklearn.utils.validation import check_X_y

    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 3))
    ys = {
        "int": np.arange(6) % 2,
        "bool": np.arange(6) % 2 == 0,
        "float": rng.normal(size=6),
        "float32": rng.normal(size=6).astype(np.float32),
    }
    for name, y in ys.items():
        assert rows_module._plain_fit_data(X, y), name
        Xc, yc = check_X_y(X, y, accept_sparse="csr", dtype=np.float64, ensure_all_finite=False)
        assert Xc is X or np.shares_memory(Xc, X), name
        assert yc.dtype == y.dtype and np.array_equal(yc, y), name
    refused_or_changed = [
        (X.astype(np.float32), ys["int"]),  # converted
        (np.asfortranarray(X), ys["int"]),  # reordered by as_design_matrix
        (X, ys["int"][:5]),  # inconsistent lengths
        (X, ys["int"].reshape(-1, 1)),  # a column vector (warned and raveled)
        (X, np.where(np.arange(6) == 2, np.nan, 1.0)),  # y not finite: its error
        (X, np.array(["a", "b"] * 3)),  # labels to encode
        (X[:0], ys["int"][:0]),  # empty: its error
        (X.tolist(), ys["int"]),  # a list
        (sp.csr_matrix(X), ys["int"]),  # sparse
        (X[:, :1].reshape(6), ys["int"]),  # 1-D X: its error
    ]
    for Xb, yb in refused_or_changed:
        assert not rows_module._plain_fit_data(Xb, yb)
