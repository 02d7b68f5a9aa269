"""Impact coding of high-cardinality categoricals, with the Win-Vector note's five schemes.

Reference: Win-Vector LLC (J. Mount), "Using differential privacy to reuse training data"
(source text in ``shared/papers/winvector_dp_impact_coding.txt``) and its R code
(``WinVector/Examples``, ``DiffPriv/DPrivModeling/modelCat.R``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import numbers
import warnings
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.model_selection import GroupKFold, GroupShuffleSplit, KFold
from sklearn.utils import ClassifierTags
from sklearn.utils.validation import check_is_fitted

from privlearn._checks import as_positive, as_probability
from privlearn._labels import LabelSet, declared_classes, warn_labels_read
from privlearn.backends import backend_for
from privlearn.encoding._codes import (
    CODE_WIDTH,
    COUNT_SUFFIXES,
    bayes_code,
    count_code,
    level_pvalues,
    mean_code,
)
from privlearn.encoding._counts import level_stats
from privlearn.encoding._input import (
    TARGET_LIMIT,
    as_binary_target,
    as_columns,
    as_continuous_target,
    as_multiclass_target,
    check_2d,
    check_target_bounds,
    factorize_column,
    fit_levels,
    level_indices,
    missing_levels,
    resolve_target_type,
    validate_data,
)
from privlearn.encoding._privacy import (
    ImpactPrivacy,
    continuous_laplace_privacy,
    laplace_privacy,
    no_privacy,
)
from privlearn.exceptions import PrivacyLeakWarning
from privlearn.mechanisms._bits import spend

__all__ = ["ImpactEncoder"]

_CODES = ("bayes", "counts")
_MODES = ("naive", "laplace", "split", "cross", "jackknife")
_MISSING = ("level", "error")
#: Accepted range of ``smoothing``: below it the pseudo-count underflows against the class
#: prevalence (a subnormal ``5e-324`` gave NaN and infinite codes for a multiclass outcome,
#: ``1e-300`` codes of 690), above it every code is 0 to double precision.
SMOOTHING_RANGE = (1e-12, 1e12)


def _sub_seed(seed: int | None, purpose: str) -> int | None:
    """A 64-bit seed for one purpose, derived from the user's seed (None stays None)."""
    if seed is None:
        return None
    digest = hashlib.sha256(f"privlearn.encoding/{seed}/{purpose}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


class ImpactEncoder(TransformerMixin, BaseEstimator):
    """Impact (target) coding of categorical columns for a binary, multiclass or continuous
    outcome.

    Each categorical column is replaced by a single-variable model of the outcome learned from
    per-level counts of the training rows: ``code="bayes"`` gives one column,
    ``log(P(y=1 | level) / P(y=1))`` with a smoothing pseudo-count; ``code="counts"`` gives
    four, the level's ``n_true``, ``n_false``, their log ratio and a rare-level flag.

    ``target_type`` (as in scikit-learn's ``TargetEncoder``) extends this beyond two classes:

    ``"multiclass"``
        One-vs-rest: for each class ``k`` (in ``classes_`` order) the binary code of the
        indicator ``y == k``, so ``K`` columns per input column for ``bayes`` (``4 K`` for
        ``counts``), ordered feature-major, then class (then the four counts outputs). The
        statistics of a level are its class histogram (``counts_``: ``K`` counts); the Laplace
        mode noises that histogram.
    ``"continuous"``
        The mean code: the level's mean outcome, shrunk towards the grand mean by
        ``smoothing`` pseudo-rows, minus the grand mean (one column per input column;
        ``code="bayes"`` only). The statistics of a level are its row count and outcome sum.
        ``target_bounds=(lo, hi)`` clips the outcome (in every mode) and is required by the
        Laplace mode, whose noise on each level's sum is calibrated to ``hi - lo``.

    Coding the same rows that then train a model leaks the outcome into the features (the
    Win-Vector note's "bad example": near perfect training AUC, poor test AUC). ``mode``
    chooses how the rows that train the downstream model get their codes:

    ``"naive"``
        Codes fitted on all rows code those same rows. **This is the leaky baseline the note
        warns about**, kept for comparison: do not train a model on its ``fit_transform``.
    ``"laplace"``
        Every level's ``n_true`` and ``n_false`` gets exact discrete Laplace noise of scale
        ``noise_scale`` (or calibrated from ``epsilon``) before the codes are computed (Bilenko's
        Laplace smearing); the code book is then ``epsilon``-DP, recorded in ``privacy_``.
    ``"split"``
        Codes are learned on a random ``split_fraction`` of the rows only; ``model_mask_``
        marks the other rows, the ones to train the downstream model on.
    ``"cross"``
        ``fit_transform`` cross-fits: the rows of fold ``i`` (of ``cv``) are coded by codes
        learned on the other folds, so no row is coded by a scheme that saw its outcome;
        ``transform`` uses codes learned on all rows (the scikit-learn ``TargetEncoder``
        convention). **So ``fit_transform(X, y)`` differs from ``fit(X, y).transform(X)``** on
        purpose: use the former for the training rows and the latter for new data.
    ``"jackknife"``
        Leave-one-out cross-fitting: every row is coded by the codes of all other rows
        (leave-one-group-out with ``groups``), computed in ``O(n)`` from the full counts by
        subtracting the row's own contribution. ``transform`` as in ``"cross"``.

    Parameters
    ----------
    code : {"bayes", "counts"}, default "bayes"
    mode : {"naive", "laplace", "split", "cross", "jackknife"}, default "cross"
    smoothing : float, default 1e-3
        Pseudo-count of the Bayes code and floor of the counts code (the note's ``smFactor``),
        in ``[1e-12, 1e12]`` (outside it the codes underflow to NaN or infinity, or vanish).
    rare_count : float, default 10
        The counts code flags a level as rare when ``max(n_true, n_false) < rare_count``.
    noise_scale : float, optional
        ``"laplace"`` mode: scale ``t`` of the discrete Laplace noise on each count (the note's
        sigma). The code book is then ``(n_columns / t)``-DP (``2 n_columns / t`` for a
        continuous outcome, whose level sums get Laplace noise of scale about
        ``t (hi - lo) / 2``). Give this or ``epsilon``.
    epsilon : float, optional
        ``"laplace"`` mode: total privacy budget of the code book; the noise scale is
        ``n_columns / epsilon`` (L1 sensitivity ``n_columns``: a row touches one level per
        column and changes one count of it by 1, under add/remove-one neighbours), or
        ``2 n_columns / epsilon`` for a continuous outcome (half for the counts, half for the
        sums).
    ledger : PrivacyLedger or None, default None
        ``"laplace"`` mode: a budget shared with other fits
        (:class:`privlearn.accounting.PrivacyLedger`), charged the code book's epsilon before any
        count is computed; a spend the cap cannot cover raises
        :class:`~privlearn.exceptions.BudgetExceededError` and nothing is fitted.
    split_fraction : float, default 0.5
        ``"split"`` mode: fraction of the rows used to learn the codes.
    cv : int or cross-validation splitter, default 5
        ``"cross"`` mode: number of folds (shuffled :class:`~sklearn.model_selection.KFold`, or
        :class:`~sklearn.model_selection.GroupKFold` when ``groups`` is given) or a splitter
        with a ``split(X, y, groups)`` method whose test folds partition the rows.
    significance : float, optional
        Level pruning as vtreat's ``rareSig``: a level whose single-variable model is not
        significant at this level, by the exact two-sided binomial test of its outcome mix
        against the prevalence of the coding rows, codes as an unseen level (0 for ``bayes``).
        The test runs on the same rows as the codes (each fold's complement in ``"cross"``,
        all other rows in ``"jackknife"``, the noisy counts in ``"laplace"``). None: no pruning.
    handle_missing : {"level", "error"}, default "level"
        Missing categories (NaN, None, ``pd.NA``): their own level, or a ``ValueError``.
    categories : "auto" or list of array_like, default "auto"
        The levels of each column: read from the training data, or given (one array per column;
        a training value outside its list is an error). Given levels make the level set public,
        which the Laplace mode's guarantee needs; with ``"auto"`` the Laplace mode warns that
        the set of levels present is not protected.
    target_type : {"binary", "multiclass", "continuous", "auto"}, default "binary"
        The kind of outcome. ``"auto"`` with ``classes`` declared: ``"binary"`` for two
        classes, else ``"multiclass"``; ``"auto"`` without ``classes`` infers it from ``y`` with
        :func:`sklearn.utils.multiclass.type_of_target` (scikit-learn's ``TargetEncoder``
        default), which reads the private outcome: the Laplace mode then warns
        (:class:`~privlearn.exceptions.PrivacyLeakWarning`) and ``privacy_`` lists the target
        type as a public input read from ``y``. The default stays ``"binary"`` so that a y
        with three or more values is an error unless another target type is asked for.
    classes : array-like of shape (n_classes,) or None, default None
        Binary and multiclass outcomes: the outcome's label set, declared PUBLIC (at least two
        distinct labels; exactly two for ``target_type="binary"``; scikit-learn's
        ``partial_fit(classes=...)`` convention). ``classes_``, the number of code columns and
        their names then come from it, never from ``y``; every label of ``y`` must belong to
        it (a label outside raises ValueError naming it, before anything is charged); a
        declared class absent from ``y`` gets codes from zero counts. ``None``: the classes
        are read from ``y``, which is outside the guarantee (one row with a unique label adds
        a class, and its code columns, with certainty): the Laplace mode then
        warns (:class:`~privlearn.exceptions.PrivacyLeakWarning`) and ``privacy_`` lists the
        label set as a public input read from ``y``.
    target_bounds : (float, float), optional
        Continuous outcome only: public bounds ``(lo, hi)``, ``lo < hi``; ``y`` is clipped to
        them. Required with ``mode="laplace"``, and never read from the data (the outcome's
        range is never inferred).
    seed : int, optional
        Seed of the noise, the split and the folds. Named ``seed`` (not ``random_state``) as
        in the rest of privlearn: the noise comes from the ChaCha20 streams of
        :mod:`privlearn.random`. ``None`` (the default, as for every private estimator): fresh
        operating-system entropy on every fit; an int makes fits reproducible.

    Attributes
    ----------
    categories_ : list of ndarray
        Sorted levels of each column (missing values excluded).
    target_type_ : str
        The target type of the fit (``target_type``, or what ``"auto"`` inferred).
    classes_ : ndarray of shape (n_classes,) or None
        The outcome's classes (sorted): the declared ``classes``, or those read from ``y``;
        binary: ``classes_[1]`` is the positive class ("true"). None for a continuous
        outcome.
    counts_ : list of ndarray of shape (n_levels + 2, n_stats)
        Per column, the statistics of each level, then of the missing value, then of an
        unseen level (always 0), as used by ``transform`` (noisy in the Laplace mode, from the
        coding rows in the split mode): ``[n_true, n_false]`` (binary), the ``K`` class counts
        in ``classes_`` order (multiclass), ``[n, sum of the (clipped) outcome]``
        (continuous).
    codes_ : list of ndarray of shape (n_levels + 2, width)
        The code table ``transform`` applies (same rows as ``counts_``).
    pvalues_ : list of ndarray or None
        Per column, the significance test's p-value of each slot (with ``significance``);
        shape ``(n_levels + 2, K)`` for a multiclass outcome (class ``k`` against the rest).
    model_mask_ : ndarray of bool
        Split mode only: the rows of the last fit the downstream model may train on (the
        coding rows excluded). Other modes keep nothing per row (every row may be used).
    privacy_ : ImpactPrivacy
        The epsilon spent (``inf`` unless ``mode="laplace"``) and how.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when fitted on a DataFrame with string column names.

    Notes
    -----
    Codes are computed in ``O(n + levels)`` per column with ``np.bincount``. A level unseen at
    fit time (or a missing value never seen at fit) gets the code of a level with zero counts:
    0 for ``bayes`` and for the mean code; ``(s, s, 0, 1)`` for ``counts`` (``s = smoothing``).

    *Privacy of the Laplace mode* (add/remove-one neighbours, public level lists): a row
    touches one level per column. Binary and multiclass: the level's count vector (two counts,
    or the ``K``-class histogram) changes in one entry by 1, so each column's counts have L1
    sensitivity 1 and discrete Laplace noise of scale ``t`` on every count makes them
    ``1/t``-DP, whatever ``K``; the columns compose to ``n_columns / t``. Continuous: per
    column, the row counts (sensitivity 1, discrete Laplace of scale ``t``) and the sums of
    ``clip(y, lo, hi) - (lo + hi) / 2`` (sensitivity ``(hi - lo) / 2``, snapping-mechanism
    Laplace calibrated to ``1/t`` per column) are released, ``2/t`` per column and
    ``2 n_columns / t`` in all (``epsilon=`` sets ``t = 2 n_columns / epsilon``). Every code,
    total and grand mean is computed from these noisy values (post-processing).

    The guarantee takes as public the level lists (``categories=``), the label set
    (``classes=``), the target type and the outcome bounds (``target_bounds=``). Read from the
    data instead, the level set, the label set (``classes_`` and the number of code columns)
    and an ``"auto"`` target type are exact functions of the private rows and are not covered:
    the fit warns (:class:`~privlearn.exceptions.PrivacyLeakWarning`) and ``privacy_`` says
    so. A failed or refused fit (bad input, a budget the ledger cannot cover) leaves a fitted
    encoder exactly as it was.

    Examples
    --------
    >>> import numpy as np
    >>> from privlearn.encoding import ImpactEncoder
    >>> X = np.array([["a"], ["a"], ["b"], ["b"], ["b"], ["c"]], dtype=object)
    >>> y = np.array([1, 1, 0, 0, 1, 0])
    >>> enc = ImpactEncoder(mode="jackknife").fit(X, y)
    >>> enc.transform(np.array([["a"], ["zzz"]], dtype=object)).round(3).ravel().tolist()
    [0.693, 0.0]
    """

    def __init__(
        self,
        code: str = "bayes",
        mode: str = "cross",
        *,
        smoothing: float = 1e-3,
        rare_count: float = 10.0,
        noise_scale: float | None = None,
        epsilon: float | None = None,
        split_fraction: float = 0.5,
        cv: Any = 5,
        significance: float | None = None,
        handle_missing: str = "level",
        categories: Any = "auto",
        target_type: str = "binary",
        target_bounds: Any = None,
        classes: Any = None,
        seed: int | None = None,
        ledger: Any = None,
    ) -> None:
        self.code = code
        self.mode = mode
        self.smoothing = smoothing
        self.rare_count = rare_count
        self.noise_scale = noise_scale
        self.epsilon = epsilon
        self.split_fraction = split_fraction
        self.cv = cv
        self.significance = significance
        self.handle_missing = handle_missing
        self.categories = categories
        self.target_type = target_type
        self.ledger = ledger
        self.target_bounds = target_bounds
        self.classes = classes
        self.seed = seed

    # ---- scikit-learn plumbing ---------------------------------------------------------------
    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.input_tags.allow_nan = self.handle_missing == "level"
        tags.target_tags.required = True
        # target_type="binary" (the default): binary outcomes only. scikit-learn states
        # "binary-only target" through the classifier tags (``multi_class=False``); its common
        # checks then draw binary ``y`` for us too. Other target types take any numeric y.
        if self.target_type == "binary":
            tags.classifier_tags = ClassifierTags(multi_class=False)
        tags.non_deterministic = self.seed is None and self.mode in ("laplace", "split", "cross")
        return tags

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Output column names: the input names for ``bayes``; ``<name>_n_true``,
        ``<name>_n_false``, ``<name>_log_ratio``, ``<name>_rare`` for ``counts``. For a
        multiclass outcome, feature-major then class: ``<name>_<class>`` for ``bayes`` and
        ``<name>_<class>_n_true`` ... ``<name>_<class>_rare`` for ``counts`` (as scikit-learn's
        ``TargetEncoder`` names its multiclass outputs)."""
        check_is_fitted(self, "codes_")
        names = getattr(self, "feature_names_in_", None)
        if input_features is None:
            inputs = (
                list(names) if names is not None else [f"x{j}" for j in range(self.n_features_in_)]
            )
        else:
            inputs = [str(v) for v in input_features]
            if len(inputs) != self.n_features_in_:
                raise ValueError(
                    f"input_features should have length equal to number of features "
                    f"({self.n_features_in_}), got {len(inputs)}"
                )
            if names is not None and list(names) != inputs:
                raise ValueError("input_features is not equal to feature_names_in_")
        if self.target_type_ == "multiclass":
            inputs = [f"{c}_{k}" for c in inputs for k in self.classes_]
        if self.code == "bayes":
            return np.asarray(inputs, dtype=object)
        return np.asarray([f"{c}_{s}" for c in inputs for s in COUNT_SUFFIXES], dtype=object)

    # ---- parameters ------------------------------------------------------------------------
    def _check_params(self, n_columns: int, target_type: str) -> dict[str, Any]:
        if self.code not in _CODES:
            raise ValueError(f"code must be one of {_CODES}, got {self.code!r}")
        if self.mode not in _MODES:
            raise ValueError(f"mode must be one of {_MODES}, got {self.mode!r}")
        if self.handle_missing not in _MISSING:
            raise ValueError(
                f"handle_missing must be one of {_MISSING}, got {self.handle_missing!r}"
            )
        smoothing = as_positive(self.smoothing, "smoothing")
        if not SMOOTHING_RANGE[0] <= smoothing <= SMOOTHING_RANGE[1]:
            raise ValueError(
                f"smoothing must lie in [{SMOOTHING_RANGE[0]:g}, {SMOOTHING_RANGE[1]:g}] (a "
                "smaller pseudo-count underflows against the class prevalence and gives NaN or "
                f"infinite codes, a larger one makes every code 0), got {smoothing!r}"
            )
        p: dict[str, Any] = {
            "smoothing": smoothing,
            "rare_count": as_positive(self.rare_count, "rare_count"),
            "significance": None,
            "noise_scale": None,
            "bounds": None,
        }
        if self.target_bounds is not None:
            if target_type != "continuous":
                raise ValueError(
                    "target_bounds applies to a continuous outcome only (target_type="
                    f"'continuous'); this fit's target type is {target_type!r}"
                )
            p["bounds"] = check_target_bounds(self.target_bounds)
        if target_type == "continuous":
            if self.code != "bayes":
                raise ValueError(
                    f"code={self.code!r} needs a binary or multiclass outcome; a continuous "
                    "outcome is coded by its level means (code='bayes')"
                )
            if self.significance is not None:
                raise ValueError(
                    "significance (a binomial test of each level's outcome mix) applies to "
                    "binary and multiclass outcomes only, not to a continuous one"
                )
            if self.mode == "laplace" and p["bounds"] is None:
                raise ValueError(
                    "mode='laplace' with a continuous outcome needs target_bounds=(lo, hi): "
                    "public bounds on the outcome, fixed without looking at the data (the "
                    "outcome is clipped to them, and the noise on each level's sum is "
                    "calibrated to hi - lo; bounds read from the data are never used)"
                )
        if self.significance is not None:
            sig = as_probability(self.significance, "significance")
            if sig == 0.0:
                raise ValueError("significance must lie in (0, 1] (or be None: no pruning)")
            p["significance"] = sig
        if self.seed is not None:
            if isinstance(self.seed, (bool, np.bool_)) or not isinstance(
                self.seed, numbers.Integral
            ):
                raise TypeError(f"seed must be None or an int, got {type(self.seed).__name__}")
            if not 0 <= int(self.seed) < 2**64:
                raise ValueError(f"seed must lie in [0, 2**64), got {self.seed}")
        if self.mode == "laplace":
            if (self.noise_scale is None) == (self.epsilon is None):
                raise ValueError(
                    "mode='laplace' needs exactly one of noise_scale (the scale of the noise on "
                    "each count) and epsilon (the total budget; noise_scale = n_columns / "
                    "epsilon)"
                )
            # a continuous outcome releases two vectors per column (counts and sums), each at
            # 1 / noise_scale: noise_scale = 2 n_columns / epsilon
            per_column = 2 if target_type == "continuous" else 1
            if self.noise_scale is not None:
                scale = as_positive(self.noise_scale, "noise_scale")
            else:
                scale = per_column * n_columns / as_positive(self.epsilon, "epsilon")
            if scale > 2.0**40:
                raise ValueError(f"noise scale {scale:g} is too large (at most 2**40)")
            p["noise_scale"] = scale
            if target_type == "continuous" and p["bounds"] is not None:
                size = None  # the number of released sums: public with declared levels only
                if not isinstance(self.categories, str):
                    with contextlib.suppress(TypeError):
                        size = sum(len(c) + 1 for c in self.categories)
                _check_sum_noise(p["bounds"], scale, n_columns, size)
        elif self.noise_scale is not None or self.epsilon is not None:
            raise ValueError(
                f"noise_scale and epsilon apply to mode='laplace' only (mode={self.mode!r})"
            )
        if self.mode == "split":
            frac = as_probability(self.split_fraction, "split_fraction")
            if not 0.0 < frac < 1.0:
                raise ValueError(f"split_fraction must lie in (0, 1), got {frac}")
        if self.mode == "cross":
            cv = self.cv
            if isinstance(cv, numbers.Integral) and not isinstance(cv, (bool, np.bool_)):
                if cv < 2:
                    raise ValueError(f"cv must be >= 2 folds, got {cv}")
            elif isinstance(cv, str) or not hasattr(cv, "split"):
                raise TypeError(
                    f"cv must be an int or a splitter with a split method, got {type(cv).__name__}"
                )
        return p

    # ---- the per-slot code ------------------------------------------------------------------
    def _code(
        self, stats: np.ndarray, totals: np.ndarray, p: dict[str, Any]
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Codes (shape ``stats.shape[:-1] + (width,)``) and p-values from per-slot statistics
        (the rows of ``counts_``, last axis) and the coding rows' totals (broadcast)."""
        kind = self.target_type_
        if kind == "binary":
            return self._binary_code(
                stats[..., 0], stats[..., 1], totals[..., 0], totals[..., 1], p
            )
        if kind == "continuous":
            code = mean_code(
                stats[..., 0],
                stats[..., 1],
                totals[..., 0],
                totals[..., 1],
                p["smoothing"],
                p["bounds"],
            )
            return code[..., None], None
        # multiclass: one-vs-rest, class k against the other classes
        n_level = stats.sum(axis=-1)
        n_all = totals.sum(axis=-1)
        codes, pvals = [], []
        for k in range(stats.shape[-1]):
            nt, tt = stats[..., k], totals[..., k]
            code, pv = self._binary_code(nt, n_level - nt, tt, n_all - tt, p)
            codes.append(code)
            pvals.append(pv)
        pv_all = None if pvals[0] is None else np.stack(pvals, axis=-1)
        return np.concatenate(codes, axis=-1), pv_all

    def _binary_code(
        self, nt: np.ndarray, nf: np.ndarray, tt: Any, tf: Any, p: dict[str, Any]
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Codes (shape ``nt.shape + (width,)``) and p-values for broadcastable counts."""
        pvals = None
        if p["significance"] is not None:
            pvals = level_pvalues(nt, nf, tt, tf)
            keep = pvals <= p["significance"]
            nt = np.where(keep, nt, 0.0)
            nf = np.where(keep, nf, 0.0)
        if self.code == "bayes":
            return bayes_code(nt, nf, tt, tf, p["smoothing"])[..., None], pvals
        return count_code(nt, nf, p["smoothing"], p["rare_count"]), pvals

    # ---- fitting ----------------------------------------------------------------------------
    def _prepare(self, X: Any, y: Any, reset: bool) -> tuple[list[np.ndarray], Any, int]:
        if sparse.issparse(X):
            raise TypeError(
                "ImpactEncoder does not accept sparse input: pass a dense array or a DataFrame "
                "of categorical columns"
            )
        check_2d(X)
        validate_data(self, X, skip_check_array=True, reset=reset)
        columns, n_rows = as_columns(X)
        if not reset:
            return columns, None, n_rows
        declared = declared_classes(self.classes, classification=False)
        kind = resolve_target_type(self.target_type, y, n_rows, declared)
        self.target_type_ = kind
        if kind == "binary":
            self.classes_, target = as_binary_target(y, n_rows, declared)
        elif kind == "multiclass":
            self.classes_, target = as_multiclass_target(y, n_rows, declared)
        else:
            self.classes_ = None
            # without public bounds nothing clips y: its magnitude must leave the sums finite
            limit = TARGET_LIMIT if self.target_bounds is None else None
            target = as_continuous_target(y, n_rows, limit)
        return columns, target, n_rows

    def _contributions(self, target: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        """Each row's contribution to its level's statistics (the columns of ``counts_``):
        ``[y, 1 - y]`` (binary), the one-hot class (multiclass), ``[1, clip(y)]``
        (continuous)."""
        kind = self.target_type_
        n_rows = target.shape[0]
        if kind == "binary":
            yf = target.astype(np.float64)
            return np.stack([yf, 1.0 - yf], axis=1)
        if kind == "multiclass":
            out = np.zeros((n_rows, len(self.classes_)), dtype=np.float64)
            out[np.arange(n_rows), target] = 1.0
            return out
        y = target if p["bounds"] is None else np.clip(target, *p["bounds"])
        return np.stack([np.ones(n_rows), y], axis=1)

    def _names(self) -> list[str]:
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            return [repr(str(v)) for v in names]
        return [str(j) for j in range(self.n_features_in_)]

    def _fit_levels(self, columns: list[np.ndarray]) -> list[np.ndarray]:
        names = self._names()
        if isinstance(self.categories, str):
            if self.categories != "auto":
                raise ValueError(
                    f"categories must be 'auto' or a list of arrays, got {self.categories!r}"
                )
            return [fit_levels(c, n, self.handle_missing) for c, n in zip(columns, names)]
        cats = list(self.categories)
        if len(cats) != len(columns):
            raise ValueError(f"categories has {len(cats)} entries but X has {len(columns)} columns")
        levels = []
        for c, n, given in zip(columns, names, cats):
            given_arr = np.asarray(given, dtype=object if _is_text(given) else None)
            lv = fit_levels(given_arr, n, "level")
            seen = fit_levels(c, n, self.handle_missing)
            unknown = missing_levels(seen, lv)
            if len(unknown):
                raise ValueError(  # the levels seen only in the data are private: not quoted
                    f"column {n} has a level that is not in the given categories (add every "
                    "possible level to categories=, or use categories='auto')"
                )
            levels.append(lv)
        return levels

    def _indices(self, columns: list[np.ndarray]) -> list[np.ndarray]:
        return [
            level_indices(c, lv, n, self.handle_missing)
            for c, lv, n in zip(columns, self.categories_, self._names())
        ]

    def _fit(self, X: Any, y: Any, groups: Any) -> tuple[list[np.ndarray], np.ndarray, dict]:
        columns, target, n_rows = self._prepare(X, y, reset=True)
        p = self._check_params(len(columns), self.target_type_)
        groups = _as_groups(groups, n_rows)
        if isinstance(self.categories, str) and self.categories == "auto":
            pairs = [
                factorize_column(c, n, self.handle_missing) for c, n in zip(columns, self._names())
            ]
            self.categories_ = [lv for lv, _ in pairs]
            idx = [i for _, i in pairs]
        else:
            self.categories_ = self._fit_levels(columns)
            idx = self._indices(columns)
        levels_public = not isinstance(self.categories, str)
        self._check_read_levels(p, levels_public)
        self._charge(p, len(columns))  # before any count
        contrib = self._contributions(target, p)

        rows = np.ones(n_rows, dtype=bool)
        if self.mode == "split":
            rows = self._split_rows(n_rows, target, groups)
            self.model_mask_ = ~rows
        elif hasattr(self, "model_mask_"):
            # every row may train the downstream model: nothing per row is kept (a mask of
            # length n would release the private size of a laplace fit)
            del self.model_mask_

        bound = self._sum_bound(p)
        if self.mode == "laplace" and self.target_type_ == "continuous":
            lo, hi = p["bounds"]
            centred = contrib.copy()  # [1, clip(y) - midpoint]: what the noise covers
            centred[:, 1] -= (lo + hi) / 2.0
            stats = [
                level_stats(i, centred, len(lv) + 2, bound) for i, lv in zip(idx, self.categories_)
            ]
        elif self.mode == "laplace":
            stats = [level_stats(i, contrib, len(lv) + 2) for i, lv in zip(idx, self.categories_)]
        else:
            stats = [
                level_stats(i[rows], contrib[rows], len(lv) + 2, bound)
                for i, lv in zip(idx, self.categories_)
            ]
        self._release(stats, p, levels_public)
        return idx, target, {"p": p, "groups": groups, "contrib": contrib}

    def _check_read_levels(self, p: dict[str, Any], levels_public: bool) -> None:
        """With level lists read from the data, refuse before anything is charged a noise
        scale the snapping mechanism cannot carry on this many level sums (with declared
        levels :meth:`_check_params` did it). The number of levels read is not covered by
        the guarantee (the fit warns so), so refusing on it discloses nothing the statement
        protects; the message quotes public inputs only."""
        if (
            self.mode == "laplace"
            and self.target_type_ == "continuous"
            and p["bounds"] is not None
            and not levels_public
        ):
            size = sum(len(lv) + 1 for lv in self.categories_)
            try:
                _check_sum_noise(p["bounds"], p["noise_scale"], len(self.categories_), size)
            except ValueError:  # its message would quote the number of levels read
                raise ValueError(
                    f"noise scale {p['noise_scale']:g} is too large for the snapping mechanism "
                    "on this many level sums (its floating-point term would dominate): raise "
                    "epsilon or lower noise_scale, or declare the levels with categories= "
                    "(nothing was charged)"
                ) from None

    def _charge(self, p: dict[str, Any], n_columns: int) -> None:
        """Charge the ledger (Laplace mode) before any count is computed."""
        if self.mode == "laplace" and self.ledger is not None:
            per_column = 2 if self.target_type_ == "continuous" else 1
            spend(
                self.ledger,
                per_column * n_columns / p["noise_scale"],
                0.0,
                "ImpactEncoder.fit",
                "add_remove",  # the relation of its statement (encoding/_privacy.py)
            )

    def _sum_bound(self, p: dict[str, Any]) -> float | None:
        """Bound on the absolute value of a continuous outcome's contributions (clipped, or
        clipped and centred in the Laplace mode); ``None`` when the outcome is not bounded (or
        not continuous). With a bound, the level sums are exact fixed-point sums
        (:func:`fixed_point_parts`), independent of the order of the rows."""
        if self.target_type_ != "continuous" or p["bounds"] is None:
            return None
        lo, hi = p["bounds"]
        return max(abs(lo), abs(hi), hi - lo)

    def _release(self, stats: list[np.ndarray], p: dict[str, Any], levels_public: bool) -> None:
        """From the exact per-slot statistics of the coding rows (``[n, centred sum]`` for a
        continuous outcome in the Laplace mode), the released ``counts_`` (noisy in the Laplace
        mode), ``codes_``, ``pvalues_`` and ``privacy_``. Shared by the single-machine and the
        Dask fits (:mod:`privlearn.distributed.encoding`), which differ only in how ``stats``
        is computed."""
        n_columns = len(stats)
        n_classes = None if self.classes_ is None else len(self.classes_)
        if self.mode == "laplace" and self.target_type_ == "continuous":
            lo, hi = p["bounds"]
            counts, sums = self._add_noise_continuous(stats, p["noise_scale"], (lo, hi))
            self.privacy_: ImpactPrivacy = continuous_laplace_privacy(
                p["noise_scale"], sums.noise_scale, sums.epsilon, n_columns, levels_public,
                (lo, hi),
            )  # fmt: skip
        elif self.mode == "laplace":
            counts = self._add_noise(stats, p["noise_scale"])
            self.privacy_ = laplace_privacy(
                p["noise_scale"], n_columns, levels_public, self.target_type_, n_classes or 2
            )
        else:
            counts = stats
            self.privacy_ = no_privacy(
                n_columns, levels_public, self.target_type_, n_classes, p["bounds"]
            )
        labels = self._labels()
        self.privacy_ = dataclasses.replace(self.privacy_, labels=labels)
        if self.mode == "laplace":
            warn_labels_read("ImpactEncoder.fit", labels, stacklevel=5)
        if self.mode == "laplace" and not levels_public:
            warnings.warn(
                "ImpactEncoder(mode='laplace') read the set of levels from the training "
                "data: the noisy counts are epsilon-DP, but which levels occur is not "
                "protected; pass categories= (public level lists) to cover it",
                PrivacyLeakWarning,
                stacklevel=4,
            )
        self.counts_ = counts
        self.codes_, self.pvalues_ = [], []
        for c in counts:
            table, pv = self._code(c, c.sum(axis=0), p)
            self.codes_.append(table)
            self.pvalues_.append(pv)
        if p["significance"] is None:
            self.pvalues_ = None

    def _labels(self) -> LabelSet:
        """How the label set and the target type of this fit entered it (declared public, or
        read from ``y``)."""
        classes = None if self.classes_ is None else tuple(self.classes_.tolist())
        return LabelSet(
            classes,
            self.classes is not None,
            self.target_type_,
            self.target_type != "auto" or self.classes is not None,
        )

    def _split_rows(self, n_rows: int, y01: np.ndarray, groups: np.ndarray | None) -> np.ndarray:
        frac = float(self.split_fraction)
        seed = _sub_seed(self.seed, "split")
        coding = np.zeros(n_rows, dtype=bool)
        if groups is not None:
            rs = None if seed is None else seed % 2**32
            splitter = GroupShuffleSplit(n_splits=1, test_size=frac, random_state=rs)
            _, test = next(splitter.split(np.zeros(n_rows), y01, groups))
            coding[test] = True
        else:
            m = min(max(int(round(frac * n_rows)), 1), n_rows - 1) if n_rows > 1 else 1
            order = np.random.default_rng(seed).permutation(n_rows)
            coding[order[:m]] = True
        return coding

    def _add_noise(self, counts: list[np.ndarray], scale: float) -> list[np.ndarray]:
        from privlearn.mechanisms import discrete_laplace

        # Noise on every level's counts and on the missing-value slot (the public domain of
        # each column); the last slot (unseen levels) is a constant 0 and is not released.
        flat = np.concatenate([c[:-1].ravel() for c in counts]).astype(np.int64)
        noisy = discrete_laplace(flat, Fraction(scale), seed=_sub_seed(self.seed, "laplace"))
        noisy = np.maximum(np.asarray(noisy, dtype=np.float64), 0.0)  # post-processing
        out, start = [], 0
        for c in counts:
            size = c[:-1].size
            new = np.zeros_like(c)
            new[:-1] = noisy[start : start + size].reshape(c[:-1].shape)
            out.append(new)
            start += size
        return out

    def _add_noise_continuous(
        self, stats: list[np.ndarray], scale: float, bounds: tuple[float, float]
    ) -> tuple[list[np.ndarray], Any]:
        """Noisy ``[n, sum]`` per slot from exact ``[n, centred sum]`` (continuous outcome).

        Released, for every column's levels and missing-value slot: the row count with
        discrete Laplace noise of scale ``scale`` (L1 sensitivity 1 per column), and the sum of
        ``clip(y) - c`` (``c`` the midpoint of the bounds; L1 sensitivity ``(hi - lo) / 2`` per
        column) by the snapping mechanism at ``n_columns / scale`` for all columns together.
        The stored sum ``noisy centred sum + c * max(noisy count, 0)`` is post-processing.
        """
        from privlearn.mechanisms import discrete_laplace, laplace, snapping_parameters

        lo, hi = bounds
        centre, half = (lo + hi) / 2.0, (hi - lo) / 2.0
        n_cols = len(stats)
        flat_n = np.concatenate([c[:-1, 0] for c in stats]).astype(np.int64)
        flat_s = np.concatenate([c[:-1, 1] for c in stats])
        noisy_n = discrete_laplace(flat_n, Fraction(scale), seed=_sub_seed(self.seed, "laplace"))
        noisy_n = np.maximum(np.asarray(noisy_n, dtype=np.float64), 0.0)  # post-processing
        sens, eps = n_cols * half, n_cols / scale
        try:
            params = snapping_parameters(sens, eps, None, size=flat_s.size)
        except ValueError:  # its message would quote the number of levels read from the data
            raise ValueError(
                f"noise scale {scale:g} is too large for the snapping mechanism on this many "
                "level sums (its floating-point term would dominate): raise epsilon or lower "
                "noise_scale, or declare the levels with categories= (then checked before "
                "anything is charged)"
            ) from None
        noisy_s = np.asarray(
            laplace(flat_s, sens, eps, seed=_sub_seed(self.seed, "laplace-sums")),
            dtype=np.float64,
        ).reshape(-1)
        out, start = [], 0
        for c in stats:
            size = c.shape[0] - 1
            new = np.zeros_like(c)
            new[:-1, 0] = noisy_n[start : start + size]
            new[:-1, 1] = noisy_s[start : start + size] + centre * new[:-1, 0]
            out.append(new)
            start += size
        return out, params

    def fit(self, X: Any, y: Any = None, groups: Any = None) -> ImpactEncoder:
        """Learn the code tables that :meth:`transform` applies.

        Parameters
        ----------
        X : array_like or DataFrame of shape (n_samples, n_features)
            Categorical columns (strings, ints, floats or objects; NaN as per
            ``handle_missing``).
        y : array_like of shape (n_samples,)
            The outcome, per ``target_type``: binary (any two values; the larger is "true"),
            class labels (multiclass) or numbers (continuous).
        groups : array_like of shape (n_samples,), optional
            Group labels for the split mode (whole groups go to the coding part).

        Returns
        -------
        self

        Notes
        -----
        ``X`` may be a ``dask.dataframe.DataFrame`` (with ``y`` a dask Series or array
        partitioned like ``X``): the per-level statistics are then reduced on the workers and
        the noise is added once on the driver, with a result equal to the single-machine fit
        bit for bit (see :func:`privlearn.distributed.encoding.fit_dask`; the driver is trusted
        and sees the noiseless per-partition counts).
        """
        with _unchanged_on_failure(self):
            dist = backend_for(X, y, groups)
            if dist is not None:  # e.g. a dask DataFrame: its back-end (privlearn.backends)
                dist.impact_fit(self, X, y, groups)
                return self
            self._fit(X, y, groups)
        return self

    def fit_transform(self, X: Any, y: Any = None, groups: Any = None) -> np.ndarray:
        """Fit, and code the training rows the way ``mode`` prescribes.

        ``"naive"``, ``"laplace"`` and ``"split"``: the same as ``fit(X, y).transform(X)``
        (in the split mode, train the downstream model on ``model_mask_`` rows only).
        ``"cross"``: every row is coded by codes fitted without its fold. ``"jackknife"``:
        every row by codes fitted without it (without its group when ``groups`` is given).

        Parameters
        ----------
        X, y : see :meth:`fit`
        groups : array_like of shape (n_samples,), optional
            Cross mode: group-aware folds (no group is split across folds); jackknife mode:
            leave-one-group-out; split mode: group-aware split.

        Returns
        -------
        ndarray of shape (n_samples, n_features_out)
            (a dask DataFrame with ``get_feature_names_out()`` columns for dask input: see
            :func:`privlearn.distributed.encoding.fit_transform_dask`)
        """
        with _unchanged_on_failure(self):
            dist = backend_for(X, y, groups)
            if dist is not None:
                return dist.impact_fit_transform(self, X, y, groups)
            idx, target, info = self._fit(X, y, groups)
            if self.mode in ("naive", "laplace", "split"):
                return self._apply(idx)
            if self.mode == "cross":
                return self._cross(idx, target, info["contrib"], info["groups"], info["p"])
            return self._jackknife(idx, info["contrib"], info["groups"], info["p"])

    def transform(self, X: Any) -> np.ndarray:
        """Code ``X`` with the tables learned by :meth:`fit` (unseen levels: zero counts).

        Returns
        -------
        ndarray of shape (n_samples, n_features_out), float64
            (a dask DataFrame, coded partition by partition, for a dask DataFrame ``X``)
        """
        check_is_fitted(self, "codes_")
        dist = backend_for(X)
        if dist is not None:
            return dist.impact_transform(self, X)
        columns, _, _ = self._prepare(X, None, reset=False)
        return self._apply(self._indices(columns))

    # ---- coding -----------------------------------------------------------------------------
    def _width(self) -> int:
        per_class = CODE_WIDTH[self.code]
        return per_class * len(self.classes_) if self.target_type_ == "multiclass" else per_class

    def _apply(self, idx: list[np.ndarray]) -> np.ndarray:
        w = self._width()
        out = np.empty((idx[0].shape[0], w * len(idx)), dtype=np.float64)
        for j, (i, table) in enumerate(zip(idx, self.codes_)):
            out[:, j * w : (j + 1) * w] = table[i]
        return out

    def _folds(self, n_rows: int, y01: np.ndarray, groups: np.ndarray | None) -> np.ndarray:
        cv = self.cv
        if isinstance(cv, numbers.Integral):
            if groups is not None:
                splitter: Any = GroupKFold(n_splits=int(cv))
            else:
                seed = _sub_seed(self.seed, "folds")
                rs = None if seed is None else seed % 2**32
                splitter = KFold(n_splits=int(cv), shuffle=True, random_state=rs)
        else:
            splitter = cv
        fold = np.full(n_rows, -1, dtype=np.int64)
        dummy = np.zeros((n_rows, 1))
        try:
            splits = list(splitter.split(dummy, y01, groups))
        except ValueError:
            if not isinstance(cv, numbers.Integral):
                raise
            raise ValueError(  # scikit-learn's message quotes the number of rows (private)
                f"cv={int(cv)} folds: the training rows (or groups) are fewer than the folds; "
                "use fewer folds"
            ) from None
        for f, (_, test) in enumerate(splits):
            if (fold[test] >= 0).any():
                raise ValueError("the cv splitter's test folds overlap: they must partition X")
            fold[test] = f
        if (fold < 0).any():
            raise ValueError("the cv splitter's test folds do not cover every row")
        return fold

    def _cross(
        self,
        idx: list[np.ndarray],
        target: np.ndarray,
        contrib: np.ndarray,
        groups: np.ndarray | None,
        p: dict,
    ) -> np.ndarray:
        n_rows = target.shape[0]
        fold = self._folds(n_rows, target, groups)
        self.folds_ = fold
        k = int(fold.max()) + 1
        w = self._width()
        out = np.empty((n_rows, w * len(idx)), dtype=np.float64)
        bound = self._sum_bound(p)
        fold_tot = level_stats(fold, contrib, k, bound)  # (k, m): each fold's totals
        for j, (i, c) in enumerate(zip(idx, self.counts_)):
            s = c.shape[0]
            in_fold = level_stats(fold * s + i, contrib, k * s, bound).reshape(k, s, -1)
            stats = c[None, :, :] - in_fold
            totals = (c.sum(axis=0)[None, :] - fold_tot)[:, None, :]
            table, _ = self._code(stats, totals, p)
            out[:, j * w : (j + 1) * w] = table[fold, i]
        return out

    def _jackknife(
        self, idx: list[np.ndarray], contrib: np.ndarray, groups: np.ndarray | None, p: dict
    ) -> np.ndarray:
        n_rows = contrib.shape[0]
        w = self._width()
        out = np.empty((n_rows, w * len(idx)), dtype=np.float64)
        if groups is None:
            own_total = contrib
        else:
            g = np.unique(groups, return_inverse=True)[1].ravel()
            own_total = level_stats(g, contrib, int(g.max()) + 1, self._sum_bound(p))[g]
        for j, (i, c) in enumerate(zip(idx, self.counts_)):
            if groups is None:
                own = contrib
            else:
                pair = np.unique(g * c.shape[0] + i, return_inverse=True)[1].ravel()
                own = level_stats(pair, contrib, int(pair.max()) + 1, self._sum_bound(p))[pair]
            table, _ = self._code(c[i] - own, c.sum(axis=0)[None, :] - own_total, p)
            out[:, j * w : (j + 1) * w] = table
        return out


@contextlib.contextmanager
def _unchanged_on_failure(est: Any) -> Iterator[None]:
    """Run a fit so that, if it raises (bad input, a refused budget, an interrupt), ``est`` is
    left exactly as it was: every attribute the fit set or replaced is put back (a failed
    refit must not leave ``classes_`` of the new data next to the codes of the old)."""
    saved = dict(est.__dict__)
    try:
        yield
    except BaseException:
        est.__dict__.clear()
        est.__dict__.update(saved)
        raise


#: Range of the snapping mechanism's noise scale and clamp bound on the level sums of a
#: continuous outcome that the codes' arithmetic carries (normal doubles, with room for the
#: totals over the levels and the counts times the bounds' midpoint).
_SUM_NOISE_RANGE = (2.0**-900, 2.0**900)


def _check_sum_noise(
    bounds: tuple[float, float], scale: float, n_columns: int, size: int | None = None
) -> None:
    """Refuse, before anything is charged or counted, bounds whose Laplace mode the arithmetic
    cannot carry: the snapping mechanism on the level sums (sensitivity ``n_columns (hi - lo)
    / 2`` at epsilon ``n_columns / scale``) must have a noise scale and a clamp bound within
    :data:`_SUM_NOISE_RANGE`. The message gives the widths ``hi - lo`` that work at this
    noise scale (public inputs only). ``size``: the number of released sums when the level
    lists are declared (the mechanism's floating-point term grows with it)."""
    from privlearn.mechanisms import snapping_parameters

    lo, hi = bounds
    low, high = _SUM_NOISE_RANGE
    # lambda is about scale (hi - lo) / 2 and the clamp bound at most 2**44 lambda (size 1
    # gives the widest bound of any number of levels); a factor 4 of margin for the roundings
    widest = min(high / (2.0**44 * scale) * 0.5, 2.0 * TARGET_LIMIT)
    narrowest = 4.0 * low / scale
    # the snapping mechanism's default clamp bound needs epsilon * 2**39 >= 2 (one number)
    # (and, with declared levels, for each of the ``size`` released sums)
    most = n_columns * 2.0**38 / max(1, size or 1)
    if scale > most:
        what = "" if size is None else f" and {size} level sums (declared levels)"
        raise ValueError(
            f"noise scale {scale:g} is too large for a continuous outcome with {n_columns} "
            f"column(s){what}: the snapping mechanism on the level sums needs noise_scale <= "
            f"{most:.6g}; raise epsilon or lower noise_scale"
        )
    try:
        params = snapping_parameters(n_columns * (hi - lo) / 2.0, n_columns / scale, None, size=1)
        ok = low <= params.noise_scale and params.bound <= high
    except (ValueError, OverflowError, ZeroDivisionError):
        ok = False
    if not ok:
        head = (
            f"target_bounds=({lo:g}, {hi:g}) cannot be carried by the Laplace mode's noise at "
            f"noise scale {scale:g} (the noise on the level sums would leave the range of "
            "normal doubles): "
        )
        if narrowest > widest:
            raise ValueError(
                head + "no bounds work at this noise scale; change epsilon or noise_scale"
            )
        raise ValueError(
            head + f"at this noise scale hi - lo must lie in [{narrowest:.3g}, {widest:.3g}]; "
            "change the bounds (rescale the outcome) or epsilon / noise_scale"
        )


def _is_text(values: Any) -> bool:
    return any(isinstance(v, (str, bytes)) for v in list(values)[:1])


def _as_groups(groups: Any, n_rows: int) -> np.ndarray | None:
    if groups is None:
        return None
    g = np.asarray(groups)
    if g.ndim != 1 or g.shape[0] != n_rows:
        raise ValueError(
            f"groups must be 1-D with one label per row of X, got {g.ndim} dimension(s) or "
            "another length"
        )
    return g
