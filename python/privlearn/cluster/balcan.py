"""The private k-means baseline of Balcan, Dick, Liang, Mou & Zhang (ICML 2017),
"Differentially private clustering in high-dimensional Euclidean spaces", as compared against
by Chaturvedi, Nguyen & Xu (2021), Section 7.

Our implementation (the original is MATLAB; none of its code is used):

1. *Candidate set* (``eps_cand``): ``n_trials`` randomly shifted hierarchical grids on the
   projected data (shift uniform in ``[0, 4)^p``, data-independent); at level ``l`` the cells
   have side ``4 / 2**l``, for :func:`default_levels` levels of a public or noisy planning size
   (never the exact private ``n``: the depth shapes the release). Each level is released as
   a stability-based histogram (Korolova, Kenthapadi, Mishra & Ntoulas 2009; Vadhan 2017,
   Theorem 3.5): exact discrete Laplace counts of scale ``1/eps_l`` on the non-empty cells and
   only cells whose noisy count exceeds ``1 + 2 ln(2/delta_l) / eps_l`` are kept; that is
   ``(eps_l, delta_l)``-DP. The centres of kept cells are the candidates. Levels and trials
   compose by basic composition.
2. *Local search* (``eps_ls``): ``n_iter`` swap steps (Gupta et al. 2010, k-median local
   search), each choosing the swap ``(centre i -> candidate c)`` by the exponential mechanism
   with utility ``-cost`` (sensitivity ``4``: squared diameter of the unit ball), then one more
   exponential-mechanism choice among the visited solutions; each of the ``n_iter + 1`` choices
   costs ``eps_ls / (n_iter + 1)``.
3. *Recovery* (``eps_rec``): the original points grouped by their nearest chosen candidate,
   centres by noisy averaging (a noisy count as in Chaturvedi et al.'s comparison, not the exact
   count of the MATLAB code).
4. *Lloyd steps* (``eps_lloyd``): DP Lloyd rounds, each a noisy averaging.

Published budget split (the brief's reading of Balcan et al.): candidates ``2 eps/3``, local
search ``eps/12``, recovery ``eps/6``, Lloyd ``eps/6``. These sum to ``13 eps / 12``; we keep
the ratios ``8 : 1 : 2 : 2`` and scale them to sum to ``eps`` (documented deviation).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from privlearn._checks import as_index
from privlearn.accounting import PrivacyLedger
from privlearn.cluster._assignment import assign
from privlearn.cluster._noisy_average import cluster_sums, noisy_centres
from privlearn.cluster._seeds import STREAM_INIT, SeedSource
from privlearn.mechanisms import discrete_laplace, exponential

__all__ = ["BALCAN_SPLIT", "balcan_candidates", "balcan_local_search", "default_levels"]

#: Published ratios (candidates, local search, recovery, Lloyd), normalised to sum to 1.
BALCAN_SPLIT = {"candidates": 8 / 13, "local_search": 1 / 13, "recovery": 2 / 13, "lloyd": 2 / 13}
_MAX_CANDIDATES = 256


def default_levels(n_size: int, p: int) -> int:
    """Levels of the hierarchical grids: ``max(2, min(8, ceil(log2(n_size) / p) + 2))``.

    Balcan et al. (2017) refine the grid until a cell holds about one point on average, i.e.
    ``log2(n) / p`` halvings in ``p`` dimensions; we add two coarse levels and cap at 8.

    Parameters
    ----------
    n_size : int
        The planning size: a declared public size or a noisy count
        (:func:`privlearn.accounting.resolve_size`), never the exact private ``n`` under
        add/remove-one neighbours (the number of levels shapes what is released).
    p : int
        Dimension of the projected data (public).
    """
    n_size = as_index(n_size, "n_size", lower=1, upper=1 << 62)
    p = as_index(p, "p", lower=1, upper=1 << 10)
    return max(2, min(8, math.ceil(math.log2(max(n_size, 2)) / p) + 2))


def balcan_candidates(
    Y: np.ndarray,
    epsilon: float,
    delta: float,
    seeds: SeedSource,
    ledger: PrivacyLedger | None,
    *,
    n_levels: int,
    n_trials: int = 2,
) -> np.ndarray:
    """Private candidate centres from shifted hierarchical grids (step 1 above).

    ``n_levels`` is required: it shapes the release, so it must come from public or noisy
    quantities (:func:`default_levels` of a declared size or a noisy count), never from
    ``Y.shape[0]``.
    """
    p = Y.shape[1]
    n_levels = as_index(n_levels, "n_levels", lower=1, upper=64)
    n_trials = as_index(n_trials, "n_trials", lower=1, upper=1 << 10)
    shift_stream = seeds.substream(STREAM_INIT)
    private = not math.isinf(epsilon)
    n_hist = n_trials * n_levels
    eps_l = epsilon / n_hist
    delta_l = delta / n_hist
    if private and ledger is not None:
        ledger.spend(epsilon, delta, label="balcan candidates")
    threshold = 1.0 + 2.0 * math.log(2.0 / delta_l) / eps_l if private else 0.5
    out = []
    for t in range(n_trials):
        shift = 4.0 * shift_stream.uniform(t * p, p)
        for level in range(n_levels):
            side = 4.0 / 2**level
            cells = np.floor((Y + shift) / side).astype(np.int64)
            uniq, counts = np.unique(cells, axis=0, return_counts=True)
            if private:
                noisy = np.asarray(discrete_laplace(counts, 1.0 / eps_l, seeds()), dtype=float)
            else:
                noisy = counts.astype(float)
            keep = noisy > threshold
            centres = (uniq[keep] + 0.5) * side - shift
            order = np.argsort(-noisy[keep], kind="stable")
            out.append(centres[order])
    cand = np.concatenate(out, axis=0) if out else np.zeros((0, p))
    norms = np.linalg.norm(cand, axis=1) if cand.size else np.zeros(0)
    cand = cand[norms <= 1.0] if cand.size else cand
    return cand[:_MAX_CANDIDATES]


#: Bytes of the ``(rows, m, p)`` float64 temporary of one block of the distance matrix (the
#: block's rows follow from it): the extra memory of the local search is the ``(n, m)`` float32
#: matrix and a few blocks, not a multiple of it.
_BLOCK_BYTES = 4 << 20


def _block_rows(m: int, width: int) -> int:
    """Rows per block when a row of the block's largest temporary has ``m * width`` bytes."""
    return max(1, _BLOCK_BYTES // max(1, m * width))


def _distance_block(block: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Squared distances ``||y_i - c_j||**2`` of a block of rows as float32: each entry is the
    float64 sum over the ``p`` coordinates (the last axis of the block's temporary, whatever
    the block's rows), rounded once."""
    return ((block[:, None, :] - candidates[None, :, :]) ** 2).sum(axis=2).astype(np.float32)


def _distances(Y: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """The ``(n, m)`` float32 squared distances, built by blocks of rows."""
    m = candidates.shape[0]
    D = np.empty((Y.shape[0], m), dtype=np.float32)
    step = _block_rows(m, 8 * candidates.shape[1])
    for lo in range(0, Y.shape[0], step):
        D[lo : lo + step] = _distance_block(Y[lo : lo + step], candidates)
    return D


class _Distances:
    """The ``(n, m)`` float32 squared distances of the local search: kept whole (``keep``) or
    recomputed block by block at every pass (the same bits, :func:`_distance_block`)."""

    def __init__(
        self, Y: np.ndarray, candidates: np.ndarray, keep: bool, D: np.ndarray | None = None
    ) -> None:
        self.Y, self.candidates = Y, candidates
        self.n, self.m = Y.shape[0], candidates.shape[0]
        self.step = _block_rows(self.m, 8 * candidates.shape[1])
        self.D = D if D is not None else (_distances(Y, candidates) if keep else None)

    @classmethod
    def of_matrix(cls, D: np.ndarray) -> _Distances:
        """A kept matrix ``D`` (tests)."""
        return cls(np.zeros((D.shape[0], 1)), np.zeros((D.shape[1], 1)), True, D)

    def blocks(self) -> Iterator[tuple[int, np.ndarray]]:
        """``(first row, block)`` over the rows in order."""
        for lo in range(0, self.n, self.step):
            if self.D is not None:
                yield lo, self.D[lo : lo + self.step]
            else:
                yield lo, _distance_block(self.Y[lo : lo + self.step], self.candidates)

    def matrix(self) -> np.ndarray:
        """The whole matrix (kept, or built once)."""
        return self.D if self.D is not None else _distances(self.Y, self.candidates)


def _swap_costs_full(D: np.ndarray, current: np.ndarray) -> np.ndarray:
    """:func:`_swap_costs` on the whole matrix at once (``(n, m)`` temporaries)."""
    k = current.size
    Dc = D[:, current]
    order = np.argsort(Dc, axis=1, kind="stable")
    idx1 = order[:, 0]
    d1 = Dc[np.arange(D.shape[0]), idx1]
    d2 = Dc[np.arange(D.shape[0]), order[:, 1]] if k > 1 else np.full(D.shape[0], np.inf)
    common = np.minimum(d1[:, None], D).sum(axis=0)
    costs = np.empty((k, D.shape[1]))
    for i in range(k):
        mine = idx1 == i
        if not mine.any():
            costs[i] = common
            continue
        Dm = D[mine]
        costs[i] = common + (
            np.minimum(d2[mine][:, None], Dm) - np.minimum(d1[mine][:, None], Dm)
        ).sum(axis=0)
    return costs


def _swap_costs(
    dist: _Distances, current: np.ndarray, swaps: bool = True
) -> tuple[np.ndarray | None, float]:
    """cost(S - s_i + c) for every position i and candidate c: (k, m) (None unless
    ``swaps``); and cost(S).

    Computed by blocks of rows (temporaries of a block, not of the matrix) with the bits of
    :func:`_swap_costs_full`: a float32 column sum of a C-contiguous ``(rows, m)`` array with
    ``m >= 2`` adds the rows one after the other, so the running sum of the earlier blocks,
    put in front of the next block, continues the same sequence of additions (all terms are
    ``>= +0``: starting from ``+0`` changes nothing). ``m == 1`` (a pairwise sum of one
    column): the whole matrix at once (it is only ``4 n`` bytes)."""
    n, m = dist.n, dist.m
    k = current.size
    d1_all = np.empty(n, dtype=np.float32)
    if m < 2:
        D = dist.matrix()
        d1_all[:] = D[:, current].min(axis=1)
        return (_swap_costs_full(D, current) if swaps else None), float(d1_all.sum())
    common = np.zeros(m, dtype=np.float32)
    # k == 1: the second-nearest distance is a float64 inf, so the differences are float64
    parts = np.zeros((k, m), dtype=np.float32 if k > 1 else np.float64)
    for lo, Db in dist.blocks():
        rows = np.arange(Db.shape[0])
        Dc = Db[:, current]
        if not swaps:
            d1_all[lo : lo + Db.shape[0]] = Dc.min(axis=1)
            continue
        order = np.argsort(Dc, axis=1, kind="stable")
        idx1 = order[:, 0]
        d1 = Dc[rows, idx1]
        d1_all[lo : lo + Db.shape[0]] = d1
        d2 = Dc[rows, order[:, 1]] if k > 1 else np.full(Db.shape[0], np.inf)
        common = np.concatenate([common[None], np.minimum(d1[:, None], Db)]).sum(axis=0)
        for i in range(k):
            mine = idx1 == i
            if not mine.any():
                continue
            Dm = Db[mine]
            diff = np.minimum(d2[mine][:, None], Dm) - np.minimum(d1[mine][:, None], Dm)
            parts[i] = np.concatenate([parts[i][None], diff]).sum(axis=0)
    if not swaps:
        return None, float(d1_all.sum())
    costs = np.empty((k, m))
    for i in range(k):
        costs[i] = common + parts[i]
    return costs, float(d1_all.sum())


def balcan_local_search(
    Y: np.ndarray,
    candidates: np.ndarray,
    n_clusters: int,
    epsilon: float,
    seeds: SeedSource,
    ledger: PrivacyLedger | None,
    *,
    n_iter: int = 10,
    max_matrix_bytes: int | None = None,
) -> np.ndarray:
    """Private k-means local search over ``candidates`` (step 2 above); returns k centres.

    Memory: the ``(n, m)`` float32 squared distances (``m <= 256`` candidates) are kept when
    they take at most ``max_matrix_bytes`` (None: always), else recomputed block by block at
    each of the ``n_iter + 1`` passes (slower, the same bits); plus temporaries of a block of
    rows. :class:`~privlearn.cluster.DPKMeans` keeps them up to ``1.5 X.nbytes``."""
    m = candidates.shape[0]
    keep = max_matrix_bytes is None or m < 2 or 4 * Y.shape[0] * m <= max_matrix_bytes
    D = _Distances(Y, candidates, keep)
    init = seeds.substream(STREAM_INIT).choice_without_replacement(1 << 20, m, n_clusters)
    current = np.asarray(init, dtype=np.int64)
    private = not math.isinf(epsilon)
    eps_it = epsilon / (n_iter + 1)
    if private and ledger is not None:
        ledger.spend(epsilon, 0.0, label="balcan local search")
    visited = [current.copy()]
    costs, cost = _swap_costs(D, current)
    assert costs is not None
    visited_cost = [cost]
    for it in range(n_iter):
        flat = costs.ravel()
        if private:
            pick = int(exponential(-flat, eps_it, 4.0, seeds()))
        else:
            pick = int(np.argmin(flat))
        i, c = divmod(pick, m)
        if c not in current:
            current = current.copy()
            current[i] = c
        visited.append(current.copy())
        if it + 1 < n_iter:  # the next step's swap costs and this solution's cost: one pass
            costs, cost = _swap_costs(D, current)
        else:
            cost = _swap_costs(D, current, swaps=False)[1]
        visited_cost.append(cost)
    scores = -np.asarray(visited_cost)
    final = int(exponential(scores, eps_it, 4.0, seeds())) if private else int(np.argmax(scores))
    return candidates[visited[final]]


def balcan_recover(
    X: np.ndarray,
    Y: np.ndarray,
    centres_proj: np.ndarray,
    radius: float,
    epsilon: float,
    delta: float,
    seeds: SeedSource,
    ledger: PrivacyLedger | None,
) -> np.ndarray:
    """Centres in the original space by noisy averaging of the projected clusters (step 3)."""
    stats = cluster_sums(X, assign(Y, centres_proj), centres_proj.shape[0], radius)
    return noisy_centres(stats, radius, epsilon, delta, seeds, ledger, "recovery")
