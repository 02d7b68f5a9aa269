"""The files of the DP-SCD reproduction: CSV tables, figures and ``summary.md``.

Belongs here: :func:`write_outputs`, which writes every file of a :class:`DPSCDResult` in a
fixed order (the runs, each figure's table, the figures, the summary) and the two tables of
the runs themselves (``tuning.csv``, ``runs.csv``). What each figure's table, drawing and
summary section hold is in that figure's module.
"""

from __future__ import annotations

from pathlib import Path

from privlearn.experiments.dpscd import configurations, fig1, fig2, fig3
from privlearn.experiments.dpscd.claims import evaluate_claims
from privlearn.experiments.dpscd.simulation import DPSCDResult
from privlearn.experiments.dpscd.summary import summary_text
from privlearn.experiments.tables import write_csv, write_text

#: The columns that name one run's task, method, epsilon and configuration.
_KEY_COLUMNS = ["task", "method", "epsilon", "config", "L", "C", "eta"]


def _draw(res: DPSCDResult, out_dir: Path) -> tuple[dict[str, Path], list[str]]:
    """Draw the figures the result has data for: ``({label: path}, notes on those not drawn)``."""
    figures = {"Fig. 1": fig1.draw(res, out_dir / fig1.FIGURE)}
    notes = []
    if fig2.drawable(res):
        figures["Fig. 2"] = fig2.draw(res, out_dir / fig2.FIGURE)
    else:
        notes.append("Fig. 2 not drawn: it needs msd-ridge with eps 0.1 or 1.")
    if res.fig3:
        figures["Fig. 3"] = fig3.draw(res, out_dir / fig3.FIGURE)
    else:
        notes.append("Fig. 3 not drawn: it needs msd-ridge and a Fig. 3 sweep.")
    return figures, notes


def write_outputs(res: DPSCDResult, out_dir: Path, *, plots: bool = True) -> list[Path]:
    """Write the CSV files, the figures (if ``plots``) and ``summary.md``; return their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    counts = configurations.config_counts(res)
    written = [
        write_csv(
            out_dir / "tuning.csv",
            res.tuning,
            [*_KEY_COLUMNS, "seed", "sigma", "noise_std", "val", "test", "diverged", "selected"],
        ),
        write_csv(
            out_dir / "runs.csv",
            res.final_rows,
            [*_KEY_COLUMNS, "run", "seed", "sigma", "noise_std", "val", "test", "diverged"],
        ),
        fig1.write_table(res, out_dir),
        configurations.write_table(counts, out_dir),
        fig2.write_table(res, out_dir),
        fig3.write_table(res, out_dir),
    ]
    figures: dict[str, Path] = {}
    fig_notes: list[str] = []
    if plots and res.tasks:
        figures, fig_notes = _draw(res, out_dir)
        written.extend(figures.values())
    elif not plots:
        fig_notes.append("Figures not drawn (plots=False).")
    text = summary_text(res, evaluate_claims(res), counts, figures, fig_notes)
    written.append(write_text(out_dir / "summary.md", text))
    return written
