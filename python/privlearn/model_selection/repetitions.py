"""Privacy of "repeat a private algorithm a random number of times and keep the best run".

Pure functions of numbers (like :mod:`privlearn.accounting`): the stateful search lives in
:mod:`privlearn.model_selection.tuning`.

Setting (Papernot & Steinke 2022, Section 3): ``Q`` is a randomized algorithm whose output
carries a score; ``A`` draws a number of repetitions ``K`` from a distribution that does not
depend on the data, runs ``Q`` independently ``K`` times on the same data and outputs the run
with the best score (nothing else: neither ``K`` nor the other runs). Its privacy depends on
the distribution of ``K``:

- truncated negative binomial ``D_{eta, gamma}`` (their Definition 1), ``eta > -1``,
  ``0 < gamma < 1``::

      P[K = k] = (1 - gamma)^k / (gamma^(-eta) - 1) * prod_{l=0}^{k-1} (l + eta) / (l + 1),
      k = 1, 2, ...

  ``eta = 1`` is the geometric distribution ``P[K = k] = gamma (1 - gamma)^(k - 1)`` (the
  random stopping of Liu & Talwar 2019), ``eta -> 0`` the logarithmic distribution
  ``P[K = k] = (1 - gamma)^k / (k log(1/gamma))``. Mean
  ``eta (1 - gamma) / (gamma (1 - gamma^eta))`` (``(1 - gamma) / (gamma log(1/gamma))`` at
  ``eta = 0``).
- Poisson with mean ``mu`` (``K = 0`` is possible: ``A`` then outputs nothing).

References
----------
- [PS22] N. Papernot, T. Steinke, "Hyperparameter tuning with Renyi differential privacy",
  ICLR 2022 (arXiv:2110.03620). Theorem 2 (truncated negative binomial), Theorem 6 (Poisson).
- [LT19] J. Liu, K. Talwar, "Private selection from private candidates", STOC 2019: with a
  geometric number of repetitions of an ``eps``-DP algorithm, the best run is ``3 eps``-DP.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privlearn._checks import as_real
from privlearn.accounting.rdp import _as_orders, _as_rdp, rdp_to_delta, rdp_to_epsilon

__all__ = [
    "epsilon_repeat_pure",
    "negative_binomial_gamma",
    "negative_binomial_mean",
    "negative_binomial_pmf",
    "plan_repetition_epsilon",
    "rdp_repeat_negative_binomial",
    "rdp_repeat_poisson",
    "repeat_epsilon",
    "repetition_rdp",
    "sample_repetitions",
]

#: Largest mean number of repetitions accepted (a run of more is not a tuning run).
MAX_MEAN_REPETITIONS = 1e5


# ---- checks ---------------------------------------------------------------------------------
#: Largest shape ``eta`` accepted (public): beyond it the normaliser ``gamma^-eta - 1`` and the
#: ``Gamma(k + eta)`` terms of the distribution leave double precision (``eta = 1e308``
#: overflowed while drawing K), and the total grows like ``(1 + eta) eps``.
MAX_ETA = 1e6


def _eta(eta: Any) -> float:
    eta = as_real(eta, "eta")
    if not (math.isfinite(eta) and -1.0 < eta <= MAX_ETA):
        raise ValueError(
            f"eta (shape of the truncated negative binomial) must lie in (-1, {MAX_ETA:g}], "
            f"got {eta}"
        )
    return eta


def _log_abs_expm1(eta: float, log_gamma: float) -> float:
    """``log |gamma^-eta - 1|`` (``log |expm1(-eta log gamma)|``) without overflow for a large
    ``eta`` and without ``log 0`` when ``eta log gamma`` underflows (tiny ``eta``: ``|expm1(x)|
    = |x|`` to double precision, taken in log space)."""
    x = -eta * log_gamma
    if abs(x) < 1e-290:
        return math.log(abs(eta)) + math.log(-log_gamma)
    if x > 700.0:
        return x + math.log1p(-math.exp(-x))
    return math.log(abs(math.expm1(x)))


def _gamma(gamma: Any) -> float:
    gamma = as_real(gamma, "gamma")
    if not 0.0 < gamma < 1.0:
        raise ValueError(f"gamma must lie in (0, 1), got {gamma}")
    return gamma


def _mean(mean: Any, name: str, lower: float, upper: float = MAX_MEAN_REPETITIONS) -> float:
    """``mean`` checked to lie in ``(lower, upper]``; the message names the caller's own cap
    (a search passes its :data:`~privlearn.model_selection.tuning.MAX_SEARCH_MEAN_REPETITIONS`,
    the functions of this module :data:`MAX_MEAN_REPETITIONS`)."""
    mean = as_real(mean, name)
    if not (math.isfinite(mean) and lower < mean <= upper):
        raise ValueError(f"{name} must lie in ({lower:g}, {upper:g}], got {mean}")
    return mean


# ---- the truncated negative binomial --------------------------------------------------------
def negative_binomial_mean(eta: float, gamma: float) -> float:
    """Mean of the truncated negative binomial ``D_{eta, gamma}`` ([PS22], Definition 1).

    Parameters
    ----------
    eta : float
        Shape, ``> -1`` (0: logarithmic, 1: geometric).
    gamma : float
        In (0, 1).

    Returns
    -------
    float
        ``eta (1 - gamma) / (gamma (1 - gamma^eta))``, or ``(1 - gamma) / (gamma log(1/gamma))``
        at ``eta = 0``.
    """
    eta, gamma = _eta(eta), _gamma(gamma)
    log_g = math.log(gamma)
    if eta == 0.0:
        return (1.0 - gamma) / (gamma * -log_g)
    # eta (1 - gamma) / (gamma (1 - gamma^eta)) with 1 - gamma^eta = -expm1(eta log gamma);
    # eta / (1 - gamma^eta) -> -1 / log gamma where eta log gamma underflows (a tiny eta)
    x = eta * log_g
    if abs(x) < 1e-290:
        return (1.0 - gamma) / (gamma * -log_g)
    denom = gamma * -math.expm1(x)
    if denom == 0.0:  # a tiny gamma times a tiny 1 - gamma^eta underflows: take the ratios
        return eta / -math.expm1(x) * ((1.0 - gamma) / gamma)
    return eta * (1.0 - gamma) / denom


def negative_binomial_gamma(eta: float, mean: float) -> float:
    """The ``gamma`` of ``D_{eta, gamma}`` whose mean is ``mean`` (> 1).

    The mean decreases strictly from ``+inf`` (gamma -> 0) to 1 (gamma -> 1), so the root is
    unique; it is found by bisection in ``log gamma`` to a relative accuracy of 1e-13.

    Parameters
    ----------
    eta : float
        Shape, ``> -1``.
    mean : float
        Target mean, in ``(1, 1e5]``.

    Returns
    -------
    float
    """
    eta = _eta(eta)
    mean = _mean(mean, "mean", 1.0)
    if eta == 1.0:
        return 1.0 / mean
    lo, hi = math.log(1e-300), math.log1p(-1e-15)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if negative_binomial_mean(eta, math.exp(mid)) > mean:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13:
            break
    gamma = math.exp(0.5 * (lo + hi))
    reached = negative_binomial_mean(eta, gamma)
    if not abs(reached - mean) <= 1e-6 * mean:  # the bracket's end: the mean is out of reach
        raise ValueError(
            f"no truncated negative binomial with eta={eta:g} has mean {mean:g} (near eta = -1 "
            "the mean stays close to 1 for every gamma): raise eta or lower mean_repetitions"
        )
    return gamma


def negative_binomial_pmf(k: Any, eta: float, gamma: float) -> np.ndarray:
    """``P[K = k]`` under ``D_{eta, gamma}`` for integer ``k >= 0`` (0 at ``k = 0``).

    Parameters
    ----------
    k : int or array_like of int
    eta : float
    gamma : float

    Returns
    -------
    numpy.ndarray
        Same shape as ``k``.
    """
    from scipy import special

    eta, gamma = _eta(eta), _gamma(gamma)
    k = np.asarray(k)
    if not np.issubdtype(k.dtype, np.integer) or (k < 0).any():
        raise ValueError("k must hold integers >= 0")
    kf = np.maximum(k, 1).astype(np.float64)
    log_tail = kf * math.log1p(-gamma)
    if eta == 0.0:
        logp = log_tail - np.log(kf) - math.log(-math.log(gamma))
    else:
        # prod_{l<k} (l + eta)/(l + 1) = Gamma(k + eta) / (Gamma(eta) Gamma(k + 1)), signed
        # for eta in (-1, 0) where it is negative, like the normaliser gamma^-eta - 1.
        log_prod = special.gammaln(kf + eta) - special.gammaln(kf + 1.0) - special.gammaln(eta)
        log_norm = _log_abs_expm1(eta, math.log(gamma))
        if eta < 0.0:
            log_prod = special.gammaln(kf + eta) - special.gammaln(kf + 1.0)
            log_prod -= special.gammaln(eta + 1.0) - math.log(-eta)  # |Gamma(eta)|
        logp = log_tail + log_prod - log_norm
    return np.where(k >= 1, np.exp(logp), 0.0)


# ---- RDP of the best of K runs --------------------------------------------------------------
def rdp_repeat_negative_binomial(orders: Any, rdp: Any, eta: float, gamma: float) -> np.ndarray:
    """RDP of the best of ``K ~ D_{eta, gamma}`` independent runs of ``Q`` ([PS22], Theorem 2).

    Theorem 2: if ``Q`` is ``(lambda, eps)``-RDP and ``(lambdahat, epshat)``-RDP with
    ``lambda > 1``, ``lambdahat >= 1``, then the output is ``(lambda, eps')``-RDP with::

        eps' = eps + (1 + eta) (1 - 1/lambdahat) epshat + (1 + eta) log(1/gamma) / lambdahat
                   + log E[K] / (lambda - 1).

    This function takes ``eps = rdp(lambda)`` at each finite order and the best
    ``lambdahat`` among the given finite orders (the only term that depends on it is the
    same for every ``lambda``), then uses that RDP is nondecreasing in the order: the value at
    an order is also bounded by every value at a larger order.

    Parameters
    ----------
    orders : array_like
        Orders ``> 1`` (``inf`` entries get ``inf``).
    rdp : array_like
        RDP of one run at each order (``>= 0``).
    eta : float
        Shape, ``> -1``.
    gamma : float
        In (0, 1).

    Returns
    -------
    numpy.ndarray
        RDP of the output at each order (same shape as ``orders``).
    """
    a, r = _as_rdp(orders, rdp)
    eta, gamma = _eta(eta), _gamma(gamma)
    mean = negative_binomial_mean(eta, gamma)
    fin = np.isfinite(a) & np.isfinite(r)
    if not fin.any():
        return np.full(a.shape, np.inf)
    hat = (1.0 - 1.0 / a[fin]) * r[fin] + (-math.log(gamma)) / a[fin]
    c = (1.0 + eta) * float(np.min(hat))
    out = np.full(a.shape, np.inf)
    out[fin] = r[fin] + c + math.log(mean) / (a[fin] - 1.0)
    return _monotone_envelope(a, out)


def rdp_repeat_poisson(orders: Any, rdp: Any, mu: float) -> np.ndarray:
    """RDP of the best of ``K ~ Poisson(mu)`` independent runs of ``Q`` ([PS22], Theorem 6).

    Theorem 6: if ``Q`` is ``(lambda, eps)``-RDP and ``(epshat, deltahat)``-DP with
    ``e^epshat <= 1 + 1/(lambda - 1)``, the output (nothing when ``K = 0``) is
    ``(lambda, eps + mu deltahat + log(mu) / (lambda - 1))``-RDP. Here
    ``epshat = log(1 + 1/(lambda - 1))`` and ``deltahat`` is obtained from the same RDP curve
    with :func:`privlearn.accounting.rdp_to_delta`; the result is then made nondecreasing in
    the order as in :func:`rdp_repeat_negative_binomial`.

    Parameters
    ----------
    orders : array_like
        Orders ``> 1``.
    rdp : array_like
        RDP of one run at each order.
    mu : float
        Mean number of repetitions, ``> 0``.

    Returns
    -------
    numpy.ndarray
    """
    a, r = _as_rdp(orders, rdp)
    mu = _mean(mu, "mu", 0.0)
    out = np.full(a.shape, np.inf)
    for i in np.flatnonzero(np.isfinite(a) & np.isfinite(r)):
        lam = float(a[i])
        eps_hat = math.log1p(1.0 / (lam - 1.0))
        delta_hat, _ = rdp_to_delta(a, r, eps_hat)
        out[i] = r[i] + mu * delta_hat + math.log(mu) / (lam - 1.0)
    return _monotone_envelope(a, np.maximum(out, 0.0))


def _monotone_envelope(a: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``min`` over orders ``>=`` each order (RDP is nondecreasing in the order)."""
    order = np.argsort(a, kind="stable")
    env = np.minimum.accumulate(out[order][::-1])[::-1]
    result = np.empty_like(out)
    result[order] = env
    return result


def epsilon_repeat_pure(epsilon: float, eta: float) -> float:
    """Pure-DP bound of the best of ``K ~ D_{eta, gamma}`` runs of an ``epsilon``-DP ``Q``.

    ``(2 + eta) epsilon``, for every ``gamma``: take ``lambdahat = lambda`` in [PS22],
    Theorem 2, with ``eps = epshat = epsilon`` (an ``epsilon``-DP algorithm is
    ``(lambda, epsilon)``-RDP at every order) and let ``lambda -> inf`` (the max-divergence is
    the limit of the Renyi divergences). With ``eta = 1`` (geometric ``K``) this is the
    ``3 epsilon`` of [LT19].

    Parameters
    ----------
    epsilon : float
        Finite, ``>= 0``.
    eta : float
        Shape, ``> -1``.

    Returns
    -------
    float
    """
    eps = as_real(epsilon, "epsilon")
    if not (math.isfinite(eps) and eps >= 0.0):
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon}")
    return (2.0 + _eta(eta)) * eps


