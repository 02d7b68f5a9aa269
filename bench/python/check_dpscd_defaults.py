"""Held-out check of a moved DP-SCD default (issue 20): the current DPSCDClassifier defaults
(C 0.01, 20 epochs) against the optimum of ``bench_defaults.py``'s search under the tight
accountant and the hidden dual state (C 0.1, 5 epochs), on the data sets of
``bench_tight_accounting.py`` (adult, phishing, KDDCup99 40k, MNIST ten digits 10k), epsilon
0.5 / 1 / 3, 3 seeds, test accuracy (mean, sd). The search validates binary AUC only; this
check includes the ten-class one-vs-rest fit.

Run: ``PYTHONPATH=python PRIVLEARN_DATA=../shared/data OMP_NUM_THREADS=1 python
bench/python/check_dpscd_defaults.py`` (one core, about 8 minutes). Output:
``bench/results/dpscd_defaults_check.txt``.
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


def main() -> int:
    data_sets = {
        "adult": B.load_adult_data(),
        "phishing": B.load_phishing_data(),
        "kddcup99": B.load_kdd_data(40_000),
        "mnist": B.load_mnist_data(10_000, None),
    }
    lines, sw = [], harness.stopwatch()
    for name, data in data_sets.items():
        for eps in (0.5, 1.0, 3.0):
            for label, extra in CANDIDATES:
                params = {"epsilon": eps, "classes": data.classes, **extra}
                accs = [
                    B.run_one("DPSCDClassifier", params, data, seed, "defaults").get(
                        "accuracy", float("nan")
                    )
                    for seed in range(3)
                ]
                line = f"{name} eps {eps:g} {label}: {np.mean(accs):.4f} +- {np.std(accs):.4f}"
                print(line, flush=True)
                lines.append(line)
    lines.append(f"runtime {sw.elapsed():.0f} s")
    out = Path(__file__).resolve().parents[1] / "results" / "dpscd_defaults_check.txt"
    out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
