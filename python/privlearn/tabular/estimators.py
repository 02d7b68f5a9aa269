"""scikit-learn estimators from a raw table and a public :class:`Schema` to a defended model:
:class:`PrivateTabularClassifier` and :class:`PrivateTabularRegressor`.

One fit composes three private releases under ONE budget, charged to one internal
:class:`~privlearn.accounting.PrivacyLedger` (and, as one planned total, to the caller's
``ledger=``) before any row is read:

1. **bounds** -- :class:`~privlearn.preprocessing.DPFeatureScaler`: two exponential-mechanism
   quantiles (Smith 2011) of every numeric column whose schema says ``bounds="private"``,
   inside its public range (after the public log map where asked);
2. **codes** -- :class:`~privlearn.encoding.ImpactEncoder` in its Laplace mode: noisy
   per-level counts of the categorical columns with many levels (impact coding, Win-Vector);
3. **model** -- :class:`~privlearn.linear.DPSGDClassifier` / ``DPSGDRegressor`` (default;
   Abadi et al. 2016, Algorithm 1) or ``DPSCDClassifier`` / ``DPSCDRegressor`` (Damaskinos
   et al. 2021), on rows built by public per-row maps that put every row in the unit ball by
   construction (:mod:`privlearn.tabular._columns`), so training and prediction see the same
   map. The model's own noisy row count plans its schedule unless ``n_samples`` is declared.

There is no mechanism of its own here: every noise draw is one of those three estimators'.

A Dask DataFrame fits through the same call and equals the in-memory fit bit for bit: one pass
over the partitions checks the input and sums, per private-bound column, the exact counts of
the values that snap to each point of the quantiles' public lattice (``_columns.snap_counts``;
the exponential mechanism reads the data only through these snaps, so the column rebuilt from
them gives the same release); the codes and the model run through the Dask back-end of
:mod:`privlearn.backends` on rows mapped partition by partition.

**The budget rule** (:func:`budget_split`) is a function of public quantities only -- the
schema (``F`` numeric columns with private bounds, ``J`` impact-coded columns) and the
declared ``n_samples`` when given -- never of the private size::

    bounds share = min(0.2, 0.02 F)          codes share = min(0.2, 0.05 J)
    model share  = 1 - bounds - codes        (at least 0.6)

With a declared public size ``n`` the bounds and codes shares are multiplied by
``min(1, sqrt(10_000 / n))`` (a large table needs less budget for a quantile or a count to be
accurate relative to its size). The quantiles are the 2% and 98% ones on a public lattice of
``2**10`` cells per range. The constants were chosen by ``bench/python/bench_tabular.py
--study`` (``bench/results/tabular_study.json``; mean test AUC over 3 seeds on Adult, 32,561
rows, codes share 5%): with F = 2 the AUC is flat for bounds shares 0.03-0.12 (0.8940-0.8942 at
epsilon 0.5, 0.8973-0.8980 at 1) and falls above (0.24: 0.8928; 0.40: 0.8902 at 0.5); with all
six numeric columns given private bounds (F = 6, 12 quantiles) the best shares are 0.03-0.06
(0.8957-0.8962 at 0.5), 0.12-0.24 lose 0.002 and 0.40 loses 0.007. ``0.02 F`` sits in the flat
part of both; it grows with the number of quantiles it pays for, so a six-column table does
not give each quantile a third of what a two-column one gives (the issue's fixed 10% to
12 quantiles put age's bounds at [5.5, 95.4]). The codes share was flat from 0.02 to 0.2
(0.8941-0.8947 at 0.5, 0.8978-0.8982 at 1). The size adjustment was not measured (no public
table here declares a size).

For regression the target is centred and scaled with its public range, ``y' = (clip(y, lo,
hi) - c) / s`` in ``[-1, 1]``, and predictions are mapped back; at ``epsilon = inf`` no
bound is estimated (the public ranges are used), the gradient is not clipped, the ridge term
is ``1e-12`` and the SGD model runs 50x its epochs with steps ``1 / sqrt(t)``, so the fit
reaches the least-squares solution on bounded data (``tests/test_tabular.py``).
"""

from __future__ import annotations

import hashlib
import math
import numbers
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from privlearn.accounting import PrivacyLedger
from privlearn.accounting.size import DEFAULT_DELTA
from privlearn.encoding import ImpactEncoder
from privlearn.linear import DPSCDClassifier, DPSCDRegressor, DPSGDClassifier, DPSGDRegressor
from privlearn.mechanisms._bits import spend
from privlearn.preprocessing import DPFeatureScaler
from privlearn.tabular._columns import (
    CODE_CLIP_LOGODDS,
    assemble,
    check_frame,
    column_from_counts,
    column_values,
    is_dask_frame,
    log_map,
    numeric_block,
    onehot_block,
    snap_counts,
)
from privlearn.tabular._statement import Release, TabularPrivacy
from privlearn.tabular.schema import Schema, level_key

__all__ = [
    "BOUNDS_LATTICE_BITS",
    "BOUNDS_QUANTILES",
    "PrivateTabularClassifier",
    "PrivateTabularRegressor",
    "budget_split",
]

