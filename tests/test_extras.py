"""Every optional peer an extra of pyproject.toml promises can be imported.

``pip install ".[experiments]"`` once brought diffprivlib 0.6.6 beside scikit-learn 1.9, where
``import diffprivlib`` fails; a promised import that does not work is a broken extra. For every
requirement of every extra, the module it provides is imported (diffprivlib through
:func:`privlearn.experiments.peers.import_diffprivlib`, which applies the documented shims). The
``test`` extra is installed wherever this suite runs (the README's test command), so each of its
peers must be present; a peer of another extra that is not installed is skipped, and one that is
installed must import.
"""

from __future__ import annotations

import importlib.metadata as metadata
import re
import warnings
from pathlib import Path

import pytest

from privlearn.experiments.peers import PeerUnavailable, import_peer

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None  # type: ignore[assignment]

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"

#: Distribution name -> the modules it promises (where they differ from the name).
MODULES = {
    "scikit-learn": ["sklearn"],
    "dask": ["dask", "dask.array", "dask.dataframe"],
    "dp-accounting": ["dp_accounting"],
    "pytest-xdist": ["xdist"],
    "prv-accountant": ["prv_accountant"],
    "sphinx-gallery": ["sphinx_gallery"],
    "category-encoders": ["category_encoders"],
}


def _extras() -> dict[str, list[str]]:
    if tomllib is None:
        pytest.skip("reading pyproject.toml needs Python >= 3.11 (tomllib)")
    if not PYPROJECT.is_file():
        pytest.skip("pyproject.toml not beside the tests (installed package)")
    with PYPROJECT.open("rb") as f:
        return tomllib.load(f)["project"]["optional-dependencies"]


def _name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, requirement
    return re.sub(r"[._]+", "-", match.group(1)).lower()


def _cases() -> list[tuple[str, str]]:
    try:
        extras = _extras()
    except pytest.skip.Exception:
        return []
    return [(extra, _name(req)) for extra, reqs in extras.items() for req in reqs]


CASES = _cases()


def _installed(dist: str) -> bool:
    try:
        metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(not CASES, reason="pyproject.toml is not readable here")
@pytest.mark.parametrize(("extra", "dist"), CASES, ids=[f"{e}-{d}" for e, d in CASES])
def test_promised_peer_imports(extra: str, dist: str) -> None:
    if not _installed(dist):
        if extra == "test":
            pytest.fail(f"{dist} is in the test extra but not installed")
        pytest.skip(f"{dist} (extra {extra!r}) is not installed here")
    for module in MODULES.get(dist, [dist.replace("-", "_")]):
        try:
            imported = import_peer(module)
        except PeerUnavailable as exc:
            pytest.fail(f"extra {extra!r} promises {dist}, but {exc}")
        assert imported.__name__ == module


def test_diffprivlib_models_fit_after_shims() -> None:
    """The shimmed diffprivlib does its job: a private logistic regression and k-means fit."""
    if not _installed("diffprivlib"):
        pytest.skip("diffprivlib is not installed")
    import numpy as np

    from privlearn.experiments.peers import import_diffprivlib, sklearn_logreg_shim

    dpl = import_diffprivlib()
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with sklearn_logreg_shim():
            model = dpl.models.LogisticRegression(epsilon=1.0, data_norm=1.0, random_state=0)
            model.fit(X, y)
    assert model.coef_.shape == (1, 3)
    # diffprivlib's deprecated L-BFGS-B options (SciPy >= 1.16) stay inside the shim
    assert not [w for w in seen if "`disp` and `iprint`" in str(w.message)], seen
    km = dpl.models.KMeans(n_clusters=2, epsilon=1.0, bounds=([-1.0] * 3, [1.0] * 3))
    km.fit(X)
    assert km.cluster_centers_.shape == (2, 3)


def test_category_encoders_peers_code_rows_without_pandas_deprecation_noise() -> None:
    """category_encoders sets pandas' deprecated 'future.no_silent_downcasting' option on every
    call (a Pandas4Warning under pandas >= 3: 200 of them in a reproduction run): the impact
    experiment keeps it inside its call of the peer, and nothing else is said."""
    if not _installed("category-encoders"):
        pytest.skip("category_encoders is not installed")
    import numpy as np
    import pandas as pd
    from conftest import only_warnings

    from privlearn.experiments.impact.methods import METHODS, _code_fit_predict, _peer

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("abcde"), 200), "b": rng.choice(list("xyz"), 200)})
    y = rng.integers(0, 2, 200)
    for method in (m for m in METHODS if m.mode.startswith("ce_")):
        with only_warnings():
            mask, ptr, pte, _ = _code_fit_predict(_peer(method, 0), X, y, X.iloc[:50])
        assert mask.all() and ptr.shape == (200,) and pte.shape == (50,)


def test_missing_peer_is_a_clear_error() -> None:
    with pytest.raises(PeerUnavailable, match="no_such_peer_module"):
        import_peer("no_such_peer_module")
