"""Small helpers shared by the paper reproductions: seeds, CSV, markdown, figures, progress.

Nothing here is specific to one paper. Figures are drawn on a bare
:class:`matplotlib.figure.Figure` (rendered by the Agg canvas when saved), so a reproduction
never switches the pyplot backend of the calling process; matplotlib itself is an optional
dependency (the ``experiments`` extra) and is imported only when a figure is drawn.
"""

from __future__ import annotations

import csv
import hashlib
import math
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

import numpy as np

__all__ = [
    "FIGURE_HOOKS",
    "Claim",
    "claim_verdict",
    "derive_seed",
    "fmt_mean_std",
    "markdown_table",
    "mean_std",
    "missing_data_reason",
    "new_figure",
    "parallel_map",
    "require_matplotlib",
    "save_figure",
    "write_csv",
    "write_text",
]

T = TypeVar("T")
R = TypeVar("R")

_EXTRA_HINT = 'pip install "privlearn[experiments]"'


def derive_seed(*parts: Any) -> int:
    """A 64-bit seed that depends only on ``parts`` (e.g. paper, data set, setting, run index).

    The parts are joined with ``"/"`` and hashed with SHA-256, so the seed of one run does not
    depend on which other runs are done, nor on their order.
    """
    text = "/".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")


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


def _cell(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return format(float(value), ".12g")
    if isinstance(value, np.integer):
        return str(int(value))
    return str(value)


def write_csv(path: Path, rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> Path:
    """Write ``rows`` (mappings) as a CSV with the header ``columns``; floats keep 12 digits."""
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([_cell(row[c]) for c in columns])
    return path


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) and return the path."""
    path = Path(path)
    path.write_text(text, encoding="utf-8")
    return path


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub-flavoured markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(lines)


def require_matplotlib() -> None:
    """Raise a clear ImportError when matplotlib (the ``experiments`` extra) is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"the reproduction figures need matplotlib: {_EXTRA_HINT} (or pip install matplotlib)"
        ) from exc


def new_figure(nrows: int, ncols: int, *, width: float = 4.2, height: float = 3.2) -> Any:
    """A matplotlib ``Figure`` with a ``(nrows, ncols)`` grid of axes, as ``(fig, axes)``.

    Raises
    ------
    ImportError
        If matplotlib is not installed (it comes with the ``experiments`` extra).
    """
    require_matplotlib()
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


#: Callables ``hook(fig, path)`` that :func:`save_figure` calls after saving each figure (the
#: figure tests use it to inspect the laid-out figures); empty by default.
FIGURE_HOOKS: list[Callable[[Any, Path], None]] = []


def save_figure(fig: Any, path: Path, dpi: int = 120) -> Path:
    """Save a figure made by :func:`new_figure` (PNG through the Agg canvas), then pass it to
    every hook in :data:`FIGURE_HOOKS`."""
    path = Path(path)
    fig.savefig(path, dpi=dpi)
    for hook in FIGURE_HOOKS:
        hook(fig, path)
    return path


def missing_data_reason(exc: FileNotFoundError, data_home: Any = None) -> str:
    """One short line on a data file that is missing, for a summary's ``NOT RUN (...)``.

    ``"missing adult/adult.data under <data home>; run `privlearn datasets download adult`"``:
    the file relative to the data folder (from ``exc.filename``) and, for a file that
    :data:`privlearn.data.loaders.KNOWN_FILES` lists, the command that fetches its data set.
    Without a file name, the first line of the error.
    """
    from privlearn.data import get_data_home
    from privlearn.data.loaders import KNOWN_FILES

    home = get_data_home(data_home)
    filename = exc.filename if isinstance(exc.filename, (str, os.PathLike)) else None
    if filename is None:
        return (str(exc).splitlines() or [type(exc).__name__])[0]
    path = Path(filename)
    try:
        relative = path.relative_to(home).as_posix()
    except ValueError:
        return f"missing {path}"
    text = f"missing {relative} under {home}"
    dataset = dict((rel, name) for name, rel in KNOWN_FILES).get(relative)
    if dataset is not None:
        text += f"; run `privlearn datasets download {dataset}`"
    return text


def parallel_map(
    fn: Callable[[T], R],
    items: Sequence[T],
    *,
    n_jobs: int | None = None,
    desc: str = "",
    progress: bool = True,
) -> list[R]:
    """``[fn(x) for x in items]`` on a thread pool, in input order, with progress reports.

    Worth it when ``fn`` spends its time in code that releases the GIL (the C++ core, large
    numpy operations). Progress is a tqdm bar when stderr is a terminal, else a printed line
    about every 10% of the items.
    """
    n = len(items)
    if n_jobs is None:
        n_jobs = min(os.cpu_count() or 1, 8)
    n_jobs = max(1, min(int(n_jobs), n))
    bar = None
    if progress and sys.stderr.isatty():
        try:
            from tqdm.auto import tqdm

            bar = tqdm(total=n, desc=desc, leave=False)
        except ImportError:  # pragma: no cover - tqdm is a dependency
            bar = None
    results: list[Any] = [None] * n
    step = max(1, n // 10)

    def report(done: int) -> None:
        if bar is not None:
            bar.update(1)
        elif progress and (done % step == 0 or done == n):
            print(f"{desc}: {done}/{n}", flush=True)

    try:
        if n_jobs == 1:
            for i, item in enumerate(items):
                results[i] = fn(item)
                report(i + 1)
        else:
            with ThreadPoolExecutor(max_workers=n_jobs) as pool:
                futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
                done = 0
                for fut in as_completed(futures):
                    results[futures[fut]] = fut.result()
                    done += 1
                    report(done)
    finally:
        if bar is not None:
            bar.close()
    return results


@dataclass(frozen=True)
class Claim:
    """One qualitative claim of a paper, checked on the reproduced numbers."""

    name: str
    source: str
    criterion: str
    verdict: str  # "holds", "does not hold ..." or "not evaluated"
    details: list[str]


def claim_verdict(per_part: dict[str, bool], unit: str = "") -> str:
    """``holds`` when every part (data set, task) supports the claim, ``does not hold (holds on
    k of n <unit>)`` when some do, ``does not hold`` when none do, ``not evaluated`` when empty."""
    if not per_part:
        return "not evaluated"
    ok = sum(per_part.values())
    if ok == len(per_part):
        return "holds"
    if ok:
        suffix = f" {unit}" if unit else ""
        return f"does not hold (holds on {ok} of {len(per_part)}{suffix})"
    return "does not hold"
