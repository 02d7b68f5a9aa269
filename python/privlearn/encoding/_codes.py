"""Single-variable model codes computed from per-level outcome counts (pure numpy/scipy).

Everything here is elementwise and broadcasts: ``n_true`` / ``n_false`` are the counts of
positive / negative outcomes among the coding rows that take a level, ``total_true`` /
``total_false`` those of all coding rows (for a multiclass outcome, class ``k`` against the
rest); :func:`mean_code` takes a level's row count and outcome sum for a continuous outcome.
The same functions serve every mode of :class:`~privlearn.encoding.ImpactEncoder`: a table per
level (naive, Laplace, split), a table per fold (cross-fitting) or one value per row
(jackknife, where the counts exclude the row).

The formulas are those of the Win-Vector note "Using differential privacy to reuse training
data" and its R code (``modelCat.R``: ``bayesCode``, ``countCode``; the pseudo-count
``smFactor = 1e-3`` and the rare-level threshold 10 are its defaults).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

__all__ = ["CODE_WIDTH", "bayes_code", "count_code", "level_pvalues", "mean_code"]

#: Output columns per input column for each code family.
CODE_WIDTH = {"bayes": 1, "counts": 4}
#: Suffixes of the four ``counts`` outputs.
COUNT_SUFFIXES = ("n_true", "n_false", "log_ratio", "rare")


def bayes_code(
    n_true: Any, n_false: Any, total_true: Any, total_false: Any, smoothing: float = 1e-3
) -> np.ndarray:
    """Impact code ``log(P(y=1 | level) / P(y=1))`` from counts, with a smoothing pseudo-count.

    With ``p = T / (T + F)`` the prevalence and ``s`` the pseudo-count, Bayes' law is applied to
    smoothed class-conditional level frequencies::

        P(level | y=1) = (n_true  + p s)       / (T + p s)
        P(level | y=0) = (n_false + (1 - p) s) / (F + (1 - p) s)
        P(y=1 | level) = p P(level|y=1) / (p P(level|y=1) + (1 - p) P(level|y=0))
        code           = log(P(y=1 | level) / p)

    (the "Bayes model" of the Win-Vector note; 0 means "no evidence either way"). A level with
    no rows at all (``n_true + n_false == 0``: unseen, pruned, or emptied by noise) codes
    exactly 0, as does every level when the coding rows hold a single class.

    Parameters
    ----------
    n_true, n_false : array_like
        Per-level counts (non-negative; noisy counts are allowed).
    total_true, total_false : array_like
        Class totals ``T`` and ``F`` of the coding rows (broadcast against the counts).
    smoothing : float, default 1e-3
        The pseudo-count ``s`` (> 0).

    Returns
    -------
    ndarray of float64
    """
    nt = np.asarray(n_true, dtype=np.float64)
    nf = np.asarray(n_false, dtype=np.float64)
    tt = np.asarray(total_true, dtype=np.float64)
    tf = np.asarray(total_false, dtype=np.float64)
    total = tt + tf
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(total > 0, tt / np.where(total > 0, total, 1.0), 0.5)
        given_t = (nt + p * smoothing) / (tt + p * smoothing)
        given_f = (nf + (1.0 - p) * smoothing) / (tf + (1.0 - p) * smoothing)
        joint_t = p * given_t
        joint_f = (1.0 - p) * given_f
        code = np.log(joint_t / (joint_t + joint_f) / p)
    informative = (nt + nf > 0) & (tt > 0) & (tf > 0)
    return np.where(informative, code, 0.0)


def count_code(
    n_true: Any, n_false: Any, smoothing: float = 1e-3, rare_count: float = 10.0
) -> np.ndarray:
    """The "counts" code: ``n_true``, ``n_false``, their log ratio and a rare-level flag.

    ``n_true`` and ``n_false`` are floored at ``smoothing`` (so an empty level has a finite log
    ratio 0); the log ratio is ``log(n_true) - log(n_false)`` of the floored counts; the flag is
    1 when ``max(n_true, n_false) < rare_count``. This is the count model of Bilenko's
    "learning with counts" as written in the Win-Vector R code (``countCode``).

    Returns
    -------
    ndarray of float64, shape ``broadcast(n_true, n_false).shape + (4,)``
    """
    nt = np.maximum(np.asarray(n_true, dtype=np.float64), smoothing)
    nf = np.maximum(np.asarray(n_false, dtype=np.float64), smoothing)
    nt, nf = np.broadcast_arrays(nt, nf)
    out = np.empty(nt.shape + (4,), dtype=np.float64)
    out[..., 0] = nt
    out[..., 1] = nf
    out[..., 2] = np.log(nt) - np.log(nf)
    out[..., 3] = np.maximum(nt, nf) < rare_count
    return out


def level_pvalues(n_true: Any, n_false: Any, total_true: Any, total_false: Any) -> np.ndarray:
    """Significance of each level's single-variable model (vtreat's ``rareSig`` pruning).

    The p-value of the exact two-sided binomial test (doubled smaller tail) of
    ``n_true ~ Binomial(n_true + n_false, p)`` with ``p = T / (T + F)`` the prevalence of the
    coding rows: how surprising the level's outcome mix is if the level carried no signal. A
    level with no rows gets p-value 1; a level with one positive row gets ``min(1, 2p)`` (so it
    is never significant at a level below ``2p``); two rows with opposite outcomes are
    significant only when the prevalence is very unbalanced (``p = 0.01``: p-value 0.04), as
    the Win-Vector note describes. Non-integer counts are rounded to integers first.

    Returns
    -------
    ndarray of float64 in ``[0, 1]``; 1 where the level has no rows or the coding rows hold a
    single class.
    """
    nt = np.rint(np.maximum(np.asarray(n_true, dtype=np.float64), 0.0))
    nf = np.rint(np.maximum(np.asarray(n_false, dtype=np.float64), 0.0))
    tt = np.asarray(total_true, dtype=np.float64)
    tf = np.asarray(total_false, dtype=np.float64)
    total = tt + tf
    p = np.where(total > 0, tt / np.where(total > 0, total, 1.0), 0.5)
    n = nt + nf
    lower = stats.binom.cdf(nt, n, p)
    upper = stats.binom.sf(nt - 1.0, n, p)
    pval = np.minimum(1.0, 2.0 * np.minimum(lower, upper))
    degenerate = (n == 0) | (tt <= 0) | (tf <= 0)
    return np.where(degenerate, 1.0, pval)


def mean_code(
    n: Any,
    total: Any,
    n_all: Any,
    total_all: Any,
    smoothing: float = 1e-3,
    bounds: tuple[float, float] | None = None,
) -> np.ndarray:
    """Impact code of a continuous outcome: the level's smoothed mean minus the grand mean.

    With ``g = S / N`` the grand mean of the coding rows and ``m`` the pseudo-count, the level
    mean is shrunk towards ``g`` by ``m`` pseudo-rows at the grand mean (the Bayes code's
    pseudo-count; scikit-learn's ``TargetEncoder(smooth=m)`` for a continuous target)::

        shrunk = (total + m g) / (n + m)
        code   = shrunk - g = (total - n g) / (n + m)

    A level with no rows (``n <= 0``: unseen, or emptied by noise) codes exactly 0, as does
    every level when the coding rows are empty (``N <= 0``). With ``bounds = (lo, hi)`` the
    grand mean and the shrunk mean are clipped to ``[lo, hi]`` first (a no-op for outcomes
    inside the bounds without noise; with noisy counts and sums it keeps codes in range).

    Parameters
    ----------
    n, total : array_like
        Per-level row count and outcome sum (noisy values are allowed).
    n_all, total_all : array_like
        Row count ``N`` and outcome sum ``S`` of all coding rows (broadcast against ``n``).
    smoothing : float, default 1e-3
        The pseudo-count ``m`` (> 0).
    bounds : (float, float), optional
        Public outcome bounds ``(lo, hi)``.

    Returns
    -------
    ndarray of float64
    """
    cnt = np.asarray(n, dtype=np.float64)
    tot = np.asarray(total, dtype=np.float64)
    n_all = np.asarray(n_all, dtype=np.float64)
    s_all = np.asarray(total_all, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        grand = np.where(n_all > 0, s_all / np.where(n_all > 0, n_all, 1.0), 0.0)
        if bounds is not None:
            grand = np.clip(grand, bounds[0], bounds[1])
        code = (tot - cnt * grand) / (cnt + smoothing)
        if bounds is not None:  # only where the shrunk mean leaves the bounds
            shrunk = grand + code
            code = np.where(shrunk > bounds[1], bounds[1] - grand, code)
            code = np.where(shrunk < bounds[0], bounds[0] - grand, code)
    informative = (cnt > 0) & (n_all > 0)
    return np.where(informative, code, 0.0)
