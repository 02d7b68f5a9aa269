"""The note's qualitative claims, checked on the mean numbers of the synthetic comparison.

Belongs here: the thresholds of each check and :func:`evaluate_claims` (naive coding overfits;
Laplace smearing helps; cross-fitting matches it; the ordering of the schemes by test error
follows the note's single run). The markdown is
:func:`privlearn.experiments.summary.claims_section`.
"""

from __future__ import annotations

from privlearn.experiments.claims import Claim, claim_verdict
from privlearn.experiments.impact.methods import BLOG_TEST_ERROR
from privlearn.experiments.impact.simulate import ImpactResult
from privlearn.experiments.tables import fmt_spread

_CLAIM_TRAIN_NAIVE = 0.95  # naive: train AUC at least this ...
_CLAIM_TEST_NAIVE = 0.75  # ... and test AUC at most this
_CLAIM_LAPLACE_GAIN = 0.10  # Laplace test AUC >= naive test AUC + this
_CLAIM_CROSS_SLACK = 0.01  # cross/jackknife test AUC >= Laplace test AUC - this
_CLAIM_SPEARMAN = 0.7  # rank correlation with the note's error ordering


def _spearman(a: list[float], b: list[float]) -> float:
    from scipy import stats

    return float(stats.spearmanr(a, b).statistic)


def evaluate_claims(res: ImpactResult) -> list[Claim]:
    """The note's qualitative claims, checked on the mean numbers (thresholds fixed above)."""
    have = set(res.methods)
    claims = []

    parts, details = {}, []
    for code in ("bayes", "counts"):
        m = f"{code} naive"
        if m in have:
            tr, te = res.mean(m, "train_auc"), res.mean(m, "test_auc")
            parts[code] = tr >= _CLAIM_TRAIN_NAIVE and te <= _CLAIM_TEST_NAIVE
            details.append(f"{m}: train AUC {tr:.3f}, test AUC {te:.3f}")
    claims.append(
        Claim(
            "naive impact coding overfits",
            "'A bad example': train AUC nearly 1.0, test AUC 0.65 (0.56 for counts)",
            f"mean train AUC >= {_CLAIM_TRAIN_NAIVE} and mean test AUC <= {_CLAIM_TEST_NAIVE} "
            "for both codes",
            claim_verdict(parts, "codes"),
            details,
        )
    )

    parts, details = {}, []
    for code in ("bayes", "counts"):
        a, b = f"{code} naive", f"{code} laplace"
        if a in have and b in have:
            na, la = res.mean(a, "test_auc"), res.mean(b, "test_auc")
            parts[code] = la >= na + _CLAIM_LAPLACE_GAIN
            sig = fmt_spread(res.values(b, "sigma"), 3)
            details.append(f"{code}: test AUC {na:.3f} (naive) -> {la:.3f} (Laplace, sigma {sig})")
    claims.append(
        Claim(
            "Laplace smearing greatly improves out-of-sample performance",
            "'Differential privacy': test AUC from 0.56 to 0.92",
            f"mean test AUC of the Laplace mode >= naive + {_CLAIM_LAPLACE_GAIN} for both codes",
            claim_verdict(parts, "codes"),
            details,
        )
    )

    parts, details = {}, []
    if "bayes laplace" in have:
        lap = res.mean("bayes laplace", "test_auc")
        for m in ("bayes cross", "bayes jackknife", "bayes cross +sig0.3"):
            if m in have:
                v = res.mean(m, "test_auc")
                parts[m] = v >= lap - _CLAIM_CROSS_SLACK
                details.append(f"{m}: test AUC {v:.3f} vs bayes laplace {lap:.3f}")
    claims.append(
        Claim(
            "cross-fitting (and its jackknife) match or beat Laplace smearing",
            "'Cross training': test AUC 0.95, jackknife 'essentially identical'",
            f"mean test AUC >= bayes laplace - {_CLAIM_CROSS_SLACK}",
            claim_verdict(parts, "schemes"),
            details,
        )
    )

    ours = [m for m in BLOG_TEST_ERROR if m in have]
    details = []
    verdict = "not evaluated"
    if len(ours) >= 3:
        mine = [res.mean(m, "test_error") for m in ours]
        blog = [BLOG_TEST_ERROR[m][1] for m in ours]
        rho = _spearman(mine, blog)
        verdict = claim_verdict({"ordering": rho >= _CLAIM_SPEARMAN})
        order_blog = " < ".join(m for _, m in sorted(zip(blog, ours)))
        order_mine = " < ".join(m for _, m in sorted(zip(mine, ours)))
        details = [
            f"Spearman rank correlation {rho:.2f} over {len(ours)} schemes",
            f"note's order (test error): {order_blog}",
            f"our order (mean test error): {order_mine}",
        ]
    claims.append(
        Claim(
            "the ordering of the schemes by test error matches the note",
            "the note's single run (test errors listed in the table below)",
            f"Spearman rank correlation of mean test errors with the note's >= {_CLAIM_SPEARMAN}",
            verdict,
            details,
        )
    )
    return claims
