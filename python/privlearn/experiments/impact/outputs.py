"""What the synthetic comparison writes: ``runs.csv``, ``summary.csv``, ``calibration.csv``,
the figures and ``summary.md``.

Belongs here: :func:`write_outputs` and the summary text (settings, the note's claims, the
results table beside the note's numbers, the files), and :func:`score_cells`, the table cells
every scheme row shares (also in the UCI Adult table). Not here: the shared summary sections
(:mod:`privlearn.experiments.summary`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np

from privlearn.experiments.claims import Claim
from privlearn.experiments.impact.claims import evaluate_claims
from privlearn.experiments.impact.figures import fig_calibration, fig_roc
from privlearn.experiments.impact.methods import (
    _BLOG_AUC,
    BLOG_TEST_ERROR,
    N_CAL,
    N_FOLDS,
    N_TEST,
    SIGMAS,
    SIGNIFICANCE,
    part_sizes,
)
from privlearn.experiments.impact.simulate import ImpactResult
from privlearn.experiments.summary import claims_section, files_section, quick_mode_note
from privlearn.experiments.tables import (
    fmt_spread,
    markdown_table,
    mean_std,
    write_csv,
    write_text,
)


def _seeds(n: int) -> str:
    return f"{n} seed{'s' if n != 1 else ''}"


def _pm(values: np.ndarray) -> str:
    """``mean ± std`` over the seeds; the value alone for a single seed (no std)."""
    m, s = mean_std(values)
    return f"{m:.3f} ± {s:.3f}" if np.size(values) > 1 else f"{m:.3f}"


def score_cells(values: Callable[[str], np.ndarray]) -> list[str]:
    """Train AUC, test AUC, test error (mean ± std over seeds) and the chosen sigma (blank where
    no Laplace scale was chosen) of one scheme; ``values(key)`` gives its per-seed numbers."""
    sig = values("sigma")
    return [
        _pm(values("train_auc")),
        _pm(values("test_auc")),
        _pm(values("test_error")),
        "" if np.isnan(sig).all() else fmt_spread(sig, 2),
    ]


def write_outputs(res: ImpactResult, out_dir: Path, *, plots: bool = True) -> list[Path]:
    """Write the CSV files, figures (if ``plots``) and ``summary.md``; return their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    cols = [
        "seed", "method", "code", "mode", "significance", "sigma", "epsilon", "model_rows",
        "train_auc", "test_auc", "train_error", "test_error", "seconds",
    ]  # fmt: skip
    written.append(write_csv(out_dir / "runs.csv", res.rows, cols))
    summary_rows = []
    for m in res.methods:
        row: dict[str, Any] = {"method": m, "n_seeds": len(res.values(m, "test_auc"))}
        for key in ("train_auc", "test_auc", "test_error", "sigma", "epsilon"):
            row[f"{key}_mean"], row[f"{key}_std"] = mean_std(res.values(m, key))
        summary_rows.append(row)
    written.append(
        write_csv(
            out_dir / "summary.csv",
            summary_rows,
            ["method", "n_seeds"]
            + [
                f"{k}_{s}"
                for k in ("train_auc", "test_auc", "test_error", "sigma", "epsilon")
                for s in ("mean", "std")
            ],
        )
    )
    if res.cal_rows:
        written.append(
            write_csv(
                out_dir / "calibration.csv", res.cal_rows, ["seed", "method", "sigma", "cal_error"]
            )
        )
    figures: dict[str, Path] = {}
    if plots and res.rows:
        figures["ROC curves, seed 0"] = fig_roc(res, out_dir / "roc_seed0.png")
        if res.cal_rows:
            figures["calibration of sigma"] = fig_calibration(res, out_dir / "calibration.png")
        written.extend(figures.values())
    claims = evaluate_claims(res)
    written.append(write_text(out_dir / "summary.md", _summary(res, claims, figures)))
    return written


def _summary(res: ImpactResult, claims: list[Claim], figures: dict[str, Path]) -> str:
    n = part_sizes(res.quick)
    sigmas = ", ".join(f"{s:g}" for s in res.sigmas)
    lines = [
        "# Win-Vector: using differential privacy to reuse training data (impact coding)",
        "",
        f"Reproduction of the note's experiment with `privlearn.encoding.ImpactEncoder`. "
        f"{_seeds(res.seeds)} (each a new design and new data from `make_large_categorical`: "
        f"10 signal x 10 levels, 30 noise x 500 levels); train n = {n['train']:,}, calibration "
        f"n = {n['cal']:,} (picks the Laplace sigma from {{{sigmas}}} by "
        f"error rate), test n = {n['test']:,}. Downstream model: logistic regression on the "
        f"standardised codes (C = 1e4); split mode: half the rows code, the other half train; "
        f"cross: {N_FOLDS} folds; significance pruning: binomial test at {SIGNIFICANCE} "
        f"(vtreat's rareSig in the note). Computed in {res.seconds:.0f} s.",
        "",
    ]
    if res.quick:
        lines += quick_mode_note(
            f"{_seeds(res.seeds)} instead of 10; calibration n = {n['cal']:,} instead of "
            f"{N_CAL:,} (the R code's size) and test n = {n['test']:,} instead of {N_TEST:,}; "
            f"{len(res.sigmas)} sigmas instead of {len(SIGMAS)} (0, 1, ..., 20); on Adult "
            "(below) 1 seed instead of 5 and the same sigmas. Every table, figure and claim of "
            "the full run is made and checked, but the numbers are much noisier "
            "(`privlearn reproduce impact` for the full run)."
        )
    lines += claims_section(claims, heading="The note's claims, checked on the numbers")
    lines += [
        "## Results (mean ± std over seeds)"
        if res.seeds > 1
        else "## Results (one seed: no standard deviations)",
        "",
        "epsilon: total privacy of the code book (40 columns, add/remove-one) for the chosen "
        "sigma; inf = not private. Blog: the note's single-run test error for the matching "
        f"scheme; its text quotes test AUCs naive {_BLOG_AUC['naive']}, Laplace "
        f"{_BLOG_AUC['laplace']}, cross {_BLOG_AUC['cross']}.",
        "",
    ]
    table = []
    for m in res.methods:
        eps = res.values(m, "epsilon")
        blog = BLOG_TEST_ERROR.get(m)
        table.append(
            (
                m,
                *score_cells(lambda key, m=m: res.values(m, key)),
                "inf" if np.isinf(eps).all() else fmt_spread(eps, 3),
                "" if blog is None else f"{blog[1]:.3f} ({blog[0]})",
            )
        )
    lines.append(
        markdown_table(
            ["scheme", "train AUC", "test AUC", "test error", "sigma", "epsilon", "blog"], table
        )
    )
    files = {p.name: name for name, p in figures.items()}
    files["runs.csv"] = "every (seed, scheme) with sigma, epsilon, AUCs and errors"
    files["summary.csv"] = "means and standard deviations"
    files["calibration.csv"] = "calibration error of each sigma (Laplace schemes)"
    lines += ["", *files_section({}, files)]
    return "\n".join(lines)
