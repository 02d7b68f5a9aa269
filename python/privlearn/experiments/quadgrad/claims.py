"""The paper's qualitative claims of Section 3.3, checked on the log-likelihood paths.

Belongs here: the plain-against-enhanced comparison at a small number of iterations
(:func:`_comparison_rows`, also ``comparison.csv`` and the summary's table) and
:func:`evaluate_claims`. The markdown is :func:`privlearn.experiments.summary.claims_section`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privlearn.experiments.claims import Claim, claim_verdict
from privlearn.experiments.quadgrad.simulate import (
    CHECK_ITER,
    FIG4_ITERS,
    FIG4_LR,
    FIG4_QLR,
    FIG4_QLR_LARGE,
    OPTIMIZERS,
    QuadgradCurves,
)


def _ahead_from(enh: np.ndarray, plain: np.ndarray) -> int | None:
    """First iteration from which the enhanced path stays strictly above the plain one."""
    ahead = enh > plain
    if not ahead[-1]:
        return None
    behind = np.flatnonzero(~ahead)
    return int(behind[-1] + 1) if behind.size else 0


def _comparison_rows(res: QuadgradCurves, k: int) -> list[dict[str, Any]]:
    rows = []
    for ds in res.datasets:
        for opt in OPTIMIZERS:
            p = res.paths[(ds, opt, False)]
            e = res.paths[(ds, opt, True)]
            kk = min(k, res.iters)
            ahead = _ahead_from(e, p)
            rows.append(
                {
                    "dataset": ds,
                    "optimizer": opt,
                    "iteration": kk,
                    "loglik_plain": p[kk],
                    "loglik_enhanced": e[kk],
                    "enhanced_better": bool(e[kk] > p[kk]),
                    "enhanced_ahead_from": "never" if ahead is None else ahead,
                    "loglik_plain_final": p[-1],
                    "loglik_enhanced_final": e[-1],
                    "mle": res.optimum.get(ds, math.nan),
                }
            )
    return rows


def evaluate_claims(res: QuadgradCurves, k: int = CHECK_ITER) -> list[Claim]:
    """The paper's qualitative claims of Section 3.3, checked at iteration ``k``."""
    rows = _comparison_rows(res, k)
    claims = []
    nag = {r["dataset"]: r["enhanced_better"] for r in rows if r["optimizer"] == "nag"}
    ahead = {f"{r['dataset']}/{r['optimizer']}": r["enhanced_ahead_from"] for r in rows}
    claims.append(
        Claim(
            "Enhanced NAG outperforms NAG",
            "Section 3.3 / Figure 1: 'the enhanced NAG algorithm consistently outperforms the "
            "original NAG method in terms of convergence rate'",
            f"log-likelihood after {k} iterations: enhanced > plain on each data set",
            claim_verdict(nag, "data sets"),
            [
                f"{d}: {'yes' if v else 'no'} (ahead from iteration {ahead[d + '/nag']})"
                for d, v in nag.items()
            ],
        )
    )
    other = {
        f"{r['dataset']}/{r['optimizer']}": r["enhanced_better"]
        for r in rows
        if r["optimizer"] != "nag" and r["dataset"] != "idash"
    }
    claims.append(
        Claim(
            "Enhanced Adagrad and Adam are faster (except on iDASH)",
            "Section 3.3 / Figures 2-3",
            f"log-likelihood after {k} iterations: enhanced > plain, every data set but iDASH",
            claim_verdict(other, "data set / optimizer pairs"),
            [f"{d}: {'yes' if v else 'no'} (ahead from {ahead[d]})" for d, v in other.items()],
        )
    )
    converge = {}
    for ds in res.datasets:
        for opt in OPTIMIZERS:
            e = res.paths[(ds, opt, True)]
            converge[f"{ds}/{opt}"] = bool(np.isfinite(e).all() and e[-1] > e[0])
    claims.append(
        Claim(
            "All enhanced algorithms converge",
            "Section 3.3: 'all the enhanced algorithms converge'",
            f"finite log-likelihood, higher after {res.iters} iterations than at the start",
            claim_verdict(converge, "runs"),
            [f"{d}: {'yes' if v else 'no'}" for d, v in converge.items()],
        )
    )
    if res.fig4:
        k4 = min(k, FIG4_ITERS)
        worst_q = min(res.fig4[(True, lr)][k4] for lr in FIG4_QLR)
        best_g = max(res.fig4[(False, lr)][k4] for lr in FIG4_LR)
        large = res.fig4[(True, FIG4_QLR_LARGE)][-1]
        worst_q_final = min(res.fig4[(True, lr)][-1] for lr in FIG4_QLR)
        claims.append(
            Claim(
                "Quadratic gradient beats the gradient (lbw, Figure 4)",
                "Section 3.3, 'Gradient And Quadratic Gradient', Figure 4",
                f"after {k4} iterations the worst LR in [1, 2] of the raw quadratic gradient is "
                "ahead of the best lr in [0.011, 0.021] of the raw gradient",
                claim_verdict({"lbw": bool(worst_q > best_g)}),
                [f"worst quadratic {worst_q:.3f} vs best gradient {best_g:.3f}"],
            )
        )
        claims.append(
            Claim(
                "Learning rates in [1, 2] beat LR >= 3 (lbw)",
                "Section 3.3: 'better performance with learning rates between 1 and 2 ... when "
                "the learning rate exceeds 3, the algorithm is nearly guaranteed not to converge'",
                f"after {FIG4_ITERS} iterations, LR = {FIG4_QLR_LARGE:g} is behind every LR in "
                "[1, 2]",
                claim_verdict({"lbw": bool(large < worst_q_final)}),
                [f"LR = 3: {large:.3f}; worst LR in [1, 2]: {worst_q_final:.3f}"],
            )
        )
    return claims
