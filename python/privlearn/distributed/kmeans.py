"""Dask back-end of :class:`privlearn.cluster.DPKMeans` (``method="lsh"`` and
``method="maxcover"``).

:class:`DaskRows` has the data operations of a single-machine fit (``_LocalRows`` in
:mod:`privlearn.cluster._rows`) on a row-chunked ``dask.array``; the estimator's driver code
(budget, noisy count, schedule, proxy k-means, noise) is shared, so the fit equals the
single-machine fit bit for bit (centres and ``privacy_``) for any chunking:

- every per-row computation (norm check or clipping, the JL product, the projection into the
  unit ball, the grid incidence of ``_core.grid_cover``, the nearest centre) is done row by row
  in the same floating-point operations, so a chunk gets the bits of the whole array;
- every reduction is exact: row counts, cover counts and nearest-candidate counts are
  integers; cluster coordinate sums are int64 fixed-point sums
  (:func:`privlearn.cluster._noisy_average.cluster_sums`); the data radius (``radius=None``)
  is a max;
- the greedy max cover (Chaturvedi, Nguyen & Xu 2021, Algorithm 3 with Claim 4.2) keeps each
  chunk's grid incidence and covered flags on its worker; the driver merges the chunks' cover
  counts (additive), numbers the grid points in lexicographic order (as
  ``cpp/src/maxcover.cpp``), and draws every pick itself at the ChaCha20 addresses of
  ``cpp/include/privlearn/cluster/maxcover.hpp`` (the exact class draw of
  :func:`~privlearn.cluster.maxcover.class_selector`, member by exact rejection from offset
  ``2**34``); after a pick, only the chunks holding
  the picked grid point mark their newly covered points and return their cover decrements;
- the LSH coreset (``method="lsh"``, :mod:`privlearn.cluster.lsh_coreset`): the SimHash codes
  are per row (``_core.lsh_codes``; 8 bytes a row come to the driver, which grows the tree);
  each worker recomputes its chunk's codes and cell labels and returns the integer
  fixed-point cell sums of ``_core.clipped_cluster_sums``, added exactly on the driver (as
  are the nearest-centre sums of the private Lloyd rounds).

**Trust.** The driver is trusted: it sees the noiseless cover counts of every grid point and
the exact per-cluster counts and sums (as the single-machine fit does); untrusted sites would
need secure aggregation.

Needs a ``dask.distributed`` client (the greedy keeps per-chunk state on the workers): one
round trip per pick that covers points.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import dask.array as da
import numpy as np

from privlearn.cluster._ball import clip_rows, row_sq_norms
from privlearn.cluster._inputs import data_radius, warn_data_radius
from privlearn.cluster._projection import project_rows
from privlearn.cluster._rows import lsh_cell_sums as _lsh_cell_sums
from privlearn.cluster._rows import lsh_codes as _lsh_codes
from privlearn.cluster._rows import nearest_cluster_sums as _cluster_sums
from privlearn.cluster._rows import nearest_counts as _nearest_counts
from privlearn.cluster._rows import nearest_sums as _nearest_sums
from privlearn.cluster.maxcover import MAX_OFFSETS, MaxCoverResult, class_selector
from privlearn.distributed.linear import check_dense_chunk, check_dense_chunks
from privlearn.progress import as_verbose, progress_bar

__all__ = ["DaskRows", "maxcover_dask"]

_MEMBER_OFFSET = 1 << 34  # kMemberOffset of cluster/maxcover.hpp
_ROW_SHIFT = 35  # raw(row, offset) is raw number (row << 35) + offset of the stream
_U64 = 1 << 64


class DaskRows:
    """The rows of a ``dask.array`` X, held on the workers, with the data operations of a
    :class:`~privlearn.cluster.DPKMeans` fit.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
        Real numbers, chunked along the rows with known chunk sizes (chunks along the columns
        are merged).
    verbose : int, default=1
        A tqdm bar of the fit's rounds on the workers (passes over the data and max-cover
        picks; :func:`~privlearn.progress.as_verbose`), closed by :meth:`close`.

    Raises
    ------
    ValueError
        Unknown chunk sizes, not 2-D, no rows or columns, non-finite values (naming the row),
        or no ``dask.distributed`` client.
    TypeError
        A non-numeric dtype, or chunks that are not dense numpy arrays (sparse chunks:
        densify them, or fit a CSR matrix in memory).
    """

    def __init__(self, X: Any, verbose: int = 1) -> None:
        from distributed import get_client

        if not isinstance(X, da.Array):
            raise TypeError(
                f"DPKMeans takes a dask.array for distributed input, got {type(X).__name__}"
            )
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (n_samples, n_features), got {X.ndim}-D")
        check_dense_chunks(X, "X")  # sparse chunks: refused from the meta, nothing computed
        if any(math.isnan(c) for c in X.chunks[0]) or any(math.isnan(c) for c in X.chunks[1]):
            raise ValueError(
                "X has unknown chunk sizes: call X.compute_chunk_sizes() first (the rows of "
                "every chunk must be known to number them)"
            )
        if (
            X.dtype == object
            or not (np.issubdtype(X.dtype, np.number) or np.issubdtype(X.dtype, np.bool_))
            or np.issubdtype(X.dtype, np.complexfloating)
        ):
            raise TypeError(f"X must hold real numbers, got dtype {X.dtype}")
        if X.shape[0] < 1 or X.shape[1] < 1:
            raise ValueError(f"X must have at least one row and one column, got {X.shape}")
        try:
            self.client = get_client()
        except ValueError:
            raise ValueError(
                "DPKMeans on dask input needs a dask.distributed Client (the greedy max cover "
                "keeps per-chunk state on the workers): create one with distributed.Client()"
            ) from None
        if X.numblocks[1] > 1:
            X = X.rechunk({1: -1})
        self.n, self.d = int(X.shape[0]), int(X.shape[1])
        sizes = [int(c) for c in X.chunks[0]]
        self.first = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64).tolist()
        blocks = list(X.to_delayed().ravel())
        self._x = self.client.compute(
            [b for b, s in zip(blocks, sizes) if s > 0]  # empty chunks hold nothing
        )
        self.first = [f for f, s in zip(self.first, sizes) if s > 0]
        self._x = self.client.map(_check_block, self._x, self.first)
        self._y: list[Any] = []
        self._bar = progress_bar(as_verbose(verbose), None, "DPKMeans on dask", " rounds")

    def close(self) -> None:
        """Close the progress bar (the end of the fit)."""
        self._bar.close()

    def _done(self, stage: str) -> None:
        """One round on the workers is done (a pass over the chunks or a pick)."""
        self._bar.set_postfix_str(stage, refresh=False)
        self._bar.update()

    # ---- the operations of _LocalRows ---------------------------------------------------
    def resolve_radius(self, radius: float | None, clip: bool) -> float:
        """As :func:`privlearn.cluster._inputs.resolve_radius`, chunk by chunk."""
        if radius is None:
            warn_data_radius(stacklevel=5)
            norms = self.client.gather(self.client.map(_max_norm, self._x))
            self._done("data radius")
            radius = data_radius(max(norms))
        radius = float(radius)
        if not (math.isfinite(radius) and radius > 0.0):
            raise ValueError(f"radius must be a finite number > 0, got {radius}")
        self._x = self.client.map(_clip_block, self._x, self.first, radius=radius, clip=clip)
        self.client.gather(self.client.map(_n_rows, self._x))  # raise a row error now
        self._done("row check")
        return radius

    def project(self, G: np.ndarray, radius: float) -> None:
        self._y = self.client.map(project_rows, self._x, G=G, radius=radius)

    def maxcover(self, radii: list[float], **kwargs: Any) -> MaxCoverResult:
        return maxcover_dask(self.client, self._y, radii, progress=self._done, **kwargs)

    def nearest_counts(self, candidates: np.ndarray) -> np.ndarray:
        parts = self.client.gather(self.client.map(_nearest_counts, self._y, candidates=candidates))
        self._done("proxy counts")
        return np.sum(parts, axis=0, dtype=np.int64)

    def cluster_sums(
        self, centres: np.ndarray, k: int, radius: float, projected: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        futs = self.client.map(
            _cluster_sums, self._x, self._y if projected else self._x, centres=centres, k=k,
            radius=radius,
        )  # fmt: skip
        parts = self.client.gather(futs)
        self._done("cluster sums")
        counts = np.sum([c for c, _, _ in parts], axis=0, dtype=np.int64)
        hi = np.sum([h for _, h, _ in parts], axis=0, dtype=np.int64)
        lo = np.sum([v for _, _, v in parts], axis=0, dtype=np.int64)
        return counts, hi, lo

    # the LSH coreset (method="lsh")
    def lsh_codes(
        self, centre: np.ndarray, H: np.ndarray, t: np.ndarray, n_threads: int | None
    ) -> np.ndarray:
        """The SimHash codes of every row (``_core.lsh_codes`` chunk by chunk), in row order."""
        parts = self.client.gather(
            self.client.map(_lsh_codes, self._x, centre=centre, H=H, t=t, n_threads=n_threads)
        )
        self._done("LSH codes")
        return np.concatenate(parts).astype(np.uint64, copy=False)

    def lsh_cell_sums(
        self,
        kept: list[np.ndarray],
        depth: int,
        n_cells: int,
        centre: np.ndarray,
        radius: float,
        H: np.ndarray,
        t: np.ndarray,
        n_threads: int | None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per-cell ``(counts, hi, lo)`` of the clipped rows (the workers recompute their
        chunk's codes from ``H`` and ``t``); exact integer sums over the chunks."""
        futs = self.client.map(
            _lsh_cell_sums, self._x, kept=kept, depth=depth, n_cells=n_cells, centre=centre,
            radius=radius, H=H, t=t, n_threads=n_threads,
        )  # fmt: skip
        out = _add_sums(self.client.gather(futs))
        self._done("coreset cell sums")
        return out

    def nearest_sums(
        self, centres: np.ndarray, k: int, centre: np.ndarray, radius: float,
        n_threads: int | None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
        """Per-centre ``(counts, hi, lo)`` of the clipped rows nearest each centre."""
        futs = self.client.map(
            _nearest_sums, self._x, centres=centres, k=k, centre=centre, radius=radius,
            n_threads=n_threads,
        )  # fmt: skip
        out = _add_sums(self.client.gather(futs))
        self._done("Lloyd round")
        return out

    def private_scale(
        self, radius: float, mu: float, seeds: Any, n_threads: int | None
    ) -> tuple[np.ndarray, float, float]:
        """As ``_LocalRows.private_scale``, from the chunks' exact statistics (added on the
        driver; :func:`privlearn.cluster.private_scale.release_scale`): the same bits."""
        from privlearn.cluster.private_scale import (
            centre_statistics,
            radius_histogram,
            release_scale,
        )

        del n_threads
        client = self.client
        parts = client.gather(client.map(centre_statistics, self._x, radius=radius))
        self._done("private scale")
        stats = parts[0]
        for part in parts[1:]:
            stats = stats + part

        def histogram(centre: np.ndarray, lattice: Any) -> np.ndarray:
            hists = client.gather(
                client.map(radius_histogram, self._x, centre=centre, lattice=lattice)
            )
            self._done("private scale")
            return np.sum([np.asarray(h) for h in hists], axis=0, dtype=np.int64)

        scale = release_scale(stats, histogram, mu, seeds())
        return np.array(scale.centre), float(scale.radius), float(scale.mu)


def _add_sums(parts: list[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    counts = np.sum([np.asarray(c) for c, _, _ in parts], axis=0, dtype=np.int64)
    hi = np.sum([np.asarray(h) for _, h, _ in parts], axis=0, dtype=np.int64)
    lo = np.sum([np.asarray(v) for _, _, v in parts], axis=0, dtype=np.int64)
    return counts, hi, lo


# ---- worker side: per-chunk functions -----------------------------------------------------
def _check_block(X: np.ndarray, first: int) -> np.ndarray:
    check_dense_chunk(X, "X")
    X = np.ascontiguousarray(X, dtype=np.float64)
    del first  # messages quote public inputs only (no row of the private data)
    if not np.isfinite(X).all():
        raise ValueError(
            "X must be finite: it holds NaN or inf; remove or impute those entries first"
        )
    return X


def _max_norm(X: np.ndarray) -> float:
    return float(np.sqrt(row_sq_norms(X)).max())


def _clip_block(X: np.ndarray, first: int, radius: float, clip: bool) -> np.ndarray:
    return clip_rows(X, radius, clip, first)


def _n_rows(X: np.ndarray) -> int:
    return int(X.shape[0])


def _cover_block(Y: np.ndarray, radius: float, unit: float, max_offsets: int) -> dict[str, Any]:
    """The chunk's grid incidence (``_core.grid_cover``: local ids by first discovery in the
    chunk's row order) and its reverse (grid id -> points, increasing)."""
    from privlearn import _core

    coords, point_ptr, point_grid = _core.grid_cover(
        Y, radius, unit, max_offsets=max_offsets, n_threads=1
    )
    n_grid = coords.shape[0]
    owner = np.repeat(np.arange(Y.shape[0], dtype=np.int64), np.diff(point_ptr))
    order = np.argsort(point_grid, kind="stable")
    grid_ptr = np.concatenate([[0], np.cumsum(np.bincount(point_grid, minlength=n_grid))])
    return {
        "coords": np.asarray(coords),
        "cover": np.bincount(point_grid, minlength=n_grid).astype(np.int64),
        "point_ptr": np.asarray(point_ptr, dtype=np.int64),
        "point_grid": np.asarray(point_grid, dtype=np.int64),
        "grid_ptr": grid_ptr.astype(np.int64),
        "grid_pts": owner[order],
    }


def _cover_summary(inc: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    return inc["coords"], inc["cover"]


def _cover_step(
    inc: dict[str, Any], covered: np.ndarray | None, local_id: int
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, int]]:
    """Mark the still-uncovered points of grid point ``local_id`` covered; return the new
    flags and ``(local grid ids, decrements, newly covered)``."""
    if covered is None:
        covered = np.zeros(inc["point_ptr"].shape[0] - 1, dtype=bool)
    pts = inc["grid_pts"][inc["grid_ptr"][local_id] : inc["grid_ptr"][local_id + 1]]
    pts = pts[~covered[pts]]
    covered = covered.copy()
    covered[pts] = True
    ptr = inc["point_ptr"]
    lens = ptr[pts + 1] - ptr[pts]
    idx = np.repeat(ptr[pts] - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
    ids, dec = np.unique(inc["point_grid"][idx], return_counts=True)
    return covered, (ids, dec.astype(np.int64), int(pts.size))


# ---- driver side: the greedy --------------------------------------------------------------
class _Cursor:
    """``random::RowCursor``: raws of one row from an offset on; ``next_below`` by exact
    rejection (the C++ arithmetic)."""

    def __init__(self, stream: Any, row: int, offset: int) -> None:
        self._stream, self._next = stream, (row << _ROW_SHIFT) + offset

    def next_raw(self) -> int:
        raw = int(self._stream.raws(self._next, 1)[0])
        self._next += 1
        return raw

    def next_below(self, m: int) -> int:
        t = (_U64 - m) % m
        x = self.next_raw()
        while t != 0 and x >= _U64 - t:
            x = self.next_raw()
        return x % m


def maxcover_dask(
    client: Any,
    chunks: list[Any],
    radii: list[float],
    *,
    eps_pick: float,
    key: bytes,
    stream: int = 0,
    picks: int,
    grid_factor: float = 1.0,
    backend: str = "core",
    n_threads: int | None = None,
    max_offsets: int = MAX_OFFSETS,
    progress: Any = None,
) -> MaxCoverResult:
    """:func:`privlearn.cluster.maxcover_candidates` on chunks of ``Y`` held by the workers
    (futures of ``(n_i, p)`` arrays, in row order), with the same picks.

    ``backend`` and ``n_threads`` are accepted for the signature (the chunks' incidences come
    from ``_core.grid_cover``, the picks from the driver); the picks equal both backends'.
    ``progress``, if given, is called with a short text after each round on the workers (the
    grid covers of a radius, each pick): a progress report, it does not change the picks.
    """
    from privlearn import _core
    from privlearn.random import Stream

    del backend, n_threads
    rng = Stream(key=key, stream=stream)
    exact = math.isinf(eps_pick)
    p = int(client.submit(lambda y: y.shape[1], chunks[0]).result())
    select = None if exact else class_selector(eps_pick, key, stream, p)
    centers = np.zeros((len(radii) * picks, p))
    level, covered_out, remainder, n_grid, n_offsets = [], [], [], [], []
    out = 0
    for ell, radius in enumerate(radii):
        radius = float(radius)
        unit = grid_factor * radius / math.sqrt(p)
        m_real = math.floor((1.0 + radius) / unit) + 1.0
        if not m_real < 1e9:
            raise ValueError("radius too small for the grid (unit below 1e-9)")
        m = int(m_real)
        n_offsets.append(_core.grid_offsets(p, radius / unit, max_offsets).shape[0])
        inc = client.map(
            _cover_block, chunks, radius=radius, unit=unit, max_offsets=max_offsets, pure=False
        )
        summaries = client.gather(client.map(_cover_summary, inc))
        if progress is not None:
            progress(f"grid cover, radius {ell + 1} of {len(radii)}")
        sizes = [c.shape[0] for c, _ in summaries]
        if sum(sizes):
            allc = np.concatenate([c for c, _ in summaries], axis=0)
            local_cover = np.concatenate([v for _, v in summaries])
            # global ids: lexicographic order of the grid points (the member draw's order)
            coords, inverse = np.unique(allc, axis=0, return_inverse=True)
            gid = inverse.reshape(-1)
        else:
            gid = np.zeros(0, dtype=np.int64)
            local_cover = np.zeros(0, dtype=np.int64)
            coords = np.zeros((0, p), dtype=np.int32)
        ng = coords.shape[0]
        n_grid.append(ng)
        cover = np.zeros(ng, dtype=np.int64)
        np.add.at(cover, gid, local_cover)
        starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        # global id -> (chunk, local id) entries
        by_gid = np.argsort(gid, kind="stable")
        gptr = np.concatenate([[0], np.cumsum(np.bincount(gid, minlength=ng))]).astype(np.int64)
        lookup = _CoordLookup(coords)
        covered: list[Any] = [None] * len(chunks)
        for t in range(picks):
            row = ell * picks + t
            size = np.bincount(cover, minlength=1)
            size[0] = 0
            cmax = int(np.flatnonzero(size)[-1]) if size.any() else 0
            choice = 0
            if exact:
                choice = cmax
            else:
                choice = int(select(ell, row, m, size[: cmax + 1].tolist()))
            cursor = _Cursor(rng, row, _MEMBER_OFFSET)
            if choice > 0:
                members = np.flatnonzero(cover == choice)
                picked = int(members[cursor.next_below(int(size[choice]))])
                centers[out] = unit * coords[picked].astype(np.float64)
            else:  # a uniform point of the cube with zero cover (redrawn while covered)
                while True:
                    z = [cursor.next_below(2 * m + 1) - m for _ in range(p)]
                    picked = lookup.find(z)
                    if picked < 0 or cover[picked] == 0:
                        break
                centers[out] = unit * np.array(z, dtype=np.float64)
            newly = 0
            if picked >= 0 and cover[picked] > 0:
                entries = by_gid[gptr[picked] : gptr[picked + 1]]
                owners = np.searchsorted(starts, entries, side="right") - 1
                steps = {}
                for e, i in zip(entries.tolist(), owners.tolist()):
                    res = client.submit(_cover_step, inc[i], covered[i], e - int(starts[i]))
                    covered[i] = client.submit(operator.getitem, res, 0)
                    steps[i] = client.submit(operator.getitem, res, 1)
                for i, (ids, dec, k) in zip(steps, client.gather(list(steps.values()))):
                    np.subtract.at(cover, gid[starts[i] + ids], dec)
                    newly += k
            if progress is not None:
                progress(f"max cover pick {row + 1} of {len(radii) * picks}")
            level.append(ell)
            covered_out.append(newly)
            remainder.append(1 if choice == 0 else 0)
            out += 1
        del inc, covered
    return MaxCoverResult(
        centers,
        np.array(level, dtype=np.int64),
        np.array(covered_out, dtype=np.int64),
        np.array(remainder, dtype=np.uint8),
        np.array(n_grid, dtype=np.int64),
        np.array(n_offsets, dtype=np.int64),
    )


class _CoordLookup:
    """Grid id of integer coordinates (a sorted copy and binary search), or -1."""

    def __init__(self, coords: np.ndarray) -> None:
        self._p = coords.shape[1]
        keys = np.ascontiguousarray(coords, dtype=np.int64)
        self._order = np.lexsort(keys.T[::-1]) if keys.shape[0] else np.zeros(0, dtype=np.int64)
        self._sorted = keys[self._order]

    def find(self, z: list[int]) -> int:
        lo, hi = 0, self._sorted.shape[0]
        target = tuple(z)
        while lo < hi:  # lexicographic binary search
            mid = (lo + hi) // 2
            if tuple(self._sorted[mid].tolist()) < target:
                lo = mid + 1
            else:
                hi = mid
        if lo < self._sorted.shape[0] and tuple(self._sorted[lo].tolist()) == target:
            return int(self._order[lo])
        return -1
