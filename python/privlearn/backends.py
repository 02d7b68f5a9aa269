"""Distributed back-ends: the interface the estimators call, and the registry that finds the
back-end of an input.

What belongs here: the abstract interface (:class:`DistributedBackend`: every operation an
estimator needs from a back-end that holds the data elsewhere), the base of a back-end's
validated row sets (:class:`DistributedRows`), and the registry (:func:`register_backend`,
:func:`backend_for`, :func:`backend_for_array`, :func:`register_plugin`). What does not: any
back-end's implementation. :mod:`privlearn.distributed` implements this interface for Dask
(:class:`privlearn.distributed.DaskBackend`); a third party registers its own with
:func:`register_backend`.

The imports point one way: the estimators (``linear/``, ``cluster/``, ``encoding/``, ...)
import this module and never a back-end; a back-end imports this module to register itself
and the estimators' public or explicitly shared helpers, never their private ones. This module
imports no back-end and no back-end library at import time: when an input's type comes from a
package a known plug-in serves (:data:`PLUGINS`: ``dask`` -> ``privlearn.distributed``),
:func:`backend_for` imports the plug-in by name, and the plug-in registers itself on import.
A type can only come from a package that is already loaded, so in-memory data never load dask.

Not to be confused with the estimators' ``backend="core" | "reference"`` parameter, which
picks the C++ core or its numpy twin for in-memory data.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "PLUGINS",
    "DistributedBackend",
    "DistributedRows",
    "backend_for",
    "backend_for_array",
    "register_backend",
    "register_plugin",
    "registered_backends",
    "unregister_backend",
]


class DistributedRows:
    """Base of a back-end's validated design matrix (rows held where the data live).

    A linear fit asks ``isinstance(X, DistributedRows)`` to know that its rows are distributed,
    without naming a back-end. A subclass sets :attr:`shape` (public: ``(n_rows, n_columns)``)
    and implements :meth:`map_rows`; its back-end's :meth:`DistributedBackend.handles` must
    accept it.
    """

    shape: tuple[int, int]

    @property
    def ndim(self) -> int:
        return 2

    def map_rows(self, func: Callable[[np.ndarray], np.ndarray], n_columns: int) -> Any:
        """``func`` applied to every block of rows (a per-row map: the result must not depend
        on how the rows are split when ``func`` treats each row on its own), lazily; returns a
        row set of the same back-end with ``n_columns`` columns."""
        raise NotImplementedError(f"{type(self).__name__} does not implement map_rows")


class DistributedBackend:
    """What the estimators need from a back-end that fits on data held elsewhere.

    Subclasses set :attr:`name` and implement :meth:`handles`; every other operation is
    optional: the default raises ``NotImplementedError`` naming the back-end and the
    operation, so a back-end that serves only some estimators says so when another is given
    its data. Every operation must give the single-machine result (the estimators' privacy
    statements are those of the in-memory fit).

    Groups of operations (the estimator that calls them):

    - input: :meth:`handles`, :meth:`is_array`, :meth:`check_dense_chunks`;
    - linear fits (``privlearn.linear``): :meth:`as_rows`, :meth:`as_target`,
      :meth:`rows_above`, :meth:`distinct`, :meth:`outside`, :meth:`map_values`,
      :meth:`gather` and the trainers :meth:`sgd_train`, :meth:`softmax_sgd_train`,
      :meth:`scd_train` (the arguments and results of :func:`privlearn.linear.sgd_train`,
      :func:`privlearn.linear.softmax_sgd_train`, :func:`privlearn.linear.scd_train`, plus
      ``client`` and ``verbose``);
    - k-means (``privlearn.cluster.DPKMeans``): :meth:`kmeans_rows`;
    - impact coding (``privlearn.encoding.ImpactEncoder``): :meth:`impact_fit`,
      :meth:`impact_transform`, :meth:`impact_fit_transform`.
    """

    #: Short name of the back-end (one registered back-end per name).
    name: str = ""

    def _unsupported(self, what: str) -> NotImplementedError:
        who = self.name or type(self).__name__
        return NotImplementedError(f"the {who} back-end does not support {what}")

    # ---- input ---------------------------------------------------------------------------------
    def handles(self, obj: Any) -> bool:
        """Whether ``obj`` is one of this back-end's collections (or a row set it made)."""
        raise NotImplementedError  # pragma: no cover - every back-end implements it

    def is_array(self, obj: Any) -> bool:
        """Whether ``obj`` is this back-end's n-d array (what linear fits and k-means take;
        its data frames are not)."""
        return False

    def check_dense_chunks(self, X: Any, name: str = "X") -> None:
        """Refuse (``TypeError``) an array whose blocks are not dense numpy arrays (the
        default accepts every array)."""

    # ---- linear fits ---------------------------------------------------------------------------
    def as_rows(self, X: Any, name: str = "X") -> DistributedRows:
        """A validated design matrix (2-D, real, float64) from this back-end's array ``X``."""
        raise self._unsupported("linear fits")

    def as_target(self, y: Any, rows: DistributedRows, name: str = "y", *,
                  numeric: bool = True) -> Any:  # fmt: skip
        """``y`` (this back-end's array or array-like, 1-D, one value per row of ``rows``)
        split like ``rows``: float64 when ``numeric``, else as given (class labels)."""
        raise self._unsupported("linear fits")

    def rows_above(
        self, rows: DistributedRows, row_values: Callable[[np.ndarray], np.ndarray], limit: float
    ) -> tuple[int, int, float]:
        """``(count, first, value)``: how many rows have ``row_values(row) > limit``, the index
        of the first one and its value (``(0, -1, nan)`` when none); ``row_values`` maps a
        block of rows to one value per row."""
        raise self._unsupported("row checks")

    def distinct(self, y: Any) -> np.ndarray:
        """The sorted distinct values of the 1-D array ``y`` (gathered on the driver)."""
        raise self._unsupported("label sets")

    def outside(self, y: Any, classes: np.ndarray) -> np.ndarray:
        """The values of ``y`` that are not in ``classes`` (empty when there are none; gathered
        only to name them in an error)."""
        raise self._unsupported("label sets")

    def map_values(self, y: Any, func: Callable[[np.ndarray], np.ndarray]) -> Any:
        """``func`` applied elementwise (block by block, lazily) to the 1-D array ``y``; float64
        result split like ``y``."""
        raise self._unsupported("target maps")

    def gather(self, y: Any) -> np.ndarray:
        """``y`` as a numpy array on the driver."""
        raise self._unsupported("gathering")

    def sgd_train(self, X: Any, y: Any, **kwargs: Any) -> Any:
        """:func:`privlearn.linear.sgd_train` on this back-end's rows."""
        raise self._unsupported("DP-SGD")

    def softmax_sgd_train(self, X: Any, y: Any, **kwargs: Any) -> Any:
        """:func:`privlearn.linear.softmax_sgd_train` on this back-end's rows."""
        raise self._unsupported("multinomial DP-SGD")

    def scd_train(self, X: Any, y: Any, **kwargs: Any) -> Any:
        """:func:`privlearn.linear.scd_train` on this back-end's rows."""
        raise self._unsupported("DP-SCD")

    # ---- k-means -------------------------------------------------------------------------------
    def kmeans_rows(self, X: Any, verbose: int = 1) -> Any:
        """The rows of ``X`` with the data operations of a :class:`privlearn.cluster.DPKMeans`
        fit (the methods of its in-memory rows; ``close()`` ends the fit's progress bar)."""
        raise self._unsupported("k-means")

    # ---- impact coding -------------------------------------------------------------------------
    def impact_fit(self, enc: Any, X: Any, y: Any, groups: Any = None) -> Any:
        """Fit the :class:`~privlearn.encoding.ImpactEncoder` ``enc`` on this back-end's data."""
        raise self._unsupported("impact coding")

    def impact_transform(self, enc: Any, X: Any) -> Any:
        """Code this back-end's data frame ``X`` with the fitted encoder ``enc``."""
        raise self._unsupported("impact coding")

    def impact_fit_transform(self, enc: Any, X: Any, y: Any, groups: Any = None) -> Any:
        """Fit ``enc`` and code the training rows as its ``mode`` prescribes."""
        raise self._unsupported("impact coding")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


