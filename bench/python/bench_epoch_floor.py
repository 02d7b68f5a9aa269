"""Issue 32, items 1 and 2: a default DP-SGD epoch and the fixed cost of a fit, against the floor
of an epoch, two streaming passes ``X.T @ (X @ w)``, on one thread.

Everything runs in one process with the repetitions interleaved (round robin), medians of
``--reps``; claims are ratios to the floor measured in the same round. Data: ``n`` dense rows
(default 200,000; the issue's 1,000,000 with ``--n 1000000``), ``d = 100``, uniformly random
unit-norm directions, labels from a random linear model.

- ``core_epoch``: :func:`privlearn.linear.sgd_train` with the ``DPSGDClassifier`` defaults
  (Poisson sampling, expected batch 64, clip 1, noise multiplier 1 on the exact lattice, the
  intercept column appended: ``d + 1`` columns), one epoch. With ``--baseline DIR`` (a folder
  holding a package ``oldcore`` with an older ``_core`` build) the same call runs on that build
  too, interleaved, and the coefficients are checked to be equal bit for bit.
- ``estimator_epoch``: ``DPSGDClassifier`` (defaults, ``n_samples`` and ``classes`` declared),
  the time of a 2-epoch fit minus a 1-epoch fit.
- ``fixed``: a 1-epoch fit minus ``estimator_epoch``: with ``n_samples``/``classes`` declared or
  not, and with the lattice calibration cached (a refit of the same schedule) or cold.
- ``discrete_gaussian``: ns per exact lattice draw (variance 2^60: noise multiplier 1 at the
  2^-30 lattice) vs a Box-Muller normal.

Usage::

    python bench/python/bench_epoch_floor.py [--n 200000] [--reps 5] [--baseline DIR]
        [--draws-differ] [--clock {wall,cpu}]

With ``--baseline`` the baseline build's discrete Gaussian and Box-Muller draws are timed too
(``baseline_discrete_gaussian``, ``baseline_box_muller``); ``--draws-differ`` skips the
bit-for-bit check of the coefficients when the baseline's sampler draws other noise.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import threadpoolctl

from privlearn import _core
from privlearn.linear import DPSGDClassifier, sgd_train
from privlearn.linear import estimators as _est
from privlearn.linear import sgd as _sgd


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--baseline", type=Path, default=None)
    ap.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall time (perf_counter) or the calling thread's CPU time (thread_time: robust on "
        "a busy shared machine; everything timed here runs on the calling thread)",
    )
    ap.add_argument(
        "--draws-differ",
        action="store_true",
        help="the baseline build draws different noise (a changed sampler): skip the bit-for-bit "
        "check of the coefficients",
    )
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "results")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    threadpoolctl.threadpool_limits(1)
    n, d = args.n, 100
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y01 = (X @ rng.standard_normal(d) > 0).astype(int)
    Xc = np.hstack([X, np.ones((n, 1))]) / np.sqrt(2.0)
    ypm = 2.0 * y01 - 1.0
    w = rng.standard_normal(d)
    kw = dict(
        key=bytes(32), n_threads=1, mechanism="gaussian", sampling="poisson", batch_size=64,
        epochs=1, sigma=1.0, clip=1.0, alpha=1e-4, eta0=1.0, learning_rate="constant",
        loss="log_loss",
    )  # fmt: skip
    cores = {"core_epoch": _core}
    if args.baseline is not None:
        sys.path.insert(0, str(args.baseline))
        cores["baseline_core_epoch"] = importlib.import_module("oldcore._core")

    def floor() -> None:
        X.T @ (X @ w)

    coefs: dict[str, np.ndarray] = {}

    def core_run(name: str) -> None:
        _sgd._core = cores[name]
        try:
            coefs[name] = sgd_train(Xc, ypm, **kw).coef
        finally:
            _sgd._core = _core

    def fit(epochs: int, declared: bool, cached: bool) -> None:
        saved = dict(_est._CALIBRATIONS)
        if not cached:
            _est._CALIBRATIONS.clear()
        extra = dict(n_samples=n, classes=[0, 1]) if declared else {}
        DPSGDClassifier(epochs=epochs, n_threads=1, verbose=0, seed=1, **extra).fit(X, y01)
        _est._CALIBRATIONS.update(saved)  # a cold fit leaves the others' entries cached

    noise = dict(key=bytes(range(32)), n=200_000)

    tasks = {
        "floor": floor,
        **{name: (lambda name=name: core_run(name)) for name in cores},
        "fit1_declared": lambda: fit(1, True, True),
        "fit2_declared": lambda: fit(2, True, True),
        "fit1_undeclared": lambda: fit(1, False, True),
        "fit1_undeclared_cold": lambda: fit(1, False, False),
        "discrete_gaussian": lambda: _core.random_discrete_gaussian(
            noise["key"], 5, 0, noise["n"], 1 << 60, 0, 1
        ),
        "box_muller": lambda: _core.random_normal(noise["key"], 5, 0, noise["n"], 1),
    }
    if "baseline_core_epoch" in cores:
        old = cores["baseline_core_epoch"]
        tasks["baseline_discrete_gaussian"] = lambda: old.random_discrete_gaussian(
            noise["key"], 5, 0, noise["n"], 1 << 60, 0, 1
        )
        tasks["baseline_box_muller"] = lambda: old.random_normal(noise["key"], 5, 0, noise["n"], 1)
    for f in tasks.values():  # warm-up (fills the calibration cache for the cached fits)
        f()
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter
    times: dict[str, list[float]] = {k: [] for k in tasks}
    for _ in range(args.reps):
        for name, f in tasks.items():
            t0 = clock()
            f()
            times[name].append(clock() - t0)
    if "baseline_core_epoch" in coefs and not args.draws_differ:
        assert np.array_equal(coefs["core_epoch"], coefs["baseline_core_epoch"])
    med = {k: statistics.median(v) for k, v in times.items()}
    fl = med["floor"]
    est_epoch = med["fit2_declared"] - med["fit1_declared"]
    ratios = {
        "core_epoch / floor": med["core_epoch"] / fl,
        "estimator_epoch / floor": est_epoch / fl,
        "fixed_declared / floor": (med["fit1_declared"] - est_epoch) / fl,
        "fixed_undeclared / floor": (med["fit1_undeclared"] - est_epoch) / fl,
        "fixed_undeclared_cold_calibration / floor": (med["fit1_undeclared_cold"] - est_epoch) / fl,
        "discrete_gaussian / box_muller": med["discrete_gaussian"] / med["box_muller"],
    }
    if "baseline_core_epoch" in med:
        ratios["baseline_core_epoch / floor"] = med["baseline_core_epoch"] / fl
        ratios["core_epoch / baseline_core_epoch"] = med["core_epoch"] / med["baseline_core_epoch"]
        ratios["baseline_discrete_gaussian / baseline_box_muller"] = (
            med["baseline_discrete_gaussian"] / med["baseline_box_muller"]
        )
        ratios["discrete_gaussian / baseline_discrete_gaussian"] = (
            med["discrete_gaussian"] / med["baseline_discrete_gaussian"]
        )
    result = {
        "bench": "epoch_floor",
        "config": {
            "n": n,
            "d": d,
            "reps": args.reps,
            "threads": 1,
            "batch_size": 64,
            "baseline_draws_differ": bool(args.draws_differ),
            "clock": args.clock,
        },
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "processor": platform.processor(),
            "loadavg_start": list(os.getloadavg()),
        },
        "median_s": med,
        "all_s": times,
        "ns_per_draw": {
            k: med[k] / noise["n"] * 1e9
            for k in (
                "discrete_gaussian",
                "box_muller",
                "baseline_discrete_gaussian",
                "baseline_box_muller",
            )
            if k in med
        },
        "ratios": ratios,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "epoch_floor.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({"median_s": med, "ratios": ratios}, indent=2))


if __name__ == "__main__":
    main()
