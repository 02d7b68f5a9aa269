"""Distributed Gaussian DP-SGD and DP-SCD on Dask (``privlearn.distributed``): rows per second
against the number of workers, the per-step round trip, and a projection to 8 and 64 workers
for 1e9 x 100.

What is measured (medians over ``--reps``, contenders interleaved)
-----------------------------------------------------------------
- **Throughput.** One epoch of Gaussian DP-SGD (log-loss, Poisson rate ``L / n``, clip 1,
  sigma 1) and of dual DP-SCD (log-loss, clip 0.1) on ``n x d`` synthetic unit-norm rows, with
  a large expected batch ``L`` (``--batch``): the single-machine core (``privlearn.linear``,
  1 thread) and ``privlearn.distributed`` on a ``LocalCluster`` of 1 and 2 workers (threads in
  one process, ``processes=False``: the per-step kernels release the GIL), rows chunked evenly
  among them. Rows per second = ``n * epochs / time``. Every distributed run is checked to equal
  the single-machine model bit for bit.
- **Round trip.** Time per step of a run whose batches are nearly empty (``L = 1``, 2 rows per
  worker, ``d = 100``): the cost of one synchronisation (broadcast the iterate, each actor
  answers, the driver adds the sums, the noise and the update), for 1 and 2 in-process workers
  and for 2 worker processes (``processes=True``).

Projection (documented model, from the measured numbers)
--------------------------------------------------------
An epoch over ``n`` rows with expected batch ``L`` and ``W`` workers costs about
``(n / L) * rtt + n * c_row / W``: ``n / L`` synchronisations of ``rtt`` each (the measured
process round trip; across hosts add the network latency), and the rows' work ``c_row`` (the
measured single-worker seconds per row, which includes the block walks of the sampler) split
among the workers. The parallel efficiency is ``compute / (compute + sync)``; it reaches 90%
when ``L >= 9 * rtt * W / c_row``. The projection for ``n = 1e9``, ``d = 100`` (``c_row`` scaled
by ``100 / d``) at 8 and 64 workers reports the epoch time and the batch size needed for 90%
efficiency. Per-step synchronisation therefore needs large batches, which DP-SGD at this scale
uses anyway (a Poisson rate of 1e-4 on 1e9 rows is L = 1e5).

Usage: ``python bench/python/bench_distributed.py [--quick] [--reps 3] [--out DIR]``: writes
``<out>/distributed.json`` and its row of ``<out>/README.md``.
"""

from __future__ import annotations

import json
from typing import Any

import harness
import numpy as np

BENCH = "distributed"


