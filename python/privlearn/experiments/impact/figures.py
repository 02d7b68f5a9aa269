"""The impact comparison's figures: ROC curves of seed 0 and the choice of the Laplace scale.

Belongs here: :func:`fig_roc` (train and test ROC of every scheme without pruning, seed 0) and
:func:`fig_calibration` (calibration error against sigma, mean over seeds). Not here: the shared
figure layout (:mod:`privlearn.experiments.figures`).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from privlearn.experiments.figures import fit_suptitle, fit_title, new_figure, save_figure
from privlearn.experiments.impact.methods import part_sizes
from privlearn.experiments.impact.simulate import ImpactResult


def fig_roc(res: ImpactResult, path: Path) -> Path:
    names = [m for m in res.methods if m in res.rocs and "+sig" not in m]
    ncols = 4
    nrows = max(1, math.ceil(len(names) / ncols))
    fig, axes = new_figure(nrows, ncols, width=3.3, height=3.0)
    for ax in axes.ravel()[len(names) :]:
        ax.set_visible(False)
    for ax, name in zip(axes.ravel(), names):
        (ftr, ttr), (fte, tte) = res.rocs[name]
        row = next(r for r in res.rows if r["method"] == name and r["seed"] == 0)
        ax.plot(ftr, ttr, color="tab:blue", lw=1.2, label=f"train {row['train_auc']:.3f}")
        ax.plot(fte, tte, color="tab:red", lw=1.2, label=f"test {row['test_auc']:.3f}")
        ax.plot([0, 1], [0, 1], color="0.6", lw=0.8, ls=":")
        fit_title(ax, name, fontsize=9)
        ax.set_xlabel("false positive rate", fontsize=8)
        ax.set_ylabel("true positive rate", fontsize=8)
        ax.legend(fontsize=7, loc="lower right", title="AUC", title_fontsize=7)
        ax.tick_params(labelsize=7)
    fit_suptitle(
        fig, "ROC of the logistic model on coded data, seed 0 (train: model rows)", fontsize=10
    )
    return save_figure(fig, path)


def fig_calibration(res: ImpactResult, path: Path) -> Path:
    fig, axes = new_figure(1, 1, width=5.0, height=3.4)
    ax = axes[0, 0]
    for name in dict.fromkeys(r["method"] for r in res.cal_rows):
        sig = np.array(res.sigmas)
        err = np.array(
            [
                np.mean(
                    [
                        r["cal_error"]
                        for r in res.cal_rows
                        if r["method"] == name and r["sigma"] == s
                    ]
                )
                for s in sig
            ]
        )
        ax.plot(sig, err, marker="o", ms=3, lw=1.1, label=name)
    ax.set_xlabel("Laplace scale sigma (per count)")
    seeds = f"mean of {res.seeds} seeds" if res.seeds > 1 else "1 seed"
    ax.set_ylabel(f"calibration error rate ({seeds})")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fit_title(
        ax,
        "Choice of the Laplace scale on the calibration set "
        f"(synthetic, n = {part_sizes(res.quick)['cal']:,})",
        fontsize=10,
    )
    return save_figure(fig, path)
