"""A private coreset from a tree of locality-sensitive-hash prefixes, for
``DPKMeans(method="lsh")``.

The design follows the prefix-tree coreset of Chang, Ghazi, Kumar & Manurangsi (2021),
"Locally private k-means in one round" (ICML 2021), Section 3, in the central model:

1. every row gets a ``depth``-bit code, bit ``j`` telling on which side of a random hyperplane
   through the (public or privately estimated) centre it lies (SimHash, Charikar 2002; the
   hyperplanes are data-independent);
2. the tree of code prefixes is grown level by level: the two children of every kept node are
   counted, Gaussian noise is added, and a child is kept when its noisy count reaches the
   public threshold ``threshold_sd * sigma_tree`` (at most ``max_nodes`` per level, the
   largest noisy counts: post-processing);
3. every row belongs to one *cell*, the deepest kept node on its code's path; the cells'
   counts and the sums of their rows (moved to the centre and projected onto the ball of the
   radius ``r``) are released with Gaussian noise;
4. cells whose noisy count is below ``cell_threshold_sd * sigma_count`` are dropped
   (post-processing: most of them hold no row), the others are the weighted coreset
   ``(noisy sum / noisy count, noisy count)``.

**Privacy (add/remove one row).** A row adds 1 to one node count per level, 1 to one cell
count and a vector of norm at most ``r`` to one cell sum. Every release is a Gaussian mechanism
(:func:`privlearn.mechanisms.gaussian`, lattice: ``mu_i``-GDP with the lattice's inflation of
the sensitivity), chosen adaptively from the earlier outputs, so the whole coreset is
``mu``-GDP with ``mu**2 = depth * mu_tree**2 + mu_count**2 + mu_sum**2`` (Dong, Roth & Su 2022,
Corollary 3.3: the composition of Gaussian trade-off functions is exact), and ``mu``-GDP is
``(epsilon, delta)``-DP for the pair given by the analytic Gaussian conversion (Balle & Wang
2018, Theorem 8; Dong, Roth & Su 2022, Corollary 2.13) -- tight, not a bound by basic
composition. Nothing in the schedule depends on the number of rows: the thresholds are
multiples of the noise, the depth and the node cap are public.

Differences from the paper and from Google's open-source implementation (which was run side
by side in ``bench/python/bench_kmeans.py``, never copied): the cells include the kept inner
nodes (the rows whose child was dropped are kept, not lost), the cell counts and the tree counts
are separate releases composed by GDP, and the centre and radius may come from a private scale
(:mod:`privlearn.cluster.private_scale`) instead of the loose public bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from privlearn.cluster._noisy_average import analytic_mu
from privlearn.fixed_point import fixed_point_exponent, fixed_point_value
from privlearn.mechanisms import gaussian
from privlearn.mechanisms.gaussian import analytic_gaussian_epsilon
from privlearn.random import Stream

__all__ = [
    "LATTICE_MU_SLACK",
    "MAX_DEPTH",
    "Coreset",
    "LSHSchedule",
    "cell_labels",
    "gdp_mu",
    "grow_tree",
    "gaussian_centres",
    "lloyd_keep_threshold",
    "lattice_sigma",
    "lsh_hyperplanes",
    "release_coreset",
]

#: Stream id of the hyperplanes ("kmeans" | 6).
STREAM_LSH = 0x6B6D65616E730006
#: Longest code (the prefix ranges ``[p << s, (p + 1) << s)`` must fit in a uint64).
MAX_DEPTH = 62
#: What the default lattice of :func:`privlearn.mechanisms.gaussian` may add to ``mu``
#: (``sqrt(size) * step / sigma <= 2**-12`` whatever the number of released entries).
LATTICE_MU_SLACK = 2.0**-12


def gdp_mu(epsilon: float, delta: float) -> float:
    """The largest ``mu`` with ``mu``-GDP implying ``(epsilon, delta)``-DP (analytic Gaussian
    conversion, Balle & Wang 2018, Theorem 8), to 1e-12 relative, rounded down."""
    if not (math.isfinite(epsilon) and epsilon > 0.0):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    mu = analytic_mu(epsilon, delta, rtol=1e-13)
    while analytic_gaussian_epsilon(mu, delta) - epsilon > 0.0:  # rounded down: never above
        mu *= 1.0 - 1e-12
    return mu


def lattice_sigma(sensitivity: float, mu: float) -> float:
    """``sigma`` such that :func:`privlearn.mechanisms.gaussian` with this sensitivity and the
    default lattice is at most ``mu``-GDP for any number of entries:
    ``sensitivity / (mu - 2**-12)``."""
    if not mu > LATTICE_MU_SLACK:
        raise ValueError(
            f"this Gaussian step gets mu={mu:.3g}, not above the share its lattice takes "
            f"({LATTICE_MU_SLACK:.3g}); raise epsilon or give the step a larger budget share"
        )
    return sensitivity / (mu - LATTICE_MU_SLACK)


@dataclass(frozen=True)
class LSHSchedule:
    """The public plan of one coreset: code length, noise scales and thresholds.

    Attributes
    ----------
    depth : int
        Levels of the tree (bits of the codes).
    sigma_tree, sigma_count, sigma_sum : float
        Gaussian noise of a node count, of a cell count and of a cell sum (per coordinate).
    threshold : float
        A node is kept when its noisy count is at least this.
    branch_threshold : float
        A kept node's children are counted only when its noisy count is at least this (and at
        least ``threshold``): a cell should hold enough rows for its noisy mean to be more than
        noise.
    cell_threshold : float
        A cell enters the coreset when its noisy count is at least this.
    max_nodes : int
        Largest number of kept nodes per level.
    mu : float
        The GDP parameter of the whole coreset (``sqrt(depth / sigma_tree**2 + ...)`` with
        the lattice slack).
    """

    depth: int
    sigma_tree: float
    sigma_count: float
    sigma_sum: float
    threshold: float
    cell_threshold: float
    max_nodes: int
    mu: float
    branch_threshold: float = 0.0

    @classmethod
    def plan(
        cls,
        mu_tree: float,
        mu_count: float,
        mu_sum: float,
        radius: float,
        *,
        depth: int,
        threshold_sd: float,
        cell_threshold_sd: float,
        max_nodes: int,
        branch_sd: float = 0.0,
        dim: int = 1,
    ) -> LSHSchedule:
        """Noise scales from the GDP budgets of the three releases (``mu_tree`` for all the
        ``depth`` levels together). ``branch_sd`` sets the branching threshold
        ``branch_sd * sigma_sum * sqrt(dim) / radius``: the count at which the noise of a cell
        mean has norm ``radius / branch_sd``."""
        per_level = mu_tree / math.sqrt(depth)
        sigma_tree = lattice_sigma(1.0, per_level)
        sigma_count = lattice_sigma(1.0, mu_count)
        sigma_sum = lattice_sigma(radius, mu_sum)
        return cls(
            depth=depth,
            sigma_tree=sigma_tree,
            sigma_count=sigma_count,
            sigma_sum=sigma_sum,
            threshold=threshold_sd * sigma_tree,
            cell_threshold=cell_threshold_sd * sigma_count,
            max_nodes=max_nodes,
            mu=math.sqrt(mu_tree**2 + mu_count**2 + mu_sum**2),
            branch_threshold=branch_sd * sigma_sum * math.sqrt(dim) / radius,
        )


def lsh_hyperplanes(d: int, depth: int, stream: Stream) -> tuple[np.ndarray, np.ndarray]:
    """``(H, thresholds)``: ``depth`` data-independent Gaussian directions in ``R^d`` (SimHash)
    and zero offsets (hyperplanes through the centre)."""
    H = stream.normal(0, depth * d).reshape(depth, d)
    return H, np.zeros(depth)


def grow_tree(
    sorted_codes: np.ndarray,
    schedule: LSHSchedule,
    seeds: Any,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The kept prefixes of every level (level 0: the root, always kept) and their noisy counts.

    ``sorted_codes`` are the rows' codes in increasing order, so the rows of the node with
    prefix ``p`` at level ``l`` are the range ``[p << (depth - l), (p + 1) << (depth - l))``,
    counted by two binary searches. Each level's counts are one Gaussian release (sensitivity 1:
    a row is in one node per level); a child is kept when its noisy count reaches
    ``schedule.threshold``; above ``schedule.max_nodes`` kept children the largest noisy counts
    win (ties: the smaller prefix). A level with nothing to count releases nothing (its share of
    the budget is simply not used).
    """
    depth = schedule.depth
    kept: list[np.ndarray] = [np.zeros(1, dtype=np.uint64)]
    noisy: list[np.ndarray] = [np.zeros(1)]
    branch: list[np.ndarray] = [kept[0]]
    for level in range(1, depth + 1):
        parents = branch[-1]
        if parents.size == 0:
            kept.append(parents)
            noisy.append(np.zeros(0))
            branch.append(parents)
            continue
        shift = np.uint64(depth - level)
        cand = np.sort(np.concatenate([parents << np.uint64(1), (parents << np.uint64(1)) + 1]))
        lo = np.searchsorted(sorted_codes, cand << shift, side="left")
        hi = np.searchsorted(sorted_codes, (cand + np.uint64(1)) << shift, side="left")
        counts = (hi - lo).astype(np.float64)
        if schedule.sigma_tree > 0.0:
            released = np.asarray(
                gaussian(counts, 1.0, schedule.sigma_tree, seeds()), dtype=np.float64
            ).reshape(-1)
        else:  # epsilon = inf: exact counts
            released = counts
        keep = released >= schedule.threshold
        if int(keep.sum()) > schedule.max_nodes:
            order = np.lexsort((cand, -released))  # largest first, ties by prefix
            chosen = np.sort(order[: schedule.max_nodes])
            keep = np.zeros_like(keep)
            keep[chosen] = True
        kept.append(cand[keep])
        noisy.append(released[keep])
        branch.append(cand[keep & (released >= schedule.branch_threshold)])
    return kept, noisy


