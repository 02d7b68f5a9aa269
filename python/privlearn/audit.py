"""Statistical privacy audits: empirical lower bounds on the privacy parameters of a mechanism
from its outputs on two neighbouring inputs, with Clopper-Pearson confidence bounds.

An audit runs the mechanism ``N`` times on a data set ``D`` and ``N'`` times on a neighbour
``D'``, counts how often the outputs fall in an event ``S`` fixed in advance, and asks whether
the counts are compatible with the claimed guarantee. If a mechanism satisfies the claim, an
audit fails with probability at most the stated false-failure probability (a few ``alpha``);
a mechanism that is substantially less private than claimed fails with high probability once
``N`` is large enough (about 1,000-2,000 draws per side for pure DP at ``alpha = 1e-6``).

The event must not be chosen by looking at the audited draws (that would bias the counts): use
an event fixed by the mechanism's form (e.g. ``output > Delta`` for Laplace noise around 0 vs
``Delta``), or choose it on a separate split of the draws with :func:`select_threshold_event` /
:func:`audit_pure_dp_split`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special, stats

from privlearn._checks import as_positive, as_real

__all__ = [
    "AuditResult",
    "GaussianAuditResult",
    "ThresholdEvent",
    "audit_gaussian_dp",
    "audit_pure_dp",
    "audit_pure_dp_split",
    "clopper_pearson",
    "gaussian_dp_audit_power",
    "pure_dp_audit_power",
    "select_threshold_event",
]

Event = Callable[[np.ndarray], Any]

#: Largest number of draws per side the power functions take (their work is ``O(n log n)``).
MAX_POWER_DRAWS = 10**7


def _as_alpha(alpha: Any) -> float:
    alpha = as_positive(alpha, "alpha")
    if not alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    return alpha


def _as_delta(delta: Any) -> float:
    delta = as_real(delta, "delta")
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must lie in [0, 1), got {delta}")
    return delta


def _lower(k: np.ndarray | int, n: np.ndarray | int, alpha: float) -> np.ndarray:
    """One-sided Clopper-Pearson lower bound at level ``1 - alpha/2`` (0 when ``k = 0``)."""
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        bound = stats.beta.ppf(alpha / 2.0, k, n - k + 1.0)
    return np.where(k > 0, bound, 0.0)


def _upper(k: np.ndarray | int, n: np.ndarray | int, alpha: float) -> np.ndarray:
    """One-sided Clopper-Pearson upper bound at level ``1 - alpha/2`` (1 when ``k = n``)."""
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        bound = stats.beta.isf(alpha / 2.0, k + 1.0, n - k)
    return np.where(k < n, bound, 1.0)


def clopper_pearson(k: int, n: int, alpha: float = 1e-6) -> tuple[float, float]:
    """Two-sided Clopper-Pearson interval ``(L, U)`` for a binomial proportion.

    ``L = Beta.ppf(alpha/2, k, n - k + 1)``, ``U = Beta.isf(alpha/2, k + 1, n - k)``
    (Clopper & Pearson 1934): ``P(p < L) <= alpha/2`` and ``P(p > U) <= alpha/2``.
    """
    alpha = _as_alpha(alpha)
    if not (0 <= k <= n and n >= 1):
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    return float(_lower(k, n, alpha)), float(_upper(k, n, alpha))


def _log_ratio_bound(lower: np.ndarray, upper: np.ndarray, delta: float) -> np.ndarray:
    """``log((lower - delta) / upper)``, or ``-inf`` where ``lower <= delta``."""
    excess = np.asarray(lower, dtype=np.float64) - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.log(excess) - np.log(upper)
    return np.where(excess > 0.0, value, -np.inf)


def _event_counts(outputs: Any, event: Event, name: str) -> tuple[int, int]:
    arr = np.asarray(outputs)
    if arr.ndim == 0 or arr.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty array of outputs (first axis = draws)")
    hits = np.asarray(event(arr))
    if hits.shape != (arr.shape[0],):
        raise ValueError(
            f"event must map {name} to one boolean per draw, shape ({arr.shape[0]},); "
            f"got shape {hits.shape}"
        )
    if hits.dtype != np.bool_:
        if not np.isin(hits, (0, 1)).all():
            raise ValueError("event must return booleans")
        hits = hits.astype(bool)
    return int(hits.sum()), int(arr.shape[0])


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit_pure_dp`.

    Attributes
    ----------
    passed : bool
        ``False`` iff the counts refute the claimed ``(epsilon, delta)``-DP.
    epsilon_lower : float
        Empirical lower bound on ``epsilon`` (``>= 0``) that holds with confidence
        ``1 - alpha`` per direction.
    epsilon_claim, delta, alpha : float
        The audited claim and the Clopper-Pearson parameter.
    n0, n1 : int
        Draws on ``D`` and on ``D'``.
    k0, k1 : int
        Draws that fell in the event on ``D`` and on ``D'``.
    p0_lower, p0_upper, p1_lower, p1_upper : float
        Clopper-Pearson bounds (each one-sided at level ``1 - alpha/2``) on
        ``P(M(D) in S)`` and ``P(M(D') in S)``.
    symmetric : bool
        Whether the direction with ``D`` and ``D'`` swapped was also checked.
    """

    passed: bool
    epsilon_lower: float
    epsilon_claim: float
    delta: float
    alpha: float
    n0: int
    n1: int
    k0: int
    k1: int
    p0_lower: float
    p0_upper: float
    p1_lower: float
    p1_upper: float
    symmetric: bool = True

    def __str__(self) -> str:
        verdict = "PASSED" if self.passed else "FAILED"
        return (
            f"pure-DP audit {verdict}: claim epsilon={self.epsilon_claim:g}, "
            f"delta={self.delta:g}; empirical epsilon >= {self.epsilon_lower:.4f} "
            f"(alpha={self.alpha:g})\n"
            f"  D : {self.k0}/{self.n0} in event, P in [{self.p0_lower:.5f}, {self.p0_upper:.5f}]\n"
            f"  D': {self.k1}/{self.n1} in event, P in [{self.p1_lower:.5f}, {self.p1_upper:.5f}]"
        )


