"""Multi-core scaling of the LSH-coreset kernels of the C++ core (``DPKMeans(method="lsh")``).

Times ``_core.lsh_codes`` (400,000 x 100 rows, 20 hyperplanes), ``_core.clipped_cluster_sums``
(2,000 cells) and ``_core.nearest_centres`` (64 centres) on 1, 2, 4, 8 and 16 threads (best of
3 after a warm-up) and writes ``bench/results/coreset_threads.json``. The committed numbers were
measured on the 16-core device machine lent to issue 21 (Intel Xeon, 16 cores), the only
machine of this project with more than 2 cores::

    python bench/python/bench_coreset_threads.py [--out bench/results]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from privlearn import _core


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=Path("bench/results"))
    p.add_argument("--threads", default="1,2,4,8,16")
    args = p.parse_args()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400_000, 100)) * 0.05
    H = rng.normal(size=(20, 100))
    t, c = np.zeros(20), np.zeros(100)
    C = rng.normal(size=(64, 100)) * 0.05
    labels = rng.integers(0, 2000, X.shape[0]).astype(np.int64)
    kernels = {
        "lsh_codes": lambda th: _core.lsh_codes(X, c, H, t, th),
        "clipped_cluster_sums": lambda th: _core.clipped_cluster_sums(
            X, labels, 2000, c, 1.0, 2, th
        ),
        "nearest_centres": lambda th: _core.nearest_centres(X, C, th),
    }
    out: dict[str, dict[str, float]] = {}
    for name, fn in kernels.items():
        base = None
        out[name] = {}
        for th in (int(v) for v in args.threads.split(",")):
            fn(th)
            best = min(_timed(fn, th) for _ in range(3))
            base = base or best
            out[name][str(th)] = best
            print(f"{name} threads={th} {best:.4f} s speedup {base / best:.2f}", flush=True)
    report = {"bench": "coreset_threads", "cpu_count": os.cpu_count(), "seconds": out}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "coreset_threads.json").write_text(json.dumps(report, indent=1) + "\n")


def _timed(fn, th: int) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    fn(th)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
