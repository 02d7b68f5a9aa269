"""Progress reporting of long fits: the ``verbose`` parameter and the tqdm bar it asks for.

What belongs here: the neutral helpers every estimator and every back-end use to report
progress (:func:`as_verbose` checks the parameter, :func:`progress_bar` makes the bar). A bar
only reports: nothing a fit computes may depend on it. What does not belong here: anything
tied to one back-end (the Dask fits' own wording of their steps stays in
:mod:`privlearn.distributed`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privlearn._checks import as_index

__all__ = ["as_verbose", "progress_bar"]


def as_verbose(verbose: Any) -> int:
    """The ``verbose`` parameter of a fit: an int >= 0 (or a bool). ``0``: no progress bar;
    ``1``: a tqdm bar on stderr when stderr is a terminal; ``2`` or more: a bar in any case
    (a log file, a notebook)."""
    if isinstance(verbose, (bool, np.bool_)):
        return int(verbose)
    return as_index(verbose, "verbose", upper=1 << 30)


class _NoBar:
    """What :func:`progress_bar` returns for ``verbose=0``: a bar that shows nothing."""

    def update(self, n: int = 1) -> None:
        del n

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        del s, refresh

    def close(self) -> None:
        pass


def progress_bar(verbose: int, total: int | None, desc: str, unit: str) -> Any:
    """A tqdm progress bar on stderr (``tqdm.auto``, removed when closed) as ``verbose`` says
    (:func:`as_verbose`); it only reports, so a fit's result never depends on it."""
    if verbose <= 0:
        return _NoBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return _NoBar()
    return tqdm(
        total=total, desc=desc, unit=unit, leave=False, disable=None if verbose == 1 else False
    )