def cell_labels(codes: np.ndarray, kept: list[np.ndarray], depth: int) -> np.ndarray:
    """The cell of every row: the index (levels in order, prefixes in order within a level) of
    the deepest kept node on the path of its code."""
    labels = np.zeros(codes.shape[0], dtype=np.int64)
    offset = 0
    for level, prefixes in enumerate(kept):
        if level > 0 and prefixes.size:
            p = codes >> np.uint64(depth - level)
            idx = np.searchsorted(prefixes, p)
            idx_c = np.minimum(idx, prefixes.size - 1)
            hit = prefixes[idx_c] == p
            labels[hit] = offset + idx_c[hit]
        offset += prefixes.size
    return labels


@dataclass(frozen=True)
class Coreset:
    """A weighted private coreset (every field is a released value or public).

    Attributes
    ----------
    points : ndarray (m, d)
        Cell means, in the original coordinates.
    weights : ndarray (m,)
        Noisy cell counts (all at least the cell threshold).
    n_cells : int
        Cells before the threshold (kept nodes of the tree).
    levels : int
        Deepest level with a kept node.
    """

    points: np.ndarray
    weights: np.ndarray
    n_cells: int
    levels: int


def release_coreset(
    stats: tuple[np.ndarray, np.ndarray, np.ndarray],
    centre: np.ndarray,
    radius: float,
    schedule: LSHSchedule,
    seeds: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """Noisy cell counts and cell means from the exact ``(counts, hi, lo)`` of the clipped,
    centred rows; cells below ``schedule.cell_threshold`` dropped (post-processing). Returns
    ``(points, weights)`` in the original coordinates, every point in ``B(centre, radius)``."""
    counts, hi, lo = stats
    sums = fixed_point_value(hi, lo, fixed_point_exponent(radius))
    n_cells, d = sums.shape
    noisy_n = np.asarray(
        gaussian(counts.astype(np.float64), 1.0, schedule.sigma_count, seeds()), dtype=np.float64
    ).reshape(-1)
    noisy_s = np.asarray(
        gaussian(sums, radius, schedule.sigma_sum, seeds()), dtype=np.float64
    ).reshape(n_cells, d)
    keep = noisy_n >= schedule.cell_threshold
    w = noisy_n[keep]
    means = noisy_s[keep] / w[:, None]
    norms = np.linalg.norm(means, axis=1)
    far = norms > radius
    means[far] *= (radius / norms[far])[:, None]
    return centre + means, w


def gaussian_centres(
    stats: tuple[np.ndarray, np.ndarray, np.ndarray],
    centre: np.ndarray,
    radius: float,
    sigma_count: float,
    sigma_sum: float,
    seeds: Any,
    fallback: np.ndarray,
    min_count: float = 1.0,
) -> np.ndarray:
    """One private Lloyd step's centres: per cluster, a Gaussian count (sensitivity 1) and a
    Gaussian sum of the clipped centred rows (sensitivity ``radius``); the centre is
    ``centre + noisy_sum / noisy_count`` projected onto ``B(centre, radius)``, or the
    ``fallback`` (the previous centre: the coreset's) when the noisy count is below the public
    ``min_count`` (at least 1; :func:`lloyd_keep_threshold`): post-processing of the released
    counts, free. A nearly empty cluster's noisy mean is noise of norm up to the radius (with
    count noise sd ~20 at epsilon 1, a count >= 1 let pure noise on the clipping sphere
    replace a centre: issue 30)."""
    counts, hi, lo = stats
    sums = fixed_point_value(hi, lo, fixed_point_exponent(radius))
    k, d = sums.shape
    noisy_n = np.asarray(
        gaussian(counts.astype(np.float64), 1.0, sigma_count, seeds()), dtype=np.float64
    ).reshape(-1)
    noisy_s = np.asarray(gaussian(sums, radius, sigma_sum, seeds()), dtype=np.float64).reshape(k, d)
    out = np.array(fallback, dtype=np.float64, copy=True)
    ok = noisy_n >= max(1.0, float(min_count))
    means = noisy_s[ok] / noisy_n[ok, None]
    norms = np.linalg.norm(means, axis=1)
    far = norms > radius
    means[far] *= (radius / norms[far])[:, None]
    out[ok] = centre + means
    return out


#: Default split of the fit's ``mu**2`` (GDP) between its Gaussian releases. Chosen on
#: Google's synthetic benchmark (100,000 x 100, 64 Gaussians), the 8-Gaussian 20k x 10 set and
#: MNIST (70,000 x 784) at epsilon 1, delta 1e-6, k in {2, 8, 16, 32, 64}, 2 seeds
#: (prototype runs of issue 21; ``bench/python/bench_kmeans.py`` has the full grid):
#: one private Lloyd round on the full data after the coreset k-means lowered the loss on MNIST
#: by 10-20% (k = 8: 47.3 -> 43.1; the coreset alone is noisy in 784 dimensions) and on
#: Google's benchmark at k = 64 (0.033 -> 0.028), and cost at most 1% elsewhere.
#: The Lloyd round's share was re-checked where max cover beat this default (issue 30, item 7:
#: gauss8 and MNIST at small epsilon, by 1-5%), with ``bench/python/kmeans_lloyd_share.py``:
#: loss at lloyd shares 0.2375 / 0.35 / 0.5 (the other shares scaled; mean over seeds):
#: gauss8 (eps 1, 4 seeds) k = 16: 0.0251 / 0.0249 / 0.0248, k = 32: 0.0246 / 0.0245 / 0.0244;
#: Google (eps 1, 2 seeds) k = 8: 0.625 / 0.625 / 0.627, k = 64: 0.0190 / 0.0181 / 0.0231
#: (one seed 0.029); MNIST (eps 0.5, 2 seeds) k = 8: 44.9 / 45.1 / 44.7, k = 32: 44.1 / 44.8 /
#: 46.2, seed-to-seed spread 2-4. No share wins everywhere and on MNIST (where max cover
#: leads) the differences are within the seed noise, so 0.2375 stays.
LSH_SPLIT: dict[str, float] = {
    "scale": 0.05,
    "tree": 0.3325,
    "counts": 0.095,
    "sums": 0.285,
    "lloyd": 0.2375,
}
#: Default code length (tree levels).
LSH_DEPTH = 20
#: Default thresholds, in noise standard deviations: a node is kept at ``3 sigma_tree`` (a
#: node without rows passes with probability 0.13%), a cell enters the coreset at
#: ``3 sigma_count``, and a node branches when its count makes the noise of a cell mean at
#: most half the radius (``branch_sd = 2``; on MNIST, 784-d, this stops the tree at ~13 levels
#: instead of 20, k = 16: 47.2 -> 40.5).
LSH_THRESHOLD_SD = 3.0
LSH_CELL_THRESHOLD_SD = 3.0
LSH_BRANCH_SD = 2.0
#: Largest number of kept nodes per level (a public cap on the work; the largest noisy counts
#: win).
LSH_MAX_NODES = 4096
#: A private Lloyd round keeps a cluster's new centre only when its noisy count is at least
#: ``LLOYD_KEEP_SD`` count-noise sd and makes the noise of its mean at most ``radius /
#: LSH_BRANCH_SD`` (:func:`lloyd_keep_threshold`); else the previous centre stays.
LLOYD_KEEP_SD = 3.0


def lloyd_keep_threshold(sigma_count: float, sigma_sum: float, dim: int, radius: float) -> float:
    """The public count a private Lloyd round's cluster must reach for its noisy mean to
    replace the previous centre: ``max(1, LLOYD_KEEP_SD * sigma_count, LSH_BRANCH_SD *
    sigma_sum * sqrt(dim) / radius)`` -- the count clears the count noise by a few sd, and the
    expected norm of the mean's noise (``sigma_sum sqrt(dim) / count``) is at most ``radius /
    LSH_BRANCH_SD`` (the coreset's branching rule). A function of the noise scales only."""
    return max(
        1.0,
        LLOYD_KEEP_SD * sigma_count,
        LSH_BRANCH_SD * sigma_sum * math.sqrt(dim) / radius,
    )


#: Share of a Lloyd round's ``mu**2`` that goes to the counts (the sums, whose noise grows with
#: the dimension, get the rest).
LLOYD_COUNT_SHARE = 0.2


def lsh_split(overrides: Any, *, private_scale: bool, lloyd_steps: int) -> dict[str, float]:
    """:data:`LSH_SPLIT` with the caller's overrides; a share with nothing to pay for (no
    private scale, no Lloyd round) is spread over the others in proportion. The fractions must
    be > 0 and sum to 1."""
    base = dict(LSH_SPLIT)
    if overrides is not None:
        unknown = set(overrides) - set(base)
        if unknown:
            raise ValueError(
                f"unknown budget_split keys {sorted(map(str, unknown))} for method='lsh'; "
                f"known: {sorted(base)}"
            )
        base.update({k: float(v) for k, v in overrides.items()})
    if any(not (math.isfinite(v) and v > 0) for v in base.values()) or not (
        abs(math.fsum(base.values()) - 1.0) <= 1e-9
    ):
        raise ValueError(
            f"budget_split fractions {sorted(base)} for method='lsh' must be > 0 and sum to 1, "
            f"got {base}"
        )
    if not private_scale:
        base.pop("scale")
    if not lloyd_steps:
        base.pop("lloyd")
    total = math.fsum(base.values())
    return {k: v / total for k, v in base.items()}
