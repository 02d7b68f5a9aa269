"""Dask back-end of :class:`privlearn.encoding.ImpactEncoder` (DP impact coding).

The estimator dispatches here when ``X`` is a ``dask.dataframe.DataFrame``. One pass over the
partitions computes, on the workers, a small table per partition and column: the column's
distinct values (first-occurrence order), the number of missing values, and per value the
integer statistics the single-machine fit derives from the rows (class histogram of the
outcome; or row count and the fixed-point parts of the clipped outcome's sum). The driver
merges the tables (integer additions, exact: the result cannot depend on the partitioning),
maps the values to the level slots of the single-machine fit, and calls the estimator's own
release step (:meth:`ImpactEncoder._release`): the noise is drawn once, on the driver, at the
same ChaCha20 addresses as a single-machine fit, so ``counts_``, ``codes_``, ``pvalues_`` and
``privacy_`` are equal bit for bit (Win-Vector, "Using differential privacy to reuse training
data": the Laplace-smeared counts are computed from the same exact counts).

**Trust.** The driver sees the noiseless per-partition tables (counts per level and class):
it must be trusted with the raw statistics. Sites that do not trust it would need secure
aggregation, which is out of scope.

Refused on dask input (they cannot be made identical to the single-machine fit without
gathering every row on the driver): ``mode="split"`` (the coding rows are a random
permutation of all rows, and ``model_mask_`` is a per-row array), ``fit_transform`` with
``mode="cross"`` (scikit-learn's shuffled ``KFold`` folds are a permutation of all rows),
``fit_transform`` with ``mode="jackknife"`` and ``groups`` (leave-one-group-out needs
per-group totals), ``target_type="auto"`` without declared ``classes`` (the inference reads
all of ``y``) and a continuous outcome without ``target_bounds`` (its sums are exact only in
fixed point, which needs bounds). Declared ``classes`` are checked against ``y`` (one pass on
the workers) before anything is charged, as in the single-machine fit.
"""

from __future__ import annotations

from typing import Any

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd

from privlearn._labels import declared_classes
from privlearn.distributed.linear import check_dense_chunks
from privlearn.encoding._counts import int_sums
from privlearn.encoding._input import (
    TARGET_LIMIT,
    as_binary_target,
    as_columns,
    as_continuous_target,
    as_multiclass_target,
    check_y,
    level_indices,
    resolve_target_type,
    validate_data,
)
from privlearn.fixed_point import fixed_point_exponent, fixed_point_parts, fixed_point_value

__all__ = ["fit_dask", "fit_transform_dask", "transform_dask"]