# ---- registry ------------------------------------------------------------------------------------
_REGISTERED: list[DistributedBackend] = []

#: Known plug-ins: the top-level package an input's type comes from -> the module that registers
#: the back-end for it when imported (by :func:`backend_for`, on the first such input).
PLUGINS: dict[str, str] = {
    "dask": "privlearn.distributed",
    "dask_expr": "privlearn.distributed",  # dask.dataframe collections of dask < 2025
    "distributed": "privlearn.distributed",
}
#: Attributes that mark a collection of a known plug-in whatever its type's package (dask's
#: collection protocol).
_PLUGIN_ATTRIBUTES: dict[str, str] = {"__dask_graph__": "privlearn.distributed"}


def register_backend(backend: DistributedBackend) -> DistributedBackend:
    """Register ``backend`` (replacing a registered back-end of the same name) and return it.

    Raises
    ------
    TypeError
        ``backend`` is not a :class:`DistributedBackend` instance.
    ValueError
        Its ``name`` is empty.
    """
    if not isinstance(backend, DistributedBackend):
        raise TypeError(
            f"backend must be a privlearn.backends.DistributedBackend instance, got "
            f"{type(backend).__name__}"
        )
    if not isinstance(backend.name, str) or not backend.name:
        raise ValueError("a back-end needs a non-empty name (its class attribute name)")
    _REGISTERED[:] = [b for b in _REGISTERED if b.name != backend.name]
    _REGISTERED.append(backend)
    return backend


