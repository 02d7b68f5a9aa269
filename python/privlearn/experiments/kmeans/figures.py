"""Section 7, Figure 1: the k-means objective against k, one panel per data set.

Belongs here: :func:`fig1_objective` (mean ± std of every method, with the one-centre
reference) and :func:`data_title` (what ran, with its size; also the table headings of
``summary.md``). Not here: the shared figure layout (:mod:`privlearn.experiments.figures`).
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
from privlearn.experiments.kmeans.data import _DATA_TITLES, _FULL_ROWS
from privlearn.experiments.kmeans.methods import (
    DELTA,
    EPSILON,
    LABELS,
    METHODS,
    ONE_CENTRE_LABEL,
)
from privlearn.experiments.kmeans.simulate import KMeansResult


def data_title(res: KMeansResult, dataset: str) -> str:
    """Panel title: the data that ran, with its size (and whether it is a subsample)."""
    n = res.n_rows[dataset]
    full = _FULL_ROWS.get(dataset)
    size = f"n = {n:,}" + (f" of {full:,}" if full and n < full else "")
    if dataset in res.notes:
        size += " (embedded test images only)"
    return f"{_DATA_TITLES.get(dataset, dataset)}, {size}"


def fig1_objective(res: KMeansResult, summary: list[dict[str, Any]], path: Path) -> Path:
    """Section 7, Figure 1: objective vs k per data set, with the one-centre baseline."""
    one = len(res.datasets) == 1
    fig, axes = new_figure(
        1, len(res.datasets), width=5.5 if one else 4.6, height=3.6 if one else 3.2
    )
    for ax, dataset in zip(axes.ravel(), res.datasets):
        for method in METHODS:
            pts = [
                (s["k"], s["mean_cost"], s["std_cost"])
                for s in summary
                if s["dataset"] == dataset and s["method"] == method
            ]
            if pts:
                k, mu, sd = map(np.array, zip(*pts))
                ax.errorbar(k, mu, yerr=sd, marker="o", capsize=3, label=LABELS[method])
        if dataset in res.one_centre:
            ax.axhline(res.one_centre[dataset], color="k", ls="--", lw=0.9)
            ax.plot([1], [res.one_centre[dataset]], "k*--", ms=9, lw=0.9, label=ONE_CENTRE_LABEL)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks([1, *res.ks])
        ax.set_xticklabels([str(k) for k in (1, *res.ks)])
        ax.tick_params(axis="x", which="minor", bottom=False)
        ax.set_xlabel("k (number of centres)")
        ax.set_ylabel("k-means objective")
        fit_title(ax, data_title(res, dataset), fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    handles, labels = axes.ravel()[0].get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: labels[i] == ONE_CENTRE_LABEL)
    fit_legend(fig, [handles[i] for i in order], [labels[i] for i in order])
    runs = f"{res.runs} run" + ("s, mean ± std" if res.runs > 1 else "")
    delta = f"{DELTA:.0e}".replace("e-0", "e-")  # 1e-6, not 1e-06
    fit_suptitle(
        fig, f"Fig. 1: k-means objective vs k, epsilon = {EPSILON:g}, delta = {delta} ({runs})"
    )
    return save_figure(fig, path)