#: Share of epsilon per numeric column with private bounds, and its cap.
BOUNDS_PER_COLUMN, BOUNDS_CAP = 0.02, 0.2
#: Share of epsilon per impact-coded column, and its cap.
CODES_PER_COLUMN, CODES_CAP = 0.05, 0.2
#: Reference size of the declared-size adjustment.
REFERENCE_SIZE = 10_000
#: Quantile levels of the private clipping bounds.
BOUNDS_QUANTILES = (0.02, 0.98)
#: Public resolution of the released bounds: 2**10 cells per public range.
BOUNDS_LATTICE_BITS = 10
#: SGD epochs multiplier of the non-private (epsilon = inf) regression fit.
INF_EPOCHS_FACTOR = 50

_MODELS = ("sgd", "scd")


def budget_split(
    schema: Schema, epsilon: float = 1.0, n_samples: int | None = None
) -> dict[str, float]:
    """The shares of the total epsilon: ``{"bounds": ..., "codes": ..., "model": ...}``.

    A function of public quantities only (the schema, a DECLARED ``n_samples``); see the
    module docstring for the rule and where its constants come from. Parts that release
    nothing (no private-bound column, no impact-coded column) get 0. ``epsilon`` is accepted
    for the record: the shares do not depend on it.
    """
    schema = Schema.from_dict(schema)
    n_bounds = sum(c.private_bounds for c in schema.columns)
    n_codes = sum(c.impact for c in schema.columns)
    scale = 1.0
    if n_samples is not None:
        scale = min(1.0, math.sqrt(REFERENCE_SIZE / float(n_samples)))
    bounds = min(BOUNDS_CAP, BOUNDS_PER_COLUMN * n_bounds) * scale
    codes = min(CODES_CAP, CODES_PER_COLUMN * n_codes) * scale
    return {"bounds": bounds, "codes": codes, "model": 1.0 - bounds - codes}


def _sub_seed(seed: int | None, purpose: str) -> int | None:
    """A 64-bit seed for one part, derived from the user's seed (None stays None)."""
    if seed is None:
        return None
    digest = hashlib.sha256(f"privlearn.tabular/{seed}/{purpose}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def _as_schema(value: Any) -> Schema:
    if isinstance(value, Schema):
        return value
    if isinstance(value, (str, Path)):
        return Schema.load(value)
    if isinstance(value, dict):
        return Schema.from_dict(value)
    raise TypeError(
        "schema must be a privlearn.tabular.Schema, a dict in the schema format or the path "
        f"of a .json/.toml schema file, got {type(value).__name__}"
    )


def _check_epsilon(value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"epsilon must be a number > 0 (or inf), got {value!r}")
    eps = float(value)
    if math.isnan(eps) or eps <= 0.0:
        raise ValueError(f"epsilon must be > 0 (or inf for no privacy), got {value!r}")
    return eps


def _check_delta(value: Any) -> float:
    if value is None:
        return DEFAULT_DELTA
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"delta must be a number in (0, 1) or None, got {value!r}")
    delta = float(value)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must lie in (0, 1), got {value!r}")
    return delta


def _finish(eps_total: float, parts: dict[str, float]) -> dict[str, float]:
    """Per-part epsilons whose exactly rounded sum never exceeds ``eps_total``."""
    eps = {k: v * eps_total for k, v in parts.items() if k != "model" and v > 0}
    eps["model"] = eps_total - math.fsum(eps.values())
    while math.fsum(eps.values()) > eps_total:
        eps["model"] = math.nextafter(eps["model"], 0.0)
    return eps


