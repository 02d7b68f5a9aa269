"""The lattice slack of a k-means fit's Gaussian releases (issue 30): the fit composes its
Gaussian releases by their GDP ``mu``; the exact discrete Gaussian noise of
:func:`privlearn.mechanisms.gaussian` is that of a rounded continuous Gaussian up to a slack
(:mod:`privlearn.accounting.lattice`), which this module adds to the statement.

Belongs here: the bound on the slack of any number of default-lattice releases and the
conversions of a composed ``mu`` (GDP) or Renyi curve with it. Not here: the noise.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from privlearn.accounting.lattice import LatticeSlack, lattice_epsilon, lattice_slack
from privlearn.mechanisms.gaussian import analytic_gaussian_epsilon

__all__ = [
    "NOISE_MU_FACTOR",
    "gdp_lattice_epsilon",
    "lattice_fit_epsilon",
    "release_slack",
]

#: Lattice bits of the default step of :func:`privlearn.mechanisms.gaussian`: the step is
#: ``2**(floor(log2 sigma) - 18 - e)``, ``e = ceil(log2(size) / 2)``, so a release of ``size``
#: entries has the noise scale ``s >= 2**(18 + e)`` lattice units with ``size <= 4**e``.
_STEP_BITS = 18
#: ``noise_mu <= mu * NOISE_MU_FACTOR`` for every default-lattice release: its variance is at
#: least ``floor(s0**2 (1 + 2**-16)) >= s0**2 (1 + 2**-16 - 2**-36)`` (``s0 = sigma / step >=
#: 2**18``), so its rounded continuous Gaussian is ``mu / sqrt(1 + 2**-17)``-GDP and better.
NOISE_MU_FACTOR = 1.0 / math.sqrt(1.0 + 2.0**-17)
_MAX_E = 24  # releases of up to 4**24 = 2**48 entries (far beyond any memory)


def release_slack(releases: int, delta: float, epsilon: float) -> LatticeSlack:
    """A bound on the summed lattice slack (``N eta`` and ``N tau``,
    :meth:`LatticeSlack.combine`) of ``releases`` calls of :func:`privlearn.mechanisms.gaussian`
    on its default lattice, each of any size and sigma (so a data-dependent size is covered).

    A call of ``size <= 4**e`` entries draws at the scale ``s >= 2**(18 + e)``; its slack is at
    most that of ``4**e`` draws at ``2**(18 + e)`` (:func:`privlearn.accounting.lattice.
    lattice_slack`: the slack decreases with ``s``, an upper bound of the draws is sound). The
    maximum over ``e`` of ``N eta`` and of ``N tau`` (about ``4.7e-11`` in ``N eta``, nearly
    the same for every ``e``: ``eta ~ 1/s**2``) is one call's bound; ``releases`` calls add."""
    count = max(int(releases), 1)
    log_ratio, tail = 0.0, 0.0
    for e in range(_MAX_E + 1):
        one = lattice_slack(
            2.0 ** (_STEP_BITS + e) * (1.0 - 2.0**-30),
            min(count << (2 * e), 1 << 62),
            delta,
            epsilon,
        )
        log_ratio, tail = max(log_ratio, one.log_ratio), max(tail, one.tail)
    return LatticeSlack(
        scale=2.0**_STEP_BITS * (1.0 - 2.0**-30),
        coordinates=1,
        bound=0,
        eta=log_ratio * (1.0 + 1e-12),
        log_tau=math.log(tail) if tail > 0.0 else -math.inf,
    )


def lattice_fit_epsilon(continuous: Callable[[float], float], releases: int, delta: float) -> float:
    """``epsilon`` at ``delta`` of a fit whose rounded continuous Gaussian composition has
    epsilon ``continuous(delta_c)`` at ``delta_c``, with the slack of its ``releases``
    default-lattice Gaussian releases (:func:`release_slack`;
    :func:`privlearn.accounting.lattice.lattice_epsilon`: ``+ 2 N eta`` in epsilon, the tail
    taken from delta)."""
    slack = release_slack(releases, delta, continuous(delta))
    return lattice_epsilon(continuous, slack, delta)


def gdp_lattice_epsilon(mu: float, releases: int, delta: float) -> float:
    """``epsilon`` at ``delta`` of Gaussian releases composed to ``mu``-GDP (each release's
    ``mu`` from :func:`privlearn.mechanisms.gaussian_privacy`), formally: the rounded
    continuous Gaussians are ``mu * NOISE_MU_FACTOR``-GDP (Dong, Roth & Su 2022), converted
    by the analytic Gaussian (Balle & Wang 2018), plus the lattice slack of ``releases``
    calls. At most ``analytic_gaussian_epsilon(mu, delta)`` wherever the slack (``~5e-11`` per
    release) is below the ``2**-18`` relative reduction of ``mu`` (epsilon above ~1e-4)."""
    mu_c = mu * NOISE_MU_FACTOR
    return lattice_fit_epsilon(lambda d: analytic_gaussian_epsilon(mu_c, d), releases, delta)
