"""The fixed-point terms of a chunk of rows (row_kernels::add_small_units_rows): every kernel the
build holds (AVX-512DQ, AVX2, scalar) gives the int64 sums numpy computes from the same
roundings, on row strides other than the width, masked tails and wrapping accumulators."""

from __future__ import annotations

import numpy as np
import pytest

from privlearn import _core

ISAS = ("avx512", "avx2", "scalar")


def expected(X: np.ndarray, a: np.ndarray, s: np.ndarray | None, acc: np.ndarray) -> np.ndarray:
    """acc + sum_r trunc(a[r] * (X[r] * s[r])), the roundings of fixed::add_small_units."""
    v = X * s[:, None] if s is not None else X
    terms = np.trunc(a[:, None] * v).astype(np.int64)
    with np.errstate(over="ignore"):
        return acc + terms.sum(axis=0, dtype=np.int64)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("scaled", [False, True])
def test_every_kernel_matches_numpy(isa: str, scaled: bool) -> None:
    rng = np.random.default_rng(7)
    ran = 0
    for n_rows in (0, 1, 2, 3, 16, 17):
        for m in (*range(1, 26), 100, 101):
            wide = rng.standard_normal((n_rows, m + 5))  # the kernel reads X[:, :m]: a row
            X = wide[:, :m]  # stride other than m
            a = rng.uniform(-1, 1, n_rows) * 2.0**30 / np.sqrt(m)
            s = rng.uniform(0.1, 1.0, n_rows) if scaled else None
            acc = rng.integers(-(2**62), 2**62, m, dtype=np.int64)
            acc[0] = np.iinfo(np.int64).max - 3  # the modular sum wraps here
            got = _core.row_kernels_add_units(wide, m, a, s, acc, isa)
            if got is None:
                pytest.skip(f"this CPU has no {isa} kernel")
            np.testing.assert_array_equal(got, expected(X, a, s, acc))
            ran += 1
    assert ran == 6 * 27


def test_terms_at_the_int32_edge() -> None:
    # |term| just below 2^31, both signs, and fractions either side of .5: the truncation toward
    # zero of the int32 route and of a direct int64 conversion agree
    x = np.array([[1.0, -1.0, 0.5, -0.5, 0.25, 1e-300, 0.0, -0.0, 0.999999, -0.999999]])
    for a0 in (2.0**31 - 1.0, 2.0**31 - 0.75, 3.5, 1.0):
        a = np.array([a0])
        acc = np.zeros(x.shape[1], np.int64)
        want = expected(x, a, None, acc)
        for isa in ISAS:
            got = _core.row_kernels_add_units(x, x.shape[1], a, None, acc, isa)
            if got is not None:
                np.testing.assert_array_equal(got, want)


def test_scalar_kernel_always_runs_and_input_is_checked() -> None:
    X = np.ones((2, 3))
    acc = np.zeros(3, np.int64)
    assert _core.row_kernels_add_units(X, 3, np.ones(2), None, acc, "scalar") is not None
    assert acc.tolist() == [0, 0, 0]  # the caller's array is not written
    with pytest.raises(ValueError, match="isa must be"):
        _core.row_kernels_add_units(X, 3, np.ones(2), None, acc, "sse")
    with pytest.raises(ValueError, match="< 2\\^31"):
        _core.row_kernels_add_units(X, 3, np.full(2, 2.0**31), None, acc, "scalar")
    with pytest.raises(ValueError, match="one entry per row"):
        _core.row_kernels_add_units(X, 3, np.ones(3), None, acc, "scalar")
