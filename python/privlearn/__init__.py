"""privlearn: privacy-preserving machine learning on a fast C++ core.

Submodules are imported on first use so that ``import privlearn`` stays cheap:

- :mod:`privlearn.random` -- the ChaCha20 counter-based generator (C++ core);
- :mod:`privlearn.parallel` -- thread control and the deterministic reduction;
- :mod:`privlearn.reference` -- pure-numpy twins of every core routine;
- :mod:`privlearn.data` -- data loaders, preprocessing and synthetic generators;
- :mod:`privlearn.accounting` -- RDP / pure-DP accountants, calibration, the privacy ledger;
- :mod:`privlearn.mechanisms` -- floating-point-safe Laplace, discrete and Gaussian mechanisms;
- :mod:`privlearn.audit` -- empirical (Clopper-Pearson) privacy audits;
- :mod:`privlearn.linear` -- DP-SGD, DP-SCD and quadratic-gradient logistic regression;
- :mod:`privlearn.he` -- the CKKS-like slot simulator and packed encrypted LR training;
- :mod:`privlearn.cluster` -- DP k-means by grid max cover (and the Balcan et al. baseline);
- :mod:`privlearn.encoding` -- DP impact coding of high-cardinality categoricals;
- :mod:`privlearn.exceptions` -- warnings and errors shared by the package.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

# Before the core (and its OpenMP runtime, libgomp) is first loaded: idle OpenMP threads sleep
# at once instead of spinning (GNU's default spins ~300,000 rounds first). A core region only
# opens where each thread gets >= 0.25 ms of work (privlearn.parallel), so waking a sleeping
# thread (~10-50 us) is cheap; a spinning one, on a machine where another process keeps a core
# busy, uses up its share of that core between regions and is then descheduled for a time
# slice when the next region needs it. Measured (bench/python/bench_threads.py --calibrate, busy
# loop pinned to one of 2 cores): a 0.1 ms region on 2 threads took 11.9 ms with the default,
# 0.11 ms with PASSIVE. libgomp reads it once, when it is loaded: a user's own setting wins
# (setdefault), and it has no effect if the process loaded the same libgomp before privlearn.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# fork(): an OpenMP runtime's thread pool does not survive fork(), and a child that opens a
# parallel region with more than one thread after its parent used that runtime deadlocks. The
# core marks a forked child itself (cpp/src/parallel.cpp); for the OpenMP code privlearn calls
# in other libraries (scikit-learn's KMeans and pairwise reductions, their own libgomp) the
# fork is recorded here, as early as possible (at import), and privlearn.parallel's
# fork_safe_threads() runs that code on one thread in a forked child.
_FORK_STATE = {"forked_child": False}


def _after_fork_in_child() -> None:
    _FORK_STATE["forked_child"] = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

__version__ = "0.1.0"

_SUBMODULES = {
    "accounting",
    "audit",
    "backends",
    "cli",
    "cluster",
    "data",
    "encoding",
    "exceptions",
    "experiments",
    "he",
    "linear",
    "mechanisms",
    "parallel",
    "progress",
    "random",
    "reference",
}

__all__ = ["__version__", *sorted(_SUBMODULES)]


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'privlearn' has no attribute {name!r}")
