"""The data-independent Johnson-Lindenstrauss map of the max-cover and Balcan et al. fits:
a Gaussian ``(d, p)`` matrix and the projection of the rows into the unit ball of the
``p``-dimensional space (Chaturvedi, Nguyen & Xu 2021, Algorithm 2, step 1).

Belongs here: maps of the rows to a lower dimension. Not here: the grid of the max cover
(:mod:`privlearn.cluster.maxcover`) or the SimHash hyperplanes of the LSH coreset
(:mod:`privlearn.cluster.lsh_coreset`).
"""

from __future__ import annotations

import math

import numpy as np

from privlearn.cluster._ball import project_ball
from privlearn.random import Stream

__all__ = ["jl_matrix", "jl_project", "project_rows"]


def jl_project(
    X: np.ndarray, radius: float, p: int, stream: Stream
) -> tuple[np.ndarray, np.ndarray]:
    """``Y = X G / radius`` with ``G`` a data-independent ``(d, p)`` Gaussian matrix of entries
    ``N(0, 1/p)`` (Johnson-Lindenstrauss), rows projected (not rescaled) into the unit ball.
    Returns ``(Y, G)``."""
    G = jl_matrix(X.shape[1], p, stream)
    return project_rows(X, G, radius), G


def jl_matrix(d: int, p: int, stream: Stream) -> np.ndarray:
    """The data-independent ``(d, p)`` Gaussian map of :func:`jl_project`."""
    return stream.normal(0, d * p).reshape(d, p) / math.sqrt(p)


def project_rows(X: np.ndarray, G: np.ndarray, radius: float) -> np.ndarray:
    """``project_ball(X G / radius)`` with the product summed over ``d`` in order, row by row
    (not by BLAS, whose blocking may depend on the number of rows): a partition of the rows
    gets the bits of the whole array. Blocks of rows keep the work in cache."""
    out = np.empty((X.shape[0], G.shape[1]))
    step = 1 << 14
    for lo in range(0, X.shape[0], step):
        Xb = X[lo : lo + step]
        acc = Xb[:, 0:1] * G[0]
        for j in range(1, X.shape[1]):
            acc += Xb[:, j : j + 1] * G[j]
        out[lo : lo + step] = acc / radius
    return project_ball(out)