# ---- one repetition, and the total ---------------------------------------------------------
def repetition_rdp(
    candidate_rdps: Any, score_rdp: Any, composition: str = "parallel"
) -> np.ndarray:
    """RDP curve of one repetition: a candidate chosen at random, trained, then scored.

    ``Q`` picks one candidate configuration with probabilities that do not depend on the
    data, so its output distribution is the same mixture on both neighbouring data sets, and
    by the joint quasi-convexity of the Renyi divergence (van Erven & Harremoes 2014,
    "Renyi divergence and Kullback-Leibler divergence", Theorem 13) its RDP is at most the
    largest candidate's, order by order.

    The training part sees the training split and the score the validation split: every row
    lies in exactly one of them (an independent per-row draw, independent of the data). With
    ``composition="parallel"`` the repetition costs ``max(train, score)`` order by order: for
    neighbours differing in one row ``x``, condition on the split of the other rows and on
    the side ``x`` falls on. If it is on the training side, the score is a post-processing of
    the model with an unchanged validation split, so the divergence is at most the training
    one; if it is on the validation side, the model has the same distribution and, given the
    model, the released score differs by the score mechanism only, so the divergence is at
    most the score's (``exp((alpha-1) D_alpha)`` of the joint law is the model-average of
    the conditional one). The side and the rest of the split are drawn identically on both
    data sets, so quasi-convexity bounds the mixture by the larger of the two. With
    ``"sequential"`` the two are added (adaptive composition, Mironov 2017, Proposition 1),
    which holds for any split.

    Parameters
    ----------
    candidate_rdps : array_like of shape (n_candidates, n_orders)
        RDP of the training part of each candidate (at common orders).
    score_rdp : array_like of shape (n_orders,)
        RDP of the score release.
    composition : {"parallel", "sequential"}, default="parallel"

    Returns
    -------
    numpy.ndarray of shape (n_orders,)
    """
    c = np.atleast_2d(np.asarray(candidate_rdps, dtype=np.float64))
    s = np.asarray(score_rdp, dtype=np.float64)
    if c.ndim != 2 or c.shape[0] == 0 or s.shape != (c.shape[1],):
        raise ValueError(
            "candidate_rdps must have shape (n_candidates, n_orders) and score_rdp "
            f"(n_orders,), got {c.shape} and {s.shape}"
        )
    if np.isnan(c).any() or np.isnan(s).any() or (c < 0).any() or (s < 0).any():
        raise ValueError("RDP values must be >= 0 (inf allowed)")
    train = c.max(axis=0)
    if composition == "parallel":
        return np.maximum(train, s)
    if composition == "sequential":
        return train + s
    raise ValueError(f"composition must be 'parallel' or 'sequential', got {composition!r}")


