"""CKKS-like slot-layout simulation and packed encrypted logistic-regression training.

- :class:`CKKSParams`: ring, modulus, scale; estimated security from the HE standard's table.
- :class:`Simulator` / :class:`Ciphertext`: slot values with CKKS levels, scale, seeded
  average-case error and a tracked error bound; operation counters and a calibrated cost model.
- :func:`train_logreg` / :func:`plan_logreg`: Kim et al. 2018a's packed NAG and Chiang's
  enhanced (quadratic-gradient) NAG, simulated (C++ or numpy twin) or on real CKKS (TenSEAL).
"""

from privlearn.he._cost import CostModel, default_cost_model
from privlearn.he._params import (
    HE_STANDARD_MAX_LOG_Q,
    CKKSParams,
    DepthExhaustedError,
    estimate_security,
)
from privlearn.he._sim import BOUND_SIGMAS, Ciphertext, Simulator
from privlearn.he._train import (
    SIGMOID_POLYNOMIALS,
    HETrainingReport,
    PackedLayout,
    bbar_diagonal,
    clear_logreg,
    plan_logreg,
    train_logreg,
)

__all__ = [
    "BOUND_SIGMAS",
    "CKKSParams",
    "Ciphertext",
    "CostModel",
    "DepthExhaustedError",
    "HE_STANDARD_MAX_LOG_Q",
    "HETrainingReport",
    "PackedLayout",
    "SIGMOID_POLYNOMIALS",
    "Simulator",
    "bbar_diagonal",
    "clear_logreg",
    "default_cost_model",
    "estimate_security",
    "plan_logreg",
    "tenseal_params",
    "train_logreg",
]


def tenseal_params(*args, **kwargs):  # noqa: ANN002, ANN003, ANN201
    """See :func:`privlearn.he._tenseal.tenseal_params` (imports TenSEAL lazily)."""
    from privlearn.he._tenseal import tenseal_params as _tp

    return _tp(*args, **kwargs)
