"""The data operations of a :class:`~privlearn.cluster.DPKMeans` fit on rows held in memory
(:class:`_LocalRows`) and the per-block functions behind them.

A fit reads its rows only through these operations (radius check, JL projection, max cover,
nearest counts, cluster sums, LSH codes and cell sums, private scale). The Dask back-end
(:class:`privlearn.distributed.kmeans.DaskRows`) has the same methods and runs the same
per-block functions below on every chunk, adding the integer results exactly on the driver:
the two return the same bits.

Belongs here: a new data operation of the fit (a method of :class:`_LocalRows` and, where a
chunk can compute it alone, its per-block function for the Dask twin). Not here: what the
driver does with the results (noise, budget, schedule: :mod:`privlearn.cluster.estimator`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privlearn import _core
from privlearn.cluster._assignment import assign
from privlearn.cluster._inputs import check_data, resolve_radius
from privlearn.cluster._noisy_average import cluster_sums
from privlearn.cluster._projection import project_rows
from privlearn.cluster._seeds import SeedSource
from privlearn.cluster.lsh_coreset import cell_labels
from privlearn.cluster.maxcover import MaxCoverResult, maxcover_candidates
from privlearn.cluster.private_scale import private_scale
from privlearn.fixed_point import fixed_point_exponent

__all__ = [
    "cell_sums",
    "core_threads",
    "lsh_cell_sums",
    "lsh_codes",
    "nearest_cluster_sums",
    "nearest_counts",
    "nearest_sums",
]

Stats = tuple[np.ndarray, np.ndarray, np.ndarray]


class _LocalRows:
    """The training rows of a single-machine fit and the data operations of :meth:`DPKMeans.fit`
    (its Dask twin, :class:`privlearn.distributed.kmeans.DaskRows`, has the same methods and
    returns the same bits)."""

    def __init__(self, X: Any) -> None:
        self.X = check_data(X)
        self.n, self.d = self.X.shape
        self.Y: np.ndarray | None = None

    def close(self) -> None:
        """Nothing to release (the Dask twin closes its progress bar)."""

    def resolve_radius(self, radius: float | None, clip: bool) -> float:
        self.X, out = resolve_radius(self.X, radius, clip, stacklevel=5)
        return out

    def project(self, G: np.ndarray, radius: float) -> None:
        self.Y = project_rows(self.X, G, radius)

    def maxcover(self, radii: list[float], **kwargs: Any) -> MaxCoverResult:
        return maxcover_candidates(self.Y, radii, **kwargs)

    def nearest_counts(self, candidates: np.ndarray) -> np.ndarray:
        return nearest_counts(self.Y, candidates)  # type: ignore[arg-type]

    def cluster_sums(self, centres: np.ndarray, k: int, radius: float, projected: bool) -> Stats:
        Z = self.Y if projected else self.X
        return nearest_cluster_sums(self.X, Z, centres, k, radius)  # type: ignore[arg-type]

    # the LSH coreset (method="lsh")
    def lsh_codes(
        self, centre: np.ndarray, H: np.ndarray, t: np.ndarray, n_threads: int | None
    ) -> np.ndarray:
        self._codes = lsh_codes(self.X, centre, H, t, n_threads)
        return self._codes

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
    ) -> Stats:
        del H, t  # the codes of lsh_codes
        codes = self._codes
        del self._codes
        return cell_sums(self.X, codes, kept, depth, n_cells, centre, radius, n_threads)

    def nearest_sums(
        self, centres: np.ndarray, k: int, centre: np.ndarray, radius: float,
        n_threads: int | None,
    ) -> Stats:  # fmt: skip
        return nearest_sums(self.X, centres, k, centre, radius, n_threads)

    def private_scale(
        self, radius: float, mu: float, seeds: SeedSource, n_threads: int | None
    ) -> tuple[np.ndarray, float, float]:
        """The released centre and radius (:func:`privlearn.cluster.private_scale.private_scale`)
        and the GDP ``mu`` they spent."""
        del n_threads
        scale = private_scale(self.X, radius, mu, seeds())
        return np.array(scale.centre), float(scale.radius), float(scale.mu)


# ---- per-block functions (a block of rows: the whole data here, a chunk on a Dask worker) --
def core_threads(n_threads: int | None) -> int:
    """The core's thread argument (0: its default)."""
    return 0 if n_threads is None else int(n_threads)


def nearest_counts(Y: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """How many rows of ``Y`` have each candidate as their nearest (int64, exact)."""
    return np.bincount(assign(Y, candidates), minlength=candidates.shape[0]).astype(np.int64)


def nearest_cluster_sums(
    X: np.ndarray, Z: np.ndarray, centres: np.ndarray, k: int, radius: float
) -> Stats:
    """:func:`~privlearn.cluster._noisy_average.cluster_sums` of the rows of ``X`` grouped by
    the nearest centre of their twin rows in ``Z`` (``X`` itself, or its JL projection)."""
    return cluster_sums(X, assign(Z, centres), k, radius)


def lsh_codes(
    X: np.ndarray, centre: np.ndarray, H: np.ndarray, t: np.ndarray, n_threads: int | None
) -> np.ndarray:
    """The SimHash codes of the rows (``_core.lsh_codes``, row by row)."""
    return np.asarray(_core.lsh_codes(X, centre, H, t, core_threads(n_threads)))


def cell_sums(
    X: np.ndarray,
    codes: np.ndarray,
    kept: list[np.ndarray],
    depth: int,
    n_cells: int,
    centre: np.ndarray,
    radius: float,
    n_threads: int | None,
) -> Stats:
    """Per-cell ``(counts, hi, lo)`` of the rows clipped to ``B(centre, radius)``, the cells
    those of the rows' ``codes`` in the grown tree (``kept``)."""
    labels = cell_labels(codes, kept, depth)
    return _core.clipped_cluster_sums(
        X, labels, n_cells, centre, radius, fixed_point_exponent(radius), core_threads(n_threads)
    )


def lsh_cell_sums(
    X: np.ndarray, centre: np.ndarray, H: np.ndarray, t: np.ndarray, n_threads: int | None,
    **cells: Any,
) -> Stats:  # fmt: skip
    """:func:`cell_sums` of a block whose codes are recomputed from the hyperplanes ``H`` and
    offsets ``t`` (:func:`lsh_codes`: a chunk on a Dask worker); ``cells`` holds the rest of
    :func:`cell_sums`'s arguments (``kept``, ``depth``, ``n_cells``, ``radius``)."""
    codes = lsh_codes(X, centre, H, t, n_threads)
    return cell_sums(X, codes, centre=centre, n_threads=n_threads, **cells)


def nearest_sums(
    X: np.ndarray, centres: np.ndarray, k: int, centre: np.ndarray, radius: float,
    n_threads: int | None,
) -> Stats:  # fmt: skip
    """Per-centre ``(counts, hi, lo)`` of the rows clipped to ``B(centre, radius)``, grouped by
    their nearest centre (``_core.nearest_centres``): a private Lloyd round's statistics."""
    threads = core_threads(n_threads)
    return _core.clipped_cluster_sums(
        X, _core.nearest_centres(X, centres, threads), k, centre, radius,
        fixed_point_exponent(radius), threads,
    )  # fmt: skip