def audit_pure_dp(
    outputs_d0: Any,
    outputs_d1: Any,
    event: Event,
    epsilon_claim: float,
    delta: float = 0.0,
    alpha: float = 1e-6,
    *,
    symmetric: bool = True,
) -> AuditResult:
    """Audit an ``(epsilon, delta)``-DP claim with one event and Clopper-Pearson bounds.

    Parameters
    ----------
    outputs_d0, outputs_d1 : array_like
        Independent outputs of the mechanism on ``D`` and on a neighbour ``D'`` (first axis =
        draws; each side may have its own count).
    event : callable
        Maps an array of outputs to one boolean per draw (the event ``S``). It must be fixed
        before looking at these draws.
    epsilon_claim : float
        The claimed ``epsilon`` (``>= 0``).
    delta : float, default=0.0
        The claimed ``delta``.
    alpha : float, default=1e-6
        Each count gets a two-sided Clopper-Pearson interval at level ``1 - alpha``.
    symmetric : bool, default=True
        Also test the direction with ``D`` and ``D'`` swapped.

    Returns
    -------
    AuditResult

    Notes
    -----
    With ``K1 = #{M(D') in S}``, ``K0 = #{M(D) in S}`` out of ``N1``, ``N0`` draws,
    ``L1 = Beta.ppf(alpha/2, K1, N1 - K1 + 1)`` and ``U0 = Beta.isf(alpha/2, K0 + 1, N0 - K0)``,
    the audit fails iff ``L1 - delta > e^epsilon U0`` (or, if symmetric,
    ``L0 - delta > e^epsilon U1``): DP requires ``P(M(D') in S) <= e^epsilon P(M(D) in S) +
    delta``, and the bounds hold with probability ``>= 1 - alpha`` per count. Reported:
    ``epsilon_lower = max(0, log((L1 - delta)/U0), log((L0 - delta)/U1))``.

    False-failure probability: a mechanism satisfying the claim fails with probability at most
    ``alpha`` (one direction) or ``2 alpha`` (symmetric: each of the two counts leaves its
    interval with probability at most ``alpha``).
    """
    epsilon_claim = float(epsilon_claim)
    if not (math.isfinite(epsilon_claim) and epsilon_claim >= 0.0):
        raise ValueError(f"epsilon_claim must be finite and >= 0, got {epsilon_claim}")
    delta = _as_delta(delta)
    alpha = _as_alpha(alpha)
    if not callable(event):
        raise TypeError("event must be a callable mapping outputs to booleans")
    k0, n0 = _event_counts(outputs_d0, event, "outputs_d0")
    k1, n1 = _event_counts(outputs_d1, event, "outputs_d1")
    l0, u0 = float(_lower(k0, n0, alpha)), float(_upper(k0, n0, alpha))
    l1, u1 = float(_lower(k1, n1, alpha)), float(_upper(k1, n1, alpha))
    bounds = [float(_log_ratio_bound(l1, u0, delta))]
    if symmetric:
        bounds.append(float(_log_ratio_bound(l0, u1, delta)))
    epsilon_lower = max(0.0, *bounds)
    return AuditResult(
        passed=not max(bounds) > epsilon_claim,
        epsilon_lower=epsilon_lower,
        epsilon_claim=epsilon_claim,
        delta=delta,
        alpha=alpha,
        n0=n0,
        n1=n1,
        k0=k0,
        k1=k1,
        p0_lower=l0,
        p0_upper=u0,
        p1_lower=l1,
        p1_upper=u1,
        symmetric=bool(symmetric),
    )