def repeat_epsilon(
    orders: Any,
    rdp: Any,
    delta: float,
    *,
    distribution: str,
    eta: float | None = None,
    gamma: float | None = None,
    mu: float | None = None,
    pure_epsilon: float | None = None,
) -> tuple[float, float, float | None]:
    """``(epsilon, delta)`` of the best of ``K`` runs of ``Q`` with RDP curve ``rdp``.

    The RDP of the output ([PS22], Theorem 2 or 6) is converted with the tight conversion of
    :func:`privlearn.accounting.rdp_to_epsilon`. When ``Q`` is also ``pure_epsilon``-DP and
    ``K`` is truncated negative binomial, the pure bound :func:`epsilon_repeat_pure` is used
    instead if it is smaller (and then ``delta = 0``).

    Parameters
    ----------
    orders, rdp : array_like
        RDP curve of one repetition.
    delta : float
        In (0, 1), for the conversion.
    distribution : {"truncated_negative_binomial", "poisson"}
    eta, gamma : float, optional
        Truncated negative binomial parameters.
    mu : float, optional
        Poisson mean.
    pure_epsilon : float, optional
        Pure-DP epsilon of one repetition, when it has one.

    Returns
    -------
    (float, float, float or None)
        ``(epsilon, delta, best_order)``; ``best_order`` is None for the pure bound.
    """
    a = np.atleast_1d(_as_orders(orders))
    if distribution == "truncated_negative_binomial":
        if eta is None or gamma is None:
            raise ValueError("the truncated negative binomial needs eta and gamma")
        out = rdp_repeat_negative_binomial(a, rdp, eta, gamma)
    elif distribution == "poisson":
        if mu is None:
            raise ValueError("the Poisson distribution needs mu")
        out = rdp_repeat_poisson(a, rdp, mu)
    else:
        raise ValueError(
            f"distribution must be 'truncated_negative_binomial' or 'poisson', got {distribution!r}"
        )
    eps, order = rdp_to_epsilon(a, out, delta)
    if pure_epsilon is not None and distribution == "truncated_negative_binomial":
        pure = epsilon_repeat_pure(pure_epsilon, eta)  # type: ignore[arg-type]
        if pure <= eps:
            return pure, 0.0, None
    return eps, float(delta), order


