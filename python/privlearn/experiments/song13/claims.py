"""The paper's qualitative claims (Sections IV-C and IV-D), checked on the Song et al. (2013)
reproduction's numbers.

Belongs here: the thresholds of the checks (fixed before looking at the results), the rule
that judges a claim on the data sets of the paper's figure (:func:`_verdict`) and
:func:`evaluate_claims`. The :class:`~privlearn.experiments.claims.Claim` record, the verdict
rule and the summary's claims section are shared by every reproduction
(:mod:`privlearn.experiments.claims`, :mod:`privlearn.experiments.summary`).
"""

from __future__ import annotations

import math

from privlearn.experiments.claims import Claim, claim_verdict
from privlearn.experiments.song13.settings import _FIG12_DATASETS
from privlearn.experiments.song13.simulation import Song13Result, _stats
from privlearn.experiments.tables import fmt_mean_std

# Thresholds of the qualitative checks (fixed before looking at the results).
_FAR_GAP = 0.25  # claim 1: private mean >= 1.25 x non-private mean at b = 1
_STD_RATIO = 3.0  # claim 1: private std >= 3 x non-private std and >= 3 x private std at b=10
_MATCH_GAP = 0.10  # claim 2: private mean within 10% of non-private at b = 5 or 10
_VAR_RATIO = 10.0  # claim 4: variance of private SGD >= 10 x larger with 1/(lambda t)


def _verdict(per_dataset: dict[str, bool], scope: tuple[str, ...]) -> str:
    """The verdict over the data sets of ``scope`` that ran, or over all that ran if none did."""
    judged = {k: v for k, v in per_dataset.items() if k in scope} or per_dataset
    return claim_verdict(judged, "data sets")