# ---- choosing the event on a separate split -------------------------------------------------
@dataclass(frozen=True)
class ThresholdEvent:
    """The event ``output > threshold`` (``above=True``) or ``output <= threshold``, on scalar
    outputs (or on column ``coordinate`` of vector outputs)."""

    threshold: float
    above: bool = True
    coordinate: int | None = None

    def __call__(self, outputs: Any) -> np.ndarray:
        x = np.asarray(outputs, dtype=np.float64)
        if self.coordinate is not None:
            x = x.reshape(x.shape[0], -1)[:, self.coordinate]
        elif x.ndim != 1:
            raise ValueError(f"ThresholdEvent needs 1-D outputs, got shape {x.shape}")
        return x > self.threshold if self.above else x <= self.threshold

    def __str__(self) -> str:
        op = ">" if self.above else "<="
        who = "output" if self.coordinate is None else f"output[{self.coordinate}]"
        return f"{who} {op} {self.threshold:g}"


def _scalar_outputs(outputs: Any, name: str) -> np.ndarray:
    x = np.asarray(outputs, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of scalar outputs")
    return x


def select_threshold_event(
    selection_d0: Any,
    selection_d1: Any,
    *,
    delta: float = 0.0,
    alpha: float = 1e-6,
    candidates: Any = None,
    max_candidates: int = 256,
) -> ThresholdEvent:
    """Choose the threshold event with the largest Clopper-Pearson lower bound on ``epsilon``
    **on a selection split**; audit it on other, independent draws.

    Parameters
    ----------
    selection_d0, selection_d1 : array_like, 1-D
        Draws reserved for choosing the event (never reuse them in the audit: a maximum over
        events computed on the audited draws is biased upward).
    delta, alpha : float
        As in :func:`audit_pure_dp`.
    candidates : array_like, optional
        Thresholds to try; default: up to ``max_candidates`` quantiles of the pooled selection
        draws. Both ``output > t`` and ``output <= t`` are tried for each ``t``.
    max_candidates : int, default=256

    Returns
    -------
    ThresholdEvent
    """
    x0 = np.sort(_scalar_outputs(selection_d0, "selection_d0"))
    x1 = np.sort(_scalar_outputs(selection_d1, "selection_d1"))
    delta = _as_delta(delta)
    alpha = _as_alpha(alpha)
    if candidates is None:
        pooled = np.unique(np.concatenate([x0, x1]))
        if pooled.size > max_candidates:
            pooled = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, max_candidates)))
        candidates = pooled
    t = np.asarray(candidates, dtype=np.float64).ravel()
    if t.size == 0 or not np.isfinite(t).all():
        raise ValueError("candidates must be a non-empty array of finite thresholds")
    n0, n1 = x0.size, x1.size
    above0 = n0 - np.searchsorted(x0, t, side="right")
    above1 = n1 - np.searchsorted(x1, t, side="right")
    best: tuple[float, float, bool] = (-np.inf, float(t[0]), True)
    for k0, k1, is_above in ((above0, above1, True), (n0 - above0, n1 - above1, False)):
        forward = _log_ratio_bound(_lower(k1, n1, alpha), _upper(k0, n0, alpha), delta)
        backward = _log_ratio_bound(_lower(k0, n0, alpha), _upper(k1, n1, alpha), delta)
        score = np.maximum(forward, backward)
        i = int(np.argmax(score))
        if score[i] > best[0]:
            best = (float(score[i]), float(t[i]), is_above)
    return ThresholdEvent(threshold=best[1], above=best[2])


