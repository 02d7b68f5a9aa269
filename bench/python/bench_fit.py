"""Default ``fit`` of the private linear estimators: wall time and peak memory.

Each case runs in a fresh subprocess (so its peak RSS says nothing about the cases before it):
the child builds the data, then fits the estimator ``--reps`` times (default 3) and reports the
median fit time and the peak extra memory of the fits in units of X's size,

    peak extra / X = (VmHWM after the fits - VmRSS before the first fit) / X.nbytes,

where the kernel's high-water mark (VmHWM) is reset (``/proc/self/clear_refs``, "5") after the
data are built, so the peak of the data generation does not hide the fit's. When the reset is
not available, VmHWM before the fit is recorded too: the extra is then a lower bound when it
exceeds VmRSS (the data are built in blocks, so it barely does).

Only the *default* fit is measured: the estimators get the keyword arguments below and nothing
else, filtered by ``get_params()`` of the installed version (a keyword missing there is dropped
and listed in the JSON), so the same script runs on the code before and after an issue that
makes the non-private diagnostics (``objective_path_``, ``duality_gap_path_``, ``dual_coef_``)
opt-in: the opt-in flag, when there is one, is left at its default. Which diagnostics a fitted
estimator holds is recorded (looked up in ``vars(est)``, never computed).

Cases (X: seeded synthetic dense float64, rows of L2 norm < 1 -- Gaussian directions, radius
uniform on [0, 1); labels +-1 = sign of a random linear score plus noise, used as the targets
of the regressor too; seed=0 everywhere, so the fitted coefficients of two versions can be
compared)

- ``sgd-gaussian``: ``DPSGDClassifier(mechanism="gaussian", epsilon=1, seed=0)``, 2,000,000 x 50
- ``sgd-l2laplace``: ``DPSGDClassifier(seed=0)`` (default mechanism l2-laplace), 2,000,000 x 50
- ``scd-classifier``: ``DPSCDClassifier(epsilon=1, seed=0)``, 500,000 x 50
- ``scd-regressor``: ``DPSCDRegressor(seed=0)``, 500,000 x 50

For scale, the child also times one pass ``X @ w`` (median of 3) and reports the fit time in
such passes. Machines are shared and noisy (the background load -- CPU time used by other
processes per wall-clock second during the fits -- is recorded per case), so fit times and
their ratios are approximate; the memory ratios are robust.

Usage::

    python bench/python/bench_fit.py [--python /path/to/python] [--label before|after]
        [--quick] [--reps 3] [--cases sgd-gaussian,...] [--n-sgd N] [--n-scd N] [--out DIR]

Merges its results into ``<out>/fit.json`` (default ``bench/results``) under ``--label``
(``--quick``: under ``<label>-quick``), and prints a markdown table; with both a ``before``
and an ``after`` run in the file, also the before/after comparison. The parent needs only the
standard library; the interpreter given by ``--python`` (default: this one) must import
``privlearn`` and numpy.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from typing import Any

import harness

BENCH = "fit"
DEFAULT_D = 50
DEFAULT_N_SGD = 2_000_000
DEFAULT_N_SCD = 500_000
QUICK_N_SGD = 200_000
QUICK_N_SCD = 50_000
BLOCK_ROWS = 65_536
DIAGNOSTICS = ("objective_path_", "duality_gap_path_", "dual_coef_", "objective_steps_")
# target of the issue: peak extra memory of a default fit <= one copy of X
TARGET_EXTRA_X = 1.0

# name: (estimator class in privlearn.linear, keyword arguments, which n)
CASES: dict[str, tuple[str, dict[str, Any], str]] = {
    "sgd-gaussian": (
        "DPSGDClassifier",
        {"mechanism": "gaussian", "epsilon": 1.0, "seed": 0},
        "sgd",
    ),
    "sgd-l2laplace": ("DPSGDClassifier", {"seed": 0}, "sgd"),
    "scd-classifier": ("DPSCDClassifier", {"epsilon": 1.0, "seed": 0}, "scd"),
    "scd-regressor": ("DPSCDRegressor", {"seed": 0}, "scd"),
}


_f = harness.fmt_opt  # a number, or "-" when it was not measured


# ---- child: one case in a fresh process ---------------------------------------------------------
def make_data(n: int, d: int, seed: int = 0) -> tuple[Any, Any]:
    """Dense float64 ``X`` (n x d, rows of norm < 1) built block by block, and labels +-1."""
    import numpy as np

    rng = np.random.default_rng(seed)
    w_true = rng.standard_normal(d)
    X = np.empty((n, d), dtype=np.float64)
    y = np.empty(n, dtype=np.float64)
    for start in range(0, n, BLOCK_ROWS):
        stop = min(n, start + BLOCK_ROWS)
        g = rng.standard_normal((stop - start, d))
        radius = rng.random(stop - start)
        g *= (radius / np.linalg.norm(g, axis=1))[:, None]
        X[start:stop] = g
        score = g @ w_true + 0.1 * rng.standard_normal(stop - start)
        y[start:stop] = np.where(score >= 0.0, 1.0, -1.0)
    return X, y


def run_case(spec: dict[str, Any]) -> dict[str, Any]:
    """Build the data, fit ``reps`` times, return the measurements (run in the child)."""
    import gc

    import numpy as np

    import privlearn
    import privlearn.linear as linear

    n, d, reps = int(spec["n"]), int(spec["d"]), int(spec["reps"])
    cls = getattr(linear, spec["estimator"])
    available = cls().get_params()
    kwargs = {k: v for k, v in spec["kwargs"].items() if k in available}
    dropped = sorted(set(spec["kwargs"]) - set(kwargs))

    t0 = time.perf_counter()
    X, y = make_data(n, d)
    build_s = time.perf_counter() - t0
    w = np.ones(d) / np.sqrt(d)
    pass_s = harness.compare({"pass": lambda: (X @ w).sum()}, 3, warmup=0).median("pass")

    gc.collect()
    hwm_build_kib = harness.status_kib("VmHWM")
    reset = harness.reset_peak_memory()
    rss_before_kib = harness.status_kib("VmRSS")
    hwm_before_kib = harness.status_kib("VmHWM")

    times: list[float] = []
    hwm_after_rep_kib: list[int | None] = []
    rss_after_rep_kib: list[int | None] = []
    diagnostics: dict[str, Any] = {}
    coef: list[float] = []
    identical_coef = True
    with harness.BackgroundLoad() as load:
        for rep in range(reps):
            est = cls(**kwargs)
            t0 = time.perf_counter()
            est.fit(X, y)
            times.append(time.perf_counter() - t0)
            hwm_after_rep_kib.append(harness.status_kib("VmHWM"))
            state = vars(est)
            c = np.asarray(state["coef_"], dtype=np.float64).reshape(-1).tolist()
            if rep == 0:
                coef = c
                for name in DIAGNOSTICS:
                    value = state.get(name)
                    diagnostics[name] = (
                        None
                        if value is None
                        else {
                            "shape": list(np.shape(value)),
                            "nbytes": int(np.asarray(value).nbytes),
                        }
                    )
                steps = state.get("n_steps_")
                n_steps = None if steps is None else int(steps)
            else:
                identical_coef = identical_coef and c == coef
            del est, state
            gc.collect()
            rss_after_rep_kib.append(harness.status_kib("VmRSS"))
    background = load.cores

    hwm_after_kib = harness.status_kib("VmHWM")
    extra = None
    if hwm_after_kib is not None and rss_before_kib is not None:
        extra = (hwm_after_kib - rss_before_kib) * 1024
    try:
        from privlearn import _core

        threads = int(_core.default_threads())
        openmp = bool(_core.has_openmp)
    except (ImportError, AttributeError):
        threads, openmp = None, None
    fit_s = statistics.median(times)
    return {
        "case": spec["case"],
        "estimator": spec["estimator"],
        "kwargs_requested": spec["kwargs"],
        "kwargs_used": kwargs,
        "kwargs_dropped": dropped,
        "n": n,
        "d": d,
        "x_nbytes": int(X.nbytes),
        "reps": reps,
        "fit_s": times,
        "fit_s_median": fit_s,
        "fit_s_min": min(times),
        "pass_s": pass_s,
        "fit_in_passes": fit_s / pass_s if pass_s > 0 else None,
        "build_s": build_s,
        "hwm_reset": reset,
        "hwm_build_kib": hwm_build_kib,
        "rss_before_fit_kib": rss_before_kib,
        "hwm_before_fit_kib": hwm_before_kib,
        "hwm_after_rep_kib": hwm_after_rep_kib,
        "rss_after_rep_kib": rss_after_rep_kib,
        "hwm_after_fit_kib": hwm_after_kib,
        "peak_extra_bytes": extra,
        "peak_extra_x": None if extra is None else extra / X.nbytes,
        "background_load_cores": background,
        "diagnostics": diagnostics,
        "n_steps": n_steps,
        "coef": coef,
        "coef_identical_across_reps": identical_coef,
        "privlearn_version": getattr(privlearn, "__version__", None),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "core_default_threads": threads,
        "has_openmp": openmp,
    }


# ---- parent: cases in subprocesses, JSON, tables ---------------------------------------------
def _diag(r: dict[str, Any]) -> str:
    held = [k for k, v in r["diagnostics"].items() if v is not None and k != "objective_steps_"]
    return ", ".join(held) if held else "none"


def table(run: dict[str, Any]) -> str:
    lines = [
        "| case | estimator (kwargs) | n x d | X GiB | fit s (median / min) | fit in X passes | "
        "peak extra / X | peak extra GiB | diagnostics held | background load |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in run["cases"]:
        kw = ", ".join(f"{k}={v!r}" for k, v in r["kwargs_used"].items())
        lines.append(
            f"| {r['case']} | {r['estimator']}({kw}) | {r['n']:,} x {r['d']} | "
            f"{r['x_nbytes'] / 2**30:.2f} | {r['fit_s_median']:.2f} / {r['fit_s_min']:.2f} | "
            f"{_f(r['fit_in_passes'], '.0f')} | {_f(r['peak_extra_x'], '.2f')}x | "
            f"{_f(None if r['peak_extra_bytes'] is None else r['peak_extra_bytes'] / 2**30, '.2f')}"
            f" | {_diag(r)} | {_f(r['background_load_cores'], '.1f')} |"
        )
    return "\n".join(lines)


def compare(before: dict[str, Any], after: dict[str, Any]) -> str:
    """Before/after table: time ratio, memory in units of X, the one-copy target, same coef."""
    b = {r["case"]: r for r in before["cases"]}
    lines = [
        "| case | fit s before | fit s after | before/after | peak extra / X before | "
        f"after | after <= {TARGET_EXTRA_X:g}x X | same coef_ |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for ra in after["cases"]:
        rb = b.get(ra["case"])
        if rb is None or (rb["n"], rb["d"]) != (ra["n"], ra["d"]):
            continue
        met = ra["peak_extra_x"] is not None and ra["peak_extra_x"] <= TARGET_EXTRA_X
        lines.append(
            f"| {ra['case']} | {rb['fit_s_median']:.2f} | {ra['fit_s_median']:.2f} | "
            f"{rb['fit_s_median'] / ra['fit_s_median']:.2f}x | "
            f"{_f(rb['peak_extra_x'], '.3f')}x | {_f(ra['peak_extra_x'], '.3f')}x | "
            f"{'met' if met else '**not met**'} | {rb['coef'] == ra['coef']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = harness.cli(__doc__, BENCH, reps=None)  # --quick: small sizes, 1 rep (smoke test)
    p.add_argument("--python", default=sys.executable, help="interpreter of the subprocesses")
    p.add_argument("--label", default="run", help='key in fit.json, e.g. "before" / "after"')
    p.add_argument("--note", default=None, help="free text stored with the run")
    p.add_argument("--cases", default=",".join(CASES), help="comma-separated case names")
    p.add_argument("--d", type=int, default=DEFAULT_D)
    p.add_argument("--n-sgd", type=int, default=None)
    p.add_argument("--n-scd", type=int, default=None)
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds per case")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.child is not None:
        print(json.dumps(run_case(json.loads(args.child))))
        return 0

    reps = args.reps or (1 if args.quick else 3)
    args.out = harness.out_dir(args)
    sizes = {
        "sgd": args.n_sgd or (QUICK_N_SGD if args.quick else DEFAULT_N_SGD),
        "scd": args.n_scd or (QUICK_N_SCD if args.quick else DEFAULT_N_SCD),
    }
    names = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in names if c not in CASES]
    if unknown:
        p.error(f"unknown case(s) {unknown}; known: {list(CASES)}")
    label = args.label + ("-quick" if args.quick else "")

    machine = harness.machine()
    results = []
    for name in names:
        estimator, kwargs, which = CASES[name]
        spec = {
            "case": name,
            "estimator": estimator,
            "kwargs": kwargs,
            "n": sizes[which],
            "d": args.d,
            "reps": reps,
        }
        print(f"[{label}] {name}: {estimator} on {sizes[which]:,} x {args.d} ...", flush=True)
        r = harness.script_child(__file__, spec, python=args.python, timeout=args.timeout)
        print(
            f"    fit {r['fit_s_median']:.2f} s (median of {reps}), peak extra "
            f"{_f(r['peak_extra_x'], '.2f')}x X, background load "
            f"{_f(r['background_load_cores'], '.1f')} cores",
            flush=True,
        )
        results.append(r)
    harness.finish(machine)
    run = {
        "label": label,
        "note": args.note,
        "python": results[0]["python"] if results else None,
        "privlearn_version": results[0]["privlearn_version"] if results else None,
        "bench_git_commit": machine["git_commit"],
        "quick": args.quick,
        "reps": reps,
        "sizes": sizes,
        "machine": machine,
        "cases": results,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{BENCH}.json"
    data: dict[str, Any] = {}
    if path.exists():
        data = json.loads(path.read_text())
    data.setdefault("benchmark", BENCH)
    data["description"] = (
        "Default fit of the private linear estimators in a fresh process per case: median fit "
        "wall time over the reps, and peak extra memory (VmHWM after the fits minus VmRSS "
        "before them) in units of X.nbytes. Keyed by label (before/after an issue)."
    )
    data["target_peak_extra_x"] = TARGET_EXTRA_X
    data.setdefault("runs", {})[label] = run
    harness.write_json(data, path)

    print()
    print(f"## {label} ({machine['cpu_model']}, {machine['cpus_usable']} cores)")
    print()
    print(table(run))
    runs = data["runs"]
    suffix = "-quick" if args.quick else ""
    before, after = runs.get("before" + suffix), runs.get("after" + suffix)
    if before is not None and after is not None:
        print()
        print("## before vs after")
        print()
        print(compare(before, after))
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
