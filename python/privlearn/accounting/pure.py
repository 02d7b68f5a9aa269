"""Composition and amplification theorems for pure (and approximate) differential privacy.

Pure functions of numbers, for mechanisms whose guarantee is stated as (epsilon, delta)-DP:
the Laplace mechanism, the exponential mechanism, Song et al.'s L2-Laplace noise, ...

References
----------
- [DMNS06] C. Dwork, F. McSherry, K. Nissim, A. Smith, "Calibrating noise to sensitivity in
  private data analysis", TCC 2006.
- [DRV10] C. Dwork, G. Rothblum, S. Vadhan, "Boosting and differential privacy", FOCS 2010,
  Theorem III.3.
- [DR14] C. Dwork, A. Roth, "The algorithmic foundations of differential privacy", 2014,
  Theorem 3.16 (basic composition) and Theorem 3.20 (advanced composition).
- [McS09] F. McSherry, "Privacy integrated queries", SIGMOD 2009, Theorem 4 (parallel
  composition).
- [BBG18] B. Balle, G. Barthe, M. Gaboardi, "Privacy amplification by subsampling: tight
  analyses via couplings and divergences", NeurIPS 2018, Table 1 (Poisson subsampling under
  add/remove-one, sampling without replacement under replace-one).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .._checks import as_index, as_non_negative, as_positive

__all__ = [
    "advanced_composition",
    "amplify_poisson",
    "amplify_without_replacement",
    "basic_composition",
    "laplace_epsilon",
    "parallel_composition",
]


def _delta(value: Any, name: str, *, allow_zero: bool = True) -> float:
    value = as_non_negative(value, name)
    if not (value < 1.0 and (allow_zero or value > 0.0)):
        interval = "[0, 1)" if allow_zero else "(0, 1)"
        raise ValueError(f"{name} must lie in {interval}, got {value}")
    return value


def _pairs(epsilons: Any, deltas: Any) -> tuple[list[float], list[float]]:
    if not isinstance(epsilons, Iterable) or isinstance(epsilons, (str, bytes)):
        raise TypeError(f"epsilons must be an iterable of numbers, got {type(epsilons).__name__}")
    eps = [as_non_negative(e, f"epsilons[{i}]") for i, e in enumerate(epsilons)]
    if deltas is None:
        dels = [0.0] * len(eps)
    else:
        if not isinstance(deltas, Iterable) or isinstance(deltas, (str, bytes)):
            raise TypeError(f"deltas must be an iterable of numbers, got {type(deltas).__name__}")
        dels = [_delta(d, f"deltas[{i}]") for i, d in enumerate(deltas)]
        if len(dels) != len(eps):
            raise ValueError(
                f"epsilons and deltas must have the same length, got {len(eps)} and {len(dels)}"
            )
    return eps, dels


def basic_composition(epsilons: Iterable[float], deltas: Iterable[float] | None = None) -> tuple:
    """Sequential composition: epsilons and deltas add ([DR14], Theorem 3.16).

    ``k`` mechanisms that are ``(eps_i, delta_i)``-DP, run adaptively on the same data, are
    ``(sum eps_i, sum delta_i)``-DP.

    Parameters
    ----------
    epsilons : iterable of float
        Each finite and >= 0.
    deltas : iterable of float, optional
        Each in [0, 1); default all 0.

    Returns
    -------
    (float, float)
        ``(epsilon, delta)``; delta is capped at 1.
    """
    eps, dels = _pairs(epsilons, deltas)
    return math.fsum(eps), min(1.0, math.fsum(dels))


def advanced_composition(epsilon: float, delta: float, k: int, delta_prime: float) -> tuple:
    """Advanced composition of ``k`` adaptive ``(epsilon, delta)``-DP mechanisms.

    [DRV10] Theorem III.3 (also [DR14] Theorem 3.20): for every ``delta' > 0`` the composition
    is ``(eps', k delta + delta')``-DP with::

        eps' = sqrt(2 k ln(1/delta')) eps + k eps (e^eps - 1).

    The theorem's value is returned as is; basic composition (``k eps``) can be smaller for
    large epsilon or small k, and both are valid.

    Parameters
    ----------
    epsilon : float
        Per-mechanism epsilon, finite and >= 0.
    delta : float
        Per-mechanism delta in [0, 1).
    k : int
        Number of mechanisms, >= 1.
    delta_prime : float
        The extra failure probability, in (0, 1).

    Returns
    -------
    (float, float)
        ``(eps', min(1, k delta + delta'))``.
    """
    eps = as_non_negative(epsilon, "epsilon")
    delta = _delta(delta, "delta")
    k = as_index(k, "k", lower=1, upper=1 << 62)
    dp = _delta(delta_prime, "delta_prime", allow_zero=False)
    eps_total = math.sqrt(2.0 * k * math.log(1.0 / dp)) * eps + k * eps * math.expm1(eps)
    return eps_total, min(1.0, k * delta + dp)


def parallel_composition(epsilons: Iterable[float], deltas: Iterable[float] | None = None) -> tuple:
    """Parallel composition over disjoint parts of the data ([McS09], Theorem 4).

    Mechanisms applied to disjoint subsets of the records (each record in at most one part)
    are jointly ``(max eps_i, max delta_i)``-DP.

    Parameters
    ----------
    epsilons : iterable of float
        Each finite and >= 0 (at least one).
    deltas : iterable of float, optional
        Each in [0, 1); default all 0.

    Returns
    -------
    (float, float)
        ``(epsilon, delta)``.
    """
    eps, dels = _pairs(epsilons, deltas)
    if not eps:
        raise ValueError("epsilons must not be empty")
    return max(eps), max(dels)


def laplace_epsilon(noise_multiplier: float) -> float:
    """Epsilon of the Laplace mechanism with scale / L1 sensitivity ``noise_multiplier``:
    ``1 / noise_multiplier`` ([DMNS06]; [DR14], Theorem 3.6).

    Parameters
    ----------
    noise_multiplier : float
        > 0.

    Returns
    -------
    float
    """
    return 1.0 / as_positive(noise_multiplier, "noise_multiplier")


def amplify_poisson(epsilon: float, q: float) -> float:
    """Epsilon of an epsilon-DP mechanism run on a Poisson sample with rate ``q``
    (add/remove-one): ``log(1 + q (e^eps - 1))`` ([BBG18], Table 1).

    Parameters
    ----------
    epsilon : float
        Finite, >= 0.
    q : float
        Sampling probability in (0, 1].

    Returns
    -------
    float
    """
    eps = as_non_negative(epsilon, "epsilon")
    q = as_non_negative(q, "q")
    if not 0.0 < q <= 1.0:
        raise ValueError(f"q (sampling probability) must lie in (0, 1], got {q}")
    return math.log1p(q * math.expm1(eps))


def amplify_without_replacement(epsilon: float, n: int, m: int) -> float:
    """Epsilon of an epsilon-DP mechanism (replace-one) run on ``m`` of ``n`` records drawn
    without replacement (replace-one): ``log(1 + (m/n)(e^eps - 1))`` ([BBG18], Table 1).

    Parameters
    ----------
    epsilon : float
        Finite, >= 0.
    n : int
        Data set size, >= 1.
    m : int
        Batch size, 1 <= m <= n.

    Returns
    -------
    float
    """
    eps = as_non_negative(epsilon, "epsilon")
    n = as_index(n, "n", lower=1, upper=1 << 62)
    m = as_index(m, "m", lower=0, upper=1 << 62)
    if not 1 <= m <= n:
        raise ValueError(f"m (batch size) must lie in [1, n] = [1, {n}], got {m}")
    return math.log1p(m / n * math.expm1(eps))