def audit_pure_dp_split(
    outputs_d0: Any,
    outputs_d1: Any,
    epsilon_claim: float,
    delta: float = 0.0,
    alpha: float = 1e-6,
    *,
    selection_fraction: float = 0.5,
) -> tuple[AuditResult, ThresholdEvent]:
    """Choose a threshold event on the first ``selection_fraction`` of each side's draws
    (:func:`select_threshold_event`) and audit it with :func:`audit_pure_dp` on the rest.

    The draws must be i.i.d. so that the two splits are independent; the false-failure
    probability is then that of :func:`audit_pure_dp` (at most ``2 alpha``), whatever event the
    selection split picks.
    """
    x0 = _scalar_outputs(outputs_d0, "outputs_d0")
    x1 = _scalar_outputs(outputs_d1, "outputs_d1")
    fraction = as_positive(selection_fraction, "selection_fraction")
    if not fraction < 1.0:
        raise ValueError(f"selection_fraction must lie in (0, 1), got {fraction}")
    s0, s1 = int(fraction * x0.size), int(fraction * x1.size)
    if min(s0, s1, x0.size - s0, x1.size - s1) < 1:
        raise ValueError("too few draws to split into a selection and an audit part")
    event = select_threshold_event(x0[:s0], x1[:s1], delta=delta, alpha=alpha)
    return audit_pure_dp(x0[s0:], x1[s1:], event, epsilon_claim, delta, alpha), event


# ---- Gaussian differential privacy ------------------------------------------------------------
@dataclass(frozen=True)
class GaussianAuditResult:
    """Outcome of :func:`audit_gaussian_dp`.

    Attributes
    ----------
    passed : bool
        ``False`` iff the counts refute ``mu``-GDP.
    mu_lower : float
        Empirical lower bound ``Phi^-1(1 - FPR_ub) - Phi^-1(FNR_ub)`` (``>= 0``).
    mu_claim, threshold, alpha : float
    n0, n1 : int
        Draws on ``D`` and ``D'``.
    false_positives, false_negatives : int
        ``#{M(D) > threshold}`` and ``#{M(D') <= threshold}``.
    fpr_upper, fnr_upper : float
        One-sided Clopper-Pearson upper bounds at level ``1 - alpha/2``.
    """

    passed: bool
    mu_lower: float
    mu_claim: float
    threshold: float
    alpha: float
    n0: int
    n1: int
    false_positives: int
    false_negatives: int
    fpr_upper: float
    fnr_upper: float

    def __str__(self) -> str:
        verdict = "PASSED" if self.passed else "FAILED"
        return (
            f"GDP audit {verdict}: claim mu={self.mu_claim:g}; empirical mu >= "
            f"{self.mu_lower:.4f} (alpha={self.alpha:g}, threshold {self.threshold:g})\n"
            f"  FPR: {self.false_positives}/{self.n0}, upper bound {self.fpr_upper:.5f}\n"
            f"  FNR: {self.false_negatives}/{self.n1}, upper bound {self.fnr_upper:.5f}"
        )


