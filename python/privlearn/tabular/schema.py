"""The public description of a table: :class:`Schema`.

A schema is written from a codebook (the data dictionary of a study, a census's ``.names``
file, domain knowledge), never from the private rows: every number and level in it is taken as
PUBLIC by the privacy statement of :class:`~privlearn.tabular.PrivateTabularClassifier` and
:class:`~privlearn.tabular.PrivateTabularRegressor`. The format (JSON or TOML)::

    {"columns": {
       "age":    {"type": "numeric", "range": [0, 120]},
       "sex":    {"type": "categorical", "levels": ["F", "M"]},
       "smoker": {"type": "binary"},
       "id":     {"type": "ignore"}},
     "target": {"name": "y", "classes": [0, 1]}}

``target`` is ``{"name": ..., "classes": [...]}`` (classification: the public label set) or
``{"name": ..., "range": [lo, hi]}`` (regression: a public bound on the outcome; values
outside it are clipped into it).

Optional keys of a column (anything else is an error naming it):

``numeric``
    ``"bounds"``: ``"private"`` (default: the pipeline releases private clipping bounds inside
    ``range``, spending budget) or ``"public"`` (``range`` is where the values lie: clip to it,
    spend nothing). ``"transform"``: ``"none"`` (default) or ``"log"`` (the public map
    ``sign(x) log(1 + |x|)`` before anything else: for heavy tails such as amounts of money).
    ``"missing"``: ``"impute"`` (default: the middle of the column's interval),
    ``"indicator"`` (the middle, plus a 0/1 column flagging the missing value) or ``"error"``.
``categorical``
    ``"levels"`` (required): the public level list. ``"encoding"``: ``"auto"`` (default:
    one-hot up to :data:`ONEHOT_MAX_LEVELS` levels, DP impact codes above), ``"onehot"`` or
    ``"impact"``. ``"missing"``: ``"zero"`` (default: an all-zero block), ``"level"`` (a level
    of its own) or ``"error"``. ``"unknown"``: what a value outside ``levels`` becomes:
    ``"missing"`` (default: treated as a missing value) or ``"error"``.
``binary``
    ``"levels"``: the two public levels (default ``[0, 1]``; the second is coded +1).
    ``"missing"``: ``"impute"`` (default: 0, half-way) or ``"error"``. A value outside the two
    levels is treated as missing.
every type
    ``"na_values"``: a list of strings that mean "missing" in this column (e.g. ``["?"]``);
    NaN, None and the empty string always do. ``"description"``: free text.

Top-level optional keys: ``"description"`` (free text) and ``"source"``: ``"codebook"``
(default) or ``"data"``, which :func:`draft_schema` writes and which makes every fit on the
schema say that its public inputs were read from the private rows.
"""

from __future__ import annotations

import json
import math
import numbers
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from privlearn.exceptions import PrivacyLeakWarning

__all__ = [
    "ONEHOT_MAX_LEVELS",
    "ColumnSpec",
    "Schema",
    "SchemaError",
    "TargetSpec",
    "draft_schema",
    "level_key",
]

#: ``encoding="auto"``: categoricals with at most this many public levels are one-hot coded,
#: larger ones get DP impact codes (one number per column from noisy per-level counts).
ONEHOT_MAX_LEVELS = 32

_TYPES = ("numeric", "categorical", "binary", "ignore")
_COMMON_KEYS = ("type", "na_values", "description")
_KEYS = {
    "numeric": ("range", "bounds", "transform", "missing"),
    "categorical": ("levels", "encoding", "missing", "unknown"),
    "binary": ("levels", "missing"),
    "ignore": (),
}
_CHOICES = {
    ("numeric", "bounds"): ("private", "public"),
    ("numeric", "transform"): ("none", "log"),
    ("numeric", "missing"): ("impute", "indicator", "error"),
    ("categorical", "encoding"): ("auto", "onehot", "impact"),
    ("categorical", "missing"): ("zero", "level", "error"),
    ("categorical", "unknown"): ("missing", "error"),
    ("binary", "missing"): ("impute", "error"),
}
_DEFAULTS = {
    ("numeric", "bounds"): "private",
    ("numeric", "transform"): "none",
    ("numeric", "missing"): "impute",
    ("categorical", "encoding"): "auto",
    ("categorical", "missing"): "zero",
    ("categorical", "unknown"): "missing",
    ("binary", "missing"): "impute",
}
_TOP_KEYS = ("columns", "target", "description", "source")
_TARGET_KEYS = ("name", "classes", "range", "description")
_SOURCES = ("codebook", "data")


