"""Issue 32, item 2: the fixed cost of a fit against the floor of an epoch, ``X.T @ (X @ w)``.

The fixed cost of a fit is everything but the epochs: the input checks, the label scan, the
planning (calibration, the noisy count), the rows the trainer sees (projection, intercept
column). Measured as

    fixed = fit (1 epoch, nothing declared) - the trainer's own work,

where the trainer's own work is the core call the fit made, captured during the warm-up fit and
replayed with the same arguments on the current build's core with ``check_finite=False`` (the
pure epoch: no checks). Replaying on one build for both trees makes the subtraction the same
for the code before and after a change (an older core has no ``check_finite``; its check would
otherwise be counted as epoch work).

Each tree runs in its own child process (``--child``); the parent runs the children of the
trees given (``--tree LABEL=PYTHONDIR``) in alternation for ``--rounds`` rounds, and each child
times its contenders interleaved (:func:`harness.compare`) on one thread: ``floor``; per
estimator (``DPSGDClassifier`` and ``DPSCDClassifier`` with their defaults, ``epochs=1``,
``n_threads=1``, no ``n_samples``, no ``classes``) its ``fit`` and its replayed ``core``
call. Reported: ``fixed / floor`` = (median fit - median core) / median floor per child, and
the median over the rounds; and, paired within each fit (less noisy when the epoch is long),
``outside_core / floor``: the median over the fits of (the fit's time - its own core call's
time) / median floor (exact for a fit that skips the core's finiteness pass, as after issue 32
item 2; a lower bound before it, whose core call includes a check of the copied rows).
Data: ``n`` x 100 dense rows, uniformly random unit-norm directions, labels from a random
linear model (as ``bench_epoch_floor.py``).

Usage::

    python bench/python/bench_fixed_cost.py --n 200000 --reps 5 --rounds 2 \\
        --tree before=/tmp/before/python --tree after=python [--out bench/results]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import harness

BENCH = "fixed_cost"
ESTIMATORS = ("DPSGDClassifier", "DPSCDClassifier")
KERNELS = {
    "DPSGDClassifier": ("sgd", "sgd_train_dense"),
    "DPSCDClassifier": ("scd", "scd_train_dense"),
}


class _Capture:
    """A stand-in for ``privlearn._core`` in a trainer module that records the last call of
    one kernel (its arguments) and the wall time of each call, and forwards everything."""

    def __init__(self, core: Any, kernel: str) -> None:
        self._core, self._kernel, self.call = core, kernel, None
        self.seconds: list[float] = []

    def __getattr__(self, name: str) -> Any:
        f = getattr(self._core, name)
        if name != self._kernel:
            return f

        def spy(*args: Any, **kw: Any) -> Any:
            self.call = (args, kw)
            t0 = time.perf_counter()
            out = f(*args, **kw)
            self.seconds.append(time.perf_counter() - t0)
            return out

        return spy


def _load_core(path: Path) -> Any:
    """The ``_core`` extension at ``path`` under another module name (a second build)."""
    spec = importlib.util.spec_from_file_location("_core", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def child(n: int, reps: int, replay_core: Path) -> dict[str, Any]:
    import numpy as np
    import threadpoolctl

    import privlearn
    import privlearn.linear as linear

    warnings.simplefilter("ignore")
    threadpoolctl.threadpool_limits(1)
    replay = _load_core(replay_core)
    d = 100
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X @ rng.standard_normal(d) > 0).astype(int)
    w = rng.standard_normal(d)
    contenders: dict[str, Any] = {"floor": lambda: X.T @ (X @ w)}
    calls: dict[str, Any] = {}
    captures: dict[str, _Capture] = {}
    for name in ESTIMATORS:
        module_name, kernel = KERNELS[name]
        module = importlib.import_module(f"privlearn.linear.{module_name}")
        cls = getattr(linear, name)

        def fit(cls: Any = cls) -> None:
            cls(epochs=1, n_threads=1, verbose=0, seed=1).fit(X, y)

        cap = _Capture(module._core, kernel)
        module._core = cap  # stays for the timed fits: each one's core call is timed too
        fit()  # warm-up: fills the calibration cache, captures the core call
        cap.seconds.clear()
        captures[name] = cap
        args, kw = cap.call
        calls[name] = {"kernel": kernel, "view": "intercept" in kw}
        f = getattr(replay, kernel)

        def core(f: Any = f, args: Any = args, kw: Any = kw) -> None:
            f(*args, **{**kw, "check_finite": False})

        contenders[f"fit_{name}"] = fit
        contenders[f"core_{name}"] = core
    m = harness.machine()
    cmp = harness.compare(contenders, repeats=reps, warmup=0)
    fl = cmp.median("floor")
    fixed = {name: cmp.median(f"fit_{name}") - cmp.median(f"core_{name}") for name in ESTIMATORS}
    # paired, in the same call: the fit's time outside its core call (the old binding's own
    # finiteness pass over the copy of X, inside the core call, is not counted: a lower bound
    # for a build before issue 32 item 2, exact after it, whose fits skip that pass)
    outside = {}
    for name in ESTIMATORS:
        totals, inner = cmp[f"fit_{name}"].times, captures[name].seconds
        assert len(inner) == len(totals), (len(inner), len(totals))
        outside[name] = statistics.median(t - c for t, c in zip(totals, inner))
    return {
        "privlearn": harness.tree_label(Path(privlearn.__file__).parent),
        "n": n,
        "d": d,
        "calls": calls,
        "fixed_s": fixed,
        "fixed_over_floor": {k: v / fl for k, v in fixed.items()},
        "outside_core_s": outside,
        "outside_core_over_floor": {k: v / fl for k, v in outside.items()},
        "machine": harness.finish(m, cmp),
        **cmp.as_dict(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tree", action="append", default=[], help="LABEL=PYTHONDIR (repeatable)")
    ap.add_argument("--replay-core", type=Path, default=None, help="the _core*.so to replay on")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--child", action="store_true")
    args = ap.parse_args()
    here = Path(__file__).resolve()
    replay = args.replay_core
    if replay is None:
        replay = next((harness.REPO / "python" / "privlearn").glob("_core*.so"))
    if args.child:
        print(json.dumps(child(args.n, args.reps, replay)))
        return
    trees = dict(t.split("=", 1) for t in args.tree) or {"this": str(harness.REPO / "python")}
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in trees}
    for r in range(args.rounds):
        for label in trees if r % 2 == 0 else list(trees)[::-1]:
            env = dict(os.environ, PYTHONPATH=str(Path(trees[label]).resolve()))
            cmd = [sys.executable, str(here), "--child", "--n", str(args.n), "--reps",
                   str(args.reps), "--replay-core", str(Path(replay).resolve())]  # fmt: skip
            out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
            res = json.loads(out.stdout.strip().splitlines()[-1])
            runs[label].append(res)
            print(f"round {r + 1} {label}: replayed {json.dumps(res['fixed_over_floor'])} "
                  f"outside core {json.dumps(res['outside_core_over_floor'])} "
                  f"(floor {res['timings']['floor']['median_s']:.4f} s)",
                  file=sys.stderr)  # fmt: skip
    summary = {
        label: {
            f"{what}:{name}": statistics.median(x[what][name] for x in xs)
            for what in ("fixed_over_floor", "outside_core_over_floor")
            for name in ESTIMATORS
        }
        for label, xs in runs.items()
    }
    labels = {k: harness.tree_label(v) for k, v in trees.items()}
    report = {"bench": BENCH, "n": args.n, "reps": args.reps, "rounds": args.rounds,
              "trees": labels, "fixed_over_floor_median": summary, "runs": runs}  # fmt: skip
    print(json.dumps(summary, indent=2))
    if args.out is not None:
        harness.write_json(report, args.out / f"{BENCH}_n{args.n}.json")


if __name__ == "__main__":
    main()