def plan_repetition_epsilon(
    target_epsilon: float,
    delta: float,
    *,
    distribution: str,
    eta: float | None = None,
    gamma: float | None = None,
    mu: float | None = None,
    orders: Any = None,
) -> float:
    """The largest pure epsilon per repetition whose search total is at most ``target_epsilon``.

    One repetition is taken to be ``eps``-DP (RDP curve ``min(eps, alpha eps^2 / 2)``,
    Bun & Steinke 2016, Proposition 3.3); the total is :func:`repeat_epsilon`, nondecreasing
    in ``eps``, and the largest ``eps`` with total ``<= target_epsilon`` is found by
    bisection (relative accuracy 1e-10, rounded down).

    Parameters
    ----------
    target_epsilon : float
        The search's total epsilon, finite and > 0.
    delta : float
        In (0, 1).
    distribution, eta, gamma, mu
        As in :func:`repeat_epsilon`.
    orders : array_like, optional
        Default :data:`privlearn.accounting.DEFAULT_ORDERS`.

    Returns
    -------
    float
    """
    from privlearn.accounting.rdp import DEFAULT_ORDERS, rdp_pure_dp

    target = as_real(target_epsilon, "epsilon")
    if not (math.isfinite(target) and target > 0.0):
        raise ValueError(f"epsilon must be a finite number > 0, got {target_epsilon}")
    a = np.atleast_1d(_as_orders(DEFAULT_ORDERS if orders is None else orders))

    def total(eps: float) -> float:
        return repeat_epsilon(
            a,
            rdp_pure_dp(eps, a),
            delta,
            distribution=distribution,
            eta=eta,
            gamma=gamma,
            mu=mu,
            pure_epsilon=eps,
        )[0]

    lo, hi = 0.0, target
    if total(hi) <= target:  # cannot happen for these theorems, kept for safety
        return hi
    if total(0.0) > target:
        raise ValueError(
            f"no per-repetition epsilon reaches a total of {target:g}: the repetition count "
            "alone costs more (log E[K] / (lambda - 1) terms); raise epsilon or delta, or "
            "lower mean_repetitions"
        )
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if total(mid) <= target:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-10 * hi:
            break
    return lo


