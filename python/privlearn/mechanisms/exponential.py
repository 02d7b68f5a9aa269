"""The exponential mechanism, sampled exactly (no floating-point noise between the scores and the
choice), with an optional huge uniform remainder (the implicit candidate set of the DP k-means
of Chaturvedi, Nguyen & Xu 2021)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np

from privlearn._checks import as_index, as_positive, as_real
from privlearn.mechanisms._bits import (
    STREAM_EXPONENTIAL,
    BitSource,
    as_seed,
    make_stream,
    spend,
)
from privlearn.mechanisms._select import ExactSelector, WordSource

__all__ = ["REMAINDER", "Remainder", "exponential", "exponential_log_probabilities"]

#: Returned by :func:`exponential` when the implicit remainder group is selected.
REMAINDER = -1
_PYTHON_CANDIDATES = 256  # up to this many candidates the sampler is set up in plain Python


class Remainder(NamedTuple):
    """``R`` implicit candidates sharing one score.

    Attributes
    ----------
    log_count : float
        ``log R >= 0`` (``R`` may be astronomically large, e.g. ``log R = 300``).
    score : float
        The common score of the ``R`` candidates.
    """

    log_count: float
    score: float


def _as_scores(scores: Any) -> np.ndarray:
    if isinstance(scores, (str, bytes)) or scores is None:
        raise TypeError(f"scores must be a 1-D array of numbers, got {type(scores).__name__}")
    arr = np.asarray(scores)
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise TypeError(f"scores must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"scores must be 1-D, got shape {arr.shape}")
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        # the score is computed from the private rows: its index (a public candidate) only
        raise ValueError(f"scores must be finite; scores[{bad}] is NaN or infinite")
    return arr


def _as_remainder(remainder: Any) -> Remainder | None:
    if remainder is None:
        return None
    try:
        log_count, score = remainder
    except (TypeError, ValueError):
        raise TypeError(
            "remainder must be a pair (log_remainder_count, remainder_score) or a Remainder"
        ) from None
    log_count = as_real(log_count, "log_remainder_count")
    score = as_real(score, "remainder_score")
    if not (math.isfinite(log_count) and log_count >= 0.0):
        raise ValueError(f"log_remainder_count must be finite and >= 0 (R >= 1), got {log_count}")
    if not math.isfinite(score):
        raise ValueError("remainder_score must be finite (it is NaN or infinite)")  # a score
    return Remainder(log_count, score)


def _logits(
    scores: np.ndarray, epsilon: float, sensitivity: float, monotonic: bool, rem: Remainder | None
) -> np.ndarray:
    coef = epsilon / sensitivity if monotonic else epsilon / (2.0 * sensitivity)
    logits = coef * scores
    if rem is not None:
        logits = np.append(logits, coef * rem.score + rem.log_count)
    return logits - logits.max()  # shift-invariant; keeps magnitudes small


def _selector(
    values: np.ndarray, epsilon: float, sensitivity: float, monotonic: bool, rem: Remainder | None
) -> ExactSelector:
    """The exact sampler of ``P(i) ∝ exp(l_i)`` with the rational logits
    ``l_i = c * score_i`` (and ``c * remainder_score + log R`` last)."""
    coef = Fraction(epsilon) / (Fraction(sensitivity) * (1 if monotonic else 2))
    exact: list[Fraction | None] = [None] * (values.size + (rem is not None))
    top: list[Fraction] = []
    if values.size:
        top.append(coef * Fraction(float(values.max())))
    if rem is not None:
        rem_logit = coef * Fraction(rem.score) + Fraction(rem.log_count)
        exact[-1] = rem_logit
        top.append(rem_logit)
    best = max(top)

    def gamma_exact(i: int) -> tuple[int, int]:
        logit = exact[i]
        if logit is None:
            logit = exact[i] = coef * Fraction(float(values[i]))
        gamma = best - logit
        return gamma.numerator, gamma.denominator

    coef_f = float(coef)
    try:
        best_f = float(best)
    except OverflowError:
        best_f = math.inf
    rem_f = extra = 0.0
    if rem is not None:
        rem_f = coef_f * rem.score + rem.log_count
        extra = abs(coef_f * rem.score) + rem.log_count
    # lower bounds of gamma_i = best - l_i: float products and sums have relative errors of a
    # few 2**-53, taken 2**7 times larger (an overflow gives inf or NaN: level 0, still sound)
    tol = 2.0**-46
    count = values.size + (rem is not None)
    if count <= _PYTHON_CANDIDATES:  # plain Python is faster than numpy on a few candidates
        logits = [coef_f * v for v in values.tolist()]
        if rem is not None:
            logits.append(rem_f)
        lower: Any = []
        for logit in logits:
            g = best_f - logit
            lower.append(g - tol * (abs(logit) + abs(best_f) + abs(g) + extra) - 2.0**-1000)
        return ExactSelector([1] * count, lower, gamma_exact)
    with np.errstate(over="ignore", invalid="ignore"):
        arr = coef_f * values
        if rem is not None:
            arr = np.append(arr, rem_f)
        g_arr = best_f - arr
        lower = g_arr - (tol * (np.abs(arr) + abs(best_f) + np.abs(g_arr) + extra) + 2.0**-1000)
    return ExactSelector(np.ones(count, dtype=np.int64), lower, gamma_exact)


def exponential_log_probabilities(
    scores: Any,
    epsilon: float,
    sensitivity: float,
    *,
    monotonic: bool = False,
    remainder: Any = None,
) -> np.ndarray:
    """Log selection probabilities of :func:`exponential` (log-sum-exp normalised).

    Returns
    -------
    numpy.ndarray
        ``log P(i)`` for each explicit candidate, followed by ``log P(remainder)`` when a
        remainder is given.
    """
    from scipy.special import logsumexp

    logits = _logits(
        _as_scores(scores),
        as_positive(epsilon, "epsilon"),
        as_positive(sensitivity, "sensitivity"),
        bool(monotonic),
        _as_remainder(remainder),
    )
    return logits - logsumexp(logits)


def exponential(
    scores: Any,
    epsilon: float,
    sensitivity: float,
    seed: int | None = None,
    *,
    monotonic: bool = False,
    remainder: Remainder | tuple[float, float] | None = None,
    size: int | None = None,
    ledger: Any = None,
) -> int | np.ndarray:
    """Select a candidate with probability ``∝ exp(epsilon * score / (2 Delta))``.

    Parameters
    ----------
    scores : array_like, shape (m,)
        Finite scores of the explicit candidates (may be empty when a remainder is given).
    epsilon : float
        Privacy parameter ``> 0`` of one selection.
    sensitivity : float
        ``Delta > 0``: every score (remainder's included) changes by at most ``Delta`` between
        neighbouring data sets.
    seed : int or None, default=None
        ``None``: key from the operating system; an int: reproducible.
    monotonic : bool, default=False
        ``True`` when all scores move in the same direction between neighbours: the
        probabilities are then ``∝ exp(epsilon * score / Delta)``.
    remainder : (log_remainder_count, remainder_score) or Remainder, optional
        An implicit group of ``R = exp(log_remainder_count)`` further candidates with the
        common score ``remainder_score``.
    size : int or None, default=None
        ``None``: one selection (an int). ``k``: ``k`` independent selections (int64 array),
        which cost ``k * epsilon`` by basic composition.
    ledger : object, optional
        ``ledger.spend(epsilon * k, 0.0, label="exponential")`` (``k = size or 1``) before any
        randomness is drawn.

    Returns
    -------
    int or numpy.ndarray
        Index of the selected explicit candidate, or :data:`REMAINDER` (``-1``) when the
        remainder group is selected; the caller then picks one of its ``R`` members uniformly
        at random (all have the same score, so this is exact).

    Notes
    -----
    Exact sampling (:mod:`privlearn.mechanisms._select`): with the exact rational logits
    ``l_i = c * score_i`` (``c = epsilon / (2 Delta)``, or ``epsilon / Delta`` if monotonic,
    computed as fractions from the float inputs) and ``gamma_i = max_j l_j - l_i``, candidate
    ``i`` is selected with probability exactly ``exp(-gamma_i) / sum_j exp(-gamma_j)``: a
    proposal with dyadic weights ``2**-k_i`` (``k_i <= gamma_i / ln 2``) accepted by an exact
    ``Bernoulli(exp(-(gamma_i - k_i ln 2)))`` (Canonne, Kamath & Steinke 2020, Algorithm 1,
    with ``ln 2`` bracketed by rationals), on ChaCha20 draws. No exponential is evaluated in
    floating point, so scores of any magnitude (e.g. ``1e4``) are stable, and every candidate
    keeps its positive probability however far it trails (the Gumbel-max sampler this
    replaces never chose one trailing by more than about 40). The remainder group enters as
    one candidate with logit ``c * remainder_score + log R`` (``log R`` taken as the exact
    rational value of the float given): it is selected with exactly its total probability,
    for ``log R`` in the hundreds or beyond. This is the "huge uniform remainder" used by the
    DP k-means of Chaturvedi, Nguyen & Xu (2021).

    *Privacy statement*: ``epsilon``-DP (McSherry & Talwar 2007; Dwork & Roth 2014,
    Theorem 3.10, and Section 3.4 for the monotonic variant) for scores of sensitivity
    ``Delta``; the sampler realises the mechanism's distribution exactly, so no ``delta`` is
    added.
    """
    values = _as_scores(scores)
    epsilon = as_positive(epsilon, "epsilon")
    sensitivity = as_positive(sensitivity, "sensitivity")
    if not isinstance(monotonic, (bool, np.bool_)):
        raise TypeError(f"monotonic must be a bool, got {type(monotonic).__name__}")
    rem = _as_remainder(remainder)
    if values.size == 0 and rem is None:
        raise ValueError("scores is empty and there is no remainder: nothing to select")
    count = 1 if size is None else as_index(size, "size", lower=1, upper=1 << 40)
    selector = _selector(values, epsilon, sensitivity, bool(monotonic), rem)
    seed = as_seed(seed)
    spend(ledger, epsilon * count, 0.0, "exponential")
    words = WordSource(BitSource(make_stream(seed, STREAM_EXPONENTIAL)))
    choice = np.array([selector.draw(words) for _ in range(count)], dtype=np.int64)
    if rem is not None:
        choice[choice == values.size] = REMAINDER
    return int(choice[0]) if size is None else choice
