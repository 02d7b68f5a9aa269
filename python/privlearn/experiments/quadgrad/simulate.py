"""The training runs of Figures 1-4: six optimizers per data set, and Figure 4's learning rates.

Belongs here: what is trained and for how long (:data:`OPTIMIZERS`, :data:`CHECK_ITER`, the
Figure 4 learning rates), the collected :class:`QuadgradCurves`, the maximum log-likelihood
reference and :func:`simulate`. Not here: the data (:mod:`~privlearn.experiments.quadgrad.data`)
or the encrypted Tables 1-2 (:mod:`~privlearn.experiments.quadgrad.tables`).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privlearn.experiments.quadgrad.data import (
    DATASETS,
    OPTIONAL_DATASETS,
    _source,
    load_dataset,
)
from privlearn.experiments.summary import missing_data_reason

PAPER = 'Chiang, "Privacy-preserving logistic regression training with a faster gradient variant"'
OPTIMIZERS = ("nag", "adagrad", "adam")
#: The "small number of iterations" at which the summary compares plain and enhanced.
CHECK_ITER = 10
#: Figure 4 (lbw, 50 iterations): raw gradient ascent ``beta += lr g`` and raw quadratic-gradient
#: ascent ``beta += LR G`` for these learning rates (the paper's legends), plus LR = 3 (Section
#: 3.3: "when the learning rate exceeds 3, the algorithm is nearly guaranteed not to converge").
FIG4_LR = tuple(round(0.011 + 0.001 * i, 3) for i in range(11))
FIG4_QLR = tuple(round(1.0 + 0.1 * i, 1) for i in range(11))
FIG4_QLR_LARGE = 3.0
FIG4_ITERS = 50
#: Iterations of Figures 1-3 (the paper's), and of the ``--quick`` run (issue 32).
FULL_ITERS = 100
QUICK_ITERS = 30


@dataclass
class QuadgradCurves:
    """Log-likelihood paths: ``paths[(dataset, optimizer, enhanced)]`` has ``iters + 1`` points
    (``l(0) = -n ln 2`` first)."""

    iters: int
    datasets: list[str]
    shapes: dict[str, tuple[int, int]] = field(default_factory=dict)
    paths: dict[tuple[str, str, bool], np.ndarray] = field(default_factory=dict)
    optimum: dict[str, float] = field(default_factory=dict)
    seconds: dict[tuple[str, str, bool], float] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    #: Data set -> "data folder" or "embedded" (the copy shipped inside privlearn).
    sources: dict[str, str] = field(default_factory=dict)
    #: Figure 4 paths on lbw: ``fig4[(enhanced, learning_rate)]``.
    fig4: dict[tuple[bool, float], np.ndarray] = field(default_factory=dict)


def _mle(X: np.ndarray, y: np.ndarray) -> float:
    """The unregularised maximum log-likelihood (scikit-learn lbfgs), NaN if it fails."""
    from sklearn.linear_model import LogisticRegression

    from privlearn.linear.quadgrad import logistic_loglik_gradient

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lr = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-10, max_iter=5000)
        try:
            beta = lr.fit(X, y).coef_[0]
        except (ValueError, FloatingPointError):  # pragma: no cover - defensive
            return math.nan
    return logistic_loglik_gradient(X, y, beta)[0]


def simulate(
    *,
    datasets: tuple[str, ...] | list[str] = DATASETS,
    iters: int = FULL_ITERS,
    data_home: Any = None,
    optional: bool = True,
    optimum: bool = True,
) -> QuadgradCurves:
    """Train the six optimizers on every data set for ``iters`` iterations.

    ``optional`` adds nhanes3 / iDASH when their files exist. ``optimum`` computes the maximum
    log-likelihood with scikit-learn for the small data sets (not MNIST, nearly separable).
    """
    from privlearn.linear import quadgrad_train

    names = list(datasets) + (
        [d for d in OPTIONAL_DATASETS if d not in datasets] if optional else []
    )
    res = QuadgradCurves(iters=iters, datasets=[])
    for name in names:
        try:
            X, y = load_dataset(name, data_home)
        except FileNotFoundError as exc:
            if name in OPTIONAL_DATASETS:
                continue
            res.skipped[name] = missing_data_reason(exc, data_home)
            continue
        res.datasets.append(name)
        res.shapes[name] = (X.shape[0], X.shape[1] - 1)
        res.sources[name] = _source(name, data_home)
        for opt in OPTIMIZERS:
            for enhanced in (False, True):
                start = time.perf_counter()
                run = quadgrad_train(X, y, optimizer=opt, enhanced=enhanced, max_iter=iters)
                res.seconds[(name, opt, enhanced)] = time.perf_counter() - start
                res.paths[(name, opt, enhanced)] = run.loglik_path
        if optimum and name != "mnist38":
            res.optimum[name] = _mle(X, y)
        if name == "lbw":
            for enhanced, rates in ((False, FIG4_LR), (True, (*FIG4_QLR, FIG4_QLR_LARGE))):
                for lr in rates:
                    run = quadgrad_train(
                        X, y, optimizer="gd", enhanced=enhanced, schedule=lr, max_iter=FIG4_ITERS
                    )
                    res.fig4[(enhanced, lr)] = run.loglik_path
    return res
