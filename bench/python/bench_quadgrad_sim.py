"""Simulator speed: one encrypted NAG iteration at ``n = 16384``, ``d = 16``, ``log_n = 15``.

Contenders, side by side in one process on the same data and parameters:

- ``core``: :func:`privlearn.he.train_logreg` on the simulator with the C++ kernels (noise on,
  per-slot error bounds tracked), 1 thread and 2 threads;
- ``reference``: the same with the numpy twin kernels (bit-identical results);
- ``tenseal``: the same operation sequence on real CKKS (SEAL through ``tenseal.sealapi``), keys
  generated beforehand (not timed).

Each contender runs one enhanced-NAG iteration from encryption to decryption (the encryption of
the 32 data ciphertexts and the final decryption are included for all three; the data owner's
preparation of ``Z`` and ``B-bar`` in the clear is not). Parameters: a SEAL
chain ``[60, 40 x 18, 60]`` at ``log_n = 15`` (:func:`privlearn.he.tenseal_params`), 16384 slots,
``d' = 32`` columns, 512 rows per ciphertext, 32 data ciphertexts. ``--quick`` runs real CKKS on
``n = 2048`` (4 ciphertexts) and compares the simulator with it on that same ``n``.

Also reported: the calibrated cost model's estimate of the same TenSEAL iteration (a check of
``bench/python/calibrate_ckks_cost.py``'s table against a measured run).

Targets: core >= 10x the numpy twin; core >= 100x real CKKS at ``log_n = 15``.

Usage: ``python bench/python/bench_quadgrad_sim.py [--quick] [--reps 3] [--out DIR]``: writes
``<out>/quadgrad_sim.json`` and its row of ``<out>/README.md``.
``run_simulator_bench(quick)`` returns the same dictionary (used by ``bench_quadgrad.py``).
"""

from __future__ import annotations

import json
from typing import Any, Callable

import harness
import numpy as np

BENCH = "quadgrad_sim"
N, D, LOG_N = 16384, 16, 15


