"""``summary.md`` of the DP-SCD reproduction: what ran, the claims checked, the tables.

Belongs here: the paper's own text (title, settings, privacy model, quick-mode cut, the
no-noise sanity check) and the order of the sections. The sections every reproduction shares
(quick-mode note, data, claims, files) come from :mod:`privlearn.experiments.summary`; each
figure's and the tuning cost's own section from its module (:mod:`.fig1`, :mod:`.fig2`,
:mod:`.fig3`, :mod:`.configurations`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from privlearn.experiments.claims import Claim
from privlearn.experiments.dpscd import configurations, fig1, fig2, fig3
from privlearn.experiments.dpscd.claims import _fmt
from privlearn.experiments.dpscd.settings import (
    DELTA,
    EPOCHS,
    EPSILONS,
    FIG3_RUNS,
    LAMBDA,
    RUNS,
    TASKS,
)
from privlearn.experiments.dpscd.simulation import DPSCDResult
from privlearn.experiments.summary import (
    claims_section,
    data_section,
    files_section,
    quick_mode_note,
)
from privlearn.linear.scd_estimators import ALPHA_JITTER

#: The paragraph before the claims: how they were judged.
_CLAIMS_INTRO = (
    "Criteria were fixed before looking at the results; 'diff/se' is the difference of the "
    "means divided by its standard error over the runs (for information)."
)
#: How the figures show the numbers (listed under Files when a figure was drawn).
_FIGURE_NOTE = (
    "Fig. 1 draws eps = inf at the right end of the axis and keeps the MSE axis on SCD, "
    "SGD, DP-SCD and DP-SGD (SeqDP-SCD's larger values are listed in the panel). Fig. 2 "
    "draws gaps below 1e-9 x the optimum at that floor; on its log axis the lower half of "
    "a ± std band is drawn down to at most half the mean (the CSV files have the exact "
    "values)."
)


def _header(res: DPSCDResult) -> list[str]:
    """Title, what ran, the settings and the privacy model."""
    eps_text = ", ".join(f"{e:g}" for e in res.epsilons) + (", inf" if res.include_infinity else "")
    lines = [
        "# Damaskinos et al. (2021): Differentially Private Stochastic Coordinate Descent, Sec. 5",
        "",
        "Reproduction of Figs. 1-3 (privacy-utility trade-off, convergence, mini-batch size vs "
        "scaling factor) with the C++ core (`privlearn.linear.scd_train`: variants `scd`, "
        "`dual` = DP-SCD, `seq` = SeqDP-SCD; `privlearn.linear.sgd_train`: SGD and DP-SGD with "
        "the Gaussian mechanism).",
        "",
        f"Settings: lambda={LAMBDA:g}, delta={DELTA:g}, eps in {{{eps_text}}}, {res.epochs} "
        f"epochs, Poisson batches (q = L/N) for every mini-batch method, sigma from the RDP "
        f"accountant for T = ceil(epochs N / L) steps; DP-SCD: v noise sigma*C, hidden alpha "
        f"(issue 20; per-visit jitter {ALPHA_JITTER:g} sigma C on the batch's alpha; the "
        f"paper's Lemma 1: sqrt(2) sigma C on alpha_B and v), "
        f"SeqDP-SCD noise 2 C sqrt(L(L+1)) sigma, DP-SGD noise sigma C on the summed clipped "
        f"gradients; constant learning rate for SGD and DP-SGD. One tuning run per "
        f"configuration on 75% of the training part, selection on the other 25% (validation), "
        f"then {res.runs} fresh runs of the selected configuration, evaluated on the test part "
        f"(mean ± sample std). Seeds: one per (task, method, eps, configuration, phase, run). "
        f"Computed in {res.seconds:.0f} s.",
        "",
        "Privacy model: as in the paper, the training-set sizes N are treated as public (the "
        "schedule T, q = L/N and lambda N use the exact N; the library's estimators instead "
        "take a declared `n_samples` or spend 5% of epsilon on a noisy count). Accounting "
        "(issue 20): DP-SCD releases only v, its dual state alpha stays hidden, so each step "
        "is a subsampled Gaussian of sensitivity C on v (noise sigma*C) and alpha gets no "
        "privacy noise (the hidden-state argument in `privlearn.linear.scd_estimators`); "
        "SeqDP-SCD keeps fresh noise on every dual coordinate at every step (drawn lazily when "
        "a row is next sampled). The paper's Algorithm 1 puts sqrt(2) sigma C on the batch's "
        "alpha and on v, so the private DP-SCD numbers differ from the paper's and from "
        "earlier versions of this reproduction.",
        "",
    ]
    return lines


def _quick_text(res: DPSCDResult) -> str:
    """What ``--quick`` cut, from the settings that ran (the quick-mode note)."""

    def braces(values: list[float]) -> str:
        return "{" + ", ".join(f"{e:g}" for e in values) + "}"

    cuts = []
    if list(res.epsilons) != list(EPSILONS):
        cuts.append(
            f"eps in {braces(res.epsilons)} instead of the paper's {braces(list(EPSILONS))}"
        )
    if res.runs != RUNS:
        cuts.append(f"{res.runs} runs per point instead of {RUNS}")
    if res.epochs != EPOCHS:
        cuts.append(f"{res.epochs} epochs instead of {EPOCHS}")
    cuts.append("2-value grids and a single DP-SGD clipping bound (see Tuning cost)")
    if res.fig3_task and res.fig3_runs != FIG3_RUNS:
        runs = f"{res.fig3_runs} run{'s' if res.fig3_runs != 1 else ''}"
        cuts.append(f"{runs} per Fig. 3 point instead of {FIG3_RUNS}")
    for ds, n in res.size_limits.items():
        cuts.append(f"{n:,} {res.label(ds)} training rows (a seeded subsample; see Data)")
    return (
        "; ".join(cuts) + ". Every figure and claim of the full run is drawn and checked, but "
        "the numbers and verdicts are much noisier than in the full run "
        "(`privlearn reproduce dpscd`)."
    )


def _sanity_check(res: DPSCDResult) -> list[str]:
    """DP-SCD at epsilon = inf against SCD, per task (both run without noise)."""
    inf_lines = []
    for t in res.tasks:
        if (t, "DP-SCD", math.inf) in res.final and (t, "SCD", math.inf) in res.final:
            task = TASKS[t]
            a = res.stats(t, "DP-SCD", math.inf)[0]
            b = res.stats(t, "SCD", math.inf)[0]
            inf_lines.append(f"{t}: DP-SCD {_fmt(task, a)} vs SCD {_fmt(task, b)}")
    if not inf_lines:
        return []
    return [
        "Sanity check (no noise): DP-SCD at eps = inf vs SCD: " + "; ".join(inf_lines) + ".",
        "",
    ]


def _files(res: DPSCDResult) -> list[str]:
    """The CSV files, one bullet text each."""
    return [
        "`fig1_tradeoff.csv`: mean and std of the test metric per (task, method, eps), with "
        "the selected configuration",
        "`runs.csv`: every final run (seed, sigma, noise std, validation and test metric)",
        "`tuning.csv`: every tuning run (validation metric; `selected` marks the choice)",
        "`configurations.csv`: configurations tried per method",
        f"`fig2_convergence.csv`: training objective per epoch ({res.label('msd')})",
        "`fig3_batch_size.csv`: DP-SCD test MSE over L and C at eps = 1",
    ]


def summary_text(
    res: DPSCDResult,
    claims: list[Claim],
    counts: list[dict[str, Any]],
    figures: dict[str, Path],
    fig_notes: list[str],
) -> str:
    """The text of ``summary.md``.

    ``claims`` are :func:`~privlearn.experiments.dpscd.evaluate_claims`'s, ``counts``
    :func:`~privlearn.experiments.dpscd.config_counts`'s; ``figures`` maps a label to each
    figure drawn, ``fig_notes`` says what was not drawn.
    """
    lines = _header(res)
    if res.quick:
        lines += quick_mode_note(_quick_text(res))
    data = []
    for ds, note in res.notes.items():
        n, nv, nt, d = res.sizes[ds]
        data.append(f"**{ds}** (train {n:,}, validation {nv:,}, test {nt:,}, d={d}): {note}.")
    lines += data_section(data, res.skipped)
    lines += claims_section(claims, intro=_CLAIMS_INTRO)
    lines += _sanity_check(res)
    lines += configurations.section(res, counts)
    lines += fig1.section(res) + fig2.section(res) + fig3.section(res)
    notes = [*fig_notes, _FIGURE_NOTE] if figures else fig_notes
    lines += files_section(figures, _files(res), notes)
    return "\n".join(lines)
