"""The runs of the k-means comparison: every method, k and run on every data set.

Belongs here: :class:`KMeansResult` (the costs, what ran and what did not) and
:func:`simulate`. Not here: the methods (:mod:`~privlearn.experiments.kmeans.methods`) or what
is written from the result (:mod:`~privlearn.experiments.kmeans.outputs`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privlearn.experiments.kmeans.data import _MNIST_TEST_ONLY_NOTE, _load, _mnist_test_only
from privlearn.experiments.kmeans.methods import KS, METHODS, _fit_cost, one_centre_cost
from privlearn.experiments.runs import derive_seed, parallel_map
from privlearn.experiments.summary import missing_data_reason


@dataclass
class KMeansResult:
    """Costs of every (data set, method, k, run)."""

    datasets: list[str]
    ks: list[int]
    runs: int
    quick: bool
    n_rows: dict[str, int] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    #: What did not run, one line each: a peer (``"diffprivlib (why)"``) or a data set
    #: (``"mnist: NOT RUN (why)"``, also in :attr:`missing`).
    skipped: list[str] = field(default_factory=list)
    #: Data set -> what stood in for it (e.g. the embedded MNIST test images).
    notes: dict[str, str] = field(default_factory=dict)
    #: Data set -> cost of the one-centre baseline (:data:`ONE_CENTRE`).
    one_centre: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    #: Data set -> why it did not run (a missing data file).
    missing: dict[str, str] = field(default_factory=dict)

    def costs(self, dataset: str, method: str, k: int) -> list[float]:
        return [
            r["cost"]
            for r in self.rows
            if r["dataset"] == dataset and r["method"] == method and r["k"] == k
        ]


def simulate(
    *,
    datasets: tuple[str, ...] = ("synthetic", "mnist"),
    ks: tuple[int, ...] = KS,
    runs: int = 5,
    n: int | None = None,
    methods: tuple[str, ...] = METHODS,
    data_home: Any = None,
    n_jobs: int | None = None,
    quick: bool = False,
    progress: bool = True,
) -> KMeansResult:
    """Fit every method ``runs`` times for every k on every data set (``n``: subsample size)."""
    start = time.perf_counter()
    res = KMeansResult(list(datasets), list(ks), runs, quick)
    methods = tuple(methods)
    if "diffprivlib" in methods:
        from privlearn.experiments.peers import PeerUnavailable, import_diffprivlib

        try:
            import_diffprivlib()
        except PeerUnavailable as exc:  # skipped, and the summary says why
            methods = tuple(m for m in methods if m != "diffprivlib")
            res.skipped.append(f"diffprivlib ({exc})")
    for dataset in list(datasets):
        try:
            X, radius, bounds = _load(dataset, n, data_home)
        except FileNotFoundError as exc:  # a missing real data set: reported, not fatal
            res.datasets.remove(dataset)
            res.missing[dataset] = missing_data_reason(exc, data_home)
            res.skipped.append(f"{dataset}: NOT RUN ({res.missing[dataset]})")
            continue
        res.n_rows[dataset] = X.shape[0]
        if dataset == "mnist" and _mnist_test_only(data_home):
            res.notes[dataset] = _MNIST_TEST_ONLY_NOTE
        res.one_centre[dataset] = one_centre_cost(X)
        jobs = [(m, k, r) for k in ks for m in methods for r in range(runs)]

        def one(
            job: tuple[str, int, int],
            X: np.ndarray = X,
            radius: float = radius,
            bounds: np.ndarray = bounds,
            dataset: str = dataset,
        ) -> dict[str, Any]:
            m, k, r = job
            seed = derive_seed("kmeans", dataset, m, k, r)
            t = time.perf_counter()
            cost, info = _fit_cost(X, radius, bounds, m, k, seed)
            return {
                "dataset": dataset,
                "method": m,
                "k": k,
                "run": r,
                "cost": cost,
                "seconds": time.perf_counter() - t,
                **info,
            }

        res.rows += parallel_map(
            one, jobs, n_jobs=n_jobs, desc=f"kmeans {dataset}", progress=progress
        )
    res.seconds = time.perf_counter() - start
    return res
