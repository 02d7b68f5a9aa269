"""scikit-learn transformers that take raw features into the unit ball without leaking.

- :class:`DPFeatureScaler` estimates, with differential privacy, a lower and an upper
  quantile of each feature inside a PUBLIC range (:func:`~privlearn.preprocessing.dp_quantiles`,
  the exponential mechanism of Smith 2011), clips each feature to them and maps it affinely
  into ``[-1/sqrt(d), 1/sqrt(d)]`` (or ``[0, 1/sqrt(d)]``): every transformed row has L2 norm
  ``<= 1``, the precondition of DP-SGD (Song, Chaudhuri & Sarwate 2013) and DP-SCD.
- :class:`UnitBallProjector` projects each row onto the ball of a public radius: a per-row
  map, no privacy cost.

Both never write to the caller's arrays and take ``ledger=`` where a fit spends budget.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from privlearn._checks import as_index, as_positive, check_sparse_structure
from privlearn.data.preprocess import project_to_ball
from privlearn.mechanisms._bits import as_seed, spend
from privlearn.preprocessing.quantiles import (
    DEFAULT_LATTICE_BITS,
    PreprocessingPrivacy,
    check_bounds,
    check_epsilon,
    check_lattice_bits,
    check_levels,
    dp_quantiles,
    quantile_statement,
)

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # pragma: no cover - older scikit-learn

    def _validate_data(est: Any, X: Any, **kwargs: Any) -> Any:
        return est._validate_data(X, **kwargs)


__all__ = ["DPFeatureScaler", "UnitBallProjector"]

_FEATURE_RANGES = ("symmetric", "nonnegative")


def _check_quantile_range(value: Any) -> tuple[float, float]:
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"quantile_range must be a pair (q_low, q_high), got {value!r}")
    try:
        q_low, q_high = value
    except (TypeError, ValueError):
        raise TypeError(f"quantile_range must be a pair (q_low, q_high), got {value!r}") from None
    low, high = check_levels([q_low, q_high], "quantile_range")
    if not low < high:
        raise ValueError(f"quantile_range must have q_low < q_high, got ({low}, {high})")
    return float(low), float(high)


def _check_features(value: Any, n_features: int) -> np.ndarray:
    """``quantile_features`` as sorted unique int indices (None: all features)."""
    if value is None:
        return np.arange(n_features)
    if isinstance(value, (str, bytes)):
        raise TypeError("quantile_features must be None, a boolean mask or integer indices")
    arr = np.asarray(value)
    if arr.dtype == np.bool_:
        if arr.shape != (n_features,):
            raise ValueError(
                f"quantile_features as a mask must have shape ({n_features},), got {arr.shape}"
            )
        return np.flatnonzero(arr)
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise TypeError("quantile_features must be None, a boolean mask or 1-D integer indices")
    idx = [as_index(int(i), "quantile_features entry", upper=n_features - 1) for i in arr]
    if len(set(idx)) != len(idx):
        raise ValueError("quantile_features has repeated indices")
    return np.array(sorted(idx), dtype=np.intp)


def _describe_ranges(lo: np.ndarray, hi: np.ndarray) -> str:
    """``[a, b] for every feature``, or runs of equal ranges: ``features 0-4: [a, b]; ...``."""
    if (lo == lo[0]).all() and (hi == hi[0]).all():
        return f"[{lo[0]:g}, {hi[0]:g}] for every feature"
    runs = []
    start = 0
    for j in range(1, lo.size + 1):
        if j == lo.size or lo[j] != lo[start] or hi[j] != hi[start]:
            which = f"feature {start}" if j - 1 == start else f"features {start}-{j - 1}"
            runs.append(f"{which}: [{lo[start]:g}, {hi[start]:g}]")
            start = j
    return "; ".join(runs)


class DPFeatureScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Scale raw features into the unit ball with privately estimated clipping ranges.

    For every feature ``j`` the fit releases differentially private estimates of the
    ``q_low`` and ``q_high`` quantiles inside the public range ``bounds[j]`` (the exponential
    mechanism of Smith 2011, :func:`~privlearn.preprocessing.dp_quantiles`); ``transform``
    clips the feature to ``[lower_[j], upper_[j]]`` and maps that interval affinely onto
    ``[-1/sqrt(d), 1/sqrt(d)]`` (``feature_range="symmetric"``) or ``[0, 1/sqrt(d)]``
    (``"nonnegative"``), with ``d`` the number of features.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget of ``fit`` (``> 0``). Split evenly over the ``2 F`` released quantiles
        (``F`` = number of features in ``quantile_features``) by basic composition: each is
        ``epsilon / (2 F)``-DP. ``inf`` uses the exact (non-private) quantiles: only for
        experiments.
    bounds : (lower, upper)
        REQUIRED. PUBLIC range of the raw features: two scalars (one range for all) or two
        length-``d`` sequences (one per feature), finite, ``lower < upper``. Choose them from
        domain knowledge or a public schema, never from the private data; the estimates and
        the output always lie inside them.
    quantile_range : (float, float), default=(0.05, 0.95)
        Quantile levels ``0 <= q_low < q_high <= 1`` of the clipping range (public).
    quantile_features : None, boolean mask or int indices, default=None
        Features whose clipping range is estimated; the others use ``bounds`` as it is (no
        budget: e.g. one-hot columns with bounds ``(0, 1)``). ``None``: every feature.
    feature_range : {"symmetric", "nonnegative"}, default="symmetric"
        Target interval of each feature: ``[-1/sqrt(d), 1/sqrt(d)]`` or ``[0, 1/sqrt(d)]``.
    seed : int or None, default=None
        ``None``: randomness keyed from the operating system (a private release); an int:
        reproducible (whoever knows the seed knows the noise).
    ledger : object or None, default=None
        A shared budget (:class:`privlearn.accounting.PrivacyLedger`, or any object with
        ``spend(epsilon, delta, label=...)``). ``fit`` charges ``(epsilon, 0)`` after the input
        checks and before any statistic of ``X`` is computed: a refused spend raises
        :class:`~privlearn.exceptions.BudgetExceededError` and nothing is fitted.
    lattice_bits : int, default=32
        PUBLIC resolution of the released ranges: every estimated ``lower_[j]``,
        ``upper_[j]`` is a point ``bounds_lo + i (bounds_hi - bounds_lo) / 2**lattice_bits``
        of the public lattice of :func:`~privlearn.preprocessing.dp_quantiles` (in ``[1, 52]``).

    Attributes
    ----------
    lower_, upper_ : ndarray of shape (n_features,)
        The clipping range of each feature (released: covered by ``privacy_``): points of the
        public lattice for the estimated features, ``bounds`` for the others. Independent
        quantile draws may come out in the wrong order; they are sorted (post-processing).
    privacy_ : PreprocessingPrivacy
        ``(epsilon, 0)``-DP under add/remove-one neighbours, with the mechanism, the budget
        per quantile and the public inputs (bounds, quantile levels, estimated features,
        number of features, lattice); the seed is secret randomness.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.

    Notes
    -----
    *Row norm.* Every output coordinate lies in ``[-1/sqrt(d), 1/sqrt(d)]``, so every output
    row ``t`` has ``||t||^2 <= d (1/d) = 1``; the few rows that rounding pushes an ulp outside
    are pulled back (:func:`privlearn.data.project_to_ball`), so ``||t|| <= 1`` holds exactly
    in float64, for training and for new data alike. A degenerate range
    (``lower_[j] == upper_[j]``) maps feature ``j`` to the centre of its target interval.

    *Privacy.* ``fit`` is ``(epsilon, 0)``-DP under add/remove-one neighbours (Smith 2011;
    McSherry & Talwar 2007): each released quantile is ``epsilon / (2 F)``-DP and they
    compose. The data size is not public and enters only through the mechanism; the set of
    values ``lower_`` and ``upper_`` can take is the public lattice whatever the data (no
    low-bit leak, Mironov 2012). ``transform``
    is a per-row map with the released ranges, so a model trained on its output (e.g.
    :class:`~privlearn.linear.DPSGDClassifier` in a :class:`~sklearn.pipeline.Pipeline`) is
    ``epsilon + epsilon_model``-DP over the same rows by basic composition (under the
    model's neighbouring relation; replace-one costs at most twice the add/remove figure).

    Examples
    --------
    >>> import numpy as np
    >>> from privlearn.preprocessing import DPFeatureScaler
    >>> X = np.random.default_rng(0).normal(50.0, 10.0, size=(2000, 3))
    >>> sc = DPFeatureScaler(epsilon=1.0, bounds=(0.0, 100.0), seed=0).fit(X)
    >>> bool(np.linalg.norm(sc.transform(X), axis=1).max() <= 1.0)
    True
    >>> sc.privacy_.epsilon
    1.0
    """

    def __init__(
        self,
        epsilon: float = 1.0,
        bounds: Any = None,
        quantile_range: tuple[float, float] = (0.05, 0.95),
        quantile_features: Any = None,
        feature_range: str = "symmetric",
        seed: int | None = None,
        ledger: Any = None,
        lattice_bits: int = DEFAULT_LATTICE_BITS,
    ) -> None:
        self.epsilon = epsilon
        self.bounds = bounds
        self.quantile_range = quantile_range
        self.quantile_features = quantile_features
        self.feature_range = feature_range
        self.seed = seed
        self.ledger = ledger
        self.lattice_bits = lattice_bits

    def __sklearn_tags__(self) -> Any:  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.seed is None
        return tags

    def _more_tags(self) -> dict[str, Any]:  # pragma: no cover - scikit-learn < 1.6
        return {"non_deterministic": self.seed is None}

    def fit(self, X: Any, y: Any = None) -> DPFeatureScaler:
        """Estimate the clipping ranges; spends ``epsilon`` (see ``privacy_``).

        A fit that raises (bad input, a refused ledger charge, an interrupt) leaves the
        estimator exactly as it was: everything is computed into locals and the fitted
        attributes are replaced together at the end.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Raw features (finite; never modified).
        y : ignored

        Returns
        -------
        self
        """
        fitted = ("n_features_in_", "feature_names_in_", "lower_", "upper_", "privacy_")
        before = {name: vars(self)[name] for name in fitted if name in vars(self)}
        try:
            lower, upper, privacy = self._fit(X)
        except BaseException:
            # validate_data(reset=True) has already set (or deleted) n_features_in_ and
            # feature_names_in_: put the previous fit back as it was
            for name in fitted:
                if name in before:
                    setattr(self, name, before[name])
                elif name in vars(self):
                    delattr(self, name)
            raise
        self.lower_ = lower
        self.upper_ = upper
        self.privacy_: PreprocessingPrivacy = privacy
        return self

    def _fit(self, X: Any) -> tuple[np.ndarray, np.ndarray, PreprocessingPrivacy]:
        epsilon = check_epsilon(self.epsilon)
        q_low, q_high = _check_quantile_range(self.quantile_range)
        if self.feature_range not in _FEATURE_RANGES:
            raise ValueError(
                f"feature_range must be one of {_FEATURE_RANGES}, got {self.feature_range!r}"
            )
        seed = as_seed(self.seed)
        bits = check_lattice_bits(self.lattice_bits)
        X = _validate_data(self, X, dtype=np.float64, reset=True)
        d = X.shape[1]
        lo, hi = check_bounds(self.bounds, d)
        features = _check_features(self.quantile_features, d)
        n_quantiles = 2 * features.size
        ledger = self.ledger
        if features.size and ledger is not None:
            if math.isinf(epsilon):
                raise ValueError("epsilon=inf is not private and cannot be charged to a ledger")
            spend(ledger, epsilon, 0.0, f"{type(self).__name__}.fit", "add_remove")

        lower, upper = lo.copy(), hi.copy()
        if features.size:
            est = dp_quantiles(
                X[:, features],
                [q_low, q_high],
                epsilon,
                (lo[features], hi[features]),
                seed,
                lattice_bits=bits,
            )
            # min and max of released lattice points: post-processing
            lower[features] = est.min(axis=0)
            upper[features] = est.max(axis=0)
        released = "lower_, upper_ (one clipping range per feature"
        if features.size and math.isfinite(epsilon):
            released += f"; estimated ones are points of the public lattice of 2**{bits} cells"
        privacy = quantile_statement(
            epsilon if features.size else 0.0,
            n_quantiles,
            self._public_inputs(lo, hi, q_low, q_high, features, d, seed, bits),
            released + ")",
        )
        return lower, upper, privacy

    def _public_inputs(
        self,
        lo: np.ndarray,
        hi: np.ndarray,
        q_low: float,
        q_high: float,
        features: np.ndarray,
        d: int,
        seed: int | None,
        bits: int,
    ) -> tuple[str, ...]:
        bounds = "bounds=" + _describe_ranges(lo, hi)
        if features.size == d:
            which = "quantile_features=all"
        else:
            which = f"quantile_features={features.tolist()}"
        return (
            bounds,
            f"quantile_range=({q_low:g}, {q_high:g})",
            which,
            f"n_features={d}",
            f"feature_range={self.feature_range}",
            f"lattice_bits={bits} (outputs on lower + i (upper - lower) / 2**{bits})",
        )  # the seed is secret randomness, not a public input

    def transform(self, X: Any) -> np.ndarray:
        """Clip to ``[lower_, upper_]`` and map into the target interval; rows have norm
        ``<= 1``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_features), float64 (a new array)
        """
        check_is_fitted(self, "privacy_")
        X = _validate_data(self, X, dtype=np.float64, reset=False)
        d = X.shape[1]
        half = 1.0 / math.sqrt(d)
        width = self.upper_ - self.lower_
        degenerate = width <= 0.0
        safe = np.where(degenerate, 1.0, width)
        t = (np.clip(X, self.lower_, self.upper_) - self.lower_) / safe  # a new array
        t[:, degenerate] = 0.5
        np.clip(t, 0.0, 1.0, out=t)
        if self.feature_range == "symmetric":
            t = (2.0 * t - 1.0) * half
        else:
            t *= half
        return project_to_ball(t, 1.0)