def audit_gaussian_dp(
    outputs_d0: Any,
    outputs_d1: Any,
    sensitivity: float,
    sigma: float,
    *,
    threshold: float | None = None,
    alpha: float = 1e-6,
) -> GaussianAuditResult:
    """Audit a ``mu``-GDP claim, ``mu = sensitivity / sigma``, with a threshold test.

    Parameters
    ----------
    outputs_d0, outputs_d1 : array_like, 1-D
        Scalar outputs on ``D`` (centred at ``0``) and on ``D'`` (centred at ``sensitivity``).
    sensitivity : float
        ``Delta > 0`` (for the lattice mechanisms: the effective sensitivity).
    sigma : float
        Noise standard deviation ``> 0``.
    threshold : float, optional
        Reject ``D`` when ``output > threshold``; default ``Delta / 2``.
    alpha : float, default=1e-6
        Each error rate gets a one-sided Clopper-Pearson upper bound at level ``1 - alpha/2``.

    Returns
    -------
    GaussianAuditResult

    Notes
    -----
    ``mu``-GDP (Dong, Roth & Su 2022) means every test of ``D`` against ``D'`` has
    ``FNR >= Phi(Phi^-1(1 - FPR) - mu)``, i.e. ``Phi^-1(1 - FPR) - Phi^-1(FNR) <= mu``. The
    left side decreases in both error rates, so with Clopper-Pearson upper bounds
    ``FPR_ub``, ``FNR_ub`` the audit fails iff ``Phi^-1(1 - FPR_ub) - Phi^-1(FNR_ub) > mu``.
    The expression is symmetric in the two rates, so the swapped direction gives the same test.

    False-failure probability: at most ``alpha`` (each upper bound fails with probability at
    most ``alpha/2``).
    """
    x0 = _scalar_outputs(outputs_d0, "outputs_d0")
    x1 = _scalar_outputs(outputs_d1, "outputs_d1")
    sensitivity = as_positive(sensitivity, "sensitivity")
    sigma = as_positive(sigma, "sigma")
    alpha = _as_alpha(alpha)
    t = sensitivity / 2.0 if threshold is None else float(threshold)
    if not math.isfinite(t):
        raise ValueError(f"threshold must be finite, got {t}")
    fp = int((x0 > t).sum())
    fn = int((x1 <= t).sum())
    fpr_ub = float(_upper(fp, x0.size, alpha))
    fnr_ub = float(_upper(fn, x1.size, alpha))
    mu_claim = sensitivity / sigma
    gap = float(-special.ndtri(fpr_ub) - special.ndtri(fnr_ub))  # Phi^-1(1-a) = -Phi^-1(a)
    return GaussianAuditResult(
        passed=not gap > mu_claim,
        mu_lower=max(0.0, gap),
        mu_claim=mu_claim,
        threshold=t,
        alpha=alpha,
        n0=x0.size,
        n1=x1.size,
        false_positives=fp,
        false_negatives=fn,
        fpr_upper=fpr_ub,
        fnr_upper=fnr_ub,
    )


# ---- power: how likely an audit with n draws is to refute a violated claim --------------------
def _as_probability(p: Any, name: str) -> float:
    p = as_real(p, name)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {p}")
    return p


def _as_draws(n: Any, name: str) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(n).__name__}")
    if not 1 <= n <= MAX_POWER_DRAWS:
        raise ValueError(f"{name} must lie in [1, {MAX_POWER_DRAWS}], got {n}")
    return int(n)


def _binomial_cdf_below(n: int, p: float) -> np.ndarray:
    """``c[j] = P(K < j)`` for ``K ~ Binomial(n, p)``, ``j = 0 .. n + 1``."""
    pmf = stats.binom.pmf(np.arange(n + 1), n, p)
    return np.concatenate([[0.0], np.minimum(np.cumsum(pmf), 1.0)])


def pure_dp_audit_power(
    p0: float,
    p1: float,
    n0: int,
    n1: int,
    epsilon_claim: float,
    delta: float = 0.0,
    alpha: float = 1e-6,
    *,
    symmetric: bool = True,
) -> float:
    """Probability that :func:`audit_pure_dp` with ``n0`` and ``n1`` draws refutes the claim
    when the event has probability ``p0`` on ``D`` and ``p1`` on ``D'``.

    Use it to size an audit: for a mechanism that violates the claim (e.g. one run at twice
    the claimed ``epsilon``, whose event probabilities follow from its form), the returned
    power is the probability that the audit catches it. For a mechanism that keeps the claim
    the same number is the false-failure probability, at most ``2 alpha`` (``alpha`` one-sided).

    Parameters
    ----------
    p0, p1 : float
        ``P(M(D) in S)`` and ``P(M(D') in S)``, in ``[0, 1]``.
    n0, n1 : int
        Draws on ``D`` and on ``D'`` (at most :data:`MAX_POWER_DRAWS`).
    epsilon_claim, delta, alpha, symmetric
        As in :func:`audit_pure_dp`.

    Returns
    -------
    float
        ``P(audit fails)``, exact up to floating-point rounding: the counts are independent
        binomials ``K0 ~ B(n0, p0)``, ``K1 ~ B(n1, p1)``; for each ``K0`` the refuting ``K1``
        form the set ``{K1 >= a(K0)}`` (forward direction; ``L1`` grows with ``K1``), united
        with ``{K1 < b(K0)}`` (the swapped direction; ``U1`` grows with ``K1``).
    """
    p0 = _as_probability(p0, "p0")
    p1 = _as_probability(p1, "p1")
    n0 = _as_draws(n0, "n0")
    n1 = _as_draws(n1, "n1")
    epsilon_claim = float(epsilon_claim)
    if not (math.isfinite(epsilon_claim) and epsilon_claim >= 0.0):
        raise ValueError(f"epsilon_claim must be finite and >= 0, got {epsilon_claim}")
    delta = _as_delta(delta)
    alpha = _as_alpha(alpha)
    k0, k1 = np.arange(n0 + 1), np.arange(n1 + 1)
    l0, u0 = _lower(k0, n0, alpha), _upper(k0, n0, alpha)
    l1, u1 = _lower(k1, n1, alpha), _upper(k1, n1, alpha)
    with np.errstate(divide="ignore"):
        log_u0, log_u1 = np.log(u0), np.log(u1)
        log_l0 = np.where(l0 > delta, np.log(np.maximum(l0 - delta, 0.0)), -np.inf)
        log_l1 = np.where(l1 > delta, np.log(np.maximum(l1 - delta, 0.0)), -np.inf)
    # forward: log(L1 - delta) - log(U0) > eps  <=>  K1 >= a(K0)  (log_l1 nondecreasing in K1)
    a = np.searchsorted(np.maximum.accumulate(log_l1), epsilon_claim + log_u0, side="right")
    below1 = _binomial_cdf_below(n1, p1)
    hit = 1.0 - below1[a]  # P(K1 >= a)
    if symmetric:  # log(L0 - delta) - log(U1) > eps  <=>  K1 < b(K0)  (log_u1 nondecreasing)
        b = np.searchsorted(np.maximum.accumulate(log_u1), log_l0 - epsilon_claim, side="left")
        hit = np.where(a <= b, 1.0, hit + below1[b])
    pmf0 = stats.binom.pmf(k0, n0, p0)
    return float(min(1.0, max(0.0, float(np.dot(pmf0, hit)))))