class _TabularBase(BaseEstimator):
    _task = ""

    def __init__(
        self,
        schema: Any = None,
        epsilon: float = 1.0,
        delta: float | None = None,
        *,
        n_samples: int | None = None,
        model: str = "sgd",
        split: dict[str, float] | None = None,
        model_params: dict[str, Any] | None = None,
        seed: int | None = None,
        ledger: Any = None,
    ) -> None:
        self.schema = schema
        self.epsilon = epsilon
        self.delta = delta
        self.n_samples = n_samples
        self.model = model
        self.split = split
        self.model_params = model_params
        self.seed = seed
        self.ledger = ledger

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.seed is None
        tags.input_tags.string = True
        tags.input_tags.allow_nan = True
        return tags

    # ---- parameters --------------------------------------------------------------------------
    def _params(self) -> dict[str, Any]:
        schema = _as_schema(self.schema)
        if schema.target.task != self._task:
            other = (
                "PrivateTabularRegressor"
                if self._task == "classification"
                else ("PrivateTabularClassifier")
            )
            raise ValueError(
                f"the schema's target {schema.target.name!r} is a {schema.target.task} target "
                f"('classes' or 'range'); use {other}"
            )
        eps = _check_epsilon(self.epsilon)
        delta = _check_delta(self.delta)
        if self.model not in _MODELS:
            raise ValueError(f"model must be one of {_MODELS}, got {self.model!r}")
        n = self.n_samples
        if n is not None:
            if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral) or n < 1:
                raise ValueError(
                    f"n_samples must be a positive int (a PUBLIC size) or None, got {n!r}"
                )
            n = int(n)
        if self.seed is not None and (
            isinstance(self.seed, (bool, np.bool_))
            or not isinstance(self.seed, numbers.Integral)
            or not 0 <= int(self.seed) < 2**64
        ):
            raise ValueError(f"seed must be None or an int in [0, 2**64), got {self.seed!r}")
        if self.split is None:
            shares = budget_split(schema, eps, n)
            rule = "privlearn.tabular.budget_split (public: the schema" + (
                ", the declared size)" if n is not None else "; the size is not used)"
            )
        else:
            shares = self._given_split(schema)
            rule = "given by the caller (split=)"
        extra = dict(self.model_params or {})
        for key in ("epsilon", "delta", "ledger", "seed", "classes", "target_bounds", "n_samples"):
            if key in extra:
                raise ValueError(f"model_params may not set {key!r}: the pipeline sets it")
        if math.isinf(eps) and self.ledger is not None:
            raise ValueError("epsilon=inf is not private and cannot be charged to a ledger")
        return {
            "schema": schema,
            "epsilon": eps,
            "delta": delta,
            "n": n,
            "shares": shares,
            "rule": rule,
            "model_params": extra,
        }

    def _given_split(self, schema: Schema) -> dict[str, float]:
        split = self.split
        if not isinstance(split, dict) or set(split) - {"bounds", "codes", "model"}:
            raise ValueError("split must be a dict with keys among 'bounds', 'codes', 'model'")
        out = {k: float(split.get(k, 0.0)) for k in ("bounds", "codes", "model")}
        if any(not (0.0 <= v <= 1.0) for v in out.values()) or out["model"] <= 0:
            raise ValueError("split shares must lie in [0, 1], the model's > 0")
        if math.fsum(out.values()) > 1.0 + 1e-12:
            raise ValueError("split shares must add up to at most 1")
        if any(c.private_bounds for c in schema.columns) and out["bounds"] <= 0:
            raise ValueError("split gives no budget to the private bounds the schema asks for")
        if any(c.impact for c in schema.columns) and out["codes"] <= 0:
            raise ValueError("split gives no budget to the impact codes the schema asks for")
        return out

    # ---- the data ----------------------------------------------------------------------------
    def _split_xy(self, X: Any, y: Any, schema: Schema) -> tuple[Any, np.ndarray]:
        frame = check_frame(X, schema, target_ok=True)
        name = schema.target.name
        if y is None:
            if name not in frame.columns:
                raise ValueError(
                    f"the target column {name!r} is not in the table: pass y, or include it"
                )
            y = frame[name].to_numpy()
            frame = frame.drop(columns=[name])
        else:
            y = np.asarray(y, dtype=object if np.asarray(y).dtype.kind in "OUS" else None)
            if y.ndim != 1 or y.shape[0] != frame.shape[0]:
                raise ValueError(
                    f"y must be 1-D with one value per row of X ({frame.shape[0]} rows), "
                    f"got shape {y.shape}"
                )
            if name in frame.columns:
                frame = frame.drop(columns=[name])
        return frame, y

    def _raw_columns(self, frame: Any, schema: Schema) -> dict[str, np.ndarray]:
        return {c.name: column_values(frame, c) for c in schema.columns if c.type != "ignore"}

    def _numeric_input(
        self, cols: dict[str, np.ndarray], schema: Schema, *, ranges_only: bool = False
    ) -> dict[str, Any]:
        """The numeric columns after the public log map, and their public ranges."""
        out = {}
        for c in schema.columns:
            if c.type != "numeric":
                continue
            lo, hi = c.range or (0.0, 1.0)
            x = np.empty(0) if ranges_only else cols[c.name]
            if c.transform == "log":
                x = log_map(x)
                lo, hi = float(log_map(np.array(lo))), float(log_map(np.array(hi)))
            out[c.name] = (x, lo, hi)
        return out

    def _encoder_target(self, y: np.ndarray) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    def _design(self, frame: Any) -> np.ndarray:
        """The model's rows (unit ball) from a checked frame, with the fitted maps."""
        schema = self.schema_
        cols = self._raw_columns(frame, schema)
        numeric = self._numeric_input(cols, schema)
        n = frame.shape[0]
        impact_codes = None
        if self.encoder_ is not None:
            impact_codes = self._impact_codes(cols)
        blocks = []
        k = 0
        for c in schema.columns:
            if c.type == "ignore":
                continue
            if c.type == "numeric":
                x, _, _ = numeric[c.name]
                lo, hi = self.bounds_[c.name]
                blocks.append(numeric_block(x, lo, hi, c.missing == "indicator"))
            elif c.type == "binary":
                blocks.append(np.nan_to_num(cols[c.name], nan=0.0)[:, None])
            elif c.impact:
                blocks.append(impact_codes[k])
                k += 1
            else:
                blocks.append(onehot_block(cols[c.name], len(c.levels), c.missing == "level"))
        return assemble(blocks, n)

    # ---- the Dask path ----------------------------------------------------------------------
    def __dask_tokenize__(self) -> Any:
        """Dask names its tasks by hashing their arguments; a fitted part (an encoder's
        tables) changes what a partition task computes, so the token is renewed at every
        stage of a fit (``_dask_stage``)."""
        return (type(self).__name__, vars(self).get("_dask_token", id(self)))

    def _dask_stage(self, **override: Any) -> Any:
        """A copy of this estimator to ship to the workers: a fresh task token, no ledger
        (a ledger has one owner and never travels), ``override`` applied."""
        import uuid

        self._dask_token = uuid.uuid4().hex
        shipped = object.__new__(type(self))
        shipped.__dict__.update(vars(self))
        shipped.__dict__.update({"ledger": None, **override})
        return shipped

    def _partition_pass(
        self, part: Any, schema: Schema, priv_cols: list[str]
    ) -> tuple[int, np.ndarray]:
        """One partition: every input check, the number of rows without a target, and the
        private-bound columns' lattice counts (after the same per-row maps as in memory)."""
        _, keep = self._target(part[schema.target.name].to_numpy(), schema, allow_empty=True)
        cols = self._raw_columns(part, schema)
        numeric = self._numeric_input(cols, schema)
        counts = np.zeros((len(priv_cols), (1 << BOUNDS_LATTICE_BITS) + 1), dtype=np.int64)
        for j, name in enumerate(priv_cols):
            x, lo, hi = numeric[name]
            x = np.where(np.isnan(x), (lo + hi) / 2.0, x)
            counts[j] = snap_counts(x, lo, hi, BOUNDS_LATTICE_BITS)
        return int((~keep).sum()), counts

    def _dask_pass(
        self, X: Any, y: Any, schema: Schema, priv_cols: list[str]
    ) -> tuple[Any, Any, Any, np.ndarray]:
        import dask

        if y is not None:
            raise ValueError(
                "with a Dask DataFrame the target must be a column of it (fit(ddf), y=None)"
            )
        frame = check_frame(X, schema, target_ok=True)
        name = schema.target.name
        if name not in frame.columns:
            raise ValueError(f"the target column {name!r} is not in the table")
        parts = frame.to_delayed()
        shipped = self._dask_stage()
        results = dask.compute(
            *[dask.delayed(shipped._partition_pass)(p, schema, priv_cols) for p in parts]
        )
        if sum(r[0] for r in results):
            raise ValueError(
                f"the Dask table has rows whose target {name!r} is missing: drop them first "
                "(ddf.dropna(subset=[target])): in memory they are left out, on Dask the "
                "partitions must hold only the rows the model trains on"
            )
        counts = np.sum([r[1] for r in results], axis=0, dtype=np.int64)
        if not results:
            raise ValueError("the table has no partitions")

        shipped = self._dask_stage()
        meta = self._target_meta()
        y_model = frame.map_partitions(_targets_partition, shipped, schema, meta=meta)
        y_model = y_model.to_dask_array(lengths=True)
        return frame, y_model, None, counts

    def _dask_impact_input(self, frame: Any) -> Any:
        import pandas as pd

        names = [c.name for c in self.schema_.columns if c.impact]
        # integer column labels: the encoder then records no feature names, as in memory
        meta = pd.DataFrame({j: pd.Series(dtype=object) for j in range(len(names))})
        shipped = self._dask_stage(encoder_=None)  # the encoder is being fitted
        return frame.map_partitions(_impact_partition, shipped, names, meta=meta)

    def _dask_design(self, frame: Any) -> Any:
        import pandas as pd

        width = sum(w for _, w in self._block_widths())
        meta = pd.DataFrame({j: pd.Series(dtype=np.float64) for j in range(width)})
        shipped = self._dask_stage()
        return frame.map_partitions(_design_partition, shipped, meta=meta).to_dask_array(
            lengths=True
        )

    def _set_labels(self, schema: Schema) -> None:
        """The model's public labels (classifiers)."""

    def _target_meta(self) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def _impact_input(self, cols: dict[str, np.ndarray]) -> np.ndarray:
        names = [c.name for c in self.schema_.columns if c.impact]
        X = np.empty((len(next(iter(cols.values()))), len(names)), dtype=object)
        for j, name in enumerate(names):
            codes = cols[name]
            X[:, j] = np.where(codes >= 0, codes, -1).astype(object)
            X[codes < 0, j] = np.nan
        return X

    def _impact_codes(self, cols: dict[str, np.ndarray]) -> list[np.ndarray]:
        raw = self.encoder_.transform(self._impact_input(cols))
        raw = np.asarray(raw, dtype=np.float64)
        n_cols = sum(c.impact for c in self.schema_.columns)
        width = raw.shape[1] // n_cols
        clip = self._code_clip()
        out = []
        for j in range(n_cols):
            block = np.clip(raw[:, j * width : (j + 1) * width], -clip, clip) / clip
            out.append(block / math.sqrt(width))
        return out

    def _code_clip(self) -> float:
        return CODE_CLIP_LOGODDS

    # ---- fit ---------------------------------------------------------------------------------
    def _fit(self, X: Any, y: Any) -> Any:
        """A fit that raises (bad input, a refused budget, an interrupt) leaves the estimator
        exactly as it was."""
        before = dict(vars(self))
        try:
            return self._fit_pipeline(X, y)
        except BaseException:
            vars(self).clear()
            vars(self).update(before)
            raise

    def _fit_pipeline(self, X: Any, y: Any) -> Any:
        p = self._params()
        schema: Schema = p["schema"]
        eps_total, delta = p["epsilon"], p["delta"]
        self._set_labels(schema)
        dist = is_dask_frame(X)
        priv_cols = [c.name for c in schema.columns if c.private_bounds]
        if dist:  # every input check, and the bounds' lattice counts, in one pass
            frame, y_model, keep, counts = self._dask_pass(X, y, schema, priv_cols)
            numeric = self._numeric_input({}, schema, ranges_only=True)
        else:
            frame, y = self._split_xy(X, y, schema)
            y_model, keep = self._target(y, schema)
            cols = self._raw_columns(frame, schema)  # every input check before any charge
            numeric = self._numeric_input(cols, schema)
        private = math.isfinite(eps_total)
        eps = _finish(eps_total, p["shares"]) if private else {
            "bounds": math.inf, "codes": math.inf, "model": math.inf
        }  # fmt: skip
        name = type(self).__name__
        if self.ledger is not None:  # the planned total, before any row is read
            spend(self.ledger, eps_total, delta, f"{name}.fit", "add_remove")
        inner = PrivacyLedger(eps_total, delta, neighboring="add_remove") if private else None
        releases: list[Release] = []
        seed = None if self.seed is None else int(self.seed)

        # 1. bounds
        bounds: dict[str, tuple[float, float]] = {}
        scaler = None
        for cname, (_, lo, hi) in numeric.items():
            bounds[cname] = (lo, hi)
        if priv_cols and private:
            lo_v = np.array([numeric[c][1] for c in priv_cols])
            hi_v = np.array([numeric[c][2] for c in priv_cols])
            if dist:  # the columns rebuilt from their lattice counts: the same release
                Xb = np.column_stack(
                    [
                        column_from_counts(counts[j], lo_v[j], hi_v[j], BOUNDS_LATTICE_BITS)
                        for j in range(len(priv_cols))
                    ]
                )
            else:
                Xb = np.column_stack([numeric[c][0] for c in priv_cols])
                Xb = np.where(np.isnan(Xb), (lo_v + hi_v) / 2.0, Xb)  # missing -> middle
            scaler = DPFeatureScaler(
                epsilon=eps["bounds"],
                bounds=(lo_v, hi_v),
                quantile_range=BOUNDS_QUANTILES,
                lattice_bits=BOUNDS_LATTICE_BITS,
                seed=_sub_seed(seed, "bounds"),
                ledger=inner,
            ).fit(Xb)
            scaler.set_params(ledger=None)
            for j, cname in enumerate(priv_cols):
                bounds[cname] = (float(scaler.lower_[j]), float(scaler.upper_[j]))
            sp = scaler.privacy_
            releases.append(
                Release(
                    "bounds",
                    "DPFeatureScaler",
                    p["shares"]["bounds"],
                    sp.epsilon,
                    sp.delta,
                    "add_remove",
                    f"exponential-mechanism quantiles {BOUNDS_QUANTILES} (Smith 2011) on a "
                    f"public lattice of 2**{BOUNDS_LATTICE_BITS} cells, "
                    f"{2 * len(priv_cols)} quantiles at {sp.epsilon_per_quantile:.4g} each",
                    f"clipping bounds of {priv_cols}",
                    sp,
                )
            )

        # 2. impact codes
        self.schema_ = schema
        self.encoder_ = None
        impact_cols = [c for c in schema.columns if c.impact]
        encoder = None
        if impact_cols:
            encoder = ImpactEncoder(
                "bayes",
                mode="laplace" if private else "naive",
                epsilon=eps["codes"] if private else None,
                categories=[[*range(len(c.levels)), np.nan] for c in impact_cols],
                seed=_sub_seed(seed, "codes"),
                ledger=inner,
                **self._encoder_params(),
            )
            self.encoder_ = encoder
            if dist:
                Xc = self._dask_impact_input(frame)
            else:
                Xc = self._impact_input(cols)[keep]
            encoder.fit(Xc, self._encoder_target(y_model))
            encoder.set_params(ledger=None)
            if private:
                ep = encoder.privacy_
                releases.append(
                    Release(
                        "codes",
                        "ImpactEncoder",
                        p["shares"]["codes"],
                        ep.epsilon,
                        ep.delta,
                        "add_remove",
                        "discrete Laplace noise on every public level's counts (Laplace "
                        "smearing of impact codes, Win-Vector)",
                        f"impact code tables of {[c.name for c in impact_cols]}",
                        ep,
                    )
                )

        # 3. the model
        self.bounds_ = bounds
        Z = self._dask_design(frame) if dist else self._design(frame)[keep]
        model = self._make_model(eps["model"], delta, p, _sub_seed(seed, "model"), inner)
        model.fit(Z, y_model)
        model.set_params(ledger=None)
        mp = model.privacy_
        if private:
            releases.append(
                Release(
                    "model",
                    type(model).__name__,
                    p["shares"]["model"],
                    mp.epsilon,
                    mp.delta,
                    getattr(mp, "neighboring", "add_remove"),
                    _model_mechanism(mp),
                    "coef_ and intercept_ of the linear model (and its planned schedule)",
                    mp,
                )
            )
        self.scaler_ = scaler
        self.model_ = model
        self.budget_split_ = dict(p["shares"])
        self.feature_names_in_ = np.asarray(
            [str(c) for c in frame.columns if str(c) != schema.target.name], dtype=object
        )
        self.n_features_in_ = len(self.feature_names_in_)
        self.privacy_ = self._statement(p, releases, inner)
        return self

    def _statement(self, p: dict[str, Any], releases: list[Release], inner: Any) -> Any:
        schema: Schema = p["schema"]
        private = math.isfinite(p["epsilon"])
        if private:
            eps = math.fsum(r.epsilon for r in releases)
            delta = math.fsum(r.delta for r in releases)
        else:
            eps, delta = math.inf, 0.0
        public = [
            f"the schema: {len(schema.feature_names)} columns used "
            f"({', '.join(schema.feature_names)}), their types, ranges, level lists, "
            "missing-value rules and log maps",
            self._target_public(schema),
            f"epsilon={p['epsilon']:g}, delta={p['delta']:g} and the budget shares "
            + ", ".join(f"{k}={v:.4g}" for k, v in p["shares"].items()),
            f"the model ({type(self.model_).__name__}) and its hyperparameters; the number of "
            f"model features ({self.model_.n_features_in_})",
            "rows whose target is missing are left out (a per-row rule)",
        ]
        if p["n"] is not None:
            public.append(f"the table's size, declared n_samples={p['n']}")
        else:
            public.append(
                "NOT the table's size: the model plans its schedule from its own noisy count "
                "(part of its epsilon)"
            )
        released = [r.released for r in releases] or ["the fitted maps and model (not private)"]
        secret = [
            "the rows (every value of every column and the target)",
            "the noise of every release",
            "the seed (secret randomness; an int seed makes research runs reproducible, "
            "whoever knows it knows the noise)",
        ]
        warn = []
        if schema.source == "data":
            warn.append(
                "the schema was drafted from the private data (source='data'): its ranges "
                "and levels are exact functions of the rows and are NOT covered by this "
                "guarantee"
            )
        return TabularPrivacy(
            epsilon=eps,
            delta=delta,
            accountant="basic composition of the releases (each by its own accountant)",
            neighboring="add_remove",
            releases=tuple(releases),
            requested=(p["epsilon"], p["delta"]),
            rule=p["rule"],
            public=tuple(public),
            released=tuple(released),
            secret=tuple(secret),
            warnings=tuple(warn),
        )

    def _check_predict_frame(self, X: Any) -> Any:
        check_is_fitted(self, "privacy_")
        if is_dask_frame(X):
            raise TypeError(
                "predict on a Dask DataFrame: map it over the partitions, e.g. "
                "ddf.map_partitions(est.predict_proba) or est.predict_proba(part) per part"
            )
        frame = check_frame(X, self.schema_, target_ok=True)
        if self.schema_.target.name in frame.columns:
            frame = frame.drop(columns=[self.schema_.target.name])
        return frame

    def column_weights(self) -> dict[str, float]:
        """The weight of each original column in the fitted model: the L2 norm of the
        coefficients of its block, on the model's (unit-ball) scale. Post-processing."""
        check_is_fitted(self, "privacy_")
        coef = np.atleast_2d(np.asarray(self.model_.coef_, dtype=np.float64))
        out = {}
        j = 0
        for c, width in self._block_widths():
            out[c] = float(np.linalg.norm(coef[:, j : j + width]))
            j += width
        return out

    def _block_widths(self) -> list[tuple[str, int]]:
        widths = []
        for c in self.schema_.columns:
            if c.type == "ignore":
                continue
            if c.type == "numeric":
                w = 2 if c.missing == "indicator" else 1
            elif c.type == "binary":
                w = 1
            elif c.impact:
                w = self._impact_width()
            else:
                w = len(c.levels) + (1 if c.missing == "level" else 0)
            widths.append((c.name, w))
        return widths

    def _impact_width(self) -> int:
        return 1

    def _encoder_params(self) -> dict[str, Any]:  # pragma: no cover - overridden
        raise NotImplementedError

    def _target_public(self, schema: Schema) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def _target(self, y: np.ndarray, schema: Schema) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError  # pragma: no cover - overridden

    def _make_model(self, eps: float, delta: float, p: dict, seed: Any, ledger: Any) -> Any:
        raise NotImplementedError  # pragma: no cover - overridden


