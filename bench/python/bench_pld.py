"""Tight accounting: how much noise the PLD accountant saves over RDP, and how fast it calibrates.

Two parts, both on one process, under ``OMP_NUM_THREADS=1`` (the accountants are single-threaded).

1. **Sigma ratio table (RDP / PLD).** For the default schedule of every Gaussian estimator
   (Poisson sampling, ``q = batch / n``, ``T = ceil(epochs n / batch)``, times the number of
   one-vs-rest problems, which compose) on the training sizes of the public data sets, at
   epsilon in {0.5, 1, 3} and delta = 1e-6 (the package default): the noise multiplier by
   :func:`privlearn.accounting.calibrate_sigma` (Renyi DP, what the estimators used before issue
   20), by :func:`privlearn.accounting.pld.calibrate_sigma_pld` (the privacy loss distribution,
   what they use now), their ratio, and the epsilon that the RDP sigma is actually worth by the
   PLD accountant (:func:`~privlearn.accounting.pld.epsilon_for_sigma_pld`, grid 1e-4). The
   noise multiplier is per unit of sensitivity, so it does not depend on the estimator's
   clipping or on Lemma 1's sqrt(2); the lattice slack of the exact noise (a hair) is left
   out. Also the reference points of issue 20 (dp_accounting's PLD: adult q = 64/30162,
   20 epochs, eps 1 -> 1.086, eps 3 -> 1.068; MNIST 60k -> 1.181; 1M rows, q = 1e-3, 5 epochs,
   eps 0.5, delta 1e-7 -> 1.49).

   Schedules (defaults of the estimators):

   - ``DPSGDClassifier`` (binary; softmax for MNIST's ten digits, one problem) and
     ``DPSGDRegressor``: batch 64, 20 epochs (the same schedule, so the same sigma at equal n).
   - ``DPSCDClassifier`` dual: batch 100, 20 epochs; one-vs-rest on MNIST (10 problems).
   - ``DPSCDRegressor`` dual: batch 100, 1 epoch.
   - DP-SCD primal (``variant="primal"``): ``q = 1`` (every step reads every row),
     ``T = ceil(20 M / 100)`` with ``M = d + 1`` (intercept), x10 on MNIST. Plain Gaussians:
     the PLD is exact (closed form), RDP's conversion is the only slack.

   Regressors are listed at the same sizes (their schedule depends on n only) and on the
   msd-like size (463,715 rows) of the regression benchmarks.

2. **Calibration time.** The same target -- the smallest sigma whose Poisson-subsampled
   Gaussian run is (epsilon, delta)-DP by a PLD accountant -- by privlearn's
   ``calibrate_sigma_pld`` (``rtol = 1e-3``, grid 2e-4 during the search; all its caches
   cleared before each repetition, so every repetition is a cold calibration including its RDP
   bracket) and by dp_accounting's ``calibrate_dp_mechanism`` with a
   ``PLDAccountant(value_discretization_interval=1e-4)`` factory and
   ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), T)``, ``tol`` =
   1e-3 x our sigma (absolute, i.e. about 1e-3 relative). dp_accounting is handed the bracket
   ``[sigma_RDP / 2, sigma_RDP]`` for free (its default search from sigma = 0 is far slower),
   which favours it. A third contender runs privlearn's calibration on dp_accounting's grid
   (``interval=1e-4``), the like-for-like comparison of sigma. Reported: median times, the
   ratio, both sigmas, their relative difference (target <= 0.2%), and dp_accounting's epsilon
   at our sigma (target <= epsilon (1 + 1e-3): ours is never optimistic by their accountant).

Target (issue 20): calibrating sigma for T <= 1e5 steps takes <= 0.3 s on one core. Checked
on the timing targets (median wall and CPU time) and on every distinct schedule of the table
with T <= 1e5 (CPU time of one cold calibration). The cost grows as sigma shrinks (the
one-step loss grid widens: eps 3 with small q is the slowest), whatever T.

Usage::

    OMP_NUM_THREADS=1 python bench/python/bench_pld.py [--reps 5] [--quick] [--out bench/results]

Writes ``<out>/pld.json`` (every number, the machine) and this benchmark's row in
``<out>/README.md``. The default run takes a few minutes; ``--quick`` (adult and phishing at
eps 1, the reference points, one timing target) takes seconds.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from typing import Any

import harness

from privlearn.accounting import calibrate_sigma
from privlearn.accounting import pld as _pld
from privlearn.accounting.pld import (
    CALIBRATION_INTERVAL,
    DEFAULT_INTERVAL,
    calibrate_sigma_pld,
    epsilon_for_sigma_pld,
)

BENCH = "pld"
DELTA = 1e-6  # the package default
EPSILONS = (0.5, 1.0, 3.0)
TARGET_SECONDS = 0.3
TARGET_MAX_STEPS = 100_000
TARGET_SIGMA_RTOL = 2e-3
TARGET_EPS_RTOL = 1e-3
RTOL = 1e-3  # privlearn's calibration tolerance (its default)

#: name -> (training rows n, features d) of the public data sets (d only for the primal)
DATASETS: dict[str, tuple[int, int]] = {
    "adult": (32_561, 105),
    "phishing": (8_291, 68),  # the 75% training split of 11,055 rows
    "kddcup99": (494_021, 118),
    "kddcup99_50k": (50_000, 118),  # Song, Chaudhuri, Sarwate 2013's subsample
    "mnist": (60_000, 784),
    "msd": (463_715, 90),  # regression only
}
CLASSIFICATION = ("adult", "phishing", "kddcup99", "kddcup99_50k", "mnist")
REGRESSION = ("adult", "phishing", "kddcup99", "kddcup99_50k", "msd")

#: estimator -> (batch, epochs, variant); "primal" uses q = 1, T = ceil(epochs (d + 1) / batch)
ESTIMATORS: dict[str, tuple[int, int, str]] = {
    "DPSGDClassifier": (64, 20, "sgd"),
    "DPSCDClassifier": (100, 20, "dual"),
    "DPSCDClassifier(primal)": (100, 20, "primal"),
    "DPSGDRegressor": (64, 20, "sgd"),
    "DPSCDRegressor": (100, 1, "dual"),
}

#: adult as in issue 20 (30,162 rows: the training rows without missing values), DP-SGD default
_ADULT_ISSUE = (64 / 30162, math.ceil(20 * 30162 / 64))
_MNIST_SGD = (64 / 60000, math.ceil(20 * 60000 / 64))
#: issue 20's reference points: name -> (q, T, epsilon, delta, dp_accounting's ratio)
REFERENCES: dict[str, tuple[float, int, float, float, float]] = {
    "adult 30162, DP-SGD default, eps 1": (*_ADULT_ISSUE, 1.0, 1e-6, 1.086),
    "adult 30162, DP-SGD default, eps 3": (*_ADULT_ISSUE, 3.0, 1e-6, 1.068),
    "MNIST 60k, DP-SGD default, eps 1": (*_MNIST_SGD, 1.0, 1e-6, 1.181),
    "1M rows, q 1e-3, 5 epochs, eps 0.5, delta 1e-7": (1e-3, 5000, 0.5, 1e-7, 1.49),
}

#: timing targets: name -> (q, T, epsilon, delta)
TIMING: dict[str, tuple[float, int, float, float]] = {
    "adult DP-SGD default (q 64/32561, T 10176, eps 1, delta 1e-6)": (
        64 / 32561, math.ceil(20 * 32561 / 64), 1.0, 1e-6,
    ),
    "MNIST DP-SGD default (q 64/60000, T 18750, eps 1, delta 1e-6)": (
        64 / 60000, math.ceil(20 * 60000 / 64), 1.0, 1e-6,
    ),
    "1M rows (q 1e-3, T 5000, eps 0.5, delta 1e-7)": (1e-3, 5000, 0.5, 1e-7),
    "q 0.01, T 1e5, eps 1, delta 1e-5": (0.01, 100_000, 1.0, 1e-5),
    # small sigma (~0.54): the widest one-step grid of the table's T <= 1e5 rows
    "KDDCup99 DP-SCD default (q 100/494021, T 98805, eps 3, delta 1e-6)": (
        100 / 494021, -(-20 * 494021 // 100), 3.0, 1e-6,
    ),
}  # fmt: skip


def clear_caches() -> None:
    """Forget every cached PLD result (a cold calibration)."""
    _pld._calibrate.cache_clear()
    _pld._composed_direction.cache_clear()
    _pld._epsilon_for_sigma_pld.cache_clear()


def schedule(estimator: str, dataset: str) -> tuple[float, int, int]:
    """``(q, T, tasks)`` of the estimator's default on the data set (Poisson sampling)."""
    batch, epochs, variant = ESTIMATORS[estimator]
    n, d = DATASETS[dataset]
    multiclass = dataset == "mnist"
    # DP-SGD on ten classes is one softmax problem; DP-SCD is one-vs-rest (10 problems)
    tasks = 10 if multiclass and variant in ("dual", "primal") else 1
    if variant == "primal":
        return 1.0, -(-(epochs * (d + 1)) // batch), tasks
    return min(1.0, batch / n), -(-(epochs * n) // batch), tasks


def sigma_pair(q: float, steps: int, eps: float, delta: float) -> dict[str, Any]:
    """RDP and PLD sigmas of one schedule, their ratio, the RDP sigma's PLD epsilon, and the
    cold times of both calibrations."""
    clear_caches()
    rdp_s, s_rdp = harness.timed(lambda: calibrate_sigma(eps, delta, q=q, steps=steps))
    with harness.stopwatch() as pld:
        s_pld = calibrate_sigma_pld(eps, delta, q=q, steps=steps)
    eps_rdp_sigma = epsilon_for_sigma_pld(s_rdp, delta, q=q, steps=steps)
    eps_pld_sigma = epsilon_for_sigma_pld(s_pld, delta, q=q, steps=steps)
    return {
        "q": q,
        "steps": steps,
        "epsilon": eps,
        "delta": delta,
        "sigma_rdp": s_rdp,
        "sigma_pld": s_pld,
        "ratio": s_rdp / s_pld,
        "pld_epsilon_of_rdp_sigma": eps_rdp_sigma,
        "pld_epsilon_of_pld_sigma": eps_pld_sigma,
        "rdp_calibration_s": rdp_s,
        "pld_calibration_s": pld.seconds,
        "pld_calibration_cpu_s": pld.cpu_seconds,
    }


def ratio_table(datasets: list[str], epsilons: tuple[float, ...]) -> list[dict[str, Any]]:
    """One row per (data set, estimator, epsilon); identical schedules computed once."""
    memo: dict[tuple[float, int, float], dict[str, Any]] = {}
    rows: list[dict[str, Any]] = []
    for ds in datasets:
        for est, (batch, epochs, variant) in ESTIMATORS.items():
            regressor = est.endswith("Regressor")
            if ds not in (REGRESSION if regressor else CLASSIFICATION):
                continue
            q, steps, tasks = schedule(est, ds)
            for eps in epsilons:
                key = (q, steps * tasks, eps)
                if key not in memo:
                    memo[key] = sigma_pair(q, steps * tasks, eps, DELTA)
                row = {
                    "dataset": ds,
                    "n": DATASETS[ds][0],
                    "estimator": est,
                    "batch": batch,
                    "epochs": epochs,
                    "variant": variant,
                    "tasks": tasks,
                    "steps_per_task": steps,
                    **memo[key],
                }
                rows.append(row)
                print(
                    f"{ds:<13} {est:<24} eps {eps:<4g} q {q:.3g} T {steps * tasks:>7} "
                    f"sigma rdp {row['sigma_rdp']:.4f} pld {row['sigma_pld']:.4f} "
                    f"ratio {row['ratio']:.3f} (RDP sigma is eps "
                    f"{row['pld_epsilon_of_rdp_sigma']:.3f} by PLD)",
                    flush=True,
                )
    return rows


def references() -> list[dict[str, Any]]:
    """Issue 20's reference points recomputed by privlearn."""
    out = []
    for name, (q, steps, eps, delta, expected) in REFERENCES.items():
        r = sigma_pair(q, steps, eps, delta)
        r.update(name=name, issue_ratio=expected, ratio_rel_diff=r["ratio"] / expected - 1.0)
        out.append(r)
        print(
            f"reference {name}: sigma rdp {r['sigma_rdp']:.4f} pld {r['sigma_pld']:.4f} ratio "
            f"{r['ratio']:.3f} (issue: {expected})",
            flush=True,
        )
    return out


def dpa_epsilon(q: float, steps: int, sigma: float, delta: float) -> float:
    """dp_accounting's PLD epsilon (grid 1e-4) of the run."""
    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant

    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=DEFAULT_INTERVAL)
    acc.compose(
        dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)
    )
    return float(acc.get_epsilon(delta))


