"""The tightest sound accountant for a Gaussian run: which one prices which sampler.

- Poisson-subsampled Gaussian steps, or steps that read every row (``q = 1``), under
  add/remove-one neighbours: the privacy loss distribution
  (:mod:`~privlearn.accounting.pld`; pessimistic, tight to the discretisation), with the Renyi-DP
  epsilon of the same events shown beside it in the statement.
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
from .pld import PLDAccountant, calibrate_sigma_pld, epsilon_for_sigma_pld

__all__ = ["accountant_for", "calibrate_noise", "epsilon_of_noise", "uses_pld"]


def uses_pld(sampling: str) -> bool:
    """Whether runs on this sampler (``"poisson"`` or ``"without_replacement"``) are priced by
    the PLD accountant."""
    if sampling not in ("poisson", "without_replacement"):
        raise ValueError(f"sampling must be 'poisson' or 'without_replacement', got {sampling!r}")
    return sampling == "poisson"


def accountant_for(neighboring: str) -> Any:
    """A fresh accountant for runs under ``neighboring``: a :class:`PLDAccountant` for
    add/remove-one (Poisson or full batches), an :class:`RDPAccountant` for replace-one."""
    if neighboring == "add_remove":
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
    if uses_pld(sampling):
        return calibrate_sigma_pld(epsilon, delta, q=q, steps=steps)
    return calibrate_sigma(epsilon, delta, q=q, steps=steps, sampling=sampling, n=n)


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
    if uses_pld(sampling):
        return epsilon_for_sigma_pld(sigma, delta, q=q, steps=steps)
    return epsilon_for_sigma(sigma, delta, q=q, steps=steps, sampling=sampling, n=n)
