"""The budget splits of the max-cover and Balcan et al. fits: the default fractions
(:data:`DEFAULT_SPLIT`, :data:`PAPER_SPLIT`), how they were chosen, and
:func:`budget_split`, which checks a caller's ``budget_split=`` against them.

Belongs here: how a fit's ``(epsilon, delta)`` is divided between its stages. Not here: the
calibration of a stage's noise from its share (:mod:`privlearn.cluster._noisy_average`,
:func:`privlearn.cluster.maxcover.plan_maxcover`), or the LSH coreset's split
(:mod:`privlearn.cluster.lsh_coreset`, whose stages differ).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from privlearn._checks import as_real
from privlearn.cluster import balcan as _balcan

__all__ = ["DEFAULT_SPLIT", "PAPER_SPLIT", "budget_split"]

#: Budget split of the max-cover method with ``accountant="paper"`` (basic composition, the
#: paper's per-stage ``(epsilon, delta)``): fractions of the epsilon left after the noisy
#: row count, :data:`~privlearn.accounting.SIZE_EPSILON_FRACTION`; delta: "delta_*".
#: Chosen by experiment on the synthetic mixture (n = 50,000, k in {8, 64}, 2 seeds; mean cost
#: at k = 64: 2.96e6 for (0.5, 0.2, 0.15, 0.15), 2.61e6 for (0.3, 0.1, 0.3, 0.3), 2.49e6 for
#: this one). The final noisy averaging in the original space dominates the cost (its Gaussian
#: noise grows with the dimension), so the last DP Lloyd round gets the largest share.
PAPER_SPLIT: dict[str, float] = {
    "maxcover": 0.3,
    "proxy": 0.1,
    "average": 0.15,
    "lloyd": 0.45,
    "delta_maxcover": 0.5,
    "delta_average": 0.25,
    "delta_lloyd": 0.25,
}
#: Default budget split of the max-cover method (``accountant="rdp"``, :func:`~privlearn.
#: cluster.maxcover.plan_maxcover`): the epsilon fractions are shares of one zCDP budget
#: (``rho``) for the greedy picks, the proxy counts, the noisy averaging and the DP Lloyd
#: rounds, the whole composed by Renyi DP at the caller's delta; ``delta_maxcover`` is the
#: delta the Gupta et al. alternative for the picks would take (the plan uses it only where it
#: beats zCDP); ``delta_average`` and ``delta_lloyd`` are not used (one conversion covers
#: every Gaussian), they are kept so that ``budget_split`` takes the same keys.
#:
#: Chosen by experiment (issue 21; epsilon 1, delta 1e-6, radius 1, default schedule, proxy
#: threshold ``2 ln(m) / eps_proxy``; loss = k-means cost / n at k = 8 / 32 / 64). Google's
#: synthetic benchmark (100,000 x 100, 64 Gaussians), 20,000-row subsample, 4 seeds:
#: (0.3, 0.1, 0.15, 0.45) 0.657 / 0.400 / 0.155, (0.2, 0.1, 0.2, 0.5) 0.654 / 0.395 / 0.149,
#: (0.15, 0.1, 0.15, 0.6) 0.651 / 0.392 / 0.147, (0.1, 0.1, 0.1, 0.7) 0.652 / 0.386 / 0.138,
#: (0.05, 0.1, 0.05, 0.8) 0.654 / 0.386 / 0.152, (0.15, 0.05, 0.1, 0.7) 0.655 / 0.388 / 0.154,
#: (0.1, 0.15, 0.15, 0.6) 0.653 / 0.395 / 0.144, this one 0.654 / 0.392 / 0.151; all 100,000
#: rows, 2 seeds: (0.3, 0.1, 0.15, 0.45) 0.647 / 0.373 / 0.078, (0.1, 0.1, 0.1, 0.7) 0.649 /
#: 0.367 / 0.099, (0.05, 0.1, 0.05, 0.8) 0.652 / 0.368 / 0.088, this one 0.648 / 0.369 /
#: 0.069 (the paper's accounting: 0.647 / 0.428 / 0.315). Small data wants the budget on the
#: final averages, large data on the picks; this split is close to the best at both sizes.
#: On the 8-Gaussian set (20,000 x 10) every split above gave 0.024-0.025 at every k.
DEFAULT_SPLIT: dict[str, float] = {
    "maxcover": 0.2,
    "proxy": 0.1,
    "average": 0.15,
    "lloyd": 0.55,
    "delta_maxcover": 0.5,
    "delta_average": 0.25,
    "delta_lloyd": 0.25,
}


def budget_split(
    method: str, accountant: str, overrides: Any, lloyd_steps: int
) -> dict[str, float]:
    """The checked budget split of a max-cover or Balcan et al. fit: the default of ``method``
    and ``accountant`` (:data:`DEFAULT_SPLIT`, :data:`PAPER_SPLIT`,
    :data:`~privlearn.cluster.balcan.BALCAN_SPLIT`) updated by the caller's ``overrides``
    (``budget_split=``; unknown keys refused), the Lloyd share moved to the averaging (or
    recovery) step when ``lloyd_steps == 0``; the epsilon and the delta fractions must each be
    > 0 and sum to 1. (The LSH split: :func:`privlearn.cluster.lsh_coreset.lsh_split`.)"""
    if method == "maxcover":
        base = dict(PAPER_SPLIT if accountant == "paper" else DEFAULT_SPLIT)
    else:
        base = dict(_balcan.BALCAN_SPLIT)
    if method == "balcan":
        base.update({"delta_candidates": 1 / 3, "delta_recovery": 1 / 3, "delta_lloyd": 1 / 3})
    if overrides is not None:
        if not isinstance(overrides, Mapping):
            raise TypeError(f"budget_split must be a dict, got {type(overrides).__name__}")
        unknown = set(overrides) - set(base)
        if unknown:
            raise ValueError(
                f"unknown budget_split keys {sorted(map(str, unknown))}; known: {sorted(base)}"
            )
        base.update(
            {k: as_real(v, f"budget_split[{k!r}]", numbers_only=True) for k, v in overrides.items()}
        )
    eps_keys = [k for k in base if not k.startswith("delta_")]
    if lloyd_steps == 0:
        # no Lloyd round: its share goes to the averaging / recovery step
        target = "average" if method == "maxcover" else "recovery"
        base[target] += base.pop("lloyd")
        base[f"delta_{target}"] += base.pop("delta_lloyd")
        eps_keys.remove("lloyd")
    for group in (eps_keys, [k for k in base if k.startswith("delta_")]):
        total = math.fsum(base[k] for k in group)
        if any(not base[k] > 0 for k in group) or not abs(total - 1.0) <= 1e-9:
            raise ValueError(f"budget_split fractions {group} must be > 0 and sum to 1")
    return base