def dpa_calibrate(
    q: float, steps: int, eps: float, delta: float, lo: float, hi: float, tol: float
) -> tuple[float, int]:
    """dp_accounting's calibration (PLD accountant, grid 1e-4) in ``[lo, hi]``; returns sigma
    and the number of accountant evaluations."""
    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant

    calls = 0

    def fresh() -> Any:
        nonlocal calls
        calls += 1
        return pld_privacy_accountant.PLDAccountant(value_discretization_interval=DEFAULT_INTERVAL)

    def event(s: float) -> Any:
        return dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s)), steps)

    sigma = dpa.calibrate_dp_mechanism(
        fresh, event, eps, delta, bracket_interval=dpa.ExplicitBracketInterval(lo, hi), tol=tol
    )
    return float(sigma), calls


def timing(targets: list[str], reps: int, dpa_reps: int) -> list[dict[str, Any]]:
    """Cold calibrations by privlearn (reps, caches cleared) and dp_accounting (dpa_reps)."""
    return [time_target(name, reps, dpa_reps) for name in targets]


def time_target(name: str, reps: int, dpa_reps: int) -> dict[str, Any]:
    """One timing target of :func:`timing`."""
    q, steps, eps, delta = TIMING[name]
    s_rdp = calibrate_sigma(eps, delta, q=q, steps=steps)
    cpu: dict[str, list[float]] = {"ours": [], "theirs": []}

    def cold(interval: float | None = None) -> harness.Partial:
        clear_caches()  # a cold calibration; the clearing is not timed
        kw = {} if interval is None else {"interval": interval}
        with harness.stopwatch() as sw:
            sigma = calibrate_sigma_pld(eps, delta, q=q, steps=steps, **kw)
        if interval is None:
            cpu["ours"].append(sw.cpu_seconds)
        return harness.Partial(sw.seconds, sigma)

    def dpa() -> tuple[float, int]:
        with harness.stopwatch() as sw:
            out = dpa_calibrate(q, steps, eps, delta, s_rdp / 2, s_rdp, RTOL * sigma)
        cpu["theirs"].append(sw.cpu_seconds)
        return out

    # interleaved: the default search grid, then dp_accounting's
    mine = harness.compare(
        {"default": cold, "fine": lambda: cold(DEFAULT_INTERVAL)}, reps, warmup=0
    )
    ours, fine, ours_cpu = mine["default"].times, mine["fine"].times, cpu["ours"]
    sigma, sigma_fine = float(mine["default"].value), float(mine["fine"].value)
    dpa_t = harness.compare({"dpa": dpa}, dpa_reps, warmup=0)["dpa"]
    theirs, theirs_cpu = dpa_t.times, cpu["theirs"]
    s_dpa, calls = dpa_t.value
    eps_dpa_ours = dpa_epsilon(q, steps, sigma, delta)
    r = {
        "target": name,
        "q": q,
        "steps": steps,
        "epsilon": eps,
        "delta": delta,
        "sigma_rdp": s_rdp,
        "privlearn_sigma": sigma,
        "privlearn_reps": reps,
        "privlearn_median_s": mine["default"].median,
        "privlearn_min_s": min(ours),
        "privlearn_times_s": ours,
        "privlearn_cpu_median_s": statistics.median(ours_cpu),
        "privlearn_same_grid_sigma": sigma_fine,
        "privlearn_same_grid_median_s": mine["fine"].median,
        "privlearn_same_grid_times_s": fine,
        "dp_accounting_sigma": s_dpa,
        "dp_accounting_reps": dpa_reps,
        "dp_accounting_median_s": dpa_t.median,
        "dp_accounting_evaluations": calls,
        "dp_accounting_times_s": theirs,
        "dp_accounting_cpu_median_s": statistics.median(theirs_cpu),
        "time_ratio": dpa_t.median / mine["default"].median,
        "sigma_rel_diff": sigma / s_dpa - 1.0,
        "same_grid_time_ratio": dpa_t.median / mine["fine"].median,
        "same_grid_sigma_rel_diff": sigma_fine / s_dpa - 1.0,
        "dp_accounting_epsilon_at_privlearn_sigma": eps_dpa_ours,
        "eps_ok": eps_dpa_ours <= eps * (1.0 + TARGET_EPS_RTOL),
        "sigma_ok": abs(sigma / s_dpa - 1.0) <= TARGET_SIGMA_RTOL,
        "time_ok": mine["default"].median <= TARGET_SECONDS,
        "cpu_time_ok": statistics.median(ours_cpu) <= TARGET_SECONDS,
    }
    print(
        f"timing {name}: privlearn {r['privlearn_median_s']:.3f} s (cpu "
        f"{r['privlearn_cpu_median_s']:.3f} s, sigma {sigma:.5f}), "
        f"dp_accounting {r['dp_accounting_median_s']:.2f} s ({calls} evaluations, sigma "
        f"{s_dpa:.5f}): {r['time_ratio']:.0f}x; sigma diff {r['sigma_rel_diff']:+.2e}; "
        f"dp_accounting eps at our sigma {eps_dpa_ours:.5f}; same grid 1e-4: privlearn "
        f"{r['privlearn_same_grid_median_s']:.3f} s, sigma diff "
        f"{r['same_grid_sigma_rel_diff']:+.2e}",
        flush=True,
    )
    return r