def fit_dask(enc: Any, X: Any, y: Any, groups: Any = None) -> dict[str, Any]:
    """Fit ``enc`` (an :class:`~privlearn.encoding.ImpactEncoder`) on a dask DataFrame.

    Parameters
    ----------
    enc : ImpactEncoder
    X : dask.dataframe.DataFrame of shape (n_samples, n_features)
        Categorical columns.
    y : dask Series or dask array of shape (n_samples,)
        The outcome, partitioned like ``X`` (same number of partitions, same rows in each).
    groups : dask Series or array, optional
        Only checked for alignment (no mode that uses groups is supported on dask input).

    Returns
    -------
    dict
        The checked parameters (``p``) of the fit.

    Notes
    -----
    Equality with the single-machine fit: the levels are the sorted distinct values (the
    partitions' distinct values, concatenated in partition order, are deduplicated in
    first-occurrence order exactly like ``pd.factorize`` of the whole column); binary and
    multiclass statistics are integer counts; a continuous outcome's sums are int64
    fixed-point sums of the clipped values (:func:`~privlearn.fixed_point.fixed_point_parts`,
    the same as the single-machine fit), so every merged statistic is exact. The noise, codes
    and privacy statement come from the estimator's own release step. The driver is trusted:
    it sees the noiseless per-partition statistics.
    """
    _check_frame(X)
    if enc.mode == "split":
        raise NotImplementedError(
            "ImpactEncoder(mode='split') does not accept dask input: its coding rows are a "
            "random permutation of all rows (and model_mask_ is a per-row array), which no "
            "partition can compute on its own; use mode='laplace', 'naive', 'jackknife' or "
            "fit() of mode='cross'"
        )
    if enc.target_type == "auto" and enc.classes is None:
        raise ValueError(
            "target_type='auto' is not supported on dask input (inferring it reads all of y): "
            "pass target_type='binary', 'multiclass' or 'continuous' (or declare classes=)"
        )
    y_parts = _partitions_like(X, y, "y")
    g_parts = _partitions_like(X, groups, "groups") if groups is not None else None
    validate_data(enc, X._meta, skip_check_array=True, reset=True)  # the empty pandas frame
    n_cols = len(X.columns)
    if n_cols == 0:
        raise ValueError("Found array with 0 feature(s) while a minimum of 1 is required.")
    declared = declared_classes(enc.classes, classification=False)
    kind = resolve_target_type(enc.target_type, None, 0, declared)  # "auto" refused above
    enc.target_type_ = kind
    p = enc._check_params(n_cols, kind)
    if kind == "continuous" and p["bounds"] is None:
        # refused before y is read; the in-memory fit refuses an unbounded y beyond
        # +-TARGET_LIMIT with the same rule (as_continuous_target), here every unbounded y is
        raise ValueError(
            f"a dask fit of a continuous outcome needs target_bounds=(lo, hi) with |lo|, "
            f"|hi| <= {TARGET_LIMIT:g} (y is clipped to them): the level sums are computed "
            "exactly (in fixed point, independent of the partitioning), which needs public "
            "bounds; an unbounded y is not read"
        )
    if kind == "continuous":
        enc.classes_ = None
    else:
        # the label set is resolved before anything is charged: a y outside the declared
        # classes (or without two classes, when they are read from y) is refused first; one
        # pass over y only, on the workers
        found = dask.compute(
            *[dask.delayed(_partition_labels)(yp, i, kind) for i, yp in enumerate(y_parts)]
        )
        union = [c for c in found if len(c)]
        union_arr = np.unique(np.concatenate(union)) if union else np.empty(0)
        check = as_binary_target if kind == "binary" else as_multiclass_target
        enc.classes_ = check(union_arr, len(union_arr), declared)[0]
    spec = {"kind": kind, "laplace": enc.mode == "laplace", "bounds": p["bounds"], "exp": None}
    bound = enc._sum_bound(p)
    if bound is not None:
        spec["exp"] = fixed_point_exponent(bound)
    parts = X.to_delayed()
    tasks = [
        dask.delayed(_partition_table)(xp, yp, None if g_parts is None else g_parts[i], i, spec)
        for i, (xp, yp) in enumerate(zip(parts, y_parts))
    ]
    tables = dask.compute(*tasks)
    n_rows = sum(t["n"] for t in tables)
    if n_rows == 0:
        raise ValueError(
            f"Found array with 0 sample(s) (shape=(0, {n_cols})) while a minimum of 1 is required."
        )
    names = enc._names()
    merged = []
    for j, name in enumerate(names):
        missing = sum(t["columns"][j][2] for t in tables)
        if missing and enc.handle_missing == "error":
            raise ValueError(  # how many are missing is private: not quoted
                f"column {name} has missing values (NaN/None); set "
                "handle_missing='level' to code them as their own level"
            )
        values = [t["columns"][j][0] for t in tables]
        nonempty = [v for v in values if len(v)] or values[:1]
        merged.append(np.asarray(pd.unique(np.concatenate(nonempty))))
    enc.categories_ = enc._fit_levels(merged)  # sorted; given categories checked as usual
    levels_public = not isinstance(enc.categories, str)
    enc._check_read_levels(p, levels_public)
    # charged after the one pass over the partitions has validated everything that can fail
    # (missing values, empty input, undeclared levels, the noise's range) and before anything
    # is released: a refused input costs nothing, and nothing leaves this function uncharged
    enc._charge(p, n_cols)
    if hasattr(enc, "model_mask_"):
        del enc.model_mask_
    stats = [_merge_column(enc, tables, j, names[j], spec, p) for j in range(n_cols)]
    enc._release(stats, p, levels_public)
    return p


def transform_dask(enc: Any, X: Any) -> Any:
    """Code a dask DataFrame with a fitted encoder, partition by partition.

    Returns
    -------
    dask.dataframe.DataFrame
        Columns ``enc.get_feature_names_out()`` (float64), the partitions and index of ``X``;
        every row is coded exactly as :meth:`ImpactEncoder.transform` codes it.
    """
    _check_frame(X)
    validate_data(enc, X._meta, skip_check_array=True, reset=False)
    names = [str(v) for v in enc.get_feature_names_out()]
    meta = pd.DataFrame({c: pd.Series([], dtype=np.float64) for c in names})
    return X.map_partitions(_transform_partition, enc, names, meta=meta)


