"""Fig. 2 of the DP-SCD reproduction: convergence on YearPredictionMSD (Section 5.1).

Belongs here: everything about Fig. 2 and nothing else: its CSV rows
(``fig2_convergence.csv``: :func:`write_table`), whether it can be drawn (:func:`drawable`),
the figure (:func:`draw`) and its section of ``summary.md`` (:func:`section`: the final
training objective against the exact ridge optimum).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from privlearn.experiments.dpscd.settings import _COLORS, _PRIVATE, FIG2_EPSILONS, METHODS
from privlearn.experiments.dpscd.simulation import DPSCDResult
from privlearn.experiments.dpscd.training import _eps_label
from privlearn.experiments.figures import fit_suptitle, fit_title, new_figure, save_figure
from privlearn.experiments.tables import markdown_table, write_csv

#: File names of the table and the figure.
TABLE = "fig2_convergence.csv"
FIGURE = "fig2_convergence.png"


def write_table(res: DPSCDResult, out_dir: Path) -> Path:
    """``fig2_convergence.csv``: mean and std over runs of the training objective per epoch."""
    conv = []
    for (m, e), (ep, obj) in res.paths.items():
        std = obj.std(axis=0, ddof=1) if obj.shape[0] > 1 else np.zeros(obj.shape[1])
        for k in range(len(ep)):
            conv.append(
                {
                    "method": m,
                    "epsilon": e,
                    "epoch": ep[k],
                    "n_runs": obj.shape[0],
                    "mean": obj[:, k].mean(),
                    "std": std[k],
                    "optimum": res.optimum,
                }
            )
    return write_csv(
        out_dir / TABLE, conv, ["method", "epsilon", "epoch", "n_runs", "mean", "std", "optimum"]
    )


def drawable(res: DPSCDResult) -> bool:
    """Whether a private method has a recorded path at an epsilon of Fig. 2."""
    return bool(res.paths) and any((m, e) in res.paths for m in _PRIVATE for e in FIG2_EPSILONS)


def draw(res: DPSCDResult, path: Path) -> Path:
    """Fig. 2: training objective minus the optimum against epochs, one panel per epsilon."""
    eps_list = [e for e in FIG2_EPSILONS if any((m, e) in res.paths for m in _PRIVATE)]
    fig, axes = new_figure(1, max(1, len(eps_list)))
    floor = 1e-9 * max(abs(res.optimum), 1e-300)
    for ax, e in zip(axes.ravel(), eps_list):
        for m, key in (
            ("SCD", ("SCD", math.inf)),
            ("SGD", ("SGD", math.inf)),
            (f"DP-SCD (eps={e:g})", ("DP-SCD", e)),
            (f"DP-SGD (eps={e:g})", ("DP-SGD", e)),
        ):
            if key not in res.paths:
                continue
            ep, obj = res.paths[key]
            gap = np.maximum(obj - res.optimum, floor)
            mean = gap.mean(axis=0)
            std = gap.std(axis=0, ddof=1) if gap.shape[0] > 1 else np.zeros_like(mean)
            color = _COLORS[key[0]]
            ax.plot(ep, mean, color=color, lw=1.3, label=m)
            ax.fill_between(ep, np.maximum(mean - std, mean * 0.5), mean + std, color=color,
                            alpha=0.2, lw=0)  # fmt: skip
        ax.set_yscale("log")
        ax.set_xlabel("epochs")
        ax.set_ylabel("training objective - optimum")
        fit_title(ax, f"{res.label('msd')}, ridge, eps={e:g}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fit_suptitle(
        fig,
        f"Fig. 2: convergence of the selected configurations (mean ± std over {res.runs} runs)",
        fontsize=11,
    )
    return save_figure(fig, path)


def section(res: DPSCDResult) -> list[str]:
    """``## Fig. 2``: the final training objective (mean over runs) and its gap to the optimum;
    empty without recorded paths."""
    if not res.paths:
        return []
    ordered = sorted(res.paths.items(), key=lambda kv: (METHODS.index(kv[0][0]), kv[0][1]))
    rows = [
        (m, _eps_label(e), f"{obj[:, -1].mean():.6g}", f"{obj[:, -1].mean() - res.optimum:.4g}")
        for (m, e), (_, obj) in ordered
    ]
    return [
        "## Fig. 2: final training objective (mean over runs)",
        "",
        f"Optimum (exact ridge solution on the training part): {res.optimum:.6g}.",
        "",
        markdown_table(["method", "eps", "final objective", "objective - optimum"], rows),
        "",
    ]