def _targets_partition(part: Any, est: Any, schema: Schema) -> Any:
    """One Dask partition's model targets (module level: Dask tokenizes its tasks)."""
    import pandas as pd

    values, _ = est._target(part[schema.target.name].to_numpy(), schema, allow_empty=True)
    return pd.Series(values, index=part.index)


def _impact_partition(part: Any, est: Any, names: list[str]) -> Any:
    """One Dask partition's level indices of the impact-coded columns."""
    import pandas as pd

    X = est._impact_input(est._raw_columns(part, est.schema_))
    return pd.DataFrame(X, columns=range(len(names)), index=part.index)


def _design_partition(part: Any, est: Any) -> Any:
    """One Dask partition's model rows (the same per-row map as in memory)."""
    import pandas as pd

    return pd.DataFrame(est._design(part), index=part.index)


def _model_mechanism(mp: Any) -> str:
    mech = getattr(mp, "mechanism", "")
    acc = getattr(mp, "accountant", "")
    size = getattr(mp, "size", None)
    text = f"{mech} mechanism, {acc} accountant"
    if size is not None and getattr(size, "source", None) == "noisy_count":
        text += f" (includes a noisy row count at epsilon {size.epsilon:.4g})"
    return text


_DOC_PARAMS = """
    Parameters
    ----------
    schema : Schema, dict or path
        The PUBLIC description of the table (:class:`privlearn.tabular.Schema`; a dict in its
        format or a ``.json`` / ``.toml`` file). Every range and level list in it is taken
        as public: write it from a codebook, never from the rows.
    epsilon : float, default=1.0
        The TOTAL epsilon of the fit: bounds, codes and model together
        (``privacy_.epsilon <= epsilon``). ``inf``: no privacy (experiments only).
    delta : float or None, default=None
        The total delta (the model's; bounds and codes are pure DP). None: ``1e-6``, a
        public constant (pass a smaller one for tables of more than a million rows).
    n_samples : int or None, default=None
        A PUBLIC size of the table, if there is one (then a table of another size is an
        error, and the budget rule may use it). None: the size stays private; the model
        plans its schedule from its own noisy count.
    model : {"sgd", "scd"}, default="sgd"
        DP-SGD (Abadi et al. 2016; the default, chosen by experiment) or DP-SCD
        (Damaskinos et al. 2021), each at its own tuned defaults.
    split : dict or None, default=None
        None: the documented budget rule (:func:`budget_split`). A dict of shares
        ``{"bounds": .., "codes": .., "model": ..}`` (summing to at most 1) overrides it, for
        experiments.
    model_params : dict or None, default=None
        Extra keyword arguments of the model (e.g. ``{"epochs": 30}``); not those the pipeline
        sets (epsilon, delta, ledger, seed, classes, target_bounds, n_samples).
    seed : int or None, default=None
        None (a private release): every part's noise keyed from the operating system. An
        int makes the fit reproducible (research runs); the seed is secret randomness.
    ledger : PrivacyLedger or None, default=None
        A budget shared with other fits: charged ``(epsilon, delta)``, the planned total,
        under add/remove-one neighbours before any row is read. A refused charge raises
        :class:`~privlearn.exceptions.BudgetExceededError` and nothing is fitted.

    Attributes
    ----------
    privacy_ : TabularPrivacy
        The statement: every release, its share, epsilon, delta and relation, and what is
        public, released and secret; ``privacy_.epsilon`` and ``.delta`` are the totals.
    budget_split_ : dict
        The shares used.
    bounds_ : dict
        Column -> the ``(lower, upper)`` interval its values are clipped to (after the log
        map where asked): released bounds, or the public range.
    scaler_, encoder_, model_ : fitted estimators (or None)
        The bounds' :class:`~privlearn.preprocessing.DPFeatureScaler`, the codes'
        :class:`~privlearn.encoding.ImpactEncoder` and the linear model.
    schema_ : Schema
    feature_names_in_ : ndarray of str
    n_features_in_ : int
"""


