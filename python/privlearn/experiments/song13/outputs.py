"""The files of the Song et al. (2013) reproduction: CSV tables, figures and ``summary.md``.

Belongs here: :func:`write_outputs`, which writes every file of a :class:`Song13Result`: the
final objective of every run, its mean and std per setting (Fig. 2), the objective along the
pass (Figs. 1 and 3), the centralised optimum, then the figures (:mod:`.figures`) and the
summary (:mod:`.summary`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from privlearn.experiments.song13 import figures as song13_figures
from privlearn.experiments.song13.claims import evaluate_claims
from privlearn.experiments.song13.simulation import Song13Result, _run_seed
from privlearn.experiments.song13.summary import summary_text
from privlearn.experiments.tables import mean_std, write_csv, write_text


def write_outputs(res: Song13Result, out_dir: Path, *, plots: bool = True) -> list[Path]:
    """Write the CSV files, the figures (if ``plots``) and ``summary.md``; return their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    runs_rows, final_rows, path_rows = [], [], []
    for (ds, rate, b, mech), (steps, obj) in res.paths.items():
        n = res.sizes[ds][0]
        for r in range(obj.shape[0]):
            runs_rows.append(
                {
                    "dataset": ds,
                    "rate": rate,
                    "batch_size": b,
                    "mechanism": mech,
                    "run": r,
                    "seed": _run_seed(ds, b, r),
                    "n_steps": int(steps[-1]),
                    "objective": obj[r, -1],
                }
            )
        m, s = mean_std(obj[:, -1])
        final_rows.append(
            {
                "dataset": ds,
                "rate": rate,
                "batch_size": b,
                "mechanism": mech,
                "n_runs": obj.shape[0],
                "mean": m,
                "std": s,
                "optimum": res.optimum[ds][0],
            }
        )
        std = obj.std(axis=0, ddof=1) if obj.shape[0] > 1 else np.zeros(obj.shape[1])
        for k, step in enumerate(steps):
            path_rows.append(
                {
                    "dataset": ds,
                    "rate": rate,
                    "batch_size": b,
                    "mechanism": mech,
                    "step": int(step),
                    "samples": int(min(step * b, n)),
                    "n_runs": obj.shape[0],
                    "mean": obj[:, k].mean(),
                    "std": std[k],
                }
            )
    key_cols = ["dataset", "rate", "batch_size", "mechanism"]
    written.append(
        write_csv(
            out_dir / "final_objective_runs.csv",
            runs_rows,
            [*key_cols, "run", "seed", "n_steps", "objective"],
        )
    )
    written.append(
        write_csv(
            out_dir / "final_objective.csv",
            final_rows,
            [*key_cols, "n_runs", "mean", "std", "optimum"],
        )
    )
    written.append(
        write_csv(
            out_dir / "paths.csv",
            path_rows,
            [*key_cols, "step", "samples", "n_runs", "mean", "std"],
        )
    )
    written.append(
        write_csv(
            out_dir / "optimum.csv",
            [
                {
                    "dataset": ds,
                    "n": res.sizes[ds][0],
                    "d": res.sizes[ds][1],
                    "objective": res.optimum[ds][0],
                    "grad_norm": res.optimum[ds][1],
                }
                for ds in res.datasets
            ],
            ["dataset", "n", "d", "objective", "grad_norm"],
        )
    )

    figures: dict[str, Path] = {}
    fig_notes: list[str] = []
    if plots and res.datasets:
        figures, fig_notes = song13_figures.draw(res, out_dir)
        written.extend(figures.values())
    elif not plots:
        fig_notes.append("Figures not drawn (plots=False).")
    text = summary_text(res, evaluate_claims(res), figures, fig_notes)
    written.append(write_text(out_dir / "summary.md", text))
    return written