def make_data(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ rng.normal(size=d) + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def sgd_kw(batch: int, epochs: int) -> dict[str, Any]:
    return dict(
        loss="log_loss",
        mechanism="gaussian",
        sampling="poisson",
        learning_rate="constant",
        batch_size=batch,
        epochs=epochs,
        clip=1.0,
        sigma=1.0,
        eta0=1.0,
    )


def scd_kw(batch: int, epochs: int) -> dict[str, Any]:
    return dict(
        loss="log_loss",
        variant="dual",
        sampling="poisson",
        batch_size=batch,
        epochs=epochs,
        clip=0.1,
        noise_std=0.1,
        alpha=1e-3,
    )


def throughput(n: int, d: int, batch: int, reps: int, workers: list[int]) -> dict[str, Any]:
    import dask.array as da
    from distributed import Client, LocalCluster

    from privlearn.distributed import linear as dist
    from privlearn.linear import scd_train, sgd_train
    from privlearn.random import key_from_seed

    X, y = make_data(n, d)
    key = key_from_seed(1)
    epochs = 1
    single = {
        "sgd": lambda: sgd_train(X, y, key=key, n_threads=1, **sgd_kw(batch, epochs)),
        "scd": lambda: scd_train(X, y, key=key, n_threads=1, **scd_kw(batch, epochs)),
    }
    ref = {k: f() for k, f in single.items()}
    clusters = {}
    try:
        for w in workers:
            cluster = LocalCluster(
                processes=False, n_workers=w, threads_per_worker=1, dashboard_address=":0"
            )
            client = Client(cluster)
            chunks = tuple(len(c) for c in np.array_split(np.arange(n), w))
            Xd = da.from_array(X, chunks=(chunks, d)).persist()
            yd = da.from_array(y, chunks=(chunks,)).persist()
            clusters[w] = (cluster, client, Xd, yd)
        runs = {
            **{f"{k}-single": f for k, f in single.items()},
        }
        for w, (_, client, Xd, yd) in clusters.items():
            runs[f"sgd-{w}w"] = lambda Xd=Xd, yd=yd, c=client: dist.sgd_train(
                Xd, yd, key=key, n_threads=1, client=c, **sgd_kw(batch, epochs)
            )
            runs[f"scd-{w}w"] = lambda Xd=Xd, yd=yd, c=client: dist.scd_train(
                Xd, yd, key=key, n_threads=1, client=c, **scd_kw(batch, epochs)
            )
        cmp = harness.compare(runs, reps)
    finally:
        for cluster, client, _, _ in clusters.values():
            client.close()
            cluster.close()
    steps = {k: int(r.n_steps) for k, r in ref.items()}
    out: dict[str, Any] = {"background_load_cores": cmp.background_load_cores}
    for name, t in cmp.timings.items():
        kind = name.split("-")[0]
        out[name] = {
            **t.as_dict(),
            "rows_per_s": n * epochs / t.median,
            "steps": steps[kind],
            "per_step_s": t.median / steps[kind],
            "identical_to_single": bool(np.array_equal(t.value.coef, ref[kind].coef)),
        }
    return out


def round_trip(reps: int, d: int = 100) -> dict[str, Any]:
    import dask.array as da
    from distributed import Client, LocalCluster

    from privlearn.distributed import linear as dist
    from privlearn.random import key_from_seed

    out = {}
    for label, processes, w in [("1w-threads", False, 1), ("2w-threads", False, 2)] + [
        ("2w-processes", True, 2)
    ]:
        X, y = make_data(2 * w, d, seed=3)
        with (
            LocalCluster(
                processes=processes, n_workers=w, threads_per_worker=1, dashboard_address=":0"
            ) as cluster,
            Client(cluster) as client,
        ):
            Xd = da.from_array(X, chunks=((2,) * w, d)).persist()
            yd = da.from_array(y, chunks=((2,) * w,)).persist()
            steps = 400
            kw = {**sgd_kw(1, 1), "steps": steps}

            def run(Xd: Any = Xd, yd: Any = yd, kw: dict[str, Any] = kw) -> Any:
                return dist.sgd_train(Xd, yd, key=key_from_seed(2), client=client, **kw)

            med = harness.compare({label: run}, reps).median(label)
        out[label] = {
            "workers": w,
            "processes": processes,
            "steps": steps,
            "per_step_s": med / steps,
        }
    return out


def projection(c_row: float, d_measured: int, rtt: float) -> dict[str, Any]:
    n, d = 1e9, 100
    c = c_row * d / d_measured
    rows = {}
    for w in (8, 64):
        compute = n * c / w
        l90 = 9 * rtt * w / c
        entries = {}
        for batch in (1e4, 1e5, 1e6):
            sync = n / batch * rtt
            entries[f"L={batch:.0e}"] = {
                "epoch_s": compute + sync,
                "efficiency": compute / (compute + sync),
            }
        rows[f"{w} workers"] = {
            "compute_s_per_epoch": compute,
            "batch_for_90pct": l90,
            "by_batch": entries,
        }
    return {"n": n, "d": d, "c_row_s": c, "rtt_s": rtt, "workers": rows}


def readme_row(report: dict[str, Any], json_name: str) -> str:
    tp, rt, pj, m = (report[k] for k in ("throughput", "round_trip", "projection", "machine"))
    cfg = report["config"]

    def rate(name: str) -> str:
        return f"{tp[name]['rows_per_s'] / 1e6:.2f} M"

    parts = []
    for kind in ("sgd", "scd"):
        ws = [k for k in tp if k.startswith(kind) and k.endswith("w")]
        parts.append(
            f"{'DP-SGD' if kind == 'sgd' else 'DP-SCD'} rows/s single {rate(kind + '-single')}, "
            + ", ".join(f"{k.split('-')[1]} {rate(k)}" for k in ws)
        )
    same = all(v["identical_to_single"] for v in tp.values())
    rtts = ", ".join(f"{k} {v['per_step_s'] * 1e3:.2f} ms" for k, v in rt.items())
    w8, w64 = pj["workers"]["8 workers"], pj["workers"]["64 workers"]
    result = (
        "; ".join(parts) + f"; round trip per step {rtts}; projection 1e9 x 100 (DP-SGD): compute "
        f"{w8['compute_s_per_epoch']:.0f} s/epoch on 8 workers, {w64['compute_s_per_epoch']:.0f} s"
        f" on 64; 90% efficiency needs L >= {w8['batch_for_90pct']:.0f} (8) / "
        f"{w64['batch_for_90pct']:.0f} (64)"
    )
    targets = f"distributed == single-machine bit for bit: {'met' if same else '**not met**'}"
    details = (
        f"[{json_name}]({json_name}), n = {cfg['n']}, d = {cfg['d']}, L = {cfg['batch']}, "
        f"{cfg['reps']} reps"
    )
    return harness.row(BENCH, result, targets, m, details)


def main(argv: list[str] | None = None) -> int:
    parser = harness.cli(__doc__, BENCH, reps=3)  # --quick: small data, 1 rep (< 1 min)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--batch", type=int, default=20_000)
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.reps, args.batch = 100_000, 1, 5_000
    machine, sw = harness.machine(), harness.stopwatch()
    tp = throughput(args.n, args.d, args.batch, args.reps, [1, 2])
    background = tp.pop("background_load_cores")
    rt = round_trip(max(args.reps, 3))
    c_row = tp["sgd-single"]["median_s"] / args.n  # compute only (no synchronisation)
    pj = projection(c_row, args.d, rt["2w-processes"]["per_step_s"])
    report = {
        "bench": BENCH,
        "config": {"n": args.n, "d": args.d, "batch": args.batch, "reps": args.reps},
        "throughput": tp,
        "round_trip": rt,
        "projection": pj,
        "machine": harness.finish(machine, background),
        "runtime_s": sw.elapsed(),
    }
    for name, v in tp.items():
        print(
            f"{name:12s} {v['median_s']:8.3f} s  {v['rows_per_s'] / 1e6:7.2f} M rows/s  "
            f"{v['per_step_s'] * 1e3:7.2f} ms/step  identical={v['identical_to_single']}"
        )
    for name, v in rt.items():
        print(f"round trip {name:14s} {v['per_step_s'] * 1e3:.3f} ms/step")
    print(json.dumps(pj, indent=1))
    harness.publish(report, harness.out_dir(args), BENCH, readme_row(report, f"{BENCH}.json"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
