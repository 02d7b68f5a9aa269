"""What the k-means comparison writes: ``kmeans_runs.csv``, ``kmeans_summary.csv``, the figure
and ``summary.md``.

Belongs here: :func:`write_outputs` and its summary text (settings, data, what planning with a
noisy size changed, the one-centre reference, one table per data set, the claim). Not here: the
shared summary sections (:mod:`privlearn.experiments.summary`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from privlearn.accounting import SIZE_EPSILON_FRACTION
from privlearn.experiments.kmeans.claims import evaluate_claims, lsh_standing
from privlearn.experiments.kmeans.data import _FULL_ROWS
from privlearn.experiments.kmeans.figures import data_title, fig1_objective
from privlearn.experiments.kmeans.methods import (
    DELTA,
    EPSILON,
    KS,
    LABELS,
    METHODS,
    ONE_CENTRE,
    ONE_CENTRE_LABEL,
    PAPER_METHODS,
)
from privlearn.experiments.kmeans.simulate import KMeansResult
from privlearn.experiments.summary import claims_section, data_section, quick_mode_note
from privlearn.experiments.tables import (
    fmt_mean_std,
    markdown_table,
    mean_std,
    write_csv,
    write_text,
)

#: The columns of ``kmeans_runs.csv`` (one row per fit) and ``kmeans_summary.csv``.
_RUN_COLUMNS = [
    "dataset", "method", "k", "run", "cost", "seconds", "planning_n", "schedule",
    "schedule_exact_n",
]  # fmt: skip
_SUMMARY_COLUMNS = ["dataset", "method", "k", "mean_cost", "std_cost", "runs"]


def _summary_rows(res: KMeansResult) -> list[dict[str, Any]]:
    out = []
    for dataset in res.datasets:
        if dataset in res.one_centre:
            out.append(
                {
                    "dataset": dataset,
                    "method": ONE_CENTRE,
                    "k": 1,
                    "mean_cost": res.one_centre[dataset],
                    "std_cost": 0.0,
                    "runs": 1,
                }
            )
        for method in METHODS:
            for k in res.ks:
                c = res.costs(dataset, method, k)
                if c:
                    mean, std = mean_std(c)
                    out.append(
                        {
                            "dataset": dataset,
                            "method": method,
                            "k": k,
                            "mean_cost": mean,
                            "std_cost": std,
                            "runs": len(c),
                        }
                    )
    return out


def _size_note(res: KMeansResult) -> str:
    """Where the numbers depend on planning with a noisy row count instead of the exact size."""
    private = [r for r in res.rows if r["method"] in PAPER_METHODS]
    text = (
        "Data-set size: private. Each private fit spends "
        f"{SIZE_EPSILON_FRACTION:.0%} of epsilon on an exact discrete-Laplace row count and "
        "plans its schedule (max cover: radii x picks per radius; Balcan et al.: grid levels) "
        f"from it; the other mechanisms share the remaining {1 - SIZE_EPSILON_FRACTION:.0%}, so "
        "every private cost differs from a run that treats the size as public (slightly more "
        "noise)."
    )
    if any(r["method"] == "lsh" for r in res.rows):
        text += (
            " The LSH-tree coreset spends nothing on a count: its tree schedule does not depend "
            "on the size (its runs' schedule column gives the tree it grew)."
        )
    if not private:
        return text
    changed = [r for r in private if r["schedule"] != r["schedule_exact_n"]]
    if not changed:
        return text + (
            f" In all {len(private)} private runs the noisy count gave the same schedule as the "
            "exact size would, so no number changes through the schedule."
        )
    where = sorted({f"{r['dataset']} {r['method']} k={r['k']}" for r in changed})
    return text + (
        f" In {len(changed)} of {len(private)} private runs the noisy count gave another "
        f"schedule than the exact size would ({'; '.join(where)}): their costs change through "
        "the schedule as well (see planning_n, schedule and schedule_exact_n in kmeans_runs.csv)."
    )


def _one_centre_line(res: KMeansResult, dataset: str) -> str:
    """For each private method, the k at which its mean cost is below the one-centre cost."""
    base = res.one_centre.get(dataset)
    if base is None:
        return ""
    parts = []
    for m in METHODS:
        if m == "lloyd":
            continue
        ks = [k for k in res.ks if res.costs(dataset, m, k)]
        if not ks:
            continue
        below = [k for k in ks if np.mean(res.costs(dataset, m, k)) < base]
        where = "every k" if below == ks else ("no k" if not below else f"k in {below}")
        parts.append(f"{LABELS[m]} at {where}")
    if not parts:
        return ""
    return f"Below the one-centre cost {base:.4g}: " + "; ".join(parts) + "."


def write_outputs(res: KMeansResult, out_dir: Path, *, plots: bool = True) -> list[Path]:
    """Write ``kmeans_runs.csv``, ``kmeans_summary.csv``, ``fig1_kmeans_objective.png`` and
    ``summary.md``; return their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = _summary_rows(res)
    written = [
        write_csv(out_dir / "kmeans_runs.csv", res.rows, _RUN_COLUMNS),
        write_csv(out_dir / "kmeans_summary.csv", summary, _SUMMARY_COLUMNS),
    ]
    if plots and res.datasets:
        written.append(fig1_objective(res, summary, out_dir / "fig1_kmeans_objective.png"))
    claims = evaluate_claims(res)
    lines = [
        "# DP k-means: Chaturvedi, Nguyen & Xu 2021, Figure 1",
        "",
        (
            f"epsilon = {EPSILON}, delta = {DELTA}; {res.runs} "
            f"runs per point (mean ± std); k in {res.ks}; rows: "
            + ", ".join(f"{d} {n:,}" for d, n in res.n_rows.items())
            + f"; {res.seconds:.0f} s."
        ),
        "",
    ]
    if res.quick:
        lines += quick_mode_note(
            f"{res.runs} runs per point instead of 5, k in {res.ks} instead of {list(KS)}, "
            "seeded subsamples ("
            + ", ".join(
                f"{d}: {n:,} rows instead of {_FULL_ROWS.get(d, n):,}"
                for d, n in res.n_rows.items()
            )
            + "); every figure and claim of the full run is made and checked, but the "
            "standard deviations are rough (`privlearn reproduce kmeans` for the full run)."
        )
    not_run = {f"{d}: NOT RUN ({why})" for d, why in res.missing.items()}
    lines += data_section(
        [f"**{d}**: {data_title(res, d)}." for d in res.datasets]
        + [*res.notes.values(), *(s for s in res.skipped if s not in not_run)],
        res.missing,
    )
    lines += [_size_note(res), ""]
    lines += [
        f"Reference: {ONE_CENTRE_LABEL}, the k = 1 row: the cost of the data at its mean, the "
        "exact minimiser of the one-centre cost, so no one-centre solution, private or not, "
        "costs less (a private one-centre estimate can only cost more). "
        "Computed like every other row: the k-means objective of the training data at the "
        "centres. A private method above this line does worse than one centre.",
        "",
    ]
    for dataset in res.datasets:
        methods = [
            m for m in METHODS if any(s["method"] == m and s["dataset"] == dataset for s in summary)
        ]
        header = ["k"] + [LABELS[m] for m in methods]
        rows = []
        if dataset in res.one_centre:
            # Lloyd with k = 1 is the data mean after one step: the baseline sits in its column.
            rows.append(
                ["1 (one centre)"]
                + [f"{res.one_centre[dataset]:.4g}" if m == "lloyd" else "" for m in methods]
            )
        for k in res.ks:
            row: list[Any] = [k]
            for m in methods:
                c = res.costs(dataset, m, k)
                row.append(fmt_mean_std(*mean_std(c)) if c else "")
            rows.append(row)
        lines += [f"## {dataset}: {data_title(res, dataset)}", ""]
        lines += [markdown_table(header, rows), ""]
        lines += [_one_centre_line(res, dataset), ""]
    lines += claims_section(claims)
    standing = lsh_standing(res)
    if standing:
        lines += [f"- Beyond the paper: {standing}"]
    written.append(write_text(out_dir / "summary.md", "\n".join(lines) + "\n"))
    return written
