"""Threads never make a fit slower (issue 14): 1 vs 2 threads, on a quiet machine and with a
busy loop pinned to one core.

Each kernel runs with ``n_threads=1`` and ``n_threads=2`` in one process, repetitions
interleaved (round robin over every kernel, thread count and load mode), so that every ratio is
measured under the same background. Reported numbers are medians over ``--reps``.

Load modes
----------
- ``quiet``: nothing started by the benchmark (other processes on the machine are recorded as
  the background load, in cores).
- ``load``: the benchmark starts one busy-loop process (``while True: pass``) pinned with
  ``os.sched_setaffinity`` to the last core this process may use, for the duration of that
  mode's repetition, then kills it. Nothing else is pinned.

Kernels
-------
- ``normal``: :meth:`privlearn.random.Stream.normal`, ``10**7`` draws (one parallel region).
- ``dp-sgd``: one epoch of :func:`privlearn.linear.sgd_train`, Gaussian mechanism, Poisson
  batches (``bench_sgd.py``'s lot of 256), on ``bench_sgd.py``'s dense data (250,000 x 100).
- ``dp-scd msd-like``, ``dp-scd a9a-like``: one epoch of :func:`privlearn.linear.scd_train`,
  ``variant="dual"``, Poisson batches of expected size ``L = 1000`` (``bench_scd.py``'s part 1:
  ridge on msd-like 463,715 x 90, logistic on a9a-like 32,561 x 123 CSR).
- ``quadgrad``: one enhanced-NAG iteration of :func:`privlearn.linear.quadgrad_train`
  (``B_bar`` given, as in ``bench_quadgrad.py``), dense 200,000 x 200: a sample is
  ``(t(max_iter=11) - t(max_iter=1)) / 10``, so the per-call input checks of the Python layer
  (sequential, ~2.5 passes over X) are not counted.
- ``max-cover``: :func:`privlearn.cluster.maxcover_candidates` (the grid cover of every point,
  then the private greedy picks) on ``bench_kmeans.py``'s mixture (200,000 points, JL-projected
  to p = 4, k = 16: default picks and pick epsilon) at the smallest default radius (the largest
  grid of a fit: ~80 grid points per point).

Targets: 2 threads >= 0.9x of 1 thread with the busy loop, every kernel; 2 threads >= 1.6x
of 1 thread on a quiet machine where the work allows it (kernels whose steps are below the
thread policy's minimum work run on one thread by design: listed with the reason).

Calibration (``--calibrate``): measures the thread policy's threshold. The policy is switched
off (``PRIVLEARN_MIN_THREAD_WORK_NS=0``, set before the core is loaded), and one region of W
ms of 1-thread work (normals) runs on 1 and 2 threads, quiet and with the busy loop, for W from
0.03 to 32 ms. ``W*`` = the smallest W from which on 2 threads are >= 0.95x of 1 thread (median
and mean) with the busy loop; ``parallel::kMinThreadWorkNs`` = W* / 2 (run it as is, and with
``OMP_WAIT_POLICY=`` (empty: GNU's spinning default) for ``kMinThreadWorkSpinNs``).

Usage::

    python bench/python/bench_threads.py [--quick] [--reps 5] [--out bench/results]
    python bench/python/bench_threads.py --calibrate [--reps 40]

Writes ``<out>/threads.json`` (``--calibrate``: its ``calibration_passive`` entry, or
``calibration_spin`` when ``OMP_WAIT_POLICY`` is set to something else; the other runs keep
them; ``--quick``: ``threads_quick.json``) and updates this benchmark's row in
``<out>/README.md`` (full runs only).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

if "--calibrate" in sys.argv:
    # before the core is loaded (it reads this once): regions get the requested thread count
    os.environ["PRIVLEARN_MIN_THREAD_WORK_NS"] = "0"

# shared helpers of this folder's benchmarks (they import privlearn: after the line above)
sys.path.insert(0, str(Path(__file__).resolve().parent))
_sgd = importlib.import_module("bench_sgd")
_scd = importlib.import_module("bench_scd")
_qg = importlib.import_module("bench_quadgrad")
harness = importlib.import_module("harness")
fmt = harness.fmt

BENCH = "threads"
TARGET_LOAD = 0.9  # 2 threads / 1 thread speed with a busy loop pinned to one core
TARGET_QUIET = 1.6  # 2 threads / 1 thread speed on a quiet machine, where the work allows it
CALIBRATION_RATIO = 0.95  # the threshold: 2 threads >= this x 1 thread under load
MODES = ("quiet", "load")
KMEANS_RADIUS = 11.0  # bench_kmeans.py's public radius of the mixture
#: kernels whose parallel regions are below the policy's minimum work per thread, and why
ONE_THREAD_BY_DESIGN = {
    "dp-sgd": "a step sums a lot of 256 rows x 100 features (~10 us): one thread by design",
    "dp-scd msd-like": "a step is L = 1000 rows x 90 features (~30 us): one thread by design",
    "dp-scd a9a-like": "a step is L = 1000 rows x 14 non-zeros (~5 us): one thread by design",
}


# ---- the busy loop ---------------------------------------------------------------------------


@contextlib.contextmanager
def busy_loop(active: bool = True) -> Iterator[int | None]:
    """A ``while True: pass`` process pinned to the last usable core while the block runs
    (yields that core; nothing when ``active`` is false)."""
    if not active:
        yield None
        return
    core = max(os.sched_getaffinity(0))
    code = f"import os\nos.sched_setaffinity(0, {{{core}}})\nwhile True:\n    pass\n"
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        time.sleep(0.2)  # started and pinned
        yield core
    finally:
        proc.kill()
        proc.wait()


# ---- kernels ---------------------------------------------------------------------------------


class Kernel:
    """One kernel: ``fn(n_threads)`` runs it once; with ``baseline``, a sample is
    ``(t(fn) - t(baseline)) / per``. ``times[(mode, threads)]`` is filled by run_kernels."""

    def __init__(
        self,
        name: str,
        size: str,
        fn: Callable[[int], Any],
        baseline: Callable[[int], Any] | None = None,
        per: float = 1.0,
    ):
        self.name = name
        self.size = size
        self.fn = fn
        self.baseline = baseline
        self.per = per
        self.inner = 1
        self.times: dict[tuple[str, int], list[float]] = {}
        self.median: dict[tuple[str, int], float] = {}

    def call(self, threads: int) -> Any:
        """One call for the harness (a :class:`harness.Partial` when a baseline is taken off)."""
        if self.baseline is None:
            return self.fn(threads)
        t_fn = harness.timed(lambda: self.fn(threads))[0]
        t_base = harness.timed(lambda: self.baseline(threads))[0]  # type: ignore[misc]
        return harness.Partial((t_fn - t_base) / self.per)


def make_kernels(quick: bool) -> list[Kernel]:
    """The kernels of the module docstring (smaller sizes with ``quick``)."""
    from privlearn.cluster import (
        default_picks,
        default_radii,
        maxcover_candidates,
        maxcover_pick_epsilon,
    )
    from privlearn.cluster._projection import jl_project
    from privlearn.cluster._seeds import STREAM_JL
    from privlearn.data.synthetic import make_gaussian_mixture
    from privlearn.linear import quadgrad_train, scd_train, sgd_train
    from privlearn.linear.quadgrad import quadgrad_bbar
    from privlearn.random import Stream, key_from_seed

    out: list[Kernel] = []
    key = key_from_seed(1)
    n_normal = 2 * 10**6 if quick else 10**7
    stream = Stream(seed=1)
    out.append(
        Kernel("normal", f"{n_normal} draws", lambda t: stream.normal(0, n_normal, n_threads=t))
    )

    dense = _sgd.make_dense(50_000 if quick else 250_000, 100)
    sgd_kw = {"alpha": _sgd.ALPHA, **_sgd.MECHANISMS["gaussian"]}
    out.append(
        Kernel(
            "dp-sgd",
            f"{dense.n} x 100, Poisson lot {sgd_kw['batch_size']}, 1 epoch",
            lambda t: sgd_train(dense.X, dense.y, key=key, n_threads=t, **sgd_kw),
        )
    )

    msd = _scd.make_msd(100_000 if quick else _scd.MSD_N, _scd.MSD_D)
    a9a = _scd.make_a9a(_sgd.A9A_N)
    for data, loss in ((msd, "squared"), (a9a, "log_loss")):
        kw = _scd.dp_kwargs(loss)
        y = data.targets[loss]
        out.append(
            Kernel(
                f"dp-scd {data.name}",
                f"{data.n} rows, L = {_scd.BATCH}, 1 epoch",
                lambda t, data=data, y=y, kw=kw: scd_train(data.X, y, key=key, n_threads=t, **kw),
            )
        )

    n_qg = 40_000 if quick else 200_000
    Xq, yq = _qg.make_data(n_qg, 200)
    bbar = quadgrad_bbar(Xq, n_threads=1)
    qkw = dict(optimizer="nag", enhanced=True, bbar=bbar)
    out.append(
        Kernel(
            "quadgrad",
            f"{n_qg} x 200, one enhanced-NAG iteration (11 - 1 iterations, / 10)",
            lambda t: quadgrad_train(Xq, yq, **qkw, max_iter=11, n_threads=t),
            baseline=lambda t: quadgrad_train(Xq, yq, **qkw, max_iter=1, n_threads=t),
            per=10.0,
        )
    )

    n_km = 50_000 if quick else 200_000
    Xk, _ = make_gaussian_mixture(n_km, seed=0)
    Y, _ = jl_project(Xk, KMEANS_RADIUS, 4, Stream(0, stream=STREAM_JL))
    radii = default_radii(n_km)
    mkw = dict(
        eps_pick=maxcover_pick_epsilon(0.3, 0.5e-6, len(radii)),
        key=Stream(3).key,
        stream=2,
        picks=default_picks(16, n_km),
    )
    out.append(
        Kernel(
            "max-cover",
            f"{n_km} points, p = 4, radius {min(radii):.3g}, {mkw['picks']} picks",
            lambda t: maxcover_candidates(Y, [min(radii)], n_threads=t, **mkw),
        )
    )
    return out


# ---- measurement -----------------------------------------------------------------------------


def run_kernels(kernels: list[Kernel], reps: int, min_sample_s: float) -> harness.Comparison:
    """Interleaved repetitions: every round runs each mode (the busy loop started once per
    mode), kernel and thread count once; the order alternates between rounds."""
    contenders = {
        f"{mode}|{i}|{t}": (lambda k=k, t=t: k.call(t))
        for mode in MODES
        for i, k in enumerate(kernels)
        for t in (1, 2)
    }
    cmp = harness.compare(
        contenders,
        reps,
        min_sample_s=min_sample_s,
        group=lambda name: name.split("|")[0],
        around=lambda rep, mode: busy_loop(mode == "load"),
        verbose=True,
    )
    for name, timing in cmp.timings.items():
        mode, i, t = name.split("|")
        kernels[int(i)].times[(mode, int(t))] = timing.times
        kernels[int(i)].median[(mode, int(t))] = timing.median
        kernels[int(i)].inner = timing.inner
    return cmp


def summarise(kernels: list[Kernel]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Per-measurement results and per-kernel speedups with the targets."""
    results: list[dict[str, Any]] = []
    speedups: dict[str, Any] = {}
    for k in kernels:
        med = k.median
        for (mode, t), v in sorted(k.times.items()):
            results.append(
                {
                    "bench": BENCH,
                    "kernel": k.name,
                    "size": k.size,
                    "mode": mode,
                    "threads": t,
                    "inner": k.inner,
                    "reps": len(v),
                    "median_s": med[(mode, t)],
                    "min_s": min(v),
                    "times_s": v,
                }
            )
        quiet = med[("quiet", 1)] / med[("quiet", 2)]
        load = med[("load", 1)] / med[("load", 2)]
        by_design = ONE_THREAD_BY_DESIGN.get(k.name)
        best = {key: min(v) for key, v in k.times.items()}
        speedups[k.name] = {
            "quiet_2t_over_1t": quiet,
            "load_2t_over_1t": load,
            # from the fastest repetition of each: closer to an idle machine on a shared one
            "quiet_2t_over_1t_best_rep": best[("quiet", 1)] / best[("quiet", 2)],
            "load_2t_over_1t_best_rep": best[("load", 1)] / best[("load", 2)],
            "load_slowdown_1t": med[("load", 1)] / med[("quiet", 1)],
            "target_load": f">= {TARGET_LOAD}",
            "met_load": load >= TARGET_LOAD,
            "target_quiet": f">= {TARGET_QUIET}" if by_design is None else "n/a (one thread)",
            "met_quiet": None if by_design is not None else quiet >= TARGET_QUIET,
            "note": by_design,
        }
    return results, speedups