def unregister_backend(name: str) -> DistributedBackend | None:
    """Remove the back-end registered as ``name`` and return it (``None`` if there is none)."""
    for i, b in enumerate(_REGISTERED):
        if b.name == name:
            return _REGISTERED.pop(i)
    return None


def registered_backends() -> tuple[DistributedBackend, ...]:
    """The registered back-ends, in registration order."""
    return tuple(_REGISTERED)


def register_plugin(package: str, module: str) -> None:
    """Discover a back-end lazily: when an input's type comes from ``package`` (its top-level
    name), :func:`backend_for` imports ``module``, which must register the back-end."""
    if not (isinstance(package, str) and package and isinstance(module, str) and module):
        raise ValueError("package and module must be non-empty strings")
    PLUGINS[package] = module


def _registered_for(obj: Any) -> DistributedBackend | None:
    for b in _REGISTERED:
        if b.handles(obj):
            return b
    return None


def _plugin_for(obj: Any) -> str | None:
    """The plug-in module that serves ``obj``'s type, if a known one does (type inspection
    only: nothing is imported)."""
    for cls in type(obj).__mro__:
        top = (getattr(cls, "__module__", None) or "").partition(".")[0]
        if top in PLUGINS:
            return PLUGINS[top]
    for attr, module in _PLUGIN_ATTRIBUTES.items():
        if hasattr(type(obj), attr):
            return module
    return None


def backend_for(*objs: Any) -> DistributedBackend | None:
    """The back-end that handles the first of ``objs`` one handles, or ``None`` (in-memory
    data: numpy, scipy.sparse, pandas, lists, ``None``).

    A registered back-end answers first (:meth:`DistributedBackend.handles`); otherwise, when
    an object's type comes from a package of :data:`PLUGINS`, that plug-in module is imported
    (it registers its back-end) and asked again.
    """
    for obj in objs:
        if obj is None:
            continue
        found = _registered_for(obj)
        if found is None:
            module = _plugin_for(obj)
            if module is not None and module not in sys.modules:
                importlib.import_module(module)
                found = _registered_for(obj)
        if found is not None:
            return found
    return None


def backend_for_array(obj: Any) -> DistributedBackend | None:
    """The back-end whose n-d array ``obj`` is (:meth:`DistributedBackend.is_array`), or
    ``None``: the input of a linear fit or of k-means that a back-end runs."""
    found = backend_for(obj)
    return found if found is not None and found.is_array(obj) else None
