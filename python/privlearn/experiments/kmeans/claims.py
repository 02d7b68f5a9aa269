"""The paper's claim, checked on the costs, and where privlearn's default stands beside it.

Belongs here: :func:`evaluate_claims` (max cover attains a lower k-means objective than Balcan
et al., Section 7) and :func:`lsh_standing` (outside the paper: the LSH-tree coreset against
the better of the two and against the one-centre reference). The markdown is
:func:`privlearn.experiments.summary.claims_section`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from privlearn.experiments.claims import Claim, claim_verdict
from privlearn.experiments.kmeans.methods import LABELS, PAPER_METHODS
from privlearn.experiments.kmeans.simulate import KMeansResult


def _geometric_mean(ratios: Sequence[float]) -> float:
    """The geometric mean of cost ratios (the per-k comparisons of one data set)."""
    return float(np.exp(np.mean(np.log(ratios))))


def evaluate_claims(res: KMeansResult) -> list[Claim]:
    """The paper's claim: max cover attains a lower k-means objective than Balcan et al."""
    judged: dict[str, bool] = {}
    details = []
    for dataset in res.datasets:
        ratios, wins = [], 0
        for k in res.ks:
            a, b = res.costs(dataset, "maxcover", k), res.costs(dataset, "balcan", k)
            if a and b:
                ratios.append(np.mean(a) / np.mean(b))
                wins += int(np.mean(a) < np.mean(b))
        if ratios:
            gm = _geometric_mean(ratios)
            judged[dataset] = gm < 1.0
            details.append(
                f"{dataset}: max cover lower at {wins} of {len(ratios)} k; geometric-mean cost "
                f"ratio max cover / Balcan = {gm:.3f}"
            )
    return [
        Claim(
            "max cover beats Balcan et al.",
            "Section 7, Results and Figure 1",
            "geometric mean over k of mean cost(max cover) / mean cost(Balcan) < 1, per data set",
            claim_verdict(judged, "data sets"),
            details,
        )
    ]


def lsh_standing(res: KMeansResult) -> str:
    """One line, outside the paper's claim: where the LSH-tree coreset (the estimator's default)
    stands, per data set, against the better of the paper's two private methods at each k and
    against the one-centre reference; computed from the results (empty when it did not run)."""
    parts = []
    for dataset in res.datasets:
        ratios, wins, below, ks = [], 0, 0, 0
        base = res.one_centre.get(dataset)
        for k in res.ks:
            lsh = res.costs(dataset, "lsh", k)
            if not lsh:
                continue
            ks += 1
            if base is not None:
                below += int(np.mean(lsh) < base)
            paper = [np.mean(c) for m in PAPER_METHODS if (c := res.costs(dataset, m, k))]
            if paper:
                ratios.append(np.mean(lsh) / min(paper))
                wins += int(np.mean(lsh) < min(paper))
        if not ks:
            continue
        text = f"{dataset}: "
        if ratios:
            gm = _geometric_mean(ratios)
            text += (
                f"lower than the better of max cover and Balcan et al. at {wins} of {len(ratios)} "
                f"k (geometric-mean cost ratio {gm:.3f})"
            )
        if base is not None:
            text += (", " if ratios else "") + f"below one centre at {below} of {ks} k"
        parts.append(text)
    if not parts:
        return ""
    return f"{LABELS['lsh']}: " + "; ".join(parts) + "."
