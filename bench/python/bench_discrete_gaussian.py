"""Issue 32, item 1: the exact discrete Gaussian sampler against a Box-Muller normal, one thread,
side by side (interleaved) with an older build of the core when ``--baseline DIR`` names a
folder holding a package ``oldcore`` with that build's ``_core``.

Each contender draws ``--n`` values (default 200,000) at variance ``2^60`` (the lattice noise of
DP-SGD at noise multiplier 1: ``t = 2^30``) or ``1`` (``t = 1``), or ``--n`` Box-Muller normals.
The samples are the calling thread's CPU time (``time.thread_time``), which a busy shared
machine disturbs far less than wall time; medians of ``--reps``.

``--calls FILE`` adds the per-call cost of the lattice noise measured by the C++ binary
``bench/cpp/bench_lattice_calls.cpp`` (its JSON lines, with ``--calls-baseline FILE`` those of
the same binary linked with the baseline's ``random.cpp``): DP-SGD adds one step's noise per
call (d draws), so a call's fixed cost is paid every step.

Usage::

    python bench/python/bench_discrete_gaussian.py [--n 200000] [--reps 9] [--baseline DIR]
        [--baseline-label TEXT] [--calls FILE] [--calls-baseline FILE]

Writes ``<out>/discrete_gaussian.json`` and its row of ``<out>/README.md``.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

import harness

from privlearn import _core


def _cpu(fn: Callable[[], Any]) -> Callable[[], harness.Partial]:
    def run() -> harness.Partial:
        t0 = time.thread_time()
        fn()
        return harness.Partial(time.thread_time() - t0)

    return run


def main(argv: list[str] | None = None) -> int:
    ap = harness.cli(__doc__, "discrete_gaussian", reps=9)
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--baseline", type=Path, default=None)
    ap.add_argument("--baseline-label", default="the baseline build")
    ap.add_argument("--calls", type=Path, default=None)
    ap.add_argument("--calls-baseline", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.quick:
        args.reps, args.n = min(args.reps, 3), min(args.n, 20_000)
    cores = {"": _core}
    if args.baseline is not None:
        sys.path.insert(0, str(args.baseline))
        cores["baseline_"] = importlib.import_module("oldcore._core")
    key, n = bytes(range(32)), args.n
    tasks: dict[str, Callable[[], Any]] = {}
    for prefix, core in cores.items():
        for bits in (60, 0):
            tasks[f"{prefix}dg_2^{bits}"] = _cpu(
                lambda c=core, s2=1 << bits: c.random_discrete_gaussian(key, 5, 0, n, s2, 0, 1)
            )
        tasks[f"{prefix}box_muller"] = _cpu(lambda c=core: c.random_normal(key, 5, 0, n, 1))
    machine = harness.machine()
    cmp = harness.compare(tasks, args.reps, baseline="box_muller")
    harness.finish(machine, cmp)
    ns = {k: t.median / n * 1e9 for k, t in cmp.timings.items()}
    ratios = {f"{k} / box_muller": ns[k] / ns["box_muller"] for k in ("dg_2^60", "dg_2^0")}
    if args.baseline is not None:
        for k in ("dg_2^60", "dg_2^0"):
            ratios[f"baseline_{k} / baseline_box_muller"] = (
                ns[f"baseline_{k}"] / ns["baseline_box_muller"]
            )
            ratios[f"{k} / baseline_{k}"] = ns[k] / ns[f"baseline_{k}"]
            ratios[f"{k} / baseline_box_muller"] = ns[k] / ns["baseline_box_muller"]
    calls = {}
    for name, path in (("calls", args.calls), ("calls_baseline", args.calls_baseline)):
        if path is not None:
            lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            calls[name] = {d.get("kernel", "per_call_overhead"): d for d in lines}
    result = {
        "bench": "discrete_gaussian",
        "config": {
            "n": n,
            "reps": args.reps,
            "threads": 1,
            "clock": "thread CPU time",
            "baseline": args.baseline_label if args.baseline is not None else None,
        },
        "machine": machine,
        **cmp.as_dict(),
        "ns_per_draw": ns,
        "ratios": ratios,
        "lattice_calls": calls,
    }
    r60 = ratios["dg_2^60 / box_muller"]
    before = before0 = ab = old_bm = ""
    status = "met" if r60 <= 2 else "**not met**"
    if args.baseline is not None:
        r_bm = ratios["dg_2^60 / baseline_box_muller"]
        old_bm = (
            f"; {r_bm:.2f}x the baseline's Box-Muller normal ({ns['baseline_box_muller']:.0f} "
            "ns, libm log / sin / cos before f5d5687)"
        )
        status += f" against this build's Box-Muller ({r60:.2f}x); against the baseline's " + (
            "met" if r_bm <= 2 else "**not met**"
        )
    if args.baseline is not None:
        r_old = ratios["baseline_dg_2^60 / baseline_box_muller"]
        before = f"{ns['baseline_dg_2^60']:.0f} ns ({r_old:.2f}x its Box-Muller) -> "
        before0 = f"{ns['baseline_dg_2^0']:.0f} -> "
        ab = f"; A/B {ratios['dg_2^60 / baseline_dg_2^60']:.2f}"
    calls_text = ""
    if "calls" in calls:

        def per_call(c: dict) -> str:
            k, o = c["lattice_calls"], c["per_call_overhead"]["per_call_overhead_ns"]
            return f"{k['median_ns_per_draw']:.0f} ns/draw (per-call overhead {o / 1e3:.2f} us)"

        old = f"{per_call(calls['calls_baseline'])} -> " if "calls_baseline" in calls else ""
        k = calls["calls"]["lattice_calls"]
        calls_text = (
            f"; add_lattice_noise in calls of {k['per_call']} draws (one DP-SGD step at "
            f"d = {k['per_call']}, C++ `bench_lattice_calls`, thread CPU time): "
            f"{old}{per_call(calls['calls'])}"
        )
    cmd = "`python bench/python/bench_discrete_gaussian.py"
    cmd += f" --reps {args.reps}" + (" --baseline DIR" if args.baseline is not None else "")
    cmd += " --calls FILE --calls-baseline FILE`" if "calls" in calls else "`"
    row = (
        f"| `discrete_gaussian` | issue 32 item 1: exact N_Z(0, 2^60) per draw (the DP-SGD "
        f"lattice noise at sigma 1), 1 thread, thread CPU time, interleaved with "
        f"{args.baseline_label if args.baseline is not None else 'Box-Muller'}: "
        f"{before}{ns['dg_2^60']:.0f} ns ({r60:.2f}x a Box-Muller normal, "
        f"{ns['box_muller']:.0f} ns{ab}{old_bm}); "
        f"N_Z(0, 1): {before0}{ns['dg_2^0']:.0f} ns{calls_text} | <= 2x a Box-Muller draw: "
        f"{status} | {machine.get('cpu_model')} | "
        f"{time.strftime('%Y-%m-%d')} | [discrete_gaussian.json](discrete_gaussian.json), "
        f"{cmd}, {args.reps} reps, {n // 1000}k draws |"
    )
    harness.publish(result, harness.out_dir(args), "discrete_gaussian", row)
    print(json.dumps({"ns_per_draw": ns, "ratios": ratios}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