# ---- drawing K ------------------------------------------------------------------------------
#: Relative size of the tail left out of a window of the hazard sampler (far below the rounding
#: of doubles): see :func:`sample_repetitions`.
_WINDOW_TAIL = 2.0**-70


def _log_pmf(kf: np.ndarray, distribution: str, eta: float, gamma: float, mu: float) -> np.ndarray:
    """``log P[K = k]`` at the (float) ``k`` of the support."""
    from scipy import special

    if distribution == "poisson":
        return kf * math.log(mu) - mu - special.gammaln(kf + 1.0)
    log_tail = kf * math.log1p(-gamma)
    if eta == 0.0:
        return log_tail - np.log(kf) - math.log(-math.log(gamma))
    # eta > 0 here (eta < 0 is drawn by the Sibuya mixture)
    log_prod = special.gammaln(kf + eta) - special.gammaln(kf + 1.0) - special.gammaln(eta)
    return log_tail + log_prod - _log_abs_expm1(eta, math.log(gamma))


def _ratio_bound(j: int, distribution: str, eta: float, gamma: float, mu: float) -> float:
    """An upper bound of ``P[K = i + 1] / P[K = i]`` for every ``i >= j``."""
    if distribution == "poisson":
        return mu / (j + 1.0)
    # (1 - gamma) (i + eta) / (i + 1): increasing to 1 - gamma for eta < 1, decreasing for eta > 1
    return (1.0 - gamma) * max(1.0, (j + eta) / (j + 1.0))