def gaussian_dp_audit_power(
    fpr: float, fnr: float, n0: int, n1: int, mu_claim: float, alpha: float = 1e-6
) -> float:
    """Probability that :func:`audit_gaussian_dp` with ``n0`` and ``n1`` draws refutes
    ``mu_claim``-GDP when its threshold test has true error rates ``fpr`` and ``fnr``.

    For outputs ``N(0, s^2)`` on ``D`` and ``N(Delta, s^2)`` on ``D'`` (a Gaussian mechanism
    whose true ``mu`` is ``Delta / s``) and the default threshold ``Delta / 2``,
    ``fpr = fnr = Phi(-mu / 2)``; a mechanism with half the claimed noise has ``mu = 2
    mu_claim``.

    Parameters
    ----------
    fpr, fnr : float
        ``P(M(D) > t)`` and ``P(M(D') <= t)`` for the audit's threshold ``t``.
    n0, n1 : int
        Draws on ``D`` and on ``D'`` (at most :data:`MAX_POWER_DRAWS`).
    mu_claim : float
        The claimed ``mu`` (``sensitivity / sigma`` in :func:`audit_gaussian_dp`).
    alpha : float, default=1e-6
        As in :func:`audit_gaussian_dp`.

    Returns
    -------
    float
        ``P(audit fails)``, exact up to floating-point rounding (``FP ~ B(n0, fpr)`` and
        ``FN ~ B(n1, fnr)`` independent; for each ``FP`` the refuting ``FN`` are those below a
        cut, since the audit's statistic decreases in ``FN``). At a mechanism that keeps the
        claim it is at most ``alpha``.
    """
    fpr = _as_probability(fpr, "fpr")
    fnr = _as_probability(fnr, "fnr")
    n0 = _as_draws(n0, "n0")
    n1 = _as_draws(n1, "n1")
    mu_claim = as_real(mu_claim, "mu_claim")
    if not (math.isfinite(mu_claim) and mu_claim >= 0.0):
        raise ValueError(f"mu_claim must be finite and >= 0, got {mu_claim}")
    alpha = _as_alpha(alpha)
    g0 = -special.ndtri(_upper(np.arange(n0 + 1), n0, alpha))  # Phi^-1(1 - FPR_ub), decreasing
    g1 = -special.ndtri(_upper(np.arange(n1 + 1), n1, alpha))
    # refuted iff g0[FP] + g1[FN] > mu  <=>  -g1[FN] < g0[FP] - mu  <=>  FN < c(FP)
    c = np.searchsorted(np.maximum.accumulate(-g1), g0 - mu_claim, side="left")
    hit = _binomial_cdf_below(n1, fnr)[c]
    pmf0 = stats.binom.pmf(np.arange(n0 + 1), n0, fpr)
    return float(min(1.0, max(0.0, float(np.dot(pmf0, hit)))))