def summarize(
    rows: list[dict[str, Any]], refs: list[dict[str, Any]], times: list[dict[str, Any]]
) -> dict[str, Any]:
    """Headline numbers and the targets."""
    ratios = [r["ratio"] for r in rows]
    eps1 = [r for r in rows if r["epsilon"] == 1.0]
    in_scope = [t for t in times if t["steps"] <= TARGET_MAX_STEPS]
    # distinct schedules of the table (rows share them), one cold calibration each
    uniq = {(r["q"], r["steps"], r["epsilon"]): r for r in rows}
    small = [r for r in uniq.values() if r["steps"] <= TARGET_MAX_STEPS]
    s: dict[str, Any] = {
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "ratio_median": statistics.median(ratios),
        "pld_epsilon_of_rdp_sigma_at_eps1_range": (
            [
                min(r["pld_epsilon_of_rdp_sigma"] for r in eps1),
                max(r["pld_epsilon_of_rdp_sigma"] for r in eps1),
            ]
            if eps1
            else None
        ),
        "pld_calibration_s_max_in_table": max(r["pld_calibration_s"] for r in rows),
        "pld_calibration_cpu_s_max_in_table": max(r["pld_calibration_cpu_s"] for r in rows),
        "table_schedules_T_le_1e5": len(small),
        "table_schedules_T_le_1e5_cpu_over_target": sum(
            r["pld_calibration_cpu_s"] > TARGET_SECONDS for r in small
        ),
        "table_T_le_1e5_cpu_s_max": max((r["pld_calibration_cpu_s"] for r in small), default=None),
        "reference_ratio_max_rel_diff": max(abs(r["ratio_rel_diff"]) for r in refs),
    }
    if times:
        s.update(
            time_ratio_min=min(t["time_ratio"] for t in times),
            time_ratio_geomean=math.exp(statistics.fmean(math.log(t["time_ratio"]) for t in times)),
            privlearn_median_s_max=max(t["privlearn_median_s"] for t in in_scope),
            privlearn_cpu_median_s_max=max(t["privlearn_cpu_median_s"] for t in in_scope),
            sigma_rel_diff_max=max(abs(t["sigma_rel_diff"]) for t in times),
            same_grid_sigma_rel_diff_max=max(abs(t["same_grid_sigma_rel_diff"]) for t in times),
            same_grid_time_ratio_min=min(t["same_grid_time_ratio"] for t in times),
            same_grid_privlearn_median_s_max=max(
                t["privlearn_same_grid_median_s"] for t in in_scope
            ),
        )
        s["targets"] = {
            "calibration_time": {
                "target": f"<= {TARGET_SECONDS} s for T <= {TARGET_MAX_STEPS}",
                "met": all(t["time_ok"] for t in in_scope),
            },
            "calibration_cpu_time": {
                "target": f"<= {TARGET_SECONDS} s of CPU for T <= {TARGET_MAX_STEPS}",
                "met": all(t["cpu_time_ok"] for t in in_scope),
            },
            "calibration_cpu_time_table": {
                "target": f"<= {TARGET_SECONDS} s of CPU for every table schedule with "
                f"T <= {TARGET_MAX_STEPS} (one cold calibration each)",
                "met": s["table_schedules_T_le_1e5_cpu_over_target"] == 0,
            },
            "sigma_vs_dp_accounting": {
                "target": f"|rel diff| <= {TARGET_SIGMA_RTOL}",
                "met": all(t["sigma_ok"] for t in times),
            },
            "never_optimistic": {
                "target": f"dp_accounting epsilon at our sigma <= eps (1 + {TARGET_EPS_RTOL})",
                "met": all(t["eps_ok"] for t in times),
            },
        }
    return s


