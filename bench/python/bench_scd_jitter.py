"""The alpha jitter of dual DP-SCD with a hidden dual state (issue 20): test accuracy on adult.

Settings (adult.data / adult.test as the DP-SCD reproduction prepares them, 88 features, rows
projected onto the unit ball, public n):

- ``hinge``: the issue's setting: hinge, eps 1, delta 1e-3, L 500, C 0.1, 20 epochs,
  lambda 1e-4, no intercept;
- ``defaults``: the estimator's defaults (log_loss, eps 1, delta 1e-6, L 100, C 0.01,
  20 epochs, lambda 1e-4, intercept column 0.5).

Variants, all with the same noise multiplier ``sigma`` (the accountant's, which does not depend
on the sensitivity):

- ``old``: before issue 20: ``sqrt(2) sigma C`` on ``v`` and fresh ``N(0, 2 sigma^2 C^2)`` on
  every ``alpha`` coordinate every step (lazy catch-up);
- ``paper``: Algorithm 1 as printed: ``sqrt(2) sigma C`` on ``v`` and on the batch's ``alpha``;
- ``jitter=k``: issue 20: ``sigma C`` on ``v`` only, ``N(0, (k sigma C)^2)`` on the batch's
  ``alpha`` (``k = 0``: none);
- ``nonprivate``: clip, no noise.

Run: ``PYTHONPATH=python PRIVLEARN_DATA=../shared/data python bench/python/bench_scd_jitter.py
[--seeds 5] [--jitters 0 0.25 0.5 1 2] [--quick] [--out DIR]``. One core, about a minute
(``--quick``: 2 seeds, jitters 0 and 1, the hinge setting). Writes ``<out>/scd_jitter.json``
(the accuracies per variant and seed, the machine record; no README row).
"""

from __future__ import annotations

import math
import warnings

import harness
import numpy as np

from privlearn.experiments.dpscd import prepare_dataset
from privlearn.linear import DPSCDClassifier, scd_train
from privlearn.random import Stream

SETTINGS = {
    "hinge": dict(loss="hinge", delta=1e-3, batch_size=500, clip=0.1, fit_intercept=False),
    "defaults": dict(loss="log_loss", delta=1e-6, batch_size=100, clip=0.01, fit_intercept=True),
}


def rows(X: np.ndarray, fit_intercept: bool) -> np.ndarray:
    """The estimator's training rows: projected onto the unit ball (radius sqrt(1 - 0.25)
    with the intercept column 0.5 appended)."""
    radius = math.sqrt(0.75) if fit_intercept else 1.0
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    X = X * np.minimum(1.0, radius / np.maximum(norms, 1e-300))
    if fit_intercept:
        X = np.hstack([X, np.full((X.shape[0], 1), 0.5)])
    return np.ascontiguousarray(X)


def main(argv: list[str] | None = None) -> int:
    ap = harness.cli(__doc__, "scd_jitter", reps=None)
    ap.add_argument("--seeds", type=int, default=None, help="default 5 (--quick: 2)")
    ap.add_argument("--jitters", type=float, nargs="*", default=None, help="default 0 .25 .5 1 2")
    ap.add_argument("--settings", nargs="*", default=None, choices=list(SETTINGS))
    args = ap.parse_args(argv)
    seeds = args.seeds or (2 if args.quick else 5)
    jitters = args.jitters if args.jitters is not None else [0.0, 1.0] if args.quick else [
        0.0, 0.25, 0.5, 1.0, 2.0]  # fmt: skip
    settings = args.settings or (["hinge"] if args.quick else list(SETTINGS))
    machine = harness.machine()
    sw = harness.stopwatch()
    split = prepare_dataset("adult")
    X_tr = np.vstack([split.X_train, split.X_val])
    y_tr = np.concatenate([split.y_train, split.y_val])
    n = X_tr.shape[0]
    results: list[dict] = []
    for name in settings:
        s = SETTINGS[name]
        Xa = rows(X_tr, s["fit_intercept"])
        Xt = rows(split.X_test, s["fit_intercept"])
        est = DPSCDClassifier(
            loss=s["loss"],
            epsilon=1.0,
            delta=s["delta"],
            n_samples=n,
            batch_size=s["batch_size"],
            clip=s["clip"],
            epochs=20,
            alpha=1e-4,
            fit_intercept=s["fit_intercept"],
            alpha_jitter=0.0,
            seed=0,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X_tr, y_tr)
        p = est.privacy_
        sigma, C, L = p.sigma, s["clip"], s["batch_size"]
        common = dict(
            loss=s["loss"],
            variant="dual",
            sampling="poisson",
            alpha=1e-4,
            batch_size=L,
            steps=p.steps,
            rate=L / n,
            n_scale=float(n),
            clip=C,
        )
        sq2 = math.sqrt(2.0) * sigma * C
        variants = {
            "old": dict(noise_std=sq2),
            "paper": dict(noise_std=sq2, hidden_alpha=True, alpha_jitter=sq2),
            **{
                f"jitter={k:g}": dict(
                    noise_std=sigma * C, hidden_alpha=True, alpha_jitter=k * sigma * C
                )
                for k in jitters
            },
            "nonprivate": dict(noise_std=0.0),
        }
        print(f"== {name}: sigma {sigma:.4f}, T {p.steps}, q {L / n:.5f}, n {n}")
        for label, kw in variants.items():
            acc = []
            for r in range(seeds):
                run = scd_train(Xa, y_tr, key=Stream(1000 + r).key, **common, **kw)
                acc.append(float(np.mean(np.sign(Xt @ run.coef) == split.y_test)))
            print(
                f"  {label:12s} acc {np.mean(acc):.4f} +- {np.std(acc) / math.sqrt(len(acc)):.4f}"
                f"  {[round(a, 4) for a in acc]}"
            )
            results.append({"setting": name, "variant": label, "sigma": sigma, "accuracy": acc})
    print(f"({sw.elapsed():.0f} s)")
    report = {"bench": "scd_jitter", "machine": harness.finish(machine), "results": results}
    harness.publish(report, harness.out_dir(args), "scd_jitter", None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