def _data(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    w = rng.normal(size=d)
    y = (X @ w - 0.5 * w.sum() + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def run_simulator_bench(quick: bool = False, reps: int = 3) -> dict[str, Any]:
    """Time one encrypted iteration on the simulator (core, numpy twin) and on real CKKS."""
    from privlearn.he import Simulator, plan_logreg, tenseal_params, train_logreg
    from privlearn.he._train import _prepare as _prep
    from privlearn.he._train import _run

    params = tenseal_params(log_n=LOG_N, levels=18, log_p=40, log_q0=60, log_special=60)
    X, y = _data(N, D)
    out: dict[str, Any] = {
        "n": N,
        "d": D,
        "log_n": LOG_N,
        "params": {"log_q": params.log_q, "log_p": params.log_p, "slots": params.slots},
        "quick": quick,
        "reps": reps,
        "machine": harness.machine(),
    }
    run = dict(enhanced=True, iterations=1, params=params, seed=1)

    def timed(Xs: np.ndarray, ys: np.ndarray, make: Callable[[], Any]) -> Any:
        # the encrypted part only: encryption, one iteration, decryption
        n, d, Z, bbar = _prep(Xs, np.where(ys == 1, 1.0, -1.0), True)
        return lambda: _run(
            make(),
            n,
            d,
            Z,
            bbar,
            enhanced=True,
            iterations=1,
            sigmoid_degree=5,
            schedule=None,
            bbar_bits=40,
        )

    makers = {
        "core_1t": lambda: Simulator(params, seed=1, n_threads=1),
        "core_2t": lambda: Simulator(params, seed=1, n_threads=2),
        "reference": lambda: Simulator(params, seed=1, backend="reference"),
    }
    cmp = harness.compare({k: timed(X, y, f) for k, f in makers.items()}, reps, warmup=0)
    out["simulator"] = {
        k: {**t.as_dict(), "n_ct": t.value.layout.n_ct} for k, t in cmp.timings.items()
    }
    with harness.BackgroundLoad() as load:
        out["same_bits_core_reference"] = bool(
            np.array_equal(
                train_logreg(X, y, **run, backend="simulator").coef_,
                train_logreg(X, y, **run, backend="reference").coef_,
            )
        )
        # real CKKS
        n_ts = 2048 if quick else N
        Xt, yt = X[:n_ts], y[:n_ts]
        try:
            from privlearn.he._tenseal import TenSEALEngine

            plan = plan_logreg(n_ts, D, enhanced=True, iterations=1, params=params)
            with harness.stopwatch() as sw:
                engine = TenSEALEngine(params)
                engine.prepare_rotations(plan.rotation_steps)
            keygen = sw.seconds
            ts, real = harness.timed(timed(Xt, yt, lambda: engine))
            same_n = harness.compare(
                {"core_1t": timed(Xt, yt, lambda: Simulator(params, seed=1, n_threads=1))},
                reps,
                warmup=0,
            )["core_1t"]
            sim_same_n, sim_rep = same_n.median, same_n.value
            exact = train_logreg(Xt, yt, **run, noise=False)
            out["tenseal"] = {
                "n": n_ts,
                "n_ct": real.layout.n_ct,
                "seconds": ts,
                "keygen_seconds": keygen,
                "core_1t_same_n_s": sim_same_n,
                "cost_model_estimate_s": plan.est_learn_seconds,
                "op_counts_equal": real.op_counts == sim_rep.op_counts,
                "max_dev_real_vs_exact": float(np.abs(real.coef_ - exact.coef_).max()),
                "max_dev_sim_vs_exact": float(np.abs(sim_rep.coef_ - exact.coef_).max()),
                "sim_error_bound": sim_rep.error_bound,
            }
        except ImportError as exc:  # pragma: no cover - environment dependent
            out["tenseal"] = {"unavailable": str(exc)}
    harness.finish(out["machine"], cmp)
    out["background_load_cores"] = cmp.background_load_cores
    out["background_load_cores_tenseal"] = load.cores
    sim = out["simulator"]
    ratios = {"core_vs_reference": sim["reference"]["median_s"] / sim["core_1t"]["median_s"]}
    ts_res = out["tenseal"]
    if "seconds" in ts_res:
        ratios["core_vs_tenseal"] = ts_res["seconds"] / ts_res["core_1t_same_n_s"]
        ratios["cost_model_vs_tenseal"] = ts_res["cost_model_estimate_s"] / ts_res["seconds"]
    out["ratios"] = ratios
    out["targets"] = {
        "core_vs_reference>=10": ratios["core_vs_reference"] >= 10,
        "core_vs_tenseal>=100": ratios.get("core_vs_tenseal", 0.0) >= 100,
    }
    return out


def readme_row(res: dict[str, Any]) -> str:
    sim, r = res["simulator"], res["ratios"]
    ts = res["tenseal"]
    parts = [
        f"one enhanced-NAG iteration, n = {res['n']}, d = {res['d']}, log_n = {res['log_n']}: "
        f"core 1t {sim['core_1t']['median_s'] * 1e3:.0f} ms, 2t "
        f"{sim['core_2t']['median_s'] * 1e3:.0f} ms, numpy twin "
        f"{sim['reference']['median_s'] * 1e3:.0f} ms (core/twin {r['core_vs_reference']:.1f}x, "
        "same bits)"
    ]
    if "seconds" in ts:
        parts.append(
            f"real CKKS (TenSEAL) n = {ts['n']}: {ts['seconds']:.1f} s vs core "
            f"{ts['core_1t_same_n_s'] * 1e3:.0f} ms ({r['core_vs_tenseal']:.0f}x); cost model "
            f"{r['cost_model_vs_tenseal']:.2f}x the measured time"
        )
    met = ", ".join(
        f"{k.replace('>=', ' >= ')}x: {'met' if v else '**not met**'}"
        for k, v in res["targets"].items()
    )
    m = res["machine"]
    words = (m.get("cpu_model") or "?").split()
    load = res["background_load_cores"]
    machine = f"{' '.join(words[:2])}, {m['cpu_count']} cores (shared)" + (
        f"; background load {load:.1f} cores" if load is not None else ""
    )
    details = f"[{BENCH}.json]({BENCH}.json), {res['reps']} reps" + (
        ", quick" if res["quick"] else ""
    )
    return f"| `{BENCH}` | {'; '.join(parts)} | {met} | {machine} | {m['date'][:10]} | {details} |"


def main(argv: list[str] | None = None) -> int:
    args = harness.cli(__doc__, BENCH, reps=3).parse_args(argv)
    res = run_simulator_bench(args.quick, args.reps)
    harness.publish(res, harness.out_dir(args), BENCH, readme_row(res))
    print(json.dumps(res["ratios"], indent=1))
    print(readme_row(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