def fit_transform_dask(enc: Any, X: Any, y: Any, groups: Any = None) -> Any:
    """Fit on a dask DataFrame and code its rows as ``mode`` prescribes.

    ``"naive"`` and ``"laplace"``: :func:`transform_dask` of the fitted codes. ``"jackknife"``
    (without ``groups``): each row coded by the statistics of all other rows, partition by
    partition (a row's own contribution is subtracted from the merged statistics, exactly as
    in the single-machine fit). ``"cross"`` and ``"jackknife"`` with ``groups`` raise
    ``NotImplementedError`` (see the module docstring); ``"split"`` too.

    Returns
    -------
    dask.dataframe.DataFrame
    """
    _check_frame(X)
    if enc.mode == "cross":
        raise NotImplementedError(
            "ImpactEncoder(mode='cross').fit_transform does not accept dask input: the shuffled "
            "KFold folds are a random permutation of all rows, not addressed by row; use "
            "mode='jackknife' (leave-one-out), or fit() then transform() for new data"
        )
    if enc.mode == "jackknife" and groups is not None:
        raise NotImplementedError(
            "ImpactEncoder(mode='jackknife').fit_transform with groups does not accept dask "
            "input (leave-one-group-out needs every group's totals); drop groups for "
            "leave-one-row-out"
        )
    p = fit_dask(enc, X, y, groups)
    if enc.mode != "jackknife":
        return transform_dask(enc, X)
    names = [str(v) for v in enc.get_feature_names_out()]
    meta = pd.DataFrame({c: pd.Series([], dtype=np.float64) for c in names})
    y_parts = _partitions_like(X, y, "y")
    parts = [
        dask.delayed(_jackknife_partition)(xp, yp, enc, p, names)
        for xp, yp in zip(X.to_delayed(), y_parts)
    ]
    return dd.from_delayed(parts, meta=meta, verify_meta=False)


# ---- input checks ---------------------------------------------------------------------------
def _check_frame(X: Any) -> None:
    if isinstance(X, da.Array):
        check_dense_chunks(X, "X")  # sparse chunks: named (with the fixes) before the advice
    if not isinstance(X, dd.DataFrame):
        raise TypeError(
            "ImpactEncoder takes a dask.dataframe.DataFrame for distributed input, got "
            f"{type(X).__name__}; convert a dask array with dask.dataframe.from_dask_array"
        )


def _partitions_like(X: Any, v: Any, name: str) -> list[Any]:
    """The delayed partitions of ``v`` (dask Series / one-column DataFrame / dask array),
    one per partition of ``X``; their lengths are checked against ``X``'s in the tasks."""
    if v is None:
        raise ValueError(
            "ImpactEncoder requires y to be passed, but the target y is None: impact codes are "
            "learned from the outcome"
        )
    if isinstance(v, (dd.Series, dd.DataFrame)):
        if v.npartitions != X.npartitions:
            raise ValueError(
                f"X and {name} are partitioned differently: X has {X.npartitions} partitions, "
                f"{name} has {v.npartitions}; repartition them alike (e.g. take {name} from the "
                "same dask DataFrame as X)"
            )
        return list(v.to_delayed())
    if isinstance(v, da.Array):
        if v.ndim not in (1, 2) or (v.ndim == 2 and v.shape[1] != 1):
            raise ValueError(f"{name} must be 1-D, got a dask array of shape {v.shape}")
        check_dense_chunks(v, name)
        if any(np.isnan(c) for c in v.chunks[0]):
            raise ValueError(
                f"{name} has unknown chunk sizes: call {name}.compute_chunk_sizes() (or build "
                f"it with known chunks) so that its rows can be matched with X's partitions"
            )
        if v.numblocks[0] != X.npartitions:
            raise ValueError(
                f"X and {name} are partitioned differently: X has {X.npartitions} partitions, "
                f"{name} has {v.numblocks[0]} chunks; rechunk {name} to X's partition lengths"
            )
        if v.ndim == 2:
            v = v.rechunk({1: 1})
        return list(v.to_delayed().ravel())
    raise TypeError(
        f"with a dask DataFrame X, {name} must be a dask Series or dask array partitioned like "
        f"X, got {type(v).__name__}"
    )


def _part_target(yp: Any, n: int, i: int, name: str = "y") -> np.ndarray:
    arr = np.asarray(yp)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim == 1 and arr.shape[0] != n:
        raise ValueError(
            f"X and {name} are partitioned differently: partition {i} of X has {n} rows, "
            f"{name}'s has {arr.shape[0]}"
        )
    return arr


