"""Nearest-centre assignment (:func:`assign`, overflow-safe, the same labels for any partition
of the rows) and the k-means cost (:func:`kmeans_cost`, Chaturvedi, Nguyen & Xu 2021, Section
2.1).

Belongs here: exact, non-private functions of rows and centres (labels, distances, cost).
Not here: anything that adds noise (:mod:`privlearn.cluster._noisy_average`).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

__all__ = ["assign", "kmeans_cost"]

#: Rows (and centres) whose largest absolute entry is at most this are assigned by a k-d tree
#: on plain squared distances, which cannot overflow (``d * (2 * 2**400)**2 < 2**1024``).
_ASSIGN_SAFE = 2.0**400

#: Entries per block of :func:`assign` (rows times columns): 8 MiB of float64.
_ASSIGN_BLOCK_ENTRIES = 1 << 20


def assign(points: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """Index of the nearest centre of every point (ties: lowest index), always in
    ``[0, len(centers))``.

    A k-d tree of the centres answers each point on its own (no blocked matrix products, whose
    rounding may depend on the number of points), so a partition of the points gets the same
    labels as the whole array. Points or centres with entries above ``2**400`` (whose squared
    distances would overflow to ``inf``: the tree then answers "no neighbour") are assigned by
    :func:`_assign_scaled`, also row by row."""
    points = np.asarray(points, dtype=np.float64)
    centers = np.asarray(centers, dtype=np.float64)
    labels = np.empty(points.shape[0], dtype=np.int64)
    if points.shape[0] == 0:
        return labels
    if centers.size and float(np.abs(centers).max()) > _ASSIGN_SAFE:
        labels[:] = _assign_scaled(points, centers)
        return labels
    # by blocks of rows: the temporaries (|x|, the easy rows' copy) are a block's, not X's
    hard = np.empty(points.shape[0], dtype=bool)
    tree = cKDTree(centers)
    step = max(1, _ASSIGN_BLOCK_ENTRIES // max(1, points.shape[1]))
    for lo in range(0, points.shape[0], step):
        block = points[lo : lo + step]
        hb = hard[lo : lo + step]
        hb[:] = np.abs(block).max(axis=1) > _ASSIGN_SAFE
        if hb.any():
            easy = ~hb
            if easy.any():
                labels[lo : lo + step][easy] = tree.query(block[easy], k=1)[1]
        else:
            labels[lo : lo + step] = tree.query(block, k=1)[1]
    if hard.any():  # rare: all of them at once, as before
        labels[hard] = _assign_scaled(points[hard], centers)
    return labels


def _assign_scaled(points: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """Nearest centre without overflow: ``argmin_j |c_j|**2 - 2 <x, c_j>`` (the squared
    distance less ``|x|**2``, and less ``min_j |c_j|**2``), scaled per row by
    ``2**-(e_x + e_c)`` (exact powers of two, ``e_x`` and ``e_c`` the binary exponents of the
    row's and of the centres' largest entries), so the dot products are at most ``d`` in
    magnitude."""
    e_c = int(np.frexp(float(np.abs(centers).max()))[1]) if centers.size else 0
    Cs = np.ldexp(centers, -e_c)  # |entries| < 1
    e_x = np.frexp(np.abs(points).max(axis=1))[1]
    Xs = np.ldexp(points, -e_x[:, None])  # |entries| < 1
    c_max = np.abs(Cs).max(axis=1)
    safe = np.where(c_max > 0, c_max, 1.0)
    c_norm = c_max * np.linalg.norm(Cs / safe[:, None], axis=1)  # |c_j| 2**-e_c, no underflow
    # |c|**2 2**-(e_x + e_c) = (|c| 2**-e_c)**2 * 2**(e_c - e_x), less the same term of the
    # smallest centre (a constant per row: the argmin is unchanged), so that centres of equal
    # norm are told apart by <x, c> even when |c|**2 dwarfs it (huge centres, ordinary rows);
    # a term that overflows to inf belongs to a centre that cannot be the nearest
    sq = c_norm * c_norm
    with np.errstate(over="ignore"):
        first = np.ldexp((sq - sq.min())[None, :], (e_c - e_x)[:, None])
    score = first - 2.0 * (Xs @ Cs.T)
    return np.argmin(score, axis=1).astype(np.int64)


def kmeans_cost(X: np.ndarray, centers: np.ndarray) -> float:
    """``sum_i min_j ||x_i - c_j||**2`` (the k-means objective, Section 2.1)."""
    from sklearn.metrics import pairwise_distances_argmin_min

    from privlearn.parallel import fork_safe_threads

    with fork_safe_threads():  # scikit-learn's OpenMP reduction: one thread after fork()
        _, dist = pairwise_distances_argmin_min(X, centers)
    return float(np.dot(dist, dist))
