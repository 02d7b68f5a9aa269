"""Numbers into files: summary statistics, CSV rows and markdown tables of the reproductions.

Belongs here: how a reproduced number is summarised (mean and sample standard deviation) and
written (CSV with 12 significant digits, GitHub markdown tables, UTF-8 text; every file
atomically, see :mod:`~privlearn.experiments.files`). Not here: figures
(:mod:`privlearn.experiments.figures`) or the claim checks (:mod:`privlearn.experiments.claims`).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .files import atomic_output

__all__ = ["fmt_mean_std", "fmt_spread", "markdown_table", "mean_std", "write_csv", "write_text"]


def mean_std(values: Any) -> tuple[float, float]:
    """Mean and sample standard deviation (``ddof=1``; 0 for a single value)."""
    arr = np.asarray(values, dtype=np.float64).ravel()
    if arr.size == 0:
        return math.nan, math.nan
    std = float(arr.std(ddof=1)) if arr.size > 1 else 0.0
    return float(arr.mean()), std


def fmt_mean_std(mean: float, std: float, digits: int = 4) -> str:
    """``"mean ± std"`` with ``digits`` significant digits."""
    return f"{mean:.{digits}g} ± {std:.{digits - 1}g}"


def fmt_spread(values: Any, digits: int = 4) -> str:
    """:func:`fmt_mean_std` of ``values``; the value alone when there is one (no spread to
    show: e.g. a quick run's single seed)."""
    arr = np.asarray(values, dtype=np.float64).ravel()
    if arr.size == 1:
        return f"{arr[0]:.{digits}g}"
    return fmt_mean_std(*mean_std(arr), digits=digits)


def _cell(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return format(float(value), ".12g")
    if isinstance(value, np.integer):
        return str(int(value))
    return str(value)


def write_csv(path: Path, rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> Path:
    """Write ``rows`` (mappings) as a CSV with the header ``columns``; floats keep 12 digits.

    Written atomically (:func:`~privlearn.experiments.files.atomic_output`): a failed write
    raises :class:`~privlearn.experiments.files.OutputWriteError` and leaves no partial file.
    """
    path = Path(path)
    with atomic_output(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([_cell(row[c]) for c in columns])
    return path


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) atomically and return the path."""
    path = Path(path)
    with atomic_output(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub-flavoured markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(lines)