def readme_row(report: dict[str, Any], json_name: str) -> str:
    """This benchmark's row of the results table in README.md."""
    s, m = report["summary"], report["machine"]
    rows = report["table"]

    def pick(ds: str, est: str, eps: float) -> str:
        for r in rows:
            if (r["dataset"], r["estimator"], r["epsilon"]) == (ds, est, eps):
                return f"{r['ratio']:.3f}"
        return "n/a"

    eps_list = report["config"]["epsilons"]
    cells = []
    for ds, est in (
        ("adult", "DPSGDClassifier"),
        ("mnist", "DPSGDClassifier"),
        ("mnist", "DPSCDClassifier"),
        ("kddcup99", "DPSGDClassifier"),
    ):
        if any(r["dataset"] == ds for r in rows):
            cells.append(f"{est} {ds} " + " / ".join(pick(ds, est, e) for e in eps_list))
    lo, hi = s["pld_epsilon_of_rdp_sigma_at_eps1_range"] or (math.nan, math.nan)
    result = (
        f"sigma RDP / PLD at eps {' / '.join(f'{e:g}' for e in eps_list)}, delta 1e-6, defaults: "
        + "; ".join(cells)
        + f"; all {len(rows)} rows {s['ratio_min']:.3f}-{s['ratio_max']:.3f} "
        f"(median {s['ratio_median']:.3f}); RDP's 'eps 1' sigma is eps {lo:.2f}-{hi:.2f} by PLD; "
        f"issue's reference ratios within {100 * s['reference_ratio_max_rel_diff']:.1f}%"
    )
    targets = "n/a"
    if "targets" in s:
        t = s["targets"]
        tr = [x["time_ratio"] for x in report["timing"]]
        per = ", ".join(
            f"T {x['steps']} {x['privlearn_median_s']:.2f} s vs {x['dp_accounting_median_s']:.1f} s"
            for x in report["timing"]
        )
        span = f"{min(tr):.0f}x" if len(tr) == 1 else f"{min(tr):.0f}x-{max(tr):.0f}x"
        result += (
            f"; calibration privlearn vs dp_accounting (PLD, grid 1e-4): {per} ({span}); "
            f"sigma within {100 * s['sigma_rel_diff_max']:.2f}% (on dp_accounting's grid 1e-4: "
            f"{100 * s['same_grid_sigma_rel_diff_max']:.2f}%, max "
            f"{s['same_grid_privlearn_median_s_max']:.2f} s, "
            f">= {s['same_grid_time_ratio_min']:.0f}x)"
        )
        targets = (
            f"calibration <= {TARGET_SECONDS} s for T <= 1e5 (one core): "
            f"wall {harness.met(t['calibration_time']['met'])} "
            f"(max {s['privlearn_median_s_max']:.2f} s), "
            f"CPU {harness.met(t['calibration_cpu_time']['met'])} "
            f"(max {s['privlearn_cpu_median_s_max']:.2f} s); on the table's "
            f"{s['table_schedules_T_le_1e5']} schedules with T <= 1e5 (CPU, one cold run each): "
            f"{harness.met(t['calibration_cpu_time_table']['met'])} "
            f"({s['table_schedules_T_le_1e5_cpu_over_target']} over, max "
            f"{s['table_T_le_1e5_cpu_s_max']:.2f} s); "
            f"sigma within 0.2% of dp_accounting: {harness.met(t['sigma_vs_dp_accounting']['met'])}"
            + (
                ""
                if t["sigma_vs_dp_accounting"]["met"]
                else " (on its grid 1e-4: "
                f"{harness.met(s['same_grid_sigma_rel_diff_max'] <= TARGET_SIGMA_RTOL)})"
            )
            + "; "
            f"never optimistic by dp_accounting: {harness.met(t['never_optimistic']['met'])}"
        )
    details = (
        f"[{json_name}]({json_name}), {len(rows)} table rows, "
        f"{report['config']['reps']} reps (dp_accounting {report['config']['dpa_reps']}), "
        f"runtime {report['runtime_s']:.0f} s"
        + (" (`--quick`)" if report["config"]["quick"] else "")
    )
    mach = harness.readme_machine(m, "dp-accounting")
    return harness.row(BENCH, result, targets, m, details, mach)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the tables, write the JSON and the README row."""
    p = harness.cli(__doc__, BENCH)  # --quick: adult and phishing at eps 1, one timing target
    p.add_argument("--dpa-reps", type=int, default=1, help="dp_accounting repetitions")
    args = p.parse_args(argv)
    if args.reps < 1 or args.dpa_reps < 1:
        p.error("--reps and --dpa-reps must be positive")
    if harness.version("dp-accounting") is None:
        p.error("this benchmark needs dp_accounting (pip install dp-accounting)")

    machine = harness.machine()
    if args.quick:
        datasets, epsilons = ["adult", "phishing"], (1.0,)
        targets = list(TIMING)[:1]
    else:
        datasets, epsilons = list(DATASETS), EPSILONS
        targets = list(TIMING)
    print(
        f"bench {BENCH}: {len(datasets)} data sets, eps {epsilons}, {len(targets)} timing "
        f"targets, reps {args.reps}",
        file=sys.stderr,
    )
    start = harness.stopwatch()
    calibrate_sigma_pld(1.0, 1e-5, q=0.01, steps=1000)  # warm-up: imports, RDP order tables
    with harness.BackgroundLoad() as background:
        rows = ratio_table(datasets, epsilons)
        refs = references()
        times = timing(targets, args.reps, args.dpa_reps)
    harness.finish(machine, background)
    report = {
        "bench": BENCH,
        "config": {
            "delta": DELTA,
            "epsilons": list(epsilons),
            "datasets": {k: DATASETS[k] for k in datasets},
            "estimators": ESTIMATORS,
            "reps": args.reps,
            "dpa_reps": args.dpa_reps,
            "quick": args.quick,
            "privlearn_rtol": RTOL,
            "privlearn_search_interval": CALIBRATION_INTERVAL,
            "pld_epsilon_interval": DEFAULT_INTERVAL,
            "dp_accounting_interval": DEFAULT_INTERVAL,
            "dp_accounting_bracket": "[sigma_rdp / 2, sigma_rdp]",
            "dp_accounting_tol": "1e-3 x privlearn's sigma (absolute)",
        },
        "machine": machine,
        "table": rows,
        "references": refs,
        "timing": times,
        "runtime_s": start.elapsed(),
        "notes": [
            "sigma is the noise multiplier per unit of sensitivity of one Poisson-subsampled "
            "Gaussian step under add/remove-one; T counts steps x one-vs-rest problems.",
            "pld_epsilon_of_rdp_sigma: epsilon at delta of the RDP sigma by privlearn's PLD "
            "accountant (grid 1e-4): what the noise added before issue 20 was actually worth.",
            "rdp_calibration_s / pld_calibration_s in the table: one cold calibration each "
            "(caches cleared), measured while the table was built.",
            "dp_accounting is given the bracket [sigma_rdp / 2, sigma_rdp] (favourable to it); "
            "its time excludes computing that bracket. privlearn's time includes its own RDP "
            "bracket. One repetition of dp_accounting per target (about 0.5 s per evaluation).",
            "privlearn_cpu_median_s: process CPU time of the calibration (single-threaded: "
            "OMP_NUM_THREADS=1, scipy's FFT on one worker), the one-core cost on a shared "
            "machine where the wall time also counts waiting for the CPU.",
            "privlearn_same_grid_*: privlearn's calibration with interval=1e-4 (dp_accounting's "
            "grid) instead of its default search grid 2e-4; at the same grid the two "
            "accountants agree on epsilon to about 1e-8 (their sigmas differ by the two "
            "searches' tolerances, about 1e-3). The coarser default search grid is pessimistic "
            "by up to a few tenths of a percent in sigma where one step's loss is small "
            "(q 0.01, sigma ~12, T 1e5).",
        ],
    }
    summary = summarize(rows, refs, times)
    report["summary"] = summary
    print(json.dumps(summary, indent=2))
    harness.publish(report, harness.out_dir(args), BENCH, readme_row(report, f"{BENCH}.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