class PrivateTabularClassifier(ClassifierMixin, _TabularBase):
    __doc__ = f"""A defended classifier from a raw table and a public schema in one call.

    ``fit(X)`` (the target column inside ``X``) or ``fit(X, y)`` on a pandas DataFrame:
    private bounds, impact codes and a DP-SGD (or DP-SCD) model under ONE budget (see
    :mod:`privlearn.tabular.estimators` for what happens inside and the budget rule).
    Strings, NaN, unseen levels and out-of-range values are handled as the schema says.
{_DOC_PARAMS}
    classes_ : ndarray
        The schema's public label set, sorted.

    Examples
    --------
    >>> from privlearn.data import load_adult_frame
    >>> from privlearn.tabular import PrivateTabularClassifier, adult_schema
    >>> train = load_adult_frame("train")  # doctest: +SKIP
    >>> clf = PrivateTabularClassifier(adult_schema(), epsilon=1.0).fit(train)  # doctest: +SKIP
    >>> clf.privacy_.epsilon <= 1.0  # doctest: +SKIP
    True
    """

    _task = "classification"

    def fit(self, X: Any, y: Any = None) -> PrivateTabularClassifier:
        """Fit the pipeline (spends at most ``epsilon``, ``delta``; see ``privacy_``).

        Parameters
        ----------
        X : pandas.DataFrame
            The raw table: every schema column (and the target when ``y`` is None); a column
            the schema does not describe is an error.
        y : array-like of shape (n_samples,), optional
            The labels (must belong to the schema's classes; missing ones drop the row).
        """
        return self._fit(X, y)

    def _set_labels(self, schema: Schema) -> None:
        classes = list(schema.target.classes or ())
        labels = np.empty(len(classes), dtype=object)
        labels[:] = classes
        try:
            labels = np.asarray(classes)
        except (TypeError, ValueError):  # pragma: no cover - mixed types
            pass
        self._labels = labels

    def _target_meta(self) -> Any:
        import pandas as pd

        return pd.Series(dtype=self._labels.dtype)

    def _target(
        self, y: np.ndarray, schema: Schema, *, allow_empty: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        classes = schema.target.classes or ()
        keys = {level_key(c): i for i, c in enumerate(classes)}
        import pandas as pd

        miss = np.asarray(pd.isna(y), dtype=bool)
        idx = np.full(y.shape[0], -1, dtype=np.int64)
        for i in np.flatnonzero(~miss):
            k = keys.get(level_key(y[i]))
            if k is None:
                raise ValueError(
                    f"the target {schema.target.name!r} has a label outside the schema's "
                    f"classes {list(classes)} (declare every class in the schema)"
                )
            idx[i] = k
        keep = idx >= 0
        if not keep.any() and not allow_empty:
            raise ValueError(f"the target {schema.target.name!r} has no non-missing value")
        return self._labels[idx[keep]], keep

    def _encoder_target(self, y: np.ndarray) -> np.ndarray:
        return y

    def _encoder_params(self) -> dict[str, Any]:
        classes = list(self.schema_.target.classes or ())
        return {
            "target_type": "binary" if len(classes) == 2 else "multiclass",
            "classes": list(self._labels),
        }

    def _impact_width(self) -> int:
        k = len(self.schema_.target.classes or ())
        return 1 if k == 2 else k

    def _target_public(self, schema: Schema) -> str:
        classes = list(schema.target.classes or ())
        return f"the target {schema.target.name!r} and its label set {classes}"

    def _make_model(self, eps: float, delta: float, p: dict, seed: Any, ledger: Any) -> Any:
        cls = DPSGDClassifier if self.model == "sgd" else DPSCDClassifier
        kw = dict(p["model_params"])
        kw.setdefault("verbose", 0)
        if math.isfinite(eps):
            kw.update(delta=delta)
        return cls(
            epsilon=eps,
            n_samples=p["n"],
            classes=list(self._labels),
            seed=seed,
            ledger=ledger,
            **kw,
        )

    @property
    def classes_(self) -> np.ndarray:
        check_is_fitted(self, "privacy_")
        return self.model_.classes_

    def decision_function(self, X: Any) -> np.ndarray:
        """The model's decision values on the rows of ``X`` (same maps as the fit)."""
        return self.model_.decision_function(self._design(self._check_predict_frame(X)))

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, columns in ``classes_`` order."""
        return self.model_.predict_proba(self._design(self._check_predict_frame(X)))

    def predict(self, X: Any) -> np.ndarray:
        """Predicted labels."""
        return self.model_.predict(self._design(self._check_predict_frame(X)))


class PrivateTabularRegressor(RegressorMixin, _TabularBase):
    __doc__ = f"""A defended linear regressor from a raw table and a public schema in one call.

    As :class:`PrivateTabularClassifier`, for a target with a public ``range`` [lo, hi]:
    the target is clipped to it, centred and scaled to ``[-1, 1]`` with it for training, and
    predictions are mapped back (so they lie in ``[lo, hi]`` up to the model's intercept).
{_DOC_PARAMS}"""

    _task = "regression"

    def fit(self, X: Any, y: Any = None) -> PrivateTabularRegressor:
        """Fit the pipeline (spends at most ``epsilon``, ``delta``; see ``privacy_``)."""
        return self._fit(X, y)

    def _center(self, schema: Schema) -> tuple[float, float]:
        lo, hi = schema.target.range or (0.0, 1.0)
        return (lo + hi) / 2.0, (hi - lo) / 2.0

    def _target_meta(self) -> Any:
        import pandas as pd

        return pd.Series(dtype=np.float64)

    def _target(
        self, y: np.ndarray, schema: Schema, *, allow_empty: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        try:
            yf = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            import pandas as pd

            yf = pd.to_numeric(pd.Series(y), errors="coerce").to_numpy(dtype=np.float64)
            if np.isnan(yf).all():
                raise ValueError(f"the target {schema.target.name!r} is not numeric") from None
        keep = np.isfinite(yf)
        if not keep.any() and not allow_empty:
            raise ValueError(f"the target {schema.target.name!r} has no non-missing value")
        lo, hi = schema.target.range or (0.0, 1.0)
        c, s = self._center(schema)
        return (np.clip(yf[keep], lo, hi) - c) / s, keep

    def _encoder_target(self, y: np.ndarray) -> np.ndarray:
        return y

    def _encoder_params(self) -> dict[str, Any]:
        return {"target_type": "continuous", "target_bounds": (-1.0, 1.0)}

    def _code_clip(self) -> float:
        return 1.0

    def _target_public(self, schema: Schema) -> str:
        return f"the target {schema.target.name!r} and its range {list(schema.target.range or ())}"

    def _make_model(self, eps: float, delta: float, p: dict, seed: Any, ledger: Any) -> Any:
        cls = DPSGDRegressor if self.model == "sgd" else DPSCDRegressor
        kw = dict(p["model_params"])
        kw.setdefault("verbose", 0)
        if math.isfinite(eps):
            kw.update(delta=delta)
        else:
            kw.setdefault("clip", 0.0)
            if self.model == "sgd":
                kw.setdefault("alpha", 1e-12)
                kw.setdefault("epochs", 20 * INF_EPOCHS_FACTOR)
                kw.setdefault("learning_rate", "inv_sqrt")
        return cls(
            epsilon=eps,
            n_samples=p["n"],
            target_bounds=(-1.0, 1.0),
            seed=seed,
            ledger=ledger,
            **kw,
        )

    def predict(self, X: Any) -> np.ndarray:
        """Predictions on the target's scale."""
        Z = self._design(self._check_predict_frame(X))
        c, s = self._center(self.schema_)
        return c + s * self.model_.predict(Z)
