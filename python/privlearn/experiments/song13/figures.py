"""The figures of the Song et al. (2013) reproduction: Figs. 1-3 of Section IV.

Belongs here: which panels each figure shows and drawing them (:func:`draw`): the objective
along the pass for Fig. 1 (b = 1 and 10) and Fig. 3 (learning rates on the synthetic set), one
drawing function for both (:func:`_fig_paths`), and the final objective against the batch size
for Fig. 2 (:func:`_fig_batch`). The CSV files behind them are written by :mod:`.outputs`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from privlearn.experiments.figures import (
    fit_legend,
    fit_suptitle,
    fit_title,
    new_figure,
    save_figure,
)
from privlearn.experiments.song13.settings import _COLORS, _LABELS, _MECHANISMS
from privlearn.experiments.song13.simulation import Song13Result, _stats


def _band(ax: Any, x: np.ndarray, obj: np.ndarray, label: str, color: str) -> None:
    mean = obj.mean(axis=0)
    std = obj.std(axis=0, ddof=1) if obj.shape[0] > 1 else np.zeros_like(mean)
    ax.plot(x, mean, color=color, label=label, lw=1.3)
    lower = np.maximum(mean - std, mean * 0.5)  # keep the band positive on a log axis
    ax.fill_between(x, lower, mean + std, color=color, alpha=0.2, lw=0)


def _fig_paths(
    res: Song13Result, panels: list[tuple[str, str, int]], path: Path, ncols: int, title: str
) -> Path:
    nrows = -(-len(panels) // ncols)
    fig, axes = new_figure(nrows, ncols)
    for ax in axes.ravel()[len(panels) :]:
        ax.set_visible(False)
    for ax, (ds, rate, b) in zip(axes.ravel(), panels):
        n = res.sizes[ds][0]
        for mech in _MECHANISMS:
            steps, obj = res.paths[(ds, rate, b, mech)]
            samples = np.minimum(steps * b, n)
            _band(ax, samples, obj, mech, _COLORS[mech])
        ax.axhline(res.optimum[ds][0], color="k", ls="--", lw=0.8, label="centralized optimum")
        ax.set_yscale("log")
        ax.set_xlabel("samples processed")
        ax.set_ylabel("objective")
        fit_title(ax, f"{_LABELS[ds]}, b={b}, {rate}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    fit_legend(fig, *axes.ravel()[0].get_legend_handles_labels())
    fit_suptitle(fig, title, fontsize=11)
    return save_figure(fig, path)


def _fig_batch(res: Song13Result, path: Path) -> Path:
    ds_list = res.datasets
    fig, axes = new_figure(len(res.rates), len(ds_list))
    bs = np.asarray(res.batch_sizes)
    for i, rate in enumerate(res.rates):
        for j, ds in enumerate(ds_list):
            ax = axes[i, j]
            for k, mech in enumerate(_MECHANISMS):
                stats = [_stats(res, ds, rate, int(b), mech) for b in bs]
                m = np.array([s[0] for s in stats])
                s = np.array([s[1] for s in stats])
                shift = 1.04 if k else 1 / 1.04  # spread the error bars apart
                ax.errorbar(
                    bs * shift,
                    m,
                    yerr=[np.minimum(s, m * 0.5), s],
                    marker="o",
                    ms=4,
                    capsize=3,
                    color=_COLORS[mech],
                    label=mech,
                    lw=1.2,
                )
            ax.axhline(res.optimum[ds][0], color="k", ls="--", lw=0.9, label="centralized")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xticks(bs)
            ax.set_xticklabels([str(b) for b in bs])
            ax.set_xlabel("batch size b")
            ax.set_ylabel("final objective")
            fit_title(ax, f"{_LABELS[ds]}, {rate}", fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
    fit_legend(fig, *axes[0, 0].get_legend_handles_labels())
    fit_suptitle(
        fig,
        f"Fig. 2: objective after one pass vs batch size (mean ± std, {res.repeats} runs)",
        fontsize=11,
    )
    return save_figure(fig, path)


def draw(res: Song13Result, out_dir: Path) -> tuple[dict[str, Path], list[str]]:
    """Draw Figs. 1-3 into ``out_dir``: ``({label: path}, notes on those not drawn)``."""
    figures: dict[str, Path] = {}
    fig_notes: list[str] = []
    rate = "1/sqrt(t)" if "1/sqrt(t)" in res.rates else res.rates[0]
    b1 = [b for b in (1, 10) if b in res.batch_sizes] or res.batch_sizes[:1]
    panels = [(ds, rate, b) for b in b1 for ds in res.datasets]
    figures["fig1"] = _fig_paths(
        res,
        panels,
        out_dir / "fig1_objective_vs_samples.png",
        len(res.datasets),
        f"Fig. 1: objective vs samples processed, {rate} (mean ± std, {res.repeats} runs)",
    )
    figures["fig2"] = _fig_batch(res, out_dir / "fig2_objective_vs_batch_size.png")
    rates3 = [r for r in ("1/sqrt(t)", "1/(lambda t)") if r in res.rates]
    if "synthetic" in res.datasets and rates3:
        b = min(res.batch_sizes, key=lambda v: (abs(v - 5), v))
        figures["fig3"] = _fig_paths(
            res,
            [("synthetic", r, b) for r in rates3],
            out_dir / "fig3_learning_rates.png",
            len(rates3),
            f"Fig. 3: synthetic data, b={b}: learning rates (mean ± std, {res.repeats} runs)",
        )
    else:
        fig_notes.append("Fig. 3 not drawn: it needs the synthetic data set.")
    return figures, fig_notes
