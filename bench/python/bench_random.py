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

    python bench/python/bench_random.py [--quick] [--reps 7] [--out DIR]

Writes ``<out>/random.json`` (all measurements, ratios, machine) and updates this benchmark's
row in ``<out>/README.md``.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import harness
import numpy as np
from harness import fmt, ratio

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


def _result(impl: str, kernel: str, threads: int, n: int, t: harness.Timing) -> dict[str, Any]:
    """One measurement as a JSON-ready dict (median, quartiles and minimum)."""
    unit, per_element = UNITS[kernel]
    return {
        "bench": BENCH,
        "impl": impl,
        "kernel": kernel,
        "threads": threads,
        "n": n,
        **t.as_dict(),
        "rate": n * per_element / t.median,
        "unit": unit,
    }


def build_contenders(
    n: int, ref_n: int, threads: list[int]
) -> dict[tuple[str, str, int, int], Callable[[], Any]]:
    """All (implementation, kernel, threads, n) combinations to time."""
    core = CoreStream(seed=1)
    ref = ReferenceStream(seed=1)
    rng = np.random.default_rng(0)
    out: dict[tuple[str, str, int, int], Callable[[], Any]] = {}
    for t in threads:
        out[("core", "words", t, n)] = lambda t=t: core.words(0, n, n_threads=t)
        out[("core", "normal", t, n)] = lambda t=t: core.normal(0, n, n_threads=t)
        out[("core", "uniform", t, n)] = lambda t=t: core.uniform(0, n, n_threads=t)
        out[("core", "laplace", t, n)] = lambda t=t: core.laplace(0, n, scale=1.0, n_threads=t)
    out[("reference", "words", 1, ref_n)] = lambda: ref.words(0, ref_n)
    out[("reference", "normal", 1, ref_n)] = lambda: ref.normal(0, ref_n)
    out[("numpy", "words", 1, n)] = lambda: rng.integers(0, 2**32, n, dtype=np.uint32)
    out[("numpy", "normal", 1, n)] = lambda: rng.standard_normal(n)
    out[("numpy", "uniform", 1, n)] = lambda: rng.random(n)
    out[("numpy", "laplace", 1, n)] = lambda: rng.laplace(0.0, 1.0, n)
    return out


def check_agreement(n: int) -> None:
    """Sanity check before timing: core and reference give the same draws."""
    m = min(n, 1 << 12)
    core, ref = CoreStream(seed=1), ReferenceStream(seed=1)
    if not np.array_equal(core.words(0, m), ref.words(0, m)):
        raise RuntimeError("core and reference ChaCha20 words differ")
    if not np.allclose(core.normal(0, m), ref.normal(0, m), rtol=0.0, atol=1e-12):
        raise RuntimeError("core and reference normals differ")


def find(
    results: list[dict[str, Any]], impl: str, kernel: str, threads: int = 1, key: str = "rate"
) -> float | None:
    """Field ``key`` (default: the rate) of one measurement, or None when it was not run."""
    for r in results:
        if (r["impl"], r["kernel"], r["threads"]) == (impl, kernel, threads):
            return float(r[key])
    return None


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
        f"{harness.met(t['core_normal_1t_over_numpy_normal']['met'])}; "
        f"ChaCha20 >= {TARGET_WORDS_GBPS} GB/s: {harness.met(t['core_words_1t_gbps']['met'])}"
    )
    details = f"[{json_name}]({json_name}), n = {report['config']['n']}"
    return harness.row(BENCH, result, targets, m, details)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the table, write the JSON and the README row."""
    p = harness.cli(__doc__, BENCH, reps=7)
    p.add_argument("--n", type=int, default=None, help="draws per call (2^24; quick 2^20)")
    p.add_argument("--ref-n", type=int, default=None, help="reference draws (default: --n)")
    p.add_argument("--threads", type=harness.parse_threads, default=[1, 2], help="e.g. 1,2")
    args = p.parse_args(argv)
    n = args.n if args.n is not None else (1 << 20 if args.quick else 1 << 24)
    ref_n = args.ref_n if args.ref_n is not None else n
    if n < 1 or ref_n < 1 or args.reps < 1:
        p.error("--n, --ref-n and --reps must be positive")

    check_agreement(n)
    machine = harness.machine()
    contenders = build_contenders(n, ref_n, args.threads)
    print(f"bench {BENCH}: n = {n} (reference {ref_n}), reps = {args.reps}", file=sys.stderr)
    cmp = harness.compare({"/".join(map(str, k)): f for k, f in contenders.items()}, args.reps)
    harness.finish(machine, cmp)
    results = [_result(*k, cmp["/".join(map(str, k))]) for k in contenders]
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
    config = {"n": n, "ref_n": ref_n, "reps": args.reps, "threads": args.threads}
    report = {
        "bench": BENCH,
        "config": {**config, "quick": args.quick},
        "machine": machine,
        "results": results,
        "ratios": ratios,
        "notes": notes,
    }
    print_table(results, ratios)
    print(f"background load during the run    : {fmt(cmp.background_load_cores)} cores")
    harness.publish(report, harness.out_dir(args), BENCH, readme_row(report, f"{BENCH}.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
