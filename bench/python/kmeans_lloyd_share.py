"""The LSH fit's Lloyd-round budget share (issue 30, item 7): the loss of ``DPKMeans()`` (the
default method) at lloyd shares 0.2375 (the default), 0.35 and 0.5, the other shares of
``LSH_SPLIT`` scaled to sum to 1.

Usage::

    python bench/python/kmeans_lloyd_share.py gauss8 16,32 1.0 4   # data set, ks, epsilon, seeds
    python bench/python/kmeans_lloyd_share.py --quick gauss8 16 1.0 1  # shares 0.2375, 0.5
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
from bench_kmeans import load_dataset  # noqa: E402

from privlearn.cluster import DPKMeans  # noqa: E402
from privlearn.cluster._assignment import kmeans_cost  # noqa: E402
from privlearn.cluster.lsh_coreset import LSH_SPLIT  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    p = harness.cli(__doc__, "kmeans_lloyd_share", omit=("reps", "out"))  # --quick: 2 shares
    p.add_argument("name", help="data set of bench_kmeans.load_dataset (e.g. gauss8)")
    p.add_argument("ks", help="comma-separated k, e.g. 16,32")
    p.add_argument("epsilon", type=float)
    p.add_argument("seeds", type=int)
    args = p.parse_args(argv)
    name, ks, eps, n_seeds = args.name, args.ks, args.epsilon, args.seeds
    machine = harness.machine()
    X, radius = load_dataset(name)
    for share in (0.2375, 0.5) if args.quick else (0.2375, 0.35, 0.5):
        rest = 1.0 - LSH_SPLIT["lloyd"]
        split = {k: v * (1.0 - share) / rest for k, v in LSH_SPLIT.items() if k != "lloyd"}
        split["lloyd"] = share
        for k in (int(v) for v in ks.split(",")):
            losses = [
                kmeans_cost(
                    X,
                    DPKMeans(k, eps, delta=1e-6, radius=radius, seed=s, budget_split=split)
                    .fit(X)
                    .cluster_centers_,
                )
                / X.shape[0]
                for s in range(n_seeds)
            ]
            print(name, k, eps, "lloyd share", share, "loss", float(np.mean(losses)), losses)
    print(harness.readme_machine(harness.finish(machine)))


if __name__ == "__main__":
    main()
