"""The view of the training rows (issue 32, item 2): the core's SGD and dual DP-SCD trainers read
``(s_i x_i, c)`` from the caller's X (``RowView``, ``DenseRows`` in ``rows.hpp``) instead of a
copy with the projection and the intercept column applied, with the same bits; a fit makes no
copy of X and reads it once for the checks."""

from __future__ import annotations

import numpy as np
import pytest

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


def _views(X: np.ndarray) -> list[RowView]:
    n = X.shape[0]
    shrink = np.where(np.arange(n) % 3 == 0, 0.7071067811865476, 1.0)
    return [
        RowView(X, None, 0.5),
        RowView(X, shrink, None),
        RowView(X, shrink, 1.0 / np.sqrt(2.0)),
    ]


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
        b = sgd_train(v.materialize(), y, key=KEY, epochs=2, learning_rate="constant", eta0=0.5, **kw)
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
        q = scd_train(v.materialize(), y, key=KEY, variant="primal", batch_size=2, epochs=1, clip=1.0)
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
        lambda: DPSGDClassifier(epochs=2, verbose=0, seed=3),
        lambda: DPSGDClassifier(mechanism="l2-laplace", epochs=2, verbose=0, seed=3),
        lambda: DPSCDClassifier(epochs=2, verbose=0, seed=3),
    ],
)
def test_fit_uses_view_with_same_bits(make, monkeypatch) -> None:
    """A default fit trains on a view (no copy of X) and gets the coefficients the materialised
    rows give (the rows of a fit with diagnostics, which are still materialised)."""
    X, y = _data(400, 6, seed=2)
    X = X / 1.3  # rows in the unit ball (Song et al. and DP-SCD project onto a smaller one)
    y01 = (y > 0).astype(int)
    seen = []
    original = rows_module._training_rows

    def spy(*a, **k):
        out = original(*a, **k)
        seen.append(type(out).__name__)
        return out

    monkeypatch.setattr("privlearn.linear._base._training_rows", spy)
    before = X.copy()
    a = make().fit(X, y01)
    b = make().set_params(diagnostics=True).fit(X, y01)
    assert seen == ["RowView", "ndarray"]
    assert np.array_equal(a.coef_, b.coef_) and a.intercept_ == b.intercept_
    assert np.array_equal(X, before)
