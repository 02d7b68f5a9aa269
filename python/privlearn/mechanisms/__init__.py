"""Differentially private release mechanisms on the ChaCha20 streams.

================================  ==========================================================
:func:`laplace`                   snapping mechanism (Mironov 2012), or textbook Laplace
:func:`discrete_laplace`          exact two-sided geometric on integers (CKS 2020, Alg. 2)
:func:`gaussian`                  exact discrete Gaussian noise (CKS 2020, Alg. 3, the core's
                                  sampler) on a power-of-two lattice
:func:`l2_laplace`                L2-norm Laplace noise (Song, Chaudhuri & Sarwate 2013)
:func:`exponential`               exponential mechanism, sampled exactly, with a huge
                                  uniform remainder (Chaturvedi, Nguyen & Xu 2021)
================================  ==========================================================

Every mechanism validates its arguments, then charges an optional duck-typed ``ledger``
(``ledger.spend(epsilon, delta, label=...)``) *before* drawing any noise, so a refused charge
releases nothing. Randomness comes from :class:`privlearn.random.Stream` with one stream id
per purpose: ``seed=None`` (the default) keys it from the operating system, an int seed makes
a call reproducible. Each function's Notes give the exact privacy statement.
"""

from __future__ import annotations

from privlearn.mechanisms.discrete import discrete_laplace
from privlearn.mechanisms.exponential import (
    REMAINDER,
    Remainder,
    exponential,
    exponential_log_probabilities,
)
from privlearn.mechanisms.gaussian import (
    GaussianPrivacy,
    analytic_gaussian_epsilon,
    gaussian,
    gaussian_privacy,
    zcdp_epsilon,
)
from privlearn.mechanisms.laplace import (
    SnappingParameters,
    l2_laplace,
    laplace,
    snapping_parameters,
)

__all__ = [
    "REMAINDER",
    "GaussianPrivacy",
    "Remainder",
    "SnappingParameters",
    "analytic_gaussian_epsilon",
    "discrete_laplace",
    "exponential",
    "exponential_log_probabilities",
    "gaussian",
    "gaussian_privacy",
    "l2_laplace",
    "laplace",
    "snapping_parameters",
    "zcdp_epsilon",
]
