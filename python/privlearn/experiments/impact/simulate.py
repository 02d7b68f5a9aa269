"""The synthetic comparison: the note's generator, one seed of every scheme, and the runs.

Belongs here: the data of one seed (:func:`privlearn.data.make_large_categorical`: train,
calibration and test rows from one design), :func:`run_seed` (every scheme fitted and scored on
them, with the ROC data of seed 0), the collected :class:`ImpactResult` and :func:`simulate`,
which runs the seeds. Not here: the schemes themselves
(:mod:`~privlearn.experiments.impact.methods`) or what is written from the result.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privlearn.experiments.impact.methods import (
    _TAG,
    METHODS,
    SIGMAS,
    Method,
    _code_fit_predict,
    _error,
    _peer_available,
    choose_encoder,
    part_sizes,
)
from privlearn.experiments.runs import derive_seed, parallel_map
from privlearn.experiments.tables import mean_std


def _data(r: int, quick: bool) -> dict[str, Any]:
    from privlearn.data import make_large_categorical

    design = derive_seed(_TAG, r, "design")
    out: dict[str, Any] = {}
    for part, n in part_sizes(quick).items():
        X, y, effects = make_large_categorical(
            n, seed=derive_seed(_TAG, r, part), design_seed=design, return_effects=True
        )
        out[part] = (X, (y > 0).astype(np.int64))
        out["categories"] = [list(effects[c].index) for c in X.columns]
    return out


def run_seed(
    r: int, methods: tuple[Method, ...] | list[Method], sigmas: tuple[float, ...], quick: bool
) -> dict[str, Any]:
    """One seed: calibrate sigma, fit every method, score it. Returns rows and ROC data."""
    from sklearn.metrics import roc_auc_score, roc_curve

    data = _data(r, quick)
    Xtr, ytr = data["train"]
    Xte, yte = data["test"]
    rows: list[dict[str, Any]] = []
    cal_rows: list[dict[str, Any]] = []
    rocs: dict[str, Any] = {}
    for method in methods:
        if method.code == "peer" and not _peer_available(method.mode):
            continue
        enc, sigma, errors = choose_encoder(
            method, (r,), data["categories"], sigmas, data["train"], data["cal"]
        )
        cal_rows += [
            {"seed": r, "method": method.name, "sigma": s, "cal_error": e}
            for s, e in zip(sigmas, errors)
        ]
        start = time.perf_counter()
        mask, ptr, pte, privacy = _code_fit_predict(enc, Xtr, ytr, Xte)
        rows.append(
            {
                "seed": r,
                "method": method.name,
                "code": method.code,
                "mode": method.mode,
                "significance": "" if method.significance is None else method.significance,
                "sigma": sigma,
                "epsilon": privacy.epsilon if privacy is not None else math.inf,
                "model_rows": int(mask.sum()),
                "train_auc": roc_auc_score(ytr[mask], ptr),
                "test_auc": roc_auc_score(yte, pte),
                "train_error": _error(ptr, ytr[mask]),
                "test_error": _error(pte, yte),
                "seconds": time.perf_counter() - start,
            }
        )
        if r == 0:
            rocs[method.name] = (roc_curve(ytr[mask], ptr)[:2], roc_curve(yte, pte)[:2])
    return {"rows": rows, "cal_rows": cal_rows, "rocs": rocs}


def column(rows: list[dict[str, Any]], method: str, key: str) -> np.ndarray:
    """``key`` of every row of ``method``, in row order."""
    return np.array([row[key] for row in rows if row["method"] == method])


@dataclass
class ImpactResult:
    """Everything :func:`write_outputs` needs."""

    rows: list[dict[str, Any]]
    cal_rows: list[dict[str, Any]]
    rocs: dict[str, Any]
    seeds: int
    sigmas: tuple[float, ...]
    quick: bool
    seconds: float
    methods: list[str] = field(default_factory=list)

    def values(self, method: str, key: str) -> np.ndarray:
        return column(self.rows, method, key)

    def mean(self, method: str, key: str) -> float:
        return mean_std(self.values(method, key))[0]


def simulate(
    *,
    seeds: int = 10,
    sigmas: tuple[float, ...] = SIGMAS,
    methods: tuple[Method, ...] | list[Method] = METHODS,
    quick: bool = False,
    n_jobs: int | None = None,
    progress: bool = True,
) -> ImpactResult:
    """Run every method on ``seeds`` independent designs and data sets."""
    start = time.perf_counter()
    parts = parallel_map(
        lambda r: run_seed(r, methods, sigmas, quick),
        list(range(seeds)),
        n_jobs=n_jobs,
        desc="impact seeds",
        progress=progress,
    )
    rows = [row for p in parts for row in p["rows"]]
    names = list(dict.fromkeys(row["method"] for row in rows))
    return ImpactResult(
        rows=rows,
        cal_rows=[row for p in parts for row in p["cal_rows"]],
        rocs=parts[0]["rocs"] if parts else {},
        seeds=seeds,
        sigmas=tuple(sigmas),
        quick=quick,
        seconds=time.perf_counter() - start,
        methods=names,
    )