def evaluate_claims(res: Song13Result) -> list[Claim]:
    """Check the paper's qualitative claims on the final objectives (mean and std over runs)."""
    claims: list[Claim] = []
    rate = "1/sqrt(t)"
    bs = res.batch_sizes
    have_rate = rate in res.rates

    # 1. Fig. 1 (IV-C): private b=1 is far from non-private and has high variance.
    per: dict[str, bool] = {}
    details: list[str] = []
    if have_rate and 1 in bs:
        for ds in res.datasets:
            pm, ps = _stats(res, ds, rate, 1, "private")
            nm, ns = _stats(res, ds, rate, 1, "non-private")
            gap = (pm - nm) / nm
            ok = gap >= _FAR_GAP and ps >= _STD_RATIO * ns
            line = (
                f"{ds}: b=1 private {fmt_mean_std(pm, ps)} vs non-private {fmt_mean_std(nm, ns)} "
                f"(gap {100 * gap:+.0f}%, std ratio {ps / max(ns, 1e-300):.3g}"
            )
            if 10 in bs:
                _, ps10 = _stats(res, ds, rate, 10, "private")
                ok = ok and ps >= _STD_RATIO * ps10
                line += f", private std at b=10 {ps10:.3g}"
            per[ds] = ok
            details.append(line + f") -> {'yes' if ok else 'no'}")
    claims.append(
        Claim(
            "Private SGD with b=1 is far from non-private SGD and has high variance",
            "Sec. IV-C, Fig. 1 (1/sqrt(t))",
            f"final private mean >= {1 + _FAR_GAP:g} x non-private mean, and private std >= "
            f"{_STD_RATIO:g} x the non-private std (and >= {_STD_RATIO:g} x the private std at "
            "b=10)",
            _verdict(per, _FIG12_DATASETS),
            details,
        )
    )

    # 2. Fig. 1 (IV-C): b = 5-10 nearly matches non-private SGD.
    per, details = {}, []
    mid = [b for b in (5, 10) if b in bs]
    if have_rate and mid:
        for ds in res.datasets:
            gaps = {}
            parts = []
            for b in mid:
                pm, ps = _stats(res, ds, rate, b, "private")
                nm, ns = _stats(res, ds, rate, b, "non-private")
                gaps[b] = (pm - nm) / nm
                parts.append(
                    f"b={b}: private {fmt_mean_std(pm, ps)} vs non-private "
                    f"{fmt_mean_std(nm, ns)} (gap {100 * gaps[b]:+.1f}%)"
                )
            per[ds] = min(gaps.values()) <= _MATCH_GAP
            details.append(f"{ds}: " + "; ".join(parts) + f" -> {'yes' if per[ds] else 'no'}")
    claims.append(
        Claim(
            "With b = 5-10 private SGD nearly matches non-private SGD",
            "Sec. IV-C, Fig. 1 (1/sqrt(t))",
            f"final private mean within {100 * _MATCH_GAP:g}% of the non-private mean for "
            "b=5 or b=10",
            _verdict(per, _FIG12_DATASETS),
            details,
        )
    )

    # 3. Fig. 2 (IV-D): with 1/sqrt(t), private SGD is best at an intermediate b.
    per, details = {}, []
    if have_rate and len(bs) >= 3:
        for ds in res.datasets:
            means = {b: _stats(res, ds, rate, b, "private")[0] for b in bs}
            best = min(means, key=means.__getitem__)
            per[ds] = bs[0] < best < bs[-1]
            curve = ", ".join(f"b={b}: {means[b]:.4g}" for b in bs)
            details.append(
                f"{ds}: private means {curve}; best b={best} -> {'yes' if per[ds] else 'no'}"
            )
    claims.append(
        Claim(
            "With 1/sqrt(t) the private objective is best at an intermediate batch size",
            "Sec. IV-D, Fig. 2",
            f"the b minimising the mean final private objective is neither b={bs[0]} nor "
            f"b={bs[-1]}",
            _verdict(per, _FIG12_DATASETS),
            details,
        )
    )

    # 4. Fig. 3 (IV-D): 1/(lambda t) makes private SGD much noisier (synthetic, b = 5).
    per, details = {}, []
    fast = "1/(lambda t)"
    if "synthetic" in res.datasets and have_rate and fast in res.rates:
        b = min(bs, key=lambda v: (abs(v - 5), v))
        pm1, ps1 = _stats(res, "synthetic", rate, b, "private")
        pm2, ps2 = _stats(res, "synthetic", fast, b, "private")
        nm1, ns1 = _stats(res, "synthetic", rate, b, "non-private")
        nm2, ns2 = _stats(res, "synthetic", fast, b, "non-private")
        ratio = (ps2 / ps1) ** 2 if ps1 > 0 else math.inf
        per["synthetic"] = ratio >= _VAR_RATIO
        details.append(
            f"synthetic, b={b}: private 1/sqrt(t) {fmt_mean_std(pm1, ps1)}, private "
            f"1/(lambda t) {fmt_mean_std(pm2, ps2)} (variance ratio {ratio:.3g}); non-private "
            f"{fmt_mean_std(nm1, ns1)} and {fmt_mean_std(nm2, ns2)} -> "
            f"{'yes' if per['synthetic'] else 'no'}"
        )
    claims.append(
        Claim(
            "The learning rate 1/(lambda t) makes private SGD much noisier than 1/sqrt(t)",
            "Sec. IV-D, Fig. 3 (synthetic, b=5)",
            f"variance of the final private objective over runs >= {_VAR_RATIO:g} x larger "
            "with 1/(lambda t) than with 1/sqrt(t)",
            _verdict(per, ("synthetic",)),
            details,
        )
    )

    # 5. Fig. 2 (IV-D): with 10/sqrt(t) large batches degrade less, closer to the optimum.
    per, details = {}, []
    big = "10/sqrt(t)"
    if have_rate and big in res.rates and len(bs) >= 2:
        b = bs[-1]
        for ds in res.datasets:
            opt = res.optimum[ds][0]
            e1 = _stats(res, ds, rate, b, "private")[0] - opt
            e10 = _stats(res, ds, big, b, "private")[0] - opt
            per[ds] = e10 < e1
            details.append(
                f"{ds}: b={b}, private excess over the optimum {opt:.4g}: {e1:.4g} with "
                f"1/sqrt(t), {e10:.4g} with 10/sqrt(t) -> {'yes' if per[ds] else 'no'}"
            )
    claims.append(
        Claim(
            "With 10/sqrt(t) large batches degrade less and end closer to the centralised optimum",
            "Sec. IV-D, Fig. 2",
            "at the largest b, the mean final private objective minus the optimum is smaller "
            "with 10/sqrt(t) than with 1/sqrt(t)",
            _verdict(per, _FIG12_DATASETS),
            details,
        )
    )
    return claims
