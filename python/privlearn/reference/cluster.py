"""Pure-numpy twins of the grid max-cover routines of ``privlearn._core`` (small inputs only).

Same signatures, same ChaCha20 addresses and the same floating-point operations as
``cpp/src/grid.cpp`` and ``cpp/src/maxcover.cpp``, so for equal keys the picks are identical
(Chaturvedi, Nguyen & Xu 2021, Algorithm 3 and Claims 4.1-4.2; see
:func:`privlearn.cluster.maxcover.maxcover_candidates` for the algorithm).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privlearn.reference.random import Stream

__all__ = [
    "MAX_GRID_DIM",
    "MEMBER_OFFSET",
    "clipped_cluster_sums",
    "grid_cover",
    "grid_offsets",
    "lsh_codes",
    "maxcover_candidates",
    "nearest_centres",
]

MAX_GRID_DIM = 16
MEMBER_OFFSET = 1 << 34
_U64 = 1 << 64


def grid_offsets(p: int, rho: float, max_offsets: int = 50_000_000) -> np.ndarray:
    """``{z in Z^p : sum_j dist(z_j, [0, 1])**2 <= rho**2}`` in lexicographic order, (m, p)."""
    if not 1 <= p <= MAX_GRID_DIM:
        raise ValueError(f"grid dimension must lie in [1, {MAX_GRID_DIM}], got {p}")
    if not (rho > 0.0 and math.isfinite(rho)) or rho > 1e6:
        raise ValueError(f"rho must be a finite number in (0, 1e6], got {rho}")
    r = math.floor(rho)
    values = np.arange(-r, r + 2, dtype=np.int64)
    dist2 = np.where(values <= 0, -values, values - 1).astype(np.float64) ** 2
    # lexicographic enumeration with the C++ pruning order: rest = rho^2 - d_0^2 - d_1^2 - ...
    rows = np.zeros((1, 0), dtype=np.int64)
    rest = np.array([rho * rho])
    for _ in range(p):
        new_rest = rest[:, None] - dist2[None, :]
        keep = new_rest >= 0.0
        parent, pos = np.nonzero(keep)
        rows = np.concatenate([rows[parent], values[pos][:, None]], axis=1)
        rest = new_rest[parent, pos]
    if rows.shape[0] > max_offsets:
        raise ValueError(f"the offset set has more than max_offsets = {max_offsets} members")
    return rows.astype(np.int32)


def grid_cover(
    Y: np.ndarray,
    radius: float,
    unit: float,
    max_offsets: int = 50_000_000,
    n_threads: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Grid points within ``radius`` of every row of ``Y``: ``(coords, point_ptr, point_grid)``.

    Ids are assigned in order of first discovery (rows in order, offsets lexicographic).
    """
    del n_threads
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    n, p = Y.shape
    offsets = grid_offsets(p, radius / unit, max_offsets).astype(np.int64)
    hits, keys_parts = [], []
    step = max(1, 2_000_000 // max(1, offsets.shape[0]))  # bounded memory: chunks of points
    for lo in range(0, n, step):
        Yc = Y[lo : lo + step]
        base = np.floor(Yc / unit).astype(np.int64)
        g = base[:, None, :] + offsets[None, :, :]  # (chunk, m, p)
        s = np.zeros(g.shape[:2])
        for j in range(p):  # sequential sum over coordinates, as in the C++ loop
            d = Yc[:, j][:, None] - unit * g[:, :, j].astype(np.float64)
            s = s + d * d
        h = s <= radius * radius
        hits.append(h.sum(axis=1))
        keys_parts.append(g[h])
    counts = np.concatenate(hits)
    point_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    keys = np.concatenate(keys_parts, axis=0)  # point order, then offset order
    if keys.shape[0] == 0:
        return np.zeros((0, p), dtype=np.int32), point_ptr, np.zeros(0, dtype=np.int32)
    uniq, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # unique rows by first discovery
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    point_grid = rank[inverse.reshape(-1)].astype(np.int32)
    return uniq[order].astype(np.int32), point_ptr, point_grid


def _lexicographic_ids(coords: np.ndarray, point_grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Grid ids renumbered in lexicographic order of the coordinates (the order of the member
    draw of a pick: the ``j``-th grid point of a cover class in this order)."""
    if coords.shape[0] == 0:
        return coords, point_grid
    order = np.lexsort(coords.T[::-1])  # the first coordinate most significant
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return coords[order], rank[point_grid].astype(np.int32)


class _Cursor:
    """``RowCursor``: raws of one row from ``offset`` on; ``next_below`` by exact rejection."""

    def __init__(self, stream: Stream, row: int, offset: int) -> None:
        self._stream, self._row, self._offset = stream, row, offset

    def next_raw(self) -> int:
        raw = self._stream._row_raws(np.array([self._row]), self._offset, 1)[0, 0]
        self._offset += 1
        return int(raw)

    def next_below(self, m: int) -> int:
        t = (_U64 - m) % m
        x = self.next_raw()
        while t != 0 and x >= _U64 - t:
            x = self.next_raw()
        return x % m


def maxcover_candidates(
    Y: np.ndarray,
    radii: list[float],
    grid_factor: float,
    picks: int,
    eps_pick: float,
    key: bytes,
    stream: int,
    max_offsets: int = 50_000_000,
    n_threads: int = 0,
    select: Any = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Numpy twin of ``_core.maxcover_candidates``: ``(centers, level, covered, remainder,
    n_grid, n_offsets)``; ``select(level, row, m, sizes)`` draws each pick's cover class
    (required for a finite ``eps_pick``; the core calls the same function)."""
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    n, p = Y.shape
    if n < 1 or not 1 <= p <= MAX_GRID_DIM:
        raise ValueError("Y must have at least one row and between 1 and 16 columns")
    if not np.isfinite(Y).all():
        raise ValueError("Y must be finite")
    if (np.einsum("ij,ij->i", Y, Y) > 1.0 + 1e-9).any():
        raise ValueError("a row of Y lies outside the unit ball")
    if not radii or any(not (0.0 < r <= 4.0) for r in radii):
        raise ValueError("radii must be a non-empty list of numbers in (0, 4]")
    if not (grid_factor > 0.0) or picks < 1 or not (eps_pick > 0.0):
        raise ValueError("grid_factor and eps_pick must be > 0 and picks >= 1")
    rng = Stream(key=key, stream=stream)
    exact = math.isinf(eps_pick)
    if not exact and select is None:
        raise ValueError("a finite eps_pick needs the class selection (select)")
    centers = np.zeros((len(radii) * picks, p))
    level, covered_out, remainder, n_grid, n_offsets = [], [], [], [], []
    out = 0
    for ell, radius in enumerate(radii):
        unit = grid_factor * radius / math.sqrt(p)
        m = int(math.floor((1.0 + radius) / unit) + 1.0)
        n_offsets.append(grid_offsets(p, radius / unit, max_offsets).shape[0])
        coords, point_ptr, point_grid = grid_cover(Y, radius, unit, max_offsets)
        coords, point_grid = _lexicographic_ids(coords, point_grid)
        n_grid.append(coords.shape[0])
        lookup = {tuple(c): i for i, c in enumerate(coords.tolist())}
        owner = np.repeat(np.arange(n), np.diff(point_ptr))
        by_grid = np.argsort(point_grid, kind="stable")  # points increasing within a grid id
        grid_ptr = np.concatenate([[0], np.cumsum(np.bincount(point_grid, minlength=len(coords)))])
        grid_pts = owner[by_grid]
        cover = np.bincount(point_grid, minlength=coords.shape[0]).astype(np.int64)
        covered = np.zeros(n, dtype=bool)
        for t in range(picks):
            row = ell * picks + t
            classes, sizes = np.unique(cover[cover > 0], return_counts=True)
            choice = 0
            if exact:
                choice = int(classes[-1]) if classes.size else 0
            else:
                top = int(classes[-1]) if classes.size else 0
                class_sizes = [0] * (top + 1)
                for c, size in zip(classes.tolist(), sizes.tolist()):
                    class_sizes[c] = size
                choice = int(select(ell, row, m, class_sizes))
            cursor = _Cursor(rng, row, MEMBER_OFFSET)
            picked = -1
            if choice > 0:
                members = np.flatnonzero(cover == choice)
                picked = int(members[cursor.next_below(members.size)])
                centers[out] = unit * coords[picked].astype(np.float64)
            else:  # a uniform point of the cube with zero cover (redrawn while covered)
                while True:
                    z = [cursor.next_below(2 * m + 1) - m for _ in range(p)]
                    g = lookup.get(tuple(z), -1)
                    if g < 0 or cover[g] == 0:
                        break
                centers[out] = unit * np.array(z, dtype=np.float64)
            newly = 0
            if picked >= 0:
                pts = grid_pts[grid_ptr[picked] : grid_ptr[picked + 1]]
                pts = pts[~covered[pts]]
                newly = int(pts.size)
                covered[pts] = True
                if newly:
                    lens = point_ptr[pts + 1] - point_ptr[pts]
                    starts = np.repeat(point_ptr[pts] - np.cumsum(lens) + lens, lens)
                    idx = starts + np.arange(int(lens.sum()))
                    np.subtract.at(cover, point_grid[idx], 1)
            level.append(ell)
            covered_out.append(newly)
            remainder.append(1 if choice == 0 else 0)
            out += 1
    return (
        centers,
        np.array(level, dtype=np.int64),
        np.array(covered_out, dtype=np.int64),
        np.array(remainder, dtype=np.uint8),
        np.array(n_grid, dtype=np.int64),
        np.array(n_offsets, dtype=np.int64),
    )


# ---- the LSH-tree coreset's row passes (cpp/src/coreset.cpp) -------------------------------
_HALF_BITS = 26
_HALF_MASK = (1 << _HALF_BITS) - 1


def lsh_codes(
    X: np.ndarray, centre: np.ndarray, H: np.ndarray, thresholds: np.ndarray, n_threads: int = 0
) -> np.ndarray:
    """Hash codes of the rows (uint64): bit ``depth - 1 - j`` is
    ``[<x, h_j> - <c, h_j> > t_j]``, each dot product summed over the columns in order (the
    C++ core's operations, so the codes are identical)."""
    del n_threads
    X = np.asarray(X, dtype=np.float64)
    H = np.asarray(H, dtype=np.float64)
    depth = H.shape[0]
    if not 1 <= depth <= 64:
        raise ValueError(f"the code length must lie in [1, 64], got {depth}")
    if not np.isfinite(centre).all():
        raise ValueError("lsh_codes: the centre must be finite")
    ch = np.zeros(depth)
    for k in range(X.shape[1]):
        ch = ch + centre[k] * H[:, k]
    codes = np.zeros(X.shape[0], dtype=np.uint64)
    for j in range(depth):
        s = X[:, 0] * H[j, 0]
        for k in range(1, X.shape[1]):
            s = s + X[:, k] * H[j, k]
        bit = ((s - ch[j]) > thresholds[j]).astype(np.uint64)
        if not np.isfinite(s).all():
            raise ValueError("lsh_codes: X or H has a non-finite entry")
        codes = (codes << np.uint64(1)) | bit
    return codes


def clipped_cluster_sums(
    X: np.ndarray,
    labels: np.ndarray,
    n_cells: int,
    centre: np.ndarray,
    radius: float,
    exponent: int,
    n_threads: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-cell ``(counts, hi, lo)`` of the rows moved to ``centre`` and projected onto
    ``B(0, radius)`` (label ``-1``: skipped), fixed-point parts as
    :func:`privlearn.fixed_point.fixed_point_parts` (same integers as the C++ core)."""
    del n_threads
    X = np.asarray(X, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    if labels.size and (labels.min() < -1 or labels.max() >= n_cells):
        raise ValueError("labels must lie in [-1, n_cells)")
    if exponent > 1000 or not radius < math.ldexp(1.0, exponent - 1):
        raise ValueError("exponent must give one binade of headroom above the radius")
    if not np.isfinite(centre).all():
        raise ValueError("clipped_cluster_sums: the centre must be finite")
    if not np.isfinite(X[labels >= 0]).all():
        raise ValueError("clipped_cluster_sums: X has a non-finite entry")
    U = X - centre
    sq = U[:, 0] * U[:, 0]
    for k in range(1, X.shape[1]):
        sq = sq + U[:, k] * U[:, k]
    far = sq > radius * radius
    scale = radius / np.sqrt(sq[far]) * (1.0 - 2.0**-50)
    U[far] *= scale[:, None]
    q = np.trunc(U * math.ldexp(1.0, 52 - exponent)).astype(np.int64)
    keep = labels >= 0
    counts = np.bincount(labels[keep], minlength=n_cells).astype(np.int64)
    hi = np.zeros((n_cells, X.shape[1]), dtype=np.int64)
    lo = np.zeros((n_cells, X.shape[1]), dtype=np.int64)
    np.add.at(hi, labels[keep], q[keep] >> _HALF_BITS)
    np.add.at(lo, labels[keep], q[keep] & _HALF_MASK)
    return counts, hi, lo


def nearest_centres(X: np.ndarray, C: np.ndarray, n_threads: int = 0) -> np.ndarray:
    """Index of the nearest row of ``C`` for every row of ``X``: squared distances summed over
    the columns in order, ties to the lowest index (the C++ core's operations)."""
    del n_threads
    X = np.asarray(X, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    if C.shape[0] < 1 or C.shape[1] != X.shape[1]:
        raise ValueError("C must have at least one row and X's columns")
    best = np.zeros(X.shape[0])
    arg = np.zeros(X.shape[0], dtype=np.int64)
    for j in range(C.shape[0]):
        diff = X[:, 0] - C[j, 0]
        s = diff * diff
        for q in range(1, X.shape[1]):
            diff = X[:, q] - C[j, q]
            s = s + diff * diff
        if not np.isfinite(s).all():
            raise ValueError("nearest_centres: a squared distance is not finite")
        better = s < best if j else np.ones(X.shape[0], dtype=bool)
        best = np.where(better, s, best)
        arg = np.where(better, j, arg)
    return arg
