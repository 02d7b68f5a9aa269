"""Paper reproductions: one package per paper, each registered here under a short name.

A reproduction is a function ``run(out_dir: pathlib.Path, quick: bool) -> list[pathlib.Path]``
that regenerates the paper's headline table or figure (CSV + PNG) in ``out_dir`` and returns the
files it wrote. ``privlearn reproduce NAME`` runs one, ``privlearn reproduce all`` runs them all.
Later packages add themselves with :func:`register`.

Each paper's package holds one module per figure or table (and its data, simulation, claims
and outputs); what every paper shares lives beside them: :mod:`~privlearn.experiments.runs`
(seeds, parallel runs), :mod:`~privlearn.experiments.tables` (statistics, CSV, markdown),
:mod:`~privlearn.experiments.figures` (drawing and saving), :mod:`~privlearn.experiments.claims`
(claims and verdicts), :mod:`~privlearn.experiments.summary` (the summary sections) and
:mod:`~privlearn.experiments.peers` (peer libraries) and :mod:`~privlearn.experiments.files`
(atomic result files, the disk space a run needs).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

__all__ = ["Reproduction", "REGISTRY", "register"]


@dataclass(frozen=True)
class Reproduction:
    """A registered paper reproduction."""

    name: str
    paper: str
    summary: str
    run: Callable[[Path, bool], list[Path]]

    def execute(self, out_dir: Path, quick: bool) -> list[Path]:
        """``run(out_dir, quick)`` with BLAS on one thread
        (:func:`~privlearn.experiments.runs.one_blas_thread`): how ``privlearn reproduce`` runs
        a reproduction."""
        from privlearn.experiments.runs import one_blas_thread

        with one_blas_thread():
            return self.run(out_dir, quick)


#: name -> Reproduction, in registration order.
REGISTRY: dict[str, Reproduction] = {}


def register(name: str, paper: str, summary: str) -> Callable:
    """Decorator registering ``run(out_dir, quick)`` as the reproduction ``name``."""

    def wrap(run: Callable[[Path, bool], list[Path]]) -> Callable[[Path, bool], list[Path]]:
        if name in REGISTRY or name == "all":
            raise ValueError(f"reproduction name {name!r} is taken")
        REGISTRY[name] = Reproduction(name, paper, summary, run)
        return run

    return wrap
