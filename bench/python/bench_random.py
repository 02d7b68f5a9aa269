"""Random-generation throughput: the C++ core vs the numpy reference vs numpy's PCG64.

All contenders run in one process, side by side on the same ``n``, and their repetitions are
interleaved (round robin), so that the ratios are measured under the same background load.
Reported numbers are medians over ``--reps`` repetitions.

Contenders
----------
- ``core``: :class:`privlearn.random.Stream` (ChaCha20, C++), 1 and 2 threads (``--threads``).
- ``reference``: :class:`privlearn.reference.random.Stream` (the same ChaCha20 draws in pure
  numpy; single-threaded).
- ``numpy``: ``np.random.default_rng(0)`` (PCG64): ``standard_normal``, ``random``, ``laplace``
  and ``integers(0, 2**32, n, dtype=np.uint32)`` as the peer of ChaCha20 output words.

Every call allocates and returns a fresh array (for every contender), so the timings include
the first touch of the output pages.

Targets: core 1-thread normals/s >= 0.5 x numpy's, core 1-thread ChaCha20 output >= 1 GB/s.

Usage::

    python bench/python/bench_random.py [--quick] [--out bench/results]

Writes ``<out>/random.json`` (all measurements, ratios, machine) and updates this benchmark's
row in ``<out>/README.md``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

import privlearn
from privlearn import _core
from privlearn.random import Stream as CoreStream
from privlearn.reference.random import Stream as ReferenceStream

BENCH = "random"
TARGET_NORMAL_RATIO = 0.5  # core 1-thread normals/s / numpy PCG64 normals/s
TARGET_WORDS_GBPS = 1.0  # core 1-thread ChaCha20 output, GB/s (1e9 bytes/s)

#: kernel -> (unit, units per element)
UNITS: dict[str, tuple[str, float]] = {
    "words": ("GB/s", 4.0 / 1e9),
    "normal": ("normals/s", 1.0),
    "uniform": ("uniforms/s", 1.0),
    "laplace": ("laplaces/s", 1.0),
}

README_HEADER = """\
# Benchmark results

Written by the scripts in `bench/python/` (one JSON file per benchmark, with every measurement,
the derived ratios and the machine). Conventions:

- Every number is the **median** of several repetitions; the JSON files also keep the minimum.
- Contenders are run **side by side in one process** on the same data (repetitions interleaved),
  and claims are **ratios** between them: these machines are shared and noisy, so absolute
  rates move from run to run and between machines; the ratios are much steadier.
- Each benchmark owns one row of the table below; re-running a benchmark replaces its row.

