"""Multi-core scaling of the LSH-coreset kernels of the C++ core (``DPKMeans(method="lsh")``).

Times ``_core.lsh_codes`` (400,000 x 100 rows, 20 hyperplanes), ``_core.clipped_cluster_sums``
(2,000 cells) and ``_core.nearest_centres`` (64 centres) on 1, 2, 4, 8 and 16 threads (best of
``--reps`` 3 interleaved repetitions after a warm-up) and writes
``bench/results/coreset_threads.json``. The committed numbers were measured on the 16-core
device machine lent to issue 21 (Intel Xeon, 16 cores), the only machine of this project with
more than 2 cores::

    python bench/python/bench_coreset_threads.py [--quick] [--out DIR]
"""

from __future__ import annotations

import harness
import numpy as np

from privlearn import _core


def main(argv: list[str] | None = None) -> int:
    p = harness.cli(__doc__, "coreset_threads", reps=3)  # --quick: 50,000 rows, 1,2 threads
    p.add_argument("--threads", default="1,2,4,8,16")
    args = p.parse_args(argv)
    n, threads = (50_000, "1,2") if args.quick else (400_000, args.threads)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 100)) * 0.05
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
    machine = harness.machine()
    counts = [int(v) for v in threads.split(",")]
    cmp = harness.compare(
        {f"{k}|{th}": (lambda f=f, th=th: f(th)) for k, f in kernels.items() for th in counts},
        args.reps,
    )
    harness.finish(machine, cmp)
    out: dict[str, dict[str, float]] = {}  # kernel -> threads -> best of the repetitions
    for name in kernels:
        out[name] = {str(th): min(cmp[f"{name}|{th}"].times) for th in counts}
        for th in counts:
            speedup = out[name][str(counts[0])] / out[name][str(th)]
            print(f"{name} threads={th} {out[name][str(th)]:.4f} s speedup {speedup:.2f}")
    report = {
        "bench": "coreset_threads",
        "cpu_count": machine["cpu_count"],
        "n": n,
        "seconds": out,
        "machine": machine,
        "timings": cmp.as_dict()["timings"],
    }
    harness.publish(report, harness.out_dir(args), "coreset_threads", None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
