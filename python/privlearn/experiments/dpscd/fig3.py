"""Fig. 3 of the DP-SCD reproduction: mini-batch size against scaling factor (Section 5.1).

Belongs here: everything about Fig. 3 and nothing else: its CSV rows (``fig3_batch_size.csv``:
:func:`write_table`), the figure (:func:`draw`) and its section of ``summary.md``
(:func:`section`: DP-SCD's test MSE over L and C at epsilon = 1).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from privlearn.experiments.dpscd.settings import FIG3_EPSILON
from privlearn.experiments.dpscd.simulation import DPSCDResult
from privlearn.experiments.figures import fit_title, new_figure, save_figure
from privlearn.experiments.tables import fmt_mean_std, markdown_table, mean_std, write_csv

#: File names of the table and the figure.
TABLE = "fig3_batch_size.csv"
FIGURE = "fig3_batch_size.png"


def write_table(res: DPSCDResult, out_dir: Path) -> Path:
    """``fig3_batch_size.csv``: DP-SCD's test MSE (mean, std) per (L, C) at epsilon = 1."""
    f3 = []
    for (b, c), vals in sorted(res.fig3.items()):
        mu, sd = mean_std(vals)
        f3.append(
            {"L": b, "C": c, "epsilon": FIG3_EPSILON, "n_runs": len(vals), "mean": mu, "std": sd}
        )
    return write_csv(out_dir / TABLE, f3, ["L", "C", "epsilon", "n_runs", "mean", "std"])


def draw(res: DPSCDResult, path: Path) -> Path:
    """Fig. 3: DP-SCD's test MSE against L, one curve per C."""
    fig, axes = new_figure(1, 1, width=5.0, height=3.6)
    ax = axes[0, 0]
    Ls = sorted({k[0] for k in res.fig3})
    Cs = sorted({k[1] for k in res.fig3})
    for c in Cs:
        st = np.array([mean_std(res.fig3[(b, c)]) for b in Ls])
        ax.errorbar(Ls, st[:, 0], yerr=st[:, 1], marker="o", ms=4, capsize=3, lw=1.2,
                    label=f"C={c:g}")  # fmt: skip
    ax.set_xscale("log")
    means = [float(np.mean(v)) for v in res.fig3.values()]
    if min(means) > 0 and max(means) / min(means) > 10:
        ax.set_yscale("log")
    ax.set_xlabel("mini-batch size L")
    ax.set_ylabel("test MSE")
    n_runs = len(next(iter(res.fig3.values())))
    runs = f"{n_runs} run" + ("s, mean ± std" if n_runs > 1 else "")
    fit_title(
        ax, f"Fig. 3: DP-SCD on {res.label('msd')}, eps={FIG3_EPSILON:g} ({runs})", fontsize=10
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(fig, path)


def section(res: DPSCDResult) -> list[str]:
    """``## Fig. 3``: DP-SCD's test MSE (mean ± std) over L (rows) and C (columns); empty
    without the sweep."""
    if not res.fig3:
        return []
    Ls = sorted({k[0] for k in res.fig3})
    Cs = sorted({k[1] for k in res.fig3})
    return [
        f"## Fig. 3: DP-SCD test MSE at eps={FIG3_EPSILON:g} (mean ± std)",
        "",
        markdown_table(
            ["L"] + [f"C={c:g}" for c in Cs],
            [[b] + [fmt_mean_std(*mean_std(res.fig3[(b, c)])) for c in Cs] for b in Ls],
        ),
        "",
    ]
