"""DP k-means benchmark: time and k-means cost of max cover (C++ core, 1 and 2 threads),
Balcan et al. (ours) and diffprivlib's KMeans on the paper's synthetic mixture (64 Gaussians in
R^100), for n in {50k, 200k, 1M}; the scaling exponent of max cover in n; and the max-cover
routine of the core against its numpy twin on 50k points.

Usage::

    python bench/python/bench_kmeans.py [--quick] [--k 16] [--out bench/results]

One run per (n, contender) at epsilon = 1, delta = 1e-6 (the fits take seconds to minutes; the
contenders of one n run one after the other in this process, so they see about the same
background load). The scaling exponent is the least-squares slope of log(time) against log(n)
for the 1-thread core (target <= 1.15). Core vs twin: ``maxcover_candidates`` alone (same
projected data, radii, picks and key: identical picks), target >= 20x.
Writes ``bench/results/kmeans.json`` and the ``kmeans`` row of ``bench/results/README.md``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from privlearn.cluster import (
    DPKMeans,
    default_picks,
    default_radii,
    maxcover_candidates,
    maxcover_pick_epsilon,
)
from privlearn.cluster._common import STREAM_JL, jl_project, kmeans_cost
from privlearn.data.synthetic import make_gaussian_mixture
from privlearn.experiments.kmeans import diffprivlib_kmeans
from privlearn.random import Stream

sys.path.insert(0, str(Path(__file__).resolve().parent))
_common = importlib.import_module("bench_random")
BackgroundLoad = _common.BackgroundLoad
machine_info = _common.machine_info

BENCH = "kmeans"
RADIUS = 11.0
TARGET_EXPONENT = 1.15
TARGET_TWIN = 20.0


def _timed(fn: Any) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def contenders(k: int, n: int) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for threads in (1, 2):
        out.append(
            (
                f"maxcover-core-{threads}t",
                lambda X, t=threads: (
                    DPKMeans(k, 1.0, 1e-6, method="maxcover", radius=RADIUS, seed=1, n_threads=t)
                    .fit(X)
                    .cluster_centers_
                ),
            )
        )
    out.append(
        (
            "balcan",
            lambda X: (
                DPKMeans(k, 1.0, 1e-6, method="balcan", radius=RADIUS, seed=1)
                .fit(X)
                .cluster_centers_
            ),
        )
    )
    cls = diffprivlib_kmeans()
    if cls is not None:

        def dpl(X: np.ndarray) -> np.ndarray:
            b = (np.full(X.shape[1], -RADIUS), np.full(X.shape[1], RADIUS))
            return cls(k, epsilon=1.0, bounds=b, random_state=1).fit(X).cluster_centers_

        out.append(("diffprivlib", dpl))
    return out


def core_vs_twin(n: int, k: int) -> dict[str, Any]:
    X, _ = make_gaussian_mixture(n, seed=0)
    Y, _ = jl_project(X, RADIUS, 4, Stream(0, stream=STREAM_JL))
    radii = default_radii(n)
    picks = default_picks(k, n)
    eps_pick = maxcover_pick_epsilon(0.3, 0.5e-6, len(radii))
    key = Stream(3).key
    kw = dict(eps_pick=eps_pick, key=key, stream=2, picks=picks)
    t_core, a = _timed(lambda: maxcover_candidates(Y, radii, backend="core", n_threads=1, **kw))
    t_ref, b = _timed(lambda: maxcover_candidates(Y, radii, backend="reference", **kw))
    same = bool(np.array_equal(a.centers, b.centers) and np.array_equal(a.covered, b.covered))
    return {
        "n": n,
        "k": k,
        "radii": len(radii),
        "picks": picks,
        "core_s": t_core,
        "reference_s": t_ref,
        "speedup": t_ref / t_core,
        "identical_picks": same,
    }


def readme_row(report: dict[str, Any], json_name: str) -> str:
    m = report["machine"]
    res = report["results"]
    big = max(r["n"] for r in res)
    parts = []
    for r in res:
        if r["n"] == big:
            parts.append(f"{r['impl']} {r['seconds']:.1f} s (cost {r['cost']:.3g})")
    exp = report["scaling_exponent"]
    twin = report["core_vs_twin"]
    result = (
        f"n = {big:,}, k = {report['k']}: "
        + "; ".join(parts)
        + f"; max-cover time ~ n^{exp:.2f} (1 thread); core/twin {twin['speedup']:.0f}x on "
        f"{twin['n']:,} (identical picks: {twin['identical_picks']})"
    )
    met = lambda ok: "met" if ok else "**not met**"  # noqa: E731
    targets = (
        f"exponent <= {TARGET_EXPONENT}: {met(exp <= TARGET_EXPONENT)}; "
        f"core >= {TARGET_TWIN:.0f}x twin: {met(twin['speedup'] >= TARGET_TWIN)}"
    )
    machine = f"{m.get('cpu_model') or 'CPU'}, {m.get('cpus_usable')} cores, shared"
    if m.get("background_load_cores") is not None:
        machine += f"; background load {m['background_load_cores']:.1f} cores"
    ns = ", ".join(f"{n:,}" for n in sorted({r["n"] for r in res}))
    return (
        f"| `{BENCH}` | {result} | {targets} | {machine} | {m['date'][:10]} | "
        f"[{json_name}]({json_name}), mixture d = 100, n in {{{ns}}}, one run each |"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="n in {20k, 50k}, twin on 10k")
    p.add_argument("--k", type=int, default=16, help="clusters (default 16)")
    p.add_argument("--ns", type=str, default=None, help="comma-separated n (default 50k,200k,1M)")
    p.add_argument("--twin-n", type=int, default=None, help="rows for core vs twin (50,000)")
    p.add_argument("--out", type=Path, default=Path("bench/results"), help="results folder")
    args = p.parse_args(argv)
    ns = [20_000, 50_000] if args.quick else [50_000, 200_000, 1_000_000]
    if args.ns:
        ns = [int(x) for x in args.ns.split(",")]
    twin_n = args.twin_n or (10_000 if args.quick else 50_000)
    machine = machine_info()
    results = []
    with BackgroundLoad() as background:
        for n in ns:
            X, _ = make_gaussian_mixture(n, seed=0)
            for name, fit in contenders(args.k, n):
                seconds, centers = _timed(lambda fit=fit, X=X: fit(X))
                cost = kmeans_cost(X, centers)
                results.append({"n": n, "impl": name, "seconds": seconds, "cost": cost})
                print(json.dumps(results[-1]), flush=True)
        twin = core_vs_twin(twin_n, args.k)
        print(json.dumps(twin), flush=True)
    machine["background_load_cores"] = background.cores
    core = [(r["n"], r["seconds"]) for r in results if r["impl"] == "maxcover-core-1t"]
    slope = float(np.polyfit(np.log([c[0] for c in core]), np.log([c[1] for c in core]), 1)[0])
    speedup_2t = {
        r["n"]: next(
            s["seconds"] for s in results if s["n"] == r["n"] and s["impl"] == "maxcover-core-1t"
        )
        / r["seconds"]
        for r in results
        if r["impl"] == "maxcover-core-2t"
    }
    report = {
        "bench": BENCH,
        "k": args.k,
        "epsilon": 1.0,
        "delta": 1e-6,
        "machine": machine,
        "results": results,
        "scaling_exponent": slope,
        "two_thread_speedup": speedup_2t,
        "core_vs_twin": twin,
        "targets": {"scaling_exponent": TARGET_EXPONENT, "core_vs_twin": TARGET_TWIN},
        "notes": [
            "One run per contender and n (fits take seconds to minutes); the machine is shared "
            "by several users (background load above), so times are indicative and ratios "
            "measured in one process are the claims.",
            "Max-cover time includes the JL projection, the grid max cover over all radii, the "
            "proxy counts, scikit-learn's weighted KMeans, the noisy averaging and one DP Lloyd "
            "round in R^100.",
        ],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    json_path = args.out / f"{BENCH}.json"
    json_path.write_text(json.dumps(report, indent=2) + "\n")
    _common.update_readme(args.out / "README.md", readme_row(report, json_path.name), BENCH)
    print(f"scaling exponent {slope:.3f}; core/twin {twin['speedup']:.1f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