def _draw_by_hazards(
    uniform: Any, distribution: str, eta: float, gamma: float, mu: float, scale: float
) -> int:
    """``K`` by its hazards ``h_k = P[K = k] / P[K >= k]``: ``K`` is the first ``k`` with
    ``U_k < h_k`` (one fresh uniform per ``k``), which has exactly the law of ``K`` for any
    support, so nothing is truncated. The hazards of a block of ``k`` are computed from the
    probabilities of a window ``[k0, J]`` in log space (shifted by their maximum), with ``J``
    extended until the mass beyond it is below ``2^-70`` of the last probability of the block
    (a geometric bound from :func:`_ratio_bound`): each hazard is exact up to the rounding of
    doubles."""
    start = 0 if distribution == "poisson" else 1
    block = int(min(max(64.0, 4.0 * scale), 1 << 22))
    k0, drawn = start, 0
    while True:
        k_end = k0 + block
        last = float(_log_pmf(np.array([k_end - 1.0]), distribution, eta, gamma, mu)[0])
        span = block
        while True:
            j = k_end + span
            r = _ratio_bound(j, distribution, eta, gamma, mu)
            if r < 1.0:
                lp_j = float(_log_pmf(np.array([float(j)]), distribution, eta, gamma, mu)[0])
                if lp_j + math.log(r) - math.log1p(-r) <= last + math.log(_WINDOW_TAIL):
                    break
            span *= 2
        kf = np.arange(k0, j + 1, dtype=np.float64)
        lp = _log_pmf(kf, distribution, eta, gamma, mu)
        w = np.exp(lp - lp.max())
        tail = np.cumsum(w[::-1])[::-1][:block]
        with np.errstate(invalid="ignore", divide="ignore"):
            h = np.where(tail > 0.0, w[:block] / tail, 1.0)
        u = np.asarray(uniform(drawn, block), dtype=np.float64)
        hit = np.flatnonzero(u < h)
        if hit.size:
            return k0 + int(hit[0])
        k0, drawn = k_end, drawn + block