| benchmark | result (medians) | targets | machine | date | details |
|---|---|---|---|---|---|
"""


class Contender:
    """One timed callable: implementation, kernel, thread count and problem size."""

    def __init__(self, impl: str, kernel: str, threads: int, n: int, fn: Callable[[], Any]):
        self.impl = impl
        self.kernel = kernel
        self.threads = threads
        self.n = n
        self.fn = fn
        self.times: list[float] = []

    def run_once(self) -> None:
        """Time one call (the result is discarded after timing)."""
        t0 = time.perf_counter()
        out = self.fn()
        self.times.append(time.perf_counter() - t0)
        del out

    def result(self) -> dict[str, Any]:
        """The measurement as a JSON-ready dict (median and minimum over the repetitions)."""
        unit, per_element = UNITS[self.kernel]
        median = statistics.median(self.times)
        return {
            "bench": BENCH,
            "impl": self.impl,
            "kernel": self.kernel,
            "threads": self.threads,
            "n": self.n,
            "reps": len(self.times),
            "median_s": median,
            "min_s": min(self.times),
            "rate": self.n * per_element / median,
            "unit": unit,
        }


def build_contenders(n: int, ref_n: int, threads: list[int]) -> list[Contender]:
    """All (implementation, kernel, threads) combinations to time."""
    core = CoreStream(seed=1)
    ref = ReferenceStream(seed=1)
    rng = np.random.default_rng(0)
    out: list[Contender] = []
    for t in threads:
        out += [
            Contender("core", "words", t, n, lambda t=t: core.words(0, n, n_threads=t)),
            Contender("core", "normal", t, n, lambda t=t: core.normal(0, n, n_threads=t)),
            Contender("core", "uniform", t, n, lambda t=t: core.uniform(0, n, n_threads=t)),
            Contender(
                "core", "laplace", t, n, lambda t=t: core.laplace(0, n, scale=1.0, n_threads=t)
            ),
        ]
    out += [
        Contender("reference", "words", 1, ref_n, lambda: ref.words(0, ref_n)),
        Contender("reference", "normal", 1, ref_n, lambda: ref.normal(0, ref_n)),
        Contender("numpy", "words", 1, n, lambda: rng.integers(0, 2**32, n, dtype=np.uint32)),
        Contender("numpy", "normal", 1, n, lambda: rng.standard_normal(n)),
        Contender("numpy", "uniform", 1, n, lambda: rng.random(n)),
        Contender("numpy", "laplace", 1, n, lambda: rng.laplace(0.0, 1.0, n)),
    ]
    return out


def check_agreement(n: int) -> None:
    """Sanity check before timing: core and reference give the same draws."""
    m = min(n, 1 << 12)
    core, ref = CoreStream(seed=1), ReferenceStream(seed=1)
    if not np.array_equal(core.words(0, m), ref.words(0, m)):
        raise RuntimeError("core and reference ChaCha20 words differ")
    if not np.allclose(core.normal(0, m), ref.normal(0, m), rtol=0.0, atol=1e-12):
        raise RuntimeError("core and reference normals differ")


def cpu_model() -> str | None:
    """CPU model name from /proc/cpuinfo (Linux), else platform.processor()."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def git_commit() -> str | None:
    """The repository's HEAD commit (with ``-dirty`` when the tree has changes), if known."""
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("-dirty" if dirty else "")


