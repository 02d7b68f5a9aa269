"""Cost of the exact lattice noise (issue 19, item 9): a DP-SGD epoch with the discrete
Gaussian on the lattice vs the same epoch with the old floating-point Box-Muller noise.

The old float path is gone from the core, so the comparison is made from parts measured side by
side in one process, interleaved (round robin) so that background load hits all alike:

- ``epoch``: one epoch of :func:`privlearn.linear.sgd_train` (C++ core, 1 thread, Gaussian
  mechanism, Poisson sampling, the adult default shape: ``n = 30162``, ``d = 104`` dense rows
  in the unit ball, expected lot ``L = 64``, ``clip = 1``, ``sigma = 1``): today's epoch,
  lattice noise included;
- ``lattice``: the discrete Gaussian draws of that epoch (``steps * d`` draws, one core call,
  1 thread) plus the rounding/addition (negligible);
- ``box_muller``: the same number of Box-Muller normals (``Stream.normal``, 1 thread): the old
  noise's cost.

The old epoch is estimated as ``epoch - lattice + box_muller`` and the slowdown reported is
``epoch / old - 1``. Medians over ``--reps`` repetitions of the calling thread's CPU time
(``--clock cpu``, the default: a busy shared machine preempts a long call and inflates its wall
time; everything here runs on one thread) or wall time (``--clock wall``).

Usage::

    python bench/python/bench_lattice_noise.py [--quick] [--reps 7] [--clock cpu] [--out DIR]

Writes ``<out>/lattice_noise.json``.
"""

from __future__ import annotations

import json
import math

import harness
import numpy as np

from privlearn.linear import sgd_train
from privlearn.random import Stream, key_from_seed, noise_lattice


def _data(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X *= (rng.uniform(size=n) / np.linalg.norm(X, axis=1))[:, None]
    w = rng.normal(size=d)
    y = np.where(X @ w + 0.1 * rng.normal(size=n) > 0, 1.0, -1.0)
    return np.ascontiguousarray(X), y


def main(argv: list[str] | None = None) -> int:
    ap = harness.cli(__doc__, "lattice_noise", reps=7)  # --quick: 3 reps, to scratch
    ap.add_argument("--n", type=int, default=30162)
    ap.add_argument("--d", type=int, default=104)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = ap.parse_args(argv)
    if args.quick:
        args.reps = min(args.reps, 3)

    X, y = _data(args.n, args.d)
    key = key_from_seed(1)
    kw = dict(
        loss="log_loss", mechanism="gaussian", sampling="poisson", batch_size=args.batch_size,
        epochs=1, clip=1.0, sigma=args.sigma, alpha=1e-4, learning_rate="constant", eta0=0.5,
    )  # fmt: skip
    steps = sgd_train(X, y, key=key, n_threads=1, **kw).n_steps
    draws = steps * args.d
    variance = noise_lattice(args.sigma, args.d)[2]
    noise = Stream(key=key, stream=99)

    def epoch() -> None:
        sgd_train(X, y, key=key, n_threads=1, **kw)

    def lattice() -> None:
        noise.discrete_gaussian(0, draws, variance, n_threads=1)

    def box_muller() -> None:
        noise.normal(0, draws, n_threads=1)

    machine = harness.machine()
    tasks = {"epoch": epoch, "lattice": lattice, "box_muller": box_muller}
    cmp = harness.compare(tasks, args.reps, baseline="epoch", clock=args.clock)
    harness.finish(machine, cmp)
    med = {k: t.median for k, t in cmp.timings.items()}
    times = {k: t.times for k, t in cmp.timings.items()}
    old = med["epoch"] - med["lattice"] + med["box_muller"]
    result = {
        "bench": "lattice_noise",
        "config": {
            "n": args.n,
            "d": args.d,
            "batch_size": args.batch_size,
            "sigma": args.sigma,
            "steps": steps,
            "draws_per_epoch": draws,
            "reps": args.reps,
            "threads": 1,
            "clock": "thread CPU time" if args.clock == "cpu" else "wall time",
            "data": "synthetic dense, adult-like shape (n = 30162, d = 104), rows in the unit ball",
        },  # fmt: skip
        "machine": machine,
        "timings": cmp.as_dict()["timings"],
        "median_s": med,
        "all_s": times,
        "ns_per_draw": {
            "lattice": med["lattice"] / draws * 1e9,
            "box_muller": med["box_muller"] / draws * 1e9,
        },
        "epoch_old_estimate_s": old,
        "slowdown": med["epoch"] / old - 1.0,
        "noise_share_of_epoch": med["lattice"] / med["epoch"],
        "note": (
            "old epoch = epoch - lattice draws + Box-Muller draws, all measured in this process; "
            "1 thread; medians"
        ),
    }
    harness.publish(result, harness.out_dir(args), "lattice_noise", None)
    print(json.dumps({k: result[k] for k in ("median_s", "ns_per_draw", "slowdown")}, indent=2))
    assert math.isfinite(result["slowdown"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
