"""``summary.md`` of the Song et al. (2013) reproduction: what ran, the claims, the tables.

Belongs here: the paper's own text (title, settings, quick-mode cut), its tables (centralised
optimum, final objective per batch size) and the order of the sections. The sections every
reproduction shares (quick-mode note, data, claims, files) come from
:mod:`privlearn.experiments.summary`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from privlearn.experiments.claims import Claim
from privlearn.experiments.song13.settings import (
    _FULL_SIZE,
    _MECHANISMS,
    EPSILON,
    LAMBDA,
    PATH_POINTS,
)
from privlearn.experiments.song13.simulation import Song13Result, _stats
from privlearn.experiments.summary import (
    claims_section,
    data_section,
    files_section,
    quick_mode_note,
)
from privlearn.experiments.tables import fmt_mean_std, markdown_table

#: The paragraph before the claims: over which data sets they are judged.
_CLAIMS_INTRO = (
    "Verdicts are over MNIST and KDDCup99 (the data sets of the paper's Figs. 1-2) when they "
    "were run, otherwise over the data sets that were; per-data-set lines include the "
    "synthetic set for information. Thresholds were fixed before looking at the results."
)
#: The CSV files, one bullet text each.
_FILES = (
    "`final_objective_runs.csv`: final objective of every run (with its seed)",
    "`final_objective.csv`: mean and std per (data set, rate, b, mechanism) (Fig. 2)",
    "`paths.csv`: mean and std of the objective along the pass (Figs. 1 and 3)",
    "`optimum.csv`: centralised optimum per data set",
)
#: How the figures show the numbers (listed under Files when a figure was drawn).
_FIGURE_NOTE = (
    "On the log axes the lower half of a ± std band or error bar is drawn down to at "
    "most half the mean (the CSV files have the exact std)."
)


def _setting_text(res: Song13Result) -> str:
    sizes = ", ".join(f"{ds} n={n:,} d={d}" for ds, (n, d) in res.sizes.items())
    return (
        f"{'QUICK run: ' if res.quick else ''}{res.repeats} random permutations (with fresh "
        f"noise) per setting; {sizes}; b in {{{', '.join(map(str, res.batch_sizes))}}}; "
        f"rates {', '.join(res.rates)}; lambda={LAMBDA:g}, alpha (epsilon per pass)="
        f"{EPSILON:g}, one pass, projection radius 1/lambda={1 / LAMBDA:g}"
    )


def _quick_note(res: Song13Result) -> list[str]:
    """The quick-mode warning: fewer permutations, smaller data sets."""
    small = [ds for ds, (n, _) in res.sizes.items() if n < _FULL_SIZE[ds]]
    data = (
        f"subsampled data for {', '.join(small)} (see below)" if small else "the paper's data sizes"
    )
    return quick_mode_note(
        f"{res.repeats} permutations per setting instead of the paper's 20, "
        f"{data}; about {res.path_points} recorded iterates per curve instead of {PATH_POINTS} "
        "(the final objective, which the checks use, is always recorded); every figure and "
        "check of the full run is made, but the standard deviations and the checks below are "
        "much noisier than in the full run (`privlearn reproduce song13`)."
    )


def _tables(res: Song13Result) -> list[str]:
    """The centralised optimum per data set, then the final objective per batch size."""
    lines = ["## Centralised optimum (scikit-learn LogisticRegression, C = 1/(n lambda))", ""]
    lines.append(
        markdown_table(
            ["data set", "n", "d", "objective", "gradient norm"],
            [
                (ds, res.sizes[ds][0], res.sizes[ds][1], f"{v:.6g}", f"{g:.2g}")
                for ds, (v, g) in res.optimum.items()
            ],
        )
    )
    lines += ["", "## Final objective after one pass (mean ± std)", ""]
    for ds in res.datasets:
        lines += [f"### {ds} (optimum {res.optimum[ds][0]:.5g})", ""]
        header = ["b"] + [f"{m}, {r}" for r in res.rates for m in _MECHANISMS]
        rows = []
        for b in res.batch_sizes:
            row: list[Any] = [b]
            for r in res.rates:
                for m in _MECHANISMS:
                    row.append(fmt_mean_std(*_stats(res, ds, r, b, m)))
            rows.append(row)
        lines += [markdown_table(header, rows), ""]
    return lines


def summary_text(
    res: Song13Result, claims: list[Claim], figures: dict[str, Path], fig_notes: list[str]
) -> str:
    """The text of ``summary.md``.

    ``claims`` are :func:`~privlearn.experiments.song13.evaluate_claims`'s; ``figures`` maps a
    label to each figure drawn, ``fig_notes`` says what was not drawn.
    """
    lines = [
        "# Song, Chaudhuri, Sarwate (2013): DP mini-batch SGD, Section IV",
        "",
        'Reproduction of Figs. 1-3 of "Stochastic gradient descent with differentially private '
        'updates" (GlobalSIP 2013) with `privlearn.linear.sgd_train` (mechanism `l2-laplace`, '
        "disjoint batches; non-private SGD = mechanism `none` with the same permutation).",
        "",
        f"Settings: {_setting_text(res)}. Objective: (lambda/2)||w||^2 + mean logistic loss on "
        f"the whole training set; std = sample standard deviation over runs. Seeds: one per "
        f"(data set, b, run), shared by the learning rates and by private/non-private runs. "
        f"Computed in {res.seconds:.0f} s.",
        "",
    ]
    if res.quick:
        lines += _quick_note(res)
    lines += data_section({ds: res.notes[ds] for ds in res.datasets}, res.skipped)
    lines += claims_section(claims, intro=_CLAIMS_INTRO)
    lines += _tables(res)
    notes = [*fig_notes, _FIGURE_NOTE] if figures else fig_notes
    lines += files_section(figures, _FILES, notes)
    return "\n".join(lines)
