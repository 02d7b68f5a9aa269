"""ImpactEncoder refusals that depend on what is read from the data come before the charge.

A Laplace fit with level lists read from the data learns how many level sums it will release
only after reading the levels; a noise scale the snapping mechanism cannot carry on that many
sums used to be refused after the ledger was charged (a refused fit that still cost budget).
The same holds on Dask, where missing values, undeclared levels and empty input were found
only after the charge, and a message quoted how many values were missing (a private count).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from privlearn.accounting import PrivacyLedger
from privlearn.encoding import ImpactEncoder

SCALE = 2.0**30  # too large for the snapping mechanism on a few thousand level sums


def _many_levels(n: int = 4000, levels: int = 3000, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": [f"l{i}" for i in rng.integers(0, levels, n)]})
    y = rng.uniform(0.0, 1.0, n)
    return X, y


def _encoder(ledger: PrivacyLedger, **kw) -> ImpactEncoder:
    return ImpactEncoder(
        mode="laplace",
        target_type="continuous",
        noise_scale=SCALE,
        target_bounds=(0.0, 1.0),
        ledger=ledger,
        seed=1,
        **kw,
    )


def test_read_levels_noise_refused_before_charge():
    X, y = _many_levels()
    ledger = PrivacyLedger(10.0)
    with pytest.raises(ValueError, match="nothing was charged") as err:
        _encoder(ledger).fit(X, y)
    assert ledger.spent.epsilon == 0.0
    assert "3000" not in str(err.value) and "level sums" in str(err.value)


def test_read_levels_small_count_still_fits_and_charges():
    """The check refuses only what cannot be carried: a few levels fit at the same scale."""
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.choice(list("abc"), 200)})
    y = rng.uniform(0.0, 1.0, 200)
    ledger = PrivacyLedger(10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the read-levels and label warnings (tested elsewhere)
        _encoder(ledger).fit(X, y)
    assert ledger.spent.epsilon == pytest.approx(2.0 / SCALE)


dd = pytest.importorskip("dask.dataframe")


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def test_dask_read_levels_noise_refused_before_charge(client):
    X, y = _many_levels()
    ledger = PrivacyLedger(10.0)
    ddf = dd.from_pandas(X, npartitions=2)
    dy = dd.from_pandas(pd.Series(y, index=X.index), npartitions=2)
    with pytest.raises(ValueError, match="nothing was charged"):
        _encoder(ledger).fit(ddf, dy)
    assert ledger.spent.epsilon == 0.0


def test_dask_missing_values_refused_before_charge_without_count(client):
    rng = np.random.default_rng(2)
    a = rng.choice(["x", "y"], 60).astype(object)
    a[::7] = None  # 9 missing values: their number must not be quoted
    X = pd.DataFrame({"a": a})
    y = rng.uniform(0.0, 1.0, 60)
    ledger = PrivacyLedger(10.0)
    ddf = dd.from_pandas(X, npartitions=2)
    dy = dd.from_pandas(pd.Series(y, index=X.index), npartitions=2)
    enc = ImpactEncoder(
        mode="laplace",
        target_type="continuous",
        epsilon=1.0,
        target_bounds=(0.0, 1.0),
        handle_missing="error",
        ledger=ledger,
    )
    with pytest.raises(ValueError, match="missing values") as err:
        enc.fit(ddf, dy)
    assert "9" not in str(err.value)
    assert ledger.spent.epsilon == 0.0
