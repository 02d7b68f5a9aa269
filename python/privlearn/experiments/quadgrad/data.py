"""The data sets of the quadratic-gradient reproduction and how each is read.

Belongs here: the data sets of Figures 1-3 (:data:`DATASETS`, :data:`OPTIONAL_DATASETS`), the
raw reader shared with Tables 1-2 (:func:`_load_raw`: the HELR files, MNIST 3-vs-8, the iDASH
CSV), :func:`load_dataset` (the paper's scaling with an intercept column) and where a set was
read from (:func:`_source`: the data folder or the copy embedded in privlearn). Not here: the
training runs (:mod:`~privlearn.experiments.quadgrad.simulate`).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

#: Data sets of Figures 1-3 that the shared data folder provides.
DATASETS = ("edin", "lbw", "pcs", "uis", "mnist38")
#: Further data sets of the paper, used when the user's data folder has them.
OPTIONAL_DATASETS = ("nhanes3", "idash")


def _load_raw(name: str, data_home: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of a data set as its file holds it (no scaling, no intercept column).

    Raises
    ------
    FileNotFoundError
        When the data file is not in the data folder (its ``filename`` names the file).
    """
    from privlearn.data import get_data_home, load_helr, load_idash, load_mnist38

    if name == "mnist38":
        return load_mnist38("train", data_home)
    if name == "idash":
        path = get_data_home(data_home) / "idash" / "idash.csv"
        if not path.exists():
            exc = FileNotFoundError(f"iDASH file {path} not found")
            exc.filename = str(path)
            raise exc
        return load_idash(path)
    return load_helr(name, data_home)


def load_dataset(name: str, data_home: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` with ``X = [1, minmax-scaled features]`` and ``y`` in ``{-1, +1}``.

    Raises
    ------
    FileNotFoundError
        When the data file is not in the data folder.
    """
    from privlearn.data import minmax_scale

    X, y = _load_raw(name, data_home)
    with warnings.catch_warnings():
        # bounds from the data: the paper's normalisation, outside any privacy guarantee
        warnings.simplefilter("ignore")
        X = minmax_scale(X)
    return np.ascontiguousarray(np.hstack([np.ones((X.shape[0], 1)), X])), y.astype(np.float64)


def _source(name: str, data_home: Any) -> str:
    """Where the data set was read from: ``"data folder"`` or ``"embedded"``."""
    from privlearn.data import data_source

    relative = {"mnist38": "mnist/train-images-idx3-ubyte.gz", "idash": "idash/idash.csv"}.get(
        name, f"helr/{name}.txt"
    )
    return data_source(relative, data_home)[1]
