"""Reproduction of Win-Vector's "Using differential privacy to reuse training data": impact
coding of high-cardinality categoricals, naive vs Laplace-smeared vs split vs cross vs jackknife.

Set-up (the note and its R code ``CodingExample.Rmd``): the generator of
:func:`privlearn.data.make_large_categorical` (10 signal variables of 10 levels, 30 noise
variables of 500 levels, level probabilities uniform random then normalised, signal effects
N(0, 1) with a random half of each signal variable's levels set to 0 as in the R code
``mkModel.R``, outcome ``sum of effects + N(0, 1) > 0``); train n = 2,000, test n = 10,000 and a
calibration set of n = 10,000 (the issue's size; the R code uses 2,000) on which the Laplace
noise scale sigma is chosen from ``0, 1, ..., 20`` by the error rate of the downstream model,
as in the R code. Each coded training set trains a logistic regression (scikit-learn, on
standardised codes, ``C = 1e4``: practically the unpenalised ``glm`` of the note), and we
report train and test AUC and the test error at threshold 0.5, for every scheme with and
without significance pruning (vtreat's ``rareSig = 0.3`` of the note's vtreat runs), over
10 seeds (each a new design and new data). Peers on the same data: scikit-learn's
``TargetEncoder(cv=5)`` and, when installed, category_encoders' ``TargetEncoder`` and
``LeaveOneOutEncoder``.

The Laplace rows are epsilon-DP code books for the chosen sigma (``epsilon = 40 / sigma`` for
40 columns); choosing sigma on the calibration set is itself not private and is not counted.

The package, one module per piece: :mod:`~privlearn.experiments.impact.methods` (settings, the
schemes, fitting and scoring one), :mod:`~privlearn.experiments.impact.simulate` (the
synthetic data and the seeds), :mod:`~privlearn.experiments.impact.claims` (the note's claims),
:mod:`~privlearn.experiments.impact.figures` (ROC, calibration),
:mod:`~privlearn.experiments.impact.outputs` (CSV files and ``summary.md``) and
:mod:`~privlearn.experiments.impact.adult` (the UCI Adult table). This module registers the
reproduction (:func:`run`) and re-exports the public names.
"""

from __future__ import annotations

from pathlib import Path

from privlearn.experiments import register
from privlearn.experiments.figures import require_matplotlib
from privlearn.experiments.impact.adult import ADULT_METHODS, ADULT_N_TRAIN, adult_table
from privlearn.experiments.impact.claims import evaluate_claims
from privlearn.experiments.impact.methods import (
    _QUICK_SIGMAS,
    BLOG_TEST_ERROR,
    METHODS,
    N_CAL,
    N_FOLDS,
    N_TEST,
    N_TRAIN,
    PAPER,
    QUICK_N_CAL,
    QUICK_N_TEST,
    QUICK_SEEDS,
    SIGMAS,
    SIGNIFICANCE,
    Method,
)
from privlearn.experiments.impact.outputs import write_outputs
from privlearn.experiments.impact.simulate import ImpactResult, run_seed, simulate
from privlearn.experiments.tables import write_text

__all__ = [
    "ADULT_METHODS",
    "ADULT_N_TRAIN",
    "BLOG_TEST_ERROR",
    "METHODS",
    "N_CAL",
    "N_FOLDS",
    "N_TEST",
    "N_TRAIN",
    "QUICK_N_CAL",
    "QUICK_N_TEST",
    "QUICK_SEEDS",
    "PAPER",
    "SIGMAS",
    "SIGNIFICANCE",
    "ImpactResult",
    "Method",
    "adult_table",
    "evaluate_claims",
    "reproduce",
    "run",
    "run_seed",
    "simulate",
    "write_outputs",
]


def reproduce(
    out_dir: Path,
    *,
    seeds: int = 10,
    sigmas: tuple[float, ...] = SIGMAS,
    methods: tuple[Method, ...] | list[Method] = METHODS,
    quick: bool = False,
    plots: bool = True,
    n_jobs: int | None = None,
    progress: bool = True,
) -> list[Path]:
    """Run :func:`simulate` and :func:`write_outputs`; return the written files."""
    if plots:
        require_matplotlib()
    res = simulate(
        seeds=seeds, sigmas=sigmas, methods=methods, quick=quick, n_jobs=n_jobs, progress=progress
    )
    return write_outputs(res, out_dir, plots=plots)


@register(
    "impact",
    "Win-Vector, DP impact coding",
    "impact coding of high-cardinality categoricals: naive vs Laplace vs split vs cross vs "
    "jackknife (train/test AUC, test error, ROC)",
)
def run(out_dir: Path, quick: bool) -> list[Path]:
    """Reproduce the note's comparison (``quick``: :data:`QUICK_SEEDS` seed, calibration and
    test sets of :data:`QUICK_N_CAL` and :data:`QUICK_N_TEST` rows, 6 sigmas; on Adult 1 seed).

    Writes ``summary.md``, ``runs.csv``, ``summary.csv``, ``calibration.csv``,
    ``roc_seed0.png`` and ``calibration.png`` into ``out_dir``, then the same schemes on UCI
    Adult (:func:`adult_table`: ``adult_runs.csv``, ``adult_table.md``, appended to
    ``summary.md``; the copy embedded in the package when the data folder lacks Adult).
    """
    if quick:
        written = reproduce(out_dir, seeds=QUICK_SEEDS, sigmas=_QUICK_SIGMAS, quick=True)
    else:
        written = reproduce(out_dir)
    extra = adult_table(Path(out_dir), quick)
    summary = Path(out_dir) / "summary.md"
    table = (Path(out_dir) / "adult_table.md").read_text(encoding="utf-8")
    write_text(summary, summary.read_text(encoding="utf-8") + "\n" + table)
    return written + [p for p in extra if p not in written]