class SchemaError(ValueError):
    """A schema that cannot be used as written; the message names the key or column."""


def level_key(value: Any) -> Any:
    """The key a level is matched by: numbers (and strings that read as numbers) by their
    float value, other strings stripped of surrounding spaces; None for a missing value.

    So a level list ``[0, 1]`` from JSON matches a column read as ``0.0, 1.0`` or ``"1"``."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    if isinstance(value, numbers.Real):
        f = float(value)
        return None if math.isnan(f) else f
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    text = str(value).strip()
    if text == "":
        return None
    try:
        f = float(text)
    except ValueError:
        return text
    return text if math.isnan(f) or math.isinf(f) else f


def _finite(value: Any, where: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise SchemaError(f"{where} must be a number, got {value!r}")
    f = float(value)
    if not math.isfinite(f):
        raise SchemaError(f"{where} must be finite, got {value!r}")
    return f


def _pair(value: Any, where: str) -> tuple[float, float]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise SchemaError(f"{where} must be a list [lo, hi], got {value!r}")
    if len(value) != 2:
        raise SchemaError(f"{where} must be a list [lo, hi] of two numbers, got {value!r}")
    lo, hi = (_finite(v, where) for v in value)
    if not lo < hi:
        raise SchemaError(f"{where} must have lo < hi, got {value!r}")
    return lo, hi


def _levels(value: Any, where: str, *, exactly: int | None = None) -> tuple[Any, ...]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise SchemaError(f"{where} must be a list of levels, got {value!r}")
    out = []
    seen: dict[Any, Any] = {}
    for v in value:
        if isinstance(v, (bool, np.bool_)):
            v = int(v)
        if not isinstance(v, (str, numbers.Real)):
            raise SchemaError(f"{where}: a level must be a string or a number, got {v!r}")
        key = level_key(v)
        if key is None:
            raise SchemaError(
                f"{where}: {v!r} is a missing value, not a level (say how missing values are "
                "handled with the column's 'missing' key)"
            )
        if key in seen:
            raise SchemaError(f"{where}: levels {seen[key]!r} and {v!r} are the same level")
        seen[key] = v
        out.append(v.item() if isinstance(v, np.generic) else v)
    if exactly is not None and len(out) != exactly:
        raise SchemaError(f"{where} must list exactly {exactly} levels, got {len(out)}")
    if len(out) < 1:
        raise SchemaError(f"{where} must list at least one level")
    return tuple(out)


def _check_keys(d: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    for key in d:
        if key not in allowed:
            raise SchemaError(
                f"{where}: unknown key {key!r} (allowed: {', '.join(map(repr, allowed))})"
            )


@dataclass(frozen=True)
class ColumnSpec:
    """One column of a :class:`Schema` (see the module docstring for the keys)."""

    name: str
    type: str
    range: tuple[float, float] | None = None
    levels: tuple[Any, ...] | None = None
    bounds: str | None = None
    transform: str | None = None
    encoding: str | None = None
    missing: str | None = None
    unknown: str | None = None
    na_values: tuple[str, ...] = ()
    description: str | None = None

    @classmethod
    def from_dict(cls, name: str, d: Any) -> ColumnSpec:
        """Validate one column's entry; a bad entry raises :class:`SchemaError` naming it."""
        where = f"column {name!r}"
        if not isinstance(d, Mapping):
            raise SchemaError(f"{where} must be a mapping with a 'type', got {d!r}")
        kind = d.get("type")
        if kind not in _TYPES:
            raise SchemaError(
                f"{where}: unknown type {kind!r} (allowed: {', '.join(map(repr, _TYPES))})"
            )
        _check_keys(d, (*_COMMON_KEYS, *_KEYS[kind]), where)
        kw: dict[str, Any] = {"name": name, "type": kind}
        for (t, key), choices in _CHOICES.items():
            if t != kind:
                continue
            value = d.get(key, _DEFAULTS[(t, key)])
            if value not in choices:
                raise SchemaError(
                    f"{where}: {key}={value!r} is not one of {', '.join(map(repr, choices))}"
                )
            kw[key] = value
        if kind == "numeric":
            if "range" not in d:
                raise SchemaError(
                    f"{where}: a numeric column needs its public 'range': [lo, hi] (from the "
                    "codebook, never from the data)"
                )
            kw["range"] = _pair(d["range"], f"{where} 'range'")
        elif kind == "categorical":
            if "levels" not in d:
                raise SchemaError(f"{where}: a categorical column needs its public 'levels'")
            kw["levels"] = _levels(d["levels"], f"{where} 'levels'")
        elif kind == "binary":
            kw["levels"] = _levels(d.get("levels", [0, 1]), f"{where} 'levels'", exactly=2)
        na = d.get("na_values", [])
        if isinstance(na, str) or not isinstance(na, Sequence):
            raise SchemaError(f"{where} 'na_values' must be a list of strings, got {na!r}")
        if not all(isinstance(v, str) for v in na):
            raise SchemaError(f"{where} 'na_values' must be a list of strings, got {na!r}")
        kw["na_values"] = tuple(na)
        desc = d.get("description")
        if desc is not None and not isinstance(desc, str):
            raise SchemaError(f"{where} 'description' must be a string")
        kw["description"] = desc
        return cls(**kw)

    def to_dict(self) -> dict[str, Any]:
        """The column's entry, with every default written out."""
        out: dict[str, Any] = {"type": self.type}
        if self.range is not None:
            out["range"] = list(self.range)
        if self.levels is not None:
            out["levels"] = list(self.levels)
        for key in ("bounds", "transform", "encoding", "missing", "unknown"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.na_values:
            out["na_values"] = list(self.na_values)
        if self.description is not None:
            out["description"] = self.description
        return out

    @property
    def impact(self) -> bool:
        """Whether a categorical column is impact coded (under ``encoding``)."""
        if self.type != "categorical":
            return False
        if self.encoding == "auto":
            return len(self.levels or ()) > ONEHOT_MAX_LEVELS
        return self.encoding == "impact"

    @property
    def private_bounds(self) -> bool:
        """Whether a numeric column's clipping bounds are released privately."""
        return self.type == "numeric" and self.bounds == "private"


@dataclass(frozen=True)
class TargetSpec:
    """The outcome: its column name and its public label set or range."""

    name: str
    classes: tuple[Any, ...] | None = None
    range: tuple[float, float] | None = None
    description: str | None = None

    @classmethod
    def from_dict(cls, d: Any) -> TargetSpec:
        if not isinstance(d, Mapping):
            raise SchemaError(f"'target' must be a mapping with a 'name', got {d!r}")
        _check_keys(d, _TARGET_KEYS, "'target'")
        name = d.get("name")
        if not isinstance(name, str) or not name:
            raise SchemaError(f"'target' needs a 'name' (the outcome's column), got {name!r}")
        if ("classes" in d) == ("range" in d):
            raise SchemaError(
                "'target' needs exactly one of 'classes' (classification: the public label "
                "set) and 'range' (regression: a public [lo, hi] of the outcome)"
            )
        desc = d.get("description")
        if "classes" in d:
            classes = _levels(d["classes"], "'target' 'classes'")
            if len(classes) < 2:
                raise SchemaError("'target' 'classes' must list at least two labels")
            return cls(name=name, classes=classes, description=desc)
        return cls(name=name, range=_pair(d["range"], "'target' 'range'"), description=desc)

    @property
    def task(self) -> str:
        """``"classification"`` or ``"regression"``."""
        return "classification" if self.classes is not None else "regression"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.classes is not None:
            out["classes"] = list(self.classes)
        else:
            out["range"] = list(self.range or ())
        if self.description is not None:
            out["description"] = self.description
        return out


@dataclass(frozen=True)
class Schema:
    """The public description of a table: one :class:`ColumnSpec` per column and the target.

    Build one with :meth:`from_dict` or :meth:`load` (JSON or TOML); :meth:`to_dict` and
    :meth:`save` write it back. Every range and level list is PUBLIC: choose them from a
    codebook, never from the private rows (:func:`draft_schema` reads a DataFrame and marks
    the result ``source="data"``, which every fit on it states).

    Examples
    --------
    >>> from privlearn.tabular import Schema
    >>> s = Schema.from_dict({
    ...     "columns": {"age": {"type": "numeric", "range": [0, 120]},
    ...                 "sex": {"type": "categorical", "levels": ["F", "M"]}},
    ...     "target": {"name": "y", "classes": [0, 1]}})
    >>> s.feature_names, s.target.task
    (('age', 'sex'), 'classification')
    """

    columns: tuple[ColumnSpec, ...]
    target: TargetSpec
    description: str | None = None
    source: str = "codebook"
    _by_name: dict[str, ColumnSpec] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_name.clear()
        self._by_name.update({c.name: c for c in self.columns})

    @classmethod
    def from_dict(cls, d: Any) -> Schema:
        """Validate a schema written as nested dicts (the JSON/TOML format above).

        Raises
        ------
        SchemaError
            (a ValueError) naming the unknown key or type, the column or the missing entry.
        """
        if isinstance(d, Schema):
            return d
        if not isinstance(d, Mapping):
            raise SchemaError(f"a schema must be a mapping with 'columns' and 'target', got {d!r}")
        _check_keys(d, _TOP_KEYS, "schema")
        if "columns" not in d or "target" not in d:
            raise SchemaError("a schema needs 'columns' (a mapping of columns) and 'target'")
        cols = d["columns"]
        if not isinstance(cols, Mapping) or not cols:
            raise SchemaError("'columns' must be a non-empty mapping from column name to entry")
        specs = []
        for name, entry in cols.items():
            if not isinstance(name, str) or not name:
                raise SchemaError(f"column names must be non-empty strings, got {name!r}")
            specs.append(ColumnSpec.from_dict(name, entry))
        target = TargetSpec.from_dict(d["target"])
        if target.name in cols:
            raise SchemaError(
                f"the target {target.name!r} is also listed in 'columns': list it only as 'target'"
            )
        if all(c.type == "ignore" for c in specs):
            raise SchemaError("every column is 'ignore': the model would have no feature")
        source = d.get("source", "codebook")
        if source not in _SOURCES:
            raise SchemaError(f"'source' must be one of {_SOURCES}, got {source!r}")
        desc = d.get("description")
        if desc is not None and not isinstance(desc, str):
            raise SchemaError("'description' must be a string")
        return cls(columns=tuple(specs), target=target, description=desc, source=source)

    @classmethod
    def load(cls, path: str | Path) -> Schema:
        """Read a schema from a ``.json`` or ``.toml`` file."""
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"schema file not found: {str(p)!r}")
        suffix = p.suffix.lower()
        if suffix == ".toml":
            import tomllib

            try:
                d = tomllib.loads(p.read_text(encoding="utf-8"))
            except tomllib.TOMLDecodeError as exc:
                raise SchemaError(f"{str(p)!r} is not valid TOML: {exc}") from None
        elif suffix == ".json":
            try:
                d = json.loads(p.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise SchemaError(f"{str(p)!r} is not valid JSON: {exc}") from None
        else:
            raise SchemaError(f"a schema file must end in .json or .toml, got {str(p)!r}")
        return cls.from_dict(d)

    def to_dict(self) -> dict[str, Any]:
        """The schema as nested dicts (``Schema.from_dict(s.to_dict()) == s``)."""
        out: dict[str, Any] = {
            "columns": {c.name: c.to_dict() for c in self.columns},
            "target": self.target.to_dict(),
        }
        if self.description is not None:
            out["description"] = self.description
        if self.source != "codebook":
            out["source"] = self.source
        return out

    def save(self, path: str | Path) -> None:
        """Write the schema as ``.json`` or ``.toml`` (by the file's suffix)."""
        p = Path(path)
        suffix = p.suffix.lower()
        if suffix == ".json":
            p.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
        elif suffix == ".toml":
            p.write_text(_to_toml(self.to_dict()), encoding="utf-8")
        else:
            raise SchemaError(f"a schema file must end in .json or .toml, got {str(p)!r}")

    def __getitem__(self, name: str) -> ColumnSpec:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"column {name!r} is not in the schema") from None

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    @property
    def names(self) -> tuple[str, ...]:
        """Every column of the schema (ignored ones included), target excluded."""
        return tuple(c.name for c in self.columns)

    @property
    def feature_names(self) -> tuple[str, ...]:
        """The columns the model uses (``type != "ignore"``), in schema order."""
        return tuple(c.name for c in self.columns if c.type != "ignore")


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a valid TOML basic string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {v!r} as TOML")


