"""The paper's qualitative claims (Section 5.1), checked on the DP-SCD reproduction's numbers.

Belongs here: :func:`evaluate_claims` (eight claims on Figs. 1-3, criteria fixed before looking
at the results) and the comparisons behind them. The :class:`~privlearn.experiments.claims.Claim`
record, the verdict rule and the summary's claims section are shared by every reproduction
(:mod:`privlearn.experiments.claims`, :mod:`privlearn.experiments.summary`).
"""

from __future__ import annotations

import math

import numpy as np

from privlearn.experiments.claims import Claim, claim_verdict
from privlearn.experiments.dpscd.settings import FIG2_EPSILONS, PAPER_TASKS, TASKS, Task
from privlearn.experiments.dpscd.simulation import DPSCDResult, _better


def _fmt(task: Task, value: float) -> str:
    return f"{value:.4g}" if task.metric == "mse" else f"{value:.4f}"


def _compare(res: DPSCDResult, t: str, a: str, b: str) -> tuple[int, int, list[str]] | None:
    """(number of finite epsilons where ``a`` beats ``b``, number compared, per-epsilon text)."""
    task = TASKS[t]
    wins, parts = 0, []
    eps = [e for e in res.epsilons if (t, a, e) in res.final and (t, b, e) in res.final]
    if not eps:
        return None
    for e in eps:
        ma, sa = res.stats(t, a, e)
        mb, sb = res.stats(t, b, e)
        win = _better(task, ma, mb)
        wins += win
        na, nb = len(res.final[(t, a, e)]), len(res.final[(t, b, e)])
        se = math.sqrt(sa**2 / na + sb**2 / nb)
        z = f"{(ma - mb) / se:+.1f}" if se > 0 else "n/a"
        parts.append(f"eps={e:g}: {_fmt(task, ma)} vs {_fmt(task, mb)} (diff/se {z})")
    return wins, len(eps), parts


def _majority_claim(
    res: DPSCDResult,
    name: str,
    criterion: str,
    models: tuple[str, ...],
    a: str,
    b: str,
    want_a_better: bool,
) -> Claim:
    per, details = {}, []
    for t in res.tasks:
        if t not in PAPER_TASKS or TASKS[t].loss not in models:
            continue
        cmp = _compare(res, t, a, b)
        if cmp is None:
            continue
        wins, total, parts = cmp
        count = wins if want_a_better else total - wins
        per[t] = count > total / 2
        what = "better" if want_a_better else "worse"
        details.append(
            f"{t}: {a} {what} than {b} at {count} of {total} epsilons ("
            + "; ".join(parts)
            + f") -> {'yes' if per[t] else 'no'}"
        )
    return Claim(name, "Sec. 5.1, Fig. 1", criterion, claim_verdict(per), details)


