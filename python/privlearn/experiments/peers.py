"""Peer libraries the reproductions and benchmarks run beside privlearn (never the library itself).

The ``experiments`` extra installs diffprivlib 0.6.6 (the latest release), which does not import
under scikit-learn >= 1.9 as released: its forest module imports ``DOUBLE`` / ``DTYPE`` from
``sklearn.tree._tree`` (gone in 1.9), and its ``LogisticRegression`` hands ``multi_class`` to
scikit-learn's constructor (gone in 1.8). :func:`import_diffprivlib` applies the two smallest
shims that make it work and says which it applied (:data:`SHIMS_APPLIED`); where a peer cannot
work at all, :class:`PeerUnavailable` carries the reason, and the comparison that needs it is
skipped with that reason printed in its output.

Every peer an extra promises is imported by ``tests/test_extras.py``.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = [
    "PeerUnavailable",
    "SHIMS_APPLIED",
    "import_diffprivlib",
    "import_peer",
    "sklearn_logreg_shim",
]

#: Human-readable notes of the compatibility shims applied so far in this process.
SHIMS_APPLIED: list[str] = []


class PeerUnavailable(ImportError):
    """A peer library is not installed or cannot work with the installed dependencies."""


def import_peer(module: str) -> Any:
    """Import a peer module by name, as :class:`PeerUnavailable` (with the reason) on failure."""
    if module == "diffprivlib":
        return import_diffprivlib()
    try:
        return importlib.import_module(module)
    except Exception as exc:  # an installed peer can fail with any error at import
        raise PeerUnavailable(f"{module} cannot be imported: {type(exc).__name__}: {exc}") from exc


def _patch_sklearn_tree() -> bool:
    """Give ``sklearn.tree._tree`` the ``DOUBLE`` / ``DTYPE`` names diffprivlib's forest imports
    (their former values ``np.float64`` / ``np.float32``); returns whether a patch was needed."""
    import sklearn.tree._tree as tree

    patched = False
    for name, value in (("DOUBLE", np.float64), ("DTYPE", np.float32)):
        if not hasattr(tree, name):
            setattr(tree, name, value)
            patched = True
    return patched


@contextlib.contextmanager
def sklearn_logreg_shim() -> Iterator[None]:
    """While diffprivlib's ``LogisticRegression`` is built and fitted, let scikit-learn's
    constructor ignore the arguments it no longer takes (``multi_class``; ``penalty="l2"``, its
    default). diffprivlib fits one-vs-rest itself, so dropping ``multi_class`` changes nothing.
    A no-op on a scikit-learn whose constructor still takes ``multi_class``.

    Also quiets the one DeprecationWarning that diffprivlib's own solver call raises under
    SciPy >= 1.16 (it passes L-BFGS-B's deprecated ``disp``/``iprint``): it is addressed to
    diffprivlib's code, and its caller can do nothing about it."""
    import sklearn.linear_model as lm

    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore",
            message=r"scipy\.optimize: The `disp` and `iprint` options",
            category=DeprecationWarning,
        )
        yield from _logreg_init_shim(lm)


def _logreg_init_shim(lm: Any) -> Iterator[None]:
    original = lm.LogisticRegression.__init__
    params = inspect.signature(original).parameters
    if "multi_class" in params:
        yield
        return

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs = {k: v for k, v in kwargs.items() if k in params}
        if params["penalty"].default == "deprecated":
            kwargs.pop("penalty", None)
        original(self, *args, **kwargs)

    init.__signature__ = inspect.signature(original)  # type: ignore[attr-defined]
    lm.LogisticRegression.__init__ = init  # type: ignore[method-assign]
    try:
        yield
    finally:
        lm.LogisticRegression.__init__ = original  # type: ignore[method-assign]


def _note(text: str) -> None:
    if text not in SHIMS_APPLIED:
        SHIMS_APPLIED.append(text)


def import_diffprivlib() -> Any:
    """The ``diffprivlib`` module, importable under the installed scikit-learn.

    Returns
    -------
    module
        ``diffprivlib`` (with :mod:`diffprivlib.models` imported).

    Raises
    ------
    PeerUnavailable
        diffprivlib is not installed, or fails to import even with the shims (the message says
        why). Fit diffprivlib's ``LogisticRegression`` inside :func:`sklearn_logreg_shim`.
    """
    try:
        importlib.import_module("diffprivlib.models")
        return sys.modules["diffprivlib"]
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] == "diffprivlib":
            raise PeerUnavailable(
                "diffprivlib is not installed (pip install '.[experiments]')"
            ) from exc
        first = exc
    except ImportError as exc:
        first = exc
    if _patch_sklearn_tree():
        _note(
            "diffprivlib imports sklearn.tree._tree.DOUBLE/DTYPE, removed in scikit-learn 1.9: "
            "set to np.float64/np.float32 (used by its random forest only)"
        )
    for name in [m for m in sys.modules if m == "diffprivlib" or m.startswith("diffprivlib.")]:
        del sys.modules[name]
    try:
        importlib.import_module("diffprivlib.models")
    except Exception as exc:
        raise PeerUnavailable(
            f"diffprivlib cannot be imported with this scikit-learn: {first}; after the shim: {exc}"
        ) from exc
    import sklearn.linear_model as lm

    if "multi_class" not in inspect.signature(lm.LogisticRegression.__init__).parameters:
        _note(
            "diffprivlib passes multi_class to scikit-learn's LogisticRegression, which no longer "
            "takes it: dropped while a diffprivlib model is built (sklearn_logreg_shim)"
        )
    return sys.modules["diffprivlib"]
