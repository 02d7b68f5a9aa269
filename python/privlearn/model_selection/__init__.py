"""Private model selection: hyperparameter search whose whole run is accounted.

- :mod:`~privlearn.model_selection.repetitions` -- the privacy of releasing the best of a
  random number of independent private runs (Papernot & Steinke 2022, Theorems 2 and 6; Liu &
  Talwar 2019), as functions of numbers.
- :mod:`~privlearn.model_selection.tuning` -- :class:`PrivateHyperparameterSearch`.
"""

from __future__ import annotations

from .repetitions import (
    epsilon_repeat_pure,
    negative_binomial_gamma,
    negative_binomial_mean,
    negative_binomial_pmf,
    plan_repetition_epsilon,
    rdp_repeat_negative_binomial,
    rdp_repeat_poisson,
    repeat_epsilon,
    repetition_rdp,
    sample_repetitions,
)
from .tuning import PrivateHyperparameterSearch, SearchPrivacy

__all__ = [
    "PrivateHyperparameterSearch",
    "SearchPrivacy",
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
