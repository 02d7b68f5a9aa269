"""Privacy accounting: Renyi DP and pure-DP composition, accountants, budgets, calibration.

The pure math (functions of numbers) is kept apart from the stateful objects:

- :mod:`~privlearn.accounting.rdp` -- RDP of the Gaussian, Laplace and pure-DP mechanisms, of
  the Poisson-subsampled Gaussian (exact at integer and fractional orders; Mironov, Talwar,
  Zhang 2019) and of fixed-size sampling without replacement (Wang, Balle, Kasiviswanathan
  2019); conversion RDP -> (epsilon, delta) with the tight Canonne-Kamath-Steinke / Balle et
  al. 2020 formula.
- :mod:`~privlearn.accounting.pure` -- basic, advanced (Dwork-Rothblum-Vadhan 2010) and
  parallel composition; amplification of pure DP by subsampling.
- :mod:`~privlearn.accounting.events` -- immutable mechanism events (dp_accounting style).
- :mod:`~privlearn.accounting.accountant` -- :class:`RDPAccountant`, :class:`PureDPAccountant`
  and :class:`PrivacyStatement`.
- :mod:`~privlearn.accounting.ledger` -- :class:`PrivacyLedger`, a budget with a hard cap
  (basic composition), and :class:`RDPLedger` (spends composed by Renyi DP).
- :mod:`~privlearn.accounting.size` -- the private data-set size: a declared public size or
  a noisy count (:func:`resolve_size`), and the one default delta.
- :mod:`~privlearn.accounting.calibrate` -- :func:`calibrate_sigma` and friends.
- :mod:`~privlearn.accounting.pld` -- privacy loss distributions: :class:`PLDAccountant` and
  :func:`calibrate_sigma_pld` (pessimistic connect-the-dots discretisation, FFT composition;
  tighter than RDP, what the estimators calibrate with).
- :mod:`~privlearn.accounting.tightest` -- which accountant prices which sampler
  (:func:`calibrate_noise`, :func:`accountant_for`).
- :mod:`~privlearn.accounting.bridge` -- optional bridge to Google's ``dp_accounting``
  (:func:`to_dp_accounting`, :func:`epsilon_pld`); needs ``pip install dp-accounting``.

Example
-------
>>> from privlearn.accounting import RDPAccountant, PoissonSampled, GaussianEvent
>>> acc = RDPAccountant().compose(PoissonSampled(0.01, GaussianEvent(4.0)), count=10_000)
>>> round(acc.get_epsilon(1e-5), 4)
1.0355
"""

from __future__ import annotations

from ..exceptions import BudgetExceededError
from .accountant import NEIGHBORING_RELATIONS, PrivacyStatement, PureDPAccountant, RDPAccountant
from .bridge import epsilon_pld, pld_statement, to_dp_accounting
from .calibrate import calibrate_laplace_scale, calibrate_sigma, epsilon_for_sigma
from .events import (
    Composed,
    DiscreteGaussianEvent,
    DisjointBatches,
    Event,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampled,
    PureDPEvent,
    SampledWithoutReplacement,
    SelfComposed,
    UnsupportedEventError,
)
from .lattice import (
    LatticeSlack,
    calibrate_lattice_sigma,
    lattice_epsilon,
    lattice_slack,
    lattice_statement,
)
from .ledger import Budget, LedgerEntry, PrivacyLedger, RDPLedger
from .pld import (
    PLDAccountant,
    PLDRangeError,
    calibrate_sigma_pld,
    epsilon_for_sigma_pld,
)
from .pure import (
    advanced_composition,
    amplify_poisson,
    amplify_without_replacement,
    basic_composition,
    laplace_epsilon,
    parallel_composition,
)
from .rdp import (
    DEFAULT_ORDERS,
    rdp_discrete_gaussian,
    rdp_gaussian,
    rdp_laplace,
    rdp_poisson_discrete_gaussian,
    rdp_poisson_gaussian,
    rdp_pure_dp,
    rdp_to_delta,
    rdp_to_epsilon,
    rdp_without_replacement_discrete_gaussian,
    rdp_without_replacement_gaussian,
)
from .size import (
    DEFAULT_DELTA,
    SIZE_EPSILON_FRACTION,
    DatasetSize,
    public_size,
    resolve_size,
)
from .tightest import TightestAccountant, accountant_for, calibrate_noise, epsilon_of_noise

__all__ = [
    "DEFAULT_DELTA",
    "DEFAULT_ORDERS",
    "SIZE_EPSILON_FRACTION",
    "DatasetSize",
    "public_size",
    "resolve_size",
    "NEIGHBORING_RELATIONS",
    "Budget",
    "BudgetExceededError",
    "Composed",
    "DisjointBatches",
    "Event",
    "DiscreteGaussianEvent",
    "GaussianEvent",
    "LaplaceEvent",
    "LatticeSlack",
    "LedgerEntry",
    "PoissonSampled",
    "PrivacyLedger",
    "PrivacyStatement",
    "PureDPAccountant",
    "PureDPEvent",
    "RDPAccountant",
    "RDPLedger",
    "SampledWithoutReplacement",
    "SelfComposed",
    "UnsupportedEventError",
    "advanced_composition",
    "amplify_poisson",
    "amplify_without_replacement",
    "basic_composition",
    "calibrate_laplace_scale",
    "calibrate_sigma",
    "calibrate_sigma_pld",
    "epsilon_for_sigma_pld",
    "PLDAccountant",
    "PLDRangeError",
    "TightestAccountant",
    "accountant_for",
    "calibrate_noise",
    "epsilon_of_noise",
    "epsilon_for_sigma",
    "epsilon_pld",
    "calibrate_lattice_sigma",
    "laplace_epsilon",
    "lattice_slack",
    "lattice_epsilon",
    "lattice_statement",
    "parallel_composition",
    "pld_statement",
    "rdp_discrete_gaussian",
    "rdp_gaussian",
    "rdp_laplace",
    "rdp_poisson_discrete_gaussian",
    "rdp_poisson_gaussian",
    "rdp_pure_dp",
    "rdp_to_delta",
    "rdp_to_epsilon",
    "rdp_without_replacement_discrete_gaussian",
    "rdp_without_replacement_gaussian",
    "to_dp_accounting",
]
