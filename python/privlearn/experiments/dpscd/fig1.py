"""Fig. 1 of the DP-SCD reproduction: the privacy-utility trade-off (Section 5.1).

Belongs here: everything about Fig. 1 and nothing else: its CSV rows (``fig1_tradeoff.csv``:
:func:`write_table`), the figure (:func:`draw`) and its section of ``summary.md``
(:func:`section`: the test metric and the selected configuration per task, method and
epsilon).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from privlearn.experiments.dpscd.settings import _COLORS, _MARKERS, _PRIVATE, METHODS, TASKS
from privlearn.experiments.dpscd.simulation import DPSCDResult
from privlearn.experiments.dpscd.training import _eps_label
from privlearn.experiments.figures import (
    fit_legend,
    fit_suptitle,
    fit_title,
    new_figure,
    save_figure,
)
from privlearn.experiments.tables import fmt_mean_std, markdown_table, write_csv

#: File names of the table and the figure.
TABLE = "fig1_tradeoff.csv"
FIGURE = "fig1_privacy_utility.png"
_COLUMNS = [
    "task",
    "dataset",
    "model",
    "metric",
    "method",
    "epsilon",
    "config",
    "L",
    "C",
    "eta",
    "n_configs",
    "n_runs",
    "mean",
    "std",
]


def write_table(res: DPSCDResult, out_dir: Path) -> Path:
    """``fig1_tradeoff.csv``: mean and std of the test metric per (task, method, epsilon), with
    the selected configuration and the number of configurations tried."""
    trade = []
    for t in res.tasks:
        task = TASKS[t]
        for m in METHODS:
            for e in res.keys(t, m):
                cfg = res.best[(t, m, e)]
                mu, sd = res.stats(t, m, e)
                trade.append(
                    {
                        "task": t,
                        "dataset": task.dataset,
                        "model": task.model,
                        "metric": task.metric,
                        "method": m,
                        "epsilon": e,
                        "config": cfg.label,
                        "L": cfg.L,
                        "C": cfg.C,
                        "eta": cfg.eta,
                        "n_configs": res.n_configs(t, m, e),
                        "n_runs": len(res.final[(t, m, e)]),
                        "mean": mu,
                        "std": sd,
                    }
                )
    return write_csv(out_dir / TABLE, trade, _COLUMNS)


def _inf_x(res: DPSCDResult) -> float:
    """Where epsilon = inf is drawn on the log axis."""
    return (max(res.epsilons) if res.epsilons else 1.0) * 3.0


def _mse_top(res: DPSCDResult, t: str) -> tuple[float, float] | None:
    """Y range of an MSE panel: SCD, SGD, DP-SCD and DP-SGD (mean ± std) with a margin."""
    bands = [
        (mu - sd, mu + sd)
        for m in ("SCD", "SGD", "DP-SCD", "DP-SGD")
        for e in res.keys(t, m)
        for mu, sd in [res.stats(t, m, e)]
        if math.isfinite(mu + sd)
    ]
    if not bands:
        return None
    lo = min(b[0] for b in bands)
    hi = max(b[1] for b in bands)
    pad = max(0.08 * (hi - lo), 1e-3 * abs(hi))
    return lo - pad, hi + pad


def draw(res: DPSCDResult, path: Path) -> Path:
    """Fig. 1: one panel per task, the test metric of every method against epsilon."""
    tasks = res.tasks
    ncols = min(3, len(tasks))
    nrows = -(-len(tasks) // ncols)
    # one panel (data missing): wider and taller, room for the wrapped title and legend
    size = {"width": 5.5, "height": 4.2} if ncols == 1 else {}
    fig, axes = new_figure(nrows, ncols, **size)
    for ax in axes.ravel()[len(tasks) :]:
        ax.set_visible(False)
    inf_x = _inf_x(res)
    for ax, t in zip(axes.ravel(), tasks):
        task = TASKS[t]
        for m in ("SCD", "SGD"):
            if (t, m, math.inf) in res.final:
                mu, sd = res.stats(t, m, math.inf)
                ls = "--" if m == "SCD" else ":"
                ax.axhline(mu, color=_COLORS[m], ls=ls, lw=1.2, label=f"{m} (non-private)")
                ax.axhspan(mu - sd, mu + sd, color=_COLORS[m], alpha=0.12, lw=0)
        yrange = _mse_top(res, t) if task.metric == "mse" else None
        above: list[str] = []
        for k, m in enumerate(_PRIVATE):
            eps = res.keys(t, m)
            if not eps:
                continue
            xs = np.array([inf_x if math.isinf(e) else e for e in eps])
            st = np.array([res.stats(t, m, e) for e in eps])
            if yrange is not None:  # keep the MSE axis on the competitive methods
                off = ~(st[:, 0] <= yrange[1])
                above += [f"{m} at eps={_eps_label(e)}: {v:.4g}" for e, v in
                          zip(np.asarray(eps)[off], st[off, 0])]  # fmt: skip
                st[off] = np.nan
            shift = 1.0 + 0.05 * (k - 1)  # spread the error bars apart
            ax.errorbar(
                xs * shift,
                st[:, 0],
                yerr=st[:, 1],
                color=_COLORS[m],
                marker=_MARKERS[m],
                ms=4,
                capsize=3,
                lw=1.2,
                label=m,
            )
        ax.set_xscale("log")
        ticks = list(res.epsilons) + ([inf_x] if res.include_infinity else [])
        ax.set_xticks(ticks)
        ax.set_xticklabels(
            [f"{e:g}" for e in res.epsilons] + (["∞"] if res.include_infinity else [])
        )
        ax.minorticks_off()
        ax.set_xlabel("epsilon (delta = 0.001)")
        if task.metric == "mse":
            ax.set_ylabel("test MSE (lower is better)")
            if yrange is not None:
                ax.set_ylim(*yrange)
            if above:
                ax.text(0.98, 0.98, "off scale (mean):\n" + "\n".join(above),
                        transform=ax.transAxes, fontsize=6, va="top", ha="right",
                        color="0.3")  # fmt: skip
        else:
            ax.set_ylabel("test accuracy (higher is better)")
        fit_title(ax, f"{res.label(task.dataset)}: {task.model}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    handles, labels = axes.ravel()[0].get_legend_handles_labels()
    fit_legend(fig, handles, labels)
    fit_suptitle(
        fig,
        f"Fig. 1: privacy-utility trade-off (mean ± std over {res.runs} runs, best configuration "
        "per method and epsilon on a validation split)",
        fontsize=11,
    )
    return save_figure(fig, path)


def section(res: DPSCDResult) -> list[str]:
    """``## Fig. 1``: per task, a table of the test metric (mean ± std) and the selected
    configuration of every method at every epsilon."""
    lines = ["## Fig. 1: test metric (mean ± std) and selected configuration", ""]
    for t in res.tasks:
        task = TASKS[t]
        unit = "test MSE" if task.metric == "mse" else "test accuracy"
        lines += [f"### {t} ({res.label(task.dataset)}, {task.model}, {unit})", ""]
        cols = list(res.epsilons) + [math.inf]
        header = ["method"] + [f"eps={e:g}" for e in res.epsilons] + ["eps=inf / non-private"]
        rows = []
        for m in METHODS:
            if not res.keys(t, m):
                continue
            row: list[Any] = [m]
            for e in cols:
                key = (t, m, e)
                if key in res.final:
                    mu, sd = res.stats(*key)
                    row.append(f"{fmt_mean_std(mu, sd)} ({res.best[key].label})")
                else:
                    row.append("")
            rows.append(row)
        lines += [markdown_table(header, rows), ""]
    return lines