def _toml_key(k: str) -> str:
    bare = k.replace("_", "").replace("-", "").isalnum() and k.isascii()
    return k if bare else json.dumps(k)


def _to_toml(d: dict[str, Any]) -> str:
    lines = [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in d.items() if k not in _TOP_KEYS[:2]]
    lines += ["", "[target]"]
    lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in d["target"].items()]
    for name, entry in d["columns"].items():
        lines += ["", f"[columns.{_toml_key(name)}]"]
        lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"


def draft_schema(
    frame: Any, target: str, *, task: str = "classification", max_levels: int = 1000
) -> Schema:
    """Draft a schema FROM THE PRIVATE DATA, to be checked against the codebook.

    Numeric columns get ``range`` = [min, max] of the frame, others their observed levels;
    the target its observed classes or range. **Everything this draft holds was read from the
    rows** (a range is an exact min and max; a level seen once names one person's value):
    the draft is marked ``source="data"``, a :class:`~privlearn.exceptions.PrivacyLeakWarning`
    says so now, and every fit on it says so in its statement. Replace each entry by the
    codebook's value before a release.
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"draft_schema needs a pandas DataFrame, got {type(frame).__name__}")
    if target not in frame.columns:
        raise ValueError(f"target column {target!r} is not in the frame")
    if task not in ("classification", "regression"):
        raise ValueError(f"task must be 'classification' or 'regression', got {task!r}")
    warnings.warn(
        "draft_schema READ THE PRIVATE DATA: every range and level list of this draft comes "
        "from the rows, not from a codebook, so a fit on it is not covered by its privacy "
        "statement (which will say so). Replace the entries by public ones before a release.",
        PrivacyLeakWarning,
        stacklevel=2,
    )
    cols: dict[str, Any] = {}
    for name in frame.columns:
        if name == target:
            continue
        s = frame[name]
        if pd.api.types.is_bool_dtype(s):
            cols[str(name)] = {"type": "binary"}
        elif pd.api.types.is_numeric_dtype(s):
            vals = s.dropna()
            if len(vals) and set(np.unique(vals)) <= {0, 1}:
                cols[str(name)] = {"type": "binary"}
            elif len(vals):
                lo, hi = float(vals.min()), float(vals.max())
                cols[str(name)] = {"type": "numeric", "range": [lo, hi if hi > lo else lo + 1]}
            else:
                cols[str(name)] = {"type": "ignore"}
        else:
            levels = sorted({str(v) for v in s.dropna()})
            if 0 < len(levels) <= max_levels:
                cols[str(name)] = {"type": "categorical", "levels": levels}
            else:
                cols[str(name)] = {"type": "ignore"}
    y = frame[target].dropna()
    if task == "classification":
        tgt: dict[str, Any] = {"name": target, "classes": [_plain(v) for v in np.unique(y)]}
    else:
        lo, hi = float(y.min()), float(y.max())
        tgt = {"name": target, "range": [lo, hi if hi > lo else lo + 1]}
    return Schema.from_dict({"columns": cols, "target": tgt, "source": "data"})


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v
