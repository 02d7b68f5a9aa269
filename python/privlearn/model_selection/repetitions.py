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
def _eta(eta: Any) -> float:
    eta = as_real(eta, "eta")
    if not (math.isfinite(eta) and eta > -1.0):
        raise ValueError(f"eta (shape of the truncated negative binomial) must be > -1, got {eta}")
    return eta


def _gamma(gamma: Any) -> float:
    gamma = as_real(gamma, "gamma")
    if not 0.0 < gamma < 1.0:
        raise ValueError(f"gamma must lie in (0, 1), got {gamma}")
    return gamma


def _mean(mean: Any, name: str, lower: float) -> float:
    mean = as_real(mean, name)
    if not (math.isfinite(mean) and lower < mean <= MAX_MEAN_REPETITIONS):
        raise ValueError(f"{name} must lie in ({lower:g}, {MAX_MEAN_REPETITIONS:g}], got {mean}")
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
    # eta (1 - gamma) / (gamma (1 - gamma^eta)) with 1 - gamma^eta = -expm1(eta log gamma)
    return eta * (1.0 - gamma) / (gamma * -math.expm1(eta * log_g))


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
    return math.exp(0.5 * (lo + hi))


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
        log_norm = math.log(abs(math.expm1(-eta * math.log(gamma))))
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
def sample_repetitions(
    u: float,
    *,
    distribution: str,
    eta: float | None = None,
    gamma: float | None = None,
    mu: float | None = None,
) -> int:
    """Draw ``K`` by inversion of its distribution function at the uniform ``u`` in [0, 1).

    ``K`` is the smallest ``k`` with ``P[K <= k] > u``; the probabilities are summed in
    order (``P[K = k + 1] / P[K = k] = (1 - gamma)(k + eta)/(k + 1)`` for the truncated
    negative binomial, ``mu / (k + 1)`` for Poisson, computed in log space), so the draw is
    exact up to the rounding of the distribution function.

    Parameters
    ----------
    u : float
        Uniform in [0, 1) (from the caller's generator).
    distribution, eta, gamma, mu
        As in :func:`repeat_epsilon`.

    Returns
    -------
    int
    """
    from scipy import special

    u = as_real(u, "u")
    if not 0.0 <= u < 1.0:
        raise ValueError(f"u must lie in [0, 1), got {u}")
    if distribution == "poisson":
        mu = _mean(mu, "mu", 0.0)
        kmax = int(mu + 40.0 * math.sqrt(mu) + 100.0)
        k = np.arange(kmax + 1, dtype=np.float64)
        logp = k * math.log(mu) - mu - special.gammaln(k + 1.0)
        start = 0
    elif distribution == "truncated_negative_binomial":
        assert eta is not None and gamma is not None
        mean = negative_binomial_mean(eta, gamma)
        # tail: P[K > k] <= E[K]/k is loose; extend until the mass left is below 1e-17
        kmax = int(50.0 * mean / max(1.0 + eta, 1e-3) + 200.0)
        k = np.arange(1, kmax + 1)
        with np.errstate(under="ignore"):
            logp = np.log(np.maximum(negative_binomial_pmf(k, eta, gamma), 1e-320))
        start = 1
    else:
        raise ValueError(
            f"distribution must be 'truncated_negative_binomial' or 'poisson', got {distribution!r}"
        )
    cdf = np.cumsum(np.exp(logp))
    idx = int(np.searchsorted(cdf, u, side="right"))
    return start + min(idx, len(cdf) - 1)
