"""Reproduction figures: a bare matplotlib figure, titles and legends that fit it, saving.

Figures are drawn on a bare :class:`matplotlib.figure.Figure` (rendered by the Agg canvas when
saved), so a reproduction never switches the pyplot backend of the calling process; matplotlib
itself is an optional dependency (the ``experiments`` extra) and is imported only when a figure
is drawn.

Constrained layout (:func:`new_figure`) makes room above and below the axes for a suptitle or an
``"outside"`` legend, but it never shrinks either one sideways: a suptitle or a one-row legend
wider than the figure is cut at both edges, and a panel title wider than its column runs into
its neighbours. :func:`fit_suptitle`, :func:`fit_title` and :func:`fit_legend` measure the text
with the Agg renderer and wrap titles at word boundaries, or give a legend more rows, until it
fits. They are pure layout: no number of a reproduction depends on them.

Belongs here: anything about drawing or saving a figure that is not specific to one paper. Not
here: what a paper's figure shows (the ``figures`` module of that paper's package).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable

from .files import atomic_output

__all__ = [
    "FIGURE_HOOKS",
    "fit_legend",
    "fit_suptitle",
    "fit_title",
    "new_figure",
    "require_matplotlib",
    "save_figure",
    "wrap_text",
]

_EXTRA_HINT = 'pip install "privlearn[experiments]"'


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
    every hook in :data:`FIGURE_HOOKS`.

    The file is written atomically (:func:`~privlearn.experiments.files.atomic_output`; the
    format comes from the suffix of ``path``, PNG without one): a failed write raises
    :class:`~privlearn.experiments.files.OutputWriteError` and leaves no partial file."""
    path = Path(path)
    with atomic_output(path, "wb") as fh:
        fig.savefig(fh, format=path.suffix.lstrip(".").lower() or "png", dpi=dpi)
    for hook in FIGURE_HOOKS:
        hook(fig, path)
    return path


#: Fraction of the available width a fitted text may use (room for constrained layout's pads).
_FILL = 0.95
#: Inches of a grid column taken by the y label and tick labels (left of the axes).
_Y_DECORATIONS = 0.9


def _renderer(fig: Any) -> Any:
    """The Agg renderer of ``fig`` (attaching an Agg canvas to a bare ``Figure`` if needed)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    return fig.canvas.get_renderer()


def wrap_text(fig: Any, text: str, width_px: float, fontsize: Any = None) -> str:
    """``text`` with line breaks at spaces so that no line is wider than ``width_px`` pixels.

    Existing line breaks are kept; a single word wider than ``width_px`` stays on its own line.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure the text is drawn on (its dpi sets the pixel size).
    text : str
    width_px : float
        Available width in display pixels of ``fig``.
    fontsize : float or str, optional
        Font size as matplotlib takes it (default: ``rcParams["font.size"]``).
    """
    from matplotlib.font_manager import FontProperties

    renderer = _renderer(fig)
    prop = FontProperties(size=fontsize)

    def width(s: str) -> float:
        return renderer.get_text_width_height_descent(s, prop, ismath=False)[0]

    lines: list[str] = []
    for paragraph in text.split("\n"):
        words = paragraph.split(" ")
        line = words[0]
        for word in words[1:]:
            candidate = f"{line} {word}"
            if width(candidate) <= width_px:
                line = candidate
            else:
                lines.append(line)
                line = word
        lines.append(line)
    return "\n".join(lines)


def fit_suptitle(fig: Any, text: str, fontsize: Any = None) -> Any:
    """``fig.suptitle(text)``, wrapped to the figure's width; returns the title artist."""
    from matplotlib import rcParams

    size = rcParams["figure.titlesize"] if fontsize is None else fontsize
    wrapped = wrap_text(fig, text, _FILL * fig.bbox.width, size)
    return fig.suptitle(wrapped, fontsize=size)


def fit_title(ax: Any, text: str, fontsize: Any = None) -> Any:
    """``ax.set_title(text)``, wrapped to the width the axes will have.

    The title is centred on the axes, whose right edge is near its grid column's and whose
    left part of the column holds the y label and tick labels: the text is wrapped to the
    column's width (the share of the figure the axes' subplot spec covers) less
    :data:`_Y_DECORATIONS` inches, so it neither leaves the figure nor runs into the next
    column's title.
    """
    from matplotlib import rcParams

    size = rcParams["axes.titlesize"] if fontsize is None else fontsize
    fig = ax.get_figure()
    spec = ax.get_subplotspec()
    if spec is None:
        share = 1.0
    else:
        cols = spec.colspan
        share = (cols.stop - cols.start) / spec.get_gridspec().ncols
    width = share * fig.bbox.width - _Y_DECORATIONS * fig.dpi
    wrapped = wrap_text(fig, text, _FILL * width, size)
    return ax.set_title(wrapped, fontsize=size)


def fit_legend(
    fig: Any,
    handles: Sequence[Any],
    labels: Sequence[str],
    *,
    loc: str = "outside lower center",
    fontsize: Any = 8,
    **kwargs: Any,
) -> Any:
    """A figure legend with as few rows as fit the figure's width; returns the legend.

    Tries 1, 2, ... rows (``ncols = ceil(n / rows)``, so the rows are balanced) and keeps the
    first legend that is at most the figure's width.
    """
    n = len(labels)
    renderer = _renderer(fig)
    limit = _FILL * fig.bbox.width
    legend = None
    for rows in range(1, max(n, 1) + 1):
        ncols = max(1, math.ceil(n / rows))
        if legend is not None:
            legend.remove()
        legend = fig.legend(handles, labels, loc=loc, ncols=ncols, fontsize=fontsize, **kwargs)
        if ncols == 1 or legend.get_window_extent(renderer).width <= limit:
            break
    return legend
