"""The data of the Song et al. (2013) reproduction: Section IV-A's data sets, preprocessed.

Belongs here: loading, subsampling and projecting each data set so that every row has norm
at most 1 (:func:`prepare_dataset`) and the centralised optimum of Fig. 2
(:func:`centralized_optimum`).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from privlearn._losses import objective
from privlearn.experiments.runs import derive_seed
from privlearn.experiments.song13.settings import _DIM, _FULL_SIZE, _TAG, LAMBDA


def prepare_dataset(
    name: str, n: int | None = None, *, data_home: Any = None
) -> tuple[np.ndarray, np.ndarray, str]:
    """Load and preprocess one data set of Section IV-A.

    Parameters
    ----------
    name : {"synthetic", "kddcup99", "mnist"}
    n : int, optional
        Number of rows: the paper's size by default (10,000 / 50,000 / 60,000); smaller values
        take a seeded uniform subsample (KDDCup99 is always a subsample of the 10% file).
    data_home : path, optional
        Folder of the real data (see :func:`privlearn.data.get_data_home`). Without it, when
        the default data folder lacks the KDD Cup 1999 file, the 50,000-row subsample embedded
        in the package (:func:`privlearn.data.load_kddcup99_embedded`: the very rows drawn here
        at the paper's size) is used, and the note says so.

    Returns
    -------
    X : ndarray of shape (n, d), every row of norm <= 1
    y : ndarray of shape (n,), float64 in {-1, +1}
    note : str
        One line describing the preprocessing.
    """
    from privlearn.data import (
        load_kddcup99,
        load_mnist,
        make_sphere_separable,
        maxabs_scale,
        project_to_ball,
        random_projection,
    )
    from privlearn.exceptions import PrivacyLeakWarning

    if name not in _FULL_SIZE:
        raise ValueError(f"unknown data set {name!r}; choose from {sorted(_FULL_SIZE)}")
    size = _FULL_SIZE[name] if n is None else int(n)
    d = _DIM[name]
    if name == "synthetic":
        X, y = make_sphere_separable(size, d, 0.001, seed=derive_seed(_TAG, name, "data"))
        note = f"n={size} uniform in the {d}-d unit ball, separable with margin 0.001"
        return X, y.astype(np.float64), note
    if name == "kddcup99":
        from privlearn.data import KDDCUP99_EMBEDDED_ROWS, data_source, load_kddcup99_embedded

        seed = derive_seed(_TAG, name, "subsample")
        located, _ = data_source("kddcup99/kddcup.data_10_percent.gz", data_home)
        embedded = located is None and data_home is None and size <= KDDCUP99_EMBEDDED_ROWS
        if embedded:
            # the embedded rows ARE the paper-size subsample drawn below with this seed
            sub = None if size == KDDCUP99_EMBEDDED_ROWS else size
            X, y = load_kddcup99_embedded(n_samples=sub, seed=seed)
        else:
            X, y = load_kddcup99(data_home, n_samples=size, seed=seed)
        with warnings.catch_warnings():
            # The paper normalises each feature with bounds taken from the data itself; this
            # leaks outside the DP guarantee (PrivacyLeakWarning) and is reproduced on purpose.
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            X = maxabs_scale(X)
        if not embedded:
            origin = f"random subsample of {size} rows of the 10% file"
        elif size == KDDCUP99_EMBEDDED_ROWS:
            origin = (
                f"the EMBEDDED {KDDCUP99_EMBEDDED_ROWS:,}-row subsample shipped in privlearn "
                "(the data folder lacks the 10% file): the same rows as the random subsample "
                "of the 10% file"
            )
        else:
            origin = (
                f"random subsample of {size} rows of the EMBEDDED {KDDCUP99_EMBEDDED_ROWS:,}-row "
                "subsample shipped in privlearn (the data folder lacks the 10% file)"
            )
        note = (
            f"{origin}; features divided by their max |x| "
            f"over the subsample (data-derived: outside the DP guarantee, as in the paper), "
            f"rows projected onto the unit ball, Gaussian random projection to d={d}, rows "
            "projected onto the unit ball again"
        )
    else:
        X, digits = load_mnist("train", data_home)
        if size < X.shape[0]:
            rng = np.random.default_rng(derive_seed(_TAG, name, "subsample"))
            rows = np.sort(rng.choice(X.shape[0], size=size, replace=False))
            X, digits = X[rows], digits[rows]
        y = np.where(digits == 1, 1, -1)
        X = maxabs_scale(X, max_abs=255.0)  # public bound: no leak
        sub = "the 60,000 training images" if size >= 60_000 else f"{size} training images"
        note = (
            f"{sub}, label +1 for digit 1; pixels / 255 (public bound), rows projected onto the "
            f"unit ball, Gaussian random projection to d={d}, rows projected onto the unit ball "
            "again"
        )
    X = project_to_ball(X, 1.0)
    X = random_projection(X, d, seed=derive_seed(_TAG, name, "projection"))
    X = project_to_ball(X, 1.0)
    return np.ascontiguousarray(X), y.astype(np.float64), note


def centralized_optimum(
    X: np.ndarray, y: np.ndarray, lam: float = LAMBDA
) -> tuple[np.ndarray, float, float]:
    """Minimiser of ``(lam/2)||w||^2 + mean log-loss`` by scikit-learn (Fig. 2, "centralized").

    ``LogisticRegression(C=1/(n lam), fit_intercept=False)`` minimises
    ``(1/2)||w||^2 + C sum_i loss_i``, i.e. the same objective times ``C n``.

    Returns
    -------
    w : ndarray of shape (d,)
    value : float
        The objective at ``w``.
    grad_norm : float
        Norm of the objective's gradient at ``w`` (a check of convergence).
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    n = X.shape[0]
    clf = LogisticRegression(C=1.0 / (n * lam), fit_intercept=False, tol=1e-12, max_iter=100_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the gradient norm is reported
        clf.fit(X, y)
    w = np.asarray(clf.coef_, dtype=np.float64).ravel()
    if clf.classes_[-1] != 1:  # pragma: no cover - labels are always {-1, +1} here
        w = -w
    margins = y * (X @ w)
    with np.errstate(over="ignore"):
        weights = 1.0 / (1.0 + np.exp(margins))
    grad = lam * w - (X.T @ (y * weights)) / n
    value = float(objective(X, y, w, "log_loss", lam)[0])
    return w, value, float(np.linalg.norm(grad))