def _draw_logarithmic(uniform: Any, gamma: float) -> int:
    """Logarithmic ``K`` (``eta = 0``), ``P[K = k] = p^k / (k log(1/(1 - p)))`` with
    ``p = 1 - gamma``, by Kemp's (1981) algorithm LK: exact, unbounded."""
    p = 1.0 - gamma
    log_gamma = math.log(gamma)  # log(1 - p)
    index = 0
    while True:
        v, u = (float(x) for x in uniform(index, 2))
        index += 2
        if v >= p:
            return 1
        q = -math.expm1(log_gamma * (1.0 - u))  # 1 - (1 - p)^U', U' = 1 - u in (0, 1]
        if v <= q * q:
            if q >= 1.0:  # (1 - p)^U' underflowed: the next draw decides
                continue
            k = 1.0 + math.floor(math.log(v) / math.log(q)) if v > 0.0 else math.inf
            if k < 2.0**62:
                return int(k)
            continue  # beyond every representable count: probability far below 2^-62
        return 1 if v > q else 2


def _draw_sibuya_tilted(uniform: Any, eta: float, gamma: float) -> int:
    """``K ~ D_{eta, gamma}`` for ``-1 < eta < 0``.

    With ``a = -eta`` the probability generating function of ``D_{eta, gamma}`` is
    ``(1 - (1 - (1 - gamma) x)^a) / (1 - gamma^a)``: the Sibuya law (pgf ``1 - (1 - x)^a``)
    tilted by ``(1 - gamma)^k``. A Sibuya ``K`` is geometric with a success probability
    ``P ~ Beta(a, 1 - a)`` (then ``P[K = k] = a Gamma(k - a) / (Gamma(k + 1) Gamma(1 - a))``);
    a draw is kept with probability ``(1 - gamma)^K`` (rejection; acceptance rate
    ``1 - gamma^a``). ``Beta(a, 1 - a)`` by Johnk's method. Exact up to the rounding of doubles,
    unbounded (the tail is heavy: ``P[K > k]`` decays like ``k^-a`` up to ``k ~ 1/gamma``)."""
    a = -eta
    log_keep = math.log1p(-gamma)
    index = 0
    while True:
        u1, u2, u3, u4 = (float(x) for x in uniform(index, 4))
        index += 4
        # Johnk: X = U^(1/a), Y = V^(1/(1-a)), accepted when X + Y <= 1; P = X / (X + Y)
        lx = math.log1p(-u1) / a
        ly = math.log1p(-u2) / (1.0 - a)
        if not (lx > -745.0 or ly > -745.0):
            continue  # both underflow: a rare case resolved by new draws
        x, y = math.exp(lx), math.exp(ly)
        if x + y > 1.0 or x + y == 0.0:
            continue
        p = x / (x + y)
        if p >= 1.0:
            k = 1.0
        elif p <= 0.0:
            continue
        else:
            k = 1.0 + math.floor(math.log1p(-u3) / math.log1p(-p))  # geometric on {1, 2, ...}
        if not k < 2.0**62:
            continue  # kept with probability (1 - gamma)^k, zero in doubles for such k
        if math.log1p(-u4) < k * log_keep:  # U4 < (1 - gamma)^k, as 1 - U4 in (0, 1]
            return int(k)