# ---- worker side ----------------------------------------------------------------------------
def _partition_table(
    xp: pd.DataFrame, yp: Any, gp: Any, i: int, spec: dict[str, Any]
) -> dict[str, Any]:
    """One partition's statistics: per column ``(distinct values, table, n_missing)``; the
    table has one row per distinct value and a last row for the missing value, and holds the
    class histogram (columns: this partition's classes) or ``[count, hi, lo]`` (fixed-point
    parts of the outcome's sum), all int64."""
    n = len(xp)
    kind = spec["kind"]
    y = _part_target(yp, n, i)
    if gp is not None:
        _part_target(gp, n, i, "groups")
    if kind == "continuous":
        v = np.clip(as_continuous_target(y, n), *spec["bounds"])
        if spec["laplace"]:
            lo, hi = spec["bounds"]
            v = v - (lo + hi) / 2.0  # the centred outcome, as the single-machine fit
        hi_part, lo_part = fixed_point_parts(v, spec["exp"])
        classes = np.empty(0)
    else:
        arr = check_y(y, n, f"a {kind} outcome")
        if kind == "multiclass" and arr.dtype.kind == "f" and (arr != np.round(arr)).any():
            raise ValueError(
                "target_type='multiclass' needs class labels, but y holds non-integral floats: "
                "use target_type='continuous' for a numeric outcome"
            )
        classes, code = np.unique(arr, return_inverse=True)
        code = code.astype(np.int64).ravel()
    columns = []
    for j in range(xp.shape[1]):
        col = xp.iloc[:, j].to_numpy()
        codes, uniques = pd.factorize(col, use_na_sentinel=True)
        uniques = np.asarray(uniques)
        k = len(uniques)
        slot = np.where(codes >= 0, codes, k).astype(np.int64)
        if kind == "continuous":
            table = np.stack(
                [
                    np.bincount(slot, minlength=k + 1).astype(np.int64),
                    int_sums(slot, hi_part, k + 1),
                    int_sums(slot, lo_part, k + 1),
                ],
                axis=1,
            )
        else:
            nc = len(classes)
            table = np.bincount(slot * nc + code, minlength=(k + 1) * nc).reshape(k + 1, nc)
            table = table.astype(np.int64)
        columns.append((uniques, table, int((codes < 0).sum())))
    return {"n": n, "classes": classes, "columns": columns}


def _partition_labels(yp: Any, i: int, kind: str) -> np.ndarray:
    """The distinct labels of one partition of ``y`` (checked like the single-machine fit)."""
    arr = np.asarray(yp)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim == 1 and len(arr) == 0:
        return np.empty(0)
    arr = check_y(arr, arr.shape[0] if arr.ndim else 1, f"a {kind} outcome")
    if kind == "multiclass" and arr.dtype.kind == "f" and (arr != np.round(arr)).any():
        raise ValueError(
            "target_type='multiclass' needs class labels, but y holds non-integral floats: "
            "use target_type='continuous' for a numeric outcome"
        )
    return np.unique(arr)


def _transform_partition(xp: pd.DataFrame, enc: Any, names: list[str]) -> pd.DataFrame:
    if len(xp) == 0:
        return pd.DataFrame(np.empty((0, len(names))), index=xp.index, columns=names)
    columns, _ = as_columns(xp)
    out = enc._apply(enc._indices(columns))
    return pd.DataFrame(out, index=xp.index, columns=names)


def _jackknife_partition(
    xp: pd.DataFrame, yp: Any, enc: Any, p: dict[str, Any], names: list[str]
) -> pd.DataFrame:
    n = len(xp)
    if n == 0:
        return pd.DataFrame(np.empty((0, len(names))), index=xp.index, columns=names)
    y = _part_target(yp, n, -1)
    if enc.target_type_ == "continuous":
        target = as_continuous_target(y, n)
    else:
        target = np.searchsorted(enc.classes_, y).astype(np.int64)
    contrib = enc._contributions(target, p)
    columns, _ = as_columns(xp)
    out = enc._jackknife(enc._indices(columns), contrib, None, p)
    return pd.DataFrame(out, index=xp.index, columns=names)


# ---- driver side ----------------------------------------------------------------------------
def _merge_column(
    enc: Any, tables: Any, j: int, name: str, spec: dict[str, Any], p: dict[str, Any]
) -> np.ndarray:
    """The exact statistics ``(n_levels + 2, m)`` of column ``j`` (as ``level_stats`` of the
    single-machine fit, :mod:`privlearn.encoding._counts`), from the partitions' integer tables."""
    levels = enc.categories_[j]
    size = len(levels) + 2
    kind = spec["kind"]
    width = 3 if kind == "continuous" else len(enc.classes_)
    acc = np.zeros((size, width), dtype=np.int64)
    for t in tables:
        uniques, table, _ = t["columns"][j]
        slots = np.append(level_indices(uniques, levels, name, "level"), len(levels))
        if kind == "continuous":
            np.add.at(acc, slots, table)
        else:
            cols = np.searchsorted(enc.classes_, t["classes"])
            for c, g in enumerate(cols):
                np.add.at(acc[:, g], slots, table[:, c])
    if kind == "continuous":
        out = np.empty((size, 2), dtype=np.float64)
        out[:, 0] = acc[:, 0].astype(np.float64)
        out[:, 1] = fixed_point_value(acc[:, 1], acc[:, 2], spec["exp"])
        return out
    if kind == "binary":  # [n_true, n_false]: classes_[1] is "true"
        acc = acc[:, ::-1]
    return acc.astype(np.float64)
