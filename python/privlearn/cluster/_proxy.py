"""The proxy data set of the max-cover fit (Chaturvedi, Nguyen & Xu 2021, Algorithm 2, step 3):
noisy multiplicities of the candidate centres (:func:`proxy_counts`), the public threshold that
zeroes the phantom candidates (:func:`proxy_threshold`) and the candidates the weighted
k-means keeps (:func:`proxy_weights`).

Belongs here: what turns the greedy's picks into a weighted data set. Not here: the picks
(:mod:`privlearn.cluster.maxcover`) or the weighted k-means itself (the estimator).
"""

from __future__ import annotations

import math

import numpy as np

from privlearn._checks import as_index
from privlearn.cluster._rows import nearest_counts
from privlearn.mechanisms import discrete_laplace

__all__ = ["noisy_counts", "proxy_counts", "proxy_threshold", "proxy_weights"]


def proxy_counts(
    Y: np.ndarray,
    candidates: np.ndarray,
    epsilon: float,
    seed: int | None,
    *,
    threshold: float = 0.0,
) -> np.ndarray:
    """Noisy proxy multiplicities (Algorithm 2, step 3): for each candidate ``c`` the number of
    points whose nearest candidate is ``c``, plus exact discrete Laplace noise of scale
    ``1/epsilon`` (the count vector has L1 sensitivity 1 under add/remove: ``epsilon``-DP,
    Lemma 2.3), set to 0 where below ``threshold`` (post-processing; the paper clamps at 0,
    ``threshold=0``; :func:`proxy_threshold`). ``epsilon = inf``: exact counts."""
    return noisy_counts(nearest_counts(Y, candidates), epsilon, seed, threshold)


def proxy_threshold(n_candidates: int, epsilon: float) -> float:
    """The public threshold of the proxy counts: ``2 ln(m) / epsilon`` for ``m`` candidates.

    At the fine radii almost every pick is a grid point with no data (the uniform part of the
    exponential mechanism, Claim 4.2); each still gets a noisy count, and ``m`` zero counts
    plus discrete Laplace noise of scale ``b = 1/epsilon`` have about ``(m / 2) e^(-t / b)``
    values at or above ``t``: at ``t = b ln(m / beta)`` no phantom survives but with
    probability about ``beta / 2``; ``beta = 1/m`` gives ``2 b ln(m)``, while a candidate
    that serves a cluster of ``n_j >> 2 b ln(m)`` rows is kept. A surviving phantom weighs
    about ``t``, as much as a small real candidate, so ``t = b ln(m)`` (half a phantom
    expected) still lost a cluster on the 8-Gaussian set (k = 8: mean loss 0.064 against
    0.025 for ``2 b ln(m)``, 2 seeds; equal elsewhere, :data:`DEFAULT_SPLIT`). ``m`` (the
    number of distinct picks) and ``epsilon`` are public, so zeroing below it is
    post-processing (issue 21 measured the phantom weight at 16% of n at k = 64 on Google's
    synthetic benchmark; thresholding took the normalised loss from 0.322 to 0.116)."""
    n_candidates = as_index(n_candidates, "n_candidates", lower=1, upper=1 << 62)
    if math.isinf(epsilon):
        return 0.0
    return 2.0 * math.log(n_candidates) / epsilon


def proxy_weights(noisy: np.ndarray, k: int, threshold: float) -> np.ndarray:
    """Indices of the candidates the weighted k-means keeps (post-processing of the released
    noisy counts): those with a count at or above ``threshold`` and above 0; when fewer than
    ``k`` remain, the ``k`` largest counts (ties: lower index) so that k-means has ``k``
    points (their weights are floored at 1e-6 by the caller)."""
    noisy = np.asarray(noisy, dtype=np.float64)
    keep = np.flatnonzero((noisy >= threshold) & (noisy > 0.0))
    if keep.size >= k:
        return keep
    order = np.lexsort((np.arange(noisy.size), -noisy))  # largest first, ties by index
    return np.sort(order[: min(k, noisy.size)])


def noisy_counts(
    counts: np.ndarray, epsilon: float, seed: int | None, threshold: float = 0.0
) -> np.ndarray:
    """:func:`proxy_counts` from the exact counts."""
    if math.isinf(epsilon):
        return counts.astype(np.float64)
    noisy = np.asarray(discrete_laplace(counts, 1.0 / epsilon, seed), dtype=np.float64)
    noisy = np.maximum(noisy, 0.0)
    return np.where(noisy >= threshold, noisy, 0.0)