def machine_info() -> dict[str, Any]:
    """Where and when the benchmark ran."""
    try:
        affinity: int | None = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        affinity = None
    try:
        load: list[float] | None = list(os.getloadavg())
    except (AttributeError, OSError):
        load = None
    return {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "cpu_count": os.cpu_count(),
        "cpus_usable": affinity,
        "cpu_model": cpu_model(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "privlearn": getattr(privlearn, "__version__", None),
        "git_commit": git_commit(),
        "has_openmp": bool(_core.has_openmp),
        "core_default_threads": int(_core.default_threads()),
        "omp_num_threads_env": os.environ.get("OMP_NUM_THREADS"),
        "loadavg_start": load,
    }


def _proc_stat_busy_s() -> float | None:
    """Busy CPU seconds of the whole machine since boot (all cores; Linux), or None."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if fields[0] != "cpu":
        return None
    ticks = [int(x) for x in fields[1:9]]  # user nice system idle iowait irq softirq steal
    busy = sum(ticks) - ticks[3] - ticks[4]
    return busy / os.sysconf("SC_CLK_TCK")


class BackgroundLoad:
    """Measures the CPU time used by *other* processes (and stolen by the hypervisor) while
    the benchmark runs: ``cores`` is that time per wall-clock second, i.e. about how many cores
    something else kept busy (0 = quiet machine). Linux only (None elsewhere)."""

    def __enter__(self) -> BackgroundLoad:
        self.busy0 = _proc_stat_busy_s()
        t = os.times()
        self.own0 = t.user + t.system
        self.wall0 = time.perf_counter()
        self.cores: float | None = None
        return self

    def __exit__(self, *exc: object) -> None:
        busy1 = _proc_stat_busy_s()
        t = os.times()
        wall = time.perf_counter() - self.wall0
        if self.busy0 is not None and busy1 is not None and wall > 0:
            other = (busy1 - self.busy0) - (t.user + t.system - self.own0)
            self.cores = max(0.0, other / wall)


def find(
    results: list[dict[str, Any]], impl: str, kernel: str, threads: int = 1, key: str = "rate"
) -> float | None:
    """Field ``key`` (default: the rate) of one measurement, or None when it was not run."""
    for r in results:
        if (r["impl"], r["kernel"], r["threads"]) == (impl, kernel, threads):
            return float(r[key])
    return None


def ratio(a: float | None, b: float | None) -> float | None:
    """a / b, or None when either is missing."""
    return None if a is None or b is None or b == 0 else a / b


def compute_ratios(results: list[dict[str, Any]], threads: list[int]) -> dict[str, Any]:
    """Headline ratios, the 2-thread (or t-thread) speedups and the targets."""
    normal_vs_numpy = ratio(find(results, "core", "normal"), find(results, "numpy", "normal"))
    words_gbps = find(results, "core", "words")
    ratios: dict[str, Any] = {
        "core_normal_1t_over_numpy_normal": normal_vs_numpy,
        "core_words_1t_gbps": words_gbps,
        "core_words_1t_over_numpy_integers_u32": ratio(words_gbps, find(results, "numpy", "words")),
        "core_uniform_1t_over_numpy_random": ratio(
            find(results, "core", "uniform"), find(results, "numpy", "uniform")
        ),
        "core_laplace_1t_over_numpy_laplace": ratio(
            find(results, "core", "laplace"), find(results, "numpy", "laplace")
        ),
        "core_words_1t_over_reference": ratio(words_gbps, find(results, "reference", "words")),
        "core_normal_1t_over_reference": ratio(
            find(results, "core", "normal"), find(results, "reference", "normal")
        ),
        "speedup": {
            f"{t}t_over_1t": {
                k: ratio(find(results, "core", k, t), find(results, "core", k, 1)) for k in UNITS
            }
            for t in threads
            if t != 1
        },
        # the same from the fastest repetition of each: closer to an idle machine's speedup
        "speedup_best_rep": {
            f"{t}t_over_1t": {
                k: ratio(
                    find(results, "core", k, 1, key="min_s"), find(results, "core", k, t, "min_s")
                )
                for k in UNITS
            }
            for t in threads
            if t != 1
        },
    }
    ratios["targets"] = {
        "core_normal_1t_over_numpy_normal": {
            "target": f">= {TARGET_NORMAL_RATIO}",
            "met": normal_vs_numpy is not None and normal_vs_numpy >= TARGET_NORMAL_RATIO,
        },
        "core_words_1t_gbps": {
            "target": f">= {TARGET_WORDS_GBPS}",
            "met": words_gbps is not None and words_gbps >= TARGET_WORDS_GBPS,
        },
    }
    return ratios


def fmt_rate(rate: float, unit: str) -> str:
    """A rate for humans: GB/s with 2 decimals, counts per second in millions."""
    if unit == "GB/s":
        return f"{rate:.2f} GB/s"
    return f"{rate / 1e6:.1f} M{unit}"


def fmt(x: float | None, spec: str = ".2f") -> str:
    """A number, or 'n/a'."""
    return "n/a" if x is None else format(x, spec)


def print_table(results: list[dict[str, Any]], ratios: dict[str, Any]) -> None:
    """Readable summary on stdout."""
    print(f"{'impl':<10} {'kernel':<8} {'thr':>3} {'n':>10} {'median_s':>10}  rate")
    for r in results:
        print(
            f"{r['impl']:<10} {r['kernel']:<8} {r['threads']:>3} {r['n']:>10} "
            f"{r['median_s']:>10.4f}  {fmt_rate(r['rate'], r['unit'])}"
        )
    print()
    targets = ratios["targets"]
    nv = ratios["core_normal_1t_over_numpy_normal"]
    wg = ratios["core_words_1t_gbps"]
    met = {True: "met", False: "NOT met"}
    normal_met = met[targets["core_normal_1t_over_numpy_normal"]["met"]]
    words_met = met[targets["core_words_1t_gbps"]["met"]]
    print(
        f"core 1t normals/s / numpy normals/s : {fmt(nv)}  "
        f"(target >= {TARGET_NORMAL_RATIO}: {normal_met})"
    )
    print(
        f"core 1t ChaCha20 output             : {fmt(wg)} GB/s  "
        f"(target >= {TARGET_WORDS_GBPS}: {words_met})"
    )
    print(
        f"core 1t words / numpy integers(u32) : "
        f"{fmt(ratios['core_words_1t_over_numpy_integers_u32'])}"
    )
    print(
        f"core 1t / reference                 : words {fmt(ratios['core_words_1t_over_reference'])}"
        f", normal {fmt(ratios['core_normal_1t_over_reference'])}"
    )
    for name, per_kernel in ratios["speedup"].items():
        parts = ", ".join(f"{k} {fmt(v)}" for k, v in per_kernel.items())
        print(f"core speedup {name:<23}: {parts}")
        best = ratios["speedup_best_rep"][name]
        parts = ", ".join(f"{k} {fmt(v)}" for k, v in best.items())
        print(f"  (fastest reps)                    : {parts}")


def readme_row(report: dict[str, Any], json_name: str) -> str:
    """This benchmark's row of the results table in README.md."""
    r, m = report["ratios"], report["machine"]
    t = r["targets"]
    yes = {True: "met", False: "**not met**"}
    speedups = "; ".join(
        f"{name.split('_')[0]} speedup words {fmt(v.get('words'))}x, normal "
        f"{fmt(v.get('normal'))}x (fastest reps {fmt(r['speedup_best_rep'][name].get('normal'))}x)"
        for name, v in r["speedup"].items()
    )
    result = (
        f"core/numpy normals {fmt(r['core_normal_1t_over_numpy_normal'])}x; "
        f"ChaCha20 {fmt(r['core_words_1t_gbps'])} GB/s (1 thread); "
        f"core/reference normals {fmt(r['core_normal_1t_over_reference'], '.1f')}x"
        + (f"; {speedups}" if speedups else "")
    )
    targets = (
        f"normals >= {TARGET_NORMAL_RATIO}x numpy: "
        f"{yes[t['core_normal_1t_over_numpy_normal']['met']]}; "
        f"ChaCha20 >= {TARGET_WORDS_GBPS} GB/s: {yes[t['core_words_1t_gbps']['met']]}"
    )
    machine = (
        f"{m['cpu_model'] or 'unknown CPU'}, {m['cpu_count']} cores, "
        f"OpenMP {'on' if m['has_openmp'] else 'off'}, numpy {m['numpy']}"
    )
    if m.get("background_load_cores") is not None:
        machine += f"; background load {m['background_load_cores']:.1f} cores"
    details = f"[{json_name}]({json_name}), n = {report['config']['n']}"
    return f"| `{BENCH}` | {result} | {targets} | {machine} | {m['date'][:10]} | {details} |"


def update_readme(path: Path, row: str, bench: str = BENCH) -> None:
    """Create README.md with its header, or replace/append the table row of ``bench``."""
    text = path.read_text() if path.exists() else README_HEADER
    lines = text.splitlines()
    prefix = f"| `{bench}` |"
    for i, line in enumerate(lines):
        if line.startswith(prefix):
            lines[i] = row
            break
    else:
        # append after the last row of the benchmark table (the first table: later sections
        # have tables of their own), or at the end when there is none
        head = next((i for i, line in enumerate(lines) if line.startswith("| benchmark |")), None)
        last = None
        if head is not None:
            last = head
            while last + 1 < len(lines) and lines[last + 1].startswith("|"):
                last += 1
        if last is None:
            lines += [
                "",
                "| benchmark | result (medians) | targets | machine | date | details |",
                "|---|---|---|---|---|---|",
                row,
            ]
        else:
            lines.insert(last + 1, row)
    path.write_text("\n".join(lines) + "\n")


def parse_threads(text: str) -> list[int]:
    """'1,2' -> [1, 2] (1 is always included: the ratios are relative to it)."""
    threads = sorted({int(x) for x in text.split(",") if x.strip()} | {1})
    if threads[0] < 1:
        raise argparse.ArgumentTypeError("thread counts must be >= 1")
    return threads


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the table, write the JSON and the README row."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="n = 2^20 instead of 2^24")
    p.add_argument("--n", type=int, default=None, help="draws per call (default 2^24)")
    p.add_argument(
        "--ref-n",
        type=int,
        default=None,
        help="draws per call for the numpy reference (default: same as --n)",
    )
    p.add_argument("--reps", type=int, default=7, help="repetitions (median reported)")
    p.add_argument("--threads", type=parse_threads, default=[1, 2], help="e.g. 1,2")
    p.add_argument("--out", type=Path, default=Path("bench/results"), help="results folder")
    args = p.parse_args(argv)

    n = args.n if args.n is not None else (1 << 20 if args.quick else 1 << 24)
    ref_n = args.ref_n if args.ref_n is not None else n
    if n < 1 or ref_n < 1 or args.reps < 1:
        p.error("--n, --ref-n and --reps must be positive")

    check_agreement(n)
    machine = machine_info()
    contenders = build_contenders(n, ref_n, args.threads)
    print(
        f"bench {BENCH}: n = {n} (reference n = {ref_n}), reps = {args.reps}, "
        f"threads = {args.threads}, OpenMP = {machine['has_openmp']}, "
        f"{machine['cpu_count']} cores ({machine['cpu_model']})",
        file=sys.stderr,
    )
    for c in contenders:  # warm-up: thread pool, page tables, lazy initialisation
        c.fn()
    with BackgroundLoad() as background:
        for _ in range(args.reps):  # round robin: every contender sees the same background
            for c in contenders:
                c.run_once()
    machine["background_load_cores"] = background.cores
    try:
        machine["loadavg_end"] = list(os.getloadavg())
    except (AttributeError, OSError):
        machine["loadavg_end"] = None

    results = [c.result() for c in contenders]
    ratios = compute_ratios(results, args.threads)
    notes = [
        "Medians of interleaved repetitions in one process; every call returns a fresh array "
        "(first touch of the output pages included).",
        "GB/s = 1e9 bytes/s of 32-bit output words; numpy 'words' is "
        "rng.integers(0, 2**32, n, dtype=np.uint32) (PCG64).",
        "The numpy reference ignores n_threads (single-threaded).",
    ]
    if ref_n != n:
        notes.append(f"The reference was timed on n = {ref_n} (smaller than n = {n}).")
    report = {
        "bench": BENCH,
        "config": {
            "n": n,
            "ref_n": ref_n,
            "reps": args.reps,
            "threads": args.threads,
            "quick": args.quick,
        },
        "machine": machine,
        "results": results,
        "ratios": ratios,
        "notes": notes,
    }

    print_table(results, ratios)
    load = machine["background_load_cores"]
    if load is not None:
        print(f"background load during the run    : {load:.2f} cores busy with other work")
        if load > 0.25 and len(args.threads) > 1:
            print("warning: other processes were busy; multi-thread speedups are understated")
    if ref_n != n:
        print(f"note: reference timed on n = {ref_n} (rates are per draw, so comparable)")

    args.out.mkdir(parents=True, exist_ok=True)
    json_path = args.out / f"{BENCH}.json"
    json_path.write_text(json.dumps(report, indent=2) + "\n")
    update_readme(args.out / "README.md", readme_row(report, json_path.name))
    print(f"wrote {json_path} and {args.out / 'README.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