class UnitBallProjector(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Project every row onto the closed L2 ball of radius ``radius`` (public).

    Rows with norm above ``radius`` are scaled onto the sphere; the others are unchanged
    (:func:`privlearn.data.project_to_ball`). The map uses nothing but the row itself, so it
    costs no privacy and any guarantee computed afterwards holds for the raw rows: this is
    how Song, Chaudhuri & Sarwate (2013) meet the ``||x_i|| <= 1`` assumption of DP-SGD.
    ``fit`` learns nothing from the data but ``n_features_in_`` (and ``feature_names_in_``).
    Dense or CSR input; the caller's arrays are never written.

    Parameters
    ----------
    radius : float, default=1.0
        Radius of the ball (``> 0``).

    Attributes
    ----------
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from privlearn.preprocessing import UnitBallProjector
    >>> Z = UnitBallProjector().fit_transform(np.array([[3.0, 4.0], [0.3, 0.4]]))
    >>> np.linalg.norm(Z, axis=1).round(12).tolist()
    [1.0, 0.5]
    """

    def __init__(self, radius: float = 1.0) -> None:
        self.radius = radius

    def __sklearn_tags__(self) -> Any:  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _more_tags(self) -> dict[str, Any]:  # pragma: no cover - scikit-learn < 1.6
        return {"stateless": True}

    def fit(self, X: Any, y: Any = None) -> UnitBallProjector:
        """Check ``radius`` and ``X``; record the number of features. Reads no statistic."""
        as_positive(self.radius, "radius")
        check_sparse_structure(X)
        _validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=True)
        return self

    def transform(self, X: Any) -> Any:
        """Rows projected onto the ball (a new dense array or CSR matrix)."""
        check_is_fitted(self, "n_features_in_")
        radius = as_positive(self.radius, "radius")
        check_sparse_structure(X)
        X = _validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return project_to_ball(X, radius)
