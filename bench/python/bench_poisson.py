"""Poisson subsampling (the batches of DP-SGD and DP-SCD): the core's addressable geometric walk,
:func:`privlearn.random.poisson_sample` (``samplers.hpp``), against numpy drawing the same kind of
sample as a Bernoulli mask (``np.flatnonzero(rng.random(n) < q)``, not addressable), one call of
each per repetition, interleaved (medians).

With ``--baseline DIR`` (a folder holding a package ``oldcore`` with an older ``_core`` build)
the older core's sampler runs too and its samples are checked to be the same. Rates: one DP-SGD
batch of 64 rows, 1% and 30% of ``n`` (walks of at least 256 expected draws read their random
words in vector chunks since issue 32).

Usage::

    python bench/python/bench_poisson.py [--n 1000000] [--reps 15] [--baseline DIR] [--quick]
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import harness
import numpy as np

from privlearn import _core

BENCH = "poisson"


def main(argv: list[str] | None = None) -> int:
    p = harness.cli(__doc__, BENCH, reps=15, clock=True)
    p.add_argument("--n", type=int, default=None, help="population (default 1,000,000)")
    p.add_argument("--baseline", type=Path, default=None, help="folder with package oldcore")
    args = p.parse_args(argv)
    n = args.n or (50_000 if args.quick else 1_000_000)
    cores: dict[str, Any] = {"core": _core}
    if args.baseline is not None:
        sys.path.insert(0, str(args.baseline))
        cores["baseline"] = importlib.import_module("oldcore._core")
    key = bytes(range(32))
    rng = np.random.default_rng(0)
    rates = {"L64": 64 / n, "q1pct": 0.01, "q30pct": 0.3}
    tasks: dict[str, Any] = {}
    for label, q in rates.items():
        for name, core in cores.items():
            tasks[f"{label}/{name}"] = lambda c=core, q=q: c.poisson_sample(key, 1, 7, n, q)
        tasks[f"{label}/numpy"] = lambda q=q: np.flatnonzero(rng.random(n) < q)
    same = None
    if "baseline" in cores:
        same = all(
            np.array_equal(
                _core.poisson_sample(key, 1, t, n, q),
                cores["baseline"].poisson_sample(key, 1, t, n, q),
            )
            for q in rates.values()
            for t in range(5)
        )
    m = harness.machine()
    cmp = harness.compare(tasks, args.reps, clock=args.clock)
    med = {k: t.median for k, t in cmp.timings.items()}
    parts = []
    for label in rates:
        core, numpy_ = med[f"{label}/core"], med[f"{label}/numpy"]
        s = f"{label}: numpy time / core time {harness.fx(harness.ratio(numpy_, core))}"
        if "baseline" in cores:
            after_before = harness.ratio(core, med[f"{label}/baseline"])
            s += f", after/before {harness.fmt(after_before)}"
        parts.append(s)
    result = f"n = {n}, one sample per call: " + "; ".join(parts)
    if same is not None:
        result += f" (the same samples as the baseline build: {same})"
    target = "n/a (issue 32 item 1: the sampler's share of an epoch)"
    row = harness.row(
        BENCH, result, target, harness.finish(m, cmp), f"[{BENCH}.json]({BENCH}.json)"
    )
    report = {
        "bench": BENCH,
        "n": n,
        "rates": rates,
        "same_as_baseline": same,
        "machine": m,
        **cmp.as_dict(),
    }
    harness.publish(report, harness.out_dir(args), BENCH, row)
    print(result)
    return 1 if same is False else 0


if __name__ == "__main__":
    raise SystemExit(main())
