"""The exponential mechanism by the Gumbel-max trick, with an optional huge uniform remainder
(the implicit candidate set of the DP k-means of Chaturvedi, Nguyen & Xu 2021)."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from privlearn._checks import as_index, as_positive, as_real
from privlearn.mechanisms._bits import STREAM_EXPONENTIAL, as_seed, make_stream, spend

__all__ = ["REMAINDER", "Remainder", "exponential", "exponential_log_probabilities"]

#: Returned by :func:`exponential` when the implicit remainder group is selected.
REMAINDER = -1


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
        raise ValueError(f"scores must be finite; scores[{bad}] is {arr[bad]}")
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
        raise ValueError(f"remainder_score must be finite, got {score}")
    return Remainder(log_count, score)


def _logits(
    scores: np.ndarray, epsilon: float, sensitivity: float, monotonic: bool, rem: Remainder | None
) -> np.ndarray:
    coef = epsilon / sensitivity if monotonic else epsilon / (2.0 * sensitivity)
    logits = coef * scores
    if rem is not None:
        logits = np.append(logits, coef * rem.score + rem.log_count)
    return logits - logits.max()  # shift-invariant; keeps magnitudes small


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
    Gumbel-max sampling: with logits ``l_i = c * score_i`` (``c = epsilon/(2 Delta)``, or
    ``epsilon/Delta`` if monotonic) and i.i.d. standard Gumbels ``G_i``,
    ``argmax_i (l_i + G_i)`` has ``P(i) = exp(l_i) / sum_j exp(l_j)``; no exponential is ever
    evaluated, so scores of any magnitude (e.g. ``1e4``) are stable. The maximum of ``R``
    i.i.d. Gumbels is a Gumbel shifted by ``log R`` (max-stability), so the remainder group
    enters as one candidate with logit ``c * remainder_score + log R``: the group is selected
    with exactly its total probability, for ``log R`` in the hundreds or beyond. This is the
    "huge uniform remainder" used by the DP k-means of Chaturvedi, Nguyen & Xu (2021).
    Gumbels are ``-log(-log u)`` with ``u = (k + 1/2) 2**-52`` from 52 random bits ``k``
    (exact, strictly inside ``(0, 1)``).

    *Privacy statement*: ``epsilon``-DP (McSherry & Talwar 2007; Dwork & Roth 2014,
    Theorem 3.10, and Section 3.4 for the monotonic variant) for scores of sensitivity
    ``Delta``, in exact arithmetic. In floating point the uniforms lie in
    ``[2**-53, 1 - 2**-53]``, so the Gumbels lie in about ``[-3.6, 36.7]``: a candidate whose
    logit is more than about 40 below the largest is never selected (exact probability below
    ``e**-40 ≈ 4e-18``), and other selection probabilities move by amounts of the order of
    ``1e-16``. Read the guarantee as ``(epsilon, delta)`` with ``delta`` of that order; no
    base-2 exact sampler (Ilvento 2020) is attempted.
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
    logits = _logits(values, epsilon, sensitivity, bool(monotonic), rem)
    seed = as_seed(seed)
    spend(ledger, epsilon * count, 0.0, "exponential")
    m = logits.size
    raw = make_stream(seed, STREAM_EXPONENTIAL).raws(0, count * m).reshape(count, m)
    # k + 1/2 with k < 2**52 is exact, so u lies in [2**-53, 1 - 2**-53]: never 0 or 1
    u = ((raw >> np.uint64(12)).astype(np.float64) + 0.5) * 2.0**-52
    gumbel = -np.log(-np.log(u))
    choice = np.argmax(logits[None, :] + gumbel, axis=1).astype(np.int64)
    if rem is not None:
        choice[choice == values.size] = REMAINDER
    return int(choice[0]) if size is None else choice
