"""The simulation of the DP-SCD reproduction: tuning, selection and the final runs (Figs. 1-3).

Belongs here: :func:`simulate` (every task, method and epsilon: one tuning run per
configuration, selection on validation, then the final runs; the Fig. 3 sweep) and the
:class:`DPSCDResult` it returns. One run is in :mod:`.training`; turning the result into files
is :mod:`.outputs`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from privlearn.experiments.dpscd.data import Split, prepare_dataset, ridge_optimum
from privlearn.experiments.dpscd.settings import (
    _DATA_LABELS,
    _TAG,
    EPOCHS,
    EPSILONS,
    FIG2_EPSILONS,
    FIG3_EPSILON,
    FIG3_RUNS,
    GRIDS,
    METHODS,
    PAPER_TASKS,
    RUNS,
    TASKS,
    Config,
    Grid,
    Task,
)
from privlearn.experiments.dpscd.training import _fit, _Job, _Out
from privlearn.experiments.runs import parallel_map
from privlearn.experiments.summary import prepare_or_skip
from privlearn.experiments.tables import mean_std


@dataclass
class DPSCDResult:
    """Everything :func:`simulate` computed; :func:`write_outputs` turns it into files.

    ``final[(task, method, epsilon)]`` holds the test metric of every final run of the selected
    configuration ``best[...]``; the non-private SCD and SGD use ``epsilon = inf``.
    """

    tasks: list[str]
    epsilons: list[float]  # finite values, ascending
    include_infinity: bool
    runs: int
    epochs: int
    quick: bool
    grids: dict[str, Grid] = field(default_factory=dict)
    sizes: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)  # n, val, test, d
    #: Data set -> the training rows asked for (``simulate``'s ``sizes``; absent: all rows).
    size_limits: dict[str, int] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    #: Data set -> name of the data that ran (:attr:`Split.label`).
    labels: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    tuning: list[dict[str, Any]] = field(default_factory=list)
    best: dict[tuple[str, str, float], Config] = field(default_factory=dict)
    final: dict[tuple[str, str, float], np.ndarray] = field(default_factory=dict)
    final_rows: list[dict[str, Any]] = field(default_factory=list)
    paths: dict[tuple[str, float], tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    optimum: float = math.nan
    fig3: dict[tuple[int, float], np.ndarray] = field(default_factory=dict)
    fig3_task: str = ""
    #: Runs per point of the Fig. 3 sweep.
    fig3_runs: int = 0
    seconds: float = 0.0

    @property
    def all_epsilons(self) -> list[float]:
        """The epsilon values of the private methods (finite, then inf if included)."""
        return list(self.epsilons) + ([math.inf] if self.include_infinity else [])

    def keys(self, task: str, method: str) -> list[float]:
        """Epsilon values with a result for (task, method)."""
        eps = [math.inf] if method in ("SCD", "SGD") else self.all_epsilons
        return [e for e in eps if (task, method, e) in self.final]

    def label(self, dataset: str) -> str:
        """Name of the data that ran for ``dataset`` (the stand-in's when it ran)."""
        return self.labels.get(dataset) or _DATA_LABELS.get(dataset, dataset)

    def stats(self, task: str, method: str, epsilon: float) -> tuple[float, float]:
        """Mean and sample std of the test metric over the final runs."""
        return mean_std(self.final[(task, method, epsilon)])

    def n_configs(self, task: str, method: str, epsilon: float) -> int:
        """Configurations tried for (task, method, epsilon) (1 for SCD: nothing to tune)."""
        if method == "SCD":
            return 1 if (task, method, math.inf) in self.final else 0
        eps = math.inf if method == "SGD" else epsilon
        return len(
            {
                r["config"]
                for r in self.tuning
                if r["task"] == task and r["method"] == method and r["epsilon"] == eps
            }
        )


def _better(task: Task, a: float, b: float) -> bool:
    return a < b if task.metric == "mse" else a > b


def _select(task: Task, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The row with the best validation metric (first in grid order on ties)."""
    best = rows[0]
    for r in rows[1:]:
        if _better(task, r["val"], best["val"]):
            best = r
    return best


def _row(job: _Job, out: _Out, **extra: Any) -> dict[str, Any]:
    """One line of ``tuning.csv`` or ``runs.csv``: the job's task, method, epsilon and
    configuration (and run index for a final run), its seed, noise and metrics, then ``extra``."""
    key = {
        "task": job.task,
        "method": job.method,
        "epsilon": job.epsilon,
        "config": job.config.label,
        "L": job.config.L,
        "C": job.config.C,
        "eta": job.config.eta,
    }
    run = {"run": job.run} if job.phase == "final" else {}
    result = {
        "seed": job.seed,
        "sigma": out.sigma,
        "noise_std": out.noise_std,
        "val": out.val,
        "test": out.test,
        "diverged": out.diverged,
    }
    return {**key, **run, **result, **extra}


def _fit_all(
    jobs: list[_Job], split: Split, epochs: int, what: str, n_jobs: int | None, progress: bool
) -> list[_Out]:
    """:func:`_fit` every job on ``split`` in worker threads (``what`` names them in progress
    lines); the results are in the order of ``jobs``, whatever the number of threads."""
    return parallel_map(
        lambda job: _fit(job, split, epochs),
        jobs,
        n_jobs=n_jobs,
        desc=f"[{_TAG}] {what}",
        progress=progress,
    )


def simulate(
    *,
    tasks: Sequence[str] = PAPER_TASKS,
    epsilons: Sequence[float] = EPSILONS,
    include_infinity: bool = True,
    methods: Sequence[str] = METHODS,
    runs: int = RUNS,
    epochs: int = EPOCHS,
    grids: dict[str, Grid] | None = None,
    sizes: dict[str, int | None] | None = None,
    fig3_runs: int = FIG3_RUNS,
    data_home: Any = None,
    n_jobs: int | None = None,
    quick: bool = False,
    progress: bool = True,
) -> DPSCDResult:
    """Tune, run and evaluate every (task, method, epsilon) of Section 5 (Figs. 1-3).

    Parameters
    ----------
    tasks : sequence of keys of :data:`TASKS`
        A task whose data files are missing is skipped (recorded in ``skipped``).
    epsilons : sequence of float
        Finite privacy levels (``delta`` = :data:`DELTA`).
    include_infinity : bool
        Also run the private methods without noise (``epsilon = inf``).
    methods : sequence of names in :data:`METHODS`
    runs : int
        Final runs of every selected configuration (10 in the paper).
    epochs : int
        Passes over the training part (50 in the authors' code).
    grids : dict, optional
        Data set -> :class:`Grid` (default :data:`GRIDS`).
    sizes : dict, optional
        Data set -> rows of the training part (default: the full data).
    fig3_runs : int
        Runs per point of the Fig. 3 sweep (0 = no Fig. 3); it needs the ``msd-ridge`` task.
    data_home : path, optional
    n_jobs : int, optional
        Worker threads (the core releases the GIL); results do not depend on it.
    quick : bool
        Only recorded in the result (for the summary).
    progress : bool
        Print progress lines (a tqdm bar on a terminal).

    Returns
    -------
    DPSCDResult
    """
    for t in tasks:
        if t not in TASKS:
            raise ValueError(f"unknown task {t!r}; choose from {list(TASKS)}")
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"unknown method {m!r}; choose from {METHODS}")
    if runs < 1 or epochs < 1:
        raise ValueError("runs and epochs must be >= 1")
    eps_list = sorted({float(e) for e in epsilons})
    if any(not (0 < e < math.inf) for e in eps_list):
        raise ValueError("epsilons must be finite and > 0 (use include_infinity for inf)")
    grids = {**GRIDS, **(grids or {})}
    sizes = dict(sizes or {})
    start = time.perf_counter()
    res = DPSCDResult(
        tasks=[],
        epsilons=eps_list,
        include_infinity=bool(include_infinity),
        runs=int(runs),
        epochs=int(epochs),
        quick=quick,
        fig3_runs=int(fig3_runs),
    )
    private_eps = res.all_epsilons
    methods = [m for m in METHODS if m in methods]
    by_dataset: dict[str, list[str]] = {}
    for t in tasks:
        by_dataset.setdefault(TASKS[t].dataset, []).append(t)

    for dataset, names in by_dataset.items():
        load = partial(prepare_dataset, dataset, sizes.get(dataset), data_home=data_home)
        split = prepare_or_skip(_TAG, dataset, load, res.skipped, data_home, progress=progress)
        if split is None:
            continue
        n, d = split.X_train.shape
        grid = grids[dataset]
        res.grids[dataset] = grid
        res.sizes[dataset] = (n, split.X_val.shape[0], split.X_test.shape[0], d)
        res.notes[dataset] = split.note
        res.labels[dataset] = split.label
        if sizes.get(dataset) is not None:
            res.size_limits[dataset] = int(sizes[dataset])
        res.tasks.extend(names)

        # 1. Tuning: one run per configuration, selected on the validation split.
        tune: list[_Job] = []
        for t in names:
            for m in methods:
                if m == "SCD":
                    continue
                for e in [math.inf] if m == "SGD" else private_eps:
                    tune += [_Job(t, m, e, c, "tune", 0) for c in grid.configs(m, n)]
        fig3: list[_Job] = []
        fig3_task = next((t for t in names if TASKS[t].loss == "squared"), None)
        if fig3_task and fig3_runs > 0 and grid.fig3_batch_sizes and grid.fig3_clips:
            res.fig3_task = fig3_task
            fig3 = [
                _Job(fig3_task, "DP-SCD", FIG3_EPSILON, Config(L=b, C=float(c)), "fig3", r)
                for b in grid.fig3_batch_sizes
                if b <= n
                for c in grid.fig3_clips
                for r in range(fig3_runs)
            ]
        jobs = tune + fig3
        what = f"{dataset}: tuning ({len(tune)} runs) + Fig. 3 ({len(fig3)} runs)"
        outs = _fit_all(jobs, split, epochs, what, n_jobs, progress)
        groups: dict[tuple[str, str, float], list[dict[str, Any]]] = {}
        for job, out in zip(jobs, outs):
            if job.phase == "fig3":
                key3 = (job.config.L, job.config.C)
                res.fig3[key3] = np.append(res.fig3.get(key3, np.empty(0)), out.test)
                continue
            row = _row(job, out, selected=False, _config=job.config)
            res.tuning.append(row)
            groups.setdefault((job.task, job.method, job.epsilon), []).append(row)
        for key, rows in groups.items():
            chosen = _select(TASKS[key[0]], rows)
            chosen["selected"] = True
            res.best[key] = chosen["_config"]
        for t in names:
            if "SCD" in methods:
                res.best[(t, "SCD", math.inf)] = Config()

        # 2. Final runs of the selected configurations (test metric; Fig. 2 paths on MSD).
        final: list[_Job] = []
        for (t, m, e), cfg in res.best.items():
            if t not in names:
                continue
            record = (
                TASKS[t].loss == "squared"
                and m in ("SCD", "SGD", "DP-SCD", "DP-SGD")
                and (m in ("SCD", "SGD") or e in FIG2_EPSILONS)
            )
            final += [_Job(t, m, e, cfg, "final", r, record) for r in range(runs)]
        what = f"{dataset}: final runs ({len(final)})"
        outs = _fit_all(final, split, epochs, what, n_jobs, progress)
        collected: dict[tuple[str, str, float], list[float]] = {}
        paths: dict[tuple[str, float], list[tuple[np.ndarray, np.ndarray]]] = {}
        for job, out in zip(final, outs):
            collected.setdefault((job.task, job.method, job.epsilon), []).append(out.test)
            res.final_rows.append(_row(job, out))
            if out.path is not None:
                paths.setdefault((job.method, job.epsilon), []).append(out.path)
        for key, vals in collected.items():
            res.final[key] = np.asarray(vals, dtype=np.float64)
        for key, plist in paths.items():
            res.paths[key] = (plist[0][0], np.vstack([p[1] for p in plist]))
        if paths:
            res.optimum = ridge_optimum(split.X_train, split.y_train)[1]
    res.seconds = time.perf_counter() - start
    return res