def calibrate(reps: int, quick: bool) -> dict[str, Any]:
    """The threshold measurement of the module docstring (policy off)."""
    from privlearn.parallel import min_thread_work_ns
    from privlearn.random import Stream

    if min_thread_work_ns() != 0.0:
        raise RuntimeError("the policy is not off: PRIVLEARN_MIN_THREAD_WORK_NS was not honoured")
    stream = Stream(seed=1)
    # ns per normal on 1 thread, to size the regions
    n0 = 2 * 10**6
    stream.normal(0, n0, n_threads=1)
    ns_per = harness.timed(lambda: stream.normal(0, n0, n_threads=1))[0] / n0 * 1e9
    sizes_ms = [0.03, 0.06, 0.125, 0.25, 0.5, 1, 2, 4, 8, 16, 32]
    if quick:
        sizes_ms = [0.06, 0.25, 1, 4, 16]
    rows = []
    for w in sizes_ms:
        n = max(1024, int(w * 1e6 / ns_per))
        # many samples for the small regions (their noise is large), fewer for the large ones
        r = max(reps, int(reps * 2 / max(w, 0.25)))
        times: dict[tuple[str, int], harness.Timing] = {}
        for mode in MODES:
            with busy_loop(mode == "load"):
                cmp = harness.compare(
                    {str(t): (lambda t=t, n=n: stream.normal(0, n, n_threads=t)) for t in (1, 2)},
                    r,
                    warmup=0,
                )
            for t in (1, 2):
                times[(mode, t)] = cmp[str(t)]
        row: dict[str, Any] = {"nominal_ms": w, "n": n, "reps": r}
        for mode in MODES:
            t1, t2 = times[(mode, 1)], times[(mode, 2)]
            row[mode] = {
                "median_1t_ms": 1e3 * t1.median,
                "median_2t_ms": 1e3 * t2.median,
                "speedup_median": t1.median / t2.median,
                "speedup_mean": statistics.mean(t1.times) / statistics.mean(t2.times),
            }
        rows.append(row)
        q, ld = row["quiet"], row["load"]
        print(
            f"W {q['median_1t_ms']:8.3f} ms (n = {n:>9}): quiet 2t/1t {q['speedup_median']:5.2f} "
            f"(mean {q['speedup_mean']:5.2f}); load 2t/1t {ld['speedup_median']:5.2f} "
            f"(mean {ld['speedup_mean']:5.2f})",
            flush=True,
        )
    threshold = None
    for i, row in enumerate(rows):
        ok = all(
            min(r["load"]["speedup_median"], r["load"]["speedup_mean"]) >= CALIBRATION_RATIO
            for r in rows[i:]
        )
        if ok:
            threshold = row["quiet"]["median_1t_ms"]
            break
    return {"ns_per_normal": ns_per, "rows": rows, "threshold_ms": threshold}


