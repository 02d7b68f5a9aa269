"""Reproduction of Chiang, "Privacy-preserving logistic regression training with a faster
gradient variant": Figures 1-3 (log-likelihood vs iteration of NAG, Adagrad, Adam and their
quadratic-gradient versions, in the clear) and Figure 4 (raw gradient vs raw quadratic gradient).

Set-up (Section 3.3, "Performance Evaluation"): full-batch training of logistic regression from
``beta = 0``; the rows are ``x = (1, features)`` with every feature min-max scaled to ``[0, 1]``
(the paper's normalisation; the bounds are computed from the data, which is fine for a
non-private convergence study); ``H_bar = -X^T X / 4`` for ``B_bar``. Learning rates are the
paper's: NAG ``10 / ((1 + t) n)`` (Kim et al. 2018a) vs enhanced NAG ``1 + 10 / ((1 + t) n)``
(Algorithm 1), Adagrad 0.01 vs 1 + 0.01, Adam ``alpha = 0.001`` vs ``1 + 0.001``
(``beta_1 = 0.9``, ``beta_2 = 0.999``). See :mod:`privlearn.linear.quadgrad` for the
algorithms and where the text and Algorithm 1 differ.

Data sets: edin, lbw, pcs, uis (the HELR files), and MNIST 3-vs-8 downsampled to 14 x 14 (the
11,982 training rows; :func:`privlearn.data.load_mnist38`). Optional, when the user's data
folder has them: ``helr/nhanes3.txt`` and the iDASH 2017 CSV ``idash/idash.csv``
(:func:`privlearn.data.load_idash`). The financial data set (422,108 x 200) and the UCI
credit-default set are not public in a form this package loads; the clear-text speed on that
shape is in ``bench/python/bench_quadgrad.py``.

Figure 4 (when lbw is present): raw gradient ascent ``beta += lr g`` (lr 0.011 .. 0.021) vs raw
quadratic-gradient ascent ``beta += LR G`` (LR 1.0 .. 2.0, and 3.0) on lbw.

Outputs: ``fig1_nag.png``, ``fig2_adagrad.png``, ``fig3_adam.png``,
``fig4_raw_gradient_lbw.png``, ``loglik_paths.csv``, ``fig4_paths.csv``, ``comparison.csv``
and ``summary.md``, which states for every data set and optimizer whether the
enhanced method is ahead after a small number of iterations (10). Every run is deterministic.
Tables 1-2 (encrypted training in the CKKS slot simulator, with the planner's iteration counts)
are written by :mod:`privlearn.experiments.quadgrad.tables`.

The package, one module per piece: :mod:`~privlearn.experiments.quadgrad.data` (the data sets),
:mod:`~privlearn.experiments.quadgrad.simulate` (the training runs),
:mod:`~privlearn.experiments.quadgrad.claims` (the paper's claims),
:mod:`~privlearn.experiments.quadgrad.figures` (Figures 1-4),
:mod:`~privlearn.experiments.quadgrad.outputs` (CSV files and ``summary.md``) and
:mod:`~privlearn.experiments.quadgrad.tables` (Tables 1-2). This module registers the
reproduction (:func:`run`) and re-exports the public names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from privlearn.experiments import register
from privlearn.experiments.figures import require_matplotlib
from privlearn.experiments.quadgrad.claims import evaluate_claims
from privlearn.experiments.quadgrad.data import DATASETS, OPTIONAL_DATASETS, load_dataset
from privlearn.experiments.quadgrad.outputs import write_outputs
from privlearn.experiments.quadgrad.simulate import (
    CHECK_ITER,
    FIG4_ITERS,
    FIG4_LR,
    FIG4_QLR,
    FIG4_QLR_LARGE,
    FULL_ITERS,
    OPTIMIZERS,
    PAPER,
    QUICK_ITERS,
    QuadgradCurves,
    simulate,
)
from privlearn.experiments.quadgrad.tables import PAPER_ITERATIONS, PAPER_TABLE2, run_tables

__all__ = [
    "CHECK_ITER",
    "DATASETS",
    "FIG4_ITERS",
    "FIG4_LR",
    "FIG4_QLR",
    "FIG4_QLR_LARGE",
    "FULL_ITERS",
    "OPTIMIZERS",
    "OPTIONAL_DATASETS",
    "PAPER",
    "PAPER_ITERATIONS",
    "PAPER_TABLE2",
    "QUICK_ITERS",
    "QuadgradCurves",
    "evaluate_claims",
    "load_dataset",
    "reproduce",
    "run",
    "run_tables",
    "simulate",
    "write_outputs",
]


def reproduce(
    out_dir: Path,
    *,
    datasets: tuple[str, ...] | list[str] = DATASETS,
    iters: int = FULL_ITERS,
    data_home: Any = None,
    plots: bool = True,
    k: int = CHECK_ITER,
    quick: bool = False,
) -> list[Path]:
    """Run :func:`simulate` and :func:`write_outputs`; return the written files (``quick``:
    the summary says what the quick run cut)."""
    if plots:
        require_matplotlib()
    res = simulate(datasets=datasets, iters=iters, data_home=data_home)
    return write_outputs(res, out_dir, plots=plots, k=k, quick=quick)


@register(
    "quadgrad",
    "Chiang, quadratic gradient for HE logistic regression",
    "quadratic-gradient NAG/Adagrad/Adam vs plain in the clear (Figs. 1-4); enhanced vs "
    "baseline NAG encrypted in the CKKS slot simulator (Tables 1-2)",
)
def run(out_dir: Path, quick: bool) -> list[Path]:
    """Reproduce Figures 1-4 (``quick``: :data:`QUICK_ITERS` iterations instead of 100 in
    Figures 1-3), then the HE tables of
    :mod:`privlearn.experiments.quadgrad.tables`.

    Writes ``fig1_nag.png``, ``fig2_adagrad.png``, ``fig3_adam.png``,
    ``fig4_raw_gradient_lbw.png``, ``loglik_paths.csv``, ``fig4_paths.csv``, ``comparison.csv``
    and ``summary.md`` into ``out_dir``.
    """
    written = reproduce(out_dir, iters=QUICK_ITERS, quick=True) if quick else reproduce(out_dir)
    written += run_tables(Path(out_dir), quick)
    return written
