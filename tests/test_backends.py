"""The back-end interface (privlearn.backends): the registry, lazy discovery of the Dask plug-in,
a third party's back-end serving the estimators, and the package's import graph (estimators
never import a back-end; no import cycle)."""

from __future__ import annotations

import ast
import functools
import pathlib
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

import privlearn
import privlearn.linear as linear
from privlearn.backends import (
    PLUGINS,
    DistributedBackend,
    DistributedRows,
    backend_for,
    backend_for_array,
    register_backend,
    register_plugin,
    registered_backends,
    unregister_backend,
)
from privlearn.cluster import DPKMeans
from privlearn.encoding import ImpactEncoder
from privlearn.exceptions import PrivacyLeakWarning
from privlearn.linear import DPSCDClassifier, DPSGDClassifier


# ---- a third party's back-end: blocks of rows held "elsewhere" (here: a list of arrays) ----------
class Blocks:
    """A toy distributed array: its rows in blocks."""

    def __init__(self, data: Any, n_blocks: int = 3) -> None:
        self.blocks = np.array_split(np.asarray(data), n_blocks)
        self.shape = (sum(len(b) for b in self.blocks),) + self.blocks[0].shape[1:]
        self.ndim = len(self.shape)

    def whole(self) -> np.ndarray:
        return np.concatenate(self.blocks)


class BlockRows(DistributedRows):
    def __init__(self, blocks: list[np.ndarray]) -> None:
        self.blocks = blocks
        self.shape = (sum(len(b) for b in blocks), blocks[0].shape[1])

    def map_rows(self, func: Any, n_columns: int) -> BlockRows:
        out = [np.asarray(func(b), dtype=np.float64) for b in self.blocks]
        return BlockRows([b.reshape(len(b), n_columns) for b in out])

    def whole(self) -> np.ndarray:
        return np.ascontiguousarray(np.concatenate(self.blocks))


class BlockBackend(DistributedBackend):
    """Runs the estimators' operations block by block, and the in-memory trainers on the
    driver (so a fit must equal the in-memory fit bit for bit)."""

    name = "blocks"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def handles(self, obj: Any) -> bool:
        return isinstance(obj, (Blocks, BlockRows))

    def is_array(self, obj: Any) -> bool:
        return isinstance(obj, Blocks)

    def as_rows(self, X: Any, name: str = "X") -> BlockRows:
        self.calls.append("as_rows")
        return BlockRows([np.ascontiguousarray(b, dtype=np.float64) for b in X.blocks])

    def as_target(self, y: Any, rows: Any, name: str = "y", *, numeric: bool = True) -> Any:
        y = y.whole() if isinstance(y, Blocks) else np.asarray(y)
        return Blocks(y.astype(np.float64) if numeric else y, len(rows.blocks))

    def rows_above(self, rows: Any, row_values: Any, limit: float) -> tuple[int, int, float]:
        self.calls.append("rows_above")
        values = np.concatenate([row_values(b) for b in rows.blocks])
        bad = np.flatnonzero(values > limit)
        if bad.size == 0:
            return 0, -1, float("nan")
        return int(bad.size), int(bad[0]), float(values[bad[0]])

    def distinct(self, y: Any) -> np.ndarray:
        self.calls.append("distinct")
        return np.unique(np.concatenate([np.unique(b) for b in y.blocks]))

    def outside(self, y: Any, classes: np.ndarray) -> np.ndarray:
        self.calls.append("outside")
        return np.concatenate([b[~np.isin(b, classes)] for b in y.blocks])

    def map_values(self, y: Any, func: Any) -> Any:
        out = Blocks(np.zeros(0))
        out.blocks = [np.asarray(func(b), dtype=np.float64) for b in y.blocks]
        out.shape = y.shape
        return out

    def gather(self, y: Any) -> np.ndarray:
        return y.whole()

    def _train(self, name: str, X: Any, y: Any, kwargs: dict[str, Any]) -> Any:
        self.calls.append(name)
        kwargs.pop("verbose", None)
        return getattr(linear, name)(X.whole(), y.whole(), **kwargs)

    def sgd_train(self, X: Any, y: Any, **kwargs: Any) -> Any:
        return self._train("sgd_train", X, y, kwargs)

    def scd_train(self, X: Any, y: Any, **kwargs: Any) -> Any:
        return self._train("scd_train", X, y, kwargs)

    def kmeans_rows(self, X: Any, verbose: int = 1) -> Any:
        self.calls.append("kmeans_rows")
        raise _Reached

    def impact_fit(self, enc: Any, X: Any, y: Any, groups: Any = None) -> Any:
        self.calls.append("impact_fit")
        enc.codes_ = []

    def impact_transform(self, enc: Any, X: Any) -> Any:
        self.calls.append("impact_transform")
        return "coded"