def sample_repetitions(
    uniform: Any,
    *,
    distribution: str,
    eta: float | None = None,
    gamma: float | None = None,
    mu: float | None = None,
) -> int:
    """Draw ``K`` from the exact distribution the theorems cover, with no truncation.

    [PS22]'s Theorem 2 is stated for ``K ~ D_{eta, gamma}`` on all of ``{1, 2, ...}`` and
    Theorem 6 for ``K ~ Poisson(mu)``; a sampler that stops at some ``kmax`` and puts the
    remaining mass on it draws another distribution, which neither theorem covers. So no
    mass is folded or cut:

    - ``eta = 1``: geometric, by inversion ``K = 1 + floor(log(1 - U) / log(1 - gamma))``;
    - ``eta = 0``: logarithmic, by Kemp's algorithm LK;
    - ``-1 < eta < 0``: a tilted Sibuya law by rejection (see ``_draw_sibuya_tilted``);
    - ``eta > 0`` and Poisson: sequential hazards ``P[K = k] / P[K >= k]``, one fresh uniform
      per ``k``, computed in windows whose left-out mass is below ``2^-70`` of the window's
      last probability.

    Each is exact up to the rounding of doubles.

    Parameters
    ----------
    uniform : callable
        ``uniform(start, count)`` returns ``count`` independent uniforms in ``[0, 1)``,
        addressed from ``start`` (e.g. ``privlearn.random.Stream(seed, stream=s).uniform``);
        a numpy ``Generator`` is accepted too.
    distribution, eta, gamma, mu
        As in :func:`repeat_epsilon`.

    Returns
    -------
    int
        ``>= 1`` for the truncated negative binomial, ``>= 0`` for Poisson.
    """
    if isinstance(uniform, np.random.Generator):
        gen = uniform
        uniform = lambda start, count: gen.random(count)  # noqa: E731
    if not callable(uniform):
        raise TypeError(
            "uniform must be a callable uniform(start, count) -> array of uniforms in [0, 1) "
            f"(or a numpy Generator), got {type(uniform).__name__}"
        )
    if distribution == "poisson":
        mu = _mean(mu, "mu", 0.0)
        return _draw_by_hazards(uniform, "poisson", 0.0, 0.5, mu, mu)
    if distribution != "truncated_negative_binomial":
        raise ValueError(
            f"distribution must be 'truncated_negative_binomial' or 'poisson', got {distribution!r}"
        )
    if eta is None or gamma is None:
        raise ValueError("the truncated negative binomial needs eta and gamma")
    eta, gamma = _eta(eta), _gamma(gamma)
    if eta == 1.0:
        u = float(uniform(0, 1)[0])
        k = 1.0 + math.floor(math.log1p(-u) / math.log1p(-gamma))
        return int(min(k, 2.0**62))
    if eta == 0.0:
        return _draw_logarithmic(uniform, gamma)
    if eta < 0.0:
        return _draw_sibuya_tilted(uniform, eta, gamma)
    return _draw_by_hazards(
        uniform, "truncated_negative_binomial", eta, gamma, 1.0, negative_binomial_mean(eta, gamma)
    )