# ---- report ----------------------------------------------------------------------------------


def readme_row(speedups: dict[str, Any], machine: dict[str, Any], reps: int) -> str:
    parts = [
        f"{name}: quiet {fmt(s['quiet_2t_over_1t'])}x, load {fmt(s['load_2t_over_1t'])}x"
        for name, s in speedups.items()
    ]
    load_miss = [n for n, s in speedups.items() if not s["met_load"]]
    quiet_miss = [n for n, s in speedups.items() if s["met_quiet"] is False]
    single = [n for n, s in speedups.items() if s["met_quiet"] is None]
    targets = (
        f"2t >= {TARGET_LOAD}x 1t under load: "
        + ("met" if not load_miss else f"**not met** ({', '.join(load_miss)})")
        + f"; 2t >= {TARGET_QUIET}x quiet where the work allows: "
        + ("met" if not quiet_miss else f"**not met** ({', '.join(quiet_miss)})")
        + (f" (one thread by design: {', '.join(single)})" if single else "")
    )
    bg = machine.get("background_load_cores")
    cpu = (machine.get("cpu_model") or "?").split(" @")[0]
    return (
        f"| `{BENCH}` | 2t/1t speed (medians), quiet and with a busy loop pinned to one core: "
        f"{'; '.join(parts)} | {targets} | {cpu}, {machine['cpu_count']} cores; background "
        f"load {fmt(bg, '.1f')} cores | {machine['date'][:10]} | [threads.json](threads.json), "
        f"{reps} reps, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')} |"
    )


