"""Figures 1-4: log-likelihood against iteration, plain against enhanced (Figures 1-3, one per
optimizer), and raw gradient against raw quadratic gradient on lbw (Figure 4).

Belongs here: :func:`fig_optimizer` and :func:`fig4_raw_gradient`. Not here: the shared figure
layout (:mod:`privlearn.experiments.figures`).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from privlearn.experiments.figures import fit_suptitle, fit_title, new_figure, save_figure
from privlearn.experiments.quadgrad.simulate import (
    FIG4_ITERS,
    FIG4_LR,
    FIG4_QLR,
    FIG4_QLR_LARGE,
    QuadgradCurves,
)

_TITLES = {"nag": "NAG", "adagrad": "Adagrad", "adam": "Adam"}


def fig4_raw_gradient(res: QuadgradCurves, path: Path) -> Path:
    fig, axes = new_figure(1, 2, width=5.0, height=3.6)
    its = np.arange(FIG4_ITERS + 1)
    panels = (
        (False, (*FIG4_LR,), "(a) gradient ascent: beta += lr g", "lr"),
        (True, (*FIG4_QLR, FIG4_QLR_LARGE), "(b) quadratic gradient: beta += LR G", "LR"),
    )
    for ax, (enhanced, rates, title, name) in zip(axes[0], panels):
        colors = np.linspace(0.1, 0.9, len(rates))
        for lr, c in zip(rates, colors):
            style = {"color": (c, 0.2, 1 - c)}
            if enhanced and lr == FIG4_QLR_LARGE:
                style = {"color": "black", "ls": ":"}
            ax.plot(its, res.fig4[(enhanced, lr)], label=f"{name} = {lr:g}", **style)
        if math.isfinite(res.optimum.get("lbw", math.nan)):
            ax.axhline(res.optimum["lbw"], color="grey", ls="--", lw=0.8)
        ax.set_ylim(-130, -100)
        fit_title(ax, title, fontsize=9)
        ax.set_xlabel("iteration")
        ax.set_ylabel("log-likelihood")
        ax.legend(fontsize=6, ncol=2)
    fit_suptitle(fig, "Figure 4: raw gradient vs raw quadratic gradient on lbw")
    return save_figure(fig, path)


def fig_optimizer(res: QuadgradCurves, opt: str, number: int, path: Path) -> Path:
    n = len(res.datasets)
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig, axes = new_figure(rows, cols)
    its = np.arange(res.iters + 1)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    for ax, ds in zip(axes.ravel(), res.datasets):
        ax.plot(its, res.paths[(ds, opt, False)], label=_TITLES[opt], color="tab:blue")
        ax.plot(its, res.paths[(ds, opt, True)], label=f"Enhanced {_TITLES[opt]}", color="tab:red")
        if math.isfinite(res.optimum.get(ds, math.nan)):
            ax.axhline(res.optimum[ds], color="grey", ls="--", lw=0.8, label="MLE (lbfgs)")
        # start the y-axis at the worst value of the paths after the first iteration, so the
        # initial transient does not flatten the curves
        lows = [res.paths[(ds, opt, e)][1:].min() for e in (False, True)]
        top = max(res.paths[(ds, opt, e)].max() for e in (False, True))
        top = max(top, res.optimum.get(ds, -math.inf))
        low = max(min(lows), res.paths[(ds, opt, False)][0] * 1.5)
        if np.isfinite(low) and np.isfinite(top) and top > low:
            ax.set_ylim(low, top + 0.05 * (top - low))
        n_rows, d = res.shapes[ds]
        fit_title(ax, f"{ds} (n={n_rows}, d={d})")
        ax.set_xlabel("iteration")
        ax.set_ylabel("log-likelihood")
        ax.legend(fontsize=7)
    fit_suptitle(fig, f"Figure {number}: {_TITLES[opt]} vs Enhanced {_TITLES[opt]} (in the clear)")
    return save_figure(fig, path)
