"""The simulation of the Song et al. (2013) reproduction (Section IV-B).

Belongs here: the seed of a run (:func:`_run_seed`: data set, batch size and run index only,
shared by the learning rates and by private / non-private SGD), one run of both mechanisms
(:func:`_one_run`), :func:`simulate` over every data set, rate, batch size and permutation, and
the :class:`Song13Result` it returns with the statistics every reader takes from it
(:func:`_stats`). Turning the result into files is :mod:`.outputs`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from privlearn._losses import objective
from privlearn.experiments.runs import derive_seed, parallel_map
from privlearn.experiments.song13.data import centralized_optimum, prepare_dataset
from privlearn.experiments.song13.settings import (
    _MECHANISMS,
    _TAG,
    BATCH_SIZES,
    DATASETS,
    EPSILON,
    LAMBDA,
    PATH_POINTS,
    RATES,
)
from privlearn.experiments.summary import prepare_or_skip
from privlearn.experiments.tables import mean_std


@dataclass(frozen=True)
class _Task:
    dataset: str
    rate: str
    batch_size: int
    run: int


def _run_seed(dataset: str, batch_size: int, run_index: int) -> int:
    """The seed of one run: a function of (data set, b, run) only, shared by all rates."""
    return derive_seed(_TAG, dataset, f"b={batch_size}", f"run={run_index}")


def _path_objective(X: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Objective at every row of ``W``, in chunks to bound the memory of ``X @ W.T``."""
    chunk = max(1, 8_000_000 // max(X.shape[0], 1))
    return np.concatenate(
        [objective(X, y, W[i : i + chunk], "log_loss", LAMBDA) for i in range(0, len(W), chunk)]
    )


def _one_run(
    X: np.ndarray, y: np.ndarray, task: _Task, path_points: int
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Private and non-private SGD with the same key: mechanism -> (steps, objective path)."""
    from privlearn.linear import sgd_train
    from privlearn.random import key_from_seed

    schedule, eta0 = RATES[task.rate]
    n, d = X.shape
    n_steps = -(-n // task.batch_size)
    every = max(1, math.ceil(n_steps / path_points))
    key = key_from_seed(_run_seed(task.dataset, task.batch_size, task.run))
    out = {}
    for label, mechanism in _MECHANISMS.items():
        res = sgd_train(
            X,
            y,
            key=key,
            n_threads=1,
            loss="log_loss",
            mechanism=mechanism,
            sampling="disjoint",
            learning_rate=schedule,
            alpha=LAMBDA,
            batch_size=task.batch_size,
            epochs=1,
            eta0=eta0,
            epsilon=EPSILON,
            radius=1.0 / LAMBDA,
            record_every=every,
        )
        W = np.vstack([np.zeros((1, d)), res.path])  # w_0 = 0, independent of the data
        steps = np.concatenate([[0], res.path_steps])
        out[label] = (steps, _path_objective(X, y, W))
    return out


@dataclass
class Song13Result:
    """Everything :func:`simulate` computed; :func:`write_outputs` turns it into files.

    ``paths[(dataset, rate, b, mechanism)]`` is ``(steps, objectives)`` with ``objectives`` of
    shape ``(repeats, len(steps))``; the last column is the final objective of each run.
    """

    datasets: list[str]
    batch_sizes: list[int]
    rates: list[str]
    repeats: int
    quick: bool
    sizes: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (n, d)
    notes: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    optimum: dict[str, tuple[float, float]] = field(default_factory=dict)  # (value, grad norm)
    paths: dict[tuple[str, str, int, str], tuple[np.ndarray, np.ndarray]] = field(
        default_factory=dict
    )
    seconds: float = 0.0
    #: About this many recorded iterates per run (``simulate``'s ``path_points``).
    path_points: int = PATH_POINTS

    def final(self, dataset: str, rate: str, b: int, mechanism: str) -> np.ndarray:
        """Final objective of every run."""
        return self.paths[(dataset, rate, b, mechanism)][1][:, -1]


def simulate(
    *,
    datasets: tuple[str, ...] | list[str] = DATASETS,
    batch_sizes: tuple[int, ...] | list[int] = BATCH_SIZES,
    rates: tuple[str, ...] | list[str] = tuple(RATES),
    repeats: int = 20,
    sizes: dict[str, int | None] | None = None,
    path_points: int = PATH_POINTS,
    data_home: Any = None,
    n_jobs: int | None = None,
    quick: bool = False,
    progress: bool = True,
) -> Song13Result:
    """Run every (data set, rate, b, permutation) of Section IV, private and non-private.

    Parameters
    ----------
    datasets : sequence of {"mnist", "kddcup99", "synthetic"}
        A real data set whose files are missing is skipped (recorded in ``skipped``).
    batch_sizes : sequence of int
    rates : sequence of keys of :data:`RATES`
    repeats : int
        Random permutations (with fresh noise) per setting; 20 in the paper.
    sizes : dict, optional
        Rows per data set (default: the paper's sizes).
    path_points : int
        About this many iterates of each run are recorded (``record_every``).
    data_home : path, optional
    n_jobs : int, optional
        Worker threads (the core releases the GIL); results do not depend on it.
    quick : bool
        Only recorded in the result (for the summary).
    progress : bool
        Print progress lines (a tqdm bar on a terminal).
    """
    for r in rates:
        if r not in RATES:
            raise ValueError(f"unknown rate {r!r}; choose from {list(RATES)}")
    if repeats < 1:
        raise ValueError("repeats must be >= 1")
    sizes = dict(sizes or {})
    start = time.perf_counter()
    result = Song13Result(
        datasets=[],
        batch_sizes=sorted(int(b) for b in batch_sizes),
        rates=list(rates),
        repeats=int(repeats),
        quick=quick,
        path_points=int(path_points),
    )
    for name in datasets:
        load = partial(prepare_dataset, name, sizes.get(name), data_home=data_home)
        prepared = prepare_or_skip(_TAG, name, load, result.skipped, data_home, progress=progress)
        if prepared is None:
            continue
        X, y, note = prepared
        result.datasets.append(name)
        result.sizes[name] = X.shape
        result.notes[name] = note
        _, value, grad_norm = centralized_optimum(X, y)
        result.optimum[name] = (value, grad_norm)
        tasks = [
            _Task(name, rate, b, r)
            for rate in result.rates
            for b in result.batch_sizes
            for r in range(result.repeats)
            if b <= X.shape[0]
        ]
        outs = parallel_map(
            lambda t, X=X, y=y: _one_run(X, y, t, path_points),
            tasks,
            n_jobs=n_jobs,
            desc=f"[{_TAG}] {name}: runs",
            progress=progress,
        )
        grouped: dict[tuple[str, str, int, str], list[tuple[np.ndarray, np.ndarray]]] = {}
        for task, out in zip(tasks, outs):
            for mech, pair in out.items():
                grouped.setdefault((name, task.rate, task.batch_size, mech), []).append(pair)
        for key, pairs in grouped.items():
            result.paths[key] = (pairs[0][0], np.vstack([p[1] for p in pairs]))
    result.seconds = time.perf_counter() - start
    return result


def _stats(res: Song13Result, ds: str, rate: str, b: int, mech: str) -> tuple[float, float]:
    """Mean and sample std of the final objective over the runs of one setting."""
    return mean_std(res.final(ds, rate, b, mech))
