"""Reproduction of Song, Chaudhuri, Sarwate (2013), "Stochastic gradient descent with
differentially private updates", Section IV (experiments) and Figures 1-3.

Set-up (Section IV-A/B): L2-regularised logistic regression, ``lambda = 1e-4``, privacy
``alpha = 1`` (``epsilon`` here), a single pass of mini-batch SGD (eq. 6) over disjoint batches
of size ``b in {1, 2, 5, 10, 20, 50}``, the iterate projected onto the ball of radius
``1/lambda`` after every step, learning rates ``1/sqrt(t)``, ``10/sqrt(t)`` and
``1/(lambda t)``, objective averaged over 20 random permutations with fresh noise (error bars:
one standard deviation). Data sets:

- ``synthetic``: n = 10,000 points uniform in the 5-d unit ball, linearly separable with
  margin 0.001 (:func:`privlearn.data.make_sphere_separable`);
- ``kddcup99``: normal vs. malicious, a 50,000-row subsample; every feature divided by its
  maximum absolute value (bounds computed from the data, as in the paper: outside the DP
  guarantee), rows projected onto the unit ball, random projection to d = 9;
- ``mnist``: digit 1 vs. all on the 60,000 training images; pixels divided by the public bound
  255, rows projected onto the unit ball, random projection to d = 15.

After the random projection the rows are projected onto the unit ball again, so that
``||x_i|| <= 1`` holds exactly, as Theorem 1 requires.

Every run is the C++ core (:func:`privlearn.linear.sgd_train`): mechanism ``"l2-laplace"``
for private SGD and ``"none"`` for non-private SGD, with the SAME key, hence the same
permutation. The key of a run depends only on (data set, batch size, run index), so the three
learning rates also see the same permutations and noise draws (common random numbers), and
every number is reproducible. The centralised optimum of Fig. 2 is scikit-learn's
``LogisticRegression(C=1/(n lambda), fit_intercept=False)``, whose objective equals
``(lambda/2)||w||^2 + mean log-loss`` divided by ``C n``.

The package, one module per piece (the names below are re-exported here):

- :mod:`.settings`: the constants, data sets, learning rates and mechanisms of Section IV;
- :mod:`.data`: the data sets, preprocessed (:func:`prepare_dataset`), and the centralised
  optimum (:func:`centralized_optimum`);
- :mod:`.simulation`: the runs and their seeds (:func:`simulate`, :class:`Song13Result`);
- :mod:`.claims`: the paper's claims checked on the numbers (:func:`evaluate_claims`);
- :mod:`.figures`: Figs. 1-3;
- :mod:`.outputs`, :mod:`.summary`: the files and ``summary.md`` (:func:`write_outputs`);
- here: :func:`reproduce` and the registered :func:`run`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from privlearn.experiments import register
from privlearn.experiments.claims import Claim
from privlearn.experiments.figures import require_matplotlib
from privlearn.experiments.song13.claims import evaluate_claims
from privlearn.experiments.song13.data import centralized_optimum, prepare_dataset
from privlearn.experiments.song13.outputs import write_outputs
from privlearn.experiments.song13.settings import (
    BATCH_SIZES,
    DATASETS,
    EPSILON,
    LAMBDA,
    PATH_POINTS,
    QUICK_PATH_POINTS,
    QUICK_REPEATS,
    RATES,
)
from privlearn.experiments.song13.settings import PAPER as PAPER  # not in __all__
from privlearn.experiments.song13.simulation import Song13Result, simulate

__all__ = [
    "BATCH_SIZES",
    "DATASETS",
    "EPSILON",
    "LAMBDA",
    "PATH_POINTS",
    "QUICK_PATH_POINTS",
    "QUICK_REPEATS",
    "RATES",
    "Claim",
    "Song13Result",
    "centralized_optimum",
    "evaluate_claims",
    "prepare_dataset",
    "reproduce",
    "run",
    "simulate",
    "write_outputs",
]


def reproduce(out_dir: Path, *, plots: bool = True, **settings: Any) -> list[Path]:
    """Run :func:`simulate` and :func:`write_outputs`; return the written files.

    ``settings`` are :func:`simulate`'s keyword arguments (``datasets``, ``batch_sizes``,
    ``rates``, ``repeats``, ``sizes``, ``path_points``, ``data_home``, ``n_jobs``, ``quick``,
    ``progress``), with the same defaults: the paper's settings (Section IV-B). With ``plots``
    (the default) matplotlib must be installed; this is checked before the simulation starts.
    """
    if plots:
        require_matplotlib()
    return write_outputs(simulate(**settings), out_dir, plots=plots)


@register(
    "song13",
    "Song, Chaudhuri, Sarwate 2013",
    "DP mini-batch SGD (L2-Laplace): objective vs iterations, batch size and learning rate "
    "(Figs. 1-3)",
)
def run(out_dir: Path, quick: bool) -> list[Path]:
    """Reproduce Section IV, Figs. 1-3 (``quick``: :data:`QUICK_REPEATS` permutations instead
    of 20 and about :data:`QUICK_PATH_POINTS` recorded iterates per run instead of 150).

    Writes ``fig1_objective_vs_samples.png``, ``fig2_objective_vs_batch_size.png``,
    ``fig3_learning_rates.png``, the CSV files behind them and ``summary.md`` into ``out_dir``.
    """
    if quick:
        return reproduce(out_dir, repeats=QUICK_REPEATS, path_points=QUICK_PATH_POINTS, quick=True)
    return reproduce(out_dir)
