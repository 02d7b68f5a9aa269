"""Peak extra memory and time of one ``DPKMeans`` fit, in a fresh process per case
(issue 30, item 6: the max-cover fit's memory; target <= 2x X extra).

The child builds ``X`` (float64, ``n x d``: an equal-weight mixture of 16 Gaussians in R^d,
sd 0.05 per coordinate, centres uniform in the ball of radius 0.8, rows projected into the
ball of radius 0.999, strictly inside the public radius 1; seed 0, built in blocks; a row
projected to norm exactly 1 can land a rounding step above it, and ``DPKMeans`` then projects
it onto the ball on a copy of ``X``: one more X, not the fit's own memory), runs a warm-up fit
on 2,000 rows (imports, lazy tables), then resets the kernel's high-water mark
(``/proc/self/clear_refs``) and fits ``DPKMeans(n_clusters=k, epsilon=1, delta=1e-6,
method=..., radius=1, seed=0)`` ``--reps`` times::

    peak extra / X = (VmHWM after the fits - VmRSS before them) / X.nbytes

with the median fit wall time and CPU time (user + system of all the process's threads: on a
shared, loaded machine the wall time mostly measures the other processes). ``--python``
chooses the interpreter of the children and ``--pythonpath`` the privlearn tree they import,
so the same script measures a build before and after a change (``--label before`` /
``--label after``), side by side: ``--alternate`` runs the two trees' cases interleaved
(before, after, before, after, ...) so a drifting background load hits both alike.

Usage::

    python bench/python/bench_kmeans_memory.py --label after
    python bench/python/bench_kmeans_memory.py --alternate OLD_TREE/python,python \\
        --labels before,after --cases 100000x20,300000x20,100000x100

Merges its runs into ``<out>/kmeans_memory.json`` (default ``bench/results``) by label and
prints the tables (and the before/after comparison when both labels are present).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

import harness

BENCH = "kmeans_memory"
TARGET_EXTRA_X = 2.0
BLOCK_ROWS = 65_536
DEFAULT_CASES = "100000x20,300000x20,100000x100"


_f = harness.fmt_opt  # a number, or "-" when it was not measured


def make_data(n: int, d: int, seed: int = 0) -> Any:
    """The 16-Gaussian mixture in the unit ball (float64, C order), built block by block."""
    import numpy as np

    rng = np.random.default_rng(seed)
    u = rng.standard_normal((16, d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    centres = u * (0.8 * rng.random(16) ** (1.0 / d))[:, None]
    X = np.empty((n, d), dtype=np.float64)
    for start in range(0, n, BLOCK_ROWS):
        stop = min(n, start + BLOCK_ROWS)
        comp = rng.integers(0, 16, size=stop - start)
        block = centres[comp] + 0.05 * rng.standard_normal((stop - start, d))
        block *= (0.999 / np.maximum(1.0, np.linalg.norm(block, axis=1)))[:, None]
        X[start:stop] = block
    return X


def run_case(spec: dict[str, Any]) -> dict[str, Any]:
    """In the child: data, warm-up, then the measured fits."""
    import gc

    import numpy as np

    import privlearn
    from privlearn.cluster import DPKMeans

    n, d, k, reps = int(spec["n"]), int(spec["d"]), int(spec["k"]), int(spec["reps"])
    X = make_data(n, d)

    def fit(data: Any) -> Any:
        return DPKMeans(
            n_clusters=k, epsilon=1.0, delta=1e-6, method=spec["method"], radius=1.0, seed=0
        ).fit(data)

    fit(np.ascontiguousarray(X[:2000]))
    gc.collect()
    reset = harness.reset_peak_memory()
    rss0 = harness.status_kib("VmRSS")
    times, cpu, centres = [], [], None
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        est = fit(X)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        centres = np.asarray(est.cluster_centers_)
        del est
        gc.collect()
    hwm = harness.status_kib("VmHWM")
    extra = None if hwm is None or rss0 is None else (hwm - rss0) * 1024
    return {
        **spec,
        "x_nbytes": int(X.nbytes),
        "fit_s": times,
        "fit_s_median": statistics.median(times),
        "fit_cpu_s": cpu,
        "fit_cpu_s_median": statistics.median(cpu),
        "peak_reset": reset,
        "rss_before_fit_kib": rss0,
        "hwm_after_fit_kib": hwm,
        "peak_extra_bytes": extra,
        "peak_extra_x": None if extra is None else extra / X.nbytes,
        "centres_sum": float(centres.sum()),
        "privlearn_file": harness.tree_label(privlearn.__file__),
    }


def table(cases: list[dict[str, Any]]) -> str:
    lines = [
        "| method | n x d | k | X MiB | fit s (median) | fit CPU s | peak extra / X | "
        "peak extra MiB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in cases:
        lines.append(
            f"| {r['method']} | {r['n']:,} x {r['d']} | {r['k']} | {r['x_nbytes'] / 2**20:.1f} | "
            f"{r['fit_s_median']:.2f} | {r['fit_cpu_s_median']:.2f} | "
            f"{_f(r['peak_extra_x'], '.2f')}x | "
            f"{_f(None if r['peak_extra_bytes'] is None else r['peak_extra_bytes'] / 2**20, '.1f')}"
            " |"
        )
    return "\n".join(lines)


def compare(before: dict[str, Any], after: dict[str, Any]) -> str:
    b = {(r["method"], r["n"], r["d"], r["k"]): r for r in before["cases"]}
    lines = [
        "| method | n x d | fit s before | after | CPU s before | after | CPU after/before | "
        f"peak extra / X before | after | after <= {TARGET_EXTRA_X:g}x |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for ra in after["cases"]:
        rb = b.get((ra["method"], ra["n"], ra["d"], ra["k"]))
        if rb is None:
            continue
        met = ra["peak_extra_x"] is not None and ra["peak_extra_x"] <= TARGET_EXTRA_X
        lines.append(
            f"| {ra['method']} | {ra['n']:,} x {ra['d']} | {rb['fit_s_median']:.2f} | "
            f"{ra['fit_s_median']:.2f} | {rb['fit_cpu_s_median']:.2f} | "
            f"{ra['fit_cpu_s_median']:.2f} | "
            f"{ra['fit_cpu_s_median'] / rb['fit_cpu_s_median']:.2f} | "
            f"{_f(rb['peak_extra_x'], '.2f')}x | {_f(ra['peak_extra_x'], '.2f')}x | "
            f"{'met' if met else '**not met**'} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = harness.cli(__doc__, BENCH, reps=None)
    p.add_argument("--python", default=sys.executable, help="interpreter of the children")
    p.add_argument("--label", default="run", help="key in the JSON (one tree)")
    p.add_argument("--pythonpath", default=None, help="privlearn tree of the children (one tree)")
    p.add_argument("--alternate", default=None, help="two comma-separated trees, run interleaved")
    p.add_argument("--labels", default="before,after", help="labels of the --alternate trees")
    p.add_argument("--cases", default=DEFAULT_CASES, help="comma-separated NxD")
    p.add_argument("--method", default="maxcover")
    p.add_argument("--k", type=int, default=8)
    p.add_argument("--note", default=None)
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child is not None:
        print(json.dumps(run_case(json.loads(args.child))))
        return 0

    reps = args.reps or (1 if args.quick else 3)
    shapes = [tuple(int(v) for v in c.lower().split("x")) for c in args.cases.split(",") if c]
    if args.quick:
        shapes = [(20_000, 20)]
    if args.alternate:
        trees = args.alternate.split(",")
        labels = args.labels.split(",")
        if len(trees) != 2 or len(labels) != 2:
            p.error("--alternate needs two trees and --labels two labels")
    else:
        trees, labels = [args.pythonpath], [args.label]
    suffix = "-quick" if args.quick else ""
    machine = harness.machine()
    runs: dict[str, list[dict[str, Any]]] = {lab: [] for lab in labels}
    for n, d in shapes:
        for tree, label in zip(trees, labels):
            spec = {"method": args.method, "n": n, "d": d, "k": args.k, "reps": reps}
            r = harness.script_child(__file__, spec, python=args.python, pythonpath=tree)
            print(
                f"[{label}] {args.method} {n:,} x {d}: fit {r['fit_s_median']:.2f} s "
                f"(CPU {r['fit_cpu_s_median']:.2f} s), peak extra "
                f"{_f(r['peak_extra_x'], '.2f')}x X",
                flush=True,
            )
            runs[label].append(r)
    harness.finish(machine)
    args.out = harness.out_dir(args)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{BENCH}.json"
    data: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    data["benchmark"] = BENCH
    data["description"] = (
        "One DPKMeans fit per fresh process: median fit wall time over the reps and peak extra "
        "memory (VmHWM after the fits minus VmRSS before them) in units of X.nbytes; X a "
        "16-Gaussian mixture in the unit ball. Keyed by label (before/after a change)."
    )
    data["target_peak_extra_x"] = TARGET_EXTRA_X
    for label, tree in zip(labels, trees):
        data.setdefault("runs", {})[label + suffix] = {
            "label": label + suffix,
            "note": args.note,
            "tree": harness.tree_label(tree),
            "reps": reps,
            "machine": machine,
            "cases": runs[label],
        }
    harness.write_json(data, path)
    for label in labels:
        print(f"\n## {label}{suffix}\n\n{table(runs[label])}")
    all_runs = data["runs"]
    before, after = all_runs.get("before" + suffix), all_runs.get("after" + suffix)
    if before is not None and after is not None:
        print(f"\n## before vs after\n\n{compare(before, after)}")
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
