"""Per-row maps from a raw table to the model's rows, driven by a :class:`Schema`.

Everything here is a PUBLIC per-row map (the schema's ranges and levels, the released bounds
and code tables): it reads no statistic of the rows, so it costs no privacy and is applied
identically at fit and at predict time.

Each non-ignored schema column ``c`` becomes a block ``b_c(x)`` with ``||b_c(x)|| <= 1``:

* numeric: ``2 (clip(t(x), l, u) - l) / (u - l) - 1`` in ``[-1, 1]`` (``t`` the public log map
  or the identity; ``[l, u]`` the released private bounds or the public range); a missing value
  is ``0`` (the middle), and with ``missing="indicator"`` the block is ``(v, m) / sqrt(2)``;
* binary: ``-1`` / ``+1`` for the two levels, ``0`` for a missing one;
* categorical, one-hot: the level's unit vector (all zero for a missing or unseen value;
  ``missing="level"`` adds a unit vector for "missing");
* categorical, impact coded: the released code of the level clipped to ``[-C, C]`` and divided
  by ``C`` (``K`` codes for ``K`` classes, divided by ``sqrt(K)`` more).

The row is the concatenation divided by ``sqrt(m)``, ``m`` the number of blocks, so
``||z|| <= 1`` by construction (the precondition of DP-SGD's and DP-SCD's proofs); the few
rows rounding pushes an ulp outside are pulled back by :func:`privlearn.data.project_to_ball`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privlearn.data.preprocess import project_to_ball
from privlearn.tabular.schema import ColumnSpec, Schema, level_key

__all__ = [
    "assemble",
    "check_frame",
    "column_from_counts",
    "column_values",
    "is_dask_frame",
    "log_map",
    "numeric_block",
    "onehot_block",
    "snap_counts",
]

#: Impact codes are clipped to ``[-C, C]`` before scaling: a log-odds ratio of 3 (about 20x
#: the base odds) for a class, half the target range for a regression's mean code.
CODE_CLIP_LOGODDS = 3.0


def log_map(x: np.ndarray) -> np.ndarray:
    """The public map ``sign(x) log(1 + |x|)`` (monotone, finite on finite input)."""
    return np.sign(x) * np.log1p(np.abs(x))


def check_frame(frame: Any, schema: Schema, *, target_ok: bool) -> Any:
    """``frame`` as a pandas DataFrame holding every schema column; a column missing from it,
    or present but absent from the schema, is a ValueError naming it."""
    import pandas as pd

    dask_frame = is_dask_frame(frame)
    if not isinstance(frame, pd.DataFrame) and not dask_frame:
        raise TypeError(
            "the tabular estimators take a pandas DataFrame whose column names are those of "
            f"the schema, got {type(frame).__name__}"
        )
    names = [str(c) for c in frame.columns]
    if len(set(names)) != len(names):
        raise ValueError("the table has repeated column names")
    missing = [c for c in schema.names if c not in names]
    if missing:
        raise ValueError(f"column(s) {missing} of the schema are missing from the table")
    allowed = set(schema.names) | ({schema.target.name} if target_ok else set())
    extra = [c for c in names if c not in allowed]
    if extra:
        raise ValueError(
            f"column(s) {extra} of the table are not in the schema: describe them in the "
            'schema (or mark them {"type": "ignore"}) so that nothing is used unstated'
        )
    if not dask_frame and frame.shape[0] == 0:
        raise ValueError("the table has no rows")
    return frame


def is_dask_frame(obj: Any) -> bool:
    """Whether ``obj`` is a Dask DataFrame (without importing dask)."""
    module = type(obj).__module__ or ""
    return module.split(".")[0] in ("dask", "dask_expr") and hasattr(obj, "map_partitions")


def snap_counts(x: np.ndarray, lo: float, hi: float, bits: int) -> np.ndarray:
    """How many entries of ``x`` (clipped to ``[lo, hi]``) snap to each point of the public
    lattice of :func:`privlearn.preprocessing.dp_quantiles` (``s = min{j : p(j) >= x}``):
    ``2**bits + 1`` exact integer counts. The exponential mechanism of ``dp_quantiles`` reads
    the data only through these snaps, so a column rebuilt from them (each lattice point
    repeated by its count) gives the same release bit for bit: how a Dask fit gets its
    bounds from per-partition counts."""
    from privlearn.preprocessing.quantiles import lattice_points

    cells = 1 << bits
    points = lattice_points(np.arange(cells + 1), (lo, hi), bits)
    s = np.searchsorted(points, np.clip(x, lo, hi), side="left")
    return np.bincount(s, minlength=cells + 1).astype(np.int64)


def column_from_counts(counts: np.ndarray, lo: float, hi: float, bits: int) -> np.ndarray:
    """The sorted column whose lattice snaps have these counts (see :func:`snap_counts`)."""
    from privlearn.preprocessing.quantiles import lattice_points

    points = lattice_points(np.arange(counts.size), (lo, hi), bits)
    return np.repeat(points, counts)


def _factorize(raw: np.ndarray, spec: ColumnSpec) -> tuple[np.ndarray, list[Any]]:
    """``(codes, uniques)`` of a raw column, missing values (None, NaN, pd.NA, blank strings,
    the schema's ``na_values``) coded ``-1``. Every per-value rule below runs once per distinct
    value, not once per row."""
    import pandas as pd

    codes, uniques = pd.factorize(raw, use_na_sentinel=True)
    codes = np.asarray(codes, dtype=np.int64)
    uniques = list(uniques)
    na = {s.strip() for s in spec.na_values}
    gone = [i for i, v in enumerate(uniques) if isinstance(v, str) and v.strip() in ("", *na)]
    if gone:
        remap = np.arange(len(uniques))
        remap[gone] = -1
        codes = np.where(codes >= 0, remap[np.maximum(codes, 0)], -1)
        for i in gone:
            uniques[i] = None  # never indexed: its rows are coded -1
    return codes, uniques


def column_values(frame: Any, spec: ColumnSpec) -> np.ndarray:
    """A column as a float array for numeric and binary columns (NaN = missing, per the
    schema), or as level indices (``-1`` missing, ``-2`` unseen) for categorical ones.

    Raises ValueError naming the column (never a value) when the schema says ``"error"`` for
    what is found, or a numeric column holds text that is not a number."""
    raw = frame[spec.name].to_numpy()
    if spec.type == "numeric":
        if raw.dtype.kind in "biuf":
            out = raw.astype(np.float64)  # a new array; NaN stays missing
        else:
            codes, uniques = _factorize(raw, spec)
            try:
                values = np.array(
                    [np.nan if v is None else float(v) for v in uniques], dtype=np.float64
                )
            except (TypeError, ValueError):
                raise ValueError(
                    f"numeric column {spec.name!r} holds text that is not a number: list the "
                    "codes that mean 'missing' in its 'na_values', or make it categorical"
                ) from None
            values = np.append(values, np.nan)  # code -1 -> the last entry
            out = values[codes]
        out[~np.isfinite(out)] = np.nan  # +-inf: outside any public range, treated as missing
        if spec.missing == "error" and np.isnan(out).any():
            raise ValueError(
                f"column {spec.name!r} has missing values and its schema says missing='error'"
            )
        return out
    levels = {level_key(v): i for i, v in enumerate(spec.levels or ())}
    codes, uniques = _factorize(raw, spec)
    table = np.array([levels.get(level_key(v), -2) for v in uniques] + [-1], dtype=np.int64)
    codes = table[codes]  # code -1 (missing) -> the last entry, -1
    if spec.type == "binary":
        out = np.where(codes == 1, 1.0, np.where(codes == 0, -1.0, np.nan))
        if spec.missing == "error" and np.isnan(out).any():
            raise ValueError(
                f"binary column {spec.name!r} has missing values or values outside its two "
                "levels, and its schema says missing='error'"
            )
        return out
    if spec.unknown == "error" and (codes == -2).any():
        raise ValueError(
            f"categorical column {spec.name!r} has a value outside its public levels and its "
            "schema says unknown='error' (add the level to the schema, or set unknown="
            "'missing')"
        )
    codes[codes == -2] = -1  # unknown='missing'
    if spec.missing == "error" and (codes == -1).any():
        raise ValueError(
            f"column {spec.name!r} has missing values and its schema says missing='error'"
        )
    return codes


def numeric_block(x: np.ndarray, lower: float, upper: float, indicator: bool) -> np.ndarray:
    """The numeric block: ``[-1, 1]`` from ``[lower, upper]``, missing -> 0 (+ indicator)."""
    width = upper - lower
    miss = np.isnan(x)
    if width > 0:
        v = 2.0 * (np.clip(np.where(miss, lower, x), lower, upper) - lower) / width - 1.0
    else:
        v = np.zeros_like(x)
    v[miss] = 0.0
    np.clip(v, -1.0, 1.0, out=v)
    if indicator:
        return np.column_stack([v, miss.astype(np.float64)]) / math.sqrt(2.0)
    return v[:, None]


def onehot_block(codes: np.ndarray, n_levels: int, missing_level: bool) -> np.ndarray:
    """Unit vectors of the levels (a missing/unseen value: zeros, or its own level)."""
    width = n_levels + (1 if missing_level else 0)
    out = np.zeros((codes.shape[0], width))
    seen = codes >= 0
    out[np.flatnonzero(seen), codes[seen]] = 1.0
    if missing_level:
        out[~seen, n_levels] = 1.0
    return out


def assemble(blocks: list[np.ndarray], n_rows: int) -> np.ndarray:
    """Concatenate the column blocks (each of row norm <= 1) and divide by ``sqrt(m)``, ``m``
    the number of blocks: rows in the unit ball."""
    cols = [b.reshape(n_rows, -1) for b in blocks]
    Z = np.hstack(cols) / math.sqrt(len(blocks))
    return np.ascontiguousarray(project_to_ball(Z, 1.0))
