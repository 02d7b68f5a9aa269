"""The built extension: build facts, the stub in step with the bindings, thread control and the
deterministic blocked reduction."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import privlearn
from privlearn import _core
from privlearn.reference import parallel as ref_parallel


def test_build_facts():
    assert _core.__version__ == privlearn.__version__
    assert isinstance(_core.has_openmp, bool)
    assert _core.default_threads() >= 1
    assert _core.reduce_block == ref_parallel.REDUCE_BLOCK


def test_stub_lists_exactly_the_bound_names():
    stub = Path(privlearn.__file__).with_name("_core.pyi")
    tree = ast.parse(stub.read_text())
    declared = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    declared |= {
        n.target.id
        for n in tree.body
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
    }
    bound = {name for name in dir(_core) if not name.startswith("__")} | {"__version__"}
    assert declared == bound


def test_set_default_threads_roundtrip():
    before = _core.default_threads()
    try:
        _core.set_default_threads(3)
        assert _core.default_threads() == (3 if _core.has_openmp else 1)
    finally:
        _core.set_default_threads(0)
    assert _core.default_threads() == before


@pytest.mark.parametrize("n_rows", [0, 1, 255, 256, 257, 70_000])
def test_blocked_sum_is_thread_independent_and_matches_reference(n_rows):
    X = np.random.default_rng(n_rows).standard_normal((n_rows, 7)) * 1e3
    base = _core.blocked_column_sum(X, 1)
    for t in (2, 4):
        assert np.array_equal(_core.blocked_column_sum(X, t), base)
    # same summation order as the reference: equal to the last bit
    np.testing.assert_array_equal(base, ref_parallel.blocked_column_sum(X))
    np.testing.assert_allclose(base, X.sum(axis=0), rtol=1e-10, atol=1e-9)


def test_blocked_sum_rejects_non_finite_input():
    X = np.ones((10, 2))
    X[4, 1] = np.nan
    with pytest.raises(ValueError, match="row 4, column 1"):
        _core.blocked_column_sum(X, 1)
    with pytest.raises(ValueError, match="non-finite"):
        ref_parallel.blocked_column_sum(X)


def test_openmp_is_built_in_ci():
    """CI builds with -DPRIVLEARN_REQUIRE_OPENMP=ON; the extension must report it."""
    import os

    if os.environ.get("CI", "").lower() != "true":
        pytest.skip("only meaningful under CI")
    assert _core.has_openmp


def test_public_thread_control_and_reduction():
    from privlearn import parallel

    X = np.arange(12.0).reshape(4, 3)
    np.testing.assert_array_equal(parallel.blocked_column_sum(X.tolist()), X.sum(axis=0))
    with parallel.thread_limit(1):
        assert parallel.get_num_threads() == 1
        np.testing.assert_array_equal(parallel.blocked_column_sum(X), X.sum(axis=0))
    assert parallel.get_num_threads() == _core.default_threads()
    with pytest.raises(ValueError, match="2-D"):
        parallel.blocked_column_sum(np.ones(3))
    with pytest.raises(ValueError, match="n_threads"):
        parallel.set_num_threads(0)
