"""Held-out check of a moved DP-SCD default (issue 20): the current DPSCDClassifier defaults
(C 0.01, 20 epochs) against the optimum of ``bench_defaults.py``'s search under the tight
accountant and the hidden dual state (C 0.1, 5 epochs), on the data sets of
``bench_tight_accounting.py`` (adult, phishing, KDDCup99 40k, MNIST ten digits 10k), epsilon
0.5 / 1 / 3, 3 seeds, test accuracy (mean, sd). The search validates binary AUC only; this
check includes the ten-class one-vs-rest fit.

Run: ``PYTHONPATH=python PRIVLEARN_DATA=../shared/data OMP_NUM_THREADS=1 python
bench/python/check_dpscd_defaults.py [--quick] [--out DIR]`` (one core, about 8 minutes;
``--quick``: phishing at epsilon 1, one seed). Output: ``<out>/dpscd_defaults_check.txt``
(default ``bench/results``; ``--quick``: the scratch folder).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_tight_accounting as B  # noqa: E402
import harness  # noqa: E402

CANDIDATES = (
    ("current (C 0.01, 20 epochs)", {}),
    ("moved (C 0.1, 5 epochs)", {"clip": 0.1, "epochs": 5}),
)


def main(argv: list[str] | None = None) -> int:
    args = harness.cli(__doc__, "dpscd_defaults_check", omit=("reps",)).parse_args(argv)
    loaders = {
        "adult": B.load_adult_data,
        "phishing": B.load_phishing_data,
        "kddcup99": lambda: B.load_kdd_data(40_000),
        "mnist": lambda: B.load_mnist_data(10_000, None),
    }
    if args.quick:
        loaders = {"phishing": loaders["phishing"]}
    data_sets = {name: load() for name, load in loaders.items()}
    lines, sw, machine = [], harness.stopwatch(), harness.machine()
    for name, data in data_sets.items():
        for eps in (1.0,) if args.quick else (0.5, 1.0, 3.0):
            for label, extra in CANDIDATES:
                params = {"epsilon": eps, "classes": data.classes, **extra}
                accs = [
                    B.run_one("DPSCDClassifier", params, data, seed, "defaults").get(
                        "accuracy", float("nan")
                    )
                    for seed in range(1 if args.quick else 3)
                ]
                line = f"{name} eps {eps:g} {label}: {np.mean(accs):.4f} +- {np.std(accs):.4f}"
                print(line, flush=True)
                lines.append(line)
    where = harness.readme_machine(harness.finish(machine))
    lines.append(f"runtime {sw.elapsed():.0f} s on {where}")
    out = harness.out_dir(args) / "dpscd_defaults_check.txt"
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
