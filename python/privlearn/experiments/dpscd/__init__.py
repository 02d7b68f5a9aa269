"""Reproduction of Damaskinos, Mendler-Duenner, Guerraoui, Papandreou, Parnell (2021),
"Differentially Private Stochastic Coordinate Descent" (AAAI), Section 5 and Figures 1-3.

Set-up (Section 5; hyper-parameters as in the authors' public code, since the paper defers them
to its Appendix E): L2-regularised generalised linear models with ``lambda = 1e-4``, 50 epochs,
``delta = 1e-3`` and ``epsilon in {0.1, 0.5, 1, 2, 5, 10}`` plus ``epsilon = inf`` (the private
algorithms without noise). Three applications:

- ridge regression on YearPredictionMSD (test MSE): the real file when it is found under the
  data folder (``msd/YearPredictionMSD.txt`` or the LIBSVM pair), else a synthetic set of the
  same shape (:func:`privlearn.data.make_msd_like`); first 463,715 rows train, last 51,630 test;
  years centred by the training mean;
- logistic regression and L2-SVM (hinge) on Phishing (a seeded 75/25 split) and Adult
  (``adult.data`` / ``adult.test``; ``fnlwgt`` and ``education`` dropped, numeric columns
  standard-scaled with the training statistics, categoricals one-hot), measured by test
  accuracy.

Every feature is divided by its maximum absolute value on the training set, then every row is
scaled to unit L2 norm (Section 2.1 assumes ``||x_i|| = 1``). The scaling bounds, the Adult
statistics and the MSD label mean come from the data, as in the paper; this is outside the DP
guarantee (the :class:`~privlearn.exceptions.PrivacyLeakWarning` is silenced on purpose).

Methods (Section 5): SCD (non-private SDCA, no tuning), SGD (non-private mini-batch SGD;
tuned: ``eta``, ``L``), DP-SCD (Algorithm 1; tuned: ``L``, ``C``; noise ``sigma C`` on ``v``
only, the dual state hidden, with the estimators' per-visit jitter on the batch's ``alpha``
(issue 20; the paper's Lemma 1 puts ``sqrt(2) sigma C`` on ``alpha_B`` and ``v``)), SeqDP-SCD
(sequential updates inside a batch; tuned: ``L``, ``C``; noise ``2 C sqrt(L (L+1)) sigma``,
Appendix C) and DP-SGD (Abadi et al. 2016; tuned: ``eta``, ``L``,
``C``; noise ``N(0, sigma^2 C^2)`` on the summed clipped gradients). All private methods use
Poisson batches with rate ``q = L / N`` and ``T = ceil(epochs N / L)`` steps, and ``sigma`` is
the smallest noise multiplier that makes ``T`` subsampled Gaussian steps ``(epsilon, delta)``-DP
(:func:`privlearn.accounting.calibrate_sigma`, the RDP accountant). Every run is the C++ core
(:func:`privlearn.linear.scd_train`, :func:`privlearn.linear.sgd_train`).

Protocol: 25% of the training set is held out for validation. For every (task, method,
epsilon) each configuration of the grid is trained once on the remaining 75% and the one with
the best validation metric is kept (one tuning run per configuration); it is then trained
``runs`` more times with fresh seeds and its test metric is reported as mean ± sample std. The
seed of a run depends only on (task, method, epsilon, configuration, phase, run index).
Fig. 2 re-uses those final runs on YearPredictionMSD (objective recorded every epoch); Fig. 3
is a separate sweep of DP-SCD over ``L`` and ``C`` at ``epsilon = 1``.

The package, one module per piece (the names below are re-exported here):

- :mod:`.settings`: the constants, tasks, grids and configurations of Section 5;
- :mod:`.data`: the data sets, split and preprocessed (:func:`prepare_dataset`);
- :mod:`.training`: one run (its seed, its noise multiplier, the fit);
- :mod:`.simulation`: tuning, selection and the final runs (:func:`simulate`,
  :class:`DPSCDResult`);
- :mod:`.claims`: the paper's claims checked on the numbers (:func:`evaluate_claims`);
- :mod:`.fig1`, :mod:`.fig2`, :mod:`.fig3`: each figure's table, drawing and summary section;
- :mod:`.configurations`: the tuning cost (:func:`config_counts`);
- :mod:`.outputs`, :mod:`.summary`: the files and ``summary.md`` (:func:`write_outputs`);
- here: :func:`reproduce` and the registered :func:`run`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from privlearn.experiments import register
from privlearn.experiments.claims import Claim
from privlearn.experiments.dpscd.claims import evaluate_claims
from privlearn.experiments.dpscd.configurations import config_counts
from privlearn.experiments.dpscd.data import Split, find_msd_files, prepare_dataset, ridge_optimum
from privlearn.experiments.dpscd.outputs import write_outputs
from privlearn.experiments.dpscd.settings import (
    DELTA,
    EPOCHS,
    EPSILONS,
    FIG2_EPSILONS,
    FIG3_EPSILON,
    GRIDS,
    LAMBDA,
    METHODS,
    PAPER_TASKS,
    QUICK_EPOCHS,
    QUICK_EPSILONS,
    QUICK_FIG3_RUNS,
    QUICK_GRIDS,
    QUICK_RUNS,
    QUICK_SIZES,
    RUNS,
    TASKS,
    VALID_FRACTION,
    Config,
    Grid,
    Task,
)
from privlearn.experiments.dpscd.settings import PAPER as PAPER  # not in __all__
from privlearn.experiments.dpscd.simulation import DPSCDResult, simulate
from privlearn.experiments.figures import require_matplotlib

__all__ = [
    "DELTA",
    "EPOCHS",
    "EPSILONS",
    "FIG2_EPSILONS",
    "FIG3_EPSILON",
    "GRIDS",
    "LAMBDA",
    "METHODS",
    "PAPER_TASKS",
    "QUICK_EPOCHS",
    "QUICK_EPSILONS",
    "QUICK_FIG3_RUNS",
    "QUICK_GRIDS",
    "QUICK_RUNS",
    "QUICK_SIZES",
    "RUNS",
    "TASKS",
    "VALID_FRACTION",
    "Claim",
    "Config",
    "DPSCDResult",
    "Grid",
    "Split",
    "Task",
    "config_counts",
    "evaluate_claims",
    "find_msd_files",
    "prepare_dataset",
    "reproduce",
    "ridge_optimum",
    "run",
    "simulate",
    "write_outputs",
]


def reproduce(out_dir: Path, *, plots: bool = True, **settings: Any) -> list[Path]:
    """Run :func:`simulate` and :func:`write_outputs`; return the written files.

    ``settings`` are :func:`simulate`'s keyword arguments (``tasks``, ``epsilons``,
    ``include_infinity``, ``methods``, ``runs``, ``epochs``, ``grids``, ``sizes``,
    ``fig3_runs``, ``data_home``, ``n_jobs``, ``quick``, ``progress``), with the same defaults:
    the paper's settings (Section 5) with the grids of :data:`GRIDS`. With ``plots`` (the
    default) matplotlib must be installed; this is checked before the simulation starts.
    """
    if plots:
        require_matplotlib()
    return write_outputs(simulate(**settings), out_dir, plots=plots)


@register(
    "dpscd",
    "Damaskinos et al. 2021",
    "DP-SCD vs DP-SGD, SCD, SGD, SeqDP-SCD: privacy-utility trade-off, convergence, L vs C "
    "(Figs. 1-3)",
)
def run(out_dir: Path, quick: bool) -> list[Path]:
    """Reproduce Section 5, Figs. 1-3.

    ``quick`` (:data:`QUICK_EPSILONS`, :data:`QUICK_EPOCHS`, :data:`QUICK_RUNS`,
    :data:`QUICK_FIG3_RUNS`, :data:`QUICK_SIZES`, :data:`QUICK_GRIDS`): eps in {0.1, 1, 10}
    and inf, 10 epochs, 3 runs per point, 1 run per Fig. 3 point, 2-value grids, seeded
    subsamples of 8,000 Adult and 20,000 YearPredictionMSD (or stand-in) training rows; every
    figure and claim of the full run, noisier (``summary.md`` says what was cut). Writes
    ``fig1_privacy_utility.png``, ``fig2_convergence.png``, ``fig3_batch_size.png``, the CSV
    files behind them and ``summary.md`` into ``out_dir``.
    """
    if quick:
        return reproduce(
            out_dir,
            epsilons=QUICK_EPSILONS,
            runs=QUICK_RUNS,
            epochs=QUICK_EPOCHS,
            grids=QUICK_GRIDS,
            sizes=QUICK_SIZES,
            fig3_runs=QUICK_FIG3_RUNS,
            quick=True,
        )
    return reproduce(out_dir)
