"""The tightest sound accountant for a Gaussian run: which one prices which sampler.

- Poisson-subsampled Gaussian steps, or steps that read every row (``q = 1``), under
  add/remove-one neighbours: the privacy loss distribution
  (:mod:`~privlearn.accounting.pld`; pessimistic, tight to the discretisation), with the Renyi-DP
  epsilon of the same events shown beside it in the statement.
- Noise multipliers below :data:`~privlearn.accounting.pld.PLD_MIN_SIGMA` (0.2; epsilons in
  the tens or more): Renyi DP (the loss grids would be huge, and the two agree there).
- Fixed-size batches drawn without replacement (replace-one neighbours): Renyi DP (Wang, Balle,
  Kasiviswanathan 2019). The loss distribution of that sampler has no closed-form dominating
  pair that we (or dp_accounting) account for, so these runs keep RDP and say so
  (``accountant="rdp"``).

The estimators call only these three functions, so the choice is made in one place.
"""

from __future__ import annotations

from typing import Any

from .accountant import RDPAccountant
from .calibrate import calibrate_sigma, epsilon_for_sigma
from .pld import PLD_MIN_SIGMA, PLDAccountant, calibrate_sigma_pld, epsilon_for_sigma_pld

__all__ = ["accountant_for", "calibrate_noise", "epsilon_of_noise", "uses_pld"]


def uses_pld(sampling: str) -> bool:
    """Whether runs on this sampler (``"poisson"`` or ``"without_replacement"``) are priced by
    the PLD accountant."""
    if sampling not in ("poisson", "without_replacement"):
        raise ValueError(f"sampling must be 'poisson' or 'without_replacement', got {sampling!r}")
    return sampling == "poisson"


def accountant_for(neighboring: str, sigma: float | None = None) -> Any:
    """A fresh accountant for runs under ``neighboring`` with noise multiplier ``sigma``: a
    :class:`PLDAccountant` for add/remove-one (Poisson or full batches) with ``sigma`` at
    least :data:`~privlearn.accounting.pld.PLD_MIN_SIGMA`, an :class:`RDPAccountant`
    otherwise (replace-one; or a tiny noise, an epsilon in the tens, where RDP is as good)."""
    if neighboring == "add_remove" and (sigma is None or sigma >= PLD_MIN_SIGMA):
        return PLDAccountant(neighboring="add_remove")
    return RDPAccountant(neighboring=neighboring)


def calibrate_noise(
    epsilon: float,
    delta: float,
    *,
    q: float,
    steps: int,
    sampling: str = "poisson",
    n: int | None = None,
) -> float:
    """Smallest noise multiplier meeting ``(epsilon, delta)`` by the tightest accountant of
    the sampler (:func:`~privlearn.accounting.pld.calibrate_sigma_pld` or
    :func:`~privlearn.accounting.calibrate_sigma`)."""
    rdp = calibrate_sigma(epsilon, delta, q=q, steps=steps, sampling=sampling, n=n)
    if not uses_pld(sampling) or rdp < PLD_MIN_SIGMA:
        return rdp
    return calibrate_sigma_pld(epsilon, delta, q=q, steps=steps)


def epsilon_of_noise(
    sigma: float,
    delta: float,
    *,
    q: float,
    steps: int,
    sampling: str = "poisson",
    n: int | None = None,
) -> float:
    """Epsilon of a run with noise multiplier ``sigma`` by the tightest accountant of the
    sampler (the inverse of :func:`calibrate_noise`)."""
    if uses_pld(sampling) and sigma >= PLD_MIN_SIGMA:
        return epsilon_for_sigma_pld(sigma, delta, q=q, steps=steps)
    return epsilon_for_sigma(sigma, delta, q=q, steps=steps, sampling=sampling, n=n)
