"""The methods of the k-means comparison (Chaturvedi, Nguyen & Xu 2021, Figure 1) and how one
is fitted and costed.

Belongs here: the paper's settings (:data:`KS`, :data:`EPSILON`, :data:`DELTA`), the methods and
their labels (:data:`METHODS`, :data:`PAPER_METHODS`, :data:`LABELS`), the one-centre reference
(:func:`one_centre_cost`), the diffprivlib peer (:func:`diffprivlib_kmeans`) and one fit scored
by its k-means cost, with the schedule a private fit planned. Not here: the data
(:mod:`~privlearn.experiments.kmeans.data`) or the runs
(:mod:`~privlearn.experiments.kmeans.simulate`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

KS = (2, 4, 8, 16, 32, 64)
#: ``--quick`` (issue 32): three k, rows per data set (a seeded subsample) and runs per point.
QUICK_KS = (2, 8, 16)
QUICK_N = 3_000
QUICK_RUNS = 2
METHODS = ("maxcover", "balcan", "lsh", "diffprivlib", "lloyd")
#: The paper's two private methods (its Figure 1 claim compares them); each is requested by an
#: explicit ``method=``: the estimator's default is ``"lsh"``.
PAPER_METHODS = ("maxcover", "balcan")
LABELS = {
    "maxcover": "max cover (ours)",
    "balcan": "Balcan et al. 2017",
    "lsh": "LSH-tree coreset (privlearn default)",
    "diffprivlib": "diffprivlib DP-Lloyd",
    "lloyd": "Lloyd (non-private)",
}
EPSILON, DELTA = 1.0, 1e-6
#: The one-centre baseline: the data mean, the exact minimiser of the k = 1 cost.
ONE_CENTRE = "one_centre"
ONE_CENTRE_LABEL = "one centre (exact data mean, non-private reference)"


def diffprivlib_kmeans() -> Any:
    """diffprivlib's ``KMeans`` class, or ``None`` when diffprivlib is not installed (imported
    through :func:`~privlearn.experiments.peers.import_diffprivlib`)."""
    from privlearn.experiments.peers import PeerUnavailable, import_diffprivlib

    try:
        return import_diffprivlib().models.KMeans
    except PeerUnavailable:
        return None


def _schedule(method: str, k: int, n: int, p: int) -> str:
    """The schedule a planning size ``n`` gives (max cover: radii x picks; Balcan: levels)."""
    from privlearn.cluster import default_picks, default_radii
    from privlearn.cluster.balcan import default_levels

    if method == "maxcover":
        return f"{len(default_radii(n))} radii x {default_picks(k, n)} picks"
    return f"{default_levels(n, p)} levels"


def _fit_cost(
    X: np.ndarray, radius: float, bounds: np.ndarray, method: str, k: int, seed: int
) -> tuple[float, dict[str, Any]]:
    """``(cost, schedule info)``: the k-means cost of ``X`` at the fitted centres, computed
    explicitly here (an evaluation on the training data, not part of any release)."""
    from privlearn.cluster import DPKMeans
    from privlearn.cluster._assignment import kmeans_cost

    info: dict[str, Any] = {"planning_n": "", "schedule": "", "schedule_exact_n": ""}
    if method == "lsh":  # the size plans nothing here: no count, no planning_n
        model = DPKMeans(k, EPSILON, DELTA, method="lsh", radius=radius, seed=seed, n_threads=1)
        model.fit(X)
        info["schedule"] = f"tree {model.tree_levels_} levels, {model.n_candidates_} cells"
        return kmeans_cost(X, model.cluster_centers_), info
    if method in PAPER_METHODS:
        model = DPKMeans(k, EPSILON, DELTA, method=method, radius=radius, seed=seed, n_threads=1)
        model.fit(X)
        planning_n = model.dataset_size_.value
        info = {
            "planning_n": planning_n,
            "schedule": _schedule(method, k, planning_n, model.proj_dim_),
            "schedule_exact_n": _schedule(method, k, X.shape[0], model.proj_dim_),
        }
        return kmeans_cost(X, model.cluster_centers_), info
    if method == "lloyd":
        from sklearn.cluster import KMeans

        km = KMeans(k, init="k-means++", n_init=1, max_iter=10, random_state=seed % 2**31)
        return kmeans_cost(X, km.fit(X).cluster_centers_), info
    if method == "diffprivlib":
        cls = diffprivlib_kmeans()
        lower = np.full(X.shape[1], bounds[0])
        upper = np.full(X.shape[1], bounds[1])
        model = cls(k, epsilon=EPSILON, bounds=(lower, upper), random_state=seed % 2**31)
        return kmeans_cost(X, model.fit(X).cluster_centers_), info
    raise ValueError(f"unknown method {method!r}")


def one_centre_cost(X: np.ndarray) -> float:
    """The k-means cost of the single best centre: ``X`` at its mean (non-private).

    The mean minimises ``sum_i ||x_i - c||**2`` over all centres ``c``, so no one-centre
    solution, private or not, costs less: a private k-means whose cost is above this line does
    worse than the trivial one-centre solution. Computed with the same
    :func:`~privlearn.cluster._assignment.kmeans_cost` as every other row (an evaluation on the
    training data, outside any guarantee).
    """
    from privlearn.cluster._assignment import kmeans_cost

    return kmeans_cost(X, X.mean(axis=0, keepdims=True))