def main(argv: list[str] | None = None) -> int:
    p = harness.cli(__doc__, BENCH, reps=None)  # --quick: smaller problems, 3 reps (< 1 min)
    p.add_argument("--calibrate", action="store_true", help="measure the policy's threshold")
    p.add_argument("--no-readme", action="store_true", help="do not touch README.md")
    args = p.parse_args(argv)
    reps = args.reps or (3 if args.quick else 5)
    args.out = harness.out_dir(args)
    machine = harness.machine()
    if args.calibrate:
        with harness.BackgroundLoad() as background:
            cal = calibrate(reps if args.reps else (10 if args.quick else 40), args.quick)
        cal["machine"] = harness.finish(machine, background)
        cal["background_load_cores"] = background.cores
        path = args.out / "threads.json"
        doc = json.loads(path.read_text()) if path.exists() else {"bench": BENCH}
        passive = os.environ.get("OMP_WAIT_POLICY", "").strip().lower() == "passive"
        doc["calibration_passive" if passive else "calibration_spin"] = cal
        harness.write_json(doc, path)
        print(f"threshold W* = {fmt(cal['threshold_ms'], '.3f')} ms of 1-thread work")
        return 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kernels = make_kernels(args.quick)
    background = run_kernels(kernels, reps, 0.05 if args.quick else 0.3)
    harness.finish(machine, background)
    results, speedups = summarise(kernels)
    from privlearn.parallel import min_thread_work_ns

    out = {
        "bench": BENCH,
        "config": {
            "quick": args.quick,
            "reps": reps,
            "modes": list(MODES),
            "min_thread_work_ns": min_thread_work_ns(),
            "busy_loop": "one `while True: pass` process pinned to the last usable core",
        },
        "machine": machine,
        "background_load_cores": background.background_load_cores,
        "results": results,
        "speedups": speedups,
    }
    path = args.out / ("threads_quick.json" if args.quick else "threads.json")
    if path.exists():  # keep the threshold measurement of --calibrate
        previous = json.loads(path.read_text())
        for key in ("calibration_passive", "calibration_spin"):
            if key in previous:
                out[key] = previous[key]
    harness.write_json(out, path)
    print(
        f"{'kernel':<18} {'1t quiet':>10} {'2t quiet':>10} {'x':>6} "
        f"{'1t load':>10} {'2t load':>10} {'x':>6}"
    )
    for k in kernels:
        s = speedups[k.name]
        m = k.median
        print(
            f"{k.name:<18} {1e3 * m[('quiet', 1)]:>8.1f}ms {1e3 * m[('quiet', 2)]:>8.1f}ms "
            f"{s['quiet_2t_over_1t']:>6.2f} {1e3 * m[('load', 1)]:>8.1f}ms "
            f"{1e3 * m[('load', 2)]:>8.1f}ms {s['load_2t_over_1t']:>6.2f}"
        )
    print(f"background load: {fmt(background.background_load_cores, '.2f')} cores")
    if not args.quick and not args.no_readme:
        harness.update_readme(args.out / "README.md", readme_row(speedups, machine, reps), BENCH)
    return 0


if __name__ == "__main__":
    sys.exit(main())