def _roughness(obj: np.ndarray) -> float:
    """Mean |P_{k+1} - P_k| over the second half of the recorded epochs, averaged over runs."""
    half = obj[:, obj.shape[1] // 2 :]
    if half.shape[1] < 2:
        return math.nan
    return float(np.mean(np.abs(np.diff(half, axis=1))))


def evaluate_claims(res: DPSCDResult) -> list[Claim]:
    """Check the paper's qualitative claims (Section 5.1) on the numbers.

    Thresholds and criteria were fixed before looking at the results: a comparison "holds" on a
    task when the means over the final runs favour it at more than half of the finite epsilon
    values.
    """
    claims = [
        _majority_claim(
            res,
            "DP-SCD beats DP-SGD for ridge regression",
            "lower mean test MSE than DP-SGD at more than half of the finite epsilons",
            ("squared",),
            "DP-SCD",
            "DP-SGD",
            True,
        ),
        _majority_claim(
            res,
            "DP-SCD beats DP-SGD for SVMs",
            "higher mean test accuracy than DP-SGD at more than half of the finite epsilons, on "
            "every SVM task",
            ("hinge",),
            "DP-SCD",
            "DP-SGD",
            True,
        ),
        _majority_claim(
            res,
            "DP-SCD loses to DP-SGD for logistic regression",
            "lower mean test accuracy than DP-SGD at more than half of the finite epsilons, on "
            "every logistic-regression task",
            ("log_loss",),
            "DP-SCD",
            "DP-SGD",
            False,
        ),
    ]

    # 4. SeqDP-SCD has the worst performance (Sec. 5.1).
    per: dict[str, bool] = {}
    details: list[str] = []
    for t in res.tasks:
        if t not in PAPER_TASKS:
            continue
        c1 = _compare(res, t, "SeqDP-SCD", "DP-SCD")
        c2 = _compare(res, t, "SeqDP-SCD", "DP-SGD")
        if c1 is None or c2 is None:
            continue
        task = TASKS[t]
        eps = [e for e in res.epsilons if (t, "SeqDP-SCD", e) in res.final]
        worst = 0
        for e in eps:
            ms = res.stats(t, "SeqDP-SCD", e)[0]
            others = [res.stats(t, m, e)[0] for m in ("DP-SCD", "DP-SGD")]
            worst += all(_better(task, o, ms) for o in others)
        per[t] = worst > len(eps) / 2
        details.append(
            f"{t}: SeqDP-SCD worse than both DP-SCD and DP-SGD at {worst} of {len(eps)} "
            f"epsilons -> {'yes' if per[t] else 'no'}"
        )
    claims.append(
        Claim(
            "SeqDP-SCD has the worst performance",
            "Sec. 5.1, Fig. 1",
            "SeqDP-SCD's mean is worse than both DP-SCD's and DP-SGD's at more than half of the "
            "finite epsilons, on every task",
            claim_verdict(per),
            details,
        )
    )

    # 5. Fig. 2: the distance to the optimum depends on the privacy level (Theorem 2).
    per, details = {}, []
    lo, hi = FIG2_EPSILONS
    if not math.isnan(res.optimum):
        for m in ("DP-SCD", "DP-SGD"):
            if (m, lo) in res.paths and (m, hi) in res.paths:
                g_lo = float(np.mean(res.paths[(m, lo)][1][:, -1])) - res.optimum
                g_hi = float(np.mean(res.paths[(m, hi)][1][:, -1])) - res.optimum
                per[m] = g_lo > g_hi
                details.append(
                    f"{m}: final objective - optimum {g_lo:.4g} at eps={lo:g} vs {g_hi:.4g} at "
                    f"eps={hi:g} -> {'yes' if per[m] else 'no'}"
                )
    claims.append(
        Claim(
            "More privacy ends farther from the optimum",
            "Sec. 5.1, Fig. 2 (Theorem 2)",
            f"on {res.label('msd')} the mean final training objective minus the optimum is larger "
            f"at eps={lo:g} than at eps={hi:g}, for DP-SCD and for DP-SGD",
            claim_verdict(per),
            details,
        )
    )

    # 6. Fig. 2: less noise makes DP-SCD's objective decrease more stable.
    per, details = {}, []
    if ("DP-SCD", lo) in res.paths and ("DP-SCD", hi) in res.paths:
        r_lo = _roughness(res.paths[("DP-SCD", lo)][1])
        r_hi = _roughness(res.paths[("DP-SCD", hi)][1])
        if math.isnan(r_lo) or math.isnan(r_hi):  # too few recorded epochs: not checked
            details.append(
                f"not checked: {res.epochs} epoch(s) leave fewer than 2 recorded objectives in "
                "the second half of the run"
            )
        else:
            per["DP-SCD"] = r_lo > r_hi
            details.append(
                f"DP-SCD: mean |change of the objective per epoch| over the second half "
                f"{r_lo:.4g} at eps={lo:g} vs {r_hi:.4g} at eps={hi:g} -> "
                f"{'yes' if per['DP-SCD'] else 'no'}"
            )
    claims.append(
        Claim(
            "DP-SCD converges more stably with less noise",
            "Sec. 5.1, Fig. 2",
            f"the epoch-to-epoch fluctuation of DP-SCD's training objective (second half of the "
            f"run) is larger at eps={lo:g} than at eps={hi:g}",
            claim_verdict(per),
            details,
        )
    )

    # 7-8. Fig. 3: interplay of L and C at eps = 1.
    per7: dict[str, bool] = {}
    per8: dict[str, bool] = {}
    d7: list[str] = []
    d8: list[str] = []
    if res.fig3:
        Ls = sorted({k[0] for k in res.fig3})
        Cs = sorted({k[1] for k in res.fig3})
        curves = {c: {b: float(np.mean(res.fig3[(b, c)])) for b in Ls} for c in Cs}
        best_L = {c: min(Ls, key=lambda b, c=c: curves[c][b]) for c in Cs}
        minima = {c: curves[c][best_L[c]] for c in Cs}
        best_C = min(Cs, key=minima.__getitem__)
        text = ", ".join(f"C={c:g}: min MSE {minima[c]:.4g} at L={best_L[c]}" for c in Cs)
        if len(Cs) >= 3:
            per7["msd"] = Cs[0] < best_C < Cs[-1]
            d7.append(f"{text}; best C={best_C:g} -> {'yes' if per7['msd'] else 'no'}")
        if best_C != Cs[0]:
            per8["msd"] = best_L[Cs[0]] > best_L[best_C]
            d8.append(
                f"best L at C={Cs[0]:g}: {best_L[Cs[0]]}; at the best C={best_C:g}: "
                f"{best_L[best_C]} -> {'yes' if per8['msd'] else 'no'}"
            )
        else:
            d8.append(
                f"the best C is the smallest of the sweep (C={best_C:g}, best L={best_L[best_C]}):"
                " there is no smaller C to compare with"
            )
    claims.append(
        Claim(
            "An intermediate scaling factor C is best",
            "Sec. 5.1, Fig. 3 (eps = 1)",
            "the C whose best mini-batch size gives the lowest mean test MSE is neither the "
            "smallest nor the largest C of the sweep",
            claim_verdict(per7),
            d7,
        )
    )
    claims.append(
        Claim(
            "A smaller C moves the best mini-batch size to the right",
            "Sec. 5.1, Fig. 3 (eps = 1)",
            "the best L at the smallest C is larger than the best L at the best C",
            claim_verdict(per8),
            d8,
        )
    )
    return claims
