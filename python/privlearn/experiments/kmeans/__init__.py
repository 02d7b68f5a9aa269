"""Reproduction of Chaturvedi, Nguyen & Xu (2021), "Differentially private k-means clustering
via exponential mechanism and max cover", Section 7, Figure 1: the k-means objective against
the number of centres k in {2, 4, 8, 16, 32, 64} at epsilon = 1, delta = 1e-6, mean and
standard deviation over 5 runs, for

- max cover (:class:`privlearn.cluster.DPKMeans`, ``method="maxcover"``),
- Balcan et al. 2017 (ours, ``method="balcan"``),
- not in the paper: the LSH-tree coreset (``method="lsh"``, privlearn's default since issue
  21), shown next to the paper's methods so that the figure says where the default stands,
- diffprivlib's ``KMeans`` (DP Lloyd; an installed peer, skipped when absent),
- non-private Lloyd (scikit-learn ``KMeans``, k-means++, 10 iterations),

on (a) the synthetic mixture of 64 Gaussians (50,000 points in R^100; public radius
Lambda = 11 = centre norm 10 + offset 1) and (b) MNIST, 70,000 x 784 raw pixels
(Lambda = 255 sqrt(784)).

The table and the figure add a one-centre reference (k = 1, non-private): the cost of the data
at its exact mean, the best any single centre can do, computed like the other rows. Where a
private method's cost is above it, private k-means does not help over the trivial one-centre
solution; ``summary.md`` lists, per data set and private method, the k at which it is
below.

``--quick`` subsamples both data sets to 3,000 rows, uses k in {2, 8, 16} and 2 runs
(about 20 CPU-seconds). The paper reports that max cover beats Balcan et al. on both data
sets; ``summary.md`` states whether that holds here (the comparison is max cover against
Balcan et al. only, both requested explicitly by ``method=``, never by the estimator's default),
and, on a separate line, where the LSH-tree coreset stands against the better of the two and
against the one-centre reference (:func:`lsh_standing`).

The data-set size is treated as private (the estimators' default): each private fit spends
:data:`~privlearn.accounting.SIZE_EPSILON_FRACTION` of epsilon on a noisy row count and plans
its schedule (max cover: radii and picks per radius; Balcan et al.: grid levels) from it, the
rest of the budget being split as before (the LSH-tree coreset's schedule does not depend on
the size: it spends nothing on a count). ``kmeans_runs.csv`` records the planning size and
the schedule of every private run next to the schedule the exact size would give, and
``summary.md`` says in which runs they differ. The reported cost is an evaluation, computed
explicitly from the released centres and the training data (outside the guarantee).

The package, one module per piece: :mod:`~privlearn.experiments.kmeans.methods` (settings, the
methods, one fit and its cost), :mod:`~privlearn.experiments.kmeans.data` (the two data sets),
:mod:`~privlearn.experiments.kmeans.simulate` (the runs),
:mod:`~privlearn.experiments.kmeans.claims` (the paper's claim, the LSH standing),
:mod:`~privlearn.experiments.kmeans.figures` (Figure 1) and
:mod:`~privlearn.experiments.kmeans.outputs` (CSV files and ``summary.md``). This module
registers the reproduction (:func:`run`) and re-exports the public names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from privlearn.experiments import register
from privlearn.experiments.figures import require_matplotlib
from privlearn.experiments.kmeans.claims import evaluate_claims, lsh_standing
from privlearn.experiments.kmeans.methods import (
    DELTA,
    EPSILON,
    KS,
    LABELS,
    METHODS,
    ONE_CENTRE,
    ONE_CENTRE_LABEL,
    PAPER_METHODS,
    QUICK_KS,
    QUICK_N,
    QUICK_RUNS,
    diffprivlib_kmeans,
    one_centre_cost,
)
from privlearn.experiments.kmeans.outputs import write_outputs
from privlearn.experiments.kmeans.simulate import KMeansResult, simulate

__all__ = [
    "DELTA",
    "EPSILON",
    "KS",
    "LABELS",
    "METHODS",
    "ONE_CENTRE",
    "ONE_CENTRE_LABEL",
    "PAPER_METHODS",
    "QUICK_KS",
    "QUICK_N",
    "QUICK_RUNS",
    "KMeansResult",
    "diffprivlib_kmeans",
    "evaluate_claims",
    "lsh_standing",
    "one_centre_cost",
    "reproduce",
    "run",
    "simulate",
    "write_outputs",
]


def reproduce(
    out_dir: Path,
    *,
    quick: bool = False,
    plots: bool = True,
    data_home: Any = None,
    n_jobs: int | None = None,
    progress: bool = True,
) -> list[Path]:
    """Run :func:`simulate` (paper settings, or the quick ones) and :func:`write_outputs`."""
    if plots:
        require_matplotlib()
    if quick:
        res = simulate(
            ks=QUICK_KS,
            runs=QUICK_RUNS,
            n=QUICK_N,
            data_home=data_home,
            n_jobs=n_jobs,
            quick=True,
            progress=progress,
        )
    else:
        res = simulate(data_home=data_home, n_jobs=n_jobs, progress=progress)
    return write_outputs(res, out_dir, plots=plots)


@register(
    "kmeans",
    "Chaturvedi, Nguyen, Xu 2021",
    "DP k-means by grid max cover vs Balcan et al. 2017 (and privlearn's LSH-tree coreset), "
    "diffprivlib and Lloyd: objective vs k on a 64-Gaussian mixture and MNIST (Fig. 1)",
)
def run(out_dir: Path, quick: bool) -> list[Path]:
    """Reproduce Section 7, Figure 1 (``quick``: 3,000 rows, k in {2, 8, 16}, 2 runs)."""
    return reproduce(out_dir, quick=quick)
