"""The tuning cost of the DP-SCD reproduction (Section 5.1, "Tuning cost").

Belongs here: the configurations tried per method (:func:`config_counts`, written to
``configurations.csv`` by :func:`write_table`) and the summary's tuning-cost section with the
grids (:func:`section`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from privlearn.experiments.dpscd.settings import METHODS, Grid
from privlearn.experiments.dpscd.simulation import DPSCDResult
from privlearn.experiments.tables import markdown_table, write_csv

#: File name of the table.
TABLE = "configurations.csv"


def config_counts(res: DPSCDResult) -> list[dict[str, Any]]:
    """Configurations tried per method: per (task, epsilon), and in total (Sec. 5.1)."""
    rows = []
    for m in METHODS:
        per_setting: list[int] = []
        for t in res.tasks:
            eps = [math.inf] if m in ("SCD", "SGD") else res.all_epsilons
            for e in eps:
                k = res.n_configs(t, m, e)
                if k:
                    per_setting.append(k)
        if not per_setting:
            continue
        rows.append(
            {
                "method": m,
                "tuned": {
                    "SCD": "-",
                    "SGD": "eta, L",
                    "DP-SCD": "L, C",
                    "SeqDP-SCD": "L, C",
                    "DP-SGD": "eta, L, C",
                }[m],
                "settings": len(per_setting),
                "min_per_setting": min(per_setting),
                "max_per_setting": max(per_setting),
                "total": sum(per_setting),
            }
        )
    return rows


def _grid_text(g: Grid) -> str:
    def f(v: Sequence[float]) -> str:
        return "{" + ", ".join(f"{x:g}" for x in v) + "}"

    return (
        f"L in {f(g.batch_sizes)}; DP-SCD/SeqDP-SCD C in {f(g.scd_clips)}; DP-SGD C in "
        f"{f(g.sgd_clips)}; eta (SGD, DP-SGD) in {f(g.learning_rates)}"
    )


def write_table(counts: list[dict[str, Any]], out_dir: Path) -> Path:
    """``configurations.csv``: the rows of :func:`config_counts`."""
    return write_csv(
        out_dir / TABLE,
        counts,
        ["method", "tuned", "settings", "min_per_setting", "max_per_setting", "total"],
    )


def section(res: DPSCDResult, counts: list[dict[str, Any]]) -> list[str]:
    """``## Tuning cost``: the paper's counts, a table of :func:`config_counts` and the grids."""
    table = [
        (
            r["method"],
            r["tuned"],
            r["settings"],
            r["min_per_setting"]
            if r["min_per_setting"] == r["max_per_setting"]
            else f"{r['min_per_setting']}-{r['max_per_setting']}",
            r["total"],
        )
        for r in counts
    ]
    lines = [
        "## Tuning cost (Sec. 5.1)",
        "",
        "The paper tried 156 configurations for DP-SCD and 2,028 for DP-SGD (13 x more). Here "
        "(a setting is one task and, for the private methods, one epsilon):",
        "",
        markdown_table(
            ["method", "tuned", "settings", "configurations per setting", "total"], table
        ),
        "",
        "Grids:",
        "",
    ]
    lines += [f"- {ds}: {_grid_text(g)}" for ds, g in res.grids.items()]
    lines.append("")
    return lines
