"""The data of the k-means comparison: the 64-Gaussian mixture and MNIST.

Belongs here: :func:`_load` (``(X, Lambda, bounds)`` of a data set, subsampled on request) and
what stands in for the paper's data (the MNIST test images embedded in privlearn when the data
folder lacks the training files: :func:`_mnist_test_only`), with the sizes the figure titles
compare against. Not here: the methods (:mod:`~privlearn.experiments.kmeans.methods`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privlearn.experiments.runs import derive_seed

#: Panel titles: the data that ran.
_DATA_TITLES = {"synthetic": "64 Gaussians (synthetic)", "mnist": "MNIST raw pixels"}
_FULL_ROWS = {"synthetic": 50_000, "mnist": 70_000}

_MNIST_TEST_ONLY_NOTE = (
    "mnist: the data folder lacks the MNIST training files, so only the 10,000 test images "
    "embedded in privlearn ran (a SUBSET of the paper's 70,000; `privlearn datasets download "
    "mnist` for all of them)"
)


def _mnist_test_only(data_home: Any) -> bool:
    """Without an explicit data folder and without the MNIST training files, the test images
    (embedded in the package) stand in for the 70,000 rows."""
    from privlearn.data import data_source

    if data_home is not None:
        return False
    train = ("mnist/train-images-idx3-ubyte.gz", "mnist/train-labels-idx1-ubyte.gz")
    test = ("mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz")
    return any(data_source(f)[0] is None for f in train) and all(
        data_source(f)[0] is not None for f in test
    )


def _load(dataset: str, n: int | None, data_home: Any) -> tuple[np.ndarray, float, np.ndarray]:
    """``(X, Lambda, bounds)`` (bounds: per-feature public box for diffprivlib)."""
    if dataset == "synthetic":
        from privlearn.data.synthetic import make_gaussian_mixture

        X, _ = make_gaussian_mixture(
            50_000 if n is None else n, seed=derive_seed("kmeans", "synthetic")
        )
        return X, 11.0, np.array([-11.0, 11.0])
    if dataset == "mnist":
        from privlearn.data import load_mnist

        if _mnist_test_only(data_home):
            X, _ = load_mnist("test")  # the embedded copy (named in the summary)
        else:
            X, _ = load_mnist("all", data_home)
        if n is not None and n < X.shape[0]:
            rng = np.random.default_rng(derive_seed("kmeans", "mnist-subsample"))
            X = X[np.sort(rng.choice(X.shape[0], n, replace=False))]
        return (
            np.ascontiguousarray(X, dtype=np.float64),
            255.0 * math.sqrt(784.0),
            np.array([0.0, 255.0]),
        )
    raise ValueError(f"unknown data set {dataset!r}")
