"""Synthetic data sets of the papers privlearn reproduces.

Every generator draws from ``numpy.random.default_rng(seed)``: an int seed makes the output
reproducible bit for bit, ``seed=None`` (the default) draws fresh OS entropy. A
``numpy.random.Generator`` may be passed instead of an int and is used (and advanced) as is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._checks import as_real
from .preprocess import _row_norms, _shrink_to_radius

__all__ = [
    "make_sphere_separable",
    "make_msd_like",
    "make_gaussian_mixture",
    "make_large_categorical",
]


def _check_int(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _check_real(value: Any, name: str) -> float:
    value = as_real(value, name, numbers_only=True)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def _rng(seed: Any) -> np.random.Generator:
    if seed is not None and not isinstance(seed, np.random.Generator):
        if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
            raise TypeError(
                f"seed must be None, an int or a numpy.random.Generator, got {type(seed).__name__}"
            )
        if seed < 0:
            raise ValueError(f"seed must be non-negative, got {seed}")
    return np.random.default_rng(seed)


def _unit_vectors(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """n directions uniform on the unit sphere S^{d-1} (normalised Gaussian vectors)."""
    g = rng.standard_normal((n, d))
    norms = np.linalg.norm(g, axis=1)
    while (norms == 0).any():  # probability zero, but never divide by 0
        bad = norms == 0
        g[bad] = rng.standard_normal((int(bad.sum()), d))
        norms = np.linalg.norm(g, axis=1)
    return g / norms[:, None]


def make_sphere_separable(
    n: int = 10_000,
    d: int = 5,
    margin: float = 0.001,
    seed: int | np.random.Generator | None = None,
    *,
    return_hyperplane: bool = False,
) -> tuple[np.ndarray, ...]:
    """Linearly separable points in the unit ball (Song, Chaudhuri, Sarwate 2013).

    The synthetic set of the DP-SGD paper: "n = 10,000 samples drawn uniformly from a
    5-dimensional sphere, linearly separable with margin 0.001". Here:

    1. a hyperplane through the origin with unit normal ``w`` uniform on the sphere is drawn;
    2. points are drawn uniformly from the unit ball (direction uniform on the sphere, radius
       ``U**(1/d)``); every point with ``|<w, x>| < margin`` is rejected and redrawn;
    3. ``y = sign(<w, x>)``.

    So every point is in the closed unit ball (``||x|| <= 1``, as the paper's analysis needs)
    and at distance ``>= margin`` from the hyperplane; the data are separable with that margin
    and the labels are balanced in distribution (the ball is symmetric about the hyperplane).

    Parameters
    ----------
    n : int, default 10000
        Number of points.
    d : int, default 5
        Dimension.
    margin : float, default 0.001
        Minimum distance to the hyperplane, in ``[0, 1)``.
    seed : int or numpy.random.Generator, optional
    return_hyperplane : bool, default False
        Also return the unit normal ``w``.

    Returns
    -------
    X : ndarray of shape (n, d), float64
    y : ndarray of shape (n,), int64 in {-1, +1}
    w : ndarray of shape (d,), float64
        Only when ``return_hyperplane`` is true.
    """
    n = _check_int(n, "n", 1)
    d = _check_int(d, "d", 1)
    margin = _check_real(margin, "margin")
    if not 0.0 <= margin < 1.0:
        raise ValueError(f"margin must be in [0, 1), got {margin}")
    rng = _rng(seed)
    w = _unit_vectors(rng, 1, d)[0]
    X = np.empty((n, d), dtype=np.float64)
    filled = 0
    while filled < n:
        m = max(n - filled, 64)
        batch = _unit_vectors(rng, m, d) * (rng.random(m) ** (1.0 / d))[:, None]
        # Guarantee ||x|| <= 1 in floating point too (a rounding error could exceed it).
        _shrink_to_radius(batch, np.flatnonzero(_row_norms(batch) > 1.0), 1.0)
        keep = batch[np.abs(batch @ w) >= margin]
        take = min(n - filled, keep.shape[0])
        X[filled : filled + take] = keep[:take]
        filled += take
    y = np.where(X @ w >= 0, 1, -1).astype(np.int64)
    if return_hyperplane:
        return X, y, w
    return X, y


# Model constants of make_msd_like, chosen to resemble YearPredictionMSD's year marginal (mean
# about 1998, standard deviation about 10, left-skewed, range 1922..2011) and its modest linear
# predictability (a least-squares fit explains roughly a quarter of the variance).
_MSD_YEAR_BASE = 1998.0
_MSD_SIGNAL_SCALE = 5.0
_MSD_NOISE_SCALE = 8.0
_MSD_YEAR_MIN = 1922.0
_MSD_YEAR_MAX = 2011.0


def make_msd_like(
    n: int, d: int = 90, seed: int | np.random.Generator | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Regression data shaped like YearPredictionMSD (a stand-in when the real file is absent).

    The DP-SCD paper (Damaskinos et al. 2021) uses YearPredictionMSD (463,715 x 90, target =
    release year) for ridge regression. This generator keeps its shape and a similar target
    distribution with a known linear model:

    - features ``X_ij ~ N(0, 1)`` i.i.d.;
    - a coefficient direction ``w`` uniform on the unit sphere, so ``s = X w ~ N(0, 1)``;
    - noise ``e = 8 - E`` with ``E ~ Exponential(mean 8)``: mean 0, standard deviation 8 and a
      long left tail, like the real years (most songs are recent, a few are very old);
    - ``year = clip(round(1998 + 5 s + e), 1922, 2011)``.

    Before rounding and clipping the linear signal explains ``25 / 89`` (about 28%) of the
    year variance; the years have mean about 1998 and standard deviation about 9.4, about 3%
    of the rows are clipped to 2011 and a handful (about 3e-5) to 1922.

    Parameters
    ----------
    n : int
        Number of rows (463,715 for the DP-SCD training set).
    d : int, default 90
        Number of features.
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    X : ndarray of shape (n, d), float64
    y : ndarray of shape (n,), float64
        Integer-valued years in ``[1922, 2011]``.
    """
    n = _check_int(n, "n", 1)
    d = _check_int(d, "d", 1)
    rng = _rng(seed)
    w = _unit_vectors(rng, 1, d)[0]
    X = rng.standard_normal((n, d))
    noise = _MSD_NOISE_SCALE - rng.exponential(_MSD_NOISE_SCALE, size=n)
    year = _MSD_YEAR_BASE + _MSD_SIGNAL_SCALE * (X @ w) + noise
    y = np.clip(np.round(year), _MSD_YEAR_MIN, _MSD_YEAR_MAX)
    return X, np.ascontiguousarray(y, dtype=np.float64)


def make_gaussian_mixture(
    n: int = 50_000,
    k: int = 64,
    d: int = 100,
    seed: int | np.random.Generator | None = None,
    *,
    center_radius: float = 10.0,
    spread: float = 1.0,
    return_centers: bool = False,
) -> tuple[np.ndarray, ...]:
    """The mixture-of-64-Gaussians set of Chaturvedi, Nguyen, Xu 2021 (DP k-means).

    Chaturvedi et al. use "50000 points randomly sampled from a mixture of 64 Gaussians",
    "reproducing the construction in" Balcan, Dick, Liang, Mou, Zhang (ICML 2017). The
    dimension and spread are not legible in our copy of the paper, so we follow the public
    reference implementation of Balcan et al. (``demo.m`` of ``dp-clustering-icml17``):
    dimension ``d = 100``; each center is ``10 * u`` with ``u`` uniform on the unit sphere;
    each point is its center plus ``spread * v`` with ``v`` a normalised Gaussian vector.
    In ``d = 100`` the offset ``v`` is within a few percent of an isotropic Gaussian with
    per-coordinate standard deviation ``1/sqrt(d)``. Components are equally likely; each
    point's component is drawn independently (the reference code assigns equal blocks).

    Parameters
    ----------
    n : int, default 50000
        Number of points.
    k : int, default 64
        Number of components.
    d : int, default 100
        Dimension.
    seed : int or numpy.random.Generator, optional
    center_radius : float, default 10.0
        Norm of every component center.
    spread : float, default 1.0
        Norm of every point's offset from its center (>= 0).
    return_centers : bool, default False
        Also return the ``(k, d)`` array of centers.

    Returns
    -------
    X : ndarray of shape (n, d), float64
        Every row has norm ``<= center_radius + spread`` (up to rounding).
    labels : ndarray of shape (n,), int64
        The component of each point, in ``0..k-1``.
    centers : ndarray of shape (k, d), float64
        Only when ``return_centers`` is true.
    """
    n = _check_int(n, "n", 1)
    k = _check_int(k, "k", 1)
    d = _check_int(d, "d", 1)
    center_radius = _check_real(center_radius, "center_radius")
    spread = _check_real(spread, "spread")
    if center_radius < 0 or spread < 0:
        raise ValueError("center_radius and spread must be non-negative")
    rng = _rng(seed)
    centers = center_radius * _unit_vectors(rng, k, d)
    labels = rng.integers(0, k, size=n).astype(np.int64)
    X = centers[labels] + spread * _unit_vectors(rng, n, d)
    X = np.ascontiguousarray(X, dtype=np.float64)
    if return_centers:
        return X, labels, centers
    return X, labels


def make_large_categorical(
    n: int = 2000,
    seed: int | np.random.Generator | None = None,
    *,
    n_signal: int = 10,
    signal_levels: int = 10,
    n_noise: int = 30,
    noise_levels: int = 500,
    level_probs: str = "random",
    design_seed: int | np.random.Generator | None = None,
    return_effects: bool = False,
) -> tuple[Any, ...]:
    """High-cardinality categorical data of the Win-Vector impact-coding example.

    The generative model of Win-Vector's "Using differential privacy to reuse training data"
    (the blog's example; R code ``mkModel.R`` / ``CodingExample.Rmd`` of
    ``WinVector/Examples/DiffPriv/DPrivModeling``, which the blog's author points to):

    - signal variables ``x1..x10`` with 10 levels each and noise variables ``n1..n30`` with
      500 levels each; level ``j`` of variable ``v`` is the string ``"v.c%03d" % j``
      (1-based), e.g. ``"x3.c007"``, ``"n12.c250"``;
    - every variable takes its levels with fixed probabilities: ``"random"`` (default,
      ``mkModel.R``) draws them once as ``U(0,1)`` weights normalised to sum 1; ``"uniform"``
      (the variant ``mkExample.R``) uses ``1/levels``;
    - every level of a signal variable has an effect ``N(0, 1)``, except a random
      ``floor(levels/2)`` of them, whose effect is 0; noise variables have effect 0 on every
      level; all variables are independent;
    - the outcome is ``y = +1`` if ``sum of the row's level effects + N(0, 1) > 0``, else
      ``-1`` ("outcome y ~ sum(level-effects)").

    The blog trains on 2,000 rows (and uses 2,000 calibration and 10,000 test rows drawn from
    the same design). To draw several sets from one design, fix ``design_seed`` and vary
    ``seed``.

    Parameters
    ----------
    n : int, default 2000
        Number of rows.
    seed : int or numpy.random.Generator, optional
        Seed of the rows (and of the design when ``design_seed`` is None).
    n_signal, signal_levels, n_noise, noise_levels : int
        Shape of the design (defaults: the blog's 10 x 10 signal and 30 x 500 noise).
    level_probs : {"random", "uniform"}, default "random"
        How the level probabilities are chosen (see above).
    design_seed : int or numpy.random.Generator, optional
        Seed of the design (level probabilities and effects). ``None``: the design is drawn
        first from the same generator as the rows.
    return_effects : bool, default False
        Also return the true level effects: a dict ``{variable: pandas.Series}`` indexed by
        every level of the variable (drawn or not).

    Returns
    -------
    X : pandas.DataFrame of shape (n, n_signal + n_noise)
        String-valued categorical columns ``x1..`` then ``n1..``.
    y : ndarray of shape (n,), int64 in {-1, +1}
    effects : dict of str to pandas.Series
        Only when ``return_effects`` is true.
    """
    import pandas as pd

    n = _check_int(n, "n", 1)
    n_signal = _check_int(n_signal, "n_signal", 0)
    n_noise = _check_int(n_noise, "n_noise", 0)
    signal_levels = _check_int(signal_levels, "signal_levels", 1)
    noise_levels = _check_int(noise_levels, "noise_levels", 1)
    if n_signal + n_noise == 0:
        raise ValueError("need at least one variable (n_signal + n_noise >= 1)")
    if not isinstance(level_probs, str):
        raise TypeError(f"level_probs must be a str, got {type(level_probs).__name__}")
    if level_probs not in ("random", "uniform"):
        raise ValueError(f"level_probs must be 'random' or 'uniform', got {level_probs!r}")
    row_rng = _rng(seed)
    design_rng = row_rng if design_seed is None else _rng(design_seed)

    plan: list[tuple[str, int, bool]] = [
        *((f"x{i + 1}", signal_levels, True) for i in range(n_signal)),
        *((f"n{i + 1}", noise_levels, False) for i in range(n_noise)),
    ]

    # Design: level probabilities and effects, variable by variable.
    design = []
    for name, levels, is_signal in plan:
        if level_probs == "random":
            probs = design_rng.random(levels)
            probs /= probs.sum()
        else:
            probs = np.full(levels, 1.0 / levels)
        effects = np.zeros(levels)
        if is_signal:
            effects = design_rng.standard_normal(levels)
            effects[design_rng.choice(levels, size=levels // 2, replace=False)] = 0.0
        codes = np.array([f"{name}.c{j + 1:03d}" for j in range(levels)], dtype=object)
        design.append((name, np.cumsum(probs), codes, effects))

    # Rows: draw each variable's level by inverting its cumulative probabilities.
    columns: dict[str, np.ndarray] = {}
    score = np.zeros(n)
    for name, cumprobs, codes, effects in design:
        idx = np.searchsorted(cumprobs, row_rng.random(n) * cumprobs[-1], side="right")
        idx = np.minimum(idx, len(codes) - 1)
        columns[name] = codes[idx]
        score += effects[idx]
    score += row_rng.standard_normal(n)
    y = np.where(score > 0, 1, -1).astype(np.int64)
    frame = pd.DataFrame(columns)
    if return_effects:
        effects_out = {
            name: pd.Series(effects, index=list(codes), name=name)
            for name, _, codes, effects in design
        }
        return frame, y, effects_out
    return frame, y