class _Reached(Exception):
    pass


class MinimalBackend(DistributedBackend):
    name = "minimal"

    def handles(self, obj: Any) -> bool:
        return isinstance(obj, frozenset)


@pytest.fixture
def blocks_backend():
    backend = register_backend(BlockBackend())
    yield backend
    unregister_backend("blocks")


def _data(n: int = 240, d: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= 1.2 * np.linalg.norm(X, axis=1, keepdims=True)  # ||x|| < 1
    y = np.where(X[:, 0] + 0.1 * rng.normal(size=n) > 0, "yes", "no")
    return X, y


# ---- the registry --------------------------------------------------------------------------------
def test_in_memory_data_have_no_backend():
    X, y = _data(10)
    assert backend_for(None, X, y, [1, 2], "text") is None
    assert backend_for_array(X) is None


def test_register_checks_and_replaces_by_name(blocks_backend):
    with pytest.raises(TypeError, match="DistributedBackend instance"):
        register_backend(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-empty name"):
        register_backend(DistributedBackend())
    again = register_backend(BlockBackend())
    names = [b.name for b in registered_backends()]
    assert names.count("blocks") == 1 and again in registered_backends()
    assert backend_for(np.zeros(2), Blocks(np.zeros((3, 1)))) is again
    assert unregister_backend("blocks") is again and unregister_backend("blocks") is None
    assert backend_for(Blocks(np.zeros((3, 1)))) is None


def test_unsupported_operation_names_backend_and_operation():
    minimal = register_backend(MinimalBackend())
    try:
        with pytest.raises(NotImplementedError, match="the minimal back-end does not support "
                           "impact coding"):  # fmt: skip
            ImpactEncoder().fit(frozenset({1}), [1])
        with pytest.raises(NotImplementedError, match="does not support DP-SGD"):
            minimal.sgd_train(None, None)
        assert not minimal.is_array(frozenset())
    finally:
        unregister_backend("minimal")


def test_plugin_is_imported_on_first_input_of_its_package(tmp_path, monkeypatch):
    (tmp_path / "toycollections.py").write_text("class Toy:\n    pass\n")
    (tmp_path / "toyplugin.py").write_text(
        textwrap.dedent(
            """
            import toycollections
            from privlearn.backends import DistributedBackend, register_backend

            class ToyBackend(DistributedBackend):
                name = "toy"

                def handles(self, obj):
                    return isinstance(obj, toycollections.Toy)

            register_backend(ToyBackend())
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(PLUGINS, "toycollections", "toyplugin")
    with pytest.raises(ValueError, match="non-empty strings"):
        register_plugin("", "toyplugin")
    import toycollections

    try:
        assert "toyplugin" not in sys.modules
        found = backend_for(toycollections.Toy())
        assert found is not None and found.name == "toy" and "toyplugin" in sys.modules
    finally:
        unregister_backend("toy")
        sys.modules.pop("toyplugin", None)
        sys.modules.pop("toycollections", None)


def test_dask_plugin_is_loaded_lazily_and_never_loads_dask():
    """In a fresh interpreter: detection on in-memory data (what every fit asks first) loads
    neither dask nor privlearn.distributed; the first dask input imports the plug-in, which
    registers the Dask back-end."""
    pytest.importorskip("dask")
    code = textwrap.dedent(
        """
        import sys
        import numpy as np
        import pandas as pd
        import scipy.sparse as sp
        from privlearn.backends import backend_for, backend_for_array

        X = np.zeros((3, 2))
        inputs = [X, sp.csr_matrix(X), pd.DataFrame(X), pd.Series([1, 2]), [1, 2], "a", None]
        assert backend_for(*inputs) is None and backend_for_array(X) is None
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed"))
        assert not loaded and "privlearn.distributed" not in sys.modules, loaded
        import dask.array as da
        import dask.dataframe as dd

        assert "privlearn.distributed" not in sys.modules
        arr = da.zeros((4, 2), chunks=2)
        frame = dd.from_pandas(pd.DataFrame({"a": ["x", "y"]}), npartitions=1)
        assert backend_for(arr).name == "dask" and "privlearn.distributed" in sys.modules
        assert backend_for(X, frame["a"]).name == "dask" and backend_for_array(frame) is None
        assert backend_for_array(arr).name == "dask"
        print("lazy ok")
        """
    )
    root = pathlib.Path(privlearn.__file__).parent.parent
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "PYTHONPATH": str(root)},
        timeout=120,
    )
    assert out.returncode == 0 and "lazy ok" in out.stdout, out.stderr[-3000:]


def test_reference_and_specs_import_without_the_estimators():
    """The numpy reference, the losses, the design-matrix helpers and the training specs sit
    below the estimators: importing them loads neither ``privlearn.linear`` nor a back-end."""
    code = textwrap.dedent(
        """
        import sys
        import privlearn.reference.linear, privlearn.reference.quadgrad, privlearn._losses
        import privlearn._design_matrix, privlearn._specs.sgd, privlearn._specs.scd
        import privlearn._specs.softmax, privlearn._specs.quadgrad
        above = sorted(m for m in sys.modules if m.startswith(("privlearn.linear",
                       "privlearn.cluster", "privlearn.distributed", "dask")))
        assert not above, above
        print("layers ok")
        """
    )
    root = pathlib.Path(privlearn.__file__).parent.parent
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "PYTHONPATH": str(root)},
        timeout=120,
    )
    assert out.returncode == 0 and "layers ok" in out.stdout, out.stderr[-3000:]


# ---- a third party's back-end serves the estimators ------------------------------------------
@pytest.mark.parametrize(
    "make, trainer",
    [
        (lambda: DPSGDClassifier(epsilon=1.0, seed=2, epochs=2), "sgd_train"),
        (lambda: DPSCDClassifier(epsilon=1.0, seed=2, epochs=2), "scd_train"),
    ],
)
def test_registered_backend_runs_linear_fit_like_in_memory(blocks_backend, make, trainer):
    X, y = _data()
    with pytest.warns(PrivacyLeakWarning, match="read the label set from the private labels"):
        single = make().fit(X, y)
    with pytest.warns(PrivacyLeakWarning, match="read the label set from the private labels"):
        dist = make().fit(Blocks(X), Blocks(y))
    assert trainer in blocks_backend.calls and "as_rows" in blocks_backend.calls
    assert "distinct" in blocks_backend.calls  # the label set, read where the data are
    np.testing.assert_array_equal(dist.coef_, single.coef_)
    np.testing.assert_array_equal(dist.intercept_, single.intercept_)
    assert list(dist.classes_) == list(single.classes_)
    assert dist.privacy_.epsilon == single.privacy_.epsilon
    np.testing.assert_array_equal(dist.predict(X), single.predict(X))


@pytest.mark.parametrize("trainer", ["sgd_train", "scd_train"])
def test_a_backend_returning_a_wrong_length_model_is_named(blocks_backend, monkeypatch, trainer):
    """Issue 30, item 5: a back-end whose trainer returns a coef of the wrong length got an
    IndexError from inside linear/_base.py; now a ValueError names the back-end contract."""
    original = getattr(blocks_backend, trainer)

    def short(X: Any, y: Any, **kwargs: Any) -> Any:
        run = original(X, y, **kwargs)
        return type(run)(**{**run.__dict__, "coef": run.coef[:1]})

    monkeypatch.setattr(blocks_backend, trainer, short)
    X, y = _data()
    make = DPSGDClassifier if trainer == "sgd_train" else DPSCDClassifier
    est = make(epsilon=1.0, seed=0, classes=["no", "yes"])
    with pytest.raises(ValueError, match=r"'BlockBackend' broke the back-end contract: .*\(5,\)"):
        est.fit(Blocks(X), Blocks(y))


def test_registered_backend_checks_rows_and_declared_labels(blocks_backend):
    X, y = _data()
    X[7] *= 3.0  # norm > 1: DP-SCD's proof needs ||x|| <= 1
    with pytest.raises(ValueError, match="row 7 of X has L2 norm"):
        DPSCDClassifier(epsilon=1.0, seed=0, clip_rows=False, classes=["no", "yes"]).fit(
            Blocks(X), Blocks(y)
        )
    assert "rows_above" in blocks_backend.calls
    X, y = _data()
    with pytest.raises(ValueError, match="a label outside the declared classes"):
        DPSGDClassifier(epsilon=1.0, seed=0, classes=["no", "yes"]).fit(
            Blocks(X), Blocks(np.where(np.arange(len(y)) == 5, "maybe", y))
        )
    assert "outside" in blocks_backend.calls
    with pytest.raises(ValueError, match="diagnostics=True is not available"):
        DPSGDClassifier(epsilon=1.0, seed=0, diagnostics=True, classes=["no", "yes"]).fit(
            Blocks(X), Blocks(y)
        )


def test_registered_backend_serves_kmeans_and_impact_coding(blocks_backend):
    X, _ = _data(30)
    with pytest.raises(_Reached):
        DPKMeans(2, 1.0, radius=1.0, method="maxcover", seed=0).fit(Blocks(X))
    enc = ImpactEncoder(seed=0)
    assert enc.fit(Blocks(np.array([["a"]] * 4)), [0, 1, 0, 1]) is enc
    assert enc.transform(Blocks(np.array([["a"]]))) == "coded"
    assert blocks_backend.calls[-3:] == ["kmeans_rows", "impact_fit", "impact_transform"]


# ---- the import graph ----------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _import_graph() -> tuple[dict[str, set[str]], dict[str, list[tuple[str, str]]]]:
    """``(edges, names)``: the privlearn modules each module imports (top-level AND inside
    functions), and the ``(module, name)`` pairs of its ``from privlearn... import name``."""
    root = pathlib.Path(privlearn.__file__).parent
    files = {}
    for p in list(root.rglob("*.py")) + list(root.rglob("*.pyi")):
        parts = list(p.relative_to(root.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        files[".".join(parts[:-1] if is_pkg else parts)] = (p, is_pkg)

    def resolve(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = {}
    names: dict[str, list[tuple[str, str]]] = {}
    for mod, (path, is_pkg) in files.items():
        package = mod if is_pkg else mod.rpartition(".")[0]
        out, pairs = set(), []
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                out |= {t for t in (resolve(a.name) for a in node.names) if t}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package
                    for _ in range(node.level - 1):
                        up = up.rpartition(".")[0]
                    base = up + ("." + base if base else "")
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    target = sub if sub in files else resolve(base)
                    if target:
                        out.add(target)
                        if sub not in files:
                            pairs.append((target, a.name))
        out.discard(mod)
        edges[mod], names[mod] = out, pairs
    return edges, names


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def _in_distributed(mod: str) -> bool:
    return mod == "privlearn.distributed" or mod.startswith("privlearn.distributed.")


def test_no_module_outside_the_backend_imports_it():
    edges, _ = _import_graph()
    assert "privlearn.distributed.encoding" in edges  # the graph sees the package
    bad = sorted(
        f"{m} -> {t}"
        for m, targets in edges.items()
        if not _in_distributed(m)
        for t in targets
        if _in_distributed(t)
    )
    assert not bad, bad


def test_no_import_cycle():
    edges, _ = _import_graph()
    assert "privlearn.encoding.impact" not in edges["privlearn.distributed.encoding"]
    assert _cycles(edges) == []


def test_backend_imports_no_private_helper_of_the_estimators():
    """The Dask back-end takes only public names (or whole shared modules such as ``_core``)
    from outside its package."""
    _, names = _import_graph()
    private = sorted(
        (target, name)
        for m, pairs in names.items()
        if _in_distributed(m)
        for target, name in pairs
        if not _in_distributed(target) and name.startswith("_") and not name.startswith("__")
    )
    assert private == [], private
